"""Two runs of the same model (paper 000 appendix B.4, tables 7-8; paper 002 §IV-C).

Runs are settings that share a model but differ in prompt variant, temperature or any
other configuration. :func:`run_pairs` lists the comparisons to make; for each,
:func:`cell_deltas` gives per-cell accuracies of both runs and their difference
(B minus A, completed responses), :func:`compare_runs` adds the matched-task summary
(correct->wrong / wrong->correct counts and the A-minus-B difference on tasks both runs
answered, with a source-clustered bootstrap interval), and :func:`correlation_stability`
the metric-accuracy Pearson r under both runs and its change.
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

import pandas as pd

from execbench.analysis.correlations import pearson_table
from execbench.analysis.paired import pair_runs, paired_summary
from execbench.analysis.schema import facts
from execbench.analysis.tables import accuracy_table

VARIANT_ORDER = ("direct", "cot")


def _setting_key(group: pd.DataFrame):
    first = group.drop_duplicates("setting").set_index("setting")

    def key(setting: str):
        variant = first.at[setting, "variant"] if "variant" in first else None
        temperature = first.at[setting, "temperature"] if "temperature" in first else None
        rank = VARIANT_ORDER.index(variant) if variant in VARIANT_ORDER else len(VARIANT_ORDER)
        temp = -1.0 if temperature is None or pd.isna(temperature) else float(temperature)
        return (rank, temp, setting)
    return key


def run_pairs(df: pd.DataFrame) -> list[tuple[str, str]]:
    """(setting A, setting B) for every two settings of one model that answered at least one
    common task; A is the baseline (direct before CoT, lower temperature first)."""
    pairs: list[tuple[str, str]] = []
    for _, group in df.groupby("model", sort=True):
        settings = sorted(group["setting"].dropna().unique(), key=_setting_key(group))
        tasks = {s: set(group.loc[(group["setting"] == s) & group["completed"], "task_id"]) for s in settings}
        pairs.extend((a, b) for a, b in combinations(settings, 2) if tasks[a] & tasks[b])
    return pairs


def cell_deltas(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per family x arm x slice (and an ``(all)`` row per family): acc A, acc B, delta (pp)."""
    rows = []
    two = df[df["setting"].isin([a, b])]
    for family, fam in two.groupby("family", sort=True):
        if fam["setting"].nunique() < 2:  # only one of the runs has this family
            continue
        declared = facts(str(family))
        slice_col = declared.cell_column if declared else None  # the family's repository / study / topic slice
        cuts: list[tuple[str, list[str]]] = [("(all)", [])]
        if fam["arm"].nunique() > 1:
            cuts.append(("arm", ["arm"]))
        if slice_col and fam[slice_col].notna().any():
            cuts.append((slice_col, [slice_col]))
        for label, cols in cuts:
            table = accuracy_table(fam, ["setting", *cols])
            if table.empty:
                continue
            keys = cols or []
            for key, cell in (table.groupby(keys, sort=True) if keys else [((None,), table)]):
                key = key if isinstance(key, tuple) else (key,)
                get = cell.set_index("setting")
                acc_a = get["acc_cr"].get(a)
                acc_b = get["acc_cr"].get(b)
                rows.append({
                    "family": family, "cell": label if not keys else f"{label}={key[0]}",
                    "n_a": int(get["R"].get(a, 0)), "acc_a": acc_a,
                    "acc_a_low": get["acc_cr_low"].get(a), "acc_a_high": get["acc_cr_high"].get(a),
                    "n_b": int(get["R"].get(b, 0)), "acc_b": acc_b,
                    "acc_b_low": get["acc_cr_low"].get(b), "acc_b_high": get["acc_cr_high"].get(b),
                    "delta": (acc_b - acc_a) if acc_a is not None and acc_b is not None else None,
                })
    return pd.DataFrame(rows)


def compare_runs(df: pd.DataFrame, a: str, b: str, replicates: int = 10_000) -> dict:
    """Matched-task summary of run A versus run B over all families."""
    pairs = pair_runs(df, a, b)
    summary = paired_summary(pairs, replicates=replicates)
    summary["per_family"] = {family: paired_summary(group, replicates=replicates)
                             for family, group in pairs.groupby("family", sort=True)}
    return summary


def correlation_stability(df: pd.DataFrame, a: str, b: str, metrics: Sequence[str], family: str) -> pd.DataFrame:
    """Pearson r of each metric with correctness under A and B and their difference (B - A)."""
    rows = df[(df["family"] == family) & df["setting"].isin([a, b])]
    table = pearson_table(rows, metrics, by=("setting",))
    if table.empty:
        return pd.DataFrame(columns=["metric", "r_a", "r_b", "delta", "note"])
    out = []
    for metric, group in table.groupby("metric", sort=False):
        get = group.set_index("setting")
        r_a, r_b = get["r"].get(a), get["r"].get(b)
        notes = [f"{s}: {n}" for s, n in get["note"].items() if isinstance(n, str)]
        out.append({"metric": metric, "r_a": r_a, "r_b": r_b,
                    "delta": (r_b - r_a) if r_a is not None and r_b is not None else None,
                    "note": "; ".join(notes) or None})
    return pd.DataFrame(out)
