"""Issue 33, principle 8: nothing a repo dataset holds depends on this machine. A rebuild of a
fixture package under another cache directory and another HOME is byte-identical (tasks and
rejections), and neither names a cache, home or temp path; pytest's node ids are relative to
the repository's root (``--rootdir``), whatever config the repository has."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
FIXTURE = Path(__file__).parent / "fixtures" / "minilib"


def build(work: Path, cache: Path, home: Path, out: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "EXECBENCH_CACHE_DIR": str(cache), "HOME": str(home), "COLUMNS": "200",
           "EXECBENCH_CHECK_SEEDS": "1", "EXECBENCH_LOCAL_ROOT": str(work)}
    env.pop("XDG_CACHE_HOME", None)
    result = subprocess.run([sys.executable, "-m", "execbench.cli", "build", "repo", "local:minilib", "-o", str(out),
                             "--jobs", "1"], capture_output=True, text=True, timeout=1800, env=env, cwd=work)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_a_rebuild_under_another_cache_and_home_is_byte_identical(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(FIXTURE, work / "minilib")
    build(work, tmp_path / "cache-one", tmp_path / "home-one", tmp_path / "one")
    build(work, tmp_path / "elsewhere" / "cache-two", tmp_path / "home-two", tmp_path / "two")
    for name in ("tasks.jsonl", "rejected.jsonl"):
        first, second = (tmp_path / "one" / name).read_bytes(), (tmp_path / "two" / name).read_bytes()
        assert first == second, name
        text = first.decode()
        for machine in (str(tmp_path), "cache-one", "home-one", sys.base_prefix, str(Path.home())):
            assert machine not in text, (name, machine)
    tasks = (tmp_path / "one" / "tasks.jsonl").read_text().splitlines()
    assert tasks and all('"repo/minilib-local-' in line for line in tasks)
    assert all('"test_id": "tests/test_core.py::' in line for line in tasks)
