"""The family registry: built-ins by name, third-party families through entry points.

A third-party family is a real installed distribution here: a ``*.dist-info`` folder with an
``entry_points.txt`` on ``sys.path`` (what pip writes), read by ``importlib.metadata`` in a
fresh interpreter, so nothing of this process's registry is patched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import execbench
from execbench import registry
from execbench.contract import Demo, Family, PaperScoring, build_key
from execbench.dataset import DatasetError

SRC = str(Path(execbench.__file__).parents[1])  # this tree's execbench in the child interpreters
PLUGIN = textwrap.dedent('''
    """A small third-party family: the core members only (docs/writing-a-family.md)."""
    from execbench.contract import Candidate, Family, Message, Outcome, Prompt
    from execbench.grading import Score


    class Echo(Family):
        name = "echo"
        version = "1"
        arms = {"say": ("text",)}

        def candidates(self, sources, options, context=None):
            return iter([Candidate(source, {"word": source}) for source in sources])

        def build_candidate(self, candidate, options):
            return Outcome()

        def prompt(self, task, variant="direct"):
            return Prompt([Message("user", "say it")], "echo/direct", "1")

        def grade(self, task, response):
            return Score(correct=response.strip() == task.answer, status="ok", extracted=response.strip())

        def summarize(self, results):
            return {}


    FAMILY = Echo()
''')

PROBE = textwrap.dedent('''
    import json, warnings
    from execbench import registry
    from execbench.dataset import Task
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = registry.names()
    echo = registry.get("echo")
    task = Task.from_json({"id": "echo/mine/a#say", "family": "echo", "arm": "say", "source_id": "mine/a",
                           "language": "python", "prompt_fields": {}, "answer": "hi", "answer_kind": "text", "metrics": {},
                           "provenance": {}})
    print(json.dumps({"names": names, "type": type(echo).__name__, "parsed": list(registry.parse_id(task.id)),
                      "correct": echo.grade(task, " hi ").correct, "trace": type(registry.get("trace")).__name__,
                      "warnings": [str(w.message) for w in caught]}))
''')


def _install(site: Path, entries: str) -> None:
    """A distribution ``echo-family`` whose entry points are ``entries`` (lines of the group)."""
    (site / "echo_family.py").write_text(PLUGIN)
    info = site / "echo_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[execbench.families]\n{entries}\n")


def _probe(site: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": os.pathsep.join((str(site), SRC)), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_third_party_family_registers_through_an_entry_point(tmp_path):
    _install(tmp_path, "echo = echo_family\ntrace = echo_family:FAMILY")
    seen = _probe(tmp_path)
    assert seen["names"] == ["trace", "state", "repo", "cruxeval", "echo"]
    assert seen["type"] == "Echo"
    assert seen["parsed"] == ["echo", "mine", "a", "say"]  # the dataset check knows its arm
    assert seen["correct"] is True
    # an entry point cannot take a built-in's name: the built-in stays, with a warning
    assert seen["trace"] == "TraceFamily"
    assert len(seen["warnings"]) == 1 and "'trace' is already registered" in seen["warnings"][0]


def test_an_unknown_family_or_arm_is_refused():
    with pytest.raises(KeyError, match="unknown family 'nope'"):
        registry.get("nope")
    with pytest.raises(DatasetError, match="unknown family"):
        registry.parse_id("nope/x/y#z")
    with pytest.raises(DatasetError, match="is not an arm"):
        registry.check_record("trace", "no-such-arm", "lines")


def test_every_builtin_is_a_family_named_as_registered():
    for name in registry.names():
        plugin = registry.get(name)
        assert isinstance(plugin, Family) and plugin.name == name and plugin.arms


def test_the_build_key_changes_with_what_an_outcome_depends_on():
    trace = registry.get("trace")
    key = build_key(trace, {"program": "x = 1"}, {"repeats": 3})
    assert key == build_key(trace, {"program": "x = 1"}, {"repeats": 3})
    assert key != build_key(trace, {"program": "x = 2"}, {"repeats": 3})
    assert key != build_key(trace, {"program": "x = 1"}, {"repeats": 2})
    assert key != build_key(registry.get("state"), {"program": "x = 1"}, {"repeats": 3})


def test_the_cli_help_table_says_what_the_plug_ins_declare():
    """``execbench.familyhelp`` is the CLI's static copy (no family is imported at start-up)."""
    from execbench import familyhelp

    plugins = {name: registry.get(name) for name in registry._BUILTIN}
    assert list(familyhelp.SOURCES) == list(familyhelp.VARIANTS) == list(plugins)
    assert familyhelp.VARIANTS == {name: plugin.variants for name, plugin in plugins.items()}
    scoring = {name: plugin.capability(PaperScoring) for name, plugin in plugins.items()}
    assert familyhelp.PAPER_SCORING == {name: paper.variants for name, paper in scoring.items() if paper is not None}
    for name, plugin in plugins.items():
        named = {word.strip() for word in familyhelp.SOURCES[name].replace(" or ", ",").split(",")}
        demo = plugin.capability(Demo)
        assert demo is None or set(demo.sources) <= named, name
    assert familyhelp.families() == "trace, state, repo or cruxeval"
    assert "trace: coconut / coconut-direct" in familyhelp.paper_scoring()
    assert "state" not in familyhelp.variants()  # only direct and cot: nothing to list


BUILD_WITHOUT_REGISTRY = textwrap.dedent('''
    import json, sys
    from execbench.contract import Candidate, Family, Outcome
    from execbench.dataset import DatasetError, read_tasks
    from execbench.families.build import build_dataset


    class Echo(Family):
        name = "trace"  # a built-in's name: the arm check must come from this plug-in, not the registry
        version = "1"
        arms = {"say": ("text",)}
        kind = "text"

        def candidates(self, sources, options, context=None):
            return iter([Candidate(source, {"word": source}) for source in sources])

        def build_candidate(self, candidate, options):
            return Outcome(tasks=[{"id": f"trace/mine/{candidate.key}#say", "family": "trace", "arm": "say",
                                   "source_id": f"mine/{candidate.key}", "language": "python", "prompt_fields": {},
                                   "answer": candidate.payload["word"], "answer_kind": self.kind, "metrics": {},
                                   "provenance": {}}])

        def prompt(self, task, variant="direct"):
            raise NotImplementedError

        def grade(self, task, response):
            raise NotImplementedError

        def summarize(self, results):
            return {}


    out = sys.argv[1]
    build_dataset(Echo(), ["a", "b"], out + "/good", options={})
    wrong = Echo()
    wrong.kind = "lines"  # an answer kind the arm does not declare
    try:
        build_dataset(wrong, ["a"], out + "/wrong", options={})
        refused = ""
    except DatasetError as exc:
        refused = str(exc)
    print(json.dumps({"answers": [t.answer for t in read_tasks(out + "/good")], "refused": refused,
                      "registry": "execbench.registry" in sys.modules}))
''')


def test_the_build_engine_checks_tasks_against_the_plug_in_it_is_handed(tmp_path):
    """Without the registry (the engine does not import it), a task of an arm or answer kind its
    plug-in does not declare is still refused."""
    done = subprocess.run([sys.executable, "-c", BUILD_WITHOUT_REGISTRY, str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["registry"] is False
    assert seen["answers"] == ["a", "b"]
    assert "answer_kind 'lines' is not one the 'trace' plug-in declares" in seen["refused"]
