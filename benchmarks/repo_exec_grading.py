"""What grading a repo answer by execution costs (issue 35).

    python benchmarks/repo_exec_grading.py DATASET [--limit N] [--json OUT]

For every task whose answer is a constructor call (``answer_kind == "text"`` with a call),
it grades the stored answer (literal fast path) and its respellings (``OrderedSet('abrcd')``
for ``OrderedSet(['a', 'b', 'r', 'c', 'd'])``, ``C([])`` for ``C()``, the bare list:
``repo_grader_agreement._respellings``), and the answer with one argument changed
(``repo_grader_agreement._text_candidates``) with ``compare.grade_answer``, once with execution
(``families/repo/grading/exec_grade.py``: one sandbox job per distinct answer the literal rules call
wrong; the verdict cache is cleared before each answer so every one pays its sandbox) and once
literal-only (``EXECBENCH_REPO_EXEC_GRADING=0``). It prints seconds per answer (median, p90,
max, total) for both modes, and how the executed answers came out (``details["execution"]``).
The answers that started a sandbox are also timed literal-only, so the per-answer cost of the
sandboxed evaluation is printed paired (median extra seconds, the ratio). ``--literal-tasks N``
(default 50) grades the oracle and one wrong value of the first N tasks with a plain-literal
answer with execution on: the fast path, which must start no sandbox (counted). ``--rounds R``
times every answer R times (median). The venvs of the dataset's packages must be in the build
cache (``EXECBENCH_CACHE_DIR`` of the build). Time it on an idle machine: the figures are
wall-clock seconds.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from repo_grader_agreement import _respellings, _text_candidates

from execbench.dataset import read_tasks
from execbench.families.repo.grading import exec_grade
from execbench.families.repo.grading.compare import grade_answer


def _is_call(text: str) -> bool:
    try:
        return isinstance(ast.parse(text, mode="eval").body, ast.Call)
    except SyntaxError:
        return False


def _timed(task, answer: str, execute: bool, rounds: int = 1) -> tuple[float, bool, str]:
    """Median seconds of ``rounds`` gradings (the verdict cache cleared before each), the verdict,
    how it was reached."""
    if execute:
        os.environ.pop(exec_grade.SWITCH, None)
    else:
        os.environ[exec_grade.SWITCH] = "0"
    times = []
    for _ in range(max(1, rounds)):
        exec_grade.clear_caches()
        start = time.perf_counter()
        score = grade_answer(task, answer)
        times.append(time.perf_counter() - start)
    return statistics.median(times), score.correct, str(score.details.get("execution", "literal"))


def _wrong_literal(answer: str) -> str | None:
    """A wrong value of a plain-literal answer (int + 1, a string with a character added, a
    container without its last element), or None."""
    try:
        value = ast.literal_eval(answer)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, bool) or value is None:
        return repr(not value)
    if isinstance(value, (int, float)):
        return repr(value + 1)
    if isinstance(value, str):
        return repr(value + "x")
    if isinstance(value, (list, tuple)) and value:
        return repr(type(value)(value[:-1]))
    return None


def _literal_fast_path(path: Path, n: int, rounds: int) -> list[dict]:
    """The oracle and one wrong value of the first ``n`` plain-literal tasks, graded with execution
    on: what the fast path costs, and whether any of them started a sandbox (none should)."""
    rows = []
    literal = [t for t in read_tasks(path) if t.answer_kind == "python-literal"][:n]
    for task in literal:
        for cls, text in (("oracle", task.answer), ("wrong", _wrong_literal(task.answer))):
            if text is None:
                continue
            seconds, ok, how = _timed(task, text, True, rounds)
            rows.append({"task": task.id, "class": cls, "seconds": seconds, "correct": ok, "executed": how})
    return rows


def _summary(seconds: list[float]) -> str:
    if not seconds:
        return "n=0"
    ordered = sorted(seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"n={len(seconds)} median={statistics.median(seconds):.3f}s p90={p90:.3f}s "
            f"max={ordered[-1]:.3f}s total={sum(seconds):.1f}s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--literal-tasks", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    tasks = [t for t in read_tasks(Path(args.dataset)) if t.answer_kind == "text" and _is_call(t.answer)]
    tasks = tasks[:args.limit] if args.limit else tasks
    rows = []
    for task in tasks:
        cands = [("oracle", task.answer)] + [("respelling", r) for r in _respellings(task.answer)]
        cands += [("wrong", w) for w in _text_candidates(task.answer, [])[2] if w != "None"][:1]
        for cls, text in cands:
            t_exec, ok_exec, how = _timed(task, text, True, args.rounds)
            t_lit, ok_lit, _ = _timed(task, text, False, args.rounds)
            rows.append({"task": task.id, "class": cls, "answer": text[:120], "executed": how,
                         "seconds_exec": t_exec, "seconds_literal": t_lit, "correct_exec": ok_exec,
                         "correct_literal": ok_lit})
    os.environ.pop(exec_grade.SWITCH, None)
    sandboxed = [r for r in rows if r["executed"] not in ("literal", "unavailable", "refused")]
    print(f"tasks with a constructor answer: {len(tasks)}; answers graded: {len(rows)}; "
          f"judged in the sandbox: {len(sandboxed)}")
    print(f"with execution, answers that started a sandbox: {_summary([r['seconds_exec'] for r in sandboxed])}")
    print(f"with execution, answers the literal path decided: "
          f"{_summary([r['seconds_exec'] for r in rows if r not in sandboxed])}")
    print(f"literal-only, all answers: {_summary([r['seconds_literal'] for r in rows])}")
    if sandboxed:
        extra = [r["seconds_exec"] - r["seconds_literal"] for r in sandboxed]
        ratio = statistics.median(r["seconds_exec"] / max(r["seconds_literal"], 1e-6) for r in sandboxed)
        print(f"the same answers literal-only: {_summary([r['seconds_literal'] for r in sandboxed])}")
        print(f"per sandboxed answer: median extra {statistics.median(extra):.3f}s, median ratio {ratio:.0f}x")
    fast = _literal_fast_path(Path(args.dataset), args.literal_tasks, args.rounds)
    started = [r for r in fast if r["executed"] not in ("literal", "refused", "unavailable")]
    print(f"plain-literal answers with execution on (fast path): {_summary([r['seconds'] for r in fast])}; "
          f"started a sandbox: {len(started)}")
    outcomes = Counter((r["class"], r["executed"], r["correct_exec"]) for r in rows)
    for (cls, how, ok), n in sorted(outcomes.items()):
        print(f"  {cls:10} {how:20} correct={ok!s:5} {n}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"constructor": rows, "literal": fast}, indent=1))


if __name__ == "__main__":
    main()
