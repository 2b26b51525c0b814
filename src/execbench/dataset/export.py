"""Datasets as Hugging Face ``datasets`` folders: Parquet shards plus a dataset card.

``execbench export DATASET... -o DIR`` writes

    DIR/README.md                                   dataset card; its YAML header declares the configs
    DIR/data/<family>-<arm>/test-00000-of-0000N.parquet
    DIR/execbench-export.json                       how to read the export back exactly

so ``datasets.load_dataset(DIR, "<family>-<arm>")`` works without a loading script, and
``execbench grade`` / ``execbench eval`` read ``DIR`` as they read a dataset directory
(:func:`read_export_tasks`): the same tasks in the same order, so the same content hash.

Columns are the task record's fields plus ``order`` (the task's position in the
exported sequence; reading sorts by it). Nested fields keep their Arrow types
(structs, lists) whenever Parquet gives them back unchanged; a column that would change
(mixed types, an int that would become a float, keys that differ between rows, an empty
object) is stored as JSON text instead, for that config only, and the card and
``execbench-export.json`` name those columns. Every export is read back and its content
hash compared before the command returns.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence, TypedDict

from execbench.dataset.manifest import content_hash
from execbench.jsontypes import JSONObject
from execbench.dataset.record import DatasetError, FamilyCheck, Task, parse_id

MARKER = "execbench-export.json"
CARD = "README.md"
COLUMNS = ("id", "family", "arm", "source_id", "language", "prompt_fields", "answer", "answer_kind",
           "metrics", "provenance")
ROWS_PER_SHARD = 10_000
FORMAT_VERSION = 1


def is_export(directory: str | Path) -> bool:
    return (Path(directory) / MARKER).is_file()


def config_name(task: Task) -> str:
    return f"{task.family}-{task.arm}"


@dataclass
class ExportInput:
    """One dataset directory to export: its tasks (in order) and its manifest."""

    path: str
    tasks: list[Task]
    manifest: JSONObject = field(default_factory=dict)


class ConfigRecord(TypedDict):
    """One config (family and arm) of an export: its row count, its Parquet shards and the
    columns stored as JSON text."""

    rows: int
    files: list[str]
    json_columns: list[str]


class InputRecord(TypedDict):
    path: str  # the dataset folder's name
    tasks: int
    manifest: JSONObject  # that dataset's manifest, as read


class ExportMarker(TypedDict):
    """``execbench-export.json``: what an export holds (written with sorted keys)."""

    format: int
    content_hash: str
    tasks: int
    configs: dict[str, ConfigRecord]
    sources: dict[str, str]  # <family>/<source> -> its license text
    inputs: list[InputRecord]


# -- writing -----------------------------------------------------------------------------------

def _parquet_roundtrip(values: list[Any]) -> list[Any] | None:
    """``values`` after a trip through an Arrow column and Parquet; None when Arrow refuses."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pa.table({"v": pa.array(values)})
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        buffer.seek(0)
        return pq.read_table(buffer).column("v").to_pylist()
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return None


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text: 1 and 1.0, 1 and True, a missing key and None all differ."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def _column_encoding(values: list[Any]) -> str:
    """``native`` when Parquet returns ``values`` unchanged (types included), else ``json``."""
    if any(_has_non_finite(v) for v in values):  # NaN != NaN: compare as JSON text instead
        return "json"
    back = _parquet_roundtrip(values)
    if back is None or len(back) != len(values):
        return "json"
    return "native" if all(_same(a, b) for a, b in zip(values, back)) else "json"


def write_export(inputs: Sequence[ExportInput], out: str | Path, *, licenses: dict[str, str],
                 rows_per_shard: int = ROWS_PER_SHARD) -> ExportMarker:
    """Write the export folder (replacing ``out`` only when complete); returns its marker record.

    ``licenses`` maps a source (``<family>/<source>``, the first two parts of a task id)
    to the license text the card shows for it.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out)
    if out.is_symlink() or (out.exists() and not (out.is_dir() and (is_export(out) or not any(out.iterdir())))):
        raise DatasetError(f"-o {out}: exists and is not an execbench export (an export replaces its folder): "
                           "nothing was written; choose a new or empty directory")
    ordered: list[Task] = [task for item in inputs for task in item.tasks]
    if not ordered:
        raise DatasetError("nothing to export: the datasets hold no tasks")
    seen: set[str] = set()
    for task in ordered:
        if task.id in seen:
            raise DatasetError(f"task id {task.id!r} appears in more than one exported dataset")
        seen.add(task.id)
    ordered_hash = content_hash(ordered)

    configs: dict[str, list[tuple[int, Task]]] = {}
    for index, task in enumerate(ordered):
        configs.setdefault(config_name(task), []).append((index, task))

    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "data").mkdir(parents=True)
    config_records: dict[str, ConfigRecord] = {}
    for name in sorted(configs):
        rows = configs[name]
        columns: dict[str, list[Any]] = {"order": [index for index, _ in rows]}
        encodings: dict[str, str] = {}
        for column in COLUMNS:
            values = [getattr(task, column) for _, task in rows]
            encodings[column] = _column_encoding(values)
            columns[column] = values if encodings[column] == "native" else \
                [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in values]
        folder = staging / "data" / name
        folder.mkdir()
        shards = max(1, math.ceil(len(rows) / rows_per_shard))
        files = []
        for shard in range(shards):
            part = slice(shard * rows_per_shard, (shard + 1) * rows_per_shard)
            table = pa.table({key: pa.array(values[part]) for key, values in columns.items()})
            file = f"test-{shard:05d}-of-{shards:05d}.parquet"
            pq.write_table(table, folder / file)
            files.append(f"data/{name}/{file}")
        config_records[name] = {"rows": len(rows), "files": files,
                                "json_columns": [c for c in COLUMNS if encodings[c] == "json"]}

    sources = sorted({f"{parts.family}/{parts.source}" for parts in (parse_id(task.id) for task in ordered)})
    marker: ExportMarker = {
        "format": FORMAT_VERSION,
        "content_hash": ordered_hash,
        "tasks": len(ordered),
        "configs": config_records,
        "sources": {source: licenses.get(source, UNKNOWN_LICENSE) for source in sources},
        "inputs": [{"path": os.path.basename(os.path.normpath(item.path)), "tasks": len(item.tasks),
                    "manifest": publishable(item.manifest)} for item in inputs],
    }
    (staging / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (staging / CARD).write_text(dataset_card(marker), encoding="utf-8")

    if content_hash(read_export_tasks(staging)) != ordered_hash:  # a bug here, never the user's data
        raise DatasetError(f"the export in {staging} does not read back to the same tasks")
    if out.exists():
        shutil.rmtree(out)
    os.replace(staging, out)
    return marker


#: A source whose license neither its family nor its package metadata declares.
UNKNOWN_LICENSE = "unknown"
# an absolute local path inside a text (not a URL's path): /home/me/cases, ~/x, C:\\data\\x
_LOCAL_PATH = re.compile(r"(?<![\w./~-])(?!//)(?:~|[A-Za-z]:)?[/\\](?:[^\s/\\:'\",;=]+[/\\])*([^\s/\\:'\",;=]*)")


def publishable(value: Any) -> Any:
    """A manifest (any JSON value) fit to publish: every absolute local path in its texts
    reduced to ``.../`` and its last part (the card and the export's marker; issue 34)."""
    if isinstance(value, str):
        return _LOCAL_PATH.sub(lambda m: ".../" + m.group(1), re.sub(r"file://(?=/)", "", value))
    if isinstance(value, list):
        return [publishable(v) for v in value]
    if isinstance(value, dict):
        return {k: publishable(v) for k, v in value.items()}
    return value


def _yaml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML scalar


# Text in the card that comes from the sources (a source folder's name in a task id, a
# license, a dataset folder's name, a manifest's settings) is never Markdown or HTML: in
# a code span it can neither close the span nor a table cell; elsewhere every character
# that could start markup is an entity or backslash-escaped (issue 22, item 14).
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
_MD_PUNCTUATION = frozenset("\\`*_[]|~")  # with [ ] escaped, ( ) ! start nothing; the text never starts a line


def _md_code(text: Any, *, table: bool = False) -> str:
    """``text`` as one inline code span (HTML is shown, not rendered, inside one): no line
    breaks, a fence longer than any backtick run inside, ``|`` escaped in a table cell."""
    text = _LINE_BREAKS.sub(" ", str(text))
    if table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or text.startswith(" ") or text.endswith(" ") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_text(text: Any) -> str:
    """``text`` as plain Markdown text (never at the start of a line): HTML characters as
    entities, inline Markdown punctuation backslash-escaped, line breaks as spaces."""
    out = []
    for char in _LINE_BREAKS.sub(" ", str(text)):
        if char in "&<>\"'":
            out.append(html.escape(char, quote=True))
        elif char in _MD_PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def dataset_card(marker: ExportMarker) -> str:
    """README.md: a YAML header that declares the configs, then what the data is."""
    lines = ["---", "pretty_name: execbench benchmark tasks", "license: other",
             "license_name: per-source", "task_categories:", "- text-generation",
             "tags:", "- code", "- code-reasoning", "- execution", "- execbench", "configs:"]
    for name in sorted(marker["configs"]):
        lines += [f"- config_name: {_yaml_string(name)}", "  data_files:", "  - split: test",
                  f"    path: {_yaml_string(f'data/{name}/test-*.parquet')}"]
    lines.append("---")
    lines += ["", "# execbench benchmark tasks", "",
              "Tasks built by [execbench](https://pypi.org/project/execbench/): every answer comes from "
              "running the code in a sandbox. One config per family and arm; each row is one execbench task "
              "record (`id`, `family`, `arm`, `source_id`, `language`, `prompt_fields`, `answer`, "
              "`answer_kind`, `metrics`, `provenance`) plus `order`, the task's position in the exported "
              "sequence.", "",
              f"- content hash: {_md_code(marker['content_hash'])} (sha256 over the task records in `order`, as "
              "`execbench` computes it for a dataset directory)",
              f"- tasks: {int(marker['tasks'])}", "", "## Configs", "", "| config | rows | stored as JSON text |",
              "| --- | --- | --- |"]
    for name, config in sorted(marker["configs"].items()):
        json_columns = ", ".join(_md_code(c, table=True) for c in config["json_columns"]) or "none"
        lines.append(f"| {_md_code(name, table=True)} | {int(config['rows'])} | {json_columns} |")
    lines += ["", "A column listed as JSON text holds values Parquet could not keep exactly (mixed types, "
              "keys that differ between rows): decode it with `json.loads`.", "",
              "## Sources and licenses", "", "| source | license |", "| --- | --- |"]
    for source, license_text in sorted(marker["sources"].items()):
        lines.append(f"| {_md_code(source, table=True)} | {_md_text(license_text)} |")
    lines += ["", "## Build settings", ""]
    for item in marker["inputs"]:
        manifest = item["manifest"]
        lines += [f"### {_md_text(item['path'])} ({int(item['tasks'])} tasks)", "",
                  f"- execbench {_md_text(manifest.get('execbench_version', '?'))}, "
                  f"Python {_md_text(manifest.get('python', '?'))}",
                  f"- content hash of the original directory: {_md_code(manifest.get('content_hash', '?'))}",
                  "- settings: " + _md_code(json.dumps(manifest.get("settings", {}), sort_keys=True)), ""]
    lines += ["## Use", "", "```python", "import datasets",
              f"tasks = datasets.load_dataset(\"PATH\", {json.dumps(sorted(marker['configs'])[0])}, split=\"test\")",
              "```", "", "```", "execbench eval PATH --model openai/gpt-4o      # or any Inspect model",
              "execbench grade PATH --answers answers.jsonl", "```", ""]
    return "\n".join(lines)


# -- reading -----------------------------------------------------------------------------------

def read_marker(directory: str | Path) -> ExportMarker:
    path = Path(directory) / MARKER
    try:
        marker: ExportMarker = json.loads(path.read_text(encoding="utf-8"))  # its shape checked below
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: not a readable export marker ({exc})") from None
    if not isinstance(marker, dict) or marker.get("format") != FORMAT_VERSION or \
            not isinstance(marker.get("configs"), dict):
        raise DatasetError(f"{path}: not an execbench export of format {FORMAT_VERSION}")
    return marker


def export_manifest(directory: str | Path) -> JSONObject:
    """The manifest an export stands for: the single input's, with the export's hash and counts."""
    marker = read_marker(directory)
    inputs = marker.get("inputs") or []
    base: JSONObject = dict(inputs[0]["manifest"]) if len(inputs) == 1 else \
        {"inputs": [i["manifest"] for i in inputs]}
    base.update({"content_hash": marker["content_hash"], "tasks": marker["tasks"],
                 "export": {"format": marker["format"], "configs": [name for name in sorted(marker["configs"])]}})
    return base


def read_export_tasks(directory: str | Path, check: FamilyCheck | None = None) -> Iterator[Task]:
    """The exported tasks in their original order (``check``: the families' record check, if known)."""
    import pyarrow.parquet as pq

    directory = Path(directory)
    marker = read_marker(directory)
    rows: list[tuple[int, dict[str, Any]]] = []
    for _name, config in sorted(marker["configs"].items()):
        json_columns = set(config.get("json_columns", []))
        for file in config["files"]:
            path = (directory / file).resolve()
            if directory.resolve() not in path.parents:
                raise DatasetError(f"{directory / MARKER}: {file!r} is outside the export")
            for record in pq.read_table(path).to_pylist():
                data = {c: json.loads(record[c]) if c in json_columns else record[c] for c in COLUMNS}
                rows.append((int(record["order"]), data))
    rows.sort(key=lambda item: item[0])
    if [order for order, _ in rows] != list(range(len(rows))):
        raise DatasetError(f"{directory}: the export's rows do not form one complete sequence")
    for order, data in rows:
        try:
            yield Task.from_json(data, check)
        except (DatasetError, TypeError) as exc:
            raise DatasetError(f"{directory}, task {order}: {exc}") from None
