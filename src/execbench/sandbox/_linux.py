"""Thin ctypes wrappers for the Linux interfaces Python 3.11 does not expose.

unshare(2), mount(2), prctl(2), capset(2), Landlock and a seccomp filter.
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
# SECBIT_NOROOT(+_LOCKED) | SECBIT_NO_SETUID_FIXUP(+_LOCKED) | SECBIT_KEEP_CAPS
SECBITS_FRESH_UID = 0b11111

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
_MOUNT_OPTION_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
                       "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME,
                       "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}


def _check(ret: int) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags))


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

def mount(source: str | None, target: str, fstype: str | None, flags: int) -> None:
    enc = lambda s: None if s is None else os.fsencode(s)  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), None))


def remount_all_readonly(writable: list[str]) -> None:
    """In a fresh mount namespace: make every mount read-only except ``writable`` paths
    (bind-mounted onto themselves first, so they stay writable)."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    writable = [p for p in writable if os.path.exists(p)]
    for path in writable:
        mount(path, path, None, MS_BIND | MS_REC)
    with open("/proc/self/mountinfo", "rb") as f:
        lines = f.read().decode("utf-8", "surrogateescape").splitlines()
    keep = tuple(p.rstrip("/") + "/" for p in writable)
    for line in lines:
        fields = line.split()
        point = fields[4].replace("\\040", " ")
        if (point.rstrip("/") + "/").startswith(keep):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for opt in fields[5].split(","):
            flags |= _MOUNT_OPTION_FLAGS.get(opt, 0)
        try:
            mount(None, point, None, flags)
        except OSError:
            pass  # e.g. a mount hidden under another one


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


def landlock_abi() -> int:
    ret = _syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(ret), 0)


def landlock_restrict(abi: int, writable: list[str]) -> None:
    """Everything stays readable and executable; only ``writable`` (directories or files)
    and a few device files may be modified. With ABI >= 4 TCP bind/connect are denied,
    with ABI >= 6 signals and abstract unix sockets cannot leave the sandbox.
    The caller must have set PR_SET_NO_NEW_PRIVS."""
    fs = _LL_FS_BY_ABI.get(abi, (1 << 16) - 1) & ~_LL_READ  # handle writes only
    net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP if abi >= 4 else 0
    scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("<QQQ", fs, net, scoped)[: 24 if abi >= 6 else 16 if abi >= 4 else 8]
    ruleset = _check(_syscall(_SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)),
                              ctypes.c_uint32(0)))
    try:
        targets = [(p, False) for p in writable] + [(d, True) for d in WRITABLE_DEVICES]
        for path, is_device in targets:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = not is_device and os.path.isdir(path)
                rights = fs & (~(LL_MAKE_CHAR | LL_MAKE_BLOCK) if is_dir else _LL_FILE_WRITE)
                rule = struct.pack("<Qi", rights, fd)
                _check(_syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(1),
                                rule, ctypes.c_uint32(0)))
            finally:
                os.close(fd)
        _check(_syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)))
    finally:
        os.close(ruleset)


# --- seccomp: socket(2) filter -----------------------------------------------------

class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


# (audit arch, socket syscall nr, x32 syscall bit or 0) per machine.
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 0x40000000), "aarch64": (0xC00000B7, 198, 0)}
_SYS_IO_URING_SETUP = 425  # same number on all architectures
SECCOMP_SUPPORTED = platform.machine() in _SECCOMP_ARCH


def _socket_filter(allow_inet: bool) -> ctypes.Array:
    arch, nr_socket, x32 = _SECCOMP_ARCH[platform.machine()]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, kill = 0x7FFF0000, 0x80000000
    eacces, enosys = 0x00050000 | 13, 0x00050000 | 38
    prog = [
        (ld, 0, 0, 4),                                    # 0: A = arch
        (jeq, 1, 0, arch),                                # 1: native arch -> 3
        (ret, 0, 0, kill),                                # 2: foreign ABI: kill
        (ld, 0, 0, 0),                                    # 3: A = syscall nr
        (jge, 6, 0, x32) if x32 else (jeq, 0, 0, 0),      # 4: x32 ABI -> 11
        (jeq, 4, 0, _SYS_IO_URING_SETUP),                 # 5: io_uring -> 10
        (jeq, 0, 5, nr_socket),                           # 6: other syscalls -> 12
        (ld, 0, 0, 16),                                   # 7: A = low word of domain
        (jeq, 2, 0, 1),                                   # 8: AF_UNIX -> 11
        (ret, 0, 0, allow if allow_inet else eacces),     # 9: other families
        (ret, 0, 0, enosys),                              # 10
        (ret, 0, 0, eacces),                              # 11
        (ret, 0, 0, allow),                               # 12
    ]
    return (_SockFilter * len(prog))(*[_SockFilter(*i) for i in prog])


def restrict_sockets(allow_inet: bool) -> None:
    """seccomp: socket(2) fails with EACCES for AF_UNIX (host daemons listen on pathname
    unix sockets, which no network namespace hides) and, unless ``allow_inet``, for every
    family; socketpair(2) still works. io_uring (which can create sockets) is refused.
    Requires PR_SET_NO_NEW_PRIVS."""
    insns = _socket_filter(allow_inet)
    fprog = _SockFprog(len(insns), insns)
    prctl(PR_SET_SECCOMP, 2, ctypes.addressof(fprog))  # SECCOMP_MODE_FILTER
