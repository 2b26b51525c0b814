"""gcov instruments only main.cpp's functions (families/state/build.py, ``COVERAGE_FILTER``):
the compile is smaller and main.cpp's line counts, the C++ trace length, are the same."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from execbench.families.state import build, cpp_build, instrument_cpp
from execbench.families.state import jobs as state_jobs
from execbench.families.state.records import Settings

from test_state_cpp_pch import PROGRAM

needs_gpp = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcov") is None,
                               reason="g++/gcov not installed")


def test_the_filter_needs_gpp_9():
    assert cpp_build.COVERAGE_FILTER in cpp_build._coverage_flags("g++ (Debian 12.2.0-14+deb12u1) 12.2.0")
    assert cpp_build._coverage_flags("g++ (GCC) 8.5.0") == ["--coverage"]
    assert cpp_build._coverage_flags("") == ["--coverage"]


@needs_gpp
def test_only_main_cpp_is_instrumented_and_its_counts_are_the_same():
    settings = Settings.of(dict(build.DEFAULT_OPTIONS))
    compiler = state_jobs.toolchain()
    assert cpp_build.COVERAGE_FILTER in cpp_build._coverage_flags(compiler), compiler   # this machine's g++ >= 9
    inside = instrument_cpp.instrument(PROGRAM, 12, ["values"], "inside", 4)   # the emitter's templates too
    jobs = []
    for name, toolchain in (("all", ""), ("main", compiler)):
        compiled = cpp_build._compile_job(f"cc_{name}", name, inside, settings, toolchain=toolchain)
        jobs += [replace(compiled, group=name, collect=["prog-main.gcno"], max_collect=1 << 24),
                 *(replace(job, group=name) for job in cpp_build._cpp_run_jobs(name, name, "9\n", 1, settings,
                                                                          [f"cc_{name}"]))]
    results = {result.id: result for result in state_jobs.run(jobs)}
    assert all(r.ok for r in results.values()), [(r.id, r.reason(), r.stderr[-300:]) for r in results.values()]
    assert cpp_build.COVERAGE_FILTER in jobs[len(jobs) // 2].args["argv"]
    # the standard library's instantiations carry no counters: the notes file shrinks
    assert len(results["cc_main"].files["prog-main.gcno"]) * 3 < len(results["cc_all"].files["prog-main.gcno"])
    assert results["main0"].stdout == results["all0"].stdout
    assert results["main0"].stdout.endswith(b'{"values":[0,1,4]}\n')
    assert cpp_build.gcov_lines(results["gcov_main0"]) == cpp_build.gcov_lines(results["gcov_all0"]) > 0
