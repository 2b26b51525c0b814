"""A real PyPI package: toolz 1.2.0's sdist, its own venv, two of its test modules."""

from __future__ import annotations

import ast
import json

import pytest

from execbench.families.repo import build
from execbench.families.repo.records import traces
from execbench.sources import repos

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def toolz():
    return repos.prepare("pypi:toolz==1.2.0")


def test_sdist_tree_and_venv_are_cached(toolz):
    assert toolz.root.is_dir() and (toolz.root / "toolz" / "itertoolz.py").is_file()
    assert toolz.import_root == toolz.root and set(toolz.packages) == {"tlz", "toolz"}
    assert toolz.python.is_file() and len(toolz.sdist_sha256) == 64
    again = repos.prepare("pypi:toolz==1.2.0")  # no download, no pip: the cache
    assert again == toolz
    rels = [p.relative_to(toolz.root).as_posix() for p in toolz.test_files()]
    assert "toolz/tests/test_recipes.py" in rels and "toolz/tests/test_signatures.py" not in rels
    assert all("/tests/" not in p.as_posix() for p in toolz.library_files())


def test_builds_tasks_from_real_tests(toolz):
    # the two countby assertions score 0.265 and 0.295 over their own slices: below the default
    # assertion_threshold (0.30) they are rejected, so this build of the path lowers it
    outcome = build.build_test_file(toolz, "toolz/tests/test_recipes.py",
                                    (toolz.root / "toolz/tests/test_recipes.py").read_text(),
                                    dict(build.DEFAULT_OPTIONS, assertion_threshold=0.0))
    tasks = {t["id"].split("::", 1)[1]: t for t in outcome.tasks}
    assert all(0 < t["metrics"]["assertion_score"] for t in outcome.tasks)
    assert tasks, outcome.rejected
    countby = [t for key, t in tasks.items() if key.startswith("test_countby@")]
    assert {t["answer"] for t in countby} >= {"{3: 2, 5: 1}", "{'a': 2, 'b': 1}"}
    for task in outcome.tasks:
        ast.parse(task["answer"], mode="eval")
        assert task["prompt_fields"]["masked_assertion"].count("___") == 1
        assert "# Question" in task["prompt_fields"]["test_source"]
        assert task["metrics"]["complexity_score"] >= 0.3 and task["metrics"]["max_depth"] <= 3
        stored = traces.load_trace(task["provenance"]["trace_ref"])
        assert {c["file"] for c in stored["calls"]} <= set(stored["sources"])
        assert all(not c["file"].startswith("/") for c in stored["calls"])
        json.dumps(task)
