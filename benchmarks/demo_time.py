"""`execbench demo` timed as a new user meets it: fresh HOME and caches, per-phase and per-sample figures.

    python benchmarks/demo_time.py [--rounds 2] [--threads N] [--src PATH ...] [--keep DIR]

Each round runs ``python -m execbench.cli demo -o DIR/demo`` in a child process whose HOME, XDG
directories, ``EXECBENCH_CACHE_DIR`` and ``INSPECT_CACHE_DIR`` lie in a fresh temporary directory:
a cold build cache and a cold response cache, as after the README's first command (installed
packages and the GGUF are reused; the pip install itself is not timed here). ``INSPECT_DISPLAY=plain``.

Recorded per round: the command's wall time; the demo's own phases (``demo/timings.json``:
``build``, ``server_start``, ``eval`` (which includes the server start and Inspect's import),
``replay`` (building the tasks of the shipped published predictions and replaying them, issue 37),
``total``); from the live model's Inspect log: samples, prompt and output tokens, stop reasons, truncated
answers (stop reason ``max_tokens``), per-sample seconds and the tokens per second of the whole
eval; the load average before and after. ``--src`` runs each given source tree in turn
(``PYTHONPATH``; e.g. ``--src /tmp/head/src src`` for the code before and after issue 34), so two
trees are compared in the same run; ``--threads`` sets ``EXECBENCH_LOCAL_THREADS``.

Target (issue 34): the demo completes in under 90 s on 2 idle cores. Compare figures only within
one run: this machine's speed changes with its load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

TARGET_SECONDS = 90.0


def _environment(home: Path, src: Path | None, threads: int | None) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CONFIG_HOME": str(home / ".config"),
           "EXECBENCH_CACHE_DIR": str(home / ".cache" / "execbench"),
           "INSPECT_CACHE_DIR": str(home / ".cache" / "inspect_ai"), "INSPECT_DISPLAY": "plain",
           "COLUMNS": "160"}
    env.pop("INSPECT_LOG_DIR", None)
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    if threads is not None:
        env["EXECBENCH_LOCAL_THREADS"] = str(threads)
    return env


def _log_figures(logs: Path) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    # the live model's log (the demo also replays shipped published predictions into logs/: issue 37)
    (path,) = [p for p in sorted(logs.glob("*.eval"))
               if not read_eval_log(str(p), header_only=True).eval.model.startswith("replay/")]
    log = read_eval_log(str(path))
    samples = log.samples or []
    rows = []
    for sample in samples:
        usage = sample.output.usage
        grade = next(iter(sample.scores.values())).metadata if sample.scores else {}
        rows.append({"id": sample.id, "seconds": round(sample.total_time or 0.0, 2),
                     "input_tokens": (usage.input_tokens + (usage.input_tokens_cache_read or 0)) if usage else None,
                     "output_tokens": usage.output_tokens if usage else None,
                     "max_tokens": sample.metadata.get("max_tokens"), "stop_reason": sample.output.stop_reason,
                     "status": (grade or {}).get("status")})
    started, ended = log.stats.started_at, log.stats.completed_at
    eval_seconds = ((datetime.fromisoformat(ended) - datetime.fromisoformat(started)).total_seconds()
                    if started and ended else None)
    prompt = sum(r["input_tokens"] or 0 for r in rows)
    output = sum(r["output_tokens"] or 0 for r in rows)
    return {"samples": len(rows), "prompt_tokens": prompt, "output_tokens": output,
            "truncated": sum(r["stop_reason"] == "max_tokens" for r in rows),
            "inspect_eval_seconds": eval_seconds,
            "tokens_per_second": round((prompt + output) / eval_seconds, 1) if eval_seconds else None,
            "per_sample": rows}


def run_once(src: Path | None, threads: int | None, keep: Path | None) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="demo-time-", dir=keep))
    out = home / "demo"
    load_before = os.getloadavg()
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "execbench.cli", "demo", "-o", str(out)], cwd=home,
                          env=_environment(home, src, threads), capture_output=True, text=True)
    wall = time.perf_counter() - started
    load_after = os.getloadavg()
    if proc.returncode != 0:
        raise SystemExit(f"execbench demo failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    timings_file = out / "timings.json"
    phases = json.loads(timings_file.read_text()) if timings_file.is_file() else {}  # (older trees: none)
    return {"src": str(src) if src else "installed", "threads": threads, "wall_seconds": round(wall, 1),
            "phases": phases, "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in load_after], **_log_figures(out / "logs"), "home": str(home)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1, help="runs per source tree (each from cold caches)")
    parser.add_argument("--threads", type=int, default=None, help="EXECBENCH_LOCAL_THREADS for the local server")
    parser.add_argument("--src", type=Path, nargs="*", default=None, help="source trees to run in turn (PYTHONPATH)")
    parser.add_argument("--keep", type=Path, default=None, help="make the temporary homes here (and keep them)")
    parser.add_argument("--json", action="store_true", help="print every record as JSON")
    args = parser.parse_args()
    trees: list[Path | None] = list(args.src) if args.src else [None]
    records = []
    for round_number in range(args.rounds):
        for tree in trees:
            record = run_once(tree, args.threads, args.keep)
            record["round"] = round_number + 1
            records.append(record)
            phases = ", ".join(f"{k} {v:.1f} s" for k, v in record["phases"].items())
            verdict = "within" if record["wall_seconds"] < TARGET_SECONDS else "OVER"
            print(f"round {record['round']} {record['src']}: {record['wall_seconds']:.1f} s wall ({verdict} the "
                  f"{TARGET_SECONDS:.0f} s target); phases: {phases or 'not recorded'}; {record['samples']} samples, "
                  f"{record['prompt_tokens']} prompt + {record['output_tokens']} output tokens, "
                  f"{record['truncated']} cut off at max_tokens, {record['tokens_per_second']} tok/s in the eval; "
                  f"load {record['load_before'][0]} -> {record['load_after'][0]}", flush=True)
            for row in record["per_sample"]:
                print(f"    {row['id']}: {row['seconds']:.1f} s, {row['input_tokens']} in / {row['output_tokens']} "
                      f"out (max {row['max_tokens']}), {row['stop_reason']}, {row['status']}")
            if args.keep is None:
                import shutil

                shutil.rmtree(record["home"], ignore_errors=True)
    if args.json:
        print(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
