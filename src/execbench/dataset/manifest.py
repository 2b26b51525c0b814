"""A dataset's manifest (``manifest.json``) as a typed, versioned record, and its content hash.

:func:`content_hash` is the one definition of a dataset's content hash: ``sha256:`` and the
SHA-256 of the task records in order, each serialised as the dataset writer writes its line
(:func:`task_line`: JSON with sorted keys, ``ensure_ascii=False``, a newline). The writer
(``store.py``), the Parquet export (``export.py``), eval (the hash it records in a log) and
analysis (which recomputes it and warns when a directory's tasks no longer match its manifest)
all use it; :class:`ContentHash` is the same hash fed one record at a time. A hash never
depends on the manifest, so adding manifest fields leaves every dataset's hash unchanged.

:class:`Manifest` names the fields every dataset directory's manifest has (``MANIFEST_VERSION``
is written as ``manifest_version``; manifests written before it have none and read as version
0); build-specific fields (``candidates``, ``build_seconds``, ``cache``, a mutation run's
counts, an export's ``inputs``) stay in ``extra``, in the same flat JSON object.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any, Iterable, Mapping

from execbench.dataset.record import DatasetError, Task

MANIFEST_VERSION = 1
HASH_PREFIX = "sha256:"


def task_line(data: Mapping[str, Any]) -> bytes:
    """A task record's line in ``tasks.jsonl``, as it is written and hashed."""
    return (json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n").encode()


class ContentHash:
    """:func:`content_hash` fed one task record (its JSON object) at a time."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def update(self, record: Mapping[str, Any]) -> None:
        self._digest.update(task_line(record))

    def value(self) -> str:
        return HASH_PREFIX + self._digest.hexdigest()


def content_hash(tasks: Iterable[Task]) -> str:
    """The content hash of a dataset whose tasks are ``tasks``, in order."""
    running = ContentHash()
    for task in tasks:
        running.update(task.to_json())
    return running.value()


@dataclass
class Manifest:
    """The fields of ``manifest.json`` that every dataset directory has; the rest in ``extra``."""

    content_hash: str
    tasks: int
    settings: dict[str, Any]
    execbench_version: str = ""
    python: str = ""
    created: str = ""
    tasks_by_arm: dict[str, int] = field(default_factory=dict)
    rejected: int = 0
    rejected_by_stage: dict[str, int] = field(default_factory=dict)
    rejected_by_reason: dict[str, int] = field(default_factory=dict)
    manifest_version: int = MANIFEST_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object of ``manifest.json`` (``extra``'s fields beside the named ones)."""
        named = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return {**self.extra, **named}

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        """A manifest from its JSON object (DatasetError if it is not one)."""
        if not isinstance(data, dict) or not isinstance(data.get("content_hash"), str) \
                or not isinstance(data.get("tasks"), int):
            raise DatasetError("a manifest must be a JSON object with a content_hash and a task count")
        named = {f.name for f in fields(cls)} - {"extra"}
        values = {key: value for key, value in data.items() if key in named}
        values.setdefault("manifest_version", 0)  # written before manifests had a version
        values.setdefault("settings", {})
        return cls(**values, extra={key: value for key, value in data.items() if key not in named})
