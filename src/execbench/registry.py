"""The family registry: which families exist, and their plug-ins, found by name.

Each family declares its facts once on its :class:`~execbench.contract.plugin.Family`
plug-in (arms and their answer kinds, the id parser, similarity) and its declared capabilities
(mutation adapter, agent browser, analysis facts, ...: ``family.capability(Kind)``); every other
package asks :func:`get` or iterates :func:`registered`.

Discovery: the built-in families are listed in :data:`_BUILTIN` (one line per family); a
third-party package registers more with an entry point in the group :data:`ENTRY_POINT_GROUP`
(``[project.entry-points."execbench.families"]``, ``name = "package.module"`` whose ``FAMILY``
is the plug-in, or ``"package.module:PLUGIN"``), as Inspect AI finds its extensions. A plug-in
is loaded on first use, by module name: that is an import all the same, so this module sits on
its own floor above the family folders, and nothing below it (the contract, the build and
mutation engines, grading a dataset, the family folders) imports it: they are handed plug-ins by
their callers (``tests/test_architecture.py`` counts the by-name loads as edges of the import graph;
docs/architecture.md).

:func:`check_record` is the families' arm check of the dataset layer, which sits below and cannot
import it: the readers above pass it in (``read_tasks(path, registry.check_record)``;
docs/architecture.md, "Dataset validation").
"""

from __future__ import annotations

import importlib
import warnings
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Iterator

from execbench.contract.plugin import Family, PluginError, check_plugin
from execbench.dataset import DatasetError, TaskId, parse_id as _parse_id

ENTRY_POINT_GROUP = "execbench.families"

# Adding a built-in family: one line here, plus its folder families/<name>/.
_BUILTIN = {
    "trace": "execbench.families.trace",
    "state": "execbench.families.state",
    "repo": "execbench.families.repo",
    "cruxeval": "execbench.families.cruxeval",
}


@lru_cache(maxsize=1)
def _locations() -> dict[str, str]:
    """name → ``module`` or ``module:attribute``: the built-ins, then the installed entry points
    (an entry point reusing a built-in's name is ignored, with a warning)."""
    found = dict(_BUILTIN)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in found:
            warnings.warn(f"entry point {point.name} = {point.value!r} of group {ENTRY_POINT_GROUP!r} "
                          f"is ignored: the family {point.name!r} is already registered", stacklevel=2)
            continue
        found[point.name] = point.value
    return found


def names() -> list[str]:
    return list(_locations())


@lru_cache(maxsize=None)
def get(name: str) -> Family:
    """The family plug-in called ``name`` (imported on first use), checked (:func:`~execbench.contract.check_plugin`:
    a plug-in with a core member or a capability missing or mistyped is refused with
    :class:`~execbench.contract.PluginError` naming it)."""
    try:
        location = _locations()[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(names())}") from None
    module_name, _, attribute = location.partition(":")
    try:
        plugin = getattr(importlib.import_module(module_name), attribute or "FAMILY")
    except AttributeError:
        raise PluginError(f"family {name!r}: {module_name} has no {attribute or 'FAMILY'}") from None
    try:
        return check_plugin(plugin, name)
    except PluginError as exc:
        raise PluginError(f"{exc} ({location!r} refused)") from None


def registered() -> Iterator[Family]:
    """Every registered family, in registry order (imports them all)."""
    return (get(name) for name in names())


def parse_id(task_id: str) -> TaskId:
    """A task id's parts, parsed by its family's own parser (DatasetError if unknown or malformed)."""
    family = _parse_id(task_id).family
    if family not in _locations():
        raise DatasetError(f"task id {task_id!r}: unknown family {family!r}")
    try:
        return get(family).parse_id(task_id)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None


def check_record(family: str, arm: str, answer_kind: str) -> None:
    """The dataset layer's family check (``dataset.FamilyCheck``): a known family, one of its arms,
    an answer kind of that arm. The readers above the registry pass it to ``read_tasks``."""
    if family not in _locations():
        raise DatasetError(f"unknown family {family!r} (known: {', '.join(names())})")
    kinds = get(family).arms.get(arm)
    if kinds is None:
        raise DatasetError(f"arm {arm!r} is not an arm of family {family!r}")
    if answer_kind not in kinds:
        raise DatasetError(f"answer_kind {answer_kind!r} is not an answer kind of {family}/{arm} "
                           f"({', '.join(kinds)})")

