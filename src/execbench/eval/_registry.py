"""Inspect entry point (``[project.entry-points.inspect_ai] execbench``): the execbench tasks.

    inspect eval execbench/trace --model openai/gpt-4o -T dataset=path/to/dataset
    inspect eval execbench/all   --model ... -T dataset=... -T variant=cot

One task per family plug-in (``execbench/<family>``: that family's tasks of the dataset)
and ``execbench/all`` (every task of the dataset). Task arguments: ``dataset`` (required),
``variant`` (any prompt variant of the families, default ``direct``), ``mode``
(``direct``/``cot``; ``variant`` wins), ``cache`` (response cache, default true),
``answer_budget`` (each sample's ``max_tokens`` is at least this and at least what its answer
needs, e.g. ``-T answer_budget=0``; default: the eval's ``max_tokens`` for every sample) and
``replay`` (the model replays recorded replies: an unrenderable prompt is noted, not an error;
``execbench eval`` passes the file's sha256, so a changed file is a new task of an eval set).
A family added to :mod:`execbench.families` gets its task here with no other change.
Importing this module also registers the ``replay`` model provider
(``inspect eval execbench/all --model replay/NAME -M file=PATH.jsonl -T dataset=...``).
"""

from __future__ import annotations

from typing import Callable

from inspect_ai import Task, task

from execbench import registry
from execbench.eval import replay_model  # noqa: F401 - registers the ``replay`` provider for `inspect eval`
from execbench.eval.tasks import build_task


def _make(family: str | None) -> Callable[..., Task]:
    def family_task(dataset: str, variant: str | None = None, mode: str | None = None, cache: bool = True,
                    answer_budget: int | None = None, replay: bool | str = False) -> Task:
        return build_task(dataset, family=family, variant=variant, mode=mode, cache=cache,
                          answer_budget=answer_budget, replay=replay)

    name = family or "all"
    family_task.__name__ = family_task.__qualname__ = name
    family_task.__doc__ = (f"execbench {family} tasks of a dataset directory." if family
                           else "Every task of an execbench dataset directory, whatever its family.")
    return task(name=name)(family_task)


TASKS: dict[str, Callable[..., Task]] = {name: _make(name) for name in registry.names()}
TASKS["all"] = _make(None)
globals().update(TASKS)


def task_for(family: str | None) -> Callable[..., Task]:
    """The registered task function for one family (``None``: the whole dataset)."""
    return TASKS["all" if family is None else family]


__all__ = ["TASKS", "task_for", *TASKS]  # noqa: PLE0604 - task names come from the family registry
