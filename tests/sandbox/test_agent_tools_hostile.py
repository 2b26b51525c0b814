"""Agent tools neither leak the masked test through build copies nor hang on a regex
(issue 14)."""

from __future__ import annotations

import pytest

from execbench.families.repo.agent_tools import RepoBrowser, ToolError

TEST = "from lib import f\n\ndef test_f():\n    assert f(2) == 4  # the answer\n"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "__init__.py").write_text("def f(x):\n    return x * 2\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_f.py").write_text(TEST)
    # what an in-tree build leaves behind, and a renamed copy elsewhere
    (root / "build" / "lib" / "tests").mkdir(parents=True)
    (root / "build" / "lib" / "tests" / "test_f.py").write_text(TEST)
    (root / "lib.egg-info").mkdir()
    (root / "lib.egg-info" / "SOURCES.txt").write_text("tests/test_f.py\n")
    (root / "docs").mkdir()
    (root / "docs" / "example.py").write_text("# copied for the docs\n" + TEST)
    return root


def test_copies_of_the_masked_test_are_never_served(tree):
    browser = RepoBrowser(tree, {"tests/test_f.py"})
    for path in ("tests/test_f.py", "build/lib/tests/test_f.py", "docs/example.py",
                 "lib.egg-info/SOURCES.txt", "build"):
        with pytest.raises(ToolError, match="not available"):
            browser.read_file(path) if "." in path.rsplit("/", 1)[-1] else browser.list_dir(path)
    assert browser.list_dir(".") == ["docs/", "lib/", "tests/"]
    assert browser.search("f(2)") == [] and browser.search("the answer", regex=True) == []
    assert browser.search("return x") == ["lib/__init__.py:2: return x * 2"]
    assert "return x * 2" in browser.read_file("lib/__init__.py")


def test_catastrophic_regex_is_linear(tree):
    (tree / "lib" / "big.py").write_text("a" * 200_000 + "\n")
    browser = RepoBrowser(tree, {"tests/test_f.py"})
    assert browser.search("(.+)+#NOPE#", regex=True) == []
    assert browser.search("(a|aa)+$", regex=True, glob="big.py") != []
    with pytest.raises(ToolError, match="RE2"):
        browser.search(r"(a)\1", regex=True)
