"""pytest plugin shipped into the sandbox (``-p _execbench_repo_plugin``); never imported by
the parent. It depends only on the standard library, pytest and a copy of
``execbench.tracing.tracer`` shipped next to it.

What it does, driven by the JSON spec named in ``$EXECBENCH_REPO_SPEC``:

* serves ``spec["sources"][path]`` as the text of the test-side module at ``path`` (an
  import hook; files on disk are untouched and line numbers are the files'), with the
  probe and verify helpers in the module's globals;
* keeps only the node ids in ``spec["keep"]`` (when given);
* around each test call (``spec["trace"]``) runs a :class:`Tracer` over the served files and the
  library files, depth-limited, and keeps the call records of the test function's subtree
  (the function is depth 0) when the test's complexity score reaches ``spec["threshold"]``;
* records probe values (rendered without calling user code; sympy objects are rendered
  with ``str`` after the test, tracing off) and verify outcomes;
* writes one JSON line per test to ``spec["output"]``, flushed as it goes (a :class:`TestRecord`).

The record types below are the parent's too (``runner.py`` reads the lines back as
:class:`TestRecord`\\ s after checking their envelope); it imports them for type checking only.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import inspect
import json
import math
import os
import signal
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, NotRequired, Required, TypedDict, cast

import pytest

from execbench.tracing.tracer import TraceLimits, Tracer

MAX_RENDER = 2000
MAX_EXECUTIONS = 16
PROBE = "__execbench_probe__"
VERIFY = "__execbench_verify__"
SENTINEL = "__execbench_sentinel__"


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
    the parent validates every field, ``families/repo/touched.py``):

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


@dataclass
class _Running:
    """The record of the test being run, filled by the hooks and helpers."""

    nodeid: str
    probes: dict[str, list[dict[str, RenderedValue]]] = field(default_factory=dict)
    verify: dict[str, list[VerifyRun]] = field(default_factory=dict)
    aliases: dict[str, list[list[str]]] = field(default_factory=dict)
    phases: dict[str, Phase] = field(default_factory=dict)
    overflow: set[str] = field(default_factory=set)
    function: list[str | int] | None = None
    trace: TraceSummary | None = None
    context: ContextRecord | None = None
    deferred: list[tuple[RenderedValue, object]] = field(default_factory=list)  # sympy values, shown after

    def record(self, seconds: float) -> TestRecord:
        out: TestRecord = {"nodeid": self.nodeid, "probes": self.probes, "verify": self.verify,
                           "aliases": self.aliases, "phases": self.phases, "overflow": sorted(self.overflow)}
        if self.function is not None:
            out["function"] = self.function
        if self.trace is not None:
            out["trace"] = self.trace
        if self.context is not None:
            out["context"] = self.context
        out["seconds"] = seconds
        return out


_spec: RunSpec = {}
_served: dict[str, str] = {}  # realpath → module text
_current: _Running | None = None
_out = None


class TestTimeout(Exception):
    pass


# --- rendering values (exact builtin types only: no user code runs) -----------------------

class _TooBig(Exception):
    pass


def _literal(value: Any, budget: list[int]) -> str:
    cls = type(value)
    if value is None or cls is bool:
        text = repr(value)
    elif cls is int:
        if value.bit_length() > 4000:
            raise _TooBig
        text = repr(value)
    elif cls is float:
        if not math.isfinite(value):
            raise ValueError("non-finite float")
        text = repr(value)
    elif cls is complex:
        if not (math.isfinite(value.real) and math.isfinite(value.imag)):
            raise ValueError("non-finite complex")
        text = repr(value)
    elif cls is str or cls is bytes:
        if len(value) > MAX_RENDER:
            raise _TooBig
        text = repr(value)
    elif cls is list:
        text = "[" + ", ".join(_literal(v, budget) for v in value) + "]"
    elif cls is tuple:
        items = [_literal(v, budget) for v in value]
        text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    elif cls is dict:
        text = "{" + ", ".join(f"{_literal(k, budget)}: {_literal(v, budget)}" for k, v in value.items()) + "}"
    elif cls is set or cls is frozenset:
        items = sorted(_literal(v, budget) for v in value)
        if not items:
            text = "set()" if cls is set else "frozenset()"
        else:
            body = "{" + ", ".join(items) + "}"
            text = body if cls is set else f"frozenset({body})"
    else:
        raise ValueError(f"no literal form for {cls.__module__}.{cls.__qualname__}")
    budget[0] -= len(text)
    if budget[0] < 0:
        raise _TooBig
    return text


def _type_name(value: Any) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def render(value: Any) -> RenderedValue:
    out: RenderedValue = {"type": _type_name(value)}
    try:
        out["literal"] = _literal(value, [MAX_RENDER])
    except _TooBig:
        out["too_big"] = True
    except (ValueError, RecursionError):
        pass
    return out


def _sympy_like(value: Any) -> bool:
    if type(value).__module__.startswith("sympy"):
        return True
    if type(value) in (list, tuple, set, frozenset):
        return any(_sympy_like(v) for v in list(value)[:50])
    if type(value) is dict:
        return any(_sympy_like(k) or _sympy_like(v) for k, v in list(value.items())[:50])
    return False


def _record_value(value: Any) -> RenderedValue:
    rendered = render(value)
    if "literal" not in rendered and _spec.get("render_sympy") and _sympy_like(value) and _current is not None:
        _current.deferred.append((rendered, value))  # rendered with str() after the test, tracing off
    return rendered


def _finish_values(values: list[tuple[RenderedValue, object]]) -> None:
    for rendered, value in values:
        if value is not None:
            try:
                text = str(value)
                if len(text) <= MAX_RENDER:
                    rendered["sympy"] = text
                else:
                    rendered["too_big"] = True
            except Exception as exc:  # noqa: BLE001 - a value the renderer cannot show is recorded as such
                rendered["error"] = type(exc).__name__


# --- helpers injected into the test module ----------------------------------------------

def probe(key: str, side: int, value: Any) -> Any:
    if _current is not None:
        runs = _current.probes.setdefault(key, [])
        if side == 0 or not runs or len(runs[-1]) > 1:
            if len(runs) < MAX_EXECUTIONS:
                runs.append({})
            else:
                _current.overflow.add(key)
                return value
        runs[-1][str(side)] = _record_value(value)
    return value


class _Sentinel:
    """An unrelated object with identity equality: a wrong answer no value should equal."""

    __slots__ = ()


def sentinel() -> Any:
    return _Sentinel()


MAX_ALIASES = 50
MAX_ALIAS_STEPS = 20000


def _resolve(name: str, namespace: dict[str, Any]) -> Any:
    parts = name.split(".")
    if parts[0] in namespace:
        obj = namespace[parts[0]]
    else:
        import builtins

        obj = getattr(builtins, parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def _aliases(obj: Any, namespace: dict[str, Any]) -> list[str]:
    """Dotted names reachable from the test module's globals (a global, an attribute of a
    module global, an attribute of one of its submodules) that are ``obj`` itself."""
    import types

    found: list[str] = []
    steps = 0
    todo: list[tuple[str, dict[str, Any], str | None, int]] = [("", namespace, None, 1)]
    while todo and len(found) < MAX_ALIASES:
        prefix, names, module_name, depth = todo.pop(0)
        for attr, value in list(names.items()):
            steps += 1
            if steps > MAX_ALIAS_STEPS or len(found) >= MAX_ALIASES:
                break
            if not isinstance(attr, str) or attr.startswith("__"):
                continue
            dotted = f"{prefix}{attr}"
            if value is obj:
                found.append(dotted)
            elif isinstance(value, types.ModuleType) and depth < 3:
                name = getattr(value, "__name__", "") or ""
                if module_name is None or name.startswith(module_name + "."):  # globals, then submodules
                    todo.append((dotted + ".", vars(value), name, depth + 1))
    return sorted(set(found))


def verify(key: str, value: Any, *checks: Any, names: tuple[str, ...] = ()) -> bool:
    if _current is None:
        return True
    if names and checks and key not in _current.aliases:
        namespace = getattr(checks[0], "__globals__", {})
        groups = []
        for name in names:
            try:
                obj = _resolve(name, namespace)
            except Exception:  # noqa: BLE001 - a name that does not resolve has no aliases
                continue
            group = _aliases(obj, namespace)
            if name not in group:
                group = sorted({name, *group})
            groups.append(group)
        _current.aliases[key] = groups
    results: list[bool | str] = []
    for check in checks:
        try:
            results.append(check(value) is True)
        except AssertionError:
            results.append(False)
        except Exception as exc:  # noqa: BLE001 - a candidate that cannot even be evaluated
            results.append(f"error:{type(exc).__name__}")
    runs = _current.verify.setdefault(key, [])
    if len(runs) < MAX_EXECUTIONS:
        runs.append({"value": _record_value(value), "checks": results})
    return True


# --- serving the test module's text ------------------------------------------------------

class _Loader(importlib.machinery.SourceFileLoader):
    def _text(self) -> str:
        return _served[os.path.realpath(self.path)]

    def get_code(self, fullname: str):
        with warnings.catch_warnings():  # e.g. `is` with a literal, under filterwarnings=error
            warnings.simplefilter("ignore", SyntaxWarning)
            return compile(self._text(), self.path, "exec", dont_inherit=True)

    def get_source(self, fullname: str) -> str:
        return self._text()

    def exec_module(self, module: Any) -> None:
        module.__dict__[PROBE] = probe
        module.__dict__[VERIFY] = verify
        module.__dict__[SENTINEL] = sentinel
        super().exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.origin and os.path.realpath(spec.origin) in _served:
            spec.loader = _Loader(fullname, spec.origin)
            return spec
        return None


# --- pytest hooks ----------------------------------------------------------------------------

def pytest_configure(config: Any) -> None:
    global _out
    with open(os.environ["EXECBENCH_REPO_SPEC"], encoding="utf-8") as fh:
        _spec.update(json.load(fh))
    _served.update({os.path.realpath(k): v for k, v in _spec["sources"].items()})
    sys.meta_path.insert(0, _Finder())
    _out = open(_spec["output"], "w", encoding="utf-8")


def pytest_unconfigure(config: Any) -> None:
    if _out is not None:
        _out.close()


def _write(record: TestRecord | dict[str, str]) -> None:
    if _out is not None:
        _out.write(json.dumps(record, default=str) + "\n")
        _out.flush()


def pytest_collection_modifyitems(session: Any, config: Any, items: list) -> None:
    keep = _spec.get("keep")
    if keep is not None:
        wanted = set(keep)
        selected = [i for i in items if i.nodeid in wanted]
        deselected = [i for i in items if i.nodeid not in wanted]
        if deselected:
            config.hook.pytest_deselected(items=deselected)
        items[:] = selected
    roots = [os.path.realpath(r) for r in _spec.get("import_roots", [])]
    for package in _spec.get("packages", []):
        module = sys.modules.get(package)
        origin = getattr(module, "__file__", None)
        if module is not None and origin and not any(os.path.realpath(origin).startswith(r + os.sep) for r in roots):
            _write({"fatal": f"{package} imported from {origin}, not from the source tree"})
            pytest.exit("library imported from outside the source tree", returncode=3)


def _alarm(signum: int, frame: Any) -> None:
    raise TestTimeout(f"test exceeded {_spec.get('timeout')} s")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any):
    global _current
    _current = _Running(item.nodeid)
    timeout = float(_spec.get("timeout", 0) or 0)
    previous = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        running, _current = _current, None
        _finish_values(running.deferred)
        _write(running.record(round(time.perf_counter() - started, 4)))


def _entry_code(item: Any) -> Any:
    obj: Any = getattr(item, "obj", None)
    obj = getattr(obj, "__func__", obj)
    try:
        obj = inspect.unwrap(obj)
    except Exception:  # noqa: BLE001 - a wrapper that refuses unwrapping is used as it is
        pass
    return getattr(obj, "__code__", None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: Any):
    if not _spec.get("trace") or _current is None:
        return (yield)
    files = [*_spec["sources"], *_spec["library_files"]]
    tracer = Tracer(files, limits=TraceLimits(**_spec["limits"]), record_calls=True)
    before = _instance_names(item)
    tracer.start()
    try:
        return (yield)
    finally:
        tracer.stop()
        _current.trace = _summarize_trace(cast(_TracerResult, tracer.result()), _entry_code(item))
        _current.context = _touched(item, before)


# --- what the test touched outside its function (issue 35): recorded in the key run only ------

MAX_CONTEXT_NAMES = 500  # per list
MAX_CONTEXT_CLASSES = 20
MAX_NAME = 200  # characters of one name or path kept


def _short(text: object) -> str:
    return str(text)[:MAX_NAME] if isinstance(text, str) else ""


def _code_file(obj: Any) -> tuple[str, int, str]:
    """(realpath, first line, name) of a function's code, ("", 0, "") when it has none."""
    try:
        obj = inspect.unwrap(obj)
    except Exception:  # noqa: BLE001 - a wrapper that refuses unwrapping is used as it is
        pass
    code = getattr(getattr(obj, "__func__", obj), "__code__", None)
    if code is None:
        return "", 0, ""
    return os.path.realpath(code.co_filename)[:4 * MAX_NAME], int(code.co_firstlineno), _short(code.co_name)


def _module_file(name: object) -> str:
    module = sys.modules.get(name) if isinstance(name, str) else None
    origin = getattr(module, "__file__", None)
    return os.path.realpath(origin)[:4 * MAX_NAME] if isinstance(origin, str) else ""


def _fixtures_touched(item: Any) -> list[list[str | int]]:
    """Every fixture that ran for the item, with the definition pytest chose (the last one)."""
    out: list[list[str | int]] = []
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {}) or {}
    for name in list(getattr(item, "fixturenames", []) or [])[:MAX_CONTEXT_NAMES]:
        if not isinstance(name, str):
            continue
        chosen: Any = defs.get(name) or ()
        func = getattr(chosen[-1], "func", None) if len(chosen) else None
        path, line, fname = _code_file(func) if func is not None else ("", 0, "")
        out.append([_short(name), path, line, fname, _short(getattr(func, "__module__", ""))])
    return out


def _instance_names(item: Any) -> set[str]:
    instance = getattr(item, "instance", None)
    try:
        return {k for k in vars(instance) if isinstance(k, str)} if instance is not None else set()
    except TypeError:  # no __dict__ (slots)
        return set()


def _classes_touched(item: Any) -> list[list[Any]]:
    instance = getattr(item, "instance", None)
    if instance is None:
        return []
    out: list[list[Any]] = []
    for cls in type(instance).__mro__[:MAX_CONTEXT_CLASSES]:
        if cls is object:
            continue
        names = sorted(k for k in list(vars(cls))[:4 * MAX_CONTEXT_NAMES] if isinstance(k, str)
                       and not (k.startswith("__") and k.endswith("__")))
        out.append([_short(getattr(cls, "__qualname__", "")), _module_file(getattr(cls, "__module__", None)),
                    [_short(n) for n in names[:MAX_CONTEXT_NAMES]]])
    return out


def _code_names(code: Any) -> list[str]:
    """The names a code object and the code nested in it (comprehensions, lambdas) use."""
    names: list[str] = []
    todo, seen = [code], 0
    while todo and seen < 200:
        current = todo.pop()
        seen += 1
        names += [n for n in current.co_names if n not in names]
        todo += [c for c in current.co_consts if hasattr(c, "co_names")]
    return names[:MAX_CONTEXT_NAMES]


def _global_kind(value: Any) -> tuple[str, str]:
    import types

    if isinstance(value, types.ModuleType):
        return "module", _module_file(getattr(value, "__name__", None))
    if isinstance(value, type):
        return "class", _module_file(getattr(value, "__module__", None))
    if isinstance(value, (types.FunctionType, types.MethodType)) or hasattr(value, "__wrapped__"):
        return "function", _code_file(value)[0] or _module_file(getattr(value, "__module__", None))
    return "value", ""


def _globals_touched(item: Any) -> list[list[str]]:
    obj: Any = getattr(item, "obj", None)
    obj = getattr(obj, "__func__", obj)
    try:
        obj = inspect.unwrap(obj)
    except Exception:  # noqa: BLE001 - as _entry_code
        pass
    code, namespace = getattr(obj, "__code__", None), getattr(obj, "__globals__", None)
    if code is None or not isinstance(namespace, dict):
        return []
    out: list[list[str]] = []
    for name in _code_names(code):
        if name in namespace:
            kind, path = _global_kind(namespace[name])
            out.append([_short(name), kind, path])
    return out


def _touched(item: Any, before: set[str]) -> ContextRecord:
    """The :class:`ContextRecord` of the item, after its call (instance names: at the call's
    start and end, so what ``setUp`` set, inside the call for unittest, is there too)."""
    record: ContextRecord = {}
    for key, get in (("fixtures", _fixtures_touched), ("classes", _classes_touched), ("globals", _globals_touched)):
        try:
            record[key] = get(item)  # type: ignore[literal-required]  # the keys are ContextRecord's
        except Exception as exc:  # noqa: BLE001 - recorded as unknown: the parent rejects what it cannot check
            record[key] = [["__error__", type(exc).__name__[:MAX_NAME], ""]]  # type: ignore[literal-required]
    callspec = getattr(item, "callspec", None)
    record["params"] = [_short(n) for n in list(getattr(callspec, "params", {}) or {})[:MAX_CONTEXT_NAMES]]
    record["instance"] = sorted(_short(n) for n in before | _instance_names(item))[:MAX_CONTEXT_NAMES]
    return record


def pytest_runtest_setup(item: Any) -> None:
    code = _entry_code(item)
    if _current is not None and code is not None:
        _current.function = [os.path.realpath(code.co_filename), code.co_firstlineno, code.co_qualname]


def _summarize_trace(result: _TracerResult, code: Any) -> TraceSummary:
    if result.get("status") != "ok":
        return {"status": result.get("status"), "too_large": result.get("too_large")}
    calls = result.get("calls", [])
    entry = None
    if code is not None:
        for call in calls:
            if (call["depth"] == 0 and call["firstlineno"] == code.co_firstlineno
                    and os.path.realpath(call["file"]) == os.path.realpath(code.co_filename)):
                entry = call
                break
    if entry is None:
        return {"status": "no_entry", "n_records": len(calls)}
    keep_ids = {entry["id"]}
    subtree = []
    for call in calls:  # records are in creation order: parents before children
        if call["id"] in keep_ids or call["parent"] in keep_ids:
            keep_ids.add(call["id"])
            subtree.append(call)
    files = {c["file"] for c in subtree}
    funcs = {(c["file"], c["firstlineno"], c["func"]) for c in subtree}
    depth = max(c["depth"] for c in subtree)
    stats: TraceStats = {"files": len(files), "funcs": len(funcs), "calls": len(subtree), "depth": depth}
    score = (stats["files"] / 4) * 0.1 + (stats["funcs"] / 15) * 0.2 + (stats["calls"] / 30) * 0.5 \
        + (stats["depth"] / 4) * 0.2
    out: TraceSummary = {"status": "ok", "stats": stats, "score": round(score, 6), "entry": entry["id"],
           "args": entry["args"], "line_events": result.get("line_events")}
    if score >= float(_spec.get("threshold", 0.0)):
        out["calls"] = subtree
    return out


def pytest_runtest_logreport(report: Any) -> None:
    if _current is None:
        return
    phase: Phase = {"outcome": report.outcome}
    if report.failed or (report.skipped and report.when != "call"):
        text = getattr(report, "longreprtext", "") or ""
        phase["message"] = text.strip().splitlines()[-1][:300] if text.strip() else ""
    if hasattr(report, "wasxfail"):
        phase["xfail"] = True
    previous = _current.phases.get(report.when)
    if previous is not None and previous["outcome"] == "failed":
        return  # a failed subtest (pytest >= 9 reports it before the test's own report) stays failed
    _current.phases[report.when] = phase
