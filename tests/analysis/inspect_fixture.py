"""A real Inspect log, written offline: a tiny hand-made trace dataset, the execbench eval
task (``execbench.eval.tasks.build_task``) and a scripted model provider (no network, no
tokenizer downloads). Used by the log-reading and report tests."""

from __future__ import annotations

import re
from pathlib import Path

from execbench.dataset import DatasetWriter, Task

LOOP = (
    "def f(xs):\n"             # 1
    "    total = 0\n"          # 2
    "    # running sum\n"      # 3
    "    for x in xs:\n"       # 4
    "        if x > 1:\n"      # 5
    "            total += x\n"  # 6
    "        else:\n"          # 7
    "            total -= 1\n"  # 8
    "    return total\n"       # 9
)
FACT = (
    "def fact(n):\n"                 # 1
    "    if n <= 1:\n"               # 2
    "        return 1\n"             # 3
    "    return n * fact(n - 1)\n"   # 4
)
CALLS = {  # call -> (program, oracle, scripted response)
    "f([3])": (LOOP, [2, 4, 5, 6, 4, 9], "[2, 4, 5, 6, 4, 9]"),                 # correct
    "f([0])": (LOOP, [2, 4, 5, 8, 4, 9], "[2, 4, 8, 4, 9]"),                    # condition skip
    "f([2, 0])": (LOOP, [2, 4, 5, 6, 4, 5, 8, 4, 9], "[2, 4, 5, 6, 4, 5, 7, 8, 4, 9]"),  # nonsense line
    "f([])": (LOOP, [2, 4, 9], "The answer is [1, 2, 4, 9]"),                   # definition call
    "fact(3)": (FACT, [2, 4, 2, 4, 2, 3], ""),                                  # empty response
    "fact(1)": (FACT, [2, 3], "Sure: [2, 3"),                                   # no exit (unclosed)
}


def write_dataset(directory: Path) -> Path:
    with DatasetWriter(directory, settings={"family": "trace", "test": True}) as writer:
        for index, (call, (program, oracle, _)) in enumerate(CALLS.items()):
            source = "loop" if program is LOOP else "fact"
            writer.add(Task(
                id=f"trace/toy/{source}/{index}#trace", family="trace", arm="trace", source_id=f"toy/{source}",
                language="python", prompt_fields={"program": program, "call": call, "topic": "toy"},
                answer=oracle, answer_kind="lines",
                metrics={"trace_length": len(oracle), "cyclomatic": 3, "loc": 8, "answer_tokens": 2 * len(oracle) + 1,
                         "concurrent_segments": 0},
                provenance={"mode": "calls"},
            ))
        writer.close(candidates=len(CALLS))
    return directory


def register_provider() -> str:
    """Register the scripted provider ``ebtest`` (idempotent) and return a model name."""
    from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi

    @modelapi(name="ebtest")
    class Scripted(ModelAPI):  # a test double
        def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                     config=None, **kwargs) -> None:
            super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, api_key_vars=[],
                             config=config)

        async def generate(self, input, tools, tool_choice, config):
            text = input[-1].text
            call = re.findall(r"Call: `([^`]*)`", text)[-1]
            reply = CALLS[call][2]
            output = ModelOutput.from_content(model=self.model_name, content=reply)
            output.usage = ModelUsage(input_tokens=len(text) // 4, output_tokens=max(1, len(reply) // 3),
                                      total_tokens=len(text) // 4 + max(1, len(reply) // 3))
            if call == "fact(1)":
                output.choices[0].stop_reason = "max_tokens"
            return output

    return "ebtest/scripted"


_SHARED: dict[str, tuple[Path, Path]] = {}


def shared_logs() -> tuple[Path, Path]:
    """Two runs of the scripted model (temperature 0 and 1) on the toy dataset, written once
    per test process into a temporary directory: (log directory, dataset directory)."""
    if "logs" not in _SHARED:
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="execbench-logs-"))
        logs, dataset = write_log(root)
        rerun_at_temperature(next(logs.glob("*.eval")), 1.0)
        _SHARED["logs"] = (logs, dataset)
    return _SHARED["logs"]


def rerun_at_temperature(path: Path, temperature: float) -> Path:
    """A second log of the same run as if made with ``--temperature``: a copy of ``path``
    (a fresh eval id, a later creation time, the new temperature) in which the answer to
    ``f([0])`` became correct. Saves a second eval run in the tests."""
    import datetime

    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(path))
    log.eval.eval_id = log.eval.eval_id[::-1]
    log.eval.run_id = log.eval.run_id[::-1]
    old_task_id, log.eval.task_id = log.eval.task_id, log.eval.task_id[::-1]  # Inspect keeps one log per task id
    log.eval.model_generate_config.temperature = temperature
    created = datetime.datetime.fromisoformat(str(log.eval.created)) + datetime.timedelta(minutes=1)
    log.eval.created = created.isoformat()
    for sample in log.samples:
        sample.uuid = (sample.uuid or "")[::-1] or None  # Inspect keeps one row per sample uuid
        score = next(iter(sample.scores.values()))
        if score.metadata and score.metadata.get("extracted") == [2, 4, 8, 4, 9]:
            score.metadata.update(correct=True, similarity=1.0)
            score.value = "C"
    out = path.with_name(path.name.replace(old_task_id, log.eval.task_id))
    write_eval_log(log, str(out))
    return out


def write_log(root: Path, temperature: float | None = None) -> tuple[Path, Path]:
    """Run the eval once; returns (log directory, dataset directory)."""
    from inspect_ai import eval as inspect_eval

    from execbench.eval.tasks import build_task

    dataset = root / "dataset"
    if not (dataset / "tasks.jsonl").exists():
        write_dataset(dataset)
    logs = root / "logs"
    model = register_provider()
    kwargs = {} if temperature is None else {"temperature": temperature}
    [log] = inspect_eval(build_task(dataset, cache=False), model=model, log_dir=str(logs), display="none",
                         fail_on_error=False, **kwargs)
    assert log.status == "success", log.error
    return logs, dataset
