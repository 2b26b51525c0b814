"""Running a repository's test module under pytest: a job of the sandbox's job runner.

The venv's interpreter runs ``pytest <test file> -p _execbench_repo_plugin`` with the
repository's own configuration except ``addopts`` (``-o addopts=""`` drops xdist/cov
options), ``-p no:cacheprovider``, plain asserts and prepend import mode; the source tree is
first on ``PYTHONPATH``. It is an ``exec`` job (:mod:`execbench.sandbox.jobs`): the plugin
(``_plugin.py``) and a copy of the tracer are written into the job's directory, the venv
and its base interpreter are readable as the program's installation, the repository's tree
through ``read_only_paths``; the per-test JSON lines come back as a collected file, read by
:func:`report` into a :class:`PytestReport`. :func:`run_tests` runs one module's tests in a
sandbox of their own; :func:`run_many` runs several runs of one repository in one sandbox
(one job each, each in an emptied work dir).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, cast

from execbench.families.repo.records.steps import RepoOptions
from execbench.sandbox import records as _records
from execbench.sandbox import preload_library
from execbench.sandbox.jobs import Job, JobResult, run_jobs
from execbench.sources.repos import Repo

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo.records.run_records import RunSpec, TestRecord

_HERE = Path(__file__).parent
_TRACING = Path(__file__).parents[3] / "tracing"
OUTPUT = "results.jsonl"
# results.jsonl is written by the test process: read bounded, each record checked.
RESULTS_MAX_BYTES = 128 * 1024**2
RECORD_MAX_BYTES = 32 * 1024**2
MAX_RECORDS = 20_000
MEMORY_MB = 4096  # address space of the test process
MAX_OUTPUT = 256 * 1024  # pytest's report kept (its tail is shown in rejections)
_RECORD_FIELDS = {"nodeid": str}
_RECORD_OPTIONAL = {"phases": dict, "probes": dict, "verify": dict, "aliases": dict,
                    "overflow": list, "trace": (dict, type(None)), "function": (list, type(None)),
                    "seconds": (int, float), "context": dict}


def _checked(record: object) -> TestRecord:
    """A test's record, its envelope validated (what build.py indexes must be there)."""
    checked = _records.check(record, _RECORD_FIELDS, _RECORD_OPTIONAL, where="test record")
    for name, phase in checked.get("phases", {}).items():
        _records.check(phase, {"outcome": str}, where=f"phase {name!r}")
    for key in ("probes", "verify", "aliases"):
        if not all(isinstance(k, str) for k in checked.get(key, {})):
            raise _records.RecordError(f"test record: {key} keys should be strings")
    return cast("TestRecord", checked)  # the envelope is checked; the values inside stay hostile


@dataclass
class PytestReport:
    """A pytest run's per-test records, read from the job's collected results file."""

    result: JobResult  # the job (exit status, limit, output)
    records: list[TestRecord] = field(default_factory=list)
    fatal: str | None = None  # the plugin's own failure, or an unreadable results file

    @property
    def ok(self) -> bool:
        """The plugin ran and wrote results (tests may still have failed)."""
        r = self.result
        return (r.limit is None and r.failure is None and self.fatal is None
                and (bool(self.records) or r.exit_code in (0, 1, 5)))

    @property
    def reason(self) -> str:
        return self.result.reason()

    @property
    def duration(self) -> float:
        return self.result.wall

    @property
    def stderr_tail(self) -> str:
        """The last lines of pytest's report (stdout), else of its stderr."""
        tail = "\n".join(self.result.stdout.decode("utf-8", "replace").strip().splitlines()[-15:])
        return tail or self.result.stderr[-1500:]


def unframe(raw: bytes, key: str) -> tuple[bytes, str | None, bool]:
    """The JSON lines of a results file written by the plugin's channel (each line
    ``<MAC> <json>``, the MAC a keyed BLAKE2b chained over the lines before it): (the lines,
    tampering, whether the plugin's trailer ended it). A line the plugin did not write, a
    record count that does not match, or anything after the trailer is tampering; the last
    line cut by a kill is left out."""
    mac = hashlib.blake2b(key=bytes.fromhex(key), digest_size=16)
    last, out, count = b"", list[bytes](), 0
    lines = raw.split(b"\n")
    for number, line in enumerate(lines[:-1], 1):  # lines[-1]: what follows the last newline
        tag, _, text = line.partition(b" ")
        h = mac.copy()
        h.update(last + text)
        if not hmac.compare_digest(tag, h.hexdigest().encode("ascii")):
            return b"", f"tampering: line {number} of {OUTPUT} was not written by the recorder", False
        last = tag
        try:
            end = json.loads(text).get("end") if text.startswith(b'{"end": ') else None
        except (ValueError, AttributeError):
            end = None
        if isinstance(end, int):
            if end != count or number != len(lines) - 1 or lines[-1]:
                return b"", f"tampering: {OUTPUT} does not end at the recorder's trailer", False
            return b"\n".join(out), None, True
        out.append(text)
        count += 1
    return b"\n".join(out), None, False


def _shipped() -> dict[str, str]:
    return {
        "_execbench_repo_plugin.py": (_HERE / "_plugin.py").read_text(encoding="utf-8"),
        "execbench/__init__.py": "",
        "execbench/errors.py": (_TRACING.parent / "errors.py").read_text(encoding="utf-8"),  # the tracer's root
        "execbench/tracing/__init__.py": "",
        "execbench/tracing/tracer.py": (_TRACING / "tracer.py").read_text(encoding="utf-8"),
        "execbench/tracing/summary.py": (_TRACING / "summary.py").read_text(encoding="utf-8"),
        "execbench/sandbox/__init__.py": "",
        "execbench/sandbox/audit_filter.py": (_TRACING.parent / "sandbox" / "audit_filter.py").read_text(encoding="utf-8"),
    }


# pytest's configuration files, in the order it tries them in each directory (pytest 9;
# older versions know a subset); pytest.toml and the .ini files count even without a section
_CONFIG_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_CONFIG_MAX_BYTES = 1024**2


def pytest_config(root: Path, target: Path) -> Path | None:
    """The repository's own pytest configuration file for a run of ``target``: what pytest
    finds searching from the target's directory upwards, with the search stopped at the
    repository's root (never a file above it, nor one linked out of the tree). None: the
    repository has none."""
    from execbench.sources.repos import inside

    here = target.parent if target.suffix == ".py" else target
    if not inside(here, root):
        here = root
    while True:
        for name in _CONFIG_NAMES:
            path = here / name
            if path.is_file() and inside(path, root) and _is_pytest_config(path):
                return path
        if here.resolve() == root.resolve() or here.parent == here:
            return None
        here = here.parent


def _is_pytest_config(path: Path) -> bool:
    import configparser
    import tomllib

    if path.name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"):
        return True
    try:
        with open(path, "rb") as fh:
            text = fh.read(_CONFIG_MAX_BYTES).decode("utf-8")
        if path.name == "pyproject.toml":
            tool = tomllib.loads(text).get("tool", {})
            return isinstance(tool, dict) and isinstance(tool.get("pytest"), dict)
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.read_string(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, configparser.Error):
        return False
    return parser.has_section("pytest" if path.name == "tox.ini" else "tool:pytest")


def rootdir_args(root: Path, target: Path) -> list[str]:
    """pytest's rootdir, configuration and conftest boundary, all explicit: the rootdir is the
    repository's root whatever the pinned pytest would infer (node ids never relative to a
    cache or temp directory: tomlkit 0.15.2 under its pytest 7 has no config file), the
    configuration file is the repository's own (:func:`pytest_config`) or none
    (``/dev/null``), and no conftest.py above the root is loaded."""
    config = pytest_config(root, target)
    return [f"--rootdir={root}", f"--confcutdir={root}", "-c", str(config) if config else os.devnull]


def pytest_job(
    job_id: str,
    repo: Repo,
    pytest_target: Path,
    sources: dict[str, str],
    *,
    trace: bool,
    options: RepoOptions,
    keep: list[str] | None = None,
    hash_seed: int = 0,
) -> Job:
    """The job that runs the tests of ``pytest_target`` with the module texts in ``sources``
    (absolute path → text) served instead of the files on disk."""
    library = [str(p) for p in repo.library_files()]
    spec: RunSpec = {
        "sources": sources,
        "library_files": library,
        "trace": trace,
        "limits": {"max_depth": options["max_depth"], "max_line_events": options["max_line_events"],
                   "max_summary_bytes": options["max_summary_bytes"], "max_calls": options["max_calls"]},
        "threshold": options["threshold"],
        "keep": keep,
        "timeout": options["test_timeout"],
        "render_sympy": repo.name.lower() == "sympy",
        "output": OUTPUT,
        "packages": list(repo.packages),
        "import_roots": [str(repo.import_root)],
        "channel_key": secrets.token_hex(32),  # the results' MAC key: the plugin deletes the spec once read
        "audit_library": preload_library(),  # the recorder's audit hook filtered in C (sandbox/audit_filter.py)
    }
    argv = [str(repo.python), "-m", "pytest", str(pytest_target), "-p", "_execbench_repo_plugin",
            "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist", "-o", "addopts=",
            "--import-mode=prepend", "--assert=plain", "-q", "--no-header", "-rN", "--color=no",
            *rootdir_args(repo.root, pytest_target)]
    env = {
        "PYTHONPATH": os.pathsep.join([".", str(repo.import_root)]),
        "PYTHONHASHSEED": str(hash_seed),  # the exec'd interpreter's, whatever the runner's
        "EXECBENCH_REPO_SPEC": "spec.json",
        "PYTHONDONTWRITEBYTECODE": "1",
        **repo.run_env(),
    }
    seconds = float(options["file_timeout"])
    return Job(job_id, "exec", args={"argv": argv, "env": env}, files={**_shipped(), "spec.json": json.dumps(spec)},
               collect=[OUTPUT], cpu_seconds=seconds, wall_seconds=seconds, memory_mb=MEMORY_MB,
               max_output=MAX_OUTPUT, output_is_limit=False, max_collect=RESULTS_MAX_BYTES + 1)


def run_many(repo: Repo, jobs: Sequence[Job]) -> list[PytestReport]:
    """Test jobs of ``repo`` (:func:`pytest_job`) in one sandbox, one report each."""
    results = run_jobs(jobs, read_only_paths=[str(repo.root), str(repo.import_root)], max_tasks=128,
                       file_size_bytes=1024**3, open_files=1024)
    return [report(result, json.loads(job.files["spec.json"])["channel_key"]) for job, result in zip(jobs, results)]


def run_tests(repo: Repo, pytest_target: Path, sources: dict[str, str], *, trace: bool,
              options: RepoOptions, keep: list[str] | None = None, hash_seed: int = 0) -> PytestReport:
    """One :func:`pytest_job` in a sandbox of its own."""
    return run_many(repo, [pytest_job("tests", repo, pytest_target, sources, trace=trace, options=options,
                                    keep=keep, hash_seed=hash_seed)])[0]


def report(result: JobResult, key: str) -> PytestReport:
    """The records of a test job's results file, written through the channel keyed by ``key``
    (each checked; a bad line is left out). A file the recorder did not write alone, or a run
    that ended normally without the recorder's trailer, is a fatal run with no records."""
    raw = result.files.get(OUTPUT, b"")
    records: list[TestRecord] = []
    fatal = None
    try:
        if len(raw) > RESULTS_MAX_BYTES:
            raise _records.RecordError(f"records too large: {len(raw)} bytes (limit {RESULTS_MAX_BYTES})")
        text, tampered, ended = unframe(raw, key)
        if tampered is not None:
            return PytestReport(result, [], tampered)
        normal = result.limit is None and result.failure is None and result.exit_code in (0, 1, 5)
        if text and not ended and normal:  # pytest unconfigures a session that wrote a record
            return PytestReport(result, [], f"{OUTPUT} ends before the recorder's trailer (the run was cut short)")
        lines, _ = _records.load_jsonl(text, max_bytes=RESULTS_MAX_BYTES,
                                       max_line_bytes=RECORD_MAX_BYTES, max_records=MAX_RECORDS)
    except _records.RecordError as exc:
        lines, fatal = [], f"{OUTPUT}: {exc}"
    for record in lines:  # a bad line (e.g. cut by a kill) or record is left out
        if isinstance(record, dict) and "fatal" in record:
            fatal = str(record["fatal"])[:1000]
            if fatal.startswith("tampering: "):
                return PytestReport(result, [], fatal)
            continue
        try:
            records.append(_checked(record))
        except _records.RecordError:
            continue
    return PytestReport(result, records, fatal)
