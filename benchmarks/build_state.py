"""Build time per case of the state family (paper 001), Python and C++.

Builds the cases of a state source one at a time (one job, build cache off), through the
family's own ``build_candidate`` (the same work ``execbench build state`` does per case):
sandboxed runs under three hash seeds, traced runs for trace length and state load, and
for C++ four g++ compiles plus gcov. Prints a JSON summary (per language: cases,
admitted, median / mean / p90 / max seconds) and, with ``--append``, appends a Markdown
section to benchmarks/RESULTS.md (never rewrites what others recorded there).

Run: ``python benchmarks/build_state.py [--source classic] [--networkx N] [--append]``.
Wall times depend on machine load: the load average before and after is recorded.

Two more modes (issue 27, the build time after the job runner):

* ``--compare SRC [SRC ...] --sets classic networkx-simplex --rounds N``: cold builds
  (``execbench build state SET --no-cache -j 2`` in a child process, ``PYTHONPATH=SRC``, a
  cache dir of its own) of each set with each source tree (e.g. ``src`` of a ``git archive``
  of an older commit, and this checkout's ``src``), in rotating order per round, so trees
  are compared under the same load; per build: wall, CPU of the build and its sandboxes
  (``RUSAGE_CHILDREN``), tasks and content hash. Compare CPU ratios measured in one run:
  this machine is shared.
* ``--profile SET``: one cold build in this process (this checkout), CPU and wall per job
  kind (g++ of each program, traced and native runs, gcov) and the number of sandboxes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from execbench import registry
from execbench.families.state.jobs import toolchain

RESULTS = Path(__file__).with_name("RESULTS.md")


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"median": round(statistics.median(ordered), 2), "mean": round(statistics.fmean(ordered), 2),
            "p90": round(p90, 2), "max": round(ordered[-1], 2), "total": round(sum(ordered), 1)}


def run(sources: list[str], networkx: int) -> dict:
    family = registry.get("state")
    options = dict(family.default_options)
    rows = []
    load_before = os.getloadavg()
    for source in sources:
        candidates = list(family.candidates([source], options))
        if source == "networkx-simplex":
            candidates = candidates[:networkx]
        for candidate in candidates:
            started = time.perf_counter()
            outcome = family.build_candidate(candidate, options)
            seconds = time.perf_counter() - started
            language = candidate.payload.get("language", "?")
            group = "networkx-simplex" if source == "networkx-simplex" else language
            rows.append({"case": candidate.key, "group": group, "seconds": round(seconds, 2),
                         "admitted": bool(outcome.tasks), "tasks": len(outcome.tasks),
                         "rejected": [r["reason"] for r in outcome.rejected]})
            print(f"{candidate.key:45s} {seconds:7.2f} s {'ok' if outcome.tasks else 'REJECTED'}",
                  file=sys.stderr)
    groups = {}
    for group in sorted({r["group"] for r in rows}):
        mine = [r for r in rows if r["group"] == group]
        groups[group] = {"cases": len(mine), "admitted": sum(r["admitted"] for r in mine),
                         **_summary([r["seconds"] for r in mine])}
    return {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "g++": toolchain(),
                    "load_before": [round(x, 1) for x in load_before],
                    "load_after": [round(x, 1) for x in os.getloadavg()]},
        "options": {"repeats": options["repeats"], "jobs": 1, "cache": False},
        "groups": groups,
        "cases": rows,
    }


def markdown(result: dict) -> str:
    machine = result["machine"]
    lines = [
        "",
        f"## state family: build time per case ({time.strftime('%Y-%m-%d')})",
        "",
        "`python benchmarks/build_state.py` — one case at a time, one job, build cache off, "
        f"{result['options']['repeats']} hash seeds; {machine['cpus']} CPUs, Python {machine['python']}, "
        f"{machine['g++']}; load average before {machine['load_before']}, after {machine['load_after']} "
        "(wall times scale with the load of the machine).",
        "",
        "| cases | admitted | median s | mean s | p90 s | max s | total s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for group, g in result["groups"].items():
        lines.append(f"| {group} | {g['admitted']}/{g['cases']} | {g['median']} | {g['mean']} | {g['p90']} | "
                     f"{g['max']} | {g['total']} |")
    slowest = sorted(result["cases"], key=lambda r: -r["seconds"])[:5]
    lines += ["", "Slowest cases: " + ", ".join(f"{r['case']} {r['seconds']} s" for r in slowest) + ".", ""]
    return "\n".join(lines)


def compare(trees: list[str], sets: list[str], rounds: int) -> list[dict]:
    """Cold builds of ``sets`` with each source tree, in rotating order (see the module docs)."""
    rows = []
    for n in range(rounds):
        for i in range(len(trees)):
            tree = trees[(i + n) % len(trees)]
            for name in sets:
                out = Path(tempfile.mkdtemp(prefix="build-state-"))
                env = {**os.environ, "PYTHONPATH": os.path.abspath(tree), "EXECBENCH_CACHE_DIR": str(out / "cache")}
                before, load = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()[0]
                started = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "execbench.cli", "build", "state", name, "-o",
                                       str(out / "ds"), "--no-cache", "-j", "2"], capture_output=True, text=True,
                                      env=env)
                wall = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                manifest = json.loads((out / "ds" / "manifest.json").read_text()) if proc.returncode == 0 else {}
                row = {"round": n, "tree": tree, "set": name, "wall_s": round(wall, 1),
                       "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
                       "load": [round(load, 1), round(os.getloadavg()[0], 1)], "tasks": manifest.get("tasks"),
                       "hash": manifest.get("content_hash"), "error": proc.stderr[-300:] if proc.returncode else None}
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def profile(source: str) -> dict:
    """One cold build of ``source`` here, CPU and wall summed per job kind (see the module docs)."""
    from execbench.families.build import build_dataset
    from execbench.families.state import build as state_build
    from execbench.families.state import pch

    kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    sandboxes = [0]
    lock = threading.Lock()
    run, run_pch = state_build.state_jobs.run, pch.run_jobs

    def step_kind(job) -> str:
        kind = re.sub(r"\d+$", "", job.id.split(":", 1)[-1])
        measure = job.args.get("measure") if job.handler != "exec" else None
        if job.handler != "exec":
            kind += ("/traced+state" if measure and measure.get("state") else "/traced") if measure else ""
        return kind

    def counted(run_jobs, kind_of):
        """``run_jobs`` that also adds each job's CPU and wall to its kind's row (one sandbox per call)."""
        def measured(jobs, **kwargs):
            results = run_jobs(jobs, **kwargs)
            with lock:
                sandboxes[0] += 1
                for job, result in zip(jobs, results):
                    row = kinds[kind_of(job)]
                    row[0] += 1
                    row[1] += result.cpu
                    row[2] += result.wall
            return results
        return measured

    family = registry.get("state")
    state_build.state_jobs.run = counted(run, step_kind)
    pch.run_jobs = counted(run_pch, lambda job: "pch (.gch builds)")   # the precompiled headers' builds
    try:
        before, load = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()[0]
        started = time.perf_counter()
        manifest = build_dataset(family, [source], tempfile.mkdtemp(prefix="build-state-"),
                                 options=dict(family.default_options), jobs=2)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        state_build.state_jobs.run = run
        pch.run_jobs = run_pch
    return {"set": source, "wall_s": round(wall, 1), "load": [round(load, 1), round(os.getloadavg()[0], 1)],
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
            "sandboxes": sandboxes[0], "tasks": manifest["tasks"], "hash": manifest["content_hash"],
            "jobs": {kind: {"n": n, "cpu_s": round(cpu, 1), "wall_s": round(w, 1)}
                     for kind, (n, cpu, w) in sorted(kinds.items(), key=lambda kv: -kv[1][1])}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", help="state source (repeatable); default: classic")
    parser.add_argument("--networkx", type=int, default=0, help="also build the first N networkx-simplex cases")
    parser.add_argument("--append", action="store_true", help=f"append a section to {RESULTS}")
    parser.add_argument("--json", type=Path, help="also write the full result (per case) here")
    parser.add_argument("--compare", nargs="+", metavar="SRC", help="source trees to compare (cold set builds)")
    parser.add_argument("--sets", nargs="+", default=["classic", "networkx-simplex"], help="sets for --compare")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of --compare")
    parser.add_argument("--profile", metavar="SET", help="CPU per job kind of one cold build of SET")
    args = parser.parse_args(argv)
    if args.compare:
        compare(args.compare, args.sets, args.rounds)
        return 0
    if args.profile:
        print(json.dumps(profile(args.profile), indent=1))
        return 0
    sources = args.source or ["classic"]
    if args.networkx:
        sources.append("networkx-simplex")
    result = run(sources, args.networkx)
    print(json.dumps({k: v for k, v in result.items() if k != "cases"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    if args.append:
        with open(RESULTS, "a", encoding="utf-8") as fh:
            fh.write(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
