"""Test-wide isolation: caches and Inspect/matplotlib state go to a temp dir, never ~."""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile

import pytest

_ROOT = tempfile.mkdtemp(prefix="execbench-tests-")
for var, sub in {
    "EXECBENCH_CACHE_DIR": "execbench-cache",
    "INSPECT_CACHE_DIR": "inspect-cache",
    "XDG_CACHE_HOME": "xdg-cache",
    "XDG_DATA_HOME": "xdg-data",
    "XDG_CONFIG_HOME": "xdg-config",
    "XDG_STATE_HOME": "xdg-state",
    "MPLCONFIGDIR": "mpl",
}.items():
    os.environ[var] = os.path.join(_ROOT, sub)
    os.makedirs(os.environ[var], exist_ok=True)
os.environ.setdefault("INSPECT_LOG_DIR", os.path.join(_ROOT, "inspect-logs"))


def _remove_root() -> None:
    """Remove this process's test root at exit (each xdist worker has its own), read-only entries included."""
    def writable_then_retry(function, path, _exc_info) -> None:
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
            function(path)
        except OSError:
            pass  # left for the system's temp cleaning: never fail a test run over it

    shutil.rmtree(_ROOT, onerror=writable_then_retry)


atexit.register(lambda: _remove_root() if os.path.isdir(_ROOT) else None)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh, empty execbench cache dir for one test."""
    path = tmp_path / "cache"
    monkeypatch.setenv("EXECBENCH_CACHE_DIR", str(path))
    return path


# Modules that start the local llama.cpp server run on one xdist worker, one after another:
# the server's port is derived from the model (a stable port is what lets a rerun hit
# Inspect's response cache), so two servers at once would push one to another port.
_ONE_LOCAL_SERVER_AT_A_TIME = {
    "tests/eval/test_eval_local.py",
    "tests/models/test_model_server.py",
    "tests/mutation/test_edme.py",
    "tests/report/test_report_layout.py",
}


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent with -n 0
def pytest_xdist_make_scope(nodeid: str) -> str:
    """loadscope's unit of scheduling: the module, except the local-server modules (one unit)."""
    module = nodeid.split("::", 1)[0]
    return "local-model-server" if module in _ONE_LOCAL_SERVER_AT_A_TIME else module
