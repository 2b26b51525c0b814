"""Slicing glue for repo tasks: ESV, MCL and DFI (RepoReason §3.5) of a task's masked
operand, computed by :func:`execbench.slicing.slice_metrics` from the test's stored call
records and sources (:mod:`.traces`). A slicer that is missing or fails leaves the metrics
null and says why in ``provenance.slicing``; the task is kept."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypedDict

from execbench.families.repo.records.steps import SliceTarget

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo.records.run_records import CallJson
    from execbench.slicing import SliceResult  # the slicer's own result type (imports beniget, gast)

SLICE_METRICS = ("esv", "mcl", "dfi")


# Modules and code objects the process's analysis cache keeps (least recently used go first):
# a library's test modules read the same library modules, parsed once per worker, not per test module.
SHARED_MODULES, SHARED_CODES = 128, 16384


@lru_cache(maxsize=1)
def slice_cache() -> Any:
    """The process's analysis cache, shared by every slice it computes (keyed by file and
    content, so a test module or a library module is analysed once per process; None
    without slicing)."""
    try:
        from execbench.slicing.analysis import AnalysisCache
    except ImportError:
        return None
    return AnalysisCache(modules=SHARED_MODULES, codes=SHARED_CODES)


class SliceProvenance(TypedDict):
    """The part of a slice result a task keeps (``provenance.slice``)."""

    relevant_calls: list[int]
    relevant_lines: dict[str, list[int]]
    source_variables: list[str]


def slice_for(calls: list[CallJson], sources: dict[str, str], target: SliceTarget,
              cache: Any = None) -> tuple[SliceResult | None, str]:
    """``execbench.slicing.slice_metrics`` when available: (result, status)."""
    try:
        from execbench.slicing import slice_metrics
    except ImportError:
        return None, "slicing unavailable"
    try:
        if cache is not None:
            return slice_metrics(calls, sources, target, cache=cache), "ok"
        return slice_metrics(calls, sources, target), "ok"
    except Exception as exc:  # noqa: BLE001 - a slicer bug must not lose the task
        return None, f"slicing failed: {type(exc).__name__}: {str(exc)[:200]}"


def fill_metrics(metrics: dict[str, float | int | None], sliced: SliceResult | None) -> None:
    """Set ``metrics``' esv/mcl/dfi (numbers only) and ``slice_files`` from a slice result
    (the keys must already be there, null, so the record's key order does not change)."""
    if not sliced:
        return
    for name in SLICE_METRICS:
        value = sliced.get(name)
        metrics[name] = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    # reasoning scope (RepoReason B.1): 1 file = intra-file, more = cross-file
    metrics["slice_files"] = len(sliced.get("relevant_lines") or {}) or None


def slice_provenance(sliced: SliceResult | None) -> SliceProvenance | None:
    """The part of a slice result kept in ``provenance.slice`` (None without a slice)."""
    if not sliced:
        return None
    return {"relevant_calls": sliced["relevant_calls"], "relevant_lines": sliced["relevant_lines"],
            "source_variables": sliced["source_variables"]}
