"""The repo family rejects a test whose value holds only today (issue 33, principle 6): the
library computes it from the wall clock, which differs between the probe run and the
verification runs (sandbox/_clock.py); the same test without the clock is admitted."""

from __future__ import annotations

import time

import pytest

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.sandbox import capabilities

REPO = registry.get("repo")

LIBRARY = '''\
import time


def bump(value, n):
    return value + n


def digits(text):
    total = 0
    for ch in text:
        total = bump(total, int(ch))
    return total


def day_number():
    return digits(str(int(time.time() // 86400)))


def fixed_number():
    return digits("20425")
'''

TESTS = '''\
from datelib.days import day_number, fixed_number


def test_day():
    assert day_number() == {day}


def test_fixed():
    assert fixed_number() == 13
'''


@pytest.mark.slow
@pytest.mark.skipif(capabilities()["clock"] != "shifted", reason="needs the preload library (sandbox/_clock.py)")
def test_a_value_computed_from_the_date_is_rejected(tmp_path):
    root = tmp_path / "datelib"
    (root / "datelib").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "datelib" / "__init__.py").write_text('"""Numbers of the day."""\n')
    (root / "datelib" / "days.py").write_text(LIBRARY)
    (root / "tests" / "__init__.py").write_text("")
    day = sum(map(int, str(int(time.time() // 86400))))
    (root / "tests" / "test_days.py").write_text(TESTS.format(day=day))
    build_dataset(REPO, [str(root)], tmp_path / "ds", options=dict(REPO.default_options))
    tasks = list(read_tasks(tmp_path / "ds"))
    rejected = list(read_rejected(tmp_path / "ds"))
    # the clock-free test is admitted with its value; the day's is not (whether the probe run
    # or a verification run saw another day: unstable_value, or a failing test)
    assert [t.answer for t in tasks] == ["13"], (tasks, rejected)
    assert any("test_day" in str(r.get("test") or r.get("candidate") or r) for r in rejected), rejected
