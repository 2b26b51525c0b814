"""State prompts (paper 001, appendix B), rendered from versioned templates.

The system message is the paper's template with the literal program (clean for the final
arms, instrumented for the state arms) and the literal input substituted; the user message
is "Return the requested prediction.". A single trailing newline of the program and of
the input is dropped for display (the closing tag goes on the next line either way).
Variants: ``direct`` (the paper's prompt) and ``cot`` (asks for step-by-step reasoning
before the same envelope). Each template file starts with ``{# version: N #}``.
"""

from __future__ import annotations

from pathlib import Path

from execbench.dataset import Task
from execbench.contract import Message, Prompt
from execbench.families.templates import PromptTemplates

TEMPLATES = PromptTemplates(Path(__file__).parent / "prompts")
VARIANTS = ("direct", "cot")
USER_MESSAGE = "Return the requested prediction."






def _display(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def render(task: Task, variant: str = "direct") -> Prompt:
    if variant not in VARIANTS:
        raise ValueError(f"unknown state prompt variant {variant!r}; known: {', '.join(VARIANTS)}")
    fields = task.prompt_fields
    text = TEMPLATES.render(variant, program=_display(fields["program"]), input=_display(fields["input"]))
    return Prompt([Message("system", text.strip() + "\n"), Message("user", USER_MESSAGE)],
                  template=f"state/{variant}", version=TEMPLATES.version(variant))
