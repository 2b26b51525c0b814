"""Offline mutation of ``state`` cases: mutated program + perturbed short/long inputs,
re-run, re-instrumented and re-admitted by the state family's own ``build_candidate``.

A unit is one case (its four arms). The original candidate payload is taken from the
family's own ``candidates()`` for the original build's sources when they still hold the
same program and inputs (so C++ toolchains, networkx preloads and bands come along);
otherwise it is rebuilt from the tasks. The mutant keeps the question: the same loop
(its line mapped through removed comment lines) and the same checkpoint fields (never
renamed), with the inside iteration recomputed by the family (``total // 2 + 1``) for
the new input. Program operators are Python-only; C++ cases get perturbed inputs only.

Each attempt draws a program variant (the last one perturbs no constants) and fresh
inputs, and is built with ``selection_repeats`` hash seeds; the attempt whose tasks
change the most arms wins (ties: the earlier). The winner is rebuilt with the original
build options; what that build admits is written, all four arms or none.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import NotRequired, TypedDict, cast

from execbench.contract import Candidate
from execbench.dataset import Task
from execbench.contract.jsontypes import JSONValue
from execbench.families.state.records import Checkpoint, StatePayload
from execbench.mutation import engine
from execbench.mutation.inputs import perturb_stdin
from execbench.mutation.program import MutationError, MutationSummary, ProgramMutation



def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _same_answer(a: JSONValue, b: JSONValue) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _mutated_source_id(source_id: str) -> str:
    source, _, rest = source_id.partition("/")
    return f"{engine.mutated_source(source)}/{rest}"


class Attempt(TypedDict):
    """One attempt of a unit, in its ``mutation_log.jsonl`` record."""

    attempt: int
    status: NotRequired[str]  # "admitted" | "rejected" | "error"
    variant: NotRequired[int]
    program_operators: NotRequired[list[str]]
    input_changed: NotRequired[list[bool]]  # [short, long]
    stage: NotRequired[str]
    reason: NotRequired[str]
    changed: NotRequired[list[str]]  # the arms whose answer the mutant changes


class LoggedPayload(TypedDict):
    """The winning mutant's case, in its unit's log record."""

    source: str
    case: str
    language: str
    program: str
    short: str
    long: str
    checkpoint: Checkpoint | None


class UnitLog(TypedDict):
    """A unit's ``mutation_log.jsonl`` record."""

    kind: str
    unit: str
    family: str
    mode: str
    seed: int
    payload_from: str | None  # "candidates" | "tasks" | "missing"
    attempts: list[Attempt]
    seconds: float
    program: NotRequired[MutationSummary]  # ProgramMutation.describe()
    payload: NotRequired[LoggedPayload]


@dataclass
class _Best:
    """The admitted attempt that changes the most arms."""

    score: int  # arms whose answer it changes
    attempt: int
    payload: StatePayload
    mutation: ProgramMutation
    changed: dict[str, bool]


class StateAdapter:
    family = "state"

    def units(self, tasks: list[Task], ctx: engine.Context) -> list[engine.Unit]:
        groups: dict[tuple[str, str], list[Task]] = {}
        for task in tasks:
            source, case = task.provenance.get("case_source"), task.provenance.get("case")
            if not source or not case:
                parts = ctx.family.parse_id(task.id)
                source, case = parts.source, parts.case
            groups.setdefault((source, case), []).append(task)
        originals = ctx.original_candidates()
        units = []
        for (source, case), group in groups.items():
            group.sort(key=lambda t: list(ctx.family.arms).index(t.arm))
            key = f"{source}/{case}"
            payload, origin = self._payload(source, case, group, originals)
            units.append(engine.Unit(key=key, family="state", originals=group,
                                     data={"payload": payload, "payload_from": origin}))
        return units

    @staticmethod
    def _payload(source: str, case: str, group: list[Task], originals: dict[str, Candidate]
                 ) -> tuple[StatePayload | None, str]:
        prov = group[0].provenance
        candidate = originals.get(f"{source}/{case}")
        if candidate is not None and "error" not in candidate.payload:
            p = cast(StatePayload, candidate.payload)  # build.candidates() made it
            if (_sha(p["program"]), _sha(p["short"]), _sha(p["long"])) == (
                    prov.get("program_sha256"), prov.get("short_input_sha256"), prov.get("long_input_sha256")):
                return p.copy(), "candidates"
        arms = {t.arm: t for t in group}
        short, long = arms.get("short-trace-final"), arms.get("long-trace-final")
        if short is None or long is None:
            return None, "missing"
        payload: StatePayload = {
            "source": source, "case": case,
            "language": "cpp" if short.language == "cpp" else "python",
            "program": short.prompt_fields["program"], "short": short.prompt_fields["input"],
            "long": long.prompt_fields["input"], "checkpoint": None, "topic": prov.get("topic"),
            "compare": short.provenance.get("compare", "tokens"), "source_id": short.source_id, "files": {},
        }
        if short.language == "cpp":
            from execbench.families.state.jobs import toolchain

            payload["toolchain"] = toolchain()
        return payload, "tasks"

    # -- one case ----------------------------------------------------------------------------
    def _variants(self, ctx: engine.Context, python: bool) -> list[engine.ProgramVariant]:
        ops = set(ctx.settings.operators)
        if not python or not ops & {"rename", "literals", "strip-comments"}:
            return [{"variant": 0, "program": False}]
        return engine.operator_variants(ops, {"program": True, "rename": "rename" in ops,
                                              "strip_comments": "strip-comments" in ops})

    def mutate(self, unit: engine.Unit, ctx: engine.Context) -> engine.UnitResult:
        started = time.perf_counter()
        payload0: StatePayload | None = unit.data.get("payload")
        if payload0 is None:
            raise MutationError("the dataset lacks this case's short/long-trace-final tasks and its source is gone")
        originals = {t.arm: t for t in unit.originals}
        checkpoint0 = unit.originals[0].provenance.get("checkpoint") or payload0.get("checkpoint") or {}
        fields = list(checkpoint0.get("fields") or [])
        core = list(checkpoint0.get("core") or fields)
        if not fields or "loop_line" not in checkpoint0:
            raise MutationError("the original tasks record no checkpoint (loop_line, fields)")
        python = payload0["language"] == "python"
        protected = {f.split(".")[0] for f in fields}
        selection = {**ctx.options, "repeats": min(int(ctx.options.get("repeats", 1)), ctx.settings.selection_repeats)}
        variants = self._variants(ctx, python)
        inputs = "inputs" in ctx.settings.operators
        attempts_log: list[Attempt] = []
        best: _Best | None = None
        attempt = 0
        for attempt in range(ctx.settings.attempts):
            variant = variants[min(attempt, len(variants) - 1)]
            pm = ctx.mutate_program(payload0["program"], unit.key, variant, protected) if variant["program"] \
                else ProgramMutation(text=payload0["program"])
            loop_line = pm.new_line(int(checkpoint0["loop_line"])) if python else int(checkpoint0["loop_line"])
            if loop_line is None:
                attempts_log.append({"attempt": attempt, "status": "error", "reason": "the loop line was removed"})
                continue
            payload = self._mutant_payload(payload0, pm, loop_line, fields, core, unit.key, ctx, attempt, inputs)
            outcome = ctx.build(unit.key, dict(payload), selection)
            entry: Attempt = {"attempt": attempt, "variant": variant["variant"], "program_operators": pm.operators,
                              "input_changed": [payload["short"] != payload0["short"],
                                                payload["long"] != payload0["long"]]}
            if not outcome.tasks:
                rejection = outcome.rejected[0] if outcome.rejected else {"stage": "?", "reason": "not admitted"}
                entry["status"], entry["stage"], entry["reason"] = "rejected", rejection["stage"], rejection["reason"][:300]
                attempts_log.append(entry)
                continue
            changed = {t["arm"]: not _same_answer(t["answer"], originals[t["arm"]].answer)
                       for t in outcome.tasks if t["arm"] in originals}
            entry["status"], entry["changed"] = "admitted", sorted(a for a, c in changed.items() if c)
            attempts_log.append(entry)
            score = sum(changed.values())
            if best is None or score > best.score:
                best = _Best(score, attempt, payload, pm, changed)
            if score == len(originals):
                break
        return self._finish(unit, ctx, originals, best, attempts_log, attempt + 1, started)

    @staticmethod
    def _mutant_payload(payload0: StatePayload, pm: ProgramMutation, loop_line: int, fields: list[str],
                        core: list[str], key: str, ctx: engine.Context, attempt: int, inputs: bool) -> StatePayload:
        payload = payload0.copy()
        payload["source"] = engine.mutated_source(payload0["source"])
        payload["source_id"] = _mutated_source_id(payload0["source_id"])
        payload["program"] = pm.text
        payload["checkpoint"] = {"loop_line": loop_line, "fields": fields, "inside_iteration": None, "core": core}
        if inputs:
            payload["short"] = perturb_stdin(payload0["short"], ctx.rng(key, "short", attempt))
            payload["long"] = perturb_stdin(payload0["long"], ctx.rng(key, "long", attempt))
        return payload

    def _finish(self, unit: engine.Unit, ctx: engine.Context, originals: dict[str, Task],
                best: _Best | None, attempts_log: list[Attempt], attempts: int, started: float) -> engine.UnitResult:
        result = engine.UnitResult()
        outcome = ctx.build(unit.key, dict(best.payload)) if best is not None else None
        final_tasks = {t["arm"]: t for t in outcome.tasks} if outcome is not None else {}
        final_reason = None
        if outcome is not None:
            if not final_tasks:
                rejection = outcome.rejected[0] if outcome.rejected else {"stage": "?", "reason": "not admitted"}
                final_reason = f"final build rejected the mutant ({rejection['stage']}): {rejection['reason']}"
        seconds = time.perf_counter() - started
        unit_log: UnitLog = {"kind": "unit", "unit": unit.key, "family": "state", "mode": "offline",
                             "seed": ctx.settings.seed, "payload_from": unit.data.get("payload_from"),
                             "attempts": attempts_log, "seconds": round(seconds, 3)}
        if best is not None:
            p = best.payload
            unit_log["program"] = best.mutation.describe()
            unit_log["payload"] = {"source": p["source"], "case": p["case"], "language": p["language"],
                                   "program": p["program"], "short": p["short"], "long": p["long"],
                                   "checkpoint": p["checkpoint"]}
        result.log.append(dict(unit_log))
        common = {"mode": "offline", "attempts": attempts, "seconds": seconds, "seed": ctx.settings.seed}
        for arm, original in originals.items():
            record = final_tasks.get(arm)
            if record is None:
                if best is None:
                    last = next((a.get("reason") for a in reversed(attempts_log) if a.get("reason")), "no admitted mutant")
                    reason = f"no admitted mutant in {attempts} attempts; last: {last}"
                else:
                    reason = final_reason or "the final build did not produce this arm"
                result.rejected.append({"candidate": original.id, "stage": "mutation", "reason": reason[:500]})
                result.log.append(engine.task_log(original, status="failed", reason=reason[:500], **common))
                continue
            assert best is not None
            payload, pm = best.payload, best.mutation
            changed = not _same_answer(record["answer"], original.answer)
            operators = list(pm.operators) + (["inputs"] if (payload["short"], payload["long"]) != (
                unit.data["payload"]["short"], unit.data["payload"]["long"]) else [])
            if not changed and not ctx.settings.keep_unchanged:
                reason = "the admitted mutant leaves this answer unchanged (dropped)"
                result.rejected.append({"candidate": original.id, "stage": "unchanged", "reason": reason})
                result.log.append(engine.task_log(original, status="dropped", answer_changed=False, reason=reason,
                                                  operators=operators, **common))
                continue
            mutation = {"mode": "offline", "seed": ctx.settings.seed, "attempt": best.attempt, "operators": operators,
                        "answer_changed": changed}
            linked = engine.link(record, original, mutation)
            result.tasks.append(linked)
            result.log.append(engine.task_log(original, status="admitted" if changed else "flagged",
                                              mutant_id=linked["id"], answer_changed=changed, operators=operators,
                                              **common))
        return result


ADAPTER = StateAdapter()
