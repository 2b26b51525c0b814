"""The child side of run(): what runs between fork and exec (namespaces, the new root,
Landlock, seccomp, the fresh uid, rlimits), and what each run sees of its host and machine
(host name, time zone, user, CPUs, rlimits, mounts: differing from the previous run's)."""

from __future__ import annotations

import functools
import itertools
import math
import os
import resource
import select
import signal
import stat
import struct
from typing import Callable

from . import _disk, _linux
from ._limits import Limits
from ._plan import _Plan

_MAXFD = os.sysconf("SC_OPEN_MAX")

def _reset_signals() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(sig) != signal.SIG_DFL:
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass


def _exit_with(status: int) -> None:
    """Terminate the way a wait status says (signal or exit code)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)   # handlers are already SIG_DFL (_reset_signals)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255)


def _enter_pid_namespace(cgroup_fd: int, first_pid: int) -> None:
    """Called after unshare(CLONE_NEWPID). Forks twice; returns only in the grandchild
    (the program, pid ``first_pid + 1`` where the kernel lets us choose, else 2). The
    caller process stays outside the namespace and forwards
    the program's status; the child is pid 1 (init): it reaps orphans and, by exiting,
    makes the kernel kill everything left in the namespace."""
    r, w = os.pipe()
    if os.fork():                      # outer process: forward the status, never return
        try:
            os.close(w)
            os.closerange(0, r)
            os.closerange(r + 1, _MAXFD)   # incl. subprocess's error pipe: Popen returns at exec
            _, status = os.wait()
            data = os.read(r, 4)
            _exit_with(struct.unpack("i", data)[0] if len(data) == 4 else status)
        finally:
            os._exit(255)
    try:                               # pid 1
        os.close(r)
        _linux.prctl(_linux.PR_SET_PDEATHSIG, signal.SIGKILL)
        poller = select.poll()
        poller.register(w, select.POLLOUT)
        if any(ev & select.POLLERR for _, ev in poller.poll(0)):
            os._exit(137)              # outer process already gone
        if cgroup_fd >= 0:
            os.write(cgroup_fd, b"0")  # pid 1 and all its descendants join the group
        _linux.set_last_pid(first_pid)  # the program's pid looks like any other, not 2
        program = os.fork()
    except BaseException as exc:  # noqa: BLE001 - the init process reports any failure and exits
        os.write(2, f"execbench sandbox: init failed: {exc!r}\n".encode())
        os._exit(255)
    if program == 0:
        return
    try:
        os.closerange(0, w)
        os.closerange(w + 1, _MAXFD)
        while True:
            pid, status = os.wait()
            if pid == program:
                os.write(w, struct.pack("i", status))
                break
    finally:
        os._exit(0)


def _child_setup(plan: _Plan, limits: Limits, workdir: str, writable: list[str],
                 readable: list[str], rootdir: str, cgroup_fd: int, uid: int | None, parent: int,
                 disk_fd: int, error_fd: int, ports: tuple[int, ...] = (),
                 hostname: str = "", *, variant: int = 0, clock_offset: int = 0) -> Callable[[], None]:
    # The limits a program can read (getrlimit) differ from the previous run's: a few
    # seconds, files and MiB more (issue 33, principle 6; _run_identity).
    extra = variant % 4
    cpu = max(1, math.ceil(limits.cpu_seconds)) + extra
    files, memory = limits.open_files + 8 * extra, limits.memory_bytes + (extra << 24)
    cpus = _affinity(variant)
    rlimits = [(resource.RLIMIT_CPU, cpu, cpu + 1),
               (resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes),
               (resource.RLIMIT_NOFILE, files, files)]
    # With the cgroup, pids.max (max_tasks + 1 for our init) must trip first: it is the one
    # that records the event. Without it RLIMIT_NPROC is the bound (fresh uid / non-root).
    nproc = limits.max_tasks + (2 if plan.cgroup else 0)
    rlimits.append((resource.RLIMIT_NPROC, nproc, nproc))
    rlimits.append((resource.RLIMIT_AS, memory, memory))  # last
    flags = ((_linux.CLONE_NEWNET if plan.netns else 0) | (_linux.CLONE_NEWPID if plan.pidns else 0)
             | (_linux.CLONE_NEWIPC if plan.ipcns else 0)
             | (_linux.CLONE_NEWNS if plan.newroot else 0)
             | (_linux.CLONE_NEWUTS if plan.utsns else 0))
    keep = (1 << _linux.CAP_DAC_READ_SEARCH) if plan.read_search else 0
    # Landlock read rules: in the new root also /proc (the program's own), and listing
    # any directory (everything there is ours: pytest walks up to its rootdir). Without it
    # /proc is the host's: only its non-process entries and the program's own
    # /proc/<pid> ("self" when the rules are made); for a root builder keeping
    # CAP_DAC_READ_SEARCH only the world-readable files of /etc.
    landlock_read = [*readable, "/proc", "/sys"] if plan.newroot else list(readable)  # /sys: _machine's
    # a private /dev/shm (a tmpfs of the new root) is writable too
    landlock_writable = [*writable, _linux.SHM] if plan.newroot else writable
    first_pid = 300 + int.from_bytes(os.urandom(2), "little") % 20000
    if plan.read_search:
        landlock_read = [p for p in landlock_read if p != "/etc"] + list(_etc_public())

    def setup() -> None:
        try:
            confine()
        except BaseException as exc:   # Popen only says "Exception occurred in preexec_fn"
            os.write(error_fd, repr(exc).encode()[:2000])
            raise

    def confine() -> None:  # in the Popen child, after setsid() and chdir(workdir)
        _linux.prctl(_linux.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(137)
        _reset_signals()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if flags:
            _linux.unshare(flags)
        if plan.utsns:
            _linux.sethostname(hostname)
        if plan.pidns:
            _enter_pid_namespace(cgroup_fd, first_pid)
        elif cgroup_fd >= 0:
            os.write(cgroup_fd, b"0")
        # --- from here on: the process that will exec the program
        if plan.newroot:
            # Only the readable paths (read-only), the writable ones, a few devices and a
            # procfs of the program's own PID namespace exist from here on.
            _linux.enter_new_root(rootdir, readable, writable, disk_fd, _disk_places(writable),
                                  machine=_machine(variant, clock_offset), proc=True)
            if disk_fd >= 0:
                os.close(disk_fd)
            os.chdir(workdir)
        _linux.prctl(_linux.PR_SET_NO_NEW_PRIVS, 1)
        if plan.landlock_abi:
            proc = [] if plan.newroot else [f"/proc/{e}" for e in os.listdir("/proc")
                                            if not e.isdigit() and e != "thread-self"]
            _linux.landlock_restrict(plan.landlock_abi, landlock_writable, landlock_read + proc, ports,
                                     list_only=["/"] if plan.newroot else [])
        if plan.seccomp:
            _linux.install_seccomp(allow_inet=plan.netns or bool(ports))
            for _ in range(variant % 3):   # the Seccomp_filters count differs from the previous run's
                _linux.install_allow_filter()
        if uid is not None:
            # A fresh uid owns nothing outside the work dir, so it cannot chmod/chown/utime
            # host files (Landlock does not cover metadata), read what is not world-readable
            # (/etc/shadow, 0600 files), or write read_write_paths it was not given
            # permission to; RLIMIT_NPROC binds it. No capabilities (without a new root:
            # CAP_DAC_READ_SEARCH, ambient, with Landlock read rules deciding reads).
            _linux.drop_bounding_set(keep=keep)
            # Keep capabilities across setuid, and let access(2) honour them too (g++ checks
            # TMPDIR with access()); "root" gets nothing special any more (locked).
            _linux.prctl(_linux.PR_SET_SECUREBITS, _linux.SECBITS_FRESH_UID)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            _linux.capset(keep)
            if keep:
                _linux.prctl(_linux.PR_CAP_AMBIENT, _linux.PR_CAP_AMBIENT_RAISE,
                             _linux.CAP_DAC_READ_SEARCH)
        if cpus:
            os.sched_setaffinity(0, cpus)
        for which, soft, hard in rlimits:
            resource.setrlimit(which, (soft, hard))
    return setup


@functools.lru_cache(maxsize=1)
def _etc_public() -> tuple[str, ...]:
    """Regular files below /etc that any user may read (o+r, every parent o+x)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk("/etc"):
        if not os.stat(dirpath).st_mode & 0o001:
            dirnames[:] = []
            continue
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
                out.append(os.path.realpath(path))
    return tuple(dict.fromkeys(out))[:4000]



# --- what each run sees of its host and machine -------------------------------

# Each run sees a different host: its own host name (UTS namespace), time zone, uid and work
# dir path, so a program whose output depends on them fails the determinism runs.
_TIME_ZONES = tuple(f"Etc/GMT{o:+d}".replace("+0", "") for o in range(-14, 13))
# Ordinary user names: a program sees one, a different one each run (USER, LOGNAME).
_USERS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
          "oscar", "peggy", "trent", "victor", "walter")
_run_counter = iter(range(1 << 62))


def _run_identity() -> tuple[str, str, str, int]:
    """(host name, TZ, user name, variant) for the next run: the host name is unique, the
    time zone and the user name differ from the previous run's, and so does the variant
    (what :func:`_machine` and the rlimits make of it)."""
    n = next(_run_counter)
    return (f"{_USERS[(os.getpid() + 3 * n) % len(_USERS)]}-{os.urandom(3).hex()}",
            _TIME_ZONES[(os.getpid() + n) % len(_TIME_ZONES)], _USERS[(os.getpid() + n) % len(_USERS)],
            os.getpid() + n)


# Mount points a machine may or may not have: a run has the first (variant % 4) of them,
# each an empty read-only tmpfs (its mounts and its root's entries differ from the previous run's).
EXTRA_MOUNTS = ("/mnt", "/media", "/srv")
MAX_VISIBLE_CPUS = 8


_restricted_runs = itertools.count()


def _affinity(variant: int) -> list[int]:
    """The CPUs a run may use (sched_getaffinity): all the builder's in one run, all but
    one in the next, so that their number differs from the previous run's wherever the
    builder has two or more; [] = leave them as they are. The CPU left out rotates over
    this process's restricted runs (not drawn at random): two restricted sandboxes the
    builder's threads run side by side leave out different CPUs, so on two cores they do
    not share one while the other idles (issue 33's speed figures)."""
    allowed = sorted(os.sched_getaffinity(0))
    if variant % 2 == 0 or len(allowed) < 2:
        return []
    allowed.pop((os.getpid() + next(_restricted_runs)) % len(allowed))
    return allowed


def _machine(variant: int, clock_offset: int = 0) -> _linux.Machine:
    """What a run sees of the machine besides its host identity (issue 33, principle 6):
    the number of online CPUs (1 to 8: os.cpu_count() and sysconf from the files of
    /sys/devices/system/cpu, /proc/cpuinfo, /proc/stat) and extra mounts, both differing
    from the previous run's; /proc/stat's boot time moved with the run's clock (``_clock``)."""
    return _linux.Machine(cpus=1 + variant % MAX_VISIBLE_CPUS, mounts=EXTRA_MOUNTS[:variant % 4],
                          clock_offset=clock_offset)


def _disk_places(writable: list[str]) -> list[tuple[str, str]]:
    """The disk's directories and where the run sees them: the work dir, the writable
    paths, /dev/shm (see ``_disk``)."""
    return [(_disk.WORK, writable[0]), *((f"rw{i}", path) for i, path in enumerate(writable[1:], 1)),
            (_disk.SHM, _linux.SHM)]
