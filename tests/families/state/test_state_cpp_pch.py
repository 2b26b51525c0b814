"""Precompiled headers for the state family's g++ compiles (families/state/pch.py): which
headers a source gets, and that a compile with its .gch (built in the sandbox, really used)
gives the program the plain compile gives: same output, same gcov line counts."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from execbench.families.state import build, cpp_build, cpp_programs, instrument_cpp, pch
from execbench.families.state import jobs as state_jobs
from execbench.families.state.records import Settings

needs_gpp = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcov") is None,
                               reason="g++/gcov not installed")

PROGRAM = """\
// counts pairs
#include <iostream>
#include <vector>
#include <map>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values;
    map<int, int> counts;
    for (int i = 0; i < n; ++i) {
        values.push_back(i * i % 7);
        counts[values.back()]++;
    }
    for (auto [k, v] : counts) cout << k << ":" << v << "\\n";
    return 0;
}
"""


def test_leading_headers_are_the_standard_includes_before_anything_else():
    assert pch.leading_headers(PROGRAM) == ("iostream", "map", "vector")
    # a line that is not an include, a comment or a blank line ends the scan
    assert pch.leading_headers("#include <vector>\n#define N 10\n#include <map>\n") == ("vector",)
    assert pch.leading_headers("#include <vector>\n#include \"mine.h\"\n#include <map>\n") == ("vector",)
    assert pch.leading_headers("#include <bits/stdc++.h>\n") == ()
    assert pch.leading_headers("using namespace std;\n#include <vector>\n") == ()
    # an instrumented program: the program's headers and the inserted emitter's
    inside = instrument_cpp.instrument(PROGRAM, 12, ["values"], "inside", 2)
    assert set(pch.leading_headers(inside)) == {"iostream", "map", "vector", "charconv", "algorithm", "array",
                                                "cmath", "cstdio", "cstdlib", "deque", "set", "string", "tuple",
                                                "type_traits", "unordered_map", "unordered_set", "utility"}
    # the copy that is compiled, with #line directives (the clean program's line numbers):
    # the directives do not end the scan, so it shares the .gch of the shown copy
    compiled = instrument_cpp.instrument(PROGRAM, 12, ["values"], "inside", 2, line_directives=True)
    assert "#line" in compiled and pch.leading_headers(compiled) == pch.leading_headers(inside)
    assert pch.leading_headers('#include <map>\n#line 40 "main.cpp"\n#include <set>\nint x;\n') == ("map", "set")
    # the meter: its own #define EXECBENCH_... lines do not end the scan
    meter = cpp_programs.metered(PROGRAM, 1000)
    assert {"iostream", "typeinfo", "stack"} <= set(pch.leading_headers(meter))


@needs_gpp
def test_a_compile_with_its_precompiled_header_gives_the_same_program(monkeypatch):
    monkeypatch.setattr(pch, "MIN_USES", 1)
    monkeypatch.setattr(pch, "_STORE", pch._Store())
    settings = Settings.of(dict(build.DEFAULT_OPTIONS))
    compiler = state_jobs.toolchain()
    inside = instrument_cpp.instrument(PROGRAM, 12, ["values"], "inside", 4)
    groups: dict[str, list] = {}
    for name in ("plain", "pch"):
        groups[name] = [replace(job, group=name) for job in
                        (cpp_build._compile_job(f"cc_{name}", name, inside, settings, needs=[]),
                         *cpp_build._cpp_run_jobs(name, name, "9\n", 1, settings, [f"cc_{name}"]))]
    rewritten, readable = pch.use(groups["pch"], compiler)   # only the second copy's compile
    argv = rewritten[0].args["argv"]
    assert argv[-5] == "-include" and argv[-4].startswith(readable[0]) and argv[-4].endswith("/pch.h")
    assert argv[-3:] == ["-o", "prog", "main.cpp"] and "-Winvalid-pch" in argv
    assert groups["plain"][0].args == pch.use(groups["plain"][:1], "")[0][0].args   # no toolchain: unchanged
    # -H lists the headers read: "!" marks the .gch used (g++ falls back to the text otherwise)
    shown = replace(state_jobs.exec_job("shown", [*argv[:-3], "-H", "-fsyntax-only", "main.cpp"], cwd="pch",
                                        files={"pch/main.cpp": inside}, cpu=120, wall=240, memory_mb=4096),
                    group="shown")
    results = state_jobs.run([*groups["plain"], *rewritten, shown], read_only_paths=readable)
    by_id = {result.id: result for result in results}
    assert all(result.ok for result in results), [(r.id, r.reason(), r.stderr[-300:]) for r in results]
    assert "! " in by_id["shown"].stderr and "pch.h.gch" in by_id["shown"].stderr
    assert "invalid" not in by_id["cc_pch"].stderr
    assert by_id["pch0"].stdout == by_id["plain0"].stdout
    assert by_id["pch0"].stdout.endswith(b'{"values":[0,1,4]}\n')
    assert cpp_build.gcov_lines(by_id["gcov_pch0"]) == cpp_build.gcov_lines(by_id["gcov_plain0"]) > 0


def test_only_compiles_with_leading_standard_headers_are_rewritten(monkeypatch):
    monkeypatch.setattr(pch, "MIN_USES", 2)
    monkeypatch.setattr(pch, "_STORE", pch._Store())
    settings = Settings.of(dict(build.DEFAULT_OPTIONS))
    quoted = '#include "local.h"\n' + PROGRAM
    jobs = [cpp_build._compile_job("cc_quoted", "quoted", quoted, settings),
            cpp_build._compile_job("cc_one", "one", PROGRAM, settings)]
    # one compile of that header set so far: below MIN_USES, nothing is built or rewritten
    out, readable = pch.use(jobs, "g++ (test) 0")
    assert [job.args for job in out] == [job.args for job in jobs] and readable == []
    assert pch._STORE.built == {}
