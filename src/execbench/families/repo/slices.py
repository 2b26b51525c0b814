"""The repo family's analysis slices of a sample: annotated difficulty and reasoning scope.

Read by analysis through :meth:`RepoFamily.sample_slices` from a log sample's metadata and
metrics, or from a task's prompt fields, provenance and metrics (docs/repo-family.md).
"""

from __future__ import annotations

from typing import Mapping

from execbench.contract.jsontypes import JSONValue

DIFFICULTY_LEVELS = ("easy", "medium", "hard")  # the annotator's labels, also its 1/2/3 metric
SCOPES = ("intra-file", "cross-file", "repository-wide")  # reasoning scope, in report order


def difficulty_label(value: JSONValue) -> str | None:
    """``easy``/``medium``/``hard`` from a label, a ``{"label": ...}`` record or the 1/2/3 metric."""
    if isinstance(value, dict):
        value = value.get("label")
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = int(value) if float(value).is_integer() else 0
        return DIFFICULTY_LEVELS[number - 1] if 1 <= number <= len(DIFFICULTY_LEVELS) else None
    text = str(value).strip().lower()
    return text or None


def scope_label(scope: JSONValue, slice_files: JSONValue) -> str | None:
    """Reasoning scope: a recorded label, else intra-/cross-file from the slice's file count."""
    if isinstance(scope, str) and scope:
        return scope
    if isinstance(slice_files, (int, float)) and not isinstance(slice_files, bool) and slice_files >= 1:
        return SCOPES[0] if slice_files == 1 else SCOPES[1]
    return None


def sample_slices(fields: Mapping[str, JSONValue], metrics: Mapping[str, JSONValue]) -> dict[str, str | None]:
    """``difficulty`` and ``scope`` of one sample (``fields``: its recorded fields, ``metrics``: its metrics;
    both as recorded in a log or a dataset, JSON)."""
    difficulty = fields.get("difficulty")
    return {"difficulty": difficulty_label(difficulty if difficulty is not None else metrics.get("difficulty")),
            "scope": scope_label(fields.get("scope"), metrics.get("slice_files"))}
