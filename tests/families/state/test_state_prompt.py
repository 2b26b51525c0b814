"""State prompts: the paper's appendix-B template with the literal program and input."""

from __future__ import annotations

import pytest

from execbench.dataset import Task
from execbench.families.state import FAMILY
from execbench.families.state.prompt import TEMPLATES, USER_MESSAGE


def make_task(program: str, stdin: str) -> Task:
    return Task(id="state/s/c#short-trace-final", family="state", arm="short-trace-final", source_id="s/c",
                language="python", prompt_fields={"program": program, "input": stdin, "language": "python"},
                answer="9\n", answer_kind="text", metrics={}, provenance={})


def test_direct_prompt_is_the_papers_template():
    program = "x = {{ 1 }}  # jinja-looking text stays literal\nprint(x)\n"
    prompt = FAMILY.prompt(make_task(program, "5\n00110\n"), "direct")
    assert [m.role for m in prompt.messages] == ["system", "user"]
    assert prompt.messages[1].content == USER_MESSAGE == "Return the requested prediction."
    assert prompt.messages[0].content == (
        "Given the program and input below, determine the exact output.\n\n"
        "<program>\n" + program + "</program>\n\n"
        "<input>\n5\n00110\n</input>\n\n"
        'Respond in this format: {"output": "<exact text>"}\n')
    assert (prompt.template, prompt.version) == ("state/direct", "1")


def test_every_variant_has_a_versioned_template_and_the_envelope():
    for variant in FAMILY.variants:
        assert (TEMPLATES.directory / f"{variant}.jinja").read_text().startswith("{# version: ")
        prompt = FAMILY.prompt(make_task("print(1)", ""), variant)
        assert '{"output": "<exact text>"}' in prompt.messages[0].content
        assert prompt.template == f"state/{variant}"
    with pytest.raises(ValueError, match="unknown state prompt variant"):
        FAMILY.prompt(make_task("print(1)", ""), "nope")
