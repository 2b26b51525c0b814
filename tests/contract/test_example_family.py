"""Issue 36: the minimal family of docs/writing-a-family.md (examples/minimal_family) is a real,
working plug-in: registered through its entry point (a ``*.dist-info`` made from the example's own
``pyproject.toml``, as pip would write it), built, evaluated with recorded replies and graded through
the public API and the CLI, in fresh interpreters (this process's registry does not know it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

import execbench

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "minimal_family"
SRC = Path(execbench.__file__).parents[1]
CLI = [sys.executable, "-c", "from execbench.cli import main; main()"]

API = textwrap.dedent('''
    import json, sys
    from execbench import registry
    from execbench.analysis.logs import read_logs
    from execbench.families.build import build_dataset
    from execbench.families.grade import grade_tasks
    from execbench.dataset import read_tasks

    programs, out, logs = sys.argv[1:]
    family = registry.get("stdout")
    manifest = build_dataset(family, [programs], out, options=dict(family.default_options))
    tasks = list(read_tasks(out))
    replies = {tasks[0].id: "It prints:\\n```\\n" + tasks[0].answer + "\\n```", tasks[1].id: "nothing"}
    samples = read_logs([logs]).samples
    print(json.dumps({"type": type(family).__name__, "names": registry.names(), "hash": manifest["content_hash"],
                      "prompt": family.prompt(tasks[0]).messages[0].content,
                      "graded": {t.id: [s.correct, s.status] for t, s in grade_tasks(tasks, replies,
                                                                                   family_of=registry.get)},
                      "logged": {r.task_id: bool(r.correct) for r in samples.itertuples()}}))
''')


def _site(tmp_path: Path) -> Path:
    """The example installed as pip would: its module on the path and a dist-info with its entry points."""
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    site = tmp_path / "site"
    info = site / f"execbench_stdout_family-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    points = project["entry-points"]["execbench.families"]
    (info / "entry_points.txt").write_text(
        "[execbench.families]\n" + "".join(f"{name} = {value}\n" for name, value in points.items()))
    return site


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_example_is_under_150_lines_and_the_page_describes_it_and_every_capability():
    from execbench.contract import Family
    from execbench.contract.capabilities import KINDS

    source = (EXAMPLE / "stdout_family.py").read_text()
    assert len(source.splitlines()) < 150
    assert "class StdoutFamily(Family[Payload, Options])" in source
    page = (ROOT / "docs" / "writing-a-family.md").read_text()
    assert f"a complete family of {len(source.splitlines())} lines, `examples/minimal_family/stdout_family.py`" in page
    assert all(f"| `{kind.__name__}` |" in page for kind in KINDS)  # the capabilities table lists each kind
    core = {n for n in (*vars(Family), *Family.__annotations__) if not n.startswith("_")}
    assert all(f"`{member}" in page for member in core)  # and the core table each member


@pytest.mark.slow
def test_the_minimal_family_registers_builds_evaluates_and_grades(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (_site(tmp_path), EXAMPLE, SRC))),
           "EXECBENCH_CACHE_DIR": str(tmp_path / "cache"), "INSPECT_DISPLAY": "none",
           "INSPECT_LOG_DIR": str(tmp_path / "default-logs"), "INSPECT_CACHE_DIR": str(tmp_path / "inspect-cache")}
    programs = EXAMPLE / "programs"
    # the CLI: build, then an eval with recorded replies (replay/FILE: no network, no model)
    _run([*CLI, "build", "stdout", str(programs), "-o", str(tmp_path / "cli"), "--no-cache"], env, tmp_path)
    tasks = [json.loads(line) for line in (tmp_path / "cli" / "tasks.jsonl").read_text().splitlines()]
    assert {t["id"]: t["answer"] for t in tasks} == {"stdout/programs/squares#output": "1 1\n2 5\n3 14\n4 30",
                                                     "stdout/programs/words#output": "the fox quick brown\nQUICK"}
    rejected = [json.loads(line) for line in (tmp_path / "cli" / "rejected.jsonl").read_text().splitlines()]
    assert {r["candidate"]: r["stage"] for r in rejected} == {"programs/crash": "run",
                                                              "programs/unordered": "determinism"}
    right, wrong = tasks
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"id": right["id"], "response": f"```\n{right['answer']}\n```"}) + "\n"
                       + json.dumps({"id": wrong["id"], "response": "```\nthe quick brown fox\n```"}) + "\n")
    _run([*CLI, "eval", str(tmp_path / "cli"), "--model", f"replay/{replies}", "--log-dir", str(tmp_path / "logs")],
         env, tmp_path)
    graded = json.loads(_run([*CLI, "grade", str(tmp_path / "cli"), "--answers", str(replies), "--json"], env,
                             tmp_path))
    assert graded["n"] == 2 and graded["accuracy"] == 0.5
    assert graded["families"]["stdout"] == {"n": 2, "accuracy": 0.5}
    # the public API, in a fresh interpreter: the same dataset, byte for byte; the eval's log read back
    seen = json.loads(_run([sys.executable, "-c", API, str(programs), str(tmp_path / "api"), str(tmp_path / "logs")],
                           env, tmp_path))
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert seen["type"] == "StdoutFamily" and seen["names"][-1] == "stdout"
    assert seen["hash"] == manifest["content_hash"]
    assert (tmp_path / "api" / "tasks.jsonl").read_bytes() == (tmp_path / "cli" / "tasks.jsonl").read_bytes()
    assert "What does this Python program print?" in seen["prompt"] and "total += i * i" in seen["prompt"]
    assert seen["graded"] == {right["id"]: [True, "ok"], wrong["id"]: [False, "ok"]}
    assert seen["logged"] == {right["id"]: True, wrong["id"]: False}
