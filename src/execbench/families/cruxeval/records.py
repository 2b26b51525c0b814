"""The cruxeval family's JSON records: a candidate's payload, the sandbox items and their results.

All of them cross a process boundary as JSON (the payload is hashed into the build-cache key;
items go into the sandbox, results come back from it and are checked by :func:`.run.checked`),
hence ``TypedDict`` and not dataclasses: the bytes stay what they were. The handlers in
:mod:`._runner` import this module only for type checking (nothing more is loaded in the sandbox).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from execbench.contract.jsontypes import JSONValue


class LoopSpan(TypedDict):
    """A ``for``/``while`` loop of ``f``: header line, first and last body line, last line."""

    line: int
    body: list[int]  # [first, last]
    end: int


class Problem(TypedDict):
    """One CRUXEval problem in a candidate's payload; also a ``build`` item of the sandbox."""

    id: str
    code: str
    input: str
    output: str
    loops: list[LoopSpan]


class CruxevalPayload(TypedDict):
    """A candidate's payload: a batch of consecutive problems of one file."""

    source: str
    origin: str  # the file's name (the shipped copy or --set path)
    problems: list[Problem]


class GradeItem(TypedDict):
    """A ``grade`` item: the benchmark's ``f`` on arguments tagged by :mod:`.codec`."""

    code: str
    args: list[JSONValue]
    kwargs: list[tuple[str, JSONValue]]  # [name, tagged value] pairs (JSON lists)
    expected: JSONValue


Snapshot = dict[str, str | None]  # a local's canonical JSON text (None: not serialisable, too long)


class LoopPass(TypedDict, total=False):
    """One traced call: iteration counts of ``f``'s loops and the two snapshots, or an error."""

    error: str
    iterations: list[int]
    inside: Snapshot | None
    post: Snapshot | None


class Checkpoint(TypedDict, total=False):
    """The inside/post checkpoint states of a call (``error`` when there are none)."""

    error: str
    loop_line: int
    iterations: int
    inside_iteration: int
    inside: Snapshot
    post: Snapshot


class CallResult(TypedDict):
    """What a ``build`` or ``grade`` item gave (``status`` ok; ``error`` when the program raised)."""

    status: Literal["ok", "error"]
    error: NotRequired[str]
    equal: NotRequired[bool]  # <output> == f(<input>)
    compare_error: NotRequired[str | None]
    returned: NotRequired[str]  # repr of what f returned (clipped)


class BuildArgs(TypedDict):
    """A ``build`` job's arguments (:func:`.run.run`)."""

    item: Problem
    max_line_events: int


class GradeArgs(TypedDict):
    """A ``grade`` job's arguments (``max_line_events`` unused)."""

    item: GradeItem
    max_line_events: int


class BuildResult(CallResult, total=False):
    """A ``build`` item's extra fields (:func:`._runner.build_job`)."""

    returned_literal: bool
    trace_length: int | None
    trace_status: str
    checkpoint: Checkpoint
    literal_error: str
    literal_equal: bool
    literal_input: str
