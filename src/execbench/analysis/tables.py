"""Accuracy tables with Wilson intervals, completed-response (C/R) and all-planned (C/N).

- :func:`wilson`: the Wilson score interval of a binomial proportion (statsmodels).
- :func:`accuracy_table`: C, R, N and both accuracies with intervals per group
  (paper 001 table 3: model x arm; table 5: study x setting; paper 000 tables 2-3:
  difficulty and repository; appendix B.1: reasoning scope).
- :func:`length_buckets` / :func:`bucket_table`: CoCoNUT's six trace-length buckets
  (paper 002 tables IV-V).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from execbench.grading.accounting import account

Z95 = 1.959963984540054

#: CoCoNUT trace-length buckets (paper 002 appendix A, tables IV-V); intervals are left-closed,
#: as the published rows decide (115 of the 120 printed cells, benchmarks/RESULTS.md issue 37):
#: "1-3" holds lengths 1..2, "3-5" holds 3..4, "5-10" 5..9, "10-25" 10..24, "25-40" 25..39, "40+" 40 and more.
BUCKET_EDGES = (1, 3, 5, 10, 25, 40, math.inf)
BUCKET_LABELS = ("1-3", "3-5", "5-10", "10-25", "25-40", "40+")


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float, float]:
    """(proportion, low, high) of ``k`` successes in ``n`` trials (statsmodels' Wilson score
    interval at the two-sided level of ``z``); NaNs when ``n`` is 0."""
    from statsmodels.stats.proportion import proportion_confint

    if not n:
        return (math.nan, math.nan, math.nan)
    low, high = proportion_confint(k, n, alpha=2 * stats.norm.sf(z), method="wilson")
    return (k / n, max(0.0, float(low)), min(1.0, float(high)))


def accuracy_row(group: pd.DataFrame) -> dict[str, float]:
    """C, R, N and C/R, C/N with Wilson intervals for one group of rows."""
    counted = account(zip(group["completed"].astype(bool), group["correct"].astype(bool)))
    n, r, c = counted.planned, counted.completed, counted.correct
    cr, cr_lo, cr_hi = wilson(c, r)
    cn, cn_lo, cn_hi = wilson(c, n)
    return {"N": n, "R": r, "C": c, "acc_cr": cr, "acc_cr_low": cr_lo, "acc_cr_high": cr_hi,
            "acc_cn": cn, "acc_cn_low": cn_lo, "acc_cn_high": cn_hi}


ACCURACY_COLUMNS = ("N", "R", "C", "acc_cr", "acc_cr_low", "acc_cr_high", "acc_cn", "acc_cn_low", "acc_cn_high")


def accuracy_table(df: pd.DataFrame, by: Sequence[str], order: dict[str, Sequence] | None = None) -> pd.DataFrame:
    """One row per combination of ``by`` present in ``df`` (NaN keys dropped), with
    :func:`accuracy_row`'s columns; rows sorted by ``order`` (known values first)."""
    by = list(by)
    if df.empty:
        return pd.DataFrame(columns=[*by, *ACCURACY_COLUMNS])
    rows = []
    for key, group in df.groupby(by, sort=False, dropna=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), **accuracy_row(group)})
    table = pd.DataFrame(rows, columns=[*by, *ACCURACY_COLUMNS])
    return sort_by(table, by, order or {})


def sort_by(table: pd.DataFrame, by: Sequence[str], order: dict[str, Sequence]) -> pd.DataFrame:
    if table.empty:
        return table
    keys = []
    for col in by:
        known = list(order.get(col, ()))
        keys.append(table[col].map(lambda v, known=known: (known.index(v) if v in known else len(known), str(v))))
    sort_frame = pd.DataFrame({f"k{i}": k for i, k in enumerate(keys)})
    index = sorted(range(len(table)), key=lambda i: tuple(sort_frame.iloc[i]))
    return table.iloc[index].reset_index(drop=True)


def length_buckets(lengths: pd.Series) -> pd.Series:
    """The CoCoNUT bucket label of each length (None for a missing or non-positive length)."""
    values = pd.to_numeric(lengths, errors="coerce")
    cut = pd.cut(values, bins=list(BUCKET_EDGES), labels=list(BUCKET_LABELS), right=False)
    return pd.Series(cut.astype(object), index=lengths.index).where(values > 0, None)


def bucket_table(df: pd.DataFrame, by: Sequence[str], length: str) -> pd.DataFrame:
    """Accuracy per ``by`` x bucket of the ``length`` column (paper 002 tables IV-V: the trace
    family's ``AnalysisFacts.length_metric``), long format."""
    work = df.assign(bucket=length_buckets(df[length]) if length in df else None)
    work = work[work["bucket"].notna()]
    return accuracy_table(work, [*by, "bucket"], order={"bucket": BUCKET_LABELS})


def pivot(table: pd.DataFrame, index: Sequence[str], column: str, value: str = "acc_cr",
          order: Sequence | None = None) -> pd.DataFrame:
    """Wide view of a long accuracy table (e.g. settings x buckets)."""
    if table.empty:
        return pd.DataFrame()
    wide = table.pivot_table(index=list(index), columns=column, values=value, aggfunc="first", sort=False)
    if order is not None:
        wide = wide[[c for c in order if c in wide.columns]]
    return wide


def quantile_bins(values: pd.Series, bins: int = 5) -> pd.Series:
    """Equal-count bins of a metric (ties stay together, so there may be fewer bins),
    labelled by the range of their members ("12-40"); None where the value is missing."""
    x = pd.to_numeric(values, errors="coerce")
    labels = pd.Series([None] * len(x), index=x.index, dtype=object)
    ok = x.notna()
    if ok.sum() == 0 or x[ok].nunique() < 2:
        return labels
    codes = pd.qcut(x[ok], q=min(bins, int(x[ok].nunique())), labels=False, duplicates="drop")
    for code in sorted(codes.unique()):
        members = x[ok][codes == code]
        low, high = _fmt(members.min()), _fmt(members.max())
        labels.loc[members.index] = low if low == high else f"{low}-{high}"
    return labels


def bin_order(labels: pd.Series) -> list[str]:
    """Bin labels of :func:`quantile_bins` in increasing order."""
    def low(label: str) -> float:
        head = label.split("-")[0]
        scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(head[-1:], 1.0)
        try:
            return float(head.rstrip("kMG")) * scale
        except ValueError:
            return math.inf
    return sorted({v for v in labels.dropna()}, key=low)


def _fmt(x: float) -> str:
    """Compact number for bin labels: 12, 2.5, 3.9k, 1.2M."""
    x = float(x)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.2g}{suffix}" if abs(x) < 10 * scale else f"{x / scale:.0f}{suffix}"
    return f"{x:.0f}" if x.is_integer() else f"{x:.2g}"


def percent(x: float, digits: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * x:.{digits}f}"
