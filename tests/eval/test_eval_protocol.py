"""The Inspect-free evaluation protocol: variants, sample metadata, grading and completion accounting."""

from __future__ import annotations

import pytest

from eval_support import synthetic_task, write_dataset
from execbench.eval import protocol
from execbench.eval.protocol import EvalSetupError
from execbench.families.trace.prompt import TEMPLATES


def test_mode_maps_to_variant_and_variant_wins():
    assert protocol.resolve_variant(None, None, ["trace"]) == "direct"
    assert protocol.resolve_variant("cot", None, ["trace"]) == "cot"
    assert protocol.resolve_variant("direct", "3-shot", ["trace"]) == "3-shot"
    for variant in ("static-analysis", "symbols", "line"):
        assert protocol.resolve_variant(None, variant, ["trace"]) == variant


def test_unknown_variant_and_mode_are_refused_with_the_known_ones():
    with pytest.raises(EvalSetupError, match="no prompt variant 'nope'.*direct, cot"):
        protocol.resolve_variant(None, "nope", ["trace"])
    with pytest.raises(EvalSetupError, match="unknown mode"):
        protocol.resolve_variant("telepathy", None, ["trace"])


def test_agent_mode_is_accepted_but_needs_repo_tasks():
    with pytest.raises(EvalSetupError, match="repo"):
        protocol.resolve_variant("agent", None, ["trace"])


def test_load_tasks_filters_by_family_and_refuses_empty(tmp_path):
    path = write_dataset(tmp_path / "d", 3)
    assert [t.id for t in protocol.load_tasks(path)] == [synthetic_task(i).id for i in range(3)]
    assert len(protocol.load_tasks(path, "trace")) == 3
    with pytest.raises(EvalSetupError, match="unknown family"):
        protocol.load_tasks(path, "telepathy")


def test_sample_metadata_records_identity_metrics_and_template():
    (item,) = protocol.render([synthetic_task(1)], "cot")
    meta = item.metadata()
    assert meta["family"] == "trace" and meta["arm"] == "trace" and meta["source_id"] == "synthetic/f"
    assert meta["metrics"] == {"trace_length": 3, "loc": 5}
    assert meta["template"] == "trace/cot" and meta["template_version"] == TEMPLATES.version("cot") and meta["variant"] == "cot"
    assert protocol.templates([item]) == {"trace": [{"template": "trace/cot", "version": TEMPLATES.version("cot")}]}
    assert (meta["topic"], meta["repository"], meta["original_id"]) == ("synthetic", None, None)


def test_completed_correct_answer():
    grade = protocol.grade_response(synthetic_task(2), "The lines are [2, 3, 4, 5]", stop_reason="stop",
                                    output_tokens=9)
    assert grade["correct"] and grade["status"] == "ok" and grade["similarity"] == 1.0
    assert grade["response_status"] == "completed" and grade["completed"] and not grade["truncated"]
    assert grade["extracted"] == [2, 3, 4, 5] and grade["output_tokens"] == 9
    assert (grade["family"], grade["arm"], grade["source_id"]) == ("trace", "trace", "synthetic/f")
    assert grade["metrics"]["trace_length"] == 4


def test_reasoning_blocks_are_stripped_before_extraction():
    grade = protocol.grade_response(synthetic_task(2), "<think>maybe [9, 9]</think>\n[2, 3, 4, 5]")
    assert grade["correct"] and grade["extracted"] == [2, 3, 4, 5]


def test_completed_without_answer_is_wrong_not_excluded():
    grade = protocol.grade_response(synthetic_task(2), "I cannot tell.", stop_reason="stop")
    assert grade["response_status"] == "completed" and grade["status"] == "no_answer" and not grade["correct"]


def test_truncated_at_token_limit_is_marked():
    cut_in_list = protocol.grade_response(synthetic_task(2), "[2, 3, 4", stop_reason="max_tokens")
    assert cut_in_list["status"] == "truncated" and cut_in_list["truncated"] and cut_in_list["completed"]
    cut_before = protocol.grade_response(synthetic_task(2), "Let me follow the calls one", stop_reason="max_tokens")
    assert cut_before["status"] == "truncated" and not cut_before["correct"]
    answered_then_cut = protocol.grade_response(synthetic_task(2), "[2, 3, 4, 5] because first", stop_reason="max_tokens")
    assert answered_then_cut["correct"] and answered_then_cut["status"] == "ok" and answered_then_cut["truncated"]


def test_empty_response_and_transport_failure_are_not_completed():
    empty = protocol.grade_response(synthetic_task(2), "", stop_reason="stop")
    assert empty["response_status"] == "empty" and not empty["completed"] and not empty["correct"]
    failed = protocol.grade_response(synthetic_task(2), "", error="ConnectionError: refused")
    assert failed["response_status"] == "error" and failed["error"].startswith("ConnectionError")
    assert failed["similarity"] == 0.0  # the family's convention for a missing answer
    reasoning_only = protocol.grade_response(synthetic_task(2), "", stop_reason="stop", reasoning=True)
    assert reasoning_only["response_status"] == "completed" and reasoning_only["status"] == "no_answer"
    budget_spent = protocol.grade_response(synthetic_task(2), "", stop_reason="max_tokens")
    assert budget_spent["response_status"] == "completed" and budget_spent["status"] == "truncated"


def test_similarity_probe():
    assert protocol.reports_similarity(synthetic_task(0))
