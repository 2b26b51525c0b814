"""Release dates from the package index: the JSON simple API (PEP 691, with PEP 700's
``upload-time`` per file), asked once per package per build.

The index is the one pip is configured with (``pip config list`` / ``PIP_INDEX_URL``,
default ``https://pypi.org/simple/``): the same place ``pip download`` fetches the sdist
from. A release's date is its **sdist's** upload time (the file a repo build unpacks);
yanked files are skipped, and so are versions without an sdist. A response is parsed
field by field with a size bound (it comes over the network); an index that cannot be
reached or answers something else than the JSON API is an :class:`IndexUnavailable`
(the build stops with that message: a silent empty build would look like "no release").
A project the index does not know (HTTP 404) is :class:`ProjectNotFound`, a rejection of
that package only.

Window selection (:func:`choose`): the highest version whose sdist was uploaded in
``[released_after, released_before)`` (UTC days), and the *previous* release: the last
final one (no pre- or dev release; yanked files are never releases here) uploaded before
the window (by upload time, not version: maintenance branches upload out of version
order, cachetools 7.3.3 after 8.0.2), which new-tests-only mode compares against. A
pre-release is not "what users had": pyparsing 3.2.0rc1 came eight days before 3.2.0, and
comparing with it would call every test the final release shares with it old.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from execbench.jsontypes import JSONObject, as_list
from execbench.sources.errors import SourceError

DEFAULT_INDEX = "https://pypi.org/simple/"
ACCEPT = "application/vnd.pypi.simple.v1+json"
TIMEOUT_SECONDS = 30.0  # per read (connect, each recv)
REQUEST_DEADLINE_SECONDS = 120.0  # a whole request: connect, headers, body (a byte every 10 s never ends it)
BUILD_DEADLINE_SECONDS = 1800.0  # every request of one listing together
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # the largest projects' file lists are tens of MB
_SDIST_SUFFIXES = (".tar.gz", ".zip")


class IndexUnavailable(SourceError):
    """The index could not be asked (network, timeout, not the JSON simple API)."""


class ProjectNotFound(SourceError):
    """The index does not know the project (HTTP 404)."""


@dataclass(frozen=True)
class Release:
    """One release with an sdist that is not yanked: its version and the sdist's upload time (UTC)."""

    version: str
    filename: str
    uploaded: dt.datetime

    @property
    def date(self) -> str:
        return self.uploaded.date().isoformat()

    def record(self) -> dict[str, str]:
        return {"version": self.version, "sdist": self.filename,
                "upload_time": self.uploaded.strftime("%Y-%m-%dT%H:%M:%SZ"), "date": self.date}


def index_url() -> str:
    """The index pip is configured with (``index-url`` as ``pip config list`` reports it,
    ``PIP_INDEX_URL`` included; a URL with credentials is skipped), else PyPI's."""
    from execbench.sources.venvs import _pip_settings  # the settings the sandboxed pip gets

    url = os.environ.get("PIP_INDEX_URL", "").strip() or dict(_pip_settings()[0]).get("PIP_INDEX_URL", "").strip()
    return (url.split()[0] if url else DEFAULT_INDEX).rstrip("/") + "/"


def project_url(index: str, name: str) -> str:
    return f"{index.rstrip('/')}/{canonicalize_name(name)}/"


@dataclass
class Budget:
    """The index time one build may spend (:data:`BUILD_DEADLINE_SECONDS`): each request
    gets at most what is left of it."""

    seconds: float = BUILD_DEADLINE_SECONDS
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)


def fetch_project(name: str, index: str | None = None, timeout: float = TIMEOUT_SECONDS,
                  deadline: float = REQUEST_DEADLINE_SECONDS, budget: Budget | None = None) -> JSONObject:
    """The index's JSON page of ``name`` (one request). ``timeout`` bounds each read,
    ``deadline`` the whole request (and ``budget``, when given, the whole build): past it the
    request's sockets are shut down and the index is :class:`IndexUnavailable`."""
    index = index or index_url()
    url = project_url(index, name)
    if not url.startswith(("https://", "http://")):
        raise IndexUnavailable(f"package index {index!r}: release dates need an HTTP(S) index with the JSON "
                               "simple API (PEP 691); set PIP_INDEX_URL")
    if budget is not None:
        if budget.left() <= 0:
            raise IndexUnavailable(f"package index {index}: the build's {budget.seconds:g} s for the index "
                                   f"are spent (before {name})")
        deadline = min(deadline, budget.left())
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "execbench"})
    try:
        kind, body = _within_deadline(request, min(timeout, deadline), deadline)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise ProjectNotFound(f"{name}: not on the package index {index}") from None
        raise IndexUnavailable(f"package index {index} answered HTTP {exc.code} for {name}") from None
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise IndexUnavailable(f"cannot reach the package index {index} for {name} "
                               f"(timeout {timeout:g} s per read, {deadline:g} s in all): {reason}") from None
    if len(body) > MAX_RESPONSE_BYTES:
        raise IndexUnavailable(f"package index {index}: the page of {name} is over {MAX_RESPONSE_BYTES} bytes")
    if ACCEPT not in kind and "json" not in kind:
        raise IndexUnavailable(f"package index {index} does not serve the JSON simple API "
                               f"(PEP 691) for {name}: Content-Type {kind!r}")
    try:
        page = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise IndexUnavailable(f"package index {index}: the page of {name} is not JSON: {exc}") from None
    if not isinstance(page, dict) or not isinstance(page.get("files"), list):
        raise IndexUnavailable(f"package index {index}: the page of {name} has no file list")
    return page


def _tracked(http_class: Any, sockets: list[socket.socket]) -> Any:
    class Tracked(http_class):
        def connect(self) -> None:
            super().connect()
            sockets.append(self.sock)
    return Tracked


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, sockets: list[socket.socket]) -> None:
        super().__init__()
        self.sockets = sockets

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(_tracked(http_class, self.sockets), req, **kwargs)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, sockets: list[socket.socket]) -> None:
        super().__init__()
        self.sockets = sockets

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        return super().do_open(_tracked(http_class, self.sockets), req, **kwargs)


def _within_deadline(request: urllib.request.Request, timeout: float, deadline: float) -> tuple[str, bytes]:
    """(Content-Type, body) of ``request``, read on a helper thread; if the whole exchange
    (redirects included) is not over within ``deadline`` seconds, every socket it opened is
    shut down, which ends the helper's blocked read, and a TimeoutError is raised."""
    sockets: list[socket.socket] = []
    opener = urllib.request.build_opener(_HTTP(sockets), _HTTPS(sockets))
    result: dict[str, Any] = {}

    def fetch() -> None:
        try:
            with opener.open(request, timeout=timeout) as response:  # http(s) only, checked by the caller
                kind = response.headers.get("Content-Type", "")
                chunks, size = [], 0
                while size <= MAX_RESPONSE_BYTES and (chunk := response.read(1 << 16)):
                    chunks.append(chunk)
                    size += len(chunk)
                result["value"] = (kind, b"".join(chunks))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            result["error"] = exc

    helper = threading.Thread(target=fetch, name="execbench-index", daemon=True)
    helper.start()
    helper.join(max(deadline, 0.0))
    if helper.is_alive():
        for sock in list(sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        helper.join(5.0)
        raise TimeoutError(f"no complete answer within {deadline:g} s")
    if "error" in result:
        raise result["error"]
    kind, body = result["value"]
    return str(kind), body


class BadIndexEntry(SourceError):
    """An entry of a project's page that is not what PEP 691/700 say (an impossible
    ``upload-time`` such as Feb 30, a non-string file name, a ``yanked`` of another type):
    that package's rejection."""


def _upload_time(value: Any) -> dt.datetime | None:
    """PEP 700's ``upload-time``: ISO 8601 in UTC, ``Z`` suffix, optional fraction; None when
    absent; a :class:`BadIndexEntry` when present but not a real moment (``2024-02-30``)."""
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z", value):
        raise BadIndexEntry(f"upload-time {str(value)[:40]!r} is not an ISO 8601 UTC time")
    try:
        return dt.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise BadIndexEntry(f"upload-time {value!r} is not a date") from None


def sdist_version(filename: str, name: str) -> str | None:
    """The version in an sdist's file name (``name-version.tar.gz``; legacy names keep
    hyphens and case), or None when the name is not this project's sdist."""
    stem = next((filename[: -len(s)] for s in _SDIST_SUFFIXES if filename.endswith(s)), None)
    if stem is None or "-" not in stem:
        return None
    project, _, version = stem.rpartition("-")
    if canonicalize_name(project) != canonicalize_name(name):
        return None
    try:
        return str(Version(version))
    except InvalidVersion:
        return None


def releases(page: JSONObject, name: str) -> list[Release]:
    """Every non-yanked sdist of ``page``, one per version (the earliest upload), oldest first.
    Every field of every entry is checked: an entry that is not an object, a file name that
    is not a string (or over 300 characters), a ``yanked`` that is neither a boolean nor a
    string, or a present ``upload-time`` that is not a real UTC time is a
    :class:`BadIndexEntry` naming the entry (that package's rejection)."""
    found: dict[str, Release] = {}
    for number, entry in enumerate(as_list(page.get("files"))):
        try:
            release = _release_of(entry, name)
        except BadIndexEntry as exc:
            raise BadIndexEntry(f"{name}: the package index's file entry {number} is malformed: {exc}") from None
        if release is not None and (release.version not in found or release.uploaded < found[release.version].uploaded):
            found[release.version] = release
    return sorted(found.values(), key=lambda r: (r.uploaded, Version(r.version)))


def _release_of(entry: Any, name: str) -> Release | None:
    """The release an entry of the page is (None: yanked, not this project's sdist, no upload time)."""
    if not isinstance(entry, dict):
        raise BadIndexEntry("not an object")
    filename, yanked = entry.get("filename"), entry.get("yanked")
    if not isinstance(filename, str) or not 0 < len(filename) < 300:
        raise BadIndexEntry(f"filename {str(filename)[:40]!r} is not a file name")
    if yanked is not None and not isinstance(yanked, (bool, str)):
        raise BadIndexEntry(f"yanked {str(yanked)[:40]!r} is neither a boolean nor a reason")
    uploaded = _upload_time(entry.get("upload-time"))
    if yanked not in (None, False):
        return None  # a yanked file has ``yanked: true`` or a reason string
    version = sdist_version(filename, name)
    if version is None or uploaded is None:
        return None
    return Release(version, filename, uploaded)


def parse_day(text: str, what: str) -> dt.datetime:
    """``YYYY-MM-DD`` as midnight UTC."""
    try:
        return dt.datetime.strptime(text.strip(), "%Y-%m-%d").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        raise SourceError(f"{what}={text!r}: expected a date YYYY-MM-DD") from None


@dataclass(frozen=True)
class Window:
    """``[after, before)`` in UTC; an empty bound is open."""

    after: dt.datetime | None
    before: dt.datetime | None

    @classmethod
    def of(cls, released_after: str, released_before: str) -> "Window":
        after = parse_day(released_after, "released_after") if released_after.strip() else None
        before = parse_day(released_before, "released_before") if released_before.strip() else None
        if after and before and before <= after:
            raise SourceError(f"released_before={released_before} is not after released_after={released_after}")
        return cls(after, before)

    def __contains__(self, moment: dt.datetime) -> bool:
        return (self.after is None or moment >= self.after) and (self.before is None or moment < self.before)

    def describe(self) -> str:
        return (f"[{self.after.date() if self.after else '…'}, "
                f"{self.before.date() if self.before else '…'})")


def choose(found: list[Release], window: Window, version: str | None = None
           ) -> tuple[Release | None, Release | None]:
    """(chosen, previous): the highest final version uploaded in the window (or
    ``version``, if its sdist was), and the final release uploaded last before the window
    (None if none; pre- and dev releases are not previous releases)."""
    inside = [r for r in found if r.uploaded in window]
    if version is not None:
        inside = [r for r in inside if Version(r.version) == Version(version)]
    else:  # as pip: a pre-release only when pinned
        inside = [r for r in inside if not Version(r.version).is_prerelease]
    chosen = max(inside, key=lambda r: Version(r.version), default=None)
    before = [r for r in found if window.after is not None and r.uploaded < window.after
              and not Version(r.version).is_prerelease]
    previous = max(before, key=lambda r: r.uploaded, default=None)
    return chosen, previous
