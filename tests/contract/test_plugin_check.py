"""Issue 36: the plug-in contract is a small core plus declared capabilities, checked when a
plug-in registers (built-ins and entry points alike); a plug-in that provides only the core builds
through the engine (no builder module, no batch hooks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

import execbench
from execbench import registry
from execbench.contract import BatchGrading, BuildSchedule, Family, Licenses, Mutation, PluginError, Slices, check_plugin
from execbench.contract.capabilities import KINDS
from execbench.dataset import Task
from execbench.families.grade import grade_tasks
from execbench.grading import Score
from words_family import Words

HERE = Path(__file__).parent
SRC = Path(execbench.__file__).parents[1]

# The core a family must provide. Adding a member here is a decision: the contract grows for every
# family; an optional part is a capability (execbench.contract.capabilities) instead.
CORE = {"name", "version", "arms", "variants", "default_options", "has_similarity", "capabilities", "capability",
        "candidates", "build_candidate", "prompt", "grade", "summarize", "parse_id",
        "answer_token_bound"}


def public_members(cls: type) -> set[str]:
    """Every public name a class defines or annotates, inherited ones from its bases included."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        names.update(n for n in (*vars(klass), *getattr(klass, "__annotations__", {})) if not n.startswith("_"))
    return names


def test_the_family_core_has_at_most_twenty_public_members():
    members = public_members(Family)
    assert len(members) <= 20, sorted(members)
    assert members == CORE


BUILD = textwrap.dedent('''
    import json, sys
    from execbench.contract import check_plugin
    from execbench.dataset import read_rejected, read_tasks
    from execbench.families.build import build_dataset
    from execbench.families.grade import grade_tasks
    from words_family import Words

    out = sys.argv[1]
    family = check_plugin(Words, "words")
    build_dataset(family, ["alpha beta 9x gamma"], out + "/all", options={}, jobs=2)
    build_dataset(family, ["alpha beta gamma"], out + "/cut", options={}, limit=2)
    cut = list(read_tasks(out + "/cut"))
    scores = grade_tasks(cut, {cut[0].id: "ALPHA", cut[1].id: "beta"}, family_of=lambda _: family)
    print(json.dumps({"all": [t.answer for t in read_tasks(out + "/all")],
                      "rejected": [r["candidate"] for r in read_rejected(out + "/all")],
                      "cut": [t.answer for t in cut], "scores": {t.id: s.correct for t, s in scores}}))
''')


def _env(*paths: Path) -> dict[str, str]:
    """This tree's execbench and ``paths`` first on the path of a child interpreter."""
    return {"PYTHONPATH": os.pathsep.join(map(str, (*paths, SRC))), "PATH": "/usr/bin:/bin"}


def test_a_core_only_family_builds_through_the_engine(tmp_path):
    """Before issue 36 the engine asked the plug-in's builder module for batch_size and
    build_candidates: overriding candidates + build_candidate raised AttributeError 'builder'
    (the child imports no registry: its dataset hook would refuse the unregistered family's tasks)"""
    done = subprocess.run([sys.executable, "-c", BUILD, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=_env(HERE))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["all"] == ["ALPHA", "BETA", "GAMMA"] and seen["rejected"] == ["9x"]
    assert seen["cut"] == ["ALPHA", "BETA"]  # --limit 2
    assert seen["scores"] == {"words/mine/alpha#upper": True, "words/mine/beta#upper": False}


def test_declared_batch_grading_is_used_and_typed():
    def grade_many(pairs: list[tuple[Task, str]]) -> list[Score]:
        return [Score(correct=True, status="batched", extracted=text) for _, text in pairs]

    batched = Words()
    batched.capabilities = (BatchGrading(grade_many=grade_many),)
    check_plugin(batched, "words")
    task = Task(id="words/mine/a#upper", family="words", arm="upper", source_id="mine/a", language="python",
                prompt_fields={"word": "a"}, answer="A", answer_kind="text")
    [(_, score)] = grade_tasks([task], {task.id: "nope"}, family_of=lambda _: batched)
    assert (score.status, score.correct) == ("batched", True)
    assert batched.capability(BatchGrading) is batched.capabilities[0] and batched.capability(Mutation) is None


def _refusal(plugin: object, name: str = "words") -> str:
    with pytest.raises(PluginError) as caught:
        check_plugin(plugin, name)
    return str(caught.value)


def test_a_plug_in_missing_a_core_member_is_refused_naming_it():
    class NoGrade(Family):
        name, version, arms = "words", "1", {"upper": ("text",)}
        candidates, build_candidate, prompt, summarize = (Words.candidates, Words.build_candidate, Words.prompt,
                                                          Words.summarize)

    assert "does not define grade" in _refusal(NoGrade)
    nameless = Words()
    del Words.version  # the class attribute: put back below
    try:
        assert "does not define version" in _refusal(nameless)
    finally:
        Words.version = "1"
    assert "is not a Family plug-in" in _refusal(object())


@pytest.mark.parametrize(("change", "named"), [
    ({"arms": {"upper": "text"}}, "arms must be"),
    ({"arms": {}}, "arms must be"),
    ({"variants": ["direct"]}, "variants must be"),
    ({"has_similarity": "yes"}, "has_similarity must be"),
    ({"grade": None}, "grade must be a method"),
    ({"name": "other"}, "the plug-in is named 'other'"),
    ({"capabilities": [Licenses()]}, "capabilities must be a tuple"),
    ({"capabilities": (object(),)}, "is not a capability"),
    ({"capabilities": (Licenses(), Licenses())}, "Licenses is declared twice"),
    ({"capabilities": (BatchGrading(grade_many="grade.grade_many"),)},
     "capability BatchGrading has a mistyped field: grade_many"),
    ({"capabilities": (BuildSchedule(batch_size="16"),)}, "BuildSchedule has a mistyped field: batch_size"),
    ({"capabilities": (BuildSchedule(batch_size=True),)}, "BuildSchedule has a mistyped field: batch_size"),
    ({"capabilities": (Slices(task=None),)}, "Slices has a mistyped field: task"),
    ({"capabilities": (Licenses(by_source={"a": 1}),)}, "Licenses has a mistyped field: by_source"),
    ({"grade_many": lambda pairs: []}, "grade_many is not a Family member: declare it in the BatchGrading"),
    ({"mutation_adapter": lambda: None}, "mutation_adapter is not a Family member: declare it in the Mutation"),
    ({"record_written": lambda outcome, context: None}, "record_written is not a Family member: declare it in the "
                                                        "BuildReport"),
    ({"candidates": lambda sources, options: iter(())}, "candidates must take (sources, options, context=None)"),
])
def test_a_mistyped_member_or_capability_is_refused_naming_it(change, named):
    plugin = Words()
    for member, value in change.items():
        setattr(plugin, member, value)
    assert named in _refusal(plugin)


def test_every_builtin_declares_only_known_capabilities():
    for name in registry.names():
        plugin = registry.get(name)
        assert check_plugin(plugin, name) is plugin
        assert all(type(c) in KINDS for c in plugin.capabilities)
    # the checked field types are the declared ones: a replaced field is caught
    schedule = registry.get("state").capability(BuildSchedule)
    assert schedule is not None and schedule.batch_size > 1
    with pytest.raises(PluginError, match="batch_size"):
        bad = Words()
        bad.capabilities = (replace(schedule, batch_size=2.5),)
        check_plugin(bad, "words")


BAD_PLUGINS = textwrap.dedent('''
    from execbench.contract import BatchGrading, Candidate, Family, Message, Outcome, Prompt
    from execbench.grading import Score


    class Core(Family):
        version = "1"
        arms = {"say": ("text",)}

        def candidates(self, sources, options, context=None):
            return iter([Candidate(s, {"s": s}) for s in sources])

        def build_candidate(self, candidate, options):
            return Outcome()

        def prompt(self, task, variant="direct"):
            return Prompt([Message("user", "say")], "x/direct", "1")

        def summarize(self, results):
            return {}


    class NoGrade(Core):
        name = "nograde"


    class Good(Core):
        name = "good"

        def grade(self, task, response):
            return Score(correct=True, status="ok", extracted=response)


    class BadCapability(Good):
        name = "badcap"
        capabilities = (BatchGrading(grade_many="not a function"),)


    class OldHook(Good):
        name = "oldhook"

        def grade_many(self, pairs):
            return [self.grade(t, r) for t, r in pairs]


    GOOD = Good()
''')

PROBE = textwrap.dedent('''
    import json
    from execbench import registry
    seen = {}
    for name in ("nograde", "badcap", "oldhook", "good", "missing"):
        try:
            seen[name] = type(registry.get(name)).__name__
        except TypeError as exc:
            seen[name] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(seen))
''')


def test_entry_point_plug_ins_are_checked_when_they_register(tmp_path: Path):
    (tmp_path / "bad_families.py").write_text(BAD_PLUGINS)
    info = tmp_path / "bad_families-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bad-families\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[execbench.families]\nnograde = bad_families:NoGrade\nbadcap = bad_families:BadCapability\n"
        "oldhook = bad_families:OldHook\ngood = bad_families:GOOD\nmissing = bad_families:NOWHERE\n")
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env=_env(tmp_path))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["good"] == "Good"
    assert seen["nograde"].startswith("PluginError: family 'nograde': NoGrade does not define grade")
    assert "capability BatchGrading has a mistyped field: grade_many" in seen["badcap"]
    assert "grade_many is not a Family member: declare it in the BatchGrading capability" in seen["oldhook"]
    assert "bad_families:OldHook" in seen["oldhook"]  # the entry point refused
    assert seen["missing"] == "PluginError: family 'missing': bad_families has no NOWHERE"
