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
# What differs between the sandbox and a user's machine (issue 33, principle 6): each
# sandbox shows other values than the previous one (sandbox/_child.py:_machine, _affinity,
# the rlimits; sandbox/_jobrunner.py:_vary).
MACHINE = {
    "cpu_count": "import os\n\n" + LOOP.format("os.cpu_count() % 997"),
    "affinity": "import os\n\n" + LOOP.format("len(os.sched_getaffinity(0))"),
    "rlimit_cpu": "import resource\n\n" + LOOP.format("resource.getrlimit(resource.RLIMIT_CPU)[0] % 997"),
    "rlimit_as": "import resource\n\n" + LOOP.format("(resource.getrlimit(resource.RLIMIT_AS)[0] >> 20) % 997"),
    "rlimit_nofile": "import resource\n\n" + LOOP.format("resource.getrlimit(resource.RLIMIT_NOFILE)[0] % 997"),
    "gc_freeze": "import gc\n\n" + LOOP.format("gc.get_freeze_count() % 997"),
    "modules": "import sys\n\n" + LOOP.format("len(sys.modules) % 997"),
    "module_names": "import sys\n\n" + LOOP.format("sum(map(len, sys.modules)) % 997"),
    "mounts": LOOP.format("len(open('/proc/self/mountinfo').readlines()) % 997"),
    "root_entries": "import os\n\n" + LOOP.format("len(os.listdir('/'))"),
    # the wall clock and what else differs from a user's machine (issue 33, principle 6, part 2)
    "date": "import datetime\n\n" + LOOP.format("datetime.date.today().toordinal() % 997"),
    "days": "import time\n\n" + LOOP.format("int(time.time() // 86400) % 997"),
    "cpuinfo": LOOP.format("open('/proc/cpuinfo').read().count('processor')"),
    "proc_stat": LOOP.format("sum(ln.startswith('cpu') for ln in open('/proc/stat'))"),
    "preload": "import os\n\n" + LOOP.format("len(os.environ.get('LD_PRELOAD', ''))"),
}


def _build(tmp_path, programs):
    cases = []
    for name, program in programs.items():
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
    return {t.id for t in read_tasks(out)}, {r["candidate"]: r for r in read_rejected(out)}


@pytest.mark.slow
def test_host_dependent_answers_are_rejected(tmp_path):
    admitted, rejected = _build(tmp_path, PROGRAMS)
    assert any("env/pure" in t for t in admitted), (admitted, rejected)
    caps = capabilities()
    dependent = ["timezone", "workdir"] + (["hostname"] if caps["host"] == "varied" else []) \
        + (["uid"] if caps["privileges"].startswith("fresh-uid") else [])
    for name in dependent:
        assert not any(f"env/{name}" in t for t in admitted), name
        assert any(f"env/{name}" in c and r["stage"] == "determinism" for c, r in rejected.items()), \
            (name, rejected)


@pytest.mark.slow
@pytest.mark.skipif(capabilities()["disk"] != "tmpfs", reason="the machine's variations need the new root")
def test_machine_dependent_answers_are_rejected(tmp_path):
    """Keys that hold only on the build machine: its CPU count (os.cpu_count, the affinity
    mask), the rlimits a run has, the runner's frozen gc state and imported modules, the
    mounts a run sees. Each is rejected at the determinism stage; a pure program is admitted."""
    admitted, rejected = _build(tmp_path, {**MACHINE, "pure": PROGRAMS["pure"]})
    assert any("env/pure" in t for t in admitted), (admitted, rejected)
    import os
    names = [n for n in MACHINE if n != "affinity" or len(os.sched_getaffinity(0)) > 1]
    if capabilities()["clock"] != "shifted":   # no C compiler: the date is not varied (logged)
        names = [n for n in names if n not in ("date", "days", "preload")]
    for name in names:
        assert not any(f"env/{name}" in t for t in admitted), (name, rejected)
        assert any(f"env/{name}" in c and r["stage"] == "determinism" for c, r in rejected.items()), \
            (name, rejected)


STATUS = {
    "status_nnp": LOOP.format("int([ln for ln in open('/proc/self/status') if 'NoNewPrivs' in ln][0].split()[1])"),
    "status_relative": "import os\n\n" + LOOP.format("(os.chdir('/proc/self'), len(open('status').read()) % 2)[1]"),
    "status_thread": "import pathlib\n\n" + LOOP.format("len(pathlib.Path('/proc/thread-self/status').read_text()) % 2"),
    "status_pid": "import os\n\n" + LOOP.format("len(open(f'/proc/{os.getpid()}/status').read()) % 2"),
    "own_stat": LOOP.format("len(open('/proc/self/stat').read()) // 10**6"),
}


@pytest.mark.slow
def test_programs_that_read_their_status_file_are_rejected_from_what_they_did(tmp_path):
    """NoNewPrivs: 1 and Seccomp: 2 are the sandbox's in every run (issue 33, principle 6):
    a Python program that opens its status file, under any of its names, ends at once (the
    trace family: a crash at ``execution``; the reason on stderr:
    test_sandbox_clock.py); one that reads /proc/self/stat is not concerned."""
    admitted, rejected = _build(tmp_path, STATUS)
    assert any("env/own_stat" in t for t in admitted), (admitted, rejected)
    for name in [n for n in STATUS if n != "own_stat"]:
        assert not any(f"env/{name}" in t for t in admitted), name
        stages = [r["stage"] for c, r in rejected.items() if f"env/{name}" in c]
        assert stages == ["execution"], (name, rejected)
