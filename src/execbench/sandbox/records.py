"""Reading what a sandboxed program could have written: bounded, validated, never raising
anything but :class:`RecordError`.

Everything a sandboxed run hands back (job values, the job runner's records, ``results.jsonl``)
is hostile input. ``load_json`` refuses records over a size cap and nesting over a depth
cap *before* parsing (``json.loads`` recurses: ``"[" * 200000`` raises RecursionError),
rejects NaN/Infinity and invalid UTF-8; ``check`` validates fields one by one (types,
required keys, sizes), so a malformed record becomes one failed job with a reason instead
of a TypeError/KeyError that crashes a build.

    data = load_json(raw, max_bytes=64 << 20)
    job = check(data, {"ok": bool, "stdout": str, "wall": (int, float)}, optional={"dump": object})
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any, Mapping

from execbench.errors import InternalError

MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class RecordError(InternalError, ValueError):
    """A record written by a program is too large, too deep, not JSON or not as expected."""


def _reject_constant(name: str) -> Any:
    raise RecordError(f"non-finite number {name}")


def nesting(text: str) -> int:
    """Deepest [ / { nesting of a JSON text (strings ignored), without recursion."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for ch in brackets:
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    return deepest


def parsed_cost(raw: bytes | str) -> int:
    """An upper estimate of the memory ``json.loads(raw)`` takes (bytes): a container
    costs about 64 bytes (a dict ~232), an element a pointer, an item's object about its
    text plus 32 bytes; counted on the text before parsing (``[],[],...`` is 2 bytes of
    text per 64 of memory)."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    lists, dicts, items = data.count(b"["), data.count(b"{"), data.count(b",") + 1
    return 64 * lists + 232 * dicts + 40 * items + 2 * len(data)


def load_json(raw: bytes | str, *, max_bytes: int, max_depth: int = MAX_DEPTH,
              max_memory: int | None = None) -> Any:
    """Parse one JSON document of at most ``max_bytes`` and ``max_depth`` levels (and, with
    ``max_memory``, whose parsed form would cost at most that many bytes: :func:`parsed_cost`)."""
    if len(raw) > max_bytes:
        raise RecordError(f"record too large: {len(raw)} bytes (limit {max_bytes})")
    if max_memory is not None and (cost := parsed_cost(raw)) > max_memory:
        raise RecordError(f"record would take ~{cost >> 20} MiB parsed (limit {max_memory >> 20} MiB)")
    try:
        text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
    except UnicodeDecodeError as exc:
        raise RecordError(f"record is not UTF-8: {exc.reason} at byte {exc.start}") from None
    if nesting(text) > max_depth:
        raise RecordError(f"record nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecordError:
        raise
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"record is not JSON: {str(exc)[:200]}") from None


def load_jsonl(raw: bytes, *, max_bytes: int, max_line_bytes: int, max_records: int,
               max_depth: int = MAX_DEPTH) -> tuple[list[Any], list[str]]:
    """JSON lines: (records, one error per bad line). The whole input is capped too."""
    if len(raw) > max_bytes:
        raise RecordError(f"records too large: {len(raw)} bytes (limit {max_bytes})")
    records: list[Any] = []
    errors: list[str] = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        if len(records) >= max_records:
            raise RecordError(f"more than {max_records} records")
        try:
            records.append(load_json(line, max_bytes=max_line_bytes, max_depth=max_depth))
        except RecordError as exc:
            errors.append(f"line {number}: {exc}")
    return records, errors


def check(record: Any, required: Mapping[str, Any], optional: Mapping[str, Any] = {},
          where: str = "record") -> dict[str, Any]:
    """``record`` as a dict holding ``required`` keys and maybe ``optional`` ones, each
    of the given type (a type or tuple of types; ``object`` = any JSON value; bool is not
    accepted as int/float unless asked for). Unknown keys are dropped."""
    if not isinstance(record, dict):
        raise RecordError(f"{where}: expected an object, got {type(record).__name__}")
    out: dict[str, Any] = {}
    for key, types in [*((k, t) for k, t in required.items()), *optional.items()]:
        if key not in record:
            if key in required:
                raise RecordError(f"{where}: missing {key!r}")
            continue
        value = record[key]
        allowed = types if isinstance(types, tuple) else (types,)
        if object not in allowed:
            is_bool = isinstance(value, bool)
            if not isinstance(value, allowed) or (is_bool and bool not in allowed):
                names = "/".join("null" if t is type(None) else t.__name__ for t in allowed)
                raise RecordError(f"{where}: {key!r} should be {names}, got "
                                  f"{type(value).__name__}")
        out[key] = value
    return out


def b64(value: str, where: str = "record") -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise RecordError(f"{where}: invalid base64") from None
