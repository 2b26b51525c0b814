"""A restricted sympy expression parser and the equivalence check for sympy answers.

Model text is never given to ``eval``, ``exec``, ``sympify`` or ``parse_expr`` (they
evaluate Python: FIELD-NOTES). :func:`parse_sympy` instead

1. pre-checks the raw text with the tokenizer (length, bracket depth, operator count,
   runs of signs, number length, no dunder names), because ``ast.parse`` recurses;
2. parses it with ``ast.parse(mode="eval")``;
3. builds sympy objects itself from a whitelist of AST nodes: numbers, strings (only as
   arguments of ``Symbol``/``symbols``/``Float``/``Function``), ``True``/``False``/``None``,
   names (known constants such as ``pi``, ``E``, ``I``, ``oo``, ``nan``; any other name is a
   ``Symbol``), ``S.<attr>`` for a fixed set of singletons, ``+ - * / **`` and unary
   ``+ -``, lists/tuples/sets/dicts, and calls of a fixed set of sympy constructors and
   functions (:data:`FUNCTIONS`) with optional ``sympy.``/``sp.`` prefix; a call of any other
   plain name ``f(x)`` is an undefined function application ``Function("f")(x)``.
   Keyword arguments are limited to ``evaluate`` and assumptions, with boolean values.

Construction evaluates eagerly only what is cheap by construction: numeric powers are
refused when the result would exceed :data:`MAX_POW_BITS` bits (``2**10**10`` is
refused, not computed), symbolic integer exponents are bounded, ``factorial``,
``binomial``, ``gamma`` and matrix builders take bounded arguments, and no function is
applied to a symbol-free argument whose magnitude may exceed ``10**MAX_EVAL_DIGITS``
(estimated from the tree without evaluating it): ``floor(exp(10**4000))`` and
``ceiling(exp(exp(exp(5))))`` make sympy evaluate the argument to integer precision and
run for minutes; they are refused.

:func:`equivalent` compares two parsed answers: Python containers structurally (same
type and length; sets and dicts regardless of order), Python scalars type-strictly, sympy
leaves first structurally (``==``) and then by appendix C.2.1:
``simplify(P - G) == 0 or expand(P) == expand(G)``. ``simplify`` can run for ever, so that
step runs in the sandbox, a job of its job runner (:func:`compare_job`, which re-parses
both texts with this same parser) under a CPU and wall-clock limit; a run
over the limit is reported as ``grading_timeout`` (a wrong answer). The in-process part
(parsing, the structural comparison, a bounded expand) runs under a wall-clock alarm of
:data:`IN_PROCESS_SECONDS` in the main thread (``grading_timeout`` too); called from
another thread, where no alarm can be set, the whole comparison runs in the sandbox.
"""

from __future__ import annotations

import ast
import math
import re
import signal
import threading
import time
import tokenize
from typing import Any, Callable, NotRequired, TypedDict

import sympy

from execbench.errors import InternalError
from execbench.grading.tokens import TokenBoundError, significant_tokens

MAX_TEXT = 20_000
MAX_DEPTH = 30  # brackets
MAX_OPERATORS = 300  # binary operators and dots in the whole text
MAX_SIGN_RUN = 3
MAX_POW_BITS = 100_000  # numeric powers: result size bound
MAX_SYMBOLIC_EXPONENT = 10_000
MAX_MATRIX_EXPONENT = 8
MAX_MATRIX_ARITH = 100  # elements of a matrix operand of + - * / **
MAX_INT_FUNCTION_ARG = 2_000  # factorial, binomial, gamma of numbers
MAX_MATRIX_SIDE = 50
MAX_ELEMENTS = 5_000
MAX_UNMATCHED = 10  # set/dict elements matched by equivalence (pairwise) at most
TIMEOUT = 10.0  # seconds for the sandboxed simplify/expand step
MAX_EVAL_DIGITS = 1000  # symbol-free function arguments: |value| < 10**MAX_EVAL_DIGITS
IN_PROCESS_SECONDS = 5.0  # the in-process part of a comparison (parse, structure, expand)

_MODULE_PREFIXES = {"sympy", "sp", "sym", "smp"}
_S_ATTRS = {
    "Zero", "One", "NegativeOne", "Half", "NaN", "Infinity", "NegativeInfinity",
    "ComplexInfinity", "Pi", "Exp1", "ImaginaryUnit", "EulerGamma", "GoldenRatio", "Catalan",
    "EmptySet", "UniversalSet", "Reals", "Integers", "Naturals", "Naturals0", "Complexes",
    "Rationals", "true", "false", "IdentityFunction",
}
CONSTANTS: dict[str, sympy.Basic] = {
    "pi": sympy.pi, "E": sympy.E, "I": sympy.I, "oo": sympy.oo, "zoo": sympy.zoo,
    "nan": sympy.nan, "EulerGamma": sympy.EulerGamma, "GoldenRatio": sympy.GoldenRatio,
    "Catalan": sympy.Catalan, "EmptySet": sympy.EmptySet, "true": sympy.true,
    "false": sympy.false,
}
_FUNCTION_NAMES = [
    # elementary functions
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc",
    "atan2", "sinh", "cosh", "tanh", "coth", "sech", "csch", "asinh", "acosh", "atanh", "acoth",
    "exp", "log", "sqrt", "cbrt", "root", "Abs", "sign", "floor", "ceiling", "frac", "re",
    "im", "arg", "conjugate", "Min", "Max", "Mod", "LambertW", "erf", "erfc",
    # integer functions (bounded arguments)
    "factorial", "binomial", "gamma",
    # numbers and symbols
    "Integer", "Rational", "Float", "Symbol", "symbols", "Function",
    # containers and sets
    "Matrix", "ImmutableMatrix", "eye", "zeros", "ones", "diag", "Tuple", "FiniteSet",
    "Interval", "Union", "Intersection", "Complement", "ImageSet", "Range",
    # relations and unevaluated operations
    "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "And", "Or", "Not", "Add", "Mul", "Pow",
    "Derivative", "Integral", "Sum", "Product", "Limit", "Piecewise", "Lambda",
    "ImmutableDenseMatrix",
]
FUNCTIONS: dict[str, Callable] = {name: getattr(sympy, name) for name in _FUNCTION_NAMES
                                  if hasattr(sympy, name)}
FUNCTIONS["ln"] = sympy.log
_STRING_ARGS = {"Symbol", "symbols", "Float", "Function"}
_ASSUMPTIONS = {
    "real", "positive", "negative", "nonnegative", "nonpositive", "nonzero", "zero",
    "integer", "rational", "irrational", "finite", "infinite", "complex", "imaginary",
    "extended_real", "prime", "even", "odd", "commutative", "algebraic", "transcendental",
}
_FLOAT_TEXT = re.compile(r"^[+-]?(\d{1,200}\.?\d{0,200}|\.\d{1,200})([eE][+-]?\d{1,7})?$")
_SYMBOL_TEXT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_SYMBOLS_TEXT = re.compile(r"^[A-Za-z_][A-Za-z0-9_:, ]{0,255}$")
_ALLOWED_OPS = {"(", ")", "[", "]", "{", "}", ",", ":", ".", "=", "+", "-", "*", "/", "**"}
_BINARY = {"*", "/", "**", "."}


class SympyParseError(InternalError, ValueError):
    """The text is not an allowed sympy answer (the message says why)."""


# -- pre-check and parse ------------------------------------------------------------------

def precheck(text: str, *, max_len: int = MAX_TEXT, max_depth: int = MAX_DEPTH) -> None:
    """Bound the text before ``ast.parse`` sees it (size, nesting, operators, names)."""
    if len(text) > max_len:
        raise SympyParseError(f"longer than {max_len} characters")
    signs = operators = 0
    try:
        for tok, _depth in significant_tokens(text, max_depth=max_depth):
            kind, s = tok.type, tok.string
            if kind == tokenize.NAME:
                if s.startswith("__") or s in ("lambda", "import", "yield", "await", "async"):
                    raise SympyParseError(f"name not allowed: {s[:40]!r}")
                signs = 0
            elif kind == tokenize.NUMBER:
                signs = 0
            elif kind == tokenize.STRING:
                if len(s) > 300:
                    raise SympyParseError("string too long")
                signs = 0
            elif kind == tokenize.OP:
                if s not in _ALLOWED_OPS:
                    raise SympyParseError(f"operator not allowed: {s!r}")
                if s in ("+", "-"):
                    signs += 1
                    operators += 1
                    if signs > MAX_SIGN_RUN:
                        raise SympyParseError("too many consecutive +/- operators")
                else:
                    signs = 0
                    if s in _BINARY:
                        operators += 1
                if operators > MAX_OPERATORS:
                    raise SympyParseError(f"more than {MAX_OPERATORS} operators")
            else:
                raise SympyParseError(f"unexpected token {s[:40]!r}")
    except TokenBoundError as exc:
        raise SympyParseError(str(exc)) from None


def parse_tree(text: str) -> ast.expr:
    text = text.strip()
    if not text:
        raise SympyParseError("empty")
    precheck(text)
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise SympyParseError(f"{type(exc).__name__}: {exc}") from None


def parse_sympy(text: str) -> Any:
    """Parse a sympy answer into sympy objects inside Python containers (module doc)."""
    if not isinstance(text, str):
        raise SympyParseError("not a string")
    node = parse_tree(text)
    try:
        return _Builder().build(node)
    except SympyParseError:
        raise
    except (TypeError, ValueError, ArithmeticError, AttributeError, IndexError, KeyError,
            NotImplementedError, RecursionError, MemoryError, sympy.SympifyError) as exc:
        # sympy refused the (whitelisted) construction itself, e.g. Rational("x")
        raise SympyParseError(f"{type(exc).__name__}: {str(exc)[:200]}") from None


def _dotted(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    if any(p.startswith("_") for p in parts):
        raise SympyParseError("private or dunder attribute")
    while len(parts) > 1 and parts[0] in _MODULE_PREFIXES:
        parts = parts[1:]
    return parts


class _Builder:
    def __init__(self) -> None:
        self.elements = 0

    def count(self, n: int = 1) -> None:
        self.elements += n
        if self.elements > MAX_ELEMENTS:
            raise SympyParseError(f"more than {MAX_ELEMENTS} elements")

    def build(self, node: ast.expr) -> Any:
        self.count()
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.build(node.operand)
            self.expect_math(value)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.List):
            return [self.build(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.build(e) for e in node.elts)
        if isinstance(node, ast.Set):
            return {self.hashable(self.build(e)) for e in node.elts}
        if isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
            if len(keys) != len(node.keys):
                raise SympyParseError("** unpacking not allowed")
            return {self.hashable(self.build(k)): self.build(v) for k, v in zip(keys, node.values)}
        if isinstance(node, ast.Call):
            return self.call(node)
        raise SympyParseError(f"not allowed in a sympy answer: {type(node).__name__}")

    @staticmethod
    def hashable(value: Any) -> Any:
        try:
            hash(value)
        except TypeError:
            raise SympyParseError("unhashable set element or dict key") from None
        return value

    @staticmethod
    def constant(value: Any) -> Any:
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return sympy.Integer(value)
        if isinstance(value, float):
            if math.isnan(value):
                return sympy.nan
            if math.isinf(value):
                return sympy.oo if value > 0 else -sympy.oo
            return sympy.Float(value)
        if isinstance(value, complex):
            return sympy.Float(value.real) + sympy.Float(value.imag) * sympy.I \
                if value.real else sympy.Float(value.imag) * sympy.I
        if isinstance(value, str):
            return value  # a plain string leaf (a dict key, an argument checked by call())
        raise SympyParseError(f"constant not allowed: {type(value).__name__}")

    @staticmethod
    def name(name: str) -> Any:
        if name.startswith("_"):
            raise SympyParseError("private name")
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in FUNCTIONS:
            raise SympyParseError(f"function {name} used as a value")
        return sympy.Symbol(name)

    def attribute(self, node: ast.Attribute) -> Any:
        parts = _dotted(node)
        if parts is None:
            raise SympyParseError("attribute of an expression")
        if len(parts) == 1:
            return self.name(parts[0])
        if len(parts) == 2 and parts[0] == "S" and parts[1] in _S_ATTRS:
            return getattr(sympy.S, parts[1])
        raise SympyParseError(f"attribute not allowed: {'.'.join(parts)[:80]}")

    @staticmethod
    def expect_math(value: Any) -> None:
        if not isinstance(value, (sympy.Basic, sympy.MatrixBase)):
            raise SympyParseError(f"arithmetic on {type(value).__name__}")

    def binop(self, node: ast.BinOp) -> Any:
        left = self.build(node.left)
        right = self.build(node.right)
        self.expect_math(left)
        self.expect_math(right)
        for side in (left, right):
            if isinstance(side, sympy.MatrixBase) and side.rows * side.cols > MAX_MATRIX_ARITH:
                raise SympyParseError("arithmetic on a large matrix")
        op = node.op
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            return left / right
        if isinstance(op, ast.Pow):
            check_power(left, right)
            return left ** right
        raise SympyParseError(f"operator not allowed: {type(op).__name__}")

    def call(self, node: ast.Call) -> Any:
        parts = _dotted(node.func)
        if parts is None or len(parts) != 1:
            raise SympyParseError("only calls of plain names (optionally sympy.-prefixed)")
        name = parts[0]
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise SympyParseError("* / ** unpacking not allowed")
        kwargs = {}
        for kw in node.keywords:
            if kw.arg != "evaluate" and kw.arg not in _ASSUMPTIONS:
                raise SympyParseError(f"keyword not allowed: {kw.arg}")
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
                raise SympyParseError("keyword values must be True or False")
            kwargs[kw.arg] = kw.value.value
        if name in _STRING_ARGS:
            return self.string_call(name, node, kwargs)
        args = [self.build(a) for a in node.args]
        if any(isinstance(a, str) for a in args):
            raise SympyParseError(f"string argument to {name}")
        if name == "S" and len(args) == 1 and not kwargs and isinstance(args[0], sympy.Basic):
            return args[0]  # S(1)/2: sympify of a number already built
        if name not in FUNCTIONS:
            if not _SYMBOL_TEXT.match(name) or name in CONSTANTS:
                raise SympyParseError(f"call of {name!r} not allowed")
            if kwargs:
                raise SympyParseError("keywords on an undefined function")
            for a in args:
                self.expect_math(a)
            return sympy.Function(name)(*args)
        check_call(name, args)
        check_magnitudes(name, args)
        return FUNCTIONS[name](*args, **kwargs)

    def string_call(self, name: str, node: ast.Call, kwargs: dict) -> Any:
        if name == "Float" and len(node.args) == 1 and not kwargs:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if not _FLOAT_TEXT.match(arg.value.strip()):
                    raise SympyParseError("Float string is not a number")
                return sympy.Float(arg.value.strip())
            value = self.build(arg)
            if not isinstance(value, sympy.Number):
                raise SympyParseError("Float of a non-number")
            return sympy.Float(value)
        if len(node.args) != 1 or not (isinstance(node.args[0], ast.Constant)
                                       and isinstance(node.args[0].value, str)):
            raise SympyParseError(f"{name} takes one string")
        text = node.args[0].value
        if name == "symbols":
            if not _SYMBOLS_TEXT.match(text):
                raise SympyParseError("bad symbols() text")
            return sympy.symbols(text, **kwargs)
        if not _SYMBOL_TEXT.match(text):
            raise SympyParseError(f"bad {name} name")
        if name == "Function":
            if kwargs:
                raise SympyParseError("keywords on Function")
            return sympy.Function(text)
        return sympy.Symbol(text, **kwargs)


def _bits(value: Any) -> float:
    """Size in bits of a rational number's numerator plus denominator."""
    p, q = sympy.fraction(value)
    return max(1, abs(int(p)).bit_length()) + max(1, abs(int(q)).bit_length())


def check_power(base: Any, exponent: Any) -> None:
    """Refuse powers whose eager evaluation would be huge (``2**10**10``)."""
    if isinstance(base, sympy.MatrixBase):
        if not (isinstance(exponent, sympy.Integer) and abs(int(exponent)) <= MAX_MATRIX_EXPONENT
                and base.rows * base.cols <= 16):
            raise SympyParseError("matrix power too large or not an integer")
        return
    if not isinstance(exponent, sympy.Rational):
        return  # symbolic or float exponent: no exact eager expansion
    if isinstance(base, sympy.Rational):
        if base in (0, 1, -1):
            return
        if exponent.q != 1 and (abs(exponent.p) > MAX_SYMBOLIC_EXPONENT or exponent.q > MAX_SYMBOLIC_EXPONENT):
            raise SympyParseError("rational exponent too large")
        if abs(exponent.p) * _bits(base) > MAX_POW_BITS:
            raise SympyParseError(f"power result larger than {MAX_POW_BITS} bits")
        return
    if abs(exponent.p) > MAX_SYMBOLIC_EXPONENT or exponent.q > MAX_SYMBOLIC_EXPONENT:
        raise SympyParseError("exponent too large")


def check_call(name: str, args: list) -> None:
    for a in args:
        if isinstance(a, (list, tuple, set, dict)):
            if name not in ("Matrix", "ImmutableMatrix", "diag", "Tuple", "FiniteSet",
                            "Piecewise", "Integral", "Sum", "Product", "Derivative", "Limit",
                            "Lambda", "ImageSet"):
                raise SympyParseError(f"container argument to {name}")
    if name in ("factorial", "binomial", "gamma"):
        for a in args:
            if isinstance(a, sympy.Number) and abs(a) > MAX_INT_FUNCTION_ARG:
                raise SympyParseError(f"{name} argument too large")
    if name in ("eye", "zeros", "ones"):
        if not all(isinstance(a, sympy.Integer) and 0 <= a <= MAX_MATRIX_SIDE for a in args):
            raise SympyParseError(f"{name} size not allowed")
    if name in ("Sum", "Product", "Integral", "Derivative") and len(args) > 1:
        for a in args[1:]:
            if isinstance(a, sympy.Integer) and a > MAX_MATRIX_SIDE:  # Derivative(f, x, 10**9)
                raise SympyParseError(f"{name} order too large")
    if name == "Pow" and len(args) == 2:
        check_power(args[0], args[1])
    if name == "root" and len(args) >= 2:
        if not isinstance(args[1], sympy.Integer) or args[1] == 0:
            raise SympyParseError("root index must be a non-zero integer")
        check_power(args[0], sympy.Rational(1, args[1]))


_LOG10_2, _LOG10_E = math.log10(2), math.log10(math.e)
_GROWTH = {"exp": 1.0, "sinh": 1.0, "cosh": 1.0}


def digits(expr: Any, depth: int = 0) -> float:
    """Upper bound of log10|value| of a symbol-free sympy expression, from its tree
    (nothing evaluated; inf when it cannot be bounded)."""
    if depth > 60:
        return math.inf
    if isinstance(expr, sympy.Rational):
        return max(abs(int(expr.p)).bit_length(), 1) * _LOG10_2
    if isinstance(expr, sympy.Float):
        return max(float(sympy.log(abs(expr), 10)) if expr else 0.0, 0.0) if abs(expr) < 1e300 else math.inf
    if isinstance(expr, (sympy.NumberSymbol, sympy.core.numbers.ImaginaryUnit)) or not expr.args:
        return 1.0
    sub = [digits(a, depth + 1) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return max(max(sub), 0.0) + math.log10(len(sub))
    if isinstance(expr, sympy.Mul):
        return sum(max(d, 0.0) for d in sub)
    if isinstance(expr, sympy.Pow):
        base, exponent = sub
        if exponent > 300:
            return math.inf
        return max(base, _LOG10_2) * 10 ** exponent
    name = getattr(expr.func, "__name__", "")
    if name in _GROWTH:
        return math.inf if sub[0] > 300 else 10 ** sub[0] * _LOG10_E
    if name in ("factorial", "gamma"):
        return math.inf if sub[0] > 300 else 10 ** sub[0] * (sub[0] + 1)
    if name == "log":
        return math.log10(sub[0] / _LOG10_E + 1) + 1 if math.isfinite(sub[0]) else math.inf
    return max(sub)


def check_magnitudes(name: str, args: list) -> None:
    """Refuse applying a function to a symbol-free argument that may have more than
    MAX_EVAL_DIGITS digits: sympy's automatic evaluation (floor, ceiling, Mod, comparisons
    in Min/Max, ...) would compute it to integer precision."""
    for a in args:
        if isinstance(a, sympy.Basic) and not isinstance(a, sympy.MatrixBase) and not a.free_symbols:
            if digits(a) > MAX_EVAL_DIGITS:
                raise SympyParseError(f"argument of {name} may have more than {MAX_EVAL_DIGITS} "
                                      "digits (not evaluated)")


# -- comparison -------------------------------------------------------------------------

_Leaf = tuple[Any, Any]


def structural(answer: Any, oracle: Any, pending: list[_Leaf]) -> bool:
    """Compare containers structurally and scalars exactly; sympy leaves that differ
    structurally are appended to ``pending`` (they may still be equivalent). Returns False
    when the shapes differ (no equivalence can make them equal)."""
    if isinstance(oracle, (bool, type(None), str)) or isinstance(answer, (bool, type(None), str)):
        return type(answer) is type(oracle) and answer == oracle
    if isinstance(oracle, (list, tuple)):
        if type(answer) is not type(oracle) or len(answer) != len(oracle):
            return False
        return all(structural(a, g, pending) for a, g in zip(answer, oracle))
    if isinstance(oracle, (set, frozenset)):
        if not isinstance(answer, (set, frozenset)) or len(answer) != len(oracle):
            return False
        left = [a for a in answer if a not in oracle]
        right = [g for g in oracle if g not in answer]
        if not left:
            return True
        if len(left) > MAX_UNMATCHED:
            return False
        pending.append((tuple(left), tuple(right)))  # matched by equivalence, pairwise
        return True
    if isinstance(oracle, dict):
        if not isinstance(answer, dict) or len(answer) != len(oracle):
            return False
        if set(answer) != set(oracle):
            return False  # keys must match exactly (symbolic keys are rare)
        return all(structural(answer[k], oracle[k], pending) for k in oracle)
    if isinstance(answer, (list, tuple, set, frozenset, dict)):
        return False
    if answer == oracle:
        return True
    pending.append((answer, oracle))
    return True


def _zero(value: Any) -> bool:
    if isinstance(value, sympy.MatrixBase):
        return bool(value.is_zero_matrix)
    return value == 0


def leaf_equivalent(p: Any, g: Any) -> bool:
    """C.2.1 on one pair of sympy objects (may run for a long time: call it sandboxed)."""
    if p == g:
        return True
    if isinstance(p, sympy.MatrixBase) or isinstance(g, sympy.MatrixBase):
        if not (isinstance(p, sympy.MatrixBase) and isinstance(g, sympy.MatrixBase)) or p.shape != g.shape:
            return False
        diff = p - g
        return _zero(sympy.simplify(diff)) or sympy.expand(p) == sympy.expand(g)
    if isinstance(p, sympy.Expr) and isinstance(g, sympy.Expr):
        return _zero(sympy.simplify(p - g)) or sympy.expand(p) == sympy.expand(g)
    if isinstance(p, sympy.Basic) and isinstance(g, sympy.Basic):
        if p.func != g.func or len(p.args) != len(g.args):
            return False
        return all(leaf_equivalent(a, b) for a, b in zip(p.args, g.args))
    return False


def resolve(pending: list[_Leaf]) -> bool:
    """Decide the pending pairs with :func:`leaf_equivalent` (in-process: sandbox it)."""
    for answer, oracle in pending:
        if isinstance(oracle, tuple) and isinstance(answer, tuple):  # unmatched set elements
            remaining = list(oracle)
            for a in answer:
                hit = next((i for i, g in enumerate(remaining) if leaf_equivalent(a, g)), None)
                if hit is None:
                    return False
                remaining.pop(hit)
            continue
        if not leaf_equivalent(answer, oracle):
            return False
    return True


class _InProcessTimeout(BaseException):
    """Raised by the alarm (a BaseException: sympy's ``except Exception`` cannot eat it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _InProcessTimeout


def _disarm() -> None:
    while True:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            return
        except _InProcessTimeout:
            continue


def _fast(answer_text: str, oracle_text: str) -> tuple[bool, str] | None:
    """Parse, compare structurally, expand cheaply; None: the sandboxed step decides."""
    answer = parse_sympy(answer_text)
    oracle = parse_sympy(oracle_text)
    pending: list[_Leaf] = []
    if not structural(answer, oracle, pending):
        return False, "different"
    if not pending:
        return True, "structural"
    if all(_cheap_expand_equal(a, g) for a, g in pending):
        return True, "expand"
    return None


def equivalent(answer_text: str, oracle_text: str, *, timeout: float = TIMEOUT) -> tuple[bool, str]:
    """Is the answer equivalent to the oracle? Returns ``(correct, how)`` with ``how`` one
    of ``structural``, ``different`` (shapes or scalars differ), ``expand``, ``simplify``
    (equal by C.2.1), ``not-equivalent``, ``grading_timeout`` (a wrong answer), ``error``.
    Raises :class:`SympyParseError` when either text is not an allowed sympy answer."""
    if threading.current_thread() is not threading.main_thread():
        return _sandboxed(answer_text, oracle_text, timeout, full=True)  # no alarm here
    previous = signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    outer = (0.0, 0.0)
    decided: tuple[bool, str] | None = (False, "grading_timeout")
    try:
        try:
            outer = signal.setitimer(signal.ITIMER_REAL, IN_PROCESS_SECONDS)
            decided = _fast(answer_text, oracle_text)
        finally:
            _disarm()   # the alarm may also fire here: retried until it is off
    except _InProcessTimeout:
        decided = (False, "grading_timeout")
    finally:
        signal.signal(signal.SIGALRM, previous)
        if outer[0] > 0:  # someone else's alarm (e.g. pytest-timeout): put it back
            signal.setitimer(signal.ITIMER_REAL, max(outer[0] - (time.monotonic() - started), 1e-3),
                             outer[1])
    return decided if decided is not None else _sandboxed(answer_text, oracle_text, timeout)


MAX_EXPAND_TERMS = 2_000


def _expand_terms(expr: Any, budget: int = MAX_EXPAND_TERMS) -> int:
    """Upper estimate of the number of terms ``expand(expr)`` produces (capped just above
    ``budget``): sums add, products multiply, ``b**n`` takes C(terms(b) + n - 1, n)."""
    if not isinstance(expr, sympy.Basic) or not expr.args:
        return 1
    if isinstance(expr, sympy.Add):
        return min(budget + 1, sum(_expand_terms(a, budget) for a in expr.args))
    if isinstance(expr, sympy.Mul):
        total = 1
        for a in expr.args:
            total = min(budget + 1, total * _expand_terms(a, budget))
        return total
    if isinstance(expr, sympy.Pow):
        base = _expand_terms(expr.base, budget)
        exp = expr.exp
        if isinstance(exp, sympy.Integer) and exp > 0:
            if base == 1:
                return 1
            n = int(exp)
            if n > budget:
                return budget + 1
            return min(budget + 1, math.comb(base + n - 1, n))
        return base + _expand_terms(exp, budget)
    # function applications etc.: expand works on the arguments
    return min(budget + 1, 1 + sum(_expand_terms(a, budget) for a in expr.args))


def _cheap_expand_equal(answer: Any, oracle: Any) -> bool:
    """In-process ``expand(P) == expand(G)`` when both expansions are provably small; a
    False here only means "not decided cheaply"."""
    if not (isinstance(answer, sympy.Expr) and isinstance(oracle, sympy.Expr)):
        return False
    if _expand_terms(answer) + _expand_terms(oracle) > MAX_EXPAND_TERMS:
        return False
    try:
        return bool(sympy.expand(answer) == sympy.expand(oracle))
    except Exception:  # noqa: BLE001 - undecided: the sandboxed check decides
        return False


def _sandboxed(answer_text: str, oracle_text: str, timeout: float, full: bool = False) -> tuple[bool, str]:
    """The comparison as a job of the sandbox's job runner (:func:`compare_job`) under CPU,
    wall and memory limits (``full``: also parsing and the fast steps, for callers outside
    the main thread)."""
    from execbench.sandbox import records  # only needed for the slow path
    from execbench.sandbox.jobs import Job, run_jobs

    job = Job("compare", f"{__name__}:compare_job", args={"answer": answer_text, "oracle": oracle_text, "full": full},
              cpu_seconds=timeout, wall_seconds=timeout + 5, memory_mb=2048, max_value=1 << 16)
    outcome = run_jobs([job])[0]
    if outcome.limit in ("cpu_time", "wall_time", "memory"):
        return False, "grading_timeout"
    if not outcome.ok or outcome.value is None:
        return False, "error"
    try:
        result = records.check(outcome.value, {"equal": bool, "how": str}, {"refused": str})
    except records.RecordError:
        return False, "error"
    if "refused" in result:
        raise SympyParseError(result["refused"][:500])
    return result["equal"], result["how"][:100]


class CompareArgs(TypedDict):
    """The comparison job's arguments (:func:`equivalent`)."""

    answer: str
    oracle: str
    full: bool  # try the fast numeric decision first


class CompareResult(TypedDict):
    """The comparison job's value, checked by the parent as hostile input."""

    equal: bool
    how: str  # "different", "simplify", "not-equivalent", "refused", "error", or the fast path's word
    refused: NotRequired[str]  # the parser's refusal (of either text)
    error: NotRequired[str]


def compare_job(job: CompareArgs) -> CompareResult:
    """The job's handler (in the sandbox): re-parse both texts with the same parser, decide
    equivalence."""
    result: CompareResult
    try:
        decided = _fast(job["answer"], job["oracle"]) if job.get("full") else None
        if decided is not None:
            result = {"equal": decided[0], "how": decided[1]}
        else:
            answer = parse_sympy(job["answer"])
            oracle = parse_sympy(job["oracle"])
            pending: list[_Leaf] = []
            if not structural(answer, oracle, pending):
                result = {"equal": False, "how": "different"}
            else:
                equal = resolve(pending)
                result = {"equal": equal, "how": "simplify" if equal else "not-equivalent"}
    except SympyParseError as exc:
        result = {"equal": False, "how": "refused", "refused": str(exc)[:500]}
    except Exception as exc:  # noqa: BLE001 - reported to the parent as an error
        result = {"equal": False, "how": "error", "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return result
