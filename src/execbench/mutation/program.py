"""Deterministic, seeded source-level mutation of a Python program (no model, no execution).

Operators (each may be switched off):

``rename``
    consistent renaming of identifiers bound in the program: function locals, parameters,
    comprehension variables, and (``rename_module``) module-level variables, functions
    and classes. Never renamed: protected names (the entry point, every name a call or
    test uses, checkpoint fields), attributes, keyword-argument names, builtins, dunder
    names, ``self``/``cls``, names bound by ``import``/``match``, class-body names (and
    module names a class body reads before binding them: ``x = 1; class C: x = x + 1``),
    parameters whose name appears as a keyword anywhere (or when any call passes
    ``**mapping``, or the function is decorated), and any identifier spelled inside a
    string literal (``getattr(obj, "x")``, ``kwargs={"n": 1}``). A program that reads
    scopes by name (``locals()``, ``eval``, ``__dict__``, ...) is not renamed at all.
``literals``
    perturbs up to ``max_literals`` numeric and string constants (not docstrings, not
    f-string parts, not annotations, not dictionary keys or subscripts given as strings,
    not 0/1/``True``/``None``, not exponents or shift counts).
``strip-comments``
    removes ``#`` comments (and lines holding only a comment); :attr:`ProgramMutation.line_map`
    maps new line numbers to old ones.

Edits are spliced into the original text, so layout and docstrings survive. The result
is checked without running it: it must parse, its syntax tree must equal the original
tree with exactly the intended renames and constants replayed on it, and Python's own
``symtable`` must agree that no reference changed binding (no renamed local captures or
shadows another name).

A program's inputs (call arguments, standard input) are perturbed by :mod:`.inputs`.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import random
import re
import symtable
from dataclasses import dataclass, field
from typing import Any, Iterable, TypedDict

from execbench.errors import InternalError
from execbench.mutation import scopes as _scopes
from execbench.mutation import text as _text
from execbench.mutation import values as _values
from execbench.sourcetext import SourceText

MAX_SOURCE_CHARS = 400_000
MAX_CALL_CHARS = 20_000
_WORDS = (
    "acc", "aux", "bag", "bin", "box", "buf", "cell", "chunk", "col", "cur", "dat", "delta", "elem", "entry",
    "fold", "frag", "gap", "grp", "head", "hold", "hop", "item", "jump", "key", "knot", "lane", "leaf", "link",
    "load", "mark", "memo", "mid", "node", "note", "pair", "part", "peak", "pick", "pin", "pos", "probe", "ptr",
    "rack", "ray", "rec", "res", "ring", "row", "run", "seed", "seg", "slot", "span", "spot", "step", "tag",
    "tail", "tally", "tick", "tip", "tmp", "tok", "unit", "val", "vec", "wave", "word", "zone",
)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # also read by .inputs
_DECIMAL_INT = re.compile(r"^[0-9]+$")
_PLAIN_FLOAT = re.compile(r"^(?:[0-9]+\.[0-9]*|\.[0-9]+)$")
PLAIN_STR = re.compile(r"""^(?P<q>['"])(?P<body>[^'"\\\n{}%]*)(?P=q)$""")  # also read by .inputs
_NAME_ARGS = ("getattr", "setattr", "hasattr", "delattr", "namedtuple", "NamedTuple", "TypedDict", "Enum")


class MutationError(InternalError, ValueError):
    """A program or call cannot be mutated (does not parse, too large, check failed)."""


class LiteralChange(TypedDict):
    line: int
    old: str  # the constant's source text
    new: str


class MutationSummary(TypedDict):
    """What :meth:`ProgramMutation.describe` records in the mutation log."""

    operators: list[str]
    renames: dict[str, str]
    literals: list[LiteralChange]
    comments_removed: int
    notes: list[str]


@dataclass
class ProgramMutation:
    text: str
    operators: list[str] = field(default_factory=list)  # operators that changed something
    renames: dict[str, str] = field(default_factory=dict)  # "<scope qualname>:<old>" -> new
    literals: list[LiteralChange] = field(default_factory=list)
    comments_removed: int = 0
    line_map: dict[int, int] = field(default_factory=dict)  # new line -> original line
    notes: list[str] = field(default_factory=list)

    def old_line(self, line: int) -> int:
        return self.line_map.get(line, line)

    def new_line(self, line: int) -> int | None:
        for new, old in self.line_map.items():
            if old == line:
                return new
        return None if self.line_map else line

    def renamed(self, name: str) -> str:
        """The new name of a name bound at module level (itself if not renamed)."""
        return self.renames.get(f"<module>:{name}", name)

    def describe(self) -> MutationSummary:
        return {"operators": self.operators, "renames": self.renames, "literals": self.literals,
                "comments_removed": self.comments_removed, "notes": self.notes}


def parse(source: str, what: str = "program", mode: str = "exec") -> ast.AST:
    limit = MAX_SOURCE_CHARS if mode == "exec" else MAX_CALL_CHARS
    if len(source) > limit:
        raise MutationError(f"{what} is too large to mutate ({len(source)} characters > {limit})")
    try:
        return ast.parse(source, mode=mode)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise MutationError(f"{what} does not parse: {exc}") from None


def string_words(tree: ast.AST) -> set[str]:
    """Identifier-like words inside string constants (docstrings excluded)."""
    docstrings = _docstring_ids(tree)
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.update(IDENT.findall(node.value[:10_000]))
    return words


def _docstring_ids(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


class _Names:
    """Fresh, readable names: a word from the list, suffixed if needed; never one in use."""

    def __init__(self, taken: set[str], rng: random.Random) -> None:
        self.taken = set(taken)
        self.words = list(_WORDS)
        rng.shuffle(self.words)
        self.next = 0
        self.round = 1

    def fresh(self, like: str = "") -> str:
        """A new name in the style of ``like``: CONSTANT, CapWords or lower case."""
        while True:
            if self.next >= len(self.words):
                self.next = 0
                self.round += 1
            word = self.words[self.next]
            self.next += 1
            name = word if self.round == 1 else f"{word}{self.round}"
            core = like.strip("_")
            if len(core) > 1 and core.isupper():
                name = name.upper()
            elif core[:1].isupper():
                name = name.capitalize()
            if like.startswith("_") and not like.startswith("__"):
                name = "_" + name
            if name not in self.taken:
                self.taken.add(name)
                return name


# -- renaming ------------------------------------------------------------------------------

def _occurrence_edit(occ: _scopes.Occurrence, node: ast.AST, pos: SourceText, new: str) -> _text.Edit | None:
    text = pos.text
    name = occ.name
    if occ.kind == "name":
        start, end = pos.span(node)
        return _text.Edit(start, end, name, new)
    if occ.kind == "arg" and isinstance(node, ast.arg):
        start = pos.offset(node.lineno, node.col_offset)
        return _text.Edit(start, start + len(name), name, new)
    if occ.kind in ("def", "class") and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        start = pos.offset(node.lineno, node.col_offset)
        pattern = r"class\s+" if occ.kind == "class" else r"(?:async\s+)?def\s+"
        match = re.compile(pattern + re.escape(name) + r"\b").match(text, start)
        if not match:
            return None
        return _text.Edit(match.end() - len(name), match.end(), name, new)
    if occ.kind == "except":
        if not isinstance(node, ast.ExceptHandler):  # (an "except" occurrence is its handler)
            return None
        anchor: ast.AST = node.type if node.type is not None else node
        start = pos.offset(anchor.end_lineno, anchor.end_col_offset)  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
        match = re.compile(r"\s*as\s+" + re.escape(name) + r"\b").match(text, start)
        if not match:
            return None
        return _text.Edit(match.end() - len(name), match.end(), name, new)
    if occ.kind in ("global", "nonlocal"):
        start, end = pos.span(node)
        segment = text[start:end]
        matches = [m for m in re.finditer(r"\b" + re.escape(name) + r"\b", segment) if m.start() > len(occ.kind)]
        if len(matches) != 1:
            return None
        return _text.Edit(start + matches[0].start(), start + matches[0].end(), name, new)
    return None


def _replay_rename(node: ast.AST, occ: _scopes.Occurrence, new: str) -> None:
    """Rename ``occ`` in ``node`` (the node of its kind: :mod:`.scopes` records them so)."""
    if occ.kind == "name" and isinstance(node, ast.Name):
        node.id = new
    elif occ.kind == "arg" and isinstance(node, ast.arg):
        node.arg = new
    elif occ.kind in ("def", "class", "except") and isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
        node.name = new
    elif occ.kind in ("global", "nonlocal") and isinstance(node, (ast.Global, ast.Nonlocal)):
        node.names[occ.slot] = new


_RENAMABLE_KINDS = {"name", "arg", "def", "class", "except", "global", "nonlocal"}


def _plan_renames(res: _scopes.Resolution, pos: SourceText, rng: random.Random, *, protected: set[str],
                  rename_module: bool, rename_params: bool, avoid: set[str]) -> tuple[list, dict[str, str]]:
    """[(occurrence, edit, new name)], {"scope:old": new}."""
    taken = _scopes.identifiers(res.tree) | set(dir(builtins)) | set(keyword.kwlist) | protected | avoid
    words = string_words(res.tree)
    groups: dict[tuple[int, str], list[_scopes.Occurrence]] = {}
    owners: dict[tuple[int, str], _scopes.Scope] = {}
    for occ, owner in res.occurrences:
        key = (id(owner), occ.name)
        groups.setdefault(key, []).append(occ)
        owners[key] = owner
    fresh = _Names(taken, rng)
    planned: list[tuple[_scopes.Occurrence, _text.Edit, str]] = []
    renames: dict[str, str] = {}
    for key in sorted(groups, key=lambda k: (min(o.index for o in groups[k]), k[1])):
        owner, name, occs = owners[key], key[1], groups[key]
        if owner.kind == "class" or (owner.kind == "module" and not rename_module):
            continue
        if name not in owner.bound or name in owner.fixed or name in protected or name in words:
            continue
        if name.startswith("__") or name in ("self", "cls", "_"):
            continue
        if any(o.kind not in _RENAMABLE_KINDS for o in occs):
            continue
        if name in owner.params:
            if not rename_params or owner.decorated or res.star_kwargs or name in res.keywords:
                continue
        new = fresh.fresh(name)
        edits: list[tuple[_scopes.Occurrence, _text.Edit, str]] = []
        for occ in occs:
            edit = _occurrence_edit(occ, res.nodes[occ.index], pos, new)
            if edit is None or pos.text[edit.start:edit.end] != name:
                edits = []
                break
            edits.append((occ, edit, new))
        if edits:
            planned.extend(edits)
            renames[f"{owner.qualname}:{name}"] = new
    return planned, renames


# -- literals -------------------------------------------------------------------------------

def _literal_exclusions(tree: ast.AST) -> set[int]:
    """ids of Constant nodes that must not change."""
    out = set(_docstring_ids(tree))

    def exclude(sub: ast.AST | None) -> None:
        if sub is not None:
            out.update(id(n) for n in ast.walk(sub))

    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            exclude(node)
        elif isinstance(node, ast.arg):
            exclude(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            exclude(node.returns)
        elif isinstance(node, ast.AnnAssign):
            exclude(node.annotation)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    out.add(id(key))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            out.add(id(node.slice))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.LShift, ast.RShift)):
            exclude(node.right)
            exclude(node.left)
        elif isinstance(node, ast.Call):
            func = node.func
            fname = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if fname in _NAME_ARGS:
                for arg in node.args:
                    exclude(arg)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.startswith("__") for t in targets):
                exclude(node.value)
    return out


def _literal_candidates(tree: ast.AST, pos: SourceText, skip_lines: frozenset[int] = frozenset()
                        ) -> list[ast.Constant]:
    excluded = _literal_exclusions(tree)
    seen: dict[tuple[str, Any], int] = {}  # a constant spelled twice is likely coupled (x[::3] = f(x[::3]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
            key = (type(node.value).__name__, node.value)
            seen[key] = seen.get(key, 0) + 1
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in excluded or not hasattr(node, "end_col_offset"):
            continue
        if node.lineno in skip_lines:
            continue
        value = node.value
        start, end = pos.span(node)
        segment = pos.text[start:end]
        if isinstance(value, bool) or value is None:
            continue
        if seen.get((type(value).__name__, value), 0) != 1:
            continue
        if isinstance(value, int):
            if value in (0, 1) or not _DECIMAL_INT.match(segment) or value > 10**9:
                continue
        elif isinstance(value, float):
            if value in (0.0, 1.0) or not _PLAIN_FLOAT.match(segment):
                continue
        elif isinstance(value, str):
            match = PLAIN_STR.match(segment)
            if not match or match["body"] != value or len(value) > 40 \
                    or not any(ch.isascii() and ch.isalnum() for ch in value):
                continue
        else:
            continue
        out.append(node)
    return out


def _new_literal(node: ast.Constant, segment: str, rng: random.Random) -> tuple[Any, str] | None:
    value = node.value
    if isinstance(value, int):
        new_int = min(_values.perturb_int(value, rng, avoid=(0, 1)), value * 3 // 2 + 3)
        return (new_int, str(new_int)) if new_int != value else None
    if isinstance(value, float):
        new_float = _values.perturb_float(value, rng)
        text = repr(new_float)
        return (new_float, text) if new_float != value and _PLAIN_FLOAT.match(text) else None
    if isinstance(value, str):
        new_str = _values.perturb_str(value, rng)
        quote = segment[0]
        if new_str == value or quote in new_str or "\\" in new_str or "\n" in new_str:
            return None
        return new_str, f"{quote}{new_str}{quote}"
    return None


# -- checks ---------------------------------------------------------------------------------

def _global_refs(table: symtable.SymbolTable) -> list[tuple[str, frozenset[str], int, int]]:
    out = []
    stack = [table]
    while stack:
        current = stack.pop(0)
        symbols = current.get_symbols()
        globals_ = frozenset(s.get_name() for s in symbols if s.is_global() and s.is_referenced())
        local = sum(1 for s in symbols if s.is_local())
        free = sum(1 for s in symbols if s.is_free())
        kind = current.get_type()  # a str before Python 3.12, then a SymbolTableType enum
        out.append((kind if isinstance(kind, str) else kind.name, globals_, local, free))
        stack.extend(current.get_children())
    return out


def _check_symtables(old: str, new: str, module_renames: dict[str, str]) -> None:
    try:
        before = _global_refs(symtable.symtable(old, "<original>", "exec"))
        after = _global_refs(symtable.symtable(new, "<mutant>", "exec"))
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise MutationError(f"mutant fails the symbol-table check: {exc}") from None
    if len(before) != len(after):
        raise MutationError("mutant has a different scope structure")
    for (kind_a, globals_a, local_a, free_a), (kind_b, globals_b, local_b, free_b) in zip(before, after):
        mapped = frozenset(module_renames.get(name, name) for name in globals_a)
        if kind_a != kind_b or mapped != globals_b or local_a != local_b or free_a != free_b:
            raise MutationError("renaming changed what a name refers to (symbol-table check)")


# -- the operator driver ------------------------------------------------------------------

def mutate_program(
    source: str,
    rng: random.Random,
    *,
    rename: bool = True,
    literals: bool = True,
    strip_comments: bool = True,
    protected: Iterable[str] = (),
    rename_module: bool = True,
    rename_params: bool = True,
    max_literals: int = 3,
    avoid_names: Iterable[str] = (),
    literal_skip_lines: Iterable[int] = (),
) -> ProgramMutation:
    """Mutate ``source`` (see the module docstring); raises :class:`MutationError`."""
    tree = parse(source)
    assert isinstance(tree, ast.Module)
    pos = SourceText(source)
    protected_set = set(protected)
    result = ProgramMutation(text=source)
    edits: list[_text.Edit] = []
    replay: list[tuple[int, str, Any]] = []  # (node index, "rename"/"literal", payload)
    nodes = list(ast.walk(tree))
    index = {id(node): i for i, node in enumerate(nodes)}
    if rename:
        res = _scopes.resolve(tree)
        if res.dynamic:
            result.notes.append("rename skipped: the program reads scopes by name (locals/eval/__dict__/...)")
        else:
            planned, renames = _plan_renames(res, pos, rng, protected=protected_set, rename_module=rename_module,
                                             rename_params=rename_params, avoid=set(avoid_names))
            for occ, edit, new in planned:
                edits.append(edit)
                replay.append((occ.index, "rename", (occ, new)))
            result.renames = renames
            if renames:
                result.operators.append("rename")
    if literals and max_literals > 0:
        taken_spans = {(e.start, e.end) for e in edits}
        candidates = [n for n in _literal_candidates(tree, pos, frozenset(literal_skip_lines))
                      if pos.span(n) not in taken_spans]
        if candidates:
            count = rng.randint(1, min(max_literals, len(candidates)))
            for node in sorted(rng.sample(candidates, count), key=lambda n: (n.lineno, n.col_offset)):
                start, end = pos.span(node)
                made = _new_literal(node, source[start:end], rng)
                if made is None:
                    continue
                value, text = made
                edits.append(_text.Edit(start, end, source[start:end], text))
                replay.append((index[id(node)], "literal", value))
                result.literals.append({"line": node.lineno, "old": source[start:end], "new": text})
            if result.literals:
                result.operators.append("literals")
    try:
        mutated = _text.apply(source, edits)
    except _text.EditError as exc:
        raise MutationError(f"edits do not apply: {exc}") from None
    _verify(source, mutated, replay, result)
    if strip_comments:
        stripped, line_map, removed = _text.strip_comments(mutated)
        if removed:
            if ast.dump(parse(stripped, "mutant")) != ast.dump(parse(mutated, "mutant")):
                raise MutationError("removing comments changed the program")
            mutated = stripped
            result.line_map = line_map
            result.comments_removed = removed
            result.operators.append("strip-comments")
    result.text = mutated
    return result


def _verify(source: str, mutated: str, replay: list[tuple[int, str, Any]], result: ProgramMutation) -> None:
    """The spliced text must be exactly the original tree with the planned changes."""
    expected = parse(source)
    nodes = list(ast.walk(expected))
    for position, what, payload in replay:
        node = nodes[position]
        if what == "rename":
            occ, new = payload
            _replay_rename(node, occ, new)
        elif isinstance(node, ast.Constant):  # a literal's new value
            node.value = payload
    actual = parse(mutated, "mutant")
    if ast.dump(actual) != ast.dump(expected):
        raise MutationError("spliced mutant differs from the planned syntax tree")
    module_renames = {key.split(":", 1)[1]: new for key, new in result.renames.items() if key.startswith("<module>:")}
    _check_symtables(source, mutated, module_renames)
