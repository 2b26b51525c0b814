"""The evaluation protocol, free of Inspect: prompt variants, sample records, response grading.

Everything family-specific goes through the family plug-in (``prompt`` and ``grade``), so
a new family is evaluable as soon as it has those two; this module only adds the
completion accounting of the checkpoint-state paper (001, §4 and table 4):

``response_status``
    ``completed``  the model returned something: graded, counts in C/R and C/N
    ``empty``      the request returned no text, no reasoning, and did not hit a token limit:
                   excluded from C/R, wrong in C/N
    ``error``      the request failed (transport failure, provider error, after retries):
                   excluded from C/R, wrong in C/N

Answer budgets: :func:`answer_budget` is the smallest ``max_tokens`` that cannot cut off a right
answer by construction (the family's bound on the answer's tokens, ``Family.answer_token_bound``, with
slack for layout and headroom for an envelope); the eval gives each sample at least that much
unless the user set ``--max-tokens`` (then the user's figure holds, and what it cuts off is
reported as truncated).

A completed response without a usable answer is *wrong*, not excluded. A response cut
off by the token limit (stop reason ``max_tokens``/``model_length``) or by a sample budget
(``message_limit``, ``token_limit``, ``time_limit``...: an agent that ran out of turns) is
marked ``truncated``; if no answer could be extracted from it, its extraction status becomes
``truncated`` (the answer was cut off) instead of ``no_answer`` or ``bad_envelope``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from execbench import registry
from execbench.dataset import Task, read_tasks
from execbench.contract import AgentBrowser, Family, Message, Prompt, Slices, grade_as
from execbench.grading import BAD_ENVELOPE, NO_ANSWER, TRUNCATED
from execbench.jsontypes import JSONObject
from execbench.usererror import UserError

MODES = ("direct", "cot", "agent")
COMPLETED, EMPTY, ERROR = "completed", "empty", "error"
RESPONSE_STATUSES = (COMPLETED, EMPTY, ERROR)
TRUNCATING_STOPS = ("max_tokens", "model_length")  # and any "<kind>_limit": a sample budget ran out
ACTING_STOPS = ("tool_calls",)  # an agent whose last turn was a tool call did respond


ANSWER_SLACK = 1.25  # layout the key does not have: line breaks, indentation, other spacing
ANSWER_HEADROOM = 48  # tokens around the answer: an envelope, a code fence, a short lead-in


class EvalSetupError(UserError):
    """The requested evaluation cannot be set up (unknown variant, empty dataset, ...)."""


def resolve_variant(mode: str | None, variant: str | None, family_names: Iterable[str]) -> str:
    """The prompt variant to render for every family of the dataset.

    ``--variant`` wins; otherwise ``--mode direct|cot|agent`` names the variant. ``agent``
    mode (a read-only, tool-using agent) needs families with an agent browser
    (an ``AgentBrowser`` capability) and an ``agent`` prompt variant.
    """
    names = sorted(set(family_names))
    if mode is not None and mode not in MODES:
        raise EvalSetupError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    if mode == "agent":
        unsupported = [name for name in names if not supports_agent(registry.get(name))]
        if unsupported:
            able = [f.name for f in registry.registered() if supports_agent(f)]
            raise EvalSetupError(
                f"--mode agent runs a read-only, tool-using agent in the task's repository, so it needs "
                f"{' or '.join(able) or 'agent-capable'} tasks; this dataset has {', '.join(unsupported)} tasks. "
                "Use --mode direct or --mode cot.")
    chosen = variant or mode or "direct"
    for name in names:
        known = registry.get(name).variants
        if chosen not in known:
            raise EvalSetupError(f"family {name!r} has no prompt variant {chosen!r}; known: {', '.join(known)}")
    return chosen


def _slices(family: Family) -> Slices:
    """The family's declared slice rules (none: no slice columns)."""
    return family.capability(Slices) or Slices()


def supports_agent(family: Family) -> bool:
    """Whether ``--mode agent`` can run the family: an agent browser and an agent prompt."""
    return family.capability(AgentBrowser) is not None and "agent" in family.variants


def load_tasks(dataset: str | Path, family: str | None = None) -> list[Task]:
    """The dataset's tasks (optionally one family's), checking that every family is known."""
    tasks = list(read_tasks(dataset, registry.check_record))
    if family is not None:
        if family not in registry.names():
            raise EvalSetupError(f"unknown family {family!r}; known: {', '.join(registry.names())}")
        tasks = [task for task in tasks if task.family == family]
    if not tasks:
        raise EvalSetupError(f"{dataset}: no {family + ' ' if family else ''}tasks to evaluate")
    missing = sorted({task.family for task in tasks} - set(registry.names()))
    if missing:
        raise EvalSetupError(f"{dataset}: family {', '.join(missing)} is not available in this version of execbench")
    return tasks


@dataclass(frozen=True)
class Rendered:
    task: Task
    prompt: Prompt
    variant: str

    def metadata(self) -> JSONObject:
        """Sample metadata: who the task is and which prompt protocol it was asked with."""
        task = self.task
        return {
            "family": task.family,
            "arm": task.arm,
            "source_id": task.source_id,
            "language": task.language,
            "answer_kind": task.answer_kind,
            "metrics": dict(task.metrics),
            "variant": self.variant,
            "template": self.prompt.template,
            "template_version": self.prompt.version,
            # what analysis groups by (as the family derives it), so that logs suffice without the dataset
            "topic": None, "repository": None, **_slices(registry.get(task.family)).task(task),
            "original_id": task.provenance.get("original_id"),
            "release_date": task.provenance.get("release_date"),  # the report's contamination view
        }


UNRENDERED = "unrendered"  # template of a replayed sample whose prompt could not be rendered here


def render(tasks: Iterable[Task], variant: str, replay: bool = False) -> list[Rendered]:
    """Each task's prompt for ``variant``. A prompt the family cannot render (e.g. a peer's
    prompt text that is not shipped) is a setup error; for a replay (recorded replies, no
    request is sent) the sample keeps a note in its place, template ``unrendered/<variant>``,
    and is graded under ``variant`` all the same."""
    out = []
    for task in tasks:
        try:
            prompt = registry.get(task.family).prompt(task, variant)
        except ValueError as exc:
            if not replay:
                raise EvalSetupError(f"{task.id}: variant {variant!r}: {exc}") from None
            prompt = Prompt([Message("user", f"(replayed reply; the {variant} prompt was not rendered here: {exc})")],
                            template=f"{UNRENDERED}/{variant}", version="-")
        out.append(Rendered(task, prompt, variant))
    return out


def templates(rendered: Iterable[Rendered]) -> dict[str, list[dict[str, str]]]:
    """Per family, the distinct (template, version) pairs used: for the eval-level metadata."""
    seen: dict[str, OrderedDict] = {}
    for item in rendered:
        seen.setdefault(item.task.family, OrderedDict())[(item.prompt.template, item.prompt.version)] = None
    return {family: [{"template": t, "version": v} for t, v in pairs] for family, pairs in sorted(seen.items())}


def answer_budget(task: Task) -> int:
    """Output tokens that fit a right answer to ``task`` as its prompt asks for it, with slack."""
    return math.ceil(ANSWER_SLACK * registry.get(task.family).answer_token_bound(task)) + ANSWER_HEADROOM


def sample_budget(task: Task, at_least: int | None) -> int | None:
    """A sample's ``max_tokens``: ``at_least``, raised to the task's :func:`answer_budget`
    (None: no per-sample budget, the provider's default holds)."""
    return None if at_least is None else max(at_least, answer_budget(task))


def reports_similarity(task: Task) -> bool:
    """Whether the task's family grades a similarity besides correctness (its declaration)."""
    return registry.get(task.family).has_similarity


def grade_response(
    task: Task,
    text: str | None,
    *,
    stop_reason: str | None = None,
    error: str | None = None,
    reasoning: bool = False,
    output_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    input_tokens: int | None = None,
    variant: str | None = None,
) -> JSONObject:
    """Grade one model response with the family's grader; the record logged for the sample.

    Keys: ``correct``, ``status`` (extraction status), ``extracted``, ``similarity``,
    ``details`` (the grader's), ``response_status``, ``completed``, ``truncated``,
    ``stop_reason``, ``error``, token counts, and the task's ``family``, ``arm``,
    ``source_id`` and ``metrics``; ``variant``: the prompt variant the response answers
    (``contract.grade_as``), recorded as ``variant``.
    """
    text = text or ""
    truncated = stop_reason in TRUNCATING_STOPS or (stop_reason or "").endswith("_limit")
    if error is not None and not text:
        response_status = ERROR
    elif not text.strip() and not reasoning and not truncated and stop_reason not in ACTING_STOPS:
        response_status = EMPTY
    else:
        response_status = COMPLETED
    # a variant that brings its own scoring (the trace family's coconut) grades by it
    score = grade_as(registry.get(task.family), task, text if response_status == COMPLETED else "", variant)
    status = score.status
    if response_status == COMPLETED and truncated and status in (NO_ANSWER, BAD_ENVELOPE):
        status = TRUNCATED  # cut off before an answer (or its envelope) was complete
    correct = bool(score.correct) and response_status == COMPLETED
    return {
        "correct": correct,
        "status": status,
        "extracted": score.extracted,
        "similarity": score.similarity,
        "details": dict(score.details),
        "response_status": response_status,
        "completed": response_status == COMPLETED,
        "truncated": truncated,
        "stop_reason": stop_reason,
        "error": error,
        "output_tokens": output_tokens,
        "reasoning_tokens": reasoning_tokens,
        "input_tokens": input_tokens,
        "family": task.family,
        "arm": task.arm,
        "source_id": task.source_id,
        "metrics": dict(task.metrics),
        "variant": variant,
    }
