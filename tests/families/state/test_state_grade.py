"""State grading: the JSON envelope (strict and lenient), token/byte/type-strict comparison,
hostile inputs, and the summary."""

from __future__ import annotations

import json

import pytest

from execbench.dataset import Task
from execbench.families.state import FAMILY
from execbench.families.state.grade import extract, parse_state


def task(arm: str, answer, compare: str = "tokens") -> Task:
    kind = "json" if arm.endswith("state") else "text"
    return Task(id=f"state/t/c#{arm}", family="state", arm=arm, source_id="t/c", language="python",
                prompt_fields={"program": "print(1)\n", "input": ""}, answer=answer, answer_kind=kind,
                metrics={}, provenance={"compare": compare if kind == "text" else "json-structural"})


FINAL = task("long-trace-final", "251502\n")
STATE = task("post-loop-state", {"ans": 251502, "cnt1": 2, "dp1": 2})


def envelope(text: str) -> str:
    return json.dumps({"output": text})


@pytest.mark.parametrize("response, correct, status", [
    (envelope("251502"), True, "ok"),
    (envelope("251502\n"), True, "ok"),
    ("```json\n" + envelope(" 251502 ") + "\n```", True, "ok"),
    ("<think>it is 1</think>" + envelope("251502"), True, "ok"),
    ("Reasoning... so the answer is " + envelope("251502") + " done", True, "bad_envelope"),
    ('The result: "output": "251502"', True, "bad_envelope"),
    ('{"output": 251502}', True, "bad_envelope"),
    ("251502", True, "bad_envelope"),
    (envelope("251503"), False, "ok"),
    ("the answer is 251502", False, "bad_envelope"),
    ("", False, "no_answer"),
    ("<think>still thinking about 251502", False, "truncated"),
])
def test_final_arm_envelopes(response, correct, status):
    score = FAMILY.grade(FINAL, response)
    assert (score.correct, score.status) == (correct, status)
    assert score.details["envelope_valid"] is (status == "ok")


def test_byte_equality_when_the_dataset_asks_for_it():
    exact = task("short-trace-final", "70\n4 0 5\n", compare="bytes")
    assert FAMILY.grade(exact, envelope("70\n4 0 5\n")).correct
    assert not FAMILY.grade(exact, envelope("70\n4 0 5")).correct
    assert not FAMILY.grade(exact, envelope("70 4 0 5\n")).correct
    assert FAMILY.grade(task("short-trace-final", "70\n4 0 5\n"), envelope("70 4 0 5")).correct


def test_state_arms_are_type_strict_and_accept_a_last_line_state():
    good = json.dumps({"dp1": 2, "cnt1": 2, "ans": 251502})
    assert FAMILY.grade(STATE, envelope(good)).correct
    assert FAMILY.grade(STATE, envelope('{"ans":251502, "cnt1":2, "dp1":2}')).correct
    assert not FAMILY.grade(STATE, envelope('{"ans":251502,"cnt1":2,"dp1":2.0}')).correct
    assert not FAMILY.grade(STATE, envelope('{"ans":251502,"cnt1":2,"dp1":true}')).correct
    assert not FAMILY.grade(STATE, envelope('{"ans":251502,"cnt1":2}')).correct
    printed_first = FAMILY.grade(STATE, envelope("1 2 3\n" + good + "\n"))
    assert printed_first.correct and printed_first.details["state_parse"] == "last-line"
    as_object = FAMILY.grade(STATE, '{"output": {"ans": 251502, "cnt1": 2, "dp1": 2}}')
    assert as_object.correct and as_object.status == "bad_envelope"
    floats = task("inside-loop-state", {"total": 280.00000625, "i": 80})
    assert FAMILY.grade(floats, envelope('{"i":80,"total":280.00000625}')).correct
    assert not FAMILY.grade(floats, envelope('{"i":80,"total":280.0000062}')).correct
    wrong = FAMILY.grade(STATE, envelope("not json"))
    assert not wrong.correct and wrong.status == "ok" and wrong.details["state_parse"] == "unparsable"


def test_hostile_responses_are_bounded():
    deep = envelope("[" * 100_000 + "]" * 100_000)
    assert not FAMILY.grade(STATE, deep).correct
    assert not FAMILY.grade(STATE, "{" * 200_000).correct
    huge = FAMILY.grade(FINAL, "x" * 2_000_001)
    assert huge.status == "no_answer" and not huge.correct
    digits = FAMILY.grade(STATE, envelope('{"ans":' + "9" * 10_000 + "}"))
    assert not digits.correct
    assert parse_state("[" * 70 + "]" * 70) == (False, None, "unparsable")
    status, value, _ = extract('{"output": "a"} {"output": "b"}')
    assert (status, value) == ("bad_envelope", "b")


def test_summary_counts_arms_envelopes_and_paired_flips():
    tasks = {arm: task(arm, ans) for arm, ans in [
        ("short-trace-final", "9\n"), ("long-trace-final", "251502\n"),
        ("inside-loop-state", {"a": 1}), ("post-loop-state", {"a": 2})]}
    responses = {"short-trace-final": envelope("9"), "long-trace-final": "251501",
                 "inside-loop-state": envelope('{"a":1}'), "post-loop-state": ""}
    results = [(t, FAMILY.grade(t, responses[arm])) for arm, t in tasks.items()]
    summary = FAMILY.summarize(results)
    assert summary["n"] == 4 and summary["accuracy"] == 0.5
    assert summary["accuracy/short-trace-final"] == 1.0 and summary["accuracy/long-trace-final"] == 0.0
    assert summary["pairs"] == 1 and summary["pairs/correct_to_wrong"] == 1 and summary["pairs/wrong_to_correct"] == 0
    assert summary["status/no_answer"] == 1 and summary["status/bad_envelope"] == 1
    assert summary["envelope_valid_rate"] == pytest.approx(2 / 3)
