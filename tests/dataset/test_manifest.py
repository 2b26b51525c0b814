"""The typed manifest and the one content hash: the writer, the export and a recomputation agree."""

from __future__ import annotations

import hashlib
import json

import pytest

from dataset.test_store import make_task
from execbench.dataset import (MANIFEST_VERSION, DatasetError, DatasetWriter, Manifest, content_hash, load_manifest,
                               read_manifest, read_tasks)
from execbench.dataset.export import ExportInput, write_export


def _write(directory, tasks, **extra):
    with DatasetWriter(directory, settings={"family": "trace"}) as writer:
        for task in tasks:
            writer.add(task)
        return writer.close(**extra)


def test_the_writer_records_the_hash_of_its_lines_and_a_version(tmp_path):
    manifest = _write(tmp_path / "ds", [make_task("p/0"), make_task("p/1", ["é", 2])], candidates=2)
    lines = (tmp_path / "ds" / "tasks.jsonl").read_bytes()
    assert manifest["content_hash"] == "sha256:" + hashlib.sha256(lines).hexdigest()
    assert manifest["content_hash"] == content_hash(read_tasks(tmp_path / "ds"))
    typed = load_manifest(tmp_path / "ds")
    assert typed is not None and typed.manifest_version == MANIFEST_VERSION == manifest["manifest_version"]
    assert typed.tasks == 2 and typed.extra == {"candidates": 2}
    assert typed.to_json() == manifest == read_manifest(tmp_path / "ds")


def test_the_export_uses_the_same_hash(tmp_path):
    pytest.importorskip("pyarrow")
    tasks = [make_task("p/0"), make_task("p/1", [[3, 4], 5])]
    manifest = _write(tmp_path / "ds", tasks)
    marker = write_export([ExportInput("ds", tasks, manifest)], tmp_path / "hf", licenses={})
    assert marker["content_hash"] == manifest["content_hash"] == content_hash(read_tasks(tmp_path / "hf"))


def test_a_manifest_before_versions_reads_as_version_0_and_keeps_its_fields():
    old = {"content_hash": "sha256:00", "tasks": 0, "settings": {}, "zero_tasks_reason": "none",
           "cache": {"hits": 1, "misses": 0}}
    typed = Manifest.from_json(old)
    assert typed.manifest_version == 0 and typed.extra == {"zero_tasks_reason": "none", "cache": {"hits": 1, "misses": 0}}
    assert {k: v for k, v in typed.to_json().items() if k in old} == old
    assert json.loads(json.dumps(typed.to_json())) == typed.to_json()


@pytest.mark.parametrize("data", [[], {"tasks": 1}, {"content_hash": 3, "tasks": 1}, {"content_hash": "x", "tasks": "1"}])
def test_what_is_not_a_manifest_is_refused(data):
    with pytest.raises(DatasetError):
        Manifest.from_json(data)


def test_the_hash_depends_on_order_and_content():
    a, b = make_task("p/0"), make_task("p/1")
    assert content_hash([a, b]) != content_hash([b, a])
    assert content_hash([a]) != content_hash([make_task("p/0", [1, 3])])
    assert content_hash([]) == "sha256:" + hashlib.sha256(b"").hexdigest()


def test_the_dataset_format_page_names_every_field_the_code_writes():
    """docs/dataset-format.md matches the code: its task-record table lists exactly the record's
    fields, and its manifest table every named field of ``Manifest`` (issue 36)."""
    from dataclasses import fields
    from pathlib import Path

    from execbench.dataset import Task

    page = (Path(__file__).resolve().parents[2] / "docs" / "dataset-format.md").read_text(encoding="utf-8")
    record_section = page.split("## `tasks.jsonl`", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip().strip("`") for line in record_section.splitlines()
            if line.startswith("| `")]
    assert rows == [f.name for f in fields(Task)]
    manifest_section = page.split("## `manifest.json`", 1)[1].split("\n## ", 1)[0]
    named = {word for line in manifest_section.splitlines() if line.startswith("| `")
             for word in line.split("|")[1].replace("`", "").replace(",", " ").split()}
    assert {f.name for f in fields(Manifest)} - {"extra"} <= named
