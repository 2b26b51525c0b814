"""An audit hook that only the events it watches reach (code under test loads this: the repo
recorder, ``families/repo/verification/_plugin.py``, shipped into the test run).

CPython calls every audit hook for every audited event. A traced test run has tens of
thousands of them (``frame.f_code`` reads, ``id()``, imports, compiles), and a Python hook
is a Python call for each, plus a frame the tracer sees: the repo family's probe runs spent
about 10% of their time there. :func:`install_audit_hook` registers instead the C filter of
the sandbox's preload library (``_clock.SHIM_SOURCE``: ``execbench_audit_hook``) with
``PySys_AddAuditHook``: other events cost a string search in C; the watched ones call the
Python hook as before. A hook added either way cannot be removed. Without the library (no C
compiler) it is ``sys.addaudithook``, slower, the same checks. Standard library only.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable


def install_audit_hook(hook: Callable[[str, tuple[Any, ...]], None], events: Iterable[str],
                       library: str | None) -> str:
    """Install ``hook`` for ``events``; returns how ("c-filter" or "python")."""
    names = "".join(f"{name}\n" for name in events)
    if library:
        try:
            import ctypes

            lib = ctypes.CDLL(library)
            ready, filtered = lib.execbench_audit_ready, lib.execbench_audit_hook
        except (OSError, AttributeError):
            ready = None
        if ready is not None:
            ready.argtypes, ready.restype = [ctypes.c_char_p], ctypes.c_int
            if ready(names.encode()):
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(hook))   # held by the C hook for good
                add = ctypes.pythonapi.PySys_AddAuditHook
                add.argtypes, add.restype = [ctypes.c_void_p, ctypes.py_object], ctypes.c_int
                if add(ctypes.cast(filtered, ctypes.c_void_p), hook) == 0:
                    return "c-filter"
    sys.addaudithook(hook)
    return "python"
