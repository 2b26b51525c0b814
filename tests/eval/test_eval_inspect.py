"""The Inspect task end to end against a scripted offline model: log structure, scores, metrics."""

from __future__ import annotations

import importlib.metadata
import json

import pytest

from eval_support import SCRIPTED, answer_for, called_x, output
from execbench.eval.run import EvalRequest, run_eval
from execbench.families.trace.prompt import TEMPLATES


def read(path):
    from inspect_ai.log import read_eval_log

    return read_eval_log(path)


def metrics_of(log) -> dict[str, float]:
    return {name: value.value for score in log.results.scores for name, value in score.metrics.items()}


def mixed_handler(number, prompt):
    """f(0..2) right, f(3) cut off in the list, f(4) empty, f(5) transport failure."""
    x = called_x(prompt)
    if x <= 2:
        return output(f"Here it is: {json.dumps(answer_for(x))}", output_tokens=12)
    if x == 3:
        return output("[2, 3", stop_reason="max_tokens", output_tokens=4)
    if x == 4:
        return output("", output_tokens=0)
    raise ConnectionError("connection refused")


def test_log_carries_grades_metadata_templates_and_completion_metrics(dataset, script, tmp_path):
    script.handler = mixed_handler
    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, mode="cot", log_dir=tmp_path / "logs",
                                   extra=["--fail-on-error", "0.5", "--retry-on-error", "0"]))
    assert outcome.success and len(outcome.logs) == 1
    log = read(outcome.logs[0])
    assert log.status == "success" and log.eval.task.endswith("trace")
    assert log.plan.config.temperature == 0.0 or log.eval.config is not None
    meta = log.eval.metadata["execbench"]
    assert meta["prompts"] == {"trace": [{"template": "trace/cot", "version": TEMPLATES.version("cot")}]}
    assert meta["variant"] == "cot" and meta["dataset"]["tasks"] == 6 and meta["dataset"]["content_hash"]
    assert log.eval.metadata["execbench_run"]["variant"] == "cot"

    samples = {int(s.id.split("/")[-1].split("#")[0]): s for s in log.samples}
    assert len(samples) == 6
    for x, sample in samples.items():
        assert sample.metadata["template"] == "trace/cot" and sample.metadata["template_version"] == TEMPLATES.version("cot")
        assert sample.metadata["family"] == "trace" and sample.metadata["source_id"] == "synthetic/f"
        assert sample.metadata["metrics"]["trace_length"] == len(answer_for(x))
        (score,) = sample.scores.values()
        for key in ("correct", "status", "extracted", "similarity", "response_status", "truncated",
                    "stop_reason", "output_tokens", "family", "arm", "source_id", "metrics"):
            assert key in score.metadata, key
        assert sample.metadata["response_status"] == score.metadata["response_status"]
    right = samples[1].scores["execbench_scorer"]
    assert right.value == "C" and json.loads(right.answer) == answer_for(1)
    assert right.metadata["status"] == "ok" and right.metadata["similarity"] == 1.0
    assert right.metadata["output_tokens"] == 12 and right.metadata["stop_reason"] == "stop"
    cut = samples[3].scores["execbench_scorer"].metadata
    assert cut["status"] == "truncated" and cut["truncated"] and cut["response_status"] == "completed"
    assert samples[4].metadata["response_status"] == "empty"
    failed = samples[5].scores["execbench_scorer"].metadata
    assert failed["response_status"] == "error" and "connection refused" in failed["error"]
    assert samples[5].error is not None  # Inspect's own record of the failure is kept too

    metrics = metrics_of(log)
    assert metrics["accuracy_completed"] == pytest.approx(3 / 4)  # C/R
    assert metrics["accuracy_planned"] == pytest.approx(3 / 6)  # C/N
    assert metrics["accuracy"] == pytest.approx(3 / 6)
    assert metrics["completion_rate"] == pytest.approx(4 / 6)
    assert metrics["similarity"] == pytest.approx(3 / 6 + 0)  # three exact answers, the rest 0.0

    (summary,) = outcome.summaries
    total = summary["total"]
    assert (total["N"], total["R"], total["C"], total["errors"], total["empty"], total["truncated"]) == (6, 4, 3, 1, 1, 1)


def test_variant_flag_selects_the_prompt_and_temperature_defaults_to_zero(dataset, script, tmp_path):
    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, variant="3-shot", limit=1,
                                   log_dir=tmp_path / "logs"))
    log = read(outcome.logs[0])
    assert log.samples[0].metadata["template"] == "trace/3-shot"
    assert script.prompts[0].count("Example") == 3
    assert log.plan.config.temperature == 0.0 or log.eval.model_generate_config.temperature in (None, 0.0)
    calls = [event for event in log.samples[0].events if event.event == "model"]
    assert calls and calls[0].config.temperature == 0.0


def test_epochs_give_one_observation_per_response(dataset, script, tmp_path):
    script.handler = lambda n, prompt: output("[2, 3, 5]")  # right for f(0), f(1) only
    outcome = run_eval(EvalRequest(dataset=dataset, model=SCRIPTED, epochs=2, limit=3, log_dir=tmp_path / "logs"))
    total = outcome.summaries[0]["total"]
    assert (total["N"], total["R"], total["C"]) == (6, 6, 4)
    assert script.calls == 6


def test_entry_point_task_is_registered(dataset, script, tmp_path):
    names = {ep.name for ep in importlib.metadata.entry_points(group="inspect_ai")}
    if "execbench" not in names:
        pytest.skip("execbench is not installed (pip install -e .): no inspect_ai entry point")
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval("execbench/trace", task_args={"dataset": str(dataset), "variant": "cot"},
                          model=SCRIPTED, limit=2, log_dir=str(tmp_path / "ep"), display="none")
    assert log.status == "success" and log.eval.task == "execbench/trace"
    assert {s.metadata["template"] for s in log.samples} == {"trace/cot"}
    assert metrics_of(log)["accuracy_completed"] == 1.0


def test_registry_has_a_task_per_family_and_all():
    from execbench import registry
    from execbench.eval import _registry

    assert set(_registry.TASKS) == {*registry.names(), "all"}
