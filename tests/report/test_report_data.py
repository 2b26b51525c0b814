"""Every table of the report as data beside the page, and the leaderboard that opens it."""

from __future__ import annotations

import csv
import html
import json

import pandas as pd
import pytest

from execbench.analysis.schema import normalize
from execbench.report import write_report
from execbench.report.leaderboard import MIN_PAIRED, TOO_FEW


def entries(written) -> list[dict]:
    assert written.tables_json is not None and written.tables_json.name.endswith(".tables.json")
    return json.loads(written.tables_json.read_text())


def test_every_table_is_written_as_json_and_csv(synthetic_report):
    df, written = synthetic_report
    data = entries(written)
    page = written.html.read_text()
    assert len(data) == page.count("<table") and len(data) == len(written.table_csvs or [])
    for entry in data:
        assert set(entry) >= {"title", "columns", "rows"} and entry["title"] in html.unescape(page)
        assert all(len(row) == len(entry["columns"]) for row in entry["rows"])
        path = written.tables_json.parent / entry["csv"]
        with open(path, newline="") as fh:
            lines = list(csv.reader(fh))
        assert lines[0] == entry["columns"] and len(lines) == len(entry["rows"]) + 1
    overview = next(e for e in data if e["title"] == "Accuracy by family and setting")
    cols = overview["columns"]
    assert {"C/N %", "C/N % low", "C/N % high"} <= set(cols)
    for row in overview["rows"]:
        record = dict(zip(cols, row))
        assert isinstance(record["N"], int) and isinstance(record["C/N %"], float)
        assert record["C/N %"] == pytest.approx(100 * record["C"] / record["N"])
        assert record["C/N % low"] <= record["C/N %"] <= record["C/N % high"]


def test_the_report_opens_with_a_ranked_leaderboard(synthetic_report):
    df, written = synthetic_report
    board = entries(written)[0]
    assert board["title"].startswith("Leaderboard")
    rows = [dict(zip(board["columns"], row)) for row in board["rows"]]
    assert [r["Rank"] for r in rows] == list(range(1, len(rows) + 1)) and len(rows) == df["setting"].nunique()
    assert [r["Accuracy C/N %"] for r in rows] == sorted((r["Accuracy C/N %"] for r in rows), reverse=True)
    for r in rows:
        group = df[df["setting"] == r["Setting"]]
        assert r["N"] == len(group) and r["Accuracy C/N %"] == pytest.approx(100 * group["correct"].mean())
    assert any(c.startswith("trace") for c in board["columns"]) and any(c.startswith("state:") for c in board["columns"])
    page = written.html.read_text()
    assert page.index('id="leaderboard"') < page.index('id="overview"')


def _two_models(n: int, right_a: int, right_b: int) -> pd.DataFrame:
    rows = []
    for model, right in (("prov/alpha", right_a), ("prov/beta", right_b)):
        for i in range(n):
            rows.append({"model": model, "setting": model.split("/")[1], "variant": "direct", "family": "trace",
                         "arm": "trace", "task_id": f"trace/s/c{i}#trace", "source_id": f"s/p{i}",
                         "correct": i < right, "completed": True, "trace_length": 5 + i, "epoch": 1})
    return normalize(pd.DataFrame(rows))


def test_neighbours_are_paired_on_common_tasks_or_called_too_few(tmp_path, fast):
    written = write_report(_two_models(40, 30, 10), tmp_path / "two.html", options=fast)
    paired = next(e for e in entries(written) if e["title"].startswith("Neighbours"))
    row = dict(zip(paired["columns"], paired["rows"][0]))
    assert (row["Higher"], row["Lower"], row["Common tasks"]) == ("alpha", "beta", 40)
    assert row["Only higher right"] == 20 and row["Only lower right"] == 0
    assert row["Δ (pp)"] == pytest.approx(50.0) and row["McNemar p"] < 1e-4
    small = write_report(_two_models(MIN_PAIRED - 1, 5, 2), tmp_path / "small.html", options=fast)
    paired = next(e for e in entries(small) if e["title"].startswith("Neighbours"))
    row = dict(zip(paired["columns"], paired["rows"][0]))
    assert row["Note"].startswith(TOO_FEW) and row["Δ (pp)"] is None and row["McNemar p"] is None
    assert TOO_FEW in small.html.read_text()
