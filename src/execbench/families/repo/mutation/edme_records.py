"""The EDME's records: what a probe captured and showed, each attempt and its validation, the
function artifacts of mutation_log.jsonl (appendix D.1), and the job of mutating one test function.

Split out of :mod:`.edme` (the pipeline), which builds them; :mod:`.mutate` (the offline stages) too.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypedDict

from execbench.families.repo.records.steps import RepoOptions

if TYPE_CHECKING:
    from execbench.sources.repos import Repo


# -- the records: mutation_log.jsonl's function artifacts (appendix D.1) ---------------------

class ValueView(TypedDict):
    """A captured value as the teacher sees it (texts cut at MAX_VALUE_CHARS)."""

    type: str | None
    literal: NotRequired[str]
    sympy: NotRequired[str]
    too_big: NotRequired[bool]


class ProbeExecution(ValueView):
    """One probe's value in one test instance's ``execution``-th run of it."""

    instance: str  # the test's node id
    execution: int


class CapturedProbe(TypedDict):
    probe: str  # the probe's key (route_probes)
    executions: list[ProbeExecution]


class ShownProbe(TypedDict):
    """A probe's values in the reconstruction prompt (probe i is the i-th DEBUG_RESULT print)."""

    probe: int
    instances: list[ProbeExecution]


class Attempt(TypedDict):
    """One authoring attempt of a stage ("probe" or "assertions") and what became of it."""

    stage: str
    attempt: int
    seconds: float
    output_tokens: int | None
    reply_chars: int
    probe_format_fixes: NotRequired[int]  # prints rewritten into the canonical form
    printed_tail: NotRequired[list[str]]
    status: NotRequired[str]  # "ok", "teacher-error"/"error", "constraint", "execution", "assertion"
    error: NotRequired[str | None]
    errors: NotRequired[list[str]]  # constraint violations


class Validation(TypedDict):
    """The validation gate (appendix D.5)."""

    executability: bool
    assertion_validity: bool
    api_calls_preserved: bool


class FunctionRecord(TypedDict):
    """One test function's artifact record in ``mutation_log.jsonl`` (appendix D.1)."""

    kind: str  # "function"
    mode: str  # "teacher" or "offline"
    teacher: str
    prompt_version: str
    repo: str  # the repository's spec
    module: str
    function: str  # qualname
    nodeids: list[str]
    original: str  # the function's excerpt
    api_calls: list[str]
    probe_code: str | None
    captured: list[CapturedProbe] | None
    final: str | None  # the valid reconstruction
    attempts: list[Attempt]
    validation: Validation
    validation_status: str  # "valid" or "invalid"
    mutation_attempts: int
    assertion_attempts: int
    teacher_calls: int
    reason: str | None
    execution_time: NotRequired[float]


@dataclass
class FunctionJob:
    repo: Repo
    rel: str  # module path relative to the repo root
    module_text: str
    qualname: str
    firstlineno: int
    end_lineno: int
    node: ast.FunctionDef | ast.AsyncFunctionDef
    class_name: str | None
    assertions: list[str]  # original assertion statements (style reference)
    nodeids: list[str]
    options: RepoOptions

    @property
    def lines(self) -> list[str]:
        return self.module_text.splitlines(keepends=True)

    @property
    def excerpt(self) -> str:
        return "".join(self.lines[self.firstlineno - 1:self.end_lineno])

    @property
    def indent(self) -> str:
        first = self.lines[self.firstlineno - 1]
        return first[: len(first) - len(first.lstrip())]

    def imports(self) -> str:
        tree = ast.parse(self.module_text)
        out = [ast.get_source_segment(self.module_text, n) or "" for n in tree.body
               if isinstance(n, (ast.Import, ast.ImportFrom))]
        return "\n".join(out)

    def imported_names(self) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(ast.parse(self.module_text)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update(a.asname or a.name.split(".")[0] for a in node.names)
        return names

    def helpers(self) -> list[str]:
        tree = ast.parse(self.module_text)
        return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                and not n.name.startswith("test")]

    def splice(self, function_text: str) -> str:
        """The module with this function's lines replaced by ``function_text`` (indented)."""
        body = textwrap.indent(textwrap.dedent(function_text).strip("\n") + "\n", self.indent)
        lines = self.lines
        return "".join(lines[: self.firstlineno - 1]) + body + "".join(lines[self.end_lineno:])


@dataclass
class Draft:
    """One authoring attempt: the code (or the reason there is none) and its cost."""

    code: str | None
    error: str | None = None
    seconds: float = 0.0
    output_tokens: int | None = None
    reply_chars: int = 0
