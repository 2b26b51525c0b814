"""The ``cruxeval`` family: CRUXEval (a peer benchmark) taken in, re-verified, graded safely.

Arms per problem: ``output-prediction`` (given ``f`` and the call, the return value as a
Python literal), ``input-prediction`` (given ``f`` and the output, arguments that produce
it), and, when ``f`` has a loop, the state family's ``inside-loop-state`` and
``post-loop-state`` checkpoints of the same call (JSON objects). Every recorded answer is re-checked by running the problem in the sandbox
(:mod:`.build`); grading parses model text as literals and, for input prediction, runs
the benchmark's own ``f`` on the parsed arguments in the sandbox (:mod:`.grade`). Source:
``cruxeval`` (the shipped MIT copy in ``execbench/data/cruxeval/``, or ``--set path=FILE``).
Prompt variants ``direct``, ``cot`` and ``cruxeval`` (CRUXEval's own prompt and answer
format). Details and the agreement with CRUXEval's grader: ``docs/cruxeval.md``.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from execbench.dataset import Task
from execbench.contract import (AnalysisFacts, BatchGrading, BuildContext, BuildSchedule, Candidate, Family, Licenses, Metric,
                                Outcome, Prompt, SliceTable)
from execbench.families.cruxeval import build, grade, prompt
from execbench.grading import Score


def _source_license(source: str) -> str | None:
    return "MIT (CRUXEval, Copyright (c) 2023 Meta)" if source == build.SOURCE else None


class CruxevalFamily(Family[dict[str, Any], build.CruxevalOptions]):
    name = "cruxeval"
    version = "6"  # 6: provenance key_hash_seed (the key run's seed) replaces hash_seeds [0, 1, 2]; 5: runs on the sandbox job runner (limit and crash reasons worded by it)
    variants = prompt.VARIANTS
    default_options = dict(build.DEFAULT_OPTIONS)
    # output/input prediction: Python literals; the state family's checkpoint arms: JSON objects
    arms = dict(zip(build.ARMS, (("python-literal",), ("python-literal",), ("json",), ("json",))))
    # the report's section: accuracy per arm; with one reply per task, C/N is CRUXEval's pass@1
    capabilities = (AnalysisFacts(
        layout="slice-tables", title="CRUXEval (peer benchmark)", nav="CRUXEval",
        paper="CRUXEval (Gu et al., 2024) table 1: pass@1", relations_paper="execbench metrics of CRUXEval's programs",
        metrics=("trace_length", "cyclomatic", "loc", "answer_chars"),
        metric_labels=(Metric("trace_length", "trace length", term="Trace"), Metric("answer_chars", "answer chars")),
        correlation_metrics=("trace_length", "cyclomatic", "loc"), theta_metrics=("trace_length",),
        logistic_models=(("Trace", ("trace_length",)),), cell_column="arm",
        slice_orders={"arm": build.ARMS},
        slice_tables=(SliceTable("arm", "Arm", "Accuracy by arm (one reply per task: C/N % is CRUXEval's pass@1)",
                                 "CRUXEval table 1 (pass@1)", figure_caption=""),)),
        BuildSchedule(limited=build.limited),  # a candidate is a batch of problems: --limit counts problems
        BatchGrading(grade_many=grade.grade_many),  # grading that runs code batches its sandbox runs
        Licenses(lookup=_source_license))

    def candidates(self, sources: list[str], options: build.CruxevalOptions,
                   context: BuildContext | None = None) -> Iterator[Candidate]:
        return build.candidates(sources, options)

    def build_candidate(self, candidate: Candidate, options: build.CruxevalOptions) -> Outcome:
        return build.build_candidate(candidate, options)

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return prompt.render(task, variant)

    def grade(self, task: Task, response: str) -> Score:
        return grade.grade(task, response)

    def answer_token_bound(self, task: Task) -> int:
        """The reply is the completed assertion (``assert f(16) == [16, 17]``): the answer and the
        call or output it completes, one token per byte at most."""
        echoed = " ".join(str(task.prompt_fields.get(key, "")) for key in ("call", "output"))
        return super().answer_token_bound(task) + len(f"assert f() ==  {echoed}".encode())

    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, Any]:
        return dict(grade.summarize(results))


FAMILY = CruxevalFamily()
