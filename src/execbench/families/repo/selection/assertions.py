"""Assertions in test source: finding them, and rewriting test text without moving lines.

Recognised assertions, directly in a test function's body (any block nesting, not inside
nested functions, classes or lambdas):

* ``assert`` statements (``assert a == b``, ``assert x is None``, ``assert a > b``, ...);
* unittest calls as expression statements, ``<anything>.assertEqual(2, len(cache))`` and
  the rest of :data:`UNITTEST` (exception/warning/log context managers are not value
  assertions and are not counted).

Rewrites (probe, verify, mask) are text splices at AST positions that keep every statement
on its original lines (multi-line replacements are padded with newlines inside brackets),
so line numbers in traces of a rewritten test are those of the original file.
"""

from __future__ import annotations

import ast
import copy
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence, TypeVar

from execbench.sourcetext import SourceText, source_text

# unittest method → comparison it asserts
UNITTEST: dict[str, str] = {
    **{m: "==" for m in ("assertEqual", "assertEquals", "failUnlessEqual", "assertListEqual",
                         "assertTupleEqual", "assertDictEqual", "assertSetEqual", "assertSequenceEqual",
                         "assertMultiLineEqual")},
    "assertIs": "is",
    **{m: "!=" for m in ("assertNotEqual", "assertNotEquals", "failIfEqual")},
    "assertIsNot": "is not",
    "assertIn": "in",
    "assertNotIn": "not in",
    "assertGreater": ">",
    "assertGreaterEqual": ">=",
    "assertLess": "<",
    "assertLessEqual": "<=",
    "assertCountEqual": "count-equal",
    "assertIsInstance": "isinstance",
    "assertNotIsInstance": "not isinstance",
    "assertRegex": "regex",
    "assertNotRegex": "regex",
    "assertRegexpMatches": "regex",
    "assertDictContainsSubset": "subset",
    **{m: "approx" for m in ("assertAlmostEqual", "assertAlmostEquals", "assertNotAlmostEqual",
                             "assertNotAlmostEquals")},
    **{m: "unary" for m in ("assertTrue", "assertFalse", "assertIsNone", "assertIsNotNone", "assert_",
                            "failUnless", "failIf")},
}
_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
            ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
PROBE = "__execbench_probe__"
VERIFY = "__execbench_verify__"
VALUE = "__execbench_value__"
SENTINEL = "__execbench_sentinel__"


@dataclass(frozen=True)
class Span:
    """An AST position: 1-based lines, 0-based UTF-8 byte columns (as in ``ast``)."""

    lineno: int
    col: int
    end_lineno: int
    end_col: int

    @classmethod
    def of(cls, node: ast.AST) -> "Span":
        return cls(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it

    @property
    def lines(self) -> int:
        return self.end_lineno - self.lineno + 1


@dataclass
class Assertion:
    index: int  # position among the function's assertions
    kind: str  # "assert" | "call"
    op: str  # "==", "is", "!=", ..., "truthy", "chained", "boolean", "approx", "unary", ...
    span: Span  # the whole statement
    text: str  # the statement's source
    method: str | None = None  # unittest method name
    operands: list[ast.expr] = field(default_factory=list)  # compared operands (0, 1 or 2)
    node: ast.stmt | None = None

    @property
    def line(self) -> int:
        return self.span.lineno


@dataclass
class TestFunction:
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    firstlineno: int  # code.co_firstlineno: the first decorator's line when decorated
    class_node: ast.ClassDef | None
    assertions: list[Assertion]
    local_names: set[str]  # parameters and names bound in the function
    # what the fairness checks derive from ``node`` (never changed after parsing), computed once
    # per function rather than once per task (:func:`derived`)
    memo: dict[Callable[..., Any], Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def span(self) -> Span:
        return Span(self.firstlineno, 0, self.node.end_lineno, self.node.end_col_offset)  # type: ignore[arg-type]  # an assert statement always has an end position


_T = TypeVar("_T")


def derived(function: TestFunction, compute: Callable[[TestFunction], _T]) -> _T:
    """``compute(function)``, once per function (kept in ``function.memo`` under ``compute``):
    ``compute`` must read nothing but the function, and callers must not change what it
    returns (hand out a copy where a caller may)."""
    memo = function.memo
    if compute not in memo:
        memo[compute] = compute(function)
    return memo[compute]


def segment(source: str, node_or_span: ast.AST | Span) -> str:
    span = node_or_span if isinstance(node_or_span, Span) else Span.of(node_or_span)
    return source_text(source).segment(span.lineno, span.col, span.end_lineno, span.end_col)


def _walk_body(stmts: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Statements of a body and of its nested blocks, not entering defs/classes."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _walk_body(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            yield from _walk_body(handler.body)
        for case in getattr(stmt, "cases", []) or []:
            yield from _walk_body(case.body)


def _assertion(stmt: ast.stmt, source: SourceText, index: int) -> Assertion | None:
    if isinstance(stmt, ast.Assert):
        test = stmt.test
        if isinstance(test, ast.Compare):
            if len(test.ops) > 1:
                op, operands = "chained", []
            else:
                op, operands = _COMPARE[type(test.ops[0])], [test.left, test.comparators[0]]
        elif isinstance(test, ast.BoolOp):
            op, operands = "boolean", []
        else:
            op, operands = "truthy", []
        return Assertion(index, "assert", op, Span.of(stmt), segment(source.text, stmt),
                         operands=operands, node=stmt)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr in UNITTEST:
            op = UNITTEST[func.attr]
            args = stmt.value.args
            operands = list(args[:2]) if op not in ("unary",) else list(args[:1])
            if op in ("==", "is") and len(args) < 2:
                kw = {k.arg: k.value for k in stmt.value.keywords}
                operands = [kw[k] for k in ("first", "second") if k in kw] if not args else operands
                if len(operands) < 2:
                    op, operands = "unparsed", []
            return Assertion(index, "call", op, Span.of(stmt), segment(source.text, stmt),
                             method=func.attr, operands=operands, node=stmt)
    return None


def _local_names(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    for extra in (func.args.vararg, func.args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not func:
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg) and node is not None:
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:  # `except ParseError as error:`
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


def test_functions(source: str) -> dict[tuple[str, int], TestFunction]:
    """Every function and method of a test module, keyed by (qualname, co_firstlineno)."""
    tree = ast.parse(source)
    src = source_text(source)
    out: dict[tuple[str, int], TestFunction] = {}

    def visit(body: list[ast.stmt], prefix: str, cls: ast.ClassDef | None) -> None:
        for node in body:
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                # tests defined under a module- or class-level ``if``/``try``/``with`` (version checks)
                blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                          *[h.body for h in getattr(node, "handlers", [])]]
                for block in blocks:
                    visit(block, prefix, cls)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.", node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found: list[Assertion] = []
                for stmt in _walk_body(node.body):
                    assertion = _assertion(stmt, src, len(found))
                    if assertion is not None:
                        found.append(assertion)
                qual = f"{prefix}{node.name}"
                out[(qual, first)] = TestFunction(qual, node, first, cls, found, _local_names(node))

    visit(tree.body, "", None)
    return out


# --- rewrites ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Splice:
    span: Span
    text: str


def apply(source: str, splices: list[Splice]) -> str:
    """Replace spans (non-overlapping) with texts."""
    src = source_text(source)
    out, pos = [], 0
    for splice in sorted(splices, key=lambda s: (s.span.lineno, s.span.col)):
        start = src.offset(splice.span.lineno, splice.span.col)
        end = src.offset(splice.span.end_lineno, splice.span.end_col)
        if start < pos:
            raise ValueError(f"overlapping splices at line {splice.span.lineno}")
        out.append(source[pos:start])
        out.append(splice.text)
        pos = end
    out.append(source[pos:])
    return "".join(out)


def pad(text: str, lines: int) -> str:
    """``text`` as a parenthesised expression spanning exactly ``lines`` lines (or more if
    the text itself is longer)."""
    missing = lines - 1 - text.count("\n")
    return f"({text}{chr(10) * max(0, missing)})"


def probe_splices(source: str, items: list[tuple[str, Assertion]]) -> list[Splice]:
    """Wrap each compared operand: ``__execbench_probe__(key, side, <operand>)``; the value
    passes through unchanged, in the original evaluation order."""
    splices = []
    for key, assertion in items:
        for side, operand in enumerate(assertion.operands[:2]):
            span = Span.of(operand)
            splices.append(Splice(span, f"{PROBE}({key!r}, {side}, ({segment(source, span)}))"))
    return splices


def neutralize_splices(assertions: list[Assertion]) -> list[Splice]:
    """For mutated tests, whose expected values are stale: the statements stop asserting but
    still evaluate what they compared. ``assert A == B, msg`` and ``self.assertEqual(A, B)``
    become the tuple ``(A, B)``, ``assert X`` / ``self.assertTrue(X)`` become ``(X)``; the
    operands stay in place (compatible with :func:`probe_splices`) and no line moves."""
    nl = "\n"
    splices = []
    for assertion in assertions:
        if assertion.kind == "assert" and len(assertion.operands) != 2:
            parts = [Span.of(assertion.node.test)]  # type: ignore[union-attr]  # a plain assert statement (checked by kind above)
        elif assertion.operands:
            parts = sorted((Span.of(o) for o in assertion.operands[:2]), key=lambda s: (s.lineno, s.col))
        else:
            continue
        stmt = assertion.span
        splices.append(Splice(Span(stmt.lineno, stmt.col, parts[0].lineno, parts[0].col),
                              "(" + nl * (parts[0].lineno - stmt.lineno)))
        for left, right in zip(parts, parts[1:]):
            splices.append(Splice(Span(left.end_lineno, left.end_col, right.lineno, right.col),
                                  ", " + nl * (right.lineno - left.end_lineno)))
        last = parts[-1]
        splices.append(Splice(Span(last.end_lineno, last.end_col, stmt.end_lineno, stmt.end_col),
                              nl * (stmt.end_lineno - last.end_lineno) + ")"))
    return splices


def verify_splice(source: str, key: str, assertion: Assertion, masked: int, candidates: list[str],
                  extra: Sequence[str] = (), names: Sequence[str] = ()) -> Splice:
    """The statement rewritten so that the actual operand is evaluated once and each
    candidate answer is checked by the original assertion with the answer substituted for
    the masked operand; the statement itself always succeeds (the test goes on).

    ``assert A == B`` → ``assert __execbench_verify__(key, (A), lambda v: bool(v == (C1)), ...)``
    ``self.assertEqual(B, A)`` → ``__execbench_verify__(key, (A), lambda v: (self.assertEqual((C1), v), True)[1], ...)``

    ``extra`` are boolean expressions checked after the candidates (the admission gate's
    "does the answer equal an unrelated object"); ``names`` are dotted names whose aliases
    in the test module's namespace the plugin records.
    """
    actual = assertion.operands[1 - masked]
    node = assertion.node
    if node is None:
        raise ValueError(f"assertion at line {assertion.line} has no statement node")
    checks = []
    for candidate in candidates:
        replaced = _substitute(node, {id(actual): ast.Name(VALUE, ast.Load()),
                                      id(assertion.operands[masked]): _parse_expr(candidate)})
        if assertion.kind == "assert":
            checks.append(f"lambda {VALUE}: bool({ast.unparse(replaced.test)})")  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
        else:
            checks.append(f"lambda {VALUE}: ({ast.unparse(replaced.value)}, True)[1]")  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
    checks += [f"lambda {VALUE}: bool({text})" for text in extra]
    tail = f", names={tuple(names)!r}" if names else ""
    call = f"{VERIFY}({key!r}, ({segment(source, actual)}), {', '.join(checks)}{tail})"
    body = pad(call, assertion.span.lines)
    text = f"assert {body}" if assertion.kind == "assert" else body
    return Splice(assertion.span, text)


def _parse_expr(text: str) -> ast.expr:
    return ast.parse(text.strip(), mode="eval").body


def _substitute(node: ast.AST, replace: dict[int, ast.expr]) -> ast.AST:
    class Sub(ast.NodeTransformer):
        def visit(self, n: ast.AST) -> ast.AST:
            if id(n) in replace:
                return replace[id(n)]
            return super().visit(n)

    # Map ids in the copy: walk original and copy in parallel.
    clone = copy.deepcopy(node)
    mapping: dict[int, ast.expr] = {}
    for original, copied in zip(ast.walk(node), ast.walk(clone)):
        if id(original) in replace:
            mapping[id(copied)] = replace[id(original)]
    replace = mapping
    return Sub().visit(clone)


def _relative(span: Span, first: int) -> Span:
    return Span(span.lineno - first + 1, span.col, span.end_lineno - first + 1, span.end_col)


def mask_text(source: str, function: TestFunction, question: tuple[Assertion, int],
              hidden: list[Span], marker: str = "  # Question") -> str:
    """The test function's source (dedented) with the question operand replaced by ``___``
    and ``marker`` after the question statement, and every span in ``hidden`` (other
    assertions' expected operands) replaced by ``___`` too."""
    assertion, masked = question
    first = function.firstlineno
    lines = source.splitlines(keepends=True)
    text = "".join(lines[first - 1:function.node.end_lineno])
    target = Span.of(assertion.operands[masked])
    end = Span(assertion.span.end_lineno, assertion.span.end_col, assertion.span.end_lineno, assertion.span.end_col)
    splices = [Splice(_relative(target, first), "___"), Splice(_relative(end, first), marker)]
    splices += [Splice(_relative(s, first), "___") for s in hidden
                if s != target and not (s.lineno <= target.lineno and s.end_lineno >= target.end_lineno
                                        and s.col <= target.col)]
    return textwrap.dedent(apply(text, splices))


_SENTINEL = "\u2063END\u2063"


def statement_text(source: str, assertion: Assertion, masked: int) -> str:
    """The assertion statement alone, its masked operand replaced by ``___`` (one line)."""
    first = assertion.span.lineno
    lines = source.splitlines(keepends=True)
    text = "".join(lines[first - 1:assertion.span.end_lineno])
    end = Span(assertion.span.end_lineno, assertion.span.end_col, assertion.span.end_lineno, assertion.span.end_col)
    text = apply(text, [Splice(_relative(Span.of(assertion.operands[masked]), first), "___"),
                        Splice(_relative(end, first), _SENTINEL)])
    start = len(text.splitlines(keepends=True)[0].encode("utf-8")[:assertion.span.col].decode("utf-8", "replace"))
    stmt = text[start:text.index(_SENTINEL)]
    try:
        return ast.unparse(ast.parse(stmt.replace("___", "__MASK__"))).replace("__MASK__", "___")
    except SyntaxError:
        return " ".join(stmt.split())


@lru_cache(maxsize=8)
def _imports(source: str) -> tuple[str, ...]:
    """The module's top-level import statements (parsed once per module, not per task)."""
    return tuple(segment(source, node) for node in ast.parse(source).body
                 if isinstance(node, (ast.Import, ast.ImportFrom)))


def context_text(source: str, function: TestFunction, max_lines: int = 60) -> str:
    """What a reader of the test file sees around the function: the module's imports and,
    for a method, its class header and class-level assignments."""
    src = source_text(source)
    parts = list(_imports(source))
    if function.class_node is not None:
        cls = function.class_node
        header_end = cls.body[0].lineno - 1 if cls.body else cls.lineno
        header = "".join(src.lines[min([cls.lineno, *(d.lineno for d in cls.decorator_list)]) - 1:
                                   max(cls.lineno, header_end)])
        parts.append(header.rstrip())
        for node in cls.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                parts.append("".join(src.lines[node.lineno - 1:node.end_lineno]).rstrip())
    lines = "\n".join(parts).splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"# ... ({len(lines) - max_lines} more lines)"]
    return "\n".join(lines)
