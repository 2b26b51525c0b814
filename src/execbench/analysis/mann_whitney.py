"""Normalised Mann-Whitney statistic with a fixed-seed permutation test (paper 001 appendix E).

For a series of (x, y) points with y = 0 a failure and y = 1 a success,

    theta = 1 / (n_f n_s) * sum over failures f and successes s of [x_f > x_s] + 1/2 [x_f = x_s]

so theta > 0.5 means failures tend to have larger metric values. The one-sided p-value
shuffles the outcome labels ``permutations`` times (fixed seed) and is
``(1 + #{theta_perm >= theta}) / (1 + permutations)``. All-correct and all-wrong series are
inestimable. A series is "supported" when theta > 0.5 and p < 0.05 (unadjusted, as in the
paper); Benjamini-Hochberg adjusted p-values over the whole table are given alongside.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

DEFAULT_PERMUTATIONS = 10_000
DEFAULT_SEED = 20240607
_CHUNK_CELLS = 2_000_000


def theta(x: np.ndarray, failed: np.ndarray) -> float:
    """The normalised rank statistic (midranks handle ties as 1/2)."""
    x = np.asarray(x, dtype=float)
    failed = np.asarray(failed, dtype=bool)
    n_f, n_s = int(failed.sum()), int((~failed).sum())
    if n_f == 0 or n_s == 0:
        return math.nan
    ranks = stats.rankdata(x)
    return float((ranks[failed].sum() - n_f * (n_f + 1) / 2) / (n_f * n_s))


def permutation_test(x: np.ndarray, failed: np.ndarray, permutations: int = DEFAULT_PERMUTATIONS,
                     seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """(theta, one-sided permutation p-value for theta > 0.5)."""
    x = np.asarray(x, dtype=float)
    failed = np.asarray(failed, dtype=bool)
    n = len(x)
    n_f = int(failed.sum())
    n_s = n - n_f
    if n_f == 0 or n_s == 0:
        return (math.nan, math.nan)
    ranks = stats.rankdata(x)
    observed = ranks[failed].sum()
    rng = np.random.default_rng(seed)
    labels = failed.astype(float)
    chunk = max(1, _CHUNK_CELLS // max(1, n))
    at_least = 0
    for start in range(0, permutations, chunk):
        size = min(chunk, permutations - start)
        shuffled = rng.permuted(np.broadcast_to(labels, (size, n)), axis=1)
        sums = shuffled @ ranks
        at_least += int(np.sum(sums >= observed - 1e-9))
    value = (observed - n_f * (n_f + 1) / 2) / (n_f * n_s)
    return (float(value), (1 + at_least) / (1 + permutations))


def theta_table(df: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("setting",),
                permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """One row per series (group of ``by``) x metric, completed responses only."""
    rows = []
    data = df[df["completed"]]
    for key, group in data.groupby(list(by), sort=True, dropna=True):
        key = key if isinstance(key, tuple) else (key,)
        for metric in metrics:
            if metric not in group:
                continue
            sub = group[group[metric].notna()]
            if sub.empty:
                continue
            failed = ~sub["correct"].to_numpy(dtype=bool)
            row = {**dict(zip(by, key)), "metric": metric, "n": len(sub),
                   "failures": int(failed.sum()), "successes": int((~failed).sum())}
            if failed.all() or (~failed).all():
                row.update(theta=math.nan, p=math.nan, note="all wrong" if failed.all() else "all correct")
            else:
                value, p = permutation_test(sub[metric].to_numpy(dtype=float), failed, permutations, seed)
                row.update(theta=value, p=p, note=None)
            rows.append(row)
    table = pd.DataFrame(rows, columns=[*by, "metric", "n", "failures", "successes", "theta", "p", "note"])
    table["p_bh"] = benjamini_hochberg(table["p"]) if len(table) else []
    table["supported"] = (table["theta"] > 0.5) & (table["p"] < 0.05)
    return table


def benjamini_hochberg(p: pd.Series) -> pd.Series:
    """BH-adjusted p-values (statsmodels' ``fdr_bh``) over the finite entries; NaN stays NaN."""
    from statsmodels.stats.multitest import multipletests

    values = p.to_numpy(dtype=float)
    out = np.full(len(values), np.nan)
    ok = np.isfinite(values)
    if ok.any():
        out[ok] = multipletests(values[ok], method="fdr_bh")[1]
    return pd.Series(out, index=p.index)
