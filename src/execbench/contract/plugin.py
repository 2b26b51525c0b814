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

import json
import platform
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping

from execbench.contract import hashseeds
from execbench.contract.context import BuildContext, SummaryTable
from execbench.dataset import Manifest, Task, TaskId, parse_id
from execbench.dataset.cache import content_key
from execbench.errors import InternalError
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


@dataclass(frozen=True)
class Metric:
    """How the report names one of a family's metric columns (a key of ``Task.metrics``).

    ``label`` heads its table columns and figure panels ("ESV", "peak state"); ``term`` names it
    as a predictor in the error models' odds-ratio table (default: ``name``)."""

    name: str
    label: str
    term: str = ""


@dataclass(frozen=True)
class SliceTable:
    """One accuracy table of a family's main report section: accuracy by the slice column ``column``
    (its values in ``AnalysisFacts.slice_orders`` order), or the note ``missing`` when no task records it."""

    column: str
    label: str  # the column's heading
    title: str
    paper: str = ""
    missing: str = ""
    heading: str = ""  # a subheading before the table (or its note)
    setting_first: bool = True  # rows by setting then the slice (False: by the slice, then setting)
    figure_caption: str = ""  # when set, the table is also drawn: accuracy over the slice, a line per setting
    figure_alt: str = ""


@dataclass(frozen=True)
class ErrorCategory:
    """One category of a family's error taxonomy: its name (a table column, a bar's label) and bar colour."""

    name: str
    color: str


@dataclass(frozen=True)
class ErrorTaxonomy:
    """A family's first-deviation error taxonomy (``AnalysisFacts.taxonomy``): ``classify(program,
    oracle, predicted, status)`` names the category of a wrong answer (None: the answer is right);
    ``categories`` lists every name it returns, in table order."""

    categories: tuple[ErrorCategory, ...]
    classify: Callable[[str | None, Any, Any, str | None], str | None]


@dataclass(frozen=True)
class AnalysisFacts:
    """What analysis and the report know about a family's samples (``Family.analysis``).

    ``layout`` names the report's main section for the family (``report/sections.py``
    ``LAYOUTS``; ``slice-tables``: the family's ``slice_tables``, then the same programs in two
    languages when tasks share a ``pair``, then the ``paired_arms`` decrement; ``sequence``: answers
    that are sequences scored with a similarity, per-task tables, length buckets, slices by
    ``cell_column``, the ``taxonomy`` of wrong answers); the paper
    references are printed next to the tables they reproduce.
    """

    layout: str
    title: str
    nav: str
    paper: str  # the main section's paper tables
    relations_paper: str  # the "what makes tasks hard" section's
    metrics: tuple[str, ...] = ()  # the task record's metrics analysis keeps (as floats)
    metric_fallbacks: dict[str, tuple[str, ...]] = field(default_factory=dict)  # metric -> others to use if absent
    metric_labels: tuple[Metric, ...] = ()  # how the report names the metrics (default: the column name)
    correlation_metrics: tuple[str, ...] = ()  # Pearson/partial correlation with correctness
    theta_metrics: tuple[str, ...] = ()  # dynamic metrics of the Mann-Whitney theta table
    logistic_models: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, predictors) error models
    correlation_paper: str = ""
    partial_paper: str = ""
    logistic_paper: str = ""
    cell_column: str | None = None  # the slice column of run comparisons (topic, study, repository)
    cell_order: tuple[str, ...] = ()  # known values of that column, in table order
    slice_orders: dict[str, tuple[str, ...]] = field(default_factory=dict)  # slice column -> its values in table order
    slice_tables: tuple[SliceTable, ...] = ()  # accuracy by slice, in the main section's ``slice-tables`` layout
    python_only_relations: bool = False  # relations on Python cases only (C++ metrics differ)
    headlines: tuple[str, ...] = ()  # headline findings to state: "partial" and/or "theta"
    paired_arms: tuple[str, str] | None = None  # (shorter, longer input) arms of one case: the paired decrement
    program_text: bool = False  # the error taxonomy reads the task's program (from the dataset or prompt)
    taxonomy: ErrorTaxonomy | None = None  # the wrong answers' first-deviation categories (in the sequence layout)
    per_task_title: str = "Per-task metrics"  # the sequence layout's per-task accuracy/similarity tables
    length_metric: str = ""  # the sequence layout's accuracy-by-length buckets: the metric bucketed
    cell_heading: str = ""  # what the cells of ``cell_column`` are, in the heading of their table
    pairs_note: str = ""  # what differs between the two languages of a pair (the paired table's caption)


class Reject(InternalError):
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
    # build candidates in worker processes, not threads: for a family whose own Python work
    # (not its sandboxed children) dominates a build, one GIL would serialise it
    build_in_processes: bool = False
    source_licenses: dict[str, str] = {}  # built-in source -> license of its programs (dataset cards)
    builder: ModuleType  # families/<name>/build.py
    renderer: ModuleType  # families/<name>/prompt.py
    # -- the family's facts: the rest of the house asks for these and never names a family or an arm
    arms: dict[str, tuple[str, ...]] = {}  # arm -> the answer kinds its tasks may have (in report order)
    has_similarity: bool = False  # grade() scores a similarity besides correctness
    demo_sources: tuple[str, ...] = ()  # built-in sources `execbench demo` builds from
    analysis: AnalysisFacts | None = None  # None: the report shows the family in the overview only
    # a peer benchmark's own scoring: the report adds that paper's tables for these prompt variants
    paper_scoring_variants: tuple[str, ...] = ()  # variants graded by the peer's rules (``grade_as``)
    paper_trace_counts: dict[str, int] = {}  # the peer's item count per topic, shown beside its tables
    paper_task_topic: str = ""  # the topic the peer aggregates per task (its other topics: per item)
    paper_reproduction: str = ""  # the script rescoring the peer's own predictions on the admitted items

    def parse_id(self, task_id: str) -> TaskId:
        """The parts of one of this family's task ids (``<family>/<source>/<case>#<arm>``)."""
        parts = parse_id(task_id)
        if parts.family != self.name or parts.arm not in self.arms:
            raise ValueError(f"{task_id!r} is not a task id of family {self.name!r}")
        return parts

    def mutation_adapter(self) -> Any | None:
        """The offline mutation adapter (``mutation.engine.Adapter``), or None."""
        return None

    def annotator(self) -> Any | None:
        """``annotate_dataset(out, model, progress=...)`` of ``execbench build --annotator``, or None."""
        return None

    def teacher_mutation(self) -> Any | None:
        """The teacher-driven mutation of a dataset (``mutation.engine.mutate_with_teacher``), or None."""
        return None

    def agent_browser(self) -> Any | None:
        """The read-only repository browser of ``--mode agent`` (a class with ``for_task(task)``), or None."""
        return None

    def program_from_prompt(self, prompt: str) -> str | None:
        """The task's program recovered from its rendered prompt (for the error taxonomy when the
        dataset is gone), or None."""
        return None

    def task_slices(self, task: Task) -> dict[str, str | None]:
        """Analysis slice columns (``topic``, ``repository``) from the task's own fields; eval
        records them in every sample's metadata."""
        return {}

    def slices(self, source_id: str) -> dict[str, str | None]:
        """Analysis slice columns (``topic``, ``repository``) recoverable from a source id alone."""
        return {}

    def sample_slices(self, fields: Mapping[str, Any], metrics: Mapping[str, Any]) -> dict[str, str | None]:
        """Analysis slice columns derived by the family's own rules (e.g. a difficulty label from a
        1/2/3 metric) from a sample's recorded fields (a log sample's metadata, or a task's prompt
        fields over its provenance) and its metrics."""
        return {}

    def candidates(self, sources: list[str], options: dict[str, Any],
                   context: BuildContext | None = None) -> Iterator[Candidate]:
        """The build's candidates. ``context``: this build's state (the engine's; a caller that keeps
        no manifest passes none); a family writes what its manifest records into it (its
        ``settings``, ``files``) as it lists them."""
        return self.builder.candidates(sources, options)

    def limited(self, candidates: list[Candidate], limit: int) -> list[Candidate]:
        """The candidates of the first ``limit`` problems (``execbench build --limit N``): the first
        ``limit`` candidates, unless the builder's candidates hold several problems each and it
        cuts them by problem (its ``limited``)."""
        cut = getattr(getattr(self, "builder", None), "limited", None)
        return list(cut(candidates, limit)) if cut is not None else candidates[:limit]

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

    def candidate_cost(self, candidate: Candidate) -> float:
        """What building ``candidate`` roughly costs, relative to the family's other candidates
        (the build engine balances its batches by it); the builder's ``candidate_cost`` when it
        has one, else 1 (also for a plug-in that overrides the build methods and has no
        builder module). Only the schedule depends on it, never an outcome."""
        cost = getattr(getattr(self, "builder", None), "candidate_cost", None)
        return float(cost(candidate)) if cost is not None else 1.0

    # -- the family's own words in a build's manifest and summary (issue 36; per-build state in the context)
    def record_written(self, outcome: Outcome, context: BuildContext) -> None:
        """Called by the build engine with each outcome as the dataset records it (cached or built,
        in candidate order): a family may count it into ``context.extra`` (manifest fields of its own)."""
        return None

    def build_summary(self, manifest: Manifest, out: Path) -> list[SummaryTable | str]:
        """The family's own tables and lines after ``execbench build``'s summary of the dataset at ``out``."""
        return []

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return self.renderer.render(task, variant)

    def answer_token_bound(self, task: Task) -> int:
        """At most how many tokens a right answer to ``task`` takes, written as the prompt asks for it
        (envelope excluded): one per UTF-8 byte of the answer's JSON text, since a byte-level BPE
        token covers at least one byte. The eval sizes each sample's answer budget on it
        (``eval.protocol.answer_budget``); a family whose reply echoes more than the answer (an
        assertion around it) counts that too."""
        return len(json.dumps(task.answer, ensure_ascii=False).encode())

    def source_license(self, source: str) -> str | None:
        """The license of a source's programs (``source``: the second part of a task id), for
        dataset cards; None when the family does not know it."""
        return self.source_licenses.get(source)

    @abstractmethod
    def grade(self, task: Task, response: str) -> Score: ...

    @abstractmethod
    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, Any]: ...

    def grade_as(self, task: Task, response: str, variant: str | None) -> Score:
        """Grade as the prompt variant ``variant`` scores (a peer benchmark's own rules, e.g.
        the trace family's ``coconut``); by default every variant grades alike."""
        return self.grade(task, response)

    def summarize_as(self, results: Iterable[tuple[Task, Score]], variant: str | None) -> dict[str, Any]:
        """:meth:`summarize` for results graded with :meth:`grade_as` under ``variant``."""
        return self.summarize(results)

    def paper_length(self, answer: Any) -> int | None:
        """The length the peer benchmark buckets an item by (its scoring key's length, from the
        oracle ``answer``), for the paper-layout length tables; None: the peer has none."""
        return None


def build_key(family: Family, payload: dict[str, Any], options: dict[str, Any]) -> str:
    """The build-cache key of the outcome of a candidate with ``payload`` built under ``options``:
    the family and its version, the interpreter's version, the payload and the options without
    randomly drawn hash seeds (:func:`execbench.contract.hashseeds.cache_options`)."""
    return content_key(family.name, family.version, platform.python_version(), payload,
                       hashseeds.cache_options(options))
