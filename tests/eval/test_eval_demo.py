"""Demo task selection (no build): short prompts first, arms in turn, the big ones last."""

from __future__ import annotations

import dataclasses

from eval_support import synthetic_task
from execbench import registry
from execbench.eval import demo


def task(index: int, arm: str, program_chars: int):
    base = synthetic_task(index)
    fields = {**base.prompt_fields, "program": "x" * program_chars}
    return dataclasses.replace(base, id=f"{base.id}-{arm}", arm=arm, prompt_fields=fields)


def test_pick_takes_arms_in_turn_and_prefers_short_prompts():
    tasks = [task(0, "a", 100), task(1, "a", 50), task(2, "b", 300), task(3, "b", 9000), task(4, "c", 8000)]
    picked = demo._pick(tasks, 3)
    assert [t.arm for t in picked] == ["a", "b", "a"]  # c and the big b only if needed
    assert picked[0].prompt_fields["program"] == "x" * 50
    assert len(demo._pick(tasks, 5)) == 5 and demo._pick(tasks, 5)[-1].arm in ("b", "c")


def test_demo_sources_cover_the_trace_family():
    sources = demo.demo_sources()
    assert sources["trace"] == ("humaneval", "advanced")
    assert set(sources) <= set(registry.names())
