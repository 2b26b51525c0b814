"""What a test touched outside its function, as its own run recorded it (issue 35), and the
check that the prompt shows all of it.

The key run (``_plugin.py``, :class:`~execbench.families.repo.records.run_records.ContextRecord`) records
per test every fixture that ran (``item.fixturenames``: parameters, ``usefixtures`` on the
function, class or module, ``pytestmark``, autouse at any conftest level, parametrization)
with the definition pytest chose, the attribute names ``self`` held and those of each class
of its MRO, and the module-level names its code reads with what they were bound to. That
record comes from the test process: :func:`parse` reads it bounded and validated (anything
malformed is a rejection, never trusted).

:func:`missing` decides, for one task, whether everything the test touched is shown: a
fixture's definition among the carried definitions (by file and line), an attribute of
``self``/``cls`` the test function reads (and does not set itself), or a carried method of its
class reads (a helper called through ``self``, a setup or fixture method: :func:`carried_methods`),
either defined outside
the repository (``unittest.TestCase.assertEqual``), in the library, in a class body shown,
or assigned by shown code (``request.cls.locale = ...`` in a carried conftest fixture), and
every module-level name it reads defined in shown code, imported by a shown import, or
outside the repository's test side. What is not is the rejection
``context_missing: <kind> <name> (...)`` with kind ``fixture``, ``parameter``,
``attribute`` or ``global``.
"""

from __future__ import annotations

import ast
import builtins
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from execbench.errors import InternalError
from execbench.families.repo.selection.assertions import TestFunction

MAX_ITEMS = 500
MAX_CLASSES = 20
MAX_TEXT = 800
# Fixtures pytest provides (besides those defined in ``_pytest``): public, documented behaviour.
PUBLIC_FIXTURE_MODULES = ("_pytest", "pytest")
_BUILTINS = set(dir(builtins))


@dataclass(frozen=True)
class Fixture:
    name: str
    file: str | None  # relative to the repository root; None: outside the tree
    line: int  # the definition's first line (its first decorator's)
    function: str
    module: str


@dataclass
class Touched:
    """A validated :class:`ContextRecord`: files made relative to the repository root."""

    fixtures: list[Fixture] = field(default_factory=list)
    params: set[str] = field(default_factory=set)
    instance: set[str] = field(default_factory=set)
    classes: list[tuple[str, str | None, set[str]]] = field(default_factory=list)  # MRO order
    globals: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (kind, file)


class Invalid(InternalError, ValueError):
    pass


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise Invalid(f"{what}: expected a string of at most {MAX_TEXT} characters")
    return value


def _list(value: object, what: str, limit: int = MAX_ITEMS) -> list[Any]:
    if not isinstance(value, list) or len(value) > limit:
        raise Invalid(f"{what}: expected a list of at most {limit} items")
    return value


def _relative_to(path: str, base: Path) -> str | None:
    """``path`` (symlinks followed) relative to ``base`` (a resolved root), or None when it lies outside."""
    if not path:
        return None
    real = Path(os.path.realpath(path))
    return real.relative_to(base).as_posix() if real.is_relative_to(base) else None


def parse(raw: object, root: Path) -> Touched:
    """The record's fields, checked (types, sizes); :class:`Invalid` when anything is off."""
    if not isinstance(raw, dict):
        raise Invalid("context: expected an object")
    out = Touched()
    base = Path(os.path.realpath(root))
    files: dict[str, str | None] = {}

    def relative(path: str) -> str | None:  # each recorded file resolved once
        if path not in files:
            files[path] = _relative_to(path, base)
        return files[path]

    for entry in _list(raw.get("fixtures", []), "fixtures"):
        entry = _list(entry, "fixture", 5)
        if len(entry) != 5 or not isinstance(entry[2], int) or isinstance(entry[2], bool):
            raise Invalid("fixture: expected [name, file, line, function, module]")
        name = _text(entry[0], "fixture name")
        if name == "__error__":
            raise Invalid(f"fixtures not recorded: {_text(entry[1], 'error')}")
        out.fixtures.append(Fixture(name, relative(_text(entry[1], "fixture file")), entry[2],
                                    _text(entry[3], "fixture function"), _text(entry[4], "fixture module")))
    out.params = {_text(p, "parameter") for p in _list(raw.get("params", []), "params")}
    out.instance = {_text(n, "attribute") for n in _list(raw.get("instance", []), "instance")}
    for entry in _list(raw.get("classes", []), "classes", MAX_CLASSES):
        entry = _list(entry, "class", 3)
        if len(entry) != 3:
            raise Invalid("class: expected [qualname, file, names]")
        if entry[0] == "__error__":
            raise Invalid(f"classes not recorded: {_text(entry[1], 'error')}")
        names = {_text(n, "class attribute") for n in _list(entry[2], "class attributes")}
        out.classes.append((_text(entry[0], "class"), relative(_text(entry[1], "class file")), names))
    for entry in _list(raw.get("globals", []), "globals"):
        entry = _list(entry, "global", 3)
        if len(entry) != 3:
            raise Invalid("global: expected [name, kind, file]")
        name, kind = _text(entry[0], "global"), _text(entry[1], "global kind")
        if name == "__error__":
            raise Invalid(f"globals not recorded: {kind}")
        if kind not in ("module", "class", "function", "value"):
            raise Invalid(f"global {name}: unknown kind")
        out.globals[name] = (kind, relative(_text(entry[2], "global file")))
    return out


# --- what the shown code defines -----------------------------------------------------------

def _first_line(node: ast.AST) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]


def _covers(node: ast.AST, line: int) -> bool:
    """Whether a definition starts at ``line`` (a code object's first line is its first decorator's)."""
    return _first_line(node) <= line <= node.lineno  # type: ignore[attr-defined]  # statements have positions


def assigned_attributes(nodes: Iterable[ast.AST]) -> set[str]:
    """Attribute names shown code assigns (``<x>.NAME = ...``, ``setattr(x, "NAME", ...)``)."""
    out: set[str] = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                out.add(n.attr)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr" \
                    and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
                out.add(n.args[1].value)
    return out


def _class_body_names(cls: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def _module_classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                out.setdefault(prefix + node.name, node)
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                              *[h.body for h in getattr(node, "handlers", [])]):
                    visit(block, prefix)

    visit(tree.body, "")
    return out


def parametrize_names(decorators: Iterable[ast.expr]) -> set[str]:
    """Argument names of the ``parametrize`` calls among ``decorators`` (also a ``pytestmark``
    value's marks)."""
    out: set[str] = set()
    for d in decorators:
        for n in ast.walk(d):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "parametrize" and n.args:
                first = n.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    out |= {p.strip() for p in first.value.split(",") if p.strip()}
                elif isinstance(first, (ast.List, ast.Tuple)):
                    out |= {e.value for e in first.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return out


def _within(node: ast.AST, spans: list[Any]) -> bool:
    pos = (node.lineno, node.col_offset)  # type: ignore[attr-defined]  # expression nodes carry positions
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return any((s.lineno, s.col) <= pos and end <= (s.end_lineno, s.end_col) for s in spans)


@dataclass(frozen=True)
class Shown:
    """What the prompt shows of the test side: definitions per file (the test module's and
    the carried ones), as AST nodes with their names."""

    module_rel: str  # the file of the test function
    tree: ast.Module  # its module
    nodes: list[tuple[str, str, ast.AST]]  # (file, name, node) of every carried definition
    imports: dict[str, tuple[str, str | None, int]]  # the module's import-bound names (shown)
    stars: bool  # the module has a star import
    own_classes: set[str] = field(default_factory=set)  # the test's class (its header is shown)


def _fixture_missing(f: Fixture, shown: Shown, params: set[str], is_library: Callable[[str], bool]) -> str | None:
    public = f.module.split(".")[0] in PUBLIC_FIXTURE_MODULES
    if f.name in params and (public or f.file is None):
        return None  # a direct parametrization's pseudo-fixture: checked as a parameter
    if f.file is None:
        if public or f.name == "request":
            return None
        return f"context_missing: fixture {f.name} (from an installed plugin: {f.module or 'unknown module'})"
    if any(file == f.file and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _covers(node, f.line)
           for file, _name, node in shown.nodes):
        return None
    if is_library(f.file):
        return None  # a fixture the library ships (its plugin): library code, as what the test calls
    return f"context_missing: fixture {f.name} ({f.file}:{f.line}, not shown)"


def _attribute_missing(name: str, touched: Touched, shown: Shown, assigned: set[str],
                       is_library: Callable[[str], bool]) -> str | None:
    if name in touched.instance:
        return None if name in assigned else \
            f"context_missing: attribute self.{name} (set outside the test function by code not shown)"
    classes = _module_classes(shown.tree)
    for qual, file, names in touched.classes:
        if name not in names:
            continue
        if file is None or is_library(file):
            return None  # unittest.TestCase, a library base class: public
        cls = classes.get(qual) if file == shown.module_rel else None
        if cls is not None and name in _class_body_names(cls):
            return None  # the class body defines it (its header, constants and the methods read are shown)
        carried = any(f == file and isinstance(node, ast.ClassDef) and node.name == qual.rsplit(".", 1)[-1]
                      and name in _class_body_names(node) for f, _n, node in shown.nodes)
        if carried or name in assigned:
            return None
        return f"context_missing: attribute self.{name} (of class {qual} in {file}, not shown)"
    return None  # not found on the instance or its classes: set (and dropped) by the test itself


def _global_missing(name: str, touched: Touched, shown: Shown, is_library: Callable[[str], bool]) -> str | None:
    kind, file = touched.globals.get(name, ("", None))
    if not kind:
        return None  # never bound as a global when the test ran
    if kind != "value" and (file is None or is_library(file)):
        return None  # a module, class or function from outside the repository's test side
    if name in shown.own_classes or any(n == name for f, n, _node in shown.nodes if f == shown.module_rel):
        return None
    if name in shown.imports:
        module, attr, _level = shown.imports[name]
        if kind == "value" or file is None or any(f == file and n in (name, attr) for f, n, _ in shown.nodes):
            return None  # the shown import; a test-side file's definitions are carried (context.outside_definitions)
        return f"context_missing: global {name} (from {file}, not shown)"
    if kind != "value" and file is not None and any(f == file and n == name for f, n, _ in shown.nodes):
        return None
    if shown.stars:
        return None  # a star import (test-side ones are followed by context.outside_definitions)
    if kind == "value" or file is None:
        return f"context_missing: global {name} (bound at run time; no shown code defines it)"
    return f"context_missing: global {name} ({kind} from {file}, not shown)"


def _self_reads(node: ast.AST, hidden: list[Any]) -> set[str]:
    """Attribute names ``node`` reads through ``self``/``cls`` (outside ``hidden``)."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls") and not (hidden and _within(n, hidden))}


def carried_methods(shown: Shown) -> list[ast.AST]:
    """The carried definitions that are methods of a class of the test module (the test class's
    helper methods, setup methods and fixture methods ``context.needed_definitions`` follows
    through ``self``): their ``self``/``cls`` is the test's instance, so what they read is what
    the test read."""
    members = {_where(m) for cls in _module_classes(shown.tree).values() for m in cls.body
               if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return [node for file, _name, node in shown.nodes if file == shown.module_rel
            and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _where(node) in members]


def _where(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int, int | None, str]:
    """A definition's place in its file (the same node whether or not the tree was parsed again)."""
    return node.lineno, node.col_offset, node.end_lineno, node.name


def missing(touched: Touched, function: TestFunction, shown: Shown, hidden: list[Any],
            is_library: Callable[[str], bool]) -> str | None:
    """The first thing the test touched that the prompt does not show (module doc), or None."""
    declared = parametrize_names(function.node.decorator_list)
    if function.class_node is not None:
        declared |= parametrize_names(function.class_node.decorator_list)
    shown_fixtures = {f.name for f in touched.fixtures if f.file is not None
                      and f.module.split(".")[0] not in PUBLIC_FIXTURE_MODULES}  # @pytest.fixture(params=...)
    for param in sorted(touched.params - declared - shown_fixtures):
        return f"context_missing: parameter {param} (parametrized outside the test function and its class)"
    for fixture in touched.fixtures:
        why = _fixture_missing(fixture, shown, touched.params, is_library)
        if why:
            return why
    node = function.node
    own = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
           and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")}
    assigned = assigned_attributes(n for _f, _name, n in shown.nodes)
    read = sorted((_self_reads(node, hidden) | {a for m in carried_methods(shown) for a in _self_reads(m, [])})
                  - own)
    for name in read:
        why = _attribute_missing(name, touched, shown, assigned, is_library)
        if why:
            return why
    names = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                    and not (hidden and _within(n, hidden))} - function.local_names)
    for name in names:
        if name in _BUILTINS and name not in touched.globals:
            continue
        why = _global_missing(name, touched, shown, is_library)
        if why:
            return why
    return None
