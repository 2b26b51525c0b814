"""Two source trees side by side, for the benchmarks that compare "before" with this checkout.

A script calls :func:`main` with its own path, the figure names its ``--child`` mode prints
(one JSON object as its last stdout line) and the name of this checkout's tree. Each round
runs the script's child once under each tree (``PYTHONPATH=<tree>/src``, so the sandbox
imports that tree too), in alternating order, so load on this noisy 2-core machine hits
both alike; printed: each figure's median per tree and the ratio new / before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Callable


def main(script: str, figures: list[str], new_name: str, measure: Callable[[], dict[str, float]],
         description: str) -> None:
    """The script's entry point: ``--child`` prints ``measure()``; otherwise the comparison."""
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(measure()))
        return
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--before", required=True, help="the src/ directory of the tree to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    now = str(Path(script).resolve().parents[1] / "src")
    trees = {"before": str(Path(args.before).resolve()), new_name: now}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    print(f"load average before: {os.getloadavg()}")
    for round_ in range(args.rounds):
        for name in (list(trees) if round_ % 2 == 0 else list(reversed(trees))):
            env = {**os.environ, "PYTHONPATH": trees[name]}
            out = subprocess.run([sys.executable, script, "--child"], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit(f"{name}: {out.stderr[-2000:]}")
            results[name].append(json.loads(out.stdout.splitlines()[-1]))
    print(f"load average after: {os.getloadavg()}")
    for key in figures:
        medians = {name: statistics.median(r[key] for r in results[name]) for name in trees}
        print(f"{key}: before {medians['before']:.2f} s, {new_name} {medians[new_name]:.2f} s, "
              f"ratio {medians[new_name] / medians['before']:.2f} (median of {args.rounds})")
