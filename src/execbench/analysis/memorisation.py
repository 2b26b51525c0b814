"""Memorisation rate on paired original/mutated tasks (paper 000 §4.4).

A mutated task names its original in ``provenance.original_id`` (column ``original_id``).
Per run (column ``run``: the setting without its `` · mutated`` suffix), every mutated task
whose original was answered in the same run forms a pair (both responses completed). Then

    MR   = P(pass_orig and not pass_mut)         (the "pairwise memorisation rate")
    drop = P(pass_orig) - P(pass_mut)            (accuracy drop on the paired tasks)

with percentile intervals from a bootstrap that resamples clean-source clusters (the
original's ``source_id``) and keeps all pairs of a cluster together; MR also gets a Wilson
interval. ``P(not pass_orig and pass_mut)`` is reported as the reverse rate.
"""

from __future__ import annotations

import pandas as pd

from execbench.analysis.bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, cluster_ratio_interval
from execbench.analysis.tables import wilson


def mutation_pairs(df: pd.DataFrame) -> pd.DataFrame:
    """Rows (setting, original_id, task_id, source_id, orig, mut) for every matched pair;
    ``setting`` here is the run both answers belong to."""
    done = df[df["completed"]]
    if "run" in done:
        done = done.assign(setting=done["run"].where(done["run"].notna(), done["setting"]))
    mutated = done[done["original_id"].notna()]
    originals = done[done["original_id"].isna()].drop_duplicates(["setting", "task_id"])
    if mutated.empty or originals.empty:
        return pd.DataFrame(columns=["setting", "original_id", "task_id", "source_id", "orig", "mut"])
    merged = mutated[["setting", "task_id", "original_id", "correct"]].merge(
        originals[["setting", "task_id", "source_id", "correct"]].rename(
            columns={"task_id": "original_id", "correct": "orig"}),
        on=["setting", "original_id"])
    return pd.DataFrame({"setting": merged["setting"], "original_id": merged["original_id"],
                         "task_id": merged["task_id"], "source_id": merged["source_id"],
                         "orig": merged["orig"].astype(bool), "mut": merged["correct"].astype(bool)})


def memorisation(pairs: pd.DataFrame, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED) -> dict:
    """MR, reverse rate and accuracy drop with clustered intervals for one set of pairs."""
    n = len(pairs)
    if n == 0:
        return {"pairs": 0, "note": "no original/mutated pairs"}
    orig = pairs["orig"].to_numpy(dtype=float)
    mut = pairs["mut"].to_numpy(dtype=float)
    frame = pd.DataFrame({"mr": orig * (1 - mut), "rev": (1 - orig) * mut, "drop": orig - mut, "one": 1.0,
                          "cluster": pairs["source_id"].fillna("?").astype(str)})
    sums = frame.groupby("cluster", sort=True)[["mr", "rev", "drop", "one"]].sum()
    mr = cluster_ratio_interval(sums["mr"].to_numpy(), sums["one"].to_numpy(), replicates, seed)
    drop = cluster_ratio_interval(sums["drop"].to_numpy(), sums["one"].to_numpy(), replicates, seed)
    mr_w = wilson(frame["mr"].sum(), n)
    return {
        "pairs": n, "sources": len(sums),
        "acc_orig": float(orig.mean()), "acc_mut": float(mut.mean()),
        "mr": mr.estimate, "mr_low": mr.low, "mr_high": mr.high,
        "mr_wilson_low": mr_w[1], "mr_wilson_high": mr_w[2],
        "reverse": float(frame["rev"].mean()),
        "drop": drop.estimate, "drop_low": drop.low, "drop_high": drop.high,
        "note": "a single source cluster: no bootstrap interval" if len(sums) < 2 else None,
    }


def memorisation_table(df: pd.DataFrame, replicates: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    pairs = mutation_pairs(df)
    rows = [{"setting": setting, **memorisation(group, replicates, seed)}
            for setting, group in pairs.groupby("setting", sort=True)]
    return pd.DataFrame(rows)

