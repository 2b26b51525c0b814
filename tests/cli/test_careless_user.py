"""Issue 34: a careless user never corrupts a dataset or a score. Each test runs the real
command line (a subprocess, as a user runs it) on the mistake the issue names and checks
what the user sees: one `error:` line and exit 2, a rejection with its reason, or an
honest exit 1, and that nothing of the user's was overwritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from execbench.dataset import read_manifest, read_rejected, read_tasks
from execbench.families.trace.build import render_trace
from execbench.usererror import INTERRUPTED


def execbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "execbench.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=600)


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def assert_user_error(result: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, exactly one `error:` line holding ``words``, no traceback; returns the line."""
    lines = error_lines(result)
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout and "internal error" not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def case(root: Path, name: str, body: str, program: str = "def f(x):\n    return x + 1\n") -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    (directory / "p.py").write_text(program)
    (directory / "case.toml").write_text(body)
    return directory


GOOD = 'id = "{id}"\nlanguage = "python"\nsource = "p.py"\ncalls = ["f(1)", "f(2)"]\n'


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("careless")
    case(root / "cases", "good", GOOD.format(id="good"))
    out = root / "ds"
    result = execbench("build", "trace", str(root / "cases"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    return out


# -- 1. case.toml: types, unknown keys, duplicate ids ------------------------------------------

def test_calls_as_a_string_is_that_cases_rejection_not_characters(tmp_path):
    case(tmp_path / "cases", "good", GOOD.format(id="good"))
    case(tmp_path / "cases", "stringy", 'id = "stringy"\nlanguage = "python"\nsource = "p.py"\ncalls = "f(1)"\n')
    result = execbench("build", "trace", str(tmp_path / "cases"), "-o", str(tmp_path / "ds"))
    assert result.returncode == 0, result.stderr
    assert {t.source_id for t in read_tasks(tmp_path / "ds")} == {"cases/good"}  # none from the characters
    [rejection] = read_rejected(tmp_path / "ds")
    assert rejection["candidate"] == "cases/stringy" and rejection["stage"] == "source"
    assert rejection["reason"] == ("key 'calls' must be a non-empty list of strings, not a string ('f(1)'); "
                                   'write calls = ["f(1)"]')


def test_an_unknown_key_is_named_with_the_closest_known_one(tmp_path):
    case(tmp_path / "cases", "typo", 'id = "typo"\nlanguage = "python"\nsource = "p.py"\ncals = ["f(1)"]\n')
    result = execbench("build", "trace", str(tmp_path / "cases"), "-o", str(tmp_path / "ds"))
    assert result.returncode == 1  # nothing admitted
    [rejection] = read_rejected(tmp_path / "ds")
    assert rejection["reason"].startswith("unknown key 'cals': did you mean 'calls'? expected one of calls, id,")


def test_two_case_directories_with_one_id_stop_the_build_before_it_runs(tmp_path):
    case(tmp_path / "cases", "a", GOOD.format(id="same"))
    case(tmp_path / "cases", "b", GOOD.format(id="same"))
    result = execbench("build", "trace", str(tmp_path / "cases"), "-o", str(tmp_path / "ds"))
    line = assert_user_error(result, "two case directories have the id 'same'")
    assert str(tmp_path / "cases" / "a") in line and str(tmp_path / "cases" / "b") in line
    assert not (tmp_path / "ds" / "tasks.jsonl").exists() and "build trace:" not in result.stderr


# -- 3. honest exits ------------------------------------------------------------------------

def test_a_build_that_admits_nothing_exits_1_with_reasons_by_stage_not_paths(tmp_path):
    case(tmp_path / "cases", "a", 'id = "a"\nlanguage = "python"\nsource = "missing.py"\ncalls = ["f(1)"]\n')
    case(tmp_path / "cases", "b", 'id = "b"\nlanguage = "python"\n')
    result = execbench("build", "trace", str(tmp_path / "cases"), "-o", str(tmp_path / "ds"))
    assert result.returncode == 1, result.stderr
    [summary] = [line for line in result.stderr.splitlines() if line.startswith("no task admitted")]
    assert summary == ("no task admitted from 2 candidates; rejections by stage: source 2 (file 'missing.py' "
                       "named in case.toml does not exist ×1; missing key 'source' (a string) ×1)")
    assert str(tmp_path) not in json.dumps(read_manifest(tmp_path / "ds")["rejected_by_reason"])


def test_a_malformed_state_case_is_a_rejection_too(tmp_path):
    directory = case(tmp_path / "cases", "s", 'id = "s"\nlanguage = "python"\nsource = "p.py"\n'
                                              'short_input = "short.txt"\nlong_input = "long.txt"\nchekpoint = 3\n')
    (directory / "short.txt").write_text("1\n")
    (directory / "long.txt").write_text("2\n")
    result = execbench("build", "state", str(tmp_path / "cases"), "-o", str(tmp_path / "ds"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    [rejection] = read_rejected(tmp_path / "ds")
    assert rejection["stage"] == "source" and "unknown key 'chekpoint': did you mean 'checkpoint'?" \
        in rejection["reason"]


def test_an_edited_dataset_is_refused_by_grade_eval_and_export_unless_accepted(dataset, tmp_path):
    edited = tmp_path / "edited"
    edited.mkdir()
    for name in ("manifest.json", "rejected.jsonl"):
        (edited / name).write_bytes((dataset / name).read_bytes())
    lines = (dataset / "tasks.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["answer"] = [99]
    (edited / "tasks.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": record["id"], "response": "[99]"}) + "\n")
    for command in (["grade", str(edited), "--answers", str(answers)], ["eval", str(edited)],
                    ["export", str(edited), "-o", str(tmp_path / "export")]):
        assert_user_error(execbench(*command), "was changed after the build", "--accept-modified")
    assert not (tmp_path / "export").exists()
    accepted = execbench("grade", str(edited), "--answers", str(answers), "--accept-modified", "--json")
    assert accepted.returncode == 0 and "warning:" in accepted.stderr and "was changed" in accepted.stderr
    assert json.loads(accepted.stdout)["n"] == len(lines)


# -- 1. answer files ------------------------------------------------------------------------

def test_answer_file_problems_are_each_reported_with_their_line(dataset, tmp_path):
    tasks = list(read_tasks(dataset))
    answers = tmp_path / "a.jsonl"
    answers.write_text("\n".join([
        json.dumps({"id": tasks[0].id, "response": render_trace(tasks[0].answer)}),
        json.dumps({"id": tasks[0].id, "response": "[]"}),           # the same id again: would overwrite
        json.dumps({"id": "trace/cases/nope/0#trace", "response": "[1]"}),
        "{not json",
        json.dumps({"id": tasks[1].id, "respones": "[1]"}),
    ]) + "\n")
    line = assert_user_error(execbench("grade", str(dataset), "--answers", str(answers)), "3 unusable answer lines")
    assert f"line 2: id {tasks[0].id!r} again (first on line 1)" in line
    assert "line 4: not valid JSON" in line
    assert "line 5: no response key ('response' or 'completion' or 'solution'): did you mean 'response'?" in line


def test_answers_naming_no_task_are_reported_by_line_and_all_of_them_is_an_error(dataset, tmp_path):
    tasks = list(read_tasks(dataset))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": tasks[0].id, "response": render_trace(tasks[0].answer)}) + "\n"
                       + json.dumps({"id": "trace/cases/goot/0#trace", "response": "[1]"}) + "\n")
    result = execbench("grade", str(dataset), "--answers", str(answers), "--json")
    assert result.returncode == 0  # one answer file may serve several datasets: a warning with the line
    assert ("1 answer names no task of the dataset: line 2: 'trace/cases/goot/0#trace' (did you mean "
            "'trace/cases/good/0#trace'?)") in result.stderr
    assert json.loads(result.stdout)["accuracy"] == 1 / len(tasks)
    answers.write_text(json.dumps({"id": "trace/other/x/0#trace", "response": "[1]"}) + "\n")
    assert_user_error(execbench("grade", str(dataset), "--answers", str(answers)), "another dataset")


def test_evalplus_spellings_are_accepted(dataset, tmp_path):
    tasks = list(read_tasks(dataset))
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t.id, "completion": render_trace(t.answer)}) + "\n"
                               for t in tasks))
    result = execbench("grade", str(dataset), "--answers", str(answers), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["accuracy"] == 1.0


# -- 2. no traceback ------------------------------------------------------------------------

def test_report_on_what_is_not_a_log_is_one_error_line(dataset, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.eval").write_bytes(b"PK\x03\x04 not really a zip")
    assert_user_error(execbench("report", str(dataset), "-o", str(tmp_path / "r.html")), "a dataset directory")
    assert_user_error(execbench("report", str(tmp_path / "empty"), "-o", str(tmp_path / "r.html")),
                      "holds no Inspect logs")
    assert_user_error(execbench("report", str(tmp_path / "bad.eval"), "-o", str(tmp_path / "r.html")),
                      "not a readable Inspect log")
    assert not (tmp_path / "r.html").exists()


def test_usage_errors_are_one_error_line_too(tmp_path):
    assert_user_error(execbench("build"), "Missing argument")
    assert_user_error(execbench("build", "trace", "x", "-o", str(tmp_path / "o"), "--bogus"), "No such option")
    assert_user_error(execbench("nope"), "No such command 'nope'")
    assert_user_error(execbench("build", "trace", "x", "-o", str(tmp_path / "o"), "-j", "0"), "--jobs")


# -- 4. nothing lost ------------------------------------------------------------------------

def test_o_never_overwrites_what_is_not_execbenchs(dataset, tmp_path):
    precious = tmp_path / "notes.txt"
    precious.write_text("my notes\n")
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("chapter 1\n")
    cases = dataset.parent / "cases"
    tasks = list(read_tasks(dataset))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"id": tasks[0].id, "response": "[1]"}) + "\n")
    assert_user_error(execbench("build", "trace", str(cases), "-o", str(precious)), "an existing file")
    assert_user_error(execbench("build", "trace", str(cases), "-o", str(folder)), "not an execbench dataset",
                      "thesis.tex")
    assert_user_error(execbench("grade", str(dataset), "--answers", str(answers), "-o", str(precious)),
                      "not an execbench results file")
    assert_user_error(execbench("export", str(dataset), "-o", str(folder)), "not an execbench export")
    assert_user_error(execbench("export", str(dataset), "-o", str(dataset)), "not an execbench export")
    assert_user_error(execbench("report", str(tmp_path), "-o", str(precious)), "not an execbench report")
    assert_user_error(execbench("demo", "-o", str(folder)), "not an execbench dataset")
    assert precious.read_text() == "my notes\n" and sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]
    assert len(list(read_tasks(dataset))) == len(tasks)
    # execbench's own outputs are replaced as before
    again = tmp_path / "results.jsonl"
    for _ in range(2):
        assert execbench("grade", str(dataset), "--answers", str(answers), "-o", str(again)).returncode == 0
    assert len(again.read_text().splitlines()) == len(tasks)


# -- 5. first-class options -----------------------------------------------------------------

def test_release_window_options_are_in_build_help_and_checked(dataset, tmp_path):
    help_text = execbench("build", "--help").stdout
    for option in ("--released-after", "--released-before", "--new-tests-only"):
        assert option in help_text
    assert_user_error(execbench("build", "trace", str(dataset.parent / "cases"), "-o", str(tmp_path / "o"),
                                "--released-after", "2026-01-01"), "--released-after", "no release window")
    listing = tmp_path / "packages.txt"
    listing.write_text("toolz\n")
    assert_user_error(execbench("build", "repo", f"list:{listing}", "-o", str(tmp_path / "o"),
                                "--released-after", "2026-13-40"), "released_after")


def test_set_options_are_checked_against_the_familys_declared_ones(tmp_path):
    cases = tmp_path / "cases"
    case(cases, "good", GOOD.format(id="good"))
    assert_user_error(execbench("build", "trace", str(cases), "-o", str(tmp_path / "o"), "--set", "repeets=2"),
                      "unknown option 'repeets': did you mean 'repeats'?")
    assert_user_error(execbench("build", "trace", str(cases), "-o", str(tmp_path / "o"), "--set", "repeats=0"),
                      "at least 1")
    assert_user_error(execbench("build", "trace", str(cases), "-o", str(tmp_path / "o"), "--set",
                                "keep_duplicates=yes"), "expected true or false")


def test_limit_counts_problems_for_every_source(tmp_path):
    result = execbench("build", "cruxeval", "cruxeval", "-o", str(tmp_path / "cx"), "--limit", "3",
                       "--set", "arms=output-prediction")
    assert result.returncode == 0, result.stderr
    assert sorted({t.source_id for t in read_tasks(tmp_path / "cx")}) == [
        "cruxeval/sample_0", "cruxeval/sample_1", "cruxeval/sample_2"]


def test_ctrl_c_prints_one_resume_advice(monkeypatch):
    from typer.testing import CliRunner

    from execbench import cli
    from execbench.families import build as engine

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "build_dataset", interrupted)
    result = CliRunner().invoke(cli.app, ["build", "trace", "humaneval", "-o", "unused-out"])
    assert result.exit_code == 130
    assert result.output.count("interrupted") == 1 and INTERRUPTED.split(";")[0] in result.output.replace("\n", " ")


def test_an_internal_error_says_so_and_where_to_report_it(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from execbench import cli
    from execbench.families import build as engine

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(engine, "build_dataset", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(cli.app, ["build", "trace", "humaneval", "-o", str(tmp_path / "o")])
    assert result.exit_code == cli.INTERNAL_ERROR
    text = " ".join(result.output.split())
    assert "internal error: ZeroDivisionError: a bug" in text and "This is a bug in execbench" in text
    assert "issue tracker" in text
    [saved] = tmp_path.glob("execbench-internal-error-*.txt")
    assert "ZeroDivisionError: a bug" in saved.read_text() and "Traceback" in saved.read_text()


# -- 6. a publishable card ------------------------------------------------------------------

def test_the_dataset_card_has_no_local_paths_and_known_licenses(tmp_path):
    cases = tmp_path / "private-home" / "cases"
    case(cases, "good", GOOD.format(id="good"))
    mine = tmp_path / "mine"
    assert execbench("build", "trace", str(cases), "-o", str(mine)).returncode == 0
    he = tmp_path / "he"
    assert execbench("build", "trace", "humaneval", "-o", str(he), "--limit", "1").returncode == 0
    licensed = tmp_path / "licensed"
    case(tmp_path / "lic" / "shared", "one", GOOD.format(id="one") + 'license = "MIT"\n')
    assert execbench("build", "trace", str(tmp_path / "lic" / "shared"), "-o", str(licensed)).returncode == 0
    result = execbench("export", str(mine), str(he), str(licensed), "-o", str(tmp_path / "export"))
    assert result.returncode == 0, result.stderr
    card = (tmp_path / "export" / "README.md").read_text()
    marker = next(p for p in (tmp_path / "export").iterdir() if p.suffix == ".json").read_text()
    assert str(tmp_path) not in card and str(tmp_path) not in marker
    assert '"sources": [".../cases"]' in card
    assert "| `trace/humaneval` | MIT (HumanEval, openai/human-eval) |" in card
    assert "| `trace/cases` | unknown |" in card and "not recorded" not in card
    assert "| `trace/shared` | MIT (declared by its case directories) |" in card


def test_hostile_files_and_empty_arguments_are_user_errors(dataset, tmp_path):
    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "tasks.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    answers = tmp_path / "a.jsonl"
    answers.write_text("[" * 100_000 + "\n")
    assert_user_error(execbench("grade", str(deep), "--answers", str(answers)), "nested too deeply")
    assert_user_error(execbench("grade", str(dataset), "--answers", str(answers)), "line 1: not valid JSON")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "tasks.jsonl").write_bytes((dataset / "tasks.jsonl").read_bytes())
    (broken / "manifest.json").write_text("{")
    assert_user_error(execbench("export", str(broken), "-o", str(tmp_path / "x")), "not a readable manifest")
    assert_user_error(execbench("build", "trace", "", "-o", str(tmp_path / "o")), "an empty source argument")
