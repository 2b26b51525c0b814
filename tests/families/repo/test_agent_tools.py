"""Agent tools stay inside the repository's source tree and never show the test file."""

from __future__ import annotations

import os

import pytest

from execbench.families.repo.agent_tools import RepoBrowser, ToolError


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "core.py").write_text("def add(a, b):\n    return a + b\n\nSECRET_NAME = 1\n")
    (root / "tests" / "test_core.py").write_text("def test_add():\n    assert add(1, 2) == 3\n")
    (root / "tests" / "helpers.py").write_text("def helper():\n    return 'add'\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("add outside\n")
    os.symlink(outside, root / "pkg" / "link_out.py")
    os.symlink(root / "tests" / "test_core.py", root / "pkg" / "alias.py")
    os.symlink(tmp_path, root / "pkg" / "up")
    return RepoBrowser(root, {"tests/test_core.py"})


def test_list_read_search_inside(repo):
    assert repo.list_dir(".") == ["pkg/", "tests/"]
    assert repo.list_dir("pkg") == ["pkg/core.py"]
    assert repo.list_dir("tests") == ["tests/helpers.py"]
    assert repo.read_file("pkg/core.py", 2, 2) == "    2 |     return a + b"
    assert repo.search("add") == ["pkg/core.py:1: def add(a, b):", "tests/helpers.py:2: return 'add'"]
    assert repo.search(r"^[A-Z_]+ =", regex=True) == ["pkg/core.py:4: SECRET_NAME = 1"]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/hostname", "pkg/../../outside.txt", "pkg/link_out.py",
                                  "pkg/up/outside.txt", "pkg/up", "tests/test_core.py", "pkg/alias.py",
                                  "tests/../tests/test_core.py", "bad\x00path"])
def test_refused_paths(repo, path):
    with pytest.raises(ToolError):
        repo.read_file(path)
    with pytest.raises(ToolError):
        repo.list_dir(path)


def test_search_never_returns_refused_or_outside_files(repo):
    hits = repo.search("add", ".", glob="*")
    assert all(not h.startswith(("tests/test_core.py", "pkg/alias.py", "pkg/link_out.py")) for h in hits)
    with pytest.raises(ToolError):
        repo.search("add", "../")
    with pytest.raises(ToolError):
        repo.search("(", regex=True)


def test_for_task_refuses_the_test_file(tmp_path, repo):
    class T:
        prompt_fields = {"repo_root": str(repo.root), "test_file": "tests/test_core.py",
                         "function_file": "tests/helpers.py"}

    browser = RepoBrowser.for_task(T)
    with pytest.raises(ToolError):
        browser.read_file("tests/helpers.py")
    assert browser.read_file("pkg/core.py").startswith("    1 | def add")


def test_for_task_resolves_a_cache_relative_root(cache_dir):
    """Datasets store the tree relative to the repos cache; the browser finds it there."""
    root = cache_dir / "repos" / "src" / "lib-1.0" / "unpacked"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "core.py").write_text("VALUE = 1\n")
    (root / "test_lib.py").write_text("def test_value():\n    assert VALUE == 1\n")

    class T:
        prompt_fields = {"repo_root": "src/lib-1.0/unpacked", "test_file": "test_lib.py"}

    browser = RepoBrowser.for_task(T)
    assert browser.list_dir(".") == ["lib/"]
    assert browser.read_file("lib/core.py") == "    1 | VALUE = 1"
    with pytest.raises(ToolError):
        browser.read_file("test_lib.py")
