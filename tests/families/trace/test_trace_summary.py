"""Tests for trace_summary (CoCoNUT metrics), with hand-computed numbers."""
import pytest

from execbench.families.trace.grade import grade_trace
from execbench.families.trace.summary import TraceResult, trace_summary


def test_hand_computed_unbalanced_groups():
    results = [
        TraceResult("A", True, 1.0),
        TraceResult("A", True, 1.0),
        TraceResult("A", False, 0.5),
        {"task_group": "B", "correct": False, "similarity": 0.2},
        {"task_group": "B", "correct": False, "similarity": 0.0, "status": "no_answer"},
        TraceResult("C", True, 1.0),
    ]
    s = trace_summary(results)
    assert s["n"] == 6
    assert s["accuracy"] == pytest.approx(3 / 6)
    assert s["accuracy_mean"] == pytest.approx((2 / 3 + 0 / 2 + 1 / 1) / 3)   # 5/9
    assert s["accuracy_mean"] != pytest.approx(s["accuracy"])
    assert s["accuracy_hard"] == pytest.approx(1 / 3)                          # only C
    assert s["similarity"] == pytest.approx((1 + 1 + 0.5 + 0.2 + 0 + 1) / 6)
    assert s["false_similarity"] == pytest.approx((0.5 + 0.2 + 0.0) / 3)
    assert s["no_answer"] == 1 and s["truncated"] == 0


def test_all_correct_and_empty():
    s = trace_summary([TraceResult("A", True, 1.0), TraceResult("B", True, 1.0)])
    assert (s["accuracy"], s["accuracy_mean"], s["accuracy_hard"]) == (1.0, 1.0, 1.0)
    assert s["false_similarity"] is None
    empty = trace_summary([])
    assert empty["n"] == 0 and empty["accuracy"] is None and empty["similarity"] is None


def test_from_graded_scores():
    oracle = [1, 2, 3, 2, 3, 4]
    scores = {"t1": [grade_trace(oracle, "[1, 2, 3, 2, 3, 4]"), grade_trace(oracle, "no idea")],
              "t2": [grade_trace(oracle, "[1, 2, 3, 4]")]}
    results = [TraceResult(g, sc.correct, sc.similarity, sc.status)
               for g, scs in scores.items() for sc in scs]
    s = trace_summary(results)
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert s["accuracy_mean"] == pytest.approx(0.25)
    assert s["no_answer"] == 1
    assert s["false_similarity"] == pytest.approx((0.0 + 2 * 4 / 10) / 2)
