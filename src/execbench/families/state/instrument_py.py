"""Python checkpoint instrumentation: located on the syntax tree, spliced into the text.

The loop is found with :mod:`ast` (a ``for``/``while`` statement whose header starts on
``loop_line``); the inserted statements are spliced into the original text at the
positions the tree gives, so comments and formatting of the clean program survive and the
model reads the clean program plus a few visible lines. Every instrumented text is parsed
again and checked: removing the inserted statements from its tree must give exactly the
clean program's tree, and the inserted statements must sit where intended.

Insertions (``K`` = ``inside_iteration``; paper 001, appendix G):

* a header after the module docstring and ``from __future__`` imports: two aliased imports,
  ``_checkpoint_count = 0`` and ``_checkpoint_emit(state)``, which prints the canonical
  JSON of ``state`` (see :mod:`.canonical`) on one line of stdout;
* ``global _checkpoint_count`` first in the function that contains the loop (after its
  docstring), when the loop is not at module level;
* first in the loop body, in both state arms: ``_checkpoint_count += 1`` (the count is
  cumulative over every execution of the loop statement);
* inside arm, right after the increment::

      if _checkpoint_count == K:
          _checkpoint_emit({"ans": ans, "cnt1": cnt1, "dp1": dp1})
          raise SystemExit

  so the state is the one after K-1 complete iterations, with the loop target already
  bound for iteration K, before any statement of its body;
* post arm, right after the loop statement (after its ``else`` clause, if any)::

      if _checkpoint_count >= K:
          _checkpoint_emit({...})
          raise SystemExit

  i.e. at the first exit of the loop (normal end or ``break``) once iteration K has run:
  for a loop executed once this is "immediately after the loop".

Fields are variable names or dotted attribute paths (``DEAF.edge_flow``); the JSON keys are
the field texts.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from execbench.contract import SourceError

COUNT = "_checkpoint_count"
EMIT = "_checkpoint_emit"
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")

HEADER = '''\
import json as _checkpoint_json
import sys as _checkpoint_sys

_checkpoint_count = 0


def _checkpoint_emit(state):
    """Checkpoint: print `state` as one line of canonical JSON (sorted keys, no spaces,
    exact ints, floats as repr, tuples as lists, sets as sorted lists)."""
    def encode(value):
        if isinstance(value, (set, frozenset)):
            return sorted(value)
        raise TypeError(f"checkpoint value of type {type(value).__name__} is not serializable")
    text = _checkpoint_json.dumps(state, sort_keys=True, separators=(",", ":"),
                                  ensure_ascii=False, allow_nan=False, default=encode)
    _checkpoint_sys.stdout.write(text + "\\n")
    _checkpoint_sys.stdout.flush()


'''


class InstrumentError(SourceError):
    """The loop cannot be instrumented (the message says why)."""


@dataclass(frozen=True)
class Loop:
    line: int  # 1-based line of the header
    end_line: int
    kind: str  # "for" | "while"
    scope: str  # "<module>" or the qualified name of the enclosing function/class
    targets: tuple[str, ...]  # names bound by a for header
    depth: int  # number of enclosing loops


@dataclass
class _Insert:
    line: int  # insert before this 0-based line index of the original text
    order: int  # among inserts at the same line: smaller first
    text: list[str]


def parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise SourceError(f"program does not parse: {exc.msg} (line {exc.lineno})") from None


def _start(node: ast.stmt) -> int:
    lines = [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]
    return min(lines)


def _names(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


LoopNode = ast.For | ast.While | ast.AsyncFor
ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef  # the scopes a loop can sit in, below the module


class _LoopFinder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[Loop, LoopNode, list[ScopeNode]]] = []  # loop, node, enclosing stack
        self.stack: list[ScopeNode] = []
        self.loop_depth = 0

    def _scoped(self, node: ScopeNode) -> None:
        self.stack.append(node)
        saved, self.loop_depth = self.loop_depth, 0
        self.generic_visit(node)
        self.loop_depth = saved
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        scope = ".".join(getattr(s, "name", "?") for s in self.stack) or "<module>"
        targets = tuple(_names(node.target)) if isinstance(node, (ast.For, ast.AsyncFor)) else ()
        kind = "while" if isinstance(node, ast.While) else "for"
        loop = Loop(node.lineno, node.end_lineno or node.lineno, kind, scope, targets, self.loop_depth)
        self.found.append((loop, node, list(self.stack)))
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1

    visit_For = visit_While = _loop

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:  # not instrumentable: skip, but descend
        self.generic_visit(node)


def _find(tree: ast.Module) -> list[tuple[Loop, LoopNode, list[ScopeNode]]]:
    finder = _LoopFinder()
    finder.visit(tree)
    return finder.found


def loops(source: str) -> list[Loop]:
    """Every ``for``/``while`` statement of the program, in source order."""
    return [loop for loop, _, _ in _find(parse(source))]


def check_fields(fields: Iterable[str]) -> list[str]:
    fields = list(fields)
    if not fields:
        raise SourceError("checkpoint fields must not be empty")
    for field in fields:
        if not isinstance(field, str) or not _FIELD.match(field) or field.startswith("_checkpoint"):
            raise SourceError(f"checkpoint field {field!r} is not a variable name or dotted attribute path")
    if len(set(fields)) != len(fields):
        raise SourceError("checkpoint fields repeat a name")
    return fields


def state_literal(fields: list[str]) -> str:
    return "{" + ", ".join(f"{f!r}: {f}".replace("'", '"') for f in fields) + "}"


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _step(indent: str) -> str:
    return "\t" if indent.startswith("\t") else "    "


def _header_line(tree: ast.Module) -> int:
    """0-based line before which the header goes (after docstring and __future__ imports)."""
    body = tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        i = 1
    while i < len(body) and _is_future_import(body[i]):
        i += 1
    if i < len(body):
        return _start(body[i]) - 1
    return (body[-1].end_lineno or 0) if body else 0


def _is_future_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _locate(source: str, loop_line: int) -> tuple[ast.Module, LoopNode, list[ScopeNode], list[str]]:
    tree = parse(source)
    lines = source.splitlines(keepends=True)
    matches = [(node, stack) for loop, node, stack in _find(tree) if loop.line == loop_line]
    if not matches:
        raise InstrumentError(f"no for/while loop starts on line {loop_line}")
    if len(matches) > 1:
        raise InstrumentError(f"more than one loop starts on line {loop_line}")
    node, stack = matches[0]
    if node.body[0].lineno == node.lineno:
        raise InstrumentError(f"the body of the loop on line {loop_line} is on its header line")
    return tree, node, stack, lines


def _body_insert(lines: list[str], node: LoopNode, text: list[str], order: int = 0) -> _Insert:
    first = node.body[0]
    indent = _indent_of(lines[_start(first) - 1])
    return _Insert(_start(first) - 1, order, [indent + t for t in text])


def _after_insert(tree: ast.Module, lines: list[str], node: LoopNode, text: list[str]) -> _Insert:
    end = node.end_lineno or node.lineno  # always set on a parsed node
    for parent in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and node in block:
                index = block.index(node)
                if index + 1 < len(block) and _start(block[index + 1]) <= end:
                    raise InstrumentError(f"a statement follows the loop on its last line {end}")
    indent = _indent_of(lines[node.lineno - 1])
    depth = len(indent.expandtabs())
    return _Insert(end, -depth, [indent + t for t in text])


def _global_insert(lines: list[str], stack: list[ScopeNode]) -> _Insert | None:
    if not stack:
        return None
    scope = stack[-1]
    body = scope.body
    i = 1 if (len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
              and isinstance(body[0].value.value, str)) else 0
    first = body[i]
    if first.lineno == scope.lineno:
        raise InstrumentError("the function containing the loop has its body on the def line")
    indent = _indent_of(lines[_start(first) - 1])
    return _Insert(_start(first) - 1, -10_000, [indent + f"global {COUNT}\n"])


def _splice(lines: list[str], inserts: list[_Insert]) -> tuple[str, set[int]]:
    """Apply inserts; returns the new text and the set of inserted 1-based line numbers."""
    by_line: dict[int, list[_Insert]] = {}
    for ins in inserts:
        by_line.setdefault(ins.line, []).append(ins)
    out: list[str] = []
    inserted: set[int] = set()
    if lines and not lines[-1].endswith("\n"):
        lines = lines[:-1] + [lines[-1] + "\n"]
    for index in range(len(lines) + 1):
        for ins in sorted(by_line.get(index, []), key=lambda i: i.order):
            for text in ins.text:
                for piece in text.splitlines(keepends=True):
                    out.append(piece)
                    inserted.add(len(out))
        if index < len(lines):
            out.append(lines[index])
    return "".join(out), inserted


def _strip_inserted(tree: ast.AST, inserted: set[int]) -> None:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                block[:] = [s for s in block if not (isinstance(s, ast.stmt) and s.lineno in inserted)]


@lru_cache(maxsize=64)
def _dump(source: str) -> str:
    return ast.dump(ast.parse(source))


def _verify(clean: str, instrumented: str, inserted: set[int]) -> ast.Module:
    """The instrumented tree minus the inserted statements must equal the clean tree."""
    try:
        tree = ast.parse(instrumented)
    except SyntaxError as exc:  # a splicing bug, never the program's fault
        raise InstrumentError(f"instrumented program does not parse: {exc.msg} (line {exc.lineno})") from None
    stripped = ast.parse(instrumented)
    _strip_inserted(stripped, inserted)
    if ast.dump(stripped) != _dump(clean):
        raise InstrumentError("instrumentation changed the program's own statements")
    return tree


def _header_insert(tree: ast.Module) -> _Insert:
    return _Insert(_header_line(tree), -20_000, [HEADER])


def _check_names(source: str) -> None:
    if "_checkpoint" in source:
        raise InstrumentError("the program already uses names starting with _checkpoint")


def instrument(source: str, loop_line: int, fields: list[str], mode: str, iteration: int) -> str:
    """The instrumented program of the ``inside`` or ``post`` arm (see the module docs)."""
    if mode not in ("inside", "post"):
        raise ValueError(mode)
    if iteration < 1:
        raise InstrumentError("inside_iteration must be >= 1")
    _check_names(source)
    fields = check_fields(fields)
    tree, node, stack, lines = _locate(source, loop_line)
    state = state_literal(fields)
    inserts = [_header_insert(tree)]
    glob = _global_insert(lines, stack)
    if glob is not None:
        inserts.append(glob)
    step = _step(_indent_of(lines[_start(node.body[0]) - 1]))
    fire = [f"    {EMIT}({state})\n", "    raise SystemExit\n"]
    fire = [line.replace("    ", step, 1) for line in fire]
    if mode == "inside":
        inserts.append(_body_insert(lines, node, [f"{COUNT} += 1\n", f"if {COUNT} == {iteration}:\n", *fire]))
    else:
        inserts.append(_body_insert(lines, node, [f"{COUNT} += 1\n"]))
        inserts.append(_after_insert(tree, lines, node, [f"if {COUNT} >= {iteration}:\n", *fire]))
    text, inserted = _splice(lines, inserts)
    new_tree = _verify(source, text, inserted)
    _verify_placement(new_tree, inserted, mode)
    return text


def _verify_placement(tree: ast.Module, inserted: set[int], mode: str) -> None:
    """The increment must be the first statement of a loop body; the post check must
    directly follow that loop."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and node.body and node.body[0].lineno in inserted:
            first = node.body[0]
            if not (isinstance(first, ast.AugAssign) and isinstance(first.target, ast.Name)
                    and first.target.id == COUNT):
                break
            if mode == "post":
                for parent in ast.walk(tree):
                    for name in ("body", "orelse", "finalbody"):
                        block = getattr(parent, name, None)
                        if isinstance(block, list) and node in block:
                            nxt = block[block.index(node) + 1] if block.index(node) + 1 < len(block) else None
                            if isinstance(nxt, ast.If) and nxt.lineno in inserted:
                                return
                raise InstrumentError("post checkpoint is not directly after the loop")
            return
    raise InstrumentError("checkpoint counter is not the first statement of the loop body")


# -- running an instrumented program as the clean one ---------------------------------------

def executed_lines(clean: str, instrumented: str) -> list[int]:
    """The line number each line of ``instrumented`` (a text :func:`instrument` made from
    ``clean``) runs under: a line of the clean program keeps its clean number, an inserted
    line gets its own number past the clean program's end. Compiled with these numbers
    the instrumented program's frames, tracebacks and
    ``f_lineno`` show the clean program's lines, while the bytecode and the line events are
    those of the instrumented text (the numbering is one to one, so every "new line" event
    stays one); the state runner (``_runner.py``) compiles it so. Inserted lines: the header block, lines naming a ``_checkpoint`` helper and the
    ``raise SystemExit`` after an emit; what is left must be the clean program, line for line."""
    _check_names(clean)
    lines, kept = instrumented.splitlines(), clean.splitlines()
    header = HEADER.splitlines()
    out: list[int] = []
    extra, at, i = len(kept), 0, 0
    while i < len(lines):
        line = lines[i]
        if lines[i:i + len(header)] == header:
            block = len(header)
        elif "_checkpoint" in line or (line.strip() == "raise SystemExit" and i and EMIT + "(" in lines[i - 1]):
            block = 1
        else:
            if at >= len(kept) or kept[at] != line:
                raise InstrumentError(f"line {i + 1} of the instrumented program is not the clean program's")
            at += 1
            out.append(at)
            i += 1
            continue
        for _ in range(block):
            extra += 1
            out.append(extra)
        i += block
    if at != len(kept):
        raise InstrumentError("the instrumented program lacks lines of the clean program")
    return out


# -- profiling programs (never shown to a model) ------------------------------------------

PROFILE = "_checkpoint_profile"
_PROFILE_HEADER = '''\
import json as _checkpoint_json

_checkpoint_profile = {{"counts": [0] * {n}, "exits": [0] * {n}, "last_exit": [0] * {n}, "snapshots": {{}}}}


def _checkpoint_snapshot(label, names, scope, module):
    taken = {{}}
    for name in names:
        root, _, path = name.partition(".")
        if root in scope:
            value = scope[root]
        elif root in module:
            value = module[root]
        else:
            continue
        try:
            for part in path.split(".") if path else ():
                value = getattr(value, part)
            def encode(value):
                if isinstance(value, (set, frozenset)):
                    return sorted(value)
                raise TypeError(type(value).__name__)
            text = _checkpoint_json.dumps(value, sort_keys=True, separators=(",", ":"),
                                          ensure_ascii=False, allow_nan=False, default=encode)
        except Exception as exc:
            taken[name] = {{"error": type(exc).__name__}}
            continue
        taken[name] = {{"json": text}} if len(text) <= {max_chars} else {{"error": "too_large", "chars": len(text)}}
    _checkpoint_profile["snapshots"][label] = taken


'''


def instrumentable(source: str) -> list[Loop]:
    """Loops the state arms can instrument (body not on the header line, nothing after
    the loop on its last line, enclosing function body not on its def line)."""
    tree = parse(source)
    lines = source.splitlines(keepends=True)
    good = []
    for loop, node, stack in _find(tree):
        try:
            if node.body[0].lineno == node.lineno:
                continue
            _after_insert(tree, lines, node, [])
            _global_insert(lines, stack)
        except InstrumentError:
            continue
        good.append(loop)
    return good


def profile_program(source: str, chosen: list[Loop], snapshots: dict[int, tuple[int, list[str]]] | None = None,
                    max_chars: int = 4000) -> str:
    """A copy of the program counting, for each loop of ``chosen`` (by index j): iterations
    (``counts[j]``), exits (``exits[j]``) and the count at the last exit (``last_exit[j]``).

    With ``snapshots = {j: (K, names)}`` it also records the canonical JSON of ``names`` at
    the start of iterations K-1 and K and at the first exit with count >= K, under labels
    ``"j:before"``, ``"j:inside"``, ``"j:post"``."""
    _check_names(source)
    tree = parse(source)
    lines = source.splitlines(keepends=True)
    by_line = {loop.line: (node, stack) for loop, node, stack in _find(tree)}
    inserts = [_Insert(_header_line(tree), -20_000,
                       [_PROFILE_HEADER.format(n=len(chosen), max_chars=max_chars)])]
    for j, loop in enumerate(chosen):
        node, _ = by_line[loop.line]
        body = [f"{PROFILE}['counts'][{j}] += 1\n"]
        after = [f"{PROFILE}['exits'][{j}] += 1\n", f"{PROFILE}['last_exit'][{j}] = {PROFILE}['counts'][{j}]\n"]
        if snapshots and j in snapshots:
            k, names = snapshots[j]
            names_text = repr(list(names))
            body += [
                f"if {PROFILE}['counts'][{j}] == {k - 1}:\n",
                f"    _checkpoint_snapshot('{j}:before', {names_text}, locals(), globals())\n",
                f"if {PROFILE}['counts'][{j}] == {k}:\n",
                f"    _checkpoint_snapshot('{j}:inside', {names_text}, locals(), globals())\n",
            ]
            after += [
                f"if {PROFILE}['counts'][{j}] >= {k} and '{j}:post' not in {PROFILE}['snapshots']:\n",
                f"    _checkpoint_snapshot('{j}:post', {names_text}, locals(), globals())\n",
            ]
        inserts.append(_body_insert(lines, node, body, order=j))
        inserts.append(_after_insert(tree, lines, node, after))
    text, inserted = _splice(lines, inserts)
    _verify(source, text, inserted)
    return text


# -- names for the automatic projection ----------------------------------------------------

def scope_names(source: str, loop_line: int) -> tuple[list[str], set[str]]:
    """(candidate variable names of the loop's scope in order of first binding, names read
    in or after the loop). Candidates: names bound by assignment, loop targets, with/except
    targets and parameters; not functions, classes or imports."""
    tree, node, stack, _ = _locate(source, loop_line)
    scope: ScopeNode | ast.Module = stack[-1] if stack else tree
    bound: dict[str, int] = {}
    excluded: set[str] = set()

    def own(n: ast.AST) -> Iterable[ast.AST]:  # nodes of this scope (not nested defs)
        todo = list(ast.iter_child_nodes(n))
        while todo:
            child = todo.pop()
            yield child
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                                      ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                todo.extend(ast.iter_child_nodes(child))

    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
            bound.setdefault(arg.arg, scope.lineno)
    loaded: set[str] = set()
    for child in own(scope):
        if isinstance(child, ast.Name):
            if isinstance(child.ctx, ast.Store):
                bound[child.id] = min(bound.get(child.id, child.lineno), child.lineno)
            elif isinstance(child.ctx, ast.Load) and child.lineno >= node.lineno:
                loaded.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            excluded.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            excluded.update((alias.asname or alias.name).split(".")[0] for alias in child.names)
        elif isinstance(child, ast.ExceptHandler) and child.name:
            bound.setdefault(child.name, child.lineno)
    # names read inside nested functions/comprehensions of the loop also keep a variable live
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            loaded.add(child.id)
    names = [n for n, _ in sorted(bound.items(), key=lambda kv: (kv[1], kv[0])) if n not in excluded]
    return names, loaded
