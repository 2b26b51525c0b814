"""Issue 36: a build's state travels in the context the engine makes for it (settings, manifest
fields, files beside the dataset), so two builds in one process never see each other's."""

from __future__ import annotations

import json

import pytest

from execbench.contract import BuildContext, BuildReport, Candidate, Family, Outcome
from execbench.families.build import build_dataset


def _count_written(outcome, context):
    context.extra["written"] = context.extra.get("written", 0) + len(outcome.tasks)


class Noting(Family):
    """Writes into its context what the sources say: ``window:X`` → a setting, a file and a count."""

    name = "noting"
    version = "1"
    arms = {"say": ("text",)}
    capabilities = (BuildReport(record_written=_count_written),)

    def candidates(self, sources, options, context=None):
        for source in sources:
            if source.startswith("window:") and context is not None:
                context.settings["window"] = source.split(":", 1)[1]
                context.files["window.txt"] = source + "\n"
            yield Candidate(source.replace(":", "-"), {"word": source})

    def build_candidate(self, candidate, options):
        return Outcome(tasks=[{"id": f"noting/mine/{candidate.key}#say", "family": "noting", "arm": "say",
                               "source_id": f"mine/{candidate.key}", "language": "python", "prompt_fields": {},
                               "answer": candidate.payload["word"], "answer_kind": "text", "metrics": {},
                               "provenance": {}}])

    def prompt(self, task, variant="direct"):
        raise NotImplementedError

    def grade(self, task, response):
        raise NotImplementedError

    def summarize(self, results):
        return {}


def test_two_builds_in_one_process_do_not_see_each_others_state(tmp_path):
    first = build_dataset(Noting(), ["window:2026", "a"], tmp_path / "one", options={})
    second = build_dataset(Noting(), ["b"], tmp_path / "two", options={})
    assert first["settings"]["window"] == "2026" and first["written"] == 2
    assert (tmp_path / "one" / "window.txt").read_text() == "window:2026\n"
    assert "window" not in second["settings"] and second["written"] == 1  # not the first build's window
    assert not (tmp_path / "two" / "window.txt").exists()
    on_disk = json.loads((tmp_path / "two" / "manifest.json").read_text())
    assert on_disk["settings"] == {"family": "noting", "builder_version": "1", "sources": ["b"], "options": {},
                                   "limit": None}


def test_a_context_file_may_not_replace_the_datasets_own_files(tmp_path):
    class Hostile(Noting):
        def candidates(self, sources, options, context=None):
            assert context is not None
            context.files["manifest.json"] = "{}"
            return super().candidates(sources, options, context)

    with pytest.raises(ValueError, match="manifest.json"):
        build_dataset(Hostile(), ["a"], tmp_path / "ds", options={})
    assert not (tmp_path / "ds" / "manifest.json").exists()


def test_a_context_is_empty_until_a_build_fills_it():
    context = BuildContext()
    assert (context.settings, context.extra, context.files) == ({}, {}, {})
    assert BuildContext().settings is not context.settings  # no shared default
