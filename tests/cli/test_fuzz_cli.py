"""Issue 34, item 2: nothing a user can type produces a traceback. Hypothesis feeds malformed
case files, answer lines and command lines to the real command line (typer's runner, in this
process: the same app, the same error mapping as the installed ``execbench``) and checks each
outcome: exit 0 (the input was fine), 1 (a build that admitted nothing), or 2 with exactly
one `error:` line; never a traceback, never an internal error. Bounded: a few dozen
examples per property (``EXAMPLES``), no deadline (each example is a real command)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from execbench.cli import app
from execbench.dataset import read_tasks

# EXECBENCH_FUZZ_EXAMPLES=500 explores further (and at random, not the suite's fixed examples)
EXAMPLES = int(os.environ.get("EXECBENCH_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="EXECBENCH_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def run(args: list[str]):
    return CliRunner().invoke(app, args, catch_exceptions=True)


def assert_clean(result, allowed=(0, 1, 2)) -> None:
    output = result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output and "internal error" not in output, output
    assert result.exit_code in allowed, (result.exit_code, output)
    if result.exit_code == 2:
        errors = [line for line in output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, output


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    case = root / "cases" / "good"
    case.mkdir(parents=True)
    (case / "p.py").write_text("def f(x):\n    return x + 1\n")
    (case / "case.toml").write_text('id = "good"\nlanguage = "python"\nsource = "p.py"\ncalls = ["f(1)"]\n')
    result = run(["build", "trace", str(root / "cases"), "-o", str(root / "ds")])
    assert result.exit_code == 0, result.output
    return root / "ds"


# -- case.toml ---------------------------------------------------------------------------------

SCALARS = st.one_of(st.text(max_size=12), st.integers(-3, 3), st.booleans(), st.floats(allow_nan=False,
                                                                                       allow_infinity=False))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.sampled_from(["a", "loop_line"]),
                                                                            SCALARS, max_size=2))
KEYS = st.one_of(st.sampled_from(["id", "language", "source", "calls", "stdin", "topic", "cals", "srouce",
                                  "short_input", "checkpoint"]), st.from_regex(r"[a-z_]{1,8}", fullmatch=True))


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"


CONFIGS = st.fixed_dictionaries(
    {"id": st.one_of(st.just("c"), VALUES), "language": st.one_of(st.just("python"), VALUES),
     "source": st.one_of(st.just("p.py"), st.just("../p.py"), VALUES)},
    optional={"calls": st.one_of(st.just(["f(1)"]), st.just("f(1)"), VALUES), "extra": st.tuples(KEYS, VALUES)})


@FUZZ
@given(config=CONFIGS, raw=st.one_of(st.none(), st.text(max_size=40)), family=st.sampled_from(["trace", "state"]))
def test_malformed_case_files_never_crash_the_build(config, raw, family):
    root = Path(tempfile.mkdtemp(prefix="fuzz-case-"))
    try:
        case = root / "cases" / "c"
        case.mkdir(parents=True)
        (case / "p.py").write_text("def f(x):\n    return x\n")
        extra = config.pop("extra", None)
        if extra is not None:
            config.setdefault(extra[0], extra[1])
        text = raw if raw is not None else "".join(f"{k} = {toml_value(v)}\n" for k, v in config.items())
        (case / "case.toml").write_text(text)
        result = run(["build", family, str(root / "cases"), "-o", str(root / "ds"), "--no-cache",
                      "--set", "repeats=1"])
        assert_clean(result)
        if result.exit_code == 1:  # an honest exit: nothing admitted, and the reason is recorded
            assert "no task admitted" in " ".join(result.output.split())
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- answer lines ----------------------------------------------------------------------------

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=6)


@FUZZ
@given(data=st.data())
def test_malformed_answer_lines_never_crash_grade(dataset, data):
    ids = [task.id for task in read_tasks(dataset)]
    record = st.builds(lambda key, value, rest: {key: value, **rest},
                       st.sampled_from(["id", "task_id", "ID"]),
                       st.one_of(st.sampled_from(ids), st.text(max_size=10), JSON_VALUES),
                       st.dictionaries(st.sampled_from(["response", "completion", "solution", "respones"]),
                                       JSON_VALUES | st.text(max_size=20), max_size=2))
    line = st.one_of(st.text(max_size=30), JSON_VALUES.map(json.dumps), record.map(json.dumps))
    lines = data.draw(st.lists(line, max_size=6))
    root = Path(tempfile.mkdtemp(prefix="fuzz-answers-"))
    try:
        (root / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        result = run(["grade", str(dataset), "--answers", str(root / "a.jsonl"), "--json"])
        assert_clean(result, allowed=(0, 2))
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- command lines ---------------------------------------------------------------------------

COMMANDS = ["build", "grade", "export", "report", "mutate"]
FLAGS = ["-o", "--out", "--set", "--limit", "--jobs", "--answers", "--json", "--variant", "--offline", "--ops",
         "--released-after", "--new-tests-only", "--accept-modified", "--replicates", "--cutoff", "--dataset"]


@FUZZ
@given(data=st.data())
def test_malformed_command_lines_never_crash(dataset, data):
    root = Path(tempfile.mkdtemp(prefix="fuzz-argv-"))
    try:
        (root / "file.txt").write_text("hello\n")
        (root / "dir").mkdir()
        own = shutil.copytree(dataset, root / "ds")  # a command may write into it: never the shared one
        words = st.one_of(
            st.sampled_from(FLAGS),
            st.sampled_from([str(own), str(root / "file.txt"), str(root / "dir"), str(root / "new"),
                             "trace", "state", "nope", "repeats=0", "repeats=x", "bogus=1", "0", "-1", "3",
                             "2026-13-01", "rename,nope", "="]),
            st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=8))
        argv = [data.draw(st.sampled_from(COMMANDS)), *data.draw(st.lists(words, max_size=6))]
        if argv[0] in ("build", "mutate") and "--limit" not in argv:
            argv += ["--limit", "1"]  # a well-formed build stays small
        if argv[0] == "mutate" and "--offline" not in argv:
            argv.append("--teacher=nope/none")  # never a real teacher model
        assert_clean(run(argv))
    finally:
        shutil.rmtree(root, ignore_errors=True)
