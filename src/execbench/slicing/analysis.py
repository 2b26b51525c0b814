"""Static analysis of one traced code object, the per-frame input of the slicer.

For the code object of a call record (a function, method, lambda, comprehension, class
body or module, found in its file by name and first line) this module computes, with
gast + beniget, one :class:`Stmt` per statement:

* the lines of the statement's *own part* (a compound statement's header, not its body),
  which is how executed line numbers are mapped back to statements;
* the names it reads, classified by beniget's use-def chains as ``local`` (bound in
  this frame: a parameter or a local definition, to be chased backwards in the trace),
  ``builtin``, or ``external`` (a global, an import or a free variable);
* the names it (re)defines (strong definitions: assignment, loop/with/except targets,
  def/class/import statements) and the names whose object it may modify in place
  (``v.m(...)``, ``v.a = ...``, ``v[k] = ...``, ``del v[k]``: weak definitions);
* its control dependences (see :func:`_controllers`);
* its call sites (explicit calls, with the callee name) and the names of implicit calls
  (operator dunders, attribute names for properties), used to attach child call records
  to the statement that made them.

Analyses are cached by ``(file, firstlineno, func, source hash)`` in a
:class:`AnalysisCache` (beniget on a 335-line function costs ~15 ms; one test file's
tasks share their frames).
"""

from __future__ import annotations

import builtins
import hashlib
import io
import keyword
import threading
import tokenize
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import beniget
import gast

BUILTINS = frozenset(dir(builtins))
KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
COMPREHENSIONS = {"<listcomp>": gast.ListComp, "<setcomp>": gast.SetComp,
                  "<dictcomp>": gast.DictComp, "<genexpr>": gast.GeneratorExp}
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
           gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_DEFS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
_LOOPS = (gast.For, gast.AsyncFor, gast.While)
_EXITS = (gast.Return, gast.Raise, gast.Break, gast.Continue)
CONSTRUCTOR_LEAVES = {"__init__", "__new__", "__post_init__", "__attrs_post_init__",
                      "__init_subclass__", "__set_name__"}

# Implicit calls an expression or statement can make (used only to attach call records).
_BINOP_DUNDERS = {
    gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.MatMult: "matmul",
    gast.Div: "truediv", gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow",
    gast.LShift: "lshift", gast.RShift: "rshift", gast.BitOr: "or", gast.BitXor: "xor",
    gast.BitAnd: "and",
}
_CMP_DUNDERS = {
    gast.Eq: ("__eq__",), gast.NotEq: ("__ne__", "__eq__"), gast.Lt: ("__lt__", "__gt__"),
    gast.LtE: ("__le__", "__ge__"), gast.Gt: ("__gt__", "__lt__"), gast.GtE: ("__ge__", "__le__"),
    gast.In: ("__contains__", "__iter__", "__next__"),
    gast.NotIn: ("__contains__", "__iter__", "__next__"),
}
_UNARY_DUNDERS = {gast.USub: "__neg__", gast.UAdd: "__pos__", gast.Invert: "__invert__",
                  gast.Not: "__bool__"}
_BUILTIN_DUNDERS = {
    "len": ("__len__",), "str": ("__str__", "__repr__"), "repr": ("__repr__",),
    "hash": ("__hash__",), "iter": ("__iter__",), "next": ("__next__",),
    "bool": ("__bool__", "__len__"), "format": ("__format__", "__str__"),
    "int": ("__int__", "__index__"), "float": ("__float__",), "abs": ("__abs__",),
    "reversed": ("__reversed__", "__len__", "__getitem__"), "getattr": ("__getattr__",),
    "setattr": ("__setattr__",), "isinstance": ("__instancecheck__",),
    "issubclass": ("__subclasscheck__",), "copy": ("__copy__",), "deepcopy": ("__deepcopy__",),
}
_ITERATING = ("__iter__", "__next__", "__len__", "__getitem__", "__length_hint__")


class _Chains(beniget.DefUseChains):
    def warn(self, msg: str, node: Any) -> None:  # beniget prints warnings: keep quiet
        pass


@dataclass(frozen=True)
class Read:
    name: str
    kind: str  # "local" | "builtin" | "external"
    pos: tuple[int, int]  # (lineno, col_offset) of the Name node


@dataclass(frozen=True)
class Site:
    name: str  # callee: Name id, attribute name, or "<dynamic>"
    line: int
    pos: tuple[int, int]
    dynamic: bool  # the callee is a frame-local value (a parameter, a variable) or an expression


@dataclass
class Stmt:
    id: int
    kind: str  # node class name
    lines: tuple[int, ...]
    reads: tuple[Read, ...]
    writes: frozenset[str]
    mutates: frozenset[str]
    callees: frozenset[str]
    sites: tuple[Site, ...]
    implicit: frozenset[str]
    controllers: tuple[int, ...] = ()
    returns: bool = False  # a return point: return, yield, yield from (or a lambda/comprehension body)
    yields: bool = False  # holds a yield / yield from
    raises: bool = False
    span: tuple[int, int, int, int] = (0, 0, 0, 0)  # lineno, col, end_lineno, end_col

    @property
    def local_reads(self) -> frozenset[str]:
        return frozenset(r.name for r in self.reads if r.kind == "local")


@dataclass
class CodeInfo:
    """The analysis of one code object; ``found`` is False when its node was not located."""

    file: str
    func: str
    firstlineno: int
    kind: str  # "function" | "lambda" | "comprehension" | "class" | "module" | "unknown"
    found: bool
    span: tuple[int, int] = (0, 0)
    code_lines: frozenset[int] = frozenset()  # non-blank, non-comment lines of the span
    stmts: list[Stmt] = field(default_factory=list)
    line_stmts: dict[int, tuple[int, ...]] = field(default_factory=dict)
    params: frozenset[str] = frozenset()
    imported: frozenset[str] = frozenset()  # names bound by import statements in the code
    module_imports: frozenset[str] = frozenset()  # names bound by `import x` in the module
    declared: frozenset[str] = frozenset()  # names declared global/nonlocal in the code


class AnalysisCache:
    """Per-file parse results and per-code-object analyses, keyed by file name and content hash.

    Pass one instance to several :func:`execbench.slicing.slice_metrics` calls over the
    same sources to analyse every function once. Both are pure functions of their key and
    read only once made, so one instance may serve every build of a process (the repo
    family's test modules of one library share its modules); ``modules`` and ``codes`` bound
    the two tables (least recently used entries go first; None: unbounded). Safe to share
    between threads."""

    def __init__(self, modules: int | None = None, codes: int | None = None) -> None:
        self._modules: OrderedDict[tuple[str, str], _Module | None] = OrderedDict()
        self._codes: OrderedDict[tuple[str, int, str, str], CodeInfo] = OrderedDict()
        self._digests: OrderedDict[str, str] = OrderedDict()  # source text -> digest (str hashes are cached, digests are not)
        self._module_limit, self._code_limit = modules, codes
        self._lock = threading.Lock()

    def _get(self, table: OrderedDict, key: Any) -> Any:
        with self._lock:
            value = table.get(key, _MISSING)
            if value is not _MISSING:
                table.move_to_end(key)
            return value

    def _put(self, table: OrderedDict, key: Any, value: Any, limit: int | None) -> None:
        with self._lock:
            table[key] = value
            while limit is not None and len(table) > limit:
                table.popitem(last=False)

    def _digest(self, source: str) -> str:
        digest = self._get(self._digests, source)
        if digest is _MISSING:
            digest = _digest(source)
            self._put(self._digests, source, digest, self._module_limit)
        return digest

    def module(self, file: str, source: str) -> "_Module | None":
        key = (file, self._digest(source))
        parsed = self._get(self._modules, key)
        if parsed is _MISSING:
            parsed = _Module.parse(source)
            self._put(self._modules, key, parsed, self._module_limit)
        return parsed

    def code(self, file: str, source: str, func: str, firstlineno: int) -> CodeInfo:
        key = (file, firstlineno, func, self._digest(source))
        info = self._get(self._codes, key)
        if info is _MISSING:
            info = analyse(file, source, func, firstlineno, self)
            self._put(self._codes, key, info, self._code_limit)
        return info


_MISSING = object()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


# -- module level -------------------------------------------------------------------------

@dataclass
class _Module:
    tree: gast.Module
    code_lines: frozenset[int]
    module_imports: frozenset[str]
    index: dict[tuple[str, int], list[gast.AST]]  # (kind key, first line) -> nodes

    @classmethod
    def parse(cls, source: str) -> "_Module | None":
        try:
            tree = gast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        index: dict[tuple[str, int], list[gast.AST]] = {}
        for node in gast.walk(tree):
            key = _node_key(node)
            if key is not None:
                index.setdefault(key, []).append(node)
        return cls(tree, _code_lines(source), _module_imports(tree), index)


def _node_key(node: gast.AST) -> tuple[str, int] | None:
    if isinstance(node, _DEFS):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return (node.name, first)
    if isinstance(node, gast.Lambda):
        return ("<lambda>", node.lineno)
    for name, cls in COMPREHENSIONS.items():
        if isinstance(node, cls):
            return (name, node.lineno)
    return None


def _code_lines(source: str) -> frozenset[int]:
    """Lines holding code: not blank, not only a comment (lines of multi-line strings count
    when they are not blank)."""
    lines = source.splitlines()
    out: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in skip:
                continue
            for line in range(tok.start[0], tok.end[0] + 1):
                if 0 < line <= len(lines) and lines[line - 1].strip():
                    out.add(line)
    except (tokenize.TokenError, SyntaxError):
        out = {i for i, text in enumerate(lines, 1)
               if text.strip() and not text.strip().startswith("#")}
    return frozenset(out)


def _module_imports(tree: gast.Module) -> frozenset[str]:
    """Names bound by ``import x`` / ``import x as y`` anywhere outside functions and classes."""
    names: set[str] = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Import):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif not isinstance(node, _SCOPES):
            todo.extend(n for n in gast.iter_child_nodes(node) if isinstance(n, gast.stmt)
                        or isinstance(n, gast.excepthandler))
    return frozenset(names)


# -- one code object ---------------------------------------------------------------------

def leaf(func: str) -> str:
    """Last component of a qualified name: ``A.<locals>.f`` -> ``f``."""
    return func.rsplit(".", 1)[-1]


def analyse(file: str, source: str, func: str, firstlineno: int,
            cache: AnalysisCache | None = None) -> CodeInfo:
    """Analyse the code object ``func`` (a ``co_qualname``) starting at ``firstlineno``."""
    module = cache.module(file, source) if cache else _Module.parse(source)
    name = leaf(func)
    info = CodeInfo(file, func, firstlineno, "unknown", False)
    if module is None:
        return info
    info.module_imports = module.module_imports
    if name == "<module>":
        node: gast.AST = module.tree
        info.kind = "module"
        info.span = (1, max(module.code_lines, default=1))
    else:
        nodes = module.index.get((name, firstlineno))
        if not nodes:
            return info
        node = nodes[0]
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        info.span = (first, node.end_lineno)
        info.kind = ("lambda" if name == "<lambda>" else "comprehension" if name in COMPREHENSIONS
                     else "class" if isinstance(node, gast.ClassDef) else "function")
        if len(nodes) > 1 and info.kind in ("lambda", "comprehension"):
            # several lambdas/comprehensions start on this line: one pseudo frame for all
            info.span = (first, max(n.end_lineno for n in nodes))
    info.found = True
    lo, hi = info.span
    info.code_lines = frozenset(line for line in module.code_lines if lo <= line <= hi)
    if info.kind in ("lambda", "comprehension"):
        _analyse_expression_frame(info, module.index[(name, firstlineno)])
    else:
        _FrameAnalysis(info, node).run()
    return info


def _positions(node: gast.AST) -> tuple[int, int, int, int]:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _analyse_expression_frame(info: CodeInfo, nodes: list[gast.AST]) -> None:
    """A lambda or comprehension frame: one pseudo statement, the whole expression, which
    is the frame's return value. Names bound inside are writes, the others reads."""
    reads: list[Read] = []
    writes: set[str] = set()
    sites: list[Site] = []
    implicit: set[str] = set()
    callees: set[str] = set()
    for node in nodes:
        bound: set[str] = set()
        if isinstance(node, gast.Lambda):
            bound |= _arg_names(node.args)
        for sub in gast.walk(node):
            if isinstance(sub, gast.comprehension):
                bound |= {n.id for n in gast.walk(sub.target) if isinstance(n, gast.Name)}
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Store):
                bound.add(sub.id)
        writes |= bound
        body = node.body if isinstance(node, gast.Lambda) else node
        for sub in _walk_expr(body):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load) and sub.id not in bound:
                kind = "builtin" if sub.id in BUILTINS else "external"
                reads.append(Read(sub.id, kind, (sub.lineno, sub.col_offset)))
            _collect_calls(sub, sites, implicit, callees, _named_in(bound))
    lo, hi = info.span
    lines = tuple(range(lo, hi + 1))
    info.stmts = [Stmt(0, "Expr", lines, tuple(reads), frozenset(writes), frozenset(),
                       frozenset(callees), tuple(sites), frozenset(implicit), returns=True,
                       span=(lo, 0, hi, 0))]
    info.line_stmts = {line: (0,) for line in lines}


def _arg_names(args: gast.arguments) -> set[str]:
    names = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {n.id for n in names if n is not None}


def _walk_expr(node: gast.AST, prune: tuple[type, ...] = ()) -> Iterator[gast.AST]:
    """Pre-order walk that skips annotations and does not enter nodes of type ``prune``
    (they are not yielded either)."""
    todo = [node]
    while todo:
        sub = todo.pop()
        if prune and isinstance(sub, prune):
            continue
        yield sub
        for name, value in gast.iter_fields(sub):
            if name in ("annotation", "returns", "type_comment"):
                continue
            if isinstance(value, gast.AST):
                todo.append(value)
            elif isinstance(value, list):
                todo.extend(v for v in reversed(value) if isinstance(v, gast.AST))


def _root_name(node: gast.AST) -> gast.Name | None:
    while isinstance(node, (gast.Attribute, gast.Subscript, gast.Starred)):
        node = node.value
    return node if isinstance(node, gast.Name) else None


def _named_in(names: set[str]) -> Callable[[gast.Name], bool]:
    """Whether a called name is one of ``names`` (bound inside a lambda/comprehension)."""
    return lambda node: node.id in names


def _collect_calls(sub: gast.AST, sites: list[Site], implicit: set[str], callees: set[str],
                   is_dynamic: Callable[[gast.Name], bool]) -> None:
    if isinstance(sub, gast.Call):
        func = sub.func
        if isinstance(func, gast.Name):
            callees.add(func.id)
            sites.append(Site(func.id, sub.lineno, (sub.lineno, sub.col_offset), bool(is_dynamic(func))))
            implicit.update(_BUILTIN_DUNDERS.get(func.id, ()))
            implicit.update(_ITERATING)
        elif isinstance(func, gast.Attribute):
            sites.append(Site(func.attr, sub.lineno, (sub.lineno, sub.col_offset), False))
        else:
            sites.append(Site("<dynamic>", sub.lineno, (sub.lineno, sub.col_offset), True))
        implicit.add("__call__")
    elif isinstance(sub, gast.BinOp):
        op = _BINOP_DUNDERS.get(type(sub.op))
        if op:
            implicit.update((f"__{op}__", f"__r{op}__"))
    elif isinstance(sub, gast.AugAssign):
        op = _BINOP_DUNDERS.get(type(sub.op))
        if op:
            implicit.update((f"__i{op}__", f"__{op}__", f"__r{op}__"))
    elif isinstance(sub, gast.Compare):
        for op in sub.ops:
            implicit.update(_CMP_DUNDERS.get(type(op), ()))
    elif isinstance(sub, gast.UnaryOp):
        implicit.add(_UNARY_DUNDERS.get(type(sub.op), "__bool__"))
    elif isinstance(sub, gast.Subscript):
        implicit.update(("__getitem__", "__setitem__", "__delitem__", "__class_getitem__",
                         "__missing__"))
    elif isinstance(sub, gast.Attribute):
        implicit.update((sub.attr, "__getattr__", "__getattribute__", "__get__", "__set__",
                         "__setattr__", "__delattr__", "__delete__"))
    elif isinstance(sub, (gast.comprehension, gast.For, gast.AsyncFor, gast.Starred)):
        implicit.update(_ITERATING)
    elif isinstance(sub, (gast.With, gast.AsyncWith)):
        implicit.update(("__enter__", "__exit__", "__aenter__", "__aexit__"))
    elif isinstance(sub, (gast.BoolOp, gast.IfExp, gast.If, gast.While, gast.Assert)):
        implicit.update(("__bool__", "__len__"))
    elif isinstance(sub, gast.JoinedStr):
        implicit.update(("__format__", "__str__", "__repr__"))
    elif isinstance(sub, gast.ListComp):
        implicit.add("<listcomp>")
    elif isinstance(sub, gast.SetComp):
        implicit.add("<setcomp>")
    elif isinstance(sub, gast.DictComp):
        implicit.add("<dictcomp>")
    elif isinstance(sub, gast.GeneratorExp):
        implicit.add("<genexpr>")
    elif isinstance(sub, gast.Lambda):
        implicit.add("<lambda>")
    elif isinstance(sub, (gast.Yield, gast.YieldFrom, gast.Await)):
        implicit.update(("__next__", "__iter__", "send", "__await__"))


class _FrameAnalysis:
    """Statement table of a function / class body / module, with beniget chains."""

    def __init__(self, info: CodeInfo, node: gast.AST) -> None:
        self.info = info
        self.node = node
        self.stmts: list[Stmt] = []
        self.nodes: list[gast.AST] = []
        self.parent: dict[int, int | None] = {}

    def run(self) -> None:
        node = self.node
        root = node if isinstance(node, gast.Module) else gast.Module(body=[node], type_ignores=[])
        chains: _Chains | None = None
        try:
            chains = _Chains()
            chains.visit(root)
            self.ud = beniget.UseDefChains(chains).chains
        except Exception:  # noqa: BLE001 - beniget failing on odd code: fall back to names
            chains, self.ud = None, {}
        self.chains = chains
        scope_defs = chains.locals.get(node, []) if chains else []
        self.local_defs = {id(d.node) for d in scope_defs}
        self.local_names = {d.name() for d in scope_defs}
        # beniget's ``locals`` keeps one definition per binding site kind (not augmented
        # assignments, for one): collect every binding node of this scope ourselves
        self.comp_targets: set[int] = set()
        for sub in self._own_walk_body(node):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, (gast.Store, gast.Del, gast.Param)):
                self.local_defs.add(id(sub))
                self.local_names.add(sub.id)
            elif isinstance(sub, _DEFS):
                self.local_defs.add(id(sub))
                self.local_names.add(sub.name)
            elif isinstance(sub, gast.alias):
                self.local_defs.add(id(sub))
                self.local_names.add(sub.asname or sub.name.split(".")[0])
            if isinstance(sub, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
                for inner in gast.walk(sub):
                    if isinstance(inner, gast.NamedExpr) and isinstance(inner.target, gast.Name):
                        self.local_defs.add(id(inner.target))
                        self.local_names.add(inner.target.id)
                    elif isinstance(inner, gast.comprehension):
                        self.comp_targets.update(id(n) for n in gast.walk(inner.target))
        self.root_defs = ({id(d.node) for d in chains.locals.get(root, [])}
                          if chains and root is not node else set())
        self.declared: set[str] = set()
        for sub in self._own_walk_body(node):
            if isinstance(sub, (gast.Global, gast.Nonlocal)):
                self.declared.update(sub.names)
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            self.info.params = frozenset(_arg_names(node.args))
            self.local_names |= self.info.params
        self._block(node.body, None)
        self._controllers_from_exits(node.body)
        imported: set[str] = set()
        for sub in self._own_walk_body(node):
            if isinstance(sub, (gast.Import, gast.ImportFrom)):
                imported.update(a.asname or a.name.split(".")[0] for a in sub.names)
        self.info.imported = frozenset(imported)
        self.info.declared = frozenset(self.declared)
        self.info.stmts = self.stmts
        line_stmts: dict[int, list[int]] = {}
        for stmt in self.stmts:
            for line in stmt.lines:
                line_stmts.setdefault(line, []).append(stmt.id)
        self.info.line_stmts = {k: tuple(v) for k, v in line_stmts.items()}

    def _own_walk_body(self, node: gast.AST) -> Iterator[gast.AST]:
        """Walk the body of ``node`` without entering nested scopes."""
        todo = list(getattr(node, "body", []))
        while todo:
            sub = todo.pop()
            yield sub
            if isinstance(sub, _SCOPES):
                continue
            todo.extend(gast.iter_child_nodes(sub))

    # statements -----------------------------------------------------------------------
    def _block(self, body: list[gast.stmt], parent: int | None) -> None:
        for node in body:
            sid = self._stmt(node, parent)
            if isinstance(node, _DEFS):
                continue  # a nested def/class body runs in its own frame
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if block:
                    self._block(block, sid)
            for handler in getattr(node, "handlers", []) or []:
                hid = self._stmt(handler, sid)
                self._block(handler.body, hid)
            for case in getattr(node, "cases", []) or []:
                self._block(case.body, sid)

    def _own_parts(self, node: gast.AST) -> list[gast.AST]:
        if isinstance(node, (gast.If, gast.While)):
            return [node.test]
        if isinstance(node, (gast.For, gast.AsyncFor)):
            return [node.target, node.iter]
        if isinstance(node, (gast.With, gast.AsyncWith)):
            return [p for item in node.items for p in (item.context_expr, item.optional_vars) if p]
        if isinstance(node, (gast.Try, getattr(gast, "TryStar", gast.Try))):
            return []
        if isinstance(node, gast.ExceptHandler):
            return [p for p in (node.type, node.name) if p is not None]
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            args = node.args
            return [*node.decorator_list, *args.defaults, *[d for d in args.kw_defaults if d]]
        if isinstance(node, gast.ClassDef):
            return [*node.decorator_list, *node.bases, *node.keywords]
        if isinstance(node, gast.Match):
            return [node.subject]
        return [node]

    def _stmt(self, node: gast.AST, parent: int | None) -> int:
        sid = len(self.stmts)
        parts = self._own_parts(node)
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if parts is not None and parts and parts[0] is node:
            last = node.end_lineno
        else:
            # gast's synthetic nodes (e.g. the name of `except E as e`) carry no positions
            last = max([node.lineno] + [p.end_lineno for p in parts if getattr(p, "end_lineno", None) is not None])
        if isinstance(node, _DEFS):
            last = max(last, node.lineno)
        reads: list[Read] = []
        writes: set[str] = set()
        mutates: set[str] = set()
        callees: set[str] = set()
        sites: list[Site] = []
        implicit: set[str] = set()
        returns = raises = yields = False
        if isinstance(node, (gast.With, gast.AsyncWith, gast.For, gast.AsyncFor, gast.If,
                             gast.While)):
            _collect_calls(node, sites, implicit, callees, self._is_local_node)
        if isinstance(node, _DEFS):
            writes.add(node.name)
            if isinstance(node, gast.ClassDef):
                implicit.add(node.name)
                implicit.update(("__init_subclass__", "__set_name__", "__prepare__"))
            for dec in node.decorator_list:
                if isinstance(dec, gast.Name):
                    callees.add(dec.id)
                    sites.append(Site(dec.id, dec.lineno, (dec.lineno, dec.col_offset),
                                      self._is_local_node(dec)))
                elif isinstance(dec, gast.Attribute):
                    sites.append(Site(dec.attr, dec.lineno, (dec.lineno, dec.col_offset), False))
            # closure: the new function/class captures this frame's locals it reads
            for sub in gast.walk(node):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                    if self._classify(sub) == "local":
                        reads.append(Read(sub.id, "local", (sub.lineno, sub.col_offset)))
        if isinstance(node, (gast.Import, gast.ImportFrom)):
            writes.update(a.asname or a.name.split(".")[0] for a in node.names)
        if isinstance(node, gast.Return):
            returns = True
        if isinstance(node, gast.Raise):
            raises = True
        for part in parts:
            for sub in self._walk_part(part):
                if isinstance(sub, (gast.Yield, gast.YieldFrom)):
                    returns = yields = True
                if isinstance(sub, gast.Name):
                    ctx = sub.ctx
                    if isinstance(ctx, gast.Load):
                        kind = self._classify(sub)
                        if kind != "nested":
                            reads.append(Read(sub.id, kind, (sub.lineno, sub.col_offset)))
                    elif isinstance(ctx, (gast.Store, gast.Del)):
                        if self._binds_here(sub):
                            writes.add(sub.id)
                        if isinstance(node, gast.AugAssign) and sub is node.target:
                            reads.append(Read(sub.id, self._classify_name(sub.id),
                                              (sub.lineno, sub.col_offset)))
                elif isinstance(sub, (gast.Attribute, gast.Subscript)) and isinstance(
                        sub.ctx, (gast.Store, gast.Del)):
                    root = _root_name(sub)
                    if root is not None and self._is_local_name(root.id):
                        mutates.add(root.id)
                elif isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute):
                    root = _root_name(sub.func.value)
                    if root is not None and self._is_local_name(root.id):
                        mutates.add(root.id)
                _collect_calls(sub, sites, implicit, callees, self._is_local_node)
        lines = tuple(range(first, last + 1))
        stmt = Stmt(sid, type(node).__name__, lines, tuple(reads), frozenset(writes),
                    frozenset(mutates), frozenset(callees), tuple(sites), frozenset(implicit),
                    returns=returns, raises=raises, yields=yields,
                    span=(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))
        self.stmts.append(stmt)
        self.nodes.append(node)
        self.parent[sid] = parent
        if parent is not None:
            stmt.controllers = (parent,)
        return sid

    def _walk_part(self, part: gast.AST) -> Iterator[gast.AST]:
        """Walk an own part: into comprehensions (evaluated now), into lambdas only for the
        locals they capture, not into nested def/class statements' bodies."""
        yield from _walk_expr(part, prune=(gast.Lambda,))
        for sub in gast.walk(part):
            if isinstance(sub, gast.Lambda):
                for inner in gast.walk(sub.body):
                    if (isinstance(inner, gast.Name) and isinstance(inner.ctx, gast.Load)
                            and self._classify(inner) == "local"):
                        yield inner

    # name resolution ------------------------------------------------------------------
    def _classify(self, name: gast.Name) -> str:
        defs = self.ud.get(name)
        if defs is None:
            return self._classify_name(name.id)
        if not defs:
            return "builtin" if name.id in BUILTINS and name.id not in self.local_names else "external"
        if any(id(d.node) in self.local_defs for d in defs):
            return "local"
        if any(not isinstance(d.node, gast.AST) for d in defs):
            return "builtin"
        if all(id(d.node) not in self.root_defs for d in defs):
            return "nested"  # bound in a comprehension or nested function inside this code
        return "external"

    def _classify_name(self, name: str) -> str:
        if name in self.local_names and name not in self.declared:
            return "local"
        return "builtin" if name in BUILTINS else "external"

    def _binds_here(self, name: gast.Name) -> bool:
        if name.id in self.declared:
            return True
        return id(name) in self.local_defs and id(name) not in self.comp_targets

    def _is_local_name(self, name: str) -> bool:
        return name in self.local_names and name not in self.declared

    def _is_local_node(self, name: gast.Name) -> bool:
        return self._classify(name) == "local"

    # control dependence -----------------------------------------------------------------
    def _controllers_from_exits(self, body: list[gast.stmt]) -> None:
        """A statement after a sibling that may leave the block early (return, raise, and
        break/continue of an enclosing loop nested in an if/try/loop) is control dependent
        on the headers on the path to that exit."""
        index = {id(n): i for i, n in enumerate(self.nodes)}
        for block in self._blocks(body):
            gates: list[int] = []
            for node in block:
                sid = index.get(id(node))
                if sid is None:
                    continue
                if gates:
                    stmt = self.stmts[sid]
                    stmt.controllers = tuple(dict.fromkeys([*stmt.controllers, *gates]))
                gates.extend(self._exit_gates(node, index))

    def _blocks(self, body: list[gast.stmt]) -> Iterator[list[gast.stmt]]:
        todo = [body]
        while todo:
            block = todo.pop()
            yield block
            for node in block:
                if isinstance(node, _DEFS):
                    continue
                for name in ("body", "orelse", "finalbody"):
                    sub = getattr(node, name, None)
                    if sub:
                        todo.append(sub)
                for handler in getattr(node, "handlers", []) or []:
                    todo.append(handler.body)
                for case in getattr(node, "cases", []) or []:
                    todo.append(case.body)

    def _exit_gates(self, node: gast.AST, index: dict[int, int]) -> list[int]:
        """Headers (statement ids) between ``node`` and the early exits nested in it."""
        gates: list[int] = []
        if isinstance(node, _DEFS):
            return gates  # defining a function or class never leaves the block

        def visit(sub: gast.AST, path: list[int], in_loop: bool) -> None:
            if isinstance(sub, _DEFS) and sub is not node:
                return
            if isinstance(sub, _EXITS) and path:
                if isinstance(sub, (gast.Break, gast.Continue)) and in_loop:
                    return  # leaves a loop nested inside ``node`` only
                gates.extend(path)
                return
            sid = index.get(id(sub))
            compound = sid is not None and any(getattr(sub, f, None) for f in
                                               ("body", "orelse", "handlers", "cases"))
            new_path = path + [sid] if compound and sid is not None else path
            loop = in_loop or (isinstance(sub, _LOOPS) and sub is not node)
            if isinstance(sub, _LOOPS) and sub is node:
                loop = True  # break/continue inside the loop itself end the loop: not an exit
            for child in gast.iter_child_nodes(sub):
                if isinstance(child, (gast.stmt, gast.excepthandler, gast.match_case)):
                    visit(child, new_path, loop)

        visit(node, [], False)
        return list(dict.fromkeys(gates))
