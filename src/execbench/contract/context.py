"""The state of one build, created by the build engine and handed down to the family (issue 36).

A build used to leave its state in module globals of the family's code (the repositories it
prepared, the releases a window chose) for the manifest to pick up afterwards, so a second
build in the same process could see the first one's. Now the engine
(``families/build.py`` ``build_dataset``) makes one :class:`BuildContext` per build and passes
it to ``Family.candidates(sources, options, context)`` and ``BuildReport.record_written(outcome,
context)``; whatever the family wants in the manifest or beside the dataset it writes into
the context, and the engine hands that to the dataset writer. Nothing in it outlives the build.

:class:`SummaryTable` is a neutral record of the family's own lines in ``execbench build``'s
summary (``BuildReport.summary``): the CLI draws it and knows none of its words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class BuildContext:
    """One build's state: what its manifest and its directory will hold besides the tasks.

    ``settings`` is the manifest's ``settings`` object: the engine's keys (family, builder
    version, sources, options, limit, hash seeds), then whatever the family adds while it lists
    its candidates (its interpreter, the repositories it prepared, a release window). ``extra``
    holds further top-level manifest fields the family counts as outcomes are written;
    ``files`` the text files written beside ``tasks.jsonl`` (name → text)."""

    settings: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SummaryTable:
    """A table of a family's own in the summary ``execbench build`` prints (plain text cells;
    ``right``: the columns aligned right)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: tuple[str, ...] = ()
