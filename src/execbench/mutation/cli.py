"""The body of ``execbench mutate`` (kept here so ``cli.py`` holds only the command)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from execbench.dataset import DatasetError
from execbench.contract import Family, SourceError
from execbench.contract.jsontypes import JSONObject
from execbench.dataset.cache import BuildCache
from execbench.mutation.engine import (MutationSetupError, OfflineSettings, TeacherSettings, mutate_dataset,
                                       mutate_with_teacher)
from execbench.progress import LoggedProgress

USER_ERRORS: tuple[type[Exception], ...] = (MutationSetupError, DatasetError, SourceError, OSError)


def run(dataset: Path, out: Path, *, offline: bool, teacher: str | None, seed: int, attempts: int | None, ops: str,
        drop_unchanged: bool, jobs: int, limit: int | None, no_cache: bool, console: Console,
        plugins: list[Family]) -> JSONObject:
    """``plugins``: the registered families (``execbench.registry``, handed over by ``execbench.cli``)."""
    if Path(out).resolve() == Path(dataset).resolve():
        raise MutationSetupError("the mutated dataset must go to a new directory, not over the original")
    cache = BuildCache(enabled=not no_cache)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[mutants]} mutants, {task.fields[failed]} failed"), TimeElapsedColumn())
    try:
        with LoggedProgress(*columns, console=console, transient=False) as bar:
            handle = bar.add_task("mutate", total=None, mutants=0, failed=0)

            def progress(done: int, total: int, mutants: int, failed: int) -> None:
                bar.update(handle, completed=done, total=total, mutants=mutants, failed=failed)

            if offline:
                operators = tuple(op.strip() for op in ops.split(",") if op.strip())
                settings = OfflineSettings(seed=seed, attempts=attempts or 4, operators=operators,
                                           keep_unchanged=not drop_unchanged)
                return mutate_dataset(dataset, out, settings=settings, jobs=jobs, cache=cache, progress=progress,
                                      limit=limit, plugins=plugins)
            return mutate_with_teacher(dataset, out, plugins=plugins, teacher=teacher or "local",
                                       settings=TeacherSettings(seed=seed, max_retries=attempts or 3,
                                                                concurrency=jobs),
                                       cache=cache, progress=progress, limit=limit)
    finally:
        cache.close()


def _count(stats: JSONObject, key: str) -> int | float | None:
    value = stats.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def print_summary(manifest: JSONObject, out: Path, console: Console) -> None:
    info = manifest.get("mutation")
    info = info if isinstance(info, dict) else {}
    stats = info.get("yields")
    stats = stats if isinstance(stats, dict) else {}
    table = Table(title=f"{out} ({info.get('mode', '?')} mutation)")
    table.add_column("originals → mutants")
    table.add_column("count", justify="right")
    rows = [("original tasks", _count(stats, "originals")), ("mutants written", _count(stats, "mutants")),
            ("  answer changed", _count(stats, "answer_changed")),
            ("  answer unchanged (flagged)",
             (_count(stats, "flagged_unchanged") or 0) - (_count(stats, "dropped_unchanged") or 0)),
            ("unchanged, dropped", _count(stats, "dropped_unchanged")),
            ("failed (no valid mutant)", _count(stats, "failed"))]
    for label, value in rows:
        if value is not None:
            table.add_row(label, str(value))
    for key in ("teacher_calls", "valid", "invalid"):
        if key in stats:
            table.add_row(key.replace("_", " "), str(stats[key]))
    console.print(table)
    console.print(f"{manifest['tasks']} mutated tasks in {manifest['build_seconds']:.1f} s; every attempt in "
                  f"{Path(out) / str(info.get('log', 'mutation_log.jsonl'))}")
