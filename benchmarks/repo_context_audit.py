"""Hidden context in built repo datasets, judged from the prompt text alone (issue 35).

    python benchmarks/repo_context_audit.py DATASET [DATASET ...] [--examples N]

For every task, reads only what the model is shown (``test_source``, ``test_context``,
``test_definitions``) and counts the task as having *hidden context* when the test function:

* reads ``self.X`` / ``cls.X`` that it does not assign itself, that is no ``unittest.TestCase``
  API, and that nothing shown defines (no ``def X``, ``X = ...``, ``<x>.X = ...`` or
  ``setattr(..., "X", ...)`` in the shown text), itself or in a carried method (a helper the
  test calls through ``self``, a setup method: ``attribute X (in HELPER)``); or
* takes a fixture argument whose definition (``def NAME`` or ``name="NAME"``) is not shown
  and that pytest itself does not provide.

This is independent of the builder's own check (``families/repo/fairness/touched.py``): a static
reading of the prompt, as a reader would do it. Prints per dataset: tasks, tasks with hidden
context (attribute / fixture), the most frequent hidden names, and examples.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import unittest
from collections import Counter
from pathlib import Path

PYTEST_FIXTURES = {"request", "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "monkeypatch", "capsys",
                   "capsysbinary", "capfd", "capfdbinary", "caplog", "recwarn", "pytestconfig", "cache",
                   "record_property", "record_testsuite_property", "record_xml_attribute", "doctest_namespace",
                   "testdir", "pytester", "subtests"}
TESTCASE_API = set(dir(unittest.TestCase))


def _function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The question's function: the one holding ``# Question`` (the masked text parses with ``___``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    line = next((i for i, text in enumerate(source.splitlines(), 1) if "# Question" in text), None)
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and line is not None \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def _defined(shown: str, name: str) -> bool:
    n = re.escape(name)
    return bool(re.search(rf"(def\s+{n}\b|^\s*{n}\s*[:=]|\.{n}\s*=[^=]|setattr\([^)]*['\"]{n}['\"]|"
                          rf"name\s*=\s*['\"]{n}['\"])", shown, re.M))


def _carried_methods(definitions: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Methods among the carried definitions (first argument ``self``/``cls``): the test class's
    helpers and setup methods, whose ``self`` is the test's instance."""
    try:
        tree = ast.parse(definitions)
    except SyntaxError:
        return []
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.args.args and n.args.args[0].arg in ("self", "cls")]


def hidden(task: dict) -> list[str]:
    fields = task["prompt_fields"]
    source = fields["test_source"]
    shown = "\n".join([source, fields.get("test_context", ""), fields.get("test_definitions", "")])
    node = _function(source)
    if node is None:
        return []
    out = []
    own = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) \
                and n.value.id in ("self", "cls") and n.attr not in own and n.attr not in TESTCASE_API \
                and not _defined(shown, n.attr):
            out.append(f"attribute {n.attr}")
    for helper in _carried_methods(fields.get("test_definitions", "")):  # helpers the test calls through self
        for n in ast.walk(helper):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) \
                    and n.value.id in ("self", "cls") and n.attr not in TESTCASE_API and not _defined(shown, n.attr):
                out.append(f"attribute {n.attr} (in {helper.name})")
    params = set(re.findall(r"parametrize\(\s*(?:#[^\n]*\n\s*)*['\"]([^'\"]+)['\"]", shown))
    named = {p.strip() for group in params for p in group.split(",")}
    for arg in [a.arg for a in node.args.args]:
        if arg not in ("self", "cls") and arg not in PYTEST_FIXTURES and arg not in named \
                and not _defined(shown, arg):
            out.append(f"fixture {arg}")
    return sorted(set(out))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--examples", type=int, default=3)
    args = parser.parse_args()
    for dataset in args.datasets:
        tasks = [json.loads(line) for line in (Path(dataset) / "tasks.jsonl").read_text().splitlines() if line]
        found = {t["id"]: hidden(t) for t in tasks}
        with_hidden = {k: v for k, v in found.items() if v}
        kinds = Counter(h.split()[0] for v in with_hidden.values() for h in v)
        names = Counter(h for v in with_hidden.values() for h in v)
        print(f"{dataset}: {len(tasks)} tasks, {len(with_hidden)} with hidden context "
              f"(attribute {sum(1 for v in with_hidden.values() if any(h.startswith('attribute') for h in v))}, "
              f"fixture {sum(1 for v in with_hidden.values() if any(h.startswith('fixture') for h in v))}; "
              f"names {dict(kinds)})")
        for name, count in names.most_common(8):
            print(f"    {count:5d}  {name}")
        for task_id in list(with_hidden)[:args.examples]:
            print(f"    e.g. {task_id}: {', '.join(with_hidden[task_id])}")


if __name__ == "__main__":
    main()
