"""The contamination view (issue 26): accuracy by when a task's code was released.

Shown when samples carry a ``release_date`` (``provenance.release_date`` of a task, any
family: the repo family stamps it on tasks built from a release window). Per setting:

- accuracy by release month (a plot and a table; Wilson 95% intervals);
- accuracy on tasks released before vs on/after a cutoff: ``execbench report --cutoff
  DATE``, else the model's training-data cutoff when Inspect's model data knows it
  (``eval.model_cutoff``); each side with a Wilson interval (statsmodels), the difference
  with Newcombe's hybrid-score interval and a two-sided test of equal proportions
  (Fisher's exact test, scipy: exact at any count, where a z-test is not). Tasks are counted
  once per sample; a setting with one side empty gets no test.

A model that memorised its training data should do better before its cutoff; a living
benchmark keeps the "after" side. Accuracy here is correct / all samples of the setting
(incomplete responses count as wrong), as in the overview's C/N.
"""

from __future__ import annotations

from html import escape as esc
from typing import Any

import pandas as pd

from execbench.report import figures as F
from execbench.report.tables import Col, Table, enough, records

Z95 = 1.959963984540054


def _dated(df: pd.DataFrame) -> pd.DataFrame:
    if "release_date" not in df or not df["release_date"].notna().any():
        return df.iloc[0:0].assign(released=pd.Series(dtype="datetime64[ns, UTC]"))
    rows = df[df["release_date"].notna()].copy()
    rows["released"] = pd.to_datetime(rows["release_date"], errors="coerce", utc=True)
    return rows[rows["released"].notna()]


def wilson(correct: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(correct, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def by_month(df: pd.DataFrame) -> pd.DataFrame:
    """setting, month (YYYY-MM), n, correct, acc_cr with its Wilson interval."""
    rows = _dated(df)
    out = []
    for (setting, month), group in rows.groupby(["setting", rows["released"].dt.strftime("%Y-%m")], sort=True):
        n, correct = len(group), int(group["correct"].sum())
        low, high = wilson(correct, n)
        out.append({"setting": setting, "month": month, "n": n, "correct": correct, "acc_cr": correct / n,
                    "acc_cr_low": low, "acc_cr_high": high})
    return pd.DataFrame(out, columns=["setting", "month", "n", "correct", "acc_cr", "acc_cr_low", "acc_cr_high"])


def newcombe(c1: int, n1: int, c2: int, n2: int) -> tuple[float, float]:
    """Newcombe's hybrid-score 95% interval of p2 - p1 (from the two Wilson intervals)."""
    p1, p2 = c1 / n1, c2 / n2
    l1, u1 = wilson(c1, n1)
    l2, u2 = wilson(c2, n2)
    d = p2 - p1
    return d - ((p2 - l2) ** 2 + (u1 - p1) ** 2) ** 0.5, d + ((u2 - p2) ** 2 + (p1 - l1) ** 2) ** 0.5


def before_after(df: pd.DataFrame, cutoff: str) -> pd.DataFrame:
    """Per setting: accuracy before and on/after ``cutoff`` (YYYY-MM-DD), the difference
    (after - before) with Newcombe's interval, and Fisher's exact p-value."""
    from scipy.stats import fisher_exact

    rows = _dated(df)
    moment = pd.Timestamp(cutoff, tz="UTC")
    out = []
    for setting, group in rows.groupby("setting", sort=True):
        before, after = group[group["released"] < moment], group[group["released"] >= moment]
        record: dict[str, Any] = {"setting": setting, "cutoff": cutoff, "n_before": len(before), "n_after": len(after)}
        for side, part in (("before", before), ("after", after)):
            correct = int(part["correct"].sum())
            record[f"correct_{side}"] = correct
            record[f"acc_{side}"], (record[f"acc_{side}_low"], record[f"acc_{side}_high"]) = (
                (correct / len(part), wilson(correct, len(part))) if len(part) else (None, (None, None)))
        if len(before) and len(after):
            cb, ca = record["correct_before"], record["correct_after"]
            record["delta"] = record["acc_after"] - record["acc_before"]
            record["delta_low"], record["delta_high"] = newcombe(cb, len(before), ca, len(after))
            record["p"] = float(fisher_exact([[cb, len(before) - cb], [ca, len(after) - ca]])[1])
            record["note"] = ""
        else:
            record.update(delta=None, delta_low=None, delta_high=None, p=None,
                          note="no tasks released " + ("after" if len(before) else "before") + " the cutoff")
        out.append(record)
    return pd.DataFrame(out)


def model_cutoffs(df: pd.DataFrame) -> dict[str, str]:
    """setting -> the model's training-data cutoff, where Inspect's model data knows it."""
    from execbench.eval.model_info import knowledge_cutoff

    found = {}
    for setting, model in df[["setting", "model"]].drop_duplicates().itertuples(index=False):
        cutoff = knowledge_cutoff(str(model))
        if cutoff:
            found[setting] = cutoff
    return found


#: The section's header (``report.sections.Section`` arguments; sections.py builds it).
SECTION: dict[str, str] = {"id": "contamination", "title": "Contamination: accuracy by release date",
           "paper": "issue 26; LiveCodeBench's time split at repository level", "nav": "Release dates"}


def has_dates(df: pd.DataFrame) -> bool:
    return not _dated(df).empty


def month_range(months: list[str]) -> list[str]:
    """Every month from the first to the last of ``months`` (YYYY-MM), so the axis keeps time's
    proportions: a month without tasks is a gap, not a neighbour."""
    if not months:
        return []
    span = pd.period_range(min(months), max(months), freq="M")
    return [str(m) for m in span]


def cutoff_position(cutoff: str, order: list[str]) -> float:
    """Where day ``cutoff`` falls on a month axis (month ``i`` is drawn at ``i``, spanning
    ``i - 0.5`` to ``i + 0.5``): the 1st of a month is its left edge."""
    day = pd.Timestamp(cutoff)
    start = pd.Period(order[0], freq="M")
    index = (day.year - start.year) * 12 + day.month - start.month
    return index - 0.5 + (day.day - 1) / day.days_in_month


def fill(sec: Any, df: pd.DataFrame, cutoff: str | None, headlines: list[str]) -> Any:
    """Fill the report section ``sec`` (figure, tables, notes; headlines appended)."""
    months = by_month(df)
    order = month_range(list(months["month"]))
    colors = F.color_map(list(dict.fromkeys(months["setting"])))
    cutoffs = {setting: cutoff for setting in months["setting"].unique()} if cutoff else model_cutoffs(df)
    marks = [(x, f"cutoff {day}") for day in sorted(set(cutoffs.values()))
             if -0.5 <= (x := cutoff_position(day, order)) <= len(order) - 0.5]  # a far cutoff: no line
    sec.figure(F.accuracy_lines(months, "month", order, colors, "Accuracy by release month", "release month",
                                ylabel="accuracy (%, C/N)", marks=marks),
               "Accuracy (correct of all samples, C/N) of tasks by the month their code was released, Wilson 95% "
               "intervals; the dashed line is the cutoff.", "accuracy by release month")
    sec.table(Table("Accuracy by release month", [
        Col("Setting", "setting"), Col("Month", "month"), Col("Tasks", "n", "int"),
        Col("C/N %", ("acc_cr", "acc_cr_low", "acc_cr_high"), "pct_ci", "Wilson 95%")], records(months)))
    if not cutoffs:
        sec.note("No cutoff: pass --cutoff YYYY-MM-DD (Inspect's model data knows no cutoff of these models).")
        return sec
    split = pd.concat([before_after(df[df["setting"] == s], c) for s, c in cutoffs.items()], ignore_index=True)
    sec.table(Table("Before vs after the cutoff", [
        Col("Setting", "setting"), Col("Cutoff", "cutoff"), Col("Before", "n_before", "int"),
        Col("Before C/N %", ("acc_before", "acc_before_low", "acc_before_high"), "pct_ci", "Wilson 95%"),
        Col("After", "n_after", "int"),
        Col("After C/N %", ("acc_after", "acc_after_low", "acc_after_high"), "pct_ci", "Wilson 95%"),
        Col("After − before (pp)", ("delta", "delta_low", "delta_high"), "pp_ci", "Newcombe 95%"),
        Col("p (Fisher)", "p", "pval"), Col("Note", "note")], records(split)))
    for r in split.itertuples():
        if r.delta is not None and not pd.isna(r.delta) and enough(r.n_before) and enough(r.n_after):
            how = ("as accurate as" if r.delta == 0 else
                   f"{abs(r.delta) * 100:.1f} pp {'less' if r.delta < 0 else 'more'} accurate than")
            headlines.append(f"<b>{esc(str(r.setting))}</b>: tasks released after {r.cutoff} "
                             f"({r.n_after}) are {how} those released before it ({r.n_before}; p = {r.p:.3g}).")
    return sec
