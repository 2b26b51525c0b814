"""What run() will use here: the isolation mechanisms probed once per process, the forced
fallbacks (``EXECBENCH_SANDBOX_FORCE_FALLBACK``) and the plan they make (see the package docs)."""

from __future__ import annotations

import functools
import os
import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Callable

from . import _cgroup, _linux
from ._cleanup import remove_tree

FORCE_FALLBACK_ENV = "EXECBENCH_SANDBOX_FORCE_FALLBACK"
_MECHANISMS = ("netns", "pidns", "ipcns", "cgroup", "landlock", "mntns")
# What "all" turns off: everything with a fallback. The mount namespace (new root) is the
# fallback for Landlock and vice versa, so at most one of them can be forced off.
_FORCE_ALL = ("netns", "pidns", "ipcns", "cgroup", "landlock")

@dataclass(frozen=True)
class _Plan:
    root: bool
    netns: bool
    pidns: bool
    ipcns: bool
    cgroup: bool
    landlock_abi: int       # 0: not used
    newroot: bool           # mount namespace whose root holds only the readable/writable paths
    seccomp: bool           # socket family allow-list, namespaces, keyrings, ... (_linux)
    fresh_uid: bool         # root: run as a fresh uid (RLIMIT_NPROC binds), no capabilities
    utsns: bool = False     # own UTS namespace: a host name of its own per run

    @property
    def read_search(self) -> bool:
        """Root without a new root keeps CAP_DAC_READ_SEARCH (the interpreter may sit
        below a 0700 /root); Landlock read rules then decide what is readable."""
        return self.fresh_uid and not self.newroot

    def isolation(self) -> dict[str, str]:
        tasks = ("cgroup-pids" if self.cgroup else "uid-nproc" if self.fresh_uid else
                 "rlimit-nproc")
        fs = "+".join(n for n, on in (("newroot", self.newroot), ("landlock", self.landlock_abi))
                      if on) or "none"
        return {
            "network": "netns" if self.netns else "socket-blocked" if self.seccomp else "none",
            "unix_sockets": "blocked" if self.seccomp else "allowed",
            "filesystem": fs,
            "reads": fs,
            "proc": ("own-pidns" if self.newroot and self.pidns else
                     "hidepid" if self.newroot else "host"),
            "syscalls": "seccomp" if self.seccomp else "none",
            "tasks": tasks + ("+pidns" if self.pidns else ""),
            "privileges": ("fresh-uid+cap_dac_read_search" if self.read_search else
                           "fresh-uid" if self.fresh_uid else "unprivileged"),
            "ipc": "ipcns" if self.ipcns else "shared",
            "host": "varied" if self.utsns else "varied-tz-only",
            "disk": "tmpfs" if self.newroot else "file-size-only",
        }


_probe_lock = threading.Lock()
_probed: dict[str, object] = {}


def _fork_check(fn: Callable[[], object]) -> bool:
    """Run fn in a forked child; True if it returned without raising."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            fn()
            code = 0
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1] == 0


def _probe_seccomp() -> None:
    _linux.prctl(_linux.PR_SET_NO_NEW_PRIVS, 1)
    _linux.install_seccomp(allow_inet=False)
    socket.socketpair()
    for family in (socket.AF_UNIX, socket.AF_INET):
        try:
            socket.socket(family)
        except PermissionError:
            continue
        raise RuntimeError("seccomp filter did not block socket()")


def _probe_newroot() -> bool:
    base = tempfile.mkdtemp(prefix=f"execbench-{os.getpid()}-probe-")
    try:
        def enter_new_root() -> None:
            _linux.unshare(_linux.CLONE_NEWNS)
            _linux.enter_new_root(base, ["/usr"], [])

        return _fork_check(enter_new_root)
    finally:
        os.rmdir(base)


def _remove_stale_workdirs(min_age: float = 600.0) -> None:
    """Work dirs of processes that were killed before their finally: could run. Never
    raises (remove_tree copes with deep, unreadable or immutable trees)."""
    base = tempfile.gettempdir()
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        owner = name.split("-")[1] if name.startswith("execbench-") and name.count("-") >= 2 else ""
        path = os.path.join(base, name)
        try:
            if (owner.isdigit() and not os.path.exists(f"/proc/{owner}")
                    and time.time() - os.lstat(path).st_mtime > min_age):
                remove_tree(path)
        except OSError:
            pass


def _probe() -> dict[str, object]:
    with _probe_lock:
        if not _probed:
            _remove_stale_workdirs()
            root = os.geteuid() == 0
            ns = {name: _fork_check(functools.partial(_linux.unshare, flag)) for name, flag in
                  (("netns", _linux.CLONE_NEWNET), ("pidns", _linux.CLONE_NEWPID),
                   ("ipcns", _linux.CLONE_NEWIPC), ("mntns", _linux.CLONE_NEWNS),
                   ("utsns", _linux.CLONE_NEWUTS))}
            ns["mntns"] = root and ns["mntns"] and _probe_newroot()
            _probed.update(ns, root=root, cgroup=root and _cgroup.probe(),
                           landlock_abi=_linux.landlock_abi(),
                           seccomp=_linux.SECCOMP_SUPPORTED and _fork_check(_probe_seccomp))
        return _probed


def _forced() -> frozenset[str]:
    value = os.environ.get(FORCE_FALLBACK_ENV, "").strip().lower()
    if value in ("", "0", "no", "false"):
        return frozenset()
    if value in ("1", "all", "yes", "true"):
        return frozenset(_FORCE_ALL)
    names = frozenset(v.strip() for v in value.split(",") if v.strip())
    if names - set(_MECHANISMS):
        raise ValueError(f"{FORCE_FALLBACK_ENV}: unknown {sorted(names - set(_MECHANISMS))}, "
                         f"expected 'all' or some of {_MECHANISMS}")
    if {"landlock", "mntns"} <= names:
        raise ValueError(f"{FORCE_FALLBACK_ENV}: 'landlock' and 'mntns' together leave nothing "
                         "to confine the filesystem")
    return names


def _plan() -> _Plan:
    p, off = _probe(), _forced()
    use = lambda name: bool(p[name]) and name not in off  # noqa: E731 - a one-line helper
    abi = 0 if "landlock" in off else int(p["landlock_abi"])  # type: ignore[call-overload]  # the probe's values are typed as a union; this key is an int
    return _Plan(root=bool(p["root"]), netns=use("netns"), pidns=use("pidns"), ipcns=use("ipcns"),
                 cgroup=use("cgroup"), landlock_abi=abi, newroot=use("mntns"),
                 seccomp=bool(p["seccomp"]),
                 fresh_uid=bool(p["root"]), utsns=bool(p["root"]) and bool(p["utsns"]))


def capabilities() -> dict[str, str]:
    """What run() will use here (probed once per process; honours the force-fallback
    variable), plus the Landlock ABI version found."""
    return {**_plan().isolation(), "landlock_abi": str(_probe()["landlock_abi"])}
