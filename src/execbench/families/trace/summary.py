"""Aggregate metrics over graded traces, as in CoCoNUT (paper section II-B)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping


@dataclass(frozen=True)
class TraceResult:
    """One graded trace. `task_group` groups the traces of one task (e.g. "HumanEval/10")."""
    task_group: str
    correct: bool
    similarity: float | None = None   # None is counted as 0.0 (no usable answer)
    status: str = "ok"


def _as_result(r: Any) -> TraceResult:
    if isinstance(r, TraceResult):
        return r
    get = r.get if isinstance(r, Mapping) else (lambda k, d=None: getattr(r, k, d))
    return TraceResult(str(get("task_group")), bool(get("correct")),
                       get("similarity"), get("status", "ok") or "ok")


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def trace_summary(results: Iterable[TraceResult | Mapping]) -> dict:
    """Metrics over TraceResults (or mappings/objects with the same keys).

    n                 number of traces
    accuracy          fraction of traces correct
    accuracy_mean     per task group: fraction correct; then averaged over groups ("Acc Mean")
    accuracy_hard     fraction of task groups with every trace correct ("Acc Hard")
    similarity        mean similarity over all traces (None counted as 0.0)
    false_similarity  mean similarity over wrong traces (None if none is wrong)
    no_answer         traces with status "no_answer"; truncated: status "truncated"
    All rates are None when there are no results.
    """
    rs = [_as_result(r) for r in results]
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rs:
        groups[r.task_group].append(r.correct)
    sims = [r.similarity or 0.0 for r in rs]
    return {
        "n": len(rs),
        "accuracy": _mean([float(r.correct) for r in rs]),
        "accuracy_mean": _mean([sum(g) / len(g) for g in groups.values()]),
        "accuracy_hard": _mean([float(all(g)) for g in groups.values()]),
        "similarity": _mean(sims),
        "false_similarity": _mean([s for r, s in zip(rs, sims) if not r.correct]),
        "no_answer": sum(r.status == "no_answer" for r in rs),
        "truncated": sum(r.status == "truncated" for r in rs),
    }
