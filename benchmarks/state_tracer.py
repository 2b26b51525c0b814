"""The state family's measured runs: the shared Tracer (+ StateMeter) next to the retired
StateLoadTracer it replaced, on the classic Python programs' long inputs.

The retired module is read from git (``--old-rev``, default the last commit that had it) and
both run in one sandboxed child, alternating per program and per mode (counts only / with
state; the order flips every round), so both share the machine's noise. Checks that every count is identical (opcodes,
line events, peak state, state load, stride) and prints the time ratio new/old as JSON.

Run: ``python benchmarks/state_tracer.py [--rounds 3]``. Recorded results: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

from execbench import sandbox

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "src" / "execbench" / "data" / "state" / "classic" / "python"

# Runs in the sandbox: the programs under test, both tracers, the timing.
DRIVER = textwrap.dedent(
    """
    import io, json, os, sys, time
    import old_state_load as old
    from execbench.tracing.state import StateMeter
    from execbench.tracing.tracer import TraceLimits, Tracer

    KEYS = ("status", "opcodes", "line_events", "peak_state", "state_load", "state_stride")
    rounds, cases = int(sys.argv[1]), sys.argv[2:]

    def make_old(path, state):
        tracer = old.StateLoadTracer([path], measure_state=state)
        return tracer, tracer.result

    def make_new(path, state):
        meter = StateMeter([path]) if state else None
        tracer = Tracer([path], limits=TraceLimits(max_line_events=2_000_000, max_calls=sys.maxsize),
                        record_calls=False, count_opcodes=True, summarize_values=False, record_lines=False,
                        skip_prefix="_checkpoint", observer=meter, stop_on_cap=True)
        return tracer, lambda: {**tracer.result(), **(meter.result() if meter else {})}

    def run(path, stdin, tracer, finish):
        code = compile(open(path).read(), path, "exec")
        saved = sys.stdin, sys.stdout
        sys.stdin, sys.stdout = io.StringIO(stdin), io.StringIO()
        start = time.perf_counter()
        tracer.start()
        try:
            exec(code, {"__name__": "__main__", "__file__": path})
        except BaseException:
            pass
        finally:
            tracer.stop()
            sys.stdin, sys.stdout = saved
        return time.perf_counter() - start, finish()

    seconds, mismatches, runs = {"old": 0.0, "new": 0.0}, [], 0
    for r in range(rounds):
        for case in cases:
            path, stdin = os.path.abspath(case + ".py"), open(case + ".txt").read()
            for state in (False, True):
                sides = [("old", make_old), ("new", make_new)][:: -1 if r % 2 else 1]
                results = {}
                for label, make in sides:
                    elapsed, results[label] = run(path, stdin, *make(path, state))
                    seconds[label] += elapsed
                runs += 1
                if any(results["old"].get(k) != results["new"].get(k) for k in KEYS):
                    mismatches.append({"case": case, "state": state, **results})
    print(json.dumps({"runs": runs, "mismatches": mismatches, "seconds_old": round(seconds["old"], 2),
                      "seconds_new": round(seconds["new"], 2),
                      "ratio_new_over_old": round(seconds["new"] / seconds["old"], 3)}, indent=1))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-rev", default="6cf6837")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    old = subprocess.run(["git", "show", f"{args.old_rev}:src/execbench/tracing/state_load.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    cases = sorted(case.name for case in PROGRAMS.iterdir())
    files = {"driver.py": DRIVER, "old_state_load.py": old}
    for case in cases:
        files[f"{case}.py"] = (PROGRAMS / case / "main.py").read_text()
        files[f"{case}.txt"] = (PROGRAMS / case / "long.txt").read_text()
    limits = sandbox.Limits(cpu_seconds=1200, wall_seconds=1800, memory_bytes=4 * 1024**3)
    result = sandbox.run_python(["driver.py", str(args.rounds), *cases], files=files, limits=limits)
    if not result.ok:
        sys.exit(f"driver failed: {result.reason()}\n{result.stderr[-2000:].decode(errors='replace')}")
    print(result.stdout.decode().strip())


if __name__ == "__main__":
    main()
