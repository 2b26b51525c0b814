"""Helpers for the eval tests: a synthetic trace dataset and a scripted, offline model.

The scripted provider (``execbench-test/scripted``) is registered with Inspect's
``@modelapi``; each test installs a ``script(call_number, prompt_text) -> ModelOutput``
(or raises to simulate a transport failure). It sets ``usage`` itself, so Inspect never
needs a tokenizer (``mockllm`` would download tiktoken's file, which fails offline).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable

from execbench.dataset import DatasetWriter, Task, make_id

PROGRAM = "def f(x):\n    y = x + 1\n    if y > 2:\n        y = 0\n    return y\n"


def answer_for(x: int) -> list[int]:
    return [2, 3, 4, 5] if x + 1 > 2 else [2, 3, 5]


def synthetic_task(index: int, x: int | None = None, family: str = "trace") -> Task:
    x = index if x is None else x
    answer = answer_for(x)
    return Task(id=make_id(family, "synthetic", f"f/{index}", "trace"), family=family, arm="trace",
                source_id="synthetic/f", language="python",
                prompt_fields={"program": PROGRAM, "call": f"f({x})", "topic": "synthetic"},
                answer=answer, answer_kind="lines", metrics={"trace_length": len(answer), "loc": 5},
                provenance={"synthetic": True})


def write_dataset(path: Path, n: int) -> Path:
    with DatasetWriter(path, settings={"synthetic": n}) as writer:
        for index in range(n):
            writer.add(synthetic_task(index))
        writer.close()
    return path


# -- the scripted model ---------------------------------------------------------------------------
_CALL = re.compile(r"Call: `f\((\d+)\)`")


def called_x(prompt: str) -> int:
    matches = _CALL.findall(prompt)
    return int(matches[-1])


class Script:
    """What the scripted model answers; counts calls (thread-safe)."""

    def __init__(self) -> None:
        self.handler: Callable[[int, str], Any] = lambda n, prompt: output(json.dumps(answer_for(called_x(prompt))))
        self.calls = 0
        self.prompts: list[str] = []
        self.max_tokens: dict[int, int | None] = {}  # x of the call -> the max_tokens it was sent with
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> Any:
        with self._lock:
            self.calls += 1
            number = self.calls
            self.prompts.append(prompt)
        return self.handler(number, prompt)


SCRIPT = Script()
_REGISTERED = False


def output(text: str, stop_reason: str = "stop", output_tokens: int | None = None, reasoning: str | None = None) -> Any:
    from inspect_ai.model import ContentReasoning, ContentText, ModelOutput, ModelUsage

    content: Any = text
    if reasoning is not None:
        content = [ContentReasoning(reasoning=reasoning), ContentText(text=text)]
    result = ModelOutput.from_content(model="scripted", content=content, stop_reason=stop_reason)
    tokens = len(text.split()) if output_tokens is None else output_tokens
    result.usage = ModelUsage(input_tokens=100, output_tokens=tokens, total_tokens=100 + tokens)
    return result


def register_scripted_model() -> None:
    """Register ``execbench-test/scripted`` with Inspect (imports Inspect; idempotent)."""
    global _REGISTERED
    if _REGISTERED:
        return
    _REGISTERED = True
    from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

    @modelapi(name="execbench-test")
    class ScriptedAPI(ModelAPI):
        def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                     config: GenerateConfig | None = None, **model_args: Any) -> None:
            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

        def should_retry(self, ex: Exception) -> bool:  # a scripted failure is final
            return False

        async def generate(self, input, tools, tool_choice, config):  # Inspect's signature names `input`
            prompt = "\n".join(message.text for message in input)
            if _CALL.search(prompt):
                SCRIPT.max_tokens[called_x(prompt)] = config.max_tokens
            return SCRIPT(prompt)


SCRIPTED = "execbench-test/scripted"


def reset_script() -> Script:
    SCRIPT.handler = lambda n, prompt: output(json.dumps(answer_for(called_x(prompt))))
    SCRIPT.calls = 0
    SCRIPT.prompts = []
    SCRIPT.max_tokens = {}
    return SCRIPT


def real_model_available() -> bool:
    from execbench.models import names as models

    try:
        models.default_gguf()
    except models.ModelError:
        return False
    import importlib.util

    return importlib.util.find_spec("xllamacpp") is not None


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false")


def tool_call(function: str, **arguments: Any) -> Any:
    """A scripted assistant turn that calls one tool."""
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolCall

    call = ToolCall(id=f"call-{function}-{len(arguments)}", function=function, arguments=arguments)
    message = ChatMessageAssistant(content="", tool_calls=[call])
    result = ModelOutput(model="scripted", choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    result.usage = ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105)
    return result


def write_repo_dataset(root: Path) -> Path:
    """A tiny repository and one repo task about it: assert double(21) == ___ (answer 42)."""
    repo = root / "minirepo"
    (repo / "minilib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "minilib" / "__init__.py").write_text("")
    (repo / "minilib" / "core.py").write_text("FACTOR = 2\n\n\ndef double(x):\n    return FACTOR * x\n")
    (repo / "tests" / "test_core.py").write_text("from minilib.core import double\n\n\ndef test_double():\n"
                                                 "    assert double(21) == 42\n")
    fields = {"masked_assertion": "assert double(21) == ___",
              "test_source": "def test_double():\n    assert double(21) == ___  # Question\n",
              "test_context": "from minilib.core import double", "input_parameters": "{}",
              "answer_form": "literal", "answer_type": "int", "library": "minilib", "package": "minilib",
              "version": "0.1", "repo_root": str(repo), "test_file": "tests/test_core.py",
              "function_file": "tests/test_core.py", "test_id": "tests/test_core.py::test_double",
              "function": "test_double", "assertion_line": 5}
    task = Task(id=make_id("repo", "minilib-0.1", "tests-test_core.py-test_double@L5", "masked-assertion"),
                family="repo", arm="masked-assertion", source_id="minilib-0.1/tests/test_core.py::test_double",
                language="python", prompt_fields=fields, answer="42", answer_kind="python-literal",
                metrics={"answer_chars": 2}, provenance={"synthetic": True})
    path = root / "repo-dataset"
    with DatasetWriter(path, settings={"synthetic": "repo"}) as writer:
        writer.add(task)
        writer.close()
    return path
