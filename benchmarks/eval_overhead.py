"""Harness overhead of ``execbench eval`` next to the raw llama.cpp server, side by side.

Workload: N real trace tasks (HumanEval, the ``direct`` prompt), the default local model
(SmolLM2-135M, llama.cpp in-process), C concurrent requests, temperature 0, T output
tokens per answer. ``ignore_eos`` makes every answer exactly T tokens in both arms, so
both do the same generation work whatever the model says.

Each round runs, in alternating order so both share the machine's noise:

* ``raw``      this process starts a fresh llama.cpp server (same settings execbench
               uses) and sends the same rendered prompts with the ``openai`` client,
               C at a time; wall time from server start to the last answer;
* ``execbench`` ``python -m execbench.cli eval DATASET --model local --no-cache ...`` in a
               subprocess, wall time of the whole command (Python start, Inspect import,
               server start, eval, log writing, summary), plus the eval's own wall time
               from its Inspect log.

Overhead = execbench wall / raw wall − 1 (target: under 10%). Medians over rounds.
Run: ``python benchmarks/eval_overhead.py [--tasks 12] [--tokens 64] [--connections 2] [--rounds 3]``;
prints JSON; recorded results: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"  # this checkout's execbench, in both arms
sys.path.insert(0, str(SRC))


def build_dataset(root: Path, n: int) -> Path:
    from execbench import registry
    from execbench.dataset import DatasetWriter, read_tasks
    from execbench.dataset.cache import BuildCache
    from execbench.families.build import build_dataset as build

    plugin = registry.get("trace")
    cache = BuildCache()
    try:
        build(plugin, ["humaneval"], root / "built", options=dict(plugin.default_options), jobs=2, cache=cache,
              limit=max(4, n // 4))
    finally:
        cache.close()
    tasks = list(read_tasks(root / "built"))[:n]
    if len(tasks) < n:
        raise SystemExit(f"only {len(tasks)} tasks built; ask for fewer")
    with DatasetWriter(root / "dataset", settings={"benchmark": "eval_overhead", "tasks": n}) as writer:
        for task in tasks:
            writer.add(task)
        writer.close()
    return root / "dataset"


async def _drive(base_url: str, api_key: str, prompts: list[list[dict]], tokens: int, connections: int) -> list[int]:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=900)
    gate = asyncio.Semaphore(connections)

    async def one(messages: list[dict]) -> int:
        async with gate:
            response = await client.chat.completions.create(
                model="local", messages=messages, temperature=0.0, max_tokens=tokens,
                extra_body={"ignore_eos": True})
            return response.usage.completion_tokens

    try:
        return list(await asyncio.gather(*(one(m) for m in prompts)))
    finally:
        await client.close()


def run_raw(dataset: Path, tokens: int, connections: int) -> dict:
    from execbench.dataset import read_tasks
    from execbench.eval import protocol
    from execbench.models.names import resolve
    from execbench.models.server import LocalServer

    prompts = [[{"role": m.role, "content": m.content} for m in item.prompt.messages]
               for item in protocol.render(read_tasks(dataset), "direct")]
    started = time.perf_counter()
    with LocalServer(resolve("local"), parallel=connections) as server:
        ready = time.perf_counter()
        produced = asyncio.run(_drive(server.base_url, server.api_key, prompts, tokens, connections))
        done = time.perf_counter()
    return {"wall": done - started, "requests_wall": done - ready, "server_start": ready - started,
            "output_tokens": sum(produced), "samples": len(prompts)}


def run_harness(dataset: Path, tokens: int, connections: int, log_dir: Path) -> dict:
    command = [sys.executable, "-m", "execbench.cli", "eval", str(dataset), "--model", "local", "--no-cache",
               "--max-connections", str(connections), "--log-dir", str(log_dir), "--max-tokens", str(tokens),
               "--extra-body", json.dumps({"ignore_eos": True}), "--display", "none"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"execbench eval failed ({result.returncode}):\n{result.stderr[-3000:]}")
    from inspect_ai.log import list_eval_logs, read_eval_log

    (info,) = list_eval_logs(str(log_dir))
    log = read_eval_log(info.name)
    from datetime import datetime

    eval_wall = (datetime.fromisoformat(log.stats.completed_at) - datetime.fromisoformat(log.stats.started_at)).total_seconds()
    tokens_out = sum(usage.output_tokens for usage in log.stats.model_usage.values())
    return {"wall": wall, "eval_wall": eval_wall, "output_tokens": tokens_out, "samples": len(log.samples or [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with tempfile.TemporaryDirectory(prefix="execbench-eval-overhead-") as tmp:
        summary = measure(Path(tmp), args)
    print(json.dumps(summary, indent=2))


def measure(root: Path, args: argparse.Namespace) -> dict:
    os.environ.setdefault("INSPECT_CACHE_DIR", str(root / "inspect-cache"))
    dataset = build_dataset(root, args.tasks)
    load_before = os.getloadavg()
    rounds = []
    for number in range(args.rounds):
        order = ("raw", "execbench") if number % 2 == 0 else ("execbench", "raw")
        result = {}
        for arm in order:
            if arm == "raw":
                result["raw"] = run_raw(dataset, args.tokens, args.connections)
            else:
                result["execbench"] = run_harness(dataset, args.tokens, args.connections, root / f"logs-{number}")
        rounds.append(result)
        print(json.dumps({"round": number, **result}), file=sys.stderr)
    raw = statistics.median(r["raw"]["wall"] for r in rounds)
    raw_requests = statistics.median(r["raw"]["requests_wall"] for r in rounds)
    harness = statistics.median(r["execbench"]["wall"] for r in rounds)
    harness_eval = statistics.median(r["execbench"]["eval_wall"] for r in rounds)
    summary = {
        "workload": {"tasks": args.tasks, "output_tokens_per_answer": args.tokens, "connections": args.connections,
                     "rounds": args.rounds, "model": "SmolLM2-135M-Instruct Q4_1 (llama.cpp, in-process)",
                     "cores": len(os.sched_getaffinity(0)), "loadavg_before": load_before,
                     "loadavg_after": os.getloadavg()},
        "raw": {"wall_s": round(raw, 2), "requests_wall_s": round(raw_requests, 2),
                "samples_per_s": round(args.tasks / raw, 3)},
        "execbench": {"wall_s": round(harness, 2), "eval_wall_s": round(harness_eval, 2),
                      "samples_per_s": round(args.tasks / harness, 3)},
        "overhead": {"wall": round(harness / raw - 1, 4),
                     "eval_only_vs_requests": round(harness_eval / raw_requests - 1, 4)},
        "rounds": rounds,
    }
    return summary


if __name__ == "__main__":
    main()
