"""A living benchmark (issue 26): repo tasks from the releases of the last six months.

    python benchmarks/living.py [--list benchmarks/living_packages.txt] [--after 2026-06-01]
        [--before 2026-12-01] [--max-modules 1] [--jobs 2] [--runs local,ray,local-warm] [--limit N] [--out DIR]
        [--eval-sample N [--eval-run local] [--cutoff 2026-09-01] [--seed 0] [--eval-max-tokens 64]]

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
printed as JSON and written to ``OUT/summary.json`` (a later call on the same ``--out`` adds
its runs; ``--runs ''`` builds nothing).

``--eval-sample N`` then evaluates the offline default model (``execbench eval --model
local``) on N tasks of one run's dataset (seeded; spread over the packages in release
order) and writes ``execbench report --cutoff`` to ``OUT/report.html``: the contamination
view end to end; the summary's ``eval`` holds the sample's accuracy before and after the
cutoff and by release month, read from the report's per-sample table.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
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
    log = out.parent / f"{out.name}.log"
    with log.open("w", encoding="utf-8") as sink:  # streamed: a long build can be watched with tail -f
        proc = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        tail = log.read_text(encoding="utf-8")[-3000:]
        raise SystemExit(f"build failed ({proc.returncode}), {log}:\n{tail}")
    return seconds


def summarise(out: Path) -> dict:
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text(encoding="utf-8").splitlines()]
    window = manifest["settings"]["release_window"]
    from execbench.families.repo.preparation.packages import read_entries  # the manifest's keys are sorted: the file's order

    lines = [f"{name}=={version}" if version else name for name, version in read_entries(manifest["settings"]["sources"][0])]
    built_lines = lines[: manifest["settings"].get("limit") or None]  # --limit N built the first N lines
    releases = {name: r for name, r in window["packages"].items() if "version" in r and name in built_lines}
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
        "packages": len(window["packages"]),
        "with_release": sum(1 for r in window["packages"].values() if "version" in r),
        "built": manifest["candidates"], "built_with_release": len(releases),
        "with_new_tasks": sum(1 for p in per_package.values() if p["new_tasks"]),
        "tasks_before_diff": manifest["tasks"] + existed, "new_only_tasks": manifest["tasks"],
        "existed_before": existed, "rejected_by_stage": manifest["rejected_by_stage"],
        "rejected_by_reason": manifest["rejected_by_reason"],
        "package_rejections": dict(package_rejections), "per_package": per_package,
        "content_hash": manifest["content_hash"], "build_seconds": manifest["build_seconds"],
    }


def eval_sample(dataset: Path, size: int, seed: int) -> list[str]:
    """A seeded sample of ``size`` task ids spread over the packages: packages in release
    order, each package's tasks shuffled, dealt round-robin (so every month with tasks is
    in it before any package gives a second task)."""
    by_package: dict[str, list[str]] = {}
    dates: dict[str, str] = {}
    for line in (dataset / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        package = task["provenance"]["release"]["package"]
        by_package.setdefault(package, []).append(task["id"])
        dates[package] = task["provenance"]["release_date"]
    rng = random.Random(seed)
    queues = [rng.sample(ids, len(ids)) for _, ids in sorted(by_package.items(), key=lambda kv: (dates[kv[0]], kv[0]))]
    chosen: list[str] = []
    while len(chosen) < size and any(queues):
        for queue in queues:
            if queue and len(chosen) < size:
                chosen.append(queue.pop())
    return chosen


def literal_pattern(task_id: str) -> str:
    """``task_id`` as an ``fnmatch`` pattern matching only itself: Inspect matches
    ``--sample-id`` values with ``fnmatch``, so a parametrised test's ``[LRI]`` would be a
    character class and the task would be silently left out."""
    return re.sub(r"([][*?])", r"[\1]", task_id)


def run_logged(command: list[str], log: Path) -> float:
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        proc = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{command[3]} failed ({proc.returncode}), {log}:\n{log.read_text(encoding='utf-8')[-3000:]}")
    return time.perf_counter() - started


def evaluate(out: Path, args: argparse.Namespace) -> dict:
    """The offline default model on a sample of one run's dataset, then ``execbench report
    --cutoff``; accuracy before/after the cutoff read back from the report's per-sample table."""
    dataset = out / args.eval_run
    ids = eval_sample(dataset, args.eval_sample, args.seed)
    logs, html = out / "eval-logs", out / "report.html"
    cli = [sys.executable, "-m", "execbench.cli"]
    eval_seconds = run_logged([*cli, "eval", str(dataset), "--model", "local", "--log-dir", str(logs),
                               "--max-tokens", str(args.eval_max_tokens),
                               "--sample-id", json.dumps([literal_pattern(i) for i in ids])], out / "eval.log")
    run_logged([*cli, "report", str(logs), "-o", str(html), "--cutoff", args.cutoff, "--replicates", "1000",
                "--permutations", "1000"], out / "report.log")
    sides: dict[str, Counter] = {"before": Counter(), "after": Counter()}
    months: dict[str, Counter] = {}
    with html.with_suffix(".samples.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            correct = row["correct"].strip().lower() in ("true", "1", "1.0")
            side = sides["before" if row["release_date"] < args.cutoff else "after"]
            month = months.setdefault(row["release_date"][:7], Counter())
            for counter in (side, month):
                counter["n"] += 1
                counter["correct"] += correct
    return {"dataset": str(dataset), "sample": len(ids), "seed": args.seed, "cutoff": args.cutoff,
            "max_tokens": args.eval_max_tokens,
            "eval_seconds": round(eval_seconds, 1), "report": str(html),
            "before": dict(sides["before"]), "after": dict(sides["after"]),
            "by_month": {m: dict(c) for m, c in sorted(months.items())}}


def markdown(summary: dict) -> str:
    """The RESULTS tables of a summary: per package, rejections by stage, the runs' times, the sample."""
    runs = summary["runs"]
    first = runs.get("local") or next(iter(runs.values()))
    lines = ["| package | release (uploaded) | previous | tasks before the diff | new-only tasks |",
             "| --- | --- | --- | ---: | ---: |"]
    for name, p in sorted(first["per_package"].items(), key=lambda kv: (kv[1]["date"], kv[0])):
        lines.append(f"| {name} | {p['version']} ({p['date']}) | {p['previous'] or '–'} | "
                     f"{p['new_tasks'] + p['existed_before']} | {p['new_tasks']} |")
    lines += ["", "| rejection stage | count |", "| --- | ---: |"]
    lines += [f"| {stage} | {count:,} |" for stage, count in sorted(first["rejected_by_stage"].items(),
                                                                      key=lambda kv: -kv[1])]
    lines += ["", "| run | list lines built | packages with a release built | tasks | wall s | build s | content hash |",
              "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for run, r in runs.items():
        lines.append(f"| {run} | {r['built']} | {r['built_with_release']} | {r['new_only_tasks']} | "
                     f"{r['wall_seconds']} | {r['build_seconds']:.0f} | `{r['content_hash'][:19]}…` |")
    if "eval" in summary:
        e = summary["eval"]
        lines += ["", "| sample | tasks | correct |", "| --- | ---: | ---: |"]
        for side in ("before", "after"):
            lines.append(f"| released {side} {e['cutoff']} | {e[side].get('n', 0)} | {e[side].get('correct', 0)} |")
    return "\n".join(lines)


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
    parser.add_argument("--eval-sample", type=int, default=0,
                        help="evaluate the offline model on N tasks of a run's dataset (0: no evaluation)")
    parser.add_argument("--eval-run", default="local", help="the run whose dataset is sampled")
    parser.add_argument("--cutoff", default="2026-09-01", help="the report's --cutoff for the sample")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--eval-max-tokens", type=int, default=64,
                        help="the answer budget (a masked value is short; SmolLM2 rambles up to any budget)")
    parser.add_argument("--markdown", action="store_true", help="print OUT/summary.json's RESULTS tables and stop")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads((args.out / "summary.json").read_text(encoding="utf-8"))))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    extras = {"local": [], "ray": ["--no-cache", "--executor", "ray"], "local-warm": ["--no-cache"]}
    written = args.out / "summary.json"  # runs of an earlier call on the same --out are kept
    summary: dict = json.loads(written.read_text(encoding="utf-8")) if written.exists() else {"runs": {}}
    summary.update({"list": str(args.list), "window": [args.after, args.before],
                    "max_modules_per_package": args.max_modules, "jobs": args.jobs})
    for run in filter(None, args.runs.split(",")):
        out = args.out / run
        seconds = build(args.list, out, args, extras[run])
        summary["runs"][run] = {"wall_seconds": round(seconds, 1), "limit": args.limit, **summarise(out)}
        print(json.dumps({run: {k: v for k, v in summary["runs"][run].items() if k != "per_package"}}), flush=True)
        written.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if args.eval_sample:
        summary["eval"] = evaluate(args.out, args)
        written.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
