"""Builds on a real local Ray cluster (``--executor ray:ADDRESS``) equal local builds, and a
worker killed mid-candidate costs one retry, never a task (twice: a ``worker_lost`` rejection)."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time

import pytest

from execbench.families.distributed import ExecutorError, TASK_NAME_PREFIX, parse_executor

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")
RAY = os.path.join(os.path.dirname(sys.executable), "ray")


@pytest.fixture(scope="module")
def cluster():
    """A head node on 127.0.0.1 with 2 CPUs and a random auth token; stopped afterwards."""
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    started = subprocess.run([RAY, "start", "--head", "--port=0", "--num-cpus=2", "--node-ip-address=127.0.0.1",
                              "--include-dashboard=false", "--disable-usage-stats"],
                             capture_output=True, text=True, env=env, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    port = re.search(r"--address='[^':]+:(\d+)'", started.stdout + started.stderr).group(1)
    try:
        yield f"127.0.0.1:{port}", env
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, env=env, timeout=120)


def build(out, *args, env=None, executor="local") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "execbench.cli", "build", "trace", "advanced", "-o", str(out),
                             "--jobs", "2", "--no-cache", "--executor", executor, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**(env or os.environ), "COLUMNS": "200"})


def finish(proc: subprocess.Popen) -> str:
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    return output


def manifest(path) -> dict:
    return json.loads((path / "manifest.json").read_text())


def workers_running(name_part: str) -> list[int]:
    """PIDs of Ray workers whose process title names a candidate containing ``name_part``.

    A worker's sandbox children carry its title until they exec (the sandbox's outer
    process, which forwards the status, never does); killing one of those is not a lost
    worker (the sandbox reports it, the worker lives on), so only processes whose parent
    is not itself such a worker count."""
    listing = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    titled = {}
    for line in listing.splitlines():
        pid, ppid, *args = line.split(None, 2)
        if args and f"ray::{TASK_NAME_PREFIX}" in args[0] and name_part in args[0]:
            titled[int(pid)] = int(ppid)
    return [pid for pid, ppid in titled.items() if ppid not in titled]


def kill_when_running(proc: subprocess.Popen, name_part: str, times: int, deadline: float = 240) -> int:
    """SIGKILL the worker running a matching candidate, ``times`` times (each time a new
    process); returns how many were killed before the build ended."""
    killed: set[int] = set()
    end = time.monotonic() + deadline
    while len(killed) < times and proc.poll() is None and time.monotonic() < end:
        for pid in workers_running(name_part):
            if pid not in killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
                break
        time.sleep(0.02)
    return len(killed)


def test_executor_spec():
    assert parse_executor("local") == ("local", None)
    assert parse_executor("ray") == ("ray", None)
    assert parse_executor("ray:127.0.0.1:6379") == ("ray", "127.0.0.1:6379")
    with pytest.raises(ExecutorError):
        parse_executor("dask")


def test_cluster_build_equals_local_and_survives_a_killed_worker(cluster, tmp_path):
    address, env = cluster
    finish(build(tmp_path / "local", "--limit", "12"))
    proc = build(tmp_path / "ray", "--limit", "12", env=env, executor=f"ray:{address}")
    killed = kill_when_running(proc, "advanced/", times=1)
    finish(proc)
    assert killed == 1
    assert manifest(tmp_path / "ray")["content_hash"] == manifest(tmp_path / "local")["content_hash"]
    assert manifest(tmp_path / "ray")["tasks"] == manifest(tmp_path / "local")["tasks"] == 60
    assert (tmp_path / "ray" / "rejected.jsonl").read_text() == ""


def test_a_candidate_whose_worker_dies_twice_is_rejected_worker_lost(cluster, tmp_path):
    address, env = cluster
    finish(build(tmp_path / "local", "--limit", "4"))
    local = [json.loads(line) for line in (tmp_path / "local" / "tasks.jsonl").read_text().splitlines()]
    victim = sorted({task["source_id"] for task in local})[1]
    proc = build(tmp_path / "ray", "--limit", "4", env=env, executor=f"ray:{address}")
    killed = kill_when_running(proc, victim, times=2)
    finish(proc)
    assert killed == 2
    rejected = [json.loads(line) for line in (tmp_path / "ray" / "rejected.jsonl").read_text().splitlines()]
    assert [(r["stage"], r["reason"]) for r in rejected] == [("execution", "worker_lost")]
    kept = [json.loads(line) for line in (tmp_path / "ray" / "tasks.jsonl").read_text().splitlines()]
    assert kept == [task for task in local if task["source_id"] != victim]


def test_a_package_list_builds_on_the_cluster_as_it_does_locally(cluster, tmp_path):
    address, env = cluster
    listing = tmp_path / "list.txt"
    listing.write_text("inflection==0.5.1\nsix==1.17.0\n")  # builds that are deterministic
    runs = {}
    for name, executor, run_env in (("local", "local", None), ("ray", f"ray:{address}", env)):
        proc = subprocess.Popen([sys.executable, "-m", "execbench.cli", "build", "repo", f"list:{listing}",
                                 "-o", str(tmp_path / name), "--jobs", "2", "--no-cache", "--executor", executor,
                                 "--set", "max_modules_per_package=1",
                                 "--set", "check_seeds=7"],  # both builds check under one seed: this compares executors
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**(run_env or os.environ), "COLUMNS": "200"})
        finish(proc)
        runs[name] = manifest(tmp_path / name)
    assert runs["ray"]["content_hash"] == runs["local"]["content_hash"]
    assert runs["ray"]["tasks"] == runs["local"]["tasks"] > 0 and runs["ray"]["candidates"] == 2
