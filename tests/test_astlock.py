"""ast.parse is serialised once a builder thread pool exists (CPython's AST constructor is not thread-safe)."""

from __future__ import annotations

import ast
import threading

from execbench import astlock


def test_install_routes_every_parse_through_one_lock():
    astlock.install()
    astlock.install()  # idempotent: still one wrapper, not a wrapper of a wrapper
    assert ast.parse is astlock._locked_parse
    assert ast.dump(ast.parse("x = 1")) == ast.dump(astlock._ORIGINAL("x = 1"))
    done = threading.Event()
    with astlock._LOCK:  # another thread holding the lock: a parse waits for it
        worker = threading.Thread(target=lambda: (ast.parse("y = 2"), done.set()))
        worker.start()
        assert not done.wait(0.3)
    worker.join(10)
    assert done.is_set()
