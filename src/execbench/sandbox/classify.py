"""Which limit ended a run: one classification for the sandbox and its job runner.

A run that exited 0 hit no limit. Otherwise the wait status, the CPU time used and the
tail of stderr tell the limit apart: SIGXCPU (or SIGKILL at the CPU limit) is "cpu_time",
SIGXFSZ or EFBIG text is "file_size", ENOSPC text is "disk" (the run's tmpfs is full; the
sandbox also reports "disk" from the tmpfs's usage, whatever the exit), a refused fork is "tasks", an allocation failure
("MemoryError", "std::bad_alloc", ...) is "memory" (RLIMIT_AS has no signal). Wall-clock
and output limits are decided by whoever enforces them, not here.
"""

from __future__ import annotations

import math
import signal

MEMORY_MARKERS = (b"MemoryError", b"std::bad_alloc", b"Cannot allocate memory", b"out of memory")
TASK_MARKERS = (b"Resource temporarily unavailable", b"can't start new thread")
FILE_SIZE_MARKERS = (b"File too large", b"File size limit exceeded")
DISK_MARKERS = (b"No space left on device",)
STDERR_TAIL = 4096


def describe_signal(signum: int) -> str:
    """"killed by signal 11 (SIGSEGV)"."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = "?"
    return f"killed by signal {signum} ({name})"


def cpu_limit_seconds(cpu_seconds: float) -> int:
    """RLIMIT_CPU is whole seconds: the soft limit a ``cpu_seconds`` budget becomes."""
    return max(1, math.ceil(cpu_seconds))


def classify(code: int | None, signum: int | None, cpu: float, cpu_seconds: float,
             stderr: bytes, tasks_refused: bool = False) -> str | None:
    """The limit that ended a run (exit ``code`` or ``signum``, ``cpu`` seconds used under a
    ``cpu_seconds`` budget), or None when it ended on its own."""
    if code == 0:
        return None
    tail = stderr[-STDERR_TAIL:]
    if signum == signal.SIGXCPU or (signum == signal.SIGKILL and cpu >= cpu_limit_seconds(cpu_seconds)):
        return "cpu_time"
    if signum == signal.SIGXFSZ or any(marker in tail for marker in FILE_SIZE_MARKERS):
        return "file_size"
    if any(marker in tail for marker in DISK_MARKERS):
        return "disk"
    if tasks_refused or any(marker in tail for marker in TASK_MARKERS):
        return "tasks"  # the cgroup refused a fork, or EAGAIN from fork/clone under RLIMIT_NPROC
    if any(marker in tail for marker in MEMORY_MARKERS):
        return "memory"
    return None
