"""The leak gate on values a reader computes (issue 35): shown definitions and expressions
are compared by value, comments of any length, the place is named."""

from __future__ import annotations

import ast

from execbench.families.repo import build
from execbench.families.repo.fairness import leaks
from execbench.families.repo.fairness import masking
from execbench.families.repo.selection import assertions as A

SOURCE = '''
import unittest
from lib import f, sides, tags


class SidesTest(unittest.TestCase):
    def test_sides(self):
        actual = sides(range(-3, 3))
        expected = ['neg'] * 3 + ['pos'] * 3
        other = ['neg'] * 3 + ['pos'] * 3
        self.assertEqual(actual, expected)


def test_ids():
    ids = tags('foo', 3)
    assert ___ == {'foo', 'foo_07'} | {f'foo_{i}' for i in range(3)}


def test_midnight():
    # converts to '12' at midnight
    assert f(0) == '12'
'''


def _fn(name):
    return next(f for f in A.test_functions(SOURCE).values() if f.qualname.endswith(name))


def _at(name, answer, masked=1, hidden=()):
    fn = _fn(name)
    a = fn.assertions[0]
    shown = A.mask_text(SOURCE, fn, (a, masked), list(hidden))
    return leaks.answer_visible_at(function=fn, source=SOURCE, masked=a.operands[masked],
                                   actual=a.operands[1 - masked], answer=answer,
                                   inputs=masking._inputs(fn, a.operands[1 - masked]), hidden=list(hidden),
                                   input_parameters="{}", shown_texts=[shown])


def test_a_computed_definition_that_only_feeds_assertions_is_a_leak_with_its_line():
    fn = _fn("test_sides")
    expected = next(n.value for n in ast.walk(fn.node) if isinstance(n, ast.Assign) and n.targets[0].id == "expected")
    answer = "['neg', 'neg', 'neg', 'pos', 'pos', 'pos']"
    # `expected` is hidden (the masking does that, see test_exec_grade.py); `other` still shows the value
    assert _at("test_sides", answer, hidden=[A.Span.of(expected)]) == (
        "answer_visible: definition", "line 10: other = ['neg'] * 3 + ['pos'] * 3")
    assert _at("test_sides", "['neg', 'pos']", hidden=[A.Span.of(expected)]) is None  # another value: no leak
    assert leaks.static_values(fn) == {"expected": ["neg"] * 3 + ["pos"] * 3, "other": ["neg"] * 3 + ["pos"] * 3}


def test_a_comprehension_over_range_is_a_shown_expression():
    reason, place = _at("test_ids", "{'foo', 'foo_0', 'foo_07', 'foo_1', 'foo_2'}", masked=0)
    assert reason == "answer_visible: expression" and place.startswith("line 16: {'foo', 'foo_07'} |")


def test_comments_state_short_strings_in_quotes_and_containers_by_value():
    assert _at("test_midnight", "'12'") == ("answer_visible: comment", "# converts to '12' at midnight")
    assert leaks.comment_stating("'12'", ["x = 1  # 12 hours"]) is None  # unquoted: prose
    assert leaks.comment_stating("'a'", ["x = 1  # the 'a' key"]) == "# the 'a' key"
    assert leaks.comment_stating("'a'", ["x = 1  # the 'a' key"], words_quoted=True) is None  # whole module
    assert leaks.in_comments("{'a': 1, 'b': 2}", ["x = 1  # -> {'b': 2, 'a': 1}"]) is True
    assert leaks.in_comments("[1, 2]", ["x = 1  # (1, 2) is a tuple"]) is False


def test_hidden_spans_mask_computed_definitions_and_shown_values_of_other_assertions():
    text = '''
def test_shift():
    m = Moment(2013, 5, 5)
    expected = [0] * 2
    assert m.shift(6).shift(SU) == m
    assert m.shift(SU).shift(6) == m
    assert sides(m) == expected
    assert tags(m) == [x for x in [0, 0]]
'''
    fn = next(iter(A.test_functions(text).values()))
    item = build.Item("k", build.Module("t.py", None, text, {}), fn, fn.assertions[0],  # type: ignore[arg-type]
                      build.dvp.choose(fn.assertions[0], fn))
    spans = masking._answer_elsewhere(item, "Moment(2013, 5, 5)")
    assert [(s.lineno, s.col) for s in spans] == [(6, 35)]  # the other assertion's `m`
    item2 = build.Item("k2", item.module, fn, fn.assertions[2], build.dvp.choose(fn.assertions[2], fn))
    hidden = masking._hidden_spans({"k2": item2}, item2, "[0, 0]")
    assert sorted((s.lineno, s.col) for s in hidden) == [(4, 15), (8, 22)]


MUTATED = '''
def test_counters(self):
    counters = {}
    self.assertEqual(unique('foo', counters), 'foo_2')
    self.assertEqual(counters, {'foo': 11})
'''


def test_a_value_the_library_changed_is_no_shown_expression():
    """markdown: `counters = {}` filled by calls inside assertions; its literal is not the answer."""
    fn = next(iter(A.test_functions(MUTATED).values()))
    a = fn.assertions[1]
    shown = A.mask_text(MUTATED, fn, (a, 1), [])
    assert leaks.answer_visible_at(function=fn, source=MUTATED, masked=a.operands[1], actual=a.operands[0],
                                   answer="{'foo': 11}", inputs=masking._inputs(fn, a.operands[0]), hidden=[],
                                   input_parameters="{}", shown_texts=[shown]) is None
