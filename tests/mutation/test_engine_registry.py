"""The mutation engine finds adapters, teacher pipelines and id parsers on the plug-ins it is handed (the registry's)."""

from __future__ import annotations

import pytest

from execbench import registry
from execbench.dataset import DatasetError, DatasetWriter, Task
from execbench.mutation import MutationSetupError, mutated_id
from execbench.mutation.engine import adapter_for, mutate_with_teacher

PLUGINS = list(registry.registered())  # the engine is handed the plug-ins (it looks none up by name)


def test_adapters_come_from_the_family_folders():
    assert type(adapter_for(registry.get("trace"))).__module__ == "execbench.families.trace.mutate"
    assert type(adapter_for(registry.get("repo"))).__module__ == "execbench.families.repo.mutation.mutate"
    with pytest.raises(MutationSetupError, match=r"not available for family 'cruxeval' \(available: repo, state, trace\)"):
        adapter_for(registry.get("cruxeval"), PLUGINS)


def test_mutated_ids_are_parsed_by_the_family():
    state, trace = registry.get("state"), registry.get("trace")
    assert mutated_id("state/classic/kmp/v2#post-loop-state", state) == "state/classic-mut/kmp/v2#post-loop-state"
    with pytest.raises(DatasetError, match="not a task id of family 'trace'"):
        mutated_id("trace/humaneval/HumanEval-0/3#post-loop-state", trace)  # an arm the trace family does not have
    with pytest.raises(DatasetError, match="not a task id of family 'state'"):
        mutated_id("trace/humaneval/HumanEval-0/3#trace", state)
    # without a plug-in (an id read from a dataset, checked when read): the neutral id parser
    assert mutated_id("trace/humaneval/HumanEval-0/3#trace") == "trace/humaneval-mut/HumanEval-0/3#trace"
    with pytest.raises(DatasetError, match="is not of the form"):
        mutated_id("dance")


def test_teacher_mutation_needs_a_family_that_offers_it(tmp_path):
    with DatasetWriter(tmp_path / "ds", settings={}) as writer:
        writer.add(Task(id="trace/unit/p/0#trace", family="trace", arm="trace", source_id="unit/p", language="python",
                        prompt_fields={"program": "x = 1\n", "call": "f()"}, answer=[1], answer_kind="lines"))
        writer.close()
    with pytest.raises(MutationSetupError, match=r"teacher mutation needs tasks of exactly one of repo \(this dataset "
                                                 r"has trace\); use --offline"):
        mutate_with_teacher(tmp_path / "ds", tmp_path / "out", plugins=PLUGINS, teacher="local")
    assert not (tmp_path / "out").exists()
