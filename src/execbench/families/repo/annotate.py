"""Difficulty labels (RepoReason §4.2): an annotator model labels each task Easy, Medium or
Hard from the task text alone. Without an annotator no label is written (never guessed).

The model is called through Inspect AI's model API, imported lazily inside :func:`annotate`
(``import inspect_ai`` costs seconds). The paper's appendix I prompt is not in our copy of
the paper; :data:`RUBRIC` restates its §4.2 rubric.
"""

from __future__ import annotations

import re
from typing import Any

LABELS = ("Easy", "Medium", "Hard")
RUBRIC = """You are grading how hard a code-reasoning task is for an AI model.
The task: predict the value that fills the blank '___' in a unit-test assertion of the Python library {library}.

Classify the task by AI reasoning complexity:
- Easy: basic Python knowledge, direct code reading, minimal state tracking.
- Medium: non-trivial API behavior, simple state mutations, control flow loops.
- Hard: deep domain knowledge, multi-layer dependencies, extensive state tracking, or metaprogramming.

Test function (the blank marked '# Question'):
```python
{test_source}```
Blank assertion: {blank}
Correct answer: {answer}

Reply with exactly one word: Easy, Medium or Hard."""


def annotation_prompt(task: dict[str, Any]) -> str:
    fields = task["prompt_fields"]
    return RUBRIC.format(library=fields.get("library", ""), test_source=fields["test_source"],
                         blank=fields["masked_assertion"], answer=task["answer"])


def parse_label(text: str) -> str | None:
    found = re.findall(r"\b(Easy|Medium|Hard)\b", text or "", re.I)
    return found[-1].capitalize() if found else None


def annotate(task: dict[str, Any], model_name: str) -> str | None:
    """Ask ``model_name`` (``PROVIDER/MODEL``, any Inspect AI provider) for a label; None if
    the reply names no label."""
    import asyncio

    from inspect_ai.model import GenerateConfig, get_model  # lazy: only when annotating

    model = get_model(model_name, config=GenerateConfig(temperature=0.0, max_tokens=16))

    async def ask() -> str:
        output = await model.generate(annotation_prompt(task))
        return output.completion

    return parse_label(asyncio.run(ask()))
