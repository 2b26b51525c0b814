"""The state family's jobs for the sandbox's job runner (:mod:`execbench.sandbox.jobs`).

:func:`python_job` runs a Python program as ``__main__`` (:mod:`._runner`, natively or
measured, optionally returning a global); :func:`exec_job` runs g++, a compiled program or
gcov. :func:`run` runs jobs in one sandbox and checks what the Python jobs returned
(:func:`checked`): after it, ``result.value`` of a successful Python job is
``{"metrics": {...}, "dump": ..., "dump_error": ...}`` (:func:`metrics`, :func:`dump`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Sequence, cast

from execbench import sandbox
from execbench.sandbox import records
from execbench.sandbox.jobs import Job, JobResult, run_jobs

if TYPE_CHECKING:
    from execbench.contract.jsontypes import JSONObject, JSONValue
    from execbench.families.state.records import (CheckedRun, ExecJobArgs, Instrumented, Measure, PythonJobArgs,
                                                   RunMetrics)

HANDLER = "execbench.families.state._runner:run_program"
MAX_VALUE = 16 << 20  # a profiling run's dump (loop counts, snapshots) is far smaller
NUMERIC_METRICS = ("opcodes", "line_events", "peak_state", "state_load", "state_stride",
                   "state_samples", "state_work")


def python_job(job_id: str, name: str, program: str, stdin: str = "", *, cpu: float, wall: float,
               memory_mb: int, max_output: int = 1 << 20, measure: Measure | None = None,
               dump_global: str | None = None, needs: Sequence[str] = (), group: str | None = None,
               instrumented: Instrumented | None = None) -> Job:
    """Run ``program`` (written as ``name`` before the job, so an earlier job cannot change
    it) as ``__main__`` with ``stdin``, in a fresh directory (nothing an earlier run of the
    case left there). With ``instrumented``, that text runs instead, under ``program``'s file
    name and line numbers (``program`` is then the clean program it was made from)."""
    args: PythonJobArgs = {"program": name}
    if instrumented is not None:
        args["instrumented"] = instrumented
    if measure is not None:
        args["measure"] = measure
    if dump_global:
        args["dump_global"] = dump_global
    return Job(job_id, HANDLER, args=dict(args), files={name: program}, stdin=stdin, needs=list(needs), group=group,
               cpu_seconds=cpu, wall_seconds=wall, memory_mb=memory_mb, max_output=max_output,
               max_value=MAX_VALUE, fresh=True)


def exec_job(job_id: str, argv: Sequence[str], *, cwd: str = ".", stdin: str = "", cpu: float, wall: float,
             memory_mb: int, max_output: int = 1 << 20, env: dict[str, str] | None = None,
             files: dict[str, str] | None = None, needs: Sequence[str] = (),
             collect: Sequence[str] = (), group: str | None = None, fresh: bool = False,
             keep: Sequence[str] = ()) -> Job:
    """``execve`` ``argv`` in ``cwd`` (below the group's directory); ``fresh``: in the group's
    directory holding only what earlier jobs ``keep`` (files below their cwd)."""
    args: ExecJobArgs = {"argv": list(argv)}
    if env:
        args["env"] = env
    return Job(job_id, "exec", args=dict(args), files=files or {}, stdin=stdin, cwd=cwd, needs=list(needs), group=group,
               collect=list(collect), cpu_seconds=cpu, wall_seconds=wall, memory_mb=memory_mb,
               max_output=max_output, fresh=fresh, keep=list(keep))


def _metrics(metrics: JSONObject) -> RunMetrics:
    for key, value in metrics.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key in NUMERIC_METRICS and not number:
            raise records.RecordError(f"metric {key!r} should be a number")
        if not isinstance(value, (str, int, float, bool, type(None))):
            raise records.RecordError(f"metric {key!r} should be a scalar")
    if metrics.get("status") == "ok":
        missing = [k for k in ("opcodes", "line_events") if k not in metrics]
        if missing:
            raise records.RecordError(f"metrics without {missing}")
        if "state_load" in metrics or "peak_state" in metrics:
            missing = [k for k in ("peak_state", "state_load", "state_stride") if k not in metrics]
            if missing:
                raise records.RecordError(f"metrics without {missing}")
    return cast("RunMetrics", metrics)  # every field checked above


def checked(job: Job, result: JobResult) -> JobResult:
    """``result`` of a Python job with its record validated field by field (the program
    could have written it); a successful job without a valid record fails, saying why, and
    a failed job's record is dropped (the program may have written it)."""
    if job.handler != HANDLER:
        return result
    if not result.ok:
        result.value = None
        return result
    try:
        if result.value is None:
            raise records.RecordError(result.value_error or "no record")
        value = records.check(result.value, {}, {"metrics": dict, "dump": object,
                                                 "dump_error": (str, type(None))}, where="record")
        record: CheckedRun = {"metrics": _metrics(value.get("metrics", {})), "dump": value.get("dump"),
                              "dump_error": value.get("dump_error")}
        result.value = record
    except records.RecordError as exc:
        result.failure, result.value = f"malformed job record: {exc}", None
    return result


def metrics(result: JobResult) -> RunMetrics:
    """The measured run's metrics (``{}`` if the job was not measured)."""
    return result.value["metrics"] if isinstance(result.value, dict) else {}


def dump(result: JobResult) -> tuple[JSONValue, str | None]:
    """(value of the dumped global, why it is missing)."""
    if not isinstance(result.value, dict):
        return None, result.reason()
    return result.value["dump"], result.value["dump_error"]


def run(jobs: Sequence[Job], *, seed: int = 0, preload: Sequence[str] = (),
        read_only_paths: Sequence[str] = ()) -> list[JobResult]:
    """``jobs`` in one sandbox (hash seed ``seed``; ``read_only_paths``: more paths they may
    read, e.g. precompiled headers); Python jobs' records checked."""
    return [checked(job, result) for job, result in
            zip(jobs, run_jobs(jobs, seed=seed, preload=preload, read_only_paths=read_only_paths), strict=True)]


@lru_cache(maxsize=None)
def toolchain(compiler: str = "g++") -> str:
    """First line of ``<compiler> --version`` (run in the sandbox), or "" if missing."""
    result = sandbox.run([compiler, "--version"], limits=sandbox.Limits(wall_seconds=30, cpu_seconds=30))
    if not result.ok:
        return ""
    return result.stdout.decode("utf-8", "replace").splitlines()[0].strip()
