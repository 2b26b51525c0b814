"""Every traced call starts from the directory the module left, with no process of an
earlier call alive (issue 22); runs INSIDE the sandbox, in the trace job's process.

The trace family's ``calls`` mode (``tracing/child.py``) runs the module once and forks a
child per call: memory is fresh per call, the filesystem is not. :class:`FreshCalls` makes
it so:

* :meth:`FreshCalls.take`, after the module ran and before the first call, copies the
  directories a job can write (the sandbox's work dir, which holds the job's directory,
  and the private ``/dev/shm``) into memory: an iterative walk over directory fds,
  ``O_NOFOLLOW``, at most :data:`MAX_DEPTH` levels, :data:`MAX_ENTRIES` entries and
  :data:`MAX_BYTES` of file content; regular files, directories and symlinks (never
  followed) only. Past a cap, or on anything else, :class:`DirectoryOverCaps`: the trace
  job reports a module error, the candidate is rejected with that reason. It also records
  each directory's lstat signature (inode, mode, size, links, owner, mtime and ctime in
  ns) and makes the job's process a child subreaper.
* :meth:`FreshCalls.reset`, before every later call: kills what the earlier call left
  running, then compares the signatures and restores only a directory that changed
  (emptied, then rebuilt from the copy with its modes and times; the cwd re-entered).
  A program can set mtime back but not ctime, and the kernel's multigrain timestamps
  (Linux >= 6.13, ext4/xfs/btrfs/tmpfs) give a change right after a stat a new ctime, so
  the lstat walk sees any write; when nothing changed a reset costs one walk (~10 syscalls
  for a job's usual directory). A directory that cannot be restored raises
  :class:`RestoreFailed`: the later calls fail with that reason.

Leftover processes: the job's process is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so
whatever a call forked, setsid() or double fork included, becomes its child once its parent
is gone; :meth:`FreshCalls.reset` kills its children that did not exist before the first
call (read from ``/proc/self/task/*/children``), waits for each and repeats until none is
left. Processes the *module* left (a pool started at import) and threads it started are
kept: a plain run of the call has them too (docs/sandbox.md states the residual risk).

What runs here runs after the program's module code: ``os`` functions are bound when this
module is imported (before any program), as in ``tracing/child.py``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import stat
from typing import Generator, Iterator, NamedTuple

from execbench.errors import InternalError
from execbench.sandbox._cleanup import remove_tree

MAX_ENTRIES = 4096          # files, directories and links below the roots, together
MAX_BYTES = 64 << 20        # file content held in memory
MAX_DEPTH = 32              # directory levels below a root
SHM_DIR = "/dev/shm"
_PR_SET_CHILD_SUBREAPER = 36
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

# bound before the program's first line: patching os by name changes nothing here
_open, _close, _read, _write, _lstat, _listdir = os.open, os.close, os.read, os.write, os.lstat, os.listdir
_mkdir, _symlink, _readlink, _chmod, _fchmod, _utime = os.mkdir, os.symlink, os.readlink, os.chmod, os.fchmod, os.utime
_unlink, _getuid, _getcwd, _chdir, _kill, _waitpid = os.unlink, os.getuid, os.getcwd, os.chdir, os.kill, os.waitpid
_join, _S_ISDIR, _S_ISREG, _S_ISLNK, _SIGKILL = os.path.join, stat.S_ISDIR, stat.S_ISREG, stat.S_ISLNK, signal.SIGKILL
_LIBC = ctypes.CDLL(None, use_errno=True)


class DirectoryOverCaps(InternalError):
    """The directories the module left cannot be copied for every call (too many entries,
    bytes or levels, or something that is not a file, directory or link)."""


class RestoreFailed(InternalError):
    """A directory could not be put back as the module left it."""


class Entry(NamedTuple):
    path: str            # relative to its root, "/"-separated
    kind: str            # "dir", "file", "link"
    mode: int
    times: tuple[int, int]   # atime, mtime (ns)
    content: bytes | str | None   # a file's bytes, a link's target


Signature = tuple[tuple[str, int, int, int, int, int, int, int], ...]


def _signature_of(path: str, st: os.stat_result) -> tuple[str, int, int, int, int, int, int, int]:
    return (path, st.st_ino, st.st_mode, st.st_size, st.st_nlink, st.st_uid, st.st_mtime_ns, st.st_ctime_ns)


def _walk(root: str) -> Generator[tuple[str, int, str, os.stat_result], None, None]:
    """``(relative path, parent dir fd, name, lstat)`` of every entry below ``root``,
    parents first, names sorted; iterative over directory fds (no recursion, no path
    lookups below the root, symlinks never followed). Deeper than :data:`MAX_DEPTH`
    levels: :class:`DirectoryOverCaps`; an unreadable directory: OSError."""
    stack: list[tuple[int, str, Iterator[str]]] = []
    try:
        _enter(stack, _open(root, _DIR_FLAGS), "")
        while stack:
            fd, prefix, names = stack[-1]
            name = next(names, None)
            if name is None:
                _close(stack.pop()[0])
                continue
            try:
                st = _lstat(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            yield prefix + name, fd, name, st
            if _S_ISDIR(st.st_mode):
                if len(stack) >= MAX_DEPTH:
                    raise DirectoryOverCaps(f"directories nested deeper than {MAX_DEPTH} levels")
                _enter(stack, _open(name, _DIR_FLAGS, dir_fd=fd), prefix + name + "/")
    finally:
        for fd, _, _ in stack:
            _close(fd)


def _enter(stack: list[tuple[int, str, Iterator[str]]], fd: int, prefix: str) -> None:
    """Push the open directory ``fd`` with its sorted names (closed if listing fails)."""
    try:
        names = sorted(_listdir(fd))
    except OSError:
        _close(fd)
        raise
    stack.append((fd, prefix, iter(names)))


def _read_file(name: str, dir_fd: int, size: int) -> bytes:
    fd = _open(name, _FILE_FLAGS, dir_fd=dir_fd)
    try:
        chunks, left = [], size
        while left > 0 and (chunk := _read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        _close(fd)


def signature(root: str) -> Signature | None:
    """Every entry's lstat signature, the root's first; None when the walk fails or
    passes the caps (then the root counts as changed)."""
    try:
        out = [_signature_of("", _lstat(root))]
        with contextlib.closing(_walk(root)) as walk:
            for path, _, _, st in walk:
                out.append(_signature_of(path, st))
                if len(out) > MAX_ENTRIES + 1:
                    return None
    except (OSError, DirectoryOverCaps):
        return None
    return tuple(out)


class Snapshot(NamedTuple):
    root: str
    mode: int
    times: tuple[int, int]
    owned: bool
    entries: list[Entry]


def copy(root: str, budget: list[int]) -> Snapshot:
    """``root``'s tree in memory; ``budget`` is ``[entries left, bytes left]``, shared
    across roots. Raises :class:`DirectoryOverCaps` with the reason."""
    try:
        st = _lstat(root)
        with contextlib.closing(_walk(root)) as walk:
            entries = [_entry(path, fd, name, info, budget) for path, fd, name, info in walk]
    except OSError as exc:
        raise DirectoryOverCaps(f"cannot copy {root}: {type(exc).__name__}: {exc.strerror}") from None
    owned = st.st_uid == _getuid()
    return Snapshot(root, st.st_mode & 0o7777, (st.st_atime_ns, st.st_mtime_ns), owned, entries)


def _entry(path: str, dir_fd: int, name: str, st: os.stat_result, budget: list[int]) -> Entry:
    """One entry of a copy, charged to ``budget``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise DirectoryOverCaps(f"the module left more than {MAX_ENTRIES} entries in the job's directory and "
                                "/dev/shm (each call starts from a copy of them)")
    times = (st.st_atime_ns, st.st_mtime_ns)
    if _S_ISDIR(st.st_mode):
        return Entry(path, "dir", st.st_mode & 0o1777, times, None)
    if _S_ISLNK(st.st_mode):
        return Entry(path, "link", 0, times, _readlink(name, dir_fd=dir_fd))
    if not _S_ISREG(st.st_mode):
        raise DirectoryOverCaps(f"{path!r} is not a file, directory or link")
    budget[1] -= st.st_size
    if budget[1] < 0:
        raise DirectoryOverCaps(f"the module left more than {MAX_BYTES} bytes of files in the job's directory "
                                "and /dev/shm (each call starts from a copy of them)")
    return Entry(path, "file", st.st_mode & 0o777, times, _read_file(name, dir_fd, st.st_size))


def _remove_all(root: str) -> None:
    for name in _listdir(root):
        remove_tree(_join(root, name))
    left = _listdir(root)   # what counts is what is left, not what the remover said
    if left:
        raise RestoreFailed(f"{root}: cannot remove {sorted(left)[0]!r}")


def restore(snapshot: Snapshot) -> None:
    """Empty ``snapshot.root`` and rebuild it from the copy (modes and times as taken)."""
    root = snapshot.root
    try:
        if snapshot.owned:
            _chmod(root, 0o700)
        _remove_all(root)
        directories = []
        for entry in snapshot.entries:
            path = _join(root, entry.path)
            if entry.kind == "dir":
                _mkdir(path, 0o700)
                directories.append(entry)
            elif entry.kind == "link":
                _symlink(str(entry.content), path)
                _utime(path, ns=entry.times, follow_symlinks=False)
            else:
                fd = _open(path, _NEW_FILE, 0o600)
                try:
                    view = memoryview(entry.content if isinstance(entry.content, bytes) else b"")
                    while view:
                        view = view[_write(fd, view):]
                    _fchmod(fd, entry.mode)
                    _utime(fd, ns=entry.times)
                finally:
                    _close(fd)
        for entry in reversed(directories):   # children first: a 0500 directory last
            path = _join(root, entry.path)
            _chmod(path, entry.mode)
            _utime(path, ns=entry.times, follow_symlinks=False)
        if snapshot.owned:
            _chmod(root, snapshot.mode)
            _utime(root, ns=snapshot.times, follow_symlinks=False)
    except OSError as exc:
        raise RestoreFailed(f"{root}: {type(exc).__name__}: {exc}") from None


def _children() -> set[int] | None:
    """The pids of this process's children (every thread's), None when /proc cannot say."""
    kids: set[int] = set()
    try:
        for task in _listdir("/proc/self/task"):
            fd = _open(f"/proc/self/task/{task}/children", os.O_RDONLY | os.O_CLOEXEC)
            try:
                data = b""
                while chunk := _read(fd, 1 << 16):
                    data += chunk
            finally:
                _close(fd)
            kids.update(int(pid) for pid in data.split())
    except (OSError, ValueError):
        return None
    return kids


class FreshCalls:
    """Put the job back as the module left it before each call (module docs)."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self.snapshots: list[Snapshot] = []
        self.signatures: list[Signature | None] = []
        self.cwd = ""
        self.kept_children: set[int] = set()

    def take(self) -> None:
        """After the module ran: copy the roots (:class:`DirectoryOverCaps` past a cap),
        become the subreaper of what the calls start."""
        budget = [MAX_ENTRIES, MAX_BYTES]
        self.snapshots = [copy(root, budget) for root in self.roots]
        self.signatures = [signature(root) for root in self.roots]
        self.cwd = _getcwd()
        _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.kept_children = _children() or set()

    def reset(self) -> None:
        """Before a later call: kill the earlier calls' leftovers, restore what changed."""
        self.kill_leftovers()
        restored = False
        for index, snapshot in enumerate(self.snapshots):
            now = signature(snapshot.root)
            if now is not None and now == self.signatures[index]:
                continue
            restore(snapshot)
            self.signatures[index] = signature(snapshot.root)
            restored = True
        if restored:
            try:
                _chdir(self.cwd)   # the job's directory may have been rebuilt
            except OSError as exc:
                raise RestoreFailed(f"cannot re-enter {self.cwd}: {exc.strerror}") from None

    def kill_leftovers(self, rounds: int = 1000) -> None:
        """Kill every child that was not there before the first call (a call's orphans
        are ours: subreaper), wait for each, until none is left."""
        while True:   # the usual case, no child at all, costs one wait4
            try:
                if _waitpid(-1, os.WNOHANG)[0] == 0:
                    break   # a child is alive: ask /proc which
            except ChildProcessError:
                return
        for _ in range(rounds):
            kids = _children()
            if not kids:
                return
            new = kids - self.kept_children
            if not new:
                return
            for pid in new:
                try:
                    _kill(pid, _SIGKILL)
                except ProcessLookupError:
                    pass
            for pid in new:
                try:
                    _waitpid(pid, 0)
                except ChildProcessError:
                    pass
