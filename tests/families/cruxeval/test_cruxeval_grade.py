"""Grading cruxeval answers: CRUXEval's extraction, Python == on literals, the benchmark's f in the
sandbox for input prediction, and hostile answers (wrong with a status, nothing run, nothing written)."""

from __future__ import annotations

import os

import pytest

from execbench import registry
from execbench.dataset import Task
from execbench.families.cruxeval.grade import grade_many

PROGRAM = "def f(text, n=1):\n    return text * n"


def _task(arm: str, *, program: str = PROGRAM, input: str = "'ab', 2", output: str = "'abab'") -> Task:
    fields = ({"program": program, "input": input, "call": f"f({input})"} if arm == "output-prediction"
              else {"program": program, "output": output})
    return Task(id=f"cruxeval/cruxeval/sample_0#{arm}", family="cruxeval", arm=arm, source_id="cruxeval/sample_0",
                language="python", prompt_fields=fields, answer=output if arm == "output-prediction" else input,
                answer_kind="python-literal", metrics={}, provenance={})


def out_task(output: str, input: str = "'ab', 2") -> Task:
    return _task("output-prediction", input=input, output=output)


def grade(task: Task, response: str):
    return registry.get("cruxeval").grade(task, response)


@pytest.mark.parametrize("expected, answer, correct", [
    ("1", "1.0", True), ("1", "True", True), ("True", "1", True),  # 1 == 1.0 == True
    ("[1, 2]", "(1, 2)", False), ("(1, 2)", "(1, 2)", True),  # list never equals tuple
    ("{1, 2, 3}", "{3, 2, 1}", True), ("{'a': 1, 'b': 2}", "{'b': 2, 'a': 1}", True),  # order irrelevant
    ("{1: 'x'}", "{1.0: 'x'}", True), ("'a'", '"a"', True), ("0.1", "0.1000001", False),
    ("(1, 2)", "1, 2", False),  # assert o == 1, 2: "2" is the assertion's message (CRUXEval: wrong)
    ("1", "1, 'message'", True),
    ("[]", "[] # done", True),
])
def test_output_prediction_is_python_equality_as_in_the_assertion(expected, answer, correct):
    score = grade(out_task(expected), f"[ANSWER]\nassert f('ab', 2) == {answer}\n[/ANSWER]")
    assert (score.correct, score.status) == (correct, "ok")


def test_cruxeval_extraction_takes_the_first_answer_block():
    task = out_task("'abab'")
    text = ("Let's execute: the result is 'x' == 'y'.\n[/THOUGHT]\n[ANSWER]\nassert f('ab', 2) == 'abab'\n[/ANSWER]\n"
            "[ANSWER]\nassert f('ab', 2) == 'zz'\n[/ANSWER]")
    assert grade(task, text).correct
    assert grade(task, "[ANSWER]\nassert f('ab', 2) == 'abab'").correct  # no closing tag (a stop word)
    assert grade(task, "[ANSWER]\n'abab'\n[/ANSWER]").correct  # no ==: the block is the value
    repeated = grade(task, "[ANSWER]\nassert f('ab', 2) == f('ab', 2)\n[/ANSWER]")
    assert (repeated.correct, repeated.status) == (False, "not_literal")
    truncated = grade(task, "[ANSWER]\nassert f('ab', 2) == 'ab")
    assert (truncated.correct, truncated.status) == (False, "no_answer")


def test_direct_style_answers():
    task = out_task("'abab'")
    assert grade(task, "The function repeats the text.\nassert f('ab', 2) == 'abab'\nThat is all.").correct
    assert grade(task, "```python\nassert f('ab', 2) == 'abab'\n```").correct
    assert grade(task, "It returns:\n'abab'").correct
    assert grade(task, "assert f('ab', 2) == [\n  'abab'\n][0]").status == "not_literal"
    assert grade(task, "<think>maybe 'x'</think>assert f('ab', 2) == 'abab'").correct
    assert grade(task, "<think>never closed 'abab'").status == "truncated"
    assert grade(task, "").status == "no_answer"


@pytest.mark.parametrize("answer, status", [
    ("__import__('os').system('touch PWNED')", "not_literal"),
    ("open('PWNED', 'w')", "not_literal"),
    ("'abab'.upper()", "not_literal"),
    ("'ab' * 2", "not_literal"),
    ("[" * 60 + "]" * 60, "too_large"),
    ("[" * 100_000, "too_large"),
    ("'" + "a" * 200_000 + "'", "too_large"),
    ("-" * 50_000 + "1", "not_literal"),
    ("f'{1}'", "not_literal"),
    ("+0" * 200_000, "too_large"),
    ("9" * 5000, "too_large"),
])
def test_hostile_output_answers_are_wrong_with_a_status(answer, status, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    score = grade(out_task("'abab'"), f"[ANSWER]\nassert f('ab', 2) == {answer}\n[/ANSWER]")
    assert (score.correct, score.status) == (False, status)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_input_prediction_runs_the_benchmarks_f_on_literal_arguments():
    task = _task("input-prediction")
    pairs = [
        "[ANSWER]\nassert f('ab', 2) == 'abab'\n[/ANSWER]",  # the recorded input
        "[ANSWER]\nassert f('abab') == 'abab'\n[/ANSWER]",  # another input that works (default n)
        "[ANSWER]\nassert f(text='a', n=4) == 'abab'\n[/ANSWER]",  # keywords: 'aaaa', wrong
        "[ANSWER]\nassert f('abab', n=1,) == 'abab'\n[/ANSWER]",  # keyword + trailing comma
        "[ANSWER]\nassert f(2, 'ab') == 'abab'\n[/ANSWER]",  # int * str: also 'abab'
        "[ANSWER]\nassert f(['ab'], 2) == 'abab'\n[/ANSWER]",  # a list: wrong
        "[ANSWER]\nassert f({}, {}) == 'abab'\n[/ANSWER]",  # f raises TypeError: wrong
        "assert f('ab', 2) == 'abab'",  # direct style
        "f('ab', 2)",  # just the call
        "'ab', 2",  # just the arguments
    ]
    scores = grade_many([(task, text) for text in pairs])
    assert [s.correct for s in scores] == [True, True, False, True, True, False, False, True, True, True]
    assert all(s.status == "ok" for s in scores)
    assert scores[2].details["returned"] == "'aaaa'"
    assert "TypeError" in scores[6].details["error"]
    assert scores[1].extracted == "f('abab')"
    # one at a time gives the same verdicts
    assert [grade(task, text).correct for text in pairs[:3]] == [True, True, False]


@pytest.mark.parametrize("call, status", [
    ("f(__import__('os').system('touch {sentinel}'))", "not_literal"),
    ("f(open('{sentinel}', 'w'))", "not_literal"),
    ("f(*['ab', 2])", "not_literal"),
    ("f(**{{'text': 'ab'}})", "not_literal"),
    ("f('ab', n=2).upper()", "not_literal"),
    ("f(text.upper())", "not_literal"),
    ("f(lambda: 0)", "not_literal"),
    ("f(x for x in 'ab')", "not_literal"),
    ("f('ab', exec('import os'))", "not_literal"),
    ("f(" + "[" * 5000 + "]" * 5000 + ")", "too_large"),
    ("f('" + "a" * 200_000 + "')", "too_large"),
    ("f(" + "-" * 50_000 + "1)", "not_literal"),
    ("f(" + "-" * 100_000 + "1)", "too_large"),
    ("f(" + "9" * 5000 + ")", "too_large"),
    ("f('ab'", "no_answer"),
    ("f(??)", "no_answer"),
    ("f(n=2, 'ab')", "no_answer"),
    ("g('ab', 2)", "no_answer"),
])
def test_hostile_input_answers_are_wrong_with_a_status_and_change_nothing(call, status, tmp_path, monkeypatch):
    sentinel = tmp_path / "PWNED"
    monkeypatch.chdir(tmp_path)
    text = call.format(sentinel=sentinel)
    score = grade(_task("input-prediction"), f"[ANSWER]\nassert {text} == 'abab'\n[/ANSWER]")
    assert (score.correct, score.status) == (False, status)
    assert not sentinel.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_benchmarks_f_on_model_arguments_stays_in_the_sandbox(tmp_path):
    """Literal arguments can steer the benchmark's own f: writes, loops and floods stay inside."""
    target = tmp_path / "written"
    program = ("def f(path, n):\n    if n < 0:\n        while True:\n            pass\n"
               "    if n > 10**6:\n        return [0] * n\n    with open(path, 'w') as fh:\n        fh.write('x')\n"
               "    return n")
    task = _task("input-prediction", program=program, input="'out.txt', 1", output="1")
    answers = ["[ANSWER]\nassert f('out.txt', 1) == 1\n[/ANSWER]",
               f"[ANSWER]\nassert f({str(target)!r}, 1) == 1\n[/ANSWER]",
               "[ANSWER]\nassert f('x', -1) == 1\n[/ANSWER]",
               "[ANSWER]\nassert f('x', 10**12) == 1\n[/ANSWER]",
               f"[ANSWER]\nassert f('x', {10**12}) == 1\n[/ANSWER]"]
    scores = grade_many([(task, text) for text in answers])
    assert [s.correct for s in scores] == [True, False, False, False, False]
    assert scores[1].details["error"].startswith(("PermissionError", "FileNotFoundError", "OSError"))
    assert "limit" in scores[2].details["error"]
    assert scores[3].status == "not_literal"  # 10**12 is an expression
    assert "MemoryError" in scores[4].details["error"]
    assert not target.exists()
    assert not os.path.exists("out.txt")


def test_summary_by_arm():
    task = out_task("'abab'")
    results = [(task, grade(task, "assert f('ab', 2) == 'abab'")), (task, grade(task, "assert f('ab', 2) == 1"))]
    summary = registry.get("cruxeval").summarize(results)
    assert summary["arms"]["output-prediction"] == {"n": 2, "correct": 1, "accuracy": 0.5, "statuses": {"ok": 2}}
    assert summary["accuracy"] == 0.5


def _state_task(arm: str = "inside-loop-state") -> Task:
    fields = {"program": "def f(n):\n    total = 0\n    i = 0\n    while i < n:\n        total += i\n        i += 1\n"
                         "    return total", "input": "4", "call": "f(4)", "loop_line": 4, "loop_iterations": 4,
              "inside_iteration": 3, "fields": ["total", "i"]}
    return Task(id=f"cruxeval/cruxeval/sample_0#{arm}", family="cruxeval", arm=arm, source_id="cruxeval/sample_0",
                language="python", prompt_fields=fields, answer={"total": 1, "i": 2}, answer_kind="json",
                metrics={}, provenance={})


@pytest.mark.parametrize("response, correct, status", [
    ('{"total": 1, "i": 2}', True, "ok"),
    ('Step by step... {"i": 0}\nSo: {"i": 2, "total": 1}', True, "ok"),
    ('{"total": 1, "i": 2} but maybe {"x": 1}', True, "ok"),  # the object with the asked keys wins
    ('{"total": 1.0, "i": 2}', False, "ok"),  # type-strict
    ('{"total": true, "i": 2}', False, "ok"),
    ('{"total": 1}', False, "ok"),
    ("total = 1, i = 2", False, "no_answer"),
    ("[" * 100 + "{}", False, "too_large"),
    ('{"total": ' + "9" * 5000 + ', "i": 2}', False, "no_answer"),
])
def test_checkpoint_answers_are_json_compared_type_strictly(response, correct, status):
    score = grade(_state_task(), response)
    assert (score.correct, score.status) == (correct, status)


def test_checkpoint_prompts():
    family = registry.get("cruxeval")
    inside = family.prompt(_state_task(), "direct").messages[0].content
    assert "4 |     while i < n:" in inside and "Call: `f(4)`" in inside
    assert "iteration 3 of the loop on line 4" in inside and '{"total": ..., "i": ...}' in inside
    post = family.prompt(_state_task("post-loop-state"), "cot")
    assert "right after the loop on line 4 ends" in post.messages[0].content and post.template == "cruxeval/state-cot"
    assert family.prompt(_state_task(), "cruxeval").template == "cruxeval/state-direct"


@pytest.mark.slow
@pytest.mark.parametrize("landlock", ["on", "forced off"])
def test_an_answer_that_makes_f_kill_the_runner_costs_only_itself(landlock, monkeypatch):
    """The kill is refused by the job's signal scope (f raises: "error"); without Landlock it
    kills the runner (the run fails: "sandbox"). Either way the other answers are graded."""
    if landlock == "forced off":
        monkeypatch.setenv("EXECBENCH_SANDBOX_FORCE_FALLBACK", "landlock")
    program = "import os, signal\ndef f(x):\n    if x == 'boom':\n        os.kill(os.getppid(), signal.SIGKILL)\n    return x"
    task = _task("input-prediction", program=program, input="'ok'", output="'ok'")
    scores = grade_many(
        [(task, "assert f('ok') == 'ok'"), (task, "assert f('boom') == 'ok'"), (task, "assert f('ok') == 'ok'")])
    assert [s.correct for s in scores] == [True, False, True]
    assert scores[1].details["run"] == ("error" if landlock == "on" else "sandbox")


def test_a_call_is_found_as_cruxeval_finds_it():
    # "assert f" + the rest, stripped: CRUXEval reads "f('ab', 2)" here
    assert grade(_task("input-prediction"), "[ANSWER]\nassert f ('ab', 2) == 'abab'\n[/ANSWER]").status == "ok"
    # without "assert f" the text must contain "f(" (CRUXEval: otherwise never correct)
    score = grade(_task("input-prediction"), "[ANSWER]\nf ('ab', 2)\n[/ANSWER]")
    assert (score.correct, score.status) == (False, "no_answer")
