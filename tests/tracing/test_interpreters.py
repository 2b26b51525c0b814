"""Trace answers do not depend on the interpreter that runs the builder (3.11, 3.12, 3.13).

The parent side of tracing (``execbench.tracing``, pure standard library) runs under each
interpreter in turn; the traced programs always run under the pinned CPython 3.11.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from execbench.sources import humaneval

SRC = Path(__file__).resolve().parents[2] / "src"
OTHERS = [p for p in ("/root/.pyenv/versions/3.12.1/bin/python", "/root/.pyenv/versions/3.13.0/bin/python")
          if os.path.isfile(p)]
COMPREHENSIONS = "def f(xs):\n    ys = [x * 2 for x in xs]\n    return sum(y for y in ys)\n"
SCRIPT = ("import sys\n\ndef main(n):\n    return {k: k * k for k in range(n)}\n\n"
          "if __name__ == '__main__':\n    print(main(int(sys.stdin.read())))\n")
PARENT = """
import json, sys
from execbench.tracing import trace_calls, trace_script
from execbench.tracing.interpreter import resolve
jobs = json.load(sys.stdin)
python = resolve(jobs["python"])
out = {"interpreter": python.label, "calls": [], "script": None}
for program, calls in jobs["calls"]:
    run = trace_calls(program, calls, python=python.path)
    out["calls"].append([c.get("lines", c["status"]) for c in run.value["calls"]] if run.ok else run.reason())
run = trace_script(jobs["script"], "3", python=python.path, start_after_main_guard=True)
out["script"] = run.value["script"]["lines"] if run.ok else run.reason()
print(json.dumps(out))
"""


def _jobs(python: str) -> dict:
    sample = [p for p in humaneval.problems() if p.number in (0, 4, 12, 26, 37)]
    calls = [[p.program, humaneval.candidate_calls(p)] for p in sample]
    return {"python": python, "calls": [[COMPREHENSIONS, ["f([1, 2, 3])"]], *calls], "script": SCRIPT}


def _trace_under(interpreter: str, python: str = "3.11") -> dict:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([interpreter, "-c", PARENT], input=json.dumps(_jobs(python)), capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(not OTHERS, reason="no CPython 3.12/3.13 at /root/.pyenv/versions")
def test_answers_are_identical_whatever_interpreter_builds():
    reference = _trace_under(sys.executable)
    assert reference["interpreter"].startswith("CPython 3.11.")
    assert reference["calls"][0] == [[2, 2, 2, 2, 2, 3, 3, 3, 3, 3]]  # 3.11: comprehensions are frames
    assert reference["script"] == [7, 4, 4, 4, 4, 4]  # starts past the main guard (line 6)
    for other in OTHERS:
        assert _trace_under(other) == reference, other


@pytest.mark.slow
@pytest.mark.skipif(not OTHERS, reason="no CPython 3.12/3.13 at /root/.pyenv/versions")
def test_unpinned_interpreters_really_differ():
    """Why the pin exists: PEP 709 (3.12) inlines list comprehensions, one line event fewer."""
    host = _trace_under(OTHERS[0], python="host")
    assert host["interpreter"].startswith("CPython 3.1") and not host["interpreter"].startswith("CPython 3.11.")
    assert host["calls"][0] == [[2, 2, 2, 2, 3, 3, 3, 3, 3]]
