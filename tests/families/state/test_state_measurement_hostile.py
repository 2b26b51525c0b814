"""Issue 33, principle 3 for C++: the measurements (gcov's counters, the state meter's figures)
are out of the program's reach. A program that drives libgcov, or writes or blocks the state
meter's file, is rejected as tampering; it never gets a forged trace length or state metric."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset

STATE = registry.get("state")

LOOP = """\
#include <iostream>
{includes}
using namespace std;
{before}
int main() {{
    long long n, total = 0;
    cin >> n;
    {start}
    for (long long i = 0; i < n; ++i) {{
        total += i * i;
        {inside}
    }}
    cout << total << "\\n";
    return 0;
}}
"""
CHECKPOINT = {"loop_line": 0, "fields": ["total"], "inside_iteration": 3}


def _case(root: Path, name: str, includes: str = "", before: str = "", start: str = "", inside: str = "") -> Path:
    program = LOOP.format(includes=includes, before=before, start=start, inside=inside)
    line = next(n for n, text in enumerate(program.splitlines(), 1) if text.strip().startswith("for ("))
    case = root / name
    case.mkdir(parents=True)
    (case / "main.cpp").write_text(program)
    (case / "short.txt").write_text("3\n")
    (case / "long.txt").write_text("400\n")
    checkpoint = {**CHECKPOINT, "loop_line": line}
    (case / "case.toml").write_text(textwrap.dedent(f"""\
        id = "{name}"
        language = "cpp"
        source = "main.cpp"
        short_input = "short.txt"
        long_input = "long.txt"
        [checkpoint]
        """) + "".join(f"{k} = {json.dumps(v)}\n" for k, v in checkpoint.items()))
    return case


def _build(tmp_path: Path, case: Path) -> tuple[dict, list, dict]:
    manifest = build_dataset(STATE, [str(case)], tmp_path / "ds", options={**STATE.default_options, "repeats": 1})
    tasks = {t.arm: t for t in read_tasks(tmp_path / "ds")}
    return manifest, list(read_rejected(tmp_path / "ds")), tasks


def test_an_honest_program_is_measured(tmp_path):
    manifest, rejected, tasks = _build(tmp_path, _case(tmp_path / "cases", "honest"))
    assert manifest["tasks"] == 4, rejected
    assert tasks["long-trace-final"].metrics["peak_state"] > 0


def test_a_program_that_resets_gcovs_counters_is_rejected(tmp_path):
    case = _case(tmp_path / "cases", "resets", before='extern "C" void __gcov_reset(void);',
                 inside="if (n > 100 && i == n - 1) __gcov_reset();")
    manifest, rejected, _ = _build(tmp_path, case)
    assert manifest["tasks"] == 0
    assert [r["stage"] for r in rejected] == ["tampering"] and "__gcov_reset" in rejected[0]["reason"]


def test_a_program_that_reaches_libgcovs_internals_is_rejected(tmp_path):
    case = _case(tmp_path / "cases", "internals", before='extern "C" void __gcov_dump_int(void);',
                 inside="if (n < 0) __gcov_dump_int();")
    manifest, rejected, _ = _build(tmp_path, case)
    assert [r["stage"] for r in rejected] == ["tampering"] and "__gcov_dump_int" in rejected[0]["reason"]


# the file's name is built at run time (the source cannot name the meter's files)
FORGE = r"""
const std::string meter_file = std::string("execbench") + "_state.json";
void forge() {
    if (FILE* f = std::fopen(meter_file.c_str(), "w")) {
        std::fputs("{\"line_events\": 5, \"peak_state\": 777777, \"state_load\": 777777, \"state_stride\": 1, "
                   "\"state_samples\": 1, \"state_work\": 1, \"counts\": [400], \"last_exit\": [400]}\n", f);
        std::fclose(f);
    }
    chmod(meter_file.c_str(), 0444);
}
"""


def test_a_program_that_writes_the_meters_file_gets_no_forged_metric(tmp_path):
    """The program writes a forged measurement at exit (before the meter) and makes it read-only:
    rejected as tampering when the meter cannot overwrite it, else measured for real."""
    case = _case(tmp_path / "cases", "forges",
                 includes="#include <cstdio>\n#include <cstdlib>\n#include <string>\n#include <sys/stat.h>",
                 before=FORGE, start="std::atexit(forge);")
    manifest, rejected, tasks = _build(tmp_path, case)
    if manifest["tasks"] == 0:
        assert [r["stage"] for r in rejected] == ["tampering"] and "state meter" in rejected[0]["reason"], rejected
    else:
        assert all(t.metrics["peak_state"] not in (777777, None) for t in tasks.values())


def test_a_program_that_blocks_the_meters_file_is_rejected(tmp_path):
    case = _case(tmp_path / "cases", "blocks", includes="#include <string>\n#include <sys/stat.h>",
                 start='mkdir((std::string("execbench") + "_state.json").c_str(), 0755);')
    manifest, rejected, _ = _build(tmp_path, case)
    assert manifest["tasks"] == 0
    assert [r["stage"] for r in rejected] == ["tampering"] and "missing" in rejected[0]["reason"], rejected


def test_a_program_whose_counters_are_dumped_twice_is_rejected(tmp_path):
    """A forked child that ends normally dumps its copy of the counters into the same data
    file: every count is added again (a longer trace), and main's entry count shows it."""
    case = _case(tmp_path / "cases", "forks", includes="#include <unistd.h>",
                 inside="if (n > 100 && i == n - 1) fork();")
    manifest, rejected, _ = _build(tmp_path, case)
    assert manifest["tasks"] == 0
    assert [r["stage"] for r in rejected] == ["tampering"] and "main" in rejected[0]["reason"], rejected
