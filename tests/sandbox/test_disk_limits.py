"""Disk is bounded like memory (issue 33, principle 5): everything a run writes (work dir,
its temp dir, /dev/shm, read_write_paths) is on one tmpfs of its own, bounded in bytes and
files; going over is that run's (that job's) limit "disk", and the host's temp dir never
holds what the program wrote."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import threading
import time
import uuid

import pytest

from execbench import sandbox
from execbench.sandbox import Limits, run
from execbench.sandbox.jobs import Job, run_jobs

ROOT = os.geteuid() == 0
needs_tmpfs = pytest.mark.skipif(not ROOT or sandbox.capabilities()["disk"] != "tmpfs",
                                 reason="the run's tmpfs needs root and a mount namespace")
SMALL = Limits(disk_bytes=16 << 20, disk_inodes=400)

# Each writes past SMALL in its own way; "caught" swallows ENOSPC and exits 0.
ATTACKS = {
    "many_small_files": "for i in range(100_000):\n    open(f'f{i}', 'w').close()\n",
    "big_file_in_chunks": "with open('big', 'wb') as f:\n    for _ in range(200):\n        f.write(b'x' * (1 << 20))\n",
    "temp_dir": ("import os, tempfile\nfor i in range(200):\n"
                 "    open(os.path.join(tempfile.gettempdir(), f't{i}'), 'wb').write(b'x' * (1 << 20))\n"),
    "dev_shm": "for i in range(200):\n    open(f'/dev/shm/s{i}', 'wb').write(b'x' * (1 << 20))\n",
    "caught": ("try:\n    with open('big', 'wb') as f:\n        for _ in range(200):\n"
               "            f.write(b'x' * (1 << 20))\nexcept OSError:\n    pass\nprint('fine')\n"),
}
WITHIN = "open('a', 'wb').write(b'x' * (4 << 20))\nimport os\nfor i in range(100):\n    open(f'f{i}', 'w').close()\n"


def _py(code: str, **kwargs) -> sandbox.SandboxResult:
    return run([sys.executable, "-S", "-c", textwrap.dedent(code)], **kwargs)


@needs_tmpfs
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_writing_past_the_disk_limit_is_the_runs_limit(attack):
    result = _py(ATTACKS[attack], limits=SMALL)
    assert result.limit == "disk", (result.reason(), result.stderr[-300:])
    assert not result.ok
    assert "disk limit (16 MiB, 400 files)" in result.reason()
    assert result.isolation["disk"] == "tmpfs"


@needs_tmpfs
def test_a_run_within_its_disk_limit_is_unaffected():
    result = _py(WITHIN + "print(sorted(os.listdir('.'))[:2])", limits=SMALL, files={"given": "g"},
                 collect=["a"])
    assert result.ok, result.reason()
    assert result.stdout.strip() == b"['a', 'f0']"
    assert len(result.files["a"]) == 4 << 20


@needs_tmpfs
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_job_past_the_disk_limit_fails_alone(attack):
    jobs = [Job("over", "exec", args={"argv": [sys.executable, "-S", "-c", ATTACKS[attack]]}),
            Job("next", "exec", args={"argv": [sys.executable, "-S", "-c", WITHIN]})]
    over, after = run_jobs(jobs, disk_bytes=SMALL.disk_bytes, disk_inodes=SMALL.disk_inodes)
    assert over.limit == "disk" and not over.ok, over.reason()
    assert over.reason() == "disk limit"
    assert after.ok, after.reason()   # the next candidate starts on an emptied disk


@needs_tmpfs
@pytest.mark.parametrize("mode", ["default", "mntns"])
def test_the_hosts_temp_dir_never_holds_what_the_program_writes(mode, monkeypatch):
    """While a program has written 8 MiB under a unique name into its work dir (= its temp
    dir) and /dev/shm, no file of that name exists below the host's temp dir. The control:
    without a mount namespace (forced fallback "mntns") the scan does find them."""
    if mode != "default":
        monkeypatch.setenv(sandbox.FORCE_FALLBACK_ENV, mode)
    marker = f"marker-{uuid.uuid4().hex}"
    ready = f"ready-{uuid.uuid4().hex}"
    program = textwrap.dedent(f"""
        import os, tempfile, time
        for d in ('.', tempfile.gettempdir(), '/dev/shm'):
            try:
                open(os.path.join(d, '{marker}'), 'wb').write(b'x' * (8 << 20))
            except PermissionError:  # no private /dev/shm in the fallback
                pass
        open('{ready}', 'w').close()
        time.sleep(3)
        print(len(os.listdir('.')), os.path.exists('/dev/shm/{marker}'))
        """)
    host = tempfile.gettempdir()
    found: list[str] = []
    results: list[sandbox.SandboxResult] = []
    worker = threading.Thread(target=lambda: results.append(_py(program, limits=Limits(wall_seconds=20))))
    worker.start()
    seen_ready = False
    try:
        deadline = time.monotonic() + 15
        while worker.is_alive() and time.monotonic() < deadline:
            for dirpath, _, filenames in os.walk(host):
                found += [os.path.join(dirpath, n) for n in filenames if n in (marker, ready)]
            seen_ready = seen_ready or any(p.endswith(ready) for p in found)
            time.sleep(0.2)
    finally:
        worker.join()
    assert results and results[0].ok, results and results[0].reason()
    # it did write them (in its own view)
    assert results[0].stdout.split() == [b"2", b"True" if mode == "default" else b"False"]
    if mode == "default":
        assert found == [] and not seen_ready
    else:
        assert seen_ready and results[0].isolation["disk"] == "file-size-only"


@needs_tmpfs
def test_read_write_paths_are_bounded_and_copied_back(tmp_path):
    """A writable path (a venv during an install) is the run's copy on its disk: written
    back when the run stays within its limit (links kept as links, no set-id bits), left as
    it was when the run goes over."""
    venv = tmp_path / "venv"
    venv.mkdir()
    venv.chmod(0o777)
    (venv / "old").write_text("old")
    (venv / "old").chmod(0o666)
    ok = _py(f"""
        import os
        os.unlink('{venv}/old')
        os.makedirs('{venv}/lib/site')
        open('{venv}/lib/site/mod.py', 'w').write('X = 1')
        os.symlink('/etc/passwd', '{venv}/link')
        os.chmod('{venv}/lib/site/mod.py', 0o4755)
        """, read_write_paths=[str(venv)], limits=SMALL)
    assert ok.ok, ok.reason()
    assert sorted(os.listdir(venv)) == ["lib", "link"]
    assert (venv / "lib/site/mod.py").read_text() == "X = 1"
    assert os.readlink(venv / "link") == "/etc/passwd"
    assert not (venv / "lib/site/mod.py").stat().st_mode & 0o6000
    over = _py(f"""
        os = __import__('os')
        for i in range(100):
            open(f'{venv}/w{{i}}', 'wb').write(b'x' * (1 << 20))
        """, read_write_paths=[str(venv)], limits=SMALL)
    assert over.limit == "disk", over.reason()
    assert sorted(os.listdir(venv)) == ["lib", "link"]


@needs_tmpfs
def test_a_deep_tree_in_a_writable_path_is_a_disk_limit_not_a_crash(tmp_path):
    venv = tmp_path / "venv"
    venv.mkdir()
    venv.chmod(0o777)
    result = _py(f"""
        import os
        os.chdir('{venv}')
        for _ in range(300):
            os.mkdir('d')
            os.chdir('d')
        """, read_write_paths=[str(venv)], limits=SMALL)
    assert result.limit == "disk", result.reason()


def test_the_limit_is_reported_in_every_configuration():
    """Without a mount namespace (or not as root) the disk is the host's: the run says so."""
    assert sandbox.capabilities()["disk"] in ("tmpfs", "file-size-only")
    if ROOT:
        os.environ[sandbox.FORCE_FALLBACK_ENV] = "mntns"
        try:
            assert sandbox.capabilities()["disk"] == "file-size-only"
        finally:
            del os.environ[sandbox.FORCE_FALLBACK_ENV]
