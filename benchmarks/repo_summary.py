"""Summarise a repo-family dataset for benchmarks/RESULTS.md.

    python benchmarks/repo_summary.py DATASET_DIR

Per library: tasks, rejections per stage (funnel), ESV/MCL/DFI mean and standard deviation
(tasks whose slicing succeeded), and the commonest reasons per funnel.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path


def main(directory: str) -> None:
    root = Path(directory)
    tasks = [json.loads(line) for line in open(root / "tasks.jsonl", encoding="utf-8")]
    rejected = [json.loads(line) for line in open(root / "rejected.jsonl", encoding="utf-8")]
    manifest = json.loads((root / "manifest.json").read_text())
    by_lib: dict[str, list[dict]] = defaultdict(list)
    for task in tasks:
        by_lib[task["prompt_fields"]["library"]].append(task)
    stages = sorted({r["stage"] for r in rejected})
    rej_lib: dict[str, Counter] = defaultdict(Counter)
    for r in rejected:
        rej_lib[r["candidate"].split("/", 1)[0].rsplit("-", 1)[0]][r["stage"]] += 1
    print(f"build_seconds {manifest['build_seconds']}, tasks {manifest['tasks']}, rejected {manifest['rejected']}")
    print("| library | tasks | " + " | ".join(f"rej. {s}" for s in stages) + " | ESV µ/σ | MCL µ/σ | DFI µ/σ | sliced |")
    print("| --- " * (len(stages) + 6) + "|")
    everything = []
    for lib in sorted(set(by_lib) | set(rej_lib)):
        rows = by_lib.get(lib, [])
        everything += rows
        print(f"| {lib} | {len(rows)} | " + " | ".join(str(rej_lib[lib][s]) for s in stages) + " | " + _metrics(rows) + " |")
    print(f"| all | {len(tasks)} | " + " | ".join(str(sum(rej_lib[lib][s] for lib in rej_lib)) for s in stages)
          + " | " + _metrics(everything) + " |")
    reasons = Counter((r["stage"], r["reason"].split(":")[0]) for r in rejected if r["stage"].startswith("dvp"))
    print("\nDVP reasons:", ", ".join(f"{s}/{k} {v}" for (s, k), v in reasons.most_common()))
    print("slicing:", Counter(t["provenance"]["slicing"][:40] for t in tasks).most_common(4))


def _metrics(rows: list[dict]) -> str:
    out = []
    sliced = [t for t in rows if t["metrics"].get("esv") is not None]
    for name in ("esv", "mcl", "dfi"):
        values = [t["metrics"][name] for t in sliced]
        out.append(f"{statistics.mean(values):.1f}/{statistics.pstdev(values):.1f}" if values else "-")
    return " | ".join(out) + f" | {len(sliced)}"


if __name__ == "__main__":
    main(sys.argv[1])
