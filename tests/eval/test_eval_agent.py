"""`--mode agent`: the read-only repository agent (react + confined tools + finish) on a repo task."""

from __future__ import annotations

import pytest

from eval_support import SCRIPTED, output, tool_call, write_repo_dataset
from execbench.eval import protocol
from execbench.eval.protocol import EvalSetupError
from execbench.eval.run import EvalRequest, run_eval


def test_agent_mode_selects_the_agent_prompt_only_for_repo_tasks():
    assert protocol.resolve_variant("agent", None, ["repo"]) == "agent"
    with pytest.raises(EvalSetupError, match="needs repo"):
        protocol.resolve_variant("agent", None, ["repo", "trace"])


def test_agent_reads_the_repository_is_refused_the_test_file_and_finishes(tmp_path, script):
    dataset = write_repo_dataset(tmp_path)
    turns = [
        tool_call("search", pattern="def double"),
        tool_call("read_file", path="minilib/core.py"),
        tool_call("read_file", path="tests/test_core.py"),  # the test itself is hidden
        tool_call("read_file", path="../../etc/hostname"),  # outside the repository
        tool_call("finish", answer="42"),
    ]
    script.handler = lambda n, prompt: turns[n - 1] if n <= len(turns) else output("")
    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, mode="agent", log_dir=tmp_path / "logs"))
    assert outcome.success and script.calls == len(turns)

    from inspect_ai.log import read_eval_log

    log = read_eval_log(outcome.logs[0])
    (sample,) = log.samples
    assert sample.metadata["template"] == "repo/agent" and "ReadOnlyAgent" in sample.input[0].text
    tool_results = [m for m in sample.messages if m.role == "tool"]
    assert "minilib/core.py:4: def double(x):" in tool_results[0].text
    assert "return FACTOR * x" in tool_results[1].text
    assert tool_results[2].error is not None and "not available" in tool_results[2].error.message
    assert tool_results[3].error is not None and "outside the repository" in tool_results[3].error.message
    (score,) = sample.scores.values()
    assert score.value == "C" and score.metadata["response_status"] == "completed"
    assert sample.output.completion == "42"
    assert outcome.summaries[0]["total"]["C"] == 1


def test_agent_out_of_turns_is_a_completed_wrong_truncated_answer(tmp_path, script):
    dataset = write_repo_dataset(tmp_path)
    script.handler = lambda n, prompt: tool_call("list_dir", path=".")
    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, mode="agent", log_dir=tmp_path / "logs",
                                   extra=["--message-limit", "6"]))
    total = outcome.summaries[0]["total"]
    assert (total["N"], total["R"], total["C"], total["truncated"], total["empty"]) == (1, 1, 0, 1, 0)
    assert total["extraction"] == {"truncated": 1}
