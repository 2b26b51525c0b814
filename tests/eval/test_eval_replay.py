"""`execbench eval --model replay/FILE.jsonl`: recorded replies played back through Inspect as a model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from eval_support import answer_for, synthetic_task
from execbench.analysis.logs import read_logs
from execbench.cli import app
from execbench.dataset import DatasetWriter

runner = CliRunner()


def write_replies(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def ids(dataset: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (dataset / "tasks.jsonl").read_text().splitlines()]


def test_replay_is_graded_logged_and_reported_like_a_live_model(dataset, tmp_path):
    task_ids = ids(dataset)
    lines: list[object] = [{"id": task_ids[0], "response": json.dumps(answer_for(0))},   # right
                           {"id": task_ids[1], "response": "[2, 3]"},                     # wrong
                           {"task_id": task_ids[2], "completion": json.dumps(answer_for(2))},  # EvalPlus keys
                           {"id": task_ids[3], "response": "I cannot tell."},             # no list: no answer
                           {"id": task_ids[4], "response": None}]                         # recorded empty
    replies = write_replies(tmp_path / "my-model.preds.jsonl", lines)  # task_ids[5]: no recorded reply
    logs = tmp_path / "logs"
    result = runner.invoke(app, ["eval", str(dataset), "--model", f"replay/{replies}", "--log-dir", str(logs)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "replayed 5 recorded replies" in said and "1 tasks had no recorded reply" in said
    logset = read_logs([logs])
    frame = logset.samples.set_index("task_id")
    assert set(frame["model"]) == {"replay/my-model.preds"}  # the file's stem
    assert len(frame) == 6 and list(frame.index).count(task_ids[0]) == 1
    assert frame.loc[task_ids[0], "correct"] and frame.loc[task_ids[2], "correct"]
    assert not frame.loc[task_ids[1], "correct"] and not frame.loc[task_ids[3], "correct"]
    assert frame.loc[task_ids[3], "response_status"] == "completed"
    assert frame.loc[task_ids[4], "response_status"] == "empty"
    assert frame.loc[task_ids[5], "response_status"] == "empty"
    assert frame.loc[task_ids[5], "replay"] == "missing" and frame.loc[task_ids[4], "replay"] == "recorded"
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(next(logs.glob("*.eval"))))
    assert log.eval.model == "replay/my-model.preds"
    record = log.eval.metadata["execbench_run"]["replay"]
    assert record["replies"] == 5 and record["missing"] == 1 and record["missing_ids"] == [task_ids[5]]
    by_id = {str(s.id): s for s in log.samples or []}
    assert by_id[task_ids[5]].output.metadata == {"replay": "missing", "line": None}
    assert by_id[task_ids[1]].output.completion == "[2, 3]" and by_id[task_ids[1]].output.metadata["line"] == 2

    out = tmp_path / "report.html"
    report = runner.invoke(app, ["report", str(logs), "-o", str(out)])
    assert report.exit_code == 0, report.output
    assert "my-model" in out.read_text()


def test_replay_applies_the_variant_and_keeps_duplicate_prompts_apart(tmp_path):
    dataset = tmp_path / "dups"
    with DatasetWriter(dataset, settings={"synthetic": 2}) as writer:
        writer.add(synthetic_task(0, x=4))
        writer.add(synthetic_task(1, x=4))  # the same call: the same prompt, another id
        writer.close()
    first, second = ids(dataset)
    reasoning = "y becomes 5, so the branch runs.\nFinal answer: "
    replies = write_replies(tmp_path / "cot.jsonl", [{"id": first, "response": reasoning + json.dumps(answer_for(4))},
                                                    {"id": second, "response": reasoning + "[2, 3, 5]"}])
    logs = tmp_path / "logs"
    result = runner.invoke(app, ["eval", str(dataset), "--model", f"replay/{replies}", "--variant", "cot",
                                 "--log-dir", str(logs)])
    assert result.exit_code == 0, result.output
    frame = read_logs([logs]).samples.set_index("task_id")
    assert set(frame["variant"]) == {"cot"} and set(frame["template"]) != {None}
    assert frame.loc[first, "correct"] and not frame.loc[second, "correct"]


def _exit_and_error(args: list[str]) -> tuple[int, list[str]]:
    proc = subprocess.run([sys.executable, "-c", "from execbench.cli import main; main()", *args], capture_output=True, text=True, timeout=300)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return proc.returncode, lines


def test_replay_files_that_cannot_be_played_are_usage_errors(dataset, tmp_path):
    task_ids = ids(dataset)
    cases = {
        "foreign": ([{"id": task_ids[0], "response": "[1]"}, {"id": "trace/other/f/9#trace", "response": "[1]"}],
                    ["not tasks of this dataset", "'trace/other/f/9#trace' (line 2)"]),
        "duplicate": ([{"id": task_ids[0], "response": "[1]"}, {"id": task_ids[1], "response": "[1]"},
                       {"id": task_ids[0], "response": "[2]"}], ["line 3:", "again (first on line 1)"]),
        "malformed": ([{"id": task_ids[0], "response": "[1]"}, "{not json"], ["line 2:", "not valid JSON"]),
        "no-response": ([{"id": task_ids[0]}], ["line 1:", "no response key"]),
        "not-text": ([{"id": task_ids[0], "response": [1, 2]}], ["must be a string"]),
    }
    for name, (lines, messages) in cases.items():
        replies = write_replies(tmp_path / f"{name}.jsonl", lines)
        result = runner.invoke(app, ["eval", str(dataset), "--model", f"replay/{replies}",
                                     "--log-dir", str(tmp_path / "logs")])
        assert result.exit_code == 2, (name, result.output)
        said = "".join(result.output.split())
        assert "Traceback" not in result.output
        for message in messages:
            assert "".join(message.split()) in said, (name, message, result.output)
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").glob("*.eval"))
    code, lines = _exit_and_error(["eval", str(dataset), "--model", f"replay/{tmp_path / 'foreign.jsonl'}",
                                   "--log-dir", str(tmp_path / "logs")])
    assert code == 2 and sum(line.startswith("error:") for line in lines) == 1, lines
    code, lines = _exit_and_error(["eval", str(dataset), "--model", f"replay/{tmp_path / 'absent.jsonl'}"])
    assert code == 2 and any("no such replay file" in line for line in lines), lines


def test_a_changed_replay_file_is_replayed_again_in_the_same_log_dir(dataset, tmp_path):
    """An eval set reruns nothing that succeeded: the file's hash is a task argument, so an edited file
    with the same name is a new task, and the report keeps the latest run."""
    first = ids(dataset)[0]
    replies = write_replies(tmp_path / "m.jsonl", [{"id": first, "response": "[9]"}])
    logs = tmp_path / "logs"
    args = ["eval", str(dataset), "--model", f"replay/{replies}", "--log-dir", str(logs)]
    assert runner.invoke(app, args).exit_code == 0
    assert not read_logs([logs]).samples.set_index("task_id").loc[first, "correct"]
    time.sleep(1.1)  # the report keeps the later eval by creation time, recorded to the second
    write_replies(replies, [{"id": first, "response": json.dumps(answer_for(0))}])
    assert runner.invoke(app, args).exit_code == 0
    assert len(list(logs.glob("*.eval"))) == 2
    assert read_logs([logs]).samples.set_index("task_id").loc[first, "correct"]
