"""The ``state`` family (paper 001): exact final output for a short and a long input, and
the JSON state of chosen variables inside and right after a loop.

Four tasks per case: ``short-trace-final``, ``long-trace-final`` (clean program),
``inside-loop-state``, ``post-loop-state`` (instrumented program, long input). Sources:
``classic`` (authored textbook algorithms, Python and C++), ``networkx-simplex`` (networkx's
``network_simplex`` on 30 selected graphs), or any directory of case directories.
Case format, instrumentation, admission checks and metric conventions:
``docs/state-family.md``.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from execbench.dataset import Task
from execbench.contract import (AnalysisFacts, BuildContext, BuildSchedule, Candidate, Demo, Family, Licenses, Metric, Mutation,
                                Outcome, Prompt, SliceTable, Slices)
from execbench.families.state import build, grade, prompt
from execbench.grading import Score


def _mutation_adapter() -> Any:
    from execbench.families.state.mutate import ADAPTER

    return ADAPTER


def _task_slices(task: Task) -> dict[str, str | None]:
    """``pair``: the program's name in the paired corpus (the same program in Python and
    C++), read by the report's paired-language analysis."""
    return {"pair": task.provenance.get("pair")}


class StateFamily(Family[dict[str, Any], build.StateOptions]):
    name = "state"
    version = "6"  # 6: provenance key_hash_seed (0; C++ None) replaces hash_seeds [0, 1, 2]; 5: C++ loop profile from the state meter's clean run (fewer compiles; same tasks); 4: C++ automatic checkpoints and state metrics; 3: no measured resources in the records (job runner); 2: own compile flags, host varies
    variants = prompt.VARIANTS
    default_options = dict(build.DEFAULT_OPTIONS)
    arms = dict(zip(build.ARMS, (("text",), ("text",), ("json",), ("json",))))  # final outputs, checkpoints
    capabilities = (AnalysisFacts(
        layout="slice-tables", title="Output and checkpoint state (paper 001)", nav="State",
        paper="paper 001 tables 3, 5, 7; §5.1", relations_paper="paper 001 §5.2, appendices D-E",
        metrics=("trace_length", "peak_state", "state_load", "cyclomatic", "loc"),
        metric_fallbacks={"trace_length": ("native_trace_length", "trace_events")},
        metric_labels=(Metric("trace_length", "trace length", term="Trace"),
                       Metric("peak_state", "peak state", term="Peak state"),
                       Metric("state_load", "state load", term="State load")),
        correlation_metrics=("trace_length", "peak_state", "state_load"),
        theta_metrics=("trace_length", "peak_state", "state_load"),
        logistic_models=(("Trace + peak", ("trace_length", "peak_state")),
                         ("Trace + peak + load", ("trace_length", "peak_state", "state_load"))),
        logistic_paper="paper 001 table 6", cell_column="study", python_only_relations=True,
        headlines=("theta",), paired_arms=(build.ARMS[0], build.ARMS[1]), slice_orders={"arm": build.ARMS},
        pairs_note="The final arms ask the same question in both languages; the state arms may not (each language "
                   "chooses its checkpoint).",
        slice_tables=(SliceTable("arm", "Arm", "Accuracy by arm", "paper 001 table 3",
                                 figure_caption="Accuracy (C/R) per arm with Wilson intervals.",
                                 figure_alt="arm profiles per setting"),
                      SliceTable("study", "Study", "Accuracy by study", "paper 001 table 5", setting_first=False))),
        Slices(task=_task_slices),
        BuildSchedule(batch_size=build.BATCH_SIZE, build_many=build.build_candidates, cost=build.candidate_cost),
        Mutation(adapter=_mutation_adapter),
        Licenses(by_source={"classic": "Apache-2.0 (execbench's classic corpus)",
                            "paired": "Apache-2.0 (execbench's paired Python/C++ corpus)",
                            "networkx-simplex": "BSD-3-Clause (networkx 3.6.1's network_simplex); "
                                                "inputs Apache-2.0 (execbench)"}),
        Demo(sources=("classic",)))

    def candidates(self, sources: list[str], options: build.StateOptions,
                   context: BuildContext | None = None) -> Iterator[Candidate]:
        return build.candidates(sources, options)

    def build_candidate(self, candidate: Candidate, options: build.StateOptions) -> Outcome:
        return build.build_candidate(candidate, options)

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return prompt.render(task, variant)

    def grade(self, task: Task, response: str) -> Score:
        return grade.grade(task, response)

    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, float | None]:
        return grade.summarize(results)


FAMILY = StateFamily()
