"""Per-run cgroup v1 ``pids`` groups: a task bound that holds for root, and a handle to
kill every task of a run. Groups live under ``<pids mount>/execbench/<owner pid>-<n>``."""

from __future__ import annotations

import itertools
import os
import signal
import time

PIDS_ROOT = "/sys/fs/cgroup/pids"
_BASE = os.path.join(PIDS_ROOT, "execbench")
_counter = itertools.count()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _pids(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(line) for line in f.read().split()]
    except FileNotFoundError:
        return []


def _kill_and_remove(path: str, timeout: float = 5.0) -> None:
    """SIGKILL every task in the group until it is empty, then remove it."""
    deadline = time.monotonic() + timeout
    while True:
        pids = _pids(path)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:  # EBUSY: tasks still exiting (or a fork raced the kill)
            if time.monotonic() > deadline:
                raise
            time.sleep(0.001 if not pids else 0.0002)


class PidsCgroup:
    def __init__(self, max_tasks: int):
        os.makedirs(_BASE, exist_ok=True)
        self.path = os.path.join(_BASE, f"{os.getpid()}-{next(_counter)}")
        os.mkdir(self.path)
        try:
            _write(os.path.join(self.path, "pids.max"), str(max_tasks))
            # Opened here, written ("0" = the writer) by the child: works even after the
            # child has remounted /sys read-only.
            self.procs_fd = os.open(os.path.join(self.path, "cgroup.procs"),
                                    os.O_WRONLY | os.O_CLOEXEC)
        except BaseException:
            os.rmdir(self.path)
            raise

    def hit_max(self) -> bool:
        """True if a fork/clone was refused because of pids.max."""
        try:
            with open(os.path.join(self.path, "pids.events")) as f:
                return int(f.read().split()[1]) > 0
        except (OSError, IndexError, ValueError):
            return False

    def kill(self) -> None:
        for pid in _pids(self.path):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """Kill what is left and remove the group."""
        os.close(self.procs_fd)
        _kill_and_remove(self.path)


def probe() -> bool:
    """Can we create a pids group here? Also removes groups left by dead processes."""
    try:
        os.makedirs(_BASE, exist_ok=True)
        for name in os.listdir(_BASE):
            owner = name.split("-")[0]
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                try:
                    _kill_and_remove(os.path.join(_BASE, name), timeout=1.0)
                except OSError:
                    pass
        group = PidsCgroup(1)
        group.close()
        return True
    except OSError:
        return False
