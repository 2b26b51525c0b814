"""Offline mutation of state cases, end to end through the state family's own build."""

from __future__ import annotations

import json
import textwrap

import pytest

from execbench import registry
from execbench.dataset import read_manifest, read_tasks
from execbench.families.build import build_dataset
from execbench.mutation import OfflineSettings, mutate_dataset, read_log

PLUGINS = list(registry.registered())  # the engine is handed the plug-ins (it looks none up by name)

STATE = registry.get("state")

PROGRAM = textwrap.dedent('''\
    import sys

    # running maximum of prefix sums
    data = sys.stdin.read().split()
    n = int(data[0])
    values = [int(x) for x in data[1:1 + n]]
    total = 0
    best = -10 ** 9
    for value in values:
        total += value  # prefix sum
        if total > best:
            best = total
    print(total, best)
    ''')


def write_case(root, name="prefix", long_n=60):
    case = root / name
    case.mkdir(parents=True)
    (case / "main.py").write_text(PROGRAM)
    (case / "short.txt").write_text("3\n4 -1 2\n")
    (case / "long.txt").write_text(f"{long_n}\n" + " ".join(str((i * 7) % 11 - 5) for i in range(long_n)) + "\n")
    (case / "case.toml").write_text(textwrap.dedent(f'''\
        id = "{name}"
        language = "python"
        source = "main.py"
        short_input = "short.txt"
        long_input = "long.txt"

        [checkpoint]
        loop_line = 9
        fields = ["total", "best"]
        '''))
    return root


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    root = tmp_path_factory.mktemp("state-mut")
    write_case(root / "cases")
    options = {**STATE.default_options, "repeats": 2}
    build_dataset(STATE, [str(root / "cases")], root / "orig", options=options)
    mutate_dataset(root / "orig", root / "mut", plugins=PLUGINS, settings=OfflineSettings(seed=1, attempts=3))
    return root


@pytest.mark.slow
def test_state_case_mutants_keep_the_question_and_change_the_answers(mutated):
    originals = {t.id: t for t in read_tasks(mutated / "orig")}
    assert len(originals) == 4
    mutants = {t.arm: t for t in read_tasks(mutated / "mut")}
    assert set(mutants) == {o.arm for o in originals.values()}
    for arm, task in mutants.items():
        original = originals[task.provenance["original_id"]]
        assert original.arm == arm and task.id == original.id.replace("/cases/", "/cases-mut/")
        assert task.source_id == "cases-mut/prefix"
        assert task.provenance["mutation"]["answer_changed"] is True
        assert task.answer != original.answer
    # the same loop (line mapped through the removed comment line) and the same fields
    checkpoint = mutants["post-loop-state"].provenance["checkpoint"]
    assert checkpoint["fields"] == ["total", "best"] and checkpoint["loop_line"] == 8
    assert set(mutants["post-loop-state"].answer) == {"total", "best"}
    program = mutants["long-trace-final"].prompt_fields["program"]
    assert "#" not in program and "values" not in program and "for " in program  # renamed, stripped
    assert mutants["long-trace-final"].prompt_fields["input"] != originals[
        mutants["long-trace-final"].provenance["original_id"]].prompt_fields["input"]
    log = read_log(mutated / "mut")
    unit = next(r for r in log if r["kind"] == "unit")
    assert unit["payload"]["checkpoint"]["fields"] == ["total", "best"] and unit["attempts"]
    assert read_manifest(mutated / "mut")["mutation"]["yields"]["answer_changed"] == 4


@pytest.mark.slow
def test_answers_come_from_the_family_not_from_the_mutator(mutated, tmp_path):
    """Rebuilding the logged mutant payload with the family gives the written answers."""
    unit = next(r for r in read_log(mutated / "mut") if r["kind"] == "unit")
    payload = dict(unit["payload"])
    payload.update(topic="cases", compare="tokens", source_id="cases-mut/prefix", files={})
    from execbench.contract import Candidate

    outcome = STATE.build_candidate(Candidate("cases-mut/prefix", payload), {**STATE.default_options, "repeats": 1})
    rebuilt = {t["arm"]: t["answer"] for t in outcome.tasks}
    written = {t.arm: t.answer for t in read_tasks(mutated / "mut")}
    assert rebuilt == written
    print(json.dumps(written["post-loop-state"]))
