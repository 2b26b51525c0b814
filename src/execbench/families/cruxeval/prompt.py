"""Cruxeval prompts, rendered from versioned templates (``prompts/``).

Variants: ``direct`` and ``cot`` (execbench's wording: the program in a fenced block, the
answer as the completed assertion ``assert f(...) == ...``), and ``cruxeval``: CRUXEval's
own chain-of-thought prompt, one-shot, ending in ``[THOUGHT]`` for the model to continue,
the answer in ``[ANSWER]`` tags (byte-identical to the prompts of CRUXEval's published
generations; a test checks it). One user message; its template name and version go into
every log. The checkpoint arms (``inside-loop-state``, ``post-loop-state``) use
``state-direct`` / ``state-cot`` (the program with line numbers, the loop's line, iteration
K and the variables; a JSON object as the answer); CRUXEval has no such arm, so its
variant renders them as ``state-direct``.
"""

from __future__ import annotations

from pathlib import Path

from execbench.dataset import Task
from execbench.contract import Message, Prompt
from execbench.families.templates import PromptTemplates

TEMPLATES = PromptTemplates(Path(__file__).parent / "prompts")
VARIANTS = ("direct", "cot", "cruxeval")


def number_lines(program: str) -> str:
    lines = program.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{n:>{width}} | {line}".rstrip() for n, line in enumerate(lines, 1))


def render(task: Task, variant: str = "direct") -> Prompt:
    if variant not in VARIANTS:
        raise ValueError(f"unknown cruxeval prompt variant {variant!r}; known: {', '.join(VARIANTS)}")
    fields = task.prompt_fields
    if task.arm in ("inside-loop-state", "post-loop-state"):
        name = "state-cot" if variant == "cot" else "state-direct"  # CRUXEval has no such arm: direct
        names = ", ".join(f"`{field}`" for field in fields["fields"])
        example = "{" + ", ".join(f'"{field}": ...' for field in fields["fields"]) + "}"
        text = TEMPLATES.render(name, arm=task.arm, program=number_lines(fields["program"]), call=fields["call"],
                                names=names, example=example, loop_line=fields["loop_line"],
                                inside_iteration=fields["inside_iteration"])
        return Prompt([Message("user", text.strip() + "\n")], template=f"cruxeval/{name}",
                      version=TEMPLATES.version(name))
    text = TEMPLATES.render(variant, arm=task.arm, program=fields["program"], input=fields.get("input"),
                            call=fields.get("call"), output=fields.get("output"))
    if variant != "cruxeval":
        text = text.strip() + "\n"
    return Prompt([Message("user", text)], template=f"cruxeval/{variant}", version=TEMPLATES.version(variant))
