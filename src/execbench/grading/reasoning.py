"""Removal of `<think>...</think>` reasoning blocks from model output (linear time)."""
from __future__ import annotations

import re

_TAG = re.compile(r"<(/?)think\s*>", re.IGNORECASE)


def _split(text: str) -> tuple[str, bool]:
    """Return (text without reasoning, whether a <think> block was left unclosed)."""
    kept: list[str] = []
    pos = 0          # start of the text not yet consumed
    inside = False   # inside an open <think> block
    for m in _TAG.finditer(text):
        closing = m.group(1) == "/"
        if not inside and not closing:          # <think> opens a block
            kept.append(text[pos:m.start()])
            inside = True
        elif closing:
            if not inside:                      # stray </think>: the opening tag was in the prompt,
                kept.clear()                    # so everything before it is reasoning
            inside = False
            pos = m.end()
        # a nested <think> inside a block is part of the reasoning
    if inside:
        return "".join(kept), True
    kept.append(text[pos:])
    return "".join(kept), False


def strip_reasoning(text: str) -> str:
    """Remove `<think>...</think>` blocks (tags case-insensitive).

    A `</think>` without an opening tag (the template put `<think>` in the prompt) makes
    everything before it reasoning; a `<think>` never closed makes everything after it
    reasoning (so an output that starts with an unclosed `<think>` becomes "").
    """
    return _split(text)[0]


def reasoning_unclosed(text: str) -> bool:
    """True if a `<think>` block is still open at the end of the text (ran out of tokens)."""
    return _split(text)[1]
