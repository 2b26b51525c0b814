"""Cruxeval prompts: the ``cruxeval`` variant is byte-identical to the prompts of CRUXEval's
published generations; ``direct``/``cot`` show the program and ask for the completed assertion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from execbench import registry
from execbench.dataset import Task
from execbench.sources import cruxeval as source

REFERENCE = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "cruxeval"
MODEL = "qwen2.5-coder-1.5b-base"


def _tasks(problem: source.Problem) -> dict[str, Task]:
    common = dict(source_id=f"cruxeval/{problem.id}", language="python", answer_kind="python-literal",
                  metrics={}, provenance={})
    return {
        "output": Task(id=f"cruxeval/cruxeval/{problem.id}#output-prediction", family="cruxeval",
                       arm="output-prediction", answer=problem.output, **common,
                       prompt_fields={"program": problem.code, "input": problem.input, "call": problem.call}),
        "input": Task(id=f"cruxeval/cruxeval/{problem.id}#input-prediction", family="cruxeval",
                      arm="input-prediction", answer=problem.input, **common,
                      prompt_fields={"program": problem.code, "output": problem.output}),
    }


@pytest.mark.skipif(not REFERENCE.exists(), reason=f"CRUXEval reference material not found at {REFERENCE}")
@pytest.mark.parametrize("mode", ["output", "input"])
def test_cruxeval_variant_is_the_prompt_of_the_published_generations(mode):
    generations = json.loads((REFERENCE / f"{MODEL}.{mode}-cot.generations.json").read_text())
    family = registry.get("cruxeval")
    problems, _ = source.read()
    for problem in problems:
        prompt = family.prompt(_tasks(problem)[mode], "cruxeval")
        (message,) = prompt.messages
        assert generations[problem.id][0].startswith(message.content), problem.id
        assert message.content.endswith("[/PYTHON]\n[THOUGHT]\n")
    assert prompt.template == "cruxeval/cruxeval" and prompt.version == "1"


def test_direct_and_cot_prompts():
    problem = source.read()[0][3]
    family = registry.get("cruxeval")
    tasks = _tasks(problem)
    for variant in ("direct", "cot"):
        out = family.prompt(tasks["output"], variant).messages[0].content
        assert problem.code in out and f"assert {problem.call} == ??\n" in out
        inp = family.prompt(tasks["input"], variant).messages[0].content
        assert problem.code in inp and f"assert f(??) == {problem.output}\n" in inp
        assert problem.input not in inp  # the recorded input is not shown
        # the one-shot example's reply is what the grader accepts
        example = out.split("Reply: ", 1)[1].split("\n", 1)[0]
        assert example == "assert f(16) == [16, 17]"
    assert "step by step" in family.prompt(tasks["output"], "cot").messages[0].content
    with pytest.raises(ValueError, match="unknown cruxeval prompt variant"):
        family.prompt(tasks["output"], "3-shot")
