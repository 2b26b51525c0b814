"""The Deterministic Value Protocol (RepoReason §3.5, appendix E): two programmatic funnels.

Funnel 1, semantic determinism (stage ``dvp-semantic``) rejects
  * tests with run-time-dependent signals (``random``, ``uuid``, ``time.time``,
    ``datetime.now``, ``date.today``, ... and hypothesis ``@given``; a ``parametrize`` over a
    set, whose instances' order and ids follow hashes): ``nondeterministic_in_test:<token>``,
    decided before the run's outcome is read (the build's ``_nondeterministic_function``);
  * multi-solution operators ``> < >= <= != is not in not in`` (and their unittest forms,
    ``assertCountEqual``, ``assertIsInstance``, ``assertRegex``): ``multi_solution_operator:<op>``;
  * assertions with no expected operand (``assert x``, ``assertTrue``, ``assertIsNone``...),
    chained and boolean combinations: ``no_expected_operand``, ``chained_comparison``,
    ``boolean_combination``;
  * reflexive forms: the same expression on both sides, or two plain variables neither of
    which is a descriptive expectation (``x == y``): ``reflexive_form``,
    ``reflexive_variable_form``; two literals: ``constant_assertion``;
  * approximate comparisons (``pytest.approx``, ``assertAlmostEqual``, ``assert_allclose``,
    ``allclose``, ``isclose``): ``approximate_comparison:<name>``;
  * at run time: memory addresses in the answer (``<... at 0x..>``, ``0x[0-9a-f]+``):
    ``memory_address``; a value that differs between executions of the assertion or
    between runs with different hash seeds: ``multiple_values`` / ``unstable_value``.

Funnel 2, morphological determinism (stage ``dvp-morphology``) classifies the expected
operand: priority 1 literals (and empty ``set() list() dict() tuple() frozenset()``),
2 global constants (UPPER_CASE names not bound in the test), 3 stable attribute access on a
non-local base (``S.NaN``), 4 constructors ``ClassName(...)`` with literal arguments,
5 (sympy only) symbolic expressions. Rejected: ``dynamic_call``, ``type_cast_with_variable_args``,
``unpack_operator``, ``subscript_expression``, ``complex_expression``, and
``pure_variable_reference`` when execution gives the variable no literal form (a plain
variable on the expected side is resolved by execution, RepoReason's variable resolver).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Collection

from execbench.families.repo.selection.assertions import Assertion, TestFunction

SEMANTIC = "dvp-semantic"
MORPHOLOGY = "dvp-morphology"

MULTI_SOLUTION = {"!=", ">", "<", ">=", "<=", "is not", "in", "not in", "count-equal", "isinstance",
                  "not isinstance", "regex", "subset"}
APPROXIMATE = {"approx", "isclose", "allclose", "assert_allclose", "assert_almost_equal",
               "assert_approx_equal", "assertAlmostEqual", "assertAlmostEquals", "assertNotAlmostEqual",
               "assert_array_almost_equal"}
# Tokens of run-time-dependent signals (E.3 (2)); checked on the test function's source.
NONDETERMINISTIC = [
    ("random", re.compile(r"\brandom\b|\bRandom\(|\brandint\b|\bshuffle\(")),
    ("uuid", re.compile(r"\buuid\d?\b")),
    ("time.time", re.compile(r"\btime\.(time|time_ns|monotonic|perf_counter|process_time)\b")),
    ("datetime.now", re.compile(r"\b(datetime\.)?(now|utcnow)\(")),
    ("date.today", re.compile(r"\btoday\(")),
    ("os.urandom", re.compile(r"\burandom\b|\bsecrets\.")),
    ("id()", re.compile(r"(?<![\w.])id\(")),
]
MEMORY_ADDRESS = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>|0x[0-9a-fA-F]{6,}")
DESCRIPTIVE = re.compile(r"^(expected|expect|exp|want|wanted|correct|answer|ans|truth|target|known|ref|"
                         r"reference|sol|solution|res_expected)(_?\w*)$|_expected$|^expected", re.I)
_BUILTIN_TYPES = {"set", "frozenset", "list", "dict", "tuple", "int", "float", "str", "bytes", "complex",
                  "bool", "bytearray", "range"}
_EMPTY_OK = {"set", "frozenset", "list", "dict", "tuple"}


@dataclass(frozen=True)
class DvpRejection:
    """Why the DVP funnels refuse an assertion statically (a value, not the build's
    :class:`execbench.contract.plugin.Reject` exception): the rejection stage and reason."""

    stage: str  # SEMANTIC | MORPHOLOGY
    reason: str


@dataclass(frozen=True)
class Form:
    priority: int  # 1..5, 0 = rejected
    name: str  # "literal", "global_constant", "attribute", "constructor", "sympy_expression", or a reject reason


@dataclass(frozen=True)
class Choice:
    """Which operand is masked (the expected value) and how its text was classified."""

    masked: int  # index into assertion.operands
    form: Form  # of the masked operand text; priority 0 + "variable" = resolve by execution
    variable: bool  # a plain variable, resolved to its runtime value

    @property
    def actual(self) -> int:
        return 1 - self.masked


SET_PARAMETRIZE = "parametrize_over_set"


def set_bound_names(tree: ast.Module) -> set[str]:
    """Module-level names whose last binding is a set (a display, a comprehension, ``set(...)`` /
    ``frozenset(...)``): isodate's ``TEST_CASES = {(4, "19", date(1901, 1, 1), ...), ...}``."""
    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    (out.add if _a_set(stmt.value) else out.discard)(t.id)
    return out


def _a_set(node: ast.AST) -> bool:
    return isinstance(node, (ast.Set, ast.SetComp)) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset"))


def parametrized_over_set(function: TestFunction, sets: Collection[str] = ()) -> bool:
    """A ``parametrize`` of the function or its class takes its values from a set (``sets``: the
    module's names bound to one): the instances' order, and the ids pytest numbers by position
    (``expected8``), follow set iteration order, i.e. the hash seed and, for ``None`` (Python
    3.11) and objects hashed by address, the process's memory layout. The verify runs (other
    hash seeds) cannot find such an instance, and two builds name them differently."""
    decorators = list(function.node.decorator_list)
    if function.class_node is not None:
        decorators += function.class_node.decorator_list
    for d in decorators:
        for n in ast.walk(d):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "parametrize"):
                continue
            values = n.args[1] if len(n.args) > 1 else next((k.value for k in n.keywords if k.arg == "argvalues"), None)
            if values is not None and (_a_set(values) or isinstance(values, ast.Name) and values.id in sets):
                return True
    return False


def nondeterministic_token(function_source: str, function: TestFunction | None = None,
                           sets: Collection[str] = ()) -> str | None:
    """What makes the test nondeterministic by its text (module doc), or None. ``sets``: the
    module's names bound to a set (:func:`set_bound_names`)."""
    if function is not None and parametrized_over_set(function, sets):
        return SET_PARAMETRIZE
    if function is not None:
        for deco in function.node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            if (isinstance(target, ast.Name) and target.id == "given") or (
                    isinstance(target, ast.Attribute) and target.attr == "given"):
                return "hypothesis.given"
    code = _strip_strings_and_comments(function_source)
    for token, pattern in NONDETERMINISTIC:
        if pattern.search(code):
            return token
    # the builtin id as a value (curry(EqualityHashKey, id), key=id): hashes and orders follow
    # object addresses, so the traced control flow differs between runs (toolz test_core.py)
    if function is not None and "id" not in function.local_names and any(
            isinstance(n, ast.Name) and n.id == "id" and isinstance(n.ctx, ast.Load) for n in ast.walk(function.node)):
        return "id"
    return None


def _strip_strings_and_comments(source: str) -> str:
    import io
    import tokenize

    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.STRING, tokenize.COMMENT):
                out.append(" ")
            elif tok.type == tokenize.NAME or tok.type == tokenize.OP or tok.type == tokenize.NUMBER:
                out.append(tok.string)
            elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                out.append("\n")
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    # Re-join with no spaces around dots/parentheses so the patterns match ``time.time``.
    text = ""
    for part in out:
        if text and part not in ".()" and not text.endswith((".", "(", "\n")):
            text += " "
        text += part
    return text


def _names(node: ast.AST) -> set[str]:
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
    return found


def _attribute_base(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float, complex))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):  # complex literals 1+2j
        return (_is_literal(node.left) and isinstance(node.right, ast.Constant)
                and isinstance(node.right.value, complex))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(_is_literal(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _EMPTY_OK:
        return not node.args and not node.keywords
    return False


def _has_unpack(node: ast.expr) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Starred) or (isinstance(sub, ast.keyword) and sub.arg is None):
            return True
        if isinstance(sub, ast.Dict) and any(k is None for k in sub.keys):
            return True
    return False


def _sympy_expression(node: ast.expr, local: set[str]) -> bool:
    """Built from literals, names, calls of plain/attribute names and arithmetic; no
    method calls on test-local objects, no subscripts, no comprehensions."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Subscript, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                            ast.GeneratorExp, ast.IfExp, ast.NamedExpr, ast.Await, ast.JoinedStr)):
            return False
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute):
                base = _attribute_base(func)
                if not isinstance(base, ast.Name) or base.id in local:
                    return False
            elif not isinstance(func, ast.Name):
                return False
    return True


def classify(node: ast.expr, local: set[str], *, sympy: bool = False) -> Form:
    """Funnel 2: the morphological priority of an expected-operand text."""
    if _has_unpack(node):
        return Form(0, "unpack_operator")
    if _is_literal(node):
        return Form(1, "literal")
    if isinstance(node, ast.Name):
        if node.id not in local and re.fullmatch(r"_?[A-Z][A-Z0-9_]*", node.id) and len(node.id) > 1:
            return Form(2, "global_constant")
        return Form(0, "pure_variable_reference")
    if isinstance(node, ast.Attribute):
        base = _attribute_base(node)
        if isinstance(base, ast.Name) and base.id not in local:
            return Form(3, "attribute")
        return Form(0, "dynamic_attribute")
    if isinstance(node, ast.Call):
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        base = _attribute_base(func)
        args_literal = all(_is_literal(a) for a in node.args) and all(_is_literal(k.value) for k in node.keywords)
        non_local = isinstance(base, ast.Name) and base.id not in local
        if callee in _BUILTIN_TYPES and isinstance(func, ast.Name):
            return Form(4, "constructor") if args_literal else (
                Form(5, "sympy_expression") if sympy and _sympy_expression(node, local) else
                Form(0, "type_cast_with_variable_args"))
        if non_local and callee[:1].isupper() and args_literal:
            return Form(4, "constructor")
        if sympy and _sympy_expression(node, local):
            return Form(5, "sympy_expression")
        return Form(0, "dynamic_call")
    if isinstance(node, ast.Subscript):
        return Form(0, "subscript_expression")
    if sympy and _sympy_expression(node, local):
        return Form(5, "sympy_expression")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return Form(0, "container_with_variables")
    return Form(0, "complex_expression")


def choose(assertion: Assertion, function: TestFunction, *, sympy: bool = False) -> Choice | DvpRejection:
    """Static funnels for one assertion: which operand to mask, or why none can be."""
    op = assertion.op
    if op in MULTI_SOLUTION:
        return DvpRejection(SEMANTIC, f"multi_solution_operator:{op}")
    if op == "approx":
        return DvpRejection(SEMANTIC, f"approximate_comparison:{assertion.method}")
    names = set().union(*(_names(o) for o in assertion.operands)) if assertion.operands else set()
    if assertion.kind == "assert" and assertion.node is not None:
        names |= _names(assertion.node.test)  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
    approx = sorted(names & APPROXIMATE)
    if approx:
        return DvpRejection(SEMANTIC, f"approximate_comparison:{approx[0]}")
    if op in ("truthy", "unary"):
        return DvpRejection(SEMANTIC, "no_expected_operand" + (f":{assertion.method}" if assertion.method else ""))
    if op == "chained":
        return DvpRejection(SEMANTIC, "chained_comparison")
    if op == "boolean":
        return DvpRejection(SEMANTIC, "boolean_combination")
    if op not in ("==", "is") or len(assertion.operands) != 2:
        return DvpRejection(SEMANTIC, f"unsupported_assertion:{op}")
    left, right = assertion.operands
    if ast.dump(left) == ast.dump(right):
        return DvpRejection(SEMANTIC, "reflexive_form")
    local = function.local_names
    forms = [classify(left, local, sympy=sympy), classify(right, local, sympy=sympy)]
    ok = [f.priority > 0 for f in forms]
    if all(ok):
        if forms[0].priority == 1 and forms[1].priority == 1:
            return DvpRejection(SEMANTIC, "constant_assertion")
        masked = 0 if forms[0].priority < forms[1].priority else 1
        return Choice(masked, forms[masked], False)
    if ok[1]:
        return Choice(1, forms[1], False)
    if ok[0]:
        return Choice(0, forms[0], False)
    plain = [isinstance(o, ast.Name) for o in (left, right)]
    if all(plain):
        descriptive = [bool(DESCRIPTIVE.search(o.id)) for o in (left, right)]  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
        if descriptive.count(True) == 1:
            masked = descriptive.index(True)
            return Choice(masked, forms[masked], True)
        return DvpRejection(SEMANTIC, "reflexive_variable_form")
    if plain[1]:
        return Choice(1, forms[1], True)
    if plain[0]:
        return Choice(0, forms[0], True)
    return DvpRejection(MORPHOLOGY, forms[1].name)


def memory_address(text: str) -> bool:
    return bool(MEMORY_ADDRESS.search(text))
