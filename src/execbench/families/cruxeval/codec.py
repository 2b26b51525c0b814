"""Tagged JSON for Python literal values, so argument values parsed from a model's answer
reach the sandboxed runner as data (no text is parsed there): ints as decimal text, floats
and complex parts as ``repr`` (``inf`` included), bytes as base64, tuples, sets and dicts
tagged (set elements in a canonical order). Depth is bounded by the literal parser that produced the value (50 levels)."""

from __future__ import annotations

import base64
import json
from typing import Any, TypeAlias, Union

# A Python literal value: what the safe literal parser (execbench.grading.parse_literal) returns
# and :func:`encode` tags (frozensets cannot be written as literals)
LiteralValue: TypeAlias = Union[None, bool, int, float, complex, str, bytes, list["LiteralValue"],
                                tuple["LiteralValue", ...], set["LiteralValue"], dict["LiteralValue", "LiteralValue"]]


def encode(value: Any) -> Any:
    kind = type(value)
    if value is None:
        return {"n": 0}
    if kind is bool:
        return {"b": value}
    if kind is int:
        return {"i": str(value)}
    if kind is float:
        return {"f": repr(value)}
    if kind is complex:
        return {"c": [repr(value.real), repr(value.imag)]}
    if kind is str:
        return {"s": value}
    if kind is bytes:
        return {"y": base64.b64encode(value).decode()}
    if kind is list:
        return {"l": [encode(v) for v in value]}
    if kind is tuple:
        return {"t": [encode(v) for v in value]}
    if kind is set:
        return {"e": sorted((encode(v) for v in value), key=json.dumps)}  # independent of the hash seed
    if kind is dict:
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"not a literal value: {kind.__name__}")


def decode(data: Any) -> Any:
    (tag, raw), = data.items()
    if tag == "n":
        return None
    if tag == "b":
        return bool(raw)
    if tag == "i":
        return int(raw)
    if tag == "f":
        return float(raw)
    if tag == "c":
        return complex(float(raw[0]), float(raw[1]))
    if tag == "s":
        return str(raw)
    if tag == "y":
        return base64.b64decode(raw)
    if tag == "l":
        return [decode(v) for v in raw]
    if tag == "t":
        return tuple(decode(v) for v in raw)
    if tag == "e":
        return {decode(v) for v in raw}
    if tag == "d":
        return {decode(k): decode(v) for k, v in raw}
    raise ValueError(f"unknown tag {tag!r}")
