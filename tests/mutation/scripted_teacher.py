"""A scripted stand-in teacher for the EDME tests (deterministic; no model).

Stage 1 replies come from ``probes`` (function name → reply texts, one per attempt);
stage 3 replies are built from the captured values the engine put in the prompt, so the
rebuilt assertions hold exactly when the engine captured the right values.
"""

from __future__ import annotations

import json
import re

from execbench.models.teacher import Reply


class ScriptedTeacher:
    name = "scripted/test"

    def __init__(self, probes: dict[str, list[str]], *, final_style: str = "assert") -> None:
        self.probes = probes
        self.final_style = final_style
        self.calls: list[list[tuple[str, str]]] = []

    async def generate(self, messages):
        self.calls.append(list(messages))
        system, user = messages[0][1], messages[1][1]
        if system.startswith("You rewrite"):
            name = re.search(r"Target function: (\w+)", user).group(1)
            replies = self.probes[name]
            attempt = sum(1 for role, _ in messages if role == "assistant")
            return Reply(replies[min(attempt, len(replies) - 1)], seconds=0.0)
        values = json.loads(user.split("\n", 1)[1].split("\n\nOriginal assertions", 1)[0])
        probed = user.split("```python\n", 1)[1].rsplit("```", 1)[0]
        lines = probed.splitlines()
        out, k = [], 0
        for line in lines:
            match = re.match(r"^(\s*)print\(f\"DEBUG_RESULT: \{(.*)\}\"\)\s*$", line)
            if match:
                literal = values[k]["instances"][0].get("literal")
                out.append(f"{match.group(1)}assert {match.group(2)} == {literal}")
                k += 1
            else:
                out.append(line)
        return Reply("```python\n" + "\n".join(out) + "\n```", seconds=0.0)


def register_inspect_provider(probes: dict[str, list[str]]) -> None:
    """Register the scripted teacher as the Inspect provider ``execbench-scripted/<any>``,
    so the engine's real path (``get_model(...).generate``) is exercised offline."""
    from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi

    script = ScriptedTeacher(probes)

    @modelapi(name="execbench-scripted")
    def _provider():
        class Scripted(ModelAPI):
            def __init__(self, model_name, base_url=None, api_key=None, config=None, **kwargs):
                super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

            async def generate(self, input, tools, tool_choice, config):  # Inspect's signature names `input`
                turns = [(m.role, m.text) for m in input]
                reply = await script.generate(turns)
                output = ModelOutput.from_content(self.model_name, reply.text)
                output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
                return output

        return Scripted

