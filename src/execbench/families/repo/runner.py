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

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, cast

from execbench.families.repo.records import RepoOptions
from execbench.sandbox import records as _records
from execbench.sandbox.jobs import Job, JobResult, run_jobs
from execbench.sources.repos import Repo

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo._plugin import RunSpec, TestRecord

_HERE = Path(__file__).parent
_TRACING = Path(__file__).parents[2] / "tracing"
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


def _shipped() -> dict[str, str]:
    return {
        "_execbench_repo_plugin.py": (_HERE / "_plugin.py").read_text(encoding="utf-8"),
        "execbench/__init__.py": "",
        "execbench/tracing/__init__.py": "",
        "execbench/tracing/tracer.py": (_TRACING / "tracer.py").read_text(encoding="utf-8"),
        "execbench/tracing/summary.py": (_TRACING / "summary.py").read_text(encoding="utf-8"),
    }


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
    }
    argv = [str(repo.python), "-m", "pytest", str(pytest_target), "-p", "_execbench_repo_plugin",
            "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist", "-o", "addopts=",
            "--import-mode=prepend", "--assert=plain", "-q", "--no-header", "-rN", "--color=no"]
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
    return [report(result) for result in results]


def run_tests(repo: Repo, pytest_target: Path, sources: dict[str, str], *, trace: bool,
              options: RepoOptions, keep: list[str] | None = None, hash_seed: int = 0) -> PytestReport:
    """One :func:`pytest_job` in a sandbox of its own."""
    return run_many(repo, [pytest_job("tests", repo, pytest_target, sources, trace=trace, options=options,
                                    keep=keep, hash_seed=hash_seed)])[0]


def report(result: JobResult) -> PytestReport:
    """The records of a test job's results file (each checked; a bad line is left out)."""
    raw = result.files.get(OUTPUT, b"")
    records: list[TestRecord] = []
    fatal = None
    try:
        lines, _ = _records.load_jsonl(raw, max_bytes=RESULTS_MAX_BYTES,
                                       max_line_bytes=RECORD_MAX_BYTES, max_records=MAX_RECORDS)
    except _records.RecordError as exc:
        lines, fatal = [], f"{OUTPUT}: {exc}"
    for record in lines:  # a bad line (e.g. cut by a kill) or record is left out
        if isinstance(record, dict) and "fatal" in record:
            fatal = str(record["fatal"])[:1000]
            continue
        try:
            records.append(_checked(record))
        except _records.RecordError:
            continue
    return PytestReport(result, records, fatal)
