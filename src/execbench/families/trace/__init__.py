"""The ``trace`` family (CoCoNUT): predict the sequence of executed line numbers of a call.

Sources: ``humaneval`` (HumanEval-Trace), ``advanced`` (our Advanced-Trace corpora:
recursion, concurrency, object-oriented), ``coconut-advanced:PATH`` (the paper's own
Advanced-Trace programs from a local clone of its repository, ``coconut_advanced.py``),
or any directory of case directories.
Answer format and the concurrency notation: ``docs/trace-format.md``.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from execbench.dataset import Task
from execbench.contract import (AnalysisFacts, BuildContext, BuildSchedule, Candidate, Demo, Family, Licenses, Metric,
                                Mutation, Outcome, PaperScoring, Prompt, Slices)
from execbench.families.trace import build, coconut, prompt, taxonomy
from execbench.families.trace.grade import grade_trace
from execbench.families.trace.listing import program_from_prompt
from execbench.families.trace.summary import trace_summary
from execbench.grading import Score


def _mutation_adapter() -> Any:
    from execbench.families.trace.mutate import ADAPTER

    return ADAPTER


def _task_slices(task: Task) -> dict[str, str | None]:
    return {"topic": task.prompt_fields.get("topic")}


def _source_slices(source_id: str) -> dict[str, str | None]:
    """The topic: ``humaneval`` for HumanEval-Trace, else the corpus folder (``advanced/<topic>/...``)."""
    parts = source_id.split("/")
    if not source_id:
        return {}
    return {"topic": parts[0] if parts[0] == "humaneval" or len(parts) <= 2 else parts[1]}


def _grade(task: Task, response: str) -> Score:
    return grade_trace(task.answer, response)


def _summarize(results: Iterable[tuple[Task, Score]]) -> dict[str, Any]:
    return trace_summary(
        {"task_group": task.source_id, "correct": score.correct, "similarity": score.similarity,
         "status": score.status}
        for task, score in results
    )


def _grade_as(task: Task, response: str, variant: str | None) -> Score:
    if variant in coconut.VARIANTS:
        # built keys hold segments sorted; the paper's own rows (coconut_tables.py) as observed
        order = "observed" if task.provenance.get("segment_order") == "observed" else "canonical"
        return coconut.score(task.answer, response, variant, concurrent=is_concurrent(task), segments=order)
    return _grade(task, response)


def _summarize_as(results: Iterable[tuple[Task, Score]], variant: str | None) -> dict[str, Any]:
    results = list(results)
    summary = _summarize(results)
    if variant in coconut.VARIANTS:
        summary["variant"] = variant
        summary["paper"] = coconut.paper_summary(
            {"topic": task.prompt_fields.get("topic"), "task_group": task.source_id, "correct": score.correct,
             "similarity": score.similarity} for task, score in results)
    return summary


def _paper_length(answer: Any) -> int | None:
    """CoCoNUT's tables IV-V bucket a trace by its NoReps key's length (runs of a line collapsed;
    decided from the published rows: benchmarks/RESULTS.md, issue 37)."""
    if not isinstance(answer, list):
        return None
    return len(coconut.key_tokens(answer, "canonical"))


class TraceFamily(Family[dict[str, Any], build.TraceOptions]):
    name = "trace"
    version = "3"  # 2: every comprehension line event (paper convention), CPython 3.11 pinned, script view;
    # 3: each traced call starts from the directory the module left (tracing/freshcall.py, issue 22)
    variants = (*prompt.VARIANTS, *coconut.VARIANTS)  # coconut: the paper's prompts and scoring (coconut.py)
    default_options = dict(build.DEFAULT_OPTIONS)
    arms = {"trace": ("lines",)}
    has_similarity = True
    capabilities = (
        AnalysisFacts(
            layout="sequence", title="Line traces (CoCoNUT)", nav="Trace",
            paper="paper 002 tables I, II, IV, V; §V-A",
            relations_paper="paper 002 §IV-C (trace length), paper 001 methods",
            metrics=("trace_length", "cyclomatic", "loc", "answer_tokens", "concurrent_segments"),
            metric_labels=(Metric("trace_length", "trace length", term="Trace"),),
            correlation_metrics=("trace_length", "loc", "cyclomatic"), theta_metrics=("trace_length",),
            logistic_models=(("Trace", ("trace_length",)), ("Trace + LOC", ("trace_length", "loc"))),
            cell_column="topic", cell_order=("humaneval", "oop", "recursion", "concurrency"), program_text=True,
            taxonomy=taxonomy.TAXONOMY, per_task_title="CoCoNUT metrics", length_metric="trace_length",
            cell_heading="HumanEval and advanced topics"),
        Slices(task=_task_slices, source=_source_slices, program_from_prompt=program_from_prompt),
        BuildSchedule(batch_size=build.BATCH_SIZE, build_many=build.build_candidates),
        # coconut: graded by the paper's rules; the report adds its Table I/II layout
        PaperScoring(variants=coconut.VARIANTS, grade_as=_grade_as, summarize_as=_summarize_as,
                     trace_counts=coconut.PAPER_TRACES,  # the paper's traces per topic, shown beside that layout
                     task_topic="humaneval",  # Table I: HumanEval-Trace, aggregated per problem
                     reproduction="benchmarks/coconut_tables.py --advanced",  # the paper's predictions on our traces
                     paper_length=_paper_length),
        Mutation(adapter=_mutation_adapter),
        Licenses(by_source={"humaneval": "MIT (HumanEval, openai/human-eval)",
                            "advanced": "Apache-2.0 (execbench's Advanced-Trace corpus)",
                            "cruxeval": "MIT (CRUXEval, facebookresearch/cruxeval)",
                            "coconut-advanced": "none: the CoCoNUT authors' repository has no license file; "
                                                "build it from your own clone, do not redistribute"}),
        Demo(sources=("humaneval", "advanced")),
    )

    def build_candidate(self, candidate: Candidate, options: build.TraceOptions) -> Outcome:
        return build.build_candidate(candidate, options)

    def candidates(self, sources: list[str], options: build.TraceOptions,
                   context: BuildContext | None = None) -> Iterator[Candidate]:
        """The builder's candidates; then the manifest's ``settings.trace`` (how answers were made) into
        ``context``. (The engine's options: default_options updated by --set, which keeps each type.)"""
        yield from build.candidates(sources, options)
        if context is not None:
            context.settings.update(build.manifest_settings(options))

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return prompt.render(task, variant)

    def grade(self, task: Task, response: str) -> Score:
        return _grade(task, response)

    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, Any]:
        return _summarize(results)


def is_concurrent(task: Task) -> bool:
    """Scored with the paper's concurrency rule: the topic, or a segment in the answer."""
    return task.prompt_fields.get("topic") == coconut.CONCURRENCY or any(isinstance(x, list) for x in task.answer)


FAMILY = TraceFamily()
