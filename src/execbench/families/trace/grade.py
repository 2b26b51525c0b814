"""Grading of line-trace answers: extraction from raw model text, canonical form, similarity.

Answer format
    The answer is a bracketed list of executed line numbers, e.g. ``[3, 4, 5, 4, 6]``,
    separated by commas and/or whitespace (``[3 4 5]``; one trailing comma allowed; ``,,``
    rejected).  Only unsigned decimal ints of at most 9 digits; a float, sign, string,
    word or any other character inside the list makes that list unusable.  A group nested
    in the list, written ``(...)`` or ``[...]``, is a *concurrent segment*; groups nested
    inside a segment (``((10, 11), (10, 11))``) are flattened into it.  Nesting depth is at
    most 4 (list, segment, two levels of groups inside it).

Extraction (`extract_line_trace`)
    `<think>` blocks are removed (`strip_reasoning`), the rest is cut at `MAX_TEXT`
    characters and read in one linear scan by a small hand-written tokenizer (no eval, no
    literal_eval); at most `MAX_NUMBERS` numbers are kept.
    Every ``[``-list that closes and is valid is a candidate; the one that closes LAST wins
    (an enclosing valid list closes after its parts, so it wins over them; CoT answers end
    with the answer).  Prose, fences, ``Answer:`` markers around the list are ignored;
    ``(`` outside a ``[``-list is ignored.  If a ``[``-list is still open and valid so far
    when the text ends, the model ran out of tokens: status "truncated" (wrong answer).

Comparison (`grade_trace`)
    Both sides go to `canonical_trace`: ints stay, each segment becomes its sorted
    multiset of lines.  Correct iff the canonical forms are equal, so a segment must sit at
    the same position as in the oracle (start and end of concurrency must be identified)
    and hold the same lines in any order.  Two adjacent segments are not merged.

Similarity
    Gestalt ratio ``SequenceMatcher(None, oracle_tokens, answer_tokens, autojunk=False)``
    (argument order matters: the ratio is not symmetric) on `trace_tokens` of both sides:
    a segment becomes the tokens ``"(", <sorted lines>, ")"``, so ``[1, [3, 10], 4]`` ->
    ``[1, "(", 3, 10, ")", 4]``; boundaries are tokens and count as matches/mismatches.
    Without segments this is plain Gestalt on the line numbers.  To bound time, answer
    tokens beyond ``2 * len(oracle) + 100`` are not matched (they still count in the
    denominator; ``details["similarity_capped"]``).  Gestalt is still slow on long
    repetitive traces (~1k-line loops: seconds).  No answer / truncated score 0.0.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

from execbench.grading import NO_ANSWER, OK, TRUNCATED, Score, reasoning_unclosed, strip_reasoning

MAX_TEXT = 1_000_000     # characters scanned
MAX_NUMBERS = 200_000    # numbers kept over the whole text
MAX_DIGITS = 9           # digits per line number
MAX_DEPTH = 4            # list > segment > group > group
_STACK_CAP = 32          # brackets tracked at once (deeper ones are only counted)
OPEN, CLOSE = "([", ")]"
SEG_OPEN, SEG_CLOSE = "(", ")"   # segment boundary tokens for similarity

_TOKEN = re.compile(r"[0-9]+|[\[\]\(\),]|\s+|[^0-9\[\]\(\),\s]+")


@dataclass(frozen=True)
class ExtractedTrace:
    trace: list              # ints and segments (list[int], groups flattened, written order)
    status: str              # "ok" or "truncated" (then `trace` is the part read so far)
    span: tuple[int, int]    # character offsets of the list in the scanned text


class _Frame:
    __slots__ = ("opener", "start", "items", "valid", "height", "after_comma")

    def __init__(self, opener: str, start: int):
        self.opener, self.start = opener, start
        self.items: list = []
        self.valid, self.height, self.after_comma = True, 1, True


def _flatten(items: list) -> list[int]:
    out: list[int] = []
    for x in items:
        out.extend(x) if isinstance(x, list) else out.append(x)
    return out


def extract_line_trace(text: str) -> ExtractedTrace | None:
    """Find the answer list in raw model text (see module doc); None if there is none.

    `<think>` blocks are removed first; `span` indexes the text after that removal."""
    return _scan(strip_reasoning(text)[:MAX_TEXT])


def _scan(text: str) -> ExtractedTrace | None:
    stack: list[_Frame] = []
    best = None                                     # (items, start, end) of the winner
    overflow = numbers = pos = 0

    def close(f: _Frame, end: int) -> None:
        nonlocal best
        if f.height > MAX_DEPTH:
            f.valid = False
        if stack:                                   # f is a segment / group of its parent
            parent = stack[-1]
            parent.valid = parent.valid and f.valid
            parent.height = max(parent.height, f.height + 1)
            parent.after_comma = False
            if parent.valid:
                parent.items.append(_flatten(f.items))
        if f.valid and f.opener == "[":
            best = (f.items, f.start, end)

    while True:
        if not stack and not overflow:
            pos = text.find("[", pos)               # nothing open: skip prose quickly
            if pos < 0:
                break
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        tok, pos = m.group(), m.end()
        top = stack[-1] if stack else None
        if tok in OPEN:
            if top is None and tok == "(":
                continue
            if overflow or len(stack) >= _STACK_CAP:
                overflow += 1
                if top is not None:  # (a full stack has a top)
                    top.valid = False
            else:
                stack.append(_Frame(tok, m.start()))
        elif tok in CLOSE:
            if overflow:
                overflow -= 1
            elif top is None:
                continue
            elif tok == ")" and top.opener != "(":
                top.valid = False                   # stray ")" inside a list: prose
            else:
                while tok == "]" and stack[-1].opener != "[":
                    f = stack.pop()                 # "(" closed by "]": malformed
                    f.valid = False
                    close(f, pos)
                    if not stack:
                        break
                if stack:
                    close(stack.pop(), pos)
        elif top is None or tok.isspace():
            continue
        elif tok == ",":
            top.valid = top.valid and not top.after_comma
            top.after_comma = True
        elif "0" <= tok[0] <= "9" and len(tok) <= MAX_DIGITS and numbers < MAX_NUMBERS:
            numbers += 1
            top.after_comma = False
            if top.valid:
                top.items.append(int(tok))
        else:                                       # word, sign, dot, quote, huge number...
            top.valid = False

    # Text ended with lists still open: propagate invalidity outwards, then look for a
    # valid unclosed "[" (the model stopped mid-answer).
    valid = not overflow
    for i in range(len(stack) - 1, -1, -1):
        valid = valid and stack[i].valid
        stack[i].valid = valid
    for f in stack:
        if f.valid and f.opener == "[":
            return ExtractedTrace(f.items, TRUNCATED, (f.start, len(text)))
    return ExtractedTrace(best[0], OK, best[1:]) if best else None


def canonical_trace(trace: list) -> list:
    """Ints stay; each segment (nested list/tuple, any depth) is flattened and sorted."""
    out: list = []
    for item in trace:
        if isinstance(item, (list, tuple)):
            flat: list[object] = []
            todo = [item]
            while todo:
                for x in todo.pop():
                    (todo.append if isinstance(x, (list, tuple)) else flat.append)(x)
            out.append(sorted(_check_int(x) for x in flat))
        else:
            out.append(_check_int(item))
    return out


def _check_int(x):
    if type(x) is not int:
        raise TypeError(f"trace items must be ints or lists of ints, got {x!r}")
    return x


def trace_tokens(canonical: list) -> list:
    """Token sequence for similarity: a segment becomes "(", its sorted lines, ")"."""
    out: list = []
    for item in canonical:
        if isinstance(item, list):
            out += [SEG_OPEN, *item, SEG_CLOSE]
        else:
            out.append(item)
    return out


def similarity(a: Sequence, b: Sequence) -> float:
    """Gestalt pattern matching ratio 2*M/(|a|+|b|); both empty -> 1.0."""
    if not a and not b:
        return 1.0
    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _bounded_similarity(oracle: list, answer: list) -> tuple[float, bool]:
    cap = 2 * len(oracle) + 100
    if len(answer) <= cap:
        return similarity(oracle, answer), False
    blocks = SequenceMatcher(None, oracle, answer[:cap], autojunk=False).get_matching_blocks()
    return 2 * sum(b.size for b in blocks) / (len(oracle) + len(answer)), True


def grade_trace(oracle: list, response: str) -> Score:
    """Strip reasoning, extract the answer list, compare with the oracle (module doc)."""
    want = canonical_trace(oracle)
    if not isinstance(response, str):
        return Score(False, NO_ANSWER, None, 0.0, {"reason": "response is not text"})
    found = extract_line_trace(response)
    if found is None:
        if reasoning_unclosed(response):
            return Score(False, TRUNCATED, None, 0.0, {"reason": "unclosed <think>"})
        return Score(False, NO_ANSWER, None, 0.0, {})
    if found.status == TRUNCATED:
        return Score(False, TRUNCATED, found.trace, 0.0, {"reason": "unclosed list"})
    got = canonical_trace(found.trace)
    correct = got == want
    sim, capped = (1.0, False) if correct else _bounded_similarity(trace_tokens(want), trace_tokens(got))
    details = {"oracle_len": len(want), "answer_len": len(got),
               "concurrent": any(isinstance(x, list) for x in want)}
    if capped:
        details["similarity_capped"] = True
    return Score(correct, OK, found.trace, sim, details)
