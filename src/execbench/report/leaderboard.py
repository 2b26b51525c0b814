"""The report's first section: one ranked table of every setting (model x prompt variant) over the
families and arms of the logs, and paired comparisons of neighbours in the ranking.

Ranking: accuracy over every planned sample of the setting (C/N: a missing or failed response
is wrong), Wilson 95% interval; a setting's cells are its families/arms (a family with one arm
is one cell). Where a setting's variant is a peer benchmark's own scoring
(a family's ``PaperScoring`` variants), the peer's headline figure is shown beside it (the peer's
per-task mean accuracy over its task topic: CoCoNUT's Acc Mean). Paired comparisons: for
each two settings next to each other in the ranking that answered common tasks, the
tasks both planned, the discordant counts, the difference with a source-clustered bootstrap
interval (``analysis.paired``) and McNemar's exact p-value; fewer than
:data:`MIN_PAIRED` common tasks is "too few samples", never a finding.
"""

from __future__ import annotations

from html import escape as esc
from typing import Any

import pandas as pd
from scipy import stats

from execbench import registry
from execbench.contract import PaperScoring
from execbench.analysis import paired
from execbench.analysis import tables as T
from execbench.analysis.schema import families_present, ordered
from execbench.analysis.trace_metrics import paper_tables
from execbench.report.tables import MIN_SAMPLES, TOO_FEW, Col, Table, enough, fmt_pct

MIN_PAIRED = MIN_SAMPLES  # common tasks below which a paired comparison is "too few samples"


def cells(df: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(family, arm, label) of every cell present, in family then arm order."""
    out = []
    for family in families_present(df):
        arms = ordered(df.loc[df["family"] == family, "arm"].dropna())
        declared = list(registry.get(family).arms) if family in registry.names() else []
        arms = sorted(arms, key=lambda a: declared.index(a) if a in declared else len(declared))
        for arm in arms:
            out.append((family, arm, family if len(arms) == 1 else f"{family}: {arm}"))
    return out


def _paper_figure(group: pd.DataFrame) -> tuple[float, str] | None:
    """The peer benchmark's headline figure of one setting's rows, when its variant is a peer's scoring."""
    for family in families_present(group):
        if family not in registry.names():
            continue
        paper = registry.get(family).capability(PaperScoring)
        if paper is None or not paper.variants:
            continue
        rows = group[group["family"] == family]
        tables = paper_tables(rows, paper.variants, paper.task_topic)
        if tables.empty:
            continue
        main = tables[tables["topic"] == paper.task_topic]
        chosen = main if not main.empty else tables
        return float(chosen["acc_mean"].iloc[0]), f"{family} {chosen['topic'].iloc[0]} Acc Mean"
    return None


def replayed(group: pd.DataFrame) -> bool:
    """Whether a setting's answers are recorded predictions played back (``--model replay/FILE``: the
    per-sample ``replay`` column says ``recorded`` or ``missing``), not a model run live."""
    return "replay" in group and bool(group["replay"].notna().any())


def ranking(df: pd.DataFrame) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    present = cells(df)
    rows = []
    for setting, group in df.groupby("setting", sort=False):
        row: dict[str, Any] = {"setting": setting, "model": group["model"].iloc[0],
                               "variant": group["variant"].iloc[0]}
        overall = T.accuracy_row(group)
        row.update(N=overall["N"], C=overall["C"], acc=overall["acc_cn"], acc_low=overall["acc_cn_low"],
                   acc_high=overall["acc_cn_high"])
        for index, (family, arm, _) in enumerate(present):
            part = group[(group["family"] == family) & (group["arm"] == arm)]
            if len(part):
                cell = T.accuracy_row(part)
                row[f"c{index}"], row[f"c{index}_lo"], row[f"c{index}_hi"] = \
                    cell["acc_cn"], cell["acc_cn_low"], cell["acc_cn_high"]
                row[f"c{index}_n"] = cell["N"]
        row["answers"] = "replayed" if replayed(group) else "live"
        figure = _paper_figure(group)
        if figure is not None:
            row["paper"], row["paper_what"] = figure
        rows.append(row)
    rows.sort(key=lambda r: (-(r["acc"] if r["acc"] == r["acc"] else -1.0), str(r["setting"])))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows, present


def pair_settings(df: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Tasks planned in both settings (first epoch): ``a``/``b`` correctness (no response = wrong)."""
    cols = ["task_id", "source_id", "correct"]
    one = df[df["setting"] == a].sort_values("epoch").drop_duplicates("task_id")[cols]
    two = df[df["setting"] == b].sort_values("epoch").drop_duplicates("task_id")[["task_id", "correct"]]
    merged = one.merge(two, on="task_id", suffixes=("_a", "_b"))
    return pd.DataFrame({"task_id": merged["task_id"], "source_id": merged["source_id"],
                         "a": merged["correct_a"].astype(bool), "b": merged["correct_b"].astype(bool)})


def comparisons(df: pd.DataFrame, ranked: list[dict[str, Any]], replicates: int) -> list[dict[str, Any]]:
    out = []
    for upper, lower in zip(ranked, ranked[1:]):
        pairs = pair_settings(df, upper["setting"], lower["setting"])
        row: dict[str, Any] = {"a": upper["setting"], "b": lower["setting"], "pairs": len(pairs)}
        if len(pairs) < MIN_PAIRED:
            row["note"] = TOO_FEW + (f" ({len(pairs)} common tasks)" if len(pairs) else ": no common tasks")
            out.append(row)
            continue
        summary = paired.paired_summary(pairs, replicates=replicates)
        discordant = summary["correct_to_wrong"] + summary["wrong_to_correct"]
        p_value = (stats.binomtest(summary["correct_to_wrong"], discordant).pvalue if discordant else 1.0)
        row.update(sources=summary["sources"], a_only=summary["correct_to_wrong"], b_only=summary["wrong_to_correct"],
                   delta=summary["decrement"], d_low=summary["low"], d_high=summary["high"], p=p_value,
                   note=summary["note"] or (f"{TOO_FEW} (no discordant tasks: the two settings agree on every "
                                            "common task)" if not discordant else None))
        if not discordant:  # a difference of 0 with a zero-width interval is not a finding
            row.update(delta=None, d_low=None, d_high=None, p=None)
        out.append(row)
    return out


def leaderboard_section(df: pd.DataFrame, replicates: int, headlines: list[str], section: Any) -> Any:
    """Fill ``section`` (the report's first) with the ranking and the neighbour comparisons."""
    ranked, present = ranking(df)
    columns = [Col("Rank", "rank", "int"), Col("Setting", "setting"), Col("Model", "model"), Col("Variant", "variant"),
               Col("Answers", "answers", tip="live: the model ran; replayed: recorded predictions played back "
                   "(--model replay/FILE)"),
               Col("N", "N", "int", "planned samples"),
               Col("Accuracy C/N %", ("acc", "acc_low", "acc_high"), "pct_ci",
                   "correct over every planned sample (no response = wrong), Wilson 95% interval")]
    for index, (_, _, label) in enumerate(present):
        columns.append(Col(f"{label} %", (f"c{index}", f"c{index}_lo", f"c{index}_hi"), "pct_ci",
                           f"C/N accuracy on {label} tasks, Wilson 95% interval"))
    if any("paper" in row for row in ranked):
        columns += [Col("Paper figure %", "paper", "pct", "the peer benchmark's own aggregation, where the "
                        "setting's variant is its scoring (per-task mean accuracy over its task topic)"),
                    Col("Paper figure", "paper_what")]
    section.table(Table("Leaderboard: every setting ranked by accuracy over its planned samples", columns, ranked,
                        caption="A setting is a model with a prompt variant. With one reply per task, a cell's C/N "
                                "is pass@1. Settings that ran different tasks are ranked on different samples: "
                                "compare them through the paired table below."))
    played = [str(row["setting"]) for row in ranked if row["answers"] == "replayed"]
    if played:
        section.note("Replayed, not run: " + ", ".join(played) + (" answer" if len(played) > 1 else " answers")
                     + " with recorded predictions played back through the same pipeline (--model replay/FILE; "
                     "docs/eval.md). Their prompts in the logs are execbench's; the replies were made elsewhere.")
    if len(ranked) > 1:
        rows = comparisons(df, ranked, replicates)
        section.table(Table("Neighbours in the ranking, paired on their common tasks", [
            Col("Higher", "a"), Col("Lower", "b"), Col("Common tasks", "pairs", "int"), Col("Sources", "sources", "int"),
            Col("Only higher right", "a_only", "int"), Col("Only lower right", "b_only", "int"),
            Col("Δ (pp)", ("delta", "d_low", "d_high"), "pp_ci", "higher minus lower, source-clustered bootstrap"),
            Col("McNemar p", "p", "pval", "exact binomial test on the discordant tasks"), Col("Note", "note")], rows))
    if ranked and enough(ranked[0]["N"]):
        best = ranked[0]
        headlines.insert(0, f"Leaderboard: <b>{esc(str(best['setting']))}</b> ranks first at "
                            f"{fmt_pct(best['acc'])}% [{fmt_pct(best['acc_low'])}, {fmt_pct(best['acc_high'])}] "
                            f"correct over {int(best['N'])} planned samples ({len(ranked)} settings).")
    return section
