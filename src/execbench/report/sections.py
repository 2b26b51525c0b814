"""Run every analysis on the per-sample table and lay the results out as report sections.

Each section is a list of blocks (headings, paragraphs, tables, figures, notes). Where the
data cannot support an analysis (no rows, every answer wrong, a single cluster, ...), the
block is a note saying so instead of a table. Headline findings are collected on the way.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from html import escape as esc
from typing import Any

import numpy as np
import pandas as pd

from execbench import registry
from execbench.contract import AnalysisFacts, ErrorTaxonomy, PaperScoring
from execbench.analysis import compare, correlations, logistic, mann_whitney, memorisation, paired, taxonomy
from execbench.analysis import tables as T
from execbench.analysis.schema import (facts, families_present, metric_label, metric_terms,
                                      ordered)
from execbench.analysis.trace_metrics import per_task_table, paper_tables
from execbench.report import figures as F
from execbench.report.tables import MIN_SAMPLES, TOO_FEW, Col, Table, acc_cols, enough, fmt_p, fmt_pct, mark_too_few, records

THETA_STATIC = ("cyclomatic",)


@dataclass
class Options:
    replicates: int = 10_000         # paired / memorisation / comparison bootstraps (paper: 10,000)
    descriptive_replicates: int = 2_000
    permutations: int = 10_000       # Mann-Whitney permutation test (paper: 10,000)
    cutoff: str | None = None        # contamination view: before/after this release day (report/contamination.py)


@dataclass
class Section:
    id: str
    title: str
    paper: str = ""
    blocks: list[tuple[str, Any]] = field(default_factory=list)
    nav: str = ""

    def h(self, text: str) -> None:
        self.blocks.append(("h3", text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def note(self, text: str) -> None:
        self.blocks.append(("note", text))

    def table(self, table: Table) -> None:
        if table.empty:
            self.note(f"{table.title}: no data.")
        else:
            self.blocks.append(("table", table))

    def figure(self, src: str | None, caption: str, alt: str) -> None:
        if src:
            self.blocks.append(("figure", {"src": src, "caption": caption, "alt": alt}))


@dataclass
class Report:
    sections: list[Section]
    headlines: list[str]
    notes: list[str]


def _pp(x: float) -> str:
    """Percentage points with a sign, never "-0.0"."""
    value = round(100 * float(x), 1)
    return f"{value + 0.0:+.1f}"


def _ci(p: float, lo: float, hi: float) -> str:
    return f"{fmt_pct(p)}% [{fmt_pct(lo)}, {fmt_pct(hi)}]"


def _setting_order(df: pd.DataFrame) -> list[str]:
    return ordered(df["setting"])


# -- overview -------------------------------------------------------------------------------------
def overview(df: pd.DataFrame, headlines: list[str]) -> Section:
    sec = Section("overview", "Accuracy overview", "paper 001 §4.1, tables 3-5; completion accounting", nav="Overview")
    table = T.accuracy_table(df, ["family", "setting"], order={"family": families_present(df)})
    sec.table(Table("Accuracy by family and setting", [
        Col("Family", "family"), Col("Setting", "setting"), Col("N", "N", "int", "planned samples"),
        Col("R", "R", "int", "completed responses"), Col("C", "C", "int", "correct"), *acc_cols()],
        records(table), paper="paper 001 table 5"))
    for family, group in table.groupby("family", sort=False):
        ranked = group[group["R"] >= MIN_SAMPLES].sort_values("acc_cr", ascending=False)
        if ranked.empty:
            continue
        best = ranked.iloc[0]
        text = (f"<b>{esc(str(family))}</b>: best setting <b>{esc(str(best['setting']))}</b> at "
                f"{_ci(best['acc_cr'], best['acc_cr_low'], best['acc_cr_high'])} correct (C/R, {int(best['R'])} responses)")
        if len(ranked) > 1:
            worst = ranked.iloc[-1]
            text += (f"; lowest <b>{esc(str(worst['setting']))}</b> at "
                     f"{_ci(worst['acc_cr'], worst['acc_cr_low'], worst['acc_cr_high'])}")
        headlines.append(text + ".")
    # completion and extraction status (paper 001 table 4)
    rows = []
    for setting, group in df.groupby("setting", sort=True):
        done = group[group["completed"]]
        status = done["status"].fillna("ok")
        wrong_ok = int(((status == "ok") & ~done["correct"]).sum())
        rows.append({
            "setting": setting, "N": len(group), "R": len(done), "excluded": len(group) - len(done),
            "ok": int((status == "ok").sum()), "wrong_valid": wrong_ok,
            "no_answer": int((status == "no_answer").sum()), "bad_envelope": int((status == "bad_envelope").sum()),
            "truncated": int((status == "truncated").sum()),
            "token_limit": int(done["stop_reason"].isin(["max_tokens", "model_length"]).sum()),
            "median_tokens": float(done["output_tokens"].median()) if done["output_tokens"].notna().any() else math.nan,
        })
    sec.table(Table("Responses: completion and answer extraction", [
        Col("Setting", "setting"), Col("N", "N", "int"), Col("Completed", "R", "int"),
        Col("Excluded", "excluded", "int", "transport failures and empty responses: excluded from C/R, wrong in C/N"),
        Col("Answer found", "ok", "int", "an answer was extracted (right or wrong)"),
        Col("…wrong", "wrong_valid", "int", "an answer was extracted and it is wrong"),
        Col("No answer", "no_answer", "int"), Col("Bad envelope", "bad_envelope", "int"),
        Col("Truncated", "truncated", "int", "extraction status: the answer was cut off"),
        Col("Token limit", "token_limit", "int", "stop reason max_tokens / model_length"),
        Col("Median tokens", "median_tokens", "int", "median output tokens of completed responses")], rows, paper="paper 001 table 4"))
    excluded = sum(r["excluded"] for r in rows)
    if excluded:
        headlines.append(f"{excluded} of {len(df)} requests returned no response (transport failure or empty): "
                         "excluded from C/R, counted wrong in C/N.")
    return sec


# -- trace ------------------------------------------------------------------------------------------
def _family_section(df: pd.DataFrame, family: str) -> tuple[Section, pd.DataFrame]:
    """The family's main section (title, paper, nav as the family declares them) and its rows."""
    declared = facts(family)
    assert declared is not None
    return Section(family, declared.title, declared.paper, nav=declared.nav), df[df["family"] == family]


def _paper_scoring_tables(sec: Section, rows: pd.DataFrame, family: str, settings: list[str]) -> None:
    """Settings graded by a peer benchmark's own rules (``--variant coconut``): its Table I/II layout."""
    plugin = registry.get(family).capability(PaperScoring)
    variants = plugin.variants if plugin is not None else ()
    tables = paper_tables(rows, variants, plugin.task_topic) if plugin is not None and variants else pd.DataFrame()
    if plugin is None or tables.empty:
        return
    tables["paper_N"] = tables["topic"].map(dict(plugin.trace_counts))
    sec.note("Settings whose variant is " + ", ".join(sorted(set(tables["variant"]))) + " were graded by the paper's "
             "own rules (NoReps key, string match, character-level similarity; docs/trace-format.md): the "
             "tables above describe those grades with execbench's aggregation, the tables below with the paper's.")
    if "replay" in rows and (rows["replay"] == "missing").any():
        sec.note(f"{int((rows['replay'] == 'missing').sum())} tasks had no reply in their replay file: the paper's "
                 "tables cover the rows it has, so the paper-layout tables leave them out (the tables above count "
                 "them as unanswered).")
    if (tables["N"] < tables["paper_N"]).any():
        sec.note("Where Traces is below the paper's count, the numbers are over the traces the build admitted: "
                 "the others (rejected.jsonl of the dataset: nondeterministic across runs, failing or over a "
                 "limit in the sandbox) are excluded, not scored from the paper's published key."
                 + (f" The paper's own predictions restricted to the same traces: {plugin.reproduction}."
                    if plugin.reproduction else ""))
    paper_n = Col("Paper traces", "paper_N", "int", "the paper's traces of this topic")
    human = T.sort_by(tables[tables["topic"] == plugin.task_topic], ["setting"], {"setting": settings})
    if not human.empty:
        sec.table(Table("Table I layout (the paper's aggregation, all planned samples)", [
            Col("Setting", "setting"), Col("Variant", "variant"), Col("Traces", "N", "int"), paper_n,
            Col("Tasks", "tasks", "int"), Col("Acc Hard %", "acc_hard", "pct", "tasks with every trace correct"),
            Col("Acc Mean %", "acc_mean", "pct", "per-task accuracy averaged over tasks"),
            Col("Sim", "sim", "num", "per-task mean similarity averaged over tasks"),
            Col("False Sim", "false_sim", "num", "per task the mean similarity of its wrong traces (0 if none), "
                "averaged over all tasks")], records(human), paper="paper 002 table I"))
    _paper_length_tables(sec, rows, plugin, settings)
    other = T.sort_by(tables[tables["topic"] != plugin.task_topic], ["topic", "setting"], {"setting": settings})
    if not other.empty:
        sec.table(Table("Table II layout (the paper's aggregation, means over traces)", [
            Col("Topic", "topic"), Col("Setting", "setting"), Col("Variant", "variant"), Col("Traces", "N", "int"),
            paper_n, Col("Acc Mean %", "acc_mean", "pct"), Col("Sim", "sim", "num")], records(other),
            paper="paper 002 table II"))


def _paper_length_tables(sec: Section, rows: pd.DataFrame, plugin: PaperScoring, settings: list[str]) -> None:
    """The paper's accuracy by length bucket (paper 002 tables IV-V), one table per peer-scoring
    variant: the peer's task topic only, the peer's item length (``PaperScoring.paper_length`` of the
    oracle), accuracy over every planned row the replay recorded (as ``paper_tables``)."""
    paper_length = plugin.paper_length
    chosen = rows[rows["variant"].isin(list(plugin.variants))
                  & (rows["topic"].fillna(plugin.task_topic) == plugin.task_topic)]
    if "replay" in chosen:
        chosen = chosen[chosen["replay"] != "missing"]
    if chosen.empty or "oracle" not in chosen or paper_length is None:
        return

    def length(oracle: Any) -> float:
        try:
            value = paper_length(json.loads(oracle)) if isinstance(oracle, str) else None
        except (ValueError, RecursionError):
            value = None
        return math.nan if value is None else float(value)

    chosen = chosen.assign(paper_length=[length(o) for o in chosen["oracle"]])
    for variant in plugin.variants:
        part = chosen[chosen["variant"] == variant]
        if part.empty:
            continue
        long = T.bucket_table(part.assign(completed=True), ("setting",), "paper_length")  # every planned row
        wide = []
        for setting, group in long.groupby("setting", sort=False):
            row: dict[str, Any] = {"setting": setting, "N": int(group["N"].sum())}
            for _, b in group.iterrows():
                row[b["bucket"]] = b["acc_cr"]
            wide.append(row)
        wide = T.sort_by(pd.DataFrame(wide), ["setting"], {"setting": settings}).to_dict("records")
        present = [label for label in T.BUCKET_LABELS if label in set(long["bucket"])]
        sec.table(Table(f"Tables IV-V layout: accuracy % by the paper's trace-length bucket, variant {variant}",
                        [Col("Setting", "setting"), Col("Traces", "N", "int")]
                        + [Col(label, label, "pct") for label in present],
                        wide, paper="paper 002 tables IV (direct) and V (CoT)",
                        caption="Length: the paper's key (runs of one line collapsed); buckets left-closed (1-3 holds "
                                "1 to 2 lines, ..., 40+ 40 or more); accuracy over every planned trace with a reply."))


def _per_task_tables(sec: Section, rows: pd.DataFrame, family: str, opts: Options) -> None:
    """The per-task metrics (C/R and C/N), titled as the family declares (``AnalysisFacts.per_task_title``)."""
    coco = per_task_table(rows, ("setting",), replicates=opts.descriptive_replicates)
    declared = facts(family)
    title = declared.per_task_title if declared else AnalysisFacts.per_task_title
    for scope, label in (("cr", "completed responses (C/R)"), ("cn", "all planned samples (C/N)")):
        sec.table(Table(f"{title}, {label}", [
            Col("Setting", "setting"), Col("Traces", "N", "int"), Col("Tasks", "tasks", "int"),
            Col("Acc Hard %", (f"acc_hard_{scope}", f"acc_hard_{scope}_low", f"acc_hard_{scope}_high"), "pct_ci",
                "tasks with every trace correct (Wilson)"),
            Col("Acc Mean %", (f"acc_mean_{scope}", f"acc_mean_{scope}_low", f"acc_mean_{scope}_high"), "pct_ci",
                "per-task accuracy averaged over tasks (bootstrap over tasks)"),
            Col("Accuracy %", (f"accuracy_{scope}", f"accuracy_{scope}_low", f"accuracy_{scope}_high"), "pct_ci",
                "over traces (Wilson)"),
            Col("Sim", (f"similarity_{scope}", f"similarity_{scope}_low", f"similarity_{scope}_high"), "num_ci"),
            Col("False Sim", (f"false_similarity_{scope}", f"false_similarity_{scope}_low",
                              f"false_similarity_{scope}_high"), "num_ci", "similarity of wrong traces only")],
            records(coco), paper="paper 002 table I"))


def sequence_section(df: pd.DataFrame, family: str, colors: dict, opts: Options, headlines: list[str]) -> Section:
    """Sequence answers scored with a similarity (line traces): the per-task metrics the family titles,
    similarity, accuracy by length, by cell, and the family's error taxonomy of the wrong answers."""
    sec, rows = _family_section(df, family)
    settings = _setting_order(rows)
    _per_task_tables(sec, rows, family, opts)
    _paper_scoring_tables(sec, rows, family, settings)
    # trace-length buckets
    declared = facts(family)
    length = declared.length_metric if declared else ""  # the metric of the length buckets
    buckets = T.bucket_table(rows, ("setting",), length)
    sec.h("Accuracy by trace length")
    if buckets.empty:
        sec.note("No trace lengths recorded: no bucket table.")
    else:
        wide_rows = []
        for setting, group in buckets.groupby("setting", sort=False):
            row: dict[str, Any] = {"setting": setting}
            for _, b in group.iterrows():
                row[b["bucket"]], row[b["bucket"] + "_lo"], row[b["bucket"] + "_hi"] = \
                    b["acc_cr"], b["acc_cr_low"], b["acc_cr_high"]
            wide_rows.append(row)
        sec.table(Table("Accuracy (C/R %) by trace-length bucket", [Col("Setting", "setting")] + [
            Col(label, (label, label + "_lo", label + "_hi"), "pct_ci") for label in T.BUCKET_LABELS
            if label in set(buckets["bucket"])], wide_rows, paper="paper 002 tables IV-V",
            caption="Buckets are left-closed (the paper's rule, as its published rows decide): 1-3 holds traces of "
                    "1 to 2 lines, 3-5 of 3 to 4, ..., 40+ of 40 or more."))
        sec.table(Table("Trace-length buckets, both denominators", [
            Col("Setting", "setting"), Col("Bucket", "bucket"), Col("N", "N", "int"), Col("R", "R", "int"),
            *acc_cols()], records(buckets)))
        sec.figure(F.accuracy_lines(buckets, "bucket", [b for b in T.BUCKET_LABELS if b in set(buckets["bucket"])],
                                    colors, "Accuracy vs trace length", "trace length (executed lines)"),
                   "Accuracy (C/R) per trace-length bucket with Wilson 95% intervals, one line per setting.",
                   "accuracy versus trace length")
        pooled = T.bucket_table(rows.assign(setting="all"), ("setting",), length)
        low, high = pooled.iloc[0], pooled.iloc[-1]
        if low["bucket"] != high["bucket"] and enough(low["R"]) and enough(high["R"]):
            first = _ci(low["acc_cr"], low["acc_cr_low"], low["acc_cr_high"])
            last = _ci(high["acc_cr"], high["acc_cr_low"], high["acc_cr_high"])
            if high["acc_cr"] == low["acc_cr"]:
                text = f"accuracy is {first} on traces of {low['bucket']} lines and {last} on {high['bucket']} lines"
            else:
                verb = "falls" if high["acc_cr"] < low["acc_cr"] else "rises"
                text = f"accuracy {verb} from {first} on traces of {low['bucket']} lines to {last} on {high['bucket']} lines"
            headlines.append(f"<b>{esc(str(family))}</b>: {text} (all settings pooled, C/R).")
    # topics (advanced-topic table II)
    topics = per_task_table(rows, ("topic", "setting"), replicates=opts.descriptive_replicates) \
        if rows["topic"].notna().any() else pd.DataFrame()
    declared = facts(family)
    sec.h("By topic" + (f" ({declared.cell_heading})" if declared and declared.cell_heading else ""))
    if topics.empty:
        sec.note("No topic recorded for these traces.")
    else:
        declared = facts(family)
        topic_order = ordered(topics["topic"], declared.cell_order if declared else ())
        topics = T.sort_by(topics, ["topic", "setting"], {"topic": topic_order, "setting": settings})
        sec.table(Table("Accuracy and similarity by topic", [
            Col("Topic", "topic"), Col("Setting", "setting"), Col("Traces", "N", "int"), Col("Programs", "tasks", "int"),
            Col("Acc Mean C/R %", ("acc_mean_cr", "acc_mean_cr_low", "acc_mean_cr_high"), "pct_ci"),
            Col("Acc Mean C/N %", ("acc_mean_cn", "acc_mean_cn_low", "acc_mean_cn_high"), "pct_ci"),
            Col("Sim", ("similarity_cr", "similarity_cr_low", "similarity_cr_high"), "num_ci")],
            records(topics), paper="paper 002 table II"))
    sec.figure(F.similarity_distributions(rows, settings, colors),
               "Similarity of completed answers to the oracle: violins over all answers, dots for wrong answers, "
               "bars at the mean.", "similarity distributions")
    if declared is not None and declared.taxonomy is not None:
        _taxonomy(sec, rows, family, declared.taxonomy, settings, headlines)
    return sec


def _taxonomy(sec: Section, rows: pd.DataFrame, family: str, declared: ErrorTaxonomy, settings: list[str],
              headlines: list[str]) -> None:
    """The family's first-deviation categories of the wrong completed answers: table, bars, headline."""
    sec.h("First-deviation error taxonomy")
    wrong = rows[rows["completed"] & ~rows["correct"]]
    if wrong.empty:
        sec.note("No wrong completed traces to classify.")
    else:
        counts = taxonomy.category_counts(wrong, declared, settings)
        present = list(counts.columns)
        tax_rows = []
        for setting, values in counts.iterrows():
            total = int(values.sum())
            tax_rows.append({"setting": setting, "wrong": total,
                             **{c: values[c] / total if total else math.nan for c in present}})
        sec.table(Table("Wrong traces by first-deviation category (share of wrong traces, %)",
                        [Col("Setting", "setting"), Col("Wrong", "wrong", "int")] +
                        [Col(c, c, "pct") for c in present], tax_rows, paper="paper 002 §V-A",
                        caption="Rules in docs/report.md (first match wins). 'unclassified': program text unavailable."))
        sec.figure(F.taxonomy_bars(counts, present, taxonomy.category_colors(declared)),
                   "Share of wrong traces per first-deviation category.", "error taxonomy stacked bars")
        overall = counts.sum().sort_values(ascending=False)
        top = overall.index[0]
        if enough(overall.sum()):
            headlines.append(f"<b>{esc(str(family))}</b>: the most common first deviation is <i>{esc(str(top))}</i> "
                             f"({fmt_pct(overall[top] / overall.sum())}% of {int(overall.sum())} wrong traces).")


# -- state ------------------------------------------------------------------------------------------
def _paired_arms(sec: Section, rows: pd.DataFrame, declared: AnalysisFacts, opts: Options, headlines: list[str],
                 family: str) -> None:
    """The family's (shorter, longer input) arms of one case: the paired short-minus-long decrement."""
    if declared.paired_arms is None:
        return
    sec.h("Paired shorter- vs longer-input final output")
    pairs = paired.short_long_pairs(rows, *declared.paired_arms)
    if pairs.empty:
        sec.note("No case has both final-output arms answered in one setting: no paired comparison.")
        return
    cohorts = [("All settings", pairs)] + [(s, g) for s, g in pairs.groupby("setting", sort=True)]
    out = []
    for label, group in cohorts:
        summary = paired.paired_summary(group, replicates=opts.replicates)
        out.append({"cohort": label, "settings": group["setting"].nunique(), **summary})
    mark_too_few(out, "pairs", "decrement", interval=("low", "high"))
    sec.table(Table("Paired short-minus-long decrement", [
        Col("Cohort", "cohort"), Col("Settings", "settings", "int"), Col("Pairs", "pairs", "int"),
        Col("Sources", "sources", "int"), Col("Correct→wrong", "correct_to_wrong", "int"),
        Col("Wrong→correct", "wrong_to_correct", "int"),
        Col("Short %", "acc_a", "pct"), Col("Long %", "acc_b", "pct"),
        Col("Decrement (pp)", ("decrement", "low", "high"), "pp_ci",
            "short minus long accuracy; 95% percentile interval from a source-clustered bootstrap"),
        Col("Note", "note")], out, paper="paper 001 table 7",
        caption=f"{opts.replicates:,} bootstrap replicates resample whole clean-source clusters (all settings of a "
                "source together); only pairs with both responses completed."))
    first = out[0]
    if enough(first["pairs"]) and first["decrement"] == first["decrement"]:
        headlines.append(
            f"<b>{esc(str(family))}</b>: on {first['pairs']} matched short/long pairs, the longer input turns "
            f"{first['correct_to_wrong']} correct answers wrong and {first['wrong_to_correct']} wrong answers correct; "
            f"paired decrement {_pp(first['decrement'])} pp [{_pp(first['low'])}, {_pp(first['high'])}] "
            "(source-clustered bootstrap).")


def _language_pairs(sec: Section, rows: pd.DataFrame, opts: Options, headlines: list[str], family: str) -> None:
    """The same programs in two languages (tasks sharing ``pair``): accuracy difference with
    a bootstrap interval that resamples whole programs (paper 001's Python vs C++ contrast,
    here on identical algorithms and inputs)."""
    languages = sorted(rows.loc[rows["pair"].notna(), "language"].dropna().unique(),
                       key=lambda lang: (lang != "python", lang))
    if len(languages) < 2:
        return
    first, second = languages[0], languages[1]
    pairs = paired.language_pairs(rows, first, second)
    sec.h(f"Paired programs: {first} vs {second}")
    if pairs.empty:
        sec.note(f"No program has the same arm answered in both {first} and {second} in one setting.")
        return
    cohorts = [("All arms", pairs)] + [(str(arm), g) for arm, g in pairs.groupby("arm", sort=False)]
    out = []
    for label, group in cohorts:
        summary = paired.paired_summary(group, replicates=opts.replicates)
        out.append({"cohort": label, "settings": group["setting"].nunique(), **summary})
    mark_too_few(out, "pairs", "decrement", interval=("low", "high"))
    declared = facts(family)
    sec.table(Table(f"Paired {first}-minus-{second} accuracy on the same programs", [
        Col("Arms", "cohort"), Col("Settings", "settings", "int"), Col("Pairs", "pairs", "int"),
        Col("Programs", "sources", "int"), Col(f"{first} only", "correct_to_wrong", "int"),
        Col(f"{second} only", "wrong_to_correct", "int"),
        Col(f"{first} %", "acc_a", "pct"), Col(f"{second} %", "acc_b", "pct"),
        Col("Difference (pp)", ("decrement", "low", "high"), "pp_ci",
            f"{first} minus {second} accuracy; 95% percentile interval from a bootstrap over programs"),
        Col("Note", "note")], out, paper="paper 001 §5.2 (Python vs C++)",
        caption=f"One pair per setting, program and arm answered in both languages; {opts.replicates:,} bootstrap "
                "replicates resample whole programs (both languages, all arms and settings of a program together)."
                + (f" {declared.pairs_note}" if declared and declared.pairs_note else "")))
    first_row = out[0]
    if enough(first_row["pairs"]) and first_row["decrement"] == first_row["decrement"]:
        headlines.append(
            f"<b>{esc(family)}</b>: on {first_row['pairs']} answers to the same programs in {first} and {second}, "
            f"{first} minus {second} accuracy is {_pp(first_row['decrement'])} pp "
            f"[{_pp(first_row['low'])}, {_pp(first_row['high'])}] (bootstrap over {first_row['sources']} programs).")


# -- accuracy by declared slices -----------------------------------------------------------------------
def slice_tables_section(df: pd.DataFrame, family: str, colors: dict, opts: Options, headlines: list[str]) -> Section:
    """The family's declared accuracy tables by slice (``AnalysisFacts.slice_tables``), in their order;
    then the same programs in two languages (tasks sharing a ``pair``) and the paired arms' decrement."""
    sec, rows = _family_section(df, family)
    settings = _setting_order(rows)
    declared = facts(family)
    assert declared is not None
    for spec in declared.slice_tables:
        if spec.heading:
            sec.h(spec.heading)
        if not rows[spec.column].notna().any():
            sec.note(spec.missing or f"No {spec.column} recorded for these tasks.")
            continue
        order = {spec.column: declared.slice_orders.get(spec.column, ()), "setting": settings}
        by = ["setting", spec.column] if spec.setting_first else [spec.column, "setting"]
        label = {"setting": "Setting", spec.column: spec.label}
        table = T.accuracy_table(rows, by, order=order)
        sec.table(Table(spec.title, [*(Col(label[c], c) for c in by), Col("N", "N", "int"), Col("R", "R", "int"),
                                     *acc_cols()], records(table), paper=spec.paper))
        if spec.figure_caption and not table.empty:
            present = set(table[spec.column])
            values = [v for v in declared.slice_orders.get(spec.column, ()) if v in present]
            sec.figure(F.accuracy_lines(table, spec.column, values, colors, spec.title, spec.column),
                       spec.figure_caption, spec.figure_alt)
    _language_pairs(sec, rows, opts, headlines, family)
    _paired_arms(sec, rows, declared, opts, headlines, family)
    return sec


# -- metric relations (every family) ------------------------------------------------------------------
def relations_section(df: pd.DataFrame, family: str, colors: dict, opts: Options, headlines: list[str]) -> Section:
    declared = facts(family)
    assert declared is not None
    sec = Section(f"{family}-metrics", f"{declared.title}: what makes tasks hard", declared.relations_paper,
                  nav=f"{declared.nav}: difficulty")
    rows = df[df["family"] == family]
    languages = ordered(rows["language"].dropna())
    if declared.python_only_relations and len(languages) > 1 and "python" in languages:
        sec.note("Correlations, binned accuracy and logistic models use the Python cases only: C++ cases measure "
                 "trace length (gcov line executions) and state (one event per executed statement) with their own "
                 "adapters, so raw values are not interchangeable (paper 001 analyses the two separately). "
                 "θ is computed per study and language, so C++ series use C++ measurements only.")
        theta_rows_source = rows
        theta_by: tuple[str, ...] = ("setting", "study", "language")
        rows = rows[rows["language"] == "python"]
    else:
        theta_rows_source = rows
        theta_by = ("setting", "study")
    metrics = [m for m in declared.correlation_metrics if rows[m].notna().any()]
    if not metrics:
        sec.note(f"No difficulty metrics recorded for {family} tasks.")
        return sec
    labels = ", ".join(metric_label(m) for m in metrics)
    _correlation_tables(sec, rows, metrics, family, declared, headlines)
    binned = {metric_label(m): correlations.binned_accuracy(rows, m) for m in metrics}
    sec.figure(F.metric_panels(binned, colors, f"Accuracy over binned {labels}"),
               "Accuracy (C/R) over equal-count bins of each metric (bins from all settings), Wilson intervals.",
               f"accuracy versus {labels}")
    _theta_tables(sec, theta_rows_source, theta_by, family, declared, opts, headlines)
    if declared.logistic_models:
        _logistic_models(sec, rows, declared)
    return sec


def _correlation_tables(sec: Section, rows: pd.DataFrame, metrics: list[str], family: str, declared: AnalysisFacts,
                        headlines: list[str]) -> None:
    """Pearson and partial correlations of ``metrics`` with correctness (and the partial headline)."""
    labels = ", ".join(metric_label(m) for m in metrics)
    sec.h(f"Correlation of {labels} with correctness")
    pearson = correlations.pearson_table(rows, metrics)
    wide: dict[str, dict] = {}
    for r in mark_too_few(records(pearson), "n", "r", blank=("p",), interval=("r_low", "r_high")):
        entry = wide.setdefault(r["setting"], {"setting": r["setting"], "n": r["n"], "notes": []})
        entry[r["metric"]], entry[r["metric"] + "_lo"], entry[r["metric"] + "_hi"] = r["r"], r["r_low"], r["r_high"]
        entry[r["metric"] + "_p"] = r["p"]
        if isinstance(r["note"], str) and r["note"] not in entry["notes"]:
            entry["notes"].append(r["note"])
    for entry in wide.values():
        entry["note"] = "; ".join(entry.pop("notes")) or None
    cols = [Col("Setting", "setting"), Col("n", "n", "int")]
    for m in metrics:
        cols += [Col(f"r({metric_label(m)})", (m, m + "_lo", m + "_hi"), "r_ci", "Pearson r, Fisher-z 95% interval"),
                 Col("p", m + "_p", "pval")]
    sec.table(Table("Pearson correlation with correctness", cols + [Col("Note", "note")], list(wide.values()),
                    paper=declared.correlation_paper,
                    caption="Completed responses; correctness coded 1/0, so a negative r means harder when larger."))
    if len(metrics) >= 2:
        partial = pd.DataFrame(mark_too_few(records(correlations.partial_table(rows, metrics)), "n", "r",
                                            blank=("p",)),
                               columns=["setting", "metric", "controls", "n", "r", "p", "note"])
        sec.table(Table("Partial correlation, controlling for the other metrics", [
            Col("Setting", "setting"), Col("Metric", "metric"), Col("Controlled for", "controls"), Col("n", "n", "int"),
            Col("Partial r", "r", "num"), Col("p", "p", "pval"), Col("Note", "note")],
            records(partial.assign(metric=partial["metric"].map(metric_label),
                                   controls=partial["controls"].map(
                                       lambda c: ", ".join(metric_label(x.strip()) for x in c.split(","))))),
            paper=declared.partial_paper))
        ok = partial[partial["r"].notna()]
        if "partial" in declared.headlines and not ok.empty:
            strongest = ok.loc[ok["r"].idxmin()]
            headlines.append(
                f"<b>{esc(str(family))}</b>: the strongest independent difficulty signal is {metric_label(strongest['metric'])} "
                f"(partial r = {strongest['r']:.3f}, p = {fmt_p(strongest['p'])}, setting {esc(str(strongest['setting']))}, "
                f"controlling for {', '.join(metric_label(x.strip()) for x in strongest['controls'].split(','))}).")


def _theta_tables(sec: Section, theta_rows_source: pd.DataFrame, theta_by: tuple[str, ...], family: str,
                  declared: Any, opts: Options, headlines: list[str]) -> None:
    """Normalised Mann-Whitney θ of the dynamic metrics (arms pooled) and the static ones (per arm)."""
    sec.h("Normalised Mann-Whitney θ")
    dynamic = [m for m in declared.theta_metrics if theta_rows_source[m].notna().any()]
    theta_rows = []
    if dynamic:
        theta = mann_whitney.theta_table(theta_rows_source, dynamic, by=theta_by,
                                         permutations=opts.permutations)
        theta_rows += records(theta.assign(arms="pooled"))
    static = [m for m in THETA_STATIC if theta_rows_source[m].notna().any()]
    if static:
        theta_static = mann_whitney.theta_table(theta_rows_source, static, by=(*theta_by, "arm"),
                                                permutations=opts.permutations)
        theta_rows += records(theta_static.rename(columns={"arm": "arms"}))
    if theta_rows:
        table = pd.DataFrame(mark_too_few(theta_rows, "n", "theta", blank=("p",)))
        table["p_bh"] = mann_whitney.benjamini_hochberg(table["p"])
        table["metric"] = table["metric"].map(metric_label)
        table["supported"] = np.where(table["theta"].isna(), TOO_FEW,
                                      np.where((table["theta"] > 0.5) & (table["p"] < 0.05), "yes", "no"))
        sec.table(Table("θ per series (θ > 0.5: failures have larger values)", [
            Col("Setting", "setting"), Col("Study", "study"),
            *([Col("Language", "language")] if "language" in theta_by else []), Col("Arms", "arms"),
            Col("Metric", "metric"),
            Col("n", "n", "int"), Col("Failures", "failures", "int"), Col("θ", "theta", "num"),
            Col("p (perm.)", "p", "pval", f"one-sided, {opts.permutations:,} fixed-seed label shuffles"),
            Col("p (BH)", "p_bh", "pval", "Benjamini-Hochberg over this table"), Col("Supported", "supported"),
            Col("Note", "note")], records(table), paper="paper 001 appendix E, table 8",
            caption="Dynamic metrics pool all arms of a setting and study; static metrics (cyclomatic) are tested per arm. "
                    "Row-level permutation tests ignore the dependence between arms of a case: descriptive only."))
        est = table[table["theta"].notna()]
        if not est.empty and "theta" in declared.headlines:
            headlines.append(f"<b>{esc(str(family))}</b>: {int((est['supported'] == 'yes').sum())} of {len(est)} estimable θ series "
                             "show larger metric values among failures (θ > 0.5, p < 0.05, unadjusted).")


def _logistic_models(sec: Section, rows: pd.DataFrame, declared: AnalysisFacts) -> None:
    """The family's exploratory logistic models of error: odds ratios per doubling and their forest plot."""
    sec.h("Exploratory logistic models of error")
    fits = []
    for name, predictors in declared.logistic_models:
        missing = [metric_label(p) for p in predictors if not rows[p].notna().any()]
        if missing:
            sec.note(f"Model “{name}” cannot be fitted: no {', '.join(missing)} recorded for these tasks.")
        else:
            fits.append(logistic.fit_error_model(rows, predictors, name, terms=metric_terms(declared)))
    term_rows, forest_rows = [], []
    for fit in fits:
        if fit.status != "ok" or not enough(fit.n):
            why = f"{fit.status}: {fit.message}" if fit.status != "ok" else "fewer responses than the report's minimum"
            sec.note(f"Model “{fit.name}” (n = {fit.n}, {fit.clusters} clusters): {TOO_FEW} for an estimate ({why}). "
                     "No coefficients are reported.")
            continue
        for term in fit.terms:
            term_rows.append({"model": fit.name, "n": fit.n, "clusters": fit.clusters, "iterations": fit.iterations,
                              "condition": fit.condition, **term})
            forest_rows.append({**term, "label": f"{fit.name}: {term['term']}"})
    if term_rows:
        sec.table(Table("Error odds ratio per doubling", [
            Col("Model", "model"), Col("Predictor", "term"), Col("n", "n", "int"), Col("Clusters", "clusters", "int"),
            Col("Odds ratio", ("odds_ratio", "low", "high"), "or_ci", "95% interval, t with G-1 df, source-clustered"),
            Col("p", "p", "pval"), Col("Iterations", "iterations", "int"),
            Col("Cond. number", "condition", "num", "information matrix")], term_rows,
            paper=declared.logistic_paper,
            caption="Outcome: wrong answer (completed responses). Intercepts for study, arm and setting; "
                    "mean-centred log2 predictors; sandwich covariance clustered by clean source with the "
                    "G/(G-1)·(N-1)/(N-p) factor."))
        sec.figure(F.forest(forest_rows, "Error odds ratios per doubling"),
                   "Odds ratios with source-clustered 95% intervals (log scale).", "odds ratio forest plot")


# -- comparisons and memorisation -----------------------------------------------------------------------
def comparison_section(df: pd.DataFrame, opts: Options, headlines: list[str]) -> Section | None:
    pairs = compare.run_pairs(df)
    sec = Section("compare", "Two runs of the same model", "paper 000 appendix B.4, tables 7-8; paper 002 §IV-C",
                  nav="Run comparisons")
    if not pairs:
        sec.note("No model was run in two settings on common tasks: nothing to compare. Run a model twice "
                 "on one dataset (e.g. direct and cot, or two temperatures) to get this section.")
        return sec
    for a, b in pairs:
        sec.h(f"{a} → {b}")
        deltas = compare.cell_deltas(df, a, b)
        sec.table(Table(f"Accuracy per cell (C/R): {a} vs {b}", [
            Col("Family", "family"), Col("Cell", "cell"), Col("n A", "n_a", "int"),
            Col("A %", ("acc_a", "acc_a_low", "acc_a_high"), "pct_ci"), Col("n B", "n_b", "int"),
            Col("B %", ("acc_b", "acc_b_low", "acc_b_high"), "pct_ci"), Col("Δ (pp)", "delta", "pp_ci")],
            records(deltas), paper="paper 000 table 7"))
        summary = compare.compare_runs(df, a, b, replicates=opts.replicates)
        rows = [{"family": "all", **{k: v for k, v in summary.items() if k != "per_family"}}] + \
               [{"family": f, **s} for f, s in summary["per_family"].items()]
        for r in rows:  # B minus A, as in the cell table
            r["delta"], r["d_low"], r["d_high"] = -r["decrement"], -r["high"], -r["low"]
        mark_too_few(rows, "pairs", "delta", interval=("d_low", "d_high"))
        sec.table(Table("Matched tasks (answered in both runs)", [
            Col("Family", "family"), Col("Tasks", "pairs", "int"), Col("Sources", "sources", "int"),
            Col("A right → B wrong", "correct_to_wrong", "int"), Col("A wrong → B right", "wrong_to_correct", "int"),
            Col("A %", "acc_a", "pct"), Col("B %", "acc_b", "pct"),
            Col("Δ B−A (pp)", ("delta", "d_low", "d_high"), "pp_ci", "source-clustered bootstrap"), Col("Note", "note")],
            rows))
        if enough(summary["pairs"]) and rows[0]["delta"] == rows[0]["delta"]:
            headlines.append(f"<b>{esc(a)}</b> → <b>{esc(b)}</b>: accuracy changes by {_pp(rows[0]['delta'])} pp "
                             f"[{_pp(rows[0]['d_low'])}, {_pp(rows[0]['d_high'])}] on {summary['pairs']} "
                             "tasks answered in both runs.")
        stab_rows = []
        both = df[df["setting"].isin([a, b])]
        shared = [f for f in families_present(both) if both.loc[both["family"] == f, "setting"].nunique() == 2]
        for family in shared:
            declared = facts(family)
            metrics = [m for m in (declared.correlation_metrics if declared else ())
                       if df.loc[df["family"] == family, m].notna().any()]
            if metrics:
                stab = compare.correlation_stability(df, a, b, metrics, family)
                stab_rows += [{"family": family, **r, "metric": metric_label(r["metric"])}
                              for r in records(stab)]
        if stab_rows:
            sec.table(Table("Stability of metric–accuracy Pearson r", [
                Col("Family", "family"), Col("Metric", "metric"), Col("r (A)", "r_a", "num"), Col("r (B)", "r_b", "num"),
                Col("Δ", "delta", "num"), Col("Note", "note")], stab_rows, paper="paper 000 table 8"))
    return sec


def memorisation_section(df: pd.DataFrame, opts: Options, headlines: list[str]) -> Section:
    sec = Section("memorisation", "Memorisation: original vs mutated tasks", "paper 000 §4.4", nav="Memorisation")
    if not df["original_id"].notna().any():
        sec.note("No mutated tasks (tasks with provenance.original_id) in these logs: no memorisation rate.")
        return sec
    table = memorisation.memorisation_table(df, replicates=opts.replicates)
    if table.empty:
        sec.note("Mutated tasks are present but none has its original answered in the same setting.")
        return sec
    sec.table(Table("Memorisation rate and accuracy drop", [
        Col("Setting", "setting"), Col("Pairs", "pairs", "int"), Col("Sources", "sources", "int"),
        Col("Original %", "acc_orig", "pct"), Col("Mutated %", "acc_mut", "pct"),
        Col("MR %", ("mr", "mr_low", "mr_high"), "pct_ci", "P(pass orig and fail mutated), clustered bootstrap"),
        Col("MR Wilson", ("mr", "mr_wilson_low", "mr_wilson_high"), "pct_ci"),
        Col("Reverse %", "reverse", "pct", "P(fail orig and pass mutated)"),
        Col("Drop (pp)", ("drop", "drop_low", "drop_high"), "pp_ci"), Col("Note", "note")],
        mark_too_few(records(table), "pairs", "mr", blank=("mr_low", "mr_high", "mr_wilson_low", "mr_wilson_high",
                                                           "reverse", "drop", "drop_low", "drop_high"))))
    for _, r in table.iterrows():
        if enough(r["pairs"]):
            headlines.append(f"<b>{esc(str(r['setting']))}</b>: memorisation rate {_ci(r['mr'], r['mr_low'], r['mr_high'])}; "
                             f"accuracy drops {_pp(r['drop'])} pp [{_pp(r['drop_low'])}, "
                             f"{_pp(r['drop_high'])}] from original to mutated tasks.")
    return sec


#: The main-section layouts a family may declare (``AnalysisFacts.layout``).
LAYOUTS = {"sequence": sequence_section, "slice-tables": slice_tables_section}


def build(df: pd.DataFrame, opts: Options | None = None) -> Report:
    opts = opts or Options()
    headlines: list[str] = []
    notes: list[str] = []
    colors = F.color_map(_setting_order(df))
    from execbench.report.leaderboard import leaderboard_section

    board = Section("leaderboard", "Leaderboard", "ranked settings; paired comparisons on common tasks", nav="Leaderboard")
    sections = [leaderboard_section(df, opts.replicates, headlines, board), overview(df, headlines)]
    present = families_present(df)
    reported = [f.name for f in registry.registered() if f.capability(AnalysisFacts) is not None]
    for family in reported:
        declared = facts(family)
        assert declared is not None
        if family not in present:
            notes.append(f"No {family}-family samples in these logs: the {declared.title} analyses are skipped.")
            continue
        sections.append(LAYOUTS[declared.layout](df, family, colors, opts, headlines))
        sections.append(relations_section(df, family, colors, opts, headlines))
    if (comparison := comparison_section(df, opts, headlines)) is not None:
        sections.append(comparison)
    sections.append(memorisation_section(df, opts, headlines))
    from execbench.report import contamination  # tasks with release dates, any family (issue 26)

    if contamination.has_dates(df):
        header = contamination.SECTION
        sections.append(contamination.fill(Section(header["id"], header["title"], header["paper"], nav=header["nav"]),
                                           df, opts.cutoff, headlines))
    unknown = [f for f in present if f not in reported]
    if unknown:
        notes.append(f"Samples of families without a report section ({', '.join(unknown)}) appear only in the "
                     "overview and the leaderboard.")
    return Report(sections, headlines, notes)
