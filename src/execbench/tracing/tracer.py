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
  family's :class:`execbench.tracing.state.StateMeter`).

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
from types import CodeType, FrameType
from typing import Any, Callable

from execbench.tracing.summary import summarize

_YIELD_OPS = {dis.opmap[name] for name in ("YIELD_VALUE",) if name in dis.opmap}
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
# Code objects whose repeated line events are loop artefacts of one source line.
_COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}


class TraceTooLarge(Exception):
    """Raised inside the tracer when a cap is exceeded; tracing stops."""


class TraceCapExceeded(BaseException):
    """Raised into the traced program when a cap is hit and ``stop_on_cap`` is set, so it stops
    instead of running on untraced (a BaseException: ``except Exception`` does not swallow it)."""


@dataclass
class TraceLimits:
    max_depth: int | None = None  # None: every depth is recorded
    max_line_events: int = 200_000
    max_summary_bytes: int = 8 * 1024 * 1024
    max_calls: int = 50_000


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

    def to_json(self) -> dict[str, Any]:
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
        self._patch_threading()
        threading.settrace(self._global)
        sys.settrace(self._global)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
        self._unpatch_threading()

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
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
                thread._execbench_segment = sink  # type: ignore[attr-defined]
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

    def _global(self, frame: FrameType, event: str, arg: Any):  # noqa: ANN202
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

    def _local(self, frame: FrameType, event: str, arg: Any):  # noqa: ANN202
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
        if code.co_name in _COMPREHENSIONS and self._last_line.get(ident) == lineno:
            return  # a comprehension's loop re-entering the line it already stands on
        self._last_line[ident] = lineno
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
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
        self.lines = []
        self.calls = []
        self._active.clear()
