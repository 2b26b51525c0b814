"""What a test touched outside its function comes from its own run (issue 35): fixtures that
ran without a parameter (class-level ``usefixtures``, a ``pytest_plugins`` module, autouse in a
conftest) are carried into the prompt; attributes and module-level names no shown code sets
are rejected ``context_missing``; a key naming the test's ``except`` variable is no task. Real
builds of ``fixtures/touchlib``; the record parser on hostile input."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.families.repo import build
from execbench.families.repo.fairness import touched

FIXTURE = Path(__file__).parent / "fixtures" / "touchlib"


def _build(root, out, **options):
    manifest = build_dataset(registry.get("repo"), [str(root)], out,
                             options={**build.DEFAULT_OPTIONS, "check_seeds": "1", **options}, jobs=1)
    tasks = {t.id.split("::", 1)[1].split("@")[0]: t for t in read_tasks(out)}
    rejected = list(read_rejected(out))
    return manifest, tasks, rejected


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo") / "touchlib"
    shutil.copytree(FIXTURE, root)
    return root


@pytest.fixture(scope="module")
def built(root, tmp_path_factory):
    _, tasks, rejected = _build(root, tmp_path_factory.mktemp("out") / "ds")
    return tasks, {r["candidate"].split("::", 1)[1]: r for r in rejected if "::" in r["candidate"]}


@pytest.mark.slow
def test_fixtures_that_ran_without_a_parameter_are_shown(built):
    tasks, _ = built
    assert {k: t.answer for k, t in tasks.items()} == {
        "TestClassFixture::test_class_usefixtures": "13", "TestPluginFixture::test_plugin_usefixtures": "13",
        "test_autouse_conftest": "14", "test_table_lookup": "13",
        "TestHelperReadsFixture::test_helper_reads_class_fixture": "15"}
    helper = tasks["TestHelperReadsFixture::test_helper_reads_class_fixture"].prompt_fields["test_definitions"]
    assert "return Tally(self.words)" in helper and 'request.cls.words = "abcabcaddbe"' in helper
    words = tasks["TestClassFixture::test_class_usefixtures"].prompt_fields["test_definitions"]
    assert "# from tests/conftest.py" in words and 'request.cls.words = "abcabcaddbe"' in words
    doubled = tasks["TestPluginFixture::test_plugin_usefixtures"].prompt_fields["test_definitions"]
    assert "# from tests/plugin_fixtures.py" in doubled and "request.instance.factor = 2" in doubled
    assert tasks["test_autouse_conftest"].prompt_fields["test_definitions"].startswith(
        '# from tests/conftest.py\nimport touchlib\n\n@pytest.fixture(autouse=True)\ndef extra_key():\n'
        '    touchlib.EXTRA = "q"')  # the carried file's imports its definitions read stand above them


@pytest.mark.slow
def test_what_no_shown_code_sets_is_rejected_by_kind_and_name(built):
    _, rejected = built
    reasons = {k.split("@")[0]: (r["stage"], r["reason"]) for k, r in rejected.items()}
    assert reasons["TestHiddenAttribute::test_attribute_set_elsewhere"] == (
        "context", "context_missing: attribute self.hidden (of class TestHiddenAttribute in tests/test_touch.py, "
                   "not shown)")
    # read only by a helper method the test calls through self (carried): still the test's context
    assert reasons["TestHelperReadsHidden::test_helper_reads_module_attribute"] == (
        "context", "context_missing: attribute self.letters (of class TestHelperReadsHidden in tests/test_touch.py, "
                   "not shown)")
    assert reasons["test_runtime_global"] == (
        "context", "context_missing: global MAGIC (bound at run time; no shown code defines it)")


@pytest.mark.slow
def test_a_parametrization_over_a_set_is_rejected_once_whatever_its_runs_did(built):
    """isodate's TEST_CASES is a set holding None: its instances' order and positional ids
    (``expected8``) follow hash(None), an address in Python 3.11, so two builds named (and kept)
    different instances and rejected.jsonl differed. The rejection is now static, decided before
    the run's outcome (one instance here fails), one row per assertion under the function's name."""
    _, rejected = built
    rows = [(k, r["stage"], r["reason"]) for k, r in rejected.items() if k.startswith("test_over_a_set")]
    assert rows == [("test_over_a_set@L91", "dvp-semantic", "nondeterministic_in_test:parametrize_over_set")]


@pytest.mark.slow
def test_a_key_naming_the_tests_except_variable_is_no_task(built):
    tasks, rejected = built
    assert "test_except_variable_key" not in tasks
    (why,) = [r for k, r in rejected.items() if k.startswith("test_except_variable_key")]
    assert (why["stage"], why["reason"]) == ("dvp-morphology", "dynamic_attribute")


@pytest.mark.slow
def test_an_answer_read_out_of_a_library_table_is_left_out_by_default(built):
    tasks, rejected = built
    assert tasks["test_table_lookup"].answer == "13" and tasks["test_table_lookup"].provenance["data_table"] is None
    (why,) = [r for k, r in rejected.items() if k.startswith("test_table_lookup")]
    assert (why["stage"], why["reason"], why["answer"]) == (
        "balance", "data_table_recall: the answer is an entry of touchlib/__init__.py:NAMES", "'three'")


@pytest.mark.slow
def test_caps_per_function_and_per_package_hold_for_a_local_source(root, tmp_path):
    manifest, tasks, rejected = _build(root, tmp_path / "capped", data_table_tasks="keep", max_tasks_per_function=1,
                                       max_tasks_per_package=2)
    assert manifest["tasks"] == 2 and manifest["settings"]["options"]["max_tasks_per_package"] == 2
    assert sorted(tasks) == ["TestClassFixture::test_class_usefixtures", "TestPluginFixture::test_plugin_usefixtures"]
    caps = sorted((r["reason"], r.get("answer")) for r in rejected if r["stage"] == "cap")
    # kept with data_table_tasks=keep, 'three' is test_table_lookup's first task: the cap leaves out its second
    assert caps == [("max_tasks_per_function=1: test_table_lookup has more tasks", "13"),
                    ("package caps (max_modules_per_package=0, max_tasks_per_package=2): 0 test modules and 3 tasks "
                     "left out", None)]


def test_the_record_is_parsed_as_hostile_input(tmp_path):
    inside = tmp_path / "tests" / "conftest.py"
    good = {"fixtures": [["words", str(inside), 8, "words", "tests.conftest"],
                         ["tmp_path", "/usr/lib/python3/_pytest/tmpdir.py", 3, "tmp_path", "_pytest.tmpdir"]],
            "params": [], "instance": ["x"], "classes": [["T", str(tmp_path / "tests" / "t.py"), ["words"]]],
            "globals": [["os", "module", "/usr/lib/python3.11/os.py"]]}
    ran = touched.parse(good, tmp_path)
    assert [(f.name, f.file, f.line) for f in ran.fixtures] == [("words", "tests/conftest.py", 8),
                                                                 ("tmp_path", None, 3)]
    assert ran.classes == [("T", "tests/t.py", {"words"})] and ran.globals == {"os": ("module", None)}
    for bad in ([], {"fixtures": "x"}, {"fixtures": [["a", "b", "3", "f", "m"]]}, {"fixtures": [["a"] * 6]},
                {"globals": [["x", "weird", ""]]}, {"instance": ["x" * 5000]}, {"instance": ["a"] * 600},
                {"fixtures": [["__error__", "TypeError", 0, "", ""]]}, {"classes": [[1, 2]]}):
        with pytest.raises(touched.Invalid):
            touched.parse(bad, tmp_path)


_HELPER_READS = '''\
import pytest
from touchlib import Tally


@pytest.mark.usefixtures("letters")
class TestHelper:
    def make(self):
        return Tally(self.letters)

    def test_helper(self):
        tally = self.make()
        assert tally.total() == 5
'''


def _helper_reads_missing(carried_nodes):
    """touched.missing for ``TestHelper.test_helper`` above, with the attribute ``letters`` set on
    the class by the class-level fixture ``letters`` of tests/conftest.py (as its run records it)."""
    from execbench.families.repo.fairness import context
    from execbench.families.repo.selection import assertions

    (function,) = [f for (q, _), f in assertions.test_functions(_HELPER_READS).items() if q.endswith("test_helper")]
    ran = touched.Touched(fixtures=[touched.Fixture("letters", "tests/conftest.py", 1, "letters", "tests.conftest")],
                          classes=[("TestHelper", "tests/test_h.py", {"make", "test_helper", "letters"})])
    definitions = context.needed_definitions(_HELPER_READS, function)
    assert [d.name for d in definitions] == ["TestHelper.make"]  # the helper the test calls through self
    nodes = [("tests/test_h.py", "make", d.node) for d in definitions] + carried_nodes
    shown = touched.Shown("tests/test_h.py", context._parsed(_HELPER_READS)[0], nodes, {}, False, {"TestHelper"})
    return touched.missing(ran, function, shown, [], lambda rel: rel.startswith("touchlib/"))


def test_attributes_read_by_a_carried_helper_method_must_be_shown():
    # the class-level fixture that sets self.letters is shown: nothing missing
    fixture = ast.parse('@pytest.fixture(scope="class")\ndef letters(request):\n    request.cls.letters = "abcab"\n')
    assert _helper_reads_missing([("tests/conftest.py", "letters", fixture.body[0])]) is None
    # the same fixture setting it in a form no reader is shown (its value bound elsewhere): the
    # test function never reads self.letters, only its helper does, and that is enough to reject
    hidden = ast.parse('@pytest.fixture(scope="class")\ndef letters(request):\n    request.cls.configure()\n')
    assert _helper_reads_missing([("tests/conftest.py", "letters", hidden.body[0])]) == (
        "context_missing: attribute self.letters (of class TestHelper in tests/test_h.py, not shown)")
