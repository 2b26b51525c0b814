"""Paired comparisons on the same tasks (paper 001 §5.1 and table 7; paper 000 appendix B.4).

:func:`short_long_pairs` matches, per setting, the answers of a case's two paired arms (the
state family's shorter- and longer-input final output, ``AnalysisFacts.paired_arms``: same
source bytes, different input).
:func:`paired_summary` counts correct->wrong and wrong->correct changes and gives the
paired short-minus-long decrement with a source-clustered percentile bootstrap interval:
10,000 replicates draw clean-source clusters with replacement, keep every pair of a drawn
cluster (all settings), and divide the summed short-minus-long correctness by the summed
pair count. Only pairs whose two responses both completed are used.

:func:`pair_runs` / :func:`paired_summary` also serve the comparison of two runs of one
model (temperature 0 vs 1, direct vs CoT): there the "short" side is run A and the
"long" side run B, matched on the task id.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from execbench import registry
from execbench.analysis.bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, cluster_ratio_interval
from execbench.dataset import DatasetError


def case_key(task_id: str) -> str:
    """The task id without its arm (parsed by the family's id parser): what the arms of one
    case share. An id that does not parse is its own case."""
    try:
        parts = registry.parse_id(task_id or "")
    except DatasetError:
        return task_id or ""
    return f"{parts.family}/{parts.source}/{parts.case}"


def short_long_pairs(df: pd.DataFrame, short: str, long: str) -> pd.DataFrame:
    """One row per (setting, case) with both arms completed: columns ``a`` (short correct),
    ``b`` (long correct), ``source_id``, ``setting``, ``case``. Repeated epochs are averaged
    out by keeping the first epoch."""
    rows = df[df["arm"].isin([short, long]) & df["completed"]].copy()
    if rows.empty:
        return pd.DataFrame(columns=["setting", "case", "source_id", "a", "b"])
    rows["case"] = rows["task_id"].map(case_key)
    rows = rows.sort_values("epoch", na_position="last").drop_duplicates(["setting", "case", "arm"])
    wide = rows.pivot_table(index=["setting", "case"], columns="arm", values="correct", aggfunc="first")
    if short not in wide or long not in wide:
        return pd.DataFrame(columns=["setting", "case", "source_id", "a", "b"])
    wide = wide.dropna(subset=[short, long]).reset_index()
    sources = rows.drop_duplicates(["setting", "case"]).set_index(["setting", "case"])["source_id"]
    wide["source_id"] = [sources.get((s, c)) for s, c in zip(wide["setting"], wide["case"])]
    return pd.DataFrame({"setting": wide["setting"], "case": wide["case"], "source_id": wide["source_id"],
                         "a": wide[short].astype(bool), "b": wide[long].astype(bool)})


def language_pairs(df: pd.DataFrame, first: str, second: str) -> pd.DataFrame:
    """One row per (setting, program pair, arm) answered (completed) in both languages: the
    same program written in ``first`` and in ``second`` (tasks sharing the ``pair`` column,
    e.g. the state family's paired corpus); ``a``/``b`` are the two languages' correctness,
    ``source_id`` is the pair (the bootstrap cluster: both languages of one program)."""
    columns = ["setting", "pair", "arm", "source_id", "a", "b"]
    rows = df[df["pair"].notna() & df["completed"] & df["language"].isin([first, second])].copy()
    if rows.empty:
        return pd.DataFrame(columns=columns)
    rows = rows.sort_values("epoch", na_position="last").drop_duplicates(["setting", "pair", "arm", "language"])
    wide = rows.pivot_table(index=["setting", "pair", "arm"], columns="language", values="correct", aggfunc="first")
    if first not in wide or second not in wide:
        return pd.DataFrame(columns=columns)
    wide = wide.dropna(subset=[first, second]).reset_index()
    return pd.DataFrame({"setting": wide["setting"], "pair": wide["pair"], "arm": wide["arm"],
                         "source_id": wide["pair"], "a": wide[first].astype(bool), "b": wide[second].astype(bool)})


def pair_runs(df: pd.DataFrame, setting_a: str, setting_b: str) -> pd.DataFrame:
    """Tasks answered (completed) in both settings: ``a``/``b`` are their correctness."""
    cols = ["task_id", "source_id", "family", "arm", "correct"]
    one = df[(df["setting"] == setting_a) & df["completed"]].drop_duplicates("task_id")[cols]
    two = df[(df["setting"] == setting_b) & df["completed"]].drop_duplicates("task_id")[["task_id", "correct"]]
    merged = one.merge(two, on="task_id", suffixes=("_a", "_b"))
    return pd.DataFrame({"task_id": merged["task_id"], "source_id": merged["source_id"],
                         "family": merged["family"], "arm": merged["arm"],
                         "a": merged["correct_a"].astype(bool), "b": merged["correct_b"].astype(bool)})


def paired_summary(pairs: pd.DataFrame, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED) -> dict:
    """Counts and the a-minus-b decrement (in proportion units) with its clustered interval."""
    n = len(pairs)
    if n == 0:
        return {"pairs": 0, "sources": 0, "correct_to_wrong": 0, "wrong_to_correct": 0, "both_correct": 0,
                "both_wrong": 0, "acc_a": np.nan, "acc_b": np.nan, "decrement": np.nan,
                "low": np.nan, "high": np.nan, "note": "no matched pairs"}
    a = pairs["a"].astype(float)
    b = pairs["b"].astype(float)
    sums = pd.DataFrame({"diff": a - b, "one": 1.0, "cluster": pairs["source_id"].fillna("?").astype(str)}) \
        .groupby("cluster", sort=True)[["diff", "one"]].sum()
    interval = cluster_ratio_interval(sums["diff"].to_numpy(), sums["one"].to_numpy(), replicates, seed)
    note = None
    if interval.clusters < 2:
        note = "a single source cluster: no interval"
    return {
        "pairs": n, "sources": interval.clusters,
        "correct_to_wrong": int(((a == 1) & (b == 0)).sum()), "wrong_to_correct": int(((a == 0) & (b == 1)).sum()),
        "both_correct": int(((a == 1) & (b == 1)).sum()), "both_wrong": int(((a == 0) & (b == 0)).sum()),
        "acc_a": float(a.mean()), "acc_b": float(b.mean()),
        "decrement": interval.estimate, "low": interval.low, "high": interval.high, "note": note,
    }
