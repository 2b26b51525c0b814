"""The result record every grader returns (`Score`) and its extraction statuses."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OK = "ok"                      # an answer was found and compared
NO_ANSWER = "no_answer"        # nothing in the text parses as an answer
BAD_ENVELOPE = "bad_envelope"  # the answer wrapper is malformed (used by other task families)
TRUNCATED = "truncated"        # the answer (or the reasoning) was cut off before it ended
GRADING_TIMEOUT = "grading_timeout"  # deciding equivalence ran out of its time limit: wrong
STATUSES = (OK, NO_ANSWER, BAD_ENVELOPE, TRUNCATED, GRADING_TIMEOUT)


@dataclass(frozen=True)
class Score:
    correct: bool
    status: str                  # one of STATUSES (extraction status)
    extracted: Any               # the parsed answer (JSON-serialisable) or None
    similarity: float | None = None
    details: dict = field(default_factory=dict)
