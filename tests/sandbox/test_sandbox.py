"""The sandbox against real (and hostile) subprocesses.

Hostile programs are bounded even if containment failed (a fork bomb forks at most a few
thousand times, allocations stop at a few GiB), so a sandbox bug cannot take the machine down.
Every test checks that nothing is left behind: processes, cgroups, work dirs.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from execbench import sandbox
from execbench.sandbox import Limits, capabilities, run, run_python
from execbench.sandbox import _cgroup, _run

CAPS = capabilities()
CONTAINED = CAPS["tasks"] not in ("none", "rlimit-nproc")
needs_containment = pytest.mark.skipif(not CONTAINED, reason=f"no task containment here: {CAPS}")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="fallbacks need root")


def _our_cgroups() -> list[str]:
    try:
        return [n for n in os.listdir(os.path.join(_cgroup.PIDS_ROOT, "execbench"))
                if n.startswith(f"{os.getpid()}-")]
    except FileNotFoundError:
        return []


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path, monkeypatch):
    """Work dirs go to a private temp root; afterwards it must be empty and no cgroup of
    ours may remain."""
    root = tmp_path / "tmproot"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield
    assert os.listdir(root) == []
    assert _our_cgroups() == []


def py(code: str, **kwargs) -> sandbox.SandboxResult:
    """Python code in the sandbox, without site (-S): 2-3x faster to start here, and the
    hostile programs need only the stdlib. run_python itself is tested separately."""
    return run([sys.executable, "-S", "-c", textwrap.dedent(code)], **kwargs)


def _with_token(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if token.encode() in f.read().split(b"\0"):
                    found.append(int(entry))
        except (OSError, ValueError):
            pass
    return found


def assert_dead(token: str) -> None:
    """No process on the host has ``token`` as an argument (the sandbox's /proc is its
    own PID namespace's, so programs cannot tell their host pid)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        if not _with_token(token):
            return
        time.sleep(0.01)
    pytest.fail(f"processes {_with_token(token)} survived")


def sleeper(token: str) -> str:
    """Python source: replace this process by a long sleep carrying ``token`` in argv."""
    return (f"os.execv(sys.executable, [sys.executable, '-S', '-c', "
            f"'import time; time.sleep(1000)', {token!r}])")


# --- basics --------------------------------------------------------------------

def test_capabilities_are_probed_once_and_reported():
    assert capabilities() == CAPS
    assert set(CAPS) >= {"network", "filesystem", "tasks", "privileges"}
    r = run(["/bin/true"])
    assert r.ok and r.reason() == "exit 0"
    assert r.isolation == {k: v for k, v in CAPS.items() if k != "landlock_abi"}


@pytest.mark.skipif(os.geteuid() != 0, reason="expectations for this root machine")
def test_full_isolation_available_here():
    assert CAPS["network"] == "netns"
    assert CAPS["filesystem"] == CAPS["reads"] == "newroot+landlock"
    assert CAPS["tasks"] == "cgroup-pids+pidns"
    assert CAPS["privileges"] == "fresh-uid"
    assert CAPS["proc"] == "own-pidns" and CAPS["syscalls"] == "seccomp"


def test_exit_codes_and_reason():
    r = py("import sys; print('out'); print('boom: bad input', file=sys.stderr); sys.exit(3)")
    assert (r.exit_code, r.signal, r.limit, r.ok) == (3, None, None, False)
    assert r.stdout == b"out\n"
    assert r.reason() == "exit 3: boom: bad input"
    r = py("raise ValueError('nope')")
    assert r.exit_code == 1 and r.reason() == "exit 1: ValueError: nope"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGSEGV])
def test_program_killed_by_its_own_signal(sig):
    # The program is not pid 1 of its namespace, so signals to itself are not ignored.
    r = py(f"import os; os.kill(os.getpid(), {int(sig)}); import time; time.sleep(5)")
    assert (r.exit_code, r.signal, r.limit) == (None, sig, None)
    assert r.reason() == f"killed by signal {int(sig)} ({sig.name})"  # not the end of its sleep


def test_stdin_str_bytes_large_and_unread():
    assert run(["/bin/cat"], stdin="héllo\n").stdout == "héllo\n".encode()
    blob = os.urandom(3 * 1024 * 1024)
    r = run(["/bin/cat"], stdin=blob, limits=Limits(output_bytes=8 * 1024 * 1024))
    assert r.stdout == blob and not r.stdout_truncated
    r = run(["/bin/true"], stdin=blob)  # never reads: no deadlock, no error
    assert r.ok


def test_env_is_scrubbed(monkeypatch):
    monkeypatch.setenv("EXECBENCH_TEST_SECRET", "s3cret")
    r = run_python(["-c", "import json, os; print(json.dumps(dict(os.environ)))"],
                   env={"MY_VAR": "1", "PYTHONHASHSEED": "0"})
    import json
    env = json.loads(r.stdout)
    assert "EXECBENCH_TEST_SECRET" not in env and "s3cret" not in r.stdout.decode()
    assert env["MY_VAR"] == "1" and env["PYTHONHASHSEED"] == "0" and env["LANG"] == "C.UTF-8"
    assert env["HOME"] == env["TMPDIR"] and env["HOME"].endswith("/work")
    assert set(env) <= {"MY_VAR", "PYTHONHASHSEED", "LANG", "HOME", "TMPDIR", "PATH", "PYTHONPATH", "TZ",
                        "USER", "LOGNAME", "EXECBENCH_SANDBOX_EXCLUSIVE_UID",
                        "LD_PRELOAD", "EXECBENCH_CLOCK_OFFSET"}  # the clock (sandbox/_clock.py)
    r = py("import sys; print(hash('abc'))", env={"PYTHONHASHSEED": "0"})
    assert r.stdout == py("import sys; print(hash('abc'))", env={"PYTHONHASHSEED": "0"}).stdout


def test_run_python_can_import_execbench():
    r = run_python(["-c", "import execbench.sandbox, sys; print(sys.flags.no_user_site)"])
    assert r.ok, r.stderr
    assert r.stdout == b"1\n"


def test_files_collect_and_workdir_removed(tmp_path):
    r = py("""
        import os
        print(os.getcwd())
        data = open('in/data.txt').read()
        open('out.txt', 'w').write(data.upper())
        os.makedirs('sub'); open('sub/b.bin', 'wb').write(bytes(range(256)))
        os.symlink('/etc/hostname', 'link.txt')
        os.mkfifo('fifo')
        """, files={"in/data.txt": "abc", "raw.bin": b"\x00\x01"}, cwd_name="job",
        collect=["out.txt", "sub/b.bin", "missing.txt", "link.txt", "fifo", "raw.bin"])
    assert r.ok, r.stderr
    assert r.files == {"out.txt": b"ABC", "sub/b.bin": bytes(range(256)), "raw.bin": b"\x00\x01"}
    workdir = r.stdout.decode().strip()
    assert workdir.endswith("/job") and not os.path.exists(os.path.dirname(workdir))


def test_scripts_and_binaries_in_files_are_executable():
    r = run(["./hello.sh"], files={"hello.sh": "#!/bin/sh\necho hi from sh\n"})
    assert r.ok and r.stdout == b"hi from sh\n"


@pytest.mark.skipif(not shutil.which("g++"), reason="no g++")
def test_cpp_compile_then_run_binary():
    source = "#include <iostream>\nint main(){long n; std::cin >> n; std::cout << n * n << '\\n';}"
    built = run(["g++", "-O0", "-o", "prog", "main.cpp"], files={"main.cpp": source},
                collect=["prog"], limits=Limits(cpu_seconds=60, wall_seconds=120))
    assert built.ok, built.stderr
    r = run(["./prog"], files={"prog": built.files["prog"]}, stdin="12\n")
    assert r.ok and r.stdout == b"144\n"


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "a/../../x", ""])
def test_paths_must_stay_inside(bad):
    with pytest.raises(ValueError):
        run(["/bin/true"], files={bad: "x"})
    with pytest.raises(ValueError):
        run(["/bin/true"], collect=[bad])


def test_exec_failure_raises_and_cleans_up():
    with pytest.raises(FileNotFoundError):
        run(["/nonexistent/program"])


def test_setup_failure_raises_sandbox_error(monkeypatch):
    from execbench.sandbox import _linux

    def broken(*args, **kwargs):
        raise OSError(22, "injected failure")
    monkeypatch.setattr(_linux, "landlock_restrict", broken)
    monkeypatch.setattr(_linux, "install_seccomp", broken)
    monkeypatch.setattr(_linux, "enter_new_root", broken)
    with pytest.raises(sandbox.SandboxError, match="injected failure"):
        run(["/bin/true"])


def test_concurrent_runs_from_threads():
    results = [None] * 6

    def work(i):
        results[i] = py(f"import time; time.sleep(0.2); print({i})")
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(6)]


# --- limits ----------------------------------------------------------------------

def test_wall_time_sleep_forever():
    r = py("import time; time.sleep(1000)", limits=Limits(wall_seconds=1))
    assert r.limit == "wall_time" and r.signal == signal.SIGKILL and not r.ok
    assert r.reason() == "killed: wall_time limit (1 s)"


def test_cpu_time_infinite_loop():
    r = py("while True: pass", limits=Limits(cpu_seconds=1, wall_seconds=20))
    assert r.limit == "cpu_time" and r.signal == signal.SIGXCPU
    assert r.reason() == "killed: cpu_time limit (1 s)"  # the CPU limit, not the 20 s wall limit


def test_cpu_time_when_sigxcpu_is_ignored():
    r = py("import signal; signal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass",
           limits=Limits(cpu_seconds=1, wall_seconds=20))
    assert r.limit == "cpu_time" and r.signal == signal.SIGKILL  # the hard CPU limit, not the wall limit


def test_memory_unbounded_allocation():
    r = py("""
        chunks = []
        for _ in range(40):              # stops at 4 GiB even without a limit
            chunks.append(bytearray(100 * 1024 * 1024))
        """, limits=Limits(memory_bytes=512 * 1024**2))
    assert r.limit == "memory" and r.exit_code == 1
    assert r.reason() == "exit 1: memory limit (512 MiB)"


def test_file_size_limit():
    r = py("open('big', 'wb').write(b'x' * 3_000_000)", limits=Limits(file_size_bytes=1_000_000))
    assert r.limit == "file_size", r.stderr
    r = run(["/bin/sh", "-c", "exec head -c 3000000 /dev/zero > big"],
            limits=Limits(file_size_bytes=1_000_000))
    assert r.limit == "file_size" and r.signal == signal.SIGXFSZ
    assert r.reason() == "killed: file_size limit (976.562 KiB)"


def test_huge_output_truncated_but_ok():
    r = py("import sys; sys.stdout.write('x' * 5_000_000); sys.stderr.write('e' * 300)",
           limits=Limits(output_bytes=1_000_000))
    assert r.ok and r.stdout_truncated and not r.stderr_truncated
    assert r.stdout == b"x" * 1_000_000 and r.stderr == b"e" * 300


def test_endless_output_is_killed():
    r = run(["/usr/bin/yes"], limits=Limits(output_bytes=1000, wall_seconds=20))
    assert r.limit == "output" and r.stdout_truncated and len(r.stdout) == 1000
    assert r.reason() == "killed: output limit (1000 bytes)"  # killed at the limit, not at the wall limit


# Children fork too; the main process keeps forking until refused, so it always sees the
# refusal (with every process doubling, the main one could finish its forks before the
# limit bites under load). Without containment: at most 128 processes that exit after 3 s.
FORK_BOMB = """
import os, sys, time
for _ in range(64):
    try:
        pid = os.fork()
    except OSError as e:
        sys.exit(f'fork refused: {e.strerror}')
    if pid == 0:
        try:
            os.fork()
        except OSError:
            pass
        time.sleep(3)
        os._exit(0)
time.sleep(3)
"""


@needs_containment
def test_fork_bomb_is_bounded():
    r = py(FORK_BOMB, limits=Limits(max_tasks=16, wall_seconds=20))
    assert r.limit == "tasks", (r.reason(), r.isolation)
    assert r.reason() == "exit 1: tasks limit (16)"  # the first refused fork ended the run, before the wall limit


@needs_containment
def test_thread_bomb_is_bounded():
    r = py("""
        import threading, time
        for _ in range(500):
            threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
        """, limits=Limits(max_tasks=16, wall_seconds=20))
    assert r.limit == "tasks" and r.exit_code == 1, r.reason()


ESCAPE = textwrap.dedent(f"""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            open('escapee.pid', 'w').write(str(os.getpid()))
            os.close(1); os.close(2)
            {sleeper("execbench-test-escapee")}
        os._exit(0)
    os.wait()
    while not os.path.exists('escapee.pid'):
        time.sleep(0.01)
    time.sleep(0.2)  # the escapee has exec'd
""")


@needs_containment
def test_double_fork_setsid_escapee_is_killed_at_timeout():
    r = py(ESCAPE + sleeper("execbench-test-main") + "\n", limits=Limits(wall_seconds=1.5),
           collect=["escapee.pid"])
    assert r.limit == "wall_time" and "escapee.pid" in r.files
    assert_dead("execbench-test-escapee")
    assert_dead("execbench-test-main")


@needs_containment
def test_daemon_left_behind_is_killed_when_program_exits():
    r = py(ESCAPE, limits=Limits(wall_seconds=20), collect=["escapee.pid"])
    # the run ends with the program, not at the wall limit the sleeping daemon would reach
    assert r.ok and r.limit is None and "escapee.pid" in r.files
    assert_dead("execbench-test-escapee")


# --- filesystem, network, privileges -------------------------------------------------

def test_cannot_write_outside_workdir(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "pwned.txt"
    r = py(f"""
        import os
        open('inside.txt', 'w').write('fine')
        open('/dev/null', 'w').write('fine')
        for attempt in (lambda: open({str(target)!r}, 'w'),
                        lambda: os.mkdir({str(outside / 'd')!r}),
                        lambda: os.rename('inside.txt', {str(target)!r}),
                        lambda: os.symlink('/x', {str(outside / 's')!r}),
                        lambda: open('/etc/execbench-pwned', 'w'),
                        lambda: open('/sys/fs/cgroup/pids/cgroup.procs', 'w').write('1'),
                        lambda: os.kill({os.getpid()}, 0)):         # the test process
            try:
                attempt()
                print('ESCAPED')
            except OSError as e:
                print(type(e).__name__)
        open('/dev/shm/execbench-pwned', 'w').write('x')   # the run's own /dev/shm, not the host's
        print(len(open('/etc/passwd').read()) > 0)   # reads stay allowed
        """, collect=["inside.txt"])
    assert r.ok, r.stderr
    assert b"ESCAPED" not in r.stdout and r.stdout.endswith(b"True\n")
    assert r.files == {"inside.txt": b"fine"}
    assert os.listdir(outside) == [] and not os.path.exists("/etc/execbench-pwned")
    assert not os.path.exists("/dev/shm/execbench-pwned")


def test_read_write_paths_are_writable(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)   # the program's uid needs permission (it has no DAC capability)
    r = py(f"open({str(shared / 'ok.txt')!r}, 'w').write('yes')", read_write_paths=[str(shared)])
    assert r.ok, r.stderr
    assert (shared / "ok.txt").read_text() == "yes"


def test_network_is_unreachable():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    try:
        r = py(f"""
            import socket
            for family, addr in ((socket.AF_INET, ('127.0.0.1', {port})),
                                 (socket.AF_INET6, ('::1', {port}))):
                try:
                    socket.create_connection(addr[:2], timeout=2)
                    print('CONNECTED')
                except OSError as e:
                    print(type(e).__name__, e.errno)
            """)
        assert r.ok, r.stderr
        assert b"CONNECTED" not in r.stdout
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


@pytest.mark.skipif(CAPS["unix_sockets"] != "blocked", reason="no seccomp here")
def test_host_unix_sockets_are_unreachable(tmp_path):
    path = str(tmp_path / "daemon.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(5)
    listener.settimeout(0.3)
    try:
        r = py(f"""
            import socket
            try:
                socket.socket(socket.AF_UNIX).connect({path!r})
                print('CONNECTED')
            except OSError as e:
                print(type(e).__name__)
            a, b = socket.socketpair()       # still fine (asyncio, multiprocessing)
            a.sendall(b'x'); print(b.recv(1))
            """)
        assert r.ok, r.stderr
        assert r.stdout == b"PermissionError\nb'x'\n"
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="only meaningful as root")
def test_program_runs_as_fresh_uid_without_capabilities(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    victim.chmod(0o666)
    r = py(f"""
        import ctypes, os
        caps = {{l.split(':')[0]: int(l.split()[1], 16) for l in open('/proc/self/status')
                if l.startswith('Cap')}}
        print(caps['CapEff'], caps['CapPrm'], caps['CapBnd'], caps['CapAmb'], os.getuid() != 0)
        for act in (lambda: os.chmod({str(victim)!r}, 0o777),
                    lambda: os.chown({str(victim)!r}, os.getuid(), -1),
                    lambda: os.setuid(0),
                    lambda: os.open('/proc/1/ns/net', os.O_RDONLY)):
            try:
                act(); print('ESCAPED')
            except OSError:
                print('denied')
        """, read_only_paths=[str(victim)])
    assert r.ok, r.stderr
    assert r.stdout.split() == [b"0", b"0", b"0", b"0", b"True"] + [b"denied"] * 4
    assert victim.stat().st_mode & 0o777 == 0o666


# --- no leaks on errors in the parent -------------------------------------------

@needs_containment
def test_exception_in_parent_kills_everything(monkeypatch):
    original = _run._Streams.handle
    seen = []

    def handle(self, fd):
        original(self, fd)
        if any(b"ready" in buf for buf in self.out.values()):
            seen.append(True)
            raise KeyboardInterrupt
    monkeypatch.setattr(_run._Streams, "handle", handle)
    with pytest.raises(KeyboardInterrupt):
        py(ESCAPE + "print('ready', flush=True)\ntime.sleep(1000)\n",
           limits=Limits(wall_seconds=30))
    assert seen   # the no_leftovers fixture checks work dir and cgroup
    assert_dead("execbench-test-escapee")


# --- fallbacks ------------------------------------------------------------------------

@needs_root
def test_forced_fallbacks_are_reported_and_still_contain(monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.FORCE_FALLBACK_ENV, "all")
    caps = capabilities()
    assert caps["network"] == "socket-blocked" and caps["unix_sockets"] == "blocked"
    assert caps["filesystem"] == caps["reads"] == "newroot" and caps["proc"] == "hidepid"
    assert caps["tasks"] == "uid-nproc"
    assert caps["privileges"] == "fresh-uid"

    outside = tmp_path / "outside"
    outside.mkdir()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.2)
    try:
        r = py(f"""
            import os, socket
            open('inside.txt', 'w').write('ok')
            port = {listener.getsockname()[1]}
            for act in (lambda: socket.create_connection(('127.0.0.1', port)),
                        lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM),
                        lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW),
                        lambda: open({str(outside / 'x')!r}, 'w')):
                try:
                    act(); print('ESCAPED')
                except OSError as e:
                    print(type(e).__name__)
            socket.socketpair()          # unix sockets still work
            """, collect=["inside.txt"])
        assert r.ok, r.stderr
        assert r.isolation["network"] == "socket-blocked"
        assert r.stdout.split() == [b"PermissionError"] * 3 + [b"FileNotFoundError"]
        assert r.files == {"inside.txt": b"ok"} and os.listdir(outside) == []
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()

    r = py(FORK_BOMB, limits=Limits(max_tasks=16, wall_seconds=20))
    assert r.limit == "tasks", r.reason()

    r = py(ESCAPE + "time.sleep(1000)\n", limits=Limits(wall_seconds=1.5),
           collect=["escapee.pid"])
    assert r.limit == "wall_time"
    assert_dead("execbench-test-escapee")

    r = py(ESCAPE, collect=["escapee.pid"])
    assert r.ok, r.stderr
    assert_dead("execbench-test-escapee")


@needs_root
@pytest.mark.parametrize("forced,key,value", [("netns", "network", "socket-blocked"),
                                              ("landlock", "filesystem", "newroot"),
                                              ("mntns", "reads", "landlock"),
                                              ("mntns", "privileges",
                                               "fresh-uid+cap_dac_read_search"),
                                              ("cgroup", "tasks", "uid-nproc+pidns"),
                                              ("pidns", "tasks", "cgroup-pids")])
def test_single_fallbacks(monkeypatch, forced, key, value):
    monkeypatch.setenv(sandbox.FORCE_FALLBACK_ENV, forced)
    r = py("open('a', 'w').write('1'); print(open('a').read())")
    assert r.ok, r.stderr
    assert r.isolation[key] == value and r.stdout == b"1\n"


def test_unknown_fallback_name_is_an_error(monkeypatch):
    monkeypatch.setenv(sandbox.FORCE_FALLBACK_ENV, "nope")
    with pytest.raises(ValueError):
        capabilities()
