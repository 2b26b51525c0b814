"""What differs between the sandbox and a user's machine is varied per run (issue 33,
principle 6): the wall clock (a preload library, sandbox/_clock.py), /proc/cpuinfo and
/proc/stat, the Seccomp_filters count; per job in one sandbox, the clock again."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from execbench.sandbox import _clock, _linux, capabilities, run
from execbench.sandbox.jobs import Job, run_jobs

SHIFTED = capabilities()["clock"] == "shifted"
NEWROOT = capabilities()["disk"] == "tmpfs"

PROBE = r"""
import datetime, os, time
print(int(time.time() // 86400))
print(int(time.time()))
print(open('/proc/cpuinfo').read().count('processor\t:'))
print(sum(1 for ln in open('/proc/stat') if ln.startswith('cpu') and ln[3].isdigit()))
print(os.cpu_count())
stat = {ln.split()[0]: ln.split()[1] for ln in open('/proc/stat') if ln.startswith('btime')}
print(int(stat['btime']) + int(float(open('/proc/uptime').read().split()[0])))
print([ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('Seccomp_filters')][0])
print(os.environ.get('LD_PRELOAD', '-'))
"""


def _probe(**kwargs) -> list[str]:
    r = run(["python3", "-c", PROBE], **kwargs)
    assert r.ok, r.stderr
    return r.stdout.decode().split("\n")


@pytest.mark.skipif(not (SHIFTED and NEWROOT), reason="needs the preload library and the new root")
def test_consecutive_runs_see_other_dates_cpus_and_filters():
    runs = [_probe() for _ in range(3)]
    today = int(time.time() // 86400)   # in UTC days: each run has its own time zone
    dates = [int(r[0]) for r in runs]
    assert len(set(dates)) == 3, dates                 # never the same date twice in a row
    assert today in dates and max(dates) > today, (today, dates)   # one run in three: the real one
    for r in runs:
        clock, cpuinfo, stat_cpus, cpu_count, boot_plus_uptime = map(int, r[1:6])
        # /proc/cpuinfo and /proc/stat tell the same CPU count as sysconf
        assert cpuinfo == stat_cpus == cpu_count, r
        # boot time plus uptime tells the run's (shifted) date, not the real one
        assert abs(boot_plus_uptime - clock) < 5, r
    assert len({r[6] for r in runs}) == 3   # Seccomp_filters: 1, 2, 3 in some order
    assert len({r[2] for r in runs}) == 3   # and 3 CPU counts


@pytest.mark.skipif(not SHIFTED, reason="needs the preload library")
def test_installs_keep_the_real_clock_and_the_library_is_content_keyed():
    if int(capabilities()["landlock_abi"]) < 4:
        pytest.skip("network_ports needs Landlock ABI 4")
    r = run(["python3", "-c", "import time, os; print(int(time.time()), os.environ.get('LD_PRELOAD', '-'))"],
            network_ports=[443])
    seconds, preload = r.stdout.decode().split()
    assert abs(int(seconds) - time.time()) < 60 and preload == "-" and r.isolation["clock"] == "real"
    path = _clock.shim(run)
    assert path is not None and os.path.basename(path) == _clock.shim_name()
    assert path.startswith(str(_clock._cache_dir())) and _clock.SHIM_SOURCE.count("execbench_clock_set") == 1


@pytest.mark.skipif(not SHIFTED, reason="needs the preload library")
def test_each_job_of_one_sandbox_has_a_clock_of_its_own():
    """Jobs in one sandbox (a C++ state case's repeats) see other dates: the forked Python
    job (the library's setter) and what it executes (the variables); a job with the offset
    0 has neither variable."""
    script = ("import os, subprocess, time; print(int(time.time() // 86400)); "
              "print(subprocess.run(['python3', '-c', 'import time; print(int(time.time() // 86400))'],"
              " capture_output=True, text=True).stdout.strip()); print(os.environ.get('LD_PRELOAD', '-'))")
    jobs = [Job(f"j{i}", "exec", args={"argv": ["python3", "-c", script]}) for i in range(3)]
    results = run_jobs(jobs)
    seen = []
    for result in results:
        assert result.ok, result
        own, child, preload = result.stdout.decode().split()
        assert own == child, result.stdout
        seen.append((int(own), preload))
    assert len({date for date, _ in seen}) == 3, seen
    today = int(time.time() // 86400)
    assert [p for d, p in seen if d == today] == ["-"]          # the real date: no variable
    assert all(p != "-" for d, p in seen if d != today)


def test_the_made_up_proc_files_count_the_cpus_asked_for():
    host_info = open("/proc/cpuinfo").read()
    host_stat = open("/proc/stat").read()
    for cpus in (1, 3, 8):
        info = _linux.cpuinfo_for(host_info, cpus)
        assert info.count("processor\t:") == cpus
        assert [ln.split(":")[1].strip() for ln in info.splitlines() if ln.startswith("processor")] == \
            [str(i) for i in range(cpus)]
        made = _linux.stat_for(host_stat, cpus, 86400)
        per_cpu = [ln.split()[0] for ln in made.splitlines() if ln.startswith("cpu") and ln[3].isdigit()]
        assert per_cpu == [f"cpu{i}" for i in range(cpus)]
        host_btime = int(next(ln.split()[1] for ln in host_stat.splitlines() if ln.startswith("btime")))
        assert f"btime {host_btime + 86400}" in made.splitlines()


@pytest.mark.skipif(shutil.which("g++") is None or not SHIFTED, reason="needs g++ and the preload library")
def test_a_compiled_programs_time_and_system_clock_are_shifted_too():
    source = ("#include <chrono>\n#include <ctime>\n#include <iostream>\nint main() {\n"
              "  auto now = std::chrono::system_clock::now().time_since_epoch();\n"
              "  std::cout << std::time(nullptr) / 86400 << ' '\n"
              "            << std::chrono::duration_cast<std::chrono::hours>(now).count() / 24 << '\\n';\n}\n")
    compiled = run(["g++", "-O0", "-o", "prog", "main.cpp"], files={"main.cpp": source}, collect=["prog"])
    assert compiled.ok, compiled.stderr
    days = []
    for _ in range(3):
        r = run(["./prog"], files={"prog": compiled.files["prog"]})
        assert r.ok, r.stderr
        by_time, by_chrono = map(int, r.stdout.split())
        assert by_time == by_chrono
        days.append(by_time)
    assert len(set(days)) == 3 and int(time.time() // 86400) in days, days


def test_a_python_job_that_opens_its_status_file_ends_with_the_reason():
    """NoNewPrivs and Seccomp lines are the sandbox's in every run: a forked Python job that
    opens its status file under any name (a link, a directory descriptor, libc called through
    ctypes) ends at once, the reason on stderr (the preload library's check of the opened
    descriptor); /proc/self/stat is not concerned."""
    from execbench.sandbox import _clock, run

    assert _clock.shim(run) is not None, "these names need the preload library (a C compiler)"
    reads = ["open('/proc/self/status').read()",
             "import os; os.chdir('/proc/self'); open('status').read()",
             "import pathlib; pathlib.Path('/proc/thread-self/status').read_text()",
             "import os; open(f'/proc/{os.getpid()}/task/{os.getpid()}/status').read()",
             "import sys; sys.addaudithook(lambda *a: None); open('/proc/self/status').read()",
             # names only the descriptor tells (the preload library's check, sandbox/_clock.py)
             "import os; os.symlink('/proc/self/status', 'innocent.txt'); open('innocent.txt').read()",
             "import os; d = os.open('/proc/self', os.O_RDONLY); os.read(os.open('status', os.O_RDONLY, dir_fd=d), 9)",
             "import ctypes; ctypes.CDLL(None).fopen(b'/proc/self/status', b'r')"]
    jobs = [Job(f"j{i}", "builtins:exec", args=code + "; print('read')") for i, code in enumerate(reads)]
    jobs.append(Job("stat", "builtins:exec", args="open('/proc/self/stat').read(); print('read')"))
    results = run_jobs(jobs)
    for result in results[:-1]:
        assert result.exit_code == 1 and not result.stdout, result
        assert "its NoNewPrivs and Seccomp lines are the sandbox's" in result.stderr, result
    assert results[-1].ok and results[-1].stdout == b"read\n"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_restricted_runs_leave_out_cpus_in_turn():
    """Every other run leaves one CPU out (the count a program sees differs from the previous
    run's); two restricted runs in a row leave out different CPUs, so sandboxes run side by
    side are not stacked on one CPU (issue 33's speed)."""
    from execbench.sandbox import _child

    allowed = sorted(os.sched_getaffinity(0))
    assert _child._affinity(0) == [] and _child._affinity(2) == []
    first, second = _child._affinity(1), _child._affinity(3)
    assert len(first) == len(second) == len(allowed) - 1
    assert set(allowed) - set(first) != set(allowed) - set(second)
