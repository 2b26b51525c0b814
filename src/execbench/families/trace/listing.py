"""The inverse of ``prompt.number_lines``: the program text back from a rendered prompt.

Analysis uses it (``Family.program_from_prompt``) when a log's dataset is gone: the error
taxonomy needs the program, and every trace prompt shows it as a numbered listing in
one of the annotations of :data:`prompt.VARIANTS` (``12 | code``, ``Line 12 | code``,
``§L12 | code``).
"""

from __future__ import annotations

import re

_NUMBERED = re.compile(r"^\s*(?:Line |§L)?\s*(\d+) \|(?: (.*))?$")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def program_from_prompt(prompt: str | None) -> str | None:
    """The task program from a numbered listing (the last fenced block that is one, numbered
    1, 2, ... without gaps); None when the prompt has none."""
    if not prompt:
        return None
    for block in reversed(_FENCE.findall(prompt)):
        lines = block.rstrip("\n").split("\n")
        parsed = [m for m in map(_NUMBERED.match, lines) if m is not None]
        if lines and len(parsed) == len(lines) and [int(m.group(1)) for m in parsed] == list(range(1, len(lines) + 1)):
            return "\n".join(m.group(2) or "" for m in parsed) + "\n"
    return None
