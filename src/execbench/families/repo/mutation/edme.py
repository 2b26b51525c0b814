"""The Execution-Driven Mutation Engine for ``repo`` tasks (paper 000, §3.3 and appendix D).

Per test function that has tasks in the original dataset:

1. **Mutation with probes** (one teacher call, up to ``max_retries`` with error feedback):
   the teacher rewrites the function with visual mutations (renamed locals, restructured
   control flow, no comments) and logical mutations (changed constants, inputs,
   parameters), replacing every assertion by ``print(f"DEBUG_RESULT: {expr}")``. Hard
   constraints (table 9) are checked on the reply: same signature, same decorators
   (``parametrize`` kept), no new imports, no assertion left, at least one probe, and
   the API-call sequence of the original (appendix D.3). Probe-format deviations are
   corrected automatically (:func:`execbench.mutation.probes.fix_probe_format`).
2. **Value capture**: the probed function is spliced into its module and run by the repo
   family's runner (``families.repo.verification.runner.run_tests``) in the sandbox, with the
   repository's venv and source tree. Each probe's value is routed through the family's
   probe helper, so the captured value is its runtime value in literal form (or sympy
   text, or its type), per test instance and execution; printed ``DEBUG_RESULT`` lines are
   parsed too when the output is available. Strict mode: a run without a captured value
   is a failure.
3. **Assertion reconstruction** (second teacher call, up to ``max_retries``): from the
   captured values and the original assertions' style, the teacher writes assertions back;
   the function is run again and every instance must pass.

Validation gate (appendix D.5): executability (stage 2 passed with values), assertion
validity (stage 3 passed) and API preservation. Only valid functions are kept: they are
spliced into the module, and the module goes through the repo family's own
``build_test_file`` (tracing, DVP, masking, verification, slicing). Every attempt is in
``mutation_log.jsonl`` (appendix D.1 artifacts: original excerpt, probe code, captured
values, final test, validation metadata, attempts, time).

Mutant tasks pair with originals by (test instance, index of the assertion in the
function): the teacher is asked to rebuild one assertion per probe, in order.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
import textwrap
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, TypedDict, TypeGuard, cast

from execbench.contract import Outcome, SourceError, hashseeds
from execbench.contract.jsontypes import JSONObject
from execbench.dataset import Task, arms_check, load_manifest, read_tasks
from execbench.dataset.cache import BuildCache
from execbench.families.repo.mutation.edme_records import (Attempt, CapturedProbe, Draft, FunctionJob, FunctionRecord,
                                                           ProbeExecution, ShownProbe, ValueView)
from execbench.families.repo.records.steps import RepoOptions
from execbench.models.teacher import Reply, Teacher, Turn
from execbench.mutation import engine
from execbench.mutation.apicalls import api_calls, check_preserved
from execbench.mutation.engine import TeacherSettings
from execbench.mutation.probes import (ProbeError, extract_code, fix_probe_format, marker_prints, parse_code,
                                       parse_debug_results, probes, route_probes)

if TYPE_CHECKING:  # imported where they run: a repo build's modules load only when one runs
    from execbench.families.repo.records.run_records import RenderedValue
    from execbench.families.repo.verification.runner import PytestReport
    from execbench.sources.repos import Repo

PROMPT_VERSION = "1"
MAX_VALUE_CHARS = 600  # per captured value shown to the teacher
MAX_VALUES = 60

SYSTEM_MUTATE = """\
You rewrite one Python unit test so that it exercises the same library code on different facts.
Return ONLY the rewritten test function, complete, in one ```python code block. No explanations.

Apply, in one step:
1. Visual mutations: rename local variables, restructure the control flow, change the visual layout,
   remove comments.
2. Logical mutations: change literal constants, input data and parameters, so that the values the
   test checks are different from the original ones.
3. Probe injection: replace EVERY assertion (`assert ...`, `self.assertEqual(...)`, ...) by a print
   of the value it checks, exactly in this form:
       print(f"DEBUG_RESULT: {expression}")
   The prefix `DEBUG_RESULT: ` and the f-string are mandatory (not print("DEBUG_RESULT:", x)).
   Keep the probes in the order of the original assertions, one probe per assertion.

Hard constraints:
- Keep the function name and signature exactly (no new parameters, no new defaults).
- Keep every decorator unchanged (pytest.mark.parametrize must remain intact).
- Do not add imports: reuse the imports and helpers the module already has.
- Keep the API calls listed below, in the same order (you may change their arguments).
"""

SYSTEM_RECONSTRUCT = """\
You turn DEBUG_RESULT probes back into assertions. The probed test below was run; the value each
probe printed is given (captured from the real execution, as Python literals where possible).
Return ONLY the complete test function, in one ```python code block. No explanations.

Rules:
- Replace each `print(f"DEBUG_RESULT: {expression}")` by one assertion that checks `expression`
  against its captured value. Change nothing else.
- Match the style of the original assertions: `is` vs `==`, unittest methods (self.assertEqual)
  vs `assert`, constructors such as Rational(2, 3) or FiniteSet(1, 2) instead of 0.666... or {1, 2},
  the same collection types.
- The captured values are the truth: do not guess other values.
- Keep the signature and the decorators unchanged; do not add imports.
"""


# -- one test function ---------------------------------------------------------------------


def _function_in(tree: ast.Module, job: FunctionJob) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    name = job.node.name
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name == name:
                    return inner
    return None


def _segment(code: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    lines = code.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return textwrap.dedent("".join(lines[first - 1:node.end_lineno]))


def _is_assertion(stmt: ast.AST) -> TypeGuard[ast.stmt]:
    if isinstance(stmt, ast.Assert):
        return True
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr.startswith("assert"))


def constraint_errors(job: FunctionJob, code: str, stage: str, *, strict: bool = True
                      ) -> tuple[list[str], str | None, ast.FunctionDef | ast.AsyncFunctionDef | None]:
    """(violations, function text, function node) of a teacher reply for ``stage``
    ("probe" or "final"); the text is None when the function could not be found. Not
    ``strict`` (offline mutation): assertions that ask no value question may stay."""
    try:
        tree = parse_code(code)
    except ProbeError as exc:
        return [str(exc)], None, None
    node = _function_in(tree, job)
    if node is None:
        return [f"the reply does not define the function {job.node.name!r}"], None, None
    errors = []
    if type(node) is not type(job.node):
        errors.append("signature drift: async/def changed")
    if ast.dump(node.args) != ast.dump(job.node.args):
        errors.append(f"signature drift: the parameters must stay exactly ({ast.unparse(job.node.args)})")
    if [ast.dump(d) for d in node.decorator_list] != [ast.dump(d) for d in job.node.decorator_list]:
        errors.append("decorators changed: keep every decorator (pytest.mark.parametrize) exactly")
    if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(node)):
        errors.append("new imports inside the function: reuse the module's imports")
    known = job.imported_names()
    added = sorted({a.asname or a.name.split(".")[0] for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
                    for a in n.names} - known)
    if added:
        errors.append(f"new imports: {', '.join(added)}; reuse the module's imports")
    asserts = [n for n in ast.walk(node) if _is_assertion(n)]
    if stage == "probe":
        if asserts and strict:
            errors.append(f"{len(asserts)} assertion(s) left (line {asserts[0].lineno} of your code): "
                          "replace every assertion by a DEBUG_RESULT print")
        if not probes(node):
            errors.append('no probe: print the checked values as print(f"DEBUG_RESULT: {expression}")')
        elif len(marker_prints(node)) != len(probes(node)):
            errors.append('probe format: use exactly print(f"DEBUG_RESULT: {expression}")')
    else:
        if marker_prints(node):
            errors.append("DEBUG_RESULT prints left: replace each by an assertion")
        if not asserts:
            errors.append("no assertion: rebuild one assertion per probe")
    preserved = check_preserved(api_calls(job.node, skip_assertions=True), _segment(code, node), node)
    if not preserved.preserved:
        errors.append(preserved.message())
    return errors, _segment(code, node), node


def _mutate_prompt(job: FunctionJob) -> str:
    required = list(dict.fromkeys(api_calls(job.node, skip_assertions=True)))
    context = f"method of class {job.class_name}" if job.class_name else "module-level function"
    return "\n".join([
        f"Target function: {job.node.name} ({context}) in {job.rel}",
        f"API calls to preserve, in order: {', '.join(required) if required else '(none)'}",
        "", "Module imports (reuse them; do not add any):", job.imports() or "(none)",
        f"Module helpers available: {', '.join(job.helpers()) or '(none)'}",
        "", "Original test:", "```python", textwrap.dedent(job.excerpt).rstrip(), "```",
        "", "Rewrite it now: mutate it and replace every assertion by a DEBUG_RESULT print.",
    ])


def _reconstruct_prompt(job: FunctionJob, probed: str, values: list[ShownProbe]) -> str:
    return "\n".join([
        "Captured runtime values (JSON; probe i is the i-th DEBUG_RESULT print):",
        json.dumps(values, ensure_ascii=False, indent=1),
        "", "Original assertions (style reference):", *[f"    {a}" for a in job.assertions],
        "", "Module imports:", job.imports() or "(none)",
        "", "Probed test to convert:", "```python", probed.rstrip(), "```",
    ])


def _short(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _value_view(rendered: RenderedValue) -> ValueView:
    view: ValueView = {"type": rendered.get("type")}
    if "literal" in rendered:
        view["literal"] = _short(str(rendered["literal"]))
    if "sympy" in rendered:
        view["sympy"] = _short(str(rendered["sympy"]))
    if rendered.get("too_big"):
        view["too_big"] = True
    return view


RunFn = Callable[[str, list[str]], "PytestReport"]  # (module text, keep node ids) -> the run


def _run_failure(run: PytestReport, nodeids: list[str]) -> str | None:
    by_node = {r["nodeid"]: r for r in run.records}
    if run.fatal:
        return f"the test run failed: {run.fatal}"
    missing = [n for n in nodeids if n not in by_node]
    if missing:
        tail = run.stderr_tail.strip().splitlines()[-6:]
        return f"the test did not run ({run.reason}): " + " | ".join(tail)[:1500]
    for nodeid in nodeids:
        for when, phase in by_node[nodeid].get("phases", {}).items():
            if phase.get("outcome") != "passed":
                return f"{nodeid}: {phase.get('outcome')} in {when}: {phase.get('message', '')}"[:1500]
    return None


class TeacherSession:
    """Stages 1 and 3 written by a teacher model, with error feedback in the conversation."""

    mode = "teacher"

    def __init__(self, job: FunctionJob, teacher: Teacher) -> None:
        self.job = job
        self.teacher = teacher
        self.messages: list[Turn] = []
        self.last: str = ""
        self.calls = 0

    async def _ask(self) -> Draft:
        self.calls += 1
        reply: Reply = await self.teacher.generate(self.messages)
        self.last = reply.text
        if reply.error:
            return Draft(None, error=reply.error, seconds=reply.seconds)
        return Draft(extract_code(reply.text), seconds=reply.seconds, output_tokens=reply.output_tokens,
                     reply_chars=len(reply.text))

    async def probe(self, attempt: int) -> Draft:
        if attempt == 1:
            self.messages = [("system", SYSTEM_MUTATE), ("user", _mutate_prompt(self.job))]
        return await self._ask()

    async def reconstruct(self, attempt: int, probed: str, values: list[CapturedProbe]) -> Draft:
        if attempt == 1:
            shown: list[ShownProbe] = [{"probe": i, "instances": v["executions"]}
                                       for i, v in enumerate(values[:MAX_VALUES])]
            self.messages = [("system", SYSTEM_RECONSTRUCT), ("user", _reconstruct_prompt(self.job, probed, shown))]
        return await self._ask()

    def feedback(self, message: str) -> None:
        if self.last:
            self.messages += [("assistant", self.last), ("user", message)]


class Session(Protocol):
    """Who writes stages 1 and 3: :class:`TeacherSession`, or ``mutate.OfflineSession``."""

    mode: str  # "teacher" or "offline"

    async def probe(self, attempt: int) -> Draft: ...

    async def reconstruct(self, attempt: int, probed: str, values: list[CapturedProbe]) -> Draft: ...

    def feedback(self, message: str) -> None: ...


async def mutate_function(job: FunctionJob, session: Session, settings: TeacherSettings, run: RunFn,
                          helper: str, author: str) -> FunctionRecord:
    """The three stages for one test function; returns its artifact record (D.1)."""
    started = time.perf_counter()
    record: FunctionRecord = {
        "kind": "function", "mode": session.mode, "teacher": author, "prompt_version": PROMPT_VERSION,
        "repo": job.repo.spec, "module": job.rel, "function": job.qualname, "nodeids": job.nodeids,
        "original": job.excerpt, "api_calls": api_calls(job.node, skip_assertions=True),
        "probe_code": None, "captured": None, "final": None, "attempts": [],
        "validation": {"executability": False, "assertion_validity": False, "api_calls_preserved": False},
        "validation_status": "invalid", "mutation_attempts": 0, "assertion_attempts": 0, "teacher_calls": 0,
        "reason": None,
    }

    def finish() -> FunctionRecord:
        record["teacher_calls"] = getattr(session, "calls", 0)
        record["execution_time"] = round(time.perf_counter() - started, 3)
        return record

    # Stage 1 + 2: mutation with probes, run, capture
    probed_text: str | None = None
    values: list[CapturedProbe] = []
    for attempt in range(1, settings.max_retries + 1):
        record["mutation_attempts"] = attempt
        draft = await session.probe(attempt)
        entry: Attempt = {"stage": "probe", "attempt": attempt, "seconds": round(draft.seconds, 3),
                                 "output_tokens": draft.output_tokens, "reply_chars": draft.reply_chars}
        record["attempts"].append(entry)
        if draft.code is None:
            entry.update({"status": "teacher-error" if session.mode == "teacher" else "error", "error": draft.error})
            continue
        code = draft.code
        try:
            corrected = fix_probe_format(code)
            code, entry["probe_format_fixes"] = corrected.code, corrected.fixed
        except ProbeError:
            pass
        errors, text, node = constraint_errors(job, code, "probe", strict=session.mode == "teacher")
        if errors or node is None:  # no errors: the function was found
            entry.update({"status": "constraint", "errors": errors})
            session.feedback("Your function violates these constraints:\n- " + "\n- ".join(errors)
                             + "\nReturn the corrected function.")
            continue
        routed, keys = route_probes(node, helper)
        result = await asyncio.to_thread(run, job.splice(routed), job.nodeids)
        failure = _run_failure(result, job.nodeids)
        captured = _captured(result, keys, job.nodeids)
        entry["printed_tail"] = parse_debug_results(result.stderr_tail)[:20]
        if failure is None and not any(v["executions"] for v in captured):
            failure = "no DEBUG_RESULT value was captured (the probes did not run)"
        if failure:
            entry.update({"status": "execution", "error": failure})
            session.feedback(f"Running your test failed:\n{failure}\nFix the function (keep all constraints) "
                             "and return it.")
            continue
        entry["status"] = "ok"
        probed_text, values = text, captured
        record["probe_code"] = text
        record["captured"] = captured
        record["validation"]["executability"] = True
        break
    if probed_text is None:
        record["reason"] = f"stage 1/2: no executable probed mutant in {settings.max_retries} attempts"
        return finish()

    # Stage 3: assertion reconstruction, re-run
    for attempt in range(1, settings.max_retries + 1):
        record["assertion_attempts"] = attempt
        draft = await session.reconstruct(attempt, probed_text, values)
        entry = {"stage": "assertions", "attempt": attempt, "seconds": round(draft.seconds, 3),
                 "output_tokens": draft.output_tokens, "reply_chars": draft.reply_chars}
        record["attempts"].append(entry)
        if draft.code is None:
            entry.update({"status": "teacher-error" if session.mode == "teacher" else "error", "error": draft.error})
            if session.mode != "teacher":
                break  # a programmatic reconstruction does not change on retry
            continue
        errors, text, node = constraint_errors(job, draft.code, "final")
        if errors or text is None:  # no errors: the function was found
            entry.update({"status": "constraint", "errors": errors})
            session.feedback("Your function violates these constraints:\n- " + "\n- ".join(errors)
                             + "\nReturn the corrected function.")
            continue
        result = await asyncio.to_thread(run, job.splice(text), job.nodeids)
        failure = _run_failure(result, job.nodeids)
        if failure:
            entry.update({"status": "assertion", "error": failure})
            session.feedback(f"The rebuilt test does not pass:\n{failure}\nUse the captured values exactly and "
                             "return the function.")
            continue
        entry["status"] = "ok"
        record["final"] = text
        record["validation"].update({"assertion_validity": True, "api_calls_preserved": True})
        record["validation_status"] = "valid"
        break
    else:
        record["reason"] = f"stage 3: no passing reconstruction in {settings.max_retries} attempts"
    if record["validation_status"] != "valid" and record["reason"] is None:
        record["reason"] = "stage 3: " + (record["attempts"][-1].get("error") or "no reconstruction")
    return finish()


def _captured(run: PytestReport, keys: list[str], nodeids: list[str]) -> list[CapturedProbe]:
    """Per probe: its values per test instance and execution (literal / sympy text / type)."""
    by_node = {r["nodeid"]: r for r in run.records}
    out: list[CapturedProbe] = []
    for key in keys:
        executions: list[ProbeExecution] = []
        for nodeid in nodeids:
            record = by_node.get(nodeid)
            runs = (record.get("probes", {}).get(key) if record else None) or []
            for number, item in enumerate(runs):
                rendered = item.get("0")
                if rendered:
                    executions.append({"instance": nodeid, "execution": number, **_value_view(rendered)})
        out.append({"probe": key, "executions": executions})
    return out


# -- the dataset driver ---------------------------------------------------------------------

def _jobs_for_module(repo: Repo, rel: str, originals: list[Task], options: RepoOptions
                     ) -> tuple[list[FunctionJob], str, dict[str, str]]:
    """Jobs for the functions with tasks in ``rel``; the module text; failures by qualname."""
    from execbench.families.repo.selection import assertions as A

    path = repo.root / rel
    text = path.read_text(encoding="utf-8")
    functions = A.test_functions(text)
    by_name: dict[str, A.TestFunction] = {}
    for (qualname, _first), function in functions.items():
        by_name.setdefault(qualname, function)
    jobs: list[FunctionJob] = []
    failures: dict[str, str] = {}
    wanted: dict[str, list[str]] = {}
    for task in originals:
        wanted.setdefault(task.prompt_fields["function"], [])
        if task.prompt_fields["test_id"] not in wanted[task.prompt_fields["function"]]:
            wanted[task.prompt_fields["function"]].append(task.prompt_fields["test_id"])
    for qualname, nodeids in wanted.items():
        found = by_name.get(qualname)
        if found is None:
            failures[qualname] = f"function {qualname} not found in {rel}"
            continue
        jobs.append(FunctionJob(
            repo=repo, rel=rel, module_text=text, qualname=qualname, firstlineno=found.firstlineno,
            end_lineno=found.node.end_lineno or found.node.lineno, node=found.node,
            class_name=found.class_node.name if found.class_node is not None else None,
            assertions=[a.text for a in found.assertions], nodeids=sorted(nodeids), options=options))
    return jobs, text, failures


def _assertion_index(module_text: str) -> dict[tuple[str, int], int]:
    """(function qualname, assertion line) -> index of the assertion in its function."""
    from execbench.families.repo.selection import assertions as A

    out = {}
    for (qualname, _), function in A.test_functions(module_text).items():
        for assertion in function.assertions:
            out[(qualname, assertion.line)] = assertion.index
    return out


def splice_all(module_text: str, jobs: list[FunctionJob], finals: dict[str, str]) -> str:
    """The module with every function in ``finals`` (by qualname) replaced, bottom-up."""
    text = module_text
    for job in sorted(jobs, key=lambda j: -j.firstlineno):
        if job.qualname in finals:
            job_now = FunctionJob(**{**job.__dict__, "module_text": text})
            text = job_now.splice(finals[job.qualname])
    return text


def _answer_text(answer: object) -> str:
    return " ".join(str(answer).split())


class _LogCommon(TypedDict):
    """What every task line of a module's log says about its function's mutation."""

    mode: str
    attempts: int  # teacher (or offline) attempts of both stages
    seconds: float
    seed: int
    teacher: str


def _link_module(repo: Repo, rel: str, originals: list[Task], outcome: Outcome | None, mutated_text: str,
                 valid: set[str], records: dict[str, FunctionRecord], failures: dict[str, str],
                 seed: int, author: str, mode: str) -> engine.UnitResult:
    result = engine.UnitResult()
    original_index = _assertion_index((repo.root / rel).read_text(encoding="utf-8"))
    mutated_index = _assertion_index(mutated_text)
    built = outcome.tasks if outcome is not None else []
    mutants: dict[tuple[str, int], int] = {}  # (test id, assertion index) -> the mutant task's place in built
    for position, task in enumerate(built):
        fields = task["prompt_fields"]
        if fields.get("function") not in valid or fields.get("function_file") != rel:
            continue  # an unmutated function of the same module
        mutant_index = mutated_index.get((fields["function"], fields["assertion_line"]))
        if mutant_index is not None:
            mutants[(fields["test_id"], mutant_index)] = position
    rejected: dict[str, tuple[str, str]] = {}  # test id -> its first rejection's (stage, reason)
    for r in outcome.rejected if outcome is not None else []:
        rejected.setdefault(r["candidate"].split("@L")[0].split("/", 1)[-1], (r["stage"], r["reason"]))
    operators = ["teacher"] if mode == "teacher" else ["rename", "literals", "strip-comments", "probe-rebuild"]
    for original in originals:
        fields = original.prompt_fields
        qualname = fields["function"]
        record = records.get(qualname)
        common: _LogCommon = {
            "mode": mode, "attempts": record["mutation_attempts"] + record["assertion_attempts"] if record else 0,
            "seconds": record.get("execution_time", 0.0) if record else 0.0, "seed": seed, "teacher": author}
        if qualname not in valid:
            reason = failures.get(qualname) or (record["reason"] if record else None) or "no valid mutant"
            result.rejected.append({"candidate": original.id, "stage": "mutation", "reason": reason[:500]})
            result.log.append(engine.task_log(original, status="failed", reason=reason[:500], **common))
            continue
        index = original_index.get((qualname, fields["assertion_line"]))
        place = mutants.get((fields["test_id"], index)) if index is not None else None
        if place is None:
            why = rejected.get(fields["test_id"])
            reason = ("the mutant's matching assertion was not admitted by the repo family"
                      + (f" ({why[0]}: {why[1]})" if why else ""))
            result.rejected.append({"candidate": original.id, "stage": "mutation", "reason": reason[:500]})
            result.log.append(engine.task_log(original, status="failed", reason=reason[:500], **common))
            continue
        task = built[place]
        changed = _answer_text(task["answer"]) != _answer_text(original.answer)
        mutation = {"mode": mode, "teacher": author, "seed": seed, "operators": operators,
                    "answer_changed": changed, "assertion_index": index, "prompt_version": PROMPT_VERSION}
        # the original's source (repo key) + "-mut", the mutant's own case (its assertion line):
        # a repository re-prepared later may report another key (local trees get rebuilt)
        source = original.id.split("/", 2)[1]
        case = task["id"].split("/", 2)[2]
        linked = engine.link(task, original, mutation, task_id=f"repo/{engine.mutated_source(source)}/{case}")
        linked["source_id"] = f"{engine.mutated_source(source)}/{task['source_id'].partition('/')[2]}"
        result.tasks.append(linked)
        result.log.append(engine.task_log(original, status="admitted" if changed else "flagged",
                                          mutant_id=linked["id"], answer_changed=changed, **common))
    return result


def _failed_unit(originals: list[Task], reason: str, mode: str) -> engine.UnitResult:
    result = engine.UnitResult()
    for original in originals:
        result.rejected.append({"candidate": original.id, "stage": "mutation", "reason": reason[:500]})
        result.log.append(engine.task_log(original, status="failed", mode=mode, attempts=0, seconds=0.0,
                                          reason=reason[:500]))
    return result


async def mutate_module(spec: str, rel: str, originals: list[Task], *, session_for: Callable[[FunctionJob], Session],
                        author: str, mode: str, settings: TeacherSettings, options: RepoOptions,
                        gate: asyncio.Semaphore) -> engine.UnitResult:
    """All functions of one test module that have tasks: stages 1-3 each, then the module
    with every valid function spliced in goes through ``build_test_file``."""
    from execbench.families.repo.build import build_test_file
    from execbench.families.repo.selection.assertions import PROBE
    from execbench.families.repo.verification.runner import run_tests
    from execbench.sources import repos

    try:
        repo = await asyncio.to_thread(repos.prepare, spec)
        function_jobs, text, failures = _jobs_for_module(repo, rel, originals, options)
    except (SourceError, OSError, SyntaxError) as exc:
        return _failed_unit(originals, f"repository unavailable: {exc}", mode)
    prov = originals[0].provenance.get("test_sha256")
    if prov and prov != hashlib.sha256(text.encode()).hexdigest():
        return _failed_unit(originals, f"{rel} changed since the original build (test_sha256 differs)", mode)
    test_path = repo.root / rel

    def run(module_text: str, keep: list[str]) -> PytestReport:
        # stages 2-3 run under the key run's hash seed: the captured values become expected
        # values, which build_test_file then checks under the build's check seeds (options)
        return run_tests(repo, test_path, {str(test_path): module_text}, trace=False, options=options,
                         keep=keep, hash_seed=hashseeds.KEY_SEED)

    async def one(job: FunctionJob) -> FunctionRecord:
        async with gate:
            return await mutate_function(job, session_for(job), settings, run, PROBE, author)

    records = list(await asyncio.gather(*(one(job) for job in function_jobs)))
    by_name = {r["function"]: r for r in records}
    finals = {r["function"]: r["final"] for r in records if r["validation_status"] == "valid" and r["final"]}
    mutated_text = splice_all(text, function_jobs, finals)
    outcome = None
    if finals:
        outcome = await asyncio.to_thread(build_test_file, repo, rel, mutated_text, options, origin="mutation")
    result = _link_module(repo, rel, originals, outcome, mutated_text, set(finals), by_name, failures,
                          settings.seed, author, mode)
    unit = {"kind": "unit", "unit": f"{spec}::{rel}", "family": originals[0].family, "mode": mode, "teacher": author,
            "seed": settings.seed, "functions": [r["function"] for r in records], "valid": sorted(finals),
            "mutated_module_sha256": hashlib.sha256(mutated_text.encode()).hexdigest(),
            "mutated_module": mutated_text if finals else None,
            "module_build": None if outcome is None else {
                "tasks": len(outcome.tasks), "rejected": len(outcome.rejected),
                "rejected_by_stage": dict(Counter(r["stage"] for r in outcome.rejected))}}
    result.log[:0] = [unit, *(dict(r) for r in records)]
    return result


def _modules(tasks: list[Task]) -> dict[tuple[str, str], list[Task]]:
    modules: dict[tuple[str, str], list[Task]] = {}
    for task in tasks:
        fields = task.prompt_fields
        modules.setdefault((fields["repo_spec"], fields["function_file"]), []).append(task)
    return modules


def function_yields(results: list[engine.UnitResult]) -> dict[str, int]:
    # the function records mutate_module logged
    functions = [cast(FunctionRecord, e) for r in results for e in r.log if e.get("kind") == "function"]
    return {"teacher_calls": sum(f["teacher_calls"] for f in functions), "functions": len(functions),
            "valid": sum(f["validation_status"] == "valid" for f in functions),
            "invalid": sum(f["validation_status"] != "valid" for f in functions)}


def mutate_repo_dataset(
    dataset: str | Path,
    out: str | Path,
    *,
    teacher: str | Teacher = "local",
    settings: TeacherSettings | None = None,
    cache: BuildCache | None = None,
    progress: engine.ProgressFn | None = None,
    limit: int | None = None,
) -> JSONObject:
    """Teacher-driven mutation of every repo task of ``dataset`` into ``out``; returns the manifest.
    ``teacher`` is a model name (``local``, ``local/PATH.gguf``, any Inspect model) or a
    ready :class:`Teacher`. Test functions run ``settings.concurrency`` at a time."""
    from execbench.families.repo import FAMILY
    from execbench.models.teacher import open_teacher

    settings = settings or TeacherSettings()
    started = time.perf_counter()
    dataset = Path(dataset)
    tasks = [t for t in read_tasks(dataset) if t.family == FAMILY.name]
    if not tasks:
        raise engine.MutationSetupError(f"{dataset}: no repo tasks (teacher mutation is for the repo family; "
                                        "use --offline for trace and state)")
    if any("original_id" in t.provenance for t in tasks):
        raise engine.MutationSetupError(f"{dataset} already holds mutants; mutate the original dataset")
    manifest = load_manifest(dataset) if dataset.is_dir() else None
    # the options as built, with this run's hash seeds (resolved once: every module's build checks under them)
    (resolved,), hash_seeds = engine.resolve_hash_seeds([engine._family_options(FAMILY, manifest)])
    options = cast(RepoOptions, resolved)
    modules = _modules(tasks)
    keys = list(modules)[:limit] if limit is not None else list(modules)
    teacher_name = teacher if isinstance(teacher, str) else teacher.name
    run_settings = {"mode": "teacher", "teacher": teacher_name, **asdict(settings), "prompt_version": PROMPT_VERSION,
                    "original": {"path": str(dataset.resolve()),
                                 "content_hash": manifest.content_hash if manifest else None,
                                 "settings": manifest.settings if manifest else None}}

    async def run_all(active: Teacher) -> list[engine.UnitResult]:
        gate = asyncio.Semaphore(max(1, settings.concurrency))
        results: list[engine.UnitResult] = []
        for done, (spec, rel) in enumerate(keys, 1):
            results.append(await mutate_module(
                spec, rel, modules[(spec, rel)], session_for=lambda job: TeacherSession(job, active),
                author=active.name, mode="teacher", settings=settings, options=options, gate=gate))
            if progress:
                progress(done, len(keys), sum(len(r.tasks) for r in results),
                         sum(1 for r in results for e in r.log if e.get("kind") == "task" and e["status"] == "failed"))
        return results

    if isinstance(teacher, str):
        with open_teacher(teacher, temperature=settings.temperature, max_tokens=settings.max_tokens,
                          seed=settings.seed, cache=settings.cache, local_max_tokens=settings.local_max_tokens,
                          parallel=max(1, settings.concurrency)) as active:
            results = asyncio.run(run_all(active))
    else:
        results = asyncio.run(run_all(teacher))
    return engine.write_dataset(out, run_settings, results, started=started, cache=cache, mode="teacher",
                                units=len(keys), extra_yields=function_yields(results), hash_seeds=hash_seeds,
                                check=arms_check({FAMILY.name: FAMILY.arms}))
