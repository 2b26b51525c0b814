"""Trace datasets built with the builder under CPython 3.11, 3.12 and 3.13 are byte-identical
(benchmarks/trace_interpreters.py does the full corpora; this is a sample)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _benchmark():
    spec = importlib.util.spec_from_file_location("trace_interpreters", ROOT / "benchmarks" / "trace_interpreters.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("source, limit", [("humaneval", 5), ("advanced", 2)])
def test_a_sample_builds_identically_under_every_interpreter(tmp_path, source, limit):
    bench = _benchmark()
    interpreters = [i for i in bench.INTERPRETERS if os.path.isfile(i)]
    if len(interpreters) < 3:
        pytest.skip("CPython 3.12.1 / 3.13.0 not at /root/.pyenv/versions")
    results = [bench.build_under(python, source, tmp_path / str(n), limit, 2) for n, python in enumerate(interpreters)]
    assert [r["python"][:4] for r in results] == ["3.11", "3.12", "3.13"]
    assert {r["trace"]["interpreter"][:13] for r in results} == {"CPython 3.11."}
    assert results[0]["tasks"] > 0
    assert len({r["sha256"] for r in results}) == 1
