"""Bounded value summaries that never call user code.

Calling a user ``__repr__`` while tracing can change what the program does (FIELD-NOTES:
cachetools' ``TTLCache.__repr__`` expires entries), so only exact builtin types are
rendered; anything else becomes ``<module.Type>``. Sizes are bounded: long strings and
containers are elided with a count of what was left out, huge ints by their bit length.
"""

from __future__ import annotations

from typing import Any

MAX_ITEMS = 8
MAX_STR = 80
MAX_DEPTH = 3
MAX_INT_BITS = 256


def type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def summarize(value: Any, depth: int = 0) -> str:
    """A short, deterministic, side-effect-free rendering of ``value``."""
    cls = type(value)
    if value is None or cls is bool:
        return repr(value)
    if cls is int:
        if value.bit_length() > MAX_INT_BITS:
            return f"<int of {value.bit_length()} bits>"
        return repr(value)
    if cls is float or cls is complex:
        return repr(value)
    if cls is str or cls is bytes:
        if len(value) > MAX_STR:
            return repr(value[:MAX_STR]) + f"...(+{len(value) - MAX_STR})"
        return repr(value)
    if cls in (list, tuple, set, frozenset, dict):
        if depth >= MAX_DEPTH:
            return f"<{cls.__name__} of {len(value)}>"
        return _container(value, cls, depth)
    return f"<{type_name(value)}>"


def _container(value: Any, cls: type, depth: int) -> str:
    n = len(value)
    if cls is dict:
        items = []
        for i, (k, v) in enumerate(value.items()):
            if i == MAX_ITEMS:
                break
            items.append(f"{summarize(k, depth + 1)}: {summarize(v, depth + 1)}")
    elif cls in (set, frozenset):
        if n > 64 * MAX_ITEMS:
            return f"<{cls.__name__} of {n}>"
        # Set iteration order of strings depends on the hash seed: sort the renderings.
        items = sorted(summarize(v, depth + 1) for v in value)[:MAX_ITEMS]
    else:
        items = [summarize(v, depth + 1) for v in value[:MAX_ITEMS]]
    if n > MAX_ITEMS:
        items.append(f"...(+{n - MAX_ITEMS})")
    body = ", ".join(items)
    if cls is list:
        return f"[{body}]"
    if cls is tuple:
        return f"({body}{',' if n == 1 else ''})"
    if cls is dict:
        return "{" + body + "}"
    if n == 0:
        return f"{cls.__name__}()"
    return ("{" + body + "}") if cls is set else f"frozenset({{{body}}})"
