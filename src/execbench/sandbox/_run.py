"""run(), run_python(), capabilities(): see the package docstring for the design."""

from __future__ import annotations

import dataclasses
import functools
import os
import resource
import select
import shutil
import signal
import site
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Callable, Mapping, Sequence

from . import _cgroup, _clock, _disk, _interpreters
from ._limits import Limits
from ._child import _child_setup, _disk_places, _run_identity
from ._cleanup import remove_tree
from . import _plan as _planning
from ._plan import FORCE_FALLBACK_ENV, _Plan, _plan, _probe, _remove_stale_workdirs
from .classify import classify, describe_signal

from execbench.errors import InternalError

__all__ = ["FORCE_FALLBACK_ENV", "EXCLUSIVE_UID_ENV", "Limits", "SandboxResult", "SandboxError", "run",
           "run_python", "capabilities", "_plan", "_probe", "_remove_stale_workdirs"]

EXCLUSIVE_UID_ENV = "EXECBENCH_SANDBOX_EXCLUSIVE_UID"

# Read-only in every run: the system's programs, libraries, headers and configuration
# (secrets in /etc are not world-readable, and the program has no DAC capability).
SYSTEM_READ_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Output beyond the cap is read and dropped; past cap + this much the run is killed ("output").
OUTPUT_KILL_SLACK = 64 * 1024**2
_CHUNK = 1 << 16

_DEFAULT_LIMITS = Limits()


class SandboxError(InternalError, RuntimeError):
    """The sandbox could not be set up (not: the program failed)."""


@dataclass
class SandboxResult:
    exit_code: int | None        # None if killed by a signal
    signal: int | None
    limit: str | None            # "wall_time", "cpu_time", "memory", "file_size", "disk", "tasks", "output"
    duration: float              # wall seconds
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    isolation: dict[str, str]
    files: dict[str, bytes]
    limits: Limits = field(default_factory=Limits, repr=False, compare=False)
    detail: str = ""             # what the limit was (e.g. the disk's: a tree too deep to copy back)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.limit is None

    def reason(self) -> str:
        """One line: "exit 0", "killed: wall_time limit (30 s)", "exit 1: <last stderr line>"."""
        how = f"exit {self.exit_code}" if self.signal is None else "killed"
        if self.limit:
            detail = f": {self.detail}" if self.detail else ""
            return f"{how}: {self.limit} limit ({_limit_value(self.limit, self.limits)}){detail}"
        if self.signal is not None:
            return describe_signal(self.signal)
        if self.exit_code == 0:
            return how
        lines = [ln for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return f"{how}: {lines[-1].strip()[:200]}" if lines else how


def _limit_value(limit: str, limits: Limits) -> str:
    def size(n: int) -> str:
        for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
            if n >= scale:
                return f"{n / scale:g} {unit}"
        return f"{n} bytes"
    return {"wall_time": f"{limits.wall_seconds:g} s", "cpu_time": f"{limits.cpu_seconds:g} s",
            "memory": size(limits.memory_bytes), "file_size": size(limits.file_size_bytes),
            "tasks": str(limits.max_tasks), "output": size(limits.output_bytes),
            "disk": f"{size(limits.disk_bytes)}, {limits.disk_inodes} files"}.get(limit, "?")



# --- the parent side ---------------------------------------------------------

def _rel_parts(name: str) -> tuple[str, ...]:
    path = PurePosixPath(name)
    if not name or "\0" in name or path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"sandbox paths must be relative, without '..': {name!r}")
    return path.parts


_uid_counter = iter(range(1 << 30))


def _fresh_uid() -> int:
    return 1_500_000_000 + (os.getpid() % 100_000) * 1000 + next(_uid_counter) % 1000


def _kill_uid(uid: int) -> None:
    """SIGKILL every live process whose real uid is ``uid`` (fallback without cgroup/pidns)."""
    for _ in range(1000):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status", "rb") as f:
                    fields = dict(line.split(b":", 1) for line in f if b":" in line)
                zombie = fields[b"State"].strip().startswith(b"Z")
                if int(fields[b"Uid"].split()[0]) == uid and not zombie:
                    os.kill(int(entry), signal.SIGKILL)
                    found = True
            except (OSError, KeyError, ValueError):
                pass
        if not found:
            return
        time.sleep(0.001)


def _install_prefix(executable: str) -> list[str]:
    """What an executable needs besides the system paths (see ._interpreters: a venv's
    pyvenv.cfg and links are never followed to choose mounts)."""
    return _interpreters.install_prefix(executable)


def _readable(argv: Sequence[str], env: Mapping[str, str], extra: Sequence[str]) -> list[str]:
    """Everything a run may read besides its work dir: the system paths, this interpreter's
    installation, the program's (argv[0]) installation, absolute PYTHONPATH entries and the
    caller's ``read_only_paths``. Real paths, nested ones dropped, existing only."""
    paths = list(SYSTEM_READ_PATHS)
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        paths.append(os.path.realpath(prefix))
    program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    if program:
        paths += _install_prefix(program)
    paths += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if os.path.isabs(p)]
    paths += [os.path.abspath(p) for p in extra]
    found: list[str] = []
    for path in paths:
        for variant in dict.fromkeys([os.path.normpath(path), os.path.realpath(path)]):
            if os.path.lexists(variant):
                found.append(variant)
    found = sorted(set(found), key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for path in found:
        if not any(path.startswith(k.rstrip("/") + "/") for k in kept if not os.path.islink(k)):
            kept.append(path)
    return kept



def _child_env(env: Mapping[str, str] | None, workdir: str, tz: str = "UTC", user: str = "user") -> dict[str, str]:
    path = os.pathsep.join(dict.fromkeys([os.path.dirname(sys.executable), "/usr/local/bin",
                                          "/usr/bin", "/bin"]))
    return {"PATH": path, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "TZ": tz,
            "USER": user, "LOGNAME": user, **(env or {})}


class _Streams:
    """Pumps stdin / stdout / stderr of the child without blocking."""

    def __init__(self, proc: subprocess.Popen, stdin: bytes, cap: int):
        self.cap = cap
        self.poller = select.poll()
        assert proc.stdin and proc.stdout and proc.stderr
        self.out = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
        self.total = dict.fromkeys(self.out, 0)
        self.stdin_fd, self.stdin, self.stdin_pos = proc.stdin.fileno(), stdin, 0
        self.stdin_file = proc.stdin
        self.open = set(self.out) | {self.stdin_fd}
        for fd in self.open:
            os.set_blocking(fd, False)
            self.poller.register(fd, select.POLLOUT if fd == self.stdin_fd else select.POLLIN)
        if not stdin:
            self.close_stdin()

    def close_stdin(self) -> None:
        self.poller.unregister(self.stdin_fd)
        self.open.discard(self.stdin_fd)
        try:
            self.stdin_file.close()
        except OSError:
            pass

    def handle(self, fd: int) -> None:
        if fd == self.stdin_fd:
            try:
                self.stdin_pos += os.write(fd, self.stdin[self.stdin_pos:self.stdin_pos + _CHUNK])
            except BlockingIOError:
                return
            except OSError:          # EPIPE: the program does not read its input
                self.stdin_pos = len(self.stdin)
            if self.stdin_pos >= len(self.stdin):
                self.close_stdin()
            return
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        if not data:
            self.poller.unregister(fd)
            self.open.discard(fd)
            return
        buf = self.out[fd]
        if len(buf) < self.cap:
            buf += data[: self.cap - len(buf)]
        self.total[fd] += len(data)

    def flooded(self) -> bool:
        return any(n > self.cap + OUTPUT_KILL_SLACK for n in self.total.values())


def preload_library() -> str | None:
    """The path of the library every run without network preloads (``_clock``), readable in
    those runs, or None without one: for code under test that loads it itself (the repo
    recorder's audit filter)."""
    return _clock.library(run)


def capabilities() -> dict[str, str]:
    """What run() will use here (probed once per process; honours the force-fallback
    variable), plus the Landlock ABI version found and whether runs' wall clocks are
    shifted (``_clock``: the preload library is compiled on first use)."""
    return {**_planning.capabilities(), "clock": _clock.status(run)}


def run(argv: list[str], *, stdin: bytes | str = b"", limits: Limits = _DEFAULT_LIMITS,
        files: Mapping[str, bytes | str] = {}, collect: Sequence[str] = (),
        env: Mapping[str, str] | None = None, read_write_paths: Sequence[str] = (),
        read_only_paths: Sequence[str] = (), cwd_name: str = "work",
        network_ports: Sequence[int] = ()) -> SandboxResult:
    """Run ``argv`` confined, in a fresh work dir holding ``files``; see the package docs.
    Besides the work dir the program may read only the system paths, the interpreter's
    and its own installation, absolute ``PYTHONPATH`` entries of ``env`` and
    ``read_only_paths``; it may write only the work dir and ``read_write_paths`` (as far
    as their permissions let its uid). ``network_ports``: the run shares the host's
    network and may open TCP connections to these ports only (Landlock; for installing
    packages from an index over HTTPS); it needs Landlock ABI >= 4."""
    if not argv:
        raise ValueError("empty argv")
    plan = _plan()
    ports = tuple(int(p) for p in network_ports)
    if ports:
        if plan.landlock_abi < 4:
            raise SandboxError("network_ports needs Landlock ABI >= 4 (TCP port rules)")
        plan = dataclasses.replace(plan, netns=False)
    stdin_bytes = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
    for name in [*files, *collect, cwd_name]:
        _rel_parts(name)
    tmp = tempfile.mkdtemp(prefix=f"execbench-{os.getpid()}-")
    group: _cgroup.PidsCgroup | None = None
    proc: subprocess.Popen | None = None
    status: int | None = None
    disk: _disk.Disk | None = None
    disk_failure: tuple[str, str] | None = None
    uid = _fresh_uid() if plan.fresh_uid else None
    try:
        workdir = os.path.join(tmp, cwd_name)
        writable = [workdir, *(os.path.abspath(p) for p in read_write_paths)]
        if plan.newroot:  # the work dir is the disk's; its host path stays an empty mount point
            writable = [workdir, *(p for p in writable[1:] if os.path.isdir(p))]  # directories only
            os.makedirs(workdir)
            disk = _open_disk(limits, writable, uid)
        _write_workdir(disk.path(_disk.WORK) if disk else workdir, files, uid, exists=disk is not None)
        hostname, tz, user, variant = _run_identity()
        clock_offset, clock_env, clock_paths, clock = _clock.for_run(variant, bool(ports), run)
        child_env = {**_child_env(env, workdir, tz, user), **clock_env}
        if uid is not None:  # every process of this uid belongs to this run (kill(-1) is safe)
            child_env[EXCLUSIVE_UID_ENV] = "1"
        readable = _readable(argv, child_env, [*read_only_paths, *clock_paths])
        rootdir = tempfile.mkdtemp(dir=tmp, prefix=".root-") if plan.newroot else ""
        if plan.cgroup:
            group = _cgroup.PidsCgroup(limits.max_tasks + (1 if plan.pidns else 0))
        setup = functools.partial(_child_setup, plan, limits, workdir, writable, readable, rootdir,
                                  group.procs_fd if group else -1, uid, os.getpid(), disk.fd if disk else -1,
                                  variant=variant, clock_offset=clock_offset)
        proc, start = _start(argv, workdir, child_env, setup, ports, hostname)
        streams = _Streams(proc, stdin_bytes, limits.output_bytes)
        status, rusage, end, killed_for = _supervise(proc, streams, start + limits.wall_seconds, start,
                                                     lambda reaped: _kill(proc, group, uid, plan,
                                                                          main_reaped=reaped))
        tasks_refused = group is not None and group.hit_max()
        collected = _collect(disk.path(_disk.WORK) if disk else workdir, collect, limits.file_size_bytes)
        if disk is not None:
            disk_failure = _close_disk(disk, writable[1:])
    finally:
        if proc is not None:
            if status is None:  # exception in the parent: do not leave anything running
                _kill(proc, group, uid, plan)
                proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                try:
                    stream.close()  # type: ignore[union-attr]  # the pipes are None when not requested; close() is guarded
                except OSError:
                    pass
        try:
            if disk is not None:
                disk.close()   # the kernel frees the run's files
            if group is not None:
                group.close()
            if uid is not None and not plan.pidns and not plan.cgroup:
                _kill_uid(uid)
        finally:
            remove_tree(tmp)

    out, err = streams.out.values()
    out_total, err_total = streams.total.values()
    signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    limit = killed_for or (disk_failure[0] if disk_failure else None) or _classify(
        code, signum, rusage, bytes(err), tasks_refused, limits)
    return SandboxResult(exit_code=code, signal=signum, limit=limit, duration=end - start,
                         stdout=bytes(out), stderr=bytes(err),
                         stdout_truncated=out_total > len(out),
                         stderr_truncated=err_total > len(err),
                         isolation={**plan.isolation(), "clock": clock, **({"network": "tcp-ports:" + ",".join(
                             map(str, ports))} if ports else {})},
                         files=collected, limits=limits,
                         detail=disk_failure[1] if disk_failure and limit == "disk" else "")


def _open_disk(limits: Limits, writable: list[str], uid: int | None) -> _disk.Disk:
    """The run's disk (``_disk``): the work dir owned by the run's uid, /dev/shm, and a
    copy of each writable path (with its host mode)."""
    disk = _disk.Disk(limits.disk_bytes, limits.disk_inodes)
    try:
        for name, path in _disk_places(writable):
            if name == _disk.WORK:
                disk.make(name, 0o755, uid)
            elif name == _disk.SHM:
                disk.make(name, 0o1777)
            else:
                disk.make(name, stat.S_IMODE(os.stat(path).st_mode))
                _disk.copy_into(path, disk.path(name))
    except BaseException:
        disk.close()
        raise
    return disk


def _close_disk(disk: _disk.Disk, read_write_paths: list[str]) -> tuple[str, str] | None:
    """After the run: ("disk", detail) if it wrote more than its limit (nothing is copied
    back then), else the writable paths get the run's copies back; a copy that cannot be
    made (a tree too deep, ...) is the limit "disk" as well (the host path is left empty)."""
    used, files = disk.usage()
    if disk.over():
        return "disk", f"wrote {used} bytes, {files} files"
    for i, path in enumerate(read_write_paths, 1):
        try:
            _disk.copy_back(disk.path(f"rw{i}"), path)
        except OSError as exc:
            for name in os.listdir(path):
                remove_tree(os.path.join(path, name))
            return "disk", f"not copied back: {exc}"[:300]
    return None


def _write_workdir(workdir: str, files: Mapping[str, bytes | str], uid: int | None,
                   exists: bool = False) -> None:
    """The run's fresh work dir holding ``files`` (binaries and scripts executable), owned by
    the run's uid when it has one: the program may modify (chmod, rename, ...) its own files."""
    if not exists:
        os.makedirs(workdir)
    for name, content in files.items():
        target = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        data = content.encode() if isinstance(content, str) else bytes(content)
        with open(target, "wb") as f:
            f.write(data)
        if data.startswith((b"\x7fELF", b"#!")):   # binaries / scripts: executable
            os.chmod(target, 0o755)
    if uid is not None:
        for dirpath, dirnames, filenames in os.walk(workdir):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.lchown(name, uid, uid)


def _start(argv: list[str], workdir: str, child_env: dict[str, str],
           setup: Callable[..., Callable[[], None]], ports: tuple[int, ...], hostname: str
           ) -> tuple[subprocess.Popen, float]:
    """The confined child, started, and its start time; ``setup(error_w, ports, hostname)``
    makes its pre-exec step, which reports a failure on ``error_w`` (a :class:`SandboxError` here)."""
    error_r, error_w = os.pipe()
    try:
        preexec = setup(error_w, ports, hostname)
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=workdir,
                                env=child_env, preexec_fn=preexec,
                                start_new_session=True, close_fds=True)
        return proc, start
    except subprocess.SubprocessError as exc:
        os.set_blocking(error_r, False)  # children of concurrent runs may hold error_w
        try:
            detail = os.read(error_r, 4096).decode(errors="replace")
        except BlockingIOError:
            detail = "?"
        raise SandboxError(f"sandbox setup failed: {detail}") from exc
    finally:
        os.close(error_r)
        os.close(error_w)


def _supervise(proc: subprocess.Popen, streams: _Streams, deadline: float, start: float,
               kill: Callable[[bool], None]) -> tuple[int, Any, float, str | None]:
    """Feed and drain the child until it is over and its pipes are closed; kill it at the
    ``deadline`` or when it floods its output. Returns (wait status, rusage, end time, what it
    was killed for). ``kill(main_reaped)`` kills the run's processes."""
    status: int | None = None
    pidfd = os.pidfd_open(proc.pid)
    streams.poller.register(pidfd, select.POLLIN)
    killed_for: str | None = None
    rusage, end = None, start
    try:
        while status is None or streams.open:
            now = time.monotonic()
            if status is None and killed_for is None and now >= deadline:
                killed_for = "wall_time"
            if status is None and killed_for is not None:
                kill(False)
            if status is not None and now > end + 2.0:
                break                  # something outside our reach holds a pipe
            wait = (deadline if status is None and killed_for is None else now + 0.05) - now
            for fd, _ in streams.poller.poll(max(0.0, wait) * 1000):
                if fd != pidfd:
                    streams.handle(fd)
                    continue
                _, status, rusage = os.wait4(proc.pid, 0)
                end = time.monotonic()
                proc.returncode = os.waitstatus_to_exitcode(status)
                streams.poller.unregister(pidfd)
                # The program is over: kill what it left running (with a PID namespace
                # the kernel has already done so).
                kill(True)
            if killed_for is None and streams.flooded():
                killed_for = "output"
    finally:
        os.close(pidfd)
    assert status is not None  # the loop ends only once the child is reaped
    return status, rusage, end, killed_for


def _kill(proc: subprocess.Popen, group: _cgroup.PidsCgroup | None, uid: int | None,
          plan: _Plan, main_reaped: bool = False) -> None:
    if group is not None:
        group.kill()
    if not main_reaped:   # not Popen.kill(): its poll() would reap the child behind our back
        os.kill(proc.pid, signal.SIGKILL)  # with a PID namespace: init dies by PDEATHSIG
    if uid is not None and not plan.pidns and not plan.cgroup:
        _kill_uid(uid)


def _classify(code: int | None, signum: int | None, rusage: resource.struct_rusage | None,
              stderr: bytes, tasks_refused: bool, limits: Limits) -> str | None:
    cpu = rusage.ru_utime + rusage.ru_stime if rusage else 0.0
    return classify(code, signum, cpu, limits.cpu_seconds, stderr, tasks_refused)


def _collect(workdir: str, names: Sequence[str], cap: int) -> dict[str, bytes]:
    """Read back regular files below workdir without following symlinks."""
    found: dict[str, bytes] = {}
    for name in names:
        parts = _rel_parts(name)
        try:
            dirfd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                for part in parts[:-1]:
                    sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                  dir_fd=dirfd)
                    os.close(dirfd)
                    dirfd = sub
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                             dir_fd=dirfd)
            finally:
                os.close(dirfd)
            with os.fdopen(fd, "rb") as f:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    found[name] = f.read(cap)
        except OSError:
            continue
    return found


def _python_path() -> str | None:
    """The directory execbench is imported from, if the child's site-packages lack it."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sites = {os.path.realpath(p) for p in site.getsitepackages()}
    return None if os.path.realpath(root) in sites else root


def run_python(args: list[str], **kwargs) -> SandboxResult:
    """run([sys.executable, "-s", *args], ...). Not -I/-E: the environment is already
    scrubbed, and PYTHONPATH / PYTHONHASHSEED passed in ``env`` must work; execbench's own
    directory is appended to PYTHONPATH when it is not in site-packages."""
    env = dict(kwargs.pop("env", None) or {})
    extra = _python_path()
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), extra) if p)
    return run([sys.executable, "-s", *args], env=env, **kwargs)
