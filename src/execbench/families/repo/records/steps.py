"""Typed records passed between the steps of a repo build.

Candidate payloads stay JSON dictionaries (they are part of the build-cache key and cross
process boundaries), so they are ``TypedDict``\\ s, as are the build options
(:class:`RepoOptions`) and the records a rejection or a slice carries; the in-process records
of one test module's build (:class:`Module`, :class:`Item`, :class:`Pending`) are dataclasses.
The test process's own records (what ``runner.py`` reads back) are defined in ``run_records.py``:
those of ``_plugin.py``, which runs in the sandbox on the standard library alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo.records.run_records import RenderedValue, TestRecord


class RepoOptions(TypedDict):
    """The repo family's build options (``build.DEFAULT_OPTIONS``, overridden by ``--set``)."""

    threshold: float  # RepoReason §3.4: Score >= 0.30
    max_depth: int  # test function = depth 0
    max_calls: int  # per-test caps: a test over any cap is rejected, not truncated
    max_line_events: int
    max_summary_bytes: int
    test_timeout: float  # seconds per test
    file_timeout: float  # seconds per test module run
    max_instances: int
    full: bool
    max_modules_per_package: int
    max_tasks_per_package: int
    max_tasks_per_function: int
    data_table_tasks: str  # "exclude" | "keep"
    context_budget: int
    assertion_threshold: float
    trivial_lines: int
    released_after: str
    released_before: str
    new_tests_only: bool
    repeats: int  # runs per test module: the probe run (hash seed 0) and repeats - 1 verification runs
    check_seeds: str  # "": the verification runs' hash seeds drawn at random per build; "5,9": pinned
    hash_seeds: NotRequired[list[int]]  # set by the build engine (contract/hashseeds.py resolve)


DEFAULT_OPTIONS: RepoOptions = {
    "threshold": 0.30,  # RepoReason §3.4: Score >= 0.30
    "max_depth": 3,  # test function = depth 0
    "max_calls": 1000,  # per-test caps: a test over any cap is rejected, not truncated
    "max_line_events": 100_000,
    "max_summary_bytes": 2_000_000,
    "test_timeout": 60,  # seconds per test
    "file_timeout": 1200,  # seconds per test module run
    "max_instances": 4,  # parametrised / inherited instances of one test function
    "full": False,  # default corpus: run every test module of sympy and networkx
    "max_modules_per_package": 0,  # test modules built per package, every source (0: all)
    "max_tasks_per_package": 0,  # tasks kept per package, every source (0: all)
    "max_tasks_per_function": 10,  # tasks kept per test function, first in assertion order (0: all; balance.py)
    "data_table_tasks": "exclude",  # tasks whose answer is an entry of a library data table: exclude | keep
    "context_budget": 2000,  # tokens (~4 characters each) of test-file definitions a prompt may carry
    "assertion_threshold": 0.30,  # the same Score over the assertion's own dynamic slice
    "trivial_lines": 2,  # trivial: a plain read of at most this many plain library lines, no deeper call
    "released_after": "",  # list:FILE sources: releases uploaded on or after this day (YYYY-MM-DD) ...
    "released_before": "",  # ... and before this day (packages.py, docs/repo-family.md "A living benchmark")
    "new_tests_only": False,  # keep only assertions the release before the window did not have (novelty.py)
    "repeats": 2,  # runs per module: the probe run (hash seed 0) + repeats - 1 verification runs (check seeds)
    "check_seeds": "",  # "": drawn at random per build; "5,9": pinned (contract/hashseeds.py)
}


class RejectionBase(TypedDict):
    """The fields every rejection of one assertion carries (``Outcome.reject(..., **base)``)."""

    assertion: str  # its text, cut at 500 characters
    line: int


class SliceTarget(TypedDict):
    """The slicing criterion of a task (``execbench.slicing.slice_metrics``' ``target``)."""

    file: str  # the test module, relative to the repository root
    line: int  # the assertion's first line
    expr: str  # the masked operand's source
    end_line: int | None
    function: str  # the test function's qualname


class RepoConfigPayload(TypedDict):
    test_deps: list[str]
    env: dict[str, str]
    test_modules: list[str]
    exclude: list[str]
    note: str


class RepoPayload(TypedDict):
    """A prepared :class:`~execbench.sources.repos.Repo`, as JSON."""

    spec: str
    name: str
    version: str
    root: str
    import_root: str
    packages: list[str]
    python: str
    tree_sha256: str
    sdist_sha256: str | None
    content_sha256: NotRequired[str]  # a local checkout: every file's hash (its build-cache key)
    config: RepoConfigPayload


class TestFilePayload(TypedDict):
    """One test module of a prepared repository (path relative to its root)."""

    repo: RepoPayload
    test_file: str


class PackagePayload(TypedDict):
    """One package of a ``list:FILE`` source, prepared where it is built."""

    package: str


class RepoPromptFields(TypedDict):
    """A repo task's ``prompt_fields`` (``build._task``; docs/repo-family.md), in the record's key order."""

    masked_assertion: str  # the assertion with the blank
    test_source: str  # the test module, the answer masked (and other hidden spans)
    test_context: str  # imports and the class header around the function
    test_definitions: str  # test-side definitions carried into the prompt
    input_parameters: str  # JSON of the test function's arguments (summaries)
    answer_form: str
    answer_type: str  # the runtime value's type name ("object" when unknown)
    library: str
    package: str
    version: str
    repo_spec: str
    repo_root: str  # relative to the repos cache when inside it
    test_file: str
    function_file: str  # the module defining the test function (relative to the repository root)
    agent_copies: dict[str, str]  # path -> stored reference of the agent's masked copy
    test_id: str  # the pytest node id
    function: str  # the test function's qualname
    assertion_line: int


class AnswerCandidate(TypedDict):
    """One answer text to verify by substitution; the first that passes is the answer."""

    text: str
    source: str  # "runtime-value", "test-text (verified)", ...
    form: str  # funnel-2 form name
    kind: str  # "python-literal", "sympy" or "text"
    type: str | None  # the runtime value's type name
    refused_other: NotRequired[str]  # why a better text was not offered (the grader refuses it)


@dataclass
class Module:
    rel: str  # path relative to the repo root
    path: Path
    source: str
    functions: dict[tuple[str, int], A.TestFunction]


@dataclass
class Item:
    """One assertion of one test function, with its static DVP outcome."""

    key: str
    module: Module
    function: A.TestFunction
    assertion: A.Assertion
    choice: dvp.Choice | dvp.DvpRejection


@dataclass
class Pending:
    """One assertion of one test instance that passed the probe run and awaits the verify run."""

    record: TestRecord  # the probe run's record of the test (nodeid, phases, trace, probes)
    item: Item
    candidates: list[AnswerCandidate]
    label: str  # "<repo>/<nodeid>@L<line>", the rejection key
    base: RejectionBase  # fields every rejection of this assertion carries
    values: list[dict[str, RenderedValue]]  # the probes' rendered operands per execution, by side
    wrong: list[str]  # the admission gate's wrong answers
    guards: dict[str, str]  # wrong text -> expression checking it differs from the answer
    answer: AnswerCandidate | None = None  # set once verified
    aliases: list[list[str]] = field(default_factory=list)
    spellings: list[str] = field(default_factory=list)  # argument respellings the real type accepts (compare.py)
    dropped: bool = False  # instances with the same inputs disagree
