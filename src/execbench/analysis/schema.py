"""The per-sample table every analysis reads: one row per graded model response.

``analysis/logs.py`` builds it from Inspect logs (read by ``eval/logs.py``); tests build it directly. Analyses only
rely on the columns named here, and :func:`normalize` adds any that are missing (with
``NaN``/``None``), so a family that has not landed simply has no rows.

Row semantics (paper 001, §4.1):

- ``completed`` is False for a transport failure or an empty response (no model output at
  all). Such rows are *excluded* from completed-response accuracy ``C/R`` and count as
  wrong in all-planned accuracy ``C/N``.
- ``correct`` is the grader's verdict (never True when ``completed`` is False).
- ``setting`` names one run configuration (model, prompt variant, temperature, ...): it is
  the unit of every per-model table and of the "two runs" comparison. Mutated tasks (with an
  ``original_id``) get their own setting (``... · mutated``) so they never pool with the
  originals; ``run`` is the setting without that suffix and pairs the two for memorisation.
- ``source_id`` is the clean source program: the cluster of every clustered statistic.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable

import numpy as np
import pandas as pd

from execbench import registry
from execbench.contract import AnalysisFacts


def facts(family: str | None) -> AnalysisFacts | None:
    """The analysis facts a family declares (None: an unknown family, or one without any)."""
    return registry.get(family).capability(AnalysisFacts) if family in registry.names() else None


#: Metric columns (the task record's ``metrics``) by family, as the families declare them; all stored as float.
METRICS = {name: declared.metrics for name in registry.names() if (declared := facts(name)) is not None}
METRIC_COLUMNS = tuple(dict.fromkeys(m for ms in METRICS.values() for m in ms))
#: How the report names a metric (the families' ``Metric`` declarations; the first family to declare one wins),
#: besides the static metrics of any program (execbench.static).
METRIC_DECLARATIONS = {m.name: m for name in reversed(registry.names()) if (declared := facts(name)) is not None
                       for m in declared.metric_labels}
STATIC_METRIC_LABELS = {"loc": "LOC", "cyclomatic": "cyclomatic"}


def metric_label(name: str) -> str:
    """The report's label of a metric column (its name when nobody declared one)."""
    declared = METRIC_DECLARATIONS.get(name)
    return declared.label if declared else STATIC_METRIC_LABELS.get(name, name)


def metric_terms(declared: AnalysisFacts) -> dict[str, str]:
    """A family's names for its metrics as error-model predictors (``Metric.term``)."""
    return {m.name: m.term for m in declared.metric_labels if m.term}

#: Text columns (None when unknown).
TEXT_COLUMNS = (
    "log", "eval_id", "model", "setting", "run", "variant", "template", "template_version",
    "family", "arm", "task_id", "source_id", "study", "topic", "language",
    "status", "extracted", "oracle", "program", "mode",
    "difficulty", "repository", "scope", "original_id", "pair",
    "stop_reason", "dataset_hash", "execbench_version",
    "release_date",  # provenance.release_date (YYYY-MM-DD), any family: the report's contamination view
    "replay",  # replayed replies (--model replay/FILE): "recorded" or "missing" (no line for the task); else None
)
FLOAT_COLUMNS = ("similarity", "temperature", "output_tokens", "epoch", *METRIC_COLUMNS)
BOOL_COLUMNS = ("completed", "correct")
COLUMNS = TEXT_COLUMNS + BOOL_COLUMNS + FLOAT_COLUMNS

#: Every family's arms in the order the families declare them (tables and factor levels follow it).
ARM_ORDER = tuple(dict.fromkeys(arm for f in registry.registered() for arm in f.arms))
FAMILY_ORDER = tuple(registry.names())
#: Families whose grader scores a similarity (the CoCoNUT similarity tables and plots).
SIMILARITY_FAMILIES = tuple(f.name for f in registry.registered() if f.has_similarity)


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (list, dict, tuple)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _float(value: Any) -> float:
    if value is None or value is pd.NA or isinstance(value, (list, dict, tuple, str)):
        try:
            return float(value) if isinstance(value, str) else math.nan
        except ValueError:
            return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _bool(value: Any) -> bool:
    if value is None or value is pd.NA:
        return False
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "c", "correct")
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def study_of(source_id: str | None) -> str | None:
    """The study (source pool) of a clean source: the first path component of its id."""
    if not source_id:
        return None
    return source_id.split("/", 1)[0]


def normalize(df: pd.DataFrame | Iterable[dict[str, Any]]) -> pd.DataFrame:
    """A copy of ``df`` with every column of :data:`COLUMNS`, coerced to its type.

    Missing defaults: ``completed`` True, ``correct`` False, ``setting`` = ``model``,
    ``study`` from ``source_id``, ``source_id`` = ``task_id``. Extra columns are kept.
    """
    frame = pd.DataFrame(df).copy() if not isinstance(df, pd.DataFrame) else df.copy()
    n = len(frame)
    if "completed" not in frame:
        frame["completed"] = True
    for col in TEXT_COLUMNS:
        if col not in frame:
            frame[col] = None
        frame[col] = pd.Series([_text(v) for v in frame[col]], index=frame.index, dtype=object)
    for col in FLOAT_COLUMNS:
        if col not in frame:
            frame[col] = math.nan
        frame[col] = pd.Series([_float(v) for v in frame[col]], index=frame.index, dtype=float)
    for col in BOOL_COLUMNS:
        if col not in frame:
            frame[col] = False
        frame[col] = pd.Series([_bool(v) for v in frame[col]], index=frame.index, dtype=bool)
    frame["correct"] = frame["correct"] & frame["completed"]
    frame["model"] = frame["model"].where(frame["model"].notna(), "unknown-model")
    frame["setting"] = frame["setting"].where(frame["setting"].notna(), frame["model"])
    frame["run"] = frame["run"].where(frame["run"].notna(), frame["setting"])
    frame["source_id"] = frame["source_id"].where(frame["source_id"].notna(), frame["task_id"])
    missing_study = frame["study"].isna()
    if missing_study.any():
        frame.loc[missing_study, "study"] = [study_of(s) for s in frame.loc[missing_study, "source_id"]]
    frame["family"] = frame["family"].where(frame["family"].notna(), "unknown")
    frame["arm"] = frame["arm"].where(frame["arm"].notna(), frame["family"])
    if n == 0:
        frame = frame.reset_index(drop=True)
    return frame


def families_present(df: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(df["family"].dropna()))
    return sorted(present, key=lambda f: (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else 99, f))


def ordered(values: Iterable[Any], order: Iterable[Any] = ()) -> list[Any]:
    """Distinct values, known ones in ``order`` first, the rest sorted as text."""
    order = list(order)
    seen = [v for v in dict.fromkeys(values) if v is not None and not (isinstance(v, float) and np.isnan(v))]
    return sorted(seen, key=lambda v: (order.index(v) if v in order else len(order), str(v)))
