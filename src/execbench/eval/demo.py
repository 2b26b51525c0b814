"""``execbench demo``: a small mixed dataset from the built-in sources, evaluated offline.

For every family with built-in demo sources, build a few candidates per source with the
real build engine (sandboxed execution, build cache), keep the tasks with the shortest
prompts (arms in turn), merge them into one dataset, evaluate the default local model on it and
summarise. Everything lands under ``out`` (``dataset/``, ``logs/``, ``build/``).

Beside the live model, the demo replays the shipped sets of published predictions (issue 37:
``execbench/data/<name>/replay/<stem>.jsonl``, each with a ``<stem>.json`` that names the family,
source and build options of the tasks it answers, and the license next to it): their tasks are
built into ``replay/<stem>/dataset`` and the file is played back as the model ``replay/<stem>``
into the same ``logs/``, so the first report shows a real model's failure profile beside the
tiny local one. Nothing is fetched: the predictions are package data.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from execbench import registry
from execbench.contract import Demo
from execbench.dataset import DatasetWriter, check_output_dir, read_tasks
from execbench.dataset.cache import BuildCache
from execbench.families.build import ProgressFn, build_dataset

CANDIDATES_PER_SOURCE = 2
# Two tasks per source (issue 34): on 2 cores the 135M model reads ~1,000-token prompts at a few
# hundred tokens/s, so reading prompts is most of the demo's time; two per source keeps every
# source (and so every family) present at two thirds of the reading (benchmarks/demo_time.py).
TASKS_PER_SOURCE = 2
PROMPT_CHARS = 4000  # prompt fields + answer, in characters: keeps every demo prompt near 1,000 tokens
DATA = Path(__file__).resolve().parents[1] / "data"


@dataclass
class DemoDataset:
    path: Path
    tasks: int
    by_source: dict[str, int]
    skipped: dict[str, str]  # family/source -> why it contributed nothing


@dataclass(frozen=True)
class DemoReplay:
    """A shipped set of published predictions (module doc): the replay file and how to build its tasks."""

    file: Path
    family: str
    source: str
    options: dict[str, Any]
    candidates: int
    variant: str
    label: str

    @property
    def stem(self) -> str:
        return self.file.stem

    @property
    def model(self) -> str:
        return f"replay/{self.file}"


def demo_replays(root: Path = DATA) -> list[DemoReplay]:
    """The shipped replay sets whose family is available (``<root>/*/replay/<stem>.json`` beside its
    ``<stem>.jsonl``): the one place the demo reads them, so they can move onto the family later."""
    found = []
    for meta_path in sorted(root.glob("*/replay/*.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        replies = meta_path.with_suffix(".jsonl")
        if meta["family"] not in registry.names() or not replies.is_file():
            continue
        found.append(DemoReplay(file=replies, family=meta["family"], source=meta["source"],
                                options=dict(meta.get("options", {})), candidates=int(meta.get("candidates", 1)),
                                variant=meta.get("variant", "direct"), label=meta.get("label", replies.stem)))
    return found


def build_replay_dataset(out: Path, replay: DemoReplay, *, jobs: int = 2, cache: Any = None) -> Path:
    """Build the tasks ``replay`` answers into ``out/replay/<stem>/dataset`` (the real build engine,
    the build cache) and return that dataset."""
    plugin = registry.get(replay.family)
    path = out / "replay" / replay.stem / "dataset"
    if path.exists():
        check_output_dir(path)
        shutil.rmtree(path)
    own = cache is None
    cache = BuildCache() if own else cache
    try:
        build_dataset(plugin, [replay.source], path, options={**plugin.default_options, **replay.options}, jobs=jobs,
                      cache=cache, limit=replay.candidates)
    finally:
        if own:
            cache.close()
    return path


def demo_sources() -> dict[str, tuple[str, ...]]:
    """Per family, the built-in sources it declares for the demo (its ``Demo`` capability)."""
    declared = {family.name: family.capability(Demo) for family in registry.registered()}
    return {name: tuple(demo.sources) for name, demo in declared.items() if demo is not None and demo.sources}


def _size(task: Any) -> int:
    """How much reading the task asks of the model: its prompt fields and its answer."""
    return len(json.dumps(task.prompt_fields, ensure_ascii=False)) + len(json.dumps(task.answer, ensure_ascii=False))


def _pick(tasks: list[Any], n: int) -> list[Any]:
    """Up to ``n`` tasks, the shortest prompts first, taking the arms in turn (mixed arms).

    Tasks over :data:`PROMPT_CHARS` are used only if too few others exist: on 2 cores a
    3,000-token prompt costs the 135M model more than the rest of the demo together.
    """
    ordered = sorted(tasks, key=_size)
    small = [task for task in ordered if _size(task) <= PROMPT_CHARS]
    by_arm: dict[str, list[Any]] = {}
    for task in small:
        by_arm.setdefault(task.arm, []).append(task)
    picked: list[Any] = []
    while len(picked) < n and any(by_arm.values()):
        for queue in by_arm.values():
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    picked += [task for task in ordered if task not in picked][: n - len(picked)]
    return picked


def check_demo_out(out: Path) -> None:
    """``-o`` never overwrites what is not execbench's (issue 34): ``out`` holds only the demo's
    own entries, and ``out/dataset`` (replaced by each run) is a dataset (DatasetError if not)."""
    check_output_dir(out, ours=("dataset", "logs", "build", "replay", "timings.json", "report.html",
                                "report.samples.csv", "report.samples.parquet", "report.tables.json", "report.tables"))
    check_output_dir(out / "dataset")


def build_demo_dataset(
    out: Path,
    *,
    candidates: int = CANDIDATES_PER_SOURCE,
    per_source: int = TASKS_PER_SOURCE,
    jobs: int = 2,
    progress: Callable[[str], ProgressFn | None] | None = None,
    sources: dict[str, tuple[str, ...]] | None = None,
) -> DemoDataset:
    """Build ``out/dataset`` from the built-in demo sources of every available family (or ``sources``)."""
    sources = demo_sources() if sources is None else sources
    check_demo_out(out)
    build_root = out / "build"
    cache = BuildCache()
    selected = []
    by_source: dict[str, int] = {}
    skipped: dict[str, str] = {}
    try:
        for family, names in sources.items():
            plugin = registry.get(family)
            for source in names:
                label = f"{family}/{source}"
                part = build_root / f"{family}-{source}"
                try:
                    build_dataset(plugin, [source], part, options=dict(plugin.default_options), jobs=jobs,
                                  cache=cache, limit=candidates, progress=progress(label) if progress else None)
                except Exception as exc:  # noqa: BLE001 - a source that fails here must not sink the demo
                    skipped[label] = f"{type(exc).__name__}: {exc}"
                    continue
                tasks = _pick(list(read_tasks(part, registry.check_record)), per_source)
                if not tasks:
                    skipped[label] = "no task passed the build checks"
                by_source[label] = len(tasks)
                selected.extend(tasks)
    finally:
        cache.close()
    if not selected:
        raise RuntimeError("the demo could not build any task: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    path = out / "dataset"
    if path.exists():
        shutil.rmtree(path)
    writer = DatasetWriter(path, settings={"demo": True, "sources": {k: list(v) for k, v in sources.items()},
                                           "candidates_per_source": candidates, "tasks_per_source": per_source},
                           check=registry.check_record)
    with writer:
        for task in selected:
            writer.add(task)
        writer.close(candidates=None, build_seconds=None, parts=by_source)
    return DemoDataset(path=path, tasks=len(selected), by_source=by_source, skipped=skipped)
