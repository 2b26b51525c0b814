"""Trace prompts (CoCoNUT §III-B, §V-B, appendix C), rendered from versioned templates.

Variants: ``direct`` and ``cot`` (one-shot), and the alternatives of CoCoNUT table III:
``static-analysis``, ``3-shot`` (adds a recursive and a nested-call example), ``symbols``
and ``line`` (other line annotations; CoT instructions). Each template file starts with
``{# version: N #}``; the name and version go into every log. The examples' answers are
checked against the real tracer by the tests.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from execbench.dataset import Task
from execbench.contract import Message, Prompt
from execbench.families.templates import PromptTemplates
from execbench.families.trace import coconut

TEMPLATES = PromptTemplates(Path(__file__).parent / "prompts")


@dataclass(frozen=True)
class Variant:
    template: str
    annotation: str = "number"  # "number": "12 | code", "line": "Line 12 | code", "symbols": "§L12 | code"
    examples: int = 1


VARIANTS = {
    "direct": Variant("direct"),
    "cot": Variant("cot"),
    "static-analysis": Variant("static-analysis"),
    "3-shot": Variant("3-shot", examples=3),
    "symbols": Variant("cot", annotation="symbols"),
    "line": Variant("cot", annotation="line"),
}

# (program, call, answer); the answers are real traces (see tests/families/trace/test_trace_prompt.py).
EXAMPLES = [
    ("def absolute_sum(xs):\n    total = 0\n    for x in xs:\n        if x < 0:\n            x = -x\n"
     "        total += x\n    return total\n", "absolute_sum([3, -1])", "[2, 3, 4, 6, 3, 4, 5, 6, 3, 7]"),
    ("def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n", "fact(3)", "[2, 4, 2, 4, 2, 3]"),
    ("def square(x):\n    return x * x\n\n\ndef sum_squares(n):\n    total = 0\n    for i in range(n):\n"
     "        total += square(i)\n    return total\n", "sum_squares(2)", "[6, 7, 8, 2, 7, 8, 2, 7, 9]"),
]
CONCURRENT_EXAMPLE = (
    "import threading\n\n\ndef work(out, k):\n    out.append(k * k)\n\n\ndef run(n):\n    out = []\n"
    "    threads = [threading.Thread(target=work, args=(out, i)) for i in range(n)]\n"
    "    for t in threads:\n        t.start()\n    for t in threads:\n        t.join()\n    return sorted(out)\n",
    "run(2)",
    "[9, 10, 10, 10, 10, 11, 12, (5, 5, 11, 11, 12, 13, 13, 14, 14), 13, 15]",
)


def number_lines(program: str, annotation: str = "number") -> str:
    lines = program.splitlines()
    width = len(str(len(lines)))
    label = {"number": "{n:>{w}}", "line": "Line {n:>{w}}", "symbols": "§L{n:>{w}}"}[annotation]
    return "\n".join(f"{label.format(n=n, w=width)} | {line}".rstrip() for n, line in enumerate(lines, 1))






def render(task: Task, variant: str = "direct") -> Prompt:
    if variant in coconut.VARIANTS:
        return _render_coconut(task, variant)
    try:
        spec = VARIANTS[variant]
    except KeyError:
        raise ValueError(f"unknown trace prompt variant {variant!r}; known: {', '.join(VARIANTS)}") from None
    fields = task.prompt_fields
    concurrent = task.metrics.get("concurrent_segments", 0) or fields.get("topic") == "concurrency"
    chosen = [CONCURRENT_EXAMPLE] if concurrent else []
    chosen += EXAMPLES[: spec.examples - len(chosen)] if spec.examples > len(chosen) else []
    examples = [{"program": number_lines(p, spec.annotation), "call": c, "answer": a} for p, c, a in chosen]
    text = TEMPLATES.render(
        spec.template,
        program=number_lines(fields["program"], spec.annotation),
        call=fields.get("call"),
        stdin=fields.get("stdin"),
        concurrent=bool(concurrent),
        examples=examples,
    )
    return Prompt([Message("user", text.strip() + "\n")], template=f"trace/{variant}",
                  version=TEMPLATES.version(spec.template))


@functools.lru_cache(maxsize=4)
def _coconut_prompts(repo: str | None) -> dict[str, str]:
    return coconut.read_prompts(repo)


def _render_coconut(task: Task, variant: str) -> Prompt:
    """The paper's prompt (``coconut.prompt_text``), read from the clone ``$EXECBENCH_COCONUT_REPO``.

    ``coconut``: its prompt for the task's topic. The HumanEval prompt is the chain-of-thought
    one (the only HumanEval prompt the authors published); ``coconut-direct`` renders the
    advanced topics' prompt (which asks for the list only) and refuses HumanEval tasks."""
    fields = task.prompt_fields
    topic = fields.get("topic") or "humaneval"
    if variant == coconut.DIRECT_VARIANT and coconut.PROMPT_KEYS.get(topic) == "HumanEval":
        raise ValueError("the CoCoNUT authors did not publish their direct HumanEval prompt (prompts.py holds the "
                         "chain-of-thought one): render HumanEval tasks with --variant coconut; "
                         "coconut-direct grades replies to a direct prompt as written")
    prompts = _coconut_prompts(os.environ.get(coconut.REPO_ENV))
    text = coconut.prompt_text(fields["program"], topic, fields.get("call"), fields.get("entry_point"), prompts)
    return Prompt([Message("user", text)], template=f"trace/{variant}", version="0b964d7")
