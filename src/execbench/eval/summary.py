"""Summaries of evaluation logs with the completion accounting of paper 001.

For every (family, arm) and overall:

``N``  planned responses: the samples the run selected (after ``--limit``) × epochs
``R``  completed responses (a response came back; see :mod:`execbench.eval.protocol`)
``C``  correct answers
``C/R`` completed-response accuracy, ``C/N`` all-planned accuracy (a failed request, an
empty response or a sample that never ran counts as wrong).

Everything is read from the log (sample ids, metadata and scores) by the one log reader,
:mod:`execbench.eval.logs`, so a log is enough.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, NotRequired, TypedDict

from execbench.contract.jsontypes import JSONObject, JSONValue, as_object
from execbench.eval.logs import eval_info, grade_of, sample_record, task_group
from execbench.eval.protocol import COMPLETED, EMPTY, ERROR
from execbench.grading.accounting import account

TOTAL = ("all", "")

# A graded row (one response): id, epoch, family, arm and the grade record the scorer wrote
# (correct, response_status, status, similarity, truncated, output_tokens, ...), from a log's JSON.
Row = JSONObject


class Counts(TypedDict):
    """The completion accounting of a group of responses (paper 001's N, R, C)."""

    N: int
    R: int
    C: int
    accuracy_completed: float | None
    accuracy_planned: float | None
    errors: int
    empty: int
    not_run: int
    truncated: int
    extraction: dict[str | None, int]  # grade status -> completed responses (None: no status; "null" in JSON)
    similarity: float | None
    output_tokens_mean: float | None


class GroupCounts(Counts):
    family: str
    arm: str


class Summary(TypedDict):
    """``execbench eval summary`` of one log (printed as JSON by ``--json``)."""

    total: Counts
    groups: list[GroupCounts]
    log: NotRequired[str]
    status: NotRequired[str]
    task: NotRequired[str]
    model: NotRequired[str]
    variant: NotRequired[JSONValue]
    prompts: NotRequired[JSONValue]
    dataset: NotRequired[JSONValue]


def summarize_rows(rows: Iterable[Row], planned: dict[tuple[str, str], int]) -> Summary:
    """Aggregate graded rows (one per response) against the planned counts per (family, arm).

    A row holds ``family``, ``arm``, ``correct``, ``response_status``, ``status``,
    ``similarity``, ``truncated`` and ``output_tokens`` (missing keys count as absent).
    """
    buckets: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        buckets[(str(row.get("family", "?")), str(row.get("arm", "?")))].append(row)
    keys = sorted(set(planned) | set(buckets))
    groups = {key: _aggregate(buckets.get(key, []), planned.get(key, len(buckets.get(key, [])))) for key in keys}
    every = [row for key in keys for row in buckets.get(key, [])]
    total = _aggregate(every, sum(g["N"] for g in groups.values()))
    return {"total": total, "groups": [GroupCounts(family=f, arm=a, **groups[(f, a)]) for f, a in keys]}


def _aggregate(rows: list[Row], planned: int) -> Counts:
    counted = account(((row.get("response_status") == COMPLETED, bool(row.get("correct"))) for row in rows), planned)
    planned, completed, correct = counted.planned, counted.completed, counted.correct
    responses = Counter(row.get("response_status") for row in rows)
    sims = [value for row in rows if (value := _number(row.get("similarity"))) is not None]
    tokens = [count for row in rows if isinstance(count := row.get("output_tokens"), int)]
    return {
        "N": planned,
        "R": completed,
        "C": correct,
        "accuracy_completed": counted.accuracy_completed,
        "accuracy_planned": counted.accuracy_planned,
        "errors": responses[ERROR],
        "empty": responses[EMPTY],
        "not_run": planned - len(rows),
        "truncated": sum(1 for row in rows if row.get("truncated")),
        "extraction": dict(sorted(Counter(_status(row) for row in rows if row.get("response_status") == COMPLETED)
                                  .items(), key=lambda item: (item[0] is not None, item[0] or ""))),
        "similarity": sum(sims) / len(sims) if sims else None,
        "output_tokens_mean": sum(tokens) / len(tokens) if tokens else None,
    }


def _number(value: JSONValue) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _status(row: Row) -> str | None:
    """The grade's extraction status (None: the grade has none)."""
    status = row.get("status")
    return status if isinstance(status, str) else None


def rows_from_log(log: Any) -> list[Row]:
    """One row per sample and epoch: the grade record the scorer wrote (or an error one)."""
    rows: list[Row] = []
    for sample in log.samples or []:
        record = sample_record(sample)
        grade = grade_of(record)
        family, arm = task_group(record["id"])
        meta = record["metadata"]
        if "response_status" not in grade:  # never scored (cancelled mid-sample, or scoring failed): an error
            grade = {"response_status": ERROR, "correct": False, "status": None,
                     "error": record["error"] or "not scored"}
        rows.append({"id": record["id"], "epoch": record["epoch"], "family": meta.get("family", family),
                     "arm": meta.get("arm", arm), **grade})
    return rows


def planned_from_log(log: Any) -> dict[tuple[str, str], int]:
    info = eval_info(log)
    ids = info["sample_ids"]
    if ids is None:  # very old logs: fall back to what ran
        ids = sorted({str(sample.id) for sample in log.samples or []})
    planned: Counter[tuple[str, str]] = Counter()
    for sample_id in ids:
        planned[task_group(str(sample_id))] += info["epochs"]
    return dict(planned)


def summarize_log(log: Any) -> Summary:
    """The summary of one Inspect ``EvalLog`` (read with its samples)."""
    summary = summarize_rows(rows_from_log(log), planned_from_log(log))
    info = eval_info(log)
    meta = as_object(info["metadata"].get("execbench"))
    summary.update({
        "log": str(log.location),
        "status": info["status"],
        "task": info["task"],
        "model": info["model"],
        "variant": meta.get("variant"),
        "prompts": meta.get("prompts"),
        "dataset": as_object(meta.get("dataset")).get("path"),
    })
    return summary


def summarize_paths(paths: Iterable[str | Path]) -> list[Summary]:
    from inspect_ai.log import read_eval_log

    return [summarize_log(read_eval_log(str(path))) for path in paths]


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def render(summaries: list[Summary], console: Any, title: str | None = None) -> None:
    """A rich table per log: C/R and C/N per family/arm and overall."""
    from rich import box
    from rich.table import Table

    for summary in summaries:
        table = Table(title=title or f"{summary['task']} · {summary['model']} · {summary.get('variant')}",
                      title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                      caption="C/R: correct of completed responses · C/N: correct of planned · miss: failed, "
                              "empty or never run (wrong in C/N) · trunc: cut off by the token limit · "
                              "tok: mean output tokens",
                      caption_justify="left")
        table.add_column("tasks", no_wrap=True)
        for column in ("N", "R", "C", "C/R", "C/N", "sim", "miss", "trunc", "tok"):
            table.add_column(column, justify="right", no_wrap=True)
        rows = summary["groups"] + ([{"family": "all", "arm": "", **summary["total"]}] if len(summary["groups"]) > 1 else [])
        for row in rows:
            label = row["family"] if row["arm"] in ("", row["family"]) else f"{row['family']}/{row['arm']}"
            sim, tokens = row["similarity"], row["output_tokens_mean"]
            missing = row["errors"] + row["empty"] + row["not_run"]
            table.add_row(label, str(row["N"]), str(row["R"]), str(row["C"]), _pct(row["accuracy_completed"]),
                          _pct(row["accuracy_planned"]), "–" if sim is None else f"{sim:.2f}", str(missing),
                          str(row["truncated"]), "–" if tokens is None else f"{tokens:.0f}",
                          style="bold" if row["family"] == "all" else None)
        console.print(table)
