"""The audit filter of the preload library (sandbox/audit_filter.py, _clock.SHIM_SOURCE): only
the watched events reach the Python hook, the event list is set once, and without the library
the hook is a plain ``sys.addaudithook`` with the same checks. Each case runs in a fresh
interpreter: an audit hook cannot be removed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from execbench.sandbox import _clock, run

CHECK = """
import ctypes, json, sys
from execbench.sandbox.audit_filter import install_audit_hook
seen = []
how = install_audit_hook(lambda event, args: seen.append(event), ["open", "os.remove"], sys.argv[1] or None)
for _ in range(1000):
    id(seen)
open(sys.argv[2]).close()
again = None
if how == "c-filter":   # a suite that sets the event list again (empty) changes nothing
    again = ctypes.CDLL(sys.argv[1]).execbench_audit_ready(b"")
    open(sys.argv[2]).close()
print(json.dumps({"how": how, "seen": seen, "again": again}))
"""


def _run(library: str, tmp_path: Path) -> dict:
    target = tmp_path / "file.txt"
    target.write_text("x")
    src = str(Path(__file__).parents[2] / "src")
    out = subprocess.run([sys.executable, "-c", CHECK, library, str(target)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": src}, timeout=60)
    return json.loads(out.stdout)


def test_only_the_watched_events_reach_the_hook_through_the_c_filter(tmp_path):
    library = _clock.shim(run)
    if library is None:
        pytest.skip("no preload library (no C compiler)")
    result = _run(library, tmp_path)
    assert result["how"] == "c-filter"
    assert result["again"] == 0
    # no builtins.id, import or compile event reached Python; both opens did
    assert result["seen"] == ["open", "open"], result


def test_without_the_library_the_hook_is_a_python_hook_that_sees_everything(tmp_path):
    result = _run("", tmp_path)
    assert result["how"] == "python"
    assert result["seen"].count("builtins.id") == 1000 and "open" in result["seen"]


def test_a_sandboxed_run_loads_the_filter_from_the_path_the_builder_gives():
    """The repo recorder gets ``sandbox.preload_library()`` in its spec and loads it inside the
    sandbox: that path must be readable there, so the recorder's hook is the C filter."""
    from execbench.sandbox import preload_library
    from execbench.sandbox.jobs import Job, run_jobs

    library = preload_library()
    if library is None:
        pytest.skip("no preload library (no C compiler)")
    code = ("from execbench.sandbox.audit_filter import install_audit_hook; "
            f"print(install_audit_hook(lambda e, a: None, ['open'], {library!r}))")
    result, = run_jobs([Job("filter", "builtins:exec", args=code)])
    assert result.ok and result.stdout == b"c-filter\n", result
