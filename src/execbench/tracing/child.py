"""The tracing job: runs INSIDE the sandbox, as a handler of the job runner.

The parent (``execbench.tracing.run``) sends the program and a spec as a job
(:mod:`execbench.sandbox.jobs`); :func:`trace_job` runs the program under :class:`Tracer`
and returns the result record. Modes:

* ``calls``: execute the module once (untraced, ``__name__ != "__main__"``), then for
  each call expression fork a child that traces just that call, so every call starts
  from the same fresh module state, and from the same directories: the job's directory
  (with the work dir above it) and ``/dev/shm`` as the module left them, with no process
  an earlier call started still alive (:mod:`execbench.tracing.freshcall`; a module that
  leaves more than its caps there is a module error, ``DirectoryOverCaps``);
* ``script``: trace the whole module run as ``__main__`` with the sandbox's stdin.
"""

from __future__ import annotations

import ast
import os
import signal
import sys
import traceback
from typing import Any, NamedTuple, NotRequired, Required, TypedDict, cast

from execbench.sandbox import wire
from execbench.tracing import freshcall, script
from execbench.tracing.tracer import ErrorJson, TraceLimits, TraceResult, TracerTampered, Tracer

MAX_MESSAGE = 500


class LimitsJson(TypedDict, total=False):
    """:class:`TraceLimits` as the job's args carry it (``dataclasses.asdict``)."""

    max_depth: int | None
    max_line_events: int
    max_summary_bytes: int
    max_calls: int


class TraceSpec(TypedDict, total=False):
    """What a trace job is asked (``tracing/run.py`` writes it; the job's args)."""

    mode: Required[str]  # "calls" or "script"
    files: Required[list[str]]  # the primary file first
    limits: LimitsJson
    record_calls: bool
    count_opcodes: bool
    collapse_comprehensions: bool
    calls: list[str]  # calls mode
    call_timeout: int
    max_record_bytes: int
    start_after_main_guard: bool  # script mode
    segment_markers: bool


class ModuleStatus(TypedDict):
    status: str  # ok, error (the module's own code raised), tampered
    error: NotRequired[ErrorJson]
    tampered: NotRequired[str]


class CallsValue(TypedDict):
    module: ModuleStatus
    calls: list[TraceResult]


class ScriptValue(TypedDict):
    module: ModuleStatus
    script: TraceResult


def _error(exc: BaseException) -> ErrorJson:
    message = str(exc)
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + "..."
    return {"type": type(exc).__name__, "message": message}


def _tracer(spec: TraceSpec, files: list[str], **script_view: Any) -> Tracer:
    return Tracer(
        files,
        limits=TraceLimits(**spec.get("limits", {})),
        record_calls=spec.get("record_calls", False),
        count_opcodes=spec.get("count_opcodes", False),
        collapse_comprehensions=spec.get("collapse_comprehensions", False),
        guard=True,
        **script_view,
    )


def _tampered(result: TraceResult, error: BaseException | None) -> TraceResult:
    if isinstance(error, TracerTampered) and result["status"] != "tampered":
        return {"status": "tampered", "tampered": str(error), "line_events": result.get("line_events", 0)}
    return result


def _describe_exit(status: int) -> str:
    """A wait status as words: "killed by SIGSEGV", "exit status 3"."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"killed by {name}"
    if os.WIFEXITED(status):
        return f"exit status {os.WEXITSTATUS(status)} without a result (os._exit or a crash)"
    return f"wait status {status}"


def _trace_call(spec: TraceSpec, files: list[str], namespace: dict, call: str) -> TraceResult:
    expression = compile(call, "<call>", "eval", dont_inherit=True)
    tracer = _tracer(spec, files)
    error = None
    tracer.start()
    try:
        eval(expression, namespace)  # noqa: S307 - the dataset's own call, inside the sandbox
    except BaseException as exc:  # noqa: BLE001 - reported, not swallowed
        error = exc
    finally:
        tracer.stop()
    result = _tampered(tracer.result(), error)
    if error is not None and result["status"] != "tampered":
        result["status"] = "error" if result["status"] == "ok" else result["status"]
        result["error"] = _error(error)
    return result


def _read_all(fd: int, limit: int, read: Any) -> bytes | None:
    """Everything written to the pipe ``fd`` until EOF; None past ``limit`` bytes."""
    chunks, total = [], 0
    while chunk := read(fd, 1 << 16):
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class _Bound(NamedTuple):
    """What runs after the program's module code, bound before it (it could patch os, signal)."""

    fork: Any
    pipe: Any
    close: Any
    read: Any
    write: Any
    waitpid: Any
    exit: Any
    kill: Any
    alarm: Any
    exited: Any
    exit_status: Any
    signalled: Any
    term_signal: Any

    @classmethod
    def now(cls) -> _Bound:
        return cls(os.fork, os.pipe, os.close, os.read, os.write, os.waitpid, os._exit, os.kill, signal.alarm,
                   os.WIFEXITED, os.WEXITSTATUS, os.WIFSIGNALED, os.WTERMSIG)


def _run_calls(spec: TraceSpec, files: list[str], code: Any, encode: Any, send: Any,
               fresh: freshcall.FreshCalls) -> None:
    """Run the module, then trace each call in a child of its own, each from the directory
    the module left with no process of an earlier call alive (``fresh``, see
    :mod:`execbench.tracing.freshcall`); the calls' records go to the job's value straight
    from the children's pipes (never through a file, never through a parser or serialiser
    the program could have patched)."""
    namespace: dict[str, Any] = {"__name__": "__execbench_program__", "__file__": files[0]}
    bound = _Bound.now()
    try:
        exec(code, namespace)  # noqa: S102 - the program under test, inside the sandbox
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        send(encode({"module": {"status": "error", "error": _error(exc)}, "calls": []}))
        return
    try:
        fresh.take()
    except freshcall.DirectoryOverCaps as exc:   # the candidate's rejection, with the reason
        send(encode({"module": {"status": "error", "error": _error(exc)}, "calls": []}))
        return
    parts, broken = [], ""
    for index, call in enumerate(spec["calls"]):
        if index and not broken:
            try:
                fresh.reset()
            except freshcall.RestoreFailed as exc:
                broken = f"the directory could not be restored for this call: {exc}"[:MAX_MESSAGE]
        if broken:
            parts.append(encode({"status": "crash", "error": {"type": "Crash", "message": broken}, "call": call}))
            continue
        parts.append(_call_part(spec, files, namespace, call, encode, bound))
    send(b'{"module":{"status":"ok"},"calls":[' + b",".join(parts) + b"]}")


def _call_part(spec: TraceSpec, files: list[str], namespace: dict[str, Any], call: str, encode: Any,
               bound: _Bound) -> bytes:
    """Trace ``call`` in a forked child; its record (or the failure's) as JSON bytes."""
    timeout = int(spec.get("call_timeout", 10))
    limit = int(spec.get("max_record_bytes", 64 << 20))
    sys.stdout.flush()
    sys.stderr.flush()
    r, w = bound.pipe()
    pid = bound.fork()
    if pid == 0:  # the traced child of this call
        code_ = 0
        try:
            bound.close(r)
            bound.alarm(timeout)
            result = _trace_call(spec, files, namespace, call)
            result["call"] = call
            pending = memoryview(encode(result))
            while pending:
                pending = pending[bound.write(w, pending):]
        except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
            traceback.print_exc()
            code_ = 1
        finally:
            sys.stdout.flush()
            bound.exit(code_)
    bound.close(w)
    data = _read_all(r, limit, bound.read)
    bound.close(r)
    if data is None:
        bound.kill(pid, signal.SIGKILL)
    _, status = bound.waitpid(pid, 0)
    if data and bound.exited(status) and bound.exit_status(status) == 0:
        return data
    failed: TraceResult
    if data is None:
        failed = {"status": "too_large", "error": {"type": "TooLarge", "message": f"record over {limit} bytes"}}
    elif bound.signalled(status) and bound.term_signal(status) == signal.SIGALRM:
        failed = {"status": "timeout", "error": {"type": "Timeout", "message": f"{timeout} s"}}
    else:
        failed = {"status": "crash", "error": {"type": "Crash", "message": _describe_exit(status)}}
    failed["call"] = call
    return encode(failed)


def _run_script(spec: TraceSpec, files: list[str], code: Any, tree: ast.Module, source: str) -> ScriptValue:
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": files[0]}
    view: dict[str, Any] = {}
    if spec.get("start_after_main_guard"):
        view["start_after_line"] = script.main_guard_line(tree)
    if spec.get("segment_markers"):
        view["segment_markers"] = script.segment_markers(source)
    tracer = _tracer(spec, files, **view)
    error = None
    exit_code = 0
    tracer.start()
    try:
        exec(code, namespace)  # noqa: S102 - the program under test, inside the sandbox
    except SystemExit as exc:
        exit_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # noqa: BLE001 - the program's failure is the result, whatever it is
        error = exc
        exit_code = 1
    finally:
        tracer.stop()
        sys.stdout.flush()
    result = _tampered(tracer.result(), error)
    result["exit_code"] = exit_code
    if error is not None and result["status"] != "tampered":
        result["status"] = "error" if result["status"] == "ok" else result["status"]
        result["error"] = _error(error)
    return {"module": {"status": "ok"}, "script": result}


def _writable_roots() -> list[str]:
    """The directories a job can write, read before the program runs: the job runner's
    work dir (the parent of ``HOME``, the job's directory; ``sandbox/_jobrunner.py``) and
    the sandbox's private ``/dev/shm``. Outside that layout, the cwd alone."""
    cwd, home = os.getcwd(), os.environ.get("HOME", "")
    inside = os.path.isabs(home) and os.path.isdir(home) and os.path.commonpath([cwd, home]) == home
    roots = [os.path.dirname(home) if inside and os.path.dirname(home) != "/" else cwd]
    if os.path.isdir(freshcall.SHM_DIR) and os.access(freshcall.SHM_DIR, os.W_OK):
        roots.append(freshcall.SHM_DIR)
    return roots


def trace_job(spec: TraceSpec) -> ScriptValue | CallsValue | None:
    """The job runner's handler (:mod:`execbench.sandbox.jobs`): trace the program named by
    ``spec["files"][0]`` (in the job's directory) as ``spec["mode"]`` says; the result record
    (``module``, and ``calls`` or ``script``) is the job's value (sent by the calls mode
    itself, returned otherwise)."""
    encode, send = wire.private()   # before the program's first line
    files = [os.path.abspath(f) for f in spec["files"]]
    with open(files[0]) as fh:
        source = fh.read()
    sys.path.insert(0, os.path.dirname(files[0]))
    code = compile(source, files[0], "exec", dont_inherit=True)  # no flags leak from this module
    tree = cast(ast.Module, compile(source, files[0], "exec", ast.PyCF_ONLY_AST, dont_inherit=True))
    found = script.tampering(tree)
    if found is not None:  # reaches for the tracer: never run it
        return {"module": {"status": "tampered", "tampered": found}, "calls": []}
    if spec["mode"] == "script":
        return _run_script(spec, files, code, tree, source)
    fresh = freshcall.FreshCalls(_writable_roots())   # before the program's first line
    _run_calls(spec, files, code, encode, send, fresh)  # sends its own value
    return None
