"""Source-clustered percentile bootstrap (paper 001 appendix D).

Every bootstrap statistic here is a *ratio of cluster sums*, ``sum(num) / sum(den)``:
a replicate draws G clusters with replacement (G = number of clusters), keeps all rows
of each drawn cluster together, and recomputes the ratio. This covers a paired
decrement (summed short-minus-long correctness over summed pair counts), an accuracy, an
accuracy drop, a memorisation rate and a mean of per-task accuracies (``den`` = 1 per task).
The seed is fixed, so a report is reproducible bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

DEFAULT_REPLICATES = 10_000
DEFAULT_SEED = 20240607
_CHUNK_CELLS = 4_000_000  # replicates x clusters held at once


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    clusters: int
    replicates: int

    def as_dict(self, prefix: str = "") -> dict[str, float]:
        return {f"{prefix}estimate": self.estimate, f"{prefix}low": self.low, f"{prefix}high": self.high}


def ratio_replicates(num: np.ndarray, den: np.ndarray, replicates: int = DEFAULT_REPLICATES,
                     seed: int = DEFAULT_SEED) -> np.ndarray:
    """Bootstrap replicates of ``sum(num)/sum(den)`` resampling whole clusters (one entry each)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    g = len(num)
    if g == 0:
        return np.full(replicates, np.nan)
    rng = np.random.default_rng(seed)
    out = np.empty(replicates)
    chunk = max(1, _CHUNK_CELLS // g)
    probs = np.full(g, 1.0 / g)
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        counts = rng.multinomial(g, probs, size=size).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + size] = (counts @ num) / (counts @ den)
    return out


def cluster_ratio_interval(num: np.ndarray, den: np.ndarray, replicates: int = DEFAULT_REPLICATES,
                           seed: int = DEFAULT_SEED, level: float = 0.95) -> Interval:
    """Point estimate and percentile interval of ``sum(num)/sum(den)`` over clusters."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    total = den.sum()
    estimate = float(num.sum() / total) if total else float("nan")
    if len(num) < 2:
        return Interval(estimate, float("nan"), float("nan"), len(num), 0)
    reps = ratio_replicates(num, den, replicates, seed)
    reps = reps[np.isfinite(reps)]
    alpha = (1 - level) / 2
    low, high = np.quantile(reps, [alpha, 1 - alpha]) if len(reps) else (float("nan"), float("nan"))
    return Interval(estimate, float(low), float(high), len(num), replicates)


def clustered(df: pd.DataFrame, num: str, den: str | None = None, cluster: str = "source_id",
              replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED) -> Interval:
    """:func:`cluster_ratio_interval` of row columns ``num`` (and ``den``, default 1 per row)."""
    work = pd.DataFrame({"num": df[num].astype(float),
                         "den": df[den].astype(float) if den else 1.0,
                         "cluster": df[cluster].fillna("?").astype(str)})
    sums = work.groupby("cluster", sort=True)[["num", "den"]].sum()
    return cluster_ratio_interval(sums["num"].to_numpy(), sums["den"].to_numpy(), replicates, seed)
