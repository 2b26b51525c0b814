"""Safe parsing of Python literals from untrusted model output, and type-strict equality.

`parse_literal` never evaluates code.  It first checks the raw text with the (iterative)
tokenizer -- length, bracket depth, names, operators, runs of +/- and call/subscript
chains -- because `ast.parse` and `ast.literal_eval` recurse and blow up on hostile
sizes (``"+0"*200000``, ``"-"*100000 + "1"``).  Only then is the text parsed with
``ast.parse(mode="eval")`` and converted by walking a whitelist of nodes: constants
(int, float, complex, str, bytes, bool, None), +/- applied to numbers, ``real +/- imag``
complex numbers, list, tuple, dict, set and ``set()``.  ``float('nan')``, names, calls,
f-strings, attribute access etc. are rejected.
"""
from __future__ import annotations

import ast
import math
import tokenize
from typing import Any

from execbench.errors import InternalError
from execbench.grading.tokens import CLOSERS, OPENERS, TokenBoundError, significant_tokens

MAX_SIGN_RUN = 3             # +/- operators inside one element: "-1", "-1-2j"
_NAMES = {"True", "False", "None", "set"}
_RESET = OPENERS | CLOSERS | {",", ":"}


class LiteralParseError(InternalError, ValueError):
    """The text is not an allowed Python literal (the message says why)."""


def _precheck(text: str, max_depth: int) -> None:
    signs = 0
    prev = None   # previous significant token
    try:
        for tok, _depth in significant_tokens(text, max_depth=max_depth):
            kind, s = tok.type, tok.string
            if kind == tokenize.NAME and s not in _NAMES:
                raise LiteralParseError(f"name not allowed: {s[:40]!r}")
            if kind == tokenize.OP:
                if s not in _RESET and s not in "+-":
                    raise LiteralParseError(f"operator not allowed: {s!r}")
                if s in OPENERS and prev is not None and (
                        prev.type in (tokenize.NUMBER, tokenize.STRING)
                        or prev.string in CLOSERS
                        or (prev.type == tokenize.NAME and not (prev.string == "set" and s == "("))):
                    raise LiteralParseError("call or subscript not allowed")
                if s in "+-":
                    signs += 1
                    if signs > MAX_SIGN_RUN:
                        raise LiteralParseError("too many +/- operators")
                else:
                    signs = 0
            elif kind not in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
                raise LiteralParseError(f"unexpected token {s[:40]!r}")
            prev = tok
    except TokenBoundError as exc:
        raise LiteralParseError(str(exc)) from None


def _number(v: Any) -> bool:
    return type(v) in (int, float, complex)


def _convert(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    if isinstance(node, ast.List):
        return [_convert(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_convert(e) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_convert(e) for e in node.elts}
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_convert(k): _convert(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _convert(node.operand)
        if _number(v):
            return -v if isinstance(node.op, ast.USub) else +v
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _convert(node.left), _convert(node.right)
        if type(left) in (int, float) and type(right) is complex:
            return left + right if isinstance(node.op, ast.Add) else left - right
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "set" and not node.args and not node.keywords):
        return set()
    raise LiteralParseError(f"not allowed in a literal: {type(node).__name__}")


def parse_literal(text: str, *, max_len: int = 100_000, max_depth: int = 50) -> Any:
    """Parse a Python literal safely (module doc); raise LiteralParseError with a reason."""
    if not isinstance(text, str):
        raise LiteralParseError("not a string")
    if len(text) > max_len:
        raise LiteralParseError(f"longer than {max_len} characters")
    text = text.strip()
    if not text:
        raise LiteralParseError("empty")
    _precheck(text, max_depth)
    try:
        tree = ast.parse(text, mode="eval")
        return _convert(tree.body)
    except LiteralParseError:
        raise
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as e:
        raise LiteralParseError(f"{type(e).__name__}: {e}") from None


def values_equal(a: Any, b: Any) -> bool:
    """Type-strict structural equality: 1, 1.0 and True differ; list != tuple;
    dicts and sets compare regardless of order; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, complex):
        return values_equal(a.real, b.real) and values_equal(a.imag, b.imag)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        keys = {k: k for k in b}
        for k, v in a.items():
            hit = _find(keys, k, b)
            if hit is None or not values_equal(v, b[hit[0]]):
                return False
        return True
    if isinstance(a, (set, frozenset)):
        if len(a) != len(b):
            return False
        keys = {k: k for k in b}
        return all(_find(keys, k, b) is not None for k in a)
    return a == b


def _find(keys: dict, k: Any, pool) -> tuple | None:
    """The element of `pool` strictly equal to k, as a 1-tuple (None if absent)."""
    hit = keys.get(k, keys)                 # `keys` itself as the "missing" sentinel
    if hit is not keys and values_equal(k, hit):
        return (hit,)
    for other in pool:                      # hash collided with a non-strict equal (1/True)
        if values_equal(k, other):          # or NaN keys: scan
            return (other,)
    return None
