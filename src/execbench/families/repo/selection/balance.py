"""Balanced repo datasets (issue 35): tasks that only recall a data table, and the cap on
tasks per test function.

**Data-table recall.** arrow 1.4.0's locale tests ask ``self.locale.day_name(1) == ___`` with
the answer ``'lunes'``, an entry of ``SpanishLocale.day_names``, or
``_format_timeframe("hours", -5) == ___`` with ``'5 hodinami'``, the template ``"{0} hodinami"``
of a table filled with the number: 79% of its tasks read a string out of a table; predicting
them is recalling library data, not reasoning about execution. A task is *data-table recall*
when its answer is a string (or a tuple/list of strings) and every string of it is an element
(or dict value, nested ones too) of a *data table* of the library, or such an element with
placeholders (``{0}``, ``{}``, ``%s``, ``%d``) filled with numbers or other elements (two
levels: ``"in {0}"`` with ``"einer Minute"``); a data table is a literal list/tuple/set/dict
with at least :data:`MIN_TABLE` constant strings, bound at module or class level in one of
the library's modules (``families/repo/build.py`` passes the library's files).
Strings of fewer than :data:`MIN_CHARS` characters never count (``'a'`` is in every table).
Each such task is flagged (``provenance.data_table``: ``FILE:QUALNAME`` of the table) and,
by default (``--set data_table_tasks=exclude``), rejected at stage ``balance``
(``data_table_recall: the answer is an entry of FILE:QUALNAME``); ``keep`` keeps them flagged.

**Per test function.** ``--set max_tasks_per_function=N`` (default 10; 0: no cap) keeps the first N tasks
(in assertion order) of one test function (one ``source_id``, all its instances) and rejects
the rest at stage ``cap``.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

MIN_TABLE = 8  # constant strings in a literal for it to be a data table
MIN_CHARS = 3  # shorter strings never make a task a recall


def _strings(node: ast.expr, depth: int = 0) -> list[str]:
    """The constant strings of a literal container, nested ones included (a locale's
    ``{"past": "{0} hodinami", "future": ...}`` forms), three levels deep."""
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
        elif depth < 3:
            out += _strings(value, depth + 1)
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


PLACEHOLDER = re.compile(r"\{[0-9a-z_]*\}|%[sd]")
NUMBER = re.compile(r"[-+]?\d+")
MAX_TEMPLATES = 20_000


@lru_cache(maxsize=4)
def _templates(tables: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...]:
    """The table strings with placeholders (``"{0} hodinami"``, ``"in {0}"``) as patterns:
    (pattern, literal parts, table)."""
    out = []
    for text, where in tables[:MAX_TEMPLATES]:
        parts = PLACEHOLDER.split(text)
        if len(parts) < 2:
            continue
        pattern = "(.+?)".join(re.escape(p) for p in parts)
        out.append((re.compile(pattern, re.S), tuple(p for p in parts if p), where))
    return tuple(out)


def _recalled(text: str, tables: dict[str, str], templates: tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...],
              numbers: set[str], depth: int = 0) -> str | None:
    """The table ``text`` is read out of: an entry itself, or an entry with placeholders filled
    by ``numbers`` or by entries (``"in {0}"`` with ``"einer Minute"``), two levels deep."""
    if text in tables:
        return tables[text]
    if depth > 2 or len(text) > 500:
        return None
    for pattern, literals, where in templates:
        if not all(lit in text for lit in literals):
            continue
        match = pattern.fullmatch(text)
        if match and all(g.strip().lstrip("+-") in numbers
                         or _recalled(g.strip(), tables, templates, numbers, depth + 1) for g in match.groups()):
            return where
    return None


def table_entry(answer: str, kind: str, tables: dict[str, str], shown: str = "") -> str | None:
    """Where the answer's strings all come from (one table named), or None when it is no recall:
    each string is a table entry, or a table template filled with entries or with numbers the
    test ``shown`` writes (``_format_timeframe("hours", -5)``: ``'5 hodinami'``; a number the
    code computes, ``humanize``'s ``'2 minutes'``, is no recall)."""
    numbers = {n.lstrip("+-") for n in NUMBER.findall(shown)}
    if kind != "python-literal" or not tables:
        return None
    try:
        value: Any = ast.literal_eval(answer) if len(answer) <= 20_000 else None
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return None
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    if not items or not all(isinstance(v, str) and len(v) >= MIN_CHARS for v in items):
        return None
    templates = _templates(tuple(tables.items()))
    found = [_recalled(v, tables, templates, numbers) for v in items]
    return found[0] if all(found) else None
