"""The in-process execution tracer (runs inside the sandboxed child, never in the parent).

It records, for frames whose code belongs to a chosen set of files:

* line events in order, for the *primary* file (the program under test), with the
  concurrency notation: events of threads started while tracing are grouped into
  *concurrent segments* (see ``docs/trace-format.md``);
* calls to a configurable depth (entry = depth 0): function, file, first line, depth,
  executed lines, argument/return summaries made without calling user code;
* opcode-event counts (``f_trace_opcodes``) as the native trace length, when asked;
* hard caps on events and on summary bytes: over a cap tracing stops and the result
  says ``too_large`` instead of returning a truncated trace (with ``stop_on_cap``,
  :class:`TraceCapExceeded` is also raised into the program so it does not run on untraced);
* an optional ``observer`` called at every line event of a followed frame (the state
  family's :class:`execbench.tracing.state.StateMeter`);
* with ``guard``, defences against a program that disables, replaces or bypasses the
  tracer (``sys.settrace``/``setprofile`` guards, checks at ``stop``; the result is then
  ``tampered``), see docs/trace-format.md "Crashes and tampering";
* the script view: ``start_after_line`` (record from the event after the main guard's) and
  ``segment_markers`` (``#START``/``#END`` lines delimit concurrent segments).

Every comprehension line event is recorded (the paper's convention) unless
``collapse_comprehensions``.

Code whose qualified name starts with ``skip_prefix`` (instrumentation helpers) is not
followed. ``record_lines=False`` keeps only the counts (long runs of the state family).

Frames outside the chosen files get no local tracer, so they cost one call event each.
Generator/coroutine resumes are merged into the call record of their frame.
"""

from __future__ import annotations

import dis
import sys
import threading
from dataclasses import dataclass, field
from types import CodeType, FrameType, MethodType
from typing import Any, Callable, Required, TypedDict

from execbench.errors import InternalError
from execbench.tracing.summary import summarize

_YIELD_OPS = {dis.opmap[name] for name in ("YIELD_VALUE",) if name in dis.opmap}
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
# Comprehension code objects: only the optional "collapsed" convention treats their repeats specially.
_COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}


# The real tracing API, bound before any program runs (a program may replace the attributes).
_SETTRACE = sys.settrace
_GETTRACE = sys.gettrace
_THREADING_SETTRACE = threading.settrace


class _Refuse:
    """Stands in for ``sys.monitoring`` while a guarded trace runs: any use is tampering."""

    def __init__(self, tracer: "Tracer", name: str) -> None:
        object.__setattr__(self, "_tracer", tracer)
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> Any:
        tracer = object.__getattribute__(self, "_tracer")
        tracer._tamper(f"{object.__getattribute__(self, '_name')}.{attr} used by the program")

    def __setattr__(self, attr: str, value: Any) -> None:
        self.__getattr__(attr)


class TraceTooLarge(InternalError):
    """Raised inside the tracer when a cap is exceeded; tracing stops."""


class TracerTampered(BaseException):
    """Raised into the traced program when it calls a tracing API (``sys.settrace``,
    ``threading.setprofile``, ``sys.monitoring``, ...) while ``guard`` is on: the run is
    rejected as ``tracer_tampered`` (a BaseException: ``except Exception`` does not swallow it)."""


class TraceCapExceeded(BaseException):
    """Raised into the traced program when a cap is hit and ``stop_on_cap`` is set, so it stops
    instead of running on untraced (a BaseException: ``except Exception`` does not swallow it)."""


@dataclass(frozen=True)
class TraceLimits:
    max_depth: int | None = None  # None: every depth is recorded
    max_line_events: int = 200_000
    max_summary_bytes: int = 8 * 1024 * 1024
    max_calls: int = 50_000


# One recorded call as the result carries it ("return" is a keyword: the functional form).
CallJson = TypedDict("CallJson", {
    "id": int, "parent": int | None, "func": str, "file": str, "firstlineno": int, "depth": int, "thread": int,
    "call_line": int | None, "args": dict[str, str], "lines": list[int], "return": str | None,
    "exception": str | None, "resumes": int})


class ErrorJson(TypedDict):
    type: str  # the exception's class name, or TooLarge / Timeout / Crash
    message: str


class TraceResult(TypedDict, total=False):
    """A traced run's record (:meth:`Tracer.result`, completed by ``tracing/child.py``)."""

    status: Required[str]  # ok, error, tampered, too_large, timeout, crash
    line_events: int
    threads: int
    opcodes: int  # when counted
    too_large: str  # which limit
    tampered: str  # how the program reached for the tracer
    lines: list[Any]  # primary-file line numbers; a concurrent segment is a nested list
    calls: list[CallJson]  # when calls are recorded
    error: ErrorJson
    call: str  # calls mode: the call expression
    exit_code: int  # script mode


@dataclass
class CallRecord:
    id: int
    parent: int | None
    func: str
    file: str
    firstlineno: int
    depth: int
    thread: int
    call_line: int | None = None  # the parent's line that made the call (None at depth 0)
    args: dict[str, str] = field(default_factory=dict)
    lines: list[int] = field(default_factory=list)
    returned: str | None = None
    exception: str | None = None
    resumes: int = 0

    def to_json(self) -> CallJson:
        return {
            "id": self.id,
            "parent": self.parent,
            "func": self.func,
            "file": self.file,
            "firstlineno": self.firstlineno,
            "depth": self.depth,
            "thread": self.thread,
            "call_line": self.call_line,
            "args": self.args,
            "lines": self.lines,
            "return": self.returned,
            "exception": self.exception,
            "resumes": self.resumes,
        }


class Tracer:
    """Records execution of code from ``files``; ``files[0]`` is the primary file."""

    def __init__(
        self,
        files: list[str],
        *,
        limits: TraceLimits | None = None,
        record_calls: bool = True,
        count_opcodes: bool = False,
        summarize_values: bool = True,
        record_lines: bool = True,
        skip_prefix: str | None = None,
        observer: Callable[[FrameType], None] | None = None,
        stop_on_cap: bool = False,
        collapse_comprehensions: bool = False,
        guard: bool = False,
        start_after_line: int | None = None,
        segment_markers: tuple[list[int], list[int]] | None = None,
    ) -> None:
        self.files = set(files)
        self.primary = files[0] if record_lines else None
        self.limits = limits or TraceLimits()
        self.record_calls = record_calls
        self.count_opcodes = count_opcodes
        self.summarize_values = summarize_values
        self.skip_prefix = skip_prefix
        self.observer = observer
        self.stop_on_cap = stop_on_cap
        self.collapse_comprehensions = collapse_comprehensions
        self.guard = guard
        self.tampered: str | None = None
        self._skip_until = start_after_line  # script mode: record from the event after this line's
        self._markers = (set(segment_markers[0]), set(segment_markers[1])) if segment_markers else None
        self._marker_segment: list[int] | None = None
        self._originals: dict[tuple[Any, str], Any] = {}
        self.lines: list[Any] = []  # ints, and lists for concurrent segments
        self.line_events = 0
        self.opcodes = 0
        self.calls: list[CallRecord] = []
        self._n_calls = 0
        self.too_large: str | None = None
        self._summary_bytes = 0
        self._code_wanted: dict[CodeType, bool] = {}
        self._active: dict[FrameType, CallRecord] = {}
        self._thread_obj: dict[int, tuple[threading.Thread, int]] = {}
        self._thread_obj_seen: list[int] = []
        self._thread_sink: dict[int, list[Any]] = {}
        self._last_line: dict[int, int] = {}
        self._lock = threading.Lock()
        self._segments_open: dict[int, tuple[list[Any], set[int]]] = {}
        self._patched: list[tuple[type, str, Any]] = []

    # -- public -------------------------------------------------------------
    def start(self) -> None:
        if self._markers is None:
            self._patch_threading()
        if self.guard:
            self._install_guards()
        self._starter = threading.get_ident()
        _THREADING_SETTRACE(self._global)
        _SETTRACE(self._global)

    def stop(self) -> None:
        current = _GETTRACE()
        _SETTRACE(None)
        _THREADING_SETTRACE(None)  # None clears the hook
        self._unpatch_threading()
        if self.guard:
            self._check_untouched(current)
            self._remove_guards()

    # -- guards against programs that touch the tracer (docs/trace-format.md) --
    def _tamper(self, what: str) -> None:
        if self.tampered is None:
            self.tampered = what
        raise TracerTampered(what)

    def _ours(self, function: Any, method: Callable[..., Any] | None = None) -> bool:
        """Is ``function`` this tracer's global (or ``method``) trace function? Identity only:
        a program's object could answer ``==`` however it likes."""
        return (type(function) is MethodType and function.__func__ is (method or Tracer._global)
                and function.__self__ is self)

    def _install_guards(self) -> None:
        tracer = self

        def settrace(function: Any) -> None:
            if tracer._ours(function):  # threading's own bootstrap of a new thread
                return _SETTRACE(function)
            tracer._tamper("sys.settrace called by the program")

        def setter(name: str) -> Callable[..., None]:
            def refuse(*args: Any, **kwargs: Any) -> None:
                tracer._tamper(f"{name} called by the program")
            return refuse

        def thread_settrace(function: Any) -> None:
            if tracer._ours(function):
                return _THREADING_SETTRACE(function)
            tracer._tamper("threading.settrace called by the program")

        def nothing() -> None:  # what an untraced program sees
            return None

        replacements: list[tuple[Any, str, Any]] = [
            (sys, "settrace", settrace), (sys, "setprofile", setter("sys.setprofile")),
            (sys, "gettrace", nothing), (sys, "getprofile", nothing),
            (threading, "settrace", thread_settrace), (threading, "setprofile", setter("threading.setprofile")),
        ]
        for name in ("settrace_all_threads", "setprofile_all_threads"):
            if hasattr(threading, name):
                replacements.append((threading, name, setter(f"threading.{name}")))
        for name in ("gettrace", "getprofile"):
            if hasattr(threading, name):
                replacements.append((threading, name, nothing))
        if hasattr(sys, "monitoring"):
            replacements.append((sys, "monitoring", _Refuse(self, "sys.monitoring")))
        for owner, name, replacement in replacements:
            self._originals[(owner, name)] = getattr(owner, name)
            setattr(owner, name, replacement)
        self._guards = {key: getattr(*key) for key in self._originals}

    def _check_untouched(self, current: Any) -> None:
        if self.tampered is not None or self.too_large:
            return
        if not self._ours(current):
            self.tampered = "the trace function was replaced or removed"
        for (owner, name), guard in self._guards.items():
            if getattr(owner, name, None) is not guard:
                self.tampered = f"{owner.__name__}.{name} was replaced by the program"
        starter = self._thread_obj.get(self._starter, (None, None))[1]
        for frame, record in self._active.items():
            if not self._ours(frame.f_trace, Tracer._local) or frame.f_trace_lines is not True:
                self.tampered = f"the trace function of a {record.func} frame was changed"
            elif record.thread == starter and not frame.f_code.co_flags & _GENERATOR_FLAGS:
                # every ordinary frame of the traced run has returned by now: this one's
                # return event was lost because its trace function was removed
                self.tampered = f"a {record.func} frame ended without a return event"

    def _remove_guards(self) -> None:
        for (owner, name), original in self._originals.items():
            setattr(owner, name, original)
        self._originals.clear()

    def result(self) -> TraceResult:
        if self.tampered:
            return {"status": "tampered", "tampered": self.tampered, "line_events": self.line_events}
        out: TraceResult = {
            "status": "too_large" if self.too_large else "ok",
            "line_events": self.line_events,
            "threads": len(self._thread_obj_seen),
        }
        if self.count_opcodes:
            out["opcodes"] = self.opcodes
        if self.too_large:
            out["too_large"] = self.too_large
            return out
        if self.primary is not None:
            out["lines"] = self.lines
        if self.record_calls:
            out["calls"] = [c.to_json() for c in self.calls]
        return out

    # -- threads and concurrent segments -------------------------------------
    def _thread(self) -> int:
        """Index of the running thread, registering it (and its segment) when new.

        Idents are reused after a thread ends, so a thread is recognised by its object."""
        ident = threading.get_ident()
        current = threading.current_thread()
        known = self._thread_obj.get(ident)
        if known is not None and known[0] is current:
            return known[1]
        with self._lock:
            index = len(self._thread_obj_seen)
            self._thread_obj_seen.append(ident)
            self._thread_obj[ident] = (current, index)
            segment = getattr(current, "_execbench_segment", None)
            self._thread_sink[ident] = segment if segment is not None else self.lines
            self._last_line.pop(ident, None)
        return index

    def _patch_threading(self) -> None:
        tracer = self
        original_start = threading.Thread.start
        original_join = threading.Thread.join

        def start(thread: threading.Thread, *args: Any, **kwargs: Any) -> Any:
            me = threading.get_ident()
            tracer._thread()
            with tracer._lock:
                sink = tracer._thread_sink[me]
                if sink is tracer.lines:  # the starter is outside any segment: open one
                    segment: list[Any] = []
                    tracer.lines.append(segment)
                    tracer._thread_sink[me] = segment
                    tracer._segments_open[me] = (segment, set())
                    sink = segment
                thread._execbench_segment = sink  # type: ignore[attr-defined]  # our own attribute on the Thread object
                opened = tracer._segments_open.get(me)
                if opened is not None:
                    opened[1].add(id(thread))
            return original_start(thread, *args, **kwargs)

        def join(thread: threading.Thread, *args: Any, **kwargs: Any) -> Any:
            value = original_join(thread, *args, **kwargs)
            me = threading.get_ident()
            with tracer._lock:
                opened = tracer._segments_open.get(me)
                if opened is not None and not thread.is_alive():
                    opened[1].discard(id(thread))
                    if not opened[1]:
                        del tracer._segments_open[me]
                        tracer._thread_sink[me] = tracer.lines
            return value

        for name, fn in (("start", start), ("join", join)):
            self._patched.append((threading.Thread, name, getattr(threading.Thread, name)))
            setattr(threading.Thread, name, fn)

    def _unpatch_threading(self) -> None:
        for owner, name, original in reversed(self._patched):
            setattr(owner, name, original)
        self._patched.clear()

    # -- the trace functions ---------------------------------------------------
    def _wanted(self, code: CodeType) -> bool:
        wanted = self._code_wanted.get(code)
        if wanted is None:
            wanted = code.co_filename in self.files and not (
                self.skip_prefix is not None and code.co_qualname.startswith(self.skip_prefix))
            self._code_wanted[code] = wanted
        return wanted

    def _global(self, frame: FrameType, event: str, arg: Any):
        # Called for "call" events only; every frame of every file passes here, so the
        # rejection of unwanted code is one dict lookup.
        code = frame.f_code
        wanted = self._code_wanted.get(code)
        if wanted is None:
            wanted = self._wanted(code)
        if not wanted or self.too_large:
            return None
        try:
            record = self._active.get(frame)
            if record is not None:  # a generator or coroutine resumed
                record.resumes += 1
            else:
                record = self._new_call(frame)
                if record is None:
                    return None
            if self.count_opcodes:
                frame.f_trace_opcodes = True
            return self._local
        except TraceTooLarge as exc:
            self._abort(str(exc))
            return None

    def _new_call(self, frame: FrameType) -> CallRecord | None:
        parent = frame.f_back
        parent_record = None
        while parent is not None:
            parent_record = self._active.get(parent)
            if parent_record is not None:
                break
            parent = parent.f_back
        depth = 0 if parent_record is None else parent_record.depth + 1
        if self.limits.max_depth is not None and depth > self.limits.max_depth:
            return None
        code = frame.f_code
        self._n_calls += 1
        if self._n_calls > self.limits.max_calls:
            raise TraceTooLarge(f"more than {self.limits.max_calls} calls")
        record = CallRecord(
            id=self._n_calls - 1,
            parent=None if parent_record is None else parent_record.id,
            func=code.co_qualname,
            file=code.co_filename,
            firstlineno=code.co_firstlineno,
            depth=depth,
            thread=self._thread(),
            call_line=None if parent is None else parent.f_lineno,
        )
        if self.record_calls:
            if self.summarize_values:
                record.args = self._summarize_args(frame)
            self.calls.append(record)
        self._active[frame] = record
        return record

    def _summarize_args(self, frame: FrameType) -> dict[str, str]:
        code = frame.f_code
        n = code.co_argcount + code.co_kwonlyargcount
        n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        names = code.co_varnames[:n]
        local = frame.f_locals
        out = {}
        for name in names:
            if name in local:
                out[name] = self._budget(summarize(local[name]))
        return out

    def _budget(self, text: str) -> str:
        self._summary_bytes += len(text)
        if self._summary_bytes > self.limits.max_summary_bytes:
            raise TraceTooLarge(f"value summaries exceed {self.limits.max_summary_bytes} bytes")
        return text

    def _local(self, frame: FrameType, event: str, arg: Any):
        if event == "line":  # the hot path: kept inline
            if self.too_large:
                return None
            self.line_events += 1
            if self.line_events > self.limits.max_line_events:
                self._abort(f"more than {self.limits.max_line_events} line events")
                if self.stop_on_cap:
                    raise TraceCapExceeded(self.too_large)
                return None
            if self.observer is not None:
                self.observer(frame)
            lineno = frame.f_lineno
            if self.record_calls:
                record = self._active.get(frame)
                if record is not None:
                    record.lines.append(lineno)
                    record.exception = None  # a line after an exception event: it was handled
            code = frame.f_code
            if code.co_filename == self.primary:
                self._on_primary_line(code, lineno)
            return self._local
        if self.too_large:
            return None
        try:
            if event == "opcode":
                self.opcodes += 1
            elif event == "return":
                if self.guard and not frame.f_trace_lines:
                    self.tampered = self.tampered or f"line events of a {frame.f_code.co_qualname} frame were turned off"
                self._on_return(frame, arg)
            elif event == "exception":
                record = self._active.get(frame)
                if record is not None and self.record_calls:
                    record.exception = arg[0].__name__
        except TraceTooLarge as exc:
            self._abort(str(exc))
            return None
        return self._local

    def _on_primary_line(self, code: CodeType, lineno: int) -> None:
        ident = threading.get_ident()
        if (self.collapse_comprehensions and code.co_name in _COMPREHENSIONS
                and self._last_line.get(ident) == lineno):
            return  # the "collapsed" convention: a comprehension re-entering the line it stands on
        self._last_line[ident] = lineno
        if self._skip_until is not None:
            if lineno == self._skip_until and code.co_name == "<module>":
                self._skip_until = None
            return
        if self._markers is not None:  # the program's #START / #END comments delimit segments
            starts, ends = self._markers
            if self._marker_segment is None and lineno in starts:
                self._marker_segment = [lineno]
                self.lines.append(self._marker_segment)
            elif self._marker_segment is not None and lineno not in ends:
                self._marker_segment.append(lineno)
            else:
                self._marker_segment = None
                self.lines.append(lineno)
            return
        if ident not in self._thread_sink:
            self._thread()
        self._thread_sink[ident].append(lineno)

    def _on_return(self, frame: FrameType, value: Any) -> None:
        record = self._active.get(frame)
        if record is None:
            return
        code = frame.f_code
        suspended = bool(code.co_flags & _GENERATOR_FLAGS) and (
            frame.f_lasti >= 0 and code.co_code[frame.f_lasti] in _YIELD_OPS
        )
        if suspended:
            return
        del self._active[frame]
        if self.record_calls and self.summarize_values and record.exception is None:
            record.returned = self._budget(summarize(value))

    def _abort(self, reason: str) -> None:
        self.too_large = reason
        _SETTRACE(None)
        _THREADING_SETTRACE(None)  # None clears the hook
        self.lines = []
        self.calls = []
        self._active.clear()
