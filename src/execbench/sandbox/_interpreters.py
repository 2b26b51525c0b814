"""Which Python installations a run may read, decided without trusting a venv's contents.

A venv the builder made is written by the sandboxed ``pip install`` (setup scripts run
there), so its ``pyvenv.cfg`` and its ``bin/python*`` links are the sandbox's words. A run
of that venv's interpreter gets the venv itself readable, plus the base interpreter named
by the ``home`` line only when that line is the file's first, read without following
symlinks, and names a directory on an allow-list (:func:`trusted_python_home`); the
interpreter link is never resolved to pick more mounts. Anything else adds nothing, so
the run cannot start its interpreter and fails (the package's rejection), instead of
mounting what the install pointed at (issue 22, item 12).
"""

from __future__ import annotations

import functools
import glob
import os
import stat
import sys

# home directories of system interpreters; the whole /usr tree is readable anyway
_SYSTEM_HOMES = ("/usr/bin", "/usr/local/bin", "/bin")
_CFG_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@functools.lru_cache(maxsize=1)
def trusted_homes() -> frozenset[str]:
    """The ``home`` values a venv may name: the system interpreters' bin directories, this
    interpreter's base installation (as named and resolved), the sibling installations of a
    pyenv-style ``versions/`` directory it lives in, and EXECBENCH_PYTHON_HOMES
    (os.pathsep-separated) for others. Not venvs (no pyvenv.cfg beside the bin dir)."""
    homes = set(_SYSTEM_HOMES)
    bases = {sys.base_prefix, sys.base_exec_prefix}
    bases |= {os.path.realpath(b) for b in bases}
    for base in list(bases):
        if os.path.basename(os.path.dirname(base)) == "versions":
            bases.update(glob.glob(os.path.join(glob.escape(os.path.dirname(base)), "*")))
    homes |= {os.path.join(b, "bin") for b in bases}
    executable = getattr(sys, "_base_executable", "") or sys.executable
    homes |= {os.path.dirname(executable), os.path.dirname(os.path.realpath(executable))}
    homes |= {h for h in os.environ.get("EXECBENCH_PYTHON_HOMES", "").split(os.pathsep) if h}
    out = set()
    for home in homes:
        home = os.path.normpath(home)
        if os.path.isabs(home) and not os.path.lexists(os.path.join(os.path.dirname(home), "pyvenv.cfg")):
            out.add(home)
    return frozenset(out)


def trusted_python_home(home: str) -> bool:
    """Whether ``home`` (a pyvenv.cfg ``home`` value) names an allowed interpreter directory:
    exactly as listed (no '..', no trailing '/'), an existing directory that is no symlink."""
    if not home or home != os.path.normpath(home) or home not in trusted_homes():
        return False
    try:
        return stat.S_ISDIR(os.lstat(home).st_mode)
    except OSError:
        return False


def venv_home(prefix: str) -> str | None:
    """The trusted ``home`` of the venv at ``prefix``, or None: pyvenv.cfg opened without
    following a symlink, a regular file, its first line ``home = <trusted dir>``."""
    try:
        fd = os.open(os.path.join(prefix, "pyvenv.cfg"), _CFG_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        first = os.read(fd, 4096).split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    key, _, value = first.partition("=")
    value = value.strip()
    return value if key.strip() == "home" and trusted_python_home(value) else None


def _is_venv(prefix: str) -> bool:
    return os.path.lexists(os.path.join(prefix, "pyvenv.cfg"))


def install_prefix(executable: str) -> list[str]:
    """What an executable needs besides the system paths: for a Python interpreter
    (``<prefix>/bin/python*`` with ``<prefix>/pyvenv.cfg`` or ``<prefix>/lib/python3*``)
    its prefix and, for a venv, the trusted base interpreter's prefix (see the module
    docs: a venv's links and pyvenv.cfg pick nothing else); otherwise the file itself."""
    out: list[str] = []
    for path in dict.fromkeys([os.path.abspath(executable), os.path.realpath(executable)]):
        bindir = os.path.dirname(path)
        prefix = os.path.dirname(bindir)
        if os.path.basename(bindir) == "bin" and prefix != "/" and _is_venv(prefix):
            out.append(prefix)
            home = venv_home(prefix)
            if home:
                out += install_prefix(os.path.join(home, "python3"))
            if path == os.path.abspath(executable):
                break  # the venv's own bin/python link is not resolved
        elif (os.path.basename(bindir) == "bin" and prefix != "/"
              and glob.glob(os.path.join(glob.escape(prefix), "lib", "python3*"))):
            out.append(prefix)
        else:
            out.append(path)
    return out
