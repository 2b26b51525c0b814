"""What a change of the repo leak gate and masking did to a dataset (issue 35).

    python benchmarks/repo_leak_diff.py OLD_DATASET NEW_DATASET

Two builds of the same package (e.g. one with main's code, one with a branch's, both
``--no-cache`` under the same ``EXECBENCH_CHECK_SEEDS``): tasks per build, leak rejections by
reason, every leak rejection only the new build has (with the place it names), every task whose
shown test source changed (the lines masked), and the tasks only one build has.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections import Counter
from pathlib import Path


def _load(directory: str) -> tuple[dict, list]:
    tasks = {}
    for line in open(Path(directory) / "tasks.jsonl", encoding="utf-8"):
        t = json.loads(line)
        tasks[(t["source_id"].split("/", 1)[1], t["prompt_fields"]["assertion_line"])] = t
    rejected = [json.loads(line) for line in open(Path(directory) / "rejected.jsonl", encoding="utf-8")]
    return tasks, rejected


def main() -> None:
    old, rold = _load(sys.argv[1])
    new, rnew = _load(sys.argv[2])
    print(f"tasks: old {len(old)}, new {len(new)}")

    def leaks(rows: list) -> dict:
        return dict(Counter(" ".join(r["reason"].split(" ")[:2]) for r in rows if r["stage"] == "leak"))

    print(f"leak rejections: old {leaks(rold)}, new {leaks(rnew)}")
    seen = {(r["candidate"], r.get("line")) for r in rold if r["stage"] == "leak"}
    for r in rnew:
        if r["stage"] == "leak" and (r["candidate"], r.get("line")) not in seen:
            print(f"  new leak: {r['candidate'].split('::')[-1]}: {r['reason']} | {r.get('place', '')[:100]}")
    changed = 0
    for key, task in sorted(new.items()):
        before = old.get(key)
        if before and before["prompt_fields"]["test_source"] != task["prompt_fields"]["test_source"]:
            changed += 1
            diff = [line.strip()[:90] for line in difflib.unified_diff(
                before["prompt_fields"]["test_source"].splitlines(), task["prompt_fields"]["test_source"].splitlines(),
                lineterm="", n=0) if line[:1] == "+" and not line.startswith("+++")]
            print(f"  masked: {key[0].split('::')[-1]} L{key[1]} (answer {task['answer'][:60]}): {' || '.join(diff[:3])}")
    print(f"prompts changed: {changed}; tasks only in old: {len(set(old) - set(new))}, only in new: "
          f"{len(set(new) - set(old))}")


if __name__ == "__main__":
    main()
