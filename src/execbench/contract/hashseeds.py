"""The hash seeds of a build: the key run's fixed seed 0, and check seeds drawn at random per build.

A family that checks determinism (trace, cruxeval, state Python) runs a candidate ``repeats``
times, each under its own ``PYTHONHASHSEED`` (one sandbox per seed), and admits it only when
every run agrees. The runs are:

- the **key run**, hash seed :data:`KEY_SEED` (0) always: the stored answer is what this run
  gives (or all runs, since they agree). Answer keys are therefore reproducible and do not
  depend on the build or the machine; the shipped corpora's pinned content hashes
  (``tests/families/test_shipped_corpora.py``) hold.
- ``repeats - 1`` **check runs**, under seeds drawn at random once per build
  (:func:`draw`: distinct, from 1 to 2**32 - 1, by :mod:`secrets`). With fixed check seeds
  (1, 2 before issue 22) a program could be written so that its set or dict order agrees
  under exactly those seeds and under few others; a program cannot know a build's seeds.

Pinning (to reproduce a rejection): ``--set check_seeds=5,9`` (the build option
:data:`OPTION`, a comma-separated text) or the environment variable :data:`ENV`
(``EXECBENCH_CHECK_SEEDS=5,9``); the option wins over the variable. Pinned seeds are used in
order, the first ``repeats - 1`` of them; they must be distinct, non-zero integers below
2**32. To rerun one check seed alone: ``--set repeats=2 --set check_seeds=9``.

Where the seeds go: :func:`resolve` (called once by :func:`execbench.families.build.build_dataset`)
puts the build's seeds in the options it hands to every batch, as ``options["hash_seeds"]``
(key seed first) — so threads, worker processes and Ray workers all check with the same
seeds, with no global state. The manifest records them (``settings.hash_seeds``: ``key``,
``check``, ``drawn``, and ``cached``: how many cached outcomes were checked under which
seeds). A rejection at the ``determinism`` stage names the seeds it saw differ.

The build cache: a cached outcome stays valid across builds. Its key does not contain
randomly drawn seeds (:func:`cache_options`), so it is served to later builds; it was checked
under the seeds of the build that made it, which the cache entry keeps (``hash_seeds``) and
the later build's manifest counts (``settings.hash_seeds.cached``). Entries made before
issue 22 record none: they were checked under 0, 1, 2. Pinned seeds *are* part of the key,
so a build with pinned seeds re-runs its candidates rather than reading an outcome checked
under other seeds.

Power (issue 33): a program whose answer follows a coin flip of hash order (a set of two
strings) agrees with the key run under one check seed half of the time, so ``c`` check runs
admit it with probability 2**-c: 1 in 4 with the default two. A family gives every
candidate that may see hash order (:func:`execbench.contract.hashorder.may_see_hash_order`)
at least :data:`MIN_CHECKS` (5) check runs, 1 in 32: :func:`extra` holds the seeds of the
runs beyond ``repeats``, drawn with the others (``settings.hash_seeds.extra``) or, when
pinned, the pinned seeds after the first ``repeats - 1`` (pin ``MIN_CHECKS`` seeds to
reproduce a build exactly; fewer pinned seeds mean fewer extra runs).

The mutation engine resolves its own seeds once per mutation run
(``mutation.engine.resolve_hash_seeds``) and records them in the mutated dataset's manifest;
a caller of ``build_candidate`` that passes no seeds at all gets seeds drawn per call by
:func:`of`.
"""

from __future__ import annotations

import os
import secrets
from typing import Any, Mapping

from execbench.sources.errors import SourceError

KEY_SEED = 0  # the run whose result is the stored answer
OPTION = "check_seeds"  # build option: "" = draw at random per build, or "5,9" = pinned
ENV = "EXECBENCH_CHECK_SEEDS"  # the same, from the environment (the option wins)
RESOLVED = "hash_seeds"  # options key set by resolve(): [KEY_SEED, *check seeds]
EXTRA = "hash_seeds_extra"  # options key set by resolve(): the seeds of the extra check runs
MIN_CHECKS = 5  # check runs of a candidate that may see hash order: a coin flip passes 1 time in 32
MAX_SEED = 2**32 - 1  # PYTHONHASHSEED's range is 0..4294967295


def parse(text: str, *, origin: str = OPTION) -> list[int]:
    """``"5, 9"`` → ``[5, 9]``; a :class:`SourceError` for anything but distinct seeds in 1..2**32-1."""
    seeds: list[int] = []
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        try:
            seed = int(part)
        except ValueError:
            raise SourceError(f"{origin}: {part!r} is not an integer hash seed") from None
        if not 0 < seed <= MAX_SEED:
            raise SourceError(f"{origin}: hash seed {seed} is outside 1..{MAX_SEED} (0 is the key run's own seed)")
        if seed in seeds:
            raise SourceError(f"{origin}: hash seed {seed} is given twice")
        seeds.append(seed)
    return seeds


def draw(count: int) -> list[int]:
    """``count`` distinct check seeds from 1..2**32-1, unpredictable (:mod:`secrets`)."""
    return secrets.SystemRandom().sample(range(1, MAX_SEED + 1), max(0, count))


def _pinned(options: Mapping[str, Any]) -> tuple[list[int], str] | None:
    """The pinned check seeds and where they came from, or None (draw at random)."""
    text = str(options.get(OPTION) or "").strip()
    if text:
        return parse(text), f"--set {OPTION}"
    text = os.environ.get(ENV, "").strip()
    if text:
        return parse(text, origin=ENV), ENV
    return None


def _checks(options: Mapping[str, Any], pinned: tuple[list[int], str] | None,
            extra: bool = False) -> list[int]:
    """The check seeds (with ``extra``: followed by those of the extra runs, see the module docs)."""
    needed = max(0, int(options.get("repeats", 1)) - 1)
    if pinned is None:
        return draw(max(needed, MIN_CHECKS) if extra and needed else needed)
    if extra:
        seeds, origin = pinned
        return seeds[:max(needed, MIN_CHECKS)] if len(seeds) >= needed else _checks(options, pinned)
    seeds, origin = pinned
    if len(seeds) < needed:
        raise SourceError(f"{origin}: {len(seeds)} check seed(s) given, repeats={needed + 1} needs {needed} "
                          f"(or set repeats={len(seeds) + 1})")
    return seeds[:needed]


def resolve(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The options a build hands to its batches (with ``hash_seeds``) and the manifest's record.

    An ``EXECBENCH_CHECK_SEEDS`` pin is copied into the options' ``check_seeds``, so that it
    is part of the build-cache key as a ``--set`` pin is."""
    pinned = _pinned(options)
    repeats = max(1, int(options.get("repeats", 1)))
    drawn = [KEY_SEED, *_checks(options, pinned, extra=True)]
    seeds, extras = drawn[:repeats], drawn[repeats:]
    resolved = {**options, RESOLVED: seeds, EXTRA: extras}
    if pinned is not None:
        resolved[OPTION] = ",".join(map(str, pinned[0]))
    record = {"key": KEY_SEED, "check": seeds[1:], "drawn": "random per build" if pinned is None else pinned[1]}
    if extras:
        record["extra"] = extras
    return resolved, record


def of(options: Mapping[str, Any]) -> list[int]:
    """The hash seeds of the runs, key seed first: ``options["hash_seeds"]`` (set by
    :func:`resolve`; its first ``repeats``), else pinned or freshly drawn ones."""
    repeats = max(1, int(options.get("repeats", 1)))
    resolved = options.get(RESOLVED)
    if resolved and len(resolved) >= repeats:
        return list(resolved[:repeats])
    return [KEY_SEED, *_checks({**options, "repeats": repeats}, _pinned(options))]


def extra(options: Mapping[str, Any]) -> list[int]:
    """The seeds of the extra check runs of a candidate that may see hash order (module docs):
    ``options["hash_seeds_extra"]`` (set by :func:`resolve`), else pinned or freshly drawn
    ones; none when the options ask for no check run."""
    repeats = max(1, int(options.get("repeats", 1)))
    if repeats < 2:
        return []
    if EXTRA in options and len(options.get(RESOLVED) or ()) >= repeats:
        return list(options[EXTRA])[: max(0, MIN_CHECKS - (repeats - 1))]
    pinned = _pinned(options)
    if pinned is not None:
        return _checks(options, pinned, extra=True)[repeats - 1:]
    return draw(max(0, MIN_CHECKS - (repeats - 1)))


def cache_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options as the build-cache key sees them: without the resolved seeds, and without
    ``check_seeds`` when it is empty (random), so that a default build's key is the same in
    every build; a pinned ``check_seeds`` stays in the key. ``min_checks`` (issue 33): an
    outcome checked with fewer check runs for hash-order suspects is built again."""
    out = {key: value for key, value in options.items() if key not in (RESOLVED, EXTRA)}
    if not str(out.get(OPTION) or "").strip():
        out.pop(OPTION, None)
    if OPTION in options:  # outcomes checked before issue 33 (no extra runs) are not served
        out["min_checks"] = MIN_CHECKS
    return out
