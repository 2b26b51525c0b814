"""Records a program could have written (issue 14): bounded parsing, field validation, and
jobs of one state case that cannot forge each other's records."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from execbench.families.state import jobs as state_jobs
from execbench.sandbox import records
from execbench.sandbox.jobs import JobResult
from execbench.sandbox.records import RecordError


@pytest.mark.parametrize("raw,message", [
    (b"[" * 200000, "deeper"),
    (b'{"a": ' * 100 + b"1" + b"}" * 100, "deeper"),
    (b'{"a": NaN}', "non-finite"),
    (b"\xff\xfe", "UTF-8"),
    (b'{"a": 1', "not JSON"),
    (b"x" * 2000, "too large"),
])
def test_hostile_json_is_a_record_error(raw, message):
    with pytest.raises(RecordError, match=message):
        records.load_json(raw, max_bytes=1000 if message == "too large" else 1 << 20)


def test_strings_do_not_count_as_nesting():
    assert records.load_json(json.dumps({"s": "[" * 5000}), max_bytes=10000) == {"s": "[" * 5000}


def test_check_validates_field_by_field():
    schema = {"ok": bool, "n": int}
    assert records.check({"ok": True, "n": 3, "x": 1}, schema) == {"ok": True, "n": 3}
    for bad, message in [({"ok": True}, "missing 'n'"), ({"ok": 1, "n": 3}, "'ok' should be bool"),
                         ({"ok": True, "n": True}, "'n' should be int"), ([], "expected an object")]:
        with pytest.raises(RecordError, match=message):
            records.check(bad, schema)
    with pytest.raises(RecordError, match="base64"):
        records.b64("%%%")


def test_jsonl_keeps_good_lines_and_caps_the_rest():
    good, errors = records.load_jsonl(b'{"a": 1}\n' + b"[" * 500 + b'\n{"b": 2}\n', max_bytes=10000,
                                      max_line_bytes=1000, max_records=10)
    assert good == [{"a": 1}, {"b": 2}] and len(errors) == 1 and "line 2" in errors[0]
    with pytest.raises(RecordError):
        records.load_jsonl(b"{}\n" * 20, max_bytes=10000, max_line_bytes=100, max_records=10)


@pytest.mark.parametrize("value", [
    None,                                                           # no record at all
    "not an object",
    {"metrics": []},
    {"metrics": {"status": "ok", "opcodes": "many", "line_events": 1}},
    {"metrics": {"status": "ok"}},
    {"metrics": {"status": "ok", "opcodes": 1, "line_events": 1, "peak_state": 3}},
    {"metrics": {"status": {"nested": 1}}},
    {"dump_error": 3},
])
def test_malformed_state_job_record_fails_that_job(value):
    job = state_jobs.python_job("j", "p.py", "", cpu=1, wall=1, memory_mb=64)
    result = state_jobs.checked(job, JobResult("j", exit_code=0, value=value))
    assert not result.ok and result.failure.startswith("malformed job record")
    good = state_jobs.checked(job, JobResult("j", exit_code=0, value={"dump": [1], "other": "dropped"}))
    assert good.ok and good.value == {"metrics": {}, "dump": [1], "dump_error": None}


FORGER = textwrap.dedent("""
    import glob, json, os, time
    forged = json.dumps({"metrics": {"status": "ok", "opcodes": 1, "line_events": 1}}).encode()
    # every file in reach that could be a record: the work dir, the runner's fds
    for path in [*glob.glob(os.path.join(os.environ['HOME'], '..', '**'), recursive=True),
                 *glob.glob(f'/proc/{os.getppid()}/fd/*')]:
        try:
            fd = os.open(path, os.O_WRONLY)
            os.write(fd, forged)
        except OSError:
            pass
    open('victim.py', 'w').write('print("FORGED")')        # the next job's program
    if os.fork() == 0:                                      # a daemon for later
        os.setsid()
        for _ in range(400):
            time.sleep(0.01)
            open('victim.py', 'w').write('print("FORGED")')
        os._exit(0)
    time.sleep(0.1)
    print("forger done")
""")
# writes a value of its own to the value's fd (3), then fails: the value is dropped
SELFISH = "import json, os\nos.write(3, json.dumps({'dump': 'mine'}).encode())\nraise SystemExit(3)\n"
# writes its own value and ends before the runner's code could write the real one
WEAPONISED = "import os\nos.write(3, %r.encode())\nprint('hi', flush=True)\nos._exit(0)\n"


@pytest.fixture(params=["default"] + (["all"] if os.geteuid() == 0 else []))
def mode(request, monkeypatch):
    if request.param != "default":
        monkeypatch.setenv("EXECBENCH_SANDBOX_FORCE_FALLBACK", request.param)
    return request.param


def test_one_job_cannot_forge_another(mode):
    """Three jobs of one state case (one group: the worst case) in one sandbox."""
    limits = {"cpu": 10, "wall": 10, "memory_mb": 1024, "group": "case"}
    forger, victim, selfish = state_jobs.run([
        state_jobs.python_job("forger", "forger.py", FORGER, **limits),
        state_jobs.python_job("victim", "victim.py", "import time; time.sleep(0.5); print('real')\n",
                              measure={"state": False, "max_line_events": 1000, "state_budget": 1000}, **limits),
        state_jobs.python_job("selfish", "selfish.py", SELFISH, dump_global="x", **limits)])
    assert forger.stdout == b"forger done\n"
    assert victim.ok and victim.stdout == b"real\n", victim
    measured = state_jobs.metrics(victim)
    assert measured["status"] == "ok" and measured["opcodes"] > 1
    assert not selfish.ok and selfish.exit_code == 3 and selfish.value is None  # its own record flips nothing


def test_a_weaponised_state_record_fails_that_job_alone():
    limits = {"cpu": 10, "wall": 10, "memory_mb": 1024, "dump_global": "x"}
    deep, forged, fine = state_jobs.run([
        state_jobs.python_job("deep", "p.py", WEAPONISED % ("[" * 200000), **limits),
        state_jobs.python_job("forged", "p.py", WEAPONISED % '{"metrics": {"status": "ok", "opcodes": "x"}}',
                              **limits),
        state_jobs.python_job("fine", "p.py", "x = [1, 2]\n", **limits)])
    assert not deep.ok and "malformed job record" in deep.reason() and "deeper than" in deep.reason()
    assert not forged.ok and "'opcodes' should be a number" in forged.reason()
    assert fine.ok and state_jobs.dump(fine) == ([1, 2], None)


def test_trace_run_with_a_weaponised_result_is_a_failed_run():
    from execbench.tracing.run import trace_script
    program = "import os\nos.write(3, b'[' * 200000)\nprint('hi')\n"
    run = trace_script(program, "")
    assert not run.ok and "deeper than" in run.reason() and run.value is None
    program = "import os\nos.write(3, b'{\"module\": 1}')\nos._exit(0)\n"
    run = trace_script(program, "")
    assert not run.ok and "'module' should be dict" in run.reason()


def test_repo_test_records_are_checked():
    from execbench.families.repo.verification import runner
    good = {"nodeid": "t.py::test", "phases": {"call": {"outcome": "passed"}}, "probes": {}}
    assert runner._checked(good)["nodeid"] == "t.py::test"
    for bad in [{"phases": {}}, {"nodeid": 3}, {"nodeid": "x", "phases": {"call": {}}},
                {"nodeid": "x", "phases": []}, {"nodeid": "x", "verify": {"1": 2, 3: 4}}]:
        with pytest.raises(RecordError):
            runner._checked(bad)
