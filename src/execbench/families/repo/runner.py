"""Running a repository's test module under pytest inside the sandbox.

The venv's interpreter runs ``pytest <test file> -p _execbench_repo_plugin`` with the
repository's own configuration except ``addopts`` (``-o addopts=""`` drops xdist/cov
options), ``-p no:cacheprovider``, plain asserts and prepend import mode; the source tree is
first on ``PYTHONPATH``. The plugin (``_plugin.py``) and a copy of the tracer are written into
the sandbox work dir; the per-test JSON lines come back as a collected file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execbench import sandbox
from execbench.sandbox import records as _records
from execbench.sources.repos import Repo

_HERE = Path(__file__).parent
_TRACING = Path(__file__).parents[2] / "tracing"
OUTPUT = "results.jsonl"
# results.jsonl is written by the test process: read bounded, each record checked.
RESULTS_MAX_BYTES = 128 * 1024**2
RECORD_MAX_BYTES = 32 * 1024**2
MAX_RECORDS = 20_000
_RECORD_FIELDS = {"nodeid": str}
_RECORD_OPTIONAL = {"phases": dict, "probes": dict, "verify": dict, "aliases": dict,
                    "overflow": list, "trace": (dict, type(None)), "function": (list, type(None)),
                    "seconds": (int, float)}


def _checked(record: Any) -> dict[str, Any]:
    """A test's record, its envelope validated (what build.py indexes must be there)."""
    record = _records.check(record, _RECORD_FIELDS, _RECORD_OPTIONAL, where="test record")
    for name, phase in record.get("phases", {}).items():
        _records.check(phase, {"outcome": str}, where=f"phase {name!r}")
    for key in ("probes", "verify", "aliases"):
        if not all(isinstance(k, str) for k in record.get(key, {})):
            raise _records.RecordError(f"test record: {key} keys should be strings")
    return record


@dataclass
class TestRun:
    ok: bool  # the plugin ran and wrote results (tests may still have failed)
    reason: str
    records: list[dict[str, Any]] = field(default_factory=list)
    fatal: str | None = None
    duration: float = 0.0
    stderr_tail: str = ""


def _shipped() -> dict[str, str]:
    return {
        "_execbench_repo_plugin.py": (_HERE / "_plugin.py").read_text(encoding="utf-8"),
        "execbench/__init__.py": "",
        "execbench/tracing/__init__.py": "",
        "execbench/tracing/tracer.py": (_TRACING / "tracer.py").read_text(encoding="utf-8"),
        "execbench/tracing/summary.py": (_TRACING / "summary.py").read_text(encoding="utf-8"),
    }


def run_tests(
    repo: Repo,
    pytest_target: Path,
    sources: dict[str, str],
    *,
    trace: bool,
    options: dict[str, Any],
    keep: list[str] | None = None,
    hash_seed: int = 0,
) -> TestRun:
    """Run the tests of ``pytest_target`` with the module texts in ``sources`` (absolute
    path → text) served instead of the files on disk."""
    library = [str(p) for p in repo.library_files()]
    spec = {
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
    files = {**_shipped(), "spec.json": json.dumps(spec)}
    argv = [str(repo.python), "-m", "pytest", str(pytest_target), "-p", "_execbench_repo_plugin",
            "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:xdist", "-o", "addopts=",
            "--import-mode=prepend", "--assert=plain", "-q", "--no-header", "-rN", "--color=no"]
    env = {
        "PYTHONPATH": os.pathsep.join([".", str(repo.import_root)]),
        "PYTHONHASHSEED": str(hash_seed),
        "EXECBENCH_REPO_SPEC": "spec.json",
        "PYTHONDONTWRITEBYTECODE": "1",
        **repo.run_env(),
    }
    seconds = float(options["file_timeout"])
    limits = sandbox.Limits(cpu_seconds=seconds, wall_seconds=seconds, memory_bytes=4 * 1024**3,
                            file_size_bytes=1024**3, max_tasks=128, output_bytes=256 * 1024,
                            open_files=1024)
    result = sandbox.run(argv, files=files, collect=[OUTPUT], env=env, limits=limits,
                         read_only_paths=[str(repo.root)])
    raw = result.files.get(OUTPUT, b"")
    records, fatal = [], None
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
    tail = "\n".join(result.stdout.decode("utf-8", "replace").strip().splitlines()[-15:])
    ok = result.limit is None and fatal is None and (bool(records) or result.exit_code in (0, 1, 5))
    return TestRun(ok=ok, reason=result.reason(), records=records, fatal=fatal, duration=result.duration,
                   stderr_tail=tail or result.stderr.decode("utf-8", "replace")[-1500:])
