"""A living benchmark (issue 26): repo tasks from the releases of the last six months.

    python benchmarks/living.py [--list benchmarks/living_packages.txt] [--after 2026-06-01]
        [--before 2026-12-01] [--max-modules 1] [--jobs 2] [--runs local,ray,local-warm] [--limit N] [--out DIR]

Builds ``execbench build repo list:LIST --set released_after=... --set released_before=...
--set new_tests_only=true --set max_modules_per_package=N`` (the list holds bare names: the
package index chooses each release) and reports, from the manifest and rejected.jsonl:
packages in the list, packages with a release in the window, tasks before the
new-tests-only diff (tasks + ``existed_before`` rejections), new-only tasks, rejections by
reason, and the wall time of each run:

- ``local``: the first build (build cache as it is; sdists and venvs downloaded if new);
- ``ray``: ``--no-cache --executor ray`` (a local Ray cluster; sdists and venvs warm);
- ``local-warm``: ``--no-cache`` on the local pool (sdists and venvs warm): the fair
  comparison with ``ray``.

Every run asks the index once per package of the whole list (``packages``, ``with_release``
count all of them); ``--limit N`` builds only the first N lines (``built``). The summary is
printed as JSON and written to ``OUT/summary.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(listing: Path, out: Path, args: argparse.Namespace, extra: list[str]) -> float:
    started = time.perf_counter()
    command = [sys.executable, "-m", "execbench.cli", "build", "repo", f"list:{listing}", "-o", str(out),
               "--jobs", str(args.jobs), "--set", f"released_after={args.after}",
               "--set", f"released_before={args.before}", "--set", "new_tests_only=true",
               "--set", f"max_modules_per_package={args.max_modules}",
               *(["--limit", str(args.limit)] if args.limit else []), *extra]
    proc = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    (out.parent / f"{out.name}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds


def summarise(out: Path) -> dict:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text(encoding="utf-8").splitlines()]
    window = manifest["settings"]["release_window"]
    releases = {name: r for name, r in window["packages"].items() if "version" in r}
    by_release = manifest.get("tasks_by_release", {})
    per_package = {}
    for name, release in releases.items():
        counts = by_release.get(f"{release['name']}=={release['version']}", {})
        per_package[name] = {"version": release["version"], "date": release["date"],
                             "previous": (release.get("previous") or {}).get("version"),
                             "new_tasks": counts.get("tasks", 0), "existed_before": counts.get("new-tests-only", 0)}
    package_rejections = Counter(r["reason"].split(":", 1)[0] if "no sdist uploaded" not in r["reason"]
                                 else "no sdist uploaded in the window"
                                 for r in rejected if r["stage"] == "package")
    existed = sum(p["existed_before"] for p in per_package.values())
    return {
        "packages": len(window["packages"]), "with_release": len(releases), "built": manifest["candidates"],
        "with_new_tasks": sum(1 for p in per_package.values() if p["new_tasks"]),
        "tasks_before_diff": manifest["tasks"] + existed, "new_only_tasks": manifest["tasks"],
        "existed_before": existed, "rejected_by_stage": manifest["rejected_by_stage"],
        "rejected_by_reason": manifest["rejected_by_reason"],
        "package_rejections": dict(package_rejections), "per_package": per_package,
        "content_hash": manifest["content_hash"], "build_seconds": manifest["build_seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", type=Path, default=HERE / "living_packages.txt")
    parser.add_argument("--after", default="2026-06-01")
    parser.add_argument("--before", default="2026-12-01")
    parser.add_argument("--max-modules", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", default="local,ray,local-warm")
    parser.add_argument("--limit", type=int, default=0, help="build only the first N list lines (all are looked up)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/execbench-living"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    extras = {"local": [], "ray": ["--no-cache", "--executor", "ray"], "local-warm": ["--no-cache"]}
    summary: dict = {"list": str(args.list), "window": [args.after, args.before], "limit": args.limit,
                     "max_modules_per_package": args.max_modules, "jobs": args.jobs, "runs": {}}
    for run in args.runs.split(","):
        out = args.out / run
        seconds = build(args.list, out, args, extras[run])
        summary["runs"][run] = {"wall_seconds": round(seconds, 1), **summarise(out)}
        print(json.dumps({run: {k: v for k, v in summary["runs"][run].items() if k != "per_package"}}), flush=True)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
