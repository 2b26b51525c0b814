"""Python scope resolution for consistent renaming (parent side: only parses, never runs).

Every identifier *occurrence* of a module (a ``Name``, a parameter, a ``def``/``class``
name, an ``except ... as`` name, a ``global``/``nonlocal`` entry, an import or ``match``
binding) is resolved to the *binding* it refers to: ``(scope, name)``. Resolution follows
Python's rules: names bound anywhere in a function are local to it unless declared
``global``/``nonlocal``; class bodies are skipped when a nested function looks a name up;
comprehensions have their own scope, except for their first iterable (evaluated outside)
and ``:=`` targets (bound in the enclosing function); decorators, defaults, annotations
and class bases are evaluated in the enclosing scope.

Occurrences are addressed by their index in ``ast.walk(tree)`` order, which is the same
for two parses of the same text: that is how a rename is replayed on a fresh tree to
check the spliced text (see :mod:`execbench.mutation.program`).

A class body reads a name it binds from the class namespace or, before (or without) that
binding, from the module (``x = 1`` / ``class C: x = x + 1``): such a module name is
``fixed`` (never renamed), since class-body names never are.

Why not beniget (issue 17; ``benchmarks/scopes_beniget.py``, docs/mutation.md): beniget's
use-def chains are flow-sensitive reaching definitions, and renaming needs Python's static
scoping. Read through beniget (on this very ``ast`` tree, plus one rule: an augmented
assignment binds where the name it reads is bound), 20,299 of the 20,307 occurrences of
the HumanEval, trace, state and CRUXEval programs resolve alike; it has no answer for a
name no definition reaches (a name defined nowhere, ``string`` in CRUXEval sample_78; a
local read before its assignment or after ``del``), for a ``global``/``nonlocal`` entry
(no node), or for a store to a ``global`` name the module already binds (kept outside
``locals``), and it puts a plain store to a ``nonlocal`` name in the inner function. Each
needs the static lookup below, so beniget would be a second analysis, not a replacement.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

#: Builtins that read or write scopes by name: renaming around them is unsafe.
DYNAMIC_NAMES = frozenset({"locals", "vars", "globals", "eval", "exec", "__import__", "compile", "breakpoint"})
DYNAMIC_ATTRIBUTES = frozenset({"__dict__", "f_locals", "f_globals", "__code__", "__globals__", "modules",
                                "signature", "getfullargspec", "getargspec"})

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(eq=False)
class Scope:
    kind: str  # "module" | "function" | "class" | "comprehension"
    name: str
    parent: "Scope | None"
    node_index: int
    bound: set[str] = field(default_factory=set)
    params: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    fixed: set[str] = field(default_factory=set)  # never renamed: import/match bindings, module names a class body reads
    decorated: bool = False

    @property
    def qualname(self) -> str:
        parts = []
        scope: Scope | None = self
        while scope is not None and scope.kind != "module":
            parts.append(scope.name)
            scope = scope.parent
        return ".".join(reversed(parts)) or "<module>"


@dataclass(frozen=True)
class Occurrence:
    index: int  # the node's index in ast.walk order
    kind: str  # "name" | "arg" | "def" | "class" | "except" | "global" | "nonlocal" | "fixed"
    name: str
    scope: Scope  # where the occurrence sits
    slot: int = 0  # for global/nonlocal: position in the statement's names


@dataclass
class Resolution:
    tree: ast.Module
    nodes: list[ast.AST]
    module: Scope
    scopes: list[Scope]
    occurrences: list[tuple[Occurrence, Scope]]  # (occurrence, scope of its binding)
    dynamic: bool  # the program reads or writes scopes by name
    keywords: set[str]  # every keyword-argument name used in a call
    star_kwargs: bool  # some call passes **mapping


def _is_dynamic(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in DYNAMIC_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_ATTRIBUTES:
            return True
    return False


class _Collector:
    """Builds scopes and records occurrences (pass 1); :func:`resolve` resolves them (pass 2)."""

    def __init__(self, tree: ast.Module) -> None:
        self.nodes = list(ast.walk(tree))
        self.index = {id(node): i for i, node in enumerate(self.nodes)}
        self.module = Scope("module", "<module>", None, 0)
        self.scopes = [self.module]
        self.raw: list[Occurrence] = []
        self.keywords: set[str] = set()
        self.star_kwargs = False

    # -- helpers -----------------------------------------------------------------------
    def _new(self, kind: str, name: str, parent: Scope, node: ast.AST) -> Scope:
        scope = Scope(kind, name, parent, self.index[id(node)])
        self.scopes.append(scope)
        return scope

    def _occ(self, node: ast.AST, kind: str, name: str, scope: Scope, slot: int = 0) -> None:
        self.raw.append(Occurrence(self.index[id(node)], kind, name, scope, slot))

    @staticmethod
    def _function_scope(scope: Scope) -> Scope:
        """Where ``:=`` binds: the nearest enclosing non-comprehension scope."""
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope

    # -- traversal -----------------------------------------------------------------------
    def visit(self, node: ast.AST, scope: Scope) -> None:
        method = getattr(self, f"_visit_{type(node).__name__}", None)
        if method is not None:
            method(node, scope)
        else:
            self.children(node, scope)

    def children(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def _visit_Name(self, node: ast.Name, scope: Scope) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            scope.bound.add(node.id)
        self._occ(node, "name", node.id, scope)

    def _visit_NamedExpr(self, node: ast.NamedExpr, scope: Scope) -> None:
        target_scope = self._function_scope(scope)
        if isinstance(node.target, ast.Name):
            target_scope.bound.add(node.target.id)
            self._occ(node.target, "name", node.target.id, target_scope)
        self.visit(node.value, scope)

    def _visit_Global(self, node: ast.Global, scope: Scope) -> None:
        for slot, name in enumerate(node.names):
            scope.declared_global.add(name)
            self._occ(node, "global", name, scope, slot)

    def _visit_Nonlocal(self, node: ast.Nonlocal, scope: Scope) -> None:
        for slot, name in enumerate(node.names):
            scope.declared_nonlocal.add(name)
            self._occ(node, "nonlocal", name, scope, slot)

    def _visit_Import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            scope.bound.add(name)
            scope.fixed.add(name)
            self._occ(node, "fixed", name, scope)

    _visit_ImportFrom = _visit_Import  # one visitor serves both node types

    def _visit_Call(self, node: ast.Call, scope: Scope) -> None:
        for keyword in node.keywords:
            if keyword.arg is None:
                self.star_kwargs = True
            else:
                self.keywords.add(keyword.arg)
        self.children(node, scope)

    def _visit_ExceptHandler(self, node: ast.ExceptHandler, scope: Scope) -> None:
        if node.name:
            scope.bound.add(node.name)
            self._occ(node, "except", node.name, scope)
        self.children(node, scope)

    def _match_name(self, node: ast.AST, name: str | None, scope: Scope) -> None:
        if name:
            scope.bound.add(name)
            scope.fixed.add(name)
            self._occ(node, "fixed", name, scope)

    def _visit_MatchAs(self, node: ast.MatchAs, scope: Scope) -> None:
        self._match_name(node, node.name, scope)
        self.children(node, scope)

    def _visit_MatchStar(self, node: ast.MatchStar, scope: Scope) -> None:
        self._match_name(node, node.name, scope)

    def _visit_MatchMapping(self, node: ast.MatchMapping, scope: Scope) -> None:
        self._match_name(node, node.rest, scope)
        self.children(node, scope)

    def _arguments(self, args: ast.arguments, outer: Scope, inner: Scope) -> None:
        """Defaults and annotations in ``outer``; parameter names bound in ``inner``."""
        for default in [*args.defaults, *[d for d in args.kw_defaults if d is not None]]:
            self.visit(default, outer)
        every = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
                 *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]
        for arg in every:
            if arg.annotation is not None:
                self.visit(arg.annotation, outer)
            inner.bound.add(arg.arg)
            inner.params.add(arg.arg)
            self._occ(arg, "arg", arg.arg, inner)

    def _visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator, scope)
        if node.returns is not None:
            self.visit(node.returns, scope)
        scope.bound.add(node.name)
        self._occ(node, "def", node.name, scope)
        inner = self._new("function", node.name, scope, node)
        inner.decorated = bool(node.decorator_list)
        self._arguments(node.args, scope, inner)
        for statement in node.body:
            self.visit(statement, inner)

    _visit_AsyncFunctionDef = _visit_FunctionDef  # one visitor serves both node types

    def _visit_Lambda(self, node: ast.Lambda, scope: Scope) -> None:
        inner = self._new("function", "<lambda>", scope, node)
        self._arguments(node.args, scope, inner)
        self.visit(node.body, inner)

    def _visit_ClassDef(self, node: ast.ClassDef, scope: Scope) -> None:
        for expr in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
            self.visit(expr, scope)
        for keyword in node.keywords:
            if keyword.arg is not None:
                self.keywords.add(keyword.arg)
        scope.bound.add(node.name)
        self._occ(node, "class", node.name, scope)
        inner = self._new("class", node.name, scope, node)
        for statement in node.body:
            self.visit(statement, inner)

    def _comprehension(self, node: ast.AST, scope: Scope) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
        self.visit(generators[0].iter, scope)
        inner = self._new("comprehension", f"<{type(node).__name__.lower()}>", scope, node)
        for number, generator in enumerate(generators):
            self.visit(generator.target, inner)
            if number:
                self.visit(generator.iter, inner)
            for condition in generator.ifs:
                self.visit(condition, inner)
        for part in ("elt", "key", "value"):
            child = getattr(node, part, None)
            if child is not None:
                self.visit(child, inner)

    _visit_ListComp = _visit_SetComp = _visit_DictComp = _visit_GeneratorExp = _comprehension


def _binding(occ: Occurrence, module: Scope) -> Scope:
    """The scope whose binding ``occ`` refers to (the module for globals and builtins)."""
    scope, name = occ.scope, occ.name
    if occ.kind == "global" or name in scope.declared_global:
        return module
    if occ.kind == "nonlocal" or name in scope.declared_nonlocal:
        current = scope.parent
    elif name in scope.bound or occ.kind in ("def", "class", "arg", "except", "fixed"):
        return scope
    else:
        current = scope.parent
    while current is not None:
        if current.kind == "module":
            return module
        if current.kind == "class":
            current = current.parent
            continue
        if name in current.declared_global:
            return module
        if name in current.bound and name not in current.declared_nonlocal:
            return current
        current = current.parent
    return module


def _pin_class_reads(nodes: list[ast.AST], occurrences: list[tuple[Occurrence, Scope]], module: Scope) -> None:
    """A class body reads a name it binds from the class namespace *or*, before (or without)
    the class binding, from the module (``x = 1`` / ``class C: x = x + 1``): that module
    binding must keep its name, since the class's never changes."""
    augmented = {id(node.target) for node in nodes if isinstance(node, ast.AugAssign)}
    for occ, owner in occurrences:
        if owner.kind != "class" or occ.kind != "name" or occ.name not in module.bound:
            continue
        node = nodes[occ.index]
        if isinstance(node.ctx, ast.Load) or id(node) in augmented:  # type: ignore[attr-defined]  # a "name" occurrence is an ast.Name
            module.fixed.add(occ.name)


def resolve(tree: ast.Module) -> Resolution:
    collector = _Collector(tree)
    for statement in tree.body:
        collector.visit(statement, collector.module)
    occurrences = [(occ, _binding(occ, collector.module)) for occ in collector.raw]
    _pin_class_reads(collector.nodes, occurrences, collector.module)
    return Resolution(
        tree=tree, nodes=collector.nodes, module=collector.module, scopes=collector.scopes,
        occurrences=occurrences, dynamic=_is_dynamic(tree), keywords=collector.keywords,
        star_kwargs=collector.star_kwargs,
    )


def identifiers(tree: ast.AST) -> set[str]:
    """Every identifier spelled anywhere in ``tree`` (names, attributes, parameters, keywords,
    definitions, imports): new names must avoid all of them."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.alias):
            out.add(node.name.split(".")[0])
            if node.asname:
                out.add(node.asname)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return out
