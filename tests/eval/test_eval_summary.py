"""Completion accounting (paper 001): C/R over completed responses, C/N over all planned."""

from __future__ import annotations

import pytest

from execbench.eval.summary import summarize_rows


def row(family, arm, response_status, correct=False, status="ok", similarity=None, truncated=False, tokens=10):
    return {"family": family, "arm": arm, "response_status": response_status, "correct": correct,
            "status": status, "similarity": similarity, "truncated": truncated, "output_tokens": tokens}


def test_c_over_r_and_c_over_n():
    rows = [row("trace", "trace", "completed", True, similarity=1.0),
            row("trace", "trace", "completed", False, status="no_answer", similarity=0.0),
            row("trace", "trace", "completed", False, status="truncated", similarity=0.0, truncated=True),
            row("trace", "trace", "error", similarity=0.0, tokens=None),
            row("trace", "trace", "empty", similarity=0.0, tokens=0)]
    summary = summarize_rows(rows, {("trace", "trace"): 6})  # one planned sample never ran
    total = summary["total"]
    assert (total["N"], total["R"], total["C"]) == (6, 3, 1)
    assert total["accuracy_completed"] == pytest.approx(1 / 3)
    assert total["accuracy_planned"] == pytest.approx(1 / 6)
    assert (total["errors"], total["empty"], total["not_run"], total["truncated"]) == (1, 1, 1, 1)
    assert total["extraction"] == {"no_answer": 1, "ok": 1, "truncated": 1}
    assert total["similarity"] == pytest.approx(0.2)
    assert total["output_tokens_mean"] == pytest.approx(30 / 4)


def test_groups_per_family_and_arm_including_planned_but_unrun():
    rows = [row("state", "short-trace-final", "completed", True),
            row("state", "long-trace-final", "completed", False)]
    planned = {("state", "short-trace-final"): 1, ("state", "long-trace-final"): 1, ("trace", "trace"): 2}
    summary = summarize_rows(rows, planned)
    groups = {(g["family"], g["arm"]): g for g in summary["groups"]}
    assert groups[("trace", "trace")]["not_run"] == 2 and groups[("trace", "trace")]["accuracy_completed"] is None
    assert groups[("trace", "trace")]["accuracy_planned"] == 0.0
    assert groups[("state", "short-trace-final")]["accuracy_planned"] == 1.0
    assert summary["total"]["N"] == 4 and summary["total"]["C"] == 1
    assert summary["total"]["similarity"] is None  # no family reported one
