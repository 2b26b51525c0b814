"""The records of a test process: the spec the runner writes, the JSON lines the pytest plug-in
writes back.

The plug-in (:mod:`._plugin`, shipped into the sandbox) writes one :class:`TestRecord` per test;
the parent (:mod:`.runner`) reads the lines back after checking their envelope. Both sides import
these types for type checking only: the plug-in runs on the standard library, pytest and the
shipped tracer, and is not given this module. Split out of :mod:`._plugin`.
"""

from __future__ import annotations

from typing import Any, NotRequired, Required, TypedDict


# --- the spec (written by runner.pytest_job) and the records: one JSON line per test ---------

class SpecLimits(TypedDict):
    """The tracer's per-test caps (``TraceLimits``)."""

    max_depth: int | None
    max_line_events: int
    max_summary_bytes: int
    max_calls: int


class RunSpec(TypedDict, total=False):
    """What to serve, trace and write: ``$EXECBENCH_REPO_SPEC`` (the runner writes every key)."""

    sources: dict[str, str]  # absolute path -> the text served for that test-side module
    library_files: list[str]  # traced besides the served files
    trace: bool
    limits: SpecLimits
    threshold: float  # the complexity score from which a test's calls are kept
    keep: list[str] | None  # node ids to run (None: all)
    timeout: float  # seconds per test (0: none)
    render_sympy: bool
    output: str  # the results file
    packages: list[str]  # must be imported from import_roots
    import_roots: list[str]
    channel_key: str  # the results' MAC key (hex): popped from the spec at import
    audit_library: str | None  # the sandbox's preload library (its audit filter), None: a Python hook


class RenderedValue(TypedDict):
    """A probed or verified value as the plugin shows it, without calling user code."""

    type: str  # the value's type name (qualified unless a builtin)
    literal: NotRequired[str]  # its literal form (exact builtin types only)
    too_big: NotRequired[bool]  # its literal form (or sympy text) is over MAX_RENDER characters
    sympy: NotRequired[str]  # str() of a sympy value, rendered after the test with tracing off
    error: NotRequired[str]  # the exception str() raised on it


class VerifyRun(TypedDict):
    """One execution of a verify helper: the value and each candidate check's outcome."""

    value: RenderedValue
    checks: list[bool | str]  # True/False, or "error:<ExceptionName>"


class Phase(TypedDict):
    """pytest's report of one phase (setup, call, teardown) of a test."""

    outcome: str  # "passed", "failed", "skipped"
    message: NotRequired[str]  # the report's last line (failed, or skipped outside the call)
    xfail: NotRequired[bool]


# The tracer's call record (``execbench.tracing.tracer.CallRecord.to_json``); "return" is a keyword.
CallJson = TypedDict("CallJson", {
    "id": int, "parent": int | None, "func": str, "file": str, "firstlineno": int, "depth": int,
    "thread": int, "call_line": int | None, "args": dict[str, str], "lines": list[int],
    "return": str | None, "exception": str | None, "resumes": int,
})


class _TracerResult(TypedDict, total=False):
    """The keys of ``Tracer.result()`` the plugin reads."""

    status: str  # "ok", "too_large" or "tampered"
    too_large: str
    line_events: int
    calls: list[CallJson]


class TraceStats(TypedDict):
    files: int
    funcs: int
    calls: int
    depth: int


class TraceSummary(TypedDict, total=False):
    """A test's trace: its entry call's subtree, with the complexity score (RepoReason §3.4)."""

    status: Required[str | None]  # "ok", "no_entry", or the tracer's status ("too_large", ...)
    too_large: str | None
    n_records: int  # no_entry: the calls recorded
    stats: TraceStats
    score: float
    entry: int  # the test function's call id
    args: dict[str, str]  # its arguments (summaries)
    line_events: int | None
    calls: list[CallJson]  # the subtree, when the score reaches the spec's threshold


class TestRecord(TypedDict):
    """One test's line of the results file (only ``nodeid`` is sure in a line read back)."""

    nodeid: str
    probes: NotRequired[dict[str, list[dict[str, RenderedValue]]]]  # key -> executions -> side ("0"/"1")
    verify: NotRequired[dict[str, list[VerifyRun]]]  # key -> executions
    aliases: NotRequired[dict[str, list[list[str]]]]  # key -> per named check: its dotted aliases
    phases: NotRequired[dict[str, Phase]]  # "setup" / "call" / "teardown"
    overflow: NotRequired[list[str]]  # keys executed more than MAX_EXECUTIONS times
    function: NotRequired[list[str | int] | None]  # [realpath, first line, qualname] of the test function
    trace: NotRequired[TraceSummary | None]
    seconds: NotRequired[float]
    context: NotRequired[ContextRecord]  # what the test touched outside its function (issue 35)


class ContextRecord(TypedDict, total=False):
    """What a test touched that was set up outside its function, recorded as it ran (issue 35;
    the parent validates every field, ``families/repo/fairness/touched.py``):

    * ``fixtures``: every fixture that ran for it (``item.fixturenames``) with where pytest
      found its definition: ``[name, realpath, first line, function name, module]``;
    * ``params``: the names of its parametrization (``callspec.params``);
    * ``instance``: the attribute names its ``self`` held when the test function was entered;
    * ``classes``: per class of ``self``'s MRO: ``[qualname, realpath of its module, names]``;
    * ``globals``: the module-level names its code (nested code included) reads, with what
      they were: ``[name, kind, realpath of the defining module or ""]``."""

    fixtures: list[list[str | int]]
    params: list[str]
    instance: list[str]
    classes: list[list[Any]]
    globals: list[list[str]]
