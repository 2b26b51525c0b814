"""The job runner: one sandbox, one warm interpreter, many jobs, one result type.

Every family runs code under test through :func:`run_jobs`::

    results = run_jobs([Job("a", "execbench.tracing.child:calls_job", args={...},
                            files={"program.py": text})], seed=0)
    results[0].ok, results[0].reason(), results[0].value, results[0].stdout

One sandboxed child (:mod:`._jobrunner`) imports the handlers' modules once (and
``preload``), then forks one child per job from that warm state. A handler
(``"module:function"``, called with ``job.args`` in the forked child, its working directory
the job's directory, stdin/stdout/stderr redirected) returns a JSON value that comes back
as :attr:`JobResult.value`; the built-in handler ``"exec"`` executes ``args["argv"]``.

Jobs run in order. Jobs with the same ``group`` share a directory (compile, then run the
binary); a new group starts in an empty work dir, so programs of different groups (in a
build: different candidates) cannot see each other's files. A job with ``fresh`` starts in
its group's directory emptied and holding only what earlier jobs of the group ``keep``
(each run of a compiled program sees the same directory, whatever the run before it
wrote). A job whose ``needs`` did not all succeed is skipped. Each job has its own CPU,
wall, memory and output limits; a job that crashes, hangs or floods fails alone, with the
sandbox's classification of the limit (:mod:`.classify`). A job cannot signal the runner
(Landlock scope), and a job's child holds nothing of other jobs (``_jobrunner``). If the
runner dies during a job anyway, that job fails with the sandbox's reason; if it fails
between jobs (its cleanup), nobody is blamed: the jobs it did not reach run again in a
new sandbox.

The hash seed (``PYTHONHASHSEED``) is fixed when the interpreter starts, so runs that must
differ in it are different calls; likewise every call is a new sandbox with its own host
name, time zone, user name, pids, uid and work dir path (docs/sandbox.md).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import execbench
from execbench.sandbox import _run, records
from execbench.sandbox.classify import STDERR_TAIL, classify, describe_signal

RUNNER = ["-m", "execbench.sandbox._jobrunner"]
MAX_VALUE = 64 << 20
MAX_VALUE_MEMORY = 256 << 20
_RUNNER_SLACK_SECONDS = 30.0


@dataclass
class Job:
    """One unit of work for the runner (see the module docs)."""

    id: str
    handler: str  # "module:function" run in the forked child, or "exec"
    args: dict[str, Any] = field(default_factory=dict)
    files: Mapping[str, str | bytes] = field(default_factory=dict)  # written into the group's dir first
    stdin: str | bytes = b""
    group: str | None = None  # jobs of one group share a directory; default: the job alone
    cwd: str = "."  # below the group's directory
    needs: Sequence[str] = ()  # ids of earlier jobs that must have succeeded
    collect: Sequence[str] = ()  # files (below cwd) read back after the job
    executable: Sequence[str] = ()  # names in ``files`` written with mode 0755
    cpu_seconds: float = 10.0
    wall_seconds: float = 30.0
    memory_mb: int = 2048
    max_output: int = 1 << 20  # stdout kept; more is the limit "output" unless output_is_limit=False
    output_is_limit: bool = True
    max_value: int = MAX_VALUE
    max_value_memory: int = MAX_VALUE_MEMORY  # estimated memory of the parsed value; more fails it
    max_collect: int = 1 << 16
    fresh: bool = False  # start in the group's directory emptied but for what its jobs kept
    keep: Sequence[str] = ()  # files (below cwd) later ``fresh`` jobs of the group start with

    def instructions(self) -> bytes:
        """The job as the runner reads it: a control document (what the runner needs) and
        the payload (what only the job's child reads), see ``_jobrunner``."""
        def b64(data: str | bytes) -> str:
            return base64.b64encode(data.encode() if isinstance(data, str) else bytes(data)).decode()
        for name in [*self.files, *self.collect, *self.keep, *([self.cwd] if self.cwd != "." else [])]:
            _run._rel_parts(name)  # relative, no "..": ValueError otherwise
        payload = json.dumps({"args": self.args, "files": {name: b64(data) for name, data in self.files.items()},
                              "stdin": b64(self.stdin), "executable": list(self.executable)}).encode()
        control = {"id": self.id, "handler": self.handler, "group": self.group if self.group is not None else self.id,
                   "cwd": self.cwd, "needs": list(self.needs), "collect": list(self.collect),
                   "cpu": self.cpu_seconds, "wall": self.wall_seconds, "memory_mb": self.memory_mb,
                   "max_output": self.max_output, "output_is_limit": self.output_is_limit,
                   "max_value": self.max_value, "max_collect": self.max_collect, "fresh": self.fresh,
                   "keep": list(self.keep), "payload": len(payload)}
        return _document(control) + payload


@dataclass
class JobResult:
    """What one job did. ``value`` is the handler's return value (JSON, hostile: the
    program ran in the same process; callers validate it with :mod:`.records`)."""

    id: str
    exit_code: int | None = None
    signal: int | None = None
    limit: str | None = None  # "wall_time", "cpu_time", "memory", "file_size", "disk", "tasks", "output"
    stdout: bytes = b""
    stdout_truncated: bool = False
    stderr: str = ""  # its tail
    value: Any = None
    value_error: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    wall: float = 0.0
    cpu: float = 0.0
    maxrss_kb: int = 0
    skipped: bool = False  # a job it needs failed
    failure: str | None = None  # the job produced no record: why (runner death, bad record)

    @property
    def ok(self) -> bool:
        return self.failure is None and not self.skipped and self.limit is None and self.exit_code == 0

    def reason(self) -> str:
        """One line: "exit 0", "cpu_time limit", "killed by signal 11 (SIGSEGV)", "exit 1: <stderr>"."""
        if self.failure:
            return self.failure
        if self.skipped:
            return "skipped (a job it needs failed)"
        if self.limit:
            return f"{self.limit} limit"
        if self.signal is not None:
            return describe_signal(self.signal)
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        tail = f": {lines[-1].strip()[:300]}" if lines and self.exit_code != 0 else ""
        return f"exit {self.exit_code}{tail}"

    def text(self) -> str:
        return self.stdout.decode("utf-8")

    def has_value(self, missing: str) -> bool:
        """True when the job ended normally with a value to check; when it ended normally
        without one (``os._exit`` in the program, a value too large or not JSON), it
        becomes a failed job (``failure``: the value's error, else ``missing``)."""
        if self.failure or self.skipped or self.limit is not None or self.signal is not None:
            return False
        if self.value is None:
            self.failure = self.value_error or missing
            return False
        return True


_INT = (int, type(None))
_FIELDS = {"id": str, "exit_code": _INT, "signal": _INT, "timed_out": bool, "wall": (int, float),
           "cpu": (int, float), "maxrss_kb": int, "stdout": int, "stdout_truncated": bool, "stderr": int,
           "value": _INT, "value_error": (str, type(None)), "files": dict}
_OPTIONAL = {"disk": bool}  # the sandbox's disk held more than its limit after the job
MAX_HEADER = 1 << 20
_sandboxes = iter(range(1 << 62))


class _Records:
    """The runner's output: per job a JSON header line, then its blobs (see ``_jobrunner``)."""

    def __init__(self, data: bytes) -> None:
        self.raw, self.data, self.pos = data, memoryview(data), 0

    def header(self) -> Any:
        end = self.raw.find(b"\n", self.pos, self.pos + MAX_HEADER + 1)
        if end < 0:
            raise records.RecordError("no complete record header")
        line = self.raw[self.pos:end]
        self.pos = end + 1
        return records.load_json(line, max_bytes=MAX_HEADER, max_depth=8)

    def blob(self, size: Any, cap: int, where: str) -> bytes:
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= cap:
            raise records.RecordError(f"{where}: bad length {size!r}")
        if self.pos + size > len(self.data):
            raise records.RecordError(f"{where}: cut short")
        blob = bytes(self.data[self.pos:self.pos + size])
        self.pos += size
        return blob

    def more(self) -> bool:
        return self.pos < len(self.data)


def _document(value: Any) -> bytes:
    """A length-prefixed JSON document of the runner's instructions."""
    data = json.dumps(value).encode()
    return b"%010d" % len(data) + data


def _result(raw: dict[str, Any], job: Job, stream: _Records) -> JobResult:
    """One job's record (written by the runner, but read as hostile all the same)."""
    if raw.get("skipped") is True:
        return JobResult(job.id, skipped=True)
    where = f"job {job.id}"
    record = records.check(raw, _FIELDS, _OPTIONAL, where=where)
    stdout = stream.blob(record["stdout"], job.max_output, f"{where} stdout")
    stderr = stream.blob(record["stderr"], STDERR_TAIL, f"{where} stderr")
    value, value_error = None, record["value_error"]
    if record["value"] is not None:
        text = stream.blob(record["value"], job.max_value, f"{where} value")
        try:
            value = records.load_json(text, max_bytes=job.max_value, max_depth=200,
                                      max_memory=job.max_value_memory)
        except records.RecordError as exc:
            value_error = str(exc)
    files = {}
    for name, size in record["files"].items():
        if name not in job.collect:
            raise records.RecordError(f"{where}: file {name!r} was not asked for")
        files[name] = stream.blob(size, job.max_collect, f"{where} file {name}")
    code, signum, cpu = record["exit_code"], record["signal"], float(record["cpu"])
    limit = ("wall_time" if record["timed_out"] else "disk" if record.get("disk")
             else classify(code, signum, cpu, job.cpu_seconds, stderr))
    if limit is None and record["stdout_truncated"] and job.output_is_limit:
        limit = "output"
    return JobResult(
        job.id, exit_code=code, signal=signum, limit=limit, stdout=stdout,
        stdout_truncated=record["stdout_truncated"], stderr=stderr.decode("utf-8", "replace"), value=value,
        value_error=value_error, files=files, wall=float(record["wall"]), cpu=cpu, maxrss_kb=record["maxrss_kb"],
    )


class _Progress:
    """What one sandbox's runner wrote: the records, the job it had started last and not
    finished (if any), and whether it stopped between jobs on its own (``runner_error``)."""

    def __init__(self) -> None:
        self.results: dict[str, JobResult] = {}
        self.started: str | None = None
        self.runner_error: str | None = None


def _read_records(stdout: bytes, jobs: Sequence[Job]) -> _Progress:
    """The records the runner wrote, in order; reading stops at the first bad one (that
    job fails saying why)."""
    wanted = {job.id: job for job in jobs}
    progress = _Progress()
    stream = _Records(stdout)
    while stream.more():
        raw: Any = None
        try:
            raw = stream.header()
            if not isinstance(raw, dict):
                break
            if isinstance(raw.get("runner_error"), str):
                progress.runner_error = raw["runner_error"][:300]
                break
            if raw.get("start") in wanted and raw["start"] not in progress.results:
                progress.started = raw["start"]
                continue
            job_id = raw.get("id")
            job = wanted.get(job_id) if isinstance(job_id, str) else None
            if job is None or job.id in progress.results:
                break
            progress.results[job.id] = _result(raw, job, stream)
            progress.started = None
        except records.RecordError as exc:
            failed = raw.get("id") if isinstance(raw, dict) else None
            if failed in wanted and failed not in progress.results:
                progress.results[failed] = JobResult(failed, failure=f"malformed job record: {exc}")
            break
    return progress


def _start(jobs: Sequence[Job], *, python: str | None, seed: int, preload: Sequence[str],
           env: Mapping[str, str], read_only_paths: Sequence[str], max_tasks: int,
           file_size_bytes: int = 64 << 20, open_files: int = 256,
           disk_bytes: int = _run.Limits.disk_bytes, disk_inodes: int = _run.Limits.disk_inodes) -> _run.SandboxResult:
    plan = _run._plan()
    preamble = {"preload": list(preload),
                "disk": [disk_bytes, disk_inodes] if plan.newroot else None,
                "variant": os.getpid() + next(_sandboxes),  # differs from the previous sandbox's (_jobrunner._vary)
                "modules": sorted({job.handler.partition(":")[0] for job in jobs if job.handler != "exec"}),
                "scope_signals": plan.landlock_abi >= 6,
                "exclusive": plan.pidns or plan.fresh_uid,
                "hide_env": [_run.EXCLUSIVE_UID_ENV]}
    stdin = _document(preamble) + b"".join(job.instructions() for job in jobs)
    wall = sum(job.wall_seconds + 1.0 for job in jobs) + _RUNNER_SLACK_SECONDS
    output = sum(job.max_output + STDERR_TAIL + job.max_value + job.max_collect * len(job.collect)
                 + 2 * MAX_HEADER for job in jobs)
    memory = max(job.memory_mb for job in jobs) + 512
    limits = _run.Limits(cpu_seconds=wall, wall_seconds=wall, memory_bytes=memory * 1024 * 1024,
                         max_tasks=max_tasks, output_bytes=output, file_size_bytes=file_size_bytes,
                         open_files=open_files, disk_bytes=disk_bytes, disk_inodes=disk_inodes)
    child_env = {**env, "PYTHONHASHSEED": str(seed)}
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        return _run.run_python(RUNNER, stdin=stdin, env=child_env, limits=limits, read_only_paths=read_only_paths)
    # another interpreter (e.g. the pinned tracing one): it imports execbench from our tree
    tree = os.path.dirname(os.path.dirname(os.path.abspath(execbench.__file__)))
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (child_env.get("PYTHONPATH"), tree) if p)
    return _run.run([python, "-s", *RUNNER], stdin=stdin, env=child_env, limits=limits,
                    read_only_paths=read_only_paths)


def run_jobs(jobs: Sequence[Job], *, python: str | None = None, seed: int = 0, preload: Sequence[str] = (),
             env: Mapping[str, str] | None = None, read_only_paths: Sequence[str] = (),
             max_tasks: int = 64, file_size_bytes: int = 64 << 20, open_files: int = 256,
             disk_bytes: int = _run.Limits.disk_bytes, disk_inodes: int = _run.Limits.disk_inodes) -> list[JobResult]:
    """Run ``jobs`` in one sandbox (see the module docs); one result per job, in order.

    ``python``: the interpreter of the runner (default this one; another one imports
    execbench from this tree); ``seed``: its PYTHONHASHSEED; ``preload``: modules imported
    before the first fork; ``env``: extra environment; ``read_only_paths``: more paths the
    jobs may read (e.g. a repository's source tree; as in :func:`execbench.sandbox.run`, an
    ``exec`` job's absolute ``argv[0]`` installation is readable: a venv's interpreter, its
    venv and base interpreter); ``max_tasks``: processes and threads of the whole sandbox at
    once; ``file_size_bytes``, ``open_files``: RLIMIT_FSIZE and RLIMIT_NOFILE of the sandbox;
    ``disk_bytes``, ``disk_inodes``: what its jobs may have written at the end of any job
    (the work dir, their temp dir and /dev/shm together; more is that job's limit "disk")."""
    if len({job.id for job in jobs}) != len(jobs):
        raise ValueError("job ids must be unique")
    programs = [str(job.args["argv"][0]) for job in jobs if job.handler == "exec" and job.args.get("argv")]
    read_only_paths = [*read_only_paths, *(path for program in dict.fromkeys(programs) if os.path.isabs(program)
                                           for path in _run._install_prefix(program))]
    results: dict[str, JobResult] = {}
    pending = list(jobs)
    retried_between = False
    while pending:
        outcome = _start(pending, python=python, seed=seed, preload=preload, env=env or {},
                         read_only_paths=read_only_paths, max_tasks=max_tasks,
                         file_size_bytes=file_size_bytes, open_files=open_files,
                         disk_bytes=disk_bytes, disk_inodes=disk_inodes)
        progress = _read_records(outcome.stdout, pending)
        results.update(progress.results)
        rest = [job for job in pending if job.id not in results]
        if not rest:
            break
        stderr = outcome.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        ended = f"{outcome.reason()} {stderr[0][:200]}".strip()
        in_flight = progress.started if progress.runner_error is None else None
        if in_flight is None and (progress.results or not retried_between):
            # it stopped between jobs (cleanup failed, or it died before starting one): nobody's
            # fault; the jobs it did not reach run again in a new sandbox (once without progress)
            retried_between = not progress.results
            pending = rest
            continue
        # the runner died during a job (or twice before any): that job fails with the sandbox's
        # reason, so do the jobs of its group after it; the others run again in a new sandbox
        lost = next(job for job in rest if job.id == in_flight) if in_flight else rest[0]
        why = (f"the job runner ended during this job: {ended}" if in_flight else
               f"the job runner failed before this job twice: {progress.runner_error or ended}")
        results[lost.id] = JobResult(lost.id, failure=why, limit=outcome.limit if in_flight else None)
        group = lost.group if lost.group is not None else lost.id
        for job in rest:
            if job is not lost and job.group is not None and job.group == group:
                results[job.id] = JobResult(job.id, failure=f"the job runner ended during job {lost.id} "
                                                            f"of the same group")
        pending = [job for job in rest if job.id not in results]
        retried_between = False
    return [results[job.id] for job in jobs]
