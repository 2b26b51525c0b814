"""Does the repo grader agree with the test itself? (issue 12)

    python benchmarks/repo_grader_agreement.py DATASET [--library NAME] [--limit N] [--text-only] [--extra FILE] [--json OUT]

For every task of a repo dataset it makes candidate answers of six classes:

* ``oracle``: the stored answer;
* ``spelling``: the same value written differently (other quotes, reordered set/dict,
  a multi-line pretty-printed form, ``list(...)``/``tuple(...)``/``set(...)``/``dict(...)``
  of a literal, hex ints, exponent floats, spaced text answers);
* ``wrong``: values of the same type that differ (int +/- 1, the other bool, a dropped or
  added element, a changed constructor argument, a misspelt attribute);
* ``wrapper``: ``len(A)``, ``max(A)``, ``reversed(A)``, ``collections.deque(A)``;
* ``respelling``: another construction of a constructor answer's value (``OrderedSet('abrcd')``
  for ``OrderedSet(['a', 'b', 'r', 'c', 'd'])``, ``C([])`` for ``C()``, the bare list): the
  grader judges these by execution in the sandbox (issue 35, ``families/repo/grading/exec_grade.py``);
* ``alias``: the other names of the answer's object stored with the task;
* ``retyped``: the same number of another type (``2.0`` for ``2``, ``1`` for ``True``):
  Python's ``==`` accepts it, the grader is type-strict by design (the hint names the type,
  ``docs/repo-family.md``); reported on its own line, outside the matrix.

Each candidate is graded with ``execbench grade`` (a derived dataset, one task per
candidate), and substituted into the real test: a copy of the test function with the
masked operand replaced by the candidate is added to the test module (served by the
plugin, the file on disk untouched) and pytest runs it in the sandbox; the copy passing is
the test's verdict. The report is the confusion matrix grader x pytest, per class, and the
disagreements. It also checks that no stored answer holds the build's cache dir, home dir,
host name or user name.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import pprint
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from execbench.families.repo.build import DEFAULT_OPTIONS
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.verification.answers import (_same_type_variants, environment_dependent,
                                                          environment_patterns)
from execbench.families.repo.verification.runner import PytestReport, pytest_job, run_many
from execbench.sandbox.jobs import Job
from execbench.sources import repos

COPY = "__ebc"


# --- candidates ----------------------------------------------------------------------------

def _spellings(text: str, value: Any) -> list[str]:
    t = type(value)
    out = []
    if t is str and '"' not in value and "\\" not in value and value.isprintable():
        out.append(f'"{value}"')
    if t is int and not isinstance(value, bool):
        out.append(hex(value) if value >= 0 else f"-{hex(-value)}")
    if t is float:
        out.append("%.17e" % value)
    if t in (list, tuple, dict, set, frozenset) and value:
        out.append(pprint.pformat(value, width=12))
    if t is list:
        out.append(f"list({text})")
    if t is tuple:
        out.append(f"tuple({list(value)!r})")
    if t is set and value:
        items = sorted(value, key=repr)[::-1]
        out.append("{" + ", ".join(repr(v) for v in items) + "}")
        out.append(f"set({items!r})")
    if t is dict and value:
        out.append("{" + ", ".join(f"{k!r}: {v!r}" for k, v in reversed(list(value.items()))) + "}")
        out.append(f"dict({list(value.items())!r})")
    return out


def _text_candidates(text: str, aliases: list[list[str]]) -> tuple[list[str], list[str], list[str]]:
    """(spellings, aliases, wrong values) of a constant / attribute / constructor answer."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return [], [], []
    spell = [ast.unparse(tree).replace(",", " ,  ")] if "," in text else [f" {text} "]
    names = {n for group in aliases for n in group}
    alias_out = []
    head = tree.func if isinstance(tree, ast.Call) else tree
    head_text = ast.unparse(head)
    for group in aliases:
        if head_text in group:
            for other in group:
                if other != head_text:
                    alias_out.append(text.replace(head_text, other, 1))
    wrong = []
    if isinstance(tree, ast.Call):
        for i, arg in enumerate(tree.args):
            try:
                value = ast.literal_eval(arg)
            except (ValueError, SyntaxError, TypeError):
                continue
            for w in _same_type_variants(value)[:1]:
                changed = ast.parse(text, mode="eval").body
                changed.args[i] = ast.parse(repr(w), mode="eval").body
                wrong.append(ast.unparse(changed))
            break
    elif isinstance(tree, (ast.Attribute, ast.Name)) and not names & {text + "_x"}:
        wrong.append(text + "_x")
    wrong.append("None")
    return spell, alias_out, wrong


def _respellings(text: str) -> list[str]:
    """Other constructions of a constructor answer's value (issue 35): a single list or tuple
    argument of one-character strings as one string (``OrderedSet('abrcd')``), as a tuple, an
    empty one dropped (``C([])`` for ``C()``) or added (``C([])``, ``C('')``), the argument alone (a plain list
    the type's ``==`` may accept); the real test decides which of them pass."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(tree, ast.Call) or tree.keywords or len(tree.args) > 1:
        return []
    head = ast.unparse(tree.func)
    if not tree.args:
        return [f"{head}([])", f"{head}(())", "[]"]
    (arg,) = tree.args
    if not isinstance(arg, (ast.List, ast.Tuple)):
        return []
    try:
        items = ast.literal_eval(arg)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return []
    out = [f"{head}({tuple(items)!r})" if isinstance(arg, ast.List) else f"{head}({list(items)!r})", repr(list(items))]
    if not items:
        out.append(f"{head}()")
    elif all(isinstance(i, str) and len(i) == 1 for i in items):
        out.append(f"{head}({''.join(items)!r})")
    return out


def candidates(task: dict[str, Any]) -> list[tuple[str, str]]:
    """(class, text) pairs for one task."""
    answer = task["answer"]
    out: list[tuple[str, str]] = [("oracle", answer)]
    aliases = task["provenance"].get("answer_aliases") or []
    if task["answer_kind"] == "python-literal":
        try:
            value = ast.literal_eval(answer)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        out += [("spelling", s) for s in _spellings(answer, value)]
        out += [("wrong", repr(w)) for w in _same_type_variants(value)]
        if type(value) is int or type(value) is bool:
            out.append(("retyped", repr(float(value)) if type(value) is int else repr(int(value))))
        elif type(value) is float and value.is_integer() and abs(value) < 1e15:
            out.append(("retyped", repr(int(value))))
    elif task["answer_kind"] == "text":
        spell, alias, wrong = _text_candidates(answer, aliases)
        out += [("spelling", s) for s in spell] + [("alias", a) for a in alias] + [("wrong", w) for w in wrong]
        out += [("respelling", r) for r in _respellings(answer)]
    else:
        out.append(("wrong", f"({answer}) + 1"))
    out += [("wrapper", f"{f}({answer})") for f in ("len", "max", "reversed", "collections.deque")]
    seen, unique = set(), []
    for cls, text in out:
        if text not in seen:
            seen.add(text)
            unique.append((cls, text))
    return unique


# --- grading with the CLI ----------------------------------------------------------------

def grade(tasks: list[dict[str, Any]], cands: dict[str, list[tuple[str, str]]], work: Path) -> dict[tuple[str, int], bool]:
    derived = work / "derived"
    derived.mkdir(parents=True, exist_ok=True)
    with open(derived / "tasks.jsonl", "w", encoding="utf-8") as tf, \
            open(work / "answers.jsonl", "w", encoding="utf-8") as af:
        for task in tasks:
            for k, (_, text) in enumerate(cands[task["id"]]):
                head, arm = task["id"].rsplit("#", 1)
                tf.write(json.dumps({**task, "id": f"{head}~c{k}#{arm}"}) + "\n")
                af.write(json.dumps({"id": f"{head}~c{k}#{arm}", "response": text}) + "\n")
    subprocess.run([sys.executable, "-m", "execbench.cli", "grade", str(derived), "--answers",
                    str(work / "answers.jsonl"), "-o", str(work / "graded.jsonl"), "--json"],
                   check=True, stdout=subprocess.DEVNULL)
    out = {}
    for line in open(work / "graded.jsonl", encoding="utf-8"):
        r = json.loads(line)
        head, arm = r["id"].rsplit("#", 1)
        base, k = head.rsplit("~c", 1)
        out[(f"{base}#{arm}", int(k))] = bool(r["correct"])
    return out


# --- substituting into the real test -------------------------------------------------------

def _copy_function(source: str, function: A.TestFunction, assertion: A.Assertion, masked: int,
                   text: str, suffix: str) -> str:
    """The function's text (decorators included) renamed ``<name><suffix>`` with the masked
    operand replaced by ``text``."""
    first = function.firstlineno
    lines = source.splitlines(keepends=True)
    body = "".join(lines[first - 1:function.node.end_lineno])
    operand = A.Span.of(assertion.operands[masked])
    rel = A.Span(operand.lineno - first + 1, operand.col, operand.end_lineno - first + 1, operand.end_col)
    node = function.node
    name_line = node.lineno - first + 1
    name_col = len(lines[node.lineno - 1]) - len(lines[node.lineno - 1].lstrip()) + \
        (len("async def ") if isinstance(node, ast.AsyncFunctionDef) else len("def "))
    name = A.Span(name_line, name_col, name_line, name_col + len(node.name))
    return A.apply(body, [A.Splice(rel, A.pad(text, operand.lines)), A.Splice(name, node.name + suffix)])


@functools.lru_cache(maxsize=16)
def _functions(source: str) -> dict[tuple[str, int], A.TestFunction]:
    return A.test_functions(source)


def _group_job(job_id: str, repo: Any, test_file: str,
               items: list[tuple[dict[str, Any], int, str]]) -> tuple[Job, dict[str, tuple[str, int]]]:
    """One pytest run (a job) of the copies for ``items`` = (task, candidate index, text), and
    the copies' node ids → (task id, candidate index)."""
    inserts: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    keep, wanted = [], {}
    sources: dict[str, str] = {}
    for n, (task, k, text) in enumerate(items):
        f = task["prompt_fields"]
        path = repo.root / f["function_file"]
        source = sources.setdefault(str(path), path.read_text(encoding="utf-8"))
        fn = next(fn for (q, _), fn in _functions(source).items() if q == f["function"])
        assertion = next(a for a in fn.assertions if a.line == f["assertion_line"])
        masked = 0 if task["provenance"]["masked_side"] == "left" else 1
        suffix = f"{COPY}{n}"
        # a value built from the function's own qualified name names the copy in the copy
        text = text.replace(f"{fn.qualname}.<locals>", f"{fn.qualname}{suffix}.<locals>")
        inserts[str(path)][fn.node.end_lineno].append(_copy_function(source, fn, assertion, masked, text, suffix))
        base, _, params = f["test_id"].partition("[")
        node = base.rsplit("::", 1)
        copied = f"{node[0]}::{node[1]}{suffix}" + (f"[{params}" if params else "")
        keep.append(copied)
        wanted[copied] = (task["id"], k)
    served = {}
    for path, by_line in inserts.items():
        lines = sources[path].splitlines(keepends=True)
        for end in sorted(by_line, reverse=True):
            lines.insert(end, "".join("\n" + (c if c.endswith("\n") else c + "\n") for c in by_line[end]))
        served[path] = "".join(lines)
    job = pytest_job(job_id, repo, repo.root / test_file, served, trace=False, options=dict(DEFAULT_OPTIONS),
                     keep=keep, hash_seed=1)
    return job, wanted


def _verdicts(result: PytestReport, wanted: dict[str, tuple[str, int]]) -> dict[tuple[str, int], str]:
    verdicts: dict[tuple[str, int], str] = {}
    for record in result.records:
        key = wanted.get(record["nodeid"])
        if key is None:
            continue
        phases = record.get("phases", {})
        bad = [p["outcome"] for p in phases.values() if p["outcome"] != "passed"]
        verdicts[key] = "passed" if phases and not bad else bad[0] if bad else "not run"
    for key in wanted.values():
        verdicts.setdefault(key, f"not run ({result.reason})")
    return verdicts


def run_pytest(tasks: list[dict[str, Any]], cands: dict[str, list[tuple[str, str]]],
               isolate: set[tuple[str, int]] | None = None) -> dict[tuple[str, int], str]:
    """Verdict per (task id, candidate index): "passed" or the failing phase's outcome. All
    copies of a test module run in one pytest run; with ``isolate``, each of those copies
    runs alone (copies of one test share class state: networkx ``test_cycle_basis`` adds a
    cycle to the class's graph, so later copies in the same run see another graph)."""
    by_target: dict[tuple[str, str], list[tuple[dict[str, Any], int, str]]] = defaultdict(list)
    for task in tasks:
        f = task["prompt_fields"]
        for k, (_, text) in enumerate(cands[task["id"]]):
            if isolate is None or (task["id"], k) in isolate:
                by_target[(f["repo_spec"], f["test_file"])].append((task, k, text))
    verdicts: dict[tuple[str, int], str] = {}
    by_spec: dict[str, list[tuple[str, list[tuple[dict[str, Any], int, str]]]]] = defaultdict(list)
    for (spec, test_file), items in sorted(by_target.items(), key=lambda kv: kv[0]):
        by_spec[spec] += [(test_file, group) for group in ([items] if isolate is None else [[item] for item in items])]
    for spec, groups in by_spec.items():
        # the runs of one library share a sandbox: one job each, each in an emptied work dir
        repo = repos.prepare(spec)
        tool = next((t["provenance"].get("test_tool") for _, g in groups for t, _, _ in g), None)
        if tool and repo.config.test_deps and tool != repo.config.test_deps[0]:  # built under another pytest
            repo = repos.with_test_deps(repo, (tool, *repo.config.test_deps[1:]))
        jobs = [_group_job(str(n), repo, test_file, group) for n, (test_file, group) in enumerate(groups)]
        for (_, wanted), report in zip(jobs, run_many(repo, [job for job, _ in jobs])):
            verdicts.update(_verdicts(report, wanted))
    return verdicts


# --- report ------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--library", help="only the tasks of this library (prompt_fields.library)")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--extra", help="JSON lines of hand-written candidates: task (id), class, answer")
    ap.add_argument("--text-only", action="store_true",
                    help="only tasks whose answer is a constant/attribute/constructor text (issue 35)")
    args = ap.parse_args()
    tasks = [json.loads(line) for line in open(Path(args.dataset) / "tasks.jsonl", encoding="utf-8")]
    if args.library:
        tasks = [t for t in tasks if t["prompt_fields"].get("library") == args.library]
    if args.text_only:
        tasks = [t for t in tasks if t["answer_kind"] == "text"]
    tasks = tasks[:args.limit] if args.limit else tasks
    cands = {t["id"]: candidates(t) for t in tasks}
    if args.extra:  # hand-written candidates: {"task": id, "class": ..., "answer": text} per line
        extra = [json.loads(line) for line in open(args.extra, encoding="utf-8") if line.strip()]
        for e in extra:
            if e["task"] in cands and e["answer"] not in {text for _, text in cands[e["task"]]}:
                cands[e["task"]].append((e["class"], e["answer"]))
    with tempfile.TemporaryDirectory(prefix="repo-agreement-") as work:
        graded = grade(tasks, cands, Path(work))
    verdicts = run_pytest(tasks, cands)
    # every copy whose verdict disagrees with the grader runs again alone, in a fresh pytest
    disagreeing = {(t["id"], k) for t in tasks for k, (cls, _) in enumerate(cands[t["id"]])
                   if cls != "retyped" and graded[(t["id"], k)] != (verdicts.get((t["id"], k)) == "passed")}
    rerun = run_pytest(tasks, cands, isolate=disagreeing) if disagreeing else {}
    changed = sum(1 for key, v in rerun.items() if v != verdicts.get(key))
    verdicts.update(rerun)
    matrix: Counter = Counter()
    per_class: dict[str, Counter] = defaultdict(Counter)
    disagree = []
    for task in tasks:
        for k, (cls, text) in enumerate(cands[task["id"]]):
            g = graded[(task["id"], k)]
            v = verdicts.get((task["id"], k), "missing")
            p = v == "passed"
            per_class[cls][(g, p)] += 1
            if cls == "retyped":
                continue
            matrix[(g, p)] += 1
            if g != p:
                disagree.append({"task": task["id"], "class": cls, "candidate": text[:120], "grader": g,
                                 "pytest": v, "answer": task["answer"][:120]})
    env_hits = []
    repos_seen: dict[str, Any] = {}
    for task in tasks:
        spec = task["prompt_fields"]["repo_spec"]
        if spec not in repos_seen:
            repos_seen[spec] = environment_patterns(repos.prepare(spec))
        where = environment_dependent([task["answer"]], repos_seen[spec])
        if where:
            env_hits.append((task["id"], where))
    outcomes = Counter(verdicts.get((t["id"], k), "missing") for t in tasks for k in range(len(cands[t["id"]])))
    total = sum(matrix.values())
    passing = matrix[(True, True)] + matrix[(False, True)]
    print(f"tasks {len(tasks)}, candidates {total} (+{sum(per_class['retyped'].values())} retyped); "
          f"pytest outcomes: {dict(outcomes)}; {len(disagreeing)} disagreeing copies re-run alone, "
          f"{changed} verdicts changed")
    print("| | pytest passes | pytest fails |\n| --- | --- | --- |")
    print(f"| grader correct | {matrix[(True, True)]} | {matrix[(True, False)]} |")
    print(f"| grader wrong | {matrix[(False, True)]} | {matrix[(False, False)]} |")
    print(f"grader-correct answers pytest rejects: {matrix[(True, False)]}; pytest-passing answers the grader "
          f"rejects: {matrix[(False, True)]} of {passing} ({100 * matrix[(False, True)] / max(passing, 1):.2f}%)")
    print("\n| class | candidates | both correct | grader only | pytest only | both wrong |\n| --- | --- | --- | --- | --- | --- |")
    for cls in ("oracle", "spelling", "respelling", "alias", "wrong", "wrapper", "retyped"):
        c = per_class.get(cls, Counter())
        n = sum(c.values())
        print(f"| {cls} | {n} | {c[(True, True)]} | {c[(True, False)]} | {c[(False, True)]} | {c[(False, False)]} |")
    oracle_fail = [d for d in disagree if d["class"] == "oracle"]
    print(f"\nstored answers failing their real test: {len(oracle_fail)}; answers holding the build's "
          f"environment: {len(env_hits)}")
    if disagree:
        print("\ndisagreements:")
        for d in disagree[:60]:
            print(f"  [{d['class']}] {d['task'].split('::')[-1]}: {d['candidate']!r} grader={d['grader']} "
                  f"pytest={d['pytest']} (answer {d['answer']!r})")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({
            "tasks": len(tasks), "candidates": total, "pytest_outcomes": dict(outcomes), "rerun_alone": len(disagreeing), "rerun_changed": changed,
            "matrix": {f"grader_{'correct' if g else 'wrong'}/pytest_{'pass' if p else 'fail'}": n
                       for (g, p), n in matrix.items()},
            "per_class": {cls: {f"{g}/{p}": n for (g, p), n in c.items()} for cls, c in per_class.items()},
            "disagreements": disagree, "environment": env_hits}, indent=1))


if __name__ == "__main__":
    main()
