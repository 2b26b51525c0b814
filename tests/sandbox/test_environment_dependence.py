"""Answers that depend on the host are rejected (issue 14): every sandboxed run sees another
host name, time zone, uid and work dir, so the trace family's agreeing runs disagree."""

from __future__ import annotations

import textwrap

import pytest

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.families.trace import build as trace_build
from execbench.sandbox import capabilities

# The trace family's answer is the executed lines: make the number of loop iterations
# depend on what the program reads about its host.
LOOP = "def f(x):\n    for _ in range({}):\n        x += 1\n    return x\n"
PROGRAMS = {
    "hostname": "import socket\n\n" + LOOP.format("int(socket.gethostname()[-4:], 16) % 997"),
    "timezone": "import time\n\n" + LOOP.format("time.localtime(0).tm_hour"),
    "uid": "import os\n\n" + LOOP.format("os.getuid() % 7"),
    "workdir": "import os\n\n" + LOOP.format("sum(map(ord, os.getcwd())) % 997"),
    "pure": LOOP.format("3"),
}


@pytest.mark.slow
def test_host_dependent_answers_are_rejected(tmp_path):
    cases = []
    for name, program in PROGRAMS.items():
        case = tmp_path / "cases" / name
        case.mkdir(parents=True)
        (case / "program.py").write_text(program)
        (case / "case.toml").write_text(textwrap.dedent(f"""
            id = "env/{name}"
            language = "python"
            source = "program.py"
            topic = "env"
            calls = ["f(1)"]
            """))
        cases.append(str(case))
    out = tmp_path / "ds"
    build_dataset(registry.get("trace"), cases, out, options=dict(trace_build.DEFAULT_OPTIONS), jobs=1)
    admitted = {t.id for t in read_tasks(out)}
    rejected = {r["candidate"]: r for r in read_rejected(out)}
    assert any("env/pure" in t for t in admitted), (admitted, rejected)
    caps = capabilities()
    dependent = ["timezone", "workdir"] + (["hostname"] if caps["host"] == "varied" else []) \
        + (["uid"] if caps["privileges"].startswith("fresh-uid") else [])
    for name in dependent:
        assert not any(f"env/{name}" in t for t in admitted), name
        assert any(f"env/{name}" in c and r["stage"] == "determinism" for c, r in rejected.items()), \
            (name, rejected)
