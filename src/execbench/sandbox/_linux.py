"""Thin ctypes wrappers for the Linux interfaces Python 3.11 does not expose.

unshare(2), mount(2), pivot_root(2), prctl(2), capset(2), Landlock and a seccomp filter.
Everything here is called between fork and exec, so the functions only use
objects prepared at import time (no imports, no locks); errors raise OSError.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

PR_SET_PDEATHSIG = 1
PR_SET_SECUREBITS = 28
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_RAISE = 2
PR_SET_SECCOMP = 22
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2
# SECBIT_NOROOT(+_LOCKED) | SECBIT_NO_SETUID_FIXUP(+_LOCKED) | SECBIT_KEEP_CAPS
SECBITS_FRESH_UID = 0b11111

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24

def _check(ret: int) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags))


def sethostname(name: str) -> None:
    data = name.encode()
    _check(_libc.sethostname(data, ctypes.c_size_t(len(data))))


def prctl(option: int, arg2: int = 0, arg3: int = 0) -> int:
    return _check(_libc.prctl(option, ctypes.c_ulong(arg2), ctypes.c_ulong(arg3), 0, 0))


# --- capabilities ---------------------------------------------------------

def _read_cap_last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except OSError:
        return 40


CAP_LAST_CAP = _read_cap_last_cap()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def capset(mask: int) -> None:
    """Set effective = permitted = inheritable = ``mask`` (a bit set of CAP_*)."""
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    for i in range(2):
        word = (mask >> (32 * i)) & 0xFFFFFFFF
        data[i].effective = data[i].permitted = data[i].inheritable = word
    _check(_libc.capset(ctypes.byref(header), data))


def drop_bounding_set(keep: int = 0) -> None:
    for cap in range(CAP_LAST_CAP + 1):
        if not keep & (1 << cap):
            prctl(PR_CAPBSET_DROP, cap)


# --- mount ------------------------------------------------------------------

def mount(source: str | None, target: str, fstype: str | None, flags: int,
          data: str | None = None) -> None:
    enc = lambda s: None if s is None else os.fsencode(s)  # noqa: E731 - a one-line helper
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)))


_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine(), -1)
_SYS_MOUNT_SETATTR = 442  # same number on all architectures
# the new mount API (Linux >= 5.2), same numbers on all architectures
_SYS_MOVE_MOUNT, _SYS_FSOPEN, _SYS_FSCONFIG, _SYS_FSMOUNT = 429, 430, 431, 432
_FSCONFIG_SET_STRING, _FSCONFIG_CMD_CREATE, _MOVE_MOUNT_F_EMPTY_PATH = 1, 6, 4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC = 1, 2, 4, 8
_AT_FDCWD, _AT_RECURSIVE, _MNT_DETACH = -100, 0x8000, 2


def _set_mount_attrs(path: str, attrs: int) -> None:
    """Set ``attrs`` on the mount at ``path`` and every mount below it (mount_setattr(2));
    a plain remount would leave submounts of a recursive bind writable."""
    attr = struct.pack("<QQQQ", attrs, 0, 0, 0)
    _check(_syscall(ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), os.fsencode(path),
                    ctypes.c_uint(_AT_RECURSIVE), attr, ctypes.c_size_t(len(attr))))


def new_tmpfs(size_bytes: int, inodes: int) -> int:
    """A tmpfs of at most ``size_bytes`` and ``inodes`` files, as a *detached* mount (fsopen,
    fsmount): a file descriptor, in no mount namespace, gone with its last reference. The
    caller reaches it as ``/proc/self/fd/<fd>``; a run's setup attaches it in the run's own
    mount namespace (:func:`enter_new_root`). Nothing appears in the host's mounts."""
    fs = _check(_syscall(ctypes.c_long(_SYS_FSOPEN), b"tmpfs", ctypes.c_uint(1)))  # FSOPEN_CLOEXEC
    try:
        for key, value in (("size", str(size_bytes)), ("nr_inodes", str(inodes)), ("mode", "0755")):
            _check(_syscall(ctypes.c_long(_SYS_FSCONFIG), ctypes.c_int(fs), ctypes.c_uint(_FSCONFIG_SET_STRING),
                            key.encode(), value.encode(), ctypes.c_int(0)))
        _check(_syscall(ctypes.c_long(_SYS_FSCONFIG), ctypes.c_int(fs), ctypes.c_uint(_FSCONFIG_CMD_CREATE),
                        None, None, ctypes.c_int(0)))
        return _check(_syscall(ctypes.c_long(_SYS_FSMOUNT), ctypes.c_int(fs), ctypes.c_uint(1),  # CLOEXEC
                               ctypes.c_uint(MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)))
    finally:
        os.close(fs)


def _make_parents(source: str, target: str) -> None:
    """The missing parents of ``target`` (``source`` below the new root) with the modes of
    ``source``'s parents on the host, plus read and search for all: the mount must be
    reachable, and tools list their parents (pytest collects a checkout's ancestors). Such a
    parent is a directory of the new root's tmpfs: listing it shows only the paths mounted
    below it (which /proc/self/mountinfo names anyway), never the host directory's other
    entries (issue 22, item 12)."""
    base = target[: len(target) - len(source)]
    parts = source.strip("/").split("/")[:-1]
    host = ""
    for part in parts:
        host += "/" + part
        if os.path.lexists(base + host):
            continue
        try:
            mode = (os.stat(host).st_mode & 0o1777) | 0o555
        except OSError:
            mode = 0o755
        os.mkdir(base + host, mode)
        os.chmod(base + host, mode)  # not the umask's


def _bind(source: str, target: str, attrs: int) -> None:
    """Bind ``source`` (file, directory or symlink, as it is on the host) at ``target``."""
    try:
        st = os.lstat(source)
    except OSError:
        return
    _make_parents(source, target)
    if (st.st_mode & 0o170000) == 0o120000:      # symlink (/lib -> usr/lib): recreate it
        if not os.path.lexists(target):
            os.symlink(os.readlink(source), target)
        return
    if (st.st_mode & 0o170000) == 0o040000:
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.lexists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644))
    mount(source, target, None, MS_BIND | MS_REC)
    _set_mount_attrs(target, attrs)


DEVICE_LINKS = (("/dev/fd", "/proc/self/fd"), ("/dev/stdin", "/proc/self/fd/0"),
                ("/dev/stdout", "/proc/self/fd/1"), ("/dev/stderr", "/proc/self/fd/2"))


DISK_MOUNT = "/.disk"   # where a run's disk is attached while its directories are bound
CPU_FILES = ("/sys/devices/system/cpu/online", "/sys/devices/system/cpu/present",
             "/sys/devices/system/cpu/possible")


class Machine:
    """What a run sees of the machine (issue 33, principle 6): ``cpus`` online CPUs in the
    files of /sys/devices/system/cpu glibc reads for sysconf(_SC_NPROCESSORS_*) and
    os.cpu_count(), in /proc/cpuinfo (``cpus`` processor blocks) and in /proc/stat (``cpus``
    per-CPU lines; ``btime`` moved by ``clock_offset``, the seconds the run's wall clock is
    ahead: boot time plus uptime gives the run's date); empty read-only tmpfs mounts at
    ``mounts``."""

    def __init__(self, cpus: int = 0, mounts: tuple[str, ...] = (), clock_offset: int = 0) -> None:
        self.cpus, self.mounts, self.clock_offset = cpus, mounts, clock_offset

    def make(self, base: str) -> None:
        """Create them below the new root ``base`` (before it is made read-only)."""
        if self.cpus > 0:
            text = (f"0-{self.cpus - 1}\n" if self.cpus > 1 else "0\n").encode()
            for path in CPU_FILES:
                os.makedirs(os.path.dirname(base + path), mode=0o755, exist_ok=True)
                _write_new(base + path, text)
        for path in self.mounts:
            if not os.path.lexists(base + path):
                os.mkdir(base + path, 0o755)
                mount("tmpfs", base + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                      "size=4k,nr_inodes=8,mode=0755")

    def cover_proc(self, base: str) -> None:
        """Over the procfs mounted at ``base``/proc: read-only /proc/cpuinfo and /proc/stat
        made from the host's for ``cpus`` CPUs. They are written on a small tmpfs of their
        own, bound, and that tmpfs detached: only the bound files are left (an unlinked file
        on the root's tmpfs would keep it from being remounted read-only)."""
        if self.cpus <= 0:
            return
        scratch = base + "/.machine"
        os.mkdir(scratch, 0o700)
        mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,nr_inodes=8,mode=0700")
        for name in ("cpuinfo", "stat"):
            try:
                with open(f"/proc/{name}", "rb") as f:
                    host = f.read(1 << 20).decode("utf-8", "replace")
            except OSError:
                continue
            text = cpuinfo_for(host, self.cpus) if name == "cpuinfo" else stat_for(host, self.cpus, self.clock_offset)
            _write_new(f"{scratch}/{name}", text.encode())
            mount(f"{scratch}/{name}", f"{base}/proc/{name}", None, MS_BIND)
            _set_mount_attrs(f"{base}/proc/{name}", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
        _check(_libc.umount2(os.fsencode(scratch), ctypes.c_int(_MNT_DETACH)))
        os.rmdir(scratch)


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o444)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def cpuinfo_for(host: str, cpus: int) -> str:
    """/proc/cpuinfo of a machine with ``cpus`` CPUs like the host's (its blocks repeated,
    renumbered; the per-package counts say ``cpus``)."""
    blocks = [b for b in host.split("\n\n") if b.strip()] or ["processor\t: 0"]
    out = []
    for i in range(cpus):
        lines = []
        for line in blocks[i % len(blocks)].split("\n"):
            key = line.split(":", 1)[0].strip()
            if key in ("processor", "core id", "apicid", "initial apicid"):
                line = f"{line.split(':', 1)[0]}: {i}"
            elif key in ("siblings", "cpu cores"):
                line = f"{line.split(':', 1)[0]}: {cpus}"
            lines.append(line)
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n\n"


def stat_for(host: str, cpus: int, clock_offset: int = 0) -> str:
    """/proc/stat with ``cpus`` per-CPU lines (the host's, repeated) and ``btime`` moved by
    ``clock_offset`` seconds."""
    lines = host.splitlines()
    per_cpu = [ln for ln in lines if ln.startswith("cpu") and ln[3:4].isdigit()] or ["cpu0 0 0 0 0 0 0 0 0 0 0"]
    out = []
    for line in lines:
        if line.startswith("cpu") and line[3:4].isdigit():
            continue
        if line.startswith("btime ") and line[6:].strip().isdigit():
            line = f"btime {int(line[6:]) + clock_offset}"
        out.append(line)
        if line.startswith("cpu "):
            out += [f"cpu{i} " + per_cpu[i % len(per_cpu)].split(" ", 1)[1] for i in range(cpus)]
    return "\n".join(out) + "\n"


def _attach_disk(base: str, disk_fd: int, places: list[tuple[str, str]]) -> None:
    """Attach the detached tmpfs ``disk_fd`` (:func:`new_tmpfs`) below the new root and bind
    its directories ``places`` ((directory on the disk, path in the new root)) at their
    paths; the disk's own mount point is then detached and removed."""
    os.mkdir(base + DISK_MOUNT, 0o700)
    _check(_syscall(ctypes.c_long(_SYS_MOVE_MOUNT), ctypes.c_int(disk_fd), b"", ctypes.c_int(_AT_FDCWD),
                    os.fsencode(base + DISK_MOUNT), ctypes.c_uint(_MOVE_MOUNT_F_EMPTY_PATH)))
    for directory, path in places:
        _make_parents(path, base + path)
        os.makedirs(base + path, mode=0o755, exist_ok=True)
        mount(base + DISK_MOUNT + "/" + directory, base + path, None, MS_BIND)
        _set_mount_attrs(base + path, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
    _check(_libc.umount2(os.fsencode(base + DISK_MOUNT), ctypes.c_int(_MNT_DETACH)))
    os.rmdir(base + DISK_MOUNT)


def enter_new_root(base: str, readable: list[str], writable: list[str], disk_fd: int = -1,
                   disk: list[tuple[str, str]] | None = None, machine: Machine | None = None,
                   proc: bool = False) -> None:
    """In a fresh mount namespace: make an empty tmpfs at ``base`` the root directory, with
    ``readable`` bind-mounted read-only (nosuid, nodev), ``writable`` read-write, a few
    device nodes and an empty /proc mount point; nothing else of the host is reachable.
    Paths keep their host names. With ``disk_fd`` (a detached tmpfs, :func:`new_tmpfs`),
    the paths of ``disk`` ((its directory, path) pairs: the work dir, the writable paths,
    /dev/shm) are that tmpfs's directories instead: everything the run can write is on one
    bounded file system (sandbox docs, "Disk"). ``machine``: what the run sees of the
    machine (CPU count files, /proc/cpuinfo and /proc/stat, extra mounts). ``proc``: mount
    the procfs of the caller's PID namespace (call it from inside) at /proc (hidepid=2),
    with the machine's files over it; else call :func:`mount_proc` afterwards."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096")
    ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    for path in readable:
        _bind(path, base + path, ro)
    if disk_fd >= 0:
        _attach_disk(base, disk_fd, disk or [])
    for path in writable:
        if disk_fd < 0:
            _bind(path, base + path, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
    for device in WRITABLE_DEVICES:
        _bind(device, base + device, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)
    for link, target in DEVICE_LINKS:
        if not os.path.lexists(base + link):
            os.symlink(target, base + link)
    for name in ("/proc", "/tmp"):
        os.makedirs(base + name, mode=0o755, exist_ok=True)
    if machine is not None:
        machine.make(base)
    if proc:
        mount("proc", base + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
        if machine is not None:
            machine.cover_proc(base)
    # a /dev/shm of the run's own (POSIX shared memory, multiprocessing's semaphores): on the
    # run's disk when it has one, else a tmpfs of its own
    if disk_fd < 0:
        os.makedirs(base + SHM, mode=0o755, exist_ok=True)
        mount("tmpfs", base + SHM, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={SHM_BYTES},nr_inodes=4096")
    mount(None, base, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(base)
    # pivot_root(".", "."): the old root ends up stacked on the new one; detaching it
    # leaves the new root alone (the runc idiom; no put_old directory needed).
    _check(_syscall(ctypes.c_long(_SYS_PIVOT_ROOT), b".", b"."))
    _check(_libc.umount2(b".", ctypes.c_int(_MNT_DETACH)))
    os.chdir("/")


def set_last_pid(pid: int) -> None:
    """The next pid of the caller's PID namespace is ``pid + 1`` (needs CAP_SYS_ADMIN or
    CAP_CHECKPOINT_RESTORE there); nothing happens where the kernel refuses."""
    try:
        fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY)
    except OSError:
        return
    try:
        os.write(fd, str(pid).encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def mount_proc() -> None:
    """A procfs of the caller's PID namespace; hidepid=2 hides processes of other uids
    (needed without a PID namespace)."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")


# --- Landlock ---------------------------------------------------------------

_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446

LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
LL_MAKE_CHAR, LL_MAKE_BLOCK = 1 << 6, 1 << 11
LL_TRUNCATE, LL_IOCTL_DEV = 1 << 14, 1 << 15
# Rights Landlock knows per ABI version (filesystem bits 0-12, +REFER, +TRUNCATE, ABI 4 adds
# network only, +IOCTL_DEV).
_LL_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
_LL_READ = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR
_LL_FILE_WRITE = LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV
LL_NET_BIND_TCP, LL_NET_CONNECT_TCP = 1, 2
LL_SCOPE_ABSTRACT_UNIX_SOCKET, LL_SCOPE_SIGNAL = 1, 2
# Device files the program may write to even though /dev is read-only.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
SHM, SHM_BYTES = "/dev/shm", 64 << 20


def landlock_abi() -> int:
    ret = _syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(ret), 0)


def landlock_restrict(abi: int, writable: list[str], readable: list[str] | None = None,
                      connect_ports: tuple[int, ...] = (), list_only: tuple[str, ...] | list[str] = ()) -> None:
    """Only ``writable`` (directories or files) and a few device files may be modified.
    With ``readable`` (a list, possibly empty), reads and exec are confined too: allowed
    below ``readable`` and ``writable`` only; without it everything stays readable.
    With ABI >= 4 TCP bind/connect are denied, with ABI >= 6 signals and abstract unix
    sockets cannot leave the sandbox; ``connect_ports`` are the TCP ports connect() may
    reach (ABI >= 4); below ``list_only`` directories may be listed (not read).
    The caller must have set PR_SET_NO_NEW_PRIVS."""
    fs = _LL_FS_BY_ABI.get(abi, (1 << 16) - 1)
    if readable is None:
        fs &= ~_LL_READ  # handle writes only
    net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP if abi >= 4 else 0
    scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("<QQQ", fs, net, scoped)[: 24 if abi >= 6 else 16 if abi >= 4 else 8]
    ruleset = _check(_syscall(_SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)),
                              ctypes.c_uint32(0)))
    file_read = LL_READ_FILE | LL_EXECUTE
    try:
        targets = ([(p, "rw") for p in writable] + [(d, "dev") for d in WRITABLE_DEVICES]
                   + [(p, "ro") for p in readable or ()] + [(p, "ls") for p in list_only])
        for path, kind in targets:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = kind != "dev" and os.path.isdir(path)
                if kind == "ls":
                    rights = fs & LL_READ_DIR
                elif kind == "ro":
                    rights = fs & (_LL_READ if is_dir else file_read)
                elif kind == "dev":
                    rights = fs & (_LL_FILE_WRITE | LL_READ_FILE)
                else:
                    rights = fs & (~(LL_MAKE_CHAR | LL_MAKE_BLOCK) if is_dir
                                   else _LL_FILE_WRITE | file_read)
                rule = struct.pack("<Qi", rights, fd)
                _check(_syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1),
                                rule, ctypes.c_uint32(0)))
            finally:
                os.close(fd)
        for port in connect_ports:
            rule = struct.pack("<QQ", LL_NET_CONNECT_TCP, port)
            _check(_syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(2),
                            rule, ctypes.c_uint32(0)))
        _check(_syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)))
    finally:
        os.close(ruleset)


def landlock_scope_signals() -> None:
    """A nested Landlock domain that only scopes signals and abstract unix sockets (ABI >=
    6): the caller and its descendants can no longer signal (kill, stop) or connect to any
    process outside it, e.g. the job runner that forked it; the runner can still kill them.
    Needs PR_SET_NO_NEW_PRIVS (inherited from the sandbox)."""
    attr = struct.pack("<QQQ", 0, 0, LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL)
    ruleset = _check(_syscall(_SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)),
                              ctypes.c_uint32(0)))
    try:
        _check(_syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)))
    finally:
        os.close(ruleset)


# --- seccomp: socket(2) filter -----------------------------------------------------

class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


# Per machine: audit arch, x32 syscall bit (0: none) and the numbers of the calls filtered.
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 0x40000000), "aarch64": (0xC00000B7, 0)}
_NR = {
    "x86_64": dict(socket=41, unshare=272, clone=56, clone3=435, io_uring_setup=425),
    "aarch64": dict(socket=198, unshare=97, clone=220, clone3=435, io_uring_setup=425),
}
# Refused with EPERM: kernel keyrings (shared with the builder's session), namespaces,
# tracing other processes, kernel/module/clock/mount administration, BPF, perf and
# userfaultfd (the calls Docker's default profile blocks; most also need capabilities
# the program does not have, this is the second wall); POSIX message queues (mq_open: a
# queue would outlive the job that made it, and the runner cannot list them to remove).
_DENIED = {
    "x86_64": dict(keyctl=250, add_key=248, request_key=249, setns=308, ptrace=101,
                   process_vm_readv=310, process_vm_writev=311, kcmp=312, bpf=321,
                   perf_event_open=298, userfaultfd=323, mount=165, umount2=166,
                   pivot_root=155, fsopen=430, fsconfig=431, fsmount=432, move_mount=429,
                   open_tree=428, fspick=433, mount_setattr=442, init_module=175,
                   finit_module=313, delete_module=176, kexec_load=246, kexec_file_load=320,
                   reboot=169, swapon=167, swapoff=168, acct=163, settimeofday=164,
                   clock_settime=227, clock_adjtime=305, adjtimex=159, name_to_handle_at=303,
                   open_by_handle_at=304, quotactl=179, lookup_dcookie=212, iopl=172,
                   ioperm=173, uselib=134, vhangup=153, syslog=103, mq_open=240),
    "aarch64": dict(keyctl=219, add_key=217, request_key=218, setns=268, ptrace=117,
                    process_vm_readv=270, process_vm_writev=271, kcmp=272, bpf=280,
                    perf_event_open=241, userfaultfd=282, mount=40, umount2=39,
                    pivot_root=41, fsopen=430, fsconfig=431, fsmount=432, move_mount=429,
                    open_tree=428, fspick=433, mount_setattr=442, init_module=105,
                    finit_module=273, delete_module=106, kexec_load=104, kexec_file_load=294,
                    reboot=142, swapon=224, swapoff=225, acct=89, settimeofday=170,
                    clock_settime=112, clock_adjtime=266, adjtimex=171, name_to_handle_at=264,
                    open_by_handle_at=265, quotactl=60, lookup_dcookie=18, vhangup=58,
                    syslog=116, mq_open=180),
}
# Every CLONE_NEW* flag (user, mount, pid, net, ipc, uts, cgroup, time).
CLONE_NEW_ANY = 0x10000000 | 0x00020000 | 0x20000000 | 0x40000000 | 0x08000000 | 0x04000000 \
    | 0x02000000 | 0x00000080
AF_INET, AF_INET6 = 2, 10
SECCOMP_SUPPORTED = platform.machine() in _SECCOMP_ARCH


def _assemble(prog: list[tuple]) -> ctypes.Array:
    """BPF with symbolic jump targets: (code, "label"|0, "label"|0, k) or ("label:",)."""
    labels: dict[str, int] = {}
    insns: list[tuple] = []
    for item in prog:
        if isinstance(item[0], str):
            labels[item[0].rstrip(":")] = len(insns)
        else:
            insns.append(item)
    out = []
    for i, (code, jt, jf, k) in enumerate(insns):
        rel = lambda t, i=i: labels[t] - i - 1 if isinstance(t, str) else t  # noqa: E731 - a one-line helper
        out.append(_SockFilter(code, rel(jt), rel(jf), k))
    return (_SockFilter * len(out))(*out)


def _seccomp_filter(allow_inet: bool) -> ctypes.Array:
    machine = platform.machine()
    arch, x32 = _SECCOMP_ARCH[machine]
    nr = _NR[machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, kill = 0x7FFF0000, 0x80000000
    errno = lambda e: 0x00050000 | e  # noqa: E731 - SECCOMP_RET_ERRNO with the error number
    prog: list[tuple] = [
        (ld, 0, 0, 4),                                 # A = arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, kill),                             # foreign ABI (int 0x80, ...): kill
        (ld, 0, 0, 0),                                 # A = syscall nr
        (jge, "eacces", 0, x32) if x32 else (jeq, 0, 0, 0xFFFFFFFF),   # x32 ABI
        (jeq, "enosys", 0, nr["io_uring_setup"]),      # io_uring can create sockets
        (jeq, "enosys", 0, nr["clone3"]),              # flags not inspectable: libc falls back
        (jeq, "socket", 0, nr["socket"]),
        (jeq, "nsflags", 0, nr["unshare"]),
        (jeq, "nsflags", 0, nr["clone"]),
        *[(jeq, "eperm", 0, n) for n in sorted(_DENIED[machine].values())],
        (ret, 0, 0, allow),
        ("socket:",),
        (ld, 0, 0, 16),                                # A = low word of the domain
        *([(jeq, "allow", 0, AF_INET), (jeq, "allow", 0, AF_INET6)] if allow_inet else []),
        ("eacces:",),
        (ret, 0, 0, errno(13)),
        ("nsflags:",),
        (ld, 0, 0, 16),                                # A = low word of the flags
        (jset, "eperm", "allow", CLONE_NEW_ANY),
        ("eperm:",),
        (ret, 0, 0, errno(1)),
        ("enosys:",),
        (ret, 0, 0, errno(38)),
        ("allow:",),
        (ret, 0, 0, allow),
    ]
    return _assemble(prog)


def install_seccomp(allow_inet: bool) -> None:
    """seccomp allow-list of socket families: socket(2) succeeds only for AF_INET/AF_INET6
    and only if ``allow_inet`` (the program has its own network namespace); every other
    family (AF_UNIX to host daemons, AF_VSOCK to a hypervisor, netlink, packet, ...) fails
    with EACCES; socketpair(2) still works. unshare/clone with any CLONE_NEW* flag and the
    calls in _DENIED fail with EPERM; clone3 and io_uring with ENOSYS; foreign syscall
    ABIs kill the process. Requires PR_SET_NO_NEW_PRIVS."""
    insns = _seccomp_filter(allow_inet)
    fprog = _SockFprog(len(insns), insns)
    prctl(PR_SET_SECCOMP, 2, ctypes.addressof(fprog))  # SECCOMP_MODE_FILTER


_ALLOW_ALL = (_SockFilter * 1)(_SockFilter(0x06, 0, 0, 0x7FFF0000))   # ret SECCOMP_RET_ALLOW
_ALLOW_ALL_PROG = _SockFprog(1, _ALLOW_ALL)


def install_allow_filter() -> None:
    """One more seccomp filter that allows everything: it changes nothing but the
    ``Seccomp_filters`` count of /proc/<pid>/status (varied per run, issue 33). Requires
    PR_SET_NO_NEW_PRIVS (or CAP_SYS_ADMIN)."""
    prctl(PR_SET_SECCOMP, 2, ctypes.addressof(_ALLOW_ALL_PROG))
