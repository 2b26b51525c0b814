"""Building cruxeval tasks: CRUXEval problems → output- and input-prediction tasks, re-verified.

Source ``cruxeval``: the shipped copy of CRUXEval (800 problems) or ``--set path=FILE``.
A candidate is a batch of ``batch_size`` consecutive problems (so ``--limit`` counts
batches; ``--set batch_size=1`` makes it count problems); the batch runs in one sandbox
``repeats`` times, with hash seed 0 and then ``repeats - 1`` check seeds drawn at random per
build (:mod:`execbench.contract.hashseeds`; ``--set check_seeds=5,9`` pins them) (:mod:`.run`,
one job per problem). Per problem:

* ``execution`` rejection: the program or the call raised, or hit a limit, in some run;
* ``verification`` rejection: ``<recorded output> == f(<input>)`` (CRUXEval's assertion,
  Python ``==``) is false in some run — the recorded answer is not what the code returns —
  or the recorded output is not a literal the grader's parser reads (too deep, too long);
* otherwise an ``output-prediction`` task (answer: the recorded output literal);
* ``literal`` rejection (input arm only): the call's arguments have no literal form (a
  lambda, a ``range``...) or ``f`` on the arguments read back from their literal text does
  not return the output in every run; otherwise an ``input-prediction`` task whose answer
  is that literal argument text (any arguments ``f`` maps to the output are correct).

* ``inside-loop-state`` / ``post-loop-state`` (the state family's checkpoint arms on the
  same call): for a problem whose ``f`` has a loop iterating at least twice (the one with the
  most iterations), the variables of ``f`` that are JSON-serialisable, keep their JSON type
  and change, at the start of iteration K = iterations // 2 + 1 and right after the loop;
  ``checkpoint`` rejection otherwise (no loop, fewer than 2 iterations, no changing
  variable, the loop left by ``return``), ``determinism`` when runs disagree.

``--set arms=output-prediction`` writes one arm only. Metrics: ``trace_length`` (line events of the program's frames during the call, hash seed
0), ``cyclomatic``/``cyclomatic_max`` (lizard, :mod:`execbench.static`), ``loc``,
``answer_chars``. ``docs/cruxeval.md`` has the details.
"""

from __future__ import annotations

import ast
import hashlib
import json
from typing import Iterator, NotRequired, TypedDict, cast

from execbench.dataset import make_id
from execbench.contract import hashorder, hashseeds
from execbench.contract import Candidate, Outcome, SourceError
from execbench.contract.jsontypes import JSONValue
from execbench.families.cruxeval.grade import MAX_ANSWER, MAX_DEPTH
from execbench.families.cruxeval import run
from execbench.families.cruxeval.records import BuildResult, Checkpoint, CruxevalPayload, LoopSpan, Problem
from execbench.grading import LiteralParseError, parse_literal
from execbench.sandbox.jobs import JobResult
from execbench.sources import cruxeval as source
from execbench.static import cyclomatic, loc

ARMS = ("output-prediction", "input-prediction", "inside-loop-state", "post-loop-state")
STATE_ARMS = ("inside-loop-state", "post-loop-state")
SOURCE = "cruxeval"


class CruxevalOptions(TypedDict):
    """The build options (``DEFAULT_OPTIONS`` with ``--set`` values, which keep each option's type)."""

    path: str
    repeats: int
    check_seeds: str
    batch_size: int
    call_timeout: float
    memory_mb: int
    max_line_events: int
    arms: str
    max_fields: int
    hash_seeds: NotRequired[list[int]]  # set by the build engine (contract/hashseeds.py)


DEFAULT_OPTIONS: CruxevalOptions = {
    "path": "",  # a cruxeval.jsonl to read instead of the shipped copy
    "repeats": 3,  # runs per problem: hash seed 0, then check seeds; all must agree
    "check_seeds": "",  # "": drawn at random per build; "5,9": pinned (contract/hashseeds.py)
    "batch_size": 50,  # problems per candidate (one sandbox per batch and run)
    "call_timeout": 5.0,  # CPU seconds per problem and run (wall: 2x + 2 s)
    "memory_mb": 1024,  # address-space cap per problem
    "max_line_events": 1_000_000,  # tracing cap for the trace length
    "arms": ",".join(ARMS),  # the arms to write (comma-separated)
    "max_fields": 4,  # checkpoint arms: at most this many variables
}


Metrics = dict[str, int | None]  # a task record's metrics (trace_length is None past the tracing cap)


class Provenance(TypedDict):
    """The provenance every task of a problem records (an arm adds its own fields)."""

    cruxeval_id: str
    dataset: str
    dataset_file: str
    program_sha256: str
    input: str
    output: str
    repeats: int
    key_hash_seed: int  # PYTHONHASHSEED of the run whose output is the stored answer (always 0)
    trace_lengths: list[int | None]
    returned_literal: bool


def candidates(sources: list[str], options: CruxevalOptions) -> Iterator[Candidate]:
    unknown = set(_arms(options)) - set(ARMS)
    if unknown or not _arms(options):
        raise SourceError(f"arms must be a comma-separated subset of {', '.join(ARMS)}, not {options['arms']!r}")
    for name in sources:
        if name != SOURCE:
            raise SourceError(f"unknown cruxeval source {name!r}: use 'cruxeval' (the shipped copy, "
                              "or --set path=FILE for another cruxeval.jsonl)")
        problems, origin = source.read(options.get("path") or None)
        size = max(1, int(options["batch_size"]))
        for start in range(0, len(problems), size):
            batch = problems[start:start + size]
            payload: CruxevalPayload = {
                "source": SOURCE, "origin": origin["file"],
                "problems": [{"id": p.id, "code": p.code, "input": p.input, "output": p.output,
                              "loops": loops_of_f(p.code)} for p in batch]}
            yield _batch_candidate(payload)


def _batch_candidate(payload: CruxevalPayload) -> Candidate:
    batch = payload["problems"]
    return Candidate(key=f"{SOURCE}/{batch[0]['id']}" + (f"..{batch[-1]['id']}" if len(batch) > 1 else ""),
                     payload=dict(payload))


def limited(candidates: list[Candidate], limit: int) -> list[Candidate]:
    """``--limit N``: the candidates of the first N problems (a candidate is a batch of
    ``batch_size`` problems; the last one kept is cut), so N means N problems (issue 34)."""
    kept: list[Candidate] = []
    left = limit
    for candidate in candidates:
        if left <= 0:
            break
        payload = cast(CruxevalPayload, candidate.payload)
        if len(payload["problems"]) > left:
            candidate = _batch_candidate({**payload, "problems": payload["problems"][:left]})
        kept.append(candidate)
        left -= len(payload["problems"])
    return kept


def loops_of_f(code: str) -> list[LoopSpan]:
    """The ``for``/``while`` loops of the module-level function ``f`` (not of functions or
    classes nested in it) whose body starts below the header: header line, body lines, end."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    function = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "f"), None)
    if function is None:
        return []
    loops: list[LoopSpan] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.For, ast.While)) and node.body[0].lineno > node.lineno:
            # end_lineno is set on every node ast.parse makes
            loops.append({"line": node.lineno, "body": [node.body[0].lineno, max(n.end_lineno or 0 for n in node.body)],
                          "end": node.end_lineno or node.lineno})
        pending.extend(ast.iter_child_nodes(node))
    headers = [loop["line"] for loop in loops]
    return sorted((loop for loop in loops if headers.count(loop["line"]) == 1), key=lambda loop: loop["line"])


def _arms(options: CruxevalOptions) -> list[str]:
    return [arm.strip() for arm in str(options.get("arms", ",".join(ARMS))).split(",") if arm.strip()]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_candidate(candidate: Candidate, options: CruxevalOptions) -> Outcome:
    payload = cast(CruxevalPayload, candidate.payload)  # made by candidates()
    problems = payload["problems"]
    outcome = Outcome()
    seeds = hashseeds.of(options)
    runs: list[list[JobResult]] = []

    def run_all(batch: list[Problem], seed: int) -> list[JobResult]:
        return run.run("build", batch, seed=seed, cpu_seconds=float(options["call_timeout"]),
                       memory_mb=int(options["memory_mb"]), max_line_events=int(options["max_line_events"]))
    for seed in seeds:
        runs.append(run_all(problems, seed))
    # hash-order suspects get extra check runs (contract/hashorder.py, contract/hashseeds.py)
    extras = hashseeds.extra(options)
    suspects = {index: n for n, index in enumerate(i for i, p in enumerate(problems)
                                                   if hashorder.may_see_hash_order(p["code"]))}
    extra_runs = [run_all([problems[i] for i in suspects], seed) for seed in extras] if suspects else []
    for index, problem in enumerate(problems):
        jobs = [seed_runs[index] for seed_runs in runs]
        if index in suspects and extra_runs:
            _checked(problem, jobs, [r[suspects[index]] for r in extra_runs], payload, options, outcome,
                     seeds, extras)
        else:
            _problem(problem, jobs, payload, options, outcome, seeds)
    arms = _arms(options)
    outcome.tasks = [task for task in outcome.tasks if task["arm"] in arms]
    outcome.rejected = [r for r in outcome.rejected
                        if not (r["candidate"].endswith("#input-prediction") and "input-prediction" not in arms)
                        and not (r["candidate"].endswith("#loop-state") and not set(STATE_ARMS) & set(arms))]
    return outcome


def _checked(problem: Problem, jobs: list[JobResult], extra_jobs: list[JobResult], payload: CruxevalPayload,
             options: CruxevalOptions, outcome: Outcome, seeds: list[int], extras: list[int]) -> None:
    """:func:`_problem` for a hash-order suspect: its tasks and records are those of the
    base runs (the same in every build), admitted only where every extra run agrees too."""
    base, full = Outcome(), Outcome()
    _problem(problem, jobs, payload, options, base, seeds)
    _problem(problem, jobs + extra_jobs, payload, options, full, seeds + extras)
    kept = {task["id"] for task in full.tasks}
    outcome.tasks += [task for task in base.tasks if task["id"] in kept]
    rejected = {r["candidate"] for r in base.rejected}
    outcome.rejected += base.rejected + [r for r in full.rejected if r["candidate"] not in rejected]


def _problem(problem: Problem, jobs: list[JobResult], payload: CruxevalPayload,
             options: CruxevalOptions, outcome: Outcome, seeds: list[int]) -> None:
    key = f"{SOURCE}/{problem['id']}"
    failed = next((r for r in jobs if run.status(r) != "ok"), None)
    if failed is not None:
        outcome.reject(key, "execution", f"f({problem['input']}) did not return: {run.error(failed)}",
                       cruxeval_id=problem["id"])
        return
    results: list[BuildResult] = [r.value for r in jobs]  # checked by run.checked
    wrong = next((r for r in results if not r["equal"]), None)
    if wrong is not None:
        differ = [seed for seed, r in zip(seeds, results) if not r["equal"]]
        outcome.reject(key, "verification",
                       f"recorded output {problem['output'][:200]} differs from execution: f returned "
                       f"{wrong['returned'][:200]} (hash seeds {differ})",
                       cruxeval_id=problem["id"], returned=wrong["returned"])
        return
    try:
        parse_literal(problem["output"], max_len=10 * MAX_ANSWER, max_depth=MAX_DEPTH)
    except LiteralParseError as exc:
        outcome.reject(key, "verification", f"the recorded output is not a literal the grader reads: {exc}",
                       cruxeval_id=problem["id"])
        return
    first = results[0]
    complexity = cyclomatic(problem["code"])
    common_metrics: Metrics = {"trace_length": first["trace_length"], "cyclomatic": complexity.total,
                      "cyclomatic_max": complexity.max_function, "loc": loc(problem["code"])}
    provenance: Provenance = {
        "cruxeval_id": problem["id"],
        "dataset": "CRUXEval (facebookresearch/cruxeval, MIT)",
        "dataset_file": payload["origin"],
        "program_sha256": _sha(problem["code"]),
        "input": problem["input"],
        "output": problem["output"],
        "repeats": len(results),  # runs that agreed: the key run, then the build's check runs
        # only the key run's seed: the check seeds are drawn per build (the manifest's
        # settings.hash_seeds), and records must not vary per build
        "key_hash_seed": hashseeds.KEY_SEED,
        "trace_lengths": [r["trace_length"] for r in results],
        "returned_literal": all(r["returned_literal"] for r in results),
    }
    source_id = f"{SOURCE}/{problem['id']}"
    outcome.tasks.append({
        "id": make_id("cruxeval", SOURCE, problem["id"], "output-prediction"),
        "family": "cruxeval",
        "arm": "output-prediction",
        "source_id": source_id,
        "language": "python",
        "prompt_fields": {"program": problem["code"], "input": problem["input"], "call": f"f({problem['input']})"},
        "answer": problem["output"],
        "answer_kind": "python-literal",
        "metrics": {**common_metrics, "answer_chars": len(problem["output"])},
        "provenance": provenance,
    })
    if problem.get("loops"):
        _checkpoint_tasks(problem, results, common_metrics, provenance, options, outcome)
    else:
        outcome.reject(f"{key}#loop-state", "checkpoint", "f has no loop", cruxeval_id=problem["id"])
    literal = {r.get("literal_input", "") for r in results}  # each set when every literal_equal is
    problem_ = next((r["literal_error"] for r in results if r.get("literal_error")), None)
    if problem_ is None and not all(r.get("literal_equal") for r in results):
        problem_ = "f on the literal form of the arguments does not return the output"
    if problem_ is None and len(literal) != 1:
        problem_ = "the literal form of the arguments differs across runs"
    if problem_ is not None:
        outcome.reject(f"{key}#input-prediction", "literal",
                       f"no literal arguments for the input arm: {problem_} (input: {problem['input'][:200]})",
                       cruxeval_id=problem["id"])
        return
    answer = literal.pop()
    outcome.tasks.append({
        "id": make_id("cruxeval", SOURCE, problem["id"], "input-prediction"),
        "family": "cruxeval",
        "arm": "input-prediction",
        "source_id": source_id,
        "language": "python",
        "prompt_fields": {"program": problem["code"], "output": problem["output"]},
        "answer": answer,
        "answer_kind": "python-literal",
        "metrics": {**common_metrics, "answer_chars": len(answer)},
        "provenance": {**provenance, "literal_input_differs": answer != problem["input"]},
    })


def _json_type(value: JSONValue) -> str:
    return "int" if type(value) is int else type(value).__name__


def _checkpoint_tasks(problem: Problem, results: list[BuildResult], metrics: Metrics,
                      provenance: Provenance, options: CruxevalOptions, outcome: Outcome) -> None:
    """The state family's inside/post-loop checkpoints of the call (docs/cruxeval.md)."""
    key = f"{SOURCE}/{problem['id']}#loop-state"
    checkpoints: list[Checkpoint] = [r.get("checkpoint") or {"error": "no checkpoint run"} for r in results]
    first = checkpoints[0]
    if "error" in first:
        outcome.reject(key, "checkpoint", first["error"], cruxeval_id=problem["id"])
        return
    if any(c != first for c in checkpoints[1:]):
        outcome.reject(key, "determinism", "the checkpoint states differ across runs", cruxeval_id=problem["id"])
        return
    inside, post = first["inside"], first["post"]
    fields = []
    texts: dict[str, tuple[str, str]] = {}  # name -> its inside and post JSON text
    for name, text in inside.items():
        after = post.get(name)
        if text is None or after is None or text == after or name.startswith("__"):
            continue
        if _json_type(json.loads(text)) != _json_type(json.loads(after)):
            continue
        fields.append(name)
        texts[name] = (text, after)
    fields = fields[: int(options["max_fields"])]
    if not fields:
        outcome.reject(key, "checkpoint", f"no variable of f changes, serialisable, between iteration "
                                          f"{first['inside_iteration']} and the exit of the loop on line "
                                          f"{first['loop_line']}", cruxeval_id=problem["id"])
        return
    checkpoint = {"loop_line": first["loop_line"], "loop_iterations": first["iterations"],
                  "inside_iteration": first["inside_iteration"], "fields": fields}
    for arm, moment in (("inside-loop-state", 0), ("post-loop-state", 1)):
        answer = {name: json.loads(texts[name][moment]) for name in fields}
        text = json.dumps(answer, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        outcome.tasks.append({
            "id": make_id("cruxeval", SOURCE, problem["id"], arm),
            "family": "cruxeval",
            "arm": arm,
            "source_id": f"{SOURCE}/{problem['id']}",
            "language": "python",
            "prompt_fields": {"program": problem["code"], "input": problem["input"],
                              "call": f"f({problem['input']})", **checkpoint},
            "answer": answer,
            "answer_kind": "json",
            "metrics": {**metrics, "answer_chars": len(text), "loop_iterations": first["iterations"],
                        "inside_iteration": first["inside_iteration"]},
            "provenance": {**provenance, "checkpoint": checkpoint, "state_line": text},
        })
