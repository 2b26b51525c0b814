"""Offline (no-teacher) mutation of ``repo`` tasks: the EDME stages written by code.

Stage 1 mutates the test function's text with the seeded AST operators (local renaming,
parameters and fixtures excluded; perturbed literals outside assertions, i.e. the test's
inputs and constants; comments removed) and replaces every assertion that asks a value
question (the repo family's DVP choice: ``actual == expected`` and the like) by a
``DEBUG_RESULT`` probe of its actual operand. Stage 2 is the engine's: run, capture.
Stage 3 writes the original assertion back with its expected operand replaced by the
captured value's literal (or sympy text); it needs one value for every instance and
execution. The validation gate, the family's ``build_test_file`` and the records are the
teacher pipeline's (:mod:`execbench.families.repo.mutation.edme`). Retries use the next seed; the last
one perturbs no literals (renaming only).
"""

from __future__ import annotations

import asyncio
import random
import textwrap
from typing import TYPE_CHECKING, cast

from execbench.dataset import Task
from execbench.families.repo.mutation.edme import TeacherSettings, _modules, mutate_module
from execbench.families.repo.mutation.edme_records import CapturedProbe, Draft, FunctionJob
from execbench.families.repo.records.steps import RepoOptions
from execbench.mutation import engine
from execbench.mutation.probes import _fstring
from execbench.mutation.program import MutationError, mutate_program

if TYPE_CHECKING:  # imported where they run (a repo build's modules load only when one runs)
    from execbench.families.repo.selection.assertions import Assertion, TestFunction


class OfflineSession:
    mode = "offline"
    calls = 0

    def __init__(self, job: FunctionJob, seed: int, max_retries: int, operators: tuple[str, ...],
                 max_literals: int) -> None:
        self.job = job
        self.seed = seed
        self.max_retries = max_retries
        self.operators = set(operators)
        self.max_literals = max_literals
        self.plan: list[tuple[Assertion, int]] = []  # (assertion, masked operand index) per probe
        self.mutated = ""

    def _function(self, text: str) -> TestFunction:
        from execbench.families.repo.selection import assertions as A

        functions = [f for (q, _), f in A.test_functions(text).items() if q == self.job.node.name]
        if not functions:
            raise MutationError("the mutated text lost the test function")
        return functions[0]

    async def probe(self, attempt: int) -> Draft:
        from execbench.families.repo.selection import assertions as A
        from execbench.families.repo.selection import dvp

        rng = random.Random(f"{self.seed}|{self.job.rel}|{self.job.qualname}|{attempt}")
        text = textwrap.dedent(self.job.excerpt)
        try:
            original = self._function(text)
            skip = {line for a in original.assertions for line in range(a.span.lineno, a.span.end_lineno + 1)}
            pm = mutate_program(text, rng, rename="rename" in self.operators,
                                literals=("literals" in self.operators or "inputs" in self.operators)
                                and attempt < self.max_retries,
                                strip_comments="strip-comments" in self.operators, protected={self.job.node.name},
                                rename_module=False, rename_params=False, max_literals=self.max_literals,
                                literal_skip_lines=skip)
            function = self._function(pm.text)
        except (MutationError, SyntaxError) as exc:
            return Draft(None, error=str(exc))
        sympy = self.job.repo.name.lower() == "sympy"
        splices, plan = [], []
        for assertion in function.assertions:
            choice = dvp.choose(assertion, function, sympy=sympy)
            if not isinstance(choice, dvp.Choice):
                continue
            probe = _fstring(assertion.operands[choice.actual])
            if probe is None:
                continue
            splices.append(A.Splice(assertion.span, probe))
            plan.append((assertion, choice.masked))
        if not plan:
            return Draft(None, error="no assertion of the mutated test asks a value question")
        self.plan, self.mutated = plan, pm.text
        return Draft(A.apply(pm.text, splices))

    async def reconstruct(self, attempt: int, probed: str, values: list[CapturedProbe]) -> Draft:
        from execbench.families.repo.selection import assertions as A

        splices = []
        for (assertion, masked), value in zip(self.plan, values):
            seen = {(e.get("literal"), e.get("sympy")) for e in value["executions"]}
            if len(seen) != 1:
                return Draft(None, error=f"probe {value['probe']}: {len(seen)} different values across instances "
                                         "and executions: no constant assertion fits")
            literal, sympy_text = next(iter(seen))
            text = literal if literal is not None else sympy_text
            if text is None:
                return Draft(None, error=f"probe {value['probe']}: the value has no literal form")
            splices.append(A.Splice(A.Span.of(assertion.operands[masked]), text))
        return Draft(A.apply(self.mutated, splices))

    def feedback(self, message: str) -> None:
        """Offline retries do not read feedback: the next attempt uses the next seed."""


class RepoAdapter:
    """The offline engine's adapter for repo datasets: one unit per test module."""

    family = "repo"

    def units(self, tasks: list[Task], ctx: engine.Context) -> list[engine.Unit]:
        return [engine.Unit(key=f"{spec}::{rel}", family="repo", originals=originals,
                            data={"spec": spec, "rel": rel})
                for (spec, rel), originals in _modules(tasks).items()]

    def mutate(self, unit: engine.Unit, ctx: engine.Context) -> engine.UnitResult:
        settings = TeacherSettings(seed=ctx.settings.seed, max_retries=ctx.settings.attempts, concurrency=1)

        def session(job: FunctionJob) -> OfflineSession:
            return OfflineSession(job, ctx.settings.seed, ctx.settings.attempts, tuple(ctx.settings.operators),
                                  ctx.settings.max_literals)

        async def go() -> engine.UnitResult:
            return await mutate_module(unit.data["spec"], unit.data["rel"], unit.originals, session_for=session,
                                       author="offline", mode="offline", settings=settings,
                                       options=cast(RepoOptions, ctx.options),  # the family's, as built
                                       gate=asyncio.Semaphore(1))

        return asyncio.run(go())


ADAPTER = RepoAdapter()
