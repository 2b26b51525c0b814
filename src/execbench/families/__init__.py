"""Family plug-ins (``trace``, ``state``, ``repo``, ``cruxeval``) and their registry."""

from __future__ import annotations

import importlib

from execbench.families.base import Family

_MODULES = {"trace": "execbench.families.trace", "repo": "execbench.families.repo"}
_MODULES["state"] = "execbench.families.state"
_MODULES["cruxeval"] = "execbench.families.cruxeval"


def names() -> list[str]:
    return list(_MODULES)


def get(name: str) -> Family:
    """The family plug-in called ``name`` (imported on first use)."""
    try:
        module = _MODULES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(names())}") from None
    return importlib.import_module(module).FAMILY
