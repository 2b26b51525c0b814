"""What issue 22's isolation costs the job runner: the same batches, old runner vs new, side by side.

    git worktree add /tmp/before 6c4f8a0      # main before issue 22
    python benchmarks/job_runner_isolation.py --before /tmp/before/src [--rounds 5]

Each round runs, under each tree in turn (a child process with that tree's ``src`` first on
``PYTHONPATH``, so the sandbox imports it too): one sandbox of 32 trace jobs (a small
program, three calls each, as the trace family batches HumanEval) and one of 32 state-style
Python jobs sharing one group (the new runner starts each in a fresh directory). Printed:
median wall seconds per batch for each tree and their ratio (new / before). Rounds
alternate the order, so load on this noisy 2-core machine hits both alike.
"""

from __future__ import annotations

import time

import _sidebyside  # benchmarks/_sidebyside.py: the script's own folder is on sys.path

PROGRAM = "def f(n):\n    total = 0\n    for i in range(n):\n        total += i * i\n    return total\n"


def _measure() -> dict[str, float]:
    """Runs in the child: the two batches under whichever execbench is imported."""
    from execbench.sandbox.jobs import Job, run_jobs
    from execbench.tracing.run import calls_job, run_traces

    traces = [calls_job(f"t{i}", PROGRAM, ["f(3)", "f(10)", "f(30)"]) for i in range(32)]
    started = time.perf_counter()
    results = run_traces(traces)
    trace_wall = time.perf_counter() - started
    assert all(r.ok for r in results), [r.reason() for r in results if not r.ok][:3]
    handler = "execbench.families.state._runner:run_program"
    runs = [Job(f"s{i}", handler, args={"program": "main.py"}, files={"main.py": PROGRAM + "print(f(50))\n"},
                group="case", **({"fresh": True} if "fresh" in Job.__dataclass_fields__ else {}))
            for i in range(32)]
    started = time.perf_counter()
    results = run_jobs(runs)
    state_wall = time.perf_counter() - started
    assert all(r.ok and r.stdout == b"40425\n" for r in results), [r.reason() for r in results][:3]
    return {"trace_batch_s": trace_wall, "state_batch_s": state_wall}


if __name__ == "__main__":
    _sidebyside.main(__file__, ["trace_batch_s", "state_batch_s"], "issue 22", _measure, (__doc__ or "").splitlines()[0])
