"""Building state tasks: a case → four arms, checked by execution (paper 001, §3.1–3.3).

A candidate is one case: a deterministic stdin→stdout program, a short and a long input and
(optionally) a checkpoint ``{loop_line, fields, inside_iteration}``. Everything that runs
code runs as jobs of the sandbox's job runner (:mod:`.jobs`), the cases of a batch together
(:func:`build_candidates`: one sandbox per step and hash seed). Python:

1. *profile* (only when the checkpoint or its iteration is not given): a copy counting every
   loop's iterations and exits on the long input; without ``[checkpoint]`` the loop and the
   projection are chosen automatically (:mod:`.choose`), from a second, snapshot run;
2. ``repeats`` sandboxes, one per hash seed (0, then ``repeats - 1`` check seeds drawn at
   random per build: :mod:`execbench.contract.hashseeds`), each running the clean program
   on both inputs and the two instrumented programs on the long input (natively, under the
   time/memory caps), plus the short and long runs under the opcode-counting tracer (the
   native trace length, measured ``repeats`` times); seed 0's traced runs of all four arms
   also measure the state load.

C++: compile (``g++ -std=c++17 -O0 --coverage``; a source's leading standard headers come
precompiled, :mod:`.pch`) and run in the sandbox; a compile error is a rejection; the
trace length is the sum of gcov line-execution counts of the program's own
source file (standard headers filtered out). Without ``[checkpoint]`` the loop and the
projection are chosen by the Python rule from a profile and a snapshot run
(:mod:`.choose_cpp`); the state metrics come from the C++ state meter
(:mod:`.cpp_programs`, :class:`_Meter`): compiled in the first step with the clean program,
its clean long run also counts the loops (the automatic choice's profile, a declared loop's
iterations: no profile or probe copy to compile unless the meter cannot count), and its
compiled program runs the two state arms in their step (null metrics, with the reason in
``provenance.state_meter``, if it cannot be built or run).

Admission (rejection stages): ``source`` (unreadable case), ``instrument`` (no
instrumentable loop / bad fields), ``compile``, ``execution`` (crash, non-UTF-8 output),
``caps`` (time, memory, output, tracing caps), ``determinism`` (outputs differ across
repeats), ``trace-order`` (not short << long in every measurement), ``checkpoint``
(unreachable, unparsable state, fields/types differ, no core field changes, output before
the checkpoint is not a prefix of the clean output), ``tampering`` (a C++ program that
references libgcov or kills a run by calling its API, or whose state meter measurement is
missing or not the meter's: docs/sandbox.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import replace
from functools import lru_cache
from typing import Any, Generator, Iterator, Sequence, TypedDict, cast

from execbench.dataset import make_id
from execbench.contract import Candidate, Outcome, Reject, SourceError, hashorder, hashseeds
from execbench.families.state import choose, choose_cpp, cpp_programs, instrument_cpp, instrument_py, pch
from execbench.families.state import jobs as state_jobs
from execbench.families.state.canonical import depth_ok, dumps, json_type, leaves
from execbench.families.state.jobs import exec_job, python_job, toolchain
from execbench.contract.jsontypes import JSONObject
from execbench.families.state.cpp_scan import CppLoop
from execbench.families.state.records import (ArmMetrics, CaseProvenance, CaseResult, CaseRun, Checkpoint, Choice,
                                              Instrumented,
                                              CommonProvenance, Measure, Results, Settings, SourceErrorPayload, StateMetrics,
                                              StateOptions, StatePayload, StateProvenance, StateTask,
                                              Step)
from execbench.sandbox import records
from execbench.sandbox.classify import STDERR_TAIL
from execbench.sandbox.jobs import Job, JobResult
from execbench.sources import cases
from execbench.usererror import unknown as unknown_key

INSTRUMENTATION_VERSION = "1"
ARMS = ("short-trace-final", "long-trace-final", "inside-loop-state", "post-loop-state")

DEFAULT_OPTIONS: StateOptions = {
    "repeats": 3,  # runs per oracle (hash seed 0, then check seeds) and trace-length measurements
    "check_seeds": "",  # Python: "" = drawn at random per build; "5,9": pinned (contract/hashseeds.py)
    "min_trace_ratio": 10.0,  # short << long: long >= ratio * short in every measurement
    "time_limit": 10.0,  # CPU seconds per native run (wall: 2x + 5 s)
    "memory_mb": 1024,  # address-space cap per native run
    "trace_time_limit": 120.0,  # per run under the tracer
    "max_line_events": 3_000_000,  # tracer cap
    "state_budget": 300_000,  # state-walk work before the sampling stride doubles
    "max_output_bytes": 1_048_576,  # stdout cap per run
    "max_fields": 4,  # automatic projection: at most this many fields
    "max_field_chars": 200,  # automatic projection: canonical JSON of a field at most this long
    "final_compare": "auto",  # tokens | bytes | auto (the case's or source's rule)
    "cpp_std": "c++17",
    "compile_time_limit": 120.0,
}


# -- candidates ---------------------------------------------------------------------------

def candidates(sources: list[str], options: StateOptions) -> Iterator[Candidate]:
    for source in sources:
        if source == "networkx-simplex":
            from execbench.families.state import netsimplex

            yield from netsimplex.candidates()
        else:
            yield from _case_dirs(source)


#: The keys a state case.toml may have beyond the common ones (sources/cases.py checks them).
CASE_KEYS = {"short_input": cases.TEXT, "long_input": cases.TEXT, "compare": cases.TEXT, "pair": cases.TEXT,
             "checkpoint": cases.TABLE}


def _case_dirs(source: str) -> Iterator[Candidate]:
    name, dirs = cases.resolve_source("state", source)
    for directory, case in cases.load_cases(dirs, CASE_KEYS):
        try:
            if isinstance(case, SourceError):
                raise case
            payload = case_payload(case, name)
        except SourceError as exc:
            case_id = case.id if isinstance(case, cases.Case) else directory.name
            problem = exc.problem if isinstance(exc, cases.CaseError) else str(exc)
            error: SourceErrorPayload = {"error": problem, "case": case_id}
            yield Candidate(key=f"{name}/{case_id}", payload=dict(error))
            continue
        yield Candidate(key=f"{name}/{case.id}", payload=dict(payload))


def case_payload(case: cases.Case, source: str) -> StatePayload:
    config = case.config
    language = config["language"]
    if language not in ("python", "cpp"):
        raise cases.CaseError(case.directory / cases.CASE_FILE, f"language must be 'python' or 'cpp', not {language!r}")
    for key in ("short_input", "long_input"):
        if not isinstance(config.get(key), str):
            raise cases.CaseError(case.directory / cases.CASE_FILE, f"missing key {key!r} (a string naming a file)")
    checkpoint = config.get("checkpoint")
    if checkpoint is not None:
        checkpoint = _check_checkpoint(checkpoint, case)
    compare = config.get("compare", "tokens")
    if compare not in ("tokens", "bytes"):
        raise cases.CaseError(case.directory / cases.CASE_FILE, "compare must be 'tokens' or 'bytes'")
    payload: StatePayload = {
        "source": source,
        "case": case.id,
        "language": language,
        "program": case.read(config["source"]),
        "short": case.read(config["short_input"]),
        "long": case.read(config["long_input"]),
        "checkpoint": checkpoint,
        "topic": str(config.get("topic", source)),
        "compare": compare,
        "source_id": f"{source}/{case.id}",
        "files": {"source": config["source"], "short": config["short_input"], "long": config["long_input"]},
    }
    if language == "cpp":
        payload["toolchain"] = toolchain()
    facts = CaseProvenance()
    if isinstance(config.get("pair"), str):  # the same program in another language (paired corpus)
        facts["pair"] = config["pair"]
    if isinstance(config.get("license"), str):  # the program's license, for dataset cards
        facts["license"] = config["license"]
    if facts:
        payload["provenance"] = facts
    return payload


def _check_checkpoint(raw: Any, case: cases.Case) -> Checkpoint:
    where = case.directory / cases.CASE_FILE
    if not isinstance(raw, dict):
        raise cases.CaseError(where, "[checkpoint] must be a table")
    line, fields = raw.get("loop_line"), raw.get("fields")
    if not isinstance(line, int) or line < 1:
        raise cases.CaseError(where, "checkpoint.loop_line must be a positive integer")
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields) or not fields:
        raise cases.CaseError(where, "checkpoint.fields must be a non-empty list of names")
    iteration = raw.get("inside_iteration")
    if iteration is not None and (not isinstance(iteration, int) or iteration < 1):
        raise cases.CaseError(where, "checkpoint.inside_iteration must be a positive integer")
    core = raw.get("core", fields)
    if not isinstance(core, list) or not all(isinstance(c, str) for c in core) or not set(core) <= set(fields) \
            or not core:
        raise cases.CaseError(where, "checkpoint.core must be a non-empty subset of fields")
    known = ("loop_line", "fields", "inside_iteration", "core")
    for key in raw:
        if key not in known:
            raise cases.CaseError(where, unknown_key("key in [checkpoint]", key, known))
    return {"loop_line": line, "fields": list(fields), "inside_iteration": iteration, "core": list(core)}


# -- building -------------------------------------------------------------------------------
#
# A case is built by a generator (_python, _cpp): it yields the jobs of one step, {hash seed:
# jobs}, receives their results, {hash seed: {job id: result}}, and returns the case's result
# (or raises Reject). build_candidates steps the cases of a batch together: each step runs the
# jobs of all cases that share a hash seed (and preload) in one sandbox, each case in a group
# of its own (its own, emptied directory).

BATCH_SIZE = 16  # cases built together (families/build.py cuts smaller batches when there are few)
CPP_COST = 5.0   # a C++ case's build CPU over a Python case's (paired, idle: 4 g++ compiles, gcov; ~5-6x)


def candidate_cost(candidate: Candidate) -> float:
    """A case's relative build cost, for balancing the engine's batches (the C++ and Python
    cases of a source alternate: dealt out in turn, whole batches were one language and one
    worker ended 11 s after the other on paired, benchmarks/RESULTS.md)."""
    payload = candidate.payload
    return CPP_COST if isinstance(payload, dict) and payload.get("language") == "cpp" else 1.0


def build_candidate(candidate: Candidate, options: StateOptions) -> Outcome:
    return build_candidates([candidate], options)[0]


def build_candidates(candidates: list[Candidate], options: StateOptions) -> list[Outcome]:
    """Outcomes of ``candidates`` (in order), each what building it alone gives: a case's
    jobs run in a group of their own, and a job that kills the sandbox fails alone."""
    outcomes = [Outcome() for _ in candidates]
    # the payloads of case_payload() and netsimplex.candidates(), or a SourceErrorPayload
    payloads = [cast(StatePayload, candidate.payload) for candidate in candidates]
    settings = Settings.of(options)
    pending: dict[int, tuple[CaseRun, Step]] = {}
    compiler = next((p.get("toolchain") or "" for p in payloads if p.get("language") == "cpp"), "")

    def advance(i: int, run: CaseRun, results: Results | None) -> None:
        payload, key, outcome = payloads[i], candidates[i].key, outcomes[i]
        pending.pop(i, None)
        try:
            try:
                step = run.send(results) if results is not None else next(run)
            except StopIteration as done:
                outcome.tasks.extend(dict(task) for task in _tasks(payload, done.value, settings))
                return
            pending[i] = (run, step)
        except Reject as exc:
            outcome.reject(key, exc.stage, exc.reason, language=payload["language"], **exc.details)
        except (instrument_py.InstrumentError, instrument_cpp.InstrumentError) as exc:
            outcome.reject(key, "instrument", str(exc), language=payload["language"])
        except SourceError as exc:
            outcome.reject(key, "source", str(exc), language=payload["language"])

    for i, (candidate, payload) in enumerate(zip(candidates, payloads)):
        if "error" in candidate.payload:
            outcomes[i].reject(candidate.key, "source", cast(SourceErrorPayload, candidate.payload)["error"])
        else:
            advance(i, (_python if payload["language"] == "python" else _cpp)(payload, settings), None)
    while pending:
        sandboxes: dict[tuple[int, tuple[str, ...]], list[tuple[int, Job]]] = {}
        for i, (_, step) in sorted(pending.items()):
            for seed, jobs in step.items():
                key = (seed, tuple(payloads[i].get("preload", ())))
                sandboxes.setdefault(key, []).extend((i, job) for job in jobs)
        answers: dict[int, Results] = {i: {seed: {} for seed in step} for i, (_, step) in pending.items()}
        for (seed, preload), items in sandboxes.items():
            batch = [replace(job, id=f"{i}:{job.id}", group=str(i), needs=[f"{i}:{n}" for n in job.needs])
                     for i, job in items]
            batch, readable = pch.use(batch, compiler)   # g++ compiles with their precompiled headers
            results = state_jobs.run(batch, seed=seed, preload=preload, read_only_paths=readable)
            for (i, job), result in zip(items, results, strict=True):
                answers[i][seed][job.id] = result
        for i, answer in answers.items():
            advance(i, pending[i][0], answer)
    return outcomes


def _measure(settings: Settings, state: bool) -> Measure:
    """What a traced Python run measures (``_runner``'s ``measure`` argument)."""
    return {"state": state, "max_line_events": settings.max_line_events, "state_budget": settings.state_budget}


def _need(job: JobResult | None, what: str, *, stage: str = "execution") -> JobResult:
    if job is None:
        raise Reject(stage, f"{what}: the run did not happen")
    if job.limit is not None:
        raise Reject("caps", f"{what}: {job.reason()}", wall=job.wall, cpu=job.cpu, maxrss_kb=job.maxrss_kb)
    if not job.ok:
        raise Reject(stage, f"{what}: {job.reason()}")
    return job


def _decode(job: JobResult, what: str) -> str:
    try:
        return job.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise Reject("execution", f"{what}: output is not UTF-8") from None


def _same(values: list[str], what: str) -> str:
    if any(v != values[0] for v in values[1:]):
        raise Reject("determinism", f"{what} differs across {len(values)} runs")
    return values[0]


def _state_from(text: str, clean: str, what: str) -> tuple[JSONObject, str]:
    """(state object, canonical line) from an instrumented run's stdout, checking that the
    output before the state line is a prefix of the clean program's output."""
    if not text.endswith("\n"):
        raise Reject("checkpoint", f"{what}: the checkpoint did not fire (no state line at the end of the output)")
    body = text[:-1]
    cut = body.rfind("\n")
    prefix, line = (body[: cut + 1], body[cut + 1:]) if cut >= 0 else ("", body)
    if not clean.startswith(prefix):
        raise Reject("checkpoint", f"{what}: output before the checkpoint is not a prefix of the clean output")
    if not line.startswith("{") or not depth_ok(line):
        raise Reject("checkpoint", f"{what}: the checkpoint did not fire (last line is not a state object)")
    try:
        value = json.loads(line)
    except ValueError:
        raise Reject("checkpoint", f"{what}: the state line is not JSON") from None
    if not isinstance(value, dict):
        raise Reject("checkpoint", f"{what}: the state is not an object")
    return value, line


def _check_stderr(arm: list[JobResult], clean: JobResult, what: str) -> None:
    """Beyond stdout: what an instrumented run wrote to stderr up to its checkpoint must be a
    prefix of what the clean long run wrote (warnings, tracebacks it printed, with the clean
    line numbers); compared when neither was cut to its tail."""
    whole = [job.stderr for job in [*arm, clean] if len(job.stderr.encode()) < STDERR_TAIL]
    if len(whole) == len(arm) + 1 and not all(clean.stderr.startswith(text) for text in whole[:-1]):
        raise Reject("checkpoint", f"{what}: error output before the checkpoint is not a prefix of the clean run's")


def _check_states(inside: JSONObject, post: JSONObject, fields: list[str], core: list[str]) -> None:
    if set(inside) != set(fields) or set(post) != set(fields):
        raise Reject("checkpoint", "the states do not hold exactly the projected fields")
    for name in fields:
        if json_type(inside[name]) != json_type(post[name]):
            raise Reject("checkpoint", f"field {name!r} changes type between checkpoints "
                                       f"({json_type(inside[name])} -> {json_type(post[name])})")
    if all(dumps(inside[name]) == dumps(post[name]) for name in core):
        raise Reject("checkpoint", "no core field changes between the inside and post checkpoints")


def _check_order(short: list[int], long: list[int], ratio: float, unit: str) -> None:
    if not short or not long:
        raise Reject("trace-order", "trace lengths were not measured")
    if not all(ratio * s < l_ for s in short for l_ in long):
        raise Reject("trace-order", f"not short << long: {unit} short {short}, long {long} "
                                    f"(need long > {ratio:g} x short in every measurement)")


# -- Python -------------------------------------------------------------------------------

def _python_jobs(seed: int, payload: StatePayload, inside_src: str, post_src: str, settings: Settings) -> list[Job]:
    """The runs of one hash seed: clean short/long and both instrumented programs natively,
    clean short/long traced (seed 0: also the instrumented ones, all with the state meter)."""
    program, short, long = payload["program"], payload["short"], payload["long"]
    native, traced = settings.native_limits(), settings.traced_limits()
    measure = _measure(settings, seed == 0)
    # the instrumented programs run as main.py, the clean program on disk, under its line numbers
    inside: Instrumented = {"text": inside_src, "lines": instrument_py.executed_lines(program, inside_src)}
    post: Instrumented = {"text": post_src, "lines": instrument_py.executed_lines(program, post_src)}
    jobs = [
        python_job("short", "main.py", program, short, **native),
        python_job("long", "main.py", program, long, **native),
        python_job("inside", "main.py", program, long, needs=["long"], instrumented=inside, **native),
        python_job("post", "main.py", program, long, needs=["long"], instrumented=post, **native),
        python_job("t_short", "main.py", program, short, needs=["short"], measure=measure, **traced),
        python_job("t_long", "main.py", program, long, needs=["long"], measure=measure, **traced),
    ]
    if seed == 0:
        jobs += [python_job("t_inside", "main.py", program, long, needs=["inside"], measure=measure,
                            instrumented=inside, **traced),
                 python_job("t_post", "main.py", program, long, needs=["post"], measure=measure,
                            instrumented=post, **traced)]
    return jobs


def _instrumented(program: str, line: int, fields: list[str], k: int) -> tuple[str, str]:
    return (instrument_py.instrument(program, line, fields, "inside", k),
            instrument_py.instrument(program, line, fields, "post", k))


def _python(payload: StatePayload, settings: Settings) -> CaseRun:
    program = payload["program"]
    checkpoint = payload.get("checkpoint")
    checks = settings.check_runs()  # the check runs' hash seeds (the key run's is 0)
    ahead: Results = {}  # runs made before the count was known (see _declared_python)
    guessed: tuple[str, str] | None = None
    if checkpoint is None:
        choice = yield from choose.choose_python(program, payload["long"], settings)
    elif checkpoint["inside_iteration"] is None:
        choice, guessed, ahead = yield from _declared_python(payload, checkpoint, checks, settings)
    else:
        choice = Choice("case", checkpoint["loop_line"], checkpoint["fields"], checkpoint["inside_iteration"],
                        checkpoint["core"])
    core = choice.core or choice.fields
    inside_src, post_src = guessed if guessed is not None and ahead else \
        _instrumented(program, choice.loop_line, choice.fields, choice.inside_iteration)
    runs: dict[str, list[JobResult]] = {name: [] for name in
                                        ("short", "long", "inside", "post", "t_short", "t_long")}
    metrics_jobs: dict[str, JobResult] = {}
    # a hash-order suspect gets extra check runs (contract/hashorder.py; issue 33): their
    # outputs and states must agree too, the records are the base runs' (the same in every build)
    extras = settings.extra_runs() if hashorder.may_see_hash_order(program) else []
    # hash seed 0 first (its checks can fail the case early), then the other seeds together
    for seeds in ([0], checks, extras):
        if not seeds:
            continue
        if all(seed in ahead for seed in seeds):
            results = ahead
        else:
            results = yield {seed: _python_jobs(seed, payload, inside_src, post_src, settings) for seed in seeds}
        for seed in seeds:
            for name in runs:
                runs[name].append(_need(results[seed].get(name), f"{name} run (hash seed {seed})"))
            if seed == 0:
                for name in ("t_short", "t_long", "t_inside", "t_post"):
                    metrics_jobs[name] = _need(results[seed].get(name), f"{name} traced run")
                _fail_fast(runs, choice, core, settings)
    for name in ("t_short", "t_long"):
        for job in runs[name]:
            measured = state_jobs.metrics(job)
            if measured.get("status") != "ok":
                raise Reject("caps", f"{name}: tracing stopped: {measured.get('too_large', 'no metrics')}")
    for job in metrics_jobs.values():
        measured = state_jobs.metrics(job)
        if measured.get("status") != "ok":
            raise Reject("caps", f"tracing stopped: {measured.get('too_large', 'no metrics')}")
    base = 1 + len(checks)
    trace = {"short": [state_jobs.metrics(j)["opcodes"] for j in runs["t_short"][:base]],
             "long": [state_jobs.metrics(j)["opcodes"] for j in runs["t_long"][:base]]}
    metrics = {arm: _py_metrics(metrics_jobs[name]) for arm, name in
               zip(ARMS, ("t_short", "t_long", "t_inside", "t_post"))}
    return _finish(runs, choice, core, inside_src, post_src, trace, metrics, "opcodes", settings)


def _declared_python(payload: StatePayload, checkpoint: Checkpoint, checks: list[int], settings: Settings
                     ) -> Generator[Step, Results, tuple[Choice, tuple[str, str] | None, Results]]:
    """A declared loop without its iteration: count the loop's iterations on the long input
    (K = the middle one). Returns the choice, and the instrumented programs with the runs
    made with them when the count confirmed a guess (else None, {})."""
    program, line = payload["program"], checkpoint["loop_line"]
    ahead: Results = {}
    count = choose.count_job(program, payload["long"], line, settings)
    band = payload.get("band")
    guess = band["pivots"] if band else None
    try:
        guessed = _instrumented(program, line, checkpoint["fields"], guess // 2 + 1) if guess else None
    except (instrument_py.InstrumentError, SourceError):
        guessed = None   # the error comes after the count's checks: take the plain path
    if guessed is not None:
        # networkx-simplex: the selection counted this loop already, so every seed's runs
        # go with the count (one step, no sandbox of its own); they are the runs the
        # count calls for when it confirms the selection's figure, else they are dropped
        ahead = yield {0: [count, *_python_jobs(0, payload, *guessed, settings)],
                       **{seed: _python_jobs(seed, payload, *guessed, settings) for seed in checks}}
        total = choose.count_of(ahead[0].get("profile"))
        if total != guess:
            ahead = {}
    else:
        total = choose.count_of((yield {0: [count]})[0].get("profile"))
    if total < 1:
        raise Reject("checkpoint", f"the loop on line {line} never iterates on the long input")
    if band and not band["range"][0] <= total < band["range"][1]:
        raise Reject("selection", f"{total} pivot-loop iterations: outside the case's band "
                                  f"{band['name']} {band['range']} (selected with {band['pivots']})")
    choice = Choice("case", line, checkpoint["fields"], total // 2 + 1, checkpoint["core"], loop_iterations=total)
    return choice, guessed, ahead


def _fail_fast(runs: dict[str, list[JobResult]], choice: Choice, core: list[str], settings: Settings) -> None:
    """The checks that one run can already fail, before the other hash seeds are run."""
    long_out = _decode(runs["long"][0], "long run")
    inside, _ = _state_from(_decode(runs["inside"][0], "inside run"), long_out, "inside checkpoint")
    post, _ = _state_from(_decode(runs["post"][0], "post run"), long_out, "post checkpoint")
    _check_states(inside, post, choice.fields, core)
    short, long = state_jobs.metrics(runs["t_short"][0]), state_jobs.metrics(runs["t_long"][0])
    if short.get("status") == "ok" and long.get("status") == "ok":
        _check_order([short["opcodes"]], [long["opcodes"]], settings.min_trace_ratio, "opcodes")


def _py_metrics(job: JobResult) -> ArmMetrics:
    raw = state_jobs.metrics(job)
    return {"trace_length": raw["opcodes"], "line_events": raw["line_events"], "peak_state": raw["peak_state"],
            "state_load": raw["state_load"], "state_stride": raw["state_stride"]}


def _finish(runs: dict[str, list[JobResult]], choice: Choice, core: list[str], inside_src: str,
            post_src: str, trace: dict[str, list[int]], metrics: dict[str, ArmMetrics], unit: str,
            settings: Settings) -> CaseResult:
    short_out = _same([_decode(j, "short run") for j in runs["short"]], "short output")
    long_out = _same([_decode(j, "long run") for j in runs["long"]], "long output")
    inside_text = _same([_decode(j, "inside run") for j in runs["inside"]], "inside-checkpoint output")
    post_text = _same([_decode(j, "post run") for j in runs["post"]], "post-checkpoint output")
    inside, inside_line = _state_from(inside_text, long_out, "inside checkpoint")
    post, post_line = _state_from(post_text, long_out, "post checkpoint")
    for label in ("inside", "post"):
        _check_stderr(runs[label], runs["long"][0], f"{label} checkpoint")
    _check_states(inside, post, choice.fields, core)
    _check_order(trace["short"], trace["long"], settings.min_trace_ratio, unit)
    return CaseResult(short_output=short_out, long_output=long_out, inside_state=inside, post_state=post,
                      inside_line=inside_line, post_line=post_line, inside_program=inside_src,
                      post_program=post_src, choice=choice, trace=trace, metrics=metrics, unit=unit)


# -- C++ ---------------------------------------------------------------------------------------

# gcov's counts are read for main.cpp only, so only main.cpp's functions are instrumented
# (g++ >= 9): the standard library's template instantiations compile without counters
# (~20 % of an instrumented -O0 compile) and main.cpp's counts are the same. A measurement
# flag like the precompiled headers' (.pch), so the records' ``compile`` does not name it.
COVERAGE_FILTER = r"-fprofile-filter-files=(^|/)main\.cpp$"


def _coverage_flags(toolchain: str) -> list[str]:
    """``--coverage``, plus :data:`COVERAGE_FILTER` when ``toolchain`` (``g++ --version``'s
    first line) is g++ 9 or later."""
    version = re.search(r"(\d+)\.\d+(?:\.\d+)?\s*$", toolchain)
    return ["--coverage", *([COVERAGE_FILTER] if version and int(version.group(1)) >= 9 else [])]


# gcov's counters are the trace length: a program must not drive libgcov (issue 33). Its API is
# linked to abort() (a call at run time kills the run: the case is rejected), and the linker
# reports (-y) every object that references it or libgcov's internals; the instrumented object
# itself references only __gcov_init, __gcov_exit and __gcov_merge_*, so any report is the
# program's (:func:`_compiled` rejects it as tampering).
GCOV_API = ("__gcov_reset", "__gcov_dump")
GCOV_INTERNALS = ("__gcov_reset_int", "__gcov_dump_int", "__gcov_flush", "__gcov_root", "__gcov_master",
                  "__gcov_lock", "__gcov_unlock", "__gcov_dump_one", "__gcov_info_to_gcda",
                  "__gcov_filename_to_gcfn", "__gcov_fork", "__gcov_execl", "__gcov_execv", "__gcov_execve",
                  "__gcov_kvp_dynamic_pool", "__gcov_kvp_dynamic_pool_index", "__gcov_kvp_dynamic_pool_size")
GCOV_GUARD = [*(f"-Wl,--defsym={name}=abort" for name in GCOV_API),
              "-Wl," + ",".join(f"-y,{name}" for name in GCOV_API + GCOV_INTERNALS)]


def _compile_job(name: str, directory: str, source: str, settings: Settings, coverage: bool = True,
                 needs: Sequence[str] = (), toolchain: str = "") -> Job:
    t = settings.compile_time_limit
    argv = ["g++", f"-std={settings.cpp_std}", "-O0", *(_coverage_flags(toolchain) + GCOV_GUARD if coverage else []),
            "-o", "prog", "main.cpp"]
    return exec_job(name, argv, cwd=directory, files={f"{directory}/main.cpp": source}, cpu=t, wall=t,
                    memory_mb=4096, max_output=1 << 16, needs=needs, keep=["prog", "prog-main.gcno"])


def _cpp_run_jobs(label: str, binary_dir: str, stdin: str, count: int, settings: Settings,
                  needs: list[str]) -> list[Job]:
    jobs = []
    for r in range(count):
        cwd = f"runs/{label}{r}"
        jobs.append(exec_job(f"{label}{r}", [f"../../{binary_dir}/prog"], cwd=cwd, stdin=stdin,
                             env={"GCOV_PREFIX": "{cwd}", "GCOV_PREFIX_STRIP": "64"}, needs=needs,
                             fresh=True, **settings.native_limits()))
        # -r (--relative-only): only main.cpp's entry, not the standard headers' (~200 KB of JSON)
        jobs.append(exec_job(f"gcov_{label}{r}", ["sh", "-c", f"cp ../../{binary_dir}/prog-main.gcno . && "
                                                             "exec gcov --json-format --stdout -r prog-main.gcda"],
                             cwd=cwd, needs=[f"{label}{r}"], cpu=60, wall=60, memory_mb=2048, max_output=1 << 26))
    return jobs


def gcov_lines(job: JobResult, source_name: str = "main.cpp") -> int:
    """Sum of line-execution counts of ``source_name`` in gcov's JSON (headers filtered).
    The JSON is read bounded: gcov read a data file the program could have written."""
    try:
        data = records.load_json(job.stdout, max_bytes=len(job.stdout))
        total, mains = 0, []
        for entry in data.get("files", []):
            if entry.get("file") == source_name:
                total += sum(int(line.get("count", 0)) for line in entry.get("lines", []))
                mains += [f.get("execution_count") for f in entry.get("functions", []) if f.get("name") == "main"]
    except (records.RecordError, AttributeError, TypeError, ValueError) as exc:
        raise Reject("execution", f"unreadable gcov output: {str(exc)[:200]}") from None
    if mains != [1]:  # each dump of the counters adds main's entry again (issue 33)
        raise Reject("tampering", f"gcov counted main {mains or 'no'} times in one run: the counters were "
                                  "dumped more than once, or the data file is not the run's own")
    return total


def _compiled(results: dict[str, JobResult], name: str, what: str) -> None:
    job = results.get(name)
    if job is None or not job.ok:
        detail = (job.stderr if job else "").strip()
        errors = [ln for ln in detail.splitlines() if "error" in ln] or detail.splitlines()[-1:] or [""]
        raise Reject("compile", f"{what} does not compile: {errors[0][:300]}")
    used = sorted({m.group(2) for m in re.finditer(r"^(?:\S*ld: )?(.+?): reference to (__gcov\w+)$", job.stderr, re.M)
                   if "libgcov" not in m.group(1)})
    if used:
        raise Reject("tampering", f"{what} references libgcov ({', '.join(used)[:200]}): its counters are "
                                  "the trace length")


def _cpp(payload: StatePayload, settings: Settings) -> CaseRun:
    if not payload.get("toolchain"):
        raise Reject("compile", "g++ is not available")
    program = payload["program"]
    checkpoint = payload["checkpoint"]
    repeats = settings.repeats
    sources: dict[str, str] = {}
    loops: list[CppLoop] = []
    if checkpoint is None:  # automatic choice: the loops it can choose from
        loops = cpp_programs.loops(program)
        if not loops:
            raise Reject("instrument", "the program has no instrumentable for/while loop (braced body)")
    meter = _Meter(payload, settings, loops or None)
    jobs = [_compile_job("cc_clean", "clean", program, settings, toolchain=payload["toolchain"]), *meter.jobs()]
    k = checkpoint.get("inside_iteration") if checkpoint is not None else None
    if checkpoint is not None and k is not None:
        jobs += _cpp_state_jobs(sources, payload, checkpoint["loop_line"], checkpoint["fields"], k, settings)
        jobs += meter.arm_jobs(checkpoint["loop_line"], k, first_step=True)
    elif checkpoint is not None:
        instrument_cpp.probe(program, checkpoint["loop_line"])   # refuses what it refuses before any run
    jobs += _cpp_run_jobs("short", "clean", payload["short"], repeats, settings, ["cc_clean"])
    jobs += _cpp_run_jobs("long", "clean", payload["long"], repeats, settings, ["cc_clean"])
    results = (yield {0: jobs})[0]
    _compiled(results, "cc_clean", "the program")
    meter.take(results)
    if checkpoint is None:
        counts = meter.profile(results, repeats)
        snapshot_job = meter.snapshot_job if counts is not None else None   # the meter is the snapshot copy too
        if counts is None:  # the meter could not count: a profile copy of its own
            loops, profile = choose_cpp.profile_jobs(program, payload["long"], settings)
            results.update((yield {0: profile})[0])
            counts = choose_cpp.profile_counts(results, loops)
        choice = yield from choose_cpp.choose_cpp(program, payload["long"], loops, *counts, settings, snapshot_job)
    elif k is None:
        total = yield from _cpp_iterations(payload, checkpoint["loop_line"], meter, results, settings)
        choice = Choice("case", checkpoint["loop_line"], checkpoint["fields"], total // 2 + 1, checkpoint["core"],
                        loop_iterations=total)
    else:
        choice = Choice("case", checkpoint["loop_line"], checkpoint["fields"], k, checkpoint["core"])
    k = choice.inside_iteration
    if "cc_inside" not in results:   # the state arms' step, now that K is known
        line, fields = choice.loop_line, choice.fields
        results.update((yield {0: [*_cpp_state_jobs(sources, payload, line, fields, k, settings, after_clean=False),
                                   *meter.arm_jobs(line, k)]})[0])
    core = choice.core or choice.fields
    _compiled(results, "cc_inside", "the inside-instrumented program")
    _compiled(results, "cc_post", "the post-instrumented program")
    runs: dict[str, list[JobResult]] = {}
    for label in ("short", "long", "inside", "post"):
        runs[label] = [_need(results.get(f"{label}{r}"), f"{label} run {r}") for r in range(repeats)]
    gcov = {label: [gcov_lines(_need(results.get(f"gcov_{label}{r}"), f"gcov of {label} run {r}"))
                    for r in range(repeats)] for label in ("short", "long", "inside", "post")}
    trace = {"short": gcov["short"], "long": gcov["long"]}
    state, meter_error = meter.metrics(results, runs)
    metrics = {arm: _cpp_metrics(gcov[label][0], (state or {}).get(label))
               for arm, label in zip(ARMS, ("short", "long", "inside", "post"))}
    result = _finish(runs, choice, core, sources["inside"], sources["post"], trace, metrics,
                     "gcov line executions", settings)
    return replace(result, meter_error=meter_error) if meter_error else result


def _cpp_metrics(trace_length: int, state: MeterCounts | None) -> ArmMetrics:
    """An arm's metrics: the gcov trace length and the state meter's counts (null without them)."""
    return {"trace_length": trace_length, "line_events": state["line_events"] if state else None,
            "peak_state": state["peak_state"] if state else None, "state_load": state["state_load"] if state else None,
            "state_stride": state["state_stride"] if state else None}


def _cpp_iterations(payload: StatePayload, line: int, meter: _Meter, results: dict[str, JobResult],
                    settings: Settings) -> Generator[Step, Results, int]:
    """Iterations of the declared loop on the long input: the meter's count, else (a step of
    its own) a probe copy's, with the probe's checks."""
    counts = meter.profile(results, settings.repeats)
    j = cpp_programs.loop_index(meter.counted, line)
    if counts is not None and j is not None:
        total = counts[0][j]
    else:
        probe = yield {0: [_compile_job("cc_probe", "probe", instrument_cpp.probe(payload["program"], line), settings,
                                        coverage=False),
                           exec_job("probe", ["./prog"], cwd="probe", stdin=payload["long"], needs=["cc_probe"],
                                    collect=["checkpoint_probe.txt"], **settings.native_limits())]}
        _compiled(probe[0], "cc_probe", "the loop probe")
        job = _need(probe[0].get("probe"), "probe run")
        try:
            total = int(job.files.get("checkpoint_probe.txt", b"").decode("utf-8", "replace").strip())
        except ValueError:
            raise Reject("checkpoint", "the loop probe wrote no iteration count") from None
    if total < 1:
        raise Reject("checkpoint", f"the loop on line {line} never iterates on the long input")
    return total


METER_METRICS = ("line_events", "peak_state", "state_load", "state_stride")


class MeterCounts(TypedDict):
    """What the C++ state meter measured on one run (cpp_programs.METER_FILE)."""

    line_events: int
    peak_state: int
    state_load: int
    state_stride: int
MAX_BINARY = 64 << 20  # the meter's compiled program, carried to the state arms' step


class _Meter:
    """The C++ state meter of a case (:func:`cpp_programs.metered`): compiled in the first
    step with the clean program and run clean on both inputs (the long run is also the loop
    profile), then run on the long input for each state arm, in that step's sandbox (its
    compiled program carried over as a file). A measurement: when it cannot be made or
    run, the metrics are null (``error`` says why) and the case is not rejected."""

    def __init__(self, payload: StatePayload, settings: Settings, counted: list[CppLoop] | None) -> None:
        self.payload, self.settings = payload, settings
        self.binary: bytes | None = None
        self.error: str | None = None
        self.keys: dict[str, str] = {}  # per meter job: the key its measurement must carry
        self.limits = settings.traced_limits()
        try:
            self.counted = counted if counted is not None else cpp_programs.loops(payload["program"])
            snapshots = max(4000, settings.max_field_chars) if payload["checkpoint"] is None else None
            self.snapshots = snapshots is not None   # also the automatic choice's snapshot copy
            self.source: str | None = cpp_programs.metered(payload["program"], settings.state_budget, self.counted,
                                                           snapshots)
        except (instrument_cpp.InstrumentError, SourceError):
            self.counted, self.source = [], None
            self.error = "the state meter could not be made from this source"

    def jobs(self) -> list[Job]:
        """The first step's: compile (keeping the program), the clean runs on both inputs."""
        if self.source is None:
            return []
        compiled = _compile_job("cc_meter", "meter", self.source, self.settings, coverage=False, needs=["cc_clean"])
        return [replace(compiled, collect=["prog"], max_collect=MAX_BINARY),
                self._run("short", "clean", self.payload["short"]), self._run("long", "clean", self.payload["long"])]

    def _run(self, label: str, arm: str, stdin: str, selection: dict[str, str] | None = None) -> Job:
        self.keys[f"meter_{label}"] = secrets.token_hex(16)  # the measurement must carry it (_file)
        env = {cpp_programs.ARM_VARIABLE: arm, "EXECBENCH_METER_KEY": self.keys[f"meter_{label}"], **(selection or {})}
        job = exec_job(f"meter_{label}", ["../../meter/prog"], cwd=f"meter_runs/{label}", stdin=stdin, env=env,
                       needs=[] if self.binary else ["cc_meter"], collect=[cpp_programs.METER_FILE], **self.limits)
        job = replace(job, max_collect=1 << 20)
        if self.binary:   # a later step: this job writes the compiled meter first
            job = replace(job, files={"meter/prog": self.binary}, executable=["meter/prog"])
        return job

    def snapshot_job(self, selection: str) -> Job | None:
        """The automatic choice's snapshot run (``selection``: ``EXECBENCH_SNAPSHOT``, see
        :func:`cpp_programs.metered`) by the compiled meter, in a later step; None without it."""
        if not self.snapshots or self.binary is None:
            return None
        env = {cpp_programs.ARM_VARIABLE: "clean", cpp_programs.SNAPSHOT_VARIABLE: selection}
        job = exec_job("snapshot", ["../../meter/prog"], cwd="meter_runs/snapshot", stdin=self.payload["long"], env=env,
                       collect=[cpp_programs.SNAPSHOT_FILE], **self.settings.profile_limits())
        return replace(job, files={"meter/prog": self.binary}, executable=["meter/prog"], max_collect=1 << 22)

    def arm_jobs(self, line: int, k: int, *, first_step: bool = False) -> list[Job]:
        """The inside and post runs (the checkpoint's loop chosen at run time), in the first
        step (after the meter's compile) or in a later one (with its compiled program)."""
        j = cpp_programs.loop_index(self.counted, line)
        if self.source is None or (not first_step and self.binary is None):
            return []
        if j is None:
            self.error = self.error or f"the state meter does not count the loop on line {line}"
            return []
        selection = {"EXECBENCH_STATE_LOOP": str(j), "EXECBENCH_STATE_K": str(k)}
        return [self._run(label, label, self.payload["long"], selection) for label in ("inside", "post")]

    def take(self, results: dict[str, JobResult]) -> None:
        """Keep the compiled meter of the first step's ``results`` for a later step."""
        compiled = results.get("cc_meter")
        if compiled is not None and compiled.ok:
            self.binary = compiled.files.get("prog") or None

    def _file(self, job: JobResult | None) -> Any:
        """What the meter wrote in ``job`` (its values checked by the callers). A finished run
        whose measurement is missing, is not one JSON object or does not carry the run's key
        was written (or blocked) by the program: the case is rejected as tampering."""
        if job is None:
            return None
        raw = job.files.get(cpp_programs.METER_FILE)
        name = job.id.rsplit(":", 1)[-1]   # the step's results are "<seed>:<job id>"
        if job.ok and self.keys.get(name) is not None:
            try:
                value = records.load_json(raw or b"", max_bytes=1 << 20)
            except records.RecordError:
                value = None
            if not isinstance(value, dict) or value.get("key") != self.keys[name]:
                found = "missing" if raw is None else "not the meter's"
                raise Reject("tampering", f"state meter, {name.removeprefix('meter_')} run: its measurement "
                                          f"is {found} (the program wrote or blocked {cpp_programs.METER_FILE})")
            return value
        return records.load_json(raw or b"", max_bytes=1 << 20)

    def profile(self, results: dict[str, JobResult], repeats: int) -> tuple[list[int], list[int]] | None:
        """(iterations, count at the last exit) of each counted loop from the clean long run,
        when it ran as the clean program's own runs did (else None)."""
        job = results.get("meter_long")
        if job is None or not job.ok or not all(_ok(results.get(f"long{r}")) for r in range(repeats)):
            return None
        if job.stdout != results["long0"].stdout:
            return None
        try:
            data = self._file(job)
            counts, last_exit = data["counts"], data["last_exit"]
            return choose._ints(counts, len(self.counted)), choose._ints(last_exit, len(self.counted))
        except (records.RecordError, KeyError, TypeError):
            return None
        except Reject as exc:
            if exc.stage == "tampering":
                raise
            return None

    def metrics(self, results: dict[str, JobResult], runs: dict[str, list[JobResult]]
                ) -> tuple[dict[str, MeterCounts] | None, str | None]:
        """The four arms' state metrics, or (None, why not); each meter run's output must be
        its arm's (for a state arm: the output before the state line)."""
        if self.source is None:
            return None, self.error
        compiled = results.get("cc_meter")
        if compiled is None or not compiled.ok:
            lines = compiled.stderr.strip().splitlines() if compiled else []
            errors = [ln for ln in lines if "error" in ln] or lines[-1:] or [""]
            return None, f"the state meter does not compile: {errors[0][:300]}"
        out: dict[str, MeterCounts] = {}
        for label in ("short", "long", "inside", "post"):
            job = results.get(f"meter_{label}")
            if job is None and self.error:
                return None, self.error
            if job is None or not job.ok:
                return None, f"state meter, {label} run: {job.reason() if job else 'did not happen'}"
            expected = runs[label][0].stdout
            if label in ("inside", "post"):   # the arm's output without its state line
                expected = expected[:expected.rfind(b"\n", 0, len(expected) - 1) + 1]
            if job.stdout != expected:
                return None, f"state meter, {label} run: its output differs from the arm's own run"
            try:
                value = self._file(job)
                out[label] = {"line_events": value["line_events"], "peak_state": value["peak_state"],
                              "state_load": value["state_load"], "state_stride": value["state_stride"]}
                if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in out[label].values()):
                    raise ValueError("not counts")
            except (records.RecordError, KeyError, TypeError, ValueError):
                return None, f"state meter, {label} run: no readable measurement"
        return out, None


def _ok(job: JobResult | None) -> bool:
    return job is not None and job.ok


def _cpp_state_jobs(sources: dict[str, str], payload: StatePayload, line: int, fields: list[str], k: int,
                    settings: Settings, after_clean: bool = True) -> list[Job]:
    """Compile, run and gcov the inside and post programs (``sources`` gets their text)."""
    program = payload["program"]
    sources["inside"] = instrument_cpp.instrument(program, line, fields, "inside", k)
    sources["post"] = instrument_cpp.instrument(program, line, fields, "post", k)
    # compiled: the same text with #line directives, so the program sees the clean lines
    compiled = {arm: instrument_cpp.instrument(program, line, fields, arm, k, line_directives=True)
                for arm in ("inside", "post")}
    repeats = settings.repeats
    needs = ["cc_clean"] if after_clean else []
    return [_compile_job("cc_inside", "inside", compiled["inside"], settings, needs=needs, toolchain=payload["toolchain"]),
            _compile_job("cc_post", "post", compiled["post"], settings, needs=needs, toolchain=payload["toolchain"]),
            *_cpp_run_jobs("inside", "inside", payload["long"], repeats, settings, ["cc_inside"]),
            *_cpp_run_jobs("post", "post", payload["long"], repeats, settings, ["cc_post"])]


# the checkpoint's iteration in an instrumented program; the complexity does not depend on
# the number, so it is measured with 1 there (one measurement for all networkx-simplex cases)
_ONE = re.compile(r"((?:_checkpoint_count|execbench_checkpoint_count) (?:==|>=) )\d+")


@lru_cache(maxsize=256)
def cyclomatic(source: str, language: str) -> Any:
    """:func:`execbench.static.cyclomatic`, once per text (a case's clean program is shown
    in two arms; networkx-simplex shows one program in all 30 cases). Imported here, not at
    the top: every sandbox of the state family imports this module (through the package of
    its job handler), and lizard takes ~25 ms to import."""
    from execbench.static import cyclomatic as measure

    return measure(source, language)


# -- tasks ------------------------------------------------------------------------------------

def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _tasks(payload: StatePayload, result: CaseResult, settings: Settings) -> list[StateTask]:
    from execbench import static

    language = payload["language"]
    program = payload["program"]
    clean_cc = cyclomatic(program, language)
    compare = settings.final_compare if settings.final_compare != "auto" else payload.get("compare", "tokens")
    if compare not in ("tokens", "bytes"):
        raise Reject("source", f"final_compare must be tokens, bytes or auto, not {compare!r}")
    choice = result.choice
    common: CommonProvenance = {
        "case_source": payload["source"],
        "case": payload["case"],
        "topic": payload.get("topic"),
        "program_sha256": _sha(program),
        "short_input_sha256": _sha(payload["short"]),
        "long_input_sha256": _sha(payload["long"]),
        "checkpoint": choice.record(),
        "trace_unit": result.unit,
        "trace_lengths": result.trace,
        "repeats": settings.repeats,  # runs that agreed: the key run, then the build's check runs
        # only the key run's seed (C++: None, no hash seed): the check seeds are drawn per build
        # (the manifest's settings.hash_seeds), and records must not vary per build
        "key_hash_seed": hashseeds.KEY_SEED if language == "python" else None,
        "instrumentation_version": INSTRUMENTATION_VERSION,
    }
    if language == "cpp":
        common["toolchain"] = payload.get("toolchain", "")
        common["compile"] = f"g++ -std={settings.cpp_std} -O0 --coverage"
    common.update(payload.get("provenance", {}))
    if result.meter_error:
        common["state_meter"] = result.meter_error
    arms: dict[str, tuple[str, str, str | JSONObject, str, str | None]] = {
        "short-trace-final": (program, payload["short"], result.short_output, "text", None),
        "long-trace-final": (program, payload["long"], result.long_output, "text", None),
        "inside-loop-state": (result.inside_program, payload["long"], result.inside_state, "json", result.inside_line),
        "post-loop-state": (result.post_program, payload["long"], result.post_state, "json", result.post_line),
    }
    tasks: list[StateTask] = []
    for arm, (shown, stdin, answer, kind, state_line) in arms.items():
        metrics: StateMetrics = {
            "cyclomatic": clean_cc.total,
            "cyclomatic_max": clean_cc.max_function,
            "cyclomatic_shown": cyclomatic(_ONE.sub(r"\g<1>1", shown), language).total,
            "loc": static.loc(program),
            "input_bytes": len(stdin.encode()),
            "answer_chars": len(answer) if isinstance(answer, str) else len(dumps(answer)),
            "answer_leaves": None if isinstance(answer, str) else leaves(answer),
            "loop_iterations": choice.loop_iterations,
            "inside_iteration": choice.inside_iteration,
            **result.metrics[arm],
        }
        provenance: StateProvenance = {**common, "compare": compare if kind == "text" else "json-structural",
                                       "shown_sha256": _sha(shown)}
        if state_line is not None:
            provenance["state_line"] = state_line
        tasks.append({
            "id": make_id("state", payload["source"], payload["case"], arm),
            "family": "state",
            "arm": arm,
            "source_id": payload["source_id"],
            "language": language,
            "prompt_fields": {"program": shown, "input": stdin, "language": language},
            "answer": answer,
            "answer_kind": kind,
            "metrics": metrics,
            "provenance": provenance,
        })
    return tasks
