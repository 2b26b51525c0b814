"""Interrupted or failed runs resume without repeating finished samples; the response cache makes reruns free."""

from __future__ import annotations

from eval_support import SCRIPTED, answer_for, called_x, output
from execbench.eval.run import EvalRequest, run_eval


def request(dataset, tmp_path, *extra, **options):
    return EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=tmp_path / "logs", extra=list(extra), **options)


def test_rerun_after_failures_only_runs_the_rest(dataset, script, tmp_path):
    def fail_after_two(number, prompt):
        if number > 2:
            raise ConnectionError("server went away")
        return output(str(answer_for(called_x(prompt))))

    script.handler = fail_after_two
    first = run_eval(request(dataset, tmp_path, "--retry-attempts", "0", "--retry-on-error", "0", cache=False))
    assert not first.success and script.calls == 6
    total = first.summaries[0]["total"]
    assert (total["N"], total["R"], total["errors"]) == (6, 2, 4)

    script.handler = lambda n, prompt: output(str(answer_for(called_x(prompt))))
    second = run_eval(request(dataset, tmp_path, cache=False))
    assert second.success and script.calls == 6 + 4  # the two finished samples were not asked again
    total = second.summaries[0]["total"]
    assert (total["N"], total["R"], total["C"], total["errors"]) == (6, 6, 6, 0)


def test_limit_then_full_run_only_does_the_rest(dataset, script, tmp_path):
    run_eval(request(dataset, tmp_path, limit=2, cache=False))
    assert script.calls == 2
    full = run_eval(request(dataset, tmp_path, cache=False))
    assert script.calls == 6 and full.summaries[0]["total"]["R"] == 6


def test_response_cache_makes_a_fresh_rerun_free(dataset, script, tmp_path):
    first = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=tmp_path / "a"))
    assert script.calls == 6
    second = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=tmp_path / "b"))  # new eval set
    assert script.calls == 6 and second.summaries[0]["total"]["C"] == first.summaries[0]["total"]["C"] == 6
    run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=tmp_path / "c", cache=False))
    assert script.calls == 12
    run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, log_dir=tmp_path / "d", extra=["--max-tokens", "77"]))
    assert script.calls == 18  # other generation settings: other cache keys
