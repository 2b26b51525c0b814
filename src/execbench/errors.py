"""The one root of execbench's exceptions (issue 36), on the lowest floor: it imports nothing.

Every exception class of the project derives from :class:`ExecbenchError`, along one of two
branches:

- ``usererror.UserError``: something a user gave (a file, an option, a path) is wrong; the CLI
  prints one ``error:`` line and exits 2;
- :class:`InternalError`: anything else the project raises (a sandbox that cannot start, a
  trace too large, a rejected candidate's signal, a parser's refusal handled inside a family);
  one that reaches the CLI is a bug: ``internal error: ...``, the traceback saved, exit 70.

A class keeps its built-in base beside the root (``class SliceError(InternalError,
ValueError)``), so every ``except ValueError`` that caught it still does. Left out, each for a
stated reason (``tests/test_structure.py`` lists them): the ``BaseException`` signals that code
under test must not be able to catch with ``except Exception`` (the tracer's, the in-process
sympy timeout), and the module shipped as a file into a package's venv, which has no execbench
to import (``families/repo/_answer_eval.py``).
"""

from __future__ import annotations


class ExecbenchError(Exception):
    """The root of every error execbench raises (user errors and internal ones)."""


class InternalError(ExecbenchError):
    """Not the user's mistake: handled inside execbench, or a bug when it reaches the command line."""
