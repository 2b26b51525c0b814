"""Metric-accuracy relations (paper 000 §4.3, tables 4, 6 and 8; figure 2).

- :func:`pearson_table`: per series (a setting, usually), the Pearson correlation of each
  metric with correctness (0/1), its two-sided p-value and a Fisher-z 95% interval
  (scipy's ``pearsonr``).
- :func:`partial_table`: the partial correlation of each metric with correctness controlling
  for the others (residuals of OLS fits on the other metrics with an intercept); the
  p-value uses a t distribution with ``n - 2 - k`` degrees of freedom (k controls).
- :func:`binned_accuracy`: accuracy over equal-count bins of a metric (Wilson intervals).

A correlation is undefined when the outcome or the metric is constant in a series (for
example every answer wrong): such rows carry ``r = NaN`` and a ``note`` saying why.
Correlations use completed responses only (C/R), raw metric values as in the paper.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from execbench.analysis.tables import accuracy_table, bin_order, quantile_bins

MIN_ROWS = 4


def _constant_note(y: np.ndarray, x: np.ndarray, name: str) -> str | None:
    if len(y) < MIN_ROWS:
        return f"only {len(y)} responses with {name}"
    if np.all(y == y[0]):
        return "every answer correct" if y[0] else "every answer wrong"
    if np.all(x == x[0]):
        return f"{name} is constant"
    return None


def pearson(y: np.ndarray, x: np.ndarray, name: str = "metric") -> dict[str, float | str | None]:
    """Pearson's r with its two-sided p-value and scipy's Fisher-z 95% interval."""
    mask = np.isfinite(x) & np.isfinite(y)
    y, x = y[mask], x[mask]
    note = _constant_note(y, x, name)
    if note:
        return {"n": int(len(y)), "r": math.nan, "p": math.nan, "r_low": math.nan, "r_high": math.nan, "note": note}
    result = stats.pearsonr(x, y)
    r = float(result.statistic)
    if abs(r) < 1:
        interval = result.confidence_interval(confidence_level=0.95)
        low, high = float(interval.low), float(interval.high)
    else:  # a perfect fit: the Fisher transform is infinite
        low = high = math.nan
    return {"n": int(len(y)), "r": r, "p": float(result.pvalue), "r_low": low, "r_high": high, "note": None}


def pearson_table(df: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("setting",)) -> pd.DataFrame:
    """Long table: one row per series x metric."""
    rows = []
    data = df[df["completed"]]
    for key, group in data.groupby(list(by), sort=True, dropna=True):
        key = key if isinstance(key, tuple) else (key,)
        y = group["correct"].astype(float).to_numpy()
        for metric in metrics:
            if metric not in group or group[metric].notna().sum() == 0:
                continue
            x = group[metric].astype(float).to_numpy()
            rows.append({**dict(zip(by, key)), "metric": metric, **pearson(y, x, metric)})
    return pd.DataFrame(rows, columns=[*by, "metric", "n", "r", "p", "r_low", "r_high", "note"])


def partial_correlation(y: np.ndarray, x: np.ndarray, controls: np.ndarray) -> tuple[float, float, int]:
    """(r, two-sided p, n) of ``y`` and ``x`` after regressing both on ``controls`` (+ intercept)."""
    n = len(y)
    design = np.column_stack([np.ones(n), controls])
    ry = y - design @ np.linalg.lstsq(design, y, rcond=None)[0]
    rx = x - design @ np.linalg.lstsq(design, x, rcond=None)[0]
    denom = math.sqrt(float(ry @ ry) * float(rx @ rx))
    if denom <= 1e-12 * max(1.0, n):
        return (math.nan, math.nan, n)
    r = float(np.clip(ry @ rx / denom, -1.0, 1.0))
    dof = n - 2 - controls.shape[1]
    if dof <= 0:
        return (r, math.nan, n)
    t = r * math.sqrt(dof / max(1e-300, 1 - r * r))
    p = float(2 * stats.t.sf(abs(t), dof))
    return (r, p, n)


def partial_table(df: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("setting",)) -> pd.DataFrame:
    """Each metric's partial correlation with correctness controlling for the other metrics
    (paper 000 table 6); rows with a missing metric are dropped from that series."""
    rows = []
    metrics = [m for m in metrics if m in df and df[m].notna().any()]
    if len(metrics) < 2:
        return pd.DataFrame(columns=[*by, "metric", "controls", "n", "r", "p", "note"])
    data = df[df["completed"]].dropna(subset=metrics)
    for key, group in data.groupby(list(by), sort=True, dropna=True):
        key = key if isinstance(key, tuple) else (key,)
        y = group["correct"].astype(float).to_numpy()
        for metric in metrics:
            others = [m for m in metrics if m != metric]
            x = group[metric].astype(float).to_numpy()
            note = _constant_note(y, x, metric)
            if note is None and len(y) <= 2 + len(others):
                note = f"only {len(y)} responses for {len(others)} controls"
            if note:
                r, p = math.nan, math.nan
            else:
                r, p, _ = partial_correlation(y, x, group[others].astype(float).to_numpy())
                if not np.isfinite(r):
                    note = f"{metric} is a linear function of {', '.join(others)}"
            rows.append({**dict(zip(by, key)), "metric": metric, "controls": ", ".join(others),
                         "n": len(y), "r": r, "p": p, "note": note})
    return pd.DataFrame(rows, columns=[*by, "metric", "controls", "n", "r", "p", "note"])


def binned_accuracy(df: pd.DataFrame, metric: str, by: Sequence[str] = ("setting",), bins: int = 5) -> pd.DataFrame:
    """Accuracy (C/R and C/N) per ``by`` x equal-count bin of ``metric`` (bins from all rows,
    so every series shares the same bin edges)."""
    if metric not in df or df[metric].notna().sum() == 0:
        return pd.DataFrame()
    labels = quantile_bins(df[metric], bins)
    work = df.assign(bin=labels)
    work = work[work["bin"].notna()]
    table = accuracy_table(work, [*by, "bin"], order={"bin": bin_order(labels)})
    return table.assign(metric=metric)
