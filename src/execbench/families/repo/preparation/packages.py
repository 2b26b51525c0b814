"""Package lists as a repo source: ``execbench build repo list:FILE``.

FILE holds one ``name==version`` per line (``#`` starts a comment; blank lines are
skipped). Each package is one build candidate: the worker that builds it downloads the
sdist, prepares its venv and builds its test modules as ``pypi:name==version`` would be
built, all in the sandbox. A package that cannot be downloaded, installed or collected is
a rejection (stage ``package``, with the reason), never a failed build, so a list of 500
releases yields a dataset from the ones that work.

Caps keep one large package from dominating (0 = no cap):

- ``max_modules_per_package``: the first N test modules (in path order) are built;
- ``max_tasks_per_package``: the first N tasks (in module order) are kept.

What a cap leaves out is recorded as one rejection (stage ``cap``). A ``pypi:`` or local
source with a package cap set is built here too, as one candidate (``build.candidates``).

**Release windows** (issue 26, ``docs/repo-family.md``, "A living benchmark"): a line may
be a bare package name, and ``--set released_after=YYYY-MM-DD`` / ``released_before=``
bound the sdist upload time. Then the driver asks the package index once per package
(:mod:`execbench.sources.index`) and each candidate's payload names the release chosen
(the highest version uploaded in the window; for a pinned line, that version if it was)
and the release uploaded last before the window. Every task is stamped with
``provenance.release_date`` and ``provenance.release``. A package without a release in
the window is a ``package`` rejection saying so; an index that cannot be reached stops
the build. ``new_tests_only`` keeps the assertions the older release did not have
(:mod:`.novelty`). What a listing chose goes into the build's context (the manifest's
``settings.release_window``, and :data:`PINNED_LIST` beside the dataset).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator, Required, TypedDict

from packaging.utils import canonicalize_name

from execbench.contract import BuildContext, Candidate, Outcome
from execbench.contract.jsontypes import JSONObject, as_object
from execbench.families.repo.preparation import novelty
from execbench.families.repo.records.steps import RepoOptions
from execbench.sources import index, repos
from execbench.sources.errors import SourceError

PREFIX = "list:"
_LINE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(==(?P<version>[A-Za-z0-9.+!_-]+))?$")


class PackageRelease(TypedDict, total=False):
    """A package's release in a windowed list's candidate payload (and the manifest's
    ``release_window``): the release chosen and the one before it, or why there is none."""

    name: Required[str]
    rejected: str  # why no release qualifies (then no other key)
    version: str  # the chosen release's index.Release.record(), in its key order
    sdist: str
    upload_time: str
    date: str
    previous: dict[str, str] | None  # index.Release.record() of the release before the window


#: Beside a dataset built from a release window: the exact versions chosen, as a ``list:`` file
#: (the text is ``settings.release_window.pinned_list``; issue 26, docs/repo-family.md).
PINNED_LIST = "packages.pinned.txt"

BuildFile = Callable[[repos.Repo, str, str, RepoOptions], Outcome]


def is_list(source: str) -> bool:
    return source.startswith(PREFIX)


def read_entries(source: str) -> list[tuple[str, str | None]]:
    """(name, version or None for a bare name) of ``list:FILE``, in file order, without repeats."""
    path = Path(source[len(PREFIX):]).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{source}: cannot read the package list: {exc}") from None
    entries: list[tuple[str, str | None]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if not match:
            raise SourceError(f"{path}, line {number}: expected name==version or a bare name, got {line!r}")
        entry = (match["name"], match["version"])
        if entry not in entries:
            entries.append(entry)
    if not entries:
        raise SourceError(f"{path}: the package list is empty")
    return entries


def read_list(source: str) -> list[str]:
    """The ``pypi:name==version`` specs of a list of pinned versions, in file order."""
    entries = read_entries(source)
    bare = [name for name, version in entries if version is None]
    if bare:
        raise SourceError(f"{source}: {', '.join(bare[:5])} without a version: a bare name needs the package "
                          "index (released_after / released_before)")
    return [f"pypi:{name}=={version}" for name, version in entries]


def windowed(options: RepoOptions | None) -> bool:
    if options is None:
        return False
    return bool(str(options.get("released_after") or "").strip() or str(options.get("released_before") or "").strip()
                or options.get("new_tests_only"))


def list_candidates(source: str, options: RepoOptions | None = None,
                    context: BuildContext | None = None) -> Iterator[Candidate]:
    """One candidate per package; with a window or a bare name, the index chooses the release, and
    ``context`` (this build's state) gets the manifest's ``settings.release_window`` (the window,
    the index asked, per list line its release record or why it has none, and ``pinned_list``)
    and the :data:`PINNED_LIST` file."""
    entries = read_entries(source)
    if not windowed(options) and all(version for _, version in entries):
        for name, version in entries:
            yield Candidate(key=f"package/{name}=={version}", payload={"package": f"pypi:{name}=={version}"})
        return
    after = str(options.get("released_after") or "") if options else ""
    before = str(options.get("released_before") or "") if options else ""
    window = index.Window.of(after, before)
    if options and options.get("new_tests_only") and window.after is None:
        raise SourceError("new_tests_only compares with the release before the window: set released_after")
    url = index.index_url()
    chosen: dict[str, PackageRelease] = {}
    selected: dict[str, Any] = {"released_after": after, "released_before": before, "index": url, "packages": chosen}
    seen: set[str] = set()
    pages: dict[str, list[index.Release] | SourceError] = {}  # one request per package
    budget = index.Budget()  # the whole listing's time with the index (each request has its own deadline too)
    for name, version in entries:
        line = f"{name}=={version}" if version else name
        release = _release(name, version, window, url, pages, budget)
        chosen[line] = release
        spec = f"pypi:{name}=={release['version']}" if "version" in release else f"pypi:{line}"
        if spec not in seen:  # a bare name and a pin may choose the same release
            seen.add(spec)
            yield Candidate(key=f"package/{spec[len('pypi:'):]}", payload={"package": spec, "release": release})
    if context is not None:  # (a second windowed list of one build replaces the first's, as before)
        context.settings["release_window"] = {**selected, "pinned_list": pinned_list(selected)}
        context.files[PINNED_LIST] = context.settings["release_window"]["pinned_list"]


def _release(name: str, version: str | None, window: index.Window, url: str,
             pages: dict[str, list[index.Release] | SourceError], budget: index.Budget | None = None
             ) -> PackageRelease:
    """The payload's release record: chosen and previous releases, or why there is none (a
    project the index does not know, a malformed entry on its page). :class:`index.IndexUnavailable`
    propagates (the build stops: the index is unreachable, too slow, or not the JSON API)."""
    key = canonicalize_name(name)
    if key not in pages:
        try:
            pages[key] = index.releases(index.fetch_project(name, url, budget=budget), name)
        except (index.ProjectNotFound, index.BadIndexEntry) as exc:
            pages[key] = exc
    found = pages[key]
    if isinstance(found, SourceError):
        return {"name": name, "rejected": str(found)}
    chosen, previous = index.choose(found, window, version)
    if chosen is None:
        what = f"{name}=={version}" if version else name
        return {"name": name, "rejected": f"{what}: no sdist uploaded in {window.describe()} "
                                          f"(not yanked; {len(found)} releases with an sdist on the index)"}
    record = chosen.record()  # its keys in record()'s order: the payload is part of the build-cache key
    return {"name": name, "version": record["version"], "sdist": record["sdist"], "upload_time": record["upload_time"],
            "date": record["date"], "previous": previous.record() if previous else None}


def pinned_list(selected: dict[str, Any]) -> str:
    """A ``list:`` file of the versions a windowed build chose: it rebuilds the same dataset
    (with the same ``--set`` window options)."""
    lines = [f"# chosen from {selected.get('index')} for released_after={selected.get('released_after')!r}, "
             f"released_before={selected.get('released_before')!r}"]
    for release in selected.get("packages", {}).values():
        if "version" not in release:
            lines.append(f"# {release['rejected']}")
        elif (pin := f"{release['name']}=={release['version']}  # {release['upload_time']}") not in lines:
            lines.append(pin)
    return "\n".join(lines) + "\n"


def build_package(spec: str, options: RepoOptions, build_file: BuildFile,
                  release: PackageRelease | None = None) -> Outcome:
    """Every test module of one package (within the caps), or one rejection saying why not.
    ``release`` (a windowed list's payload) stamps the tasks and, with ``new_tests_only``,
    drops the assertions the previous release had."""
    outcome = Outcome()
    if release is not None and "rejected" in release:
        outcome.reject(spec, "package", release["rejected"])
        return outcome
    try:  # repos.prepared: any failure of the package's preparation is a SourceError
        repo, test_files = repos.prepared(spec, full=bool(options.get("full")))
        keep = _new_tests_filter(repo.root, release, options)
    except (SourceError, OSError) as exc:  # the unpacked sdist's path: by its name, not this machine's
        outcome.reject(repos.spec_label(spec), "package", repos.portable_text(str(exc))[:2000])
        return outcome
    if not test_files:
        outcome.reject(spec, "package", "no test modules found in the source distribution")
        return outcome
    module_cap = int(options.get("max_modules_per_package") or 0)
    task_cap = int(options.get("max_tasks_per_package") or 0)
    chosen = test_files[:module_cap] if module_cap else test_files
    skipped_modules = len(test_files) - len(chosen)
    skipped_tasks = 0
    for path in chosen:
        rel = path.relative_to(repo.root).as_posix()
        if task_cap and len(outcome.tasks) >= task_cap:
            skipped_modules += 1
            continue
        try:
            part = build_file(repo, rel, path.read_text(encoding="utf-8"), options)
        except (SourceError, OSError, UnicodeDecodeError) as exc:
            outcome.reject(f"{spec}/{rel}", "package",
                           f"module not built: {repos.portable_text(str(exc), repo.root)}"[:2000])
            continue
        if release is not None:
            _stamp(part.tasks, release)
        if keep is not None and release is not None:  # a filter comes with a release
            part.tasks, dropped = keep.split(part.tasks)
            for task_id, reason in dropped:
                outcome.reject(task_id, novelty.STAGE, reason, release=f"{release['name']}=={release['version']}")
        room = task_cap - len(outcome.tasks) if task_cap else len(part.tasks)
        outcome.tasks += part.tasks[:room]
        skipped_tasks += len(part.tasks) - min(room, len(part.tasks))
        outcome.rejected += part.rejected
    if skipped_modules or skipped_tasks:
        outcome.reject(spec, "cap", f"package caps (max_modules_per_package={module_cap}, "
                                    f"max_tasks_per_package={task_cap}): {skipped_modules} test modules "
                                    f"and {skipped_tasks} tasks left out")
    return outcome


def _stamp(tasks: list[JSONObject], release: PackageRelease) -> None:
    """Every task carries its release: ``provenance.release_date`` (the report's
    contamination view reads it, for any family) and ``provenance.release``."""
    previous = release.get("previous")
    for task in tasks:
        provenance = as_object(task["provenance"])
        provenance["release_date"] = release["date"]
        provenance["release"] = {
            "package": release["name"], "version": release["version"], "upload_time": release["upload_time"],
            "previous_version": previous["version"] if previous else None}


def _new_tests_filter(root: Path, release: PackageRelease | None,
                      options: RepoOptions) -> novelty.NewTestsOnly | None:
    """The new-tests-only filter of a package (None: off, or no release before the window,
    so every assertion is new). The previous sdist is fetched and unpacked as any sdist is."""
    before = release.get("previous") if release is not None else None
    if not options.get("new_tests_only") or release is None or not before:
        return None
    previous = before["version"]
    old_root, _ = repos.fetch_sdist(release["name"], previous)
    return novelty.NewTestsOnly(root, novelty.tree_keys(old_root), previous)
