"""Parent side of the cruxeval family's sandbox runs: every item is a job of the job runner.

Everything of this family that executes code goes through :func:`run`, i.e. through
:func:`execbench.sandbox.jobs.run_jobs`: building (``kind="build"``) and grading an
input-prediction answer (``kind="grade"``, the benchmark's ``f`` on the model's
arguments). The items of one call share one sandbox; each runs in its own child (its own
limits, an emptied work dir), handled by :mod:`._runner`. A program that kills the runner
costs only its own item (the runner's recovery).
"""

from __future__ import annotations

from typing import Sequence

from execbench.families.cruxeval.records import GradeItem, Problem
from execbench.sandbox import records
from execbench.sandbox.jobs import Job, JobResult, run_jobs

_HANDLERS = "execbench.families.cruxeval._runner"
PRELOAD = {"build": ("execbench.grading.literal", "execbench.tracing.tracer"),
           "grade": ("execbench.families.cruxeval.codec",)}
MAX_RESULT = 1 << 22  # bytes of an item's result
MAX_OUTPUT = 4096  # the program's own stdout is kept this far (not a limit; nobody reads it)
_OK_FIELDS = {"build": {"equal": bool, "compare_error": (str, type(None)), "returned": str,
                        "returned_literal": bool, "trace_length": (int, type(None)), "trace_status": str},
              "grade": {"equal": bool, "compare_error": (str, type(None)), "returned": str}}
_OPTIONAL = {"build": {"checkpoint": dict, "literal_error": str, "literal_equal": bool, "literal_input": str},
             "grade": {}}


def run(kind: str, items: Sequence[Problem] | Sequence[GradeItem], *, seed: int = 0, cpu_seconds: float = 5.0,
        wall_seconds: float | None = None, memory_mb: int = 1024,
        max_line_events: int = 1_000_000) -> list[JobResult]:
    """One result per item, in one sandbox with hash seed ``seed``; a successful one's
    ``value`` is the handler's result (``status`` ok, or error: the program raised), checked
    (:func:`checked`); see :func:`status` and :func:`error`."""
    wall = wall_seconds if wall_seconds is not None else 2 * cpu_seconds + 2
    jobs = [Job(str(index), f"{_HANDLERS}:{kind}_job", args={"item": item, "max_line_events": max_line_events},
                cpu_seconds=cpu_seconds, wall_seconds=wall, memory_mb=memory_mb, max_output=MAX_OUTPUT,
                output_is_limit=False, max_value=MAX_RESULT)
            for index, item in enumerate(items)]
    return [checked(kind, r) for r in run_jobs(jobs, seed=seed, preload=PRELOAD[kind], max_tasks=16)]


def checked(kind: str, result: JobResult) -> JobResult:
    """``result`` with its value validated as a ``kind`` result; a job that ended without
    one (``os._exit`` in the program, a malformed value) is a failed one (``failure``)."""
    if not result.has_value(f"crashed ({result.reason()}, no result)"):
        return result
    try:
        value = records.check(result.value, {"status": str}, {"error": str}, where="cruxeval result")
        if value["status"] == "ok":
            value.update(records.check(result.value, _OK_FIELDS[kind], _OPTIONAL[kind], where="cruxeval result"))
        elif value["status"] != "error" or "error" not in value:
            raise records.RecordError(f"cruxeval result: status {value['status'][:50]!r}")
        result.value = value
    except records.RecordError as exc:
        result.failure, result.value = f"malformed result: {exc}", None
    return result


def status(result: JobResult) -> str:
    """``ok`` or ``error`` (the program returned or raised), ``limit``, ``crash``, or
    ``sandbox`` (the runner died during the item)."""
    if result.value is not None and result.failure is None:
        return result.value["status"]
    if result.limit is not None:
        return "limit"
    # no exit status at all: the runner died (or wrote garbage) before the item's record
    return "sandbox" if result.failure and result.exit_code is None and result.signal is None else "crash"


def error(result: JobResult) -> str:
    """Why an item whose :func:`status` is not ``ok`` did not return."""
    if result.value is not None and result.failure is None:
        return result.value.get("error", "")
    return result.reason()
