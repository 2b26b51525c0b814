"""First-deviation taxonomy rules on hand-made traces (see families/trace/taxonomy.py)."""

import pytest

from execbench.families.trace.taxonomy import CATEGORIES, classify, first_deviation, program_lines

PROGRAM = (
    "@staticmethod\n"              # 1  (decorator: a definition line)
    "def f(xs,\n"                  # 2
    "      limit=3):\n"            # 3
    '    """Sum things."""\n'      # 4
    "    total = 0\n"              # 5
    "    # comment\n"              # 6
    "\n"                           # 7
    "    for x in xs:\n"           # 8
    "        if x > limit:\n"      # 9
    "            total += x\n"     # 10
    "        elif x == 0:\n"       # 11
    "            pass\n"           # 12
    "        else:\n"              # 13
    "            total -= 1\n"     # 14
    "    while total > 10:\n"      # 15
    "        total -= 10\n"        # 16
    "    y = max(\n"               # 17
    "        total, 1)\n"          # 18
    "    return y\n"               # 19
)
# a plausible run (only its structure matters here)
ORACLE = [5, 8, 9, 10, 8, 9, 11, 14, 8, 15, 17, 19]


def case(prefix, *rest):
    return ORACLE[:prefix] + list(rest)


@pytest.mark.parametrize("predicted,status,expected", [
    (None, "no_answer", "empty"),
    ([], "ok", "empty"),
    ([5, 8, 9], "truncated", "truncated"),           # cut off before the run's end: no telling
    (None, "truncated", "truncated"),                # cut off before any list (not "empty")
    (ORACLE + [8, 9], "truncated", "no exit"),       # cut off past the run's end
    (ORACLE[:-1] + [8], "truncated", "no exit"),     # as long as the run and not closed
    (ORACLE[:5], "ok", "early stop"),
    (ORACLE + [19], "ok", "overrun"),
    (case(0, 2, 5), "ok", "definition call"),        # lists the signature
    (case(0, 1), "ok", "definition call"),           # the decorator line
    (case(1, 6), "ok", "nonsense line"),             # a comment
    (case(1, 4), "ok", "nonsense line"),             # the docstring
    (case(7, 13, 14), "ok", "nonsense line"),        # bare else:
    (case(1, 99), "ok", "nonsense line"),            # outside the program
    (case(2, 10), "ok", "condition skip"),           # into the if body without the test
    (case(6, 14), "ok", "condition skip"),           # elif test skipped, straight into else body
    (case(2, 19), "ok", "loop skip"),                # leaves the loop while it still runs
    (case(3, 9), "ok", "predicate wrong"),           # after the if test: the other branch
    (case(9, 16), "ok", "condition skip"),           # into the while body without its test
    (case(10, 16), "ok", "predicate wrong"),         # while test evaluated as true
    (case(5, 11), "ok", "condition skip"),           # skip if-test, go to elif test (a guarded branch)
    (case(10, 19), "ok", "statement skip"),          # skips y = max(...)
    (case(10, 5), "ok", "other"),
])
def test_categories(predicted, status, expected):
    assert expected in CATEGORIES
    assert classify(PROGRAM, ORACLE, predicted, status) == expected


def test_predicate_wrong_and_loop_exit_cases():
    # after the if test (line 9, x=5 > limit is true, next is 10): the model jumps to the elif test
    oracle = [5, 8, 9, 10, 8, 15, 19]
    assert classify(PROGRAM, oracle, [5, 8, 9, 11], "ok") == "predicate wrong"
    # after the for header with items left, the model leaves the loop: a loop skip
    assert classify(PROGRAM, oracle, [5, 8, 15], "ok") == "loop skip"
    # after the for header with no items left, the model runs the body again: predicate wrong
    assert classify(PROGRAM, oracle, [5, 8, 9, 10, 8, 9], "ok") == "predicate wrong"


def test_correct_trace_has_no_category_and_json_is_accepted():
    assert classify(PROGRAM, ORACLE, list(ORACLE), "ok") is None
    assert classify(PROGRAM, "[5, 8]", "[5, 8]", "ok") is None
    assert classify(PROGRAM, "[5, 8]", "[5, 9]", "ok") == "condition skip"


def test_concurrency_segments_are_compared_as_units():
    oracle = [1, 2, [3, 4, 4], 5]
    assert classify(None, oracle, [1, 2, [4, 3, 4], 5], "ok") is None
    assert classify(None, oracle, [1, 2, 3, 4, 4, 5], "ok") == "concurrency"


def test_unparsable_program_is_unclassified():
    assert classify("def (:", [1, 2], [1, 3], "ok") == "unclassified"
    assert classify(None, [1, 2], [1, 3], "ok") == "unclassified"


def test_program_lines_facts():
    info = program_lines(PROGRAM)
    assert {1, 2, 3} <= info.definition
    assert 4 not in info.executable and 6 not in info.executable and 13 not in info.executable
    assert {5, 8, 9, 10, 17, 18, 19} <= info.executable


def test_first_deviation():
    assert first_deviation([1, 2, 3], [1, 2, 3]) is None
    assert first_deviation([1, 2, 3], [1, 5, 3]) == 1
    assert first_deviation([1, 2, 3], [1, 2]) == 2
