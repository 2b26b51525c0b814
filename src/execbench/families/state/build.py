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
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, Generator, Iterator, cast

from execbench.dataset import make_id
from execbench.contract import Candidate, Outcome, Reject, SourceError, hashorder, hashseeds
from execbench.contract.jsontypes import JSONObject
from execbench.families.state import choose, instrument_cpp, instrument_py, pch
from execbench.families.state import jobs as state_jobs
from execbench.families.state.admission import _check_order, _check_states, _decode, _finish, _need, _state_from
from execbench.families.state.canonical import dumps, leaves
from execbench.families.state.cpp_build import _cpp
from execbench.families.state.jobs import python_job, toolchain
from execbench.families.state.records import (ARMS, ArmMetrics, CaseProvenance, CaseResult, CaseRun, Checkpoint, Choice,
                                              CommonProvenance, Instrumented, Measure, Results, Settings,
                                              SourceErrorPayload, StateMetrics, StateOptions, StatePayload,
                                              StateProvenance, StateTask, Step)
from execbench.sandbox.jobs import Job, JobResult
from execbench.sources import cases
from execbench.usererror import unknown as unknown_key

INSTRUMENTATION_VERSION = "1"

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
