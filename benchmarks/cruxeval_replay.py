"""CRUXEval's published generations replayed through execbench (used by ``benchmarks/replay.py --cruxeval``).

``../shared/reference/cruxeval/qwen2.5-coder-1.5b-base.{output,input}-cot.generations.json``
(``sample_K`` -> [prompt + generation]) become one replay file per arm of an ``execbench build cruxeval
cruxeval --set arms=output-prediction,input-prediction`` dataset (the reply is the first
generation's continuation after the prompt, as ``cruxeval_agreement.py`` takes it; problems the build has no task for, ``sample_344`` and ``sample_364`` of the input arm,
whose inputs are lambdas, are left out and counted), replayed with ``--variant cruxeval``; the
report's CRUXEval table (C/N per arm) is compared with the published pass@1 (the scored files'
``pass_at_1``, over 800 problems).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cruxeval_agreement import continuation

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / ".." / "shared" / "reference" / "cruxeval"
MODEL = "qwen2.5-coder-1.5b-base"
ARMS = {"output": "output-prediction", "input": "input-prediction"}
PROBLEMS = 800
TOLERANCE = 0.51  # points: the input arm differs on 4 problems whose f calls str.removeprefix/removesuffix (CRUXEval scored them under Python 3.8: docs/cruxeval.md): 0.5


def execbench(*args: str) -> None:
    subprocess.run([sys.executable, "-c", "from execbench.cli import main; main()", *args], check=True)


def replay_cruxeval(out: Path, logs: Path, jobs: int) -> dict[str, float]:
    timings: dict[str, float] = {}
    dataset = out / "cruxeval"
    started = time.perf_counter()
    if not (dataset / "tasks.jsonl").is_file():
        execbench("build", "cruxeval", "cruxeval", "-o", str(dataset), "--set", "arms=output-prediction,input-prediction",
                  "-j", str(jobs))
    timings["cruxeval build"] = time.perf_counter() - started
    ids = {json.loads(line)["id"] for line in (dataset / "tasks.jsonl").read_text().splitlines()}
    started = time.perf_counter()
    lines = []
    for mode, arm in ARMS.items():
        generations = json.loads((REFERENCE / f"{MODEL}.{mode}-cot.generations.json").read_text())
        kept = [{"id": f"cruxeval/cruxeval/{key}#{arm}", "response": continuation(replies[0])}
                for key, replies in generations.items()]
        dropped = [line["id"] for line in kept if line["id"] not in ids]
        lines += [line for line in kept if line["id"] in ids]
        print(f"CRUXEval {mode}: {len(generations)} generations, {len(dropped)} without a task: {', '.join(dropped)}")
    path = out / "replies" / f"{MODEL}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    execbench("eval", str(dataset), "--model", f"replay/{path}", "--variant", "cruxeval", "--log-dir", str(logs),
              "--display", "none")
    timings["cruxeval replay"] = time.perf_counter() - started
    return timings


def compare_cruxeval(tables: list[dict]) -> int:
    """Print the report's pass@1 per arm beside the published one; the number of arms off by more
    than :data:`TOLERANCE` points (pass@1 over 800 problems: a problem without a task counts wrong)."""
    entry = next((t for t in tables if t["title"].startswith("Accuracy by arm (one reply per task")), None)
    if entry is None:
        print("CRUXEval: no CRUXEval table in the report")
        return 1
    rows = {row["Arm"]: row for row in (dict(zip(entry["columns"], r)) for r in entry["rows"])
            if str(row["Setting"]).startswith(MODEL)}
    failures = 0
    print("\nCRUXEval pass@1 (report C/N over its tasks; over 800 problems; published)")
    for mode, arm in ARMS.items():
        published = json.loads((REFERENCE / f"{MODEL}.{mode}-cot.scored.json").read_text())["pass_at_1"]
        row = rows.get(arm)
        if row is None:
            print(f"  {arm}: missing from the report")
            failures += 1
            continue
        over_800 = row["C/N %"] * row["N"] / PROBLEMS
        off = abs(over_800 - published)
        failures += off > TOLERANCE
        print(f"  {arm:18} {row['C/N %']:.3f} over {row['N']}; {over_800:.3f} over {PROBLEMS}; published {published:.3f}"
              f"{'' if off <= TOLERANCE else '  X'}")
    return failures
