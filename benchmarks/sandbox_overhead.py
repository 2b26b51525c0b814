"""Cost of one sandboxed run: ``run(["/bin/true"])`` and ``run_python(["-c", "pass"])``,
wall and CPU (parent + children), median of N runs, next to plain ``subprocess.run``.

    python benchmarks/sandbox_overhead.py [N]

Compare two versions of the sandbox by putting another checkout's ``src`` first on
PYTHONPATH (``PYTHONPATH=/path/to/old/src python benchmarks/sandbox_overhead.py``).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time

import execbench
from execbench.sandbox import capabilities, run, run_python


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(label: str, fn, n: int) -> None:
    fn()  # warm up (probe, imports)
    walls, cpus = [], []
    for _ in range(n):
        c, w = _cpu(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(_cpu() - c)
    print(f"{label:32s} wall {statistics.median(walls) * 1000:7.1f} ms   cpu {statistics.median(cpus) * 1000:7.1f} ms")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    print("execbench from", execbench.__file__)
    print("isolation", capabilities())
    measure("subprocess.run(/bin/true)", lambda: subprocess.run(["/bin/true"]), n)
    measure("sandbox.run(/bin/true)", lambda: run(["/bin/true"]), n)
    measure("sandbox.run_python(-c pass)", lambda: run_python(["-c", "pass"]), n)


if __name__ == "__main__":
    main()
