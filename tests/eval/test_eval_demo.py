"""Demo task selection (no build): short prompts first, arms in turn, the big ones last; the shipped
replay set of published predictions (issue 37)."""

from __future__ import annotations

import dataclasses

import pytest

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


def test_the_shipped_replay_set_is_licensed_and_answers_tasks_the_demo_builds():
    """The published predictions the demo replays (issue 37) are package data with their MIT
    license and attribution beside them, name the family and source of their tasks, and are
    labelled as replayed (model ``replay/<stem>``)."""
    import json

    (replay,) = demo.demo_replays()
    assert replay.model == f"replay/{replay.file}" and replay.stem == "cruxeval-codellama-7b"
    folder = replay.file.parent.parent
    assert "MIT License" in (folder / "LICENSE").read_text() and replay.file.name in (folder / "README.md").read_text()
    lines = [json.loads(line) for line in replay.file.read_text().splitlines()]
    meta = json.loads(replay.file.with_suffix(".json").read_text())
    assert {line["id"] for line in lines} == set(meta["published_verdicts"]) and len(lines) == 60
    assert replay.family in registry.names() and "replayed" in replay.label


@pytest.mark.slow
def test_demo_replay_builds_its_tasks_and_grades_as_cruxeval_did(tmp_path, monkeypatch):
    """The demo's replay step for real: the tasks are built (sandbox), the file is played back
    through Inspect as ``replay/<stem>``, and every reply's grade equals CRUXEval's own published
    verdict on it (13 of 30 output and 12 of 30 input replies correct)."""
    import json

    from inspect_ai.log import read_eval_log
    from rich.console import Console

    from execbench.eval.commands import _demo_replays

    monkeypatch.setenv("EXECBENCH_CACHE_DIR", str(tmp_path / "cache"))
    console = Console(record=True, width=120)
    replays = demo.demo_replays()
    outcomes, code = _demo_replays(console, tmp_path / "demo", replays)
    assert code == 0, console.export_text()
    (outcome,) = outcomes
    assert outcome.replay["missing"] == 0 and outcome.replay["replies"] == 60
    log = read_eval_log(outcome.logs[0])
    assert log.eval.model == "replay/cruxeval-codellama-7b"
    verdicts = json.loads(replays[0].file.with_suffix(".json").read_text())["published_verdicts"]
    graded = {str(sample.id): bool(next(iter(sample.scores.values())).metadata["correct"]) for sample in log.samples}
    assert graded == verdicts
    assert sum(graded.values()) == 25
