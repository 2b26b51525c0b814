"""Trace storage for repo tasks: each admitted task's call records, the sources of the
files they name and its slicing target, stored gzip'd and content-addressed under
``cache_dir()/repos/traces/``. A task's ``provenance.trace_ref`` is the index file's path
relative to the repos cache (:func:`execbench.sources.repos.portable`), so the dataset does
not depend on where the cache lives; :func:`load_trace` reads it back on any machine."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, TypedDict, cast

from execbench.contract.jsontypes import JSONObject, JSONValue
from execbench.dataset.cache import cache_dir
from execbench.families.repo.records.steps import SliceTarget
from execbench.sources import repos
from execbench.sources.repos import Repo

if TYPE_CHECKING:  # the plug-in imports pytest: the parent never loads it
    from execbench.families.repo.records.run_records import CallJson


class StoredTrace(TypedDict):
    """A task's stored trace, read back (:func:`load_trace`)."""

    calls: list[CallJson]  # files relative to the repository root
    sources: dict[str, str]  # relative path -> text
    target: SliceTarget
    nodeid: str
    repo: str  # the repository's spec (portable)


def relative_calls(calls: list[CallJson], root: Path) -> list[CallJson]:
    """Call records with their files relative to the repository root (others unchanged) and
    without run-dependent values: argument, return and exception summaries can hold numbers
    derived from object ids (toolz's ``EqualityHashKey.__hash__``) and the thread id differs
    per process, so two builds of the same sources stored different traces. The stored
    record keeps the control flow the slicer reads (lines, calls, argument names, whether
    the call raised)."""
    out: list[CallJson] = []
    base = root.resolve()
    relative: dict[str, str] = {}  # each file resolved once: a trace names a few files many times
    for call in calls:
        if call["file"] not in relative:
            try:
                relative[call["file"]] = Path(call["file"]).resolve().relative_to(base).as_posix()
            except ValueError:
                relative[call["file"]] = call["file"]
        rel = relative[call["file"]]
        args = call.get("args")
        out.append({**call, "file": rel, "thread": 0,
                    "args": {k: "" for k in sorted(args)} if isinstance(args, dict) else {},
                    "return": None, "exception": "raised" if call.get("exception") else None})
    return out


def _store_json(payload: JSONValue | list[CallJson] | _TraceIndex) -> str:
    """Content-addressed, gzip'd JSON under ``cache_dir()/repos/traces/``; returns its path
    relative to the repos cache (``traces/ab/<sha256>.json.gz``)."""
    blob = json.dumps(payload, sort_keys=True).encode()
    digest = hashlib.sha256(blob).hexdigest()
    path = cache_dir() / "repos" / "traces" / f"{digest[:2]}" / f"{digest}.json.gz"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with gzip.open(tmp, "wb", compresslevel=5) as fh:
            fh.write(blob)
        os.replace(tmp, path)
    return repos.portable(path)


class _TraceIndex(TypedDict):
    """What a task's ``trace_ref`` names: the stored calls and sources by reference."""

    calls_ref: str
    source_refs: dict[str, str]
    target: SliceTarget
    nodeid: str
    repo: str


class TraceStore:
    """Stores each test's call records once and each source file once, however many tasks
    share them; a task's ``trace_ref`` names a small index (see :func:`load_trace`)."""

    def __init__(self) -> None:
        self._calls: dict[str, str] = {}
        self._sources: dict[tuple[str, int, int], str] = {}
        self.memo: dict[str, tuple[list[CallJson], dict[str, str]]] = {}  # nodeid → (calls, sources)

    def calls_and_sources(self, repo: Repo, nodeid: str, calls: list[CallJson],
                          known: Iterable[tuple[str, str]]) -> tuple[list[CallJson], dict[str, str]]:
        """A test's call records (files relative to the repo root) and the text of every file
        they name: ``known`` (rel, text) pairs first (the served test modules), else the file
        itself when it lies inside the repository (trace file names are hostile), else ""."""
        if nodeid not in self.memo:
            rel_calls = relative_calls(calls, repo.root)
            texts: dict[str, str] = {}
            for rel, known_text in known:
                texts.setdefault(rel, known_text)
            sources: dict[str, str] = {}
            for call in rel_calls:
                f = call["file"]
                if f not in sources:
                    path = repo.root / f
                    text = texts.get(f)
                    readable = path.is_file() and repos.inside(path, repo.root)
                    sources[f] = text if text is not None else (path.read_text(encoding="utf-8") if readable else "")
            self.memo[nodeid] = (rel_calls, sources)
        return self.memo[nodeid]

    def put(self, nodeid: str, calls: list[CallJson], sources: dict[str, str], target: SliceTarget,
            repo: str) -> str:
        if nodeid not in self._calls:
            self._calls[nodeid] = _store_json(calls)
        refs = {}
        for rel, text in sources.items():
            key = (rel, len(text), hash(text))
            if key not in self._sources:
                self._sources[key] = _store_json(text)
            refs[rel] = self._sources[key]
        return _store_json({"calls_ref": self._calls[nodeid], "source_refs": refs, "target": target,
                            "nodeid": nodeid, "repo": repo})


def _load_json(path: str) -> JSONValue:
    with gzip.open(repos.from_portable(path), "rb") as fh:
        return json.loads(fh.read())


def load_trace(ref: str) -> StoredTrace:
    """A stored per-test trace (calls' files and the sources' keys are relative to the repo
    root). The files are this cache's own writing (:meth:`TraceStore.put`), read as such."""
    data = cast(JSONObject, _load_json(ref))
    if "calls_ref" in data:
        data["calls"] = _load_json(str(data.pop("calls_ref")))
        refs = cast(dict[str, str], data.pop("source_refs"))
        data["sources"] = {rel: _load_json(path) for rel, path in refs.items()}
    return cast(StoredTrace, data)
