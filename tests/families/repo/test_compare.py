"""The repo answer-comparison engine (RepoReason C.2): one test per normalisation rule,
constructor awareness, type strictness, extraction, and hostile answers."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from execbench.dataset import Task
from execbench.families.repo.grading.compare import candidates, grade_answer, parse_answer, same


def task(answer: str, kind: str = "python-literal", **fields) -> Task:
    return Task(id="repo/toolz/t#masked-assertion", family="repo", arm="masked-assertion",
                source_id="toolz", language="python", prompt_fields=fields, answer=answer,
                answer_kind=kind)


def correct(answer: str, response: str, kind: str = "python-literal") -> bool:
    score = grade_answer(task(answer, kind), response)
    assert score.status == "ok", score
    return score.correct


# -- normalisation rules, one each ------------------------------------------------------------

def test_whitespace_is_irrelevant():
    assert correct("[1, 2, (3, 4)]", "[1,2,(3,\n 4)]")


def test_quote_invariance():
    assert correct("'abc'", '"abc"')
    assert correct('"it\'s"', "'''it's'''")
    assert correct("{'k': 'v'}", '{"k": "v"}')
    assert not correct("'abc'", "b'abc'")  # bytes are not str


def test_set_ordering():
    assert correct("{1, 2, 3}", "{3, 1, 2}")
    assert correct("{(1, 'a'), (2, 'b')}", "{(2, 'b'), (1, 'a')}")
    assert not correct("{1, 2, 3}", "{1, 2}")


def test_dict_ordering():
    assert correct("{'a': 1, 'b': [1, 2]}", "{'b': [1, 2], 'a': 1}")
    assert not correct("{'a': 1, 'b': 2}", "{'a': 2, 'b': 1}")


def test_list_and_tuple_order_matters():
    assert not correct("[1, 2]", "[2, 1]")
    assert not correct("[1, 2]", "(1, 2)")


def test_defaultdict_maps_to_dict():
    assert correct("defaultdict(int, {'a': 1})", "{'a': 1}")
    assert correct("{'a': 1}", "collections.defaultdict(list, {'a': 1})")
    assert correct("defaultdict(<class 'int'>, {'a': 1})", "{'a': 1}")  # a repr as oracle
    assert not correct("defaultdict(int, {'a': 1})", "{'a': 2}")


def test_other_mappings_map_to_dict():
    assert correct("OrderedDict([('a', 1), ('b', 2)])", "{'b': 2, 'a': 1}")
    assert correct("dict(a=1, b=2)", "{'a': 1, 'b': 2}")
    assert correct("Counter({'x': 2})", "{'x': 2}")


def test_set_constructors_map_to_sets():
    assert correct("frozenset({1, 2})", "{2, 1}")
    assert correct("set()", "set([])")
    assert correct("set([3, 1])", "{1, 3}")
    assert not correct("set()", "{}")  # {} is a dict


def test_list_and_tuple_constructors_of_literals():
    assert correct("(1, 2)", "tuple([1, 2])")
    assert correct("[]", "list()")


def test_calls_are_not_the_container_they_wrap():
    # issue 12 (toolz test_pluck@L393): each of these fails the real test for the answer [0, 1]
    for wrapped in ("len([0, 1])", "reversed([0, 1])", "max([0, 1])", "deque([0, 1])", "D([0, 1])"):
        assert not correct("[0, 1]", wrapped), wrapped
    assert not correct("D({'a': 1})", "{'a': 1}")
    assert correct("[0, 1]", "list([0, 1])")  # value-preserving conversions stay


def test_pure_builtins_of_literals_are_their_value():
    assert correct("'6'", "max('6')") and correct("2", "len([0, 1])") and correct("1", "max([0, 1])")
    assert correct("[1, 2, 3]", "sorted({3, 1, 2})") and correct("'a'", "min('ba')") and correct("2", "abs(-2)")
    assert correct("1", "max([1, 1.0])") and not correct("1", "max([1.0, 1])")  # the first of equal values
    assert not correct("2", "len({1, 1.0})")  # one element in Python: refused, not guessed
    assert not correct("1", "max([1, 'a'])")  # TypeError in Python


def test_names_compare_by_the_aliases_stored_with_the_task():
    aliases = [["toolz.flip", "toolz.functoolz.flip", "flip"]]
    t = task("toolz.functoolz.flip", "text")
    t.provenance["answer_aliases"] = aliases
    assert grade_answer(t, "toolz.flip").correct and grade_answer(t, "flip").correct
    assert not grade_answer(t, "toolz.functoolz.compose").correct
    assert not grade_answer(t, "functoolz.flip").correct  # not a name of it in the test module
    ctor = task("mod.Point(1, 2)", "text")
    ctor.provenance["answer_aliases"] = [["mod.Point", "Point"]]
    assert grade_answer(ctor, "Point(1, 2)").correct and not grade_answer(ctor, "Point(2, 1)").correct
    assert not correct("Color.RED", "pkg.colors.Color.RED")  # no aliases stored: the same text only
    assert not correct("Color.RED", "Color.BLUE")


def test_nan_and_inf():
    assert correct("float('nan')", "nan")
    assert correct("[1.0, nan]", "[1.0, float('nan')]")
    assert correct("inf", "math.inf")
    assert correct("-inf", "float('-inf')")


def test_complex_and_signed_numbers():
    assert correct("(1+2j)", "1 + 2j")
    assert correct("-3", "-3")
    assert correct("-1-2j", "(-1-2j)")
    assert not correct("1+2j", "1-2j")


def test_duplicate_dict_keys_last_wins():
    assert correct("{'a': 2}", "{'a': 1, 'a': 2}")


# -- constructor awareness ---------------------------------------------------------------------

def test_constructor_spacing_and_keywords():
    assert correct("Foo(1, 2)", "Foo(1,2)")
    assert correct("Foo(a=1, b=2)", "Foo(b=2, a=1)")
    assert not correct("Foo(1, 2)", "Foo(2, 1)")
    assert not correct("Foo(1, 2)", "Bar(1, 2)")
    assert not correct("Foo(1, 2)", "(1, 2)")


def test_constructor_with_nested_values():
    assert correct("Interval(0, 1, closed=True)", "Interval(0, 1, closed=True)")
    assert correct("Node(children=[Leaf(1), Leaf(2)])", "Node(children=[Leaf(1),Leaf(2)])")


# -- type strictness -------------------------------------------------------------------------

@pytest.mark.parametrize("oracle,answer", [
    ("1", "1.0"), ("1", "True"), ("1.0", "True"), ("0", "False"), ("None", "0"),
    ("'1'", "1"), ("[1]", "[1.0]"), ("{1: 'a'}", "{True: 'a'}"),
])
def test_type_strictness(oracle, answer):
    assert not correct(oracle, answer)
    assert correct(oracle, oracle)


# -- extraction ------------------------------------------------------------------------------

def test_extraction_from_fences_markers_and_reasoning():
    assert correct("[1, 2]", "```python\n[1, 2]\n```")
    assert correct("[1, 2]", "Some prose.\n```\n[1, 2]\n```\nDone")
    assert correct("5", "Answer: 5")
    assert correct("5", "Final answer: `5`")
    assert correct("5", "<think>it could be 4</think>\n5")
    assert correct("'x'", "The value is shown below.\n'x'")
    assert correct("5", "**5**")


def test_no_answer_and_truncated():
    s = grade_answer(task("5"), "I am not sure what this is")
    assert (s.correct, s.status, s.extracted) == (False, "no_answer", None)
    s = grade_answer(task("5"), "<think>let me count 1, 2, 3")
    assert (s.correct, s.status) == (False, "truncated")
    s = grade_answer(task("5"), "")
    assert s.status == "no_answer"


def test_candidates_order():
    got = candidates("reasoning\nAnswer: [1, 2]\n")
    assert got[0] == "[1, 2]"


def test_answer_type_hint_is_recorded():
    s = grade_answer(task("5", answer_type="integer literal"), "5")
    assert s.correct and s.details["answer_type"] == "integer literal"


def test_parse_answer_canonical_forms_are_hashable_and_comparable():
    a, b = parse_answer("{'b': {1, 2}, 'a': Foo(x=[1])}"), parse_answer('{"a": Foo(x=[1]), "b": {2, 1}}')
    assert hash(a) == hash(b) and same(a, b)


# -- hostile answers ------------------------------------------------------------------------

HOSTILE = [
    "__import__('os').system('touch {marker}')",
    "(lambda: __import__('os').system('touch {marker}'))()",
    "lambda: 0",
    "().__class__.__bases__[0].__subclasses__()",
    "open('{marker}', 'w')",
    "exec(\"open('{marker}', 'w')\")",
    "eval('1')",
    "[x for x in range(10**10)]",
    "{{**{{}}}}",
    "f'{{1}}'",
    "'a' * 10**10",
    "9**9**9**9",
    "[" * 100_000 + "]" * 100_000,
    "(" * 5_000 + "1" + ")" * 5_000,
    "+0" * 200_000,
    "-" * 100_000 + "1",
    "a." * 50_000 + "b",
    "1" * 5_000,
    "x.__class__",
    "Foo(*args)",
]


@pytest.mark.parametrize("kind", ["python-literal", "sympy"])
@pytest.mark.parametrize("template", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_answers_are_wrong_without_side_effects(template, kind, tmp_path):
    marker = tmp_path / "pwned"
    response = template.replace("{marker}", str(marker)) if "{marker}" in template else template
    if "{{" in template:
        response = template.format()
    start = time.perf_counter()
    score = grade_answer(task("1", kind), response)
    elapsed = time.perf_counter() - start
    assert not score.correct
    assert score.status in ("ok", "no_answer")
    assert not marker.exists()
    assert not Path("/tmp/xyz").exists()
    assert elapsed < 5, elapsed


def test_touch_tmp_xyz_is_not_created():
    target = Path("/tmp/xyz")
    existed = target.exists()
    for kind in ("python-literal", "sympy"):
        score = grade_answer(task("0", kind), "__import__('os').system('touch /tmp/xyz')")
        assert not score.correct and "refused" in score.details
    assert target.exists() == existed


def test_constructor_respellings_the_builder_verified_are_accepted():
    """boltons: IndexedSet((5, 6)) vs IndexedSet([5, 6]); Counter(u=1, x=4) vs Counter({'u': 1, 'x': 4}).
    The builder substitutes each respelling in the real test (answers.spelling_variants) and stores the
    rules that passed; the grader applies only those, without executing anything."""
    from execbench.families.repo.grading.compare import grade_answer
    from execbench.families.repo.verification.answers import spelling_variants

    assert spelling_variants("IndexedSet([5, 6])") == {"iterable_argument": "IndexedSet((5, 6))"}
    assert spelling_variants("Thing(u=1, x=4)") == {"keyword_dict": "Thing({'u': 1, 'x': 4})"}
    assert spelling_variants("Thing({'u': 1})") == {"keyword_dict": "Thing(u=1)"}

    def task(answer, spellings):
        return {"answer": answer, "answer_kind": "text", "prompt_fields": {},
                "provenance": {"answer_spellings": spellings}}

    assert grade_answer(task("IndexedSet([5, 6])", ["iterable_argument"]), "IndexedSet((5, 6))").correct
    assert not grade_answer(task("IndexedSet([5, 6])", []), "IndexedSet((5, 6))").correct  # not verified
    assert not grade_answer(task("IndexedSet([5, 6])", ["iterable_argument"]), "IndexedSet((6, 5))").correct
    assert grade_answer(task("Thing(u=1, x=4)", ["keyword_dict"]), "Thing({'x': 4, 'u': 1})").correct
    assert not grade_answer(task("Thing(u=1, x=4)", ["keyword_dict"]), "Thing({'x': 4, 'u': 2})").correct
    # Counter's keyword form is a dict like its mapping form (Python's == agrees)
    assert grade_answer(task("Counter({'u': 1, 'x': 4})", []), "Counter(u=1, x=4)").correct
