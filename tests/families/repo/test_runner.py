"""The repo family's pytest runs as exec jobs of the sandbox job runner: several runs of one
repository share a sandbox (runner.run_many), each with its own hash seed and a work dir
that the previous run's files do not reach."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from execbench.families.repo import build
from execbench.families.repo.verification import runner
from execbench.sandbox.jobs import JobResult
from execbench.sources import repos

FIXTURE = Path(__file__).parent / "fixtures" / "minilib"

PROBE = '''import os


def test_probe():
    assert not os.path.exists("{absent}")
    open("left.txt", "w").write("x")
    assert hash("execbench") == {hashed}
'''


def _hash(seed: int) -> int:
    out = subprocess.run([sys.executable, "-c", "print(hash('execbench'))"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": str(seed)}, check=True)
    return int(out.stdout)


@pytest.mark.slow
def test_runs_of_one_repository_share_a_sandbox_but_not_their_files_or_hash_seed(tmp_path):
    root = tmp_path / "minilib"
    shutil.copytree(FIXTURE, root)
    repo = repos.prepare(str(root))
    target = root / "tests" / "test_core.py"
    options = dict(build.DEFAULT_OPTIONS)

    def job(job_id: str, seed: int, absent: str, hashed: int):
        return runner.pytest_job(job_id, repo, target, {str(target): PROBE.format(absent=absent, hashed=hashed)},
                                 trace=False, options=options, hash_seed=seed)

    reports = runner.run_many(repo, [job("first", 0, "absent.txt", _hash(0)),
                                     job("second", 1, "left.txt", _hash(1)),     # the first run's file is gone
                                     job("wrong", 1, "absent.txt", _hash(0))])   # a failing test is a record
    outcomes = [[(r["nodeid"].rsplit("/", 1)[-1], r["phases"]["call"]["outcome"]) for r in report.records]
                for report in reports]
    assert outcomes[:2] == [[("test_core.py::test_probe", "passed")]] * 2, [r.stderr_tail for r in reports]
    assert outcomes[2] == [("test_core.py::test_probe", "failed")]
    assert all(report.ok and report.fatal is None for report in reports)
    assert reports[2].result.exit_code == 1 and reports[2].reason.startswith("exit 1")


def _framed(lines: list[str], key: str) -> bytes:
    """Lines as the plugin's channel writes them (runner.unframe), ended by its trailer."""
    mac, last, out = hashlib.blake2b(key=bytes.fromhex(key), digest_size=16), b"", []
    for line in [*lines, json.dumps({"end": len(lines)})]:
        h = mac.copy()
        h.update(last + line.encode())
        last = h.hexdigest().encode()
        out.append(last + b" " + line.encode() + b"\n")
    return b"".join(out)


def test_a_results_file_is_read_as_hostile_input():
    key = "5a" * 32
    good = json.dumps({"nodeid": "t.py::test", "phases": {"call": {"outcome": "passed"}}})
    lines = [good, "{not json", json.dumps({"nodeid": 3}), "[" * 100_000, json.dumps({"fatal": "plugin: x" * 500})]
    report = runner.report(JobResult("tests", exit_code=1, files={runner.OUTPUT: _framed(lines, key)}), key)
    assert [r["nodeid"] for r in report.records] == ["t.py::test"]  # bad lines and records left out
    assert report.fatal.startswith("plugin: x") and len(report.fatal) == 1000 and not report.ok
    huge = runner.report(JobResult("tests", exit_code=0, files={runner.OUTPUT: b" " * (runner.RESULTS_MAX_BYTES + 1)}),
                         key)
    assert huge.records == [] and huge.fatal.startswith(runner.OUTPUT) and not huge.ok
    killed = runner.report(JobResult("tests", signal=9, limit="wall_time", files={runner.OUTPUT: _framed([good], key)}),
                           key)
    assert len(killed.records) == 1 and not killed.ok and killed.reason == "wall_time limit"
