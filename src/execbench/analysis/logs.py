"""Inspect logs -> the per-sample table (:mod:`execbench.analysis.schema`).

Logs are read by the one log reader, :mod:`execbench.eval.logs` (also behind ``execbench
eval summary``); this module maps its eval and sample records onto the schema's columns.

What logs do not carry (the program text needed by the error taxonomy, a mutated task's
``provenance.original_id``, a trace task's topic, a repo task's repository / difficulty /
scope) is joined from the evaluated dataset's ``tasks.jsonl`` by task id: the dataset path
recorded in the log, or directories passed as ``datasets``; slices still missing come from
the source id as the family derives them (its ``Slices.source``). As a last resort the program
is recovered from the prompt by the family (``Slices.program_from_prompt``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, TypedDict

import pandas as pd

from execbench import registry
from execbench.contract import Slices
from execbench.analysis.schema import METRIC_COLUMNS, facts, normalize
from execbench.contract.jsontypes import JSONValue, as_list, as_object
from execbench.eval.logs import EvalInfo, SampleRecord, checked_record, grade_of, log_files, read_records
from execbench.dataset import DatasetError, Task, content_hash, load_manifest, read_tasks
from execbench.usererror import UserError


class EvalDescription(TypedDict):
    """One evaluation of a :class:`LogSet` (the report's list of logs)."""

    eval_id: str
    log: str
    model: str
    task: str
    created: str
    status: str
    settings: list[str]
    samples: int
    dataset: JSONValue
    dataset_hash: JSONValue
    execbench_version: JSONValue
    variant: JSONValue
    temperature: float | None
    templates: list[str]


@dataclass(frozen=True)
class _Eval:
    """An evaluation as first read: its eval-level record, log path and model."""

    info: EvalInfo
    log: str
    model: str



@dataclass
class LogSet:
    """The per-sample table and what the report says about its provenance."""

    samples: pd.DataFrame
    logs: list[EvalDescription] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class LogReadError(UserError):
    """No usable log could be read."""


# -- mapping onto the schema ----------------------------------------------------------------
def _first(*values: Any) -> Any:
    for value in values:
        if value is not None:
            return value
    return None


def row_from_records(eval_info: EvalInfo, record: SampleRecord, model: str, log: str,
                     eval_id: str) -> dict[str, Any]:
    """One schema row (a frame row: the columns of ``analysis.schema``) from the eval-level and
    sample-level records (no Inspect objects); ``record`` of this version's layout (``checked_record``)."""
    meta = checked_record(record).get("metadata") or {}
    grade = grade_of(record)
    execbench = as_object((eval_info.get("metadata") or {}).get("execbench"))
    dataset = as_object(execbench.get("dataset"))
    metrics = {**as_object(meta.get("metrics")), **as_object(grade.get("metrics"))}
    response_status = _first(grade.get("response_status"), meta.get("response_status"))
    completed = _first(grade.get("completed"), meta.get("completed"))
    if completed is None:
        completed = response_status == "completed" if response_status else \
            bool(record.get("has_output")) and not record.get("error")
    target = record.get("target")
    row: dict[str, Any] = {
        "log": log, "eval_id": eval_id, "model": model,
        "task_id": str(record.get("id")), "epoch": record.get("epoch"),
        "family": _first(meta.get("family"), grade.get("family")),
        "arm": _first(meta.get("arm"), grade.get("arm")),
        "source_id": _first(meta.get("source_id"), grade.get("source_id")),
        "language": meta.get("language"),
        "variant": _first(meta.get("variant"), execbench.get("variant")),
        "template": meta.get("template"), "template_version": meta.get("template_version"),
        "completed": bool(completed),
        "correct": bool(_first(grade.get("correct"), meta.get("correct"), False)),
        "status": _first(grade.get("status"), meta.get("status")),
        "similarity": _first(grade.get("similarity"), meta.get("similarity")),
        "extracted": _first(grade.get("extracted"), meta.get("extracted")),
        "oracle": target if isinstance(target, str) else json.dumps(target),
        "stop_reason": _first(grade.get("stop_reason"), record.get("stop_reason")),
        "output_tokens": _first(grade.get("output_tokens"), record.get("output_tokens")),
        "response_status": response_status,
        "temperature": eval_info.get("temperature"),
        "dataset_hash": dataset.get("content_hash"),
        "dataset_name": _first(dataset.get("name"), eval_info.get("dataset_name")),
        "dataset_path": _first(dataset.get("path"), eval_info.get("dataset_location"),
                               as_object(eval_info.get("task_args")).get("dataset")),
        "execbench_version": execbench.get("version"),
        "program": meta.get("program"),
        "original_id": meta.get("original_id"),
        "topic": meta.get("topic"), "repository": meta.get("repository"), "pair": meta.get("pair"),
        "difficulty": None, "scope": None,
        "release_date": meta.get("release_date"),
        "replay": grade.get("replay"),
    }
    if row["template"] is None:
        prompts = as_list(as_object(execbench.get("prompts")).get(row["family"]))
        if len(prompts) == 1:
            prompt = as_object(prompts[0])
            row["template"], row["template_version"] = prompt.get("template"), prompt.get("version")
    declared = facts(row["family"])
    for name, fallbacks in (declared.metric_fallbacks if declared else {}).items():
        if metrics.get(name) is None:
            metrics[name] = _first(*(metrics.get(other) for other in fallbacks))
    for name in METRIC_COLUMNS:
        row[name] = metrics.get(name)
    if row["family"] in registry.names():
        rules = _slices(row["family"])
        row.update(rules.sample(meta, metrics))
        if row["program"] is None and (asked := record.get("prompt")):
            row["program"] = rules.program_from_prompt(asked)
    return row


# -- dataset join -----------------------------------------------------------------------------
def _dataset_tasks(paths: Iterable[str | Path], notes: list[str], hashes: dict[str, str | None]) -> dict[str, Task]:
    """The tasks of the evaluated datasets, by id. Each directory's content hash is recomputed
    (:func:`execbench.dataset.content_hash`): a directory whose tasks no longer match its own
    manifest (edited by hand) is noted, and one that changed since it was evaluated is skipped."""
    tasks: dict[str, Task] = {}
    for path in dict.fromkeys(str(p) for p in paths if p):
        directory = Path(path)
        if not (directory / "tasks.jsonl").is_file() and not directory.name.endswith(".jsonl"):
            continue
        try:
            manifest = load_manifest(directory) if directory.is_dir() else None
            found = list(read_tasks(directory, registry.check_record))
        except (DatasetError, OSError) as exc:
            notes.append(f"dataset {path} could not be read: {exc}")
            continue
        actual, stored, expected = content_hash(found), manifest.content_hash if manifest else None, hashes.get(path)
        if stored and stored != actual:
            notes.append(f"dataset {path}: its tasks hash to {actual[:19]}… but its manifest says "
                         f"{str(stored)[:19]}… (tasks.jsonl was changed after the build)")
        if expected and expected != actual:
            notes.append(f"dataset {path} changed since it was evaluated (content hash "
                         f"{actual[:19]}… vs {expected[:19]}… in the log); "
                         "program texts and provenance were not taken from it")
            continue
        for task in found:
            tasks.setdefault(task.id, task)
    return tasks


def _join_dataset(frame: pd.DataFrame, tasks: dict[str, Task]) -> pd.DataFrame:
    if not tasks or frame.empty:
        return frame
    for index, task_id in frame["task_id"].items():
        task = tasks.get(task_id)
        if task is None:
            continue
        fields, provenance = task.prompt_fields, task.provenance
        declared = facts(task.family)
        slices = _slices(task.family).task(task) if task.family in registry.names() else {}
        fill = {
            "program": fields.get("program") if declared is not None and declared.program_text else None,
            "mode": provenance.get("mode"),
            "topic": slices.get("topic"),
            "original_id": provenance.get("original_id"),
            "repository": slices.get("repository"),
            "pair": slices.get("pair"),
            **_sample_slices(task),
            "release_date": provenance.get("release_date"),
        }
        for column, value in fill.items():
            if value is None:
                continue
            if column not in frame:
                frame[column] = None
            if pd.isna(frame.at[index, column]):
                frame.at[index, column] = value
    return frame


def _slices(family: str) -> Slices:
    """The slice rules a registered family declares (none: no slice columns)."""
    return registry.get(family).capability(Slices) or Slices()


def _sample_slices(task: Any) -> dict[str, str | None]:
    """The family's own slice rules over a task's prompt fields (over its provenance) and metrics."""
    if task.family not in registry.names():
        return {}
    recorded = {key: value for key, value in task.provenance.items() if value is not None}
    recorded.update((key, value) for key, value in task.prompt_fields.items() if value is not None)
    return _slices(task.family).sample(recorded, task.metrics)


def fill_slices(frame: pd.DataFrame) -> pd.DataFrame:
    """Slice columns still missing (a trace task's topic, a repo task's repository) from the
    source id, as the family derives them (``Slices.source``)."""
    if frame.empty:
        return frame
    for index, (family, source_id) in enumerate(zip(frame["family"], frame["source_id"])):
        if family not in registry.names() or not isinstance(source_id, str):
            continue
        for column, value in _slices(family).source(source_id).items():
            if column not in frame:
                frame[column] = None
            label = frame.index[index]
            if value is not None and pd.isna(frame.at[label, column]):
                frame.at[label, column] = value
    return frame


# -- settings -------------------------------------------------------------------------------------
def short_model(name: str) -> str:
    return name.rsplit("/", 1)[-1] if name else "unknown-model"


def assign_settings(frame: pd.DataFrame) -> pd.DataFrame:
    """``run`` = short model name + prompt variant (+ temperature when a model was run at
    several; two models with the same short name keep their full names); ``setting`` = the
    run, with `` · mutated`` for mutated tasks (so they never pool with their originals)."""
    if frame.empty:
        frame["setting"] = []
        return frame
    shorts = {m: short_model(m) for m in frame["model"].dropna().unique()}
    if len(set(shorts.values())) < len(shorts):
        shorts = {m: m for m in shorts}
    labels = []
    temps_per_model = frame.groupby("model")["temperature"].nunique(dropna=False).to_dict()
    for model, variant, temperature in zip(frame["model"], frame["variant"], frame["temperature"]):
        label = shorts.get(model, str(model))
        if variant:
            label += f" · {variant}"
        if temps_per_model.get(model, 1) > 1:
            label += " · T=" + ("default" if pd.isna(temperature) else f"{float(temperature):g}")
        labels.append(label)
    frame["run"] = labels
    mutated = frame["original_id"].notna() if "original_id" in frame else pd.Series(False, index=frame.index)
    frame["setting"] = [f"{label} · mutated" if m else label for label, m in zip(labels, mutated)]
    return frame


# -- entry point ------------------------------------------------------------------------------
def read_logs(paths: Sequence[str | Path], datasets: Sequence[str | Path] = ()) -> LogSet:
    """Read Inspect logs (files or directories) into a :class:`LogSet`."""
    notes: list[str] = []
    resolved = []
    for path in paths:
        if not Path(path).exists():
            raise LogReadError(f"{path}: no such file or directory")
        resolved.append(str(path))
    rows = []
    evals: dict[str, _Eval] = {}
    for record in read_records(log_files(resolved)):
        seen = evals.setdefault(record.eval_id, _Eval(record.info, record.log, record.model))
        rows.append(row_from_records(seen.info, record.sample, record.model, record.log, record.eval_id))
    if not rows:
        raise LogReadError(f"no samples in {', '.join(resolved)}")
    frame = pd.DataFrame(rows)
    hashes: dict[str, str | None] = {}
    for path, digest in zip(frame["dataset_path"], frame["dataset_hash"]):
        if isinstance(path, str):
            hashes.setdefault(path, digest)
    tasks = _dataset_tasks([*datasets, *hashes], notes, hashes)
    frame = _join_dataset(frame, tasks)
    frame = fill_slices(frame)
    readers = [f for f in frame["family"].dropna().unique() if (declared := facts(f)) and declared.program_text]
    missing = frame[frame["family"].isin(readers) & frame["program"].isna()]
    if len(missing):
        notes.append(f"{len(missing)} {'/'.join(sorted(readers))} samples have no program text (dataset not found): "
                     "their errors are not classified; pass the dataset with --dataset")
    frame = assign_settings(frame)
    frame, dropped = deduplicate(frame, evals)
    if dropped:
        notes.append(f"{dropped} samples answered again by a later run of the same setting were dropped "
                     "(the latest run is kept)")
    logs = [describe_eval(eval_id, seen, frame[frame["eval_id"] == eval_id]) for eval_id, seen in evals.items()]
    return LogSet(normalize(frame), logs, notes)


def deduplicate(frame: pd.DataFrame, evals: dict[str, _Eval]) -> tuple[pd.DataFrame, int]:
    """Keep one row per (setting, task, epoch): the one from the most recently created eval."""
    created = frame["eval_id"].map(lambda e: str(evals[e].info.get("created", "")) if e in evals else "")
    order = frame.assign(_created=created).sort_values("_created", kind="stable")
    kept = order.drop_duplicates(["setting", "task_id", "epoch"], keep="last").drop(columns="_created")
    return kept.sort_index(), len(frame) - len(kept)


def describe_eval(eval_id: str, seen: _Eval, rows: pd.DataFrame) -> EvalDescription:
    info = seen.info
    execbench = as_object((info.get("metadata") or {}).get("execbench"))
    dataset = as_object(execbench.get("dataset"))
    prompts = as_object(execbench.get("prompts"))
    templates = sorted({f"{p.get('template')} v{p.get('version')}" for ps in prompts.values()
                        for p in map(as_object, as_list(ps))})
    if not templates and len(rows):
        templates = sorted({f"{t} v{v}" for t, v in zip(rows["template"], rows["template_version"]) if t})
    return {
        "eval_id": eval_id, "log": seen.log, "model": seen.model, "task": info.get("task"),
        "created": info.get("created"), "status": info.get("status"),
        "settings": sorted(set(rows["setting"])) if len(rows) else [],
        "samples": int(len(rows)), "dataset": dataset.get("name") or info.get("dataset_name"),
        "dataset_hash": dataset.get("content_hash"), "execbench_version": execbench.get("version"),
        "variant": execbench.get("variant"), "temperature": info.get("temperature"), "templates": templates,
    }
