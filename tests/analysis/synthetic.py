"""Synthetic per-sample tables with known effects (no Inspect, no model)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from analysis.inspect_fixture import LOOP
from execbench import registry
from execbench.analysis.schema import normalize

PROGRAM = LOOP  # lines: 1 def, 2 total = 0, 3 comment, 4 for, 5 if, 6 +=, 7 else, 8 -=, 9 return
ORACLE = [2, 4, 5, 6, 4, 5, 8, 4, 9]  # f([2, 0])
WRONG = [  # one wrong answer per first-deviation category
    ORACLE[:3] + [7] + ORACLE[4:],          # nonsense line (bare else:)
    [1] + ORACLE,                           # definition call
    [2, 4, 6] + ORACLE[4:],                 # condition skip
    [2, 4, 5, 6, 9],                        # loop skip
    [2, 4, 5, 8, 4, 9],                     # predicate wrong
    ORACLE[1:],                             # statement skip
    ORACLE[:5],                             # early stop
]


def _logit(x):
    return 1 / (1 + np.exp(-x))


def trace_rows(rng: np.random.Generator, settings=("m1 direct", "m1 cot", "m2 direct"), tasks: int = 30,
               traces: int = 5) -> list[dict]:
    rows = []
    strength = {"m1 direct": 2.0, "m1 cot": 2.5, "m2 direct": 0.5}
    for setting in settings:
        for t in range(tasks):
            topic = "humaneval" if t < tasks * 2 // 3 else ("recursion", "oop", "concurrency")[t % 3]
            for k in range(traces):
                length = int(rng.integers(1, 60))
                p = _logit(strength.get(setting, 1.0) - 0.08 * length)
                correct = bool(rng.random() < p)
                completed = bool(rng.random() > 0.03)
                predicted = ORACLE if correct else WRONG[int(rng.integers(0, len(WRONG)))]
                rows.append({
                    "model": setting.split()[0], "setting": setting, "variant": setting.split()[1],
                    "family": "trace", "arm": "trace", "task_id": f"trace/humaneval/{t}/{k}#trace",
                    "source_id": f"humaneval/{t}" if topic == "humaneval" else f"advanced/{topic}/{t}",
                    "topic": topic, "completed": completed, "correct": correct and completed,
                    "status": "ok" if completed else None,
                    "similarity": 1.0 if correct else float(rng.uniform(0.2, 0.9)),
                    "trace_length": length, "loc": int(rng.integers(5, 30)), "cyclomatic": int(rng.integers(1, 8)),
                    "program": PROGRAM, "oracle": json.dumps(ORACLE), "extracted": json.dumps(predicted),
                    "template": f"trace/{setting.split()[1]}", "template_version": "1",
                })
    return rows


def state_rows(rng: np.random.Generator, settings=("m1 direct", "m2 direct"), cases: int = 60) -> list[dict]:
    rows = []
    for setting in settings:
        base = 1.5 if setting.startswith("m1") else 0.3
        for c in range(cases):
            study = "classic" if c < cases // 2 else "lcb_python"
            tl_short = float(rng.integers(20, 200))
            tl_long = tl_short * float(rng.uniform(5, 50))
            peak = float(rng.integers(2, 40))
            for arm in tuple(registry.get("state").arms):
                tl = tl_short if arm == "short-trace-final" else tl_long
                load = tl * peak * float(rng.uniform(0.5, 1.5))
                shift = {"short-trace-final": 0.0, "long-trace-final": -1.0,
                         "inside-loop-state": -1.5, "post-loop-state": -1.6}[arm]
                p = _logit(base + shift)
                correct = bool(rng.random() < p)
                rows.append({
                    "model": setting.split()[0], "setting": setting, "variant": "direct", "family": "state",
                    "arm": arm, "task_id": f"state/{study}/c{c}#{arm}", "source_id": f"{study}/c{c}",
                    "completed": True, "correct": correct, "status": "ok",
                    "trace_length": tl, "peak_state": peak, "state_load": load,
                    "cyclomatic": float(rng.integers(2, 20)),
                })
    return rows


def repo_rows(rng: np.random.Generator, settings=("m1 direct", "m1 t1"), tasks: int = 300) -> list[dict]:
    rows = []
    repos = ["toolz", "cachetools", "sympy"]
    esv = rng.lognormal(5, 0.8, tasks)
    mcl = rng.lognormal(4, 1.0, tasks)
    dfi = rng.poisson(8, tasks) + 1
    for setting in settings:
        for i in range(tasks):
            p = _logit(2.0 - 0.15 * dfi[i])
            correct = bool(rng.random() < p)
            rows.append({
                "model": "m1", "setting": setting, "variant": "direct", "family": "repo", "arm": "masked-assertion",
                "task_id": f"repo/{repos[i % 3]}/t{i}#masked-assertion", "source_id": f"{repos[i % 3]}/test{i // 2}",
                "repository": repos[i % 3], "difficulty": ("easy", "medium", "hard")[i % 3],
                "scope": "intra-file" if i % 4 == 0 else "cross-file",
                "completed": True, "correct": correct, "status": "ok",
                "esv": esv[i], "mcl": mcl[i], "dfi": float(dfi[i]), "complexity_score": float(rng.uniform(0.3, 2)),
            })
    return rows


def mutation_rows(rng: np.random.Generator, n: int = 200) -> list[dict]:
    rows = []
    for i in range(n):
        orig = bool(rng.random() < 0.75)
        mut = bool(rng.random() < (0.6 if orig else 0.2))
        common = {"model": "m1", "setting": "m1 direct", "family": "repo", "arm": "masked-assertion",
                  "completed": True, "status": "ok", "repository": "toolz"}
        rows.append({**common, "task_id": f"repo/toolz/t{i}#masked-assertion", "source_id": f"toolz/s{i // 4}",
                     "correct": orig})
        rows.append({**common, "task_id": f"repo/toolz-mut/t{i}#masked-assertion", "source_id": f"toolz/s{i // 4}",
                     "correct": mut, "original_id": f"repo/toolz/t{i}#masked-assertion"})
    return rows


def synthetic_frame(seed: int = 1, families=("trace", "state", "repo"), scale: float = 1.0) -> pd.DataFrame:
    """All three families with known effects; ``scale`` < 1 makes a smaller (faster) table."""
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    if "trace" in families:
        rows += trace_rows(rng, tasks=max(6, int(30 * scale)))
    if "state" in families:
        rows += state_rows(rng, cases=max(8, int(60 * scale)))
    if "repo" in families:
        rows += repo_rows(rng, tasks=max(30, int(300 * scale)))
    return normalize(pd.DataFrame(rows))
