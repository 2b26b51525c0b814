"""Dataset directories: ``tasks.jsonl`` + ``manifest.json`` + ``rejected.jsonl`` (and reading
the Parquet exports of :mod:`execbench.dataset.export` in their place).

Writing is crash-safe: files are written under temporary names and renamed into place
when the dataset is complete, so a crashed build never leaves a half dataset that looks
whole (the build cache keeps finished work, so a rerun is cheap). Reading streams.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

from execbench import __version__
from execbench.dataset import export
from execbench.dataset.export import ExportInput
from execbench.dataset.manifest import ContentHash, Manifest, content_hash
from execbench.dataset.record import DatasetError, FamilyCheck, Task, validate

TASKS = "tasks.jsonl"
MANIFEST = "manifest.json"
REJECTED = "rejected.jsonl"


def reason_head(reason: str) -> str:
    """What a rejection's reason is, for counting: its text before the first ``": "``, past any
    leading file path (``/x/case.toml: missing key 'id'`` counts as ``missing key 'id'``)."""
    parts = reason.split("; ", 1)[0].split(": ")
    while len(parts) > 1 and " " not in parts[0] and ("/" in parts[0] or "." in parts[0]):
        parts.pop(0)
    return parts[0][:80]


class DatasetWriter:
    """Stream tasks and rejections into ``directory``; :meth:`close` publishes them, with
    ``files`` (name → text: a family's files beside the dataset, ``BuildContext.files``)."""

    def __init__(self, directory: str | Path, *, settings: dict[str, Any], files: dict[str, str] | None = None,
                 check: FamilyCheck | None = None) -> None:
        self.directory = Path(directory)
        self.check = check  # the families' record check, from a caller that knows them
        self.directory.mkdir(parents=True, exist_ok=True)
        self.settings = settings
        self.files = files if files is not None else {}
        self._tasks = open(self.directory / f".{TASKS}.partial", "w", encoding="utf-8")
        self._rejected = open(self.directory / f".{REJECTED}.partial", "w", encoding="utf-8")
        self._hash = ContentHash()
        self._ids: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.rejections: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()  # "stage: reason head" (the text before its first ':')

    def add(self, task: Task) -> None:
        data = task.to_json()
        validate(data, self.check)
        if task.id in self._ids:
            raise DatasetError(f"duplicate task id {task.id!r}")
        self._ids.add(task.id)
        self._hash.update(data)
        self._tasks.write(json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
        self.counts[f"{task.family}/{task.arm}"] += 1

    def reject(self, candidate: str, reason: str, *, stage: str, **details: Any) -> None:
        record = {"candidate": candidate, "stage": stage, "reason": reason, **details}
        self._rejected.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        self.rejections[stage] += 1
        self.reasons[f"{stage}: {reason_head(reason)}"] += 1

    def manifest(self, **extra: Any) -> Manifest:
        """The manifest of what was written so far; ``extra``: build-specific fields."""
        return Manifest(
            content_hash=self._hash.value(),
            tasks=sum(self.counts.values()),
            settings=self.settings,
            execbench_version=__version__,
            python=platform.python_version(),
            created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            tasks_by_arm=dict(sorted(self.counts.items())),
            rejected=sum(self.rejections.values()),
            rejected_by_stage=dict(sorted(self.rejections.items())),
            rejected_by_reason=dict(sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:30]),
            extra=dict(extra),
        )

    def close(self, **extra: Any) -> dict[str, Any]:
        """Publish the dataset; returns its manifest's JSON object (:meth:`Manifest.to_json`)."""
        self._tasks.close()
        self._rejected.close()
        typed = self.manifest(**extra)
        for name, text in sorted(self.files.items()):  # a family's files beside the dataset
            if name in (TASKS, REJECTED, MANIFEST) or Path(name).name != name or name.startswith("."):
                raise ValueError(f"{name!r} is not a file name a family may write beside a dataset")
            (self.directory / f".{name}.partial").write_text(text, encoding="utf-8")
            os.replace(self.directory / f".{name}.partial", self.directory / name)
        if not typed.tasks:  # a dataset without tasks says why
            typed.extra["zero_tasks_reason"] = (
                "; ".join(f"{k} ({v})" for k, v in list(typed.rejected_by_reason.items())[:3])
                or "no candidates and no rejections (nothing was built)")
        manifest = typed.to_json()
        os.replace(self.directory / f".{TASKS}.partial", self.directory / TASKS)
        os.replace(self.directory / f".{REJECTED}.partial", self.directory / REJECTED)
        tmp = self.directory / f".{MANIFEST}.partial"
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.directory / MANIFEST)
        return manifest

    def __enter__(self) -> "DatasetWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._tasks.closed:  # an error: leave no half dataset behind
            self._tasks.close()
            self._rejected.close()


# -- where a command may write (issue 34: ``-o`` never overwrites or deletes what is not ours) ----

def is_dataset_dir(path: str | Path) -> bool:
    """Whether ``path`` is an execbench dataset directory or export folder."""
    path = Path(path)
    return path.is_dir() and ((path / MANIFEST).is_file() or (path / TASKS).is_file() or export.is_export(path))


def _leftovers_only(path: Path) -> bool:
    """Whether ``path`` holds only what an interrupted writer of ours leaves (``.NAME.partial``)."""
    return all(entry.name.startswith(".") and entry.name.endswith(".partial") for entry in path.iterdir())


def check_output_dir(path: str | Path, *, ours: Iterable[str] = ()) -> None:
    """Refuse ``-o path`` for a dataset (or a folder of execbench outputs whose entries are all
    named in ``ours``) when writing there would overwrite or delete something that is not
    execbench's: an existing file, or a non-empty directory that is neither a dataset nor an
    export nor a folder of ``ours`` (DatasetError, before anything is written)."""
    path = Path(path)
    if (path.exists() or path.is_symlink()) and not path.is_dir():
        raise DatasetError(f"-o {path}: an existing file, not a directory; nothing was written (choose a new path)")
    if not path.is_dir() or is_dataset_dir(path) or _leftovers_only(path):
        return
    allowed = set(ours)
    strangers = sorted(entry.name for entry in path.iterdir() if entry.name not in allowed
                       and not (entry.name.startswith(".") and entry.name.endswith(".partial")))
    if not allowed or strangers:
        raise DatasetError(f"-o {path}: an existing directory that is not an execbench dataset "
                           f"(it holds {strangers[0] if strangers else 'other files'!r}); nothing was written: "
                           "choose a new or empty directory")


def check_output_file(path: str | Path, *, marker: str, what: str) -> None:
    """Refuse ``-o path`` for a file when ``path`` exists and is a directory, or a file whose
    first 4 KiB do not contain ``marker`` (so it is not an earlier ``what`` of execbench's)."""
    path = Path(path)
    if path.is_dir():
        raise DatasetError(f"-o {path}: an existing directory, not a file; nothing was written")
    if path.exists():
        with open(path, "rb") as fh:
            head = fh.read(4096)
        if marker.encode() not in head:
            raise DatasetError(f"-o {path}: an existing file that is not an execbench {what}; nothing was "
                               "written (choose a new path, or remove the file yourself)")


def _jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}, line {number}: not valid JSON: {exc.msg}") from None
            except RecursionError:  # hostile nesting: an edited file, not one execbench wrote
                raise DatasetError(f"{path}, line {number}: not valid JSON: nested too deeply") from None


def dataset_file(directory: str | Path) -> Path:
    path = Path(directory)
    if path.is_file():
        return path
    tasks = path / TASKS
    if not tasks.exists():
        raise DatasetError(f"{path} is not a dataset directory (no {TASKS}) nor an execbench export")
    return tasks


def read_tasks(directory: str | Path, check: FamilyCheck | None = None) -> Iterator[Task]:
    """Stream validated tasks from a dataset directory, a tasks.jsonl file, or an export
    folder written by ``execbench export`` (:mod:`execbench.dataset.export`); ``check``: the
    families' record check (``registry.check_record``) of a caller that knows them."""
    if Path(directory).is_dir() and not (Path(directory) / TASKS).exists() and export.is_export(directory):
        yield from export.read_export_tasks(directory, check)
        return
    path = dataset_file(directory)
    for number, data in _jsonl(path):
        try:
            yield Task.from_json(data, check)
        except (DatasetError, TypeError) as exc:
            raise DatasetError(f"{path}, line {number}: {exc}") from None


#: The option of grade, eval and export that takes an edited dataset on purpose.
ACCEPT_MODIFIED = "--accept-modified"


class ModifiedDatasetError(DatasetError):
    """A dataset whose tasks no longer hash to its manifest's content hash (edited after the build)."""


def check_unmodified(path: str | Path, tasks: Iterable[Task] | None = None, *, accept: bool = False) -> str | None:
    """Refuse a dataset whose ``tasks.jsonl`` was edited after it was built (issue 34): its tasks
    (``tasks``, or read from ``path``) must hash to its manifest's ``content_hash``. With
    ``accept`` the mismatch is returned as a note instead; None when they match or there is no
    manifest to compare with (a bare tasks.jsonl, an export, which is checked when read)."""
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    if not (directory / MANIFEST).is_file() or (path.is_file() and path.name != TASKS):
        return None
    try:
        recorded = json.loads((directory / MANIFEST).read_text(encoding="utf-8")).get("content_hash")
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError, RecursionError):
        raise DatasetError(f"{directory / MANIFEST}: not a readable manifest (JSON object)") from None
    if not isinstance(recorded, str):
        return None
    actual = content_hash(tasks if tasks is not None else read_tasks(path))
    if actual == recorded:
        return None
    message = (f"{directory / TASKS} was changed after the build: its content hash {actual[:19]}… is not the "
               f"manifest's {recorded[:19]}…")
    if accept:
        return f"{message}; used as it is ({ACCEPT_MODIFIED}): results carry the new hash"
    raise ModifiedDatasetError(f"{message}. Rebuild it, or pass {ACCEPT_MODIFIED} to use it as edited on purpose")


def read_manifest(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    if not path.exists() and export.is_export(directory):
        return export.export_manifest(directory)
    if not path.exists():
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DatasetError(f"{path}: not a readable manifest ({exc})") from None
    if not isinstance(manifest, dict):
        raise DatasetError(f"{path}: not a readable manifest (a JSON object)")
    return manifest


def read_rejected(directory: str | Path) -> Iterator[dict[str, Any]]:
    path = Path(directory) / REJECTED
    if path.exists():
        for _, data in _jsonl(path):
            yield data


def read_inputs(paths: Iterable[str | Path], check: FamilyCheck | None = None) -> list[ExportInput]:
    """The dataset directories (or exports) at ``paths``, read for :func:`export.write_export`."""
    return [ExportInput(str(path), list(read_tasks(path, check)), read_manifest(path)) for path in paths]


def load_manifest(directory: str | Path) -> Manifest | None:
    """:func:`read_manifest` as a :class:`Manifest` (None when the directory has none)."""
    data = read_manifest(directory)
    return Manifest.from_json(data) if data else None
