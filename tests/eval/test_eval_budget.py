"""Answer budgets (issue 34): no default budget cuts off a right answer by construction, and an
answer cut off at the token limit is reported as truncated, never as empty."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from eval_support import SCRIPTED, answer_for, called_x, output, synthetic_task
from execbench import registry
from execbench.contract import AnalysisFacts
from execbench.dataset import Task, make_id, read_tasks
from execbench.eval import protocol
from execbench.eval.run import LOCAL_MAX_TOKENS, EvalRequest, _answer_budget, run_eval


def reply_bytes(text: str) -> int:
    return len(text.encode())


def test_each_family_budget_fits_its_answer_as_the_prompt_asks_for_it():
    trace = synthetic_task(3)
    long_trace = dataclasses.replace(trace, answer=list(range(100, 400)))
    state = Task(id=make_id("state", "classic", "collatz", "short-trace-final"), family="state",
                 arm="short-trace-final", source_id="classic/collatz", language="cpp",
                 prompt_fields={"program": "int main() {}", "input": "10\n"}, answer="9 20\n", answer_kind="text",
                 metrics={}, provenance={})
    crux = Task(id=make_id("cruxeval", "cruxeval", "sample_7", "output-prediction"), family="cruxeval",
                arm="output-prediction", source_id="cruxeval/sample_7", language="python",
                prompt_fields={"program": "def f(s):\n    return s * 40\n", "input": "'ab'", "call": "f('ab')"},
                answer="'" + "ab" * 40 + "'", answer_kind="python-literal", metrics={}, provenance={})
    replies = [  # each task's key written exactly as its prompt asks for the reply
        (trace, json.dumps(trace.answer)),
        (long_trace, json.dumps(long_trace.answer)),
        (state, json.dumps({"output": state.answer})),
        (crux, f"assert {crux.prompt_fields['call']} == {crux.answer}"),
    ]
    for task, reply in replies:
        budget = protocol.answer_budget(task)
        assert budget >= reply_bytes(reply) + 32, (task.id, budget, reply)  # + a code fence and a lead-in
    # the budget grows with the answer: a 300-item trace needs far more than the demo's old 128 tokens
    assert protocol.answer_budget(long_trace) > 5 * protocol.answer_budget(trace) > 128
    assert protocol.sample_budget(trace, None) is None
    assert protocol.sample_budget(trace, 0) == protocol.answer_budget(trace)
    assert protocol.sample_budget(trace, 4096) == 4096


def test_local_defaults_fit_each_answer_and_a_user_budget_holds_with_a_note():
    tasks = [synthetic_task(i) for i in range(3)]
    said: list[str] = []

    def budget(local, variant="direct", mode=None, **kwargs):
        request = EvalRequest(dataset=Path("unused"), mode=mode)  # only the mode is read
        return _answer_budget(request, kwargs, local, variant, tasks, said.append), kwargs

    assert budget(True) == (0, {})  # direct: exactly each answer's budget
    assert budget(True, "cot") == (LOCAL_MAX_TOKENS, {})  # room to reason, raised for a long answer
    assert budget(True, "direct", "agent") == (None, {"max_tokens": LOCAL_MAX_TOKENS})  # per agent turn
    assert budget(False) == (None, {})  # a remote model keeps its provider's default
    assert not said
    assert budget(True, max_tokens=4096) == (None, {"max_tokens": 4096}) and not said
    assert budget(True, max_tokens=8) == (None, {"max_tokens": 8})
    (note,) = said
    assert "--max-tokens 8" in note and "3 of the 3 answers" in note and "truncated" in note


def test_each_sample_is_sent_with_its_own_answer_budget(dataset, script, tmp_path):
    from inspect_ai import eval as inspect_eval

    from execbench.eval.tasks import build_task

    tasks = {int(t.id.split("/")[-1].split("#")[0]): t for t in read_tasks(dataset)}
    (log,) = inspect_eval(build_task(dataset, answer_budget=0), model=SCRIPTED, log_dir=str(tmp_path / "a"),
                          display="none")
    expected = {x: protocol.answer_budget(task) for x, task in tasks.items()}
    assert script.max_tokens == expected
    assert len(set(expected.values())) == 2  # the two trace lengths of f(x) get different budgets
    assert {int(s.id.split("/")[-1].split("#")[0]): s.metadata["max_tokens"] for s in log.samples} == expected

    script.max_tokens = {}
    inspect_eval(build_task(dataset, answer_budget=500), model=SCRIPTED, log_dir=str(tmp_path / "b"),
                 display="none")
    assert set(script.max_tokens.values()) == {500}

    script.max_tokens = {}
    (log,) = inspect_eval(build_task(dataset), model=SCRIPTED, log_dir=str(tmp_path / "c"), display="none",
                          max_tokens=77)
    assert set(script.max_tokens.values()) == {77} and "max_tokens" not in log.samples[0].metadata


def cut_off_handler(number, prompt):
    """f(0), f(1): cut off before any list; f(2): cut off inside the list; f(3): cut off past the
    run's end; f(4) and f(5): right."""
    x = called_x(prompt)
    key = answer_for(x)
    if x <= 1:
        return output("Let me follow the program line by line. First", stop_reason="max_tokens", output_tokens=9)
    if x == 2:
        return output(json.dumps(key)[:4], stop_reason="max_tokens", output_tokens=4)
    if x == 3:
        return output(json.dumps(key + [2, 3])[:-1], stop_reason="max_tokens", output_tokens=16)
    return output(json.dumps(key))


def test_an_answer_cut_off_at_the_token_limit_is_truncated_not_empty(dataset, script, tmp_path):
    from execbench.analysis.logs import read_logs
    from execbench.analysis.taxonomy import category_counts

    script.handler = cut_off_handler
    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=tmp_path / "logs"))
    total = outcome.summaries[0]["total"]
    assert (total["N"], total["R"], total["C"], total["empty"], total["truncated"]) == (6, 6, 2, 0, 4)

    samples = read_logs([tmp_path / "logs"], [dataset]).samples
    wrong = samples[samples["completed"] & ~samples["correct"]]
    assert len(wrong) == 4 and set(wrong["status"]) == {"truncated"} and set(wrong["stop_reason"]) == {"max_tokens"}
    counts = category_counts(wrong, registry.get("trace").capability(AnalysisFacts).taxonomy, sorted(set(wrong["setting"])))
    assert counts.sum().to_dict() == {"truncated": 3, "no exit": 1}


def test_a_state_envelope_cut_off_is_truncated_not_a_bad_envelope():
    state = Task(id=make_id("state", "classic", "collatz", "short-trace-final"), family="state",
                 arm="short-trace-final", source_id="classic/collatz", language="cpp",
                 prompt_fields={"program": "int main() {}", "input": "10\n"}, answer="9 20\n", answer_kind="text",
                 metrics={}, provenance={})
    cut = protocol.grade_response(state, '{"output": "9 2', stop_reason="max_tokens")
    assert cut["status"] == "truncated" and cut["truncated"] and not cut["correct"]
    unfinished = protocol.grade_response(state, '{"output": "9 2', stop_reason="stop")
    assert unfinished["status"] == "bad_envelope"  # not cut off: the model's own malformed reply
