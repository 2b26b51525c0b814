"""Fixtures for the eval tests (helpers live in eval_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_support import Script, register_scripted_model, reset_script, write_dataset


@pytest.fixture
def dataset(tmp_path) -> Path:
    """Six trace tasks on one small function: f(0) .. f(5)."""
    return write_dataset(tmp_path / "synthetic", 6)


@pytest.fixture(autouse=True)
def _inspect_isolation(monkeypatch, tmp_path):
    """No display; a fresh response cache and default log dir per test (still under tmp)."""
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "default-logs"))
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))


@pytest.fixture
def script() -> Script:
    """The scripted Inspect model (``execbench-test/scripted``), reset for this test."""
    register_scripted_model()
    return reset_script()
