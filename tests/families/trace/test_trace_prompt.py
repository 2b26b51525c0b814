"""Trace prompts: every variant renders, examples are real traces, versions are recorded."""

from __future__ import annotations

import pytest

from execbench.dataset import Task
from execbench.families.trace import prompt
from execbench.families.trace.grade import canonical_trace, extract_line_trace
from execbench.tracing import trace_calls


def task(program: str, call: str, **metrics) -> Task:
    return Task(id="trace/unit/p/0#trace", family="trace", arm="trace", source_id="unit/p", language="python",
                prompt_fields={"program": program, "call": call, "topic": "unit"}, answer=[1],
                answer_kind="lines", metrics=metrics, provenance={})


@pytest.mark.parametrize("example", [*prompt.EXAMPLES, prompt.CONCURRENT_EXAMPLE])
def test_example_answers_are_the_real_traces(example):
    program, call, answer = example
    run = trace_calls(program, [call])
    assert run.ok, run.reason()
    traced = run.value["calls"][0]["lines"]
    assert canonical_trace(traced) == canonical_trace(extract_line_trace(answer).trace)


@pytest.mark.parametrize("variant", list(prompt.VARIANTS))
def test_every_variant_renders_with_numbered_program_and_version(variant):
    rendered = prompt.render(task("def f(x):\n    return x\n", "f(2)"), variant)
    text = rendered.messages[0].content
    assert rendered.template == f"trace/{variant}" and rendered.version == "2"
    assert "`f(2)`" in text
    assert ("Line 2 | " if variant == "line" else "§L2 | " if variant == "symbols" else "2 |     return x") in text
    assert text.count("Example") == (3 if variant == "3-shot" else 1)
    assert "once per element taken from its iterable" in text  # the paper's comprehension convention
    assert ("Answer: [" in text.split("Now the task.")[1]) == (variant != "direct")


def test_concurrent_tasks_get_the_parenthesis_rule_and_example():
    text = prompt.render(task("x = 1\n", "f()", concurrent_segments=1), "direct").messages[0].content
    assert "concurrent segment" in text and "threading.Thread" in text
    plain = prompt.render(task("x = 1\n", "f()"), "direct").messages[0].content
    assert "concurrent segment" not in plain


def test_unknown_variant_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown trace prompt variant 'nope'"):
        prompt.render(task("x = 1\n", "f()"), "nope")


def test_number_lines_pads_to_the_widest_number():
    text = prompt.number_lines("\n".join(f"x{i} = {i}" for i in range(10)))
    assert text.splitlines()[0] == " 1 | x0 = 0" and text.splitlines()[9] == "10 | x9 = 9"
