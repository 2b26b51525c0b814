"""Dataset records and directories: validation on write and read, streaming, crash safety, cache."""

from __future__ import annotations

import json

import pytest

from execbench.dataset import DatasetError, DatasetWriter, Task, read_manifest, read_rejected, read_tasks
from execbench.dataset.cache import BuildCache, content_key


def make_task(case: str = "p/0", answer=None) -> Task:
    return Task(
        id=f"trace/unit/{case}#trace",
        family="trace",
        arm="trace",
        source_id="unit/p",
        language="python",
        prompt_fields={"program": "x = 1\n", "call": "f()"},
        answer=answer if answer is not None else [1, 2],
        answer_kind="lines",
        metrics={"trace_length": 2},
        provenance={},
    )


def test_round_trip_manifest_and_rejections(tmp_path):
    with DatasetWriter(tmp_path / "ds", settings={"k": 1}) as writer:
        writer.add(make_task("p/0"))
        writer.add(make_task("p/1", [[3, 4], 5]))
        writer.reject("unit/q", "boom", stage="execution", run="g()")
        manifest = writer.close()
    tasks = list(read_tasks(tmp_path / "ds"))
    assert [t.id for t in tasks] == ["trace/unit/p/0#trace", "trace/unit/p/1#trace"]
    assert tasks[1].answer == [[3, 4], 5]
    assert manifest == read_manifest(tmp_path / "ds")
    assert manifest["tasks"] == 2 and manifest["tasks_by_arm"] == {"trace/trace": 2}
    assert manifest["rejected_by_stage"] == {"execution": 1}
    assert manifest["content_hash"].startswith("sha256:")
    assert list(read_rejected(tmp_path / "ds")) == [
        {"candidate": "unit/q", "reason": "boom", "stage": "execution", "run": "g()"}
    ]


def test_same_tasks_give_same_content_hash(tmp_path):
    hashes = []
    for name in ("a", "b"):
        with DatasetWriter(tmp_path / name, settings={}) as writer:
            writer.add(make_task())
            hashes.append(writer.close()["content_hash"])
    assert hashes[0] == hashes[1]


def test_writer_refuses_invalid_and_duplicate_tasks(tmp_path):
    with DatasetWriter(tmp_path / "ds", settings={}) as writer:
        writer.add(make_task())
        with pytest.raises(DatasetError, match="duplicate"):
            writer.add(make_task())
        bad = make_task("p/2")
        bad.arm = "post-loop-state"
        with pytest.raises(DatasetError, match="does not agree with family/arm"):
            writer.add(bad)


def test_a_crashed_build_leaves_no_dataset(tmp_path):
    with pytest.raises(RuntimeError):
        with DatasetWriter(tmp_path / "ds", settings={}) as writer:
            writer.add(make_task())
            raise RuntimeError("crash")
    assert not (tmp_path / "ds" / "tasks.jsonl").exists()
    with pytest.raises(DatasetError, match="not a dataset directory"):
        list(read_tasks(tmp_path / "ds"))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('{"id": 1}', "line 2: missing fields"),
        (json.dumps({**make_task().to_json(), "id": "nope"}), "line 2: id 'nope' is not of the form"),
        (json.dumps({**make_task().to_json(), "metrics": {"x": "big"}}), "line 2: metric 'x' must be a number"),
        (json.dumps({**make_task().to_json(), "family": "dance"}), "line 2: id .* does not agree with family/arm"),
    ],
)
def test_reading_a_malformed_line_names_it(tmp_path, line, message):
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(make_task("p/9").to_json()) + "\n" + line + "\n")
    with pytest.raises(DatasetError, match=message):
        list(read_tasks(path))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "dance/unit/p/0#trace", "family": "dance"}, "unknown family 'dance'"),
        ({"id": "trace/unit/p/0#steps", "arm": "steps"}, "arm 'steps' is not an arm of family 'trace'"),
        ({"answer_kind": "json"}, "answer_kind 'json' is not an answer kind of trace/trace"),
        ({"answer_kind": "made-up"}, "answer_kind 'made-up' is not an answer kind of trace/trace"),
    ],
)
def test_the_families_layer_checks_family_arm_and_answer_kind(tmp_path, change, message):
    """The dataset layer checks structure; a caller that knows the families passes their arm check in
    (dependency inversion: dataset sits below families and cannot import them; no global hook, issue 36)."""
    from execbench import registry
    from execbench.dataset import arms_check

    plugins_check = arms_check({f.name: f.arms for f in registry.registered()})
    for check in (registry.check_record, plugins_check):
        with pytest.raises(DatasetError, match=message):
            Task.from_json({**make_task().to_json(), **change}, check)
        Task.from_json(make_task().to_json(), check)  # a record the trace family declares passes
    Task.from_json({**make_task().to_json(), **change})  # without a check: the structure only
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({**make_task().to_json(), **change}) + "\n")
    assert len(list(read_tasks(path))) == 1
    with pytest.raises(DatasetError, match=message):
        list(read_tasks(path, registry.check_record))


def test_build_cache_round_trip_and_disabled(tmp_path):
    cache = BuildCache(tmp_path / "c.sqlite")
    key = content_key("trace", "1", {"program": "x"})
    assert cache.get(key) is None
    cache.put(key, {"tasks": [1]})
    assert cache.get(key) == {"tasks": [1]}
    assert (cache.hits, cache.misses) == (1, 1)
    cache.close()
    assert BuildCache(tmp_path / "c.sqlite").get(key) == {"tasks": [1]}
    assert BuildCache(enabled=False).get(key) is None
    assert content_key("a", {"x": 1, "y": 2}) == content_key("a", {"y": 2, "x": 1})


def test_a_dataset_without_tasks_says_why(tmp_path):
    with DatasetWriter(tmp_path / "ds", settings={}) as writer:
        writer.reject("boltons-25.0.0/tests/test_x.py", "collection_failed: TypeError: hook", stage="execution")
        writer.reject("boltons-25.0.0/tests/test_y.py", "collection_failed: TypeError: hook", stage="execution")
        manifest = writer.close()
    assert manifest["rejected_by_reason"] == {"execution: collection_failed": 2}
    assert manifest["zero_tasks_reason"] == "execution: collection_failed (2)"
    with DatasetWriter(tmp_path / "empty", settings={}) as writer:
        assert "nothing was built" in writer.close()["zero_tasks_reason"]
