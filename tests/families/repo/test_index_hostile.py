"""Issue 33, principle 7: the package-index client has a total deadline per request and per
build, and every field of every entry it reads is checked (a bad entry is that package's
rejection). Servers run on 127.0.0.1 only, in a thread that stops itself."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from execbench.families.repo.preparation import packages
from execbench.sources import index


@contextmanager
def serving(answer, max_seconds: float = 30.0):
    """A one-thread server on 127.0.0.1: ``answer(conn, path)`` handles each connection.
    It accepts for at most ``max_seconds`` and stops itself (bounded loops only)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()
    seen: list[str] = []

    def loop() -> None:
        ends = time.monotonic() + max_seconds
        while not stop.is_set() and time.monotonic() < ends:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    request = conn.recv(65536).decode("latin-1")
                    path = request.split(" ", 2)[1] if " " in request else ""
                    seen.append(path)
                    answer(conn, path, stop)
                except OSError:
                    pass
        server.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/simple/", seen
    finally:
        stop.set()
        thread.join(10)


def drip(conn, path, stop) -> None:
    """An answer that never ends: a byte every 0.5 s (at most 60 of them), each well within
    the client's per-read timeout."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\n")
    for _ in range(60):
        if stop.wait(0.5):
            return
        conn.sendall(b"X")


def json_pages(pages: dict[str, object]):
    def answer(conn, path, stop) -> None:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if name not in pages:
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        body = json.dumps(pages[name]).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    return answer


def test_a_server_that_sends_a_byte_at_a_time_meets_the_request_deadline():
    with serving(drip) as (url, seen):
        started = time.monotonic()
        with pytest.raises(index.IndexUnavailable, match="in all"):
            index.fetch_project("slowpkg", url, timeout=2.0, deadline=2.0)
        elapsed = time.monotonic() - started
    assert seen == ["/simple/slowpkg/"]
    # each byte came well within the 2 s per-read timeout: only the whole-request deadline ended it
    assert elapsed < 10, elapsed


def test_a_builds_index_time_is_bounded_too():
    with serving(drip) as (url, seen):
        budget = index.Budget(seconds=1.5)
        started = time.monotonic()
        with pytest.raises(index.IndexUnavailable):
            index.fetch_project("slowpkg", url, timeout=30.0, deadline=60.0, budget=budget)
        assert time.monotonic() - started < 10
        with pytest.raises(index.IndexUnavailable, match="are spent"):
            index.fetch_project("other", url, budget=budget)  # no time left: no request at all
    assert seen == ["/simple/slowpkg/"]


def _file(name: str, upload: object, **extra: object) -> dict[str, object]:
    return {"filename": name, "upload-time": upload, "yanked": False, "hashes": {}, "url": name, **extra}


@pytest.mark.parametrize("entry, why", [
    (_file("bad-1.0.tar.gz", "2024-02-30T10:00:00Z"), "is not a date"),
    (_file("bad-1.0.tar.gz", "2024-13-01T10:00:00Z"), "is not a date"),
    (_file("bad-1.0.tar.gz", 20240101), "not an ISO 8601"),
    (_file("bad-1.0.tar.gz", "2024-01-01T10:00:00Z", yanked=[1]), "yanked"),
    ({"filename": ["bad-1.0.tar.gz"], "upload-time": "2024-01-01T10:00:00Z"}, "not a file name"),
    ("bad-1.0.tar.gz", "not an object"),
])
def test_every_field_of_every_entry_is_checked(entry, why):
    page = {"meta": {"api-version": "1.1"}, "name": "bad",
            "files": [_file("bad-0.9.tar.gz", "2023-01-01T10:00:00Z"), entry]}
    with pytest.raises(index.BadIndexEntry, match=why):
        index.releases(page, "bad")


def test_an_impossible_upload_time_is_that_packages_rejection_not_a_stopped_build(tmp_path, monkeypatch):
    good = {"meta": {"api-version": "1.1"}, "name": "good",
            "files": [_file("good-1.0.tar.gz", "2024-03-01T10:00:00Z")]}
    bad = {"meta": {"api-version": "1.1"}, "name": "bad",
           "files": [_file("bad-1.0.tar.gz", "2024-02-30T10:00:00Z")]}
    listing = tmp_path / "list.txt"
    listing.write_text("bad\ngood\n")
    with serving(json_pages({"good": good, "bad": bad})) as (url, seen):
        monkeypatch.setenv("PIP_INDEX_URL", url)
        found = list(packages.list_candidates(f"list:{listing}", {"released_after": "2024-01-01"}))
    releases = {c.payload["release"]["name"]: c.payload["release"] for c in found}
    assert "2024-02-30" in releases["bad"]["rejected"] and "entry 0" in releases["bad"]["rejected"]
    assert releases["good"]["version"] == "1.0"
    outcome = packages.build_package(found[0].payload["package"], {}, lambda *a: None, releases["bad"])
    assert [r["stage"] for r in outcome.rejected] == ["package"] and not outcome.tasks
