"""What a fresh directory per traced call costs (issue 22): the same trace batches, two trees side by side.

    git worktree add /tmp/h1base 78680ab      # main just before tracing/freshcall.py
    python benchmarks/fresh_calls.py --before /tmp/h1base/src [--rounds 5]

Each round runs, under each tree in turn (a child process with that tree's ``src`` first on
``PYTHONPATH``, so the sandbox imports it too), one sandbox of 32 trace jobs of 8 calls each
of a program that writes nothing (the cost every HumanEval candidate pays: a copy of the
job's directory after the module, one lstat walk before each later call) and one of 16 jobs
whose 4 calls each write a file in the cwd (a restore before each later call). Printed:
median wall and CPU seconds (the sandbox's processes, reaped: ``RUSAGE_CHILDREN``) per batch
for each tree and their ratio. Rounds alternate the order, so load on this noisy 2-core
machine hits both alike.
"""

from __future__ import annotations

import resource
import time

import _sidebyside  # benchmarks/_sidebyside.py: the script's own folder is on sys.path

QUIET = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n"
WRITER = QUIET + "\n\ndef g(n):\n    with open('cache.txt', 'a') as fh:\n        fh.write(str(f(n)))\n    return n\n"
CALLS = ["f(3)", "f(10)", "f(30)", "f(5)", "f(7)", "f(1)", "f(12)", "f(20)"]


def _batch(jobs: list) -> tuple[float, float]:
    from execbench.tracing.run import run_traces

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    results = run_traces(jobs)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert all(r.ok and all(c["status"] == "ok" for c in r.value["calls"]) for r in results), \
        [r.reason() for r in results if not r.ok][:3]
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _measure() -> dict[str, float]:
    """Runs in the child: the two batches under whichever execbench is imported."""
    from execbench.tracing.run import calls_job

    quiet_wall, quiet_cpu = _batch([calls_job(f"q{i}", QUIET, CALLS) for i in range(32)])
    writer_wall, writer_cpu = _batch([calls_job(f"w{i}", WRITER, ["g(3)", "g(4)", "g(5)", "g(6)"])
                                      for i in range(16)])
    return {"quiet_wall_s": quiet_wall, "quiet_cpu_s": quiet_cpu,
            "writer_wall_s": writer_wall, "writer_cpu_s": writer_cpu}


if __name__ == "__main__":
    _sidebyside.main(__file__, ["quiet_wall_s", "quiet_cpu_s", "writer_wall_s", "writer_cpu_s"], "fresh", _measure, (__doc__ or "").splitlines()[0])
