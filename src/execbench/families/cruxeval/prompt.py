"""Cruxeval prompts, rendered from versioned templates (``prompts/``).

Variants: ``direct`` and ``cot`` (execbench's wording: the program in a fenced block, the
answer as the completed assertion ``assert f(...) == ...``), and ``cruxeval``: CRUXEval's
own chain-of-thought prompt, one-shot, ending in ``[THOUGHT]`` for the model to continue,
the answer in ``[ANSWER]`` tags (byte-identical to the prompts of CRUXEval's published
generations; a test checks it). One user message; its template name and version go into
every log.
"""

from __future__ import annotations

from pathlib import Path

from execbench.dataset import Task
from execbench.families.base import Message, Prompt
from execbench.families.templates import PromptTemplates

TEMPLATES = PromptTemplates(Path(__file__).parent / "prompts")
VARIANTS = ("direct", "cot", "cruxeval")


def render(task: Task, variant: str = "direct") -> Prompt:
    if variant not in VARIANTS:
        raise ValueError(f"unknown cruxeval prompt variant {variant!r}; known: {', '.join(VARIANTS)}")
    fields = task.prompt_fields
    text = TEMPLATES.render(variant, arm=task.arm, program=fields["program"], input=fields.get("input"),
                            call=fields.get("call"), output=fields.get("output"))
    if variant != "cruxeval":
        text = text.strip() + "\n"
    return Prompt([Message("user", text)], template=f"cruxeval/{variant}", version=TEMPLATES.version(variant))
