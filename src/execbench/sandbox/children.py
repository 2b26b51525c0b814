"""Helpers for batch runners that run INSIDE the sandbox and fork one child per job.

The state and cruxeval runners each fork a child per job and wait for it under a wall
limit; :func:`wait_or_kill` is that wait, in one place.
"""

from __future__ import annotations

import os
import select
import signal
import time
from typing import Any


def wait_or_kill(pid: int, deadline: float) -> tuple[int, Any, bool]:
    """Wait for child ``pid`` until ``deadline`` (``time.monotonic()`` clock); SIGKILL it
    then. Returns ``(wait status, resource usage, timed_out)``."""
    pidfd = os.pidfd_open(pid)
    timed_out = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd], [], [], max(0.0, remaining))
            if ready:
                break
            if remaining <= 0:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
        _, status, usage = os.wait4(pid, 0)
    finally:
        os.close(pidfd)
    return status, usage, timed_out
