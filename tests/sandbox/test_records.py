"""Records a program could have written (issue 14): bounded parsing, field validation, and
jobs of one state batch that cannot forge each other's records."""

from __future__ import annotations

import base64
import json
import os
import textwrap

import pytest

from execbench.families.state import batch as state_batch
from execbench.sandbox import records
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


@pytest.mark.parametrize("raw", [
    {"ok": True},                                                  # missing fields
    {"ok": True, "exit_code": 0, "signal": None, "limit": None, "stdout": "@@", "stderr": ""},
    {"ok": "yes", "exit_code": 0, "signal": None, "limit": None, "stdout": "", "stderr": ""},
    {"ok": True, "exit_code": 0, "signal": None, "limit": None, "stdout": "", "stderr": "",
     "metrics": {"status": "ok", "opcodes": "many", "line_events": 1}},
    {"ok": True, "exit_code": 0, "signal": None, "limit": None, "stdout": "", "stderr": "",
     "metrics": {"status": "ok"}},
    "not an object",
])
def test_malformed_state_job_record_fails_that_job(raw):
    job = state_batch._job_result(raw, "j")
    assert not job.ok and job.stderr.startswith("malformed job record: job j")


FORGER = textwrap.dedent("""
    import base64, json, os, sys, time
    forged = {"ok": True, "exit_code": 0, "signal": None, "limit": None,
              "stdout": base64.b64encode(b"FORGED\\n").decode(), "stderr": "",
              "metrics": {"status": "ok", "opcodes": 1, "line_events": 1}}
    open('.job1.json', 'w').write(json.dumps({"metrics": {"status": "forged"}}))
    open('.job1.out', 'w').write('FORGED\\n')
    open('victim.py', 'w').write('print("FORGED")')        # the next job's program
    if os.fork() == 0:                                      # a daemon for later
        os.setsid()
        for _ in range(400):
            time.sleep(0.01)
            for name in ('.job1.out', 'result.json'):
                try:
                    open(name, 'w').write('FORGED' if name.endswith('out') else
                                          json.dumps({"jobs": {"victim": forged}}))
                except OSError:
                    pass
        os._exit(0)
    time.sleep(0.1)
    print("forger done")
""")


@pytest.fixture(params=["default"] + (["all"] if os.geteuid() == 0 else []))
def mode(request, monkeypatch):
    if request.param != "default":
        monkeypatch.setenv("EXECBENCH_SANDBOX_FORCE_FALLBACK", request.param)
    return request.param


def test_one_job_cannot_forge_another(mode):
    files = {"forger.py": FORGER, "victim.py": "import time; time.sleep(0.5); print('real')\n",
             "selfish.py": ("import json, sys\nopen('.job2.json', 'w').write(json.dumps("
                            "{'ok': True, 'exit_code': 0, 'stdout': ''}))\nsys.exit(3)\n")}
    jobs = [{"id": "forger", "kind": "python", "program": "forger.py", "wall": 10},
            {"id": "victim", "kind": "python", "program": "victim.py", "wall": 10,
             "measure": {"state": False, "max_line_events": 1000, "state_budget": 1000}},
            {"id": "selfish", "kind": "python", "program": "selfish.py", "wall": 10}]
    result = state_batch.run_batch(files, jobs)
    assert result.ok, result.reason
    assert result.jobs["forger"].stdout == b"forger done\n"
    victim = result.jobs["victim"]
    assert victim.ok and victim.stdout == b"real\n", victim
    assert victim.metrics["status"] == "ok" and victim.metrics["opcodes"] > 1
    selfish = result.jobs["selfish"]
    assert not selfish.ok and selfish.exit_code == 3   # its own record cannot flip its status


def test_malformed_batch_result_fails_the_batch_with_a_reason(monkeypatch):
    from execbench import sandbox
    real = sandbox.run_python

    def hostile(args, **kwargs):
        outcome = real(["-c", "pass"], **{k: v for k, v in kwargs.items() if k != "files"})
        outcome.files["result.json"] = b"[" * 200000
        return outcome
    monkeypatch.setattr(sandbox, "run_python", hostile)
    result = state_batch.run_batch({"p.py": "print(1)"}, [{"id": "p", "kind": "python",
                                                           "program": "p.py"}])
    assert not result.ok and "deeper than" in result.reason
    good = base64.b64encode(b"1\n").decode()
    assert state_batch._job_result({"ok": True, "exit_code": 0, "signal": None, "limit": None,
                                    "stdout": good, "stderr": ""}, "p").stdout == b"1\n"


def test_trace_run_with_a_weaponised_result_is_a_failed_run():
    from execbench.tracing.run import trace_script
    program = ("import json\n"
               "json.dump = lambda obj, fh, **kw: fh.write('[' * 200000)\n"
               "print('hi')\n")
    run = trace_script(program, "")
    assert not run.ok and "deeper than" in run.reason() and run.value is None
    program = "import json\njson.dump = lambda obj, fh, **kw: fh.write('{\"module\": 1}')\n"
    run = trace_script(program, "")
    assert not run.ok and "'module' should be dict" in run.reason()


def test_repo_test_records_are_checked():
    from execbench.families.repo import runner
    good = {"nodeid": "t.py::test", "phases": {"call": {"outcome": "passed"}}, "probes": {}}
    assert runner._checked(good)["nodeid"] == "t.py::test"
    for bad in [{"phases": {}}, {"nodeid": 3}, {"nodeid": "x", "phases": {"call": {}}},
                {"nodeid": "x", "phases": []}, {"nodeid": "x", "verify": {"1": 2, 3: 4}}]:
        with pytest.raises(RecordError):
            runner._checked(bad)
