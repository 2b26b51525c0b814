"""Balanced repo datasets (issue 35): tasks that only recall a data table, and the cap on
tasks per test function.

**Data-table recall.** arrow 1.4.0's locale tests ask ``self.locale.day_name(1) == ___`` with
the answer ``'lunes'``, an entry of ``SpanishLocale.day_names``: 79% of its tasks read a string
out of a table; predicting them is recalling library data, not reasoning about execution. A
task is *data-table recall* when its answer is a string (or a tuple/list of strings) and every
string of it is an element (or dict value) of a *data table* of the library: a literal
list/tuple/set/dict with at least :data:`MIN_TABLE` constant strings, bound at module or class
level in one of the library's modules (``families/repo/build.py`` passes the library's files).
Strings of fewer than :data:`MIN_CHARS` characters never count (``'a'`` is in every table).
Each such task is flagged (``provenance.data_table``: ``FILE:QUALNAME`` of the table) and,
by default (``--set data_table_tasks=exclude``), rejected at stage ``balance``
(``data_table_recall: the answer is an entry of FILE:QUALNAME``); ``keep`` keeps them flagged.

**Per test function.** ``--set max_tasks_per_function=N`` (0: no cap) keeps the first N tasks
(in assertion order) of one test function (one ``source_id``, all its instances) and rejects
the rest at stage ``cap``.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

MIN_TABLE = 8  # constant strings in a literal for it to be a data table
MIN_CHARS = 3  # shorter strings never make a task a recall


def _strings(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Dict):
        values = [v for v in node.values if v is not None]
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = list(node.elts)
    else:
        return []
    out: list[str] = []
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out.append(value.value)
        elif isinstance(value, (ast.List, ast.Tuple)):  # ("1 day", "{0} days") forms of a table entry
            out += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return out


def _tables(tree: ast.Module) -> Iterable[tuple[str, list[str]]]:
    def visit(body: list[ast.stmt], prefix: str) -> Iterable[tuple[str, list[str]]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield from visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                name = ", ".join(ast.unparse(t) for t in targets)[:100]
                strings = _strings(node.value)
                if len(strings) >= MIN_TABLE:
                    yield prefix + name, strings

    yield from visit(tree.body, "")


@lru_cache(maxsize=4)
def data_tables(files: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """string -> ``FILE:QUALNAME`` of the first data table holding it, over ``files`` ((path
    relative to the repository root, absolute path), in order). Files that do not parse are
    left out."""
    out: dict[str, str] = {}
    for rel, path in files:
        try:
            tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for name, strings in _tables(tree):
            for s in strings:
                if len(s) >= MIN_CHARS:
                    out.setdefault(s, f"{rel}:{name}")
    return out


def table_entry(answer: str, kind: str, tables: dict[str, str]) -> str | None:
    """Where the answer's strings all come from (one table named), or None when it is no recall."""
    if kind != "python-literal" or not tables:
        return None
    try:
        value: Any = ast.literal_eval(answer) if len(answer) <= 20_000 else None
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    if not items or not all(isinstance(v, str) and len(v) >= MIN_CHARS and v in tables for v in items):
        return None
    return tables[items[0]]
