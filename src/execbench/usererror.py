"""The root of every error a user can fix, and the words it is told in (issue 34).

:class:`UserError` is what every check of something a user wrote or typed raises (a case
directory's ``case.toml``, an answer file, a ``--set`` option, a path given to ``-o``); the
errors of the layers that read such input (``DatasetError``, ``SourceError``,
``LogReadError``, ...) derive from it. The command line turns one into a single ``error:``
line and exit status 2; any other exception is an internal error, reported as one with
where to report it (``cli.py``). :func:`unknown` words the "no such key" case the same way
everywhere: the key, a close match when there is one (``difflib``), and the keys allowed.
"""

from __future__ import annotations

import difflib
from typing import Iterable

from execbench.errors import ExecbenchError

#: Where an internal error (a bug, never the user's input) is to be reported.
REPORT_BUGS = "the execbench issue tracker (the repository you installed execbench from)"

#: The one advice printed when a command is interrupted (Ctrl-C), whichever command it was.
INTERRUPTED = ("interrupted: run the same command again to resume; finished work is kept "
               "(a build's in the build cache, an eval's samples in its log directory).")


class UserError(ExecbenchError, ValueError):
    """Something a user gave (a file, an option, a path) is wrong; the message says what and where.
    (The user's branch of :class:`execbench.errors.ExecbenchError`; a ValueError as it always was.)"""


def suggestion(word: str, choices: Iterable[str]) -> str:
    """``"did you mean 'x'? "`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def unknown(kind: str, word: str, choices: Iterable[str]) -> str:
    """The message for an unknown ``kind`` named ``word``: a close match and the known ones."""
    known = sorted(choices)
    return (f"unknown {kind} {word!r}: {suggestion(word, known)}"
            f"expected one of {', '.join(known) if known else '(none)'}")
