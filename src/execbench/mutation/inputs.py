"""Seeded perturbation of a program's inputs: call arguments and standard input (no model,
no execution).

``perturb_call`` redraws the literal arguments of a call (the callee and keyword names never
change; an empty argument is filled from the same argument in the unit's other calls);
``perturb_stdin`` redraws the tokens of a standard-input text keeping its layout. A
program's :func:`vocabulary` (the tags it compares against, the identifiers it spells) keeps
perturbed strings meaningful. Program text itself is mutated by :mod:`.program`.
"""

from __future__ import annotations

import ast
import random
import re
from typing import Any, Iterable, Sequence

from execbench.mutation import scopes as _scopes
from execbench.mutation import text as _text
from execbench.mutation import values as _values
from execbench.mutation.program import IDENT, PLAIN_STR, MutationError, parse
from execbench.sourcetext import SourceText

def call_names(calls: Iterable[str]) -> set[str]:
    """Every identifier a call expression spells (protected from renaming)."""
    names: set[str] = set()
    for call in calls:
        try:
            tree = parse(call, "call", mode="eval")
        except MutationError:
            names.update(IDENT.findall(call))
            continue
        names |= _scopes.identifiers(tree)
    return names


def _safe_literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False, None


_TAG = re.compile(r"^[^\s%{}]{1,30}$")  # "push", "o|", "large"; not messages or formats


def vocabulary(program: str | ast.AST) -> _values.Vocabulary:
    """The program's :class:`~execbench.mutation.values.Vocabulary`: short strings without
    spaces that it compares against, uses as dictionary keys or subscripts, or lists in an
    ``in`` test / ``case`` pattern (tags), and every identifier it spells (kept)."""
    tree = parse(program) if isinstance(program, str) else program
    tags: set[str] = set()

    def add(node: ast.AST | None) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _TAG.match(node.value):
            tags.add(node.value)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for element in node.elts:
                add(element)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                add(operand)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                add(key)
        elif isinstance(node, ast.MatchValue):
            add(node.value)
        elif isinstance(node, ast.Subscript):
            add(node.slice)
    return _values.Vocabulary(frozenset(tags), frozenset(_scopes.identifiers(tree)))


def string_tags(program: str | ast.AST) -> frozenset[str]:
    """The program's tags (see :func:`vocabulary`)."""
    return vocabulary(program).tags


NO_VOCABULARY = _values.Vocabulary()  # frozen: safe as a shared default


def _fill_empty(value: Any, donors: list[Any], rng: random.Random) -> Any:
    """An empty list/tuple/set/str/dict gets one element taken from same-typed donors (the
    same argument in the unit's other calls); without donors it stays empty."""
    pool = [d for d in donors if type(d) is type(value) and d]
    if not pool:
        return value
    donor = rng.choice(pool)
    if isinstance(value, str):
        words = donor.split()
        return rng.choice(words) if len(words) > 1 else rng.choice(donor)
    if isinstance(value, dict):
        key = rng.choice(list(donor))
        return {key: donor[key]}
    element = rng.choice(sorted(donor, key=repr) if isinstance(donor, (set, frozenset)) else list(donor))
    return type(value)([element])


def perturb_expression(text: str, node: ast.AST, pos: SourceText, rng: random.Random,
                       vocab: _values.Vocabulary = NO_VOCABULARY,
                       donors: Sequence[Any] = ()) -> list[_text.Edit]:
    """Edits perturbing one argument expression: a literal value as a whole, else its
    numeric/string constants (each with probability 1/2, at least one)."""
    ok, value = _safe_literal(node)
    if ok:
        if isinstance(value, (list, tuple, set, frozenset, dict, str)) and not value:
            new = _fill_empty(value, list(donors), rng)
        else:
            new = _values.perturb_value(value, rng, vocab=vocab)
        if new != value or type(new) is not type(value):
            try:
                rendered = _values.render(new)
            except ValueError:
                return []
            start, end = pos.span(node)
            return [_text.Edit(start, end, text[start:end], rendered)]
        return []
    leaves = [n for n in ast.walk(node) if isinstance(n, ast.Constant) and not isinstance(n.value, bool)
              and isinstance(n.value, (int, float, str)) and hasattr(n, "end_col_offset")]
    leaves = [n for n in leaves if not isinstance(n.value, str) or PLAIN_STR.match(text[slice(*pos.span(n))])]
    if not leaves:
        return []
    chosen = [n for n in leaves if rng.random() < 0.5] or [rng.choice(leaves)]
    edits = []
    for leaf in chosen:
        start, end = pos.span(leaf)
        new = _values.perturb_value(leaf.value, rng, vocab=vocab)
        if new != leaf.value:
            edits.append(_text.Edit(start, end, text[start:end], _values.render(new)))
    return edits


def _arguments(body: ast.AST) -> list[tuple[int | str, ast.AST]]:
    if not isinstance(body, ast.Call):
        return [(0, body)]
    out: list[tuple[int | str, ast.AST]] = [(i, a) for i, a in enumerate(body.args) if not isinstance(a, ast.Starred)]
    out += [(k.arg, k.value) for k in body.keywords if k.arg is not None]
    return out


def argument_donors(calls: Iterable[str]) -> dict[int | str, list[Any]]:
    """Literal argument values of ``calls`` by position/keyword (to fill empty inputs)."""
    donors: dict[int | str, list[Any]] = {}
    for call in calls:
        try:
            tree = parse(call, "call", mode="eval")
        except MutationError:
            continue
        for slot, node in _arguments(tree.body):  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
            ok, value = _safe_literal(node)
            if ok:
                donors.setdefault(slot, []).append(value)
    return donors


def perturb_call(call: str, rng: random.Random, vocab: _values.Vocabulary | frozenset[str] = NO_VOCABULARY,
                 donors: dict[int | str, list[Any]] | None = None) -> str:
    """The call ``f(a, b, k=c)`` with perturbed argument values (each argument with
    probability 0.7, at least one). The callee and keyword names never change."""
    if not isinstance(vocab, _values.Vocabulary):
        vocab = _values.Vocabulary(tags=frozenset(vocab))
    tree = parse(call, "call", mode="eval")
    pos = SourceText(call)
    args = _arguments(tree.body)  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
    if not args:
        return call
    chosen = [a for a in args if rng.random() < 0.7] or [rng.choice(args)]
    edits: list[_text.Edit] = []
    for slot, arg in chosen:
        edits.extend(perturb_expression(call, arg, pos, rng, vocab, (donors or {}).get(slot, [])))
    if not edits:
        return call
    new = _text.apply(call, edits)
    parse(new, "perturbed call", mode="eval")
    return new


_INT_TOKEN = re.compile(r"^-?(?:0|[1-9][0-9]{0,17})$")  # "00110" and 40-digit strings are words
_FLOAT_TOKEN = re.compile(r"^-?(?:[0-9]+\.[0-9]*|\.[0-9]+)$")


def _transpose(token: str, rng: random.Random) -> str:
    """Swap a few pairs of different characters (the token keeps its characters and length:
    a grid keeps its one start cell, a binary string stays binary)."""
    chars = list(token)
    swaps = max(1, min(8, len(chars) // 25))
    for _ in range(swaps):
        for _ in range(10):
            i, j = rng.randrange(len(chars)), rng.randrange(len(chars))
            if chars[i] != chars[j]:
                chars[i], chars[j] = chars[j], chars[i]
                break
    return "".join(chars)


def perturb_stdin(text: str, rng: random.Random, *, keep_first_line: bool = True, rate: float = 0.3) -> str:
    """Perturb a standard-input text, keeping its layout and token count.

    Integers are redrawn from the range of their column (same position on lines with the
    same number of tokens, else their own line), so node ids stay node ids; floats move by
    up to ~40 %; words of two or more characters get a few characters swapped. The first
    line (usually counts and sizes the rest must agree with) is kept unless it is the only
    line. Each token changes with probability ``rate`` (words 0.7); at least one changes.
    """
    lines = text.splitlines(keepends=True)
    parts = [re.split(r"(\s+)", line) for line in lines]
    tokens = [[(k, t) for k, t in enumerate(p) if t and not t.isspace()] for p in parts]
    columns: dict[tuple[int, int], list[int]] = {}
    kept_first = keep_first_line and len(lines) > 1
    for i, row in enumerate(tokens):
        if kept_first and i == 0:
            continue  # counts and sizes are not samples of the data columns
        for c, (_, t) in enumerate(row):
            if _INT_TOKEN.match(t):
                columns.setdefault((len(row), c), []).append(int(t))
    spots = [(i, c) for i, row in enumerate(tokens) if not (kept_first and i == 0)
             for c, (_, t) in enumerate(row) if _INT_TOKEN.match(t) or _FLOAT_TOKEN.match(t) or len(t) > 1]
    if not spots:
        return text

    def picked(i: int, c: int) -> bool:
        token = tokens[i][c][1]
        numeric = _INT_TOKEN.match(token) or _FLOAT_TOKEN.match(token)
        return rng.random() < (rate if numeric else 0.7)

    chosen = {spot for spot in spots if picked(*spot)} or {rng.choice(spots)}
    for i, c in sorted(chosen):
        k, token = tokens[i][c]
        if _INT_TOKEN.match(token):
            old = int(token)
            pool = columns.get((len(tokens[i]), c), [])
            if len(set(pool)) < 2:
                pool = [int(t) for _, t in tokens[i] if _INT_TOKEN.match(t)]
            lo, hi = min(pool), max(pool)
            new = rng.randint(lo, hi) if hi > lo else _values.perturb_int(old, rng)
            if new == old:
                new = _values.perturb_int(old, rng) if hi <= lo else (lo if old != lo else hi)
            parts[i][k] = str(new)
        elif _FLOAT_TOKEN.match(token):
            places = len(token.split(".", 1)[1]) if "." in token else 0
            new_float = _values.perturb_float(float(token), rng)
            parts[i][k] = f"{new_float:.{max(1, places)}f}"
        else:
            parts[i][k] = _transpose(token, rng)
    return "".join("".join(p) for p in parts)
