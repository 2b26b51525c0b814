"""C++ at parity: the structural reading, the automatic checkpoint choice and the state meter."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from execbench import registry
from execbench.dataset import read_tasks
from execbench.families.build import build_dataset
from execbench.families.state import choose, cpp_programs, cpp_scan


STATE = registry.get("state")


def write_case(root: Path, name: str, program: str, short: str, long: str, language: str = "cpp") -> Path:
    case = root / name
    case.mkdir(parents=True)
    source = "main.py" if language == "python" else "main.cpp"
    (case / source).write_text(textwrap.dedent(program))
    (case / "short.txt").write_text(short)
    (case / "long.txt").write_text(long)
    (case / "case.toml").write_text(f'id = "{name}"\nlanguage = "{language}"\nsource = "{source}"\n'
                                    'short_input = "short.txt"\nlong_input = "long.txt"\n')
    return case

PROGRAM = """\
#include <iostream>
#include <map>
#include <vector>
using namespace std;

struct Cell { int x; int y; };
int limit = 3;
vector<int> seen(4);

long long walk(const vector<int>& values, int start) {
    long long acc = 0;
    int steps = 0;
    for (int j = start; j < (int)values.size(); ++j) {
        int v = values[j];
        acc += v;
        if (acc > 100) break;
        ++steps;
    }
    return acc + steps;
}

int main() {
    int n;
    cin >> n;
    map<int, int> counts;
    auto [a, b] = make_pair(1, 2);
    Cell cell{0, 0};
    int i = 0;
    while (i < n) {
        counts[i % 3] += 1;
        if (i % 2) cell.x++; else cell.y++;
        ++i;
    }
    for (i = 0; i < 2; ++i) {
        a += b;
    }
    cout << walk(seen, 0) << " " << counts.size() << " " << cell.x << " " << a << "\\n";
    return 0;
}
"""


def test_the_reading_finds_loops_scopes_and_statements():
    scan = cpp_scan.scan(PROGRAM)
    lines = {loop.line: loop for loop in scan.loops}
    assert sorted(lines) == [13, 29, 34]
    assert lines[13].header_names == ("j",) and lines[34].targets == ("i",)
    names = {d.name for d in scan.decls}
    assert {"limit", "seen", "values", "start", "acc", "steps", "j", "v", "n", "counts", "a", "b", "cell", "i"} <= names
    assert "walk" not in names and "Cell" not in names and "x" not in names   # functions, types, members
    globals_ = {d.name for d in scan.decls if d.block is None}
    assert globals_ == {"limit", "seen"}
    # in scope at both checkpoints of the for loop in walk: globals, parameters, locals before it
    assert [d.name for d in cpp_scan.in_scope(scan, lines[13])] == ["limit", "seen", "values", "start", "acc",
                                                                    "steps"]
    assert [d.name for d in cpp_scan.in_scope(scan, lines[29])] == ["limit", "seen", "n", "counts", "a", "b",
                                                                    "cell", "i"]
    assert "limit" not in cpp_scan.live_names(scan, lines[29])
    # one tick per statement of a braced block; the unbraced if/else branches are braced by the meter
    assert len(scan.wraps) == 3  # `break;`, `cell.x++;`, `cell.y++;`
    assert len(cpp_programs.loops(PROGRAM)) == 3


def test_profile_snapshot_and_meter_programs_only_insert():
    loops = cpp_programs.loops(PROGRAM)
    for program in (cpp_programs.profile(PROGRAM, loops),
                    cpp_programs.snapshot(PROGRAM, [(loops[1], 3, ["counts", "i"])], 200),
                    cpp_programs.metered(PROGRAM, 1000)):
        # insertions only: the clean program is a subsequence of the generated one
        rest = iter(program)
        assert all(char in rest for char in PROGRAM)
        assert len(program) > len(PROGRAM)
    metered = cpp_programs.metered(PROGRAM, 1000)
    assert metered.count("execbench_state::tick();") == len(cpp_scan.scan(PROGRAM).statements) + 3
    # every loop counted (the profile), each with both checkpoints (chosen at run time)
    assert [metered.count(f"execbench_state::enter({j});") for j in range(3)] == [1, 1, 1]
    assert [metered.count(f"execbench_state::leave({j});") for j in range(3)] == [1, 1, 1]
    assert cpp_programs.loop_index(loops, 29) == 1 and cpp_programs.loop_index(loops, 30) is None
    assert "static execbench_state::var" in metered   # the globals' guards


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_the_meter_writes_the_snapshot_copys_snapshots():
    """The meter built for an automatic choice is also its snapshot copy: run with a
    selection, it writes the snapshot copy's file byte for byte (all three loops, one of
    them in a function called after the others; K-1, K and the exit of each)."""
    from execbench.families.state import jobs as state_jobs

    loops = cpp_programs.loops(PROGRAM)
    names = cpp_programs.candidate_names(PROGRAM, loops)
    top = [(1, 6), (0, 3), (2, 2)]   # (loop j, K) in the ranking's order: index 0, 1, 2
    copy = cpp_programs.snapshot(PROGRAM, [(loops[j], k, names[j]) for j, k in top], 4000)
    meter = cpp_programs.metered(PROGRAM, 1000, loops, snapshots=4000)
    selection = ",".join(f"{j}:{k}:{index}" for index, (j, k) in enumerate(top))
    jobs = []
    for label, source, env in (("copy", copy, {}), ("meter", meter, {cpp_programs.SNAPSHOT_VARIABLE: selection})):
        jobs += [state_jobs.exec_job(f"cc_{label}", ["g++", "-std=c++17", "-O0", "-o", "prog", "main.cpp"],
                                     cwd=label, files={f"{label}/main.cpp": source}, cpu=120, wall=120, memory_mb=4096,
                                     group=label),
                 state_jobs.exec_job(label, ["./prog"], cwd=label, stdin="10\n", env=env, needs=[f"cc_{label}"],
                                     collect=[cpp_programs.SNAPSHOT_FILE], cpu=10, wall=20, memory_mb=1024, group=label)]
    results = {result.id: result for result in state_jobs.run(jobs)}
    assert all(result.ok for result in results.values()), {k: r.reason() for k, r in results.items()}
    written = {label: results[label].files[cpp_programs.SNAPSHOT_FILE] for label in ("copy", "meter")}
    assert written["meter"] == written["copy"]
    snap = cpp_programs.read_snapshots(written["meter"].decode())
    assert sorted(snap) == [f"{i}:{at}" for i in range(3) for at in ("before", "inside", "post")]
    assert snap["0:inside"]["i"] == {"json": "5"} and snap["0:post"]["i"] == {"json": "10"}
    assert results["meter"].stdout == results["copy"].stdout == b"4 3 5 5\n"


def test_snapshot_text_reads_like_the_python_profile():
    text = "0:before\ti\t3\n0:before\t\t\n0:inside\ti\t4\n0:inside\tv\t[1,2]\n0:inside\t\t\n0:inside\ti\t9\n"
    assert cpp_programs.read_snapshots(text) == {"0:before": {"i": {"json": "3"}},
                                                 "0:inside": {"i": {"json": "4"}, "v": {"json": "[1,2]"}}}
    # the ranking rule both languages share
    assert choose.rank([10, 1, 10, 4], [10, 1, 3, 4], [9, 5, 3, 12]) == [(0, 6), (3, 3)]


SQUARES = """\
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> v;
    long long total = 0;
    int i = 0;
    while (i < n) {
        v.push_back(i);
        total += i;
        ++i;
    }
    cout << total << "\\n";
    return 0;
}
"""


def _load(n: int) -> int:
    """|S_t| summed by hand: 8 + 3n statements; before them 0, 1, 1, 2, 3, 4 (n, v, total, i
    declared one by one), 4 + j, 5 + j, 5 + j in iteration j (v holds j, then j + 1 items),
    4 + n at the output and at the return."""
    return 0 + 1 + 1 + 2 + 3 + 4 + sum(14 + 3 * j for j in range(n)) + 2 * (4 + n)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cpp_case_without_checkpoint_is_chosen_automatically_and_measured(tmp_path):
    write_case(tmp_path / "cases", "squares", SQUARES, "3\n", "400\n", language="cpp")
    manifest = build_dataset(STATE, [str(tmp_path / "cases")], tmp_path / "ds", options=dict(STATE.default_options))
    assert manifest["tasks"] == 4, manifest
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    checkpoint = tasks["inside-loop-state"].provenance["checkpoint"]
    assert checkpoint["chosen_by"] == "auto" and checkpoint["loop_line"] == 11
    assert checkpoint["fields"] == ["total", "i"] and checkpoint["inside_iteration"] == 201
    assert tasks["inside-loop-state"].answer == {"i": 200, "total": sum(range(200))}
    assert tasks["post-loop-state"].answer == {"i": 400, "total": sum(range(400))}
    short, long = tasks["short-trace-final"].metrics, tasks["long-trace-final"].metrics
    assert long["line_events"] == 8 + 3 * 400 and short["line_events"] == 8 + 3 * 3
    assert long["state_load"] == _load(400) and short["state_load"] == _load(3)
    assert long["peak_state"] == 400 + 4 and long["state_stride"] == 1
    inside = tasks["inside-loop-state"].metrics
    # the inside run stops before the body of iteration 201: 6 statements and 200 iterations
    assert inside["line_events"] == 6 + 3 * 200
    assert "state_meter" not in tasks["inside-loop-state"].provenance


# (the clock library's variables are left out: a job with the offset 0 has none, sandbox/_clock.py)
ENVIRONMENT_COUNT = """\
#include <cstring>
#include <iostream>
using namespace std;
extern char** environ;

int main() {
    int n;
    cin >> n;
    int vars = 0;
    for (char** e = environ; *e; ++e) {
        vars += strncmp(*e, "LD_PRELOAD=", 11) != 0 && strstr(*e, "_CLOCK_OFFSET=") == nullptr
                && strstr(*e, "_CPUS=") == nullptr;
    }
    long long total = 0;
    int i = 0;
    while (i < n) {
        total += i;
        ++i;
    }
    cout << total << " " << vars << "\\n";
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_when_the_meter_cannot_count_a_profile_copy_chooses(tmp_path):
    """The program prints how many environment variables it sees: the meter's runs (one
    variable more: the arm) print another line than the clean runs, so the meter's counts
    are not used; the automatic choice comes from a profile copy of its own (same choice
    as the meter would give), and the state metrics are null, saying why."""
    write_case(tmp_path / "cases", "envcount", ENVIRONMENT_COUNT, "3\n", "400\n", language="cpp")
    manifest = build_dataset(STATE, [str(tmp_path / "cases")], tmp_path / "ds", options=dict(STATE.default_options))
    assert manifest["tasks"] == 4, manifest
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    checkpoint = tasks["inside-loop-state"].provenance["checkpoint"]
    assert checkpoint["chosen_by"] == "auto" and checkpoint["loop_line"] == 16
    assert checkpoint["loop_iterations"] == 400 and checkpoint["inside_iteration"] == 201
    assert tasks["inside-loop-state"].answer == {"i": 200, "total": sum(range(200))}
    assert "its output differs from the arm's own run" in tasks["post-loop-state"].provenance["state_meter"]
    assert tasks["long-trace-final"].metrics["state_load"] is None


def test_every_shipped_cpp_program_has_loops_and_a_meter_copy():
    from execbench.sources.cases import builtin_corpus

    programs = [p for source in ("classic", "paired") for p in builtin_corpus("state", source).rglob("main.cpp")]
    assert len(programs) >= 74
    for path in programs:
        source = path.read_text()
        loops = cpp_programs.loops(source)
        assert loops, path
        metered = cpp_programs.metered(source, 1000)
        rest = iter(metered)
        assert all(char in rest for char in source), path   # insertions only
        assert metered.count("execbench_state::tick();") >= len(cpp_scan.scan(source).statements)
