"""What a family plug-in provides, and the records it exchanges with the build engine.

A family turns sources into *candidates* (cheap, no execution), each candidate into an
:class:`Outcome` (tasks and rejections; this is where code runs, in the sandbox), renders
a task into chat messages, and grades a raw model response. Nothing outside
``families/<name>`` knows a family's details.

This module sits below every user of the contract (the build engines in ``families/``,
``mutation/``, the family folders, eval, analysis, report): it imports none of them.
:func:`build_key` is the one build-cache key of a candidate's outcome, shared by
``execbench build`` and the mutation engine so their cache entries are interchangeable.
"""

from __future__ import annotations

import inspect
import json
import platform
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterable, Iterator, TypeVar

from execbench.contract import hashseeds
from execbench.contract.capabilities import (AnalysisFacts, BuildReport, Capability, ErrorCategory,  # noqa: F401
                                             ErrorTaxonomy, Licenses, Metric, PaperScoring, PluginError, SliceTable,
                                             check_capabilities, find)
from execbench.contract.context import BuildContext
from execbench.dataset import Task, TaskId, parse_id
from execbench.dataset.cache import content_key
from execbench.errors import InternalError
from execbench.grading import Score
from execbench.sources.errors import SourceError  # noqa: F401 - re-exported: families raise it


PayloadT = TypeVar("PayloadT")
OptionsT = TypeVar("OptionsT")
C = TypeVar("C", bound=Capability)


@dataclass
class Candidate(Generic[PayloadT]):
    """One unit of build work: ``payload`` (JSON: it is hashed into the build-cache key) must hold
    everything the outcome depends on."""

    key: str
    payload: PayloadT


@dataclass
class Outcome:
    """A candidate's tasks (JSON records, as the build cache keeps them) and rejections."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def add(self, task: Task) -> None:
        """Admit ``task`` (recorded as its JSON record)."""
        self.tasks.append(task.to_json())

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


class Reject(InternalError):
    """Raised inside a family's build code: the candidate is rejected at ``stage``; the
    builder records it with :meth:`Outcome.reject`."""

    def __init__(self, stage: str, reason: str, **details: Any) -> None:
        super().__init__(reason)
        self.stage = stage
        self.reason = reason
        self.details = details


class Family(ABC, Generic[PayloadT, OptionsT]):
    """The core a family provides: its identity, its candidates and how one is built, the prompt
    of a task, the grade of a response and the summary of grades. Everything optional is a declared
    capability (:mod:`execbench.contract.capabilities`) in ``capabilities``, asked for with
    :meth:`capability`. ``PayloadT`` is the type of its candidates' payloads, ``OptionsT`` of its
    build options. The registry checks a plug-in when it registers (:func:`check_plugin`)."""

    name: str
    version: str  # bump when outcomes change: it is part of every build-cache key
    arms: dict[str, tuple[str, ...]] = {}  # arm -> the answer kinds its tasks may have (in report order)
    variants: tuple[str, ...] = ("direct", "cot")
    default_options: dict[str, Any] = {}  # build settings a user may override with --set
    has_similarity: bool = False  # grade() scores a similarity besides correctness
    capabilities: tuple[Capability, ...] = ()  # the optional parts, one object per kind

    def capability(self, kind: type[C]) -> C | None:
        """The family's declared capability of ``kind`` (e.g. ``Mutation``), or None."""
        return find(self.capabilities, kind)

    @abstractmethod
    def candidates(self, sources: list[str], options: OptionsT,
                   context: BuildContext | None = None) -> Iterator[Candidate[PayloadT]]:
        """The build's units of work from ``sources`` (cheap: nothing runs). ``context``: this build's
        state (the engine's; a caller that keeps no manifest passes none); a family writes what its
        manifest records into it (its ``settings``, ``files``) as it lists them."""

    @abstractmethod
    def build_candidate(self, candidate: Candidate[PayloadT], options: OptionsT) -> Outcome:
        """The tasks and rejections of one candidate (code runs here, in the sandbox)."""

    @abstractmethod
    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        """The chat messages of ``task`` under the prompt ``variant``."""

    @abstractmethod
    def grade(self, task: Task, response: str) -> Score:
        """The score of a raw model response (never executed outside the sandbox)."""

    @abstractmethod
    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, Any]:
        """The family's summary of graded tasks (``execbench grade``)."""

    def parse_id(self, task_id: str) -> TaskId:
        """The parts of one of this family's task ids (``<family>/<source>/<case>#<arm>``)."""
        parts = parse_id(task_id)
        if parts.family != self.name or parts.arm not in self.arms:
            raise ValueError(f"{task_id!r} is not a task id of family {self.name!r}")
        return parts

    def answer_token_bound(self, task: Task) -> int:
        """At most how many tokens a right answer to ``task`` takes, written as the prompt asks for it
        (envelope excluded): one per UTF-8 byte of the answer's JSON text, since a byte-level BPE
        token covers at least one byte. The eval sizes each sample's answer budget on it
        (``eval.protocol.answer_budget``); a family whose reply echoes more than the answer (an
        assertion around it) counts that too."""
        return len(json.dumps(task.answer, ensure_ascii=False).encode())


# what a plug-in must provide: (member, check, what it must be)
_CORE: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("name", lambda v: isinstance(v, str) and bool(v), "a non-empty str"),
    ("version", lambda v: isinstance(v, str) and bool(v), "a non-empty str"),
    ("arms", lambda v: isinstance(v, dict) and bool(v) and all(
        isinstance(k, str) and isinstance(t, tuple) and t and all(isinstance(x, str) for x in t)
        for k, t in v.items()), "a non-empty dict of arm -> tuple of answer kinds"),
    ("variants", lambda v: isinstance(v, tuple) and bool(v) and all(isinstance(x, str) for x in v),
     "a non-empty tuple of str"),
    ("default_options", lambda v: isinstance(v, dict), "a dict"),
    ("has_similarity", lambda v: isinstance(v, bool), "a bool"),
    *((method, callable, "a method") for method in ("candidates", "build_candidate", "prompt",
                                                    "grade", "summarize", "parse_id", "answer_token_bound")),
)
# members of the contract before issue 36, now capabilities: a plug-in still defining one is told where it went
_MOVED = {"analysis": "AnalysisFacts", "task_slices": "Slices", "slices": "Slices", "sample_slices": "Slices",
          "program_from_prompt": "Slices", "batch_size": "BuildSchedule", "build_candidates": "BuildSchedule",
          "candidate_cost": "BuildSchedule", "limited": "BuildSchedule", "build_in_processes": "BuildSchedule",
          "grade_many": "BatchGrading", "grade_as": "PaperScoring", "summarize_as": "PaperScoring",
          "paper_length": "PaperScoring", "paper_scoring_variants": "PaperScoring",
          "paper_trace_counts": "PaperScoring", "paper_task_topic": "PaperScoring",
          "paper_reproduction": "PaperScoring", "mutation_adapter": "Mutation", "teacher_mutation": "TeacherMutation",
          "annotator": "Annotator", "agent_browser": "AgentBrowser", "source_licenses": "Licenses",
          "source_license": "Licenses", "demo_sources": "Demo", "record_written": "BuildReport",
          "build_summary": "BuildReport"}


def check_plugin(plugin: Any, name: str) -> Family[Any, Any]:
    """``plugin`` if it is a complete family plug-in named ``name``: a :class:`Family` (a subclass is
    instantiated), every core member present and of its type, no pre-capability member, every capability
    a known one of its declared type. Else :class:`PluginError` naming what is missing or mistyped."""
    if isinstance(plugin, type) and issubclass(plugin, Family):
        missing = sorted(getattr(plugin, "__abstractmethods__", ()))
        if missing:
            raise PluginError(f"family {name!r}: {plugin.__name__} does not define {', '.join(missing)}")
        plugin = plugin()
    if not isinstance(plugin, Family):
        raise PluginError(f"family {name!r}: {plugin!r} is not a Family plug-in")
    for member, fits, wanted in _CORE:
        if not hasattr(plugin, member):
            raise PluginError(f"family {name!r}: {type(plugin).__name__} does not define {member}")
        if not fits(getattr(plugin, member)):
            raise PluginError(f"family {name!r}: {member} must be {wanted}, not {getattr(plugin, member)!r}")
    if plugin.name != name:
        raise PluginError(f"family {name!r}: the plug-in is named {plugin.name!r}")
    try:  # the engine hands every build's state to candidates (contract/context.py)
        inspect.signature(plugin.candidates).bind([], {}, None)
    except TypeError:
        raise PluginError(f"family {name!r}: candidates must take (sources, options, context=None): the "
                          f"engine hands it the build's BuildContext") from None
    for member, kind in _MOVED.items():
        if hasattr(plugin, member):
            raise PluginError(f"family {name!r}: {member} is not a Family member: declare it in the "
                              f"{kind} capability (execbench.contract.capabilities)")
    check_capabilities(f"family {name!r}", plugin.capabilities)
    return plugin


def grade_as(family: Family[Any, Any], task: Task, response: str, variant: str | None) -> Score:
    """``response`` graded as the prompt ``variant`` scores: by the family's :class:`PaperScoring`
    when it declares one (a peer benchmark's own rules), else by its ``grade``."""
    paper = family.capability(PaperScoring)
    return paper.grade_as(task, response, variant) if paper is not None else family.grade(task, response)


def summarize_as(family: Family[Any, Any], results: Iterable[tuple[Task, Score]], variant: str | None
                 ) -> dict[str, Any]:
    """:func:`grade_as`'s summary: the family's :class:`PaperScoring` ``summarize_as``, else its ``summarize``."""
    paper = family.capability(PaperScoring)
    return paper.summarize_as(results, variant) if paper is not None else family.summarize(results)


def source_license(family: Family[Any, Any], source: str) -> str | None:
    """The license of ``source``'s programs as the family's :class:`Licenses` states it, or None."""
    licenses = family.capability(Licenses)
    return licenses.of(source) if licenses is not None else None


def build_key(family: Family[Any, Any], payload: Any, options: dict[str, Any]) -> str:
    """The build-cache key of the outcome of a candidate with ``payload`` built under ``options``:
    the family and its version, the interpreter's version, the payload and the options without
    randomly drawn hash seeds (:func:`execbench.contract.hashseeds.cache_options`)."""
    return content_key(family.name, family.version, platform.python_version(), payload,
                       hashseeds.cache_options(options))
