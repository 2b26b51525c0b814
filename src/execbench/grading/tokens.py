"""The bounded pre-check every answer parser runs before ``ast.parse`` sees model text.

``ast.parse`` recurses on nesting and allocates on huge literals, so each parser first walks
the text with the tokenizer: :func:`significant_tokens` skips layout tokens and enforces the
bounds every parser shares (nesting depth, the length of one number: Python's own 4,300-digit
int/str limit, text the tokenizer cannot read). Each parser then applies its own policy
(allowed names and operators, runs of signs, operator chains) to the tokens it yields.
"""

from __future__ import annotations

import io
import tokenize
from typing import Iterator

from execbench.errors import InternalError

MAX_NUMBER_CHARS = 4300  # Python's own int/str conversion limit
OPENERS, CLOSERS = frozenset("([{"), frozenset(")]}")
LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                    tokenize.ENDMARKER, tokenize.ENCODING})


class TokenBoundError(InternalError, ValueError):
    """A shared bound was exceeded (``untokenizable``: the text is not Python tokens at all)."""

    def __init__(self, reason: str, *, untokenizable: bool = False) -> None:
        super().__init__(reason)
        self.untokenizable = untokenizable


def significant_tokens(text: str, *, max_depth: int,
                       max_number_chars: int = MAX_NUMBER_CHARS) -> Iterator[tuple[tokenize.TokenInfo, int]]:
    """``(token, bracket depth after it)`` for every non-layout token of ``text``."""
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in LAYOUT:
                continue
            if tok.type == tokenize.NUMBER and len(tok.string) > max_number_chars:
                raise TokenBoundError("number too long")
            if tok.type == tokenize.OP and tok.string in OPENERS:
                depth += 1
                if depth > max_depth:
                    raise TokenBoundError(f"nesting deeper than {max_depth}")
            elif tok.type == tokenize.OP and tok.string in CLOSERS:
                depth -= 1
            yield tok, depth
    except (tokenize.TokenError, SyntaxError) as exc:  # unterminated string or bracket, bad indent
        raise TokenBoundError(f"cannot tokenize: {exc}", untokenizable=True) from None
