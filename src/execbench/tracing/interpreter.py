"""Which interpreter runs traced programs (the trace family pins CPython 3.11).

Line events are a property of the interpreter: CPython 3.12 inlines list/set/dict
comprehensions (PEP 709) and changes other line events, so the same program gives another
trace under 3.12 or 3.13. CoCoNUT's published traces are CPython 3.11's, so trace answer
keys are always recorded under a CPython 3.11, whatever interpreter runs the builder
(docs/trace-format.md, "Interpreter"). :func:`resolve` finds one:

* ``"3.11"`` (the default): ``$EXECBENCH_TRACE_PYTHON`` if set, else the builder's own
  interpreter when it is CPython 3.11, else ``python3.11`` on PATH, else pyenv's
  ``versions/3.11.*`` (``$PYENV_ROOT`` or ``~/.pyenv``), else ``/usr/bin/python3.11``;
* ``"host"``: the builder's interpreter, whatever its version (answers then depend on it);
* a path: that interpreter.

The version is checked by running the interpreter (in the sandbox) once per process.
"""

from __future__ import annotations

import functools
import glob
import os
import platform
import shutil
import sys
from dataclasses import dataclass

from execbench import sandbox
from execbench.errors import InternalError

PINNED = "3.11"
ENV = "EXECBENCH_TRACE_PYTHON"


class InterpreterError(InternalError, RuntimeError):
    """No usable interpreter for the requested trace convention."""


@dataclass(frozen=True)
class Interpreter:
    path: str
    implementation: str  # "CPython"
    version: str  # "3.11.7"

    @property
    def label(self) -> str:
        return f"{self.implementation} {self.version}"

    @property
    def is_host(self) -> bool:
        return os.path.realpath(self.path) == os.path.realpath(sys.executable)


def _probe(path: str) -> Interpreter | None:
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None
    if os.path.realpath(path) == os.path.realpath(sys.executable):
        return Interpreter(sys.executable, platform.python_implementation(), platform.python_version())
    result = sandbox.run([path, "-I", "-S", "-c",
                          "import platform; print(platform.python_implementation(), platform.python_version())"],
                         limits=sandbox.Limits(wall_seconds=30, cpu_seconds=30))
    words = result.stdout.decode(errors="replace").split()
    if not result.ok or len(words) != 2:
        return None
    return Interpreter(path, words[0], words[1])


def _candidates() -> list[str]:
    paths = [os.environ[ENV]] if os.environ.get(ENV) else []
    paths.append(sys.executable)
    which = shutil.which("python3.11")
    if which:
        paths.append(which)
    roots = [os.environ.get("PYENV_ROOT") or "", os.path.expanduser("~/.pyenv")]
    for root in filter(None, roots):
        paths += sorted(glob.glob(os.path.join(root, "versions", "3.11.*", "bin", "python")), reverse=True)
    paths += ["/usr/local/bin/python3.11", "/usr/bin/python3.11"]
    return paths


@functools.lru_cache(maxsize=None)
def resolve(spec: str = PINNED) -> Interpreter:
    """The interpreter ``spec`` names (see the module docstring); raises InterpreterError."""
    if spec == "host":
        return Interpreter(sys.executable, platform.python_implementation(), platform.python_version())
    if spec != PINNED:
        found = _probe(spec)
        if found is None:
            raise InterpreterError(f"trace interpreter {spec!r} is not a runnable Python")
        return found
    explicit = os.environ.get(ENV)
    for path in _candidates():
        found = _probe(path)
        if found is not None and found.implementation == "CPython" and found.version.startswith(PINNED + "."):
            return found
        if explicit and path == explicit:
            raise InterpreterError(f"${ENV}={explicit!r} is not CPython {PINNED}")
    raise InterpreterError(
        f"trace answers are recorded under CPython {PINNED} and none was found; install one "
        f"(e.g. `pyenv install 3.11`) or point ${ENV} at it, or build with --set python=host "
        "(answers then depend on this interpreter)")
