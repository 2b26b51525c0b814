"""``ast.parse`` serialised across threads.

CPython 3.11 and 3.12 keep the AST constructor's recursion depth in interpreter-wide
state; two threads converting trees at once (a thread switch inside the conversion, e.g.
from a garbage collection) end one of them with ``SystemError: AST constructor recursion
depth mismatch`` (python/cpython#106905; seen here in a state build's thread pool, CI
2026-12-02). The builder's thread pools call :func:`install` before they start: every
``ast.parse`` in the process (gast's and the families' alike) then takes one lock. Parsing
is a small part of a build; the threads otherwise wait on sandboxed children.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_LOCK = threading.RLock()
_ORIGINAL = ast.parse


def _locked_parse(*args: Any, **kwargs: Any) -> Any:
    with _LOCK:
        return _ORIGINAL(*args, **kwargs)


def install() -> None:
    """Route ``ast.parse`` through the lock (idempotent)."""
    ast.parse = _locked_parse  # the same signature, serialised
