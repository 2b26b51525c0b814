"""pytest plugin shipped into the sandbox (``-p _execbench_repo_plugin``), never imported by the parent; it needs only
the standard library, pytest and copies of ``execbench.tracing.tracer``, ``execbench.sandbox.audit_filter`` beside it.

What it does, driven by the JSON spec named in ``$EXECBENCH_REPO_SPEC``:

* serves ``spec["sources"][path]`` as the text of the test-side module at ``path`` (an import hook; files on disk are
  untouched and line numbers are the files'), with the probe and verify helpers in the module's globals;
* keeps only the node ids in ``spec["keep"]`` (when given);
* around each test call (``spec["trace"]``) runs a :class:`Tracer` over the served files and the library files,
  depth-limited, and keeps the call records of the test function's subtree (the function is depth 0) when the test's
  complexity score reaches ``spec["threshold"]``;
* records probe values (rendered without calling user code; sympy objects are rendered with ``str`` after the test,
  tracing off) and verify outcomes;
* writes one JSON line per test to ``spec["output"]``, flushed as it goes (a :class:`TestRecord`).

The recorder is bound before any conftest or plugin of the suite runs (``-p`` plugins load first; see "The recorder is
out of reach" at the end): its functions read a private copy of their globals, the lines are written through a
descriptor opened at import and each carries a keyed MAC chained over the lines before it (the key came in the spec,
which is deleted), an audit hook (filtered in C: ``audit_filter.py``) and a seal check flag a suite that reaches into
the recorder, and the first flag becomes a ``{"fatal": "tampering: ..."}`` line, then nothing more.

The record types (``run_records.py``, for type checking only) are those ``runner.py`` reads back.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.abc
import importlib.machinery
import inspect
import json
import math
import os
import signal
import sys
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import pytest

from execbench.errors import InternalError
from execbench.sandbox.audit_filter import install_audit_hook
from execbench.tracing.tracer import TraceLimits, Tracer

if TYPE_CHECKING:  # the records' module is not shipped: the types are for the checker only
    from execbench.families.repo.records.run_records import (ContextRecord, Phase, RenderedValue, RunSpec, TestRecord,
                                                             TraceStats, TraceSummary, VerifyRun, _TracerResult)

MAX_RENDER = 2000
MAX_EXECUTIONS = 16
PROBE = "__execbench_probe__"
VERIFY = "__execbench_verify__"
SENTINEL = "__execbench_sentinel__"


# --- the test being run ------------------------------------------------------------------------

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
_helped: list[Any] = []  # the served modules the helpers were put into
# Module globals the hooks rebind (``global``) while tests run; every other global must keep
# its object (the seal, see _bind, flags a change as tampering): add a new rebound one here.
_MUTABLE = frozenset({"_current"})
_getframe = sys._getframe


class TestTimeout(InternalError):
    pass


# --- rendering values (exact builtin types only: no user code runs) -----------------------

class _TooBig(InternalError):
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
        _check_caller("probe")
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
    _check_caller("verify")
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
        _helped.append(module)
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
    sys.meta_path.insert(0, _Finder())


def pytest_unconfigure(config: Any) -> None:
    _channel.close()


def _write(record: TestRecord | dict[str, str]) -> None:
    _channel.write(record)


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
        _current.trace = _summarize_trace(cast("_TracerResult", tracer.result()), _entry_code(item))
        _current.context = _touched(item, before)
        _channel.check()  # before the test's fixtures are torn down (and could undo what they did)


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


# --- The recorder is out of reach: bound at import, before any conftest or plugin of the suite ---
#
# pytest imports ``-p`` plugins before it loads a conftest or an installed plugin, so what is
# bound here is bound before the suite runs a line (a ``.pth`` of the venv runs earlier: the
# repository's install is checked for those, docs/sandbox.md). What a suite could do in the same
# process, and what answers it:
# * replace a function or value of this module (``monkeypatch.setattr(plugin, "render", ...)``):
#   every function here reads a private copy of the module's globals, so the replacement changes
#   nothing it does; the seal (the module's dict, the private copy, the classes' dicts, the
#   shipped tracer's) is compared at every record, every recorded value and after each traced
#   call, and a difference is tampering;
# * replace a function's code or defaults: the audit hook sees ``object.__setattr__`` on it;
# * call the helpers itself, or wrap them: a helper called from a file that is not served is
#   tampering; a served module whose helpers were replaced is tampering;
# * write the results: the descriptor was opened here and each line carries a MAC chained over
#   the lines before it, keyed by the spec's key (the spec file is deleted once read, the key kept
#   only in a closure); opening, renaming, deleting or truncating the results or spec file is
#   tampering (audit hook); the last line is a MAC'd trailer with the number of records, so a
#   run that ends normally without it was cut.
# What stays in reach: code that digs the key or the MAC state out of a closure (``__closure__``,
# ``gc``), that rebinds ``__globals__`` entries of these functions and restores them before the
# next check, or that patches the interpreter with ctypes. See docs/sandbox.md.

class _Channel:
    """The results channel and the seal: built once at import (:func:`_bind`)."""

    def __init__(self, write: Any, close: Any, check: Any) -> None:
        self.write, self.close, self.check = write, close, check


def _rebind(function: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    new = types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__,
                             function.__closure__)
    new.__kwdefaults__ = function.__kwdefaults__
    new.__qualname__ = function.__qualname__
    new.__module__ = function.__module__
    new.__doc__ = function.__doc__
    new.__dict__.update(function.__dict__)  # e.g. pytest's hookimpl marker
    return new


def _privatize(module: types.ModuleType) -> dict[str, Any]:
    """Make ``module``'s functions (and its classes' methods) read a private copy of its
    globals; returns that copy. The module's attributes are the rebound functions too."""
    public = vars(module)
    private = dict(public)
    for name, obj in list(public.items()):
        if isinstance(obj, types.FunctionType) and obj.__globals__ is public:
            private[name] = _rebind(obj, private)
        elif isinstance(obj, type) and obj.__module__ == module.__name__:
            for attr, value in list(vars(obj).items()):
                if isinstance(value, types.FunctionType) and value.__globals__ is public:
                    setattr(obj, attr, _rebind(value, private))
                elif isinstance(value, (staticmethod, classmethod)) and isinstance(value.__func__, types.FunctionType) \
                        and value.__func__.__globals__ is public:
                    setattr(obj, attr, type(value)(_rebind(value.__func__, private)))
    public.update({n: private[n] for n, obj in public.items() if isinstance(obj, types.FunctionType)})
    return private


def _snapshot(namespaces: list[dict[str, Any]], classes: list[type], mutable: set[str]) -> Any:
    """A check that the entries of ``namespaces`` (but ``mutable``), the classes' dicts and each function's code,
    defaults and globals are what they are now. Run at every probe and verify call: it compares in C, with the
    builtins it uses bound now (a patched ``builtins.all`` cannot blind it)."""
    from itertools import repeat
    from operator import attrgetter, is_
    all_, map_, len_, sum_, zip_, missing = all, map, len, sum, zip, object()
    frozen = [(ns, tuple(names), tuple(names.values())) for ns, names in  # (namespace, keys, values)
              [(ns, {k: v for k, v in ns.items() if k not in mutable}) for ns in namespaces]
              + [(cls.__dict__, dict(cls.__dict__)) for cls in classes]]
    functions = [f for _, _, values in frozen for f in values if type(f) is types.FunctionType]
    functions += [v.__func__ for _, _, values in frozen for v in values if type(v) in (staticmethod, classmethod)]
    fields = [(attrgetter(a), tuple(getattr(f, a) for f in functions))
              for a in ("__code__", "__defaults__", "__kwdefaults__", "__globals__")]

    def changed() -> str | None:
        for ns, keys, values in frozen:
            if len_(ns) != len_(keys) + sum_(1 for k in mutable if k in ns):
                return "the recorder's namespace gained or lost a name"
            if not all_(map_(is_, map_(ns.get, keys, repeat(missing)), values)):
                return next(f"the recorder's {k} was replaced"
                            for k, v in zip_(keys, values) if ns.get(k, missing) is not v)
        for get, values in fields:
            if not all_(map_(is_, map_(get, functions), values)):
                return next(f"the recorder's function {f.__qualname__} was changed"
                            for f, v in zip_(functions, values) if get(f) is not v)
        return None
    return changed, {id(f) for f in functions}


def _watched(path: Any, names: set[str], paths: set[str], fd: int) -> bool:
    """Does ``path`` (an audit event's argument) name the results or spec file?"""
    if isinstance(path, int):
        return path == fd
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return False
    if os.path.basename(path) not in names and not path.startswith(("/proc/", "/dev/fd")):
        return False
    try:
        return os.path.realpath(path) in paths
    except (OSError, ValueError):
        return True


_PATH_EVENTS = {"open": 1, "os.remove": 1, "os.rename": 2, "os.truncate": 1, "os.chmod": 1, "os.chown": 1,
                "os.link": 2, "os.symlink": 2, "os.utime": 1, "os.rmdir": 1,
                "shutil.copyfile": 2, "shutil.rmtree": 1}


def _bind() -> _Channel:
    """Read and delete the spec, open the results file, seal the recorder, install the audit hook."""
    spec_path = os.path.realpath(os.environ["EXECBENCH_REPO_SPEC"])
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    os.unlink(spec_path)
    key = bytes.fromhex(spec.pop("channel_key"))
    _spec.update(spec)
    _served.update({os.path.realpath(k): v for k, v in _spec["sources"].items()})
    out_path = os.path.realpath(_spec["output"])
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    watched_paths = {out_path, spec_path, os.path.realpath(f"/proc/self/fd/{fd}")}
    watched_names = {os.path.basename(out_path), os.path.basename(spec_path), str(fd)}
    frozen_spec, frozen_served = copy.deepcopy(dict(_spec)), dict(_served)
    module = sys.modules[__name__]
    private = _privatize(module)
    tracing = [sys.modules[name] for name in ("execbench.tracing.tracer", "execbench.tracing.summary")]
    namespaces = [vars(module), private] + [vars(m) for m in tracing] + [_privatize(m) for m in tracing]
    classes = [c for m in [module, *tracing] for c in vars(m).values()
               if isinstance(c, type) and c.__module__ == m.__name__]
    mac = hashlib.blake2b(key=key, digest_size=16)
    del key
    helpers = (private["probe"], private["verify"], private["sentinel"])
    getframe, realpath, write_fd, dumps = sys._getframe, os.path.realpath, os.write, json.dumps
    state: dict[str, Any] = {"last": b"", "records": 0, "flags": [], "closed": False, "callers": {}}

    def flag(reason: str) -> None:
        if not state["flags"]:
            state["flags"].append(reason)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in ("object.__setattr__", "object.__delattr__"):
            if id(args[0]) in sealed:
                flag(f"the recorder's function was changed ({args[1]})")
            return
        n = _PATH_EVENTS.get(event)
        if n and any(_watched(a, watched_names, watched_paths, fd) for a in args[:n]):
            flag(f"the suite touched the recorder's files ({event} {str(args[0])[:200]})")

    def emit(record: Any) -> None:
        text = dumps(record, default=str).encode("utf-8")
        h = mac.copy()
        h.update(state["last"] + text)
        state["last"] = h.hexdigest().encode("ascii")
        data = state["last"] + b" " + text + b"\n"
        while data:
            data = data[write_fd(fd, data):]

    def check() -> None:
        if not state["flags"]:
            reason = changed()
            if reason is None and (_spec != frozen_spec or _served != frozen_served):
                reason = "the recorder's spec was changed"
            if reason is None and any(vars(m).get(PROBE) is not helpers[0] or vars(m).get(VERIFY) is not helpers[1]
                                      for m in _helped):
                reason = "a test module's recorder helpers were replaced"
            if reason is not None:
                flag(reason)

    def check_caller(name: str) -> None:
        filename = getframe(2).f_code.co_filename
        served = state["callers"].get(filename)
        if served is None:
            served = state["callers"][filename] = realpath(filename) in frozen_served
        if not served:
            flag(f"the recorder's {name} was called from {filename[:200]}")
        check()

    def write(record: Any) -> None:
        if state["closed"]:
            return
        check()
        if state["flags"]:  # the reason, the trailer, and nothing more
            emit({"fatal": "tampering: " + state["flags"][0]})
            emit({"end": state["records"] + 1})
            state["closed"] = True
            return
        emit(record)
        state["records"] += 1

    def close() -> None:
        check()
        if not state["closed"] and not state["flags"]:
            emit({"end": state["records"]})
            state["closed"] = True
        write({})  # a flag: its reason and the trailer

    channel = _Channel(write, close, check)
    private["_check_caller"] = check_caller
    private["_channel"] = vars(module)["_channel"] = channel
    changed, sealed = _snapshot(namespaces, classes, set(_MUTABLE))
    sealed |= {id(f) for f in (hook, emit, check, check_caller, write, close, flag)}
    install_audit_hook(hook, ("object.__setattr__", "object.__delattr__", *_PATH_EVENTS), _spec.get("audit_library"))
    return channel


def _check_caller(name: str) -> None:  # replaced in the private globals by _bind
    raise RuntimeError("the recorder is not bound")


_channel = _bind()
