"""Parent side of the cruxeval runner (:mod:`._runner`): one sandbox runs a batch of items.

Everything of this family that executes code goes through :func:`run_items`, i.e. through
:func:`execbench.sandbox.run_python`: building (``kind="build"``) and grading an
input-prediction answer (``kind="grade"``, the benchmark's ``f`` on the model's arguments).
"""

from __future__ import annotations

import json
from typing import Any

from execbench import sandbox

RUNNER = ["-m", "execbench.families.cruxeval._runner", "spec.json"]


class BatchError(RuntimeError):
    """The sandboxed runner did not finish (not: an item failed)."""


def run_items(kind: str, items: list[dict[str, Any]], *, seed: int = 0, cpu_seconds: float = 5.0,
              wall_seconds: float | None = None, memory_mb: int = 1024,
              max_line_events: int = 1_000_000) -> list[dict[str, Any]]:
    """One result per item (``status``: ok / error / limit / crash; see :mod:`._runner`)."""
    item_wall = wall_seconds if wall_seconds is not None else 2 * cpu_seconds + 2
    spec = {"kind": kind, "items": items, "cpu_seconds": cpu_seconds, "wall_seconds": item_wall,
            "memory_mb": memory_mb, "max_line_events": max_line_events}
    wall = item_wall * len(items) + 30.0
    limits = sandbox.Limits(cpu_seconds=wall, wall_seconds=wall, memory_bytes=(memory_mb + 512) * 1024 * 1024,
                            max_tasks=16, output_bytes=1 << 16)
    outcome = sandbox.run_python(RUNNER, files={"spec.json": json.dumps(spec)}, collect=["result.json"],
                                 env={"PYTHONHASHSEED": str(seed)}, limits=limits)
    raw = outcome.files.get("result.json")
    if raw is None:
        detail = outcome.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise BatchError(f"cruxeval runner failed: {outcome.reason()} {detail[0][:300]}".strip())
    try:
        results = json.loads(raw)["items"]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise BatchError("cruxeval runner wrote a malformed result") from None
    if not isinstance(results, list) or len(results) != len(items):
        raise BatchError("cruxeval runner returned the wrong number of results")
    return [r if isinstance(r, dict) and isinstance(r.get("status"), str)
            else {"status": "crash", "error": "malformed result"} for r in results]


def run_each(kind: str, items: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
    """:func:`run_items`; when the batch's runner dies (a program killed it), every item runs
    again in a sandbox of its own, so one hostile item costs only its own result."""
    try:
        return run_items(kind, items, **kwargs)
    except BatchError as exc:
        if len(items) == 1:
            return [{"status": "sandbox", "error": str(exc)}]
    return [run_each(kind, [item], **kwargs)[0] for item in items]
