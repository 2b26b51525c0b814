"""Issue 33, principle 3: the repo family's recorder (the pytest plugin) is out of reach of the
suite it records. Each attack is a ``conftest.py`` a hostile repository ships next to its tests,
aiming to get a forged value (1081, where the test computes 42) into the records; the run must
come back as tampering with no record at all. A clean run of the same repository records 42."""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from execbench.families.repo import build
from execbench.families.repo.verification import runner
from execbench.sandbox.jobs import JobResult
from execbench.sources import repos

FIXTURE = Path(__file__).parent / "fixtures" / "minilib"
TEST = "def test_a():\n    x = 41 + 1\n    assert __execbench_probe__('k', 0, x) == 42\n"
FORGED = '{"type": "int", "literal": "1081"}'

ATTACKS = {
    "replace the module's render": f"""
        import _execbench_repo_plugin as p
        p.render = lambda value: {FORGED}
        p._record_value = p.render
    """,
    "wrap the helper in the test module": """
        def pytest_collection_modifyitems(items):
            for item in items:
                real = item.module.__execbench_probe__
                item.module.__execbench_probe__ = lambda key, side, value: real(key, side, 1081)
    """,
    "call the helper with a forged value": """
        import pytest
        @pytest.fixture(autouse=True)
        def forge(request):
            yield
            request.module.__execbench_probe__("k", 0, 1081)
    """,
    "append to the results file": f"""
        import json
        def pytest_sessionfinish(session):
            with open("results.jsonl", "a") as fh:
                fh.write(json.dumps({{"nodeid": "x", "probes": {{"k": [{{"0": {FORGED}}}]}}}}) + "\\n")
    """,
    "write the results descriptor": """
        import json, os
        def pytest_sessionfinish(session):
            for name in os.listdir("/proc/self/fd"):
                try:
                    target = os.readlink(f"/proc/self/fd/{name}")
                except OSError:
                    continue
                if target.endswith("results.jsonl"):
                    os.write(int(name), (json.dumps({"nodeid": "x"}) + "\\n").encode())
    """,
    "read the deleted spec for the key": """
        import os
        def pytest_sessionfinish(session):
            open(os.environ["EXECBENCH_REPO_SPEC"]).read()
    """,
    "replace a function's code": f"""
        import _execbench_repo_plugin as p
        p.render.__code__ = (lambda value: {FORGED}).__code__
    """,
    "replace a private global": f"""
        import _execbench_repo_plugin as p
        p.probe.__globals__["render"] = lambda value: {FORGED}
    """,
    "replace a method of a recorder class": f"""
        import _execbench_repo_plugin as p
        original = p._Running.record
        def record(self, seconds):
            out = original(self, seconds)
            out["probes"] = {{"k": [{{"0": {FORGED}}}]}}
            return out
        p._Running.record = record
    """,
    "blind the seal check's builtins, then replace a private global": f"""
        import builtins, operator
        import _execbench_repo_plugin as p
        builtins.all = lambda iterable: True
        operator.is_ = lambda a, b: True
        p.probe.__globals__["render"] = lambda value: {FORGED}
    """,
    "patch the tracer during the test and undo it at teardown": """
        import pytest
        import _execbench_repo_plugin as p
        @pytest.fixture(autouse=True)
        def forge(monkeypatch):
            monkeypatch.setattr(p.Tracer, "result", lambda self: {"status": "ok", "calls": []})
            yield
    """,
}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    root = tmp_path_factory.mktemp("recorder") / "minilib"
    shutil.copytree(FIXTURE, root)
    return root


def _run(root: Path, conftest: str | None) -> runner.PytestReport:
    path = root / "tests" / "conftest.py"
    if conftest is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(textwrap.dedent(conftest))
    repo = repos.prepare(str(root))
    target = root / "tests" / "test_core.py"
    return runner.run_tests(repo, target, {str(target): TEST}, trace=True, options=dict(build.DEFAULT_OPTIONS))


@pytest.mark.slow
def test_a_clean_suite_records_the_true_value(checkout):
    report = _run(checkout, None)
    assert report.ok and report.fatal is None, report.stderr_tail
    assert [r["probes"] for r in report.records] == [{"k": [{"0": {"type": "int", "literal": "42"}}]}]
    assert report.records[0]["trace"]["status"] == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_suite_that_reaches_into_the_recorder_is_rejected_as_tampering(checkout, attack):
    report = _run(checkout, ATTACKS[attack])
    assert report.records == [], report.records
    assert report.fatal is not None and report.fatal.startswith("tampering: "), (report.fatal, report.stderr_tail)
    assert not report.ok


def _framed(lines: list[str], key: str) -> bytes:
    mac, last, out = hashlib.blake2b(key=bytes.fromhex(key), digest_size=16), b"", []
    for line in lines:
        h = mac.copy()
        h.update(last + line.encode())
        last = h.hexdigest().encode()
        out.append(last + b" " + line.encode() + b"\n")
    return b"".join(out)


def test_the_parent_admits_only_lines_the_recorder_wrote_and_ended():
    key, other = "ab" * 32, "cd" * 32
    record = json.dumps({"nodeid": "t.py::test_a", "phases": {"call": {"outcome": "passed"}}})
    good = _framed([record, json.dumps({"end": 1})], key)
    done = JobResult("tests", exit_code=0, files={runner.OUTPUT: good})
    assert [r["nodeid"] for r in runner.report(done, key).records] == ["t.py::test_a"]
    forged = JobResult("tests", exit_code=0, files={runner.OUTPUT: _framed([record, json.dumps({"end": 1})], other)})
    assert runner.report(forged, key).records == [] and runner.report(forged, key).fatal.startswith("tampering")
    after = JobResult("tests", exit_code=0, files={runner.OUTPUT: good + record.encode() + b"\n"})
    assert runner.report(after, key).fatal.startswith("tampering") and runner.report(after, key).records == []
    miscounted = _framed([record, json.dumps({"end": 2})], key)
    assert runner.report(JobResult("tests", exit_code=0, files={runner.OUTPUT: miscounted}), key).records == []
    cut = JobResult("tests", exit_code=0, files={runner.OUTPUT: _framed([record], key)})
    assert runner.report(cut, key).records == [] and "trailer" in runner.report(cut, key).fatal
    killed = JobResult("tests", signal=9, limit="wall_time", files={runner.OUTPUT: _framed([record], key) + b"ab"})
    assert [r["nodeid"] for r in runner.report(killed, key).records] == ["t.py::test_a"]
