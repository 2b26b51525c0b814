"""Difficulty labels for repo tasks (`execbench build repo ... --annotator MODEL`): one pass over
a finished dataset through Inspect's model API, here with the scripted model."""

from __future__ import annotations

import pytest

from eval_support import SCRIPTED, output, write_repo_dataset
from execbench.contract import Annotator
from execbench.dataset import read_manifest, read_tasks
from execbench.families.repo.annotate import annotate_dataset, annotation_prompt


def test_labels_are_recorded_with_the_annotator_and_replaced_by_a_later_pass(tmp_path, script):
    dataset = write_repo_dataset(tmp_path)
    before = read_manifest(dataset)
    script.handler = lambda n, prompt: output("Reasoning: one call, one multiplication. Label: Easy")
    manifest = annotate_dataset(dataset, SCRIPTED)
    (task,) = read_tasks(dataset)
    assert task.provenance["difficulty"] == {"label": "Easy", "annotator": SCRIPTED}
    assert task.metrics["difficulty"] == 1 and task.answer == "42"
    assert manifest["annotation"]["labels"] == {"Easy": 1} and manifest["annotation"]["errors"] == 0
    assert manifest["settings"] == {**before["settings"], "annotator": SCRIPTED}
    assert manifest["content_hash"] != before["content_hash"] and manifest["tasks"] == 1
    assert "assert double(21) == ___" in script.prompts[0] and "Correct answer: 42" in script.prompts[0]
    assert script.prompts[0].strip() == annotation_prompt(task.to_json()).strip()

    script.handler = lambda n, prompt: output("I cannot tell.")  # no label: none is guessed
    assert annotate_dataset(dataset, SCRIPTED)["annotation"]["labels"] == {"Easy": 1}  # the response cache
    manifest = annotate_dataset(dataset, SCRIPTED, cache=False)
    (task,) = read_tasks(dataset)
    assert "difficulty" not in task.provenance and "difficulty" not in task.metrics
    assert manifest["annotation"]["labels"] == {"none": 1}


def test_build_refuses_the_annotator_for_other_families(tmp_path):
    from typer.testing import CliRunner

    from execbench.cli import app

    result = CliRunner().invoke(app, ["build", "trace", "humaneval", "-o", str(tmp_path / "x"),
                                      "--annotator", "openai/gpt-4o"])
    assert result.exit_code == 2 and "--annotator labels repo tasks only" in result.output


def test_failed_requests_change_nothing(tmp_path, script):
    dataset = write_repo_dataset(tmp_path)
    before = read_manifest(dataset)

    def fail(n, prompt):
        raise RuntimeError("provider down")
    script.handler = fail
    with pytest.raises(ValueError, match="every request .* failed .*provider down"):
        annotate_dataset(dataset, SCRIPTED, cache=False)
    assert read_manifest(dataset) == before


def test_the_build_command_reports_the_labels(tmp_path, script, monkeypatch):
    from rich.console import Console

    from execbench import cli
    from execbench import registry

    dataset = write_repo_dataset(tmp_path)
    monkeypatch.setattr(cli, "console", Console(record=True, width=120))
    script.handler = lambda n, prompt: output("Medium")
    declared = registry.get("repo").capability(Annotator)
    assert declared is not None
    cli._annotate(dataset, SCRIPTED, declared.annotate())
    text = cli.console.export_text()
    assert "difficulty labels (execbench-test/scripted)" in text and "labels: Medium 1 in " in text
