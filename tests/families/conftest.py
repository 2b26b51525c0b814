"""Fixtures shared by the family tests: builds of shipped corpora that several tests check."""

from __future__ import annotations

import fcntl
import json
import os
import shutil

import pytest


@pytest.fixture(scope="session")
def shipped_state_classic(tmp_path_factory):
    """(manifest, dataset dir) of the state family's classic corpus, built once per test run
    with the default options: the pinned-hash test (test_shipped_corpora.py) and the
    independent C++ oracle (state/test_state_cpp_oracle.py) both check this one build.

    The two modules may run on different xdist workers (``--dist loadscope``), each with its
    own session: the build goes to the directory the workers share (the parent of a
    worker's base temp dir), under a file lock, and the second worker reads it."""
    from execbench import registry
    from execbench.families.build import build_dataset

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = root / "shipped-state-classic"
    with open(root / "shipped-state-classic.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes
        if not (done / "manifest.json").is_file():
            plugin = registry.get("state")
            building = root / f"shipped-state-classic.{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            build_dataset(plugin, ["classic"], building, options=dict(plugin.default_options), jobs=2)
            building.rename(done)   # whole, or not there (a failed build is tried again)
    return json.loads((done / "manifest.json").read_text()), done
