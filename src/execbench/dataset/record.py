"""The task record: one JSON object per line of ``tasks.jsonl`` (see docs/dataset-format.md).

Records are validated when written and when read; a malformed record raises
:class:`DatasetError` naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

FAMILIES = ("trace", "state", "repo", "cruxeval")
ARMS = {
    "trace": ("trace",),
    "state": ("short-trace-final", "long-trace-final", "inside-loop-state", "post-loop-state"),
    "repo": ("masked-assertion",),
    "cruxeval": ("output-prediction", "input-prediction", "inside-loop-state", "post-loop-state"),
}
ANSWER_KINDS = ("text", "json", "lines", "python-literal", "sympy")
LANGUAGES = ("python", "cpp")
_ID = re.compile(r"^(?P<family>[a-z]+)/(?P<source>[^/#\s]+)/(?P<case>[^#\s]+)#(?P<arm>[a-z-]+)$")


class DatasetError(ValueError):
    """A dataset file or record is malformed."""


@dataclass
class Task:
    id: str
    family: str
    arm: str
    source_id: str
    language: str
    prompt_fields: dict[str, Any]
    answer: Any
    answer_kind: str
    metrics: dict[str, float | int | None] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> "Task":
        validate(data)
        return cls(**data)


def make_id(family: str, source: str, case: str, arm: str) -> str:
    return f"{family}/{source}/{case}#{arm}"


def validate(data: Any) -> None:
    """Raise DatasetError with a precise reason if ``data`` is not a valid task record."""
    if not isinstance(data, dict):
        raise DatasetError(f"a task must be a JSON object, got {type(data).__name__}")
    expected = set(Task.__dataclass_fields__)
    missing = expected - data.keys()
    extra = data.keys() - expected
    if missing:
        raise DatasetError(f"missing fields: {', '.join(sorted(missing))}")
    if extra:
        raise DatasetError(f"unknown fields: {', '.join(sorted(extra))}")
    for name in ("id", "family", "arm", "source_id", "language", "answer_kind"):
        if not isinstance(data[name], str) or not data[name]:
            raise DatasetError(f"field {name!r} must be a non-empty string")
    for name in ("prompt_fields", "metrics", "provenance"):
        if not isinstance(data[name], dict):
            raise DatasetError(f"field {name!r} must be an object")
    family, arm = data["family"], data["arm"]
    if family not in FAMILIES:
        raise DatasetError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
    if arm not in ARMS[family]:
        raise DatasetError(f"arm {arm!r} is not an arm of family {family!r}")
    if data["language"] not in LANGUAGES:
        raise DatasetError(f"unknown language {data['language']!r}")
    if data["answer_kind"] not in ANSWER_KINDS:
        raise DatasetError(f"unknown answer_kind {data['answer_kind']!r}")
    match = _ID.match(data["id"])
    if not match:
        raise DatasetError(f"id {data['id']!r} is not of the form <family>/<source>/<case>#<arm>")
    if match["family"] != family or match["arm"] != arm:
        raise DatasetError(f"id {data['id']!r} does not agree with family/arm {family}/{arm}")
    for key, value in data["metrics"].items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DatasetError(f"metric {key!r} must be a number or null")
