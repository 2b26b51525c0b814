"""Build time per case of the state family (paper 001), Python and C++.

Builds the cases of a state source one at a time (one job, build cache off), through the
family's own ``build_candidate`` (the same work ``execbench build state`` does per case):
sandboxed runs under three hash seeds, traced runs for trace length and state load, and
for C++ four g++ compiles plus gcov. Prints a JSON summary (per language: cases,
admitted, median / mean / p90 / max seconds) and, with ``--append``, appends a Markdown
section to benchmarks/RESULTS.md (never rewrites what others recorded there).

Run: ``python benchmarks/build_state.py [--source classic] [--networkx N] [--append]``.
Wall times depend on machine load: the load average before and after is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from execbench.contract import families
from execbench.families.state.jobs import toolchain

RESULTS = Path(__file__).with_name("RESULTS.md")


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {"median": round(statistics.median(ordered), 2), "mean": round(statistics.fmean(ordered), 2),
            "p90": round(p90, 2), "max": round(ordered[-1], 2), "total": round(sum(ordered), 1)}


def run(sources: list[str], networkx: int) -> dict:
    family = families.get("state")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", help="state source (repeatable); default: classic")
    parser.add_argument("--networkx", type=int, default=0, help="also build the first N networkx-simplex cases")
    parser.add_argument("--append", action="store_true", help=f"append a section to {RESULTS}")
    parser.add_argument("--json", type=Path, help="also write the full result (per case) here")
    args = parser.parse_args(argv)
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
