"""The build engine shared by every family: candidates → cached, parallel outcomes → dataset.

Candidates run on a thread pool (each one's work is sandboxed child processes, so the
threads only wait); outcomes are cached by content hash; tasks are written in candidate
order, so a dataset is byte-identical however many jobs built it.
"""

from __future__ import annotations

import platform
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from execbench.dataset import DatasetWriter, Task
from execbench.dataset.cache import BuildCache, content_key
from execbench.families.base import Candidate, Family, Outcome, SourceError

ProgressFn = Callable[[int, int, int, int], None]  # done, total, tasks, rejected


def _outcome(family: Family, candidate: Candidate, options: dict, cache: BuildCache) -> Outcome:
    key = content_key(family.name, family.version, platform.python_version(), candidate.payload, options)
    cached = cache.get(key)
    if cached is not None:
        return Outcome(**cached)
    try:
        outcome = family.build_candidate(candidate, options)
    except SourceError as exc:
        outcome = Outcome()
        outcome.reject(candidate.key, "source", str(exc))
    cache.put(key, {"tasks": outcome.tasks, "rejected": outcome.rejected})
    return outcome


def build_dataset(
    family: Family,
    sources: list[str],
    out: str | Path,
    *,
    options: dict[str, Any],
    jobs: int = 1,
    cache: BuildCache | None = None,
    progress: ProgressFn | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Build ``family`` tasks from ``sources`` into the dataset directory ``out``; returns the manifest."""
    cache = cache or BuildCache(enabled=False)
    started = time.perf_counter()
    hits, misses = cache.hits, cache.misses
    candidates = list(family.candidates(sources, options))
    if limit is not None:
        candidates = candidates[:limit]
    settings = {"family": family.name, "builder_version": family.version, "sources": sources,
                "options": options, "limit": limit}
    settings.update(family.manifest_settings(options))
    n_tasks = n_rejected = 0
    with DatasetWriter(out, settings=settings) as writer, ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = [pool.submit(_outcome, family, c, options, cache) for c in candidates]
        for done, future in enumerate(futures, 1):
            outcome = future.result()
            for record in outcome.tasks:
                writer.add(Task.from_json(record))
            for rejection in outcome.rejected:
                writer.reject(**rejection)
            n_tasks += len(outcome.tasks)
            n_rejected += len(outcome.rejected)
            if progress:
                progress(done, len(candidates), n_tasks, n_rejected)
        manifest = writer.close(
            candidates=len(candidates),
            build_seconds=round(time.perf_counter() - started, 3),
            cache={"hits": cache.hits - hits, "misses": cache.misses - misses},
        )
    return manifest
