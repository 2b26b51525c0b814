"""Reading real Inspect logs (written offline by the execbench eval task) into the table."""

import json
import shutil

import pandas as pd
import pytest

from analysis.inspect_fixture import CALLS, FACT, LOOP, shared_logs
from execbench.analysis.logs import LogReadError, read_logs
from execbench.eval.logs import SAMPLE_RECORD_VERSION, SampleRecordVersionError
from execbench.dataset import content_hash, read_tasks
from execbench.families.trace.prompt import TEMPLATES
from execbench.families.trace.taxonomy import classify


@pytest.fixture(scope="module")
def logset():
    logs, _ = shared_logs()
    return read_logs([logs])


def test_every_sample_becomes_a_row(logset):
    df = logset.samples
    assert len(df) == 2 * len(CALLS)
    assert set(df["family"]) == {"trace"} and set(df["arm"]) == {"trace"}
    assert set(df["model"]) == {"ebtest/scripted"}
    assert sorted(set(df["setting"])) == ["scripted · direct · T=0", "scripted · direct · T=1"]
    assert set(df["source_id"]) == {"toy/loop", "toy/fact"}
    assert set(df["template"]) == {"trace/direct"}
    assert set(df["template_version"]) == {TEMPLATES.version("direct")}  # what the log recorded, as rendered
    assert df["dataset_hash"].str.startswith("sha256:").all()
    assert df["execbench_version"].notna().all()


def test_grades_completion_and_extraction_come_through(logset):
    df = logset.samples[logset.samples["setting"].str.endswith("T=0")].set_index("task_id")
    by_call = {call: df.loc[f"trace/toy/{'loop' if program is LOOP else 'fact'}/{i}#trace"]
               for i, (call, (program, _, _)) in enumerate(CALLS.items())}
    assert by_call["f([3])"]["correct"] and by_call["f([3])"]["similarity"] == 1.0
    assert not by_call["f([0])"]["correct"] and 0 < by_call["f([0])"]["similarity"] < 1
    assert json.loads(by_call["f([0])"]["extracted"]) == [2, 4, 8, 4, 9]
    assert json.loads(by_call["f([0])"]["oracle"]) == [2, 4, 5, 8, 4, 9]
    assert not by_call["fact(3)"]["completed"]                    # empty response: excluded from C/R
    assert by_call["fact(1)"]["completed"] and by_call["fact(1)"]["status"] == "truncated"
    assert by_call["fact(1)"]["stop_reason"] == "max_tokens"
    assert by_call["f([3])"]["output_tokens"] > 0
    assert by_call["f([3])"]["trace_length"] == 6 and by_call["f([3])"]["loc"] == 8


def test_program_text_is_joined_from_the_dataset(logset):
    df = logset.samples
    assert set(df["program"]) == {LOOP, FACT}
    assert set(df["topic"]) == {"toy"} and set(df["mode"]) == {"calls"}
    wrong = df[df["completed"] & ~df["correct"] & df["setting"].str.endswith("T=0")]
    cats = sorted(classify(p, o, e, s) for p, o, e, s in zip(wrong["program"], wrong["oracle"], wrong["extracted"],
                                                                wrong["status"]))
    assert cats == ["condition skip", "definition call", "no exit", "nonsense line"]


def test_program_is_recovered_from_the_prompt_when_the_dataset_is_gone(tmp_path):
    logs, dataset = shared_logs()
    copy = tmp_path / "logs"
    shutil.copytree(logs, copy)
    moved = tmp_path / "moved-dataset"
    shutil.copytree(dataset, moved)
    hidden = dataset.with_name("hidden")
    dataset.rename(hidden)
    try:
        without = read_logs([copy])
        assert set(without.samples["program"].str.rstrip()) == {LOOP.rstrip(), FACT.rstrip()}
        assert without.samples["mode"].isna().all()       # only the dataset knows the mode
        joined = read_logs([copy], datasets=[moved])
        assert set(joined.samples["mode"]) == {"calls"}
    finally:
        hidden.rename(dataset)


def test_program_from_prompt_needs_a_complete_numbered_listing():
    from execbench import registry
    from execbench.contract import Slices

    rules = registry.get("trace").capability(Slices)
    assert rules is not None
    _program_from_prompt = rules.program_from_prompt
    prompt = "Example:\n```\n1 | def g():\n2 |     return 1\n```\nNow the task.\n```\n1 | x = 1\n2 |\n3 | y = x\n```\n"
    assert _program_from_prompt(prompt) == "x = 1\n\ny = x\n"
    assert _program_from_prompt("```\n1 | a\n3 | b\n```") is None


def test_missing_path_is_an_error(tmp_path):
    with pytest.raises(LogReadError):
        read_logs([tmp_path / "nope"])


def test_settings_separate_temperatures_and_mutated_tasks():
    from execbench.analysis.logs import assign_settings

    frame = pd.DataFrame({"model": ["openai/gpt-x", "openai/gpt-x", "openai/gpt-x", "other/m"],
                          "variant": ["cot", "cot", "cot", "direct"], "temperature": [0.0, 1.0, 0.0, None],
                          "original_id": [None, None, "repo/a/b#masked-assertion", None]})
    out = assign_settings(frame)
    assert list(out["setting"]) == ["gpt-x · cot · T=0", "gpt-x · cot · T=1", "gpt-x · cot · T=0 · mutated",
                                    "m · direct"]
    assert list(out["run"]) == ["gpt-x · cot · T=0", "gpt-x · cot · T=1", "gpt-x · cot · T=0", "m · direct"]


def test_state_and_repo_records_map_onto_the_schema():
    from execbench.analysis.logs import _join_dataset, row_from_records
    from execbench.dataset import Task

    eval_info = {"temperature": 0.0, "metadata": {"execbench": {
        "version": "0.1.0", "variant": "direct", "dataset": {"name": "d", "content_hash": "sha256:ab", "path": "/x"},
        "prompts": {"state": [{"template": "state/direct", "version": "2"}]}}}}
    grade = {"correct": False, "status": "bad_envelope", "extracted": None, "similarity": None, "completed": True,
             "response_status": "completed", "stop_reason": "stop", "output_tokens": 12}
    state = row_from_records(eval_info, {
        "version": SAMPLE_RECORD_VERSION, "id": "state/classic/kmp#long-trace-final", "epoch": 1, "target": "\"42\"",
        "metadata": {"family": "state", "arm": "long-trace-final", "source_id": "classic/kmp", "language": "python",
                     "metrics": {"trace_length": 5000, "peak_state": 12, "state_load": 40000, "cyclomatic": 7}},
        "scores": {"execbench_scorer": {"value": "I", "metadata": grade}}}, "m", "log.eval", "e1")
    assert (state["family"], state["arm"], state["source_id"]) == ("state", "long-trace-final", "classic/kmp")
    assert (state["trace_length"], state["peak_state"], state["state_load"]) == (5000, 12, 40000)
    assert (state["template"], state["template_version"]) == ("state/direct", "2")
    assert state["completed"] and not state["correct"] and state["status"] == "bad_envelope"
    repo = row_from_records(eval_info, {
        "version": SAMPLE_RECORD_VERSION, "id": "repo/toolz/t1#masked-assertion", "epoch": 1, "target": "\"3\"",
        "metadata": {"family": "repo", "arm": "masked-assertion", "source_id": "toolz-1.2.0/tests/t.py::f",
                     "metrics": {"esv": 59, "mcl": 35, "dfi": 3, "difficulty": 3, "slice_files": 2}},
        "scores": {"s": {"value": "C", "metadata": {**grade, "correct": True, "status": "ok"}}}}, "m", "log", "e1")
    assert (repo["esv"], repo["mcl"], repo["dfi"]) == (59, 35, 3)
    assert repo["difficulty"] == "hard" and repo["scope"] == "cross-file" and repo["correct"]
    frame = pd.DataFrame([repo])
    task = Task(id=repo["task_id"], family="repo", arm="masked-assertion", source_id="toolz-1.2.0/tests/t.py::f",
                language="python", prompt_fields={"library": "toolz"}, answer="3", answer_kind="python-literal",
                provenance={"original_id": "repo/toolz-orig/t1#masked-assertion"})
    joined = _join_dataset(frame, {task.id: task})
    assert joined.loc[0, "repository"] == "toolz"
    assert joined.loc[0, "original_id"] == "repo/toolz-orig/t1#masked-assertion"
    # one versioned record passes from eval to analysis: another layout is refused, never guessed at
    for version in (None, SAMPLE_RECORD_VERSION + 1):
        with pytest.raises(SampleRecordVersionError, match=f"version {version!r}"):
            row_from_records(eval_info, {"version": version, "id": "repo/toolz/t1#masked-assertion"},
                             "m", "log", "e1")


def test_a_dataset_edited_after_its_build_is_noted(tmp_path):
    """Analysis recomputes a dataset's content hash (the one ``dataset.content_hash``) instead of
    trusting its manifest: a hand-edited tasks.jsonl is noted, the log's hash is what eval computed."""
    logs, dataset = shared_logs()
    assert set(read_logs([logs]).samples["dataset_hash"]) == {content_hash(read_tasks(dataset))}
    edited = tmp_path / "edited"
    shutil.copytree(dataset, edited)
    lines = (edited / "tasks.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["answer"] = [*first["answer"], 1]
    (edited / "tasks.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    notes = read_logs([logs], datasets=[edited]).notes
    assert [n for n in notes if n.startswith(f"dataset {edited}: its tasks hash to")], notes
    assert not [n for n in read_logs([logs], datasets=[dataset]).notes if "its tasks hash to" in n]
