"""Family plug-ins and their registry: the one place that lists the families.

Each family declares its facts once on its :class:`~execbench.families.base.Family`
plug-in (arms and their answer kinds, the id parser, similarity, mutation adapter, agent
browser, analysis facts); every other package asks :func:`get` or iterates :func:`registered`.
Importing this package registers the families' arm check with the dataset layer, which
sits below and cannot import it (docs/architecture.md, "Dataset validation").
"""

from __future__ import annotations

import importlib
from typing import Iterator

from execbench.dataset import DatasetError, TaskId, parse_id as _parse_id, register_family_check
from execbench.families.base import Family

# Adding a family: one line here, plus its folder families/<name>/.
_MODULES = {
    "trace": "execbench.families.trace",
    "state": "execbench.families.state",
    "repo": "execbench.families.repo",
    "cruxeval": "execbench.families.cruxeval",
}


def names() -> list[str]:
    return list(_MODULES)


def get(name: str) -> Family:
    """The family plug-in called ``name`` (imported on first use)."""
    try:
        module = _MODULES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(names())}") from None
    return importlib.import_module(module).FAMILY


def registered() -> Iterator[Family]:
    """Every registered family, in registry order (imports them all)."""
    return (get(name) for name in names())


def parse_id(task_id: str) -> TaskId:
    """A task id's parts, parsed by its family's own parser (DatasetError if unknown or malformed)."""
    family = _parse_id(task_id).family
    if family not in _MODULES:
        raise DatasetError(f"task id {task_id!r}: unknown family {family!r}")
    try:
        return get(family).parse_id(task_id)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None


def check_record(family: str, arm: str, answer_kind: str) -> None:
    """The dataset layer's family check: a known family, one of its arms, an answer kind of that arm."""
    if family not in _MODULES:
        raise DatasetError(f"unknown family {family!r} (known: {', '.join(names())})")
    kinds = get(family).arms.get(arm)
    if kinds is None:
        raise DatasetError(f"arm {arm!r} is not an arm of family {family!r}")
    if answer_kind not in kinds:
        raise DatasetError(f"answer_kind {answer_kind!r} is not an answer kind of {family}/{arm} "
                           f"({', '.join(kinds)})")


register_family_check(check_record)
