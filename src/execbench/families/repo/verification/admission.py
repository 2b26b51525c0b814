"""Admission by the verify runs: a pending assertion is kept only when its value is stable and an answer passes.

Each pending assertion's value must be the key run's under every check seed, and one of its
candidate answers (:mod:`.answers`) must make the original assertion pass with the answer
substituted for the masked operand, in every verification run (docs/repo-family.md, funnel 1).
Split out of :mod:`.build`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
import dataclasses
from typing import TYPE_CHECKING, Any

from execbench.contract import Outcome
from execbench.families.repo.records.steps import Item, Module, Pending
from execbench.families.repo.selection import assertions as A
from execbench.families.repo.selection import dvp
from execbench.families.repo.verification.answers import _dotted_names, spelling_variants
from execbench.families.repo.verification.runner import PytestReport

if TYPE_CHECKING:
    from execbench.families.repo.records.run_records import RenderedValue, TestRecord


@dataclasses.dataclass
class _Verification:
    """What the verification run substitutes per item key: the texts (candidates first, the first
    that passes is the answer; then the admission gate's wrong values and the respellings), the
    "candidate == sentinel" checks, the dotted names to resolve to aliases, the guards ("it
    differs from the answer") of wrong values, and the respelling variants per candidate.
    One of the wrong values passing means many solutions."""

    union: dict[str, list[str]]
    extra: dict[str, list[str]]
    names: dict[str, list[str]]
    guards: dict[str, dict[str, str]]
    respell: dict[str, dict[str, dict[str, str]]]

    @classmethod
    def of(cls, pending: list[Pending]) -> _Verification:
        union: dict[str, list[str]] = defaultdict(list)
        extra: dict[str, list[str]] = defaultdict(list)  # "candidate == sentinel" per text candidate
        names: dict[str, list[str]] = defaultdict(list)  # dotted names to resolve to aliases
        for p in pending:
            key = p.item.key
            for c in p.candidates:
                if c["text"] not in union[key]:
                    union[key].append(c["text"])
                if c["kind"] != "python-literal" and c["text"] not in extra[key]:
                    extra[key].append(c["text"])
                for name in _dotted_names(c["text"]) if c["kind"] == "text" else []:
                    if name not in names[key]:
                        names[key].append(name)
        guards: dict[str, dict[str, str]] = defaultdict(dict)  # wrong text → "it differs from the answer"
        respell: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)  # key → candidate → {rule: text}
        for p in pending:
            key = p.item.key
            for c in p.candidates:
                if c["kind"] == "text" and c["form"] == "constructor":
                    respell[key][c["text"]] = spelling_variants(c["text"])
            for text in p.wrong:
                if text not in union[key]:
                    union[key].append(text)
                if text in p.guards:
                    guards[key][text] = p.guards[text]
        for key, per_candidate in respell.items():  # after the wrong values: their indexes stay put
            for variants in per_candidate.values():
                for text in variants.values():
                    if text not in union[key]:
                        union[key].append(text)
        return cls(union, extra, names, guards, respell)

    def sources(self, modules: list[Module], items: dict[str, Item], origin: str) -> dict[str, str]:
        """The texts the verification run serves."""
        union, extra, names, guards = self.union, self.extra, self.names, self.guards
        verify_served = {}
        for module in modules:
            splices = []
            for key, texts in union.items():
                it = items[key]
                if it.module is module:
                    assert isinstance(it.choice, dvp.Choice)  # a pending item's choice
                    equal_everything = [f"({text}) == {A.SENTINEL}()" for text in extra[key]]
                    splices.append(A.verify_splice(module.source, key, it.assertion, it.choice.masked, texts,
                                                   equal_everything + list(guards[key].values()), names[key]))
            if origin != "original":  # stale expected values elsewhere must not fail the test
                verified = {id(items[key].assertion) for key in union}
                splices += A.neutralize_splices([a for f in module.functions.values() for a in f.assertions
                                                 if id(a) not in verified])
            verify_served[str(module.path)] = A.apply(module.source, splices)
        return verify_served


@dataclasses.dataclass
class _VerifyRun:
    """One verification run: its hash seed, its report and its records by test id."""

    seed: int
    report: PytestReport
    by_node: dict[str, TestRecord]


def _verified(p: Pending, runs: list[_VerifyRun], key_seed: int,
              outcome: Outcome) -> tuple[TestRecord, list[Any]] | None:
    """The first verification run's record of ``p``'s test and the checks of every
    verification run; None when ``p`` is rejected: its test did not pass or its assertion was
    not reached in a verification run, or its value differs from the probe run's (whose hash
    seed is ``key_seed``): ``unstable_value``, naming the seeds."""
    it = p.item
    where = {run.seed: "" if len(runs) == 1 else f" (hash seed {run.seed})" for run in runs}
    first: TestRecord | None = None
    checks: list[Any] = []
    differ: list[int] = []
    assert isinstance(it.choice, dvp.Choice)  # a pending item's choice
    actual_before = {json.dumps(_value_text(run.get(str(it.choice.actual)))) for run in p.values}
    for run in runs:
        seed, rec = run.seed, run.by_node.get(p.record["nodeid"])
        if rec is None or any(ph["outcome"] != "passed" for ph in rec.get("phases", {}).values()):
            why = "test did not pass in the verification run" if rec else f"verification run: {run.report.reason}"
            outcome.reject(p.label, "verification", why + where[seed], **p.base)
            return None
        found = rec.get("verify", {}).get(it.key)
        if not found:
            outcome.reject(p.label, "verification", "assertion not reached in the verification run" + where[seed],
                           **p.base)
            return None
        if {json.dumps(_value_text(c["value"])) for c in found} != actual_before:
            differ.append(seed)
        first = first or rec
        checks += found
    if differ:
        outcome.reject(p.label, dvp.SEMANTIC, f"unstable_value: differs between runs: hash seed {key_seed}'s value "
                       f"differs from {', '.join(map(str, differ))}'s", hash_seeds=[key_seed, *(r.seed for r in runs)],
                       **p.base)
        return None
    assert first is not None  # (at least one verification run)
    return first, checks


def _admitted(pending: list[Pending], runs: list[PytestReport], seeds: list[int], verification: _Verification,
              outcome: Outcome) -> list[Pending]:
    """The pending assertions the verification runs admit, with their answer, aliases and
    respellings; the rest rejected (unstable value, no candidate passing in every run, many
    solutions)."""
    union, extra, guards, respell = verification.union, verification.extra, verification.guards, verification.respell
    admitted: list[Pending] = []
    indexed = [_VerifyRun(seed, run, {r["nodeid"]: r for r in run.records})
               for seed, run in zip(seeds[1:], runs, strict=True)]
    for p in pending:
        it = p.item
        verified = _verified(p, indexed, seeds[0], outcome)
        if verified is None:
            continue
        rec2, checks = verified
        texts = union[it.key]

        def passes(index: int, checks: list = checks) -> bool:
            return all(len(c["checks"]) > index and c["checks"][index] is True for c in checks)

        chosen = None
        for cand in p.candidates:
            if passes(texts.index(cand["text"])):
                chosen = cand
                break
        if chosen is None:
            dropped = p.candidates[0].get("refused_other")
            if dropped:
                outcome.reject(p.label, dvp.MORPHOLOGY, f"answer_not_gradable: {dropped} (no other candidate "
                               "passes)", candidates=[c["text"] for c in p.candidates], **p.base)
            else:
                outcome.reject(p.label, "verification", "no candidate answer passes the assertion when "
                               "substituted", candidates=[c["text"] for c in p.candidates], **p.base)
            continue
        guarded = list(guards[it.key])

        def really_wrong(w: str, guarded: list = guarded, texts: list = texts, key: str = it.key) -> bool:
            # (oo) + 1 is oo: not a wrong value
            return w not in guarded or passes(len(texts) + len(extra[key]) + guarded.index(w))

        wrong = next((w for w in p.wrong if passes(texts.index(w)) and really_wrong(w)), None)
        if wrong is not None:
            what = "an unrelated object" if wrong == f"{A.SENTINEL}()" else f"the wrong value {wrong[:80]}"
            outcome.reject(p.label, dvp.SEMANTIC, f"many_solutions: {what} passes the assertion too",
                           answer=chosen["text"], **p.base)
            continue
        if chosen["text"] in extra[it.key] and passes(len(texts) + extra[it.key].index(chosen["text"])):
            outcome.reject(p.label, dvp.SEMANTIC, "many_solutions: the answer equals an unrelated object",
                           answer=chosen["text"], **p.base)
            continue
        aliases = [g for g in (rec2.get("aliases") or {}).get(it.key, []) if isinstance(g, list) and len(g) > 1]
        variants = respell.get(it.key, {}).get(chosen["text"], {})
        spellings = sorted(rule for rule, text in variants.items() if passes(texts.index(text)))
        admitted.append(dataclasses.replace(p, answer=chosen, aliases=aliases, spellings=spellings))
    return admitted


def pytest_message(report: Any) -> str:
    """Pytest's own words for a run that ended without test records: the first ``E   ...``
    line of its error report, else the last exception line of a traceback
    (``pytest.PytestRemovedIn9Warning: The (path: py.path.local) argument is deprecated``),
    else an ``ERROR`` line, else its last line."""
    out = report.result.stdout.decode("utf-8", "replace") + "\n" + (report.result.stderr or "")
    lines = [re.sub(r"^(INTERNALERROR>)\s*", "", line).rstrip() for line in out.splitlines() if line.strip()]
    first_e = next((line for line in lines if re.match(r"^E\s{2,}\S", line)), None)
    if first_e:
        return re.sub(r"^E\s+", "", first_e).strip()[:300]
    raised = [line for line in lines if re.match(r"^[\w.]*(Error|Exception|Warning|Exit)\b:", line)]
    if raised:
        return raised[-1].strip()[:300]
    error = next((line for line in lines if line.startswith("ERROR")), None)
    return (error or (lines[-1] if lines else f"exit code {report.result.exit_code}"))[:300]


def _value_text(rendered: RenderedValue | None) -> str | None:
    if rendered is None:  # the side was not rendered
        return None
    return rendered.get("literal", rendered.get("sympy"))
