"""Dataset-level driver: original dataset → mutated twin dataset + ``mutation_log.jsonl``.

A family *adapter* (its declared ``Mutation`` capability, e.g. ``families/trace/mutate.py``) groups the
original tasks into units (one program or test with its runs), proposes mutants, and
hands every mutant to the family's own ``build_candidate`` — the same code path, checks
and oracles as ``execbench build``. The engine only orchestrates: seeds, parallelism,
the build cache, linking each admitted mutant to its original, and the records.

Identity: a mutant of ``<family>/<source>/<case>#<arm>`` is
``<family>/<source>-mut/<case>#<arm>`` with ``provenance.original_id`` = the original id
and ``provenance.mutation`` = {mode, seed, attempt, operators, answer_changed, ...}.

Hash seeds (issue 22): the families that check determinism under several ``PYTHONHASHSEED``
values (options with ``check_seeds``) get this run's seeds from :func:`resolve_hash_seeds`,
resolved once per mutation run as ``execbench build`` resolves them once per build
(:mod:`execbench.contract.hashseeds`: key seed 0, check seeds drawn at random, or pinned by
``EXECBENCH_CHECK_SEEDS``; not by the original build's own pin). They travel in
the options every unit builds with (``options["hash_seeds"]``; a selection build with fewer
``repeats`` takes their prefix), the cache entries keep them, and the mutated dataset's
manifest records them in ``settings.hash_seeds`` (``key``, ``check``, ``drawn``, ``cached``).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence, TypedDict, cast

from execbench import astlock
from execbench.dataset import (DatasetError, DatasetWriter, FamilyCheck, Manifest, Task, arms_check, load_manifest,
                              parse_id, read_tasks)
from execbench.contract import (Candidate, Family, Mutation, Outcome, SourceError, TeacherMutation, build_key,
                                hashseeds)
from execbench.contract.jsontypes import JSONObject
from execbench.dataset.cache import BuildCache
from execbench.mutation.program import MutationError, ProgramMutation, mutate_program
from execbench.usererror import UserError

LOG = "mutation_log.jsonl"
SUFFIX = "-mut"
OPERATORS = ("rename", "literals", "strip-comments", "inputs")

ProgressFn = Callable[[int, int, int, int], None]  # units done, units, admitted mutants, failed originals
LogRecord = Mapping[str, object]  # a mutation_log.jsonl record: the engine writes it, and reads only kind/status


class TaskRecord(TypedDict):
    """A task record as a family's build made it (the JSON of :class:`execbench.dataset.Task`):
    :func:`link` renames and links it; the dataset writer validates it."""

    id: str
    family: str
    arm: str
    source_id: str
    language: str
    prompt_fields: Mapping[str, object]
    answer: object
    answer_kind: str
    metrics: Mapping[str, float | int | None]
    provenance: Mapping[str, object]


class Rejection(TypedDict):
    """An original that got no mutant (a line of the mutated dataset's ``rejected.jsonl``)."""

    candidate: str  # the original's id
    stage: str  # "mutation" or "unchanged"
    reason: str


class VariantFlags(TypedDict, total=False):
    """The program operators an adapter asks of every variant (:func:`operator_variants`)."""

    rename: bool
    strip_comments: bool
    literals: bool
    program: bool  # (the state family's: whether the program is mutated at all)


class ProgramVariant(VariantFlags):
    """One program variant of a unit: its operators and its number (a part of its seed)."""

    variant: int


class MutationSetupError(UserError):
    """The mutation run cannot start (unknown family, empty dataset, bad settings)."""


@dataclass(frozen=True)
class OfflineSettings:
    seed: int = 0
    attempts: int = 4  # builds per unit while looking for admitted, answer-changing mutants
    operators: tuple[str, ...] = OPERATORS
    max_literals: int = 2  # program constants perturbed per mutant (operator "literals")
    keep_unchanged: bool = True  # keep (flagged) mutants whose answer equals the original's
    selection_repeats: int = 1  # hash-seed repeats while selecting; the final build uses the original's
    patience: int = 2  # stop a unit after this many attempts in a row without a new answer change

    def __post_init__(self) -> None:
        unknown = set(self.operators) - set(OPERATORS)
        if unknown:
            raise MutationSetupError(f"unknown operators {sorted(unknown)}; known: {', '.join(OPERATORS)}")
        if self.attempts < 1:
            raise MutationSetupError("attempts must be at least 1")


@dataclass(frozen=True)
class TeacherSettings:
    """Settings of teacher-driven mutation (a family's ``TeacherMutation`` capability)."""

    seed: int = 0
    max_retries: int = 3  # teacher calls per stage (the first try included)
    temperature: float = 0.7
    max_tokens: int = 16384
    local_max_tokens: int = 1024
    concurrency: int = 2  # units in flight
    cache: bool = True  # Inspect's response cache: reruns are free and repeatable


def mutated_source(source: str) -> str:
    return source + SUFFIX


def mutated_id(original_id: str, family: Family | None = None) -> str:
    """``<family>/<source>/<case>#<arm>`` → ``<family>/<source>-mut/<case>#<arm>``, parsed by
    ``family``'s own id parser when given (an id read from a dataset was checked when read)."""
    try:
        parts = family.parse_id(original_id) if family is not None else parse_id(original_id)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    return str(parts._replace(source=mutated_source(parts.source)))


def split_source_id(source_id: str) -> tuple[str, str]:
    source, _, case = source_id.partition("/")
    return source, case


@dataclass
class Unit:
    """One unit of mutation work: original tasks sharing a program (or test)."""

    key: str
    family: str
    originals: list[Task]
    data: dict[str, Any] = field(default_factory=dict)  # the adapter's own (its types are its business)


@dataclass
class UnitResult:
    tasks: list[TaskRecord] = field(default_factory=list)  # linked mutant task records
    rejected: list[Rejection] = field(default_factory=list)
    log: list[LogRecord] = field(default_factory=list)


class Context:
    """What an adapter may use: the family plug-in, its original build options, a cached
    ``build_candidate``, seeded random generators and the settings."""

    def __init__(self, family: Family, options: dict[str, Any], settings: Any, cache: BuildCache,
                 mode: str = "offline", manifest: Manifest | None = None,
                 checked: Counter[str] | None = None) -> None:
        self.family = family
        self.options = options
        self.settings = settings
        self.cache = cache
        self.mode = mode
        self.manifest = manifest  # the original dataset's manifest (its build settings), if it has one
        # the hash seeds the cached outcomes were checked under (settings.hash_seeds.cached)
        self.checked: Counter[str] = checked if checked is not None else Counter()
        self._lock = threading.Lock()  # units build on several threads

    def original_candidates(self) -> dict[str, Candidate]:
        """The family's own candidates for the original build's sources, by key ({} if the
        sources cannot be read any more, e.g. a temporary directory that is gone)."""
        settings = self.manifest.settings if self.manifest is not None else None
        if not isinstance(settings, dict) or settings.get("family") != self.family.name:
            return {}
        sources = settings.get("sources")
        try:
            return {c.key: c for c in self.family.candidates([str(s) for s in sources or []]
                                                             if isinstance(sources, list) else [], self.options)}
        except (SourceError, OSError, ValueError):
            return {}

    def rng(self, *parts: Any) -> random.Random:
        """A generator seeded by the run seed and ``parts`` (stable across processes)."""
        return random.Random("|".join(map(str, (self.settings.seed, *parts))))

    def mutate_program(self, program: str, key: str, variant: ProgramVariant, protected: set[str]) -> ProgramMutation:
        """``program.mutate_program`` for one attempt's ``variant`` (rename/literals/strip_comments
        flags and its number), seeded by ``key``; on a :class:`MutationError` the program is
        returned unchanged with a note, so the attempt still varies the inputs."""
        try:
            return mutate_program(program, self.rng(key, "program", variant["variant"]),
                                  rename=variant.get("rename", False), literals=variant.get("literals", False),
                                  strip_comments=variant.get("strip_comments", False),
                                  protected=protected, max_literals=self.settings.max_literals)
        except MutationError as exc:
            unchanged = ProgramMutation(text=program)
            unchanged.notes.append(f"program left unchanged: {exc}")
            return unchanged

    def build(self, key: str, payload: dict[str, Any], options: dict[str, Any] | None = None) -> Outcome:
        """The family's own ``build_candidate`` on ``payload``, through the build cache (same
        key scheme as ``execbench build``, so entries are shared)."""
        options = self.options if options is None else options
        cache_key = build_key(self.family, payload, options)
        cached = self.cache.get(cache_key)
        if cached is not None:  # an entry keeps the hash seeds it was checked under, as `execbench build`'s do
            if hashseeds.RESOLVED in options:
                seeds = cached.get("hash_seeds")
                with self._lock:
                    self.checked[",".join(map(str, seeds)) if seeds else "unrecorded (before issue 22: 0,1,2)"] += 1
            return Outcome(tasks=cached["tasks"], rejected=cached["rejected"])
        try:
            outcome = self.family.build_candidate(Candidate(key=key, payload=payload), options)
        except SourceError as exc:
            outcome = Outcome()
            outcome.reject(key, "source", str(exc))
        record: dict[str, Any] = {"tasks": outcome.tasks, "rejected": outcome.rejected}
        if hashseeds.RESOLVED in options:
            record["hash_seeds"] = hashseeds.of(options)
        self.cache.put(cache_key, record)
        return outcome


class Adapter(Protocol):
    family: str

    def units(self, tasks: list[Task], ctx: Context) -> list[Unit]: ...

    def mutate(self, unit: Unit, ctx: Context) -> UnitResult: ...


def operator_variants(operators: Iterable[str], base: VariantFlags) -> list[ProgramVariant]:
    """The program variants a unit is mutated into: with the ``literals`` operator three (two
    with new literal values, one without), otherwise one; ``base`` holds the other settings."""
    literals = [(True, 0), (True, 1), (False, 2)] if "literals" in set(operators) else [(False, 0)]
    variants: list[ProgramVariant] = [{**base, "literals": literal, "variant": number} for literal, number in literals]
    return variants


def adapter_for(family: Family, plugins: Iterable[Family] = ()) -> Adapter:
    """``family``'s offline adapter; MutationSetupError names those of ``plugins`` that have one."""
    declared = family.capability(Mutation)
    if declared is None:
        available = [f.name for f in plugins if f.capability(Mutation) is not None]
        raise MutationSetupError(f"offline mutation is not available for family {family.name!r} "
                                 f"(available: {', '.join(sorted(available))})")
    adapter: Adapter = declared.adapter()
    return adapter


def link(record: Mapping[str, object], original: Task, mutation: Mapping[str, object], *,
         task_id: str | None = None) -> TaskRecord:
    """A mutant task record as built by the family, renamed and linked to its original.
    The id is ``task_id`` or :func:`mutated_id` of the original's id."""
    out = cast(TaskRecord, dict(record))  # one of the family's Outcome.tasks (validated when written)
    out["id"] = task_id or mutated_id(original.id)
    provenance = dict(out.get("provenance", {}))
    provenance["original_id"] = original.id
    provenance["mutation"] = {"original_source_id": original.source_id, **mutation}
    out["provenance"] = provenance
    return out


def task_log(original: Task, *, status: str, mode: str, attempts: int, seconds: float, mutant_id: str | None = None,
             answer_changed: bool | None = None, reason: str | None = None, **extra: Any) -> JSONObject:
    """One ``mutation_log.jsonl`` record for an original task (paper 000, appendix D.1)."""
    return {"kind": "task", "original_id": original.id, "family": original.family, "mode": mode, "status": status,
            "mutant_id": mutant_id, "answer_changed": answer_changed, "attempts": attempts,
            "seconds": round(seconds, 3), "reason": reason, **extra}


# -- the driver ---------------------------------------------------------------------------------

def _family_options(family: Family, manifest: Manifest | None) -> dict[str, Any]:
    """The original build's options (its manifest's), over the family's defaults."""
    options = dict(family.default_options)
    settings = manifest.settings if manifest is not None else None
    built = settings.get("options") if isinstance(settings, dict) else None
    if isinstance(built, dict):
        options.update({k: v for k, v in built.items() if k in options})
    return options


def resolve_hash_seeds(option_sets: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], JSONObject | None]:
    """The options with this mutation run's hash seeds (resolved once, for every family whose
    options have ``check_seeds``; the others unchanged) and the manifest's record (None when
    no family checks determinism). One draw serves all: the most ``repeats`` any family asks
    for; a family with fewer takes a prefix (:func:`hashseeds.of`).

    The check seeds are drawn anew, or pinned by ``EXECBENCH_CHECK_SEEDS``; a pin in the
    original build's options is not inherited: the mutants are new programs, which must not
    be checked under seeds written in the original dataset's manifest."""
    seeded = [options for options in option_sets if hashseeds.OPTION in options]
    if not seeded:
        return list(option_sets), None
    wanted = {"repeats": max(int(options.get("repeats", 1)) for options in seeded), hashseeds.OPTION: ""}
    try:
        resolved, record = hashseeds.resolve(wanted)
    except SourceError as exc:
        raise MutationSetupError(str(exc)) from None
    # (an EXECBENCH_CHECK_SEEDS pin lands in check_seeds: part of the cache key, as in a build)
    extra = {hashseeds.RESOLVED: resolved[hashseeds.RESOLVED], hashseeds.OPTION: resolved[hashseeds.OPTION],
             hashseeds.EXTRA: resolved[hashseeds.EXTRA]}
    return [{**options, **extra} if hashseeds.OPTION in options else options for options in option_sets], record


def yields(records: Iterable[LogRecord]) -> dict[str, int | float | None]:
    """Counts over task log records: originals, mutants, answer_changed, flagged_unchanged,
    dropped_unchanged, failed, and the admitted and changed rates (None without originals)."""
    tasks = [r for r in records if r.get("kind") == "task"]
    status = Counter(r["status"] for r in tasks)
    in_dataset = status["admitted"] + status["flagged"]
    return {
        "originals": len(tasks),
        "mutants": in_dataset,  # written to tasks.jsonl
        "answer_changed": status["admitted"],
        "flagged_unchanged": status["flagged"] + status["dropped"],
        "dropped_unchanged": status["dropped"],
        "failed": status["failed"],
        "admitted_rate": round(in_dataset / len(tasks), 4) if tasks else None,
        "changed_rate": round(status["admitted"] / len(tasks), 4) if tasks else None,
    }


def mutate_dataset(
    dataset: str | Path,
    out: str | Path,
    *,
    settings: OfflineSettings | None = None,
    jobs: int = 2,
    cache: BuildCache | None = None,
    progress: ProgressFn | None = None,
    limit: int | None = None,
    families_filter: list[str] | None = None,
    plugins: Sequence[Family],
) -> JSONObject:
    """Offline (no model) mutation of every task in ``dataset`` into ``out``; returns the manifest.
    ``plugins``: the families' plug-ins (the caller's registry: this engine looks none up by name)."""
    settings = settings or OfflineSettings()
    cache = cache or BuildCache(enabled=False)
    started = time.perf_counter()
    dataset = Path(dataset)
    check = arms_check({f.name: f.arms for f in plugins})  # the families' record check, from the plug-ins handed
    tasks = list(read_tasks(dataset, check))
    if families_filter:
        tasks = [t for t in tasks if t.family in families_filter]
    if not tasks:
        raise MutationSetupError(f"{dataset}: no tasks to mutate")
    originals = [t for t in tasks if "original_id" not in t.provenance]
    if len(originals) != len(tasks):
        raise MutationSetupError(f"{dataset} already holds mutants ({len(tasks) - len(originals)} tasks "
                                 "have provenance.original_id); mutate the original dataset")
    manifest = load_manifest(dataset) if dataset.is_dir() else None
    families: list[tuple[Family, Adapter]] = []
    for family_name in sorted({t.family for t in tasks}):
        plugin = next((f for f in plugins if f.name == family_name), None)
        if plugin is None:
            raise MutationSetupError(f"unknown family {family_name!r}; known: {', '.join(f.name for f in plugins)}")
        families.append((plugin, adapter_for(plugin, plugins)))
    # the hash seeds, once for the whole run (the units of every family build under them)
    option_sets, hash_seeds = resolve_hash_seeds([_family_options(plugin, manifest) for plugin, _ in families])
    checked: Counter[str] = Counter()
    units: list[tuple[Adapter, Context, Unit]] = []
    for (plugin, adapter), options in zip(families, option_sets, strict=True):
        ctx = Context(plugin, options, settings, cache, manifest=manifest, checked=checked)
        for unit in adapter.units([t for t in tasks if t.family == plugin.name], ctx):
            units.append((adapter, ctx, unit))
    if limit is not None:
        units = units[:limit]
    run_settings: JSONObject = {"mode": "offline", **asdict(settings), "original": {
        "path": str(dataset.resolve()), "content_hash": manifest.content_hash if manifest else None,
        "settings": manifest.settings if manifest else None}}
    astlock.install()  # the mutants are parsed in these threads too (astlock)
    counted_from = (cache.hits, cache.misses)  # (the units start before write_dataset does)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = [pool.submit(_safe_mutate, adapter, unit, ctx) for adapter, ctx, unit in units]
        return write_dataset(out, run_settings, (f.result() for f in futures), started=started, cache=cache,
                             mode="offline", units=len(units), progress=progress, hash_seeds=hash_seeds,
                             checked=checked, counted_from=counted_from, check=check)


def mutate_with_teacher(dataset: str | Path, out: str | Path, *, plugins: Sequence[Family],
                        **options: Any) -> JSONObject:
    """Teacher-driven mutation of ``dataset`` by the one family of ``plugins`` in it that offers it
    (its :class:`~execbench.contract.TeacherMutation`); ``options`` go to that family's function."""
    names = sorted({t.family for t in read_tasks(dataset)})
    offering = [f for f in plugins if f.capability(TeacherMutation) is not None]
    chosen = [f for f in offering if f.name in names]
    if len(chosen) != 1:
        raise MutationSetupError(
            f"{dataset}: teacher mutation needs tasks of exactly one of {', '.join(f.name for f in offering)} "
            f"(this dataset has {', '.join(names) or 'no tasks'}); use --offline for the others")
    declared = chosen[0].capability(TeacherMutation)
    assert declared is not None  # (chosen among those offering it)
    result: JSONObject = declared.mutate()(dataset, out, **options)
    return result


def write_dataset(out: str | Path, run_settings: JSONObject, results: Iterable[UnitResult], *,
                  started: float, cache: BuildCache | None, mode: str, units: int,
                  progress: ProgressFn | None = None, extra_yields: Mapping[str, int] | None = None,
                  hash_seeds: JSONObject | None = None, checked: Mapping[str, int] | None = None,
                  counted_from: tuple[int, int] | None = None, check: FamilyCheck | None = None) -> JSONObject:
    """Write unit results (in order) as a dataset directory plus ``mutation_log.jsonl``; ``check``:
    the families' record check every mutant passes (``dataset.arms_check`` of the plug-ins).
    ``hash_seeds``: the run's record (:func:`resolve_hash_seeds`), written as ``settings.hash_seeds``
    with ``cached``: ``checked``, the seeds the cached outcomes were checked under (read at the end).
    ``counted_from``: the cache's (hits, misses) before the units started (default: now)."""
    cache = cache or BuildCache(enabled=False)
    hits, misses = counted_from or (cache.hits, cache.misses)
    records: list[LogRecord] = []
    admitted = failed = done = 0
    out = Path(out)
    settings: JSONObject = {"mutation": run_settings}
    if hash_seeds is not None:
        settings["hash_seeds"] = hash_seeds = dict(hash_seeds)
    with DatasetWriter(out, settings=settings) as writer, _LogWriter(out) as log:
        for result in results:
            done += 1
            for record in result.tasks:
                writer.add(Task.from_json(record, check))
            for rejection in result.rejected:
                writer.reject(**rejection)
            for entry in result.log:
                log.write(entry)
                records.append(entry)
            admitted += len(result.tasks)
            failed += sum(1 for e in result.log if e.get("kind") == "task" and e["status"] == "failed")
            if progress:
                progress(done, units, admitted, failed)
        summary: JSONObject = {**yields(records), **(extra_yields or {})}
        if hash_seeds is not None:  # (the writer holds this dict: filled before it writes the manifest)
            hash_seeds["cached"] = dict(sorted((checked or {}).items()))
        log.close()
        return writer.close(
            candidates=units,
            build_seconds=round(time.perf_counter() - started, 3),
            cache={"hits": cache.hits - hits, "misses": cache.misses - misses},
            mutation={"mode": mode, "yields": summary, "log": LOG},
        )


def _safe_mutate(adapter: Adapter, unit: Unit, ctx: Context) -> UnitResult:
    """An adapter bug on one unit fails that unit's originals, visibly, not the whole run."""
    started = time.perf_counter()
    try:
        return adapter.mutate(unit, ctx)
    except Exception as exc:  # noqa: BLE001 - recorded per original task, with the reason
        reason = f"mutation error: {type(exc).__name__}: {exc}"[:500]
        result = UnitResult()
        for original in unit.originals:
            result.rejected.append({"candidate": original.id, "stage": "mutation", "reason": reason})
            result.log.append(task_log(original, status="failed", mode=ctx.mode, attempts=0,
                                       seconds=time.perf_counter() - started, reason=reason))
        return result


class _LogWriter:
    """``mutation_log.jsonl``, written under a temporary name and renamed when complete."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.final = directory / LOG
        self.partial = directory / f".{LOG}.partial"
        self.fh = open(self.partial, "w", encoding="utf-8")

    def write(self, record: LogRecord) -> None:
        self.fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")

    def close(self) -> None:
        if not self.fh.closed:
            self.fh.close()
            os.replace(self.partial, self.final)

    def __enter__(self) -> "_LogWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.fh.closed:  # an error: leave no half log behind
            self.fh.close()
            self.partial.unlink(missing_ok=True)


def read_log(directory: str | Path) -> list[JSONObject]:
    path = Path(directory) / LOG
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
