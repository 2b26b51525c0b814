"""Answer files: JSONL of raw model responses that ``execbench grade`` scores (issue 34).

One object per line, ``{"id": TASK_ID, "response": TEXT}``; EvalPlus-style spellings are
accepted too (``task_id`` for ``id``, ``completion`` or ``solution`` for ``response``). Every
line is checked before anything is graded, and every problem is reported with its line
number in one :class:`AnswerFileError`: a line that is not a JSON object, a missing or
non-string id, a missing response key (a close misspelling is named), a response that is
neither a string nor null, and the same id twice (a correct answer silently overwritten by a
later one was issue 34's 0.25 instead of 0.50). Answers whose ids name no task of the
dataset are reported with their lines by :func:`unknown_ids` (a warning: one answer file may
serve several datasets), and are an error when no answer names a task of it (the wrong
dataset, or the wrong file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Collection

from execbench.usererror import UserError, suggestion

ID_KEYS = ("id", "task_id")
RESPONSE_KEYS = ("response", "completion", "solution")
MAX_SHOWN = 5  # problems spelled out in the message; the rest are counted


class AnswerFileError(UserError):
    """An answer file has lines that cannot be graded as they are."""


def _one(record: dict[str, Any], keys: tuple[str, ...], what: str) -> tuple[Any, str | None]:
    """The value of the one key of ``keys`` the record has: (value, problem or None)."""
    present = [key for key in keys if key in record]
    if len(present) > 1 and len({json.dumps(record[k], sort_keys=True) for k in present}) > 1:
        return None, f"both {present[0]!r} and {present[1]!r} given, with different values"
    if not present:
        near = next((suggestion(key, keys) for key in record if suggestion(key, keys)), "")
        return None, f"no {what} key ({' or '.join(map(repr, keys))}){': ' + near.rstrip() if near else ''}"
    return record[present[0]], None


def _line(number: int, line: str) -> tuple[str | None, str | None, str | None]:
    """(id, response, problem) of one non-blank line."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, None, f"not valid JSON ({getattr(exc, 'msg', type(exc).__name__)})"
    if not isinstance(record, dict):
        return None, None, f"expected a JSON object, not {type(record).__name__}"
    task_id, problem = _one(record, ID_KEYS, "id")
    if problem:
        return None, None, problem
    if not isinstance(task_id, str) or not task_id:
        return None, None, f"the id must be a non-empty string, not {json.dumps(task_id)[:40]}"
    response, problem = _one(record, RESPONSE_KEYS, "response")
    if problem:
        return task_id, None, problem
    if response is not None and not isinstance(response, str):
        return task_id, None, f"the response must be a string or null, not {type(response).__name__}"
    return task_id, response or "", None


def read_answers(path: str | Path) -> dict[str, str]:
    """``{task id: response}`` of the answer file at ``path``, in file order; raises
    :class:`AnswerFileError` listing every unusable line with its number."""
    return read_answer_file(path)[0]


def read_answer_file(path: str | Path) -> tuple[dict[str, str], dict[str, int]]:
    """(``{task id: response}``, ``{task id: its line}``) of the answer file at ``path``."""
    with open(path, "rb") as fh:
        return parse_answer_bytes(fh.read(), path)


def parse_answer_bytes(data: bytes, path: str | Path) -> tuple[dict[str, str], dict[str, int]]:
    """:func:`read_answer_file` on the file's bytes (a caller that also hashes them reads once)."""
    answers: dict[str, str] = {}
    first_line: dict[str, int] = {}
    problems: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnswerFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # universal newlines, not splitlines():
    for number, line in enumerate(lines, 1):  # JSON strings may hold U+2028 and other breaks unescaped
        if not line.strip():
            continue
        task_id, response, problem = _line(number, line)
        if problem is None and task_id in first_line:
            problem = f"id {task_id!r} again (first on line {first_line[task_id]}): one answer per task"
        if problem is not None:
            problems.append(f"line {number}: {problem}")
            continue
        assert task_id is not None and response is not None
        first_line[task_id] = number
        answers[task_id] = response
    if problems:
        shown = "; ".join(problems[:MAX_SHOWN])
        more = f" (and {len(problems) - MAX_SHOWN} more)" if len(problems) > MAX_SHOWN else ""
        raise AnswerFileError(f"{path}: {len(problems)} unusable answer line{'s' if len(problems) > 1 else ''}: "
                              f"{shown}{more}")
    return answers, first_line


def unknown_ids(path: str | Path, lines: dict[str, int], known_ids: Collection[str]) -> str | None:
    """The answers of ``path`` (``lines``: id → line) that name no task of the dataset
    (``known_ids``), with their lines and the closest task id: a warning's text, or None.
    :class:`AnswerFileError` when there are answers and none names a task of the dataset."""
    unknown = [(number, task_id) for task_id, number in lines.items() if task_id not in known_ids]
    if not unknown:
        return None
    shown = []
    for number, task_id in unknown[:MAX_SHOWN]:
        near = suggestion(task_id, known_ids).rstrip()
        shown.append(f"line {number}: {task_id!r}" + (f" ({near})" if near else ""))
    more = f" (and {len(unknown) - MAX_SHOWN} more)" if len(unknown) > MAX_SHOWN else ""
    text = f"{path}: {len(unknown)} {'answers name' if len(unknown) > 1 else 'answer names'} no task of the dataset: " \
           f"{'; '.join(shown)}{more}"
    if len(unknown) == len(lines):
        raise AnswerFileError(f"{text}: is it the answer file of another dataset?")
    return text
