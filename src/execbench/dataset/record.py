"""The task record: one JSON object per line of ``tasks.jsonl`` (see docs/dataset-format.md).

Records are validated when written and when read; a malformed record raises
:class:`DatasetError` naming the file and line. This layer checks the record's structure
(fields, types, the id grammar, languages); which families exist, which arms each has and
which answer kinds each arm's tasks take is the families' knowledge (``Family.arms``): a caller that
knows the families passes that check in (a :data:`FamilyCheck`: ``registry.check_record``, or
:func:`arms_check` of the plug-ins it was handed; docs/architecture.md, "Dataset validation").
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from execbench.usererror import UserError

LANGUAGES = ("python", "cpp")
_ID = re.compile(r"^(?P<family>[a-z]+)/(?P<source>[^/#\s]+)/(?P<case>[^#\s]+)#(?P<arm>[a-z-]+)$")

class DatasetError(UserError):
    """A dataset file or record is malformed."""


#: A check of a record's (family, arm, answer_kind) against the families: raises DatasetError
#: for a combination it does not know.
FamilyCheck = Callable[[str, str, str], None]


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
    def from_json(cls, data: Any, check: FamilyCheck | None = None) -> "Task":
        validate(data, check)
        return cls(**data)


class TaskId(NamedTuple):
    family: str
    source: str
    case: str
    arm: str

    def __str__(self) -> str:
        return make_id(*self)


def make_id(family: str, source: str, case: str, arm: str) -> str:
    return f"{family}/{source}/{case}#{arm}"


def parse_id(task_id: str) -> TaskId:
    """The parts of ``<family>/<source>/<case>#<arm>``; DatasetError if ``task_id`` is not one."""
    match = _ID.match(task_id) if isinstance(task_id, str) else None
    if not match:
        raise DatasetError(f"id {task_id!r} is not of the form <family>/<source>/<case>#<arm>")
    return TaskId(match["family"], match["source"], match["case"], match["arm"])


def arms_check(arms: Mapping[str, Mapping[str, Sequence[str]]]) -> FamilyCheck:
    """The family check of the families ``arms`` names (family → its ``Family.arms``: arm → answer kinds)."""
    def check(family: str, arm: str, answer_kind: str) -> None:
        if family not in arms:
            raise DatasetError(f"unknown family {family!r} (known: {', '.join(sorted(arms))})")
        kinds = arms[family].get(arm)
        if kinds is None:
            raise DatasetError(f"arm {arm!r} is not an arm of family {family!r}")
        if answer_kind not in kinds:
            raise DatasetError(f"answer_kind {answer_kind!r} is not an answer kind of {family}/{arm} "
                               f"({', '.join(kinds)})")
    return check


def validate(data: Any, check: FamilyCheck | None = None) -> None:
    """Raise DatasetError with a precise reason if ``data`` is not a valid task record; ``check``
    (when given) also checks its family, arm and answer kind against the families."""
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
    if data["language"] not in LANGUAGES:
        raise DatasetError(f"unknown language {data['language']!r}")
    parts = parse_id(data["id"])
    if parts.family != family or parts.arm != arm:
        raise DatasetError(f"id {data['id']!r} does not agree with family/arm {family}/{arm}")
    if check is not None:
        check(family, arm, data["answer_kind"])
    for key, value in data["metrics"].items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DatasetError(f"metric {key!r} must be a number or null")
