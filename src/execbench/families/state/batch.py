"""Parent side of the batch runner: one sandboxed interpreter runs a list of jobs.

See :mod:`._runner` (the child). Everything that executes code of a case goes through
:func:`run_batch`, i.e. through :func:`execbench.sandbox.run_python`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from execbench import sandbox

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


def _job_result(raw: dict[str, Any]) -> JobResult:
    return JobResult(
        ok=bool(raw.get("ok")),
        exit_code=raw.get("exit_code"),
        signal=raw.get("signal"),
        limit=raw.get("limit"),
        stdout=base64.b64decode(raw.get("stdout", "")),
        stderr=raw.get("stderr", ""),
        wall=raw.get("wall", 0.0),
        cpu=raw.get("cpu", 0.0),
        maxrss_kb=raw.get("maxrss_kb", 0),
        skipped=bool(raw.get("skipped")),
        metrics=raw.get("metrics", {}),
        dump=raw.get("dump"),
        dump_error=raw.get("dump_error"),
        files=raw.get("files", {}),
    )


def run_batch(
    files: Mapping[str, str | bytes],
    jobs: list[dict[str, Any]],
    *,
    seed: int = 0,
    preload: list[str] = (),  # type: ignore[assignment]
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
    data = json.loads(raw)
    return Batch(True, "ok", {name: _job_result(job) for name, job in data["jobs"].items()})


@lru_cache(maxsize=None)
def toolchain(compiler: str = "g++") -> str:
    """First line of ``<compiler> --version`` (run in the sandbox), or "" if missing."""
    result = sandbox.run([compiler, "--version"], limits=sandbox.Limits(wall_seconds=30, cpu_seconds=30))
    if not result.ok:
        return ""
    return result.stdout.decode("utf-8", "replace").splitlines()[0].strip()
