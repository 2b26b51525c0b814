"""Grading cruxeval responses without executing model text (the rules: ``docs/cruxeval.md``).

Extraction (after ``<think>`` blocks are removed):

* with an ``[ANSWER]`` tag, CRUXEval's rule (every variant; the ``cruxeval`` variant asks
  for it): the text between the first ``[ANSWER]`` and the next one, up to ``[/ANSWER]``;
  output arm: the text between the first and second ``==`` (none: the block); input arm:
  the text before the first ``==``, from its ``assert f`` on (``f`` kept);
* without one: the last ``assert f(...)`` statement of the last fenced code block (or of
  the whole text), split the same way; else the last non-empty line (of the last fenced
  block, if any), taken as the value (output) or as the call / bare argument list (input).
  (CRUXEval splits the whole continuation here; on the published generations no block-less
  continuation holds an assertion, so the two rules agree there: ``docs/cruxeval.md``.)

Output prediction: the value is what CRUXEval's ``assert <output> == <value>`` compares —
text after a top-level comma is the assertion's message — parsed by the safe literal
parser (:func:`execbench.grading.parse_literal`) and compared with the recorded output by
Python ``==`` on the two literal values (``1 == 1.0 == True``, list != tuple, sets and
dicts unordered; a NaN cannot be written as a literal).

Input prediction: the call ``f(...)`` is split into positional and keyword arguments by
the tokenizer (bounded), each argument parsed as a literal; the values are shipped as
tagged data (:mod:`.codec`) into the sandbox, where the *benchmark's* ``f`` runs on them
(CPU limit 3 s, CRUXEval's timeout) and the result is compared with ``<output> == f(...)``.

Checkpoint arms (``answer_kind == "json"``): the last JSON object of the reply with exactly
the asked keys (else the last JSON object), compared with the recorded state type-strictly
(:func:`execbench.grading.values_equal`: 1, 1.0 and true differ); nesting over 50 levels or
a reply over 1 MB is ``too_large``.

Statuses: ``ok`` (compared), ``no_answer`` (nothing that parses as an answer; ``truncated``
when a ``<think>`` block was left open), ``not_literal`` (a name, call, attribute,
operator or starred argument where a literal must be: wrong, never run), ``too_large``
(over the size, depth or number-length bounds: wrong, never parsed further).
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from collections import Counter, defaultdict
from typing import Any, Iterable, TypedDict

from execbench.dataset import Task
from execbench.errors import InternalError
from execbench.families.cruxeval.codec import LiteralValue, encode
from execbench.families.cruxeval import run
from execbench.families.cruxeval.records import GradeItem
from execbench.grading import (NO_ANSWER, OK, TRUNCATED, LiteralParseError, Score, parse_literal,
                               reasoning_unclosed, strip_reasoning, values_equal)
from execbench.grading.tokens import CLOSERS, OPENERS, TokenBoundError, significant_tokens

NOT_LITERAL = "not_literal"
TOO_LARGE = "too_large"
MAX_RESPONSE = 1_000_000  # characters of a response
MAX_ANSWER = 100_000  # characters of the value / the call
MAX_DEPTH = 50  # brackets
GRADE_CPU_SECONDS = 3.0  # CRUXEval's per-check timeout
EXTRACTED_CHARS = 2_000

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_ASSERT = re.compile(r"assert\s+f\s*\(")
_CALL = re.compile(r"\s*f\(")  # CRUXEval needs "f(" in the answer: "f (1)" is not a call of f there
_FSTRING_TOKEN = re.compile(r"^unexpected token [\"'][rRbB]*[fF]")  # Python 3.12+ tokenizes f-strings
_JSON = json.JSONDecoder()


class _Refused(InternalError):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


# -- extraction ---------------------------------------------------------------------------

def answer_block(text: str) -> str:
    """CRUXEval's answer block: between the first ``[ANSWER]`` and the next, up to ``[/ANSWER]``."""
    if "[ANSWER]" in text:
        text = text.split("[ANSWER]", 2)[1]
    return text.split("[/ANSWER]", 1)[0].strip()


def split_assertion(block: str, arm: str) -> str:
    """The value (output arm) or the call (input arm) of an assertion, CRUXEval's way."""
    if arm == "output-prediction":
        return block.split("==")[1].strip() if "==" in block else block
    if "==" in block:
        block = block.split("==")[0].strip()
    if "assert f" in block:
        block = "f" + block.split("assert f")[1].strip()
    return block.strip()


def _logical_line(text: str, start: int) -> str:
    """The statement starting at ``start``: up to the end of its logical line (brackets
    continue it), or of its physical line when the tokenizer gives up."""
    rest = text[start:start + MAX_ANSWER + 1000]
    end = rest.find("\n")
    physical = rest if end < 0 else rest[:end]
    lines = rest.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    try:
        for tok in tokenize.generate_tokens(io.StringIO(rest).readline):
            if tok.type == tokenize.NEWLINE or tok.type == tokenize.ENDMARKER:
                return rest[:offsets[tok.start[0] - 1] + tok.start[1]]
    except (tokenize.TokenError, SyntaxError, IndexError):
        pass
    return physical


def extract(response: str, arm: str) -> tuple[str | None, bool, str]:
    """(answer text or None, whether it came from an assertion, status when None)."""
    if len(response) > MAX_RESPONSE:
        return None, False, TOO_LARGE
    unclosed = reasoning_unclosed(response)
    text = strip_reasoning(response)
    if not text.strip():
        return None, False, TRUNCATED if unclosed else NO_ANSWER
    if "[ANSWER]" in text:
        answer = split_assertion(answer_block(text), arm)
        return (answer, True, OK) if answer else (None, False, NO_ANSWER)
    fences = _FENCE.findall(text)
    region = fences[-1] if fences else text
    matches = list(_ASSERT.finditer(region))
    if not matches and fences:
        region, matches = text, list(_ASSERT.finditer(text))
    if matches:
        statement = _logical_line(region, matches[-1].start())
        answer = split_assertion(statement, arm)
        return (answer, True, OK) if answer else (None, False, NO_ANSWER)
    lines = [line.strip().strip("`").strip() for line in (fences[-1] if fences else text).splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return None, False, NO_ANSWER
    return lines[-1], False, OK


# -- parsing ------------------------------------------------------------------------------

def _literal(text: str) -> LiteralValue:
    try:
        return parse_literal(text, max_len=MAX_ANSWER, max_depth=MAX_DEPTH)
    except LiteralParseError as exc:
        reason = str(exc)
        if reason.startswith(("longer than", "nesting deeper", "number too long", "MemoryError", "RecursionError")):
            raise _Refused(TOO_LARGE, reason) from None
        if reason.startswith(("cannot tokenize", "empty", "SyntaxError")) or (
                reason.startswith("unexpected token") and not _FSTRING_TOKEN.match(reason)):
            raise _Refused(NO_ANSWER, reason) from None  # not Python (``??``, an unterminated string)
        raise _Refused(NOT_LITERAL, reason) from None


def _tokens(text: str) -> Iterable[tokenize.TokenInfo]:
    """Significant tokens of ``text`` from the shared bounded pre-check: nesting beyond
    ``MAX_DEPTH`` (plus the call's own parenthesis) is ``too_large``; untokenizable text
    raises :class:`TokenBoundError` where the tokenizer stops. Numbers are bounded later, per
    argument, by the literal parser (the text is at most ``MAX_ANSWER`` characters)."""
    try:
        for tok, _depth in significant_tokens(text, max_depth=MAX_DEPTH + 1, max_number_chars=MAX_ANSWER):
            yield tok
    except TokenBoundError as exc:
        if exc.untokenizable:
            raise
        raise _Refused(TOO_LARGE, f"nesting deeper than {MAX_DEPTH}") from None


def assertion_value(text: str) -> str:
    """``assert o == <text>``: what is compared is the text before a top-level comma (the
    rest is the assertion's message)."""
    if len(text) > MAX_ANSWER:
        raise _Refused(TOO_LARGE, f"longer than {MAX_ANSWER} characters")
    offsets = _line_offsets(text)
    depth = 0
    try:
        for tok in _tokens(text):
            if tok.type == tokenize.OP and tok.string in OPENERS:
                depth += 1
            elif tok.type == tokenize.OP and tok.string in CLOSERS:
                depth -= 1
            elif tok.type == tokenize.OP and tok.string == "," and depth == 0:
                return text[:offsets[tok.start[0] - 1] + tok.start[1]]
    except TokenBoundError:  # untokenizable: the literal parser reports it
        pass
    return text


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


def parse_call(text: str) -> tuple[list[LiteralValue], dict[str, LiteralValue], str]:
    """Positional and keyword argument values of ``f(...)`` (literals only) and the call's text."""
    if len(text) > MAX_ANSWER:
        raise _Refused(TOO_LARGE, f"longer than {MAX_ANSWER} characters")
    match = _CALL.match(text)
    if not match:
        if "f(" in text:
            raise _Refused(NOT_LITERAL, "the answer is not a plain call of f")
        raise _Refused(NO_ANSWER, "no call of f")
    offsets = _line_offsets(text)
    position = lambda tok_pos: offsets[tok_pos[0] - 1] + tok_pos[1]  # noqa: E731 - a one-line helper
    segments: list[list[tokenize.TokenInfo]] = [[]]
    open_at = match.end() - 1
    depth = 0
    close = None
    after: tokenize.TokenInfo | None = None
    try:
        for tok in _tokens(text[open_at:]):
            if close is not None:
                after = tok
                break
            if tok.type == tokenize.OP and tok.string in OPENERS:
                depth += 1
                if depth == 1:
                    continue
            elif tok.type == tokenize.OP and tok.string in CLOSERS:
                depth -= 1
                if depth == 0:
                    close = tok
                    continue
            if depth == 1 and tok.type == tokenize.OP and tok.string == ",":
                segments.append([])
            else:
                segments[-1].append(tok)
    except TokenBoundError as exc:  # untokenizable text (nesting over the bound is too_large above)
        if close is None:
            raise _Refused(NO_ANSWER, f"the call is not complete: {exc}") from None
    if close is None:
        raise _Refused(NO_ANSWER, "the call of f is not closed")
    if after is not None and not (after.type == tokenize.OP and after.string == ","):
        raise _Refused(NOT_LITERAL, f"text after the call: {after.string[:40]!r}")
    if segments and not segments[-1] and len(segments) > 1:
        segments.pop()  # a trailing comma
    if segments == [[]]:
        segments = []
    args: list[LiteralValue] = []
    kwargs: dict[str, LiteralValue] = {}
    for tokens in segments:
        if not tokens:
            raise _Refused(NO_ANSWER, "an empty argument")
        first = tokens[0]
        if first.type == tokenize.OP and first.string in ("*", "**"):
            raise _Refused(NOT_LITERAL, "starred argument")
        start = open_at + position(first.start)
        end = open_at + position(tokens[-1].end)
        if len(tokens) > 1 and first.type == tokenize.NAME and tokens[1].type == tokenize.OP and tokens[1].string == "=":
            if not first.string.isidentifier() or first.string in kwargs:
                raise _Refused(NO_ANSWER, f"bad keyword argument {first.string[:40]!r}")
            kwargs[first.string] = _literal(text[open_at + position(tokens[1].end):end])
        else:
            if kwargs:
                raise _Refused(NO_ANSWER, "positional argument after a keyword argument")
            args.append(_literal(text[start:end]))
    return args, kwargs, text[:open_at + position(close.end)]


# -- grading ------------------------------------------------------------------------------

def _clip(text: str) -> str:
    return text if len(text) <= EXTRACTED_CHARS else text[:EXTRACTED_CHARS] + "..."


def grade(task: Task, response: str) -> Score:
    return grade_many([(task, response)])[0]


def grade_many(pairs: list[tuple[Task, str]], batch: int = 100) -> list[Score]:
    """Grade many responses; the sandbox runs of input-prediction answers are batched
    (``batch`` per sandbox, each in its own forked child with its own limits)."""
    scores: list[Score | None] = []
    pending: list[tuple[int, GradeItem, str]] = []
    for task, response in pairs:
        prepared = _prepare(task, response)
        if isinstance(prepared, Score):
            scores.append(prepared)
        else:
            pending.append((len(scores), *prepared))
            scores.append(None)
    for start in range(0, len(pending), batch):
        chunk = pending[start:start + batch]
        results = run.run("grade", [item for _, item, _ in chunk], cpu_seconds=GRADE_CPU_SECONDS,
                          wall_seconds=4 * GRADE_CPU_SECONDS)
        for (index, _, call), job in zip(chunk, results):
            value = job.value or {}  # a checked CallResult, or None
            status = run.status(job)
            details: dict[str, str | None] = {"how": "f in the sandbox", "run": status}
            for key in ("returned", "error", "compare_error"):
                text = run.error(job) if key == "error" and status not in ("ok", "error") else value.get(key)
                if text:
                    details[key] = text
            scores[index] = Score(correct=status == "ok" and bool(value.get("equal")), status=OK,
                                  extracted=_clip(call), details=details)
    return [score for score in scores if score is not None]  # every slot was filled above


def _max_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def grade_state(task: Task, response: str) -> Score:
    """Checkpoint arms: the last JSON object of the reply with the asked keys (else the last
    JSON object), compared with the recorded state type-strictly (1, 1.0 and true differ)."""
    if len(response) > MAX_RESPONSE:
        return Score(correct=False, status=TOO_LARGE, extracted=None, details={"reason": "response too long"})
    unclosed = reasoning_unclosed(response)
    text = strip_reasoning(response)
    if _max_depth(text) > MAX_DEPTH + 1:
        return Score(correct=False, status=TOO_LARGE, extracted=None, details={"reason": f"nesting deeper than {MAX_DEPTH}"})
    wanted = set(task.answer)
    found: Any = None
    position, tries = len(text), 0
    while tries < 200:
        start = text.rfind("{", 0, position)
        if start < 0:
            break
        tries += 1
        position = start
        try:
            value, _ = _JSON.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            if set(value) == wanted:
                found = value
                break
            if found is None:
                found = value
    if found is None:
        return Score(correct=False, status=TRUNCATED if unclosed else NO_ANSWER, extracted=None,
                     details={"reason": "no JSON object"})
    return Score(correct=values_equal(found, task.answer), status=OK, extracted=found, details={"how": "json"})


def _prepare(task: Task, response: str) -> Score | tuple[GradeItem, str]:
    """The score, or (sandbox item, call text) when the benchmark's f must run."""
    if task.answer_kind == "json":
        return grade_state(task, response)
    answer, from_assert, status = extract(response, task.arm)
    if answer is None:
        return Score(correct=False, status=status, extracted=None, details={"reason": "no answer found"})
    try:
        if task.arm == "output-prediction":
            return _grade_output(task, answer, from_assert)
        return _input_item(task, answer, from_assert)
    except _Refused as exc:
        return Score(correct=False, status=exc.status, extracted=_clip(answer), details={"reason": exc.reason})


def _grade_output(task: Task, answer: str, from_assert: bool) -> Score:
    if from_assert and task.prompt_fields["call"] in answer:
        raise _Refused(NOT_LITERAL, "the answer repeats the call")  # CRUXEval: never correct
    value_text = assertion_value(answer) if from_assert else answer
    value = _literal(value_text)
    expected = parse_literal(task.answer, max_len=10 * MAX_ANSWER, max_depth=MAX_DEPTH)
    return Score(correct=bool(expected == value), status=OK, extracted=_clip(value_text.strip()),
                 details={"how": "literal =="})


def _input_item(task: Task, answer: str, from_assert: bool) -> tuple[GradeItem, str]:
    if not from_assert and not _CALL.match(answer):
        answer = f"f({answer})"  # a bare argument list
    args, kwargs, call = parse_call(answer)
    expected = parse_literal(task.prompt_fields["output"], max_len=10 * MAX_ANSWER, max_depth=MAX_DEPTH)
    item: GradeItem = {"code": task.prompt_fields["program"], "args": [encode(a) for a in args],
                       "kwargs": [(name, encode(v)) for name, v in kwargs.items()], "expected": encode(expected)}
    return item, call


class ArmSummary(TypedDict):
    n: int
    correct: int
    accuracy: float
    statuses: dict[str, int]


class Summary(TypedDict):
    """:func:`summarize`'s record (``accuracy`` None when there is no result)."""

    n: int
    accuracy: float | None
    arms: dict[str, ArmSummary]


def summarize(results: Iterable[tuple[Task, Score]]) -> Summary:
    by_arm: dict[str, list[Score]] = defaultdict(list)
    for task, score in results:
        by_arm[task.arm].append(score)
    arms: dict[str, ArmSummary] = {}
    for arm, scores in sorted(by_arm.items()):
        correct = sum(s.correct for s in scores)
        arms[arm] = {"n": len(scores), "correct": correct, "accuracy": correct / len(scores),
                     "statuses": dict(Counter(s.status for s in scores))}
    n = sum(a["n"] for a in arms.values())
    return {"n": n, "accuracy": sum(a["correct"] for a in arms.values()) / n if n else None, "arms": arms}
