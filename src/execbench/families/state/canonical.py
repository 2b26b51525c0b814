"""The canonical JSON form of checkpoint states (parent side; the emitters live in the
instrumented programs, see :mod:`.instrument_py` and :mod:`.instrument_cpp`).

* an object with the projected fields as keys, keys sorted (nested objects too), no spaces
  (``separators=(",", ":")``), non-ASCII characters written as UTF-8 (not ``\\u`` escapes);
* integers exact, at any size Python can print (<= 4300 digits);
* floats finite only (NaN/infinity make the state unserialisable and the case is rejected),
  written as Python's ``repr`` (shortest text that round-trips: ``0.1``, ``2.0``, ``1e-05``,
  ``1e+16``); the C++ emitter reproduces this format;
* tuples are lists; sets are lists in ascending order; dict keys that are int/float/bool/None
  become strings the way ``json.dumps`` does; any other type makes the state unserialisable.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


def dumps(value: Any) -> str:
    """The canonical text of a JSON value (as parsed back from an emitted state)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def json_type(value: Any) -> str:
    """JSON type name with ints and floats told apart: null/bool/int/float/str/list/object."""
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "object"}.get(
        type(value), type(value).__name__)


def depth_ok(text: str, limit: int = MAX_DEPTH) -> bool:
    """True if the JSON-ish ``text`` nests brackets at most ``limit`` deep (strings skipped).

    Run before ``json.loads`` on untrusted text: the decoder recurses per nesting level."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def leaves(value: Any) -> int:
    """Number of scalar leaves of a JSON value (the size of a projection)."""
    if isinstance(value, list):
        return sum(leaves(v) for v in value)
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    return 1
