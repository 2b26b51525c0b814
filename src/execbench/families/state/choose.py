"""Automatic loop and projection choice for Python cases without ``[checkpoint]``.

1. Count run (long input, hash seed 0): a copy of the program counts, for every
   instrumentable loop, its iterations (cumulative over all executions of the statement),
   its exits, and the count at its last exit.
2. Eligible loops: at least 2 iterations (the loop is reached at least twice, so a middle
   checkpoint exists) and an exit after iteration K = iterations // 2 + 1 (the post
   checkpoint is reachable). Ranked by iterations (most first), then by line; the top 3
   go to a snapshot run.
3. Snapshot run: the canonical JSON of each candidate variable of the loop's scope at the
   start of iterations K-1 and K and at the first exit after K. Candidates are the
   variables the scope binds (assignments, loop targets, parameters; not functions,
   classes, imports) that are read in or after the loop ("live").
4. A variable qualifies if it is bound and serialisable at K and at the exit, keeps its
   JSON type, fits in ``max_field_chars`` characters at both points, and changes (between
   iterations K-1 and K, or between K and the exit). Up to ``max_fields`` are taken:
   scalars that are not loop targets first, then small containers, then loop targets,
   each group in order of first binding; the projection lists them in source order. At
   least one chosen field must differ between K and the exit, else the next loop is tried.

The choice, with the ranking it came from, is recorded in each task's provenance.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Generator, Protocol, Sequence

from execbench.contract import Reject
from execbench.families.state import instrument_py
from execbench.families.state.canonical import json_type
from execbench.families.state.jobs import dump, python_job
from execbench.contract.jsontypes import JSONValue
from execbench.families.state.records import AutoChoice, Choice, Results, Settings, Step, TriedLoop
from execbench.sandbox.jobs import Job, JobResult

TOP_LOOPS = 3
RULE = "most iterations; live changing scalars/small containers"


class ChoosableLoop(Protocol):
    """A loop the rule ranks and picks a projection for: Python's :class:`instrument_py.Loop`,
    C++'s :class:`cpp_scan.CppLoop`."""

    @property
    def line(self) -> int: ...

    @property
    def targets(self) -> tuple[str, ...]: ...  # names its header assigns (a projection ranks them last)


def profile_job(profile: str, long: str, settings: Settings) -> Job:
    """The run of the profiling copy ``profile`` on the long input (hash seed 0)."""
    return python_job("profile", "profile.py", profile, long, **settings.profile_limits(),
                      dump_global=instrument_py.PROFILE)


def profiled(result: JobResult | None) -> dict[str, JSONValue]:
    """The dumped counts of a profiling run, or the rejection it is."""
    if result is None:
        raise Reject("execution", "profile run: the run did not happen")
    if result.limit is not None:
        raise Reject("caps", f"profile run: {result.reason()}")
    if not result.ok:
        raise Reject("execution", f"long run: {result.reason()}")
    value, error = dump(result)
    if not isinstance(value, dict):
        raise Reject("execution", f"profile run returned no counts ({error})")
    return value


def _run_profile(profile: str, long: str, settings: Settings) -> Generator[Step, Results, dict[str, JSONValue]]:
    """Run the profiling copy (a step of the case's build, :mod:`.build`); its counts."""
    return profiled((yield {0: [profile_job(profile, long, settings)]})[0].get("profile"))


@lru_cache(maxsize=64)
def _count_program(program: str, loop_line: int) -> str:
    loops = [loop for loop in instrument_py.loops(program) if loop.line == loop_line]
    if not loops:
        raise instrument_py.InstrumentError(f"no for/while loop starts on line {loop_line}")
    return instrument_py.profile_program(program, loops)


def count_job(program: str, long: str, loop_line: int, settings: Settings) -> Job:
    """The run counting the iterations of the loop on ``loop_line`` (:func:`count_of`); the
    counting copy is made once per program (networkx-simplex: one for all 30 cases)."""
    return profile_job(_count_program(program, loop_line), long, settings)


def count_of(result: JobResult | None) -> int:
    """Iterations of the loop over the whole long-input run, from :func:`count_job`'s result."""
    counts = profiled(result).get("counts")
    if isinstance(counts, list) and counts and isinstance(counts[0], (int, float, str)):
        try:
            return int(counts[0])
        except ValueError:
            pass
    raise Reject("execution", "profile run returned no counts")


def count_python(program: str, long: str, loop_line: int, settings: Settings) -> Generator[Step, Results, int]:
    """Iterations of the loop on ``loop_line`` over the whole long-input run."""
    job = count_job(program, long, loop_line, settings)
    return count_of((yield {0: [job]})[0].get("profile"))


def choose_python(program: str, long: str, settings: Settings) -> Generator[Step, Results, Choice]:
    """The loop and projection (see the module docs); two profiling runs."""
    loops = instrument_py.instrumentable(program)
    if not loops:
        raise Reject("instrument", "the program has no instrumentable for/while loop")
    first = yield from _run_profile(instrument_py.profile_program(program, loops), long, settings)
    counts, last_exit = _ints(first.get("counts"), len(loops)), _ints(first.get("last_exit"), len(loops))
    ranking = rank(counts, last_exit, [loop.line for loop in loops])
    if not ranking:
        raise Reject("checkpoint", "no loop iterates at least twice and exits after its middle iteration "
                                   f"(iterations per loop line: {_per_line(loops, counts)})")
    top = ranking[:TOP_LOOPS]
    chosen_loops = [loops[j] for j, _ in top]
    names: dict[int, list[str]] = {}
    snapshots: dict[int, tuple[int, list[str]]] = {}
    for index, (j, k) in enumerate(top):
        bound, live = instrument_py.scope_names(program, loops[j].line)
        names[index] = [n for n in bound if n in live]
        snapshots[index] = (k, names[index])
    profile = instrument_py.profile_program(program, chosen_loops, snapshots,
                                            max_chars=max(4000, settings.max_field_chars))
    snap = (yield from _run_profile(profile, long, settings)).get("snapshots")
    if not isinstance(snap, dict):
        raise Reject("execution", "profile run returned no snapshots")
    tried: list[TriedLoop] = []
    for index, (j, k) in enumerate(top):
        loop = loops[j]
        try:
            fields, why = _pick(loop, names[index], snap, index, settings)
        except (AttributeError, KeyError, TypeError, ValueError, RecursionError):  # the program wrote them
            raise Reject("execution", "profile run returned malformed snapshots") from None
        tried.append({"loop_line": loop.line, "iterations": counts[j], "result": why})
        if fields:
            return auto_choice(loops, counts, ranking, tried, j, k, fields)
    raise Reject("checkpoint", "no loop has a projection of changing, serialisable, small variables",
                 tried=tried)


def auto_choice(loops: Sequence[ChoosableLoop], counts: list[int], ranking: list[tuple[int, int]],
                tried: list[TriedLoop], j: int, k: int, fields: list[str]) -> Choice:
    """The choice of loop ``j`` (inside iteration ``k``) with the projection ``fields``."""
    auto: AutoChoice = {"ranking": [{"loop_line": loops[i].line, "iterations": counts[i]} for i, _ in ranking[:10]],
                        "tried": tried, "rule": RULE}
    return Choice("auto", loops[j].line, fields, k, fields, loop_iterations=counts[j], auto=auto)


def rank(counts: list[int], last_exit: list[int], lines: list[int]) -> list[tuple[int, int]]:
    """Eligible loops as ``(index, K)``, best first (step 2 of the module docs; the C++
    choice uses the same rule)."""
    ranking = []
    for j in range(len(counts)):
        k = counts[j] // 2 + 1
        if counts[j] >= 2 and last_exit[j] >= k:
            ranking.append((j, k))
    ranking.sort(key=lambda item: (-counts[item[0]], lines[item[0]]))
    return ranking


def _ints(value: JSONValue, n: int) -> list[int]:
    """A list of ``n`` counts from a profiling run (the program's process wrote it)."""
    counts = [v for v in value if isinstance(v, int) and not isinstance(v, bool)] if isinstance(value, list) else []
    if not isinstance(value, list) or len(value) != n or len(counts) != n:
        raise Reject("execution", "profile run returned malformed counts")
    return counts


def _per_line(loops: list[instrument_py.Loop], counts: list[int]) -> dict[int, int]:
    return {loop.line: counts[j] for j, loop in enumerate(loops)}


def _pick(loop: ChoosableLoop, names: list[str], snap: Any, index: int, settings: Settings) -> tuple[list[str], str]:
    """The projection of ``loop`` from the snapshot run's ``snap`` (what the program's process
    wrote: a malformed value raises AttributeError, KeyError, TypeError or ValueError)."""

    before = snap.get(f"{index}:before", {})
    inside = snap.get(f"{index}:inside")
    post = snap.get(f"{index}:post")
    if inside is None or post is None:
        return [], "checkpoint not reached in the snapshot run"
    limit = settings.max_field_chars
    groups: dict[int, list[str]] = {0: [], 1: [], 2: []}
    changed_at_post: set[str] = set()
    for name in names:
        a, b = inside.get(name, {}), post.get(name, {})
        if "json" not in a or "json" not in b:
            continue
        if len(a["json"]) > limit or len(b["json"]) > limit:
            continue
        va, vb = json.loads(a["json"]), json.loads(b["json"])
        if json_type(va) != json_type(vb):
            continue
        previous = before.get(name, {}).get("json")
        moves = (previous is not None and previous != a["json"]) or a["json"] != b["json"]
        if not moves:
            continue
        if a["json"] != b["json"]:
            changed_at_post.add(name)
        group = 2 if name in loop.targets else (0 if json_type(va) in ("int", "float", "str", "bool") else 1)
        groups[group].append(name)
    ranked = groups[0] + groups[1] + groups[2]
    chosen = ranked[: settings.max_fields]
    if not chosen:
        return [], "no variable qualifies"
    if not changed_at_post & set(chosen):
        extra = [n for n in ranked if n in changed_at_post]
        if not extra:
            return [], "no qualifying variable differs between the inside and post checkpoints"
        chosen = chosen[:-1] + [extra[0]]
    order = {name: i for i, name in enumerate(names)}
    return sorted(chosen, key=order.__getitem__), "chosen"
