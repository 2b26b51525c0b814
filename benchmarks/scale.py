"""A package list built with the local pool and with Ray on this machine, side by side.

    python benchmarks/scale.py [--list benchmarks/packages.txt] [--jobs 2] [--max-modules 3] [--out DIR]

Stages, each timed:

1. **prepare**: every package's sdist download and venv install (sandboxed pip), by a
   first ``--limit``-free build of the list with ``max_tasks_per_package=1`` and
   ``max_modules_per_package=1`` into a throw-away directory; afterwards sdists and venvs
   are cached, as issue 15's figures assume for a cluster that has warmed up.
2. **build, local**: ``execbench build repo list:... --no-cache --executor local``.
3. **build, ray**: the same with ``--executor ray`` (a local Ray cluster started by the build).

For the two builds: packages/hour, tasks/hour, the driver's peak resident memory (polled
from /proc), wall and CPU seconds, and whether the two datasets have the same content hash.
Per-package caps (``--max-modules``) keep one large suite from dominating.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _peak_rss_mb(proc: subprocess.Popen, box: list[float]) -> None:
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmRSS:"):
                    box[0] = max(box[0], int(line.split()[1]) / 1024)
        except OSError:
            break
        time.sleep(0.2)


def build(listing: Path, out: Path, jobs: int, executor: str, extra: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "execbench.cli", "build", "repo", f"list:{listing}", "-o", str(out),
                             "--jobs", str(jobs), "--executor", executor, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    peak = [0.0]
    poller = threading.Thread(target=_peak_rss_mb, args=(proc, peak), daemon=True)
    poller.start()
    output, _ = proc.communicate()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({executor}):\n{output[-3000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
    failed = sorted({r["candidate"] for r in rejected if r["stage"] == "package" and r["candidate"].startswith("pypi:")})
    packages = manifest["candidates"]
    return {"executor": executor, "wall_s": round(wall, 1),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
            "driver_peak_rss_mb": round(peak[0], 1), "packages": packages, "packages_failed": failed,
            "tasks": manifest["tasks"], "packages_per_hour": round(packages * 3600 / wall, 1),
            "tasks_per_hour": round(manifest["tasks"] * 3600 / wall), "content_hash": manifest["content_hash"],
            "rejected_by_stage": manifest["rejected_by_stage"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", type=Path, default=HERE / "packages.txt")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-modules", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="execbench-scale-"))
    caps = ["--set", f"max_modules_per_package={args.max_modules}"]
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}", flush=True)
    started = time.perf_counter()
    build(args.list, out / "prepare", args.jobs, "local",
          ["--set", "max_modules_per_package=1", "--set", "max_tasks_per_package=1"])
    print(f"prepare (download + venv, and one module per package): {time.perf_counter() - started:.1f} s", flush=True)
    rows = []
    for executor in ("local", "ray"):
        row = build(args.list, out / executor, args.jobs, executor, ["--no-cache", *caps])
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"same content hash: {rows[0]['content_hash'] == rows[1]['content_hash']}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
