"""C, R and N are counted in one place; the three users agree with it."""

from __future__ import annotations

from execbench.grading.accounting import account


def test_counts_and_ratios():
    counted = account([(True, True), (True, False), (False, False), (True, True)], planned=6)
    assert (counted.planned, counted.completed, counted.correct) == (6, 3, 2)
    assert counted.accuracy_completed == 2 / 3 and counted.accuracy_planned == 2 / 6
    assert counted.completion_rate == 3 / 6


def test_a_correct_flag_without_a_completed_response_does_not_count():
    counted = account([(False, True), (True, True)])
    assert (counted.planned, counted.completed, counted.correct) == (2, 1, 1)


def test_nothing_planned_or_completed_is_none_not_zero():
    assert account([]).accuracy_planned is None and account([]).completion_rate is None
    assert account([(False, False)]).accuracy_completed is None
    assert account([], planned=3).accuracy_planned == 0.0


def test_planned_below_the_responses_made_is_raised_to_them():
    assert account([(True, True)] * 3, planned=1).planned == 3


def test_eval_summary_and_analysis_tables_count_alike():
    import pandas as pd

    from execbench.analysis.schema import normalize
    from execbench.analysis.tables import accuracy_table
    from execbench.eval.summary import summarize_rows

    rows = [{"family": "trace", "arm": "trace", "response_status": status, "correct": correct}
            for status, correct in (("completed", True), ("completed", False), ("error", False), ("empty", False),
                                    ("completed", True))]
    summary = summarize_rows(rows, {("trace", "trace"): 7})["total"]
    frame = normalize(pd.DataFrame({"setting": "s", "family": "trace", "arm": "trace",
                                    "completed": [r["response_status"] == "completed" for r in rows] + [False] * 2,
                                    "correct": [r["correct"] for r in rows] + [False] * 2}))
    table = accuracy_table(frame, ["setting"]).iloc[0]
    assert (summary["N"], summary["R"], summary["C"]) == (table["N"], table["R"], table["C"]) == (7, 3, 2)
    assert summary["accuracy_completed"] == table["acc_cr"] and summary["accuracy_planned"] == table["acc_cn"]
