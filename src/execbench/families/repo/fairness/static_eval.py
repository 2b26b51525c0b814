"""The value of a shown expression a reader can compute without running the library.

:func:`static_value` walks a whitelist of AST nodes and computes the value of an expression
made only of literals, names bound to such values (``names``), comprehensions over them,
f-strings, arithmetic, repetition, set/bool operators, comparisons, subscripts, a few pure
builtins (``range``, ``list``, ``set``, ``sorted``, ``len``, ...) and pure ``str`` methods.
Nothing is ever passed to ``eval``/``exec``: every node is interpreted here on values of
builtin types only (int, float, complex, str, bytes, bool, None, list, tuple, set,
frozenset, dict, range), so no user code (``__eq__``, ``__hash__``, ``__repr__``) runs.

Everything is bounded: at most :data:`MAX_STEPS` interpreted nodes and iterations, no
container longer than :data:`MAX_ITEMS`, no string longer than :data:`MAX_CHARS`, no integer
over :data:`MAX_INT_BITS` bits (checked *before* ``*``, ``**``, ``<<``, ``range`` or a
padding method allocates). Anything else raises :class:`NotStatic`.

Used by the leak gate (:mod:`.leaks`) and the masking of the shown test (``build``): a shown
``expected = ['neg'] * 5 + ['notneg'] * 5`` or ``{'foo'} | {f'foo_{i}' for i in range(3)}``
has the value of the answer it sits next to.
"""

from __future__ import annotations

import ast
import operator
import re
from typing import Any, Callable, Iterable, Mapping

from execbench.errors import InternalError

MAX_STEPS = 20_000
MAX_ITEMS = 10_000
MAX_CHARS = 100_000
MAX_INT_BITS = 4096

_SCALARS = (int, float, complex, str, bytes, bool, type(None))
_CONTAINERS = (list, tuple, set, frozenset, dict, range)


class NotStatic(InternalError):
    """The expression needs more than a reader's arithmetic (or a bound was exceeded)."""


class _Iter(list):  # reversed()/zip()/enumerate()/a generator: only consumed, never a value
    pass


def _size(value: Any) -> Any:
    """``value`` when within the bounds, else :class:`NotStatic`."""
    if isinstance(value, (str, bytes)) and len(value) > MAX_CHARS:
        raise NotStatic("string too long")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise NotStatic("integer too large")
    if isinstance(value, _CONTAINERS) and len(value) > MAX_ITEMS:
        raise NotStatic("container too large")
    return value


def _plain(value: Any) -> bool:
    """Only builtin types, all the way down (the values this module makes)."""
    if type(value) in _SCALARS:
        return True
    if type(value) in (list, tuple, set, frozenset, _Iter):
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return type(value) is range


def _len_of(value: Any) -> int:
    if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict, range, _Iter)):
        return len(value)
    raise NotStatic("not a sequence")


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, bytes, list, tuple)) and type(n) in (int, bool):
            if max(n, 0) * len(seq) > (MAX_CHARS if isinstance(seq, (str, bytes)) else MAX_ITEMS):
                raise NotStatic("repetition too large")
            return seq * n
    if type(a) in (int, bool) and type(b) in (int, bool) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise NotStatic("integer too large")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if type(a) in (int, bool) and type(b) in (int, bool) and b > 0 and abs(a) > 1:
        if b * a.bit_length() > MAX_INT_BITS:
            raise NotStatic("integer too large")
    return a ** b


def _lshift(a: Any, b: Any) -> Any:
    if type(b) in (int, bool) and b > MAX_INT_BITS:
        raise NotStatic("integer too large")
    return a << b


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, (str, bytes)):
        raise NotStatic("%-formatting")  # a width in the format could allocate without bound
    return a % b


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: _mod, ast.Pow: _pow, ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_, ast.BitXor: operator.xor, ast.LShift: _lshift, ast.RShift: operator.rshift}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b and a in (None, True, False), ast.IsNot: lambda a, b: a is not b}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                                            ast.Invert: operator.invert}
# str/bytes methods that compute from their arguments only; padding widths are checked
_STR_METHODS = {"join", "upper", "lower", "split", "rsplit", "strip", "lstrip", "rstrip", "replace", "title",
                "capitalize", "casefold", "swapcase", "splitlines", "startswith", "endswith", "count", "find",
                "rfind", "index", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "partition",
                "rpartition", "removeprefix", "removesuffix", "encode", "decode", "center", "ljust", "rjust",
                "zfill"}
_PADDING = {"center", "ljust", "rjust", "zfill"}


def _range(*args: Any) -> range:
    if not all(type(a) in (int, bool) for a in args) or not 1 <= len(args) <= 3:
        raise NotStatic("range of non-integers")
    r = range(*args)
    return _size(r)


def _sorted(items: Any, *, reverse: bool = False) -> list:
    return sorted(_iterable(items), reverse=bool(reverse))


def _iterable(value: Any) -> Any:
    if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict, range, _Iter)):
        return value
    raise NotStatic("not iterable")


def _safe_str(value: Any) -> str:
    if not _plain(value):
        raise NotStatic("str of an unknown object")
    return str(value)


BUILTINS: dict[str, Callable[..., Any]] = {
    "range": _range, "len": lambda x: _len_of(x), "list": lambda x=(): list(_iterable(x)),
    "tuple": lambda x=(): tuple(_iterable(x)), "set": lambda x=(): set(_iterable(x)),
    "frozenset": lambda x=(): frozenset(_iterable(x)), "dict": lambda x=(), **kw: {**dict(_iterable(x)), **kw},
    "sorted": _sorted, "reversed": lambda x: _Iter(reversed(list(_iterable(x)))),
    "enumerate": lambda x, start=0: _Iter(enumerate(_iterable(x), start)),
    "zip": lambda *xs: _Iter(zip(*map(_iterable, xs))), "min": min, "max": max,
    "sum": lambda x, start=0: _sum(x, start), "abs": abs, "str": lambda x="": _safe_str(x),
    "repr": lambda x: repr(x) if _plain(x) else _safe_str(None), "int": int, "float": float, "bool": bool,
    "chr": chr, "ord": ord, "round": round, "divmod": divmod, "any": lambda x: any(_iterable(x)),
    "all": lambda x: all(_iterable(x)), "hex": hex, "bin": bin, "oct": oct, "bytes": lambda x=b"": bytes(_bytes_arg(x))}


def _sum(items: Any, start: Any) -> Any:
    values = list(_iterable(items))
    if not all(type(v) in (int, float, bool, complex) for v in [start, *values]):
        raise NotStatic("sum of non-numbers")
    return sum(values, start)


def _bytes_arg(x: Any) -> Any:
    if type(x) in (int, bool):
        raise NotStatic("bytes(n) allocates")
    return _iterable(x)


class _Evaluator:
    def __init__(self, names: Mapping[str, Any], shadowed: Iterable[str]) -> None:
        self.names = dict(names)
        self.shadowed = set(shadowed)
        self.steps = 0

    def step(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise NotStatic("too many steps")

    def value(self, node: ast.AST) -> Any:
        self.step()
        method = getattr(self, "v_" + type(node).__name__, None)
        if method is None:
            raise NotStatic(f"not evaluated: {type(node).__name__}")
        out = method(node)
        return _size(out)

    def v_Constant(self, node: ast.Constant) -> Any:
        if type(node.value) not in _SCALARS:
            raise NotStatic("constant")
        return node.value

    def v_Name(self, node: ast.Name) -> Any:
        if node.id in self.names:
            return self.names[node.id]
        raise NotStatic(f"name {node.id}")

    def elements(self, elts: list[ast.expr]) -> list:
        out: list = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(_iterable(self.value(e.value)))
            else:
                out.append(self.value(e))
            if len(out) > MAX_ITEMS:
                raise NotStatic("container too large")
        return out

    def v_List(self, node: ast.List) -> Any:
        return self.elements(node.elts)

    def v_Tuple(self, node: ast.Tuple) -> Any:
        return tuple(self.elements(node.elts))

    def v_Set(self, node: ast.Set) -> Any:
        return set(self.elements(node.elts))

    def v_Dict(self, node: ast.Dict) -> Any:
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                base = self.value(v)
                if type(base) is not dict:
                    raise NotStatic("** of a non-dict")
                out.update(base)
            else:
                out[self.value(k)] = self.value(v)
        return out

    def v_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
                continue
            assert isinstance(v, ast.FormattedValue)
            value = self.value(v.value)
            if not _plain(value):
                raise NotStatic("format of an unknown object")
            spec = self.value(v.format_spec) if v.format_spec is not None else ""
            if not isinstance(spec, str) or any(len(d) > 5 or int(d) > MAX_CHARS for d in re.findall(r"\d+", spec)):
                raise NotStatic("format width too large")
            converted = {-1: value, 115: str(value), 114: repr(value), 97: ascii(value)}[v.conversion]
            parts.append(format(converted, spec))
        return "".join(parts)

    def v_UnaryOp(self, node: ast.UnaryOp) -> Any:
        return _UNARY[type(node.op)](self.value(node.operand))

    def v_BinOp(self, node: ast.BinOp) -> Any:
        left, right = self.value(node.left), self.value(node.right)
        if isinstance(left, _Iter) or isinstance(right, _Iter):
            raise NotStatic("iterator")
        return _BINOPS[type(node.op)](left, right)

    def v_BoolOp(self, node: ast.BoolOp) -> Any:
        result = None
        for v in node.values:
            result = self.value(v)
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result

    def v_Compare(self, node: ast.Compare) -> Any:
        left = self.value(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = self.value(comp)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def v_IfExp(self, node: ast.IfExp) -> Any:
        return self.value(node.body) if self.value(node.test) else self.value(node.orelse)

    def v_Subscript(self, node: ast.Subscript) -> Any:
        base = self.value(node.value)
        if isinstance(base, _Iter) or not isinstance(base, (str, bytes, list, tuple, dict, range)):
            raise NotStatic("subscript of a non-container")
        return base[self.value(node.slice)]

    def v_Slice(self, node: ast.Slice) -> Any:
        parts = [None if p is None else self.value(p) for p in (node.lower, node.upper, node.step)]
        if not all(p is None or type(p) is int for p in parts):
            raise NotStatic("slice of non-integers")
        return slice(*parts)

    def v_Call(self, node: ast.Call) -> Any:
        args = self.elements(node.args)
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise NotStatic("** in a call")
            kwargs[k.arg] = self.value(k.value)
        self.step(sum(_len_of(a) for a in args if isinstance(a, (_CONTAINERS, _Iter, str, bytes))))
        func = node.func
        if isinstance(func, ast.Name) and func.id in BUILTINS and func.id not in self.shadowed \
                and func.id not in self.names:
            return BUILTINS[func.id](*args, **kwargs)
        if isinstance(func, ast.Attribute) and func.attr in _STR_METHODS:
            base = self.value(func.value)
            if not isinstance(base, (str, bytes)):
                raise NotStatic("method of a non-string")
            if func.attr in _PADDING and any(type(a) is int and a > MAX_CHARS for a in args):
                raise NotStatic("padding too wide")
            if func.attr == "join":
                parts = list(_iterable(args[0])) if args else []
                if sum(len(p) if isinstance(p, (str, bytes)) else 0 for p in parts) + len(base) * len(parts) > MAX_CHARS:
                    raise NotStatic("join too long")
            if func.attr == "replace" and len(args) >= 2 and isinstance(args[0], (str, bytes)) \
                    and isinstance(args[1], (str, bytes)) \
                    and len(base) + (base.count(args[0]) + 1) * len(args[1]) > MAX_CHARS:  # type: ignore[arg-type]  # str.count(str) or bytes.count(bytes); a mismatch raises TypeError
                raise NotStatic("replace too long")
            if func.attr == "encode" or func.attr == "decode":
                if args and not isinstance(args[0], str):
                    raise NotStatic("codec")
            return getattr(base, func.attr)(*args, **kwargs)
        raise NotStatic("call of an unknown function")

    def comprehension(self, generators: list[ast.comprehension], emit: Callable[[], None]) -> None:
        saved = dict(self.names)

        def loop(i: int) -> None:
            if i == len(generators):
                emit()
                return
            gen = generators[i]
            if gen.is_async:
                raise NotStatic("async comprehension")
            for item in list(_iterable(self.value(gen.iter))):
                self.step()
                self.bind(gen.target, item)
                if all(self.value(c) for c in gen.ifs):
                    loop(i + 1)

        try:
            loop(0)
        finally:
            self.names = saved

    def bind(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.names[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = list(_iterable(value))
            if len(items) != len(target.elts) or any(isinstance(e, ast.Starred) for e in target.elts):
                raise NotStatic("unpacking")
            for t, v in zip(target.elts, items):
                self.bind(t, v)
        else:
            raise NotStatic("comprehension target")

    def collect(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> list:
        out: list = []

        def emit() -> None:
            out.append(self.value(node.elt))
            if len(out) > MAX_ITEMS:
                raise NotStatic("comprehension too large")

        self.comprehension(node.generators, emit)
        return out

    def v_ListComp(self, node: ast.ListComp) -> Any:
        return self.collect(node)

    def v_SetComp(self, node: ast.SetComp) -> Any:
        return set(self.collect(node))

    def v_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return _Iter(self.collect(node))

    def v_DictComp(self, node: ast.DictComp) -> Any:
        out: dict = {}

        def emit() -> None:
            out[self.value(node.key)] = self.value(node.value)
            if len(out) > MAX_ITEMS:
                raise NotStatic("comprehension too large")

        self.comprehension(node.generators, emit)
        return out


def static_value(node: ast.AST, names: Mapping[str, Any] | None = None, shadowed: Iterable[str] = ()) -> Any:
    """The value of ``node`` (module doc); :class:`NotStatic` when it is not computable here.
    ``names``: values of names bound to static values; ``shadowed``: names bound in the test
    (a local ``range`` or ``sorted`` is not the builtin)."""
    try:
        value = _Evaluator(names or {}, shadowed).value(node)
    except NotStatic:
        raise
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError,
            MemoryError, UnicodeError, LookupError) as exc:
        raise NotStatic(f"{type(exc).__name__}") from None
    if isinstance(value, _Iter) or not _plain(value):
        raise NotStatic("not a value")
    return value


def try_value(node: ast.AST, names: Mapping[str, Any] | None = None, shadowed: Iterable[str] = ()
              ) -> tuple[bool, Any]:
    """(True, value) or (False, None): :func:`static_value` without the exception."""
    try:
        return True, static_value(node, names, shadowed)
    except NotStatic:
        return False, None


def canonical_of(value: Any) -> tuple:
    """The grader's canonical form (:func:`compare.canonical`) of a value made here, so that a
    computed value compares with an answer by the grader's own equality (:func:`compare.same`)."""
    from execbench.families.repo.grading import compare

    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return compare._float(value)
    if isinstance(value, complex):
        return ("complex", compare._float(value.real), compare._float(value.imag))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, bytes):
        return ("bytes", value)
    if isinstance(value, list):
        return ("list", tuple(canonical_of(v) for v in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(canonical_of(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return compare._set([canonical_of(v) for v in value])
    if isinstance(value, dict):
        return compare._dict([(canonical_of(k), canonical_of(v)) for k, v in value.items()])
    if isinstance(value, range):
        args = (value.start, value.stop) if value.step == 1 else (value.start, value.stop, value.step)
        return ("call", ("range",), tuple(("int", a) for a in args), ())
    raise NotStatic("no canonical form")


def equals(node: ast.AST, want: tuple, names: Mapping[str, Any] | None = None, shadowed: Iterable[str] = (),
           aliases: Any = None) -> bool:
    """``node``'s static value equals the canonical answer ``want`` under the grader's equality."""
    from execbench.families.repo.grading import compare

    ok, value = try_value(node, names, shadowed)
    if not ok:
        return False
    try:
        return compare.same(canonical_of(value), want, aliases)
    except (NotStatic, RecursionError):
        return False

