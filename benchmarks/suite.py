"""Cold builds of every default set: wall time, CPU time and peak RSS, with the in-process floor.

    python benchmarks/suite.py [--sets humaneval advanced classic simplex repo] [--jobs 2] [--out DIR]
                               [--before OTHER/src] [--without-extra-checks]

With ``--before`` each set is built under that tree too (``PYTHONPATH``), right before or after
this checkout's build (the order alternates per set), and the ratios this / before are printed:
issue 33's side-by-side figures. ``--without-extra-checks`` builds through
``_no_extra_checks.py`` (issue 33's extra check runs switched off): the cost the issue asks to
report apart is then the difference to a run without the flag.

Each set is built with ``execbench build ... --no-cache --jobs N`` in a child process (the
build cache is ignored; downloaded sdists and venvs in the user's cache are reused, as the
targets of issue 16 assume). Measured per set: wall seconds, CPU seconds of the build and
everything it started (``RUSAGE_CHILDREN`` deltas), the largest resident set of any one
process, and the tasks written. For the two trace sets the same calls are then traced in
this process with a plain ``sys.settrace`` line tracer and no sandbox (the floor), and the
ratio build/floor is printed. The machine's load average is printed before and after:
compare figures only within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SETS = {
    "humaneval": ("trace", "humaneval"),
    "advanced": ("trace", "advanced"),
    "classic": ("state", "classic"),
    "simplex": ("state", "networkx-simplex"),
    "repo": ("repo", "default"),
}


NO_EXTRA_CHECKS = str(Path(__file__).with_name("_no_extra_checks.py"))


def build(family: str, source: str, out: Path, jobs: int, tree: str | None = None, extra_checks: bool = True) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    entry = ["-m", "execbench.cli"] if extra_checks else [NO_EXTRA_CHECKS]
    env = {**os.environ, "COLUMNS": "200", **({"PYTHONPATH": tree} if tree else {})}
    proc = subprocess.run([sys.executable, *entry, "build", family, source, "-o", str(out),
                           "--no-cache", "--jobs", str(jobs)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"build {family} {source} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    return {"wall_s": round(wall, 1),
            "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
            "peak_rss_mb": round(after.ru_maxrss / 1024, 1), "tasks": manifest["tasks"],
            "rejected": manifest["rejected"]}


def floor(dataset: Path) -> float | None:
    """Seconds to trace the dataset's calls in this process with a plain line tracer."""
    tasks = [json.loads(line) for line in (dataset / "tasks.jsonl").read_text().splitlines()]
    calls = [t["prompt_fields"] for t in tasks if t["prompt_fields"].get("call")]
    if not calls:
        return None
    started = time.perf_counter()
    filename = "<program>"
    for fields in calls:
        namespace: dict = {"__name__": "program"}
        exec(compile(fields["program"], filename, "exec", dont_inherit=True), namespace)  # noqa: S102 - shipped corpora only (the floor issue 16 asks for)
        lines: list[int] = []

        def tracer(frame, event, arg, lines=lines, filename=filename):
            if frame.f_code.co_filename != filename:
                return None
            if event == "line":
                lines.append(frame.f_lineno)
            return tracer

        sys.settrace(tracer)
        try:
            eval(compile(fields["call"], filename, "eval", dont_inherit=True), namespace)  # noqa: S307 - as above
        except Exception:  # noqa: BLE001 - a floor measurement, not an oracle
            pass
        finally:
            sys.settrace(None)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="keep the datasets here (default: a temp dir)")
    parser.add_argument("--before", default=None, help="the src/ directory of a tree to build each set under too")
    parser.add_argument("--without-extra-checks", action="store_true",
                        help="switch issue 33's extra check runs off (measurement only: _no_extra_checks.py)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="execbench-suite-"))
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}; python {sys.version.split()[0]}"
          + ("; extra check runs off" if args.without_extra_checks else ""))
    now = str(Path(__file__).resolve().parents[1] / "src")
    rows = {}
    for n, name in enumerate(args.sets):
        family, source = SETS[name]
        trees = [("", now)] + ([("before ", str(Path(args.before).resolve()))] if args.before else [])
        for label, tree in (trees if n % 2 == 0 else trees[::-1]):
            dataset = out / f"{label.strip() or 'this'}-{name}"
            row = build(family, source, dataset, args.jobs, tree, not args.without_extra_checks)
            if family == "trace":
                seconds = floor(dataset)
                if seconds:
                    row["floor_s"] = round(seconds, 2)
                    row["build_over_floor"] = round(row["wall_s"] / seconds, 1)
            rows[f"{label}{name}"] = row
            print(f"{label + name:16s} {json.dumps(row)}", flush=True)
        if args.before:
            this, old = rows[name], rows[f"before {name}"]
            print(f"{'ratio ' + name:16s} " + json.dumps({"wall": round(this["wall_s"] / old["wall_s"], 2),
                                                           "cpu": round(this["cpu_s"] / old["cpu_s"], 2)}), flush=True)
    mine = [r for k, r in rows.items() if not k.startswith("before ")]
    total = {"wall_s": round(sum(r["wall_s"] for r in mine), 1), "cpu_s": round(sum(r["cpu_s"] for r in mine), 1)}
    print(f"{'total':16s} {json.dumps(total)}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
