"""Parent-side tracing API: tracing jobs for the sandbox's job runner.

A tracing job (:func:`calls_job`, :func:`script_job`) carries the program text as
``filename`` in its directory (line numbers in traces refer to that exact text) and the
tracer's options; :func:`execbench.tracing.child.trace_job` runs it inside the sandbox.
Many jobs can share one sandbox (:func:`execbench.sandbox.jobs.run_jobs`; the trace family
batches candidates that way); :func:`trace_calls` and :func:`trace_script` run one job.
:func:`checked` validates what a job returned (the program ran in the same process).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping, Sequence

from execbench.sandbox import records
from execbench.sandbox.jobs import Job, JobResult, run_jobs
from execbench.tracing.tracer import TraceLimits

HANDLER = "execbench.tracing.child:trace_job"
PRELOAD = ("execbench.tracing.child", "execbench.tracing.tracer", "execbench.tracing.script",
           "execbench.sandbox.wire")
MEMORY_MB = 2048


def _job(job_id: str, program: str, spec: dict[str, Any], *, filename: str,
         extra_files: Mapping[str, str | bytes], stdin: str | bytes, cpu: float, wall: float,
         group: str | None) -> Job:
    return Job(job_id, HANDLER, args=spec, files={filename: program, **extra_files}, stdin=stdin,
               group=group, cpu_seconds=cpu, wall_seconds=wall, memory_mb=MEMORY_MB,
               max_output=4 << 20, output_is_limit=False)


def _spec(mode: str, filename: str, extra: Sequence[str], trace_limits: TraceLimits, **kw: Any) -> dict:
    return {"mode": mode, "files": [filename, *extra], "limits": asdict(trace_limits), **kw}


def calls_job(job_id: str, program: str, calls: Sequence[str], *, filename: str = "program.py",
              traced_files: Sequence[str] = (), extra_files: Mapping[str, str | bytes] = {},
              trace_limits: TraceLimits = TraceLimits(), record_calls: bool = False,
              count_opcodes: bool = False, call_timeout: int = 10, collapse_comprehensions: bool = False,
              group: str | None = None) -> Job:
    """Trace each call expression separately, from the same fresh module state.

    The value holds ``calls[i]`` with ``status`` (ok/error/timeout/crash/too_large/tampered),
    ``lines`` (primary-file line events, concurrent segments as nested lists),
    ``line_events`` and, as asked, ``calls`` and ``opcodes``."""
    spec = _spec("calls", filename, traced_files, trace_limits, calls=list(calls), record_calls=record_calls,
                 count_opcodes=count_opcodes, call_timeout=call_timeout,
                 collapse_comprehensions=collapse_comprehensions)
    wall = max(30.0, call_timeout * len(calls) + 10)
    return _job(job_id, program, spec, filename=filename, extra_files=extra_files, stdin=b"",
                cpu=wall, wall=wall, group=group)


def script_job(job_id: str, program: str, stdin: str | bytes = b"", *, filename: str = "program.py",
               traced_files: Sequence[str] = (), extra_files: Mapping[str, str | bytes] = {},
               trace_limits: TraceLimits = TraceLimits(), record_calls: bool = False,
               count_opcodes: bool = False, collapse_comprehensions: bool = False,
               start_after_main_guard: bool = False, segment_markers: bool = False,
               cpu_seconds: float = 10.0, wall_seconds: float = 30.0, group: str | None = None) -> Job:
    """Trace a whole run of ``program`` as ``__main__``; the value's ``script`` has the trace,
    the run's stdout is :attr:`JobResult.stdout`. ``start_after_main_guard``: record from the
    event after the ``if __name__ == "__main__":`` line's; ``segment_markers``: ``#START`` /
    ``#END`` comments delimit concurrent segments (see :mod:`execbench.tracing.script`)."""
    spec = _spec("script", filename, traced_files, trace_limits, record_calls=record_calls,
                 count_opcodes=count_opcodes, collapse_comprehensions=collapse_comprehensions,
                 start_after_main_guard=start_after_main_guard, segment_markers=segment_markers)
    return _job(job_id, program, spec, filename=filename, extra_files=extra_files, stdin=stdin,
                cpu=cpu_seconds, wall=wall_seconds, group=group)


def executable_lines(program: str) -> frozenset[int] | None:
    """The lines of ``program`` that can emit a line event: every line of its code objects'
    line tables, and their first lines (compiled, never run); None when it does not compile
    here (the check is then left to the run's own status)."""
    try:
        code = compile(program, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines: set[int] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        lines.add(current.co_firstlineno)
        lines.update(line for _, _, line in current.co_lines() if line is not None)
        stack.extend(c for c in current.co_consts if hasattr(c, "co_lines"))
    return frozenset(lines)


def _foreign_line(lines: Any, allowed: frozenset[int]) -> Any:
    """The first entry of a trace (line numbers, concurrent segments as nested lists) that
    is not a line of the program, or None."""
    stack = [lines]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif not (isinstance(item, int) and not isinstance(item, bool) and item in allowed):
            return item
    return None


def checked(result: JobResult, job: Job | None = None) -> JobResult:
    """``result`` with its value validated as a tracing record (envelope and statuses; with
    ``job``: one record per call asked for, in order, and every traced line a line of the
    program that can run); a job without a valid record is a failed one
    (:attr:`JobResult.failure` says why). The program ran in the process that wrote it."""
    if not result.has_value(f"no trace record ({result.reason()})"):
        return result
    try:
        value = records.check(result.value, {"module": dict}, {"calls": list, "script": dict},
                              where="trace record")
        records.check(value["module"], {"status": str}, where="trace record module")
        if "script" in value:
            records.check(value["script"], {"status": str}, where="trace record script")
        for call in value.get("calls", []):
            records.check(call, {"status": str}, where="trace record call")
        if job is not None:
            _matches(value, job)
    except records.RecordError as exc:
        result.failure, result.value = f"malformed {exc}", None
    return result


def _matches(value: dict[str, Any], job: Job) -> None:
    spec = job.args
    if value["module"]["status"] == "ok" and spec.get("mode") == "calls":
        asked = list(spec.get("calls", []))
        got = [call.get("call") for call in value.get("calls", [])]
        if got != asked:
            raise records.RecordError(f"trace record: calls {len(got)} do not match the {len(asked)} asked for")
    program = job.files.get(spec["files"][0]) if spec.get("files") else None
    if not isinstance(program, str):
        return
    allowed = executable_lines(program)
    if allowed is None:
        return
    for run in [*value.get("calls", []), *([value["script"]] if "script" in value else [])]:
        bad = _foreign_line(run.get("lines", []), allowed)
        if bad is not None:
            raise records.RecordError(f"trace record: {str(bad)[:40]!r} is not a line of the program")


def run_traces(jobs: Sequence[Job], *, hash_seed: int = 0, python: str | None = None) -> list[JobResult]:
    """Tracing jobs in one sandbox under ``python`` (default: this interpreter; the trace
    family pins CPython 3.11, :mod:`execbench.tracing.interpreter`), each result checked."""
    results = run_jobs(jobs, python=python, seed=hash_seed, preload=PRELOAD)
    return [checked(result, job) for job, result in zip(jobs, results, strict=True)]


def trace_calls(program: str, calls: list[str], *, hash_seed: int = 0, python: str | None = None,
                **options: Any) -> JobResult:
    """One :func:`calls_job` in its own sandbox; ``result.value["calls"][i]`` per call."""
    return run_traces([calls_job("trace", program, calls, **options)], hash_seed=hash_seed, python=python)[0]


def trace_script(program: str, stdin: str | bytes = b"", *, hash_seed: int = 0, python: str | None = None,
                 **options: Any) -> JobResult:
    """One :func:`script_job` in its own sandbox; ``result.value["script"]`` has the trace."""
    return run_traces([script_job("trace", program, stdin, **options)], hash_seed=hash_seed, python=python)[0]
