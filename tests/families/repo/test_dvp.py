"""Deterministic Value Protocol: every rule of both funnels (RepoReason appendix E)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from execbench.families.repo.records.steps import Item, Module
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp
from execbench.families.repo.verification.answers import _answer_candidates


def _function(body: str, params: str = "", decorators: str = "") -> A.TestFunction:
    source = decorators + f"def test_x({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    (function,) = A.test_functions(source).values()
    return function


def _choose(line: str, setup: str = "", sympy: bool = False):
    function = _function(setup + line + "\n")
    assertion = function.assertions[-1]
    return dvp.choose(assertion, function, sympy=sympy)


@pytest.mark.parametrize("line, op", [
    ("assert f(x) > 3", ">"), ("assert f(x) < 3", "<"), ("assert f(x) >= 3", ">="),
    ("assert f(x) <= 3", "<="), ("assert f(x) != 3", "!="), ("assert f(x) is not None", "is not"),
    ("assert 3 in f(x)", "in"), ("assert 3 not in f(x)", "not in"),
    ("self.assertNotEqual(f(x), 3)", "!="), ("self.assertGreater(f(x), 3)", ">"),
    ("self.assertIn(3, f(x))", "in"), ("self.assertCountEqual(f(x), [1, 2])", "count-equal"),
    ("self.assertIsInstance(f(x), int)", "isinstance"), ("self.assertRegex(f(x), 'a+')", "regex"),
])
def test_multi_solution_operators(line, op):
    assert _choose(line) == dvp.DvpRejection(dvp.SEMANTIC, f"multi_solution_operator:{op}")


@pytest.mark.parametrize("line, name", [
    ("assert f(x) == pytest.approx(0.3)", "approx"),
    ("self.assertAlmostEqual(f(x), 0.3)", "assertAlmostEqual"),
    ("assert math.isclose(f(x), 0.3)", "isclose"),
    ("assert np.allclose(f(x), 0.3)", "allclose"),
])
def test_approximate_comparisons(line, name):
    result = _choose(line)
    assert result.stage == dvp.SEMANTIC and result.reason == f"approximate_comparison:{name}"


@pytest.mark.parametrize("line, reason", [
    ("assert f(x)", "no_expected_operand"),
    ("assert not f(x)", "no_expected_operand"),
    ("self.assertTrue(f(x))", "no_expected_operand:assertTrue"),
    ("self.assertIsNone(f(x))", "no_expected_operand:assertIsNone"),
    ("assert 1 < f(x) < 3", "chained_comparison"),
    ("assert f(x) == 1 and g(x) == 2", "boolean_combination"),
    ("assert f(x) == f(x)", "reflexive_form"),
    ("assert a == b", "reflexive_variable_form"),
    ("assert 1 == 1.0", "constant_assertion"),
])
def test_semantic_static_rules(line, reason):
    setup = "a = f(1)\nb = f(2)\n"
    assert _choose(line, setup) == dvp.DvpRejection(dvp.SEMANTIC, reason)


@pytest.mark.parametrize("source, token", [
    ("x = random.choice(s)\nassert f(x) == 1\n", "random"),
    ("r = Random(4)\nassert f(r) == 1\n", "random"),
    ("u = uuid.uuid4()\nassert f(u) == 1\n", "uuid"),
    ("t = time.time()\nassert f(t) == 1\n", "time.time"),
    ("t = datetime.now()\nassert f(t) == 1\n", "datetime.now"),
    ("t = date.today()\nassert f(t) == 1\n", "date.today"),
    ("assert f(id(x)) == 1\n", "id()"),
])
def test_nondeterministic_tokens(source, token):
    function = _function(source)
    text = A.segment("def test_x():\n" + textwrap.indent(source, "    "), function.span)
    assert dvp.nondeterministic_token(text, function) == token


def test_nondeterministic_ignores_strings_and_comments_and_flags_hypothesis():
    source = "assert f('random uuid') == 1  # time.time()\n"
    function = _function(source)
    assert dvp.nondeterministic_token("def test_x():\n    " + source, function) is None
    given = _function("assert f(x) == 1\n", "x", decorators="@given(st.integers())\n")
    assert dvp.nondeterministic_token("", given) == "hypothesis.given"


@pytest.mark.parametrize("expr, priority, form", [
    ("3", 1, "literal"), ("-2.5", 1, "literal"), ("'s'", 1, "literal"), ("True", 1, "literal"),
    ("None", 1, "literal"), ("[1, (2, 'a')]", 1, "literal"), ("{'a': {1, 2}}", 1, "literal"),
    ("set()", 1, "literal"), ("frozenset()", 1, "literal"), ("1+2j", 1, "literal"),
    ("MAXSIZE", 2, "global_constant"),
    ("S.NaN", 3, "attribute"), ("Color.RED.value", 3, "attribute"),
    ("URL('http://a')", 4, "constructor"), ("frozenset([1, 2])", 4, "constructor"),
    ("Point(x=1, y=2)", 4, "constructor"),
])
def test_morphology_accepted_forms(expr, priority, form):
    node = A.ast.parse(expr, mode="eval").body
    assert dvp.classify(node, {"cache", "result"}) == dvp.Form(priority, form)


@pytest.mark.parametrize("expr, form", [
    ("result", "pure_variable_reference"),
    ("compute(3)", "dynamic_call"),
    ("cache.get(1)", "dynamic_call"),
    ("Point(x, 2)", "dynamic_call"),
    ("set(cache)", "type_cast_with_variable_args"),
    ("f(*args)", "unpack_operator"),
    ("[*result]", "unpack_operator"),
    ("result[0]", "subscript_expression"),
    ("cache.maxsize", "dynamic_attribute"),
    ("2 ** 10", "complex_expression"),
    ("[result, 1]", "container_with_variables"),
])
def test_morphology_rejected_forms(expr, form):
    node = A.ast.parse(expr, mode="eval").body
    assert dvp.classify(node, {"cache", "result", "x", "args"}) == dvp.Form(0, form)


def test_sympy_expressions_only_for_sympy():
    node = A.ast.parse("Rational(33, 2) - Rational(11, 2)*sqrt(3)", mode="eval").body
    assert dvp.classify(node, set(), sympy=True) == dvp.Form(5, "sympy_expression")
    assert dvp.classify(node, set(), sympy=False).priority == 0
    method = A.ast.parse("expr.subs(x, 2)", mode="eval").body
    assert dvp.classify(method, {"expr"}, sympy=True) == dvp.Form(0, "dynamic_call")


def test_mask_choice_prefers_the_better_form_and_the_right_side_on_ties():
    assert _choose("self.assertEqual(2, len(cache))", "cache = C()\n") == dvp.Choice(0, dvp.Form(1, "literal"), False)
    assert _choose("assert len(cache) == 2", "cache = C()\n") == dvp.Choice(1, dvp.Form(1, "literal"), False)
    assert _choose("assert S.NaN == 2") == dvp.Choice(1, dvp.Form(1, "literal"), False)
    assert _choose("assert f(x) is S.true").masked == 1


def test_variables_are_resolved_by_execution():
    choice = _choose("assert result == expected", "result = f(1)\nexpected = g(2)\n")
    assert choice == dvp.Choice(1, dvp.Form(0, "pure_variable_reference"), True)
    choice = _choose("assert expected == f(2)", "expected = g(2)\n")
    assert choice.variable and choice.masked == 0
    assert _choose("assert f(1) == g(2)") == dvp.DvpRejection(dvp.MORPHOLOGY, "dynamic_call")


def test_memory_addresses():
    assert dvp.memory_address("'<minilib.Thing object at 0x7f3a2b1c0d90>'")
    assert dvp.memory_address("'0x7f3a2b1c0d90'")
    assert not dvp.memory_address("'0xff'")
    assert not dvp.memory_address("[1, 2]")


def _item(line: str, setup: str = "") -> Item:
    function = _function(setup + line + "\n")
    assertion = function.assertions[-1]
    source = "def test_x():\n" + textwrap.indent(setup + line + "\n", "    ")
    module = Module("t.py", None, source, {})  # type: ignore[arg-type] - a module without a path is enough here
    return Item("k", module, function, assertion, dvp.choose(assertion, function))


def test_runtime_candidates_and_runtime_rejections():
    item = _item("assert len(c) == 2", "c = C()\n")
    runs = [{"0": {"type": "int", "literal": "2"}, "1": {"type": "int", "literal": "2"}}]
    cands, why = _answer_candidates(item, runs, False)
    assert why is None and [c["text"] for c in cands] == ["2"]
    # A value that changes across executions of the assertion.
    runs2 = runs + [{"0": {"type": "int", "literal": "3"}, "1": {"type": "int", "literal": "3"}}]
    assert _answer_candidates(item, runs2, False)[1] == (dvp.SEMANTIC, "multiple_values: 2 executions disagree")
    # Memory addresses in every candidate.
    var = _item("assert f(c) == text", "c = C()\ntext = g()\n")
    addr = [{"0": {"type": "str", "literal": "'<T object at 0x7f00aa11bb22>'"},
             "1": {"type": "str", "literal": "'<T object at 0x7f00aa11bb22>'"}}]
    assert _answer_candidates(var, addr, False)[1] == (dvp.SEMANTIC, "memory_address")
    # A variable without a literal form.
    obj = [{"0": {"type": "m.T"}, "1": {"type": "m.T"}}]
    assert _answer_candidates(var, obj, False)[1] == (dvp.MORPHOLOGY, "pure_variable_reference: no literal form for m.T")
    # A constructor text is kept (to be verified) when the value has no literal form.
    ctor = _item("assert f(c) == URL('http://a')", "c = C()\n")
    cands, why = _answer_candidates(ctor, [{"0": {"type": "yarl.URL"}, "1": {"type": "yarl.URL"}}], False)
    assert why is None and [(c["text"], c["kind"]) for c in cands] == [("URL('http://a')", "text")]


def test_identity_assertions_only_take_singleton_literals():
    item = _item("assert t.kind is KIND", "t = T()\n")
    runs = [{"0": {"type": "str", "literal": "'block'"}, "1": {"type": "str", "literal": "'block'"}}]
    cands, why = _answer_candidates(item, runs, False)
    assert why is None and [c["text"] for c in cands] == ["KIND"]
    none = _item("assert f(t) is None", "t = T()\n")
    runs = [{"0": {"type": "NoneType", "literal": "None"}, "1": {"type": "NoneType", "literal": "None"}}]
    assert [c["text"] for c in _answer_candidates(none, runs, False)[0]] == ["None"]


def test_the_builtin_id_as_a_value_is_nondeterministic():
    """toolz: curry(EqualityHashKey, id) hashes by address; the stored trace differed between builds."""
    from execbench.families.repo.selection import assertions as A
    from execbench.families.repo.selection.dvp import nondeterministic_token

    source = "def test_k():\n    key = curry(EqualityHashKey, id)\n    assert list(unique(d, key=key)) == d\n"
    fn = next(iter(A.test_functions(source).values()))
    assert nondeterministic_token(source, fn) == "id"
    shadowed = "def test_k(id):\n    assert f(id) == 1\n"
    fn = next(iter(A.test_functions(shadowed).values()))
    assert nondeterministic_token(shadowed, fn) is None


SET_PARAMETRIZED = '''
import pytest

CASES = {(4, "19", None), (4, "1985", 1985)}
LISTED = [(4, "19", None)]
REBOUND = {1, 2}
REBOUND = sorted(REBOUND)


@pytest.mark.parametrize("a, b, c", CASES)
def test_named(a, b, c):
    assert f(a, b) == c


@pytest.mark.parametrize("a", argvalues=frozenset({1, 2}))
def test_keyword(a):
    assert f(a) == 1


@pytest.mark.parametrize("a", {x for x in "ab"})
class TestClass:
    def test_method(self, a):
        assert f(a) == 1


@pytest.mark.parametrize("a, b, c", LISTED)
def test_listed(a, b, c):
    assert f(a, b) == c


@pytest.mark.parametrize("a", REBOUND)
def test_rebound(a):
    assert f(a) == 1
'''


def test_a_parametrization_over_a_set_is_nondeterministic():
    """Issue 35 (rebuild determinism): the order, and pytest's positional ids, of a set's
    instances follow hashes, including hash(None) (an address in Python 3.11): isodate's
    TEST_CASES. A list, or a set sorted into a list, is not flagged."""
    tree = ast.parse(SET_PARAMETRIZED)
    sets = dvp.set_bound_names(tree)
    assert sets == {"CASES"}
    tokens = {f.qualname: dvp.nondeterministic_token(A.segment(SET_PARAMETRIZED, f.span), f, sets)
              for f in A.test_functions(SET_PARAMETRIZED).values()}
    assert tokens == {"test_named": "parametrize_over_set", "test_keyword": "parametrize_over_set",
                      "TestClass.test_method": "parametrize_over_set", "test_listed": None, "test_rebound": None}
