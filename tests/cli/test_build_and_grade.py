"""The execbench command line, run as a user runs it: a real subprocess per command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from execbench.dataset import read_tasks
from execbench.families.trace.build import render_trace


def execbench(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "execbench.cli", *args], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "200"}, timeout=900)
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "he"
    result = execbench("build", "trace", "humaneval", "-o", str(out), "--limit", "6", "--jobs", "2")
    assert "tasks from 6 candidates" in result.stderr
    return out


def write_answers(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_help_lists_the_commands():
    out = execbench("--help").stdout
    for command in ("build", "grade", "eval", "report", "demo"):
        assert command in out


def test_oracles_as_answers_score_one(dataset, tmp_path):
    tasks = list(read_tasks(dataset))
    write_answers(tmp_path / "a.jsonl", [
        {"id": t.id, "response": f"```python\n{render_trace(t.answer)}\n```"} for t in tasks])
    result = execbench("grade", str(dataset), "--answers", str(tmp_path / "a.jsonl"),
                       "-o", str(tmp_path / "r.jsonl"), "--json")
    summary = json.loads(result.stdout)
    trace = summary["families"]["trace"]
    assert summary["n"] == len(tasks) and summary["accuracy"] == 1.0
    assert trace["accuracy_mean"] == trace["accuracy_hard"] == trace["similarity"] == 1.0
    assert trace["false_similarity"] is None
    rows = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(rows) == len(tasks) and all(r["correct"] and r["status"] == "ok" for r in rows)


def test_one_line_dropped_scores_zero_with_high_similarity(dataset, tmp_path):
    tasks = [t for t in read_tasks(dataset) if len(t.answer) >= 10]
    assert tasks
    write_answers(tmp_path / "a.jsonl", [{"id": t.id, "response": str(t.answer[:-1])} for t in tasks])
    result = execbench("grade", str(dataset), "--answers", str(tmp_path / "a.jsonl"),
                       "-o", str(tmp_path / "r.jsonl"), "--json")
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())}
    graded = [rows[t.id] for t in tasks]
    assert not any(r["correct"] for r in graded)
    assert min(r["similarity"] for r in graded) >= 0.9
    summary = json.loads(result.stdout)
    # every task without a response is a wrong answer with status no_answer
    missing = [r for r in rows.values() if r["id"] not in {t.id for t in tasks}]
    assert all(r["status"] == "no_answer" and not r["correct"] for r in missing)
    assert summary["families"]["trace"]["no_answer"] == len(missing)


def test_garbage_and_unknown_ids_do_not_crash(dataset, tmp_path):
    first = next(iter(read_tasks(dataset)))
    write_answers(tmp_path / "a.jsonl", [{"id": first.id, "response": "I think it loops forever."},
                                         {"id": "trace/x/y#trace", "response": "[1]"}])
    result = execbench("grade", str(dataset), "--answers", str(tmp_path / "a.jsonl"))
    assert "1 answer names no task of the dataset: line 2: 'trace/x/y#trace'" in result.stderr  # with its line
    assert "accuracy" in result.stdout


def test_clear_errors_for_bad_input(tmp_path):
    result = execbench("build", "nope", "x", "-o", str(tmp_path / "o"), check=False)
    assert result.returncode == 2 and "unknown family 'nope'" in result.stderr
    result = execbench("build", "trace", str(tmp_path / "missing"), "-o", str(tmp_path / "o"), check=False)
    assert result.returncode == 2 and "neither a built-in trace corpus nor a directory" in result.stderr
    result = execbench("build", "trace", "humaneval", "-o", str(tmp_path / "o"), "--set", "bogus=1", check=False)
    assert result.returncode == 2 and "unknown option 'bogus'" in result.stderr
    result = execbench("grade", str(tmp_path), "--answers", str(tmp_path / "none.jsonl"), check=False)
    assert result.returncode == 2 and "error" in result.stderr


def test_build_help_names_every_family_and_source_kind():
    from execbench import registry

    out = execbench("build", "--help").stdout
    for name in registry.names():
        assert name in out
    for source in ("humaneval", "advanced", "networkx-simplex", "pypi:NAME==VERSION", "list:FILE", "default"):
        assert source in out
