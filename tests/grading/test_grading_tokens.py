"""The one bounded pre-check: its shared bounds, and every answer parser refusing through it."""

from __future__ import annotations

import pytest

from execbench.families.repo.grading import compare, sympy_parse
from execbench.grading import LiteralParseError, parse_literal
from execbench.grading.tokens import TokenBoundError, significant_tokens

DEEP = "[" * 200 + "]" * 200
LONG_NUMBER = "1" * 5000


def test_layout_is_skipped_and_depth_reported():
    tokens = [(tok.string, depth) for tok, depth in significant_tokens("[1,\n (2)]  # note\n", max_depth=5)]
    assert tokens == [("[", 1), ("1", 1), (",", 1), ("(", 2), ("2", 2), (")", 1), ("]", 0)]


@pytest.mark.parametrize("text,reason,untokenizable", [
    (DEEP, "nesting deeper than 10", False),
    (LONG_NUMBER, "number too long", False),
    ('"""unterminated', "cannot tokenize", True),
    ("[1, 2", "cannot tokenize", True),
])
def test_shared_bounds(text, reason, untokenizable):
    with pytest.raises(TokenBoundError, match=reason) as info:
        list(significant_tokens(text, max_depth=10))
    assert info.value.untokenizable is untokenizable


@pytest.mark.parametrize("text", [DEEP, LONG_NUMBER])
def test_every_parser_refuses_through_the_shared_bounds(text):
    with pytest.raises(LiteralParseError, match="nesting deeper|number too long"):
        parse_literal(text)
    with pytest.raises(compare.Refused, match="nesting deeper|number too long"):
        compare.bounded_parse(text)
    with pytest.raises(sympy_parse.SympyParseError, match="nesting deeper|number too long"):
        sympy_parse.precheck(text)
