"""The bounded evaluator of shown expressions (families/repo/fairness/static_eval.py): values a reader
computes without the library, and refusal of everything else (issue 35)."""

from __future__ import annotations

import ast

import pytest

from execbench.families.repo.fairness import static_eval
from execbench.families.repo.grading.compare import parse_answer


def _value(text, names=None, shadowed=()):
    return static_eval.static_value(ast.parse(text, mode="eval").body, names, shadowed)


@pytest.mark.parametrize("text, value", [
    ("['neg'] * 2 + ['notneg'] * 2", ["neg", "neg", "notneg", "notneg"]),
    ("{'foo', 'foo_07'} | {f'foo_{i}' for i in range(3)}", {"foo", "foo_07", "foo_0", "foo_1", "foo_2"}),
    ("list(range(4))", [0, 1, 2, 3]),
    ("[x * x for x in range(5) if x % 2]", [1, 9]),
    ("{k: v for k, v in zip('ab', (1, 2))}", {"a": 1, "b": 2}),
    ("', '.join(str(i) for i in range(3))", "0, 1, 2"),
    ("sorted({3, 1, 2}, reverse=True)", [3, 2, 1]),
    ("tuple(reversed([1, 2]))", (2, 1)),
    ("len('abc') + 2 ** 3", 11),
    ("f'{7:02d}'", "07"),
    ("'-'.join(['a', 'b']).upper()", "A-B"),
    ("[1, *range(2)]", [1, 0, 1]),
    ("(1, 2)[1:]", (2,)),
])
def test_values_a_reader_computes(text, value):
    assert _value(text) == value


@pytest.mark.parametrize("text", [
    "'ab' * 10 ** 9", "2 ** 10 ** 10", "1 << 100000", "f'{1:>1000000000}'", "'%9999999d' % 1",
    "'a' * 90000 + 'b' * 90000", "list(range(10 ** 9))", "'x'.center(10 ** 9)",
    "('a' * 1000).replace('a', 'b' * 1000)", "[[0] * 9000 for _ in range(9000)]",
    "__import__('os')", "open('f')", "f(1)", "x.y", "(lambda: 1)()", "reversed([1])", "[i for i in x]",
    "'a'.__class__", "bytes(10 ** 9)", "sum([[1]] * 10, [])"])
def test_refused_or_bounded(text):
    with pytest.raises(static_eval.NotStatic):
        _value(text)


def test_names_and_shadowed_builtins():
    assert _value("base * 2", {"base": [1]}) == [1, 1]
    with pytest.raises(static_eval.NotStatic):
        _value("list(range(3))", shadowed={"range"})  # a test's own range is not the builtin
    assert static_eval.equals(ast.parse("[0] * 2 + [1]", mode="eval").body, parse_answer("[0, 0, 1]"))
    assert not static_eval.equals(ast.parse("[0] * 2", mode="eval").body, parse_answer("(0, 0)"))
    assert static_eval.equals(ast.parse("set(range(2))", mode="eval").body, parse_answer("{1, 0}"))
