"""Difficulty labels (RepoReason §4.2): an annotator model labels each task Easy, Medium or
Hard from the task text. Without an annotator no label is written (never guessed).

``execbench build repo ... --annotator MODEL`` runs :func:`annotate_dataset` after the build:
one pass over the finished dataset, so labels never enter the build cache (changing the
annotator re-runs no test) and a local model's server starts once. ``MODEL`` is any Inspect
AI model or ``local`` / ``local/PATH.gguf`` (execbench's llama.cpp server), reached through
:func:`execbench.models.teacher.open_teacher`; replies go through Inspect's response cache.
Each labelled task gets ``provenance.difficulty = {"label", "annotator"}`` and
``metrics.difficulty`` (1/2/3); a reply that names no label leaves the task unlabelled, a
failed request leaves it as it was, both counted in the manifest's ``annotation``; when
every request fails the dataset is not touched. The paper's appendix I prompt is not in our
copy of the paper; :data:`RUBRIC` restates its §4.2 rubric.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, TypedDict

from execbench.contract.jsontypes import JSONObject, JSONValue
from execbench.dataset import DatasetWriter, Task, load_manifest, read_rejected, read_tasks

if TYPE_CHECKING:
    from execbench.models.teacher import Reply, Teacher

LABELS = ("Easy", "Medium", "Hard")
RUBRIC = """You are grading how hard a code-reasoning task is for an AI model.
The task: predict the value that fills the blank '___' in a unit-test assertion of the Python library {library}.

Classify the task by AI reasoning complexity:
- Easy: basic Python knowledge, direct code reading, minimal state tracking.
- Medium: non-trivial API behavior, simple state mutations, control flow loops.
- Hard: deep domain knowledge, multi-layer dependencies, extensive state tracking, or metaprogramming.

Test function (the blank marked '# Question'):
```python
{test_source}```
Blank assertion: {blank}
Correct answer: {answer}

Reply with exactly one word: Easy, Medium or Hard."""


class AnnotatedTask(TypedDict):
    """What the rubric shows of a task (a task record's JSON form, ``Task.to_json()``, has it)."""

    prompt_fields: Mapping[str, JSONValue]  # library, test_source, masked_assertion
    answer: JSONValue


def annotation_prompt(task: AnnotatedTask) -> str:
    fields = task["prompt_fields"]
    return RUBRIC.format(library=fields.get("library", ""), test_source=fields["test_source"],
                         blank=fields["masked_assertion"], answer=task["answer"])


def parse_label(text: str) -> str | None:
    found = re.findall(r"\b(Easy|Medium|Hard)\b", text or "", re.I)
    return found[-1].capitalize() if found else None


LEVEL = {"Easy": 1, "Medium": 2, "Hard": 3}
ProgressFn = Callable[[int, int], None]  # done, total


def labelled(task: Task, label: str | None, annotator: str) -> Task:
    """``task`` with this annotator's label, or with no label when ``label`` is None (a label
    from an earlier annotation is replaced either way)."""
    provenance = {k: v for k, v in task.provenance.items() if k != "difficulty"}
    metrics = {k: v for k, v in task.metrics.items() if k != "difficulty"}
    if label is not None:
        provenance["difficulty"] = {"label": label, "annotator": annotator}
        metrics["difficulty"] = LEVEL[label]
    return dataclasses.replace(task, provenance=provenance, metrics=metrics)


async def _label_all(model: Teacher, tasks: list[Task], connections: int, progress: ProgressFn | None
                     ) -> list[Reply]:
    gate = asyncio.Semaphore(max(1, connections))
    done = 0

    async def one(task: Task) -> Reply:
        nonlocal done
        async with gate:
            shown: AnnotatedTask = {"prompt_fields": task.prompt_fields, "answer": task.answer}
            reply = await model.generate([("user", annotation_prompt(shown))])
        done += 1
        if progress:
            progress(done, len(tasks))
        return reply

    return await asyncio.gather(*(one(task) for task in tasks))


def annotate_dataset(directory: str | Path, annotator: str, *, connections: int = 4, cache: bool = True,
                     progress: ProgressFn | None = None) -> JSONObject:
    """Label every repo task of the dataset at ``directory`` in place; returns the new manifest.
    ``cache``: Inspect's response cache (a repeated annotation costs no requests)."""
    from execbench.models.teacher import open_teacher

    started = time.perf_counter()
    manifest = load_manifest(directory)
    tasks = list(read_tasks(directory))
    rejected = list(read_rejected(directory))
    others = [t.id for t in tasks if t.family != "repo"]
    if others:
        raise ValueError(f"difficulty labels are for repo tasks; {len(others)} others, e.g. {others[0]}")
    with open_teacher(annotator, temperature=0.0, max_tokens=16, cache=cache,
                      parallel=min(connections, 4)) as model:
        replies = asyncio.run(_label_all(model, tasks, connections, progress))
    errors = [reply.error for reply in replies if reply.error]
    if tasks and len(errors) == len(tasks):
        raise ValueError(f"every request to {annotator} failed (dataset unchanged); first: {errors[0]}")
    labels = [parse_label(reply.text) for reply in replies]
    counts = Counter("error" if reply.error else (label or "none") for reply, label in zip(replies, labels))
    settings = {**(manifest.settings if manifest else {}), "annotator": annotator}
    # the build's own fields; tasks_by_release counts the same tasks and rejections, rewritten unchanged
    kept = ("candidates", "build_seconds", "cache", "tasks_by_release")
    extra = {key: manifest.extra[key] for key in kept if manifest and key in manifest.extra}
    with DatasetWriter(directory, settings=settings) as writer:
        for task, label, reply in zip(tasks, labels, replies):
            writer.add(task if reply.error else labelled(task, label, annotator))  # a failed request changes nothing
        for record in rejected:
            writer.reject(**record)
        return writer.close(**extra, annotation={
            "annotator": annotator, "labels": dict(sorted(counts.items())), "errors": len(errors),
            "first_error": errors[0] if errors else None, "seconds": round(time.perf_counter() - started, 3)})
