"""Repo datasets do not depend on where the builder's cache lives: the same package built
under two cache dirs gives the same content hash, and no task names either dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def build(cache, out):
    result = subprocess.run([sys.executable, "-m", "execbench.cli", "build", "repo", "pypi:inflection==0.5.1",
                             "-o", str(out), "--jobs", "2"], capture_output=True, text=True, timeout=900,
                            env={**os.environ, "EXECBENCH_CACHE_DIR": str(cache), "COLUMNS": "200",
                                 # one check seed for both builds: this test varies the cache dir only
                                 "EXECBENCH_CHECK_SEEDS": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "manifest.json").read_text())


def test_content_hash_does_not_depend_on_the_cache_dir(tmp_path):
    first = build(tmp_path / "cache-one", tmp_path / "one")
    second = build(tmp_path / "somewhere" / "else", tmp_path / "two")
    assert first["tasks"] > 0 and first["content_hash"] == second["content_hash"]
    text = (tmp_path / "one" / "tasks.jsonl").read_text()
    assert str(tmp_path) not in text and "cache-one" not in text
    task = json.loads(text.splitlines()[0])
    assert not os.path.isabs(task["prompt_fields"]["repo_root"])
    assert task["provenance"]["trace_ref"].startswith("traces/")
