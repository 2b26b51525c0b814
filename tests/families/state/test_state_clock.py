"""The state family rejects answers that hold only today or only on the build machine
(issue 33, principle 6): Python and C++ programs whose output depends on the date, and a
Python program that counts /proc/cpuinfo's processors, fail the determinism check; the same
programs without that dependence are admitted."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.sandbox import capabilities

STATE = registry.get("state")
LOOP_PY = """\
import sys
{imports}
n = int(sys.stdin.read())
total = {start}
for i in range(n):
    total += i
print(total)
"""
LOOP_CPP = """\
#include <chrono>
#include <ctime>
#include <iostream>
#include <thread>
int main() {{
    long n;
    std::cin >> n;
    long total = {start};
    for (long i = 0; i < n; i++) {{
        total += i;
    }}
    std::cout << total << "\\n";
    return 0;
}}
"""
PYTHON = {
    "py_date": LOOP_PY.format(imports="import datetime", start="datetime.date.today().toordinal() % 1000"),
    "py_cpuinfo": LOOP_PY.format(imports="", start="open('/proc/cpuinfo').read().count('processor')"),
    "py_pure": LOOP_PY.format(imports="", start="7"),
}
CPP = {
    "cpp_time": LOOP_CPP.format(start="std::time(nullptr) / 86400 % 1000"),
    "cpp_chrono": LOOP_CPP.format(
        start="std::chrono::duration_cast<std::chrono::hours>("
              "std::chrono::system_clock::now().time_since_epoch()).count() / 24 % 1000"),
    "cpp_cpus": LOOP_CPP.format(start="(long)std::thread::hardware_concurrency()"),
    "cpp_pure": LOOP_CPP.format(start="7"),
}


def _case(root: Path, name: str, program: str, language: str) -> str:
    case = root / name
    case.mkdir(parents=True)
    source = "main.py" if language == "python" else "main.cpp"
    (case / source).write_text(textwrap.dedent(program))
    (case / "short.txt").write_text("3\n")
    (case / "long.txt").write_text("300\n")
    (case / "case.toml").write_text(f'id = "{name}"\nlanguage = "{language}"\nsource = "{source}"\n'
                                    'short_input = "short.txt"\nlong_input = "long.txt"\n')
    return str(case)


def _build(tmp_path: Path, programs: dict[str, str], language: str) -> tuple[set[str], dict[str, dict]]:
    cases = [_case(tmp_path / "cases", name, program, language) for name, program in programs.items()]
    build_dataset(STATE, cases, tmp_path / "ds", options=dict(STATE.default_options), jobs=1)
    admitted = {t.id for t in read_tasks(tmp_path / "ds")}
    rejected = {r["candidate"].split("/")[-1]: r for r in read_rejected(tmp_path / "ds")}
    return admitted, rejected


def _check(admitted: set[str], rejected: dict[str, dict], pure: str, dependent: list[str]) -> None:
    assert pure not in rejected and any(pure in t for t in admitted), (admitted, rejected)
    for name in dependent:
        assert not any(name in t for t in admitted), (name, admitted)
        assert rejected[name]["stage"] == "determinism", (name, rejected[name])


@pytest.mark.slow
@pytest.mark.skipif(capabilities()["disk"] != "tmpfs", reason="the machine's variations need the new root")
def test_python_programs_that_read_the_date_or_cpuinfo_are_rejected(tmp_path):
    admitted, rejected = _build(tmp_path, PYTHON, "python")
    dependent = ["py_cpuinfo"] + (["py_date"] if capabilities()["clock"] == "shifted" else [])
    _check(admitted, rejected, "py_pure", dependent)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None or capabilities()["clock"] != "shifted",
                    reason="needs g++ and the preload library (sandbox/_clock.py)")
def test_cpp_programs_that_read_time_the_system_clock_or_the_cpu_count_are_rejected(tmp_path):
    """The C++ repeats are jobs of one sandbox: each job has a clock and a CPU count of its own."""
    admitted, rejected = _build(tmp_path, CPP, "cpp")
    _check(admitted, rejected, "cpp_pure", ["cpp_time", "cpp_chrono", "cpp_cpus"])
