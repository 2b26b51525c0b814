"""The paper's own Table I/II aggregation over the per-sample table (``--variant coconut`` rows)."""

from __future__ import annotations

import pandas as pd
import pytest

from execbench import registry
from execbench.contract import PaperScoring
from execbench.analysis.trace_metrics import paper_tables
from execbench.families.trace import coconut


def _rows() -> pd.DataFrame:
    return pd.DataFrame({
        "setting": ["m · coconut"] * 6 + ["m · direct"], "variant": ["coconut"] * 6 + ["direct"],
        "topic": ["humaneval"] * 4 + ["oop", "oop", "humaneval"], "source_id": ["a", "a", "b", "c", "x", "y", "a"],
        "correct": [True, False, True, False, False, True, True],
        "similarity": [1.0, 0.5, 1.0, 0.9, 0.25, 1.0, 1.0],
        "completed": [True, True, True, False, True, True, True]})


def test_paper_tables_match_the_graders_own_aggregation():
    trace = registry.get("trace").capability(PaperScoring)
    assert trace is not None
    tables = paper_tables(_rows(), trace.variants, trace.task_topic)
    assert set(tables["setting"]) == {"m · coconut"}  # rows of other variants are left out
    human = tables[tables["topic"] == "humaneval"].iloc[0]
    # a response that never completed counts with similarity 0 (task c)
    expected = coconut.paper_summary([
        {"topic": "humaneval", "task_group": t, "correct": c, "similarity": s}
        for t, c, s in (("a", True, 1.0), ("a", False, 0.5), ("b", True, 1.0), ("c", False, 0.0))])["table_1"]
    for column in ("acc_hard", "acc_mean", "sim", "false_sim"):
        assert human[column] == pytest.approx(expected[column])
    oop = tables[tables["topic"] == "oop"].iloc[0]
    assert (oop["acc_mean"], oop["sim"], oop["N"]) == (0.5, 0.625, 2)


def test_no_paper_scored_rows_no_table():
    assert paper_tables(_rows().assign(variant="direct"), ("coconut",), "humaneval").empty


def test_report_shows_the_papers_trace_counts_and_says_when_traces_were_excluded():
    """The report's Table II layout puts the paper's count beside the admitted traces, and a
    topic with fewer traces than the paper's gets the note that the rest were excluded."""
    from execbench.report.sections import Section, _paper_scoring_tables

    rows = _rows()
    rows.loc[rows["topic"] == "oop", "topic"] = "concurrency"  # 2 traces against the paper's 100
    sec = Section("trace", "Line traces")
    _paper_scoring_tables(sec, rows, "trace", ["m · coconut", "m · direct"])
    tables = {block.title: block for kind, block in sec.blocks if kind == "table"}
    other = next(t for title, t in tables.items() if title.startswith("Table II"))
    cells = dict(zip([c.label for c in other.columns], other.cells()[0]))
    assert cells["Traces"][0] == "2" and cells["Paper traces"][0] == "100"
    human = next(t for title, t in tables.items() if title.startswith("Table I "))
    assert dict(zip([c.label for c in human.columns], human.cells()[0]))["Paper traces"][0] == "1,083"
    notes = [text for kind, text in sec.blocks if kind == "note"]
    assert any("excluded, not scored from the paper's published key" in n for n in notes)
    sec = Section("trace", "Line traces")
    _paper_scoring_tables(sec, rows.assign(variant="direct"), "trace", [])
    assert sec.blocks == []  # nothing graded by the paper's rules: no layout, no note


def test_tables_iv_v_layout_buckets_the_papers_key_length_and_leaves_out_unreplayed_tasks():
    """The paper's length is its NoReps key's (runs collapsed); buckets are left-closed; a task
    the replay file had no reply for is not in the paper-layout tables (the paper has no row)."""
    from execbench.report.sections import Section, _paper_scoring_tables

    oracles = ["[1, 2]", "[1, 1, 1, 2, 2]", "[1, 2, 3]", "[1, 2, 1, 2, 3, 4, 5, 6, 7, 8]", "[1, 2, 3, 4, 5]"]
    rows = pd.DataFrame({
        "setting": ["m · coconut"] * 5, "variant": ["coconut"] * 5, "topic": ["humaneval"] * 5,
        "source_id": ["a", "b", "c", "d", "e"], "oracle": oracles, "correct": [True, False, True, True, True],
        "similarity": [1.0, 0.2, 1.0, 1.0, 1.0], "completed": [True, True, True, True, False],
        "replay": ["recorded", "recorded", "recorded", "recorded", "missing"]})
    sec = Section("trace", "Line traces")
    _paper_scoring_tables(sec, rows, "trace", ["m · coconut"])
    tables = {block.title: block for kind, block in sec.blocks if kind == "table"}
    layout = next(t for title, t in tables.items() if title.startswith("Tables IV-V") and title.endswith("coconut"))
    row = layout.rows[0]
    # keys: [1, 2] (2: "1-3"), [1, 2] (2: "1-3"), [1, 2, 3] (3: "3-5"), 10 items ("10-25"); e has no reply
    assert row["N"] == 4 and row["1-3"] == 0.5 and row["3-5"] == 1.0 and row["10-25"] == 1.0
    assert "5-10" not in row
    human = next(t for title, t in tables.items() if title.startswith("Table I "))
    assert human.rows[0]["N"] == 4 and human.rows[0]["tasks"] == 4
    notes = [text for kind, text in sec.blocks if kind == "note"]
    assert any("1 tasks had no reply in their replay file" in n for n in notes)
