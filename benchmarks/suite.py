"""Cold builds of every default set: wall time, CPU time and peak RSS, with the in-process floor.

    python benchmarks/suite.py [--sets humaneval advanced classic simplex repo] [--jobs 2] [--out DIR]

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


def build(family: str, source: str, out: Path, jobs: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "execbench.cli", "build", family, source, "-o", str(out),
                           "--no-cache", "--jobs", str(jobs)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"})
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
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="execbench-suite-"))
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}; python {sys.version.split()[0]}")
    rows = {}
    for name in args.sets:
        family, source = SETS[name]
        row = build(family, source, out / name, args.jobs)
        if family == "trace":
            seconds = floor(out / name)
            if seconds:
                row["floor_s"] = round(seconds, 2)
                row["build_over_floor"] = round(row["wall_s"] / seconds, 1)
        rows[name] = row
        print(f"{name:10s} {json.dumps(row)}", flush=True)
    total = {"wall_s": round(sum(r["wall_s"] for r in rows.values()), 1),
             "cpu_s": round(sum(r["cpu_s"] for r in rows.values()), 1)}
    print(f"{'total':10s} {json.dumps(total)}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
