"""The agent reads a test module only as its masked copy, by every route; fixtures from a
conftest.py and helpers from another test module are carried in the prompt or the task is
rejected. Built end to end (sandboxed pytest, real Inspect tool definitions of ``--mode agent``)
from ``fixtures/ctxlib``."""

from __future__ import annotations

import ast
import asyncio
import os
import py_compile
import shutil
from pathlib import Path

import pytest
from inspect_ai.tool import ToolError as InspectToolError

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.families.repo import build
from execbench.families.repo.fairness import agent_copy
from execbench.families.repo.selection import assertions as A

FIXTURE = Path(__file__).parent / "fixtures" / "ctxlib"
TEST = "tests/test_tally.py"
ANSWERS = ["== 15", "== 28", "== 25", "('a', 3)", '("a", 3)']


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo") / "ctxlib"
    shutil.copytree(FIXTURE, root)
    out = tmp_path_factory.mktemp("out") / "ds"
    build_dataset(registry.get("repo"), [str(root)], out, options=dict(build.DEFAULT_OPTIONS), jobs=1)
    tasks = {t.id.split("::", 1)[1].split("#")[0]: t for t in read_tasks(out)}
    # Other routes to the original, added after the build: a symlink, a hard link, compiled
    # code, version-control objects, an installed copy in a venv inside the checkout.
    os.symlink(root / TEST, root / "ctxlib" / "alias.py")
    (root / "docs").mkdir()
    os.link(root / TEST, root / "docs" / "test_copy.txt")
    py_compile.compile(str(root / TEST), cfile=str(root / "tests" / "__pycache__" / "test_tally.cpython-311.pyc"))
    py_compile.compile(str(root / TEST), cfile=str(root / "tests" / "test_tally.pyc"))
    (root / ".git" / "objects").mkdir(parents=True)
    shutil.copy(root / TEST, root / ".git" / "objects" / "copy")
    site = root / "venv" / "lib" / "python3.11" / "site-packages" / "tests"
    site.mkdir(parents=True)
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    shutil.copy(root / TEST, site / "test_tally.py")
    (root / "env").mkdir()
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    shutil.copy(root / TEST, root / "env" / "test_tally_copy.py")
    return root, tasks, list(read_rejected(out))


def _call(task, tool, **kwargs):
    """One call of the agent's real Inspect tool (``--mode agent``)."""
    from execbench.eval.agent import _browser, _tools

    tools = {t.name: t for t in _tools(_browser(task))}
    return asyncio.run(tools[tool].tool(**kwargs))


@pytest.mark.slow
def test_conftest_fixtures_and_helper_modules_are_carried(built):
    _, tasks, rejected = built
    fixture = tasks["test_conftest_fixture@L11"].prompt_fields["test_definitions"]
    assert fixture.startswith("# from tests/conftest.py\n")
    assert 'WORDS = "abcabcaddbe"' in fixture and "def tally():\n    return Tally(WORDS)" in fixture
    helper = tasks["test_helper_module@L17"].prompt_fields["test_definitions"]
    assert helper.startswith("# from tests/helpers.py\nfrom ctxlib import Tally\n\ndef filled(text):")  # with its import
    # a fixture pytest finds through pytest_plugins, which no conftest.py defines: the run says where (issue 35)
    plugin = tasks["test_plugin_fixture@L23"].prompt_fields["test_definitions"]
    assert plugin.startswith("# from tests/plugin_fixtures.py\nfrom ctxlib import Tally\n\n@pytest.fixture\n"
                             "def plugin_tally():")
    assert not [r for r in rejected if r["stage"] == "context"]


@pytest.mark.slow
def test_the_agent_reads_the_masked_copy_of_the_test_module_by_every_spelling(built):
    _, tasks, _ = built
    task = tasks["test_same_line_elsewhere@L37"]
    assert set(task.prompt_fields["agent_copies"]) == {TEST}
    shown = [_call(task, "read_file", path=p) for p in
             (TEST, "./" + TEST, "tests/../tests/test_tally.py", "tests//test_tally.py", "ctxlib/alias.py")]
    assert len(set(shown)) == 1
    text = shown[0]
    assert "   37 |     assert tally.total() == ___" in text
    assert "    5 | EXPECTED_HISTOGRAM = ___" in text  # a constant only an assertion reads is its answer
    assert text.count("== ___") == 5  # every masked value of the module's tasks (and of the rejected one)
    assert not any(answer in text for answer in ANSWERS)
    hits = _call(task, "search", pattern="total() ==", glob="*")
    assert hits.splitlines() == [f"{p}:{n}: assert {v}.total() == ___" for p, n, v in [
        ("ctxlib/alias.py", 11, "tally"), ("ctxlib/alias.py", 17, "tally"), ("ctxlib/alias.py", 23, "plugin_tally"),
        ("ctxlib/alias.py", 37, "tally"), (TEST, 11, "tally"), (TEST, 17, "tally"), (TEST, 23, "plugin_tally"),
        (TEST, 37, "tally")]]
    assert "tests/test_tally.py" in _call(task, "list_dir", path="tests")


@pytest.mark.slow
@pytest.mark.parametrize("path", ["tests/old_test_tally.py.orig", "docs/test_copy.txt", "tests/test_tally.pyc",
                                  "tests/__pycache__/test_tally.cpython-311.pyc", ".git/objects/copy",
                                  "venv/lib/python3.11/site-packages/tests/test_tally.py",
                                  "env/test_tally_copy.py"])
def test_no_other_route_shows_the_answer(built, path):
    root, tasks, _ = built
    assert (root / path).is_file()
    task = tasks["test_same_line_elsewhere@L37"]
    with pytest.raises(InspectToolError):
        _call(task, "read_file", path=path)
    hits = _call(task, "search", pattern="total() == 25", path=".", glob="*")
    assert hits == "(nothing)"
    try:
        listed = _call(task, "list_dir", path=str(Path(path).parent)).splitlines()
    except InspectToolError:  # the whole directory is refused (.git, a venv)
        listed = []
    by_content = path in ("tests/old_test_tally.py.orig", "env/test_tally_copy.py")  # listed, never read
    assert by_content or path not in listed


@pytest.mark.slow
def test_without_its_copy_the_test_module_is_refused(built):
    _, tasks, _ = built
    class Stale:  # a dataset whose copies are not in this cache
        family = "repo"
        prompt_fields = {**tasks["test_conftest_fixture@L11"].prompt_fields,
                         "agent_copies": {TEST: "traces/00/missing.json.gz"}}

    with pytest.raises(InspectToolError):
        _call(Stale, "read_file", path=TEST)
    assert "tally.total() == ___" in _call(tasks["test_conftest_fixture@L11"], "read_file", path=TEST)


SOURCE = '''
EXPECTED = [3, 2, 1]
DATA = [1, 2, 3]


def test_a():
    assert rev(DATA) == EXPECTED


def test_b():
    # rev([1, 2, 3]) gives [3, 2, 1]
    assert f(4) == 12
'''


def test_masked_copy_hides_constants_only_assertions_read_and_the_gate_checks_the_copy():
    functions = A.test_functions(SOURCE)
    spans = [A.Span.of(a.operands[1]) for f in functions.values() for a in f.assertions]
    copy = agent_copy.masked_copy(SOURCE, spans)
    assert "EXPECTED = ___" in copy and "DATA = [1, 2, 3]" in copy and "== ___" in copy
    assert agent_copy.leak("[3, 2, 1]", copy, {"DATA", "rev"}) == "answer_visible: agent_copy comment"
    no_comment = copy.replace("# rev([1, 2, 3]) gives [3, 2, 1]", "")
    assert agent_copy.leak("[3, 2, 1]", no_comment, {"rev"}) is None
    assert agent_copy.leak("[1, 2, 3]", no_comment, {"rev"}) == "answer_visible: agent_copy constant"
    assert agent_copy.leak("[1, 2, 3]", no_comment, {"DATA", "rev"}) is None  # a genuine input: fair
    assert agent_copy.answer_lines(SOURCE, copy) == {"EXPECTED = [3, 2, 1]", "assert rev(DATA) == EXPECTED",
                                                     "assert f(4) == 12"}
    ast.parse(copy)
    signatures = agent_copy.copy_signatures(SOURCE, copy)
    backup = "def test_b():\n    assert f(4) == 12\n"  # an old version of one test: its answer line, half its lines
    sibling = "def test_c():\n    g = 5\n    h = g * 2\n    k = h + 1\n    assert f(4) == 12\n"
    assert agent_copy.holds_copy(backup, signatures) and not agent_copy.holds_copy(sibling, signatures)


def test_arguments_with_defaults_are_not_fixtures(tmp_path):
    from execbench.families.repo.fairness import context

    source = "def test_valid(check_valid=len, *, strict=True):\n    assert check_valid([1]) == 1\n"
    (tmp_path / "test_x.py").write_text(source)
    fn = next(iter(A.test_functions(source).values()))
    assert context.outside_definitions(tmp_path, "test_x.py", source, fn, [], lambda rel: False) == ([], None)
    missing = "def test_valid(tally):\n    assert tally.total() == 1\n"
    fn = next(iter(A.test_functions(missing).values()))
    assert context.outside_definitions(tmp_path, "test_x.py", missing, fn, [], lambda rel: False)[1] == \
        "context_missing: fixture tally (no definition in the module, its class or a conftest.py)"


def test_a_fixture_named_by_its_decorator_is_found_in_the_conftest(tmp_path):
    from execbench.families.repo.fairness import context

    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture(name='slots', params=(True, False))\ndef _slots(request):\n"
        "    return request.param\n")
    source = "def test_x(slots):\n    assert make(slots) == 3\n"
    (tmp_path / "test_x.py").write_text(source)
    fn = next(iter(A.test_functions(source).values()))
    outside, missing = context.outside_definitions(tmp_path, "test_x.py", source, fn, [], lambda rel: False)
    assert missing is None and [(o.file, o.definition.name) for o in outside] == [("conftest.py", "_slots")]
    assert context.render_outside(outside).startswith("# from conftest.py\n@pytest.fixture(name='slots'")


OTHERS = '''
def test_asked():
    assert sides(VALUES) == ['neg'] * 5 + ['pos'] * 3


def test_shuffled():
    values = shuffled(VALUES)
    expected = ['neg'] * 5 + ['pos'] * 3
    assert sorted(sides(values)) == sorted(expected)


def test_range():
    assert total(4) != 99
    self.assertEqual(squares(4), [i * i for i in range(4)])


def test_round_trip():
    data = [0, 1, 4, 9]
    assert decode(encode(data)) == data
'''


def test_the_copy_is_checked_for_values_other_tests_compute():
    """Issue 35 item 2 on what the agent reads: an expression of *another* test function of the
    copy that a reader evaluates to the key (a definition only assertions read, a compared side)
    is a leak with its place; a genuine input of another test is not; the task's own function is
    the prompt gate's (it knows the asked computation's inputs)."""
    functions = A.test_functions(OTHERS)
    asked = functions[("test_asked", 2)].assertions[0]
    copy = agent_copy.masked_copy(OTHERS, [A.Span.of(asked.operands[1])])
    assert "assert sides(VALUES) == ___" in copy
    key = "['neg', 'neg', 'neg', 'neg', 'neg', 'pos', 'pos', 'pos']"
    assert agent_copy.leak_at(key, copy, {"VALUES"}, "test_asked", "tests/test_s.py") == (
        "answer_visible: agent_copy expression",
        "tests/test_s.py: test_shuffled line 8: expected = ['neg'] * 5 + ['pos'] * 3")
    assert agent_copy.leak_at("[0, 1, 4, 9]", copy, set(), "test_x") == (
        "answer_visible: agent_copy expression", "test_range line 14: [i * i for i in range(4)]")
    assert agent_copy.leak("[0, 1, 4, 9]", copy, set(), "test_range") is None  # its own: the prompt's gate
    no_list = copy.replace("[i * i for i in range(4)]", "___")
    assert agent_copy.leak("[0, 1, 4, 9]", no_list, set(), "test_x") is None  # only an input of a round trip
    assert agent_copy.leak("99", copy, set(), "test_x") is None  # `!=` states no value
    assert agent_copy.leak("['neg', 'pos']", copy, set(), "test_x") is None  # another value
