"""Automatic loop and projection choice for C++ cases without ``[checkpoint]``: the rule
of :mod:`.choose` (Python), from measured runs of instrumented copies in the sandbox.

1. Profile (long input): for every instrumentable loop (braced ``for``/``while``, the first
   loop on its line), its iterations (cumulative over all executions of the statement) and
   the count at its last exit. The state meter's clean long run, in the clean program's
   first step, counts them (build.py, ``_Meter.profile``); when it cannot (it did not
   compile, failed, or its output is not the clean program's), a profile copy of its own
   (:func:`profile_jobs`, :func:`cpp_programs.profile`) runs in a step of its own.
2. Eligible loops and ranking exactly as in Python: at least 2 iterations and an exit
   after iteration K = iterations // 2 + 1; most iterations first, then line; the top 3
   go to a snapshot run.
3. Snapshot run: the canonical JSON (the emitter of the state arms) of each candidate
   variable at the start of iterations K-1 and K and at the first exit after K. Candidates
   are the variables in scope at both checkpoints (:func:`cpp_scan.in_scope`: parameters
   and locals of the loop's function declared before the loop in an enclosing block, and
   globals) that are read in or after the loop; a variable whose type the emitter does not
   serialise is left out (C++: decided at compile time).
4. Qualification and the projection: :func:`choose._pick`, the Python rule, where the
   loop's "targets" are the variables a ``for`` header assigns (``for (i = 0; ...)``);
   variables declared in the header are out of scope after the loop and never candidates.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Generator

from execbench.contract import Reject
from execbench.families.state import choose, cpp_programs, cpp_scan
from execbench.families.state.jobs import exec_job
from execbench.families.state.records import Choice, Results, Settings, Step, TriedLoop
from execbench.sandbox.jobs import Job, JobResult


def _compile(name: str, directory: str, source: str, settings: Settings) -> Job:
    t = settings.compile_time_limit
    return exec_job(name, ["g++", f"-std={settings.cpp_std}", "-O0", "-o", "prog", "main.cpp"], cwd=directory,
                    files={f"{directory}/main.cpp": source}, cpu=t, wall=t, memory_mb=4096, max_output=1 << 16)


def profile_jobs(program: str, long: str, settings: Settings) -> tuple[list[cpp_scan.CppLoop], list[Job]]:
    """The instrumentable loops and the jobs compiling and running their profile."""
    loops = cpp_programs.loops(program)
    if not loops:
        raise Reject("instrument", "the program has no instrumentable for/while loop (braced body)")
    return loops, [_compile("cc_profile", "profile", cpp_programs.profile(program, loops), settings),
                   exec_job("profile", ["./prog"], cwd="profile", stdin=long, needs=["cc_profile"],
                            collect=[cpp_programs.PROFILE_FILE], **settings.profile_limits())]


def _failed(job: JobResult | None, what: str) -> None:
    if job is None:
        raise Reject("execution", f"{what}: the run did not happen")
    if job.limit is not None:
        raise Reject("caps", f"{what}: {job.reason()}")
    if not job.ok:
        raise Reject("execution", f"{what}: {job.reason()}")


def _compiled(job: JobResult | None, what: str) -> None:
    if job is None or not job.ok:
        lines = (job.stderr if job else "").strip().splitlines()
        errors = [ln for ln in lines if "error" in ln] or lines[-1:] or [""]
        raise Reject("instrument", f"{what} does not compile: {errors[0][:300]}")


def profile_counts(results: dict[str, JobResult], loops: list[cpp_scan.CppLoop]) -> tuple[list[int], list[int]]:
    """(iterations, count at the last exit) per loop from the profile copy's run (used when
    the state meter, whose clean long run gives the same counts, could not give them)."""
    _compiled(results.get("cc_profile"), "the loop profile")
    _failed(results.get("profile"), "profile run")
    from execbench.sandbox import records

    try:
        data = records.load_json(results["profile"].files.get(cpp_programs.PROFILE_FILE, b"{}"), max_bytes=1 << 20)
        return choose._ints(data.get("counts"), len(loops)), choose._ints(data.get("last_exit"), len(loops))
    except (records.RecordError, AttributeError):
        raise Reject("execution", "profile run returned malformed counts") from None


def choose_cpp(program: str, long: str, loops: list[cpp_scan.CppLoop], counts: list[int], last_exit: list[int],
               settings: Settings, meter_snapshot: Callable[[str], Job | None] | None = None
               ) -> Generator[Step, Results, Choice]:
    """The choice (a step of the case's build: the snapshot run), from the loops' profile
    (``counts``, ``last_exit``); raises Reject like :func:`choose.choose_python`.
    ``meter_snapshot``: the state meter's snapshot run for an ``EXECBENCH_SNAPSHOT``
    selection (:func:`cpp_programs.metered`; loop j is ``loops[j]``), used instead of
    compiling a snapshot copy when it gives one."""
    ranking = choose.rank(counts, last_exit, [loop.line for loop in loops])
    if not ranking:
        raise Reject("checkpoint", "no loop iterates at least twice and exits after its middle iteration "
                                   f"(iterations per loop line: { {loop.line: counts[j] for j, loop in enumerate(loops)} })")
    top = ranking[:choose.TOP_LOOPS]
    names = dict(enumerate(cpp_programs.candidate_names(program, [loops[j] for j, _ in top])))
    chosen = [(loops[j], k, names[index]) for index, (j, k) in enumerate(top)]
    by_meter = meter_snapshot(",".join(f"{j}:{k}:{index}" for index, (j, k) in enumerate(top))) \
        if meter_snapshot else None
    if by_meter is not None:
        step = [by_meter]
    else:
        source = cpp_programs.snapshot(program, chosen, max(4000, settings.max_field_chars))
        step = [_compile("cc_snapshot", "snapshot", source, settings),
                replace(exec_job("snapshot", ["./prog"], cwd="snapshot", stdin=long, needs=["cc_snapshot"],
                                 collect=[cpp_programs.SNAPSHOT_FILE], **settings.profile_limits()),
                        max_collect=1 << 22)]
    answer = (yield {0: step})[0]
    if by_meter is None:
        _compiled(answer.get("cc_snapshot"), "the snapshot program")
    _failed(answer.get("snapshot"), "snapshot run")
    raw = answer["snapshot"].files.get(cpp_programs.SNAPSHOT_FILE, b"")
    snap = cpp_programs.read_snapshots(raw.decode("utf-8", "replace"))
    tried: list[TriedLoop] = []
    for index, (j, k) in enumerate(top):
        loop = loops[j]
        try:
            fields, why = choose._pick(loop, names[index], snap, index, settings)
        except (AttributeError, KeyError, TypeError, ValueError, RecursionError):  # the program wrote them
            raise Reject("execution", "snapshot run returned malformed snapshots") from None
        tried.append({"loop_line": loop.line, "iterations": counts[j], "result": why})
        if fields:
            return choose.auto_choice(loops, counts, ranking, tried, j, k, fields)
    raise Reject("checkpoint", "no loop has a projection of changing, serialisable, small variables", tried=tried)
