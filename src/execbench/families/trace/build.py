"""Building trace tasks: sources → candidates → sandboxed, repeated tracing → tasks.

One candidate is one program with its calls (a HumanEval problem, or a case directory).
Each candidate is traced ``repeats`` times with different hash seeds; a call becomes a
task only if every run agrees on the canonical trace (concurrent segments sorted). The
answer is the run under hash seed 0's; the other runs' seeds are drawn at random per build
(``check_seeds``, :mod:`execbench.contract.hashseeds`: pinned with ``--set check_seeds=5,9``).
Rejections carry a stage: ``source``, ``execution``, ``determinism``, ``filter``, ``duplicate``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Iterator, Literal, NotRequired, TypedDict, cast

from execbench.dataset import make_id
from execbench.contract import hashorder, hashseeds
from execbench.contract import Candidate, Outcome, SourceError
from execbench.families.trace import coconut, coconut_advanced
from execbench.families.trace.grade import canonical_trace
from execbench.sources import cases, cruxeval, humaneval
from execbench.static import cyclomatic, loc
from execbench.sandbox.jobs import Job, JobResult
from execbench.tracing import TraceLimits, calls_job, interpreter, run_traces, script_job

class TraceOptions(TypedDict):
    """The build options (``DEFAULT_OPTIONS`` with ``--set`` values, which keep each option's type)."""

    repeats: int
    check_seeds: str
    max_answer_tokens: int
    case_max_answer_tokens: int
    max_line_events: int
    call_timeout: int
    convention: str
    python: str
    script_start: str
    keep_duplicates: bool
    layout: str
    hash_seeds: NotRequired[list[int]]  # set by the build engine (contract/hashseeds.py)


class _TraceError(TypedDict):
    type: str
    message: str


class RunResult(TypedDict, total=False):
    """What the family reads of one traced call or script run (:mod:`execbench.tracing.run`)."""

    status: str  # ok, error, timeout, crash, too_large, tampered
    lines: list[int | list[int]]  # line events; a concurrent segment is a nested list
    exit_code: int
    error: _TraceError
    too_large: str
    tampered: str


DEFAULT_OPTIONS: TraceOptions = {
    "repeats": 3,  # runs with different PYTHONHASHSEED (0, then check seeds); all must agree
    "check_seeds": "",  # "": drawn at random per build; "5,9": pinned (families/hashseeds.py)
    "max_answer_tokens": 1024,  # HumanEval-Trace: CoCoNUT drops traces needing more than 1024 tokens
    "case_max_answer_tokens": 0,  # case directories (Advanced-Trace keeps all 5 calls): 0 = no limit
    "max_line_events": 20_000,  # tracing cap; far above what the token filter admits
    "call_timeout": 10,
    # "paper": every line event, comprehension iterations included (CoCoNUT); "collapsed": a
    # comprehension's repeats of the line it stands on count once (execbench before version 2)
    "convention": "paper",
    "python": interpreter.PINNED,  # traced under CPython 3.11 whatever runs the build; "host" or a path
    "script_start": "main_guard",  # scripts: answer starts past `if __name__ == "__main__":`; or "module"
    "keep_duplicates": False,  # True keeps repeated calls (row-by-row alignment with the paper's data)
    # HumanEval listing: "execbench" (prompt + solution) or "coconut" (the paper's, coconut.py)
    "layout": "execbench",
}


class InterpreterPayload(TypedDict):
    path: str  # the interpreter answers are traced under
    version: str  # its label, e.g. "CPython 3.11.7"


class TracePayload(TypedDict):
    """A trace candidate's payload (JSON: it is hashed into the build-cache key)."""

    source: str  # "humaneval", "cruxeval" or a case directory's source name
    case: str
    program: str
    mode: Literal["calls", "script"]
    runs: list[str]  # call expressions, or stdin texts
    topic: str
    entry_point: NotRequired[str]
    stdin_files: NotRequired[list[str]]
    python: NotRequired[InterpreterPayload]  # set by candidates(); mutation payloads resolve it
    listing: NotRequired[str]  # the program as shown, when it is not ``program`` (coconut-advanced)
    line_offset: NotRequired[int]  # prelude lines above the shown program: answers are shifted back
    paper_row: NotRequired[int]  # coconut-advanced: the published row (provenance)
    license: NotRequired[str]  # case.toml's `license` (provenance: the dataset card's license of the source)
    source_error: NotRequired[str]  # the source could not make this candidate: rejected at stage source


CONVENTIONS = ("paper", "collapsed")
SCRIPT_STARTS = ("main_guard", "module")
_TOKEN = re.compile(r"\d{1,3}|[^\s\d]")


def render_trace(trace: list) -> str:
    """The answer as a model writes it: ``[1, 2, (3, 4), 5]`` (segments in parentheses)."""
    parts = [f"({', '.join(map(str, item))})" if isinstance(item, list) else str(item) for item in trace]
    return "[" + ", ".join(parts) + "]"


def approx_tokens(text: str) -> int:
    """Offline token-count proxy for BPE tokenizers: each run of up to three digits and each
    non-space symbol is one token (``[1, 2, 3]`` → 7). Used for the 1024-token filter."""
    return len(_TOKEN.findall(text))


def flat_length(trace: list) -> int:
    return sum(len(item) if isinstance(item, list) else 1 for item in trace)


def check_options(options: TraceOptions) -> None:
    if options["convention"] not in CONVENTIONS:
        raise SourceError(f"convention must be one of {', '.join(CONVENTIONS)}, not {options['convention']!r}")
    if options["script_start"] not in SCRIPT_STARTS:
        raise SourceError(f"script_start must be one of {', '.join(SCRIPT_STARTS)}, not {options['script_start']!r}")
    if options.get("layout", "execbench") not in coconut.LAYOUTS:
        raise SourceError(f"layout must be one of {', '.join(coconut.LAYOUTS)}, not {options['layout']!r}")


def trace_interpreter(options: TraceOptions) -> interpreter.Interpreter:
    try:
        return interpreter.resolve(options["python"])
    except interpreter.InterpreterError as exc:
        raise SourceError(str(exc)) from None


def manifest_settings(options: TraceOptions) -> dict[str, dict[str, str]]:
    """What the manifest records about how answers were made (docs/trace-format.md)."""
    return {"trace": {"interpreter": trace_interpreter(options).label, "convention": options["convention"],
                      "script_start": options["script_start"], "layout": options.get("layout", "execbench")}}


# Named sources, ``coconut-advanced:PATH`` (the paper's repository, coconut_advanced.py);
# anything else is a case directory (or a folder of them).
SOURCES: dict[str, Callable[[TraceOptions], Iterator[Candidate]]] = {
    "humaneval": lambda options: _humaneval(options.get("layout", "execbench")),
    "cruxeval": lambda options: _cruxeval(),
}


def candidates(sources: list[str], options: TraceOptions) -> Iterator[Candidate]:
    check_options(options)
    python = trace_interpreter(options)
    for source in sources:
        named = SOURCES.get(source)
        if source.startswith(coconut_advanced.PREFIX):
            found = coconut_advanced.candidates(source, options.get("layout", "execbench"))
        else:
            found = named(options) if named else _case_dirs(source)
        for candidate in found:
            # the interpreter is part of the payload, hence of the build-cache key
            candidate.payload["python"] = InterpreterPayload(path=python.path, version=python.label)
            yield candidate


def _cruxeval() -> Iterator[Candidate]:
    """The shipped CRUXEval problems: one program, one call ``f(<input>)`` each."""
    problems, _ = cruxeval.read()
    for problem in problems:
        yield Candidate(
            key=f"cruxeval/{problem.id}",
            payload={"source": "cruxeval", "case": problem.id, "program": problem.code, "mode": "calls",
                     "runs": [problem.call], "entry_point": "f", "topic": "cruxeval"},
        )


def _humaneval(layout: str = "execbench") -> Iterator[Candidate]:
    for problem in humaneval.problems():
        case = problem.task_id.replace("/", "-")
        program = (coconut.coconut_listing(problem.prompt, problem.canonical_solution) if layout == "coconut"
                   else problem.program)
        yield Candidate(
            key=f"humaneval/{case}",
            payload={
                "source": "humaneval",
                "case": case,
                "program": program,
                "mode": "calls",
                "runs": humaneval.candidate_calls(problem),
                "entry_point": problem.entry_point,
                "topic": "humaneval",
            },
        )


#: The keys a trace case.toml may have beyond the common ones (sources/cases.py checks them).
CASE_KEYS = {"calls": cases.TEXTS, "stdin": cases.TEXTS}


def _case_dirs(source: str) -> Iterator[Candidate]:
    """One candidate per case directory; a malformed one is a ``source_error`` payload, so it
    is that case's rejection (stage ``source``), never the end of the build (issue 34)."""
    name, dirs = cases.resolve_source("trace", source)
    for directory, case in cases.load_cases(dirs, CASE_KEYS):
        try:
            if isinstance(case, SourceError):
                raise case
            payload = _case_payload(case, name)
        except SourceError as exc:
            problem = exc.problem if isinstance(exc, cases.CaseError) else str(exc)
            case_id = case.id if isinstance(case, cases.Case) else directory.name
            yield Candidate(key=f"{name}/{case_id}", payload={
                "source": name, "case": case_id, "program": "", "mode": "calls", "runs": [], "topic": name,
                "source_error": problem})
            continue
        yield Candidate(key=f"{name}/{case.id}", payload=dict(payload))


def _case_payload(case: cases.Case, name: str) -> TracePayload:
    config = case.config
    where = case.directory / cases.CASE_FILE
    if config["language"] != "python":
        raise cases.CaseError(where, f"trace cases must be Python, not {config['language']!r}")
    if ("calls" in config) == ("stdin" in config):
        raise cases.CaseError(where, "needs exactly one of `calls` (a list of calls) and `stdin` (a list of files)")
    if "calls" in config:
        mode: Literal["calls", "script"] = "calls"
        runs = list(config["calls"])
    else:
        mode, runs = "script", [case.read(name_) for name_ in config["stdin"]]
    return {
        "source": name,
        "case": case.id,
        "program": case.read(config["source"]),
        "mode": mode,
        "runs": runs,
        "stdin_files": list(config.get("stdin", [])),
        "topic": config.get("topic", name),
        **({"license": config["license"]} if "license" in config else {}),  # type: ignore[typeddict-item]
    }


def _jobs(index: int, payload: TracePayload, options: TraceOptions, calls: list[int] | None = None) -> list[Job]:
    """The tracing jobs of one candidate: one for its calls (``calls``: the indices of the
    runs to trace, default all), or one per stdin run."""
    limits = TraceLimits(max_line_events=options["max_line_events"])
    collapse = options["convention"] == "collapsed"
    if payload["mode"] == "calls":
        chosen = range(len(payload["runs"])) if calls is None else calls
        if not chosen:
            return []
        return [calls_job(f"{index}", payload["program"], [payload["runs"][i] for i in chosen], trace_limits=limits,
                          call_timeout=options["call_timeout"], collapse_comprehensions=collapse)]
    return [script_job(f"{index}/{run}", payload["program"], stdin, trace_limits=limits,
                       collapse_comprehensions=collapse,
                       start_after_main_guard=options["script_start"] == "main_guard", segment_markers=True)
            for run, stdin in enumerate(payload["runs"])]


def _results(payload: TracePayload, results: list[JobResult]) -> list[RunResult] | str:
    """Per run (call or stdin) results of one candidate's jobs, or the reason it failed."""
    if payload["mode"] == "calls":
        run = results[0]
        if not run.ok:
            return f"sandbox: {run.reason()}"
        module = run.value["module"]
        if module["status"] == "tampered":
            return f"tracer_tampered: {module['tampered']}"
        if module["status"] != "ok":
            error = module["error"]
            return f"module raised {error['type']}: {error['message']}"
        calls: list[RunResult] = run.value["calls"]  # checked by tracing.run_traces
        return calls
    scripts: list[RunResult] = []
    for run in results:
        if not run.ok:
            return f"sandbox: {run.reason()}"
        if run.value["module"]["status"] == "tampered":
            return f"tracer_tampered: {run.value['module']['tampered']}"
        scripts.append(run.value["script"])
    return scripts


def _trace_seed(payloads: list[TracePayload], options: TraceOptions, seed: int,
                calls: list[list[int] | None]) -> list[list[RunResult | None] | str]:
    """Trace every payload once with hash seed ``seed``, all in one sandbox per interpreter.
    ``calls[i]``: the calls of payload ``i`` to trace (None: all); the others' places in
    its result list hold None."""
    by_python: dict[str, list[int]] = {}
    for index, payload in enumerate(payloads):
        # candidates() records the interpreter; payloads made elsewhere (mutation) resolve it here
        python = payload["python"]["path"] if "python" in payload else trace_interpreter(options).path
        by_python.setdefault(python, []).append(index)
    out: list[list[RunResult | None] | str] = [""] * len(payloads)
    for python, indices in by_python.items():
        jobs = {index: _jobs(index, payloads[index], options, calls[index]) for index in indices}
        results = iter(run_traces([job for index in indices for job in jobs[index]], hash_seed=seed, python=python))
        for index in indices:
            if not jobs[index]:  # no call left to trace
                out[index] = [None] * len(payloads[index]["runs"])
                continue
            result = _results(payloads[index], [next(results) for _ in jobs[index]])
            chosen = calls[index]
            if chosen is not None and not isinstance(result, str):
                spread: list[RunResult | None] = [None] * len(payloads[index]["runs"])
                for position, call_result in zip(chosen, result, strict=True):
                    spread[position] = call_result
                out[index] = spread
            else:
                out[index] = list(result) if not isinstance(result, str) else result
    return out


def _failure(result: RunResult) -> str | None:
    status = result.get("status")
    if status == "ok" and result.get("exit_code", 0) == 0:
        return None
    if status == "too_large":
        return f"trace too large: {result.get('too_large')}"
    if status == "tampered":
        return f"tracer_tampered: {result.get('tampered')}"
    if "error" in result:
        return f"{status}: {result['error']['type']}: {result['error']['message']}"
    return f"exit code {result.get('exit_code')}"


BATCH_SIZE = 16  # candidates traced in one sandbox per hash seed (families/build.py)


def build_candidates(candidates: list[Candidate], options: TraceOptions) -> list[Outcome]:
    """Trace the candidates ``repeats`` times (one sandbox per hash seed for all of them; a
    candidate that failed is not traced again) and admit each call as :func:`_admit` says.

    The seeds are :func:`hashseeds.of` the options: hash seed 0 first (the key run), then
    the build's check seeds. A call that failed under hash seed 0 (error, timeout, trace too
    large) is rejected with seed 0's reason whatever the other seeds give (:func:`_admit`
    reports the first failing seed), so the other seeds do not trace it again; its place in
    their results repeats seed 0's. Script runs are all traced every time (each is a job of
    its own whose crash rejects the candidate)."""
    for candidate in candidates:
        if "source_error" in candidate.payload:  # the engine rejects it at stage source
            raise SourceError(candidate.payload["source_error"])
    runs: list[list[list[RunResult]]] = [[] for _ in candidates]  # per candidate, per seed: per run
    failed: dict[int, str] = {}
    base = hashseeds.of(options)
    # hash-order suspects get extra check runs (contract/hashorder.py: a coin flip of set order
    # passes 1 time in 32 instead of 4); the others stop after the base seeds
    seeds = base + hashseeds.extra(options)
    suspects = {i for i, c in enumerate(candidates)
                if hashorder.may_see_hash_order(cast(TracePayload, c.payload)["program"])}
    for n, seed in enumerate(seeds):
        live = [i for i in range(len(candidates)) if i not in failed and (n < len(base) or i in suspects)]
        if not live:
            break
        payloads = [cast(TracePayload, candidates[i].payload) for i in live]
        calls = [None if n == 0 or payload["mode"] != "calls"
                 else [n for n, first in enumerate(runs[i][0]) if _failure(first) is None]
                 for i, payload in zip(live, payloads)]
        for i, result in zip(live, _trace_seed(payloads, options, seed, calls)):
            if isinstance(result, str):  # the program itself failed: no need for the other seeds
                failed[i] = result
            else:  # seed 0 traced every run; a later seed's None (not traced again) repeats seed 0's
                key_run = runs[i][0] if n else []
                runs[i].append([key_run[k] if traced is None else traced for k, traced in enumerate(result)])
    outcomes = []
    for i, candidate in enumerate(candidates):
        outcome = Outcome()
        if i in failed:
            outcome.reject(candidate.key, "execution", failed[i])
        else:
            _admit(candidate, runs[i], options, outcome, seeds)
        outcomes.append(outcome)
    return outcomes


def build_candidate(candidate: Candidate, options: TraceOptions) -> Outcome:
    return build_candidates([candidate], options)[0]


def _admit(candidate: Candidate, runs: list[list[RunResult]], options: TraceOptions, outcome: Outcome,
           seeds: list[int]) -> None:
    """Tasks of the calls whose traces agree across seeds (``seeds``: the runs' hash seeds,
    key seed first) and pass the filters."""
    payload = cast(TracePayload, candidate.payload)
    complexity = cyclomatic(payload["program"])
    program_loc = loc(payload["program"])
    seen: dict[str, int] = {}
    for index, run_input in enumerate(payload["runs"]):
        label = f"{candidate.key}#{index}"
        results = [run[index] for run in runs]
        failure = next((f for f in map(_failure, results) if f), None)
        if failure:
            outcome.reject(label, "execution", failure, run=run_input)
            continue
        traces = [canonical_trace(r["lines"]) for r in results]
        differ = [seed for seed, trace in zip(seeds, traces) if trace != traces[0]]
        if differ:
            outcome.reject(label, "determinism", f"traces differ across {len(traces)} hash seeds: hash seed "
                           f"{seeds[0]}'s differs from {', '.join(map(str, differ))}'s",
                           run=run_input, hash_seeds=seeds[:len(traces)])
            continue
        answer = coconut_advanced.shift_lines(traces[0], payload.get("line_offset", 0))
        tokens = approx_tokens(render_trace(answer))
        cap = options["max_answer_tokens"] if payload["source"] == "humaneval" else options["case_max_answer_tokens"]
        if cap and tokens > cap:
            outcome.reject(label, "filter", f"answer needs ~{tokens} tokens > {cap}",
                           run=run_input, trace_length=flat_length(answer))
            continue
        if run_input in seen and not options["keep_duplicates"]:
            outcome.reject(label, "duplicate", f"same {payload['mode'][:-1]} as run {seen[run_input]}", run=run_input)
            continue
        seen[run_input] = index
        # (no thread count: an executor may start fewer workers, depending on timing)
        metrics = {"answer_tokens": tokens,
                   "cyclomatic": complexity.total, "cyclomatic_max": complexity.max_function, "loc": program_loc}
        outcome.tasks.append(_task(payload, index, run_input, answer, metrics, options["repeats"]))


def _task(payload: TracePayload, index: int, run_input: str, answer: list[int | list[int]], metrics: dict[str, int],
          repeats: int) -> dict[str, Any]:
    source, case = payload["source"], payload["case"]
    fields: dict[str, str] = {"program": payload.get("listing", payload["program"]), "topic": payload["topic"]}
    if payload["mode"] == "calls":
        fields["call"] = run_input
        if "entry_point" in payload:
            fields["entry_point"] = payload["entry_point"]
    else:
        fields["stdin"] = run_input
    segments = sum(isinstance(item, list) for item in answer)
    return {
        "id": make_id("trace", source, f"{case}/{index}", "trace"),
        "family": "trace",
        "arm": "trace",
        "source_id": f"{source}/{case}",
        "language": "python",
        "prompt_fields": fields,
        "answer": answer,
        "answer_kind": "lines",
        "metrics": {"trace_length": flat_length(answer), "concurrent_segments": segments, **metrics},
        "provenance": {
            "mode": payload["mode"],
            "run_index": index,
            "stdin_file": payload["stdin_files"][index] if payload.get("stdin_files") else None,
            "program_sha256": hashlib.sha256(payload["program"].encode()).hexdigest(),
            # traced with PYTHONHASHSEED 0 (the answer) and repeats-1 check seeds drawn per build
            # (the manifest's settings.hash_seeds; not here, so that records are the same in every build)
            "agreeing_runs": repeats,
            **({"paper_row": payload["paper_row"]} if "paper_row" in payload else {}),
            **({"license": payload["license"]} if "license" in payload else {}),
        },
    }
