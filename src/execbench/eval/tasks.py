"""Inspect tasks for execbench datasets: samples, the solver, the scorer and the metrics.

Imports Inspect (slow): only :mod:`execbench.eval` modules import this, lazily.

One sample per dataset task (id = task id): the family's prompt for the chosen variant as
chat messages, the oracle as the target (JSON), and the task's identity, metrics and prompt
template/version as metadata. The solver generates once (temperature 0 by default, through
Inspect's response cache) and records transport failures; the scorer grades through the
family plug-in (:func:`execbench.eval.protocol.grade_response`, the same graders
``execbench grade`` uses) and writes the grade record into the score metadata and the
sample metadata. Errored samples are scored too (``score_on_error``), so a transport
failure is in the log as ``response_status="error"`` rather than missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
)
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Metric,
    SampleScore,
    Score,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import LimitExceededError

from execbench import __version__
from execbench.dataset import Task as BenchTask
from execbench.dataset import content_hash, read_tasks
from execbench.eval import protocol
from execbench.grading.accounting import Accounting, account
from execbench.jsontypes import JSONObject

_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
CACHE_EXPIRY: str | None = None  # cached responses never expire: keys cover model, prompt and settings


# -- metrics: one observation per response (epochs are not averaged away) --------------------
def _grades(scores: list[SampleScore]) -> list[JSONObject]:
    return [score.score.metadata or {} for score in scores]


def _accounting(scores: list[SampleScore]) -> Accounting:
    return account((bool(g.get("completed")), bool(g.get("correct"))) for g in _grades(scores))


@metric(scores="unreduced")
def accuracy_completed() -> Metric:
    """C/R: correct answers over completed responses (transport failures and empty responses excluded)."""

    def compute(scores: list[SampleScore]) -> float:
        return _accounting(scores).accuracy_completed or 0.0

    return compute


@metric(scores="unreduced")
def accuracy_planned() -> Metric:
    """C/N over the scored responses: failures and empty responses count as wrong."""

    def compute(scores: list[SampleScore]) -> float:
        return _accounting(scores).accuracy_planned or 0.0

    return compute


@metric(scores="unreduced")
def completion_rate() -> Metric:
    """R/N: the share of requests that returned a response."""

    def compute(scores: list[SampleScore]) -> float:
        return _accounting(scores).completion_rate or 0.0

    return compute


@metric(scores="unreduced")
def similarity() -> Metric:
    """Mean answer similarity over the responses whose family defines one (trace: Gestalt ratio)."""

    def compute(scores: list[SampleScore]) -> float:
        values = [value for g in _grades(scores) if isinstance(value := g.get("similarity"), (int, float))]
        return sum(values) / len(values) if values else 0.0

    return compute


def metrics_for(tasks: list[BenchTask]) -> list[Metric]:
    chosen: list[Metric] = [accuracy(), stderr(), accuracy_completed(), accuracy_planned(), completion_rate()]
    seen: set[str] = set()
    for task in tasks:  # one probe per family
        if task.family not in seen:
            seen.add(task.family)
            if protocol.reports_similarity(task):
                chosen.append(similarity())
                break
    return chosen


# -- solver and scorer --------------------------------------------------------------------------
@solver
def respond(cache: bool = True) -> Any:
    """Generate once (through the response cache) and record a failed request in the metadata."""
    policy = CachePolicy(expiry=CACHE_EXPIRY) if cache else False

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.metadata.pop("error", None)
        state.metadata.pop("limit", None)
        budget = state.metadata.get("max_tokens")  # the sample's answer budget, if the task sets one
        try:
            if isinstance(budget, int):
                return await generate(state, cache=policy, max_tokens=budget)
            return await generate(state, cache=policy)
        except LimitExceededError as exc:  # a budget, not a failed request: scored as a truncated answer
            state.metadata["limit"] = f"{getattr(exc, 'type', None) or 'sample'}_limit"
            raise
        except Exception as exc:  # recorded, then Inspect retries or scores it (score_on_error)
            state.metadata["error"] = f"{type(exc).__name__}: {exc}"[:4000]
            raise

    return solve


def _usage(state: TaskState) -> tuple[int | None, int | None, int | None]:
    usage = state.output.usage if state.output is not None else None
    if usage is None:
        return None, None, None
    input_tokens = usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    return usage.output_tokens, usage.reasoning_tokens, input_tokens


def _has_reasoning(state: TaskState) -> bool:
    output = state.output
    if output is None or not output.choices:
        return False
    content = output.message.content
    return isinstance(content, list) and any(isinstance(part, ContentReasoning) and
                                              (part.reasoning or part.summary) for part in content)


@scorer(metrics=[accuracy(), stderr()])
def execbench_scorer(dataset: str, family: str | None = None) -> Any:
    """Grade through the family plug-in; record the grade in score and sample metadata.

    Takes the dataset path (not the tasks: scorer arguments are written to the log) and
    reads the oracles from it, so ``inspect score`` can re-score a log later.
    """
    tasks = {task.id: task for task in protocol.load_tasks(dataset, family)}

    async def score(state: TaskState, target: Target) -> Score:
        task = tasks[str(state.sample_id)]
        output = state.output
        has_choice = output is not None and bool(output.choices)
        output_tokens, reasoning_tokens, input_tokens = _usage(state)
        stop_reason = state.metadata.get("limit") or (output.stop_reason if has_choice else None)
        grade = protocol.grade_response(
            task,
            output.completion if output is not None else "",
            stop_reason=stop_reason,
            error=state.metadata.get("error"),
            reasoning=_has_reasoning(state),
            output_tokens=output_tokens,
            reasoning_tokens=reasoning_tokens,
            input_tokens=input_tokens,
            variant=state.metadata.get("variant"),
        )
        replayed = (output.metadata or {}).get("replay") if output is not None else None
        if replayed is not None:  # a replay file's reply, or its absence (eval/replay_model.py)
            grade["replay"] = replayed
        for key in ("correct", "status", "extracted", "similarity", "response_status", "completed",
                    "truncated", "stop_reason", "output_tokens", "reasoning_tokens"):
            state.metadata[key] = grade[key]
        explanation = f"{grade['response_status']}, extraction {grade['status']}"
        if grade["similarity"] is not None:
            explanation += f", similarity {grade['similarity']:.3f}"
        if grade["truncated"]:
            explanation += ", truncated at the token limit"
        if grade["error"]:
            explanation += f": {grade['error']}"
        return Score(
            value=CORRECT if grade["correct"] else INCORRECT,
            answer=None if grade["extracted"] is None else json.dumps(grade["extracted"]),
            explanation=explanation,
            metadata=grade,
        )

    return score


# -- the task -----------------------------------------------------------------------------------
def _messages(rendered: protocol.Rendered) -> list[ChatMessage]:
    return [_ROLES[message.role](content=message.content) for message in rendered.prompt.messages]


def build_task(
    dataset: str | Path,
    *,
    family: str | None = None,
    variant: str | None = None,
    mode: str | None = None,
    cache: bool = True,
    answer_budget: int | None = None,
    replay: bool | str = False,
) -> Task:
    """An Inspect task over a dataset directory (all its families, or just ``family``).

    ``answer_budget``: each sample's ``max_tokens`` is at least this and at least what a right
    answer to it needs (:func:`execbench.eval.protocol.sample_budget`), recorded as the sample's
    ``max_tokens`` metadata; None leaves the eval's ``max_tokens`` to every sample. (The agent's
    turns keep the eval's.) ``replay``: the model plays recorded replies back (a prompt that
    cannot be rendered is noted, not an error: :func:`execbench.eval.protocol.render`)."""
    path = Path(dataset).expanduser().resolve()
    tasks = protocol.load_tasks(path, family)
    chosen = protocol.resolve_variant(mode, variant, (task.family for task in tasks))
    rendered = protocol.render(tasks, chosen, replay=bool(replay))
    agent = mode == "agent"

    def sample_metadata(item: protocol.Rendered) -> dict[str, Any]:
        budget = None if agent else protocol.sample_budget(item.task, answer_budget)
        return {**item.metadata(), **({"max_tokens": budget} if budget is not None else {})}

    samples = [
        Sample(id=item.task.id, input=_messages(item), target=json.dumps(item.task.answer, ensure_ascii=False),
               metadata=sample_metadata(item))
        for item in rendered
    ]
    name = path.name if path.is_dir() else path.parent.name
    metadata = {
        "execbench": {
            "version": __version__,
            "dataset": {"path": str(path), "name": name, "content_hash": content_hash(read_tasks(path)),
                        "tasks": len(tasks), "families": sorted({t.family for t in tasks})},
            "variant": chosen,
            "mode": mode,
            "prompts": protocol.templates(rendered),
            "response_cache": bool(cache),
        }
    }
    policy = CachePolicy(expiry=CACHE_EXPIRY) if cache else None
    if agent:
        from execbench.eval.agent import DEFAULT_MESSAGE_LIMIT, read_only_agent

        chosen_solver = read_only_agent(dataset=str(path), family=family)
    else:
        chosen_solver = respond(cache=cache)
    return Task(
        dataset=MemoryDataset(samples, name=name, location=str(path)),
        solver=chosen_solver,
        scorer=execbench_scorer(dataset=str(path), family=family),
        metrics=[*metrics_for(tasks)],  # (a list display: Inspect's parameter is a list of a wider type)
        config=GenerateConfig(temperature=0.0, cache=policy),  # the cache covers every call, agent turns too
        score_on_error=True,
        message_limit=DEFAULT_MESSAGE_LIMIT if agent else None,
        metadata=metadata,
        version=1,
    )
