"""Reproducible repo datasets: local checkouts stored relative to a declared root, stored
traces without run-dependent values (no sandbox needed)."""

from __future__ import annotations

from pathlib import Path

from execbench.families.repo.records import traces
from execbench.sources import repo_paths, repos


def test_local_checkouts_are_stored_relative_to_the_declared_root(tmp_path, monkeypatch):
    checkout = tmp_path / "work" / "mylib"
    checkout.mkdir(parents=True)
    monkeypatch.setenv(repo_paths.LOCAL_ROOT_ENV, str(tmp_path / "work"))
    assert repo_paths.portable(checkout) == "local:mylib"
    assert repo_paths.from_portable("local:mylib") == checkout.resolve()
    assert repos.parse_spec("local:mylib") == ("mylib", None, checkout.resolve())
    monkeypatch.setenv(repo_paths.LOCAL_ROOT_ENV, str(tmp_path / "elsewhere"))
    assert repo_paths.portable(checkout) == "local:../work/mylib"  # outside the root: relative all the same
    assert repo_paths.from_portable("local:../work/mylib").resolve() == checkout.resolve()


def test_stored_call_records_hold_no_run_dependent_values(tmp_path):
    root = tmp_path / "repo"
    calls = [{"id": 0, "parent": None, "func": "test_x", "file": str(root / "tests" / "test_x.py"),
              "firstlineno": 3, "depth": 0, "thread": 140234, "call_line": None, "args": {"b": "7", "a": "<X>"},
              "lines": [4, 5], "return": "-4412389", "exception": "KeyError(139872)", "resumes": 0}]
    (stored,) = traces.relative_calls(calls, root)
    assert stored["file"] == "tests/test_x.py" and stored["lines"] == [4, 5]
    assert stored["thread"] == 0 and stored["args"] == {"a": "", "b": ""}
    assert stored["return"] is None and stored["exception"] == "raised"
    other = [{**calls[0], "thread": 1, "return": "99", "exception": "KeyError(1)", "args": {"a": "1", "b": "2"}}]
    assert traces.relative_calls(other, Path(root)) == [stored]
