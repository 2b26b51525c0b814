"""The state meter (``tracing/state.py``) of an older commit next to this checkout's, on the
state family's Python programs: every figure identical, and the time ratio (issue 27).

Both meters observe runs of the shared Tracer configured as the state build's measured runs
(``families/state/_runner.py``: opcodes, line events, ``skip_prefix="_checkpoint"``, budget
300,000) in one sandboxed child, alternating per program (the order flips every round), so
both share the machine's noise. Programs: the classic Python cases' long inputs and/or the
networkx-simplex cases' long inputs (networkx preloaded, as the build does). Checks that
opcodes, line events, peak state, state load, stride, samples and work are identical and
prints JSON: runs, mismatches, seconds per side and the ratio new/old. ``--profile`` instead
runs this checkout's meter once per program under a sampling profiler (SIGPROF; cProfile sees
nothing inside a trace function) and prints the top functions and lines.

Run: ``python benchmarks/state_meter.py --old-rev REV [--sets classic simplex] [--rounds 1]``.
Recorded results: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import textwrap
from pathlib import Path

from execbench import sandbox
from execbench import registry

ROOT = Path(__file__).resolve().parents[1]
CLASSIC = ROOT / "src" / "execbench" / "data" / "state" / "classic" / "python"

# Runs in the sandbox: the programs under test, both meters, the timing.
DRIVER = textwrap.dedent(
    """
    import io, json, os, sys, time
    import networkx  # noqa: F401 - preloaded, as the build's simplex sandboxes do
    import old_state
    from execbench.tracing import state as new_state
    from execbench.tracing.tracer import TraceLimits, Tracer

    KEYS = ("status", "opcodes", "line_events", "peak_state", "state_load", "state_stride",
            "state_samples", "state_work")
    mode, rounds, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

    def measured(module, path):
        meter = module.StateMeter([path], budget=300_000, hidden_prefix="_checkpoint")
        tracer = Tracer([path], limits=TraceLimits(max_line_events=3_000_000, max_calls=sys.maxsize),
                        record_calls=False, count_opcodes=True, summarize_values=False, record_lines=False,
                        skip_prefix="_checkpoint", observer=meter, stop_on_cap=True)
        return tracer, lambda: {**tracer.result(), **meter.result()}

    def run(path, stdin, tracer, finish):
        code = compile(open(path).read(), path, "exec")
        saved = sys.stdin, sys.stdout
        sys.stdin, sys.stdout = io.StringIO(stdin), io.StringIO()
        start = time.process_time()
        tracer.start()
        try:
            exec(code, {"__name__": "__main__", "__file__": path})
        except BaseException:
            pass
        finally:
            tracer.stop()
            sys.stdin, sys.stdout = saved
        return time.process_time() - start, finish()

    if mode == "profile":  # a sampling profiler (cProfile sees nothing inside a trace function)
        import collections, signal
        where, inner = collections.Counter(), collections.Counter()
        def sample(signum, frame):
            names, f = [], frame
            while f is not None:
                names.append(f.f_code.co_name + ":" + os.path.basename(f.f_code.co_filename))
                f = f.f_back
            inner[names[0] + ":" + str(frame.f_lineno)] += 1
            for name in set(names):
                where[name] += 1
        signal.signal(signal.SIGPROF, sample)
        signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
        for case in cases:
            path = os.path.abspath(case + ".py")
            run(path, open(case + ".txt").read(), *measured(new_state, path))
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        total = sum(inner.values())
        print(json.dumps({"samples": total,
                          "inclusive": [(n, round(c / total, 3)) for n, c in where.most_common(25)],
                          "innermost": [(n, round(c / total, 3)) for n, c in inner.most_common(25)]}, indent=1))
        raise SystemExit(0)
    seconds, mismatches, runs = {"old": 0.0, "new": 0.0}, [], 0
    per_case = {}
    for r in range(rounds):
        for case in cases:
            path, stdin = os.path.abspath(case + ".py"), open(case + ".txt").read()
            sides = [("old", old_state), ("new", new_state)][:: -1 if r % 2 else 1]
            results = {}
            for label, module in sides:
                elapsed, results[label] = run(path, stdin, *measured(module, path))
                seconds[label] += elapsed
                per_case.setdefault(case, {"old": 0.0, "new": 0.0})[label] += elapsed
            runs += 1
            if any(results["old"].get(k) != results["new"].get(k) for k in KEYS):
                mismatches.append({"case": case, **results})
    print(json.dumps({"runs": runs, "mismatches": mismatches, "seconds_old": round(seconds["old"], 2),
                      "seconds_new": round(seconds["new"], 2),
                      "ratio_new_over_old": round(seconds["new"] / seconds["old"], 3),
                      "slowest_old": sorted(((round(v["old"], 2), round(v["new"], 2), k)
                                             for k, v in per_case.items()), reverse=True)[:5]}, indent=1))
    """
)


def _programs(sets: list[str], limit: int) -> dict[str, tuple[str, str]]:
    """name -> (program text, long input) of the chosen sets' Python programs (the first
    ``limit`` of each set when ``limit``)."""
    out = {}
    if "classic" in sets:
        for case in sorted(CLASSIC.iterdir())[:limit or None]:
            out[f"classic_{case.name}"] = ((case / "main.py").read_text(), (case / "long.txt").read_text())
    if "simplex" in sets:
        family = registry.get("state")
        candidates = list(family.candidates(["networkx-simplex"], dict(family.default_options)))
        for candidate in candidates[:limit or None]:
            name = "simplex_" + candidate.key.rsplit("/", 1)[-1]
            out[name] = (candidate.payload["program"], candidate.payload["long"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-rev", default="HEAD")
    parser.add_argument("--sets", nargs="+", default=["classic", "simplex"], choices=["classic", "simplex"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="sample this checkout's meter instead")
    parser.add_argument("--cases", type=int, default=0, help="only the first N programs of each set")
    args = parser.parse_args()
    old = subprocess.run(["git", "show", f"{args.old_rev}:src/execbench/tracing/state.py"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    files = {"driver.py": DRIVER, "old_state.py": old}
    programs = _programs(args.sets, args.cases)
    for name, (program, stdin) in programs.items():
        files[f"{name}.py"], files[f"{name}.txt"] = program, stdin
    limits = sandbox.Limits(cpu_seconds=3600, wall_seconds=5400, memory_bytes=4 * 1024**3)
    mode = "profile" if args.profile else "compare"
    result = sandbox.run_python(["driver.py", mode, str(args.rounds), *programs], files=files, limits=limits)
    if not result.ok:
        sys.exit(f"driver failed: {result.reason()}\n{result.stderr[-2000:].decode(errors='replace')}")
    print(result.stdout.decode().strip())


if __name__ == "__main__":
    main()
