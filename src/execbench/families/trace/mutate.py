"""Offline mutation of ``trace`` tasks: mutated program + perturbed calls (or stdin),
re-traced and re-admitted by the trace family's own ``build_candidate``.

A unit is one program with its admitted calls (the tasks sharing a ``source_id``). Per
attempt the program is mutated (rename, literals, comments; the same mutated program for
all calls of the unit) and every call that has no answer-changing mutant yet gets freshly
perturbed arguments; the candidate is then built by the family with one hash seed
(``selection_repeats``). When the program itself fails (module error, or no call
admitted) the next program variant is tried; the last variant perturbs no program
constants. Once every call has an answer-changing mutant, or the attempts are spent, the
chosen calls are built once more with the original build options (all hash seeds): only
what that final build admits is written.

"Answer changed" compares the mutant's line trace, mapped back through the line map of
removed comment lines, with the original's: renaming alone never counts as a change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass
from typing import Any, Literal, Mapping, NotRequired, TypedDict

from execbench.dataset import Task
from execbench.mutation import engine
from execbench.mutation.inputs import argument_donors, call_names, perturb_call, perturb_stdin, vocabulary
from execbench.mutation.program import MutationError, ProgramMutation


class _UnitPayload(TypedDict):
    """The payload fields every build of a unit shares (``program`` and ``runs`` vary)."""

    source: str
    case: str
    mode: str
    topic: str
    entry_point: NotRequired[str]
    stdin_files: NotRequired[list[str | None]]


class _Try(TypedDict):
    """One attempt at one call (a mutation log's ``history`` entry)."""

    attempt: int
    status: Literal["error", "rejected", "admitted"]
    reason: NotRequired[str]
    answer_changed: NotRequired[bool]
    call: NotRequired[str]  # the run tried: a call, or a script's stdin
    stdin: NotRequired[str]


class _Attempt(TypedDict):
    """One selection build of a unit (the unit log's ``attempts``)."""

    attempt: int
    variant: int
    program_operators: list[str]
    admitted: int
    changed: int
    module_error: str | None


class _Common(TypedDict):
    """The fields of every task log record of a unit (:func:`engine.task_log`)."""

    mode: str
    attempts: int
    seconds: float
    history: list[_Try]
    seed: int


def _tried(entry: _Try, field: str, run: str) -> _Try:
    """``entry`` with the run it tried, under ``field`` (``call`` or ``stdin``)."""
    if field == "call":
        entry["call"] = run
    else:
        entry["stdin"] = run
    return entry


@dataclass
class _Choice:
    attempt: int
    run: str
    record: Mapping[str, object]  # the task the selection build admitted
    changed: bool
    alternatives: list["_Choice"] = dataclasses.field(default_factory=list)  # other admitted mutants of the call


def map_lines(answer: Any, old_line: Any) -> Any:
    """Map every line number of a (possibly nested) trace through ``old_line``."""
    if isinstance(answer, list):
        return [map_lines(item, old_line) for item in answer]
    return old_line(answer) if isinstance(answer, int) else answer


class TraceAdapter:
    family = "trace"

    def units(self, tasks: list[Task], ctx: engine.Context) -> list[engine.Unit]:
        groups: dict[tuple[str, str], list[Task]] = {}
        for task in tasks:
            program = task.prompt_fields.get("program", "")
            digest = task.provenance.get("program_sha256") or hashlib.sha256(program.encode()).hexdigest()
            groups.setdefault((task.source_id, digest), []).append(task)
        units = []
        names: set[str] = set()
        for (source_id, digest), group in groups.items():
            group.sort(key=lambda t: (t.provenance.get("run_index", 0), t.id))
            key = source_id if source_id not in names else f"{source_id}@{digest[:8]}"
            names.add(key)
            units.append(engine.Unit(key=key, family="trace", originals=group))
        return units

    # -- one unit --------------------------------------------------------------------------------
    def _variants(self, ctx: engine.Context) -> list[engine.ProgramVariant]:
        ops = set(ctx.settings.operators)
        return engine.operator_variants(ops, {"rename": "rename" in ops, "strip_comments": "strip-comments" in ops})

    def mutate(self, unit: engine.Unit, ctx: engine.Context) -> engine.UnitResult:
        started = time.perf_counter()
        originals = unit.originals
        first = originals[0]
        source, case = engine.split_source_id(first.source_id)
        mode = first.provenance.get("mode", "calls")
        field = "call" if mode == "calls" else "stdin"
        program = first.prompt_fields["program"]
        runs = [t.prompt_fields[field] for t in originals]
        entry = first.prompt_fields.get("entry_point")
        protected = (call_names(runs) | ({entry} if entry else set())) if mode == "calls" else set()
        try:
            vocab = vocabulary(program)
        except MutationError:
            vocab = None
        donors = argument_donors(runs) if mode == "calls" else {}
        base: _UnitPayload = {"source": engine.mutated_source(source), "case": case, "mode": mode,
                              "topic": first.prompt_fields.get("topic", source)}
        if entry:
            base["entry_point"] = entry
        if mode != "calls":
            base["stdin_files"] = [t.provenance.get("stdin_file") for t in originals]
        selection = {**ctx.options, "repeats": min(ctx.options.get("repeats", 1), ctx.settings.selection_repeats)}
        history: list[list[_Try]] = [[] for _ in runs]
        attempts_log: list[_Attempt] = []
        perturb_inputs = "inputs" in ctx.settings.operators
        budget = ctx.settings.attempts
        attempt = 0
        phases: list[tuple[ProgramMutation, list[_Choice | None]]] = []
        variants = self._variants(ctx)
        for number, variant in enumerate(variants):
            if attempt >= budget:
                break
            pm = ctx.mutate_program(program, unit.key, variant, protected)
            if any(pm.text == earlier.text for earlier, _ in phases):
                continue  # e.g. no constant could be perturbed: the variants coincide
            best: list[_Choice | None] = [None] * len(runs)
            phases.append((pm, best))
            stale = 0  # consecutive attempts that found no new answer-changing mutant
            probing = True
            while attempt < budget:
                run_list = self._runs(runs, best, unit, ctx, attempt, mode, vocab, donors, history, perturb_inputs)
                payload = {**base, "program": pm.text, "runs": run_list}
                outcome = ctx.build(unit.key, payload, selection)
                changed_before = sum(1 for b in best if b and b.changed)
                admitted = self._score(outcome, unit, originals, pm, run_list, best, history, attempt, field)
                attempts_log.append({"attempt": attempt, "variant": variant["variant"], "program_operators": pm.operators,
                                     "admitted": admitted, "changed": sum(1 for b in best if b and b.changed),
                                     "module_error": next((r["reason"] for r in outcome.rejected
                                                           if r["candidate"] == unit.key), None)})
                attempt += 1
                last_variant = number == len(variants) - 1
                if probing and not last_variant and admitted * 2 < len(runs) and budget - attempt >= 1:
                    break  # the mutated program itself breaks most calls: try the next (safer) variant
                probing = False
                if all(b is not None and b.changed for b in best):
                    break
                stale = 0 if sum(1 for b in best if b and b.changed) > changed_before else stale + 1
                if stale >= ctx.settings.patience and any(b is not None for b in best):
                    break  # inputs keep leaving the remaining answers unchanged: they likely cannot change
            if sum(1 for b in best if b is not None) * 2 >= len(runs):
                break  # this program variant works: keep it
        pm, best = max(phases, key=lambda p: (sum(1 for b in p[1] if b and b.changed),
                                             sum(1 for b in p[1] if b is not None)))
        return self._finish(unit, ctx, originals, base, pm, best, history, attempts_log, attempt, field,
                            runs, time.perf_counter() - started)

    @staticmethod
    def _runs(runs: list[str], best: list[_Choice | None], unit: engine.Unit, ctx: engine.Context, attempt: int,
              mode: str, vocab: Any, donors: dict, history: list[list[_Try]],
              perturb_inputs: bool) -> list[str]:
        """This attempt's runs: kept answer-changing ones, freshly perturbed others (no two equal)."""
        out: list[str] = []
        for i, run in enumerate(runs):
            choice = best[i]
            if choice is not None and choice.changed:
                out.append(choice.run)
                continue
            if not perturb_inputs:
                out.append(run)
                continue
            new = run
            for retry in range(5):
                rng = ctx.rng(unit.key, "input", attempt, i, retry)
                try:
                    new = (perturb_call(run, rng, vocab or frozenset(), donors) if mode == "calls"
                           else perturb_stdin(run, rng))
                except MutationError as exc:
                    history[i].append({"attempt": attempt, "status": "error", "reason": str(exc)})
                    new = run
                    break
                if new not in out:
                    break
            out.append(new)
        return out

    @staticmethod
    def _score(outcome: Any, unit: engine.Unit, originals: list[Task], pm: ProgramMutation, run_list: list[str],
               best: list[_Choice | None], history: list[list[_Try]], attempt: int, field: str) -> int:
        """Record one selection build per original; update ``best``; return how many were admitted."""
        by_index = {t["provenance"]["run_index"]: t for t in outcome.tasks}
        reasons = {r["candidate"]: r["reason"] for r in outcome.rejected}
        module_reason = reasons.get(unit.key)
        for i, original in enumerate(originals):
            record = by_index.get(i)
            if record is None:
                reason = reasons.get(f"{unit.key}#{i}") or module_reason or "not admitted"
                history[i].append(_tried({"attempt": attempt, "status": "rejected", "reason": reason}, field,
                                         run_list[i]))
                continue
            changed = map_lines(record["answer"], pm.old_line) != original.answer
            history[i].append(_tried({"attempt": attempt, "status": "admitted", "answer_changed": changed}, field,
                                     run_list[i]))
            current = best[i]
            choice = _Choice(attempt, run_list[i], record, changed)
            if current is None or (changed and not current.changed):
                best[i] = choice
                choice.alternatives = [current, *current.alternatives] if current else []
            elif current is not None:
                current.alternatives.append(choice)
        return len(by_index)

    @staticmethod
    def _distinct(best: list[_Choice | None]) -> None:
        """Two calls whose chosen mutants coincide (found in different attempts) would be a
        duplicate for the family: the later one takes its best distinct alternative."""
        taken: set[str] = set()
        for i, choice in enumerate(best):
            if choice is None:
                continue
            if choice.run in taken:
                options = sorted((c for c in choice.alternatives if c.run not in taken),
                                 key=lambda c: (not c.changed, c.attempt))
                best[i] = choice = options[0] if options else None
            if choice is not None:
                taken.add(choice.run)

    def _finish(self, unit: engine.Unit, ctx: engine.Context, originals: list[Task], base: _UnitPayload,
                pm: ProgramMutation, best: list[_Choice | None], history: list[list[_Try]],
                attempts_log: list[_Attempt], attempts: int, field: str, runs: list[str],
                selection_seconds: float) -> engine.UnitResult:
        started = time.perf_counter()
        result = engine.UnitResult()
        self._distinct(best)
        picked = {i: b for i, b in enumerate(best) if b is not None and (b.changed or ctx.settings.keep_unchanged)}
        chosen = list(picked)
        final: dict[int, Mapping[str, object]] = {}
        final_reasons: dict[int, str] = {}
        payload = {**base, "program": pm.text, "runs": [picked[i].run for i in chosen]}
        if chosen:
            outcome = ctx.build(unit.key, payload)
            by_index = {t["provenance"]["run_index"]: t for t in outcome.tasks}
            reasons = {r["candidate"]: r["reason"] for r in outcome.rejected}
            for position, i in enumerate(chosen):
                if position in by_index:
                    final[i] = by_index[position]
                else:
                    final_reasons[i] = reasons.get(f"{unit.key}#{position}") or reasons.get(unit.key) or "not admitted"
        seconds = selection_seconds + time.perf_counter() - started
        result.log.append({"kind": "unit", "unit": unit.key, "family": "trace", "mode": "offline",
                           "seed": ctx.settings.seed, "attempts": attempts_log, "program": pm.describe(),
                           "payload": payload, "seconds": round(seconds, 3)})
        for i, original in enumerate(originals):
            choice = best[i]
            common: _Common = {"mode": "offline", "attempts": attempts, "seconds": seconds, "history": history[i],
                               "seed": ctx.settings.seed}
            if i in final:
                record, picked_choice = final[i], picked[i]
                changed = map_lines(record["answer"], pm.old_line) != original.answer
                operators = list(pm.operators) + (["inputs"] if picked_choice.run != runs[i] else [])
                linked = engine.link(record, original, {
                    "mode": "offline", "seed": ctx.settings.seed, "attempt": picked_choice.attempt,
                    "operators": operators, "answer_changed": changed})
                result.tasks.append(linked)
                result.log.append(engine.task_log(original, status="admitted" if changed else "flagged",
                                                  mutant_id=linked["id"], answer_changed=changed,
                                                  operators=operators, **common))
                continue
            if choice is not None and not choice.changed and not ctx.settings.keep_unchanged:
                reason = "every admitted mutant left the answer unchanged (dropped)"
                result.rejected.append({"candidate": original.id, "stage": "unchanged", "reason": reason})
                result.log.append(engine.task_log(original, status="dropped", answer_changed=False, reason=reason,
                                                  **common))
                continue
            if choice is None:
                last = next((h["reason"] for h in reversed(history[i]) if h.get("reason")), "no admitted mutant")
                reason = f"no admitted mutant in {attempts} attempts; last: {last}"
            else:
                reason = f"final build rejected the mutant: {final_reasons.get(i, 'not admitted')}"
            result.rejected.append({"candidate": original.id, "stage": "mutation", "reason": reason[:500]})
            result.log.append(engine.task_log(original, status="failed", reason=reason[:500], **common))
        return result


ADAPTER = TraceAdapter()
