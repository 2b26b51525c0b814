"""Local server settings that need no model: port choice, threads, the client environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from execbench.models.names import LocalModel
from execbench.models.server import PORT_RANGE, LocalServer, ServerError, default_threads, preferred_port


def test_preferred_port_is_stable_and_in_range():
    assert preferred_port("747cb1f019") == preferred_port("747cb1f019")
    assert PORT_RANGE[0] <= preferred_port("ffffffffff") < PORT_RANGE[1]
    assert preferred_port("00000001ab") != preferred_port("00000002ab")


def test_threads_follow_the_cores_or_the_override(monkeypatch):
    monkeypatch.delenv("EXECBENCH_LOCAL_THREADS", raising=False)
    assert 1 <= default_threads() <= 8
    monkeypatch.setenv("EXECBENCH_LOCAL_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("EXECBENCH_LOCAL_THREADS", "many")
    with pytest.raises(ServerError, match="EXECBENCH_LOCAL_THREADS"):
        default_threads()


def test_environment_is_set_for_the_block_only(monkeypatch):
    monkeypatch.setenv("LOCAL_API_KEY", "users-own")
    monkeypatch.delenv("LOCAL_BASE_URL", raising=False)
    server = LocalServer(LocalModel(Path("/m.gguf"), "local", "0123456789", 1))
    server.address = "http://127.0.0.1:1234"  # as if started
    with server.environment() as values:
        assert os.environ["LOCAL_BASE_URL"] == "http://127.0.0.1:1234/v1" == values["LOCAL_BASE_URL"]
        assert os.environ["LOCAL_API_KEY"] == server.api_key != "users-own"
    assert os.environ["LOCAL_API_KEY"] == "users-own" and "LOCAL_BASE_URL" not in os.environ
    assert server.slot_context >= 512 and server.parallel == 1
