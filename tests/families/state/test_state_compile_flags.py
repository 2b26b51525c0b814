"""State-family programs compile with exactly their own semantics: the runner's
``from __future__ import annotations`` must not leak into them."""

from __future__ import annotations

from execbench.families.state.batch import run_batch

ANNOTATED = "def f(x: Undefined):\n    return x\n\nprint(f(1))\n"


def test_no_compiler_flag_leaks_into_the_program():
    own = "from __future__ import annotations\n" + ANNOTATED
    batch = run_batch({"plain.py": ANNOTATED, "own.py": own}, [
        {"id": "plain", "kind": "python", "program": "plain.py"},
        {"id": "own", "kind": "python", "program": "own.py"},
    ])
    assert batch.ok, batch.reason
    plain, own_run = batch.jobs["plain"], batch.jobs["own"]
    assert not plain.ok and "NameError" in plain.stderr  # annotations are evaluated, as in `python plain.py`
    assert own_run.ok and own_run.stdout == b"1\n"  # the program's own __future__ import still works
