"""Building a C++ case: compile with coverage in the sandbox, run the arms, read gcov's counts,
meter the state.

The C++ half of :mod:`.build` (its docstring: compile flags, precompiled headers, the gcov trace
length, the C++ state meter). Split out of it.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import replace
from typing import Any, Generator, Sequence, TypedDict

from execbench.contract import Reject, SourceError
from execbench.families.state import choose, choose_cpp, cpp_programs, instrument_cpp
from execbench.families.state.cpp_scan import CppLoop
from execbench.families.state.jobs import exec_job
from execbench.families.state.admission import _finish, _need
from execbench.families.state.records import ARMS, ArmMetrics, CaseRun, Choice, Results, Settings, StatePayload, Step
from execbench.sandbox import records
from execbench.sandbox.jobs import Job, JobResult


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
