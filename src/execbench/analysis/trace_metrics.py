"""Per-task metrics of line answers, CoCoNUT's (paper 002 §II-B, tables I-II), over the per-sample table.

The names are neutral (``per_task_row``, ``per_task_table``): any family whose grader scores a
similarity gets them; the report titles them as the family declares (``AnalysisFacts.per_task_title``).

Per group of rows (a setting, or setting x topic):

- ``accuracy``: fraction of traces correct (Wilson interval);
- ``acc_mean``: per task (``source_id``, e.g. one HumanEval problem) the fraction of its
  traces that are correct, averaged over tasks (interval: percentile bootstrap over tasks);
- ``acc_hard``: fraction of tasks whose traces are all correct (Wilson interval over tasks);
- ``similarity``: mean Gestalt similarity over traces; ``false_similarity``: the same over
  wrong traces only (intervals: bootstrap over tasks, all traces of a task together).

Both denominators are reported: ``cr`` (completed responses only) and ``cn`` (every
planned sample; a response that never arrived is wrong with similarity 0).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from execbench.analysis.bootstrap import cluster_ratio_interval
from execbench.analysis.schema import SIMILARITY_FAMILIES
from execbench.analysis.tables import wilson

DESCRIPTIVE_REPLICATES = 2_000


def per_task_row(group: pd.DataFrame, replicates: int = DESCRIPTIVE_REPLICATES, seed: int = 7) -> dict[str, float]:
    out: dict[str, float] = {"N": len(group), "R": int(group["completed"].sum()),
                             "tasks": int(group["source_id"].nunique())}
    for scope, rows in (("cr", group[group["completed"]]), ("cn", group)):
        correct = rows["correct"].astype(float)
        sim = rows["similarity"].where(rows["completed"], 0.0).fillna(0.0).astype(float)
        n = len(rows)
        acc, lo, hi = wilson(correct.sum(), n)
        out.update({f"accuracy_{scope}": acc, f"accuracy_{scope}_low": lo, f"accuracy_{scope}_high": hi})
        if n == 0:
            for key in ("acc_mean", "acc_hard", "similarity", "false_similarity"):
                out.update({f"{key}_{scope}": np.nan, f"{key}_{scope}_low": np.nan, f"{key}_{scope}_high": np.nan})
            continue
        per_task = pd.DataFrame({"task": rows["source_id"].astype(str), "c": correct, "s": sim,
                                 "wrong": 1.0 - correct, "ws": sim * (1.0 - correct)})
        tasks = per_task.groupby("task", sort=True).agg(c=("c", "sum"), n=("c", "size"), s=("s", "sum"),
                                                         wrong=("wrong", "sum"), ws=("ws", "sum"))
        task_acc = (tasks["c"] / tasks["n"]).to_numpy()
        mean = cluster_ratio_interval(task_acc, np.ones(len(task_acc)), replicates, seed)
        hard_k = float((tasks["c"] == tasks["n"]).sum())
        hard, hard_lo, hard_hi = wilson(hard_k, len(tasks))
        simi = cluster_ratio_interval(tasks["s"].to_numpy(), tasks["n"].to_numpy(), replicates, seed)
        if tasks["wrong"].sum() > 0:
            fsim = cluster_ratio_interval(tasks["ws"].to_numpy(), tasks["wrong"].to_numpy(), replicates, seed)
            fs = (fsim.estimate, fsim.low, fsim.high)
        else:
            fs = (np.nan, np.nan, np.nan)
        out.update({
            f"acc_mean_{scope}": mean.estimate, f"acc_mean_{scope}_low": mean.low, f"acc_mean_{scope}_high": mean.high,
            f"acc_hard_{scope}": hard, f"acc_hard_{scope}_low": hard_lo, f"acc_hard_{scope}_high": hard_hi,
            f"similarity_{scope}": simi.estimate, f"similarity_{scope}_low": simi.low,
            f"similarity_{scope}_high": simi.high,
            f"false_similarity_{scope}": fs[0], f"false_similarity_{scope}_low": fs[1],
            f"false_similarity_{scope}_high": fs[2],
        })
    return out


def per_task_table(df: pd.DataFrame, by: Sequence[str] = ("setting",),
                  replicates: int = DESCRIPTIVE_REPLICATES) -> pd.DataFrame:
    """:func:`per_task_row` for every group of ``by`` (rows of families that score a similarity)."""
    rows = df[df["family"].isin(SIMILARITY_FAMILIES)]
    out = []
    for key, group in rows.groupby(list(by), sort=True, dropna=True):
        key = key if isinstance(key, tuple) else (key,)
        out.append({**dict(zip(by, key)), **per_task_row(group, replicates)})
    return pd.DataFrame(out)


def paper_tables(df: pd.DataFrame, variants: Sequence[str], task_topic: str = "") -> pd.DataFrame:
    """The paper's own aggregation (CoCoNUT ``evaluate_performance``; ``--variant coconut``
    rows, graded by its rules) per setting and topic, without intervals: ``task_topic`` (a row
    without a topic has it; the family's ``paper_task_topic``, HumanEval) per task
    (``source_id``) mean correct, mean similarity, mean similarity of its wrong rows (0 when
    none) and all correct, each averaged over tasks; other topics means over rows. Every
    planned sample counts (a missing answer is wrong with similarity 0, as the paper's
    empty predictions were). ``variants``: the prompt variants scored this way (the family's
    ``paper_scoring_variants``); other rows are left out, and so are the tasks a replay file
    recorded no reply for (``replay == "missing"``: the paper's tables cover the rows it has)."""
    rows = df[df["variant"].isin(list(variants))] if "variant" in df else df.iloc[0:0]
    if "replay" in rows:
        rows = rows[rows["replay"] != "missing"]
    out = []
    for (setting, topic), group in rows.groupby(["setting", rows["topic"].fillna(task_topic)], sort=True):
        correct = group["correct"].astype(float)
        sim = group["similarity"].where(group["completed"], 0.0).fillna(0.0).astype(float)
        record: dict[str, Any] = {"setting": setting, "topic": topic, "variant": group["variant"].iloc[0],
                                  "N": len(group), "tasks": int(group["source_id"].nunique())}
        if topic == task_topic:
            frame = pd.DataFrame({"task": group["source_id"].astype(str), "c": correct, "s": sim,
                                  "ws": sim.where(correct == 0.0)})
            tasks = frame.groupby("task", sort=True).agg(c=("c", "mean"), s=("s", "mean"), ws=("ws", "mean"),
                                                         hard=("c", "min"))
            record.update(acc_hard=float(tasks["hard"].mean()), acc_mean=float(tasks["c"].mean()),
                          sim=float(tasks["s"].mean()), false_sim=float(tasks["ws"].fillna(0.0).mean()))
        else:
            record.update(acc_mean=float(correct.mean()), sim=float(sim.mean()))
        out.append(record)
    return pd.DataFrame(out)
