"""``execbench build repo list:FILE``: a package list where each package is a candidate,
failures are rejections, and caps bound what one package contributes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from execbench.families.repo.preparation import packages
from execbench.sources.errors import SourceError


def test_list_file_parsing(tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("# a comment\ninflection==0.5.1  # trailing comment\n\ntoolz==1.2.0\ninflection==0.5.1\n")
    assert packages.read_list(f"list:{path}") == ["pypi:inflection==0.5.1", "pypi:toolz==1.2.0"]
    assert [c.key for c in packages.list_candidates(f"list:{path}")] == ["package/inflection==0.5.1",
                                                                        "package/toolz==1.2.0"]
    path.write_text("toolz==1.2.0\n--index-url http://example.invalid\n")
    with pytest.raises(SourceError, match="line 2: expected name==version"):
        packages.read_list(f"list:{path}")
    path.write_text("# nothing\n")
    with pytest.raises(SourceError, match="empty"):
        packages.read_list(f"list:{path}")
    with pytest.raises(SourceError, match="cannot read"):
        packages.read_list(f"list:{tmp_path / 'missing.txt'}")


@pytest.mark.slow
def test_a_list_build_keeps_going_past_a_missing_package_and_applies_caps(tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text("idna==3.10\nno-such-package-execbench-test==0.0.1\n")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "execbench.cli", "build", "repo", f"list:{listing}", "-o", str(out),
                             "--set", "max_tasks_per_package=5", "--jobs", "2"], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "200"}, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text().splitlines()]
    assert len(tasks) == 5 and all(t["id"].startswith("repo/idna-3.10/") for t in tasks)
    missing = [r for r in rejected if r["stage"] == "package"]
    assert [r["candidate"] for r in missing] == ["pypi:no-such-package-execbench-test==0.0.1"]
    assert "No matching distribution" in missing[0]["reason"]
    (cap,) = [r for r in rejected if r["stage"] == "cap"]
    assert cap["candidate"] == "pypi:idna==3.10" and "max_tasks_per_package=5" in cap["reason"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["candidates"] == 2 and manifest["settings"]["options"]["max_tasks_per_package"] == 5


def test_a_package_rejection_names_the_sdist_not_the_cache_path():
    """packaging 26.4's rejection used to name the unpacked sdist by its absolute cache path."""
    from execbench.sources.repo_paths import portable_text, repos_dir

    unpacked = repos_dir() / "src" / "packaging-26.4" / "unpacked" / "packaging-26.4"
    assert portable_text(f"{unpacked}: cannot find the importable package of 'packaging' (tried src/ and the "
                         "root)") == "packaging-26.4: cannot find the importable package of 'packaging' (tried " \
                                    "src/ and the root)"
    assert portable_text(f"failed in setup: {unpacked}/tests/conftest.py:24: AssertionError", unpacked) == \
        "failed in setup: tests/conftest.py:24: AssertionError"
    assert portable_text(f"skipped in setup: ('{unpacked}/tests/t.py', 3, 'Skipped')", unpacked) == \
        "skipped in setup: ('tests/t.py', 3, 'Skipped')"
    assert portable_text(f"{unpacked}-old/x.py and {unpacked}", unpacked) == "packaging-26.4-old/x.py and packaging-26.4"
    assert portable_text(f"in {repos_dir()}/venv/v1/lib/x.py:3") == "in <venv>/lib/x.py:3"  # issue 33: no digest


def test_a_library_named_like_a_non_package_directory_is_found(tmp_path):
    """The living benchmark's list rejected packaging 26.4 ("cannot find the importable
    package"): ``packaging`` is also a directory name that is never the library (distro
    packaging files), but not when the distribution has that name."""
    from execbench.sources.repo_trees import find_packages

    for layout in ("src/packaging", "packaging"):
        root = tmp_path / layout.replace("/", "_")
        (root / layout).mkdir(parents=True)
        (root / layout / "__init__.py").write_text("")
        (root / "tests").mkdir()
        (root / "tests" / "__init__.py").write_text("")
        base, found = find_packages(root, "packaging")
        assert found == ("packaging",) and base == (root / layout).parent
    other = tmp_path / "other"  # a library with a packaging/ directory beside it: still left out
    for name in ("mylib", "packaging"):
        (other / name).mkdir(parents=True)
        (other / name / "__init__.py").write_text("")
    assert find_packages(other, "mylib") == (other, ("mylib",))
