"""What a family *may* provide beyond its core: declared capability objects.

A :class:`~execbench.contract.plugin.Family` lists its capabilities once, in its ``capabilities``
tuple; a consumer asks ``family.capability(Kind)`` and gets the declared instance or None. Nothing
is found by ``hasattr``: the registry checks every capability when a plug-in registers
(:func:`check_capabilities`: an unknown object, a second one of a kind or a field of the wrong type is
refused, naming it). Every capability is a frozen dataclass deriving from :class:`Capability`:

================  ====================================================================================
:class:`AnalysisFacts`   the report's and analysis' facts (metrics, slice tables, layout, taxonomy)
:class:`Slices`          analysis slice columns from a task, a source id, a sample; a program from a prompt
:class:`BuildSchedule`   how the engine batches, costs, cuts (``--limit``) and runs a family's candidates
:class:`BatchGrading`    ``grade_many``: grading several answers at once (shared sandbox runs)
:class:`PaperScoring`    a peer benchmark's own scoring: ``grade_as``/``summarize_as`` for its variants
:class:`Mutation`        the offline mutation adapter (``mutation.engine.Adapter``)
:class:`TeacherMutation` teacher-driven mutation of a dataset
:class:`Annotator`       ``execbench build --annotator``'s annotation of a dataset
:class:`AgentBrowser`    the read-only browser of ``--mode agent``
:class:`Licenses`        the license of a source's programs (dataset cards)
:class:`Demo`            the built-in sources ``execbench demo`` builds from
:class:`BuildReport`     the family's own manifest fields and ``execbench build`` summary lines
================  ====================================================================================

The objects a capability loads lazily (a mutation adapter, an annotator, ...) are given as a
zero-argument *loader*, so that registering a family imports none of its optional machinery.
Capability callables are plain module-level functions (a plug-in is pickled to build workers).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable, Mapping, TypeVar

from execbench.dataset import Task
from execbench.grading import Score
from execbench.usererror import UserError


class PluginError(UserError, TypeError):
    """A family plug-in refused at registration: a core member or a capability missing or mistyped."""


class Capability:
    """The base of every declared capability (a frozen dataclass)."""


C = TypeVar("C", bound=Capability)
Slice = dict[str, str | None]


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
class AnalysisFacts(Capability):
    """What analysis and the report know about a family's samples (without it, the report shows
    the family in the overview only).

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


def _no_slices(*_: Any) -> Slice:
    return {}


def _no_program(_: str) -> str | None:
    return None


@dataclass(frozen=True)
class Slices(Capability):
    """Analysis slice columns (``topic``, ``repository``, ...) by the family's own rules: ``task``
    from a task's fields (eval records them in every sample's metadata), ``source`` from a source
    id alone, ``sample`` from a sample's recorded fields and metrics; ``program_from_prompt``
    recovers a task's program from its rendered prompt (the error taxonomy, when the dataset is gone)."""

    task: Callable[[Task], Slice] = _no_slices
    source: Callable[[str], Slice] = _no_slices
    sample: Callable[[Mapping[str, Any], Mapping[str, Any]], Slice] = _no_slices
    program_from_prompt: Callable[[str], str | None] = _no_program


@dataclass(frozen=True)
class BuildSchedule(Capability):
    """How the build engine runs a family's candidates (none declared: one by one, on threads).

    ``build_many(candidates, options)`` builds ``batch_size`` candidates together (e.g. one sandbox per
    hash seed; each outcome must be what building it alone gives); ``cost(candidate)`` balances the
    batches (only the schedule depends on it); ``limited(candidates, n)`` cuts them to the first ``n``
    problems (``--limit``) when a candidate holds several; ``in_processes``: build in worker processes,
    not threads, when the family's own Python work (not its sandboxed children) dominates a build."""

    batch_size: int = 1
    build_many: Callable[[list[Any], Any], list[Any]] | None = None
    cost: Callable[[Any], float] | None = None
    limited: Callable[[list[Any], int], list[Any]] | None = None
    in_processes: bool = False


@dataclass(frozen=True)
class BatchGrading(Capability):
    """``grade_many(pairs)``: the scores of several ``(task, response)`` pairs at once, each what
    ``Family.grade`` gives it (grading that runs code batches its sandbox runs)."""

    grade_many: Callable[[list[tuple[Task, str]]], list[Score]]


@dataclass(frozen=True)
class PaperScoring(Capability):
    """A peer benchmark's own scoring: the prompt ``variants`` graded by the peer's rules
    (``grade_as(task, response, variant)``, ``summarize_as(results, variant)``; both must treat any
    other variant as ``Family.grade``/``summarize`` do); the report adds that paper's tables for them,
    with the peer's item count per topic (``trace_counts``), the topic it aggregates per task
    (``task_topic``), the script rescoring its own predictions (``reproduction``) and the length it
    buckets an item by (``paper_length(answer)``, None: none)."""

    variants: tuple[str, ...]
    grade_as: Callable[[Task, str, str | None], Score]
    summarize_as: Callable[[Iterable[tuple[Task, Score]], str | None], dict[str, Any]]
    trace_counts: Mapping[str, int] = field(default_factory=dict)
    task_topic: str = ""
    reproduction: str = ""
    paper_length: Callable[[Any], int | None] | None = None


@dataclass(frozen=True)
class Mutation(Capability):
    """``adapter()`` loads the offline mutation adapter (a ``mutation.engine.Adapter``)."""

    adapter: Callable[[], Any]


@dataclass(frozen=True)
class TeacherMutation(Capability):
    """``mutate()`` loads the teacher-driven mutation of a dataset (``mutation.engine.mutate_with_teacher``)."""

    mutate: Callable[[], Callable[..., Any]]


@dataclass(frozen=True)
class Annotator(Capability):
    """``annotate()`` loads ``annotate_dataset(out, model, progress=...)`` of ``execbench build --annotator``."""

    annotate: Callable[[], Callable[..., Any]]


@dataclass(frozen=True)
class AgentBrowser(Capability):
    """``browser()`` loads the read-only repository browser of ``--mode agent`` (a class with ``for_task(task)``)."""

    browser: Callable[[], Any]


@dataclass(frozen=True)
class Licenses(Capability):
    """The license of a source's programs (``source``: a task id's second part) for dataset cards:
    ``lookup(source)`` when given, else ``by_source``; None when the family does not know it."""

    by_source: Mapping[str, str] = field(default_factory=dict)
    lookup: Callable[[str], str | None] | None = None

    def of(self, source: str) -> str | None:
        return self.lookup(source) if self.lookup is not None else self.by_source.get(source)


@dataclass(frozen=True)
class Demo(Capability):
    """The built-in sources ``execbench demo`` builds from."""

    sources: tuple[str, ...]


@dataclass(frozen=True)
class BuildReport(Capability):
    """The family's own words about a build (issue 36: ``dataset/`` and the CLI hold no family's words):
    ``record_written(outcome, context)`` is called by the build engine with each outcome as the dataset
    records it (cached or built, in candidate order), to count it into ``context.extra`` (manifest fields
    of its own); ``summary(manifest, out)`` gives the tables (``SummaryTable``) and lines ``execbench
    build`` prints after its summary of the dataset at ``out``."""

    record_written: Callable[[Any, Any], None] | None = None
    summary: Callable[[Any, Any], list[Any]] | None = None


KINDS: tuple[type[Capability], ...] = (AnalysisFacts, Slices, BuildSchedule, BatchGrading, PaperScoring, Mutation,
                                       TeacherMutation, Annotator, AgentBrowser, Licenses, Demo, BuildReport)


def find(capabilities: Iterable[Capability], kind: type[C]) -> C | None:
    """The declared capability of ``kind`` among ``capabilities``, or None."""
    return next((c for c in capabilities if type(c) is kind), None)


# -- the registration check -----------------------------------------------------------------------

def _fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` has the type ``hint`` (unions, tuples, dicts/mappings, callables, classes)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg) for arg in args)
    if hint is None or hint is type(None):
        return value is None
    if origin is collections.abc.Callable or hint is collections.abc.Callable:
        return callable(value)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(item, args[0]) for item in value)
        return len(args) == len(value) and all(_fits(item, arg) for item, arg in zip(value, args))
    if origin in (dict, collections.abc.Mapping):
        return isinstance(value, origin) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    if isinstance(hint, type):
        return isinstance(value, hint) and not (hint is int and isinstance(value, bool))
    return True  # a hint this check does not read (a type variable): the type checker's


def mistyped(value: Any) -> list[str]:
    """The fields of a capability (or a record it holds) whose value does not have the declared type."""
    hints = typing.get_type_hints(type(value), globalns=globals())
    wrong = []
    for spec in fields(value):
        field_value = getattr(value, spec.name)
        if not _fits(field_value, hints[spec.name]):
            wrong.append(f"{spec.name} ({type(field_value).__name__} is not {hints[spec.name]})")
    return wrong


def check_capabilities(owner: str, declared: Any) -> None:
    """Refuse (:class:`PluginError`, naming it) a ``capabilities`` declaration that is not a tuple of
    known capability objects, one per kind, each field of its declared type."""
    if not isinstance(declared, tuple):
        raise PluginError(f"{owner}: capabilities must be a tuple of capability objects, not "
                          f"{type(declared).__name__}")
    seen: set[type] = set()
    for item in declared:
        kind = type(item)
        if kind not in KINDS:
            raise PluginError(f"{owner}: {item!r} is not a capability (known: "
                              f"{', '.join(k.__name__ for k in KINDS)})")
        if kind in seen:
            raise PluginError(f"{owner}: capability {kind.__name__} is declared twice")
        seen.add(kind)
        wrong = mistyped(item)
        if wrong:
            raise PluginError(f"{owner}: capability {kind.__name__} has a mistyped field: {'; '.join(wrong)}")
