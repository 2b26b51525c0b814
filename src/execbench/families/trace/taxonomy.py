"""First-deviation error taxonomy for wrong line traces (paper 002 §V-A), automated.

The paper's authors read ten traces per model and named the *first* place where the
predicted trace leaves the oracle. We classify that first deviation by rules over the
program's syntax. The program is trusted dataset text (never model output): it is parsed
with :mod:`ast` and compiled (not run) to learn which lines can emit a line event.
The family declares it on its plug-in (``AnalysisFacts.taxonomy``: :data:`TAXONOMY`); the
report applies it through ``analysis/taxonomy.py`` and names no category itself.

Notation: O is the oracle trace, P the predicted one (both canonical: a concurrent segment
is one sorted item), i the first index where they differ, ``e = O[i]`` (expected) and
``g = P[i]`` (given); ``prev = O[i-1]`` (equal to ``P[i-1]``). Rules, first match wins:

===================  ==========================================================================
``truncated``        the response was cut off (status ``truncated``: the token limit or a sample
                     budget) before its list reached the oracle's length, or before any list
``no exit``          the list was cut off no shorter than the oracle (status ``truncated``): the
                     model went on past the run's end
``empty``            no list could be read from the response (status ``no_answer`` /
                     ``bad_envelope``, or nothing extracted), or the list is empty
``concurrency``      ``e`` or ``g`` is a concurrent segment (a parenthesised group): the
                     segment's start, end or content is wrong
``early stop``       P is a strict prefix of O (the model stopped too soon)
``overrun``          O is a strict prefix of P (the model went on after the run ended)
``definition call``  ``g`` is a ``def``/``class`` header line (signature or decorator)
``nonsense line``    ``g`` can never execute: a blank, comment or docstring line, a bare
                     ``else:``/``finally:`` marker, or a number outside the program
``condition skip``   ``e`` is the header of an ``if``/``elif``/``while``/``for`` and ``g`` lies in
                     a branch it guards (the body; for an ``if`` also its ``elif``/``else``
                     part): a branch was entered without evaluating the predicate
``predicate wrong``  ``prev`` is the header of an ``if``/``elif``/``while``/``for`` and exactly
                     one of ``e``, ``g`` lies in its body, except the loop-exit case below
``loop skip``        the innermost loop containing ``e`` does not contain ``g`` and ``g`` lies
                     after that loop in the same function: the loop was left too early
                     (includes ``prev`` = loop header, ``e`` in the body, ``g`` after the loop)
``statement skip``   ``g`` occurs later in O: the statements in between were skipped
``other``            none of the above
``unclassified``     the program is unavailable or does not parse
===================  ==========================================================================
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from execbench.contract import ErrorCategory, ErrorTaxonomy

#: The categories in table order, with their bar colours in the report's figure.
CATEGORY_COLORS = {
    "statement skip": "#2f6db5", "condition skip": "#6fa0dc", "loop skip": "#3a9d5d", "definition call": "#e0702b",
    "nonsense line": "#c43d3d", "empty": "#8c8c8c", "truncated": "#b3b3b3", "no exit": "#4d4d4d",
    "predicate wrong": "#8160b8",
    "concurrency": "#d16aa8", "early stop": "#b5a42f", "overrun": "#8c6d3f", "other": "#c9c9c9",
    "unclassified": "#e6e6e6",
}
CATEGORIES = tuple(CATEGORY_COLORS)


@dataclass(frozen=True)
class Block:
    kind: str          # "if" | "while" | "for"
    header: int        # line of the header (the predicate / iteration test)
    body: frozenset    # lines of the body (all lines of its statements)
    branches: frozenset  # lines the predicate chooses between: body and else/elif part of an ``if``
    span: tuple        # (first, last) line of the whole statement, orelse included
    scope: tuple       # (first, last) line of the enclosing function (or module)


@dataclass
class ProgramLines:
    n_lines: int
    executable: frozenset = frozenset()
    definition: frozenset = frozenset()
    blocks: list = field(default_factory=list)  # Block, outermost first
    headers: dict = field(default_factory=dict)  # header line -> Block (innermost)


def _code_lines(code) -> set[int]:
    lines = {line for _, _, line in code.co_lines() if line}
    for const in code.co_consts:
        if hasattr(const, "co_lines"):
            lines |= _code_lines(const)
    return lines


@lru_cache(maxsize=512)
def program_lines(program: str) -> ProgramLines | None:
    """Syntax facts of a (trusted) program, or None if it does not parse."""
    try:
        tree = ast.parse(program)
        code = compile(tree, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    info = ProgramLines(n_lines=len(program.splitlines()))
    definition: set[int] = set()
    blocks: list[Block] = []

    def visit(node: ast.AST, scope: tuple[int, int]) -> None:
        for child in ast.iter_child_nodes(node):
            child_scope = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                body_start = child.body[0].lineno if child.body else child.lineno + 1
                definition.update(range(first, max(child.lineno + 1, body_start)))
                child_scope = (child.lineno, child.end_lineno or child.lineno)
            elif isinstance(child, (ast.If, ast.While, ast.For, ast.AsyncFor)):
                kind = "if" if isinstance(child, ast.If) else "while" if isinstance(child, ast.While) else "for"
                body: set[int] = set()
                for stmt in child.body:
                    body.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
                branches = set(body)
                if kind == "if":
                    for stmt in child.orelse:
                        branches.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
                blocks.append(Block(kind, child.lineno, frozenset(body), frozenset(branches),
                                    (child.lineno, child.end_lineno or child.lineno), scope))
            visit(child, child_scope)

    visit(tree, (1, info.n_lines))
    executable = _code_lines(code)
    info.definition = frozenset(definition)
    info.executable = frozenset(executable - definition)
    info.blocks = blocks
    for block in blocks:  # later (inner) blocks overwrite outer ones on the same line
        info.headers[block.header] = block
    return info


def _innermost_loop(info: ProgramLines, line: int) -> Block | None:
    best = None
    for block in info.blocks:
        if block.kind != "if" and block.span[0] <= line <= block.span[1]:
            if best is None or block.span[0] >= best.span[0]:
                best = block
    return best


def _as_trace(value: Any) -> list | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, ValueError):
            return None
    if not isinstance(value, list):
        return None
    out: list = []
    for item in value:
        if isinstance(item, list):
            flat: list[int] = []
            todo = [item]
            while todo:
                for x in todo.pop():
                    (todo.append if isinstance(x, list) else flat.append)(x)
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in flat):
                return None
            out.append(sorted(flat))
        elif isinstance(item, int) and not isinstance(item, bool):
            out.append(item)
        else:
            return None
    return out


def first_deviation(oracle: list, predicted: list) -> int | None:
    """Index of the first differing item (``min(len)`` for a prefix); None if equal."""
    for i, (a, b) in enumerate(zip(oracle, predicted)):
        if a != b:
            return i
    if len(oracle) == len(predicted):
        return None
    return min(len(oracle), len(predicted))


def classify(program: str | None, oracle: Any, predicted: Any, status: str | None = "ok") -> str | None:
    """The category of a wrong trace (see module doc); None if the trace is correct."""
    status = status or "ok"
    pred = _as_trace(predicted)
    want = _as_trace(oracle)
    if status == "truncated":  # cut off: whether it went past the run's end is all that can be told
        return "no exit" if pred and want is not None and len(pred) >= len(want) else "truncated"
    if status in ("no_answer", "bad_envelope") or pred is None or len(pred) == 0:
        return "empty"
    if want is None:
        return "unclassified"
    i = first_deviation(want, pred)
    if i is None:
        return None
    e = want[i] if i < len(want) else None
    g = pred[i] if i < len(pred) else None
    if isinstance(e, list) or isinstance(g, list):
        return "concurrency"
    if g is None:
        return "early stop"
    if e is None:
        return "overrun"
    info = program_lines(program) if program else None
    if info is None:
        return "unclassified"
    if g in info.definition:
        return "definition call"
    if g not in info.executable or not 1 <= g <= info.n_lines:
        return "nonsense line"
    block = info.headers.get(e)
    if block is not None and g in block.branches:
        return "condition skip"
    prev = want[i - 1] if i > 0 else None
    prev_block = info.headers.get(prev) if isinstance(prev, int) else None
    if prev_block is not None and (e in prev_block.body) != (g in prev_block.body):
        leaves_loop = prev_block.kind != "if" and e in prev_block.body and g > prev_block.span[1]
        if not leaves_loop:
            return "predicate wrong"
    loop = _innermost_loop(info, e)
    if loop is not None and not loop.span[0] <= g <= loop.span[1] and loop.span[1] < g <= loop.scope[1]:
        return "loop skip"
    if g in want[i + 1:]:
        return "statement skip"
    return "other"


TAXONOMY = ErrorTaxonomy(categories=tuple(ErrorCategory(name, color) for name, color in CATEGORY_COLORS.items()),
                         classify=classify)
