"""Tracer overhead next to coverage.py's C tracer, on real PyPI test functions.

Workload: every zero-argument ``test_*`` function of toolz 1.2.0's own test modules
(shipped in its wheel), run in one sandboxed child that alternates three modes for
several rounds so all three share the same noise:

* ``plain``     no tracing;
* ``coverage``  coverage.py with its C tracer, measuring toolz and its tests;
* ``execbench`` our Tracer at depth 3 on the same files, recording calls, lines and
  argument/return summaries (what the repo family asks of it), one tracer per test.

Run: ``python benchmarks/tracing.py [--rounds 7]``; prints medians and ratios as JSON.
Recorded results: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from execbench import sandbox

DRIVER = textwrap.dedent(
    """
    import gc, glob, importlib, inspect, json, os, statistics, sys, time
    import coverage, toolz
    from execbench.tracing.tracer import TraceLimits, Tracer

    root = os.path.dirname(toolz.__file__)
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(root, "tests", "test_*.py")))
    tests = []
    for name in names:
        module = importlib.import_module("toolz.tests." + name)
        for attr, fn in sorted(vars(module).items()):
            if attr.startswith("test_") and inspect.isfunction(fn) and fn.__module__ == module.__name__ \\
                    and not inspect.signature(fn).parameters:
                tests.append(fn)
    def passes(fn):
        try:
            fn()
            return True
        except Exception:
            return False

    skipped = [fn.__name__ for fn in tests if not passes(fn)]  # e.g. needs Python 3.14
    tests = [fn for fn in tests if fn.__name__ not in skipped]
    files = sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))

    def run_plain():
        for fn in tests:
            fn()

    def run_coverage():
        cov = coverage.Coverage(data_file=None, include=[os.path.join(root, "*")], branch=False)
        cov.start()
        try:
            run_plain()
        finally:
            cov.stop()
        return cov

    def run_execbench():
        events = 0
        for fn in tests:
            tracer = Tracer(files, limits=TraceLimits(max_depth=3), record_calls=True)
            tracer.start()
            try:
                fn()
            finally:
                tracer.stop()
            events += tracer.line_events
        return events

    modes = {"plain": run_plain, "coverage": run_coverage, "execbench": run_execbench}
    for run in modes.values():  # warm-up: imports, caches
        run()
    times = {name: [] for name in modes}
    rounds = int(sys.argv[1])
    for _ in range(rounds):
        for name, run in modes.items():
            gc.collect()
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(v) for name, v in times.items()}
    best = {name: min(v) for name, v in times.items()}
    print(json.dumps({
        "tests": len(tests), "skipped_failing": skipped, "rounds": rounds, "toolz": toolz.__version__, "coverage": coverage.__version__,
        "coverage_core": dict(run_coverage().sys_info()).get("core"),
        "line_events_depth3": run_execbench(),
        "median_seconds": med,
        "min_seconds": best,
        "min_execbench_over_coverage": best["execbench"] / best["coverage"],
        "coverage_over_plain": med["coverage"] / med["plain"],
        "execbench_over_plain": med["execbench"] / med["plain"],
        "execbench_over_coverage": med["execbench"] / med["coverage"],
    }, indent=2))
    """
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    limits = sandbox.Limits(cpu_seconds=600, wall_seconds=900, memory_bytes=4 * 1024**3)
    result = sandbox.run_python(["driver.py", str(args.rounds)], files={"driver.py": DRIVER}, limits=limits)
    if not result.ok:
        print(result.reason(), result.stderr.decode(errors="replace")[-2000:], file=sys.stderr)
        return 1
    sys.stdout.write(result.stdout.decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
