"""A run's disk: everything it can write, on one tmpfs bounded in bytes and files.

The parent makes a *detached* tmpfs (``_linux.new_tmpfs``: fsopen/fsmount, mounted nowhere
on the host) holding one directory per writable place of the run: ``work`` (the work dir,
also HOME and TMPDIR), ``shm`` (/dev/shm) and ``rw<i>`` (the caller's ``read_write_paths``,
filled with a copy of the host directory before the run and copied back after it). The
run's setup attaches it in the run's own mount namespace and binds those directories at
their paths (``_linux.enter_new_root``). The parent reaches it as ``/proc/self/fd/<fd>``:
it writes the run's files there and collects from there; when the parent closes the
descriptor (and the run's namespace is gone) the kernel frees everything, so a killed
builder leaves nothing behind in the host's temp dir.

The tmpfs is ``bytes + SLACK_BYTES`` large with ``inodes + SLACK_INODES`` inodes: a
program that writes more than its limit gets ENOSPC, and a run that used more than the
limit (:meth:`Disk.over`) failed with the limit ``disk``, whatever its exit status.

Copies in and out never follow a symlink (``O_NOFOLLOW``, directory descriptors, one
level at a time), copy regular files, directories and symlinks only (set-id bits
dropped), and refuse trees deeper than ``MAX_DEPTH`` (:class:`TreeTooDeep`): the copy
back of a tree a program shaped is as careful as its removal (``_cleanup``).
"""

from __future__ import annotations

import os
import stat

from . import _linux
from ._cleanup import TreeTooDeep, remove_tree

SLACK_BYTES = 1 << 20   # the tmpfs is this much larger than the limit: "over" is detectable
SLACK_INODES = 64
MAX_DEPTH = 128         # directory levels copied into or out of a run's disk
WORK, SHM = "work", "shm"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Disk:
    """One run's bounded tmpfs (see the module docs)."""

    def __init__(self, size_bytes: int, inodes: int) -> None:
        self.size_bytes, self.inodes = int(size_bytes), int(inodes)
        self.fd = _linux.new_tmpfs(self.size_bytes + SLACK_BYTES, self.inodes + SLACK_INODES)
        self.root = f"/proc/self/fd/{self.fd}"
        self.baseline = self._used()

    def path(self, name: str) -> str:
        """Where the parent reaches the disk's directory ``name``."""
        return os.path.join(self.root, name)

    def make(self, name: str, mode: int = 0o755, uid: int | None = None) -> str:
        path = self.path(name)
        os.mkdir(path, mode)
        os.chmod(path, mode)   # not the umask's
        if uid is not None:
            os.chown(path, uid, uid)
        return path

    def _used(self) -> tuple[int, int]:
        st = os.fstatvfs(self.fd)
        return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree

    def usage(self) -> tuple[int, int]:
        """(bytes, files) the run's files take now (the disk's own directories excluded)."""
        used, files = self._used()
        return used - self.baseline[0], files - self.baseline[1]

    def over(self) -> bool:
        """The run wrote more than its limit (the tmpfs's slack is in use)."""
        used, files = self.usage()
        return used > self.size_bytes or files > self.inodes

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def copy_into(source: str, target: str) -> None:
    """Copy the host directory ``source`` into the empty directory ``target`` (see the
    module docs for what is copied)."""
    _copy(source, target)


def copy_back(source: str, target: str) -> None:
    """Make the host directory ``target`` hold what ``source`` (a run's copy) holds: its
    entries are removed, then the copy is copied in. Raises OSError (TreeTooDeep, ENOSPC)."""
    with os.scandir(target) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        remove_tree(os.path.join(target, name))
    _copy(source, target)


def _copy_file(name: str, src_dir: int, dst_dir: int, st: os.stat_result) -> None:
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src_dir)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            return
        dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      st.st_mode & 0o777, dir_fd=dst_dir)
        try:
            left = st.st_size
            while left > 0:
                sent = os.sendfile(dst, src, None, min(left, 1 << 30))
                if sent == 0:
                    break
                left -= sent
            os.fchmod(dst, st.st_mode & 0o1777)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _copy(source: str, target: str) -> None:
    """Iterative copy over directory descriptors (parents held open, at most MAX_DEPTH)."""
    stack: list[tuple[int, int, list[str]]] = []
    try:
        first_src, first_dst = os.open(source, _DIR), -1
        try:
            first_dst = os.open(target, _DIR)
        finally:
            stack.append((first_src, first_dst, sorted(os.listdir(first_src))))
        while stack:
            src_dir, dst_dir, names = stack[-1]
            if not names:
                stack.pop()
                os.close(src_dir)
                os.close(dst_dir)
                continue
            name = names.pop()
            try:
                st = os.lstat(name, dir_fd=src_dir)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(name, dir_fd=src_dir), name, dir_fd=dst_dir)
            elif stat.S_ISREG(st.st_mode):
                _copy_file(name, src_dir, dst_dir, st)
            elif stat.S_ISDIR(st.st_mode):
                if len(stack) >= MAX_DEPTH:
                    raise TreeTooDeep(f"{source}: directories nested deeper than {MAX_DEPTH} levels")
                os.mkdir(name, 0o700, dir_fd=dst_dir)
                sub_src = os.open(name, _DIR, dir_fd=src_dir)
                try:
                    sub_dst = os.open(name, _DIR, dir_fd=dst_dir)
                except OSError:
                    os.close(sub_src)
                    raise
                os.chmod(sub_dst, st.st_mode & 0o1777)
                stack.append((sub_src, sub_dst, sorted(os.listdir(sub_src))))
            # FIFOs, sockets, devices: not copied
    finally:
        for src_dir, dst_dir, _ in stack:
            os.close(src_dir)
            if dst_dir >= 0:
                os.close(dst_dir)
