"""Extra `execbench eval` flags become typed Inspect eval_set / GenerateConfig keywords."""

from __future__ import annotations

import pytest

from execbench.eval.passthrough import PassthroughError, parse


def test_generation_and_eval_set_options_are_typed():
    options = parse(["--max-tokens", "2048", "--reasoning-effort=high", "--fail-on-error", "0.05",
                     "--display", "plain", "--seed", "7", "--temperature", "0.7"])
    assert options.generate == {"max_tokens": 2048, "reasoning_effort": "high", "seed": 7, "temperature": 0.7}
    assert options.eval_set == {"fail_on_error": 0.05, "display": "plain"}


def test_boolean_flags_and_negation():
    options = parse(["--score-display", "--no-log-realtime", "--fail-on-error", "false", "--debug-errors"])
    assert options.eval_set == {"score_display": True, "log_realtime": False, "fail_on_error": False,
                                "debug_errors": True}


def test_lists_json_and_model_args():
    options = parse(["--stop-seqs", "END,STOP", "--extra-body", '{"top_k": 5}', "-M", "stream=false",
                     "--model-arg", "client_timeout=30"])
    assert options.generate == {"stop_seqs": ["END", "STOP"], "extra_body": {"top_k": 5}}
    assert options.model_args == {"stream": False, "client_timeout": 30}
    assert options.as_kwargs()["model_args"] == {"stream": False, "client_timeout": 30}
    assert parse(["--stop-seqs", "[x"]).generate == {"stop_seqs": ["[x"]}


@pytest.mark.parametrize("args, message", [
    (["--no-such-option", "1"], "not an Inspect"),
    (["--limit", "3"], "execbench's --limit"),
    (["--model", "x/y"], "execbench's --model"),
    (["-T", "dataset=x"], "task arguments"),
    (["--max-tokens", "lots"], "max-tokens"),
    (["--display", "fireworks"], "display"),
    (["--max-tokens"], "needs a value"),
    (["stray"], "unexpected argument"),
    (["-M", "novalue"], "KEY=VALUE"),
])
def test_bad_flags_are_refused_with_a_reason(args, message):
    with pytest.raises(PassthroughError, match=message):
        parse(args)
