"""``execbench build trace cruxeval``: CRUXEval's calls as line-trace tasks (the trace family's build)."""

from __future__ import annotations

import json

from execbench import registry
from execbench.families.build import build_dataset


def test_trace_cruxeval_traces_each_call(tmp_path):
    family = registry.get("trace")
    manifest = build_dataset(family, ["cruxeval"], tmp_path / "out", options=dict(family.default_options), limit=2)
    tasks = [json.loads(line) for line in (tmp_path / "out" / "tasks.jsonl").read_text().splitlines()]
    assert manifest["candidates"] == 2 and [t["id"] for t in tasks] == [
        "trace/cruxeval/sample_0/0#trace", "trace/cruxeval/sample_1/0#trace"]
    first = tasks[0]
    assert first["source_id"] == "cruxeval/sample_0"
    assert first["prompt_fields"]["call"] == "f([1, 1, 3, 1, 3, 1])"
    # def f(nums): / output = [] / for n in nums: / append / sort / return -- six items
    assert first["answer"] == [2] + [3, 4] * 6 + [3, 5, 6]
    assert first["metrics"]["trace_length"] == 16
