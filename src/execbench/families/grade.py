"""Grading a whole dataset against a file of raw model responses (``execbench grade``).

Each task is graded by its family's ``grade`` (which never executes the response); a task
without a response is a wrong answer with status ``no_answer``. Summaries are per family.
The caller hands over ``family_of`` (name → plug-in: the registry's ``get``, ``execbench.registry``):
this engine sits below the family folders and looks none up by name itself (docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable, Iterator

from execbench.dataset import Task
from execbench.contract import BatchGrading, Family, PaperScoring, grade_as, summarize_as
from execbench.grading import Score


FamilyOf = Callable[[str], Family]  # a family's name → its plug-in


def grade_tasks(tasks: Iterable[Task], answers: dict[str, str], variant: str | None = None, *,
                family_of: FamilyOf) -> Iterator[tuple[Task, Score]]:
    """Scores of every task; ``variant``: grade as that prompt variant scores (``contract.grade_as``)."""
    tasks = list(tasks)
    batched = _grade_batches([t for t in tasks if not _own_rules(family_of(t.family), variant)], answers, family_of)
    for task in tasks:
        response = answers.get(task.id)
        if response is None:
            yield task, Score(correct=False, status="no_answer", extracted=None,
                              similarity=0.0 if family_of(task.family).has_similarity else None,
                              details={"reason": "no response for this task"})
        elif task.id in batched:
            yield task, batched[task.id]
        elif _own_rules(family_of(task.family), variant):
            yield task, grade_as(family_of(task.family), task, response, variant)
        else:
            yield task, family_of(task.family).grade(task, response)


def _own_rules(family: Family, variant: str | None) -> bool:
    """Whether the family grades ``variant`` by rules of its own (it declares :class:`PaperScoring`)."""
    return variant is not None and family.capability(PaperScoring) is not None


def _grade_batches(tasks: list[Task], answers: dict[str, str], family_of: FamilyOf) -> dict[str, Score]:
    """Scores from families declaring :class:`BatchGrading` (cruxeval: grading that runs code batches
    its sandbox runs)."""
    groups: dict[str, tuple[BatchGrading, list[Task]]] = {}
    for task in tasks:
        batch = family_of(task.family).capability(BatchGrading) if task.id in answers else None
        if batch is not None:
            groups.setdefault(task.family, (batch, []))[1].append(task)
    return {task.id: score for batch, group in groups.values()
            for task, score in zip(group, batch.grade_many([(t, answers[t.id]) for t in group]), strict=True)}


def result_record(task: Task, score: Score) -> dict[str, Any]:
    return {
        "id": task.id,
        "family": task.family,
        "arm": task.arm,
        "source_id": task.source_id,
        "correct": score.correct,
        "status": score.status,
        "similarity": score.similarity,
        "extracted": score.extracted,
        "metrics": task.metrics,
    }


def flat_metrics(metrics: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of a family summary, nested tables flattened (``paper.table_1.sim``)."""
    for key, value in metrics.items():
        if isinstance(value, dict):
            yield from flat_metrics(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def summarize(results: list[tuple[Task, Score]], variant: str | None = None, *, family_of: FamilyOf
              ) -> dict[str, Any]:
    by_family: dict[str, list[tuple[Task, Score]]] = defaultdict(list)
    for task, score in results:
        by_family[task.family].append((task, score))
    n = len(results)
    return {
        "n": n,
        "accuracy": sum(score.correct for _, score in results) / n if n else None,
        "variant": variant,
        "families": {name: summarize_as(family_of(name), rows, variant) for name, rows in sorted(by_family.items())},
    }
