"""Removing (and walking) a tree a program may have shaped: never recurses.

``shutil.rmtree`` recurses (a 3,000-deep directory chain raises RecursionError, which
``ignore_errors`` does not catch) and builds full paths (past PATH_MAX they fail). Here the
walk is a loop over directory file descriptors, one open at a time (children are entered
by name relative to their parent, parents re-entered through ".."), so depth costs neither
stack nor descriptors nor path length. Symlinks are removed, never followed. Directories
without permissions are chmod'ed, immutable/append-only flags cleared where possible;
:func:`remove_tree` never raises. :func:`walk_tree` visits such a tree the same way
(iterative, ``O_NOFOLLOW``) with a depth bound.
"""

from __future__ import annotations

import array
import fcntl
import os
import stat

from execbench.errors import InternalError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FS_IOC_GETFLAGS, _FS_IOC_SETFLAGS = 0x80086601, 0x40086602
_IMMUTABLE_OR_APPEND = 0x00000010 | 0x00000020


def _unprotect(name: str, dir_fd: int) -> None:
    """Make ``name`` (in dir_fd) removable/enterable: owner rwx, no immutable flag."""
    try:
        os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
    except (OSError, NotImplementedError, ValueError):   # ValueError: a symlink (CPython, no lchmod)
        pass
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return
    try:
        buf = array.array("l", [0])
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buf, True)
        if buf[0] & _IMMUTABLE_OR_APPEND:
            buf[0] &= ~_IMMUTABLE_OR_APPEND
            fcntl.ioctl(fd, _FS_IOC_SETFLAGS, buf, True)
    except OSError:
        pass
    finally:
        os.close(fd)


def _open_dir(name: str, dir_fd: int) -> int | None:
    for attempt in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except PermissionError:
            if attempt == 0:
                _unprotect(name, dir_fd)
        except OSError:
            return None
    return None


def _remove_entry(name: str, dir_fd: int, is_dir: bool) -> None:
    for attempt in range(2):
        try:
            (os.rmdir if is_dir else os.unlink)(name, dir_fd=dir_fd)
            return
        except FileNotFoundError:
            return
        except OSError:
            if attempt == 0:
                _unprotect(name, dir_fd)
                try:
                    _unprotect(".", dir_fd)   # the parent may be immutable / read-only
                except OSError:
                    pass


def remove_tree(path: str) -> bool:
    """Delete ``path`` and everything below it; True if it is gone. Never raises."""
    try:
        return _remove_tree(path)
    except Exception:        # noqa: BLE001 - cleanup must not fail a build
        return not os.path.lexists(path)


def _remove_tree(path: str) -> bool:
    parent_path, base = os.path.split(os.path.abspath(path))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    top_parent = os.open(parent_path, _DIR_FLAGS)
    try:
        if not stat.S_ISDIR(st.st_mode):
            _remove_entry(base, top_parent, False)
            return not os.path.lexists(path)
        # names: the path from the top to the current directory; pending: per level, the
        # subdirectories still to enter.
        cur = _open_dir(base, top_parent)
        if cur is None:
            return False
        names: list[str] = []
        pending: list[list[str]] = [[]]
        fresh = True
        while True:
            if fresh:
                subdirs = []
                try:
                    entries = list(os.scandir(cur))
                except OSError:
                    entries = []
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if is_dir:
                        subdirs.append(entry.name)
                    else:
                        _remove_entry(entry.name, cur, False)
                pending[-1] = subdirs
            if pending[-1]:
                name = pending[-1].pop()
                child = _open_dir(name, cur)
                if child is None:
                    _remove_entry(name, cur, True)
                    fresh = False
                    continue
                os.close(cur)
                cur, fresh = child, True
                names.append(name)
                pending.append([])
                continue
            # cur is empty (as far as we could empty it): go up and remove it
            pending.pop()
            if not names:
                os.close(cur)
                _remove_entry(base, top_parent, True)
                break
            up = os.open("..", _DIR_FLAGS, dir_fd=cur)
            os.close(cur)
            cur, fresh = up, False
            _remove_entry(names.pop(), cur, True)
    finally:
        os.close(top_parent)
    return not os.path.lexists(path)


class TreeTooDeep(InternalError, OSError):
    """A walked tree goes deeper than the caller's bound."""


def walk_tree(path: str, visit, max_depth: int = 128) -> None:
    """Call ``visit(dir_fd, name, st, depth)`` for ``path`` itself (dir_fd: its parent, depth 0)
    and every entry below it, parents before children, ``st`` from lstat. A loop over
    directory file descriptors as in :func:`remove_tree`, but the parents stay open (at most
    ``max_depth`` of them) instead of being re-entered through "..", so a tree renamed under
    the walk cannot lead it elsewhere. Symlinks are visited, never followed (``O_NOFOLLOW``);
    entries that vanish or cannot be opened are skipped. A directory deeper than
    ``max_depth`` raises :class:`TreeTooDeep` (after ``visit`` saw everything above it);
    what ``visit`` raises propagates. ``visit`` must not close ``dir_fd``."""
    parent_path, base = os.path.split(os.path.abspath(path))
    top_parent = os.open(parent_path, _DIR_FLAGS)
    stack: list[tuple[int, list[str]]] = []
    try:
        st = os.lstat(base, dir_fd=top_parent)
        visit(top_parent, base, st, 0)
        if not stat.S_ISDIR(st.st_mode):
            return
        try:
            first = os.open(base, _DIR_FLAGS, dir_fd=top_parent)
        except OSError:
            return
        stack.append((first, []))
        fresh = True
        while stack:
            fd, pending = stack[-1]
            depth = len(stack)
            if fresh:
                fresh = False
                try:
                    names = sorted(os.listdir(fd))
                except OSError:
                    names = []
                for name in names:
                    try:
                        entry_st = os.lstat(name, dir_fd=fd)
                    except OSError:
                        continue
                    visit(fd, name, entry_st, depth)
                    if stat.S_ISDIR(entry_st.st_mode):
                        pending.append(name)
                pending.reverse()
            if not pending:
                os.close(stack.pop()[0])
                continue
            name = pending.pop()
            if depth >= max_depth:
                raise TreeTooDeep(f"{path}: directories nested deeper than {max_depth} levels")
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            stack.append((child, []))
            fresh = True
    finally:
        for fd, _ in stack:
            os.close(fd)
        os.close(top_parent)
