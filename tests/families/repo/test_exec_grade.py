"""Issue 35 end to end on a small local repository (fixtures/leaklib): what the prompt shows
never evaluates to the key, and answers are graded as the test's assertion judges them (the
answer rebuilt from a whitelisted AST in the package's venv, in the sandbox)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.families.repo import build
from execbench.families.repo.grading import exec_grade
from execbench.families.repo.grading.compare import grade_answer

FIXTURE = Path(__file__).parent / "fixtures" / "leaklib"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo") / "leaklib"
    shutil.copytree(FIXTURE, root)
    out = tmp_path_factory.mktemp("out") / "ds"
    build_dataset(registry.get("repo"), [str(root)], out, options={**build.DEFAULT_OPTIONS, "check_seeds": "1"},
                  jobs=1)
    tasks = {t.prompt_fields["assertion_line"]: t for t in read_tasks(out)}
    return tasks, list(read_rejected(out))


def test_shown_values_that_evaluate_to_the_key_are_masked(built):
    tasks, _ = built
    sides = tasks[10].prompt_fields["test_source"]
    assert "expected = ___" in sides and "['neg'] * 3" not in sides  # more-itertools' expected = <expression>
    assert tasks[10].answer == "['neg', 'neg', 'neg', 'pos', 'pos', 'pos', 'neg', 'neg']"
    for line, other in ((15, "m.shift(SU).shift(6) == ___"), (16, "m.shift(6).shift(SU) == ___")):
        shown = tasks[line].prompt_fields["test_source"]  # arrow's test_shift: the sibling shows `== m`
        assert other in shown and "m = Moment(2013, 5, 5)" in shown and tasks[line].answer == "Moment(2013, 5, 5)"
    tags = tasks[22].prompt_fields["test_source"]  # markdown: the unmasked comprehension equals this key
    assert "range(3)" not in tags and "assert ids == ___" in tags


def test_leaks_that_cannot_be_masked_are_rejected_with_the_place(built):
    _, rejected = built
    leaks = {r["line"]: (r["reason"], r["place"]) for r in rejected if r["stage"] == "leak"}
    assert leaks == {
        21: ("answer_visible: expression", "line 21: {'foo', 'foo_07'} | {f'foo_{i}' for i in range(3)}"),
        27: ("answer_visible: comment", "# converts to '12' at midnight"),  # a 2-character string
        # another test of the module (no task: it shuffles) computes this key; the agent reads that test
        40: ("answer_visible: agent_copy expression",
             "tests/test_core.py: test_sides_shuffled line 47: expected = ['neg'] * 5 + ['pos'] * 3"),
    }


RESPELLINGS = [  # (line, answer, what the real assertion says)
    (33, "Bag('abrcdxyzq')", True), (33, "['a', 'b', 'r', 'c', 'd', 'x', 'y', 'z', 'q']", True),
    (33, "Bag(items=['a', 'b', 'r', 'c', 'd', 'x', 'y', 'z', 'q'])", True),
    (33, "Bag('abrcdxyz')", False), (33, "Bag('qabrcdxyz')", False), (33, "('a', 'b', 'r', 'c', 'd', 'x', 'y', 'z', 'q')", False),
    (34, "Bag([])", True), (34, "Bag('')", True), (34, "[]", True), (34, "Bag('a')", False),
    (35, "Moment(2013, 5, 16, tz='UTC')", True), (35, "Moment(year=2013, month=5, day=16)", True),
    (35, "Moment(2013, 5, 17)", False), (35, "Moment(2013, 5, 16, tz='EST')", False),
    (15, "Moment(2013, 5, 5, 'UTC')", True), (15, "Moment(2013, 5, 5, None)", False),
    (33, "list(Bag('abrcdxyzq'))", True), (33, "sorted(Bag('abrcdxyzq'))", False),  # pure builtins, judged by Bag's ==
    (34, "reversed([])", False),  # an iterator: Bag's == does not accept it
]


@pytest.mark.parametrize("line, answer, passes", RESPELLINGS)
def test_answers_are_graded_as_the_assertion_judges_them(built, line, answer, passes):
    tasks, _ = built
    score = grade_answer(tasks[line], answer)
    assert score.correct is passes
    assert score.details["execution"] == "executed"


def test_literal_answers_stay_on_the_fast_path_and_hostile_ones_never_run(built, tmp_path, monkeypatch):
    tasks, _ = built
    assert "execution" not in grade_answer(tasks[33], "Bag(['a', 'b', 'r', 'c', 'd', 'x', 'y', 'z', 'q'])").details
    marker = tmp_path / "ran"
    for hostile in (f"open({str(marker)!r}, 'w')", f"__import__('os').system('touch {marker}')",
                    "Bag.__init__", "Bag(*[1])", "(lambda: 1)()", "Moment.shift(Moment(1, 1, 1), 99999999)"):
        score = grade_answer(tasks[33], hostile)
        assert score.correct is False
    assert not marker.exists()
    # an answer whose construction raises in the package fails, as the assertion would
    raised = grade_answer(tasks[35], "Moment(2013, 5)")
    assert (raised.correct, raised.details["execution"]) == (False, "answer_raised")


def test_without_the_venv_grading_is_literal_and_flagged(built, tmp_path, monkeypatch):
    tasks, _ = built
    exec_grade.clear_caches()
    monkeypatch.setenv("EXECBENCH_CACHE_DIR", str(tmp_path / "empty-cache"))
    score = grade_answer(tasks[33], "Bag('abrcdxyzq')")
    assert (score.correct, score.details["execution"]) == (False, "unavailable")
    exec_grade.clear_caches()
    monkeypatch.setenv(exec_grade.SWITCH, "0")
    assert grade_answer(tasks[34], "Bag([])").details["execution"] == "unavailable"
    exec_grade.clear_caches()


def test_the_test_modules_imports_are_the_names_an_answer_may_call():
    source = "import os.path\nfrom a import b as c, d\ntry:\n    from e import *\nexcept ImportError:\n    pass\n" \
             "from . import local\nX = 1\n"
    imports, names, star = exec_grade.test_imports(source)
    assert imports == [["os.path", None, None], ["a", [["b", "c"], ["d", None]]], ["e", [["*", None]]]]
    assert (names, star) == ({"os", "c", "d"}, True)
    assert exec_grade.non_literal(("list", (("call", ("f",), (), ()),))) and not exec_grade.non_literal(("int", 1))
