"""The job runner; runs INSIDE the sandbox, never in the parent (see :mod:`.jobs`).

``python -m execbench.sandbox._jobrunner`` reads one JSON document from stdin
(``{"preload": [modules], "jobs": [job, ...]}``), imports the preload modules and every
job's handler module once, then runs the jobs one after the other, each in its own child
forked from that warm state, and writes one record per job to stdout as it finishes: a
JSON header line, then the job's stdout, value and collected files as raw bytes whose
lengths the header gives.

Isolation between jobs:

* Jobs of one *group* share a directory (a compile job leaves the binary its run job
  executes); a new group starts in an empty work dir: everything the previous group left
  there (files, directories of any shape, ``$TMPDIR``/``$HOME`` content) is removed.
* Everything a job left running is killed before the next job starts (``kill(-1)``: the
  runner is pid 2 of the sandbox's PID namespace, or the only process of its fresh uid).
* The runner is not dumpable: a job's processes (same uid) cannot open ``/proc/<runner>/
  fd``, ``mem`` or ``environ``; the protocol fds are closed in the child before the job
  runs, and the jobs of later groups live only in the runner's memory until they start.
* A job's record is read bounded, and the parent validates every field of every line.

A job cannot corrupt another group's result, but it can kill the runner (it has the
runner's uid): the parent then runs the jobs that got no record again in a new sandbox
(:func:`execbench.sandbox.jobs.run_jobs`).
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import resource
import select
import signal
import sys
import time
import traceback
from typing import Any, Callable

from execbench.sandbox._cleanup import remove_tree
from execbench.sandbox.classify import classify

STDERR_TAIL = 2000
RECORDS = ".records"   # the runner's per-job value files, outside every job's directory
GROUP_DIR = "job"      # the directory of the current group


def _limit(job: dict[str, Any]) -> None:
    cpu = max(1, int(float(job["cpu"]) + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = int(job["memory_mb"]) * 1024 * 1024
    if memory > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            memory = min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (memory, hard))


def _redirect(stdin: str, out: str, err: str) -> None:
    fd = os.open(stdin, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    for target, path in ((1, out), (2, err)):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, target)
        os.close(fd)
    os.closerange(3, 1 << 16)   # the runner's stdin/stdout pipes duplicated anywhere else
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)


def exec_job(args: dict[str, Any]) -> None:
    """The built-in handler ``exec``: ``execve`` ``args["argv"]`` (looked up on PATH) with
    the environment plus ``args["env"]`` (``{cwd}`` in a value is the job's directory)."""
    env = dict(os.environ)
    env.update({k: str(v).replace("{cwd}", os.getcwd()) for k, v in args.get("env", {}).items()})
    import shutil  # in the forked child only: the runner's start-up need not pay for it

    argv = [str(a) for a in args["argv"]]
    os.execve(shutil.which(argv[0], path=env.get("PATH", "/usr/bin:/bin")) or argv[0], argv, env)


def wait_or_kill(pid: int, deadline: float) -> tuple[int, Any, bool]:
    """Wait for child ``pid`` until ``deadline`` (``time.monotonic()`` clock); SIGKILL it
    then. Returns ``(wait status, resource usage, timed_out)``."""
    pidfd = os.pidfd_open(pid)
    timed_out = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd], [], [], max(0.0, remaining))
            if ready:
                break
            if remaining <= 0:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
        _, status, usage = os.wait4(pid, 0)
    finally:
        os.close(pidfd)
    return status, usage, timed_out


def _handler(name: str) -> Callable[[dict[str, Any]], Any]:
    if name == "exec":
        return exec_job
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


def _read_limited(path: str, limit: int) -> tuple[bytes, bool]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b"", False
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    return data[:limit], len(data) > limit


def _tail(path: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - STDERR_TAIL))
        return fh.read()


def _kill_leftovers() -> None:
    """Kill every process a job left behind: as pid 2 of the sandbox's PID namespace, or as
    the sandbox's fresh uid, kill(-1) reaches all of them and nothing else."""
    if os.getpid() == 2 or os.environ.get("EXECBENCH_SANDBOX_EXCLUSIVE_UID") == "1":
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:   # reap them (they may have been reparented to us)
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        remove_tree(path)
    else:
        try:
            os.unlink(path)
        except OSError:
            remove_tree(path)


def _emptied(path: str) -> None:
    """``path`` as an empty directory of ours: kept (emptied) when it is a real directory,
    made anew otherwise (directory creation and removal cost ~2 ms each on ext4)."""
    if os.path.isdir(path) and not os.path.islink(path):
        try:
            os.chmod(path, 0o755)
            with os.scandir(path) as entries:
                names = [entry.name for entry in entries]
        except OSError:
            names = None
        if names is not None:
            for name in names:
                _remove(os.path.join(path, name))
            return
    if os.path.lexists(path):
        _remove(path)
    os.makedirs(path)


def _empty_workdir(base: str) -> str:
    """Remove everything in the sandbox's work dir but the runner's records directory and
    the group directory, both emptied (a new group starts clean); returns the latter."""
    with os.scandir(base) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        if name not in (RECORDS, GROUP_DIR):
            _remove(os.path.join(base, name))
    _emptied(os.path.join(base, RECORDS))
    _emptied(os.path.join(base, GROUP_DIR))
    return os.path.join(base, GROUP_DIR)


def _write(directory: str, name: str, data: bytes, mode: int = 0o644) -> str:
    path = os.path.join(directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path) and not os.path.isdir(path):
        os.unlink(path)   # written by an earlier job of the group: the job's own copy wins
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def _child(job: dict[str, Any], handler: Callable, stdin: str, out: str, err: str, value: str) -> int:
    """The forked child: returns its exit status (0 = the handler returned)."""
    _redirect(stdin, out, err)
    _limit(job)
    result = handler(job["args"])
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a job that cannot write its output failed, whatever the error
        return 1
    if result is not None:
        fd = os.open(value, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(result, fh)
    return 0


def run_job(index: int, job: dict[str, Any], directory: str, records: str,
            handler: Callable) -> tuple[dict[str, Any], list[bytes]]:
    cwd = os.path.join(directory, job.get("cwd", "."))
    os.makedirs(cwd, exist_ok=True)
    out, err, value, stdin = (os.path.join(records, f"{index}.{s}") for s in ("out", "err", "json", "in"))
    for path in (out, err, value, stdin):
        if os.path.lexists(path):
            os.unlink(path)
    data = base64.b64decode(job.get("stdin", ""))
    if data:
        _write(records, f"{index}.in", data, 0o644)
    else:
        stdin = os.devnull   # most jobs read no input: no file to make and remove
    for name, data in job.get("files", {}).items():
        _write(directory, name, base64.b64decode(data), 0o755 if name in job.get("executable", ()) else 0o644)
    for name in job.get("collect", []):   # planted by an earlier job of the group?
        path = os.path.join(cwd, name)
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
    started = time.monotonic()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(cwd)
            os.environ["HOME"] = os.environ["TMPDIR"] = directory
            code = _child(job, handler, stdin, out, err, value)
        except SystemExit as exc:   # a handler may end the job like a program does
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - the job's failure is its result, whatever it is
            try:
                traceback.print_exc()
            except BaseException:  # noqa: BLE001 - nothing left to report it with
                pass
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001 - nothing left to report it with
                    pass
            os._exit(code if 0 <= code < 256 else 1)
    status, usage, timed_out = wait_or_kill(pid, started + float(job["wall"]))
    _kill_leftovers()
    stdout, truncated = _read_limited(out, int(job["max_output"]))
    stderr = _tail(err)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    cpu = usage.ru_utime + usage.ru_stime
    limit = "wall_time" if timed_out else classify(code, signum, cpu, float(job["cpu"]), stderr)
    if limit is None and truncated and job.get("output_is_limit", True):
        limit = "output"
    raw_value, too_big = _read_limited(value, int(job["max_value"]))
    record: dict[str, Any] = {
        "id": job["id"], "exit_code": code, "signal": signum, "limit": limit,
        "wall": round(time.monotonic() - started, 4), "cpu": round(cpu, 4), "maxrss_kb": usage.ru_maxrss,
        "stdout": len(stdout), "stdout_truncated": truncated, "stderr": stderr.decode("utf-8", "replace"),
        "value": len(raw_value) if raw_value and not too_big else None,
        "value_error": f"value larger than {job['max_value']} bytes" if too_big else None,
    }
    blobs = [stdout, *([raw_value] if record["value"] is not None else [])]
    files = {}
    for name in job.get("collect", []):
        data, _ = _read_limited(os.path.join(cwd, name), int(job.get("max_collect", 1 << 16)))
        if data or os.path.isfile(os.path.join(cwd, name)):
            files[name] = len(data)
            blobs.append(data)
    record["files"] = files
    for path in (out, err, value, stdin):
        if path != os.devnull and os.path.lexists(path):
            os.unlink(path)
    return record, blobs


def _emit(record: dict[str, Any], blobs: list[bytes] = ()) -> None:
    """One job's record: a JSON header line, then its blobs (stdout, the value, the collected
    files, in that order) raw, their lengths in the header (no base64, no JSON escaping)."""
    out = sys.stdout.buffer
    out.write(json.dumps(record).encode() + b"\n")
    for blob in blobs:
        out.write(blob)
    out.flush()


def main() -> int:
    spec = json.loads(sys.stdin.buffer.read())
    for module in [*spec.get("preload", []),
                   *{job["handler"].partition(":")[0] for job in spec["jobs"] if job["handler"] != "exec"}]:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a job that needs it reports the import error itself
            pass
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: jobs cannot reach into us
    base = os.path.abspath(".")
    records = os.path.join(base, RECORDS)
    done: dict[str, bool] = {}
    group: str | None = None
    directory = ""
    for index, job in enumerate(spec["jobs"]):
        if job.get("group", job["id"]) != group or not os.path.isdir(directory):
            group = job.get("group", job["id"])
            directory = _empty_workdir(base)
        if any(not done.get(name, False) for name in job.get("needs", [])):
            done[job["id"]] = False
            _emit({"id": job["id"], "skipped": True})
            continue
        try:
            handler = _handler(job["handler"])
        except Exception as exc:  # noqa: BLE001 - reported as this job's failure
            done[job["id"]] = False
            _emit({"id": job["id"], "handler_error": f"{type(exc).__name__}: {exc}"[:500]})
            continue
        if not os.path.isdir(records):
            os.makedirs(records)
        record, blobs = run_job(index, job, directory, records, handler)
        done[job["id"]] = record["limit"] is None and record["exit_code"] == 0
        _emit(record, blobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
