"""The leak gate (families/repo/fairness/leaks.py) and the test-file context (families/repo/fairness/context.py):
no sandbox, on test texts shaped like the cases of issue 23."""

from __future__ import annotations

import json

from execbench.families.repo.fairness import context, difficulty, leaks
from execbench.families.repo.fairness import masking
from execbench.families.repo.selection import assertions as A

SOURCE = '''
import pytest
from lib import hist, split_at, Car, f

NORM_DATA = [0.5, 1.5, 2.5]
EXPECTED_HIST = {'a': 3}


def _helper(x):
    return f(x) + OFFSET

OFFSET = 7


class TestSplit(unittest.TestCase):
    def setUp(self):
        self.car = Car()

    def test_split(self):
        actual = list(split_at('ooxoo', lambda c: c == 'x'))
        expected = [['o', 'o'], ['o', 'o']]
        other = [['o', 'o'], ['o', 'o']]
        self.assertEqual(actual, expected)

    def test_range(self):
        result = f(10)
        self.assertEqual(result, list(range(10)))

    def test_car(self):
        self.assertEqual(self.car.hand_count, 0)


@pytest.mark.parametrize("n, expected", [(5, 83160), (2, 2)])
def test_param(n, expected):
    assert f(n) == expected


def test_comment():
    # Case M(11; 5, 2, 1, 1, 2) = 83160
    assert f(11) == 83160


def test_hist():
    assert hist(NORM_DATA) == EXPECTED_HIST


def test_round_trip():
    data = 'hello world'
    assert f(data) == 'hello world'


def test_helper():
    assert _helper(3) == 12
'''


def _fn(name):
    return next(f for f in A.test_functions(SOURCE).values() if f.qualname.endswith(name))


def _visible(name, answer, masked=1, params="{}", hidden=()):
    fn = _fn(name)
    a = fn.assertions[0]
    defs = context.needed_definitions(SOURCE, fn)
    inputs = masking._inputs(fn, a.operands[1 - masked])
    for d in defs:
        if d.kind != "constant":
            inputs |= {n.id for n in __import__("ast").walk(d.node) if hasattr(n, "id")}
    shown = A.mask_text(SOURCE, fn, (a, masked), list(hidden))
    return leaks.answer_visible(function=fn, source=SOURCE, masked=a.operands[masked], actual=a.operands[1 - masked],
                                answer=answer, inputs=inputs, hidden=list(hidden), input_parameters=params,
                                shown_texts=[shown, context.render(SOURCE, defs)],
                                context_nodes=[(d.name, d.node) for d in defs if d.kind == "constant"])


def test_parametrize_column_of_the_expected_value_is_a_leak():
    assert _visible("test_param", "83160", params=json.dumps({"n": "5", "expected": "83160"})) == \
        "answer_visible: parametrize"


def test_comment_stating_the_value_is_a_leak():
    # the literal 83160 itself is the masked operand: the comment above still shows it
    assert _visible("test_comment", "83160") == "answer_visible: comment"


def test_visible_expression_without_the_code_under_test_is_a_leak():
    # self.assertEqual(___, list(range(10))): the shown side is the answer
    assert _visible("test_range", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", masked=0) == "answer_visible: expression"


def test_a_definition_that_only_feeds_assertions_is_a_leak():
    fn = _fn("test_split")
    hidden = [A.Span.of(v) for v, _ in [(n.value, None) for n in __import__("ast").walk(fn.node)
                                         if getattr(n, "targets", None) and n.targets[0].id == "expected"]]
    assert _visible("test_split", "[['o', 'o'], ['o', 'o']]", hidden=hidden) == "answer_visible: definition"


def test_context_constant_that_only_feeds_assertions_is_a_leak_and_an_input_is_not():
    assert _visible("test_hist", "{'a': 3}") == "answer_visible: context"
    assert leaks.in_comments("'hello world'", ["x = 1  # nothing here"]) is False
    assert _visible("test_round_trip", "'hello world'") is None  # equal to a genuine input: fair


def test_short_answers_are_not_searched_in_comments():
    assert leaks.in_comments("0", ["# 0 and 1 everywhere"]) is False
    assert leaks.in_comments("True", ["# True"]) is False
    assert leaks.in_comments("12", ["# gives 12 here"]) is True
    assert leaks.in_comments("[1, 2]", ["# -> [1,2]"]) is True


def test_context_carries_module_helpers_constants_and_setup():
    helper = [d.name for d in context.needed_definitions(SOURCE, _fn("test_helper"))]
    assert helper == ["_helper", "OFFSET"]  # transitive: the helper reads OFFSET
    assert [d.name for d in context.needed_definitions(SOURCE, _fn("test_hist"))] == ["NORM_DATA", "EXPECTED_HIST"]
    car = context.needed_definitions(SOURCE, _fn("TestSplit.test_car"))
    assert [(d.name, d.kind) for d in car] == [("TestSplit.setUp", "setup")]
    rendered = context.render(SOURCE, car)
    assert rendered.startswith("# TestSplit:\ndef setUp(self):") and "self.car = Car()" in rendered
    assert context.tokens("x" * 9) == 3


def test_difficulty_is_scored_over_the_assertions_own_slice():
    calls = [{"id": 0, "file": "tests/test_car.py", "func": "test_car", "firstlineno": 1, "depth": 0},
             {"id": 1, "file": "lib/car.py", "func": "Car.__init__", "firstlineno": 3, "depth": 1},
             {"id": 2, "file": "lib/car.py", "func": "Car.drive", "firstlineno": 9, "depth": 1},
             {"id": 3, "file": "lib/engine.py", "func": "Engine.run", "firstlineno": 2, "depth": 2}]
    trivial = {"relevant_calls": [0, 1], "relevant_lines": {"tests/test_car.py": [2, 3], "lib/car.py": [4]}}
    score, library_lines, deeper = difficulty.assertion_difficulty(trivial, calls, {"tests/test_car.py"})
    assert (library_lines, deeper) == (1, False)  # car.hand_count right after Car(): one line of __init__
    assert abs(score - ((2 / 4) * 0.1 + (2 / 15) * 0.2 + (2 / 30) * 0.5 + (1 / 4) * 0.2)) < 1e-9
    busy = {"relevant_calls": [0, 2, 3], "relevant_lines": {"tests/test_car.py": [5], "lib/car.py": [10, 11],
                                                            "lib/engine.py": [3, 4, 5]}}
    score2, library_lines2, deeper2 = difficulty.assertion_difficulty(busy, calls, {"tests/test_car.py"})
    assert (library_lines2, deeper2) == (5, True) and score2 > score


NESTED = '''
from unittest import TestCase


class Tests(TestCase):
    def test_x(self):
        assert f(1) == 2

    def test_local_class(self):
        class TestCase:
            junk: int
        assert TestCase
'''


def test_a_class_nested_in_a_test_is_not_a_base_class():
    """more-itertools: a TestCase class defined inside one test was taken for the base of every test class."""
    fn = next(f for f in A.test_functions(NESTED).values() if f.qualname == "Tests.test_x")
    assert context.needed_definitions(NESTED, fn) == []


MUTATED = '''
def test_memory(self):
    gen_numbers = []
    def gen():
        for i in range(9):
            gen_numbers.append(i)
            yield i
    chunks = mi.ichunked(gen(), 4)
    nums = [1, 2, 3]
    n = random_product(nums)
    self.assertEqual(len(gen_numbers), 9)
    self.assertEqual(n, set(nums))
'''


def test_names_the_code_under_test_can_change_are_not_static():
    """more-itertools: len(gen_numbers) after the library consumed a generator is a real question."""
    fn = next(iter(A.test_functions(MUTATED).values()))
    assert leaks.static_names(fn) == set()
    for a in fn.assertions:
        assert not leaks.readable_expression(a.operands[0], leaks.static_names(fn), fn.local_names)


def test_trivial_needs_a_plain_read_of_plain_lines():
    parse = lambda text: __import__("ast").parse(text, mode="eval").body  # noqa: E731 - a one-line helper
    assert difficulty.plain_read(parse("car.hand_count")) and difficulty.plain_read(parse("len(FrozenDict())"))
    assert not difficulty.plain_read(parse("mi.ilen(filter(f, range(101)))"))
    sources = {"lib/car.py": "class Car:\n    def __init__(self):\n        self.hand_count = 0\n",
               "lib/it.py": "def ilen(it):\n    return sum(compress(repeat(1), zip(it)))\n"}
    assert difficulty.plain_lines({"relevant_lines": {"lib/car.py": [2, 3]}}, sources, set())
    assert not difficulty.plain_lines({"relevant_lines": {"lib/it.py": [2]}}, sources, set())


HISTOGRAM = '''
NORM_DATA = [12.975, 8.341]


def test_norm_regression():
    stats = Stats(NORM_DATA)
    assert stats.format_histogram(width=80) == NORM_DATA_FREEDMAN_OUTPUT


NORM_DATA_FREEDMAN_OUTPUT = """ 3.7:  5 ####"""
'''


def test_the_masked_constant_is_not_carried_as_context():
    """boltons: the expected histogram is a module constant; carrying it would show the answer."""
    fn = next(iter(A.test_functions(HISTOGRAM).values()))
    (a,) = fn.assertions
    assert [d.name for d in context.needed_definitions(HISTOGRAM, fn)] == ["NORM_DATA", "NORM_DATA_FREEDMAN_OUTPUT"]
    assert [d.name for d in context.needed_definitions(HISTOGRAM, fn, [A.Span.of(a.operands[1])])] == ["NORM_DATA"]


CAR = '''
def test_cachedmethod():
    car = Car()
    assert car.hand_count == 0
    car.hand('h')
    assert car.hand_count == 1
    fd = FrozenDict({'a': 1})
    fd.x = 3
    assert fd.x == 3
    assert len(FrozenDict()) == 0
    assert car.hand_count == 1
    for i in range(3):
        car.hand(i)
    assert car.hand_count == 4
    prop = PropTest()
    assert prop.useful_attr == 1
    lru = LRU()
    assert lru.popitem() == 1
    omd = OMD([(1, 2)])
    assert len(omd) == 1
    wrapped = f(1, 2)
    assert wrapped == (1, 2)
    res = list(jitter(5))
    assert len(res) == 5
'''
CAR_CLASS = "class Car:\n    def __init__(self):\n        self.hand_count = 0\n"


def test_reads_right_after_construction_or_assignment_are_trivial():
    """boltons: car.hand_count == ___ -> 0 right after Car() (8 of a 25-task sample were such reads)."""
    fn = next(iter(A.test_functions(CAR).values()))
    why = [difficulty.read_after_construction(fn, a, a.operands[0], [CAR_CLASS]) for a in fn.assertions]
    assert why == ["a constructor's default read right after construction", None, "value set one statement earlier",
                   "size of a fresh construction", None, None,
                   None,  # a property: no self.useful_attr = <literal> anywhere
                   None,  # a method call computes
                   "size right after construction",
                   None,  # a call's result, not a read
                   None]  # the size of a function's result: a class constructs, a function computes


def test_in_a_whole_module_a_one_word_answer_counts_only_quoted():
    comments = ["# split the URL into scheme, host and path"]
    assert leaks.in_comments("'host'", comments) is True  # the shown test's own comments: strict
    assert leaks.in_comments("'host'", comments, words_quoted=True) is False  # the agent's module copy
    assert leaks.in_comments("'host'", ["# the part is 'host' here"], words_quoted=True) is True
    assert leaks.in_comments("'a b c'", ["# gives a b c"], words_quoted=True) is True  # not one word
    assert leaks.in_comments("[3, 2, 1]", ["# gives [3, 2, 1]"], words_quoted=True) is True


def test_what_the_checks_derive_from_a_function_is_computed_once_and_not_shared_mutably(monkeypatch):
    """``static_values``/``static_names``/``_single_definitions`` are read for every task of a
    function: derived once per function (``TestFunction.memo``), handed out as fresh containers."""
    fn = _fn("test_split")
    counted = []
    real = leaks._count_bindings
    monkeypatch.setattr(leaks, "_count_bindings", lambda f: counted.append(f.qualname) or real(f))
    values = leaks.static_values(fn)
    assert values["expected"] == [["o", "o"], ["o", "o"]]
    values["expected"] = "changed by a caller"
    names = leaks.static_names(fn)
    names.add("changed")
    assert leaks.static_values(fn)["expected"] == [["o", "o"], ["o", "o"]]
    assert "changed" not in leaks.static_names(fn) and {"expected", "other"} <= leaks.static_names(fn)
    assert masking._single_definitions(fn) is masking._single_definitions(fn)
    assert counted == ["TestSplit.test_split"]  # one walk of the function for all of the above
    fresh = _fn("test_split")  # a new parse is a new function: nothing carried over from the old one
    assert fresh.memo == {} and leaks.static_values(fresh) == leaks.static_values(fn)


def test_loaded_outside_reads_the_functions_name_index():
    fn = _fn("test_split")
    asserting = leaks._asserting(fn)
    assert leaks._loaded_outside(fn, "expected", frozenset()) is True  # read by the assertion
    assert leaks._loaded_outside(fn, "expected", asserting) is False  # ... and nowhere else
    assert leaks._loaded_outside(fn, "split_at", asserting) is True
    assert leaks._loaded_outside(fn, "nothing_reads_this", frozenset()) is False


def test_the_directories_an_absolute_import_is_looked_up_in(tmp_path):
    """Each directory from the importer's up to the root (pytest's ``prepend`` mode), then ``src``;
    the same list the comparison of paths gave."""
    root = tmp_path / "repo"
    for importer in ["tests/unit/test_x.py", "test_top.py", "tests/conftest.py", "tests/../../x.py"]:
        here = (root / importer).parent
        by_comparison = [here, *[p for p in here.parents if p == root or root in p.parents]]
        assert context._dirs_up_to(root, importer) == by_comparison
    assert context._dirs_up_to(root, "tests/unit/test_x.py") == [root / "tests/unit", root / "tests", root]
