"""The project's JSON value type, for data that is genuinely arbitrary JSON (issue 25).

On the bottom floor (no execbench imports), so every layer may use it, the dataset and the
sandbox included; ``execbench.contract.jsontypes`` re-exports it for the families.

A program's values, model output, a manifest's free-form settings: what ``json.loads`` can
return. A record whose keys the code knows is a dataclass or a ``TypedDict``, not this:
``JSONObject`` is for maps whose keys and values come from outside. Lists and dicts are
invariant, so a ``dict[str, int]`` is not a ``JSONObject``; read-only parameters take
``Mapping[str, JSONValue]`` (``benchmarks/structure.py`` counts only ``Mapping[str, Any]``).
"""

from __future__ import annotations

from typing import TypeAlias, Union

JSONScalar: TypeAlias = Union[None, bool, int, float, str]
JSONValue: TypeAlias = Union[JSONScalar, list["JSONValue"], dict[str, "JSONValue"]]
JSONObject: TypeAlias = dict[str, JSONValue]



def as_object(value: JSONValue) -> JSONObject:
    """``value`` if it is a JSON object, else ``{}`` (reading a nested member that may be absent)."""
    return value if isinstance(value, dict) else {}


def as_list(value: JSONValue) -> list[JSONValue]:
    """``value`` if it is a JSON array, else ``[]``."""
    return value if isinstance(value, list) else []


__all__ = ["JSONObject", "JSONScalar", "JSONValue", "as_list", "as_object"]
