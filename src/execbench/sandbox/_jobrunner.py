"""The job runner; runs INSIDE the sandbox, never in the parent (see :mod:`.jobs`).

``python -m execbench.sandbox._jobrunner`` reads its instructions from stdin, each a
10-digit length and a JSON document: a preamble (``preload`` modules, the handlers'
modules, what the sandbox has in force), then per job a *control* document (id, group,
limits, collected files: what the runner itself needs) followed by the job's *payload*
(handler arguments, files, stdin) as raw bytes. It imports the modules once, then runs
the jobs one after the other, each in its own child forked from that warm state, and
writes per job a ``{"start": id}`` line when the child is forked and a record when it is
over: a JSON header line, then the job's stdout, stderr tail, value and collected files
as raw bytes whose lengths the header gives.

Isolation between jobs (docs/sandbox.md, "The job runner"):

* **Nothing of another job in a job's memory.** The runner reads one job at a time; the
  payload goes into an anonymous mapping that is unmapped right after the fork and is
  parsed only by the child. A job's output, stderr, value and collected files go from
  anonymous memory files (``memfd``) to the runner's stdout with ``sendfile``: they never
  pass through the runner's memory, so the next fork holds nothing of them.
* **Results the program cannot plant.** stdout, stderr and the value are memory files
  created by the runner for this job only (no name in any directory a program can
  write); the value goes to fd 3, serialised by a C encoder bound before the program's
  first line (patching ``json`` changes nothing). What is received is parsed bounded by
  the parent, which validates every field.
* **No signal reaches the runner.** With Landlock ABI >= 6 each child restricts itself to
  a signal scope of its own before anything else: it cannot signal (stop, kill) the
  runner, which stays able to kill it.
* **No state survives a job.** Everything a job left running is killed before the next
  one (``kill(-1)``); System V IPC objects are removed (POSIX message queues are refused
  by the sandbox's seccomp filter); a new group starts in an empty work dir and an empty
  ``/dev/shm``; a job with ``fresh`` starts in its group's directory emptied and restored
  to the files its group kept (``keep``: e.g. a compiled binary, held in memory files).
* **A warm state out of the collector's reach.** After the warm-up the runner freezes its
  objects (``gc.freeze``): a collection in a job or a traced call never walks them (see
  docs/sandbox.md for what it cost before).
* **A failure between jobs blames nobody.** When cleanup fails the runner writes
  ``{"runner_error": ...}`` and exits; the parent runs the jobs it did not reach again in
  a new sandbox. Only the job that was running when the runner died fails.
"""

from __future__ import annotations

import base64
import ctypes
import gc
import importlib
import json
import mmap
import os
import resource
import select
import signal
import stat
import sys
import time
import traceback
from typing import Any, Callable, NotRequired, Sequence, TypedDict

from execbench.sandbox import _linux, wire
from execbench.sandbox._cleanup import remove_tree
from execbench.sandbox.classify import STDERR_TAIL   # the tail the parent classifies

GROUP_DIR = "job"      # the directory of the current group
SHM_DIR = "/dev/shm"
VALUE_FD = wire.VALUE_FD
LENGTH_DIGITS = 10


class Control(TypedDict):
    """A job's control document, as ``sandbox/jobs.py`` (``Job``) writes it."""

    id: str
    handler: str  # "exec" or "module:function"
    group: str
    cwd: str
    needs: list[str]
    collect: list[str]
    cpu: float
    wall: float
    memory_mb: int
    max_output: int
    output_is_limit: bool
    max_value: int
    max_collect: int
    fresh: bool
    keep: list[str]
    payload: int  # the payload document's size


class JobRecord(TypedDict):
    """A job's record line (its blobs follow it; ``sandbox/jobs.py`` checks every field)."""

    id: str
    exit_code: int | None
    signal: int | None
    timed_out: bool
    wall: float
    cpu: float
    maxrss_kb: int
    stdout: int
    stdout_truncated: bool
    stderr: int
    value: int | None
    value_error: str | None
    disk: bool  # the sandbox's disk holds more than its limit after this job
    files: NotRequired[dict[str, int]]


_BALLAST: list[Any] = []
_VARIANT = 0   # this sandbox's (preamble "variant"): what its jobs see differs from the previous sandbox's


def _limit(job: Control) -> None:
    extra = _VARIANT % 4   # a few seconds and MiB more than asked: getrlimit differs per sandbox
    cpu = max(1, int(float(job["cpu"]) + 0.999)) + extra
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = (int(job["memory_mb"]) + 16 * extra) * 1024 * 1024
    if memory > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            memory = min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (memory, hard))


class ExecArgs(TypedDict):
    argv: list[str]
    env: NotRequired[dict[str, str]]


def exec_job(args: ExecArgs) -> None:
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


def _handler(name: str) -> Callable[[Any], Any]:  # a handler's args: its own JSON shape
    if name == "exec":
        return exec_job
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)


# --- reading instructions: exactly what was asked for, nothing ahead -------------------

def _read_exact(count: int, into: Any = None) -> Any:
    """``count`` bytes of stdin (unbuffered: the next job's bytes stay in the pipe), into
    the writable buffer ``into`` when given."""
    buffer = into if into is not None else bytearray(count)
    view, got = memoryview(buffer), 0
    while got < count:
        n = os.readv(0, [view[got:count]])
        if n == 0:
            raise EOFError("instructions cut short")
        got += n
    return buffer


def _payload(size: int) -> mmap.mmap:
    """The next ``size`` bytes of stdin in an anonymous mapping of their own (unmapped by
    the caller: a job's payload never lands in the runner's heap, where a later fork would
    find it)."""
    payload = mmap.mmap(-1, max(size, 1), flags=mmap.MAP_PRIVATE)
    _read_exact(size, payload)
    return payload


def _document() -> Any:
    """The next length-prefixed JSON document, or None at the end of the instructions."""
    first = os.read(0, 1)
    if not first:
        return None
    size = int(bytes(first) + bytes(_read_exact(LENGTH_DIGITS - 1)))
    return json.loads(bytes(_read_exact(size)))


# --- the work dir --------------------------------------------------------------------

def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        remove_tree(path)
    else:
        try:
            os.unlink(path)
        except OSError:
            remove_tree(path)


def _empty(path: str, keep: tuple[str, ...] = ()) -> None:
    """Remove everything in the directory ``path`` (made readable first: a job may have
    changed its mode) but the names in ``keep``."""
    if os.stat(path).st_uid == os.getuid():
        os.chmod(path, 0o755)
    with os.scandir(path) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        if name not in keep:
            _remove(os.path.join(path, name))


def _emptied(path: str) -> str:
    """``path`` as an empty directory of ours (kept when it is a real directory)."""
    if os.path.isdir(path) and not os.path.islink(path):
        _empty(path)
    else:
        if os.path.lexists(path):
            _remove(path)
        os.makedirs(path)
    return path


_LIBC = ctypes.CDLL(None, use_errno=True)


def _remove_ipc() -> None:
    """Remove every System V IPC object (shared memory, semaphores, queues) of the
    sandbox's IPC namespace a job made: none survives into the next job."""
    libc, uid = _LIBC, os.getuid()
    for kind, remove in (("shm", lambda i: libc.shmctl(i, 0, None)),
                         ("sem", lambda i: libc.semctl(i, 0, 0)),
                         ("msg", lambda i: libc.msgctl(i, 0, None))):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                header, *lines = fh.read().splitlines()
        except (OSError, ValueError):
            continue
        columns = header.split()   # key, then the id (shmid, semid, msqid), ..., uid
        for line in lines:
            values = line.split()
            fields = dict(zip(columns, values))
            if fields.get("uid") == str(uid) and len(values) > 1 and values[1].isdigit():
                remove(int(values[1]))   # IPC_RMID


class _Group:
    """The current group's directory and the files its jobs kept (memory files)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.name: str | None = None
        self.kept: dict[str, tuple[int, int]] = {}  # relative path -> (memory file fd, mode)
        self.directory = os.path.join(base, GROUP_DIR)

    def start(self, name: str) -> None:
        """A new group: an empty work dir and /dev/shm, nothing kept."""
        self.name = name
        self.drop()
        _empty(self.base, keep=(GROUP_DIR,))
        _emptied(self.directory)
        if os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK):
            _empty(SHM_DIR)

    def drop(self) -> None:
        for fd, _ in self.kept.values():
            os.close(fd)
        self.kept = {}

    def refresh(self) -> None:
        """The group's directory as it was when its kept files were taken, nothing else."""
        _emptied(self.directory)
        for name, (fd, mode) in self.kept.items():
            path = os.path.join(self.directory, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
            try:
                _copy(fd, out, os.fstat(fd).st_size)
            finally:
                os.close(out)

    def keep(self, cwd: str, names: list[str]) -> None:
        """Take the regular files ``names`` (below ``cwd``) into memory files."""
        for name in names:
            try:
                src = os.open(os.path.join(cwd, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                info = os.fstat(src)
                if not os.path.isfile(os.path.join(cwd, name)) or info.st_size > 256 << 20:
                    continue
                fd = os.memfd_create("kept", os.MFD_CLOEXEC)
                _copy(src, fd, info.st_size)
                rel = os.path.relpath(os.path.join(cwd, name), self.directory)
                if rel in self.kept:
                    os.close(self.kept[rel][0])
                self.kept[rel] = (fd, info.st_mode & 0o755)
            finally:
                os.close(src)


def _copy(src: int, dst: int, count: int, offset: int = 0) -> None:
    """``count`` bytes of ``src`` from ``offset`` to ``dst``, in the kernel (sendfile)."""
    while count > 0:
        sent = os.sendfile(dst, src, offset, count)
        if sent == 0:
            break
        offset += sent
        count -= sent


def _write(directory: str, name: str, data: bytes, mode: int = 0o644) -> None:
    path = os.path.join(directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path) and not os.path.isdir(path):
        os.unlink(path)   # written by an earlier job of the group: the job's own copy wins
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


# --- one job -------------------------------------------------------------------------

def _child(control: Control, payload: Any, fds: tuple[int, int, int], directory: str,
           scope_signals: bool, clock: int = 0) -> int:
    """The forked child: returns its exit status (0 = the handler returned)."""
    encode, send = wire.private()   # bound before the program's first line
    if scope_signals:
        _linux.landlock_scope_signals()
    job = json.loads(bytes(payload))
    payload.close()
    for name, data in job.get("files", {}).items():
        _write(directory, name, base64.b64decode(data), 0o755 if name in job.get("executable", ()) else 0o644)
    cwd = os.path.join(directory, control.get("cwd", "."))
    os.makedirs(cwd, exist_ok=True)
    for name in control.get("collect", []):   # planted by an earlier job of the group?
        path = os.path.join(cwd, name)
        if os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
    stdin = base64.b64decode(job.get("stdin", ""))
    if stdin:
        fd = os.memfd_create("stdin")
        os.write(fd, stdin)
        os.lseek(fd, 0, os.SEEK_SET)
    else:
        fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    for target, fd in zip((1, 2, VALUE_FD), fds):
        os.dup2(fd, target)
    os.set_inheritable(VALUE_FD, False)   # an exec'd program does not get it
    os.closerange(VALUE_FD + 1, 1 << 16)   # the runner's pipes and memory files
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    os.chdir(cwd)
    os.environ["HOME"] = os.environ["TMPDIR"] = directory
    _set_job_clock(clock)
    handler, args = _handler(control["handler"]), job.get("args", {})
    del job, stdin
    _limit(control)
    _refuse_status_reads()
    result = handler(args)
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a job that cannot write its output failed, whatever the error
        return 1
    if result is not None:
        send(encode(result))
    return 0


class _DiskMeter:
    """The sandbox's disk (the work dir's tmpfs, /dev/shm included; sandbox/_disk.py):
    what it held when the runner started, and its limit (None: not bounded here)."""

    def __init__(self, limit: list[int] | None) -> None:
        self.limit = limit
        self.baseline = self.used() if limit else (0, 0)

    @staticmethod
    def used() -> tuple[int, int]:
        st = os.statvfs(".")
        return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree

    def over(self) -> bool:
        if not self.limit:
            return False
        used, files = self.used()
        return used - self.baseline[0] > self.limit[0] or files - self.baseline[1] > self.limit[1]


_DISK = _DiskMeter(None)

STATUS_REFUSED = ("execbench: the program read {path}: its NoNewPrivs and Seccomp lines are "
                  "the sandbox's, not a user's machine's (issue 33): refused\n")


def _status_path(path: str) -> bool:
    """Whether ``path`` (absolute or relative to the working directory) names a process's
    or thread's status file: /proc/self/status, /proc/<pid>/status, .../task/<tid>/status."""
    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
    parts = full.split("/")
    return (len(parts) in (4, 6) and parts[1] == "proc" and parts[-1] == "status" and parts[2].isdigit()
            and (len(parts) == 4 or (parts[3] == "task" and parts[4].isdigit())))


def _refuse_status_reads() -> None:
    """In the forked job, before the handler runs the program: a program that opens its
    status file (``NoNewPrivs: 1``, ``Seccomp: 2`` there are the sandbox's in every run, issue
    33, principle 6) ends at once, its reason on stderr: rejected from what it did, not from
    its text. With the sandbox's preload library (sandbox/_clock.py) the check is the
    library's, at libc's open calls, on what the kernel says the opened descriptor is (every
    name: links, relative paths, ``dir_fd``; no cost per Python audit event). Without it, an
    audit hook (Python calls per audited event, by name only: a link or ``dir_fd`` is not
    seen). An exec'd program is not covered (its image loads the library anew)."""
    refuse = _CLOCK.get("refuse")
    if refuse is not None:
        refuse(1)
        return

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not args or not isinstance(args[0], (str, bytes)):
            return
        path = os.fsdecode(args[0])
        if "status" in path and _status_path(path):
            os.write(2, STATUS_REFUSED.format(path=path[:200]).encode())
            os._exit(1)
    sys.addaudithook(hook)


# The wall clock of each job (issue 33, principle 6; sandbox/_clock.py): the sandbox's preload
# library, when it has one, moved per job by its setter; drawn as _clock.offset draws.
_CLOCK_OFFSET_ENV, _CPUS_ENV, _CLOCK_MAX_DAYS = "EXECBENCH_CLOCK_OFFSET", "EXECBENCH_CPUS", 3650
_CLOCK: dict[str, Any] = {}
_JOBS_FORKED = [0]


def _find_clock() -> None:
    """The preload library's path and setter, if this sandbox has the library."""
    path = os.environ.get("LD_PRELOAD", "")
    if not path or _CLOCK_OFFSET_ENV not in os.environ:
        return
    try:
        setter = _LIBC.execbench_clock_set
    except AttributeError:
        return
    setter.argtypes, setter.restype = [ctypes.c_longlong], None
    cpus = getattr(_LIBC, "execbench_cpus_set", None)
    if cpus is not None:
        cpus.argtypes, cpus.restype = [ctypes.c_long], None
    refuse = getattr(_LIBC, "execbench_status_refuse", None)
    if refuse is not None:
        refuse.argtypes, refuse.restype = [ctypes.c_int], None
    _CLOCK.update(path=path, set=setter, cpus=cpus, refuse=refuse)


def _job_clock() -> int:
    """The next job's offset in seconds (in the runner, before the fork): 0 for one job in
    three (consecutive jobs: never two in a row), else 1 to 3,650 days and up to a day more."""
    n = _JOBS_FORKED[0]
    _JOBS_FORKED[0] += 1
    if not _CLOCK or (_VARIANT + n) % 3 == 0:
        return 0
    draw = int.from_bytes(os.urandom(4), "little")
    return (1 + draw % _CLOCK_MAX_DAYS) * 86400 + (draw >> 12) % 86400


def _set_job_clock(offset: int) -> None:
    """In the forked job: its clock and CPU count (1 to 8, differing from the previous
    job's), and the variables what it executes inherits (none with the offset 0: their
    presence varies from job to job too; such a job sees the sandbox's CPU count)."""
    if not _CLOCK:
        return
    cpus = 1 + (_VARIANT + _JOBS_FORKED[0]) % 8
    _CLOCK["set"](offset)
    if _CLOCK["cpus"] is not None:
        _CLOCK["cpus"](cpus)
    if offset:
        os.environ["LD_PRELOAD"], os.environ[_CLOCK_OFFSET_ENV] = _CLOCK["path"], str(offset)
        os.environ[_CPUS_ENV] = str(cpus)
    else:
        for name in ("LD_PRELOAD", _CLOCK_OFFSET_ENV, _CPUS_ENV):
            os.environ.pop(name, None)


def run_job(control: Control, group: _Group, scope_signals: bool) -> bool:
    """Fork the job's child, wait for it, write its record (see the module docs)."""
    size = int(control["payload"])
    payload = _payload(size)
    fds = (os.memfd_create("stdout", os.MFD_CLOEXEC), os.memfd_create("stderr", os.MFD_CLOEXEC),
           os.memfd_create("value", os.MFD_CLOEXEC))
    started = time.monotonic()
    _emit({"start": control["id"]})
    clock = _job_clock()
    pid = os.fork()
    if pid == 0:
        child_code = 1
        try:
            child_code = _child(control, _Sized(payload, size), fds, group.directory, scope_signals, clock)
        except SystemExit as exc:   # a handler may end the job like a program does
            child_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - the job's failure is its result, whatever it is
            try:
                traceback.print_exc()
            except BaseException:  # noqa: BLE001 - nothing left to report it with
                pass
            child_code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:  # noqa: BLE001 - nothing left to report it with
                    pass
            os._exit(child_code if 0 <= child_code < 256 else 1)
    payload.close()   # unmapped: the next job's fork holds nothing of this one's payload
    status, usage, timed_out = wait_or_kill(pid, started + float(control["wall"]))
    _kill_leftovers()
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    out, err, value = fds
    out_size, err_size, value_size = (os.fstat(fd).st_size for fd in fds)
    max_output, max_value = int(control["max_output"]), int(control["max_value"])
    cwd = os.path.join(group.directory, control.get("cwd", "."))
    record: JobRecord = {
        "id": control["id"], "exit_code": code, "signal": signum, "timed_out": timed_out,
        "wall": round(time.monotonic() - started, 4), "cpu": round(usage.ru_utime + usage.ru_stime, 4),
        "maxrss_kb": usage.ru_maxrss, "stdout": min(out_size, max_output), "stdout_truncated": out_size > max_output,
        "stderr": min(err_size, STDERR_TAIL), "value": value_size if 0 < value_size <= max_value else None,
        "value_error": f"value larger than {max_value} bytes" if value_size > max_value else None,
        "disk": _DISK.over(),
    }
    blobs = [(out, 0, record["stdout"]), (err, err_size - record["stderr"], record["stderr"])]
    if record["value"] is not None:
        blobs.append((value, 0, value_size))
    files: dict[str, int] = {}
    opened: list[int] = []
    for name in control.get("collect", []):
        try:
            fd = os.open(os.path.join(cwd, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        opened.append(fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            continue
        files[name] = min(os.fstat(fd).st_size, int(control.get("max_collect", 1 << 16)))
        blobs.append((fd, 0, files[name]))
    record["files"] = files
    try:
        _emit(record, blobs)
    finally:
        for fd in (*fds, *opened):
            os.close(fd)
    ok = not timed_out and code == 0 and not record["disk"] and not (record["stdout_truncated"] and control.get("output_is_limit", True))
    if ok and control.get("keep"):
        group.keep(cwd, list(control["keep"]))
    return ok


class _Sized:
    """The payload mapping as the child sees it: its first ``size`` bytes."""

    def __init__(self, mapping: mmap.mmap, size: int) -> None:
        self.mapping, self.size = mapping, size

    def __bytes__(self) -> bytes:
        return self.mapping[:self.size]

    def close(self) -> None:
        self.mapping.close()


def _emit(record: JobRecord | dict[str, str | bool], blobs: Sequence[tuple[int, int, int]] = ()) -> None:
    """One line: a JSON header; then its blobs (fd, offset, length) copied in the kernel."""
    out = sys.stdout.buffer
    out.write(json.dumps(record).encode() + b"\n")
    out.flush()
    for fd, offset, count in blobs:
        _copy(fd, 1, count, offset)


_EXCLUSIVE = False   # every process of the sandbox but init is ours: kill(-1) is safe


def _kill_leftovers() -> None:
    """Kill every process a job left behind: as the only process of the sandbox's PID
    namespace (but its init), or of its fresh uid, kill(-1) reaches all of them."""
    if _EXCLUSIVE:
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


# Modules a plain interpreter may or may not have imported: a sandbox imports the first
# (variant % 8) of them, so the names and number of sys.modules differ from the previous one's.
EXTRA_MODULES = ("colorsys", "keyword", "numbers", "shlex", "fnmatch", "netrc", "graphlib", "quopri",
                 "stringprep", "sched", "reprlib", "glob")


def _vary(variant: int) -> list[Any]:
    """What a job can see of the runner differs from the previous sandbox's (issue 33,
    principle 6): the modules imported (sys.modules), and the objects frozen with the warm
    state (gc.get_freeze_count(), gc.get_objects()); returns the extra objects to freeze."""
    for module in EXTRA_MODULES[:variant % 8]:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a module missing here is no variation, nothing more
            pass
    return [[] for _ in range(256 * (variant % 16) + int.from_bytes(os.urandom(1), "little"))]


def main() -> int:
    global _EXCLUSIVE, _DISK, _VARIANT
    preamble = _document()
    _VARIANT = int(preamble.get("variant") or 0)
    _EXCLUSIVE = bool(preamble.get("exclusive"))
    _DISK = _DiskMeter(preamble.get("disk"))
    _find_clock()
    for name in preamble.get("hide_env", []):
        os.environ.pop(name, None)
    for module in [*preamble.get("preload", []), *preamble.get("modules", [])]:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - a job that needs it reports the import error itself
            pass
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0: jobs cannot reach into us
    # The warm state every job is forked from: out of the collector's reach, so no job (and
    # no traced call forked from one) pays for a full collection over the runner's objects
    # or copies their pages by touching their GC headers (docs/sandbox.md, "The job runner").
    _BALLAST[:] = _vary(_VARIANT)   # kept alive: freed objects would leave the frozen generation
    gc.collect()
    gc.freeze()
    scope_signals = bool(preamble.get("scope_signals"))
    group = _Group(os.path.abspath("."))
    done: dict[str, bool] = {}
    while (control := _document()) is not None:
        name = control.get("group", control["id"])
        try:
            if name != group.name or not os.path.isdir(group.directory):
                group.start(name)
            elif control.get("fresh"):
                group.refresh()
            _remove_ipc()
        except Exception as exc:  # noqa: BLE001 - between jobs: nobody's fault, the parent starts anew
            _emit({"runner_error": f"{type(exc).__name__}: {exc}"[:500]})
            return 3
        if any(not done.get(need, False) for need in control.get("needs", [])):
            done[control["id"]] = False
            _payload(int(control["payload"])).close()   # never in our heap
            _emit({"id": control["id"], "skipped": True})
            continue
        done[control["id"]] = run_job(control, group, scope_signals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
