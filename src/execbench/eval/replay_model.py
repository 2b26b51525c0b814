"""The Inspect model provider ``replay``: plays back recorded replies (imports Inspect).

``replay/<name>`` with the model argument ``file`` (``-M file=PATH`` for ``inspect eval``;
``execbench eval --model replay/PATH.jsonl`` sets it) answers each sample with the reply its
file records for the sample's id (:mod:`execbench.eval.replay`), and an empty reply when it
records none. The sample id comes from Inspect's active sample, so duplicate prompts (the
same call traced twice) keep their own replies. No tokens are counted (usage is absent, so
nothing is downloaded) and no request leaves the process.

Registered when imported (:func:`execbench.eval.run.run_eval` and the ``inspect_ai`` entry
point import it).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.log._samples import sample_active  # the one way a provider learns its sample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from execbench.eval.replay import Replies, ReplayError, read_replies

PROVIDER = "replay"
MISSING, RECORDED = "missing", "recorded"


@modelapi(name=PROVIDER)
class ReplayAPI(ModelAPI):
    """Answers from a replay file (module doc)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, file: str | None = None, sha256: str | None = None,
                 **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if not file:
            raise ReplayError(f"model replay/{model_name} needs its file: -M file=PATH.jsonl "
                              "(execbench eval --model replay/PATH.jsonl sets it)")
        self.replies: Replies = read_replies(file)
        if sha256 is not None and sha256 != self.replies.sha256:
            raise ReplayError(f"{file} changed after it was checked (sha256 {self.replies.sha256[:12]}, "
                              f"expected {sha256[:12]}): run the command again")

    def max_connections(self) -> int:
        return 64  # nothing is sent anywhere: the limit only paces Inspect's own work

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        active = sample_active()
        if active is None or active.sample.id is None:
            raise ReplayError("the replay model answers samples of an eval, and this call has none")
        key = str(active.sample.id)
        text = self.replies.replies.get(key)
        output = ModelOutput.from_content(model=f"{PROVIDER}/{self.model_name}", content=text or "")
        output.metadata = {"replay": RECORDED if text is not None else MISSING,
                           "line": self.replies.lines.get(key)}
        return output
