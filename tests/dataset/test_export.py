"""``execbench export``: Parquet + dataset card that Hugging Face ``datasets`` loads, and
that ``execbench grade`` reads back as the same tasks (same content hash, same grades)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from execbench.dataset import DatasetError, Task, read_manifest, read_tasks
from execbench.dataset.export import ExportInput, read_export_tasks, write_export
from execbench.dataset.manifest import task_line

pytestmark = pytest.mark.slow


def execbench(*args: str, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "execbench.cli", *args], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "200"}, timeout=900, cwd=cwd)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    execbench("build", "trace", "humaneval", "-o", str(root / "he"), "--limit", "5", "--jobs", "2")
    execbench("build", "state", "classic", "-o", str(root / "classic"), "--limit", "3", "--jobs", "2")
    execbench("build", "repo", "pypi:toolz==1.2.0", "-o", str(root / "toolz"), "--limit", "1", "--jobs", "2")
    sets = [root / "he", root / "classic", root / "toolz"]
    assert all(list(read_tasks(path)) for path in sets)
    execbench("export", *map(str, sets), "-o", str(root / "hf"))
    return root, sets


def _hash(tasks) -> str:
    digest = hashlib.sha256()
    for task in tasks:
        digest.update(task_line(task.to_json()))
    return "sha256:" + digest.hexdigest()


def test_export_reads_back_as_the_same_tasks(built):
    root, sets = built
    original = [task for path in sets for task in read_tasks(path)]
    exported = list(read_tasks(root / "hf"))
    assert [t.to_json() for t in exported] == [t.to_json() for t in original]
    assert read_manifest(root / "hf")["content_hash"] == _hash(original)


def test_one_dataset_keeps_its_content_hash(built, tmp_path):
    root, sets = built
    execbench("export", str(sets[1]), "-o", str(tmp_path / "one"))
    assert read_manifest(tmp_path / "one")["content_hash"] == read_manifest(sets[1])["content_hash"]
    assert read_manifest(tmp_path / "one")["settings"] == read_manifest(sets[1])["settings"]


def test_huggingface_datasets_loads_every_config(built, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    root, sets = built
    for var in ("HF_HOME", "HF_DATASETS_CACHE"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    marker = json.loads((root / "hf" / "execbench-export.json").read_text())
    original = {t.id: t for path in sets for t in read_tasks(path)}
    assert {"trace-trace", "state-short-trace-final", "state-inside-loop-state", "repo-masked-assertion"} \
        <= set(marker["configs"])
    seen = 0
    for name, config in marker["configs"].items():
        rows = datasets.load_dataset(str(root / "hf"), name, split="test", cache_dir=str(tmp_path / "cache"))
        assert len(rows) == config["rows"]
        for row in rows:
            task = original[row["id"]]
            for column in ("family", "arm", "source_id", "language", "answer_kind"):
                assert row[column] == getattr(task, column)
            for column in ("prompt_fields", "answer", "metrics", "provenance"):
                value = json.loads(row[column]) if column in config["json_columns"] else row[column]
                assert value == getattr(task, column), (name, column)
            seen += 1
    assert seen == len(original)
    card = (root / "hf" / "README.md").read_text()
    assert card.startswith("---\n") and "config_name: \"trace-trace\"" in card
    assert marker["content_hash"] in card
    assert "| `trace/humaneval` | MIT (HumanEval" in card and "| `state/classic` | Apache-2.0" in card
    assert "| `repo/toolz-1.2.0` | BSD-3-Clause (toolz 1.2.0) |" in card


def test_grading_the_export_equals_grading_the_originals(built, tmp_path):
    root, sets = built
    tasks = [t for path in sets for t in read_tasks(path)]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": t.id, "response": json.dumps(t.answer) if t.answer_kind != "text"
                                           else t.answer}) + "\n" for t in tasks))
    by_dir = []
    for path in sets:
        execbench("grade", str(path), "--answers", str(answers), "-o", str(tmp_path / f"{path.name}.jsonl"))
        by_dir += (tmp_path / f"{path.name}.jsonl").read_text().splitlines()
    execbench("grade", str(root / "hf"), "--answers", str(answers), "-o", str(tmp_path / "hf.jsonl"))
    from_export = (tmp_path / "hf.jsonl").read_text().splitlines()
    assert sorted(from_export) == sorted(by_dir) and len(from_export) == len(tasks)
    assert any(json.loads(line)["correct"] for line in from_export)


def test_mixed_types_fall_back_to_json_text_and_ids_must_be_unique(tmp_path):
    def task(case: str, answer) -> Task:
        return Task(id=f"trace/demo/{case}#trace", family="trace", arm="trace", source_id="demo",
                    language="python", prompt_fields={"n": 1} if case == "a" else {"m": 2.5},
                    answer=answer, answer_kind="lines", metrics={"x": 1})
    tasks = [task("a", [1, 2, [3, 4]]), task("b", [1])]
    marker = write_export([ExportInput("d", tasks)], tmp_path / "hf", licenses={})
    # keys that differ, a list mixing ints and lists, and empty objects (Parquet has no empty struct)
    assert marker["configs"]["trace-trace"]["json_columns"] == ["prompt_fields", "answer", "provenance"]
    assert [t.to_json() for t in read_export_tasks(tmp_path / "hf")] == [t.to_json() for t in tasks]
    with pytest.raises(DatasetError, match="more than one"):
        write_export([ExportInput("d", tasks), ExportInput("e", tasks[:1])], tmp_path / "again", licenses={})
    assert not (tmp_path / "again").exists()
