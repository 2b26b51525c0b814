"""Hostile programs against read confinement and the syscall surface (issue 14), in the
default configuration and under the forced fallbacks (as root: ``all`` = no netns, PID
namespace, IPC namespace, cgroup or Landlock; ``mntns`` = no new root, Landlock read rules
and CAP_DAC_READ_SEARCH instead)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from execbench import sandbox
from execbench.sandbox import Limits, run

MODES = ["default"] + (["all", "mntns"] if os.geteuid() == 0 else [])


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    root = tmp_path / "tmproot"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield
    assert os.listdir(root) == []


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    if request.param != "default":
        monkeypatch.setenv(sandbox.FORCE_FALLBACK_ENV, request.param)
    return request.param


def py(code: str, **kwargs) -> sandbox.SandboxResult:
    return run([sys.executable, "-S", "-c", textwrap.dedent(code)], **kwargs)


def attempts(*exprs: str) -> str:
    """Python source printing one word per expression: ESCAPED or the exception's name."""
    lines = ["import ctypes, os, socket, sys"]
    for expr in exprs:
        lines += ["try:", f"    {expr}", "    print('ESCAPED')",
                  "except Exception as e:", "    print(type(e).__name__)"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def secrets(tmp_path, cache_dir):
    """A 0600 file in a 0700 dir, a build-cache sqlite file and a world-readable file in a
    directory nobody passed to the sandbox."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "key").write_text("SECRET-0600")
    (private / "key").chmod(0o600)
    cache_dir.mkdir(parents=True, exist_ok=True)
    (cache_dir / "build-cache.sqlite").write_text("SECRET-CACHE")
    public = tmp_path / "public"
    public.mkdir(mode=0o755)
    (public / "note").write_text("SECRET-PUBLIC")
    return {"private": str(private / "key"), "cache": str(cache_dir / "build-cache.sqlite"),
            "public": str(public / "note")}


def test_host_files_are_not_readable(mode, secrets):
    targets = ["/etc/shadow", secrets["private"], secrets["cache"], secrets["public"]]
    if os.path.exists("/root/.bashrc") and os.geteuid() == 0:
        targets.append("/root/.bashrc")
    r = py(attempts(*[f"open({t!r}).read()" for t in targets],
                    "os.listdir(os.path.dirname(sys.executable))",   # needed paths stay readable
                    "open('/etc/passwd').read()"))
    assert r.ok, r.stderr
    words = r.stdout.decode().split()
    assert "ESCAPED" not in words[:len(targets)], (words, r.isolation)
    assert words[len(targets):] == ["ESCAPED", "ESCAPED"]
    assert b"SECRET" not in r.stdout + r.stderr


def test_other_processes_are_invisible(mode):
    token = "--api-key=execbench-test-secret"
    victim = subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(60)", token])
    try:
        r = py(f"""
            import os
            seen = []
            try:
                entries = os.listdir('/proc')
            except OSError:                       # the mntns fallback: no listing
                entries = []
            for entry in entries:
                try:
                    seen.append(open(f'/proc/{{entry}}/cmdline', 'rb').read())
                except OSError:
                    pass
            token = b'--api-key=' + {token.encode()[10:]!r}
            print(any(token in s for s in seen), len(open('/proc/self/cmdline', 'rb').read()) > 0)
            try:
                print(open('/proc/{victim.pid}/cmdline', 'rb').read())
            except OSError as e:
                print(type(e).__name__)
            """)
    finally:
        victim.kill()
        victim.wait()
    assert r.ok, r.stderr
    lines = r.stdout.decode().split("\n")
    assert lines[0] == "False True", (lines, r.isolation)
    assert token not in lines[1]


@pytest.mark.skipif(not shutil.which("g++"), reason="no g++")
def test_compiler_cannot_embed_host_files(mode, secrets):
    def source(path: str) -> str:
        return ('asm(".section .rodata\\n.incbin \\"' + path + '\\"\\n.text");\n'
                "int main(){return 0;}\n")
    limits = Limits(cpu_seconds=60, wall_seconds=120)
    # control: the same trick on a file the compiler may read embeds it
    r = run(["g++", "-o", "prog", "main.cpp"], files={"main.cpp": source("main.cpp"), "x": "x"},
            collect=["prog"], limits=limits)
    assert r.ok and b".incbin" in r.files["prog"], r.stderr
    for path in ("/etc/shadow", secrets["private"], secrets["public"]):
        r = run(["g++", "-o", "prog", "main.cpp"], files={"main.cpp": source(path)},
                collect=["prog"], limits=limits)
        assert not r.ok and "prog" not in r.files, (path, r.reason())
        assert b"SECRET" not in r.stderr and b"root:" not in r.stderr
        assert path.encode() in r.stderr   # the assembler could not open it


def test_socket_families_outside_the_allow_list(mode):
    r = py(attempts("socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)",
                    "socket.socket(socket.AF_UNIX)",
                    "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)",
                    "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
                    "socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)",
                    "socket.socketpair()"))
    assert r.ok, r.stderr
    assert r.stdout.decode().split() == ["PermissionError"] * 5 + ["ESCAPED"], r.isolation


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86_64 syscall numbers")
def test_keyrings_and_user_namespaces_are_refused(mode):
    libc = "ctypes.CDLL(None, use_errno=True)"
    r = py(f"""
        import ctypes, os
        libc = {libc}
        libc.syscall.restype = ctypes.c_long
        def call(*args):
            ret = libc.syscall(*args)
            return 'ok' if ret >= 0 else os.strerror(ctypes.get_errno())
        KEY_SPEC_SESSION, KEY_SPEC_USER = ctypes.c_long(-3), ctypes.c_long(-4)
        print(call(250, 0, KEY_SPEC_SESSION, 1))                       # keyctl GET_KEYRING_ID
        print(call(248, b'user', b'planted', b'x', 1, KEY_SPEC_USER))   # add_key
        print(call(249, b'user', b'planted', None, 0))                  # request_key
        print(call(272, 0x10000000))                                    # unshare(NEWUSER)
        print(call(272, 0x00020000))                                    # unshare(NEWNS)
        print(call(56, 0x10000000 | 17, 0, 0, 0, 0))                    # clone(NEWUSER)
        print(call(435, 0, 0))                                          # clone3
        print(call(308, 0, 0))                                          # setns
        print(call(101, 16, 1, 0, 0))                                   # ptrace(ATTACH, 1)
        import subprocess, threading                                    # forks/threads work
        t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()
        print(subprocess.run(['/bin/echo', 'child'], capture_output=True).stdout.decode().strip())
        """)
    assert r.ok, r.stderr
    denied = "Operation not permitted"
    assert r.stdout.decode().splitlines() == [denied] * 6 + ["Function not implemented"] \
        + [denied] * 2 + ["thread", "child"], r.isolation


def test_metadata_writes_to_host_files_fail(mode, tmp_path):
    visible = tmp_path / "visible"
    visible.mkdir()
    (visible / "f").write_text("x")
    (visible / "f").chmod(0o644)
    hidden = tmp_path / "hidden"
    hidden.write_text("x")
    before = [os.stat(p) for p in (visible / "f", hidden)]
    f, h = str(visible / "f"), str(hidden)
    r = py(attempts(f"os.utime({f!r}, (0, 0))", f"os.utime({f!r})",
                    f"os.setxattr({f!r}, 'user.x', b'1')", f"os.chmod({f!r}, 0o777)",
                    f"os.utime({h!r}, (0, 0))", f"os.setxattr({h!r}, 'user.x', b'1')",
                    "os.utime(sys.executable, (0, 0))", "os.utime('/etc/passwd')",
                    f"import fcntl; fcntl.flock(open({h!r}), fcntl.LOCK_EX)",
                    "open('own', 'w').close(); os.utime('own', (0, 0)); "
                    "import fcntl; fcntl.flock(open('own'), fcntl.LOCK_EX)"),   # control
           read_only_paths=[str(visible)])
    assert r.ok, r.stderr
    words = r.stdout.decode().split()
    assert "ESCAPED" not in words[:-1] and words[-1] == "ESCAPED", (words, r.isolation)
    after = [os.stat(p) for p in (visible / "f", hidden)]
    assert [(s.st_mtime_ns, s.st_mode) for s in before] == [(s.st_mtime_ns, s.st_mode) for s in after]
    assert os.listxattr(f) == []


def test_a_lock_on_a_visible_file_ends_with_the_run(tmp_path):
    shared = tmp_path / "lockme"
    shared.write_text("x")
    r = py(f"""
        import fcntl, os, time
        fd = os.open({str(shared)!r}, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fork() == 0:
            os.setsid(); time.sleep(1000)        # keeps the lock (inherited fd)
        print('locked', flush=True)
        """, read_only_paths=[str(shared)])
    assert r.ok and r.stdout == b"locked\n", r.stderr
    with open(shared) as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)   # the holder is gone


DEEP_TREE = """
    import os
    os.mkdir('unreadable'); open('unreadable/f', 'w').write('x')
    os.mkdir('unreadable/sub'); os.chmod('unreadable/sub', 0)
    os.chmod('unreadable', 0)
    os.symlink('/usr', 'link-out')             # removed, never followed
    import array, fcntl
    with open('frozen', 'w') as f:             # chattr +i needs CAP_LINUX_IMMUTABLE
        try:
            fcntl.ioctl(f, 0x40086602, array.array('l', [0x10]), True)
            print('immutable')
        except OSError:
            pass
    fd = os.open('.', os.O_RDONLY)
    for _ in range(3000):                      # deeper than rmtree's recursion and PATH_MAX
        os.mkdir('d', dir_fd=fd)
        sub = os.open('d', os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    open('leaf', 'w', opener=lambda p, f: os.open(p, f, 0o644, dir_fd=fd)).write('x')
    print('built')
"""


def test_deep_unreadable_tree_is_removed(mode):
    r = py(DEEP_TREE, limits=Limits(open_files=64))
    assert r.ok and r.stdout == b"built\n", r.stderr
    assert os.path.isdir("/usr/bin")   # the private_tmp fixture checks the work dir is gone


def test_stale_sweep_removes_deep_trees(tmp_path):
    from execbench.sandbox import _run
    dead = subprocess.Popen(["/bin/true"])
    dead.wait()
    stale = os.path.join(tempfile.gettempdir(), f"execbench-{dead.pid}-stale")
    os.mkdir(stale)
    fd = os.open(stale, os.O_RDONLY)
    for _ in range(3000):
        os.mkdir("d", dir_fd=fd)
        sub = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.fchmod(fd, 0)
    os.close(fd)
    os.utime(stale, (0, 0))
    _run._remove_stale_workdirs()
    assert not os.path.exists(stale)


def test_remove_tree_never_raises(tmp_path):
    from execbench.sandbox._cleanup import remove_tree
    assert remove_tree(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("x")
    assert remove_tree(str(tmp_path / "file")) and not (tmp_path / "file").exists()
    os.symlink("/usr", tmp_path / "link")
    assert remove_tree(str(tmp_path / "link")) and os.path.isdir("/usr/bin")
    if os.geteuid() == 0:   # an immutable file in a read-only directory
        import array
        import fcntl
        (tmp_path / "frozen").mkdir()
        with open(tmp_path / "frozen" / "f", "w") as f:
            try:
                fcntl.ioctl(f, 0x40086602, array.array("l", [0x10]), True)
            except OSError:
                pytest.skip("no immutable flag on this file system")
        (tmp_path / "frozen").chmod(0o500)
        assert remove_tree(str(tmp_path / "frozen")) and not (tmp_path / "frozen").exists()


def test_every_run_sees_another_host(mode):
    """What a program can learn about its host differs between runs, so determinism runs
    reject answers that depend on it (host name, time zone, uid, work dir, environment)."""
    code = """
        import os, socket, time
        print(socket.gethostname(), time.strftime('%H', time.localtime(0)), os.getuid(),
              os.getcwd(), sorted(os.environ.items()))
        """
    first, second = py(code), py(code)
    assert first.ok and second.ok, first.stderr
    a, b = first.stdout.decode().split(" ", 4), second.stdout.decode().split(" ", 4)
    differs = [x != y for x, y in zip(a, b)]
    expected = [first.isolation["host"] == "varied", True,   # else: the host's name
                first.isolation["privileges"].startswith("fresh-uid"), True, True]
    assert differs == expected, (a, b)


def test_install_network_reaches_only_the_allowed_port(monkeypatch):
    import socket as pysocket
    listener = pysocket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    try:
        r = py(attempts(f"socket.create_connection(('127.0.0.1', {port}), timeout=2)",
                        "socket.socket(socket.AF_UNIX)"), network_ports=[443])
        assert r.ok, r.stderr
        assert r.isolation["network"] == "tcp-ports:443"
        assert r.stdout.decode().split() == ["PermissionError", "PermissionError"]
        with pytest.raises(pysocket.timeout):
            listener.accept()
    finally:
        listener.close()
    if os.geteuid() == 0:
        monkeypatch.setenv(sandbox.FORCE_FALLBACK_ENV, "landlock")
        with pytest.raises(sandbox.SandboxError, match="Landlock"):
            py("pass", network_ports=[443])
