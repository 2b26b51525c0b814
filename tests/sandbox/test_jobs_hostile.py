"""Issue 22: hostile programs against the job runner, one test per class of attack.

Each attack worked on the runner before issue 22 (results read back from files in the
job's directory, ``json`` patched by the program, runs of one case sharing a directory, a
runner that held every job spec, IPC objects outliving a candidate, unbounded value
parsing, ...). The programs are our own; everything runs in the real sandbox.
"""

from __future__ import annotations

import os
import textwrap
import types

import pytest

from execbench.families.state import jobs as state_jobs
from execbench.sandbox import jobs as jobs_module
from execbench.sandbox.jobs import Job, run_jobs
from execbench.tracing.run import trace_calls, trace_script

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = {"PYTHONPATH": HERE}
MODULE = "job_handlers"


def job(job_id: str, program: str, **kw) -> Job:
    return Job(job_id, f"{MODULE}:run_python_file", args={"file": "p.py"}, files={"p.py": program}, **kw)


def run(jobs: list[Job], **kw):
    return run_jobs(jobs, env=ENV, read_only_paths=[HERE], **kw)


FUNCTION = "def f():\n    x = 1\n    return x\n"   # lines 2 and 3 run in f()


# -- 1, 2: results the program cannot write ---------------------------------------------

def test_a_planted_call_result_is_not_read():
    planter = textwrap.dedent("""
        import json, os
        forged = {"status": "ok", "lines": [2, 999], "line_events": 2, "call": "f()"}
        for name in ("call-0.json", "call-1.json"):
            with open(name, "w") as fh:
                json.dump(forged, fh)
            os.chmod(name, 0o444)
    """)
    result = trace_calls(planter + FUNCTION, ["f()"])
    assert result.ok, result.reason()
    offset = planter.count("\n")
    assert result.value["calls"][0]["lines"] == [offset + 2, offset + 3]


def test_a_program_that_patches_json_does_not_forge_its_trace():
    patcher = textwrap.dedent("""
        import json
        fake = '{"status": "ok", "lines": [1, 1, 1], "line_events": 3, "call": "f()"}'
        json.dump = lambda obj, fh, **kw: fh.write(fake)
        json.dumps = lambda obj, **kw: fake
    """)
    calls = trace_calls(patcher + FUNCTION, ["f()"])
    offset = patcher.count("\n")
    assert calls.ok and calls.value["calls"][0]["lines"] == [offset + 2, offset + 3]
    script = trace_script(patcher + FUNCTION + "f()\n")
    assert script.ok and 1 not in script.value["script"]["lines"][1:]


def test_a_record_naming_lines_the_program_does_not_have_is_refused():
    forger = ("import os\nos.write(3, b'{\"module\": {\"status\": \"ok\"}, "
              "\"script\": {\"status\": \"ok\", \"lines\": [1, 2, 999]}}')\nos._exit(0)\n")
    result = trace_script(forger)
    assert not result.ok and "999" in result.reason() and "not a line of the program" in result.reason()


# -- 3: the sandbox looks like an ordinary machine, and differs per run ------------------

def test_the_sandbox_looks_like_an_ordinary_machine():
    probe = ("import os\nopen('/dev/shm/x', 'w').write('1')\n"
             "result = [os.getpid(), os.environ.get('USER'), os.environ.get('LOGNAME'), os.listdir('/dev/shm')]\n")
    first, second = (run([job("env", probe)])[0] for _ in range(2))
    assert first.ok and second.ok, (first.reason(), second.reason())
    (pid1, user1, logname1, shm1), (pid2, user2, _, _) = first.value["result"], second.value["result"]
    assert pid1 > 100 and pid2 > 100 and pid1 != pid2
    assert user1 and user1 == logname1 and user1 != user2
    assert shm1 == ["x"]


# -- 5: every run of a candidate starts from a fresh, identical directory -----------------

COUNTER = ("import os\nn = int(open('count').read()) + 1 if os.path.exists('count') else 1\n"
           "open('count', 'w').write(str(n))\nprint(f'session {n}')\n")


def test_every_python_run_of_a_case_starts_in_a_fresh_directory():
    limits = {"cpu": 10, "wall": 10, "memory_mb": 512, "group": "case"}
    short, long = state_jobs.run([state_jobs.python_job("short", "main.py", COUNTER, **limits),
                                  state_jobs.python_job("long", "main.py", COUNTER, **limits)])
    assert short.stdout == long.stdout == b"session 1\n"


def test_every_run_of_a_compiled_program_starts_from_the_kept_build():
    build = Job("build", "exec", args={"argv": ["/bin/sh", "-c", "mkdir -p bin && echo 'echo built' > bin/prog"]},
                group="case", keep=["bin/prog"])
    tamper = ("if [ -e count ]; then echo seen; fi; echo x > count; echo x > ../count; "
              "echo 'echo tampered' > bin/prog; sh bin/prog")
    runs = [Job(f"run{i}", "exec", args={"argv": ["/bin/sh", "-c", tamper]}, group="case", fresh=True,
                needs=["build"]) for i in range(2)]
    results = run([build, *runs])
    assert all(r.ok for r in results), [r.reason() for r in results]
    assert [r.stdout for r in results[1:]] == [b"tampered\n", b"tampered\n"]   # no "seen": no count left
    check = Job("check", "exec", args={"argv": ["/bin/sh", "-c", "cat bin/prog; ls"]}, group="case", fresh=True)
    assert run([build, check])[1].stdout == b"echo built\nbin\n"


# -- 6: a job cannot break the runner's cleanup for the next candidate ---------------------

def test_a_job_that_locks_its_directories_does_not_fail_the_next_candidate():
    locker = ("import os\nos.makedirs('deep/er', exist_ok=True)\nopen('deep/er/f', 'w').write('x')\n"
              "for path in ('deep/er', 'deep', '.', '..'):\n    os.chmod(path, 0o100)\nresult = 'locked'\n")
    results = run([job("locker", locker), job("next", "import os\nresult = sorted(os.listdir('.'))\n")])
    assert results[0].value == {"result": "locked"}
    assert results[1].ok and results[1].value == {"result": ["p.py"]}, results[1].reason()


def test_a_failure_between_jobs_blames_nobody(monkeypatch):
    """The runner's cleanup fails after job a: b did not start, so it runs again in a new
    sandbox instead of failing; the runner dying during a job blames that job only."""
    def record(job_id: str) -> bytes:
        header = {"id": job_id, "exit_code": 0, "signal": None, "timed_out": False, "wall": 0.1, "cpu": 0.1,
                  "maxrss_kb": 1, "stdout": 2, "stdout_truncated": False, "stderr": 0, "value": None,
                  "value_error": None, "files": {}}
        return b'{"start": "%s"}\n' % job_id.encode() + jobs_module.json.dumps(header).encode() + b"\nok"

    outputs = iter([record("a") + b'{"runner_error": "PermissionError: cleanup"}\n',
                    record("b") + b'{"start": "c"}\n',   # died during c
                    record("d")])
    calls = []

    def fake_start(pending, **kw):
        calls.append([j.id for j in pending])
        return types.SimpleNamespace(stdout=next(outputs), stderr=b"", limit=None, reason=lambda: "killed")

    monkeypatch.setattr(jobs_module, "_start", fake_start)
    results = run_jobs([Job(x, "exec") for x in "abcd"])
    assert calls == [["a", "b", "c", "d"], ["b", "c", "d"], ["d"]]
    assert [r.ok for r in results] == [True, True, False, True]
    assert "during this job" in results[2].reason()


# -- 8: a job's memory holds nothing of other jobs -----------------------------------------

# reads every anonymous region of its own memory (heap, mappings, stack) for the secrets,
# each held as two halves (so neither its text nor its own objects contain one whole)
SCANNER = textwrap.dedent("""
    import ctypes
    halves = [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in SECRETS]

    def holds(data, head, tail):
        at = data.find(head)
        while at >= 0:
            if data.startswith(tail, at + len(head)):
                return True
            at = data.find(head, at + 1)
        return False

    found, scanned = set(), 0
    with open('/proc/self/maps') as fh:
        regions = [line.split() for line in fh]
    for fields in regions:
        start, end = (int(x, 16) for x in fields[0].split('-'))
        name = fields[5] if len(fields) > 5 else ''
        if not fields[1].startswith('rw') or name not in ('', '[heap]', '[stack]') or end - start > 1 << 28:
            continue
        data = ctypes.string_at(start, end - start)
        scanned += len(data)
        found.update(n for n, (head, tail) in enumerate(halves) if holds(data, head, tail))
    result = [sorted(found), scanned > 1 << 20]
""")


def test_a_job_holds_nothing_of_other_jobs_in_memory():
    secrets = {name: f"execbench-secret-{name}-{os.urandom(6).hex()}" for name in
               ("source", "stdout", "value", "later")}
    earlier = (f"# {secrets['source']}\nprint({secrets['stdout']!r})\nresult = {secrets['value']!r}\n")
    scanner = SCANNER.replace("SECRETS", repr([(s[:20].encode().hex(), s[20:].encode().hex())
                                               for s in secrets.values()]))
    later = f"result = {secrets['later']!r}\n"
    results = run([job("earlier", earlier), job("scanner", scanner), job("later", later)])
    assert results[0].ok and results[2].ok
    assert results[1].ok, results[1].reason()
    assert results[1].value == {"result": [[], True]}


# -- 9: no IPC object survives a candidate ---------------------------------------------------

IPC = textwrap.dedent("""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    key = 0x22C0FFEE
    if MODE == 'write':
        shm = libc.shmget(key, 4096, 0o1000 | 0o600)          # IPC_CREAT
        ctypes.memmove(libc.shmat(shm, None, 0), b'hello', 5)
        sem = libc.semget(key, 1, 0o1000 | 0o600)
        msg = libc.msgget(key, 0o1000 | 0o600)
        result = [shm >= 0, sem >= 0, msg >= 0]
    else:
        result = [libc.shmget(key, 0, 0) >= 0, libc.semget(key, 0, 0) >= 0, libc.msgget(key, 0, 0) >= 0]
    mq = libc.syscall(240 if ctypes.sizeof(ctypes.c_void_p) == 8 and __import__('platform').machine() == 'x86_64'
                      else 180, b'q', 0o100 | 2, 0o600, None)   # mq_open(O_CREAT | O_RDWR)
    result.append(mq >= 0)
""")


def test_ipc_objects_do_not_outlive_a_candidate():
    writer, reader = (IPC.replace("MODE", repr(mode)) for mode in ("write", "read"))
    results = run([job("writer", writer), job("reader", reader)])
    assert results[0].value == {"result": [True, True, True, False]}   # POSIX queues: refused
    assert results[1].value == {"result": [False, False, False, False]}


# -- 10: a value that would take gigabytes once parsed -----------------------------------------

def test_a_value_that_would_take_gigabytes_is_refused_before_parsing():
    bomb = "import os\nos.write(3, b'[' + b'[],' * (21 << 20) + b'[]]')\nos._exit(0)\n"
    results = run([job("bomb", bomb), job("next", "result = 2\n")])
    assert results[0].value is None and "MiB parsed" in results[0].value_error
    assert results[1].value == {"result": 2}


# -- 5, trace calls: every traced call starts from the directory the module left ------------

CALL_COUNTER = textwrap.dedent("""
    import os
    PATH = PATH_HERE
    if PRESET:   # what the module leaves is part of every call's start
        with open(PATH, 'w') as fh:
            fh.write('0')

    def f():
        n = int(open(PATH).read()) + 1 if os.path.exists(PATH) else 1
        os.makedirs(os.path.dirname(PATH) or '.', exist_ok=True)
        with open(PATH, 'w') as fh:
            fh.write(str(n))
        if n > 1:
            return 'again'
        return 'first'
""")


def _traced_alone_and_in_turn(program: str, call: str) -> tuple[list, list]:
    alone, in_turn = trace_calls(program, [call]), trace_calls(program, [call, call, call])
    assert alone.ok and in_turn.ok, (alone.reason(), in_turn.reason())
    return alone.value["calls"], in_turn.value["calls"]


@pytest.mark.parametrize("path, preset", [("count", True), ("cache/count", False), ("../count", True),
                                          ("/dev/shm/count", False)])
def test_every_traced_call_starts_from_the_directory_the_module_left(path, preset):
    """A call that keeps a counter (in its cwd, a directory it makes, the work dir above it,
    /dev/shm) is traced as when it is traced alone: the 'again' branch never runs."""
    program = CALL_COUNTER.replace("PATH_HERE", repr(path)).replace("PRESET", repr(preset))
    alone, in_turn = _traced_alone_and_in_turn(program, "f()")
    assert alone[0]["status"] == "ok", alone
    assert [c.get("lines", c) for c in in_turn] == [alone[0]["lines"]] * 3


DETACHED_WRITER = textwrap.dedent("""
    import os, time
    MARK = os.path.abspath('mark')     # by path: the directory may be rebuilt between calls

    def f():
        time.sleep(1.0)
        if os.path.exists(MARK):
            seen = True
        if os.fork() == 0:                 # leaves a writer behind, out of the call's process group
            os.setsid()
            if os.fork() == 0:
                os.closerange(0, 1 << 16)
                for _ in range(500):
                    with open(MARK, 'w') as fh:
                        fh.write('x')
                    time.sleep(0.01)
            os._exit(0)
        return 1
""")


def test_a_writer_a_call_leaves_behind_does_not_reach_the_next_call():
    alone, in_turn = _traced_alone_and_in_turn(DETACHED_WRITER, "f()")
    assert [c.get("lines", c) for c in in_turn] == [alone[0]["lines"]] * 3


@pytest.mark.parametrize("make, reason", [
    ("for i in range(5000):\n    open(f'f{i}', 'w').close()\n", "entries"),
    ("import os\nos.makedirs('/'.join(['d'] * 40))\n", "levels"),
])
def test_a_module_whose_directory_cannot_be_copied_is_refused_with_a_reason(make, reason):
    result = trace_calls(make + FUNCTION, ["f()"])
    assert result.ok, result.reason()
    module = result.value["module"]
    assert module["status"] == "error" and module["error"]["type"] == "DirectoryOverCaps", module
    assert reason in module["error"]["message"] and result.value["calls"] == []


LOCKER = textwrap.dedent("""
    import os
    os.makedirs('sub', exist_ok=True)
    with open('sub/data', 'w') as fh:
        fh.write('module')

    def f():
        if os.path.lexists('link') or not os.access('sub', os.R_OK | os.X_OK) or not os.access('.', os.W_OK):
            seen = True
        os.symlink('/etc/hostname', 'link')
        os.chmod('sub', 0)
        os.chmod('.', 0o500)
        return 1
""")


def test_a_call_that_locks_its_directory_does_not_reach_the_next_call():
    """Modes, a planted symlink: the next call starts from the module's directory all the same."""
    alone, in_turn = _traced_alone_and_in_turn(LOCKER, "f()")
    assert alone[0]["status"] == "ok", alone
    assert [c.get("lines", c) for c in in_turn] == [alone[0]["lines"]] * 3
