"""What a family plug-in provides, and the records it exchanges with the build engine.

A family turns sources into *candidates* (cheap, no execution), each candidate into an
:class:`Outcome` (tasks and rejections; this is where code runs, in the sandbox), renders
a task into chat messages, and grades a raw model response. Nothing outside
``families/<name>`` knows a family's details.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Iterable, Iterator

from execbench.dataset import Task
from execbench.grading import Score
from execbench.sources.errors import SourceError  # noqa: F401 - re-exported: families raise it


@dataclass
class Candidate:
    """One unit of build work: ``payload`` must hold everything the outcome depends on."""

    key: str
    payload: dict[str, Any]


@dataclass
class Outcome:
    tasks: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def reject(self, candidate: str, stage: str, reason: str, **details: Any) -> None:
        self.rejected.append({"candidate": candidate, "stage": stage, "reason": reason, **details})


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass
class Prompt:
    messages: list[Message]
    template: str  # template name, e.g. "trace/direct"
    version: str  # template version, recorded in every log


class Reject(Exception):
    """Raised inside a family's build code: the candidate is rejected at ``stage``; the
    builder records it with :meth:`Outcome.reject`."""

    def __init__(self, stage: str, reason: str, **details: Any) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason
        self.details = details


class Family(ABC):
    """A family is its ``build`` module (``candidates``, ``build_candidate``, ``DEFAULT_OPTIONS``)
    and its ``prompt`` module (``render``, ``VARIANTS``); a subclass names them and adds grading."""

    name: str
    version: str  # bump when outcomes change: it is part of every build-cache key
    variants: tuple[str, ...] = ("direct", "cot")
    default_options: dict[str, Any] = {}  # build settings a user may override with --set
    source_licenses: dict[str, str] = {}  # built-in source -> license of its programs (dataset cards)
    builder: ModuleType  # families/<name>/build.py
    renderer: ModuleType  # families/<name>/prompt.py

    def candidates(self, sources: list[str], options: dict[str, Any]) -> Iterator[Candidate]:
        return self.builder.candidates(sources, options)

    def build_candidate(self, candidate: Candidate, options: dict[str, Any]) -> Outcome:
        return self.build_candidates([candidate], options)[0]

    def build_candidates(self, candidates: list[Candidate], options: dict[str, Any]) -> list[Outcome]:
        """Outcomes of several candidates (one per candidate, in order). A builder that
        defines ``build_candidates`` runs them together (e.g. in one sandbox per hash
        seed); each outcome must be what building the candidate alone gives."""
        many = getattr(self.builder, "build_candidates", None)
        if many is not None:
            return many(candidates, options)
        return [self.builder.build_candidate(candidate, options) for candidate in candidates]

    def batch_size(self, options: dict[str, Any]) -> int:
        """How many candidates the build engine hands :meth:`build_candidates` at once."""
        return int(getattr(self.builder, "BATCH_SIZE", 1))

    def manifest_settings(self, options: dict[str, Any]) -> dict[str, Any]:
        """Extra build settings the manifest records (e.g. the interpreter answers came from)."""
        return {}

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return self.renderer.render(task, variant)

    def source_license(self, source: str) -> str | None:
        """The license of a source's programs (``source``: the second part of a task id), for
        dataset cards; None when the family does not know it."""
        return self.source_licenses.get(source)

    @abstractmethod
    def grade(self, task: Task, response: str) -> Score: ...

    @abstractmethod
    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, Any]: ...
