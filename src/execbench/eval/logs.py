"""The one reader of Inspect evaluation logs: used by ``execbench eval summary``,
``execbench.analysis`` (the per-sample table) and, through it, the report.

A log becomes plain records, with no Inspect object left in them:

- :func:`eval_info`: the eval level: task, model, status, creation time, the generate
  config's temperature, the planned sample ids and epochs, and the eval metadata that
  :mod:`execbench.eval` writes (``metadata.execbench``: version, dataset path/name/content
  hash, variant, prompt templates and versions);
- :func:`sample_record`: one sample and epoch, a :class:`SampleRecord` (the one per-sample record
  that passes from eval to analysis, versioned: ``version`` is :data:`SAMPLE_RECORD_VERSION`, and
  :func:`checked_record` refuses another): id (= task id), target (the oracle), sample
  metadata (family, arm, source_id, metrics, variant, template...), every score with its
  metadata (the execbench scorer's grade record), the output's stop reason, token usage and
  the sample error; for families whose error taxonomy reads the program
  (``AnalysisFacts.program_text``) and whose metadata lacks it, the last user message;
- :func:`grade_of`: the execbench grade among a record's scores;
- :func:`task_group`: (family, arm) of a task id, parsed by the family's own id parser.

:func:`read_records` reads files or directories in bulk through Inspect's ``samples_df``;
Inspect is imported lazily.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, NamedTuple, NotRequired, Sequence, TypedDict

from execbench import registry
from execbench.contract import AnalysisFacts
from execbench.contract.jsontypes import JSONObject, JSONValue
from execbench.dataset import DatasetError
from execbench.errors import InternalError
from execbench.usererror import UserError

#: The layout of :class:`SampleRecord`; bump it when a key's meaning changes or one is removed.
SAMPLE_RECORD_VERSION = 1


class LogFileError(UserError):
    """A path given as logs holds no readable Inspect log (a dataset, an empty or corrupt file)."""


class EvalInfo(TypedDict):
    """The eval level of a log (:func:`eval_info`); JSON (``read_records`` round-trips it)."""

    metadata: JSONObject  # the eval metadata (execbench's under "execbench")
    task: str
    model: str
    task_args: JSONObject
    dataset_location: str | None
    dataset_name: str | None
    sample_ids: list[str] | None
    epochs: int
    temperature: float | None
    config: JSONObject  # the generate config
    status: str
    created: str
    location: str | None


class ScoreRecord(TypedDict):
    value: JSONValue
    answer: str | None
    metadata: JSONObject  # the execbench scorer's grade record


class SampleRecord(TypedDict):
    """One sample and epoch of a log (:func:`sample_record`): what eval hands analysis per sample
    (``analysis.logs.row_from_records`` reads it after :func:`checked_record`)."""

    version: int  # SAMPLE_RECORD_VERSION of the reader that made it
    id: str
    epoch: int
    target: JSONValue
    metadata: JSONObject  # the sample metadata execbench wrote (family, arm, source_id, metrics, ...)
    scores: dict[str, ScoreRecord]
    stop_reason: str | None
    has_output: bool
    output_tokens: int | None
    error: str | None
    prompt: NotRequired[str | None]  # the last user message, for a family whose taxonomy reads the program


# The execbench grade of a sample: the scorer's metadata (correct, status, extracted, similarity,
# response_status, ...; each family's grade details besides), read back from the log's JSON.
Grade = JSONObject


class LogRecord(NamedTuple):
    eval_id: str
    log: str  # the log's path
    model: str
    info: EvalInfo
    sample: SampleRecord


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def _first(*values: Any) -> Any:
    for value in values:
        if value is not None:
            return value
    return None


def eval_info(log: Any) -> EvalInfo:
    """The eval-level record of an ``EvalLog`` (its header suffices)."""
    spec = log.eval
    config = _dump(spec.model_generate_config) or {}
    plan = _dump(log.plan.config) if log.plan is not None and log.plan.config is not None else {}
    # an explicit --temperature (model_generate_config) overrides the task's own config
    temperature = _first(config.get("temperature"), (plan or {}).get("temperature"))
    ids = getattr(spec.dataset, "sample_ids", None)
    return {
        "metadata": spec.metadata or {},
        "task": spec.task,
        "model": spec.model,
        "task_args": spec.task_args or {},
        "dataset_location": getattr(spec.dataset, "location", None),
        "dataset_name": getattr(spec.dataset, "name", None),
        "sample_ids": [str(i) for i in ids] if ids is not None else None,
        "epochs": (spec.config.epochs if spec.config is not None else None) or 1,
        "temperature": temperature,
        "config": config,
        "status": log.status,
        "created": str(spec.created),
        "location": str(log.location).removeprefix("file://") if log.location else None,
    }


def _last_user_text(sample: Any) -> str | None:
    messages = sample.input if isinstance(sample.input, list) else None
    if messages is None:
        return sample.input if isinstance(sample.input, str) else None
    for message in reversed(messages):
        if getattr(message, "role", None) == "user":
            return message.text
    return None


def reads_program(family: Any) -> bool:
    """Whether the family's error taxonomy reads the task's program text."""
    if family not in registry.names():
        return False
    declared = registry.get(family).capability(AnalysisFacts)
    return declared is not None and declared.program_text


def sample_record(sample: Any) -> SampleRecord:
    """The record of one ``EvalSample`` (one sample and epoch)."""
    scores: dict[str, ScoreRecord] = {}
    for name, score in (sample.scores or {}).items():
        scores[name] = {"value": _dump(score.value), "answer": score.answer, "metadata": score.metadata or {}}
    output = sample.output
    usage = getattr(output, "usage", None)
    metadata = sample.metadata or {}
    record: SampleRecord = {
        "version": SAMPLE_RECORD_VERSION,
        "id": str(sample.id),
        "epoch": sample.epoch,
        "target": sample.target,
        "metadata": metadata,
        "scores": scores,
        "stop_reason": output.stop_reason if output is not None and output.choices else None,
        "has_output": bool(output is not None and output.choices),
        "output_tokens": getattr(usage, "output_tokens", None) if usage is not None else None,
        "error": sample.error.message if sample.error is not None else None,
    }
    if reads_program(metadata.get("family")) and "program" not in metadata:
        record["prompt"] = _last_user_text(sample)
    return record


class SampleRecordVersionError(InternalError):
    """A per-sample record of another layout than this version's (made by another execbench)."""


def checked_record(record: SampleRecord) -> SampleRecord:
    """``record`` if it has this version's layout (:data:`SAMPLE_RECORD_VERSION`); else
    :class:`SampleRecordVersionError` (a record must never be read by guesswork)."""
    version = record.get("version") if isinstance(record, dict) else None
    if version != SAMPLE_RECORD_VERSION:
        raise SampleRecordVersionError(f"a per-sample record of version {version!r}; this execbench reads "
                                       f"version {SAMPLE_RECORD_VERSION} (eval/logs.py sample_record)")
    return record


def grade_of(record: SampleRecord) -> Grade:
    """The execbench grade: the first score metadata holding ``correct``; else, for a scorer
    without execbench metadata, correctness from its value; ``{}`` when nothing was scored."""
    for score in record.get("scores", {}).values():
        meta = score.get("metadata") or {}
        if "correct" in meta:
            return meta
    for score in record.get("scores", {}).values():
        value = score.get("value")
        return {"correct": value in ("C", 1, 1.0, True), "status": None, "extracted": score.get("answer")}
    return {}


def task_group(task_id: str) -> tuple[str, str]:
    """(family, arm) of a task id by the family's id parser; ``("?", "?")`` if it does not parse."""
    try:
        parts = registry.parse_id(task_id)
    except DatasetError:
        return "?", "?"
    return parts.family, parts.arm


def log_files(paths: Sequence[str]) -> list[str]:
    """The Inspect log files at ``paths`` (files, or directories searched by Inspect), each
    checked to open as a log; :class:`LogFileError` names a path that holds none or a file
    that is not one (issue 34: a dataset directory, an empty directory, a corrupt ``.eval``)."""
    from pathlib import Path

    from inspect_ai.log import list_eval_logs, read_eval_log

    files: list[str] = []
    for path in paths:
        if Path(path).is_dir():
            found = [info.name for info in list_eval_logs(str(path))]
            if not found:
                what = ("a dataset directory, not logs: evaluate it with `execbench eval` and report its log directory"
                        if (Path(path) / "tasks.jsonl").exists() or (Path(path) / "manifest.json").exists()
                        else "holds no Inspect logs (.eval or .json files written by `execbench eval`)")
                raise LogFileError(f"{path}: {what}")
            files += found
        else:
            files.append(str(path))
    for file in files:
        try:
            read_eval_log(file, header_only=True)
        except Exception as exc:  # noqa: BLE001 - whatever Inspect raises on a file that is not a log
            raise LogFileError(f"{file.removeprefix('file://')}: not a readable Inspect log "
                               f"({type(exc).__name__}: {str(exc)[:200]})") from None
    return files


def read_records(paths: Sequence[str]) -> Iterator[LogRecord]:
    """Every sample (and epoch) of the logs at ``paths`` (files or directories)."""
    from inspect_ai.analysis import EvalColumn, SampleColumn, samples_df

    columns = [
        EvalColumn("eval_id", path="eval.eval_id", required=True),
        EvalColumn("log", path=lambda log: str(log.location).removeprefix("file://")),
        EvalColumn("model", path="eval.model"),
        EvalColumn("eb_eval", path=lambda log: json.dumps(eval_info(log), default=str)),
        SampleColumn("eb_task_id", path="id", required=True, type=str),  # "sample_id" is Inspect's own key
        SampleColumn("eb_sample", path=lambda sample: json.dumps(sample_record(sample), default=str), full=True),
    ]
    frame = samples_df(list(paths), columns=columns, full=True, quiet=True, exclude_fields={"events", "store"})
    infos: dict[str, EvalInfo] = {}
    for eval_id, log, model, eval_json, sample_json in zip(frame["eval_id"], frame["log"], frame["model"],
                                                           frame["eb_eval"], frame["eb_sample"]):
        info = infos.setdefault(eval_id, json.loads(eval_json if isinstance(eval_json, str) else "{}"))
        sample = json.loads(sample_json if isinstance(sample_json, str) else "{}")
        yield LogRecord(str(eval_id), str(log), str(model), info, sample)
