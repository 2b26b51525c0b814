"""Tests for line-trace extraction, comparison and similarity (execbench.families.trace.grade)."""
import time

import pytest

from execbench.families.trace.grade import (
    ExtractedTrace, canonical_trace, extract_line_trace, grade_trace, similarity, trace_tokens,
)
from execbench.grading import Score, strip_reasoning

ORACLE = [1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6, 7, 8, 9, 10, 11]   # 20 lines
CONC = [1, 2, [3, 10, 10, 11, 11], 4]                                    # oracle JSON form


def fmt(trace):
    return "[" + ", ".join(map(str, trace)) + "]"


# --- oracle vs itself / near misses ------------------------------------------------------

def test_oracle_against_itself_is_correct():
    s = grade_trace(ORACLE, fmt(ORACLE))
    assert isinstance(s, Score)
    assert (s.correct, s.status, s.similarity, s.extracted) == (True, "ok", 1.0, ORACLE)


def test_one_line_dropped_is_wrong_but_similar():
    answer = ORACLE[:7] + ORACLE[8:]
    s = grade_trace(ORACLE, fmt(answer))
    assert not s.correct and s.status == "ok"
    assert s.similarity == pytest.approx(2 * 19 / 39)
    assert s.similarity > 0.9


def test_similarity_basics():
    assert similarity([], []) == 1.0
    assert similarity([1, 2], []) == 0.0
    assert similarity([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert similarity([1, 2, 3, 4], [1, 2, 9, 9]) == pytest.approx(0.5)


# --- extraction --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "```python\n[3, 4, 5]\n```",
    "```json\n[3,4,5]\n```",
    "```\n[3 4 5]\n```",
    "Sure! The executed lines are:\n\n[3, 4, 5]\n\nHope this helps.",
    "Answer: [3, 4, 5]",
    "Final answer: [3, 4, 5,]",
    "Trace:\n[\n  3,\n  4,\n  5\n]",
    '{"trace": [3, 4, 5]}',
])
def test_fences_prose_markers(text):
    assert grade_trace([3, 4, 5], text).correct


def test_last_list_wins():
    text = "First guess [1, 2]. Then lines [3, 4] run. Answer: [3, 4, 5]"
    assert extract_line_trace(text).trace == [3, 4, 5]
    cot = ("Line 3: x = [1, 2, 3] so the loop runs 3 times (see [7]).\n"
           "Partial trace so far [3, 4, 5, 4].\nAnswer: [3, 4, 5, 4, 5, 6]")
    s = grade_trace([3, 4, 5, 4, 5, 6], cot)
    assert s.correct and s.extracted == [3, 4, 5, 4, 5, 6]


def test_span_points_at_the_answer():
    text = "noise [1] then [2, 3] end"
    found = extract_line_trace(text)
    assert isinstance(found, ExtractedTrace) and found.status == "ok"
    assert text[found.span[0]:found.span[1]] == "[2, 3]"


def test_think_blocks():
    assert strip_reasoning("<think>try [9, 9]</think>[1, 2]") == "[1, 2]"
    assert strip_reasoning("a<THINK>x</think>b<think>y</think>c") == "abc"
    assert strip_reasoning("reasoning [9] ...</think>\n[1, 2]") == "\n[1, 2]"   # opened in prompt
    assert strip_reasoning("<think>never closed [1, 2]") == ""
    assert grade_trace([1, 2], "<think>maybe [9, 9]</think>\nAnswer: [1, 2]").correct
    assert grade_trace([1, 2], "maybe [9, 9]\n</think>\n[1, 2]").correct
    s = grade_trace([1, 2], "<think>I think [1, 2] but")
    assert (s.correct, s.status, s.extracted) == (False, "truncated", None)


def test_empty_list_is_an_answer():
    assert grade_trace([], "The function body never runs: []").correct
    s = grade_trace([1, 2], "[]")
    assert (s.correct, s.status, s.extracted, s.similarity) == (False, "ok", [], 0.0)


@pytest.mark.parametrize("text", [
    "", "I cannot determine the trace.", "(1, 2, 3)", "[a, b]", "[1, 2, 'x']",
    "[1.0, 2.0]", "[1, -2]", "[1,,2]", "[,1]", "{1, 2}", "[1, 2) and (",
])
def test_garbage_is_no_answer(text):
    s = grade_trace([1, 2], text)
    assert (s.correct, s.status, s.extracted, s.similarity) == (False, "no_answer", None, 0.0)


def test_floats_or_strings_skip_to_an_earlier_valid_list():
    assert extract_line_trace("[1, 2] then [1.5, 2]").trace == [1, 2]
    assert extract_line_trace('[3, 4] then ["3", "4"]').trace == [3, 4]


def test_unclosed_list_is_truncated():
    s = grade_trace([1, 2, 3, 4], "Reasoning [1, 2] done.\nAnswer: [1, 2, 3, 4, 3, 4, 3,")
    assert (s.correct, s.status, s.similarity) == (False, "truncated", 0.0)
    assert s.extracted == [1, 2, 3, 4, 3, 4, 3]
    assert extract_line_trace("[1, 2, (3, 4").status == "truncated"
    # an unclosed bracket of prose is not a truncated answer
    assert extract_line_trace("[1, 2] and [see above").trace == [1, 2]


# --- concurrency -------------------------------------------------------------------------

def test_canonical_trace():
    assert canonical_trace([1, 2, [11, 3, 10], 4]) == [1, 2, [3, 10, 11], 4]
    assert canonical_trace([1, [[11, 10], [11, 10]]]) == [1, [10, 10, 11, 11]]
    assert canonical_trace([5, 4]) == [5, 4]
    with pytest.raises(TypeError):
        canonical_trace([1, "2"])


@pytest.mark.parametrize("text", [
    "[1, 2, (10, 11, 10, 11, 3), 4]",
    "[1, 2, [10, 11, 10, 11, 3], 4]",
    "[1, 2, ((10, 11), (10, 11), 3), 4]",
    "[1, 2, ((10, 11, 10, 11, 3)), 4]",
    "[1 2 (3 10 11 11 10) 4]",
    "```\n[1, 2, [3, 10, 10, 11, 11], 4]\n```",
])
def test_concurrent_answers_accepted(text):
    s = grade_trace(CONC, text)
    assert s.correct and s.similarity == 1.0, text


def test_concurrent_segment_must_be_marked_and_positioned():
    unmarked = grade_trace(CONC, "[1, 2, 3, 10, 10, 11, 11, 4]")
    late = grade_trace(CONC, "[1, 2, 4, (3, 10, 10, 11, 11)]")
    early = grade_trace(CONC, "[1, (2, 3, 10, 10, 11, 11), 4]")
    split = grade_trace(CONC, "[1, 2, (10, 11), (10, 11, 3), 4]")
    wrong_lines = grade_trace(CONC, "[1, 2, (3, 10, 11, 11), 4]")
    for s in (unmarked, late, early, split, wrong_lines):
        assert s.status == "ok" and not s.correct
        assert 0.0 < s.similarity < 1.0
    # tokens: oracle [1, 2, "(", 3, 10, 10, 11, 11, ")", 4] (10 tokens)
    assert trace_tokens(canonical_trace(CONC)) == [1, 2, "(", 3, 10, 10, 11, 11, ")", 4]
    assert unmarked.similarity == pytest.approx(2 * 8 / 18)      # boundaries unmatched
    assert wrong_lines.similarity == pytest.approx(2 * 9 / 19)   # one line missing


# --- hostile inputs ----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[" * 1_000_000,
    "[" * 500_000 + "]" * 500_000,
    "[(" * 300_000 + ")]" * 300_000,
    "(" * 1_000_000,
    "[" + "1, " * 400_000 + "]",
    "[1]" * 400_000,
    "[" + "9" * 1_000_000 + "]",
    "<think>" * 200_000 + "[1]",
    "</think><think>" * 100_000,
    "x" * 5_000_000 + "[1, 2]",
], ids=lambda t: repr(t[:12]) + f"..{len(t)}")
def test_hostile_inputs_are_bounded(text):
    t0 = time.perf_counter()
    s = grade_trace([1, 2], text)
    assert time.perf_counter() - t0 < 20   # linear: ~1-2 s on an idle 2-core machine
    assert s.status in ("ok", "no_answer", "truncated") and not s.correct


def test_depth_limit():
    assert extract_line_trace("[1, (((2))), 3]").trace == [1, [2], 3]          # depth 4
    assert extract_line_trace("[1, ((((2)))), 3]") is None                     # depth 5


def test_runaway_answer_similarity_is_bounded():
    oracle = [3, 4, 5] * 30 + [6]
    answer = "[" + ", ".join(["4", "5"] * 100_000) + "]"
    t0 = time.perf_counter()
    s = grade_trace(oracle, answer)
    assert time.perf_counter() - t0 < 20   # answer capped at 2*len(oracle)+100 tokens
    assert s.status == "ok" and not s.correct and s.details["similarity_capped"]
    assert 0.0 < s.similarity < 2 * len(oracle) / (len(oracle) + 200_000)


def test_extract_strips_reasoning_and_odd_inputs():
    assert extract_line_trace("<think>[9, 9]</think>[1, 2]").trace == [1, 2]
    assert extract_line_trace("<think>[1, 2") is None
    assert extract_line_trace("[1, ², 2]") is None          # non-ASCII digits are not numbers
    assert extract_line_trace("[1, 2, 1234567890]") is None  # more than 9 digits
    s = grade_trace([1], None)
    assert (s.correct, s.status) == (False, "no_answer")
