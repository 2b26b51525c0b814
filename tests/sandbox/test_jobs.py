"""The job runner (execbench.sandbox.jobs): many jobs in one real sandbox, each failing alone.

Handlers used here are real functions of this test module (imported inside the sandbox by
module name, as every family's handler is), so the tests exercise the same path as builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from execbench.sandbox.jobs import Job, run_jobs

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = {"PYTHONPATH": HERE}  # the sandboxed runner imports job_handlers.py from here
MODULE = "job_handlers"


def job(job_id: str, program: str, **kw) -> Job:
    return Job(job_id, f"{MODULE}:run_python_file", args={"file": "p.py"}, files={"p.py": program}, **kw)


def run(jobs: list[Job], **kw):
    return run_jobs(jobs, env=ENV, read_only_paths=[HERE], **kw)


def test_values_stdout_and_stdin_come_back_per_job():
    results = run([job("a", "result = 6 * 7\nprint('out')\n"),
                   job("b", "import sys\nresult = sys.stdin.read().upper()\n", stdin="hello")])
    assert [r.ok for r in results] == [True, True]
    assert results[0].value == {"result": 42} and results[0].stdout == b"out\n"
    assert results[1].value == {"result": "HELLO"}


def test_each_failure_is_its_own_and_the_batch_goes_on():
    results = run([
        job("raise", "raise ValueError('boom')\n"),
        job("segv", "import ctypes\nctypes.string_at(0)\n"),
        job("hang", "while True:\n    pass\n", cpu_seconds=1, wall_seconds=30),
        job("sleep", "import time\ntime.sleep(60)\n", wall_seconds=1),
        job("flood", "import sys\nsys.stdout.write('x' * 5000)\n", max_output=1000),
        job("memory", "x = bytearray(2 << 30)\n", memory_mb=256),
        job("exit", "raise SystemExit(3)\n"),
        job("fine", "result = 'still here'\n"),
    ])
    by_id = {r.id: r for r in results}
    assert not by_id["raise"].ok and "ValueError: boom" in by_id["raise"].reason()
    assert by_id["segv"].signal == 11 and "SIGSEGV" in by_id["segv"].reason()
    assert by_id["hang"].limit == "cpu_time"
    assert by_id["sleep"].limit == "wall_time"
    assert by_id["flood"].limit == "output" and len(by_id["flood"].stdout) == 1000
    assert by_id["memory"].limit == "memory"
    assert by_id["exit"].exit_code == 3 and by_id["exit"].limit is None
    assert by_id["fine"].ok and by_id["fine"].value == {"result": "still here"}


def test_groups_share_a_directory_and_other_groups_start_empty():
    writer = "import os\nopen('left.txt', 'w').write('secret')\nos.makedirs('d/e')\nresult = 1\n"
    reader = "import os\nresult = sorted(os.listdir('.'))\n"
    results = run([job("w", writer, group="g1"), job("same", reader, group="g1"),
                   job("other", reader, group="g2")])
    assert results[1].value["result"] == ["d", "left.txt", "p.py"]
    assert results[2].value["result"] == ["p.py"]


def test_tmpdir_content_does_not_reach_the_next_group():
    writer = ("import os, tempfile\nopen(os.path.join(tempfile.gettempdir(), 'x'), 'w').write('1')\n"
              "os.makedirs('../x/x')\nopen('../x/x/x', 'w').write('1')\nos.chmod('../x', 0)\nresult = 1\n")
    reader = ("import os, tempfile\nbase = os.path.dirname(os.getcwd())\n"
              "result = [n for r, d, f in os.walk(base) for n in d + f if n == 'x']\n")
    results = run([job("w", writer), job("r", reader)])
    assert results[0].ok and results[1].value == {"result": []}


def test_leftover_processes_are_killed_before_the_next_job():
    daemon = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(1)\n"
              "    open(os.path.join(os.environ['HOME'], '..', 'late'), 'w').write('x')\n"
              "    os._exit(0)\nresult = 1\n")
    check = "import os, time\ntime.sleep(2)\nresult = os.path.exists(os.path.join(os.getcwd(), '..', 'late'))\n"
    results = run([job("daemon", daemon), job("check", check)])
    assert results[0].ok and results[1].value == {"result": False}


def test_needs_skips_after_a_failed_job():
    results = run([job("compile", "raise SystemExit(1)\n", group="g"),
                   job("run", "result = 1\n", group="g", needs=["compile"])])
    assert results[1].skipped and not results[1].ok and "skipped" in results[1].reason()


def test_exec_jobs_and_collected_files():
    results = run([Job("sh", "exec", args={"argv": ["/bin/sh", "-c", "echo hi > out.txt; echo done"]},
                       collect=["out.txt"])])
    assert results[0].ok and results[0].stdout == b"done\n" and results[0].files == {"out.txt": b"hi\n"}


def test_a_job_cannot_signal_the_runner():
    """Each job's child is in a Landlock signal scope of its own (ABI >= 6): killing or
    stopping the runner (its parent) is refused, and the batch goes on at full speed."""
    for signame in ("SIGKILL", "SIGSTOP"):
        attacker = f"import os, signal\nos.kill(os.getppid(), signal.{signame})\n"
        results = run([job("attacker", attacker), job("after", "result = 3\n")])
        assert not results[0].ok and "PermissionError" in results[0].reason()
        assert results[1].ok and results[1].value == {"result": 3}
        assert results[1].wall < 5


def test_a_job_that_kills_the_runner_fails_alone_and_the_rest_run_again(monkeypatch):
    """Without Landlock's signal scope (forced off here) a job can kill the runner: it fails
    alone with the sandbox's reason, the jobs the runner did not reach run again."""
    monkeypatch.setenv("EXECBENCH_SANDBOX_FORCE_FALLBACK", "landlock")
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    results = run([job("before", "result = 1\n"), job("killer", killer),
                   job("same-group", "result = 2\n", group="killer"), job("after", "result = 3\n")])
    assert results[0].ok and results[0].value == {"result": 1}
    assert not results[1].ok and "job runner ended during this job" in results[1].reason()
    assert results[3].ok and results[3].value == {"result": 3}


def test_a_job_cannot_forge_a_later_jobs_record():
    # the runner is not dumpable: its protocol pipe is out of a job's reach
    forger = ("import os, glob\nout = []\nfor fd in glob.glob(f'/proc/{os.getppid()}/fd/*'):\n"
              "    try:\n        out.append(os.open(fd, os.O_WRONLY))\n    except OSError:\n        pass\n"
              "for fd in out:\n    os.write(fd, b'{\"id\": \"victim\", \"skipped\": true}\\n')\nresult = len(out)\n")
    results = run([job("forger", forger), job("victim", "result = 'genuine'\n")])
    assert results[0].value == {"result": 0}
    assert results[1].ok and results[1].value == {"result": "genuine"}


def test_a_weaponised_value_is_a_failed_value_not_a_crash():
    # the value's channel (fd 3) is open to the program: what it writes there spoils the
    # value, never the parent or the next job
    program = "import os\nos.write(3, b'[' * 100000)\nresult = 1\n"
    results = run([job("deep", program), job("next", "result = 2\n")])
    assert results[0].value is None and "deeper than" in results[0].value_error
    assert results[1].value == {"result": 2}


def test_hash_seed_and_interpreter_are_the_callers():
    program = "result = hash('execbench')\n"
    one = run([job("a", program)], seed=1)[0].value
    two = run([job("a", program)], seed=2)[0].value
    assert one == run([job("a", program)], seed=1)[0].value and one != two
    other = "/root/.pyenv/versions/3.12.1/bin/python"
    if not os.path.exists(other) or sys.version_info[:2] == (3, 12):
        pytest.skip("needs a second interpreter")
    version = run([job("v", "import sys\nresult = list(sys.version_info[:2])\n")], python=other)[0]
    assert version.value == {"result": [3, 12]}, version.reason()


def test_job_ids_must_be_unique_and_paths_relative():
    with pytest.raises(ValueError):
        run([job("a", "1"), job("a", "2")])
    with pytest.raises(ValueError):
        run([Job("a", "exec", args={"argv": ["true"]}, files={"../x": "1"})])


def test_an_exec_jobs_venv_and_its_base_interpreter_are_readable(tmp_path):
    """As for sandbox.run's argv[0]: a venv's interpreter (in a dir no sandbox may read
    otherwise) runs with its venv and its base interpreter's installation readable."""
    base = "/root/.pyenv/versions/3.12.1/bin/python"
    if not os.path.exists(base) or sys.version_info[:2] == (3, 12):
        pytest.skip("needs a second interpreter")
    subprocess.run([base, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    program = "import json, sys\nprint(json.dumps([sys.prefix, list(sys.version_info[:2])]))"
    result = run([Job("v", "exec", args={"argv": [str(tmp_path / "venv" / "bin" / "python"), "-c", program]})])[0]
    assert result.ok, result.reason()
    assert json.loads(result.stdout) == [str(tmp_path / "venv"), [3, 12]]


def test_the_sandboxs_file_size_and_open_file_limits_are_the_callers():
    program = ("import resource\nresult = [resource.getrlimit(resource.RLIMIT_FSIZE)[1], "
               "resource.getrlimit(resource.RLIMIT_NOFILE)[1]]\n")
    # the open files: the caller's plus 0, 8, 16 or 24, differing from the previous sandbox's (issue 33)
    size, files = run([job("default", program)])[0].value["result"]
    assert size == 64 << 20 and files in (256, 264, 272, 280)
    size, files = run([job("raised", program)], file_size_bytes=1 << 30, open_files=1024)[0].value["result"]
    assert size == 1 << 30 and files in (1024, 1032, 1040, 1048)


def test_binary_output_and_files_that_look_like_records_come_back_intact():
    fake = b'\n{"id": "next", "skipped": true}\n'
    program = ("import sys\nsys.stdout.buffer.write(%r * 3)\nopen('blob.bin', 'wb').write(bytes(range(256)) + %r)\n"
               "result = 'x\\n' * 5\n" % (fake, fake))
    results = run([job("a", program, collect=["blob.bin"]), job("next", "result = 'real'\n")])
    assert results[0].stdout == fake * 3 and results[0].files["blob.bin"] == bytes(range(256)) + fake
    assert results[0].value == {"result": "x\n" * 5}
    assert results[1].ok and results[1].value == {"result": "real"}


def test_a_value_that_is_not_utf8_is_a_value_error():
    program = "import os\nos.write(3, b'\\xff\\xfe')\nos._exit(0)\n"
    result = run([job("a", program)])[0]
    assert result.value is None and "not UTF-8" in result.value_error


def test_jobs_start_from_a_frozen_warm_state():
    """The runner's own objects are out of the collector's reach in every job (a collection
    in a job or a traced call never walks them): ``gc.freeze`` after the warm-up."""
    results = run([job(f"j{i}", "import gc\nresult = [gc.get_freeze_count(), len(gc.get_objects(2))]\n")
                   for i in range(2)])
    assert [r.ok for r in results] == [True, True]
    for result in results:
        frozen, old = result.value["result"]
        assert frozen > 5000, frozen          # the interpreter's and execbench's modules
        assert old < frozen / 10, (old, frozen)
