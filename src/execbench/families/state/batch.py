"""Parent side of the batch runner: one sandboxed interpreter runs a list of jobs.

See :mod:`._runner` (the child). Everything that executes code of a case goes through
:func:`run_batch`, i.e. through :func:`execbench.sandbox.run_python`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Sequence

from execbench import sandbox
from execbench.sandbox import records

RUNNER = ["-m", "execbench.families.state._runner", "spec.json"]


@dataclass
class JobResult:
    ok: bool
    exit_code: int | None
    signal: int | None
    limit: str | None
    stdout: bytes
    stderr: str
    wall: float = 0.0
    cpu: float = 0.0
    maxrss_kb: int = 0
    skipped: bool = False
    metrics: dict[str, Any] = field(default_factory=dict)
    dump: Any = None
    dump_error: str | None = None
    files: dict[str, str] = field(default_factory=dict)

    def reason(self) -> str:
        if self.skipped:
            return "skipped (an earlier step failed)"
        if self.limit:
            return f"{self.limit} limit"
        if self.signal is not None:
            return f"killed by signal {self.signal}"
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        tail = f": {lines[-1].strip()[:300]}" if lines else ""
        return f"exit {self.exit_code}{tail}"

    def text(self) -> str:
        return self.stdout.decode("utf-8")


@dataclass
class Batch:
    ok: bool  # the runner itself finished
    reason: str
    jobs: dict[str, JobResult]


_INT = (int, type(None))
_JOB_FIELDS = {"ok": bool, "exit_code": _INT, "signal": _INT, "limit": (str, type(None)),
               "stdout": str, "stderr": str}
_JOB_OPTIONAL = {"wall": (int, float), "cpu": (int, float), "maxrss_kb": int, "skipped": bool,
                 "metrics": dict, "dump": object, "dump_error": (str, type(None)), "files": dict,
                 "stdout_truncated": bool}
_LIMITS = (None, "wall_time", "cpu_time", "memory", "output")
_NUMERIC_METRICS = ("opcodes", "line_events", "peak_state", "state_load", "state_stride",
                    "state_samples", "state_work")


def _metrics(metrics: dict[str, Any], name: str) -> dict[str, Any]:
    for key, value in metrics.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key in _NUMERIC_METRICS and not number:
            raise records.RecordError(f"job {name}: metric {key!r} should be a number")
        if not isinstance(value, (str, int, float, bool, type(None))):
            raise records.RecordError(f"job {name}: metric {key!r} should be a scalar")
    if metrics.get("status") == "ok":
        missing = [k for k in ("opcodes", "line_events") if k not in metrics]
        if missing:
            raise records.RecordError(f"job {name}: metrics without {missing}")
        if "state_load" in metrics or "peak_state" in metrics:
            missing = [k for k in ("peak_state", "state_load", "state_stride") if k not in metrics]
            if missing:
                raise records.RecordError(f"job {name}: metrics without {missing}")
    return metrics


def _job_result(raw: Any, name: str) -> JobResult:
    """One job's record, validated field by field (the program could have written it);
    a malformed one is a failed job saying why."""
    try:
        job = records.check(raw, _JOB_FIELDS, _JOB_OPTIONAL, where=f"job {name}")
        if job["limit"] not in _LIMITS:
            raise records.RecordError(f"job {name}: unknown limit {job['limit']!r}")
        files = job.get("files", {})
        if not all(isinstance(v, str) for v in files.values()):
            raise records.RecordError(f"job {name}: collected files should be text")
        return JobResult(
            ok=job["ok"], exit_code=job["exit_code"], signal=job["signal"], limit=job["limit"],
            stdout=records.b64(job["stdout"], f"job {name} stdout"), stderr=job["stderr"],
            wall=float(job.get("wall", 0.0)), cpu=float(job.get("cpu", 0.0)),
            maxrss_kb=job.get("maxrss_kb", 0), skipped=job.get("skipped", False),
            metrics=_metrics(job.get("metrics", {}), name), dump=job.get("dump"), dump_error=job.get("dump_error"),
            files=files,
        )
    except records.RecordError as exc:
        return JobResult(ok=False, exit_code=None, signal=None, limit=None, stdout=b"",
                         stderr=f"malformed job record: {exc}")


def run_batch(
    files: Mapping[str, str | bytes],
    jobs: list[dict[str, Any]],
    *,
    seed: int = 0,
    preload: Sequence[str] = (),
    memory_mb: int = 4096,
) -> Batch:
    """Run ``jobs`` (see :mod:`._runner`) in one sandbox holding ``files``."""
    spec = {"jobs": jobs, "preload": list(preload), "result": "result.json"}
    wall = sum(float(job.get("wall", 30)) for job in jobs) + 30.0
    limits = sandbox.Limits(cpu_seconds=wall, wall_seconds=wall, memory_bytes=memory_mb * 1024 * 1024,
                            max_tasks=64, output_bytes=1 << 20)
    outcome = sandbox.run_python(
        RUNNER,
        files={**files, "spec.json": json.dumps(spec)},
        collect=["result.json"],
        env={"PYTHONHASHSEED": str(seed)},
        limits=limits,
    )
    raw = outcome.files.get("result.json")
    if raw is None:
        detail = outcome.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return Batch(False, f"runner failed: {outcome.reason()} {detail[0][:300]}".strip(), {})
    cap = sum(int(job.get("max_output", 1 << 20)) * 2 + (1 << 20) for job in jobs) + (1 << 20)
    try:
        data = records.check(records.load_json(raw, max_bytes=cap), {"jobs": dict},
                             where="result.json")
    except records.RecordError as exc:
        return Batch(False, f"runner failed: {exc}", {})
    return Batch(True, "ok", {job["id"]: _job_result(data["jobs"].get(job["id"]), job["id"])
                              for job in jobs})


@lru_cache(maxsize=None)
def toolchain(compiler: str = "g++") -> str:
    """First line of ``<compiler> --version`` (run in the sandbox), or "" if missing."""
    result = sandbox.run([compiler, "--version"], limits=sandbox.Limits(wall_seconds=30, cpu_seconds=30))
    if not result.ok:
        return ""
    return result.stdout.decode("utf-8", "replace").splitlines()[0].strip()
