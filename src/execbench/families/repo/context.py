"""The test-side definitions a question needs: what the prompt must carry beside the test function.

A test reads more of its module than the function: helpers and constants at module level
(boltons' ``NORM_DATA``, a ``_make_cache()`` helper), pytest fixtures defined in the module,
and for methods the class's ``setUp``/``setup_method`` (and those of base classes defined in
the module) and the helper methods it calls through ``self``. Without them the answer is
unknowable (the agent is refused the test file).

:func:`needed_definitions` follows the names the test function reads, transitively through
the definitions it finds (a static closure over the module: every definition the test's
dynamic slice can read on the test side is in it; it may hold more). :func:`render` prints
them in file order. The caller rejects a task whose context is over its token budget
(``context_too_large``).

Imports are not definitions here (the prompt shows the module's imports already); neither
are other test functions or test classes.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Any

from execbench.families.repo.assertions import TestFunction

SETUP_METHODS = ("setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class", "setup", "setUpTestData")
_BUILTINS = set(dir(builtins))
CHARS_PER_TOKEN = 4  # the budget's token estimate (no tokenizer dependency)


@dataclass(frozen=True)
class Definition:
    name: str
    node: ast.stmt
    kind: str  # "constant" | "helper" | "class" | "fixture" | "setup" | "method"


def _is_test_name(name: str) -> bool:
    return name.startswith("test") or name.startswith("Test")


def _is_fixture(node: ast.AST) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def _module_definitions(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    out: dict[str, list[ast.stmt]] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                              *[h.body for h in getattr(node, "handlers", [])]):
                    visit(block)
                continue
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for name in names:
                out.setdefault(name, []).append(node)

    visit(tree.body)
    return out


def _reads(node: ast.AST) -> set[str]:
    """Names a definition reads (loads), attribute names read through ``self``/``cls``."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
    return out


def _self_attributes(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id in ("self", "cls")}


def _within(node: ast.AST, spans: list[Any]) -> bool:
    pos = (node.lineno, node.col_offset)  # type: ignore[attr-defined] - expression nodes carry positions
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined] - expression nodes carry positions
    return any((s.lineno, s.col) <= pos and end <= (s.end_lineno, s.end_col) for s in spans)


def needed_definitions(source: str, function: TestFunction, hidden: list[Any] = ()) -> list[Definition]:
    """Module-level and class-level definitions the test function can read (see module doc).
    Names the function reads only inside ``hidden`` spans (the masked operands: the question
    and the other assertions' expected values) are not followed: ``NORM_DATA_OUTPUT`` in
    ``assert stats.format_histogram() == NORM_DATA_OUTPUT`` is the answer, not context."""
    tree = ast.parse(source)
    module_defs = _module_definitions(tree)
    # module-level classes only (a class of the same name nested in some test is not a base)
    classes = {name: d for name, ds in module_defs.items() for d in ds if isinstance(d, ast.ClassDef)}
    found: dict[int, Definition] = {}
    todo: list[ast.AST] = [function.node]
    fixtures = {a.arg for a in function.node.args.args}
    # the class and its bases defined in this module: setUp methods and helpers through self
    chain: list[ast.ClassDef] = []
    if function.class_node is not None:
        pending = [function.class_node]
        while pending:
            cls = pending.pop(0)
            if cls in chain:
                continue
            chain.append(cls)
            pending += [classes[b.id] for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]
    methods: dict[str, tuple[str, ast.stmt]] = {}
    for cls in chain:
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.setdefault(node.name, (f"{cls.name}.{node.name}", node))
                if node.name in SETUP_METHODS and id(node) not in found and methods[node.name][1] is node:
                    found[id(node)] = Definition(f"{cls.name}.{node.name}", node, "setup")
                    todo.append(node)
            elif (isinstance(node, ast.Assign) or isinstance(node, ast.AnnAssign) and node.value is not None) \
                    and cls is not function.class_node:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                found.setdefault(id(node), Definition(f"{cls.name}.{ast.unparse(target)}", node, "constant"))
    seen_names: set[str] = set()
    while todo:
        node = todo.pop()
        names = _reads(node)
        if node is function.node:
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                     and not (hidden and _within(n, list(hidden)))} | fixtures
        for attr in _self_attributes(node):
            qual, method = methods.get(attr, ("", None))
            if method is not None and id(method) not in found and not _is_test_name(attr):
                found[id(method)] = Definition(qual, method, "method")
                todo.append(method)
        for name in names - seen_names:
            seen_names.add(name)
            if name in _BUILTINS and name not in module_defs:
                continue
            for d in module_defs.get(name, []):
                if d is function.node or id(d) in found:
                    continue
                if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test_name(d.name) \
                        and not _is_fixture(d):
                    continue
                if isinstance(d, ast.ClassDef) and (_is_test_name(d.name) or d in chain):
                    continue
                kind = ("fixture" if _is_fixture(d) else "helper" if isinstance(d, (ast.FunctionDef,
                        ast.AsyncFunctionDef)) else "class" if isinstance(d, ast.ClassDef) else "constant")
                if kind == "fixture" and name not in fixtures and name not in _reads(function.node):
                    continue
                found[id(d)] = Definition(name, d, kind)
                todo.append(d)
    return sorted(found.values(), key=lambda d: d.node.lineno)


def render(source: str, definitions: list[Definition]) -> str:
    """The definitions' source in file order (decorators included), one blank line apart."""
    parts = []
    for d in definitions:
        node = d.node
        first = min([node.lineno, *(x.lineno for x in getattr(node, "decorator_list", []))])
        lines = source.splitlines()[first - 1:node.end_lineno]
        text = "\n".join(lines)
        indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
        body = "\n".join(line[indent:] for line in text.splitlines()).rstrip()
        parts.append(f"# {d.name.rsplit('.', 1)[0]}:\n{body}" if "." in d.name else body)
    return "\n\n".join(parts)


def tokens(text: str) -> int:
    """The budget's estimate of a text's tokens."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN

