"""Tests for the safe literal parser and type-strict equality (execbench.grading.literal)."""
import math
import time

import pytest

from execbench.grading import LiteralParseError, parse_literal, values_equal


@pytest.mark.parametrize("text, expected", [
    ("1", 1), ("-5", -5), ("+3", 3), ("0x1f", 31), ("1_000", 1000), ("2.5", 2.5), ("-1e3", -1000.0),
    ("'a\\nb'", "a\nb"), ('"\\u00e9"', "é"), ("b'\\x00'", b"\x00"), ("'a' 'b'", "ab"),
    ("None", None), ("True", True), ("False", False),
    ("[1, (2, 3), {4: 'x'}, {5}]", [1, (2, 3), {4: "x"}, {5}]),
    ("()", ()), ("(1,)", (1,)), ("set()", set()), ("{}", {}), ("[]", []),
    ("1+2j", 1 + 2j), ("-1.5-2j", -1.5 - 2j), ("3j", 3j),
    ("  [1,\n 2, # comment\n 3]  ", [1, 2, 3]),
    ("1e999", math.inf),
])
def test_accepted(text, expected):
    assert values_equal(parse_literal(text), expected)


@pytest.mark.parametrize("text", [
    "__import__('os').system('x')", "float('nan')", "nan", "inf", "x", "print(1)",
    "[1, 2][0]", "(1)(2)", "'a'.upper()", "1 + 1", "2 * 3", "-'a'", "True + 1j",
    "f'{1}'", "lambda: 0", "[i for i in ()]", "{**{}}", "[*()]", "...", "1 if 1 else 2",
    "not 1", "a.b", "(x := 1)", "set([1])", "{[1]: 2}", "{[]}", "'unterminated", "[1, 2",
    "", "   ", "1 2", "9" * 5000,
])
def test_rejected(text):
    with pytest.raises(LiteralParseError):
        parse_literal(text)


def test_no_side_effect(tmp_path):
    target = tmp_path / "pwned"
    payloads = [f"__import__('os').system('touch {target}')",
                f"[open({str(target)!r}, 'w')]",
                f"f'{{__import__(\"os\").system(\"touch {target}\")}}'"]
    for p in payloads:
        with pytest.raises(LiteralParseError):
            parse_literal(p)
    assert not target.exists()


@pytest.mark.parametrize("text, max_len", [
    ("+0" * 200_000, 100_000), ("-" * 100_000 + "1", 100_000),     # too long by default
    ("+0" * 200_000, 10**6), ("-" * 100_000 + "1", 10**6),         # limit raised: operator runs
    ("[" * 100_000, 10**6), ("(" * 60 + "1" + ")" * 60, 10**6),    # nesting depth
    ("x" + "()" * 40_000, 10**6), ("[1]" + "[0]" * 30_000, 10**6), # call / subscript chains
    ("1 if 1 else " * 8_000 + "1", 10**6), ("~" * 50_000 + "1", 10**6),
    ("'" * 99_999, 10**6), ('"""' + "a" * 99_000, 10**6),          # unterminated strings
], ids=lambda v: repr(v[:12]) if isinstance(v, str) else str(v))
def test_hostile_rejected_quickly(text, max_len):
    t0 = time.perf_counter()
    with pytest.raises(LiteralParseError):
        parse_literal(text, max_len=max_len)
    assert time.perf_counter() - t0 < 5


def test_limits_are_parameters():
    assert parse_literal("[[[1]]]", max_depth=3) == [[[1]]]
    with pytest.raises(LiteralParseError, match="nesting"):
        parse_literal("[[[[1]]]]", max_depth=3)
    with pytest.raises(LiteralParseError, match="longer"):
        parse_literal("[1, 2, 3]", max_len=5)
    big = "[" + ", ".join(["1"] * 20_000) + "]"
    assert len(parse_literal(big)) == 20_000


def test_values_equal_is_type_strict():
    assert values_equal(1, 1) and not values_equal(1, 1.0) and not values_equal(1, True)
    assert not values_equal(0, False) and not values_equal(1.0, True)
    assert not values_equal([1, 2], (1, 2)) and values_equal((1, [2]), (1, [2]))
    assert not values_equal([1], [1.0]) and not values_equal("1", 1) and not values_equal(b"a", "a")
    assert values_equal(float("nan"), float("nan")) and values_equal([math.nan], [math.nan])
    assert values_equal(complex(math.nan, 1), complex(math.nan, 1))
    assert values_equal({"a": 1, "b": [2]}, {"b": [2], "a": 1})
    assert not values_equal({"a": 1}, {"a": 1.0}) and not values_equal({"a": 1}, {"a": 1, "b": 2})
    assert not values_equal({1: "x"}, {True: "x"}) and not values_equal({1}, {True})
    assert values_equal({3, 1, 2}, {1, 2, 3}) and not values_equal({1, 2}, frozenset({1, 2}))
    assert values_equal({math.nan: 1}, {math.nan: 1})
    assert values_equal(None, None) and not values_equal(None, 0)
