"""Teacher models for LLM mutation, reached through Inspect AI's model API.

    with open_teacher("openai/gpt-4o", settings) as teacher:      # any Inspect provider
        reply = await teacher.generate([("system", "..."), ("user", "...")])
    with open_teacher("local", settings) as teacher: ...          # llama.cpp + SmolLM2, offline

``local`` and ``local/PATH.gguf`` start execbench's in-process llama.cpp server
(:class:`execbench.models.server.LocalServer`) for the duration of the block. Inspect is
imported lazily, on the first request. Replies are text only: the caller parses them with
``ast`` and runs them only in the sandbox.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Iterator, Protocol, Sequence

Turn = tuple[str, str]  # (role, content): "system" | "user" | "assistant"


@dataclass
class Reply:
    text: str
    error: str | None = None
    seconds: float = 0.0
    output_tokens: int | None = None
    stop_reason: str | None = None


class Teacher(Protocol):
    name: str

    async def generate(self, messages: Sequence[Turn]) -> Reply: ...


class InspectTeacher:
    """Generation through ``inspect_ai.model.get_model(name).generate`` (any provider)."""

    def __init__(self, name: str, *, temperature: float = 0.7, max_tokens: int = 16384, seed: int | None = None,
                 cache: bool = True, timeout: int | None = None, label: str | None = None) -> None:
        self.name = label or name
        self.model_name = name
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.cache = cache
        self.timeout = timeout
        self._model: Any = None

    def _get(self) -> Any:
        if self._model is None:
            from inspect_ai.model import GenerateConfig, get_model

            config = GenerateConfig(temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed,
                                    timeout=self.timeout, max_retries=2)
            self._model = get_model(self.model_name, config=config)
        return self._model

    async def generate(self, messages: Sequence[Turn]) -> Reply:
        from inspect_ai.model import CachePolicy, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

        roles = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
        started = time.perf_counter()
        try:
            model = self._get()
            output = await model.generate([roles[role](content=content) for role, content in messages],
                                          cache=CachePolicy(expiry=None) if self.cache else False)
        except Exception as exc:  # noqa: BLE001 - a failed request is recorded as the attempt's error
            return Reply("", error=f"{type(exc).__name__}: {exc}"[:1000], seconds=time.perf_counter() - started)
        usage = getattr(output, "usage", None)
        error = getattr(output, "error", None)
        return Reply(output.completion or "", error=str(error)[:1000] if error else None,
                     seconds=time.perf_counter() - started,
                     output_tokens=getattr(usage, "output_tokens", None) if usage else None,
                     stop_reason=getattr(output, "stop_reason", None))


LOCAL_MAX_TOKENS = 1024  # SmolLM2's context is 8k per slot: prompt + reply must fit


@contextlib.contextmanager
def open_teacher(name: str, *, temperature: float = 0.7, max_tokens: int = 16384, seed: int | None = None,
                 cache: bool = True, local_max_tokens: int = LOCAL_MAX_TOKENS,
                 parallel: int = 1) -> Iterator[InspectTeacher]:
    """A ready teacher for ``name``; a local GGUF model is served for the block's duration."""
    from execbench.models import names as models

    model = models.resolve(name)
    if isinstance(model, models.ReplayModel):
        raise models.ModelError(f"{name}: a replay file answers an eval's tasks by id; it cannot be a teacher")
    if isinstance(model, models.LocalModel):
        from execbench.models.server import LocalServer

        with LocalServer(model, parallel=parallel) as server, server.environment():
            yield InspectTeacher(model.inspect_name, temperature=temperature,
                                 max_tokens=min(max_tokens, local_max_tokens), seed=seed, cache=cache,
                                 timeout=900, label=name)
    else:
        yield InspectTeacher(model.inspect_name, temperature=temperature, max_tokens=max_tokens, seed=seed,
                             cache=cache)
