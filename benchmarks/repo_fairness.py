"""Are repo tasks fair on any package? (issue 23)

    python benchmarks/repo_fairness.py DATASET [DATASET ...] [--check N] [--json OUT]

Build each dataset first, one package per dataset, e.g.::

    execbench build repo pypi:more-itertools==10.8.0 -o runs/more-itertools -j 2
    execbench build repo default -o runs/default -j 2

Per library it prints: tasks; rejections by stage; the fairness gates' rejections
(``answer_visible: <where>`` = leak gate, ``context_too_large`` = hidden context over the
budget, ``trivial`` and ``assertion_score`` = per-assertion difficulty); modules pytest could
not collect (``collection_failed``) and why a library has 0 tasks; the test environment the
manifest records; the distribution of the per-assertion Score of admitted tasks; and an
independent text check of every admitted task's rendered prompts (direct and agent): does the
answer's text (three or more characters, not a bare True/False/None) appear in them
outside the blank? The same text check runs on the agent's masked copies of the test
modules (``prompt_fields.agent_copies``: what ``--mode agent`` reads instead of the test file;
a copy missing from the cache counts as ``no copy``). Context from other files: tasks whose
prompt carries conftest.py fixtures or helpers of other test modules (``# from FILE`` in the
carried definitions) and ``context_missing`` rejections by kind (fixture, helper, test module);
and what the agent's browser refuses beyond the test module, per task: the ``.py`` files of the
tree it will not read because they hold the original's text or a line the masking changed
(``refused .py files per task``: the price of closing every route to the answer).

``--band LO HI N`` prints N rejections per dataset (seeded sample) whose per-assertion Score
lies in [LO, HI): what a lower ``assertion_threshold`` would admit.

``--check N`` also runs ``benchmarks/repo_grader_agreement.py`` on the first N tasks of
each library (stored answer substituted into the real test must pass; same-type wrong values
must fail; pytest in the sandbox) and reports its oracle and wrong-value rows.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from execbench.dataset import Task
from execbench.families.repo import prompt
from execbench.families.repo.fairness import agent_copy

GATES = ("answer_visible", "context_missing", "context_too_large", "trivial", "assertion_score", "collection_failed",
         "no_tests_collected")


def _library(candidate: str) -> str:
    return candidate.split("/", 1)[0].rsplit("-", 1)[0]


def _visible_by_text(task: dict[str, Any]) -> bool:
    """The answer's text in a rendered prompt (direct or agent), outside the question's blank."""
    answer = task["answer"].strip()
    if len(answer) < 3 or answer in ("True", "False", "None"):
        return False
    t = Task.from_json(task)
    for variant in ("direct", "agent"):
        text = prompt.render(t, variant).messages[0].content
        if re.search(r"(?<![\w.])" + re.escape(answer) + r"(?![\w])", text):
            return True
    return False


def _visible_in_copy(task: dict[str, Any]) -> bool | None:
    """The answer's text in an agent copy of the task's modules (None: no loadable copy)."""
    refs = task["prompt_fields"].get("agent_copies") or {}
    answer = task["answer"].strip()
    try:
        copies = [agent_copy.load(ref) for ref in refs.values()]
    except (OSError, ValueError):
        return None
    if not copies:
        return None
    if len(answer) < 3 or answer in ("True", "False", "None"):
        return False
    return any(re.search(r"(?<![\w.])" + re.escape(answer) + r"(?![\w])", text) for text in copies)


def _refused_files(task: dict[str, Any], cache: dict[str, list[Path]]) -> int:
    """``.py`` files of the tree (other than the task's own modules) the agent may not read."""
    from execbench.families.repo.agent_tools import RepoBrowser, ToolError

    t = Task.from_json(task)
    browser = RepoBrowser.for_task(t)
    root = str(browser.root)
    if root not in cache:
        cache[root] = sorted(browser.root.rglob("*.py"))
    own = {t.prompt_fields["test_file"], t.prompt_fields.get("function_file")}
    refused = 0
    for path in cache[root]:
        rel = path.relative_to(browser.root).as_posix()
        if rel in own:
            continue
        try:
            browser.read_file(rel, 1, 1)
        except ToolError as exc:
            refused += "contains the test" in str(exc)
    return refused


def _quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    values = sorted(values)
    q = [values[int(p * (len(values) - 1))] for p in (0.0, 0.25, 0.5, 0.75, 1.0)]
    return "/".join(f"{v:.2f}" for v in q)


def summarise(directory: Path) -> dict[str, Any]:
    tasks = [json.loads(line) for line in open(directory / "tasks.jsonl", encoding="utf-8")]
    rejected = [json.loads(line) for line in open(directory / "rejected.jsonl", encoding="utf-8")]
    manifest = json.loads((directory / "manifest.json").read_text())
    libs: dict[str, dict[str, Any]] = defaultdict(lambda: {"tasks": 0, "stages": Counter(), "gates": Counter(),
                                                           "leaks": Counter(), "scores": [], "visible": 0,
                                                           "messages": Counter(), "in_copy": 0, "no_copy": 0, "tasks_with_copy": 0,
                                                           "outside": Counter(), "missing": Counter(),
                                                           "refused": []})
    trees: dict[str, list[Path]] = {}
    for task in tasks:
        lib = libs[task["prompt_fields"]["library"]]
        lib["tasks"] += 1
        score = task["metrics"].get("assertion_score")
        if isinstance(score, (int, float)):
            lib["scores"].append(score)
        if _visible_by_text(task):
            lib["visible"] += 1
        if task["prompt_fields"].get("agent_copies"):
            lib["refused"].append(_refused_files(task, trees))
        in_copy = _visible_in_copy(task)
        lib["in_copy" if in_copy else "no_copy" if in_copy is None else "tasks_with_copy"] += 1
        for path in re.findall(r"^# from (\S+)$", task["prompt_fields"].get("test_definitions", ""), re.M):
            lib["outside"]["conftest" if path.endswith("conftest.py") else "other test module"] += 1
    for r in rejected:
        lib = libs[_library(r["candidate"])]
        lib["stages"][r["stage"]] += 1
        head = r["reason"].split(":", 1)[0]
        if head in GATES:
            lib["gates"][head] += 1
        if head == "answer_visible":
            lib["leaks"][r["reason"].split(":", 1)[1].strip()] += 1
        if head == "context_missing":
            lib["missing"][r["reason"].split(":", 1)[1].split()[0]] += 1
        if head in ("collection_failed", "no_tests_collected"):
            lib["messages"][r["reason"][:160]] += 1
    return {"manifest": manifest, "libraries": libs}


def agreement(directory: Path, library: str, limit: int) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        proc = subprocess.run([sys.executable, str(Path(__file__).parent / "repo_grader_agreement.py"),
                               str(directory), "--library", library, "--limit", str(limit), "--json", out.name],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return {"error": (proc.stderr or proc.stdout)[-500:]}
        return json.loads(Path(out.name).read_text() or "{}")


def band_sample(datasets: list[str], low: float, high: float, n: int) -> None:
    """Seeded sample of ``assertion_score`` rejections with a Score in [low, high) per dataset."""
    import random

    rng = random.Random(23)
    for d in datasets:
        rows = []
        for line in open(Path(d) / "rejected.jsonl", encoding="utf-8"):
            r = json.loads(line)
            m = re.match(r"assertion_score: ([\d.]+)", r.get("reason", ""))
            if m and low <= float(m.group(1)) < high:
                rows.append(r)
        print(f"{Path(d).name}: {len(rows)} in [{low}, {high})")
        for r in rng.sample(rows, min(n, len(rows))):
            print(f"  {r['reason'][17:22]} | {r['assertion'][:100]!r} | answer {str(r.get('answer'))[:40]} | "
                  f"{r['candidate'].split('::')[-1][:60]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--check", type=int, default=0, help="substitution check on the first N tasks per library")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--band", nargs=3, metavar=("LO", "HI", "N"), help="sample N assertion_score rejections in [LO, HI)")
    args = ap.parse_args()
    if args.band:
        band_sample(args.datasets, float(args.band[0]), float(args.band[1]), int(args.band[2]))
        return
    rows = []
    report: dict[str, Any] = {}
    for d in args.datasets:
        directory = Path(d)
        summary = summarise(directory)
        manifest = summary["manifest"]
        envs = manifest.get("settings", {}).get("repositories", {})
        for name, lib in sorted(summary["libraries"].items()):
            env = next((v for k, v in envs.items() if k.rsplit("-", 1)[0] == name), {})
            check = agreement(directory, name, args.check) if args.check and lib["tasks"] else {}
            classes = check.get("per_class", {})
            oracle, wrong = classes.get("oracle", {}), classes.get("wrong", {})
            entry = {
                "tasks": lib["tasks"], "rejected_by_stage": dict(lib["stages"]), "gates": dict(lib["gates"]),
                "answer_visible": dict(lib["leaks"]), "assertion_score_quantiles": _quantiles(lib["scores"]),
                "answer_text_in_prompt": lib["visible"], "answer_text_in_agent_copy": lib["in_copy"],
                "no_agent_copy": lib["no_copy"], "carried_from_other_files": dict(lib["outside"]),
                "context_missing": dict(lib["missing"]), "refused_py_files_per_task": _quantiles(lib["refused"]),
                "zero_tasks_reason": manifest.get("zero_tasks_reason"),
                "collection_messages": dict(lib["messages"].most_common(3)), "test_environment": env,
                "substitution": {"tasks": check.get("tasks"),
                                 "oracle_pass": oracle.get("True/True", 0) + oracle.get("False/True", 0),
                                 "oracle_fail": oracle.get("True/False", 0) + oracle.get("False/False", 0),
                                 "wrong_fail": wrong.get("False/False", 0) + wrong.get("True/False", 0),
                                 "wrong_pass": wrong.get("False/True", 0) + wrong.get("True/True", 0)}
                if check and "error" not in check else check or None,
            }
            report[name] = entry
            rows.append((name, entry, manifest.get("build_seconds")))
    print("| library | tasks | rejected | answer_visible (where) | context_missing | context_too_large | trivial "
          "| assertion_score | collection_failed | answer text in prompt | answer text in agent copy "
          "| assertion Score min/q1/med/q3/max | build s |")
    print("| --- " * 13 + "|")
    for name, e, seconds in rows:
        leaks = ", ".join(f"{k} {v}" for k, v in sorted(e["answer_visible"].items())) or "0"
        g = e["gates"]
        print(f"| {name} | {e['tasks']} | {sum(e['rejected_by_stage'].values())} | {g.get('answer_visible', 0)} "
              f"({leaks}) | {g.get('context_missing', 0)} | {g.get('context_too_large', 0)} | {g.get('trivial', 0)} "
              f"| {g.get('assertion_score', 0)} | {g.get('collection_failed', 0)} | {e['answer_text_in_prompt']} "
              f"| {e['answer_text_in_agent_copy']} | {e['assertion_score_quantiles']} | {seconds} |")
    print()
    for name, e, _ in rows:
        stages = ", ".join(f"{k} {v}" for k, v in sorted(e["rejected_by_stage"].items()))
        print(f"- {name}: rejections by stage: {stages}")
        if e["tasks"] == 0:
            print(f"  - 0 tasks: {e['zero_tasks_reason']}")
        print(f"  - agent copies: answer text in {e['answer_text_in_agent_copy']} of them, no copy for "
              f"{e['no_agent_copy']} tasks; carried from other files (tasks): {e['carried_from_other_files'] or 0}; "
              f"context_missing: {e['context_missing'] or 0}; refused .py files per task (min/q1/med/q3/max): "
              f"{e['refused_py_files_per_task']}")
        for message, n in e["collection_messages"].items():
            print(f"  - {n}x {message}")
        if e["test_environment"]:
            env = e["test_environment"]
            print(f"  - test environment: {env.get('resolved')} (declared in {env.get('declared_in')})")
        if e["substitution"]:
            print(f"  - substitution check: {e['substitution']}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
