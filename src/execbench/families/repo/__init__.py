"""The ``repo`` family (RepoReason): predict the masked value of a unit-test assertion in a
real repository. Sources: ``pypi:NAME==VERSION``, a local checkout, or ``default`` (the
paper's seven libraries, pinned). Pipeline and decisions: ``docs/repo-family.md``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Iterator

from execbench.dataset import Manifest, Task
from execbench.contract import (AgentBrowser, AnalysisFacts, Annotator, BuildContext, BuildReport, BuildSchedule,
                                Candidate, Family, Licenses, Metric, Mutation, Outcome, Prompt, SliceTable, Slices,
                                SummaryTable, TeacherMutation)
from execbench.families.repo import build, prompt, slices
from execbench.families.repo.preparation import novelty
from execbench.grading import Score


def _annotator() -> Any:
    from execbench.families.repo.annotate import annotate_dataset

    return annotate_dataset


def _mutation_adapter() -> Any:
    from execbench.families.repo.mutation.mutate import ADAPTER

    return ADAPTER


def _teacher_mutation() -> Any:
    from execbench.families.repo.mutation.edme import mutate_repo_dataset

    return mutate_repo_dataset


def _agent_browser() -> Any:
    from execbench.families.repo.agent_tools import RepoBrowser

    return RepoBrowser


def _task_slices(task: Task) -> dict[str, str | None]:
    """The repository: the library the prompt names."""
    return {"repository": task.prompt_fields.get("library") or task.provenance.get("repository")}


def _source_slices(source_id: str) -> dict[str, str | None]:
    """The repository: ``NAME-VERSION/<module>::<test>`` starts with it."""
    return {"repository": source_id.split("/", 1)[0] or None}


def _source_license(source: str) -> str | None:
    """A library's license (``source`` is ``NAME-VERSION``): the pinned default corpus's, else
    what the package's own metadata declares (``sources.repos.declared_license``)."""
    from execbench.sources.repo_configs import DEFAULT_BY_NAME
    from execbench.sources.repos import declared_license

    name, _, version = source.rpartition("-")
    config = DEFAULT_BY_NAME.get(name.lower())
    if config is not None and config.version == version and config.license:
        return f"{config.license} ({config.name} {config.version})"
    declared = declared_license(name, version) if name else None
    return f"{declared} ({name} {version}, from its package metadata)" if declared else None


def _record_written(outcome: Outcome, context: BuildContext) -> None:
    """The manifest's ``tasks_by_release``: per release (``name==version``, tasks carrying
    ``provenance.release``) its tasks, and rejections by stage of those that name it
    (``release`` detail)."""
    counts: dict[str, dict[str, int]] = context.extra.setdefault("tasks_by_release", {})
    for task in outcome.tasks:
        release = task["provenance"].get("release")
        if isinstance(release, dict) and release.get("package") and release.get("version"):
            row = counts.setdefault(f"{release['package']}=={release['version']}", {})
            row["tasks"] = row.get("tasks", 0) + 1
    for rejection in outcome.rejected:
        if isinstance(rejection.get("release"), str):
            row = counts.setdefault(rejection["release"], {})
            row[rejection["stage"]] = row.get(rejection["stage"], 0) + 1
    if not counts:
        del context.extra["tasks_by_release"]


def _build_summary(manifest: Manifest, out: Path) -> list[SummaryTable | str]:
    """Per package of a release window: the release chosen and how many tasks survive."""
    from execbench.families.repo.preparation.packages import PINNED_LIST

    window = manifest.settings.get("release_window")
    if not window:
        return []
    counts = manifest.extra.get("tasks_by_release") or {}
    rows: list[tuple[str, ...]] = []
    for name, release in window.get("packages", {}).items():
        if "version" not in release:
            rows.append((name, "none", "", "", "", release.get("rejected", "")[:60]))
            continue
        row = counts.get(f"{release['name']}=={release['version']}", {})
        previous = release.get("previous") or {}
        rows.append((name, release["version"], release["date"], str(row.get("tasks", 0)),
                     str(row.get(novelty.STAGE, 0)), previous.get("version", "-")))
    title = f"releases in [{window.get('released_after') or '…'}, {window.get('released_before') or '…'})"
    return [SummaryTable(title, ("package", "release", "uploaded", "tasks", "existed before", "previous"),
                         tuple(rows), right=("tasks", "existed before")),
            f"pinned versions for a rebuild: {out / PINNED_LIST}"]


class RepoFamily(Family[dict[str, Any], build.RepoOptions]):
    name = "repo"
    # 2: except-as slices; relevant_lines, slice_files. 3: multi-line asserts anchor their slice.
    # 4: variables without a literal form resolve to their defining expression.
    # 5: identity assertions never take a constructed answer.
    # 6: admission gate (wrong values, sentinel), environment_dependent, readable_without_running,
    #    inputs stay visible, answers hidden elsewhere in the test, name aliases for grading.
    # 7: answers the grader refuses are not admitted; failed subtests fail the test.
    # 8: sympy wrong values count only when they differ from the answer at run time (oo + 1 is oo).
    # 9: sympy answers the restricted sympy parser refuses are not admitted either.
    # 10: repo_root and trace_ref relative to the repos cache (datasets independent of its location).
    # 11: admission wrong values written with set elements in a fixed order.
    # 12: pytest runs are job-runner jobs (a failed module run's rejection reason is worded by it).
    # 13: leak gate (answer_visible: ...), test-file definitions carried (context_too_large), per-assertion
    #     Score and trivial, collection_failed, stored traces without run-dependent values, local roots.
    # 14: the agent's masked copy of the test module (prompt_fields.agent_copies, answer_visible: agent_copy),
    #     conftest fixtures and test-side helpers carried (context_missing), comments stating containers.
    # 15: in the agent's copy a one-word string answer leaks only quoted ('host', not English "host").
    # 16: rejection reasons without this machine's paths; a root tests.py is a test module when nothing
    #     else is; new-tests-only compares with the last final release (tasks of 15 otherwise unchanged).
    # 17: verification runs under check seeds drawn per build (options repeats, check_seeds; issue 22);
    #     provenance key_hash_seed and repeats instead of hash_seeds [0, 1].
    # 18: pytest runs with --rootdir=<repository root>, the repository's own config or none, and
    #     --confcutdir (node ids never relative to a cache dir: tomlkit 0.15.2); rejections and local
    #     repo_root without absolute paths (issue 33). Cached outcomes of 17 hold such ids and paths.
    # 19: shown values a reader computes (expected = <expression>, comprehensions, a sibling's
    #     variable whose definition is the answer) are masked or answer_visible with its place (issue 35);
    #     and context from the test's own run (issue 35): every fixture that ran (usefixtures, pytestmark,
    #     autouse, plugins) carried, attributes/globals no shown code sets rejected context_missing;
    #     except/match variables are test locals; another pytest tried when the default cannot collect
    #     (provenance.test_tool); data-table recall excluded by default (provenance.data_table).
    # 20: a test nondeterministic by its text is rejected so before its run's outcome is read (rebuilds
    #     reject natsort's @given tests the same way); self/cls attributes a carried helper method reads are
    #     checked as the test's own; answer_visible: agent_copy expression (another function of the copy
    #     computes the key), leak places in the agent's copy named (issue 35).
    version = "20"
    variants = tuple(prompt.VARIANTS)
    default_options = dict(build.DEFAULT_OPTIONS)
    # compare.grade_answer grades literals, sympy text and dotted names (text)
    arms = {"masked-assertion": ("python-literal", "sympy", "text")}
    capabilities = (AnalysisFacts(
        layout="slice-tables", title="Repository assertions (RepoReason)", nav="Repo",
        paper="paper 000 tables 2-3, appendix B.1", relations_paper="paper 000 tables 4, 6, 8; figure 2",
        metrics=("esv", "mcl", "dfi", "complexity_score"), correlation_metrics=("esv", "mcl", "dfi"),
        metric_labels=(Metric("esv", "ESV"), Metric("mcl", "MCL"), Metric("dfi", "DFI"),
                       Metric("complexity_score", "complexity score")),
        theta_metrics=("esv", "mcl", "dfi"), correlation_paper="paper 000 table 4",
        partial_paper="paper 000 table 6", cell_column="repository", headlines=("partial",),
        slice_orders={"difficulty": slices.DIFFICULTY_LEVELS, "scope": slices.SCOPES},
        slice_tables=(
            SliceTable("difficulty", "Difficulty", "Accuracy by annotated difficulty", "paper 000 table 2",
                       missing="No annotated difficulty in these tasks: no difficulty table."),
            SliceTable("repository", "Repository", "Accuracy by repository", "paper 000 table 3",
                       missing="No repository recorded for these tasks: no per-repository table.",
                       setting_first=False),
            SliceTable("scope", "Scope", "Accuracy by reasoning scope", "paper 000 appendix B.1",
                       missing="No reasoning scope (intra-file / cross-file slice) recorded for these tasks.",
                       heading="Reasoning scope"))),
        Slices(task=_task_slices, source=_source_slices, sample=slices.sample_slices),
        # admission, slicing and metrics are parent-side Python: ~60% of a build
        BuildSchedule(in_processes=True),
        Annotator(annotate=_annotator), Mutation(adapter=_mutation_adapter),
        TeacherMutation(mutate=_teacher_mutation), AgentBrowser(browser=_agent_browser),
        Licenses(lookup=_source_license), BuildReport(record_written=_record_written, summary=_build_summary))

    def candidates(self, sources: list[str], options: build.RepoOptions,
                   context: BuildContext | None = None) -> Iterator[Candidate]:
        """The builder's candidates; each repository's test environment (requirements, where they
        are declared, the versions installed) and a windowed list's ``release_window`` go into
        ``context`` (``settings.repositories``, ``settings.release_window``)."""
        return build.candidates(sources, options, context)

    def build_candidate(self, candidate: Candidate, options: build.RepoOptions) -> Outcome:
        return build.build_candidate(candidate, options)

    def prompt(self, task: Task, variant: str = "direct") -> Prompt:
        return prompt.render(task, variant)

    def grade(self, task: Task, response: str) -> Score:
        from execbench.families.repo.grading.compare import grade_answer  # written alongside; imported lazily

        return grade_answer(task, response)

    def summarize(self, results: Iterable[tuple[Task, Score]]) -> dict[str, float | None]:
        rows = list(results)
        n = len(rows)
        out: dict[str, float | None] = {"n": n, "accuracy": sum(s.correct for _, s in rows) / n if n else None}
        by_library: dict[str, list[bool]] = defaultdict(list)
        by_difficulty: dict[str, list[bool]] = defaultdict(list)
        for task, score in rows:
            by_library[task.prompt_fields.get("library", "?")].append(score.correct)
            label = (task.provenance.get("difficulty") or {}).get("label")
            if label:
                by_difficulty[label].append(score.correct)
        for name, values in sorted(by_library.items()):
            out[f"accuracy/{name}"] = sum(values) / len(values)
        for name, values in sorted(by_difficulty.items()):
            out[f"accuracy/{name}"] = sum(values) / len(values)
        return out


FAMILY = RepoFamily()
