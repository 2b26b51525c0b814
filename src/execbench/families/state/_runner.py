"""Batch job runner of the state family; runs INSIDE the sandbox, never in the parent.

``python -m execbench.families.state._runner spec.json`` runs the spec's jobs one after
the other, each in its own forked child, and writes ``result.json``. Starting one sandbox
(and one interpreter, ~0.1-0.2 s) per batch instead of per run keeps a case's build cheap;
runs with different hash seeds are different batches (``PYTHONHASHSEED`` is fixed when the
interpreter starts and inherited by forks).

Jobs (in order; a job whose ``needs`` did not all succeed is skipped):

* ``python``: run ``program`` as ``__main__`` (fresh module, ``sys.argv = [program]``) with
  ``stdin`` as standard input, optionally measured (``measure``: ``{"state": bool,
  "max_line_events": N, "state_budget": N}``: the tracer's opcode and line-event counts,
  and the state meter of :mod:`execbench.tracing.state`); the value
  of a global named by ``dump_global`` is returned (profiling runs);
* ``exec``: ``execve`` ``argv`` (g++, a compiled program, gcov) in the subdirectory ``cwd``.

Per job: CPU, wall and address-space caps, stdout kept up to ``max_output`` bytes, the tail
of stderr, wall/CPU seconds and peak RSS from ``wait4``. One job cannot touch another's
record: the runner is not dumpable (no /proc/<pid>/mem or fd access by the jobs' processes),
everything a job left running is killed before the next one starts (``kill(-1)`` as pid 2
of the sandbox's PID namespace or as its fresh uid), the next job's record files are removed and the batch's
input files restored first, and a job's own extra record is read bounded, keys
``metrics``/``dump``/``dump_error`` only. ``preload`` modules are imported
before forking, so every job finds them in ``sys.modules`` (networkx takes ~0.3 s to import).
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import resource
import signal
import sys
import time
import traceback
from typing import Any

from execbench.sandbox.children import wait_or_kill

STDERR_TAIL = 2000


def _limit_child(job: dict[str, Any]) -> None:
    cpu = max(1, int(job.get("cpu", 10) + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = int(job.get("memory_mb", 1024)) * 1024 * 1024
    if memory > 0:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            memory = min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (memory, hard))


def _redirect(job: dict[str, Any], out: str, err: str) -> None:
    stdin = job.get("stdin")
    fd = os.open(stdin, os.O_RDONLY) if stdin else os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    for target, path in ((1, out), (2, err)):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, target)
        os.close(fd)


def _measuring_tracer(program: str, measure: dict[str, Any]) -> tuple[Any, Any]:
    """The tracer of a measured run: opcodes and line events of the program's own frames
    (not of ``_checkpoint`` helpers), every depth, no line list, the program stopped at the
    cap; plus the state meter when ``measure["state"]``."""
    from execbench.tracing.state import StateMeter
    from execbench.tracing.tracer import TraceLimits, Tracer

    meter = StateMeter([program], budget=int(measure.get("state_budget", 300_000))) \
        if measure.get("state", False) else None
    cap = int(measure.get("max_line_events", 2_000_000))
    limits = TraceLimits(max_line_events=cap, max_calls=sys.maxsize)
    tracer = Tracer([program], limits=limits, record_calls=False, count_opcodes=True, summarize_values=False,
                    record_lines=False, skip_prefix="_checkpoint", observer=meter, stop_on_cap=True)
    return tracer, meter


def _measured(tracer: Any, meter: Any) -> dict[str, Any]:
    result = tracer.result()
    out = {key: result[key] for key in ("status", "opcodes", "line_events", "too_large") if key in result}
    if meter is not None:
        out.update(meter.result())
    return out


def _python_child(job: dict[str, Any], out: str, err: str, extra: str) -> int:
    """The forked child of a python job: returns the program's exit code."""
    import types

    sys.stdout.flush()
    sys.stderr.flush()
    _redirect(job, out, err)
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    _limit_child(job)
    program = os.path.abspath(job["program"])
    sys.argv = [program]
    sys.path[0] = os.path.dirname(program)
    module = types.ModuleType("__main__")
    module.__file__ = program
    module.__builtins__ = __builtins__  # type: ignore[attr-defined] - ModuleType accepts the attribute at run time
    sys.modules["__main__"] = module
    namespace = module.__dict__
    measure = job.get("measure")
    tracer = meter = None
    code = 0
    try:
        with open(program, encoding="utf-8") as fh:
            compiled = compile(fh.read(), program, "exec", dont_inherit=True)  # its own __future__ flags only
        if measure is not None:
            tracer, meter = _measuring_tracer(program, measure)
            tracer.start()
        try:
            exec(compiled, namespace)  # noqa: S102 - the program under test, inside the sandbox
        finally:
            if tracer is not None:
                tracer.stop()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # noqa: BLE001 - reported through the exit code and stderr
        if tracer is not None and tracer.too_large:
            code = 0  # the tracer stopped the run: its result says too_large
        else:
            traceback.print_exc()
            code = 1
        del exc
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
        code = code or 1
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
        pass
    extra_data: dict[str, Any] = {}
    if tracer is not None:
        extra_data["metrics"] = _measured(tracer, meter)
    name = job.get("dump_global")
    if name:
        try:
            extra_data["dump"] = json.loads(json.dumps(namespace.get(name)))
        except (TypeError, ValueError) as exc:
            extra_data["dump_error"] = str(exc)
    with open(extra, "w") as fh:
        json.dump(extra_data, fh)
    return code


def _exec_child(job: dict[str, Any], out: str, err: str) -> None:
    _redirect(job, out, err)
    _limit_child(job)
    env = dict(os.environ)
    env.update({k: v.replace("{cwd}", os.getcwd()) for k, v in job.get("env", {}).items()})
    argv = list(job["argv"])
    path = argv[0]
    if "/" not in path:
        for directory in env.get("PATH", "/usr/bin:/bin").split(":"):
            candidate = os.path.join(directory, path)
            if os.access(candidate, os.X_OK):
                path = candidate
                break
    os.execve(path, argv, env)


def _read_limited(path: str, limit: int) -> tuple[bytes, bool]:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except FileNotFoundError:
        return b"", False
    return data[:limit], len(data) > limit


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - STDERR_TAIL))
            return fh.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def _kill_leftovers() -> None:
    """Kill every process a job left behind: as pid 2 of the sandbox's PID namespace, or
    as the sandbox's fresh uid (EXECBENCH_SANDBOX_EXCLUSIVE_UID), kill(-1) reaches all of
    them and nothing else (not init, not this process)."""
    if os.getpid() == 2 or os.environ.get("EXECBENCH_SANDBOX_EXCLUSIVE_UID") == "1":
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _snapshot(base: str) -> dict[str, tuple[bytes, int]]:
    """The batch's input files (content, mode), restored before every job."""
    files: dict[str, tuple[bytes, int]] = {}
    for dirpath, _, names in os.walk(base):
        for name in names:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as fh:
                    files[path] = (fh.read(), st.st_mode & 0o777)
    return files


def _restore(files: dict[str, tuple[bytes, int]]) -> None:
    for path, (data, mode) in files.items():
        try:
            with open(path, "rb") as fh:
                same = fh.read(len(data) + 1) == data and os.fstat(fh.fileno()).st_mode & 0o777 == mode
            if same and not os.path.islink(path):
                continue
        except OSError:
            pass
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)


def _read_extra(path: str) -> dict[str, Any]:
    """A job's own extra record (written in its process, so hostile): bounded, and only
    the keys a job may report about itself."""
    from execbench.sandbox.records import RecordError, load_json
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return {}
    try:
        with os.fdopen(fd, "rb") as fh:
            data = load_json(fh.read(16 << 20), max_bytes=(16 << 20) - 1)
    except (OSError, RecordError) as exc:
        return {"dump_error": f"bad job record: {exc}"}
    if not isinstance(data, dict):
        return {"dump_error": "bad job record: not an object"}
    return {k: data[k] for k in ("metrics", "dump", "dump_error") if k in data}


def run_job(index: int, job: dict[str, Any]) -> dict[str, Any]:
    base = os.path.abspath(".")
    cwd = os.path.join(base, job.get("cwd", "."))
    os.makedirs(cwd, exist_ok=True)
    out, err, extra = (os.path.join(base, f".job{index}.{s}") for s in ("out", "err", "json"))
    planted = [out, err, extra, *(os.path.join(cwd, n) for n in job.get("collect", []))]
    for path in planted:   # planted by an earlier job? (records and files this job reports)
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
    for name in job.get("chmod", []):
        os.chmod(os.path.join(cwd, name), 0o700)
    if job.get("stdin"):
        job = {**job, "stdin": os.path.join(base, job["stdin"])}
    if job.get("program"):
        job = {**job, "program": os.path.join(base, job["program"])}
    wall = float(job.get("wall", 30))
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(cwd)
            if job["kind"] == "python":
                code = _python_child(job, out, err, extra)
            else:
                _exec_child(job, out, err)
        except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
            try:
                traceback.print_exc()
            except BaseException:  # noqa: BLE001 - the program's failure is the result, whatever it is
                pass
            code = 127
        finally:
            os._exit(code if 0 <= code < 256 else 1)
    status, usage, timed_out = wait_or_kill(pid, started + wall)
    _kill_leftovers()
    duration = time.monotonic() - started
    stdout, truncated = _read_limited(out, int(job.get("max_output", 1 << 20)))
    stderr = _tail(err)
    result: dict[str, Any] = {
        "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "wall": round(duration, 4),
        "cpu": round(usage.ru_utime + usage.ru_stime, 4),
        "maxrss_kb": usage.ru_maxrss,
        "stdout": base64.b64encode(stdout).decode(),
        "stdout_truncated": truncated,
        "stderr": stderr,
    }
    limit = None
    if timed_out:
        limit = "wall_time"
    elif result["signal"] == signal.SIGXCPU or (
            result["signal"] == signal.SIGKILL and result["cpu"] >= 0.95 * float(job.get("cpu", 10))):
        limit = "cpu_time"
    elif result["exit_code"] not in (0, None) and any(
            marker in stderr[-600:] for marker in ("MemoryError", "std::bad_alloc", "Cannot allocate memory")):
        limit = "memory"
    elif truncated:
        limit = "output"
    result["limit"] = limit
    result["ok"] = limit is None and result["exit_code"] == 0
    result.update(_read_extra(extra))
    collected = {}
    for name in job.get("collect", []):
        data, _ = _read_limited(os.path.join(cwd, name), 1 << 16)
        if data or os.path.exists(os.path.join(cwd, name)):
            collected[name] = data.decode("utf-8", "replace")
    result["files"] = collected
    for path in (out, err, extra):
        if os.path.exists(path):
            os.unlink(path)
    return result


def main(argv: list[str]) -> int:
    with open(argv[0]) as fh:
        spec = json.load(fh)
    preload = list(spec.get("preload", []))
    if any(job.get("measure") is not None for job in spec["jobs"]):
        preload += ["execbench.tracing.tracer", "execbench.tracing.state"]
    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - the program will report it itself
            pass
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: jobs cannot reach into us
    inputs = _snapshot(os.path.abspath("."))
    results: dict[str, Any] = {}
    for index, job in enumerate(spec["jobs"]):
        _restore(inputs)
        needs = job.get("needs", [])
        if any(not results.get(name, {}).get("ok") for name in needs):
            results[job["id"]] = {"ok": False, "skipped": True, "limit": None, "exit_code": None,
                                  "signal": None, "stdout": "", "stderr": "skipped: a needed job failed"}
            continue
        results[job["id"]] = run_job(index, job)
    with open(spec.get("result", "result.json"), "w") as fh:
        json.dump({"jobs": results}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
