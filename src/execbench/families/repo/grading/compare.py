"""The repo family's answer-comparison engine (RepoReason appendix C.2): literal comparison
without executing anything, then, for an answer or key that is not a plain literal and that
the literal rules call wrong, the test's own judgement in the sandbox (:mod:`.exec_grade`:
the answer is rebuilt from a whitelisted AST in the package's venv, never in this process).

Extraction (:func:`extract`)
    ``<think>`` blocks are removed (:func:`execbench.grading.strip_reasoning`). Candidate
    texts, in order: the last fenced code block (whole, then its last line), the text after
    the last ``Answer:`` / ``Final answer:`` marker (whole, then its first line), the whole
    text, its last line; each also without surrounding backticks / ``**`` and without one
    trailing period. The first candidate that parses as a Python expression is the answer
    (parsing = size pre-checks on the tokens, then ``ast.parse(mode="eval")``). None parses:
    status ``no_answer`` (``truncated`` when a ``<think>`` block was left open). A candidate
    refused by the size checks (too long, too deep, a long operator chain) counts as an
    answer only when nothing else parses: status ``ok``, wrong, ``details["refused"]``.

Python-literal answers (:func:`canonical`, :func:`same`)
    Both the answer and the oracle text are converted by walking a whitelist of AST nodes
    into a canonical, hashable form; anything else (operators, lambdas, subscripts,
    comprehensions, f-strings, dunder names or attributes, calls of non-names...) is
    refused: a wrong answer with ``details["refused"]``. The normalisation rules:

    * literals: constants (int, float, complex, str, bytes, bool, None), signed numbers,
      ``a + bj``; type-strict: ``1``, ``1.0`` and ``True`` differ; ``nan``/``inf`` names,
      ``float('nan')``, ``math.inf`` are floats and NaN equals NaN;
    * quote invariance: strings compare by value (``'a'``, ``"a"``, ``'''a'''``);
    * collection alignment: whitespace is irrelevant (AST); set elements and dict items
      compare regardless of order (duplicate dict keys: the last wins, as in Python);
    * object mapping: ``defaultdict(f, m)`` / ``OrderedDict(m)`` / ``Counter(m)`` /
      ``dict(m)`` / ``dict(k=v)`` become the dict ``m``; ``frozenset(x)`` / ``set(x)`` the set
      of ``x``'s elements; ``list(x)`` / ``tuple(x)`` of a literal become that list/tuple;
    * constructor awareness: ``Foo(1, 2)`` is a constructor node (callee path, positional
      arguments, keyword arguments regardless of order); two constructors are equal when
      their callees match (path qualification below) and their arguments are equal;
    * pure builtins of literals are their value: ``len``, ``min``, ``max``, ``sorted``, ``abs``
      computed on the canonical form exactly as Python would (mixed types, ties between
      different types and NaN are refused); ``max('6')`` is ``'6'``, ``len([0, 1])`` is ``2``;
    * no other call is stripped: ``reversed([0, 1])``, ``deque([0, 1])`` or ``D({...})``
      are not the container they wrap (only the conversions above, which keep the value
      under Python's ``==``, are applied);
    * names by identity: dotted names (an attribute answer, a constructor's callee) are
      equal when they are the same text or two names of one object. The builder resolves
      the answer's names in the test module's namespace inside the sandbox and stores every
      name of the same object there (``provenance.answer_aliases``: groups of dotted names,
      e.g. ``toolz.flip`` and ``toolz.functoolz.flip``), so grading stays execution-free.

Sympy answers (``task.answer_kind == "sympy"``)
    :mod:`execbench.families.repo.grading.sympy_parse`: a restricted parser builds sympy objects
    from a whitelisted AST, then structural equality, then (sandboxed, time-limited)
    ``simplify(P - G) == 0 or expand(P) == expand(G)``. A run over the limit is a wrong
    answer with ``details["how"] == "timeout"``.
"""

from __future__ import annotations

import ast
import math
import re
import tokenize
from collections.abc import Mapping
from typing import Any

from execbench.errors import InternalError
from execbench.grading import GRADING_TIMEOUT, NO_ANSWER, OK, TRUNCATED, Score, reasoning_unclosed, strip_reasoning
from execbench.grading.tokens import TokenBoundError, significant_tokens

MAX_RESPONSE = 200_000  # characters of the response searched (the end is kept)
MAX_ANSWER = 100_000
MAX_DEPTH = 50  # brackets
MAX_AST_DEPTH = 160
MAX_CHAIN = 3  # +/- in a row without a comma or bracket (python-literal answers)
MAX_SYMPY_CHAIN = 300
MAX_DOTS = 50
MAX_UNMATCHED = 200
EXTRACTED_CHARS = 2_000

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_INLINE_FENCE = re.compile(r"```(.*?)```", re.S)
_MARKER = re.compile(r"(?:final\s+answer|answer)\s*(?:is\s*)?[:=]", re.I)
_CLASS_REPR = re.compile(r"<class '([A-Za-z_][\w.]*)'>")
_RESET = set("([{}]),:=")
_MAPPING_CTORS = {"dict", "defaultdict", "OrderedDict", "Counter"}
_MODULES = {"collections", "builtins", "math", "typing"}


class Refused(InternalError, ValueError):
    """The text parses but is not an allowed answer (the message says why)."""


class _NotExpression(InternalError, ValueError):
    """The text is not a Python expression (prose)."""


# -- extraction -----------------------------------------------------------------------------

def _variants(text: str) -> list[str]:
    text = text.strip()
    out = [text]
    for a in ("**", "`"):
        if len(text) > 2 * len(a) and text.startswith(a) and text.endswith(a):
            out.append(text[len(a):-len(a)].strip())
    marker = _MARKER.match(text)
    if marker:
        out.append(text[marker.end():].strip())
    for t in list(out):
        if t.endswith(".") and not t.endswith(".."):
            out.append(t[:-1].rstrip())
    return [t for t in dict.fromkeys(out) if t]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def candidates(text: str) -> list[str]:
    """Candidate answer texts, most specific first (module doc)."""
    text = text[-MAX_RESPONSE:]
    found: list[str] = []
    fences = _FENCE.findall(text) or _INLINE_FENCE.findall(text)
    if fences:
        block = fences[-1].strip()
        found.append(block)
        lines = _lines(block)
        if len(lines) > 1:
            found.append(lines[-1])
    markers = list(_MARKER.finditer(text))
    if markers:
        rest = text[markers[-1].end():].strip()
        found.append(rest)
        lines = _lines(rest)
        if lines:
            found.append(lines[0])
    found.append(text.strip())
    lines = _lines(text)
    if lines:
        found.append(lines[-1])
    out: list[str] = []
    for c in found:
        out.extend(_variants(c))
    return list(dict.fromkeys(c for c in out if c))


def bounded_parse(text: str, *, max_chain: int = MAX_CHAIN, max_len: int = MAX_ANSWER) -> ast.expr:
    """``ast.parse(text, mode="eval").body`` after token-level bounds that keep the parser
    from recursing or allocating without limit. Raises :class:`Refused` when a bound is
    exceeded, :class:`_NotExpression` when the text is not an expression."""
    if len(text) > max_len:
        raise Refused(f"longer than {max_len} characters")
    chain = dots = 0
    try:
        for tok, _depth in significant_tokens(text, max_depth=MAX_DEPTH):
            s = tok.string
            if tok.type == tokenize.OP:
                if s in _RESET:
                    chain = 0
                elif s == ".":
                    dots += 1
                    if dots > MAX_DOTS * 20:
                        raise Refused("too many attribute accesses")
                else:
                    chain += 1
                    if chain > max_chain:
                        raise Refused("operator chain too long")
    except TokenBoundError as exc:
        if exc.untokenizable:
            raise _NotExpression("cannot tokenize") from None
        raise Refused(str(exc)) from None
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        raise _NotExpression("not an expression") from None
    except (RecursionError, MemoryError):
        raise Refused("too complex to parse") from None
    if _ast_depth(tree) > MAX_AST_DEPTH:
        raise Refused(f"expression deeper than {MAX_AST_DEPTH}")
    return tree


def _ast_depth(tree: ast.AST) -> int:
    deepest = 0
    todo = [(tree, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        todo.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def extract(response: str, *, sympy: bool = False) -> tuple[str | None, str | None, str]:
    """(answer text, refused reason, status) from a raw response (module doc)."""
    text = strip_reasoning(response or "")
    if not text.strip():
        return None, None, TRUNCATED if reasoning_unclosed(response or "") else NO_ANSWER
    chain = MAX_SYMPY_CHAIN if sympy else MAX_CHAIN
    refused: tuple[str, str] | None = None
    for cand in candidates(text):
        try:
            bounded_parse(cand, max_chain=chain)
        except Refused as exc:
            refused = refused or (cand, str(exc))
            continue
        except _NotExpression:
            continue
        return cand, None, OK
    if refused:
        return refused[0], refused[1], OK
    return None, None, TRUNCATED if reasoning_unclosed(response or "") else NO_ANSWER


# -- canonical form of python-literal answers ----------------------------------------------

def _dotted(node: ast.expr) -> tuple[str, ...] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    if any(p.startswith("__") for p in parts):
        raise Refused("dunder name or attribute")
    return tuple(reversed(parts))


def _float(value: float) -> tuple:
    return ("float", "nan") if math.isnan(value) else ("float", value)


def _number(node: ast.expr) -> tuple | None:
    """Canonical form of a (signed) numeric literal, or None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, complex):
        v = node.value
        if isinstance(v, float):
            return _float(v)
        if isinstance(v, complex):
            return ("complex", _float(v.real), _float(v.imag))
        return ("int", v)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number(node.operand)
        if inner is None or isinstance(node.op, ast.UAdd):
            return inner
        return _negate(inner)
    return None


def _negate(c: tuple) -> tuple:
    if c[0] == "int":
        return ("int", -c[1])
    if c[0] == "float":
        return c if c[1] == "nan" else ("float", -c[1])
    return ("complex", _negate(c[1]), _negate(c[2]))


def _sort_key(c: Any) -> str:
    return repr(c)


def _set(items: list) -> tuple:
    return ("set", tuple(sorted(set(items), key=_sort_key)))


def _dict(pairs: list[tuple]) -> tuple:
    merged: dict = {}
    for k, v in pairs:
        merged[k] = v
    return ("dict", tuple(sorted(merged.items(), key=lambda kv: _sort_key(kv[0]))))


def _elements(c: tuple) -> list | None:
    """Elements of a canonical iterable literal (list, tuple, set, str, dict keys)."""
    if c[0] in ("list", "tuple", "set"):
        return list(c[1])
    if c[0] == "str":
        return [("str", ch) for ch in c[1]]
    if c[0] == "dict":
        return [k for k, _ in c[1]]
    return None


def canonical(node: ast.expr) -> tuple:
    """Canonical hashable form of an answer's AST (module doc); raises :class:`Refused`."""
    number = _number(node)
    if number is not None:
        return number
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None:
            return ("none",)
        if isinstance(v, bool):
            return ("bool", v)
        if isinstance(v, str):
            return ("str", v)
        if isinstance(v, bytes):
            return ("bytes", v)
        raise Refused(f"constant not allowed: {type(v).__name__}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _number(node.left), _number(node.right)
        if left and right and left[0] in ("int", "float") and right[0] == "complex" \
                and right[1] == ("float", 0.0):
            try:
                real = _float(float(left[1])) if left[1] != "nan" else left
            except OverflowError:
                raise Refused("complex literal out of range") from None
            imag = right[2] if isinstance(node.op, ast.Add) else _negate(right[2])
            return ("complex", real, imag)
        raise Refused("arithmetic is not a literal")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = canonical(node.operand)  # -inf, -math.inf
        if inner[0] not in ("int", "float", "complex"):
            raise Refused("sign on a non-number")
        return _negate(inner) if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.List):
        return ("list", tuple(canonical(e) for e in node.elts))
    if isinstance(node, ast.Tuple):
        return ("tuple", tuple(canonical(e) for e in node.elts))
    if isinstance(node, ast.Set):
        return _set([canonical(e) for e in node.elts])
    if isinstance(node, ast.Dict):
        keys = [k for k in node.keys if k is not None]
        if len(keys) != len(node.keys):
            raise Refused("** unpacking")
        return _dict([(canonical(k), canonical(v)) for k, v in zip(keys, node.values)])
    if isinstance(node, (ast.Name, ast.Attribute)):
        parts = _dotted(node)
        if parts is None:
            raise Refused("attribute of an expression")
        if parts[-1] in ("nan", "inf") and (len(parts) == 1 or parts[:-1] in (("math",), ("float",))):
            return _float(float(parts[-1]))
        return ("name", parts)
    if isinstance(node, ast.Call):
        return _call(node)
    if isinstance(node, ast.Starred):
        raise Refused("unpacking")
    raise Refused(f"not allowed in an answer: {type(node).__name__}")


def _call(node: ast.Call) -> tuple:
    parts = _dotted(node.func)
    if parts is None:
        raise Refused("call of an expression")
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise Refused("* / ** unpacking")
    args = [canonical(a) for a in node.args]
    kwargs = {k.arg: canonical(k.value) for k in node.keywords}
    name = parts[-1]
    builtin = len(parts) == 1 or parts[:-1][0] in _MODULES
    if builtin and name in ("set", "frozenset") and not kwargs and len(args) <= 1:
        items = _elements(args[0]) if args else []
        if items is not None:
            return _set(items)
    if builtin and name in ("list", "tuple") and not kwargs and len(args) <= 1:
        items = _elements(args[0]) if args else []
        if items is not None:
            return (name, tuple(items))
    if builtin and name in _MAPPING_CTORS:
        rest = args[1:] if name == "defaultdict" else args
        if len(rest) <= 1:
            base = _mapping(rest[0]) if rest else []
            if base is not None and (name != "Counter" or not kwargs or not rest):  # Counter(u=1) == {'u': 1}
                return _dict(base + [(("str", k), v) for k, v in sorted(kwargs.items())])
    if builtin and name == "float" and len(args) == 1 and not kwargs and args[0][0] == "str":
        try:
            return _float(float(args[0][1].strip()))
        except ValueError:
            pass
    if builtin and len(parts) == 1 and name in _PURE and not kwargs:
        value = _pure(name, args)
        if value is not None:
            return value
    return ("call", parts, tuple(args), tuple(sorted(kwargs.items())))


_PURE = {"len", "min", "max", "sorted", "abs"}
_ORDERED = {"int", "float", "bool"}


def _key(c: tuple) -> Any:
    """The Python value ordering compares for a canonical number or string (None: not comparable
    here, the call stays a call)."""
    if c[0] in ("int", "bool") or (c[0] == "float" and c[1] != "nan"):
        return ("n", c[1])
    if c[0] in ("str", "bytes"):
        return (c[0], c[1])
    return None


def _pure(name: str, args: list[tuple]) -> tuple | None:
    """``len``/``min``/``max``/``sorted``/``abs`` of literal arguments, computed on their
    canonical form exactly as Python would, or None when that is not certain (mixed types,
    ties between different types, NaN): then the call is no value and never equals one."""
    if name == "abs":
        if len(args) == 1 and args[0][0] in ("int", "float") and args[0][1] != "nan":
            return (args[0][0], abs(args[0][1]))
        return None
    if len(args) != 1 and name != "min" and name != "max":
        return None
    items = _elements(args[0]) if len(args) == 1 else list(args)
    if items is None or (len(args) == 1 and args[0][0] == "str" and name == "len"):
        return ("int", len(args[0][1])) if items is not None else None
    if name == "len":
        keys = [_key(i) for i in items]
        if args[0][0] in ("set", "dict") and len({k for k in keys if k and k[0] == "n"}) != sum(
                1 for k in keys if k and k[0] == "n"):
            return None  # {1, 1.0} has one element in Python
        return ("int", len(items))
    keys = [_key(i) for i in items]
    if not items or any(k is None for k in keys) or len({k[0] for k in keys}) > 1:
        return None
    if args[0][0] in ("set", "dict") and len(set(keys)) != len(keys):
        return None  # ties between 1 and 1.0 in a set: the iteration order decides
    if name == "sorted":
        return ("list", tuple(i for _, i in sorted(zip(keys, items), key=lambda ki: ki[0])))
    best = max(keys) if name == "max" else min(keys)
    return items[keys.index(best)]  # the first of equal values, as Python returns


def _mapping(c: tuple) -> list[tuple] | None:
    """Items of a dict literal or of a literal sequence of pairs."""
    if c[0] == "dict":
        return list(c[1])
    if c[0] in ("list", "tuple"):
        pairs = []
        for item in c[1]:
            if item[0] not in ("list", "tuple") or len(item[1]) != 2:
                return None
            pairs.append((item[1][0], item[1][1]))
        return pairs
    return None


Aliases = dict[tuple[str, ...], frozenset[int]]


def alias_index(groups: Any) -> Aliases:
    """``{dotted name parts: ids of the alias groups holding it}`` from the stored groups
    (lists of dotted names, each group the names of one object); malformed input is ignored."""
    index: dict[tuple[str, ...], set[int]] = {}
    if not isinstance(groups, list):
        return {}
    for n, group in enumerate(groups[:100]):
        if not isinstance(group, list):
            continue
        for name in group[:200]:
            if isinstance(name, str) and len(name) < 300:
                index.setdefault(tuple(name.split(".")), set()).add(n)
    return {k: frozenset(v) for k, v in index.items()}


def _name_equal(a: tuple[str, ...], b: tuple[str, ...], aliases: Aliases | None) -> bool:
    return a == b or bool(aliases and aliases.get(a, frozenset()) & aliases.get(b, frozenset()))


def same(a: tuple, b: tuple, aliases: Aliases | None = None) -> bool:
    """Equality of canonical forms with the comparison rules of the module doc; ``aliases``
    (:func:`alias_index`) says which dotted names name one object."""
    if a == b:
        return True
    ka, kb = a[0], b[0]
    if ka != kb:
        return False

    def eq(x: tuple, y: tuple) -> bool:
        return same(x, y, aliases)

    if ka == "name":
        return _name_equal(a[1], b[1], aliases)
    if ka == "call":
        return (_name_equal(a[1], b[1], aliases) and len(a[2]) == len(b[2])
                and all(eq(x, y) for x, y in zip(a[2], b[2]))
                and [k for k, _ in a[3]] == [k for k, _ in b[3]]
                and all(eq(x, y) for (_, x), (_, y) in zip(a[3], b[3])))
    if ka in ("list", "tuple"):
        return len(a[1]) == len(b[1]) and all(eq(x, y) for x, y in zip(a[1], b[1]))
    if ka == "set":
        return _match(list(a[1]), list(b[1]), eq)
    if ka == "dict":
        return _match(list(a[1]), list(b[1]), lambda x, y: eq(x[0], y[0]) and eq(x[1], y[1]))
    return False


def _match(left: list, right: list, eq) -> bool:
    """Order-free matching: exact (hash) matches first, then pairwise for the rest."""
    if len(left) != len(right):
        return False
    pool: dict = {}
    for item in right:
        pool[item] = pool.get(item, 0) + 1
    rest_left = []
    for item in left:
        if pool.get(item):
            pool[item] -= 1
        else:
            rest_left.append(item)
    rest_right = [item for item, n in pool.items() for _ in range(n)]
    if len(rest_left) > MAX_UNMATCHED:
        return False
    for item in rest_left:
        hit = next((i for i, other in enumerate(rest_right) if eq(item, other)), None)
        if hit is None:
            return False
        rest_right.pop(hit)
    return True


def parse_answer(text: str) -> tuple:
    """Canonical form of an answer or oracle text; :class:`Refused` when not allowed."""
    try:
        return canonical(bounded_parse(text.strip()))
    except _NotExpression:
        fixed = _CLASS_REPR.sub(r"\1", text)  # defaultdict(<class 'int'>, {...}) reprs
        if fixed == text:
            raise Refused("not a Python expression") from None
        try:
            return canonical(bounded_parse(fixed.strip()))
        except _NotExpression:
            raise Refused("not a Python expression") from None


# -- grading ----------------------------------------------------------------------------------

def _field(task: Any, name: str, default: Any = None) -> Any:
    if isinstance(task, Mapping):
        return task.get(name, default)
    return getattr(task, name, default)


def grade_answer(task: Any, response: str) -> Score:
    """Grade a raw model response against ``task.answer`` (module doc). Never raises on
    model text; never evaluates it."""
    oracle = str(_field(task, "answer"))
    kind = _field(task, "answer_kind") or "python-literal"
    fields = _field(task, "prompt_fields") or {}
    details: dict[str, str] = {"answer_kind": kind}
    if isinstance(fields, Mapping) and fields.get("answer_type"):
        details["answer_type"] = fields["answer_type"]
    sympy_kind = kind == "sympy"
    text, refused, status = extract(response, sympy=sympy_kind)
    if text is None:
        return Score(False, status, None, None, details)
    extracted = text[:EXTRACTED_CHARS]
    if refused:
        return Score(False, OK, extracted, None, {**details, "refused": refused})
    if sympy_kind:
        return _grade_sympy(text, oracle, extracted, details)
    try:
        want = parse_answer(oracle)
    except Refused as exc:
        return Score(False, OK, extracted, None, {**details, "error": f"oracle: {exc}"})
    try:
        got = parse_answer(text)
    except Refused as exc:
        return Score(False, OK, extracted, None, {**details, "refused": str(exc)})
    provenance = _field(task, "provenance") or {}
    aliases = alias_index(provenance.get("answer_aliases")) if isinstance(provenance, Mapping) else {}
    spellings = provenance.get("answer_spellings") if isinstance(provenance, Mapping) else None
    if isinstance(spellings, list) and spellings:
        got, want = respelled(got, spellings), respelled(want, spellings)
    if same(got, want, aliases):
        return Score(True, OK, extracted, None, details)
    return _judged_by_execution(task, text, got, want, extracted, details)


def _judged_by_execution(task: Any, text: str, got: tuple, want: tuple, extracted: str,
                         details: dict[str, str]) -> Score:
    """A wrong literal verdict on an answer or key that is not a plain literal (a constructor,
    a name): the assertion decides, run in the package's environment in the sandbox
    (:mod:`.exec_grade`); when execution cannot decide, the literal verdict stands, flagged in
    ``details["execution"]``."""
    from execbench.families.repo.grading import exec_grade

    if not (exec_grade.non_literal(got) or exec_grade.non_literal(want)):
        return Score(False, OK, extracted, None, details)
    try:
        tree = bounded_parse(text.strip())
    except (Refused, _NotExpression):  # only a class repr the literal rules repaired: nothing to run
        return Score(False, OK, extracted, None, {**details, "execution": "refused"})
    verdict, how, why = exec_grade.judge(task, text, tree)
    details = {**details, "execution": how, **({"execution_detail": why} if why else {})}
    return Score(bool(verdict), OK, extracted, None, details)


def respelled(c: tuple, rules: list) -> tuple:
    """A constructor's canonical form with the argument respellings the builder verified for
    the task's type (``provenance.answer_spellings``, :func:`build.spelling_variants`):
    ``iterable_argument`` makes a single list or tuple argument a list; ``keyword_dict`` makes
    keyword arguments (and no positional one) one dict argument. Other forms are unchanged."""
    if not c or c[0] != "call":
        return c
    _, parts, args, kwargs = c
    if "keyword_dict" in rules and not args and kwargs:
        args, kwargs = (_dict([(("str", k), v) for k, v in kwargs]),), ()
    if "iterable_argument" in rules and len(args) == 1 and not kwargs and args[0][0] in ("list", "tuple"):
        args = (("list", args[0][1]),)
    return ("call", parts, tuple(args), tuple(kwargs))


def _grade_sympy(text: str, oracle: str, extracted: str, details: dict[str, str]) -> Score:
    from execbench.families.repo.grading import sympy_parse

    try:
        sympy_parse.parse_sympy(oracle)
    except sympy_parse.SympyParseError as exc:
        return Score(False, OK, extracted, None, {**details, "error": f"oracle: {exc}"})
    try:
        correct, how = sympy_parse.equivalent(text, oracle)
    except sympy_parse.SympyParseError as exc:
        return Score(False, OK, extracted, None, {**details, "refused": str(exc)})
    status = GRADING_TIMEOUT if how == GRADING_TIMEOUT else OK
    return Score(correct and status == OK, status, extracted, None, {**details, "how": how})
