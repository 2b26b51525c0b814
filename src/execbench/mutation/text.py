"""Splicing edits into program text at syntax-tree positions, and removing comments.

Edits replace exact spans of the original text (everything else, formatting included,
is kept), so a mutant reads like its original. ``ast`` column offsets are UTF-8 byte
offsets; :class:`execbench.sourcetext.SourceText` converts them to character offsets.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

from execbench.errors import InternalError


class EditError(InternalError, ValueError):
    """An edit does not apply (overlap, or the text at the span is not what was expected)."""


@dataclass(frozen=True)
class Edit:
    start: int  # character offsets into the text
    end: int
    old: str
    new: str


def apply(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits; each must find exactly ``old`` at its span."""
    out: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < cursor:
            raise EditError(f"overlapping edits at offset {edit.start}")
        if text[edit.start:edit.end] != edit.old:
            raise EditError(f"expected {edit.old!r} at offset {edit.start}, found {text[edit.start:edit.end]!r}")
        out.append(text[cursor:edit.start])
        out.append(edit.new)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)


def strip_comments(text: str) -> tuple[str, dict[int, int], int]:
    """Remove ``#`` comments; drop lines that held only a comment.

    Returns (new text, {new line -> old line} (1-based), number of comments removed).
    Strings are left alone (tokenize tells comments from ``#`` inside strings).
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text, {i: i for i in range(1, text.count("\n") + 2)}, 0
    comments: dict[int, int] = {}  # line -> start column (characters) of its comment
    code_lines: set[int] = set()
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                tokenize.ENDMARKER, tokenize.ENCODING):
            code_lines.update(range(token.start[0], token.end[0] + 1))
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    mapping: dict[int, int] = {}
    for number, line in enumerate(lines, 1):
        if number in comments:
            col = comments[number]
            ending = line[len(line.rstrip("\r\n")):]
            kept = line[:col].rstrip()
            if not kept and number not in code_lines:
                continue  # a comment-only line
            line = kept + ending
        out.append(line)
        mapping[len(out)] = number
    return "".join(out), mapping, len(comments)
