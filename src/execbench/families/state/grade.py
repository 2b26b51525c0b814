"""Grading state-family responses (paper 001, appendix B). Model text is parsed, never run.

Envelope: the answer is requested as ``{"output": "<exact text>"}``. After reasoning blocks
are removed (:func:`execbench.grading.strip_reasoning`) and the text is capped (1 MB):

* *valid envelope* (status ``ok``): the whole reply, optionally inside one Markdown code
  fence, is a JSON object whose only key is ``output`` with a string value;
* *lenient extraction* (status ``bad_envelope``, still graded: correct answers count
  whatever the envelope): the last ``{...}`` object in the text with an ``output`` key; a
  ``"output": "..."`` pair without braces; a non-string ``output`` value (a state object,
  a number: its JSON text is the answer); otherwise the whole reply (fences removed);
* nothing usable: ``no_answer`` (or ``truncated`` when a ``<think>`` block never closed).

Comparison:

* final arms: whitespace-separated tokens equal (``compare = "tokens"``, the default), or
  the exact text equal byte for byte (``compare = "bytes"``, networkx-simplex's rule);
* state arms: the extracted text parsed as JSON (the whole text, else its last non-empty
  line, because the instrumented program may print its own output first) and compared
  with the oracle object structurally and type-strictly (1, 1.0 and true all differ).

Bounded parsing: texts over 1 MB are refused, nesting is checked (64 levels) before any
``json`` call, and Python's int-digit limit turns monster numbers into parse failures.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from typing import Iterable, TypedDict

from execbench.contract.jsontypes import JSONValue
from execbench.dataset import Task
from execbench.families.state.canonical import depth_ok
from execbench.grading import (BAD_ENVELOPE, NO_ANSWER, OK, TRUNCATED, Score, reasoning_unclosed,
                               strip_reasoning, values_equal)

MAX_RESPONSE = 1_000_000
MAX_OBJECT_TRIES = 200
FINAL_ARMS = ("short-trace-final", "long-trace-final")
STATE_ARMS = ("inside-loop-state", "post-loop-state")
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_+-]*[ \t]*\n(.*?)\n?```\s*$", re.S)
_OUTPUT_KEY = re.compile(r'"output"\s*:\s*')
_DECODER = json.JSONDecoder()


class GradeDetails(TypedDict, total=False):
    """``Score.details`` of a state grade."""

    reason: str  # why there is no answer
    envelope_valid: bool
    extraction: str  # bad envelope: "object" | "pair" | "whole-reply"
    state_parse: str  # state arms: "whole" | "last-line" | "unparsable"
    compare: str  # final arms: "tokens" | "bytes"


def _loads(text: str) -> tuple[bool, JSONValue]:
    if len(text) > MAX_RESPONSE or not depth_ok(text):
        return False, None
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text


def extract(response: str) -> tuple[str, str | None, GradeDetails]:
    """(status, extracted output or None, details) for a raw response."""
    details: GradeDetails = {}
    if len(response) > MAX_RESPONSE:
        return NO_ANSWER, None, {"reason": f"response longer than {MAX_RESPONSE} characters"}
    unclosed = reasoning_unclosed(response)
    text = strip_reasoning(response).strip()
    if not text:
        status = TRUNCATED if unclosed else NO_ANSWER
        return status, None, {"reason": "no text outside reasoning", "envelope_valid": False}
    ok, value = _loads(_unfence(text).strip())
    if ok and isinstance(value, dict) and set(value) == {"output"} and isinstance(value["output"], str):
        return OK, value["output"], {"envelope_valid": True}
    details["envelope_valid"] = False
    found = _lenient(text)
    if found is not None:
        details["extraction"] = found[1]
        return BAD_ENVELOPE, found[0], details
    details["extraction"] = "whole-reply"
    return BAD_ENVELOPE, _unfence(text).strip("\n"), details


def _as_text(value: JSONValue) -> str | None:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


def _lenient(text: str) -> tuple[str, str] | None:
    """The last JSON object with an ``output`` key, or a bare ``"output": <value>`` pair."""
    if not depth_ok(text):
        return None
    tries = 0
    position = len(text)
    while tries < MAX_OBJECT_TRIES:
        start = text.rfind("{", 0, position)
        if start < 0:
            break
        tries += 1
        position = start
        if '"output"' not in text[start:start + 200_000]:
            continue
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and "output" in value:
            answer = _as_text(value["output"])
            if answer is not None:
                return answer, "object"
    matches = list(_OUTPUT_KEY.finditer(text))
    for match in reversed(matches[-MAX_OBJECT_TRIES:]):
        try:
            value, _ = _DECODER.raw_decode(text, match.end())
        except (ValueError, RecursionError):
            continue
        answer = _as_text(value)
        if answer is not None:
            return answer, "pair"
    return None


def parse_state(text: str) -> tuple[bool, JSONValue, str]:
    """(parsed, value, how) for a predicted state: the whole text, else its last line."""
    ok, value = _loads(text.strip())
    if ok:
        return True, value, "whole"
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        ok, value = _loads(lines[-1].strip())
        if ok:
            return True, value, "last-line"
    return False, None, "unparsable"


def compare_final(expected: str, got: str, rule: str) -> bool:
    if rule == "bytes":
        return got == expected
    return got.split() == expected.split()


def grade(task: Task, response: str) -> Score:
    status, output, details = extract(response)
    if output is None:
        return Score(correct=False, status=status, extracted=None, details=dict(details))
    if task.arm in STATE_ARMS:
        parsed, value, how = parse_state(output)
        details["state_parse"] = how
        correct = parsed and values_equal(value, task.answer)
        return Score(correct=bool(correct), status=status, extracted=value if parsed else output, details=dict(details))
    rule = task.provenance.get("compare", "tokens")
    details["compare"] = rule
    return Score(correct=compare_final(task.answer, output, rule), status=status, extracted=output,
                 details=dict(details))


def summarize(results: Iterable[tuple[Task, Score]]) -> dict[str, float | None]:
    """Accuracy overall and per arm, envelope validity, statuses, and the paired
    short→long changes (same case, both final arms graded)."""
    rows = list(results)
    n = len(rows)
    out: dict[str, float | None] = {"n": n, "accuracy": (sum(s.correct for _, s in rows) / n) if n else None}
    by_arm: dict[str, list[bool]] = defaultdict(list)
    for task, score in rows:
        by_arm[task.arm].append(score.correct)
    for arm in (*FINAL_ARMS, *STATE_ARMS):
        values = by_arm.get(arm, [])
        out[f"accuracy/{arm}"] = (sum(values) / len(values)) if values else None
        out[f"n/{arm}"] = len(values)
    answered = [s for _, s in rows if s.status in (OK, BAD_ENVELOPE)]
    out["envelope_valid_rate"] = (sum(s.details.get("envelope_valid", False) for s in answered) / len(answered)
                                  if answered else None)
    statuses = Counter(s.status for _, s in rows)
    for status in (OK, BAD_ENVELOPE, NO_ANSWER, TRUNCATED):
        out[f"status/{status}"] = statuses.get(status, 0)
    pairs: dict[str, dict[str, bool]] = defaultdict(dict)
    for task, score in rows:
        if task.arm in FINAL_ARMS:
            case = task.id.rsplit("#", 1)[0]
            pairs[case][task.arm] = score.correct
    complete = [p for p in pairs.values() if len(p) == 2]
    out["pairs"] = len(complete)
    out["pairs/correct_to_wrong"] = sum(p[FINAL_ARMS[0]] and not p[FINAL_ARMS[1]] for p in complete)
    out["pairs/wrong_to_correct"] = sum(not p[FINAL_ARMS[0]] and p[FINAL_ARMS[1]] for p in complete)
    return out
