"""State-family programs compile with exactly their own semantics: the runner's
``from __future__ import annotations`` must not leak into them."""

from __future__ import annotations

from execbench.families.state.jobs import python_job, run

ANNOTATED = "def f(x: Undefined):\n    return x\n\nprint(f(1))\n"


def test_no_compiler_flag_leaks_into_the_program():
    own = "from __future__ import annotations\n" + ANNOTATED
    limits = {"cpu": 10, "wall": 30, "memory_mb": 1024}
    plain, own_run = run([python_job("plain", "plain.py", ANNOTATED, **limits),
                          python_job("own", "own.py", own, **limits)])
    assert not plain.ok and "NameError" in plain.stderr  # annotations are evaluated, as in `python plain.py`
    assert own_run.ok and own_run.stdout == b"1\n"  # the program's own __future__ import still works
