"""The build engine shared by every family: candidates → cached, parallel outcomes → dataset.

Candidates run in batches (a family declaring a :class:`~execbench.contract.BuildSchedule` may
build several candidates in one sandbox; without one, each is built alone by ``Family.build_candidate``) on a thread pool (the work is sandboxed child processes, so the threads only
wait) or one by one on a Ray cluster (:mod:`execbench.families.distributed`); outcomes
are cached by content hash; tasks are written in candidate order, so a dataset is
byte-identical however many jobs, and whichever executor, built it.

Hash seeds: a family that checks determinism under several ``PYTHONHASHSEED`` values (its
options have ``check_seeds``) gets them from :func:`build_dataset`, resolved once per build
(:mod:`execbench.contract.hashseeds`: key seed 0, check seeds drawn at random) and handed to
every batch in ``options["hash_seeds"]``; the cache key leaves random seeds out, a cache
entry keeps the seeds its outcome was checked under, and the manifest records both.
"""

from __future__ import annotations

from collections import Counter
import heapq
import time
import multiprocessing
import pickle
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Callable, Iterator

from execbench.dataset import DatasetError, DatasetWriter, Task
from execbench.dataset.cache import BuildCache
from execbench import astlock
from execbench.contract import (BuildContext, BuildReport, BuildSchedule, Candidate, Family, Outcome, build_key,
                                hashseeds)
from execbench.families.distributed import RayBuild, parse_executor, run_candidate
from execbench.sources.errors import SourceError

ProgressFn = Callable[[int, int, int, int], None]  # done, total, tasks, rejected


def _cache_record(outcome: Outcome, options: dict) -> dict[str, Any]:
    """What the cache keeps of an outcome: it and the hash seeds it was checked under."""
    record: dict[str, Any] = {"tasks": outcome.tasks, "rejected": outcome.rejected}
    if hashseeds.RESOLVED in options:
        record["hash_seeds"] = hashseeds.of(options)
    return record


def _batches(misses: list[tuple[int, Candidate]], size: int, jobs: int,
             cost: Callable[[Candidate], float] = lambda _: 1.0) -> list[list[tuple[int, Candidate]]]:
    """Misses cut into batches of at most ``size`` (fewer when there are few, so that every
    worker gets two), balanced by ``cost``: the dearest candidates first, each to the batch
    with the least cost so far that has room (ties: the lowest batch). Neighbouring
    candidates are often alike in cost (a source's C++ cases, a package's modules); with
    equal costs this deals them out in turn (batch ``i`` takes misses ``i``, ``i + n``, ...).
    Each batch keeps the misses' order; the dearest batch comes first, so the pool's workers
    end together. Outcomes do not depend on the batch a candidate is in."""
    size = max(1, min(size, -(-len(misses) // max(1, jobs * 2))))
    count = -(-len(misses) // size)
    weights = [max(0.0, float(cost(candidate))) for _, candidate in misses]
    members: list[list[int]] = [[] for _ in range(count)]
    totals = [0.0] * count
    open_batches = [(0.0, b) for b in range(count)]   # (cost so far, batch) of the batches with room
    for k in sorted(range(len(misses)), key=lambda k: -weights[k]):   # stable: equal costs keep their order
        _, target = heapq.heappop(open_batches)
        members[target].append(k)
        totals[target] += weights[k]
        if len(members[target]) < size:
            heapq.heappush(open_batches, (totals[target], target))
    order = sorted(range(count), key=lambda b: -totals[b])   # stable: equal totals keep their order
    return [[misses[k] for k in sorted(members[b])] for b in order]


def _cache_hits(family: Family, candidates: list[Candidate], options: dict, cache: BuildCache,
                misses: list[tuple[int, Candidate]], checked: Counter[str]) -> Iterator[tuple[int, Outcome]]:
    """(index, outcome) of the cached candidates; the others are appended to ``misses``.
    ``checked`` counts the hash seeds the cached outcomes were checked under."""
    for index, candidate in enumerate(candidates):
        cached = cache.get(build_key(family, candidate.payload, options))
        if cached is not None:
            if hashseeds.RESOLVED in options:
                seeds = cached.get("hash_seeds")
                checked[",".join(map(str, seeds)) if seeds else "unrecorded (before issue 22: 0,1,2)"] += 1
            yield index, Outcome(tasks=cached["tasks"], rejected=cached["rejected"])
        else:
            misses.append((index, candidate))


def _schedule(family: Family) -> BuildSchedule:
    """The family's declared build schedule (none: one candidate at a time, on threads)."""
    return family.capability(BuildSchedule) or BuildSchedule()


def _limited(family: Family, candidates: list[Candidate], limit: int) -> list[Candidate]:
    """The candidates of the first ``limit`` problems (``--limit N``): the first ``limit`` candidates,
    unless the family's candidates hold several problems each and its schedule cuts them by problem."""
    cut = _schedule(family).limited
    return list(cut(candidates, limit)) if cut is not None else candidates[:limit]


def _cost(family: Family) -> Callable[[Candidate], float]:
    """What building a candidate roughly costs, relative to the family's others (1 unless its schedule says)."""
    cost = _schedule(family).cost
    return (lambda candidate: float(cost(candidate))) if cost is not None else (lambda _: 1.0)


def _build_many(family: Family, candidates: list[Candidate], options: dict) -> list[Outcome]:
    """Outcomes of several candidates (one per candidate, in order): together when the family's
    schedule has ``build_many``, else one by one with ``build_candidate``."""
    many = _schedule(family).build_many
    if many is not None:
        return many(candidates, options)
    return [family.build_candidate(candidate, options) for candidate in candidates]


def _build_batch(family: Family, candidates: list[Candidate], options: dict) -> list[Outcome]:
    """Outcomes of a batch; a :class:`SourceError` is a rejection, as it is one by one."""
    try:
        return _build_many(family, candidates, options)
    except SourceError:
        if len(candidates) > 1:  # find the candidate it belongs to
            return [outcome for c in candidates for outcome in _build_batch(family, [c], options)]
        return [run_candidate(family, candidates[0], options)]


def _unique_keys(candidates: list[Candidate]) -> None:
    """Two candidates with one key would make tasks with one id: found before anything runs
    (SourceError), not when the dataset is written (issue 34)."""
    seen: set[str] = set()
    for candidate in candidates:
        if candidate.key in seen:
            raise SourceError(f"two candidates are both {candidate.key!r} (two case directories with the same id, "
                              "or two sources whose folders have the same name): make them unique")
        seen.add(candidate.key)


def _checked(family: Family, task: Task) -> Task:
    """``task`` if it is one of ``family``'s: its family, one of its arms, an answer kind of that arm.
    (The registry's dataset hook checks the same when it is imported; this engine does not import it.)"""
    kinds = family.arms.get(task.arm) if task.family == family.name else None
    if kinds is None or task.answer_kind not in kinds:
        raise DatasetError(f"task {task.id}: family {task.family!r}, arm {task.arm!r}, answer_kind "
                           f"{task.answer_kind!r} is not one the {family.name!r} plug-in declares")
    return task


def _picklable(family: Family) -> bool:
    """Whether a worker process can be handed ``family``: pickle sends the plug-in by its class's
    module and name, and the worker imports that module (a class defined inside a function cannot go)."""
    try:
        return type(pickle.loads(pickle.dumps(family))) is type(family)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False


def _pool(family: Family, jobs: int) -> Executor:
    """Threads when a family's work is sandboxed children (the threads only wait); processes
    when its own Python work is heavy (``BuildSchedule.in_processes``: one GIL would serialise
    it) and the plug-in can be handed to a worker (pickled; the engine looks no family up by name)."""
    if _schedule(family).in_processes and jobs > 1 and _picklable(family):
        return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"))
    astlock.install()  # threads parse too: CPython's AST constructor is not thread-safe (astlock)
    return ThreadPoolExecutor(max(1, jobs))


def _local_outcomes(family: Family, candidates: list[Candidate], options: dict, cache: BuildCache,
                    jobs: int, checked: Counter[str]) -> Iterator[tuple[int, Outcome]]:
    """(index, outcome): cache hits first, then the misses as batches finish on a pool here."""
    misses: list[tuple[int, Candidate]] = []
    yield from _cache_hits(family, candidates, options, cache, misses, checked)
    if not misses:
        return
    with _pool(family, jobs) as pool:
        # a worker process or a thread is handed the plug-in itself (pickled for a process)
        futures = {pool.submit(_build_batch, family, [c for _, c in batch], options): batch
                   for batch in _batches(misses, _schedule(family).batch_size, jobs, _cost(family))}
        for future in as_completed(futures):
            batch = futures[future]
            for (index, candidate), outcome in zip(batch, future.result(), strict=True):
                cache.put(build_key(family, candidate.payload, options), _cache_record(outcome, options))
                yield index, outcome


def _ray_outcomes(family: Family, candidates: list[Candidate], options: dict, cache: BuildCache,
                  jobs: int, address: str | None, checked: Counter[str]) -> Iterator[tuple[int, Outcome]]:
    """(index, outcome): cache hits first, then the rest as Ray workers finish them."""
    misses: list[tuple[int, Candidate]] = []
    yield from _cache_hits(family, candidates, options, cache, misses, checked)
    if not misses:
        return
    cluster = RayBuild(address, jobs)
    try:
        for index, outcome, completed in cluster.outcomes(family, misses, options):
            if completed:  # a candidate lost with its worker is not cached: a rebuild retries it
                cache.put(build_key(family, candidates[index].payload, options), _cache_record(outcome, options))
            yield index, outcome
    finally:
        cluster.close()


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
    executor: str = "local",
) -> dict[str, Any]:
    """Build ``family`` tasks from ``sources`` into the dataset directory ``out``; returns the manifest.

    ``executor`` is ``local`` (a thread pool of ``jobs`` here) or ``ray[:ADDRESS]``
    (:mod:`execbench.families.distributed`); either way tasks are written in candidate
    order, so the dataset does not depend on it. A family that builds in worker processes
    (``BuildSchedule.in_processes``, with ``jobs > 1``) starts them with ``spawn``: a script
    calling this must guard its top level with ``if __name__ == "__main__":``.

    A family with a ``check_seeds`` option is built under this build's hash seeds
    (:func:`execbench.contract.hashseeds.resolve`), recorded in ``settings.hash_seeds``."""
    kind, address = parse_executor(executor)
    seeds: dict[str, Any] | None = None
    built_options = options
    if hashseeds.OPTION in family.default_options or hashseeds.OPTION in options:
        built_options, seeds = hashseeds.resolve(options)
    cache = cache or BuildCache(enabled=False)
    started = time.perf_counter()
    hits, misses = cache.hits, cache.misses
    # this build's state (issue 36): the family writes its manifest settings, fields and files into it
    context = BuildContext(settings={"family": family.name, "builder_version": family.version, "sources": sources,
                                     "options": options, "limit": limit})
    candidates = list(family.candidates(sources, options, context))
    report = family.capability(BuildReport)
    record_written = report.record_written if report is not None else None
    if limit is not None:
        candidates = _limited(family, candidates, limit)
    _unique_keys(candidates)
    checked: Counter[str] = Counter()
    if seeds is not None:
        context.settings["hash_seeds"] = seeds
    n_tasks = n_rejected = done = 0
    with DatasetWriter(out, settings=context.settings, files=context.files) as writer:
        outcomes = (_local_outcomes(family, candidates, built_options, cache, jobs, checked) if kind == "local"
                    else _ray_outcomes(family, candidates, built_options, cache, jobs, address, checked))
        finished: dict[int, Outcome] = {}
        following = 0
        for index, outcome in outcomes:
            finished[index] = outcome
            done += 1
            n_tasks += len(outcome.tasks)
            n_rejected += len(outcome.rejected)
            while following in finished:  # write in candidate order
                ready = finished.pop(following)
                for record in ready.tasks:
                    writer.add(_checked(family, Task.from_json(record)))
                for rejection in ready.rejected:
                    writer.reject(**rejection)
                if record_written is not None:
                    record_written(ready, context)
                following += 1
            if progress:
                progress(done, len(candidates), n_tasks, n_rejected)
        if seeds is not None:  # the seeds the cached outcomes were checked under (the others: "check")
            seeds["cached"] = dict(sorted(checked.items()))
        manifest = writer.close(
            candidates=len(candidates),
            build_seconds=round(time.perf_counter() - started, 3),
            cache={"hits": cache.hits - hits, "misses": cache.misses - misses},
            **context.extra,
        )
    return manifest
