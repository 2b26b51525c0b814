"""Issue 26, a living benchmark: releases chosen from a date window of the package index's JSON
simple API (recorded responses in ``fixtures/index/``, served from 127.0.0.1: no network), one
request per package, a clear error when the index cannot be reached, and the new-tests-only
diff between two sdists built here from files."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from execbench.contract import BuildContext, BuildReport
from execbench.families.repo.preparation import novelty, packages
from execbench.sources import index
from execbench.sources.repo_trees import _safe_unpack

FIXTURES = Path(__file__).parent / "fixtures" / "index"  # trimmed pypi.org responses of 2026-12-01


def page(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_window_selection_against_a_recorded_index_response():
    found = index.releases(page("cachetools"), "cachetools")
    versions = [r.version for r in found]
    assert "4.2.3" not in versions  # yanked: true
    assert versions[-3:] == ["8.0.1", "8.0.2", "7.3.3"]  # upload order: the 7.x branch uploaded after 8.0.2
    assert all(r.filename.endswith(".tar.gz") for r in found)  # wheels are not releases here

    chosen, previous = index.choose(found, index.Window.of("2026-06-01", "2026-12-01"))
    assert (chosen.version, chosen.date, previous.version) == ("8.0.2", "2026-11-18", "7.1.4")
    # the highest version inside, not the last upload; the previous is the last upload before
    chosen, previous = index.choose(found, index.Window.of("2026-11-19", "2026-12-01"))
    assert (chosen.version, previous.version) == ("7.3.3", "8.0.2")
    chosen, _ = index.choose(found, index.Window.of("2021-09-29", "2021-10-01"))
    assert chosen.version == "4.2.4"  # 4.2.3 (2021-09-29) is yanked
    assert index.choose(found, index.Window.of("2026-06-01", "2026-12-01"), "7.1.4")[0] is None  # pinned, outside
    assert index.choose(found, index.Window.of("2026-06-01", ""), "8.0.0")[0].version == "8.0.0"

    more = index.releases(page("more-itertools"), "more-itertools")
    assert "8.11.0" not in [r.version for r in more]  # yanked with a reason string
    assert [r.filename for r in more][:2] == ["more-itertools-8.10.0.tar.gz", "more-itertools-8.12.0.tar.gz"]
    assert index.choose(more, index.Window.of("2021-11-01", "2021-11-20")) == (None, more[0])
    with pytest.raises(index.SourceError, match="not after"):
        index.Window.of("2026-12-01", "2026-06-01")
    with pytest.raises(index.SourceError, match="YYYY-MM-DD"):
        index.Window.of("June 2026", "")


def test_the_previous_release_is_the_last_final_one_before_the_window():
    found = index.releases(page("pyparsing"), "pyparsing")  # alphas, betas and rcs before each final
    assert {"3.0.0rc2", "3.2.0rc1", "3.3.0a1"} <= {r.version for r in found}
    chosen, previous = index.choose(found, index.Window.of("2021-10-23", "2021-11-01"))
    assert (chosen.version, previous.version) == ("3.0.4", "2.4.7")  # not 3.0.0rc2 (2021-10-02)
    chosen, previous = index.choose(found, index.Window.of("2024-10-06", "2024-11-01"))
    assert (chosen.version, previous.version) == ("3.2.0", "3.1.4")  # not 3.2.0rc1 (2024-10-05)
    chosen, previous = index.choose(found, index.Window.of("2025-09-30", "2025-10-01"))
    assert (chosen, previous.version) == (None, "3.2.5")  # 3.3.0a1 (2025-09-29) is neither
    chosen, previous = index.choose(found, index.Window.of("2020-04-06", "2020-04-07"))
    assert (chosen, previous.version, previous.date) == (None, "2.4.7", "2020-04-05")  # 3.0.0a1 came after it
    assert index.choose(found, index.Window.of("2019-12-26", "2020-01-01"))[1].version == "2.4.6"


class _Index(BaseHTTPRequestHandler):
    """The recorded pages under /simple/<name>/; 404 for others; ``html`` mode answers HTML."""

    requests: list[str] = []
    html = False

    def do_GET(self) -> None:  # http.server's name
        type(self).requests.append(self.path)
        name = self.path.strip("/").split("/")[-1]
        if not (FIXTURES / f"{name}.json").is_file():
            self.send_error(404)
            return
        body = b"<html></html>" if self.html else (FIXTURES / f"{name}.json").read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if self.html else index.ACCEPT)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_index(monkeypatch):
    _Index.requests, _Index.html = [], False
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/simple/"
    monkeypatch.setenv("PIP_INDEX_URL", url)
    yield url
    server.shutdown()
    server.server_close()


def test_a_windowed_list_asks_the_index_once_per_package(tmp_path, local_index):
    listing = tmp_path / "list.txt"
    listing.write_text("cachetools\nmore-itertools==11.2.1\nmore-itertools==11.1.0\nno-such-package\n")
    options = {"released_after": "2026-06-01", "released_before": "2026-12-01", "new_tests_only": True}
    context = BuildContext()
    found = list(packages.list_candidates(f"list:{listing}", options, context))
    assert sorted(_Index.requests) == ["/simple/cachetools/", "/simple/more-itertools/",
                                       "/simple/no-such-package/"]  # one per package, whatever its lines
    assert [c.key for c in found] == ["package/cachetools==8.0.2", "package/more-itertools==11.2.1",
                                      "package/more-itertools==11.1.0", "package/no-such-package"]
    release = found[0].payload["release"]
    assert (release["date"], release["upload_time"], release["previous"]["version"]) == (
        "2026-11-18", "2026-11-18T21:18:28Z", "7.1.4")
    assert "no sdist uploaded in [2026-06-01, 2026-12-01)" in found[2].payload["release"]["rejected"]
    assert "not on the package index" in found[3].payload["release"]["rejected"]
    rejected = packages.build_package(found[3].payload["package"], options, None, found[3].payload["release"])
    assert [(r["stage"], r["candidate"]) for r in rejected.rejected] == [("package", "pypi:no-such-package")]
    pinned = context.settings["release_window"]["pinned_list"]
    assert context.files == {packages.PINNED_LIST: pinned}
    assert pinned.splitlines()[1:3] == ["cachetools==8.0.2  # 2026-11-18T21:18:28Z",
                                        "more-itertools==11.2.1  # 2026-10-14T18:50:30Z"]
    assert packages.read_entries(f"list:{_write(tmp_path, pinned)}")[:2] == [("cachetools", "8.0.2"),
                                                                             ("more-itertools", "11.2.1")]
    with pytest.raises(index.SourceError, match="without a version"):
        packages.read_list(f"list:{listing}")  # a bare name needs the window's index lookup


def test_two_windowed_builds_in_one_process_keep_their_own_window(tmp_path, local_index):
    """Issue 36: a build's window lives in its context, not in a module global a later build reads."""
    from execbench import registry
    from execbench.dataset import Manifest

    listing = tmp_path / "list.txt"
    listing.write_text("cachetools\n")
    repo = registry.get("repo")
    first, second, plain = BuildContext(), BuildContext(), BuildContext()
    list(repo.candidates([f"list:{listing}"], {"released_after": "2026-06-01", "released_before": "2026-12-01"}, first))
    list(repo.candidates([f"list:{listing}"], {"released_after": "2020-01-01", "released_before": "2020-02-01"}, second))
    pinned = tmp_path / "pinned.txt"
    pinned.write_text("cachetools==8.0.2\n")
    list(repo.candidates([f"list:{pinned}"], {}, plain))  # no window: nothing about one in its manifest
    assert first.settings["release_window"]["packages"]["cachetools"]["version"] == "8.0.2"
    assert second.settings["release_window"]["released_after"] == "2020-01-01"
    assert "version" not in second.settings["release_window"]["packages"]["cachetools"]
    assert plain.settings == {} and plain.files == {} and plain.extra == {}
    # the family's summary lines come from the manifest it is handed (the CLI knows none of its words)
    manifest = Manifest(content_hash="sha256:0", tasks=0, settings=first.settings,
                        extra={"tasks_by_release": {"cachetools==8.0.2": {"tasks": 3, novelty.STAGE: 2}}})
    summary = repo.capability(BuildReport).summary
    table, note = summary(manifest, tmp_path)
    assert table.rows == (("cachetools", "8.0.2", "2026-11-18", "3", "2", "7.1.4"),)
    assert note.endswith(packages.PINNED_LIST)
    assert summary(Manifest(content_hash="sha256:0", tasks=0, settings=plain.settings), tmp_path) == []


def test_tasks_by_release_are_counted_by_the_family(tmp_path):
    from execbench import registry
    from execbench.contract import Outcome

    release = {"package": "cachetools", "version": "8.0.2"}
    context = BuildContext()
    record_written = registry.get("repo").capability(BuildReport).record_written
    record_written(Outcome(tasks=[{"provenance": {"release": release}}] * 2, rejected=[
        {"candidate": "x", "stage": novelty.STAGE, "reason": "r", "release": "cachetools==8.0.2"},
        {"candidate": "y", "stage": "package", "reason": "r"}]), context)
    assert context.extra == {"tasks_by_release": {"cachetools==8.0.2": {"tasks": 2, novelty.STAGE: 1}}}
    record_written(Outcome(tasks=[{"provenance": {}}]), other := BuildContext())
    assert other.extra == {}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pinned.txt"
    path.write_text(text)
    return path


def test_an_index_that_cannot_be_asked_stops_the_build(tmp_path, local_index, monkeypatch):
    listing = tmp_path / "list.txt"
    listing.write_text("cachetools\n")
    options = {"released_after": "2026-06-01", "released_before": ""}
    _Index.html = True
    with pytest.raises(index.IndexUnavailable, match="does not serve the JSON simple API"):
        list(packages.list_candidates(f"list:{listing}", options))
    closed = local_index.replace("/simple/", "").rsplit(":", 1)[0] + ":9/simple/"  # discard port: nothing listens
    monkeypatch.setenv("PIP_INDEX_URL", closed)
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "execbench.cli", "build", "repo", f"list:{listing}", "-o", str(out),
                             "--set", "released_after=2026-06-01"], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "300"}, timeout=300)
    assert result.returncode == 2
    assert "cannot reach the package index http://127.0.0.1:9/simple/ for cachetools" in result.stderr
    assert not (out / "tasks.jsonl").exists()  # no dataset, not an empty one


OLD_TESTS = '''
from lib import add, mul, f, g

def test_add():
    assert add(1,2)==3

def test_mul():
    assert mul(2, 3) == 6

def test_expected():
    expected = [1, 2]
    assert f() == expected

def test_kept_variable():
    want = {'a': 1}
    assert g() == want

class TestCase:
    def test_method(self):
        self.assertEqual(g()['a'], 'v')
'''

NEW_TESTS = '''
from lib import add, mul, f, g

def test_renamed_add():
    assert add(1, 2) == 3

def test_mul():
    assert mul(2, 4) == 8

def test_expected():
    expected = [1, 2, 3]
    assert f() == expected

def test_kept_variable():
    want = {"a": 1}
    assert g() == want

class TestCase:
    def test_method(self):
        self.assertEqual(g()["a"], "v")

def test_brand_new():
    assert add(2, 2) == 4
'''


def _sdist(tmp_path: Path, version: str, test_text: str) -> Path:
    """An sdist of ``lib`` built here from files, unpacked as execbench unpacks sdists."""
    archive = tmp_path / f"lib-{version}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in {"lib/__init__.py": "", "tests/test_lib.py": test_text,
                           "PKG-INFO": f"Name: lib\nVersion: {version}\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"lib-{version}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return _safe_unpack(archive, tmp_path / f"unpacked-{version}")


def _sdist_of(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    archive = tmp_path / f"{name}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return _safe_unpack(archive, tmp_path / f"unpacked-{name}")


def test_a_root_tests_module_is_found_when_the_sdist_has_no_test_directory(tmp_path):
    """jsonpointer and jsonpatch ship their suite as one root ``tests.py``: the list built
    nothing from them ("no test modules found in the source distribution")."""
    from execbench.sources.repo_configs import RepoConfig
    from execbench.sources.repos import Repo

    def found(name: str, files: dict[str, str]) -> list[str]:
        root = _sdist_of(tmp_path, name, {"PKG-INFO": f"Name: {name}\n", "setup.py": "", **files})
        repo = Repo(f"pypi:{name}==1.0", name, "1.0", root, root, (name,), Path(sys.executable),
                    RepoConfig(name, "1.0"), "")
        return [p.relative_to(root).as_posix() for p in repo.test_files()]

    lib = "def get(doc, ptr):\n    return doc\n"
    tests = "import unittest\nfrom ptr import get\n\nclass T(unittest.TestCase):\n    def test_get(self):\n" \
            "        self.assertEqual(get(1, ''), 1)\n"
    assert found("ptr-1.0", {"ptr.py": lib, "tests.py": tests}) == ["tests.py"]
    assert found("ptr-1.1", {"ptr.py": lib, "test.py": tests, "testing_notes.py": ""}) == ["test.py", "testing_notes.py"]
    # a test directory or test_*.py modules: the usual rule alone (a root helper is not a suite)
    assert found("ptr-1.2", {"ptr.py": lib, "tests.py": tests, "test_ptr.py": tests}) == ["test_ptr.py"]
    assert found("ptr-1.3", {"ptr.py": lib, "tests.py": "", "tests/helpers.py": ""}) == []
    assert found("ptr-1.4", {"ptr.py": lib}) == []
    # the new-tests-only diff reads the root module too (the older release's tests.py)
    root = tmp_path / "unpacked-ptr-1.0" / "ptr-1.0"
    assert root / "tests.py" in novelty.test_side_files(root)
    assert novelty.tree_keys(root)


def _task(source: str, function: str, needle: str) -> dict:
    line = next(i for i, text in enumerate(source.splitlines(), 1) if needle in text)
    return {"id": f"repo/lib-1.1/{function}#masked-assertion",
            "prompt_fields": {"function_file": "tests/test_lib.py", "function": function, "assertion_line": line}}


def test_new_tests_only_keeps_the_assertions_the_older_sdist_does_not_have(tmp_path):
    old_root, new_root = _sdist(tmp_path, "1.0", OLD_TESTS), _sdist(tmp_path, "1.1", NEW_TESTS)
    assert novelty.test_side_files(new_root) == [new_root / "tests" / "test_lib.py"]
    keep = novelty.NewTestsOnly(new_root, novelty.tree_keys(old_root), "1.0")
    tasks = [_task(NEW_TESTS, "test_renamed_add", "add(1, 2)"), _task(NEW_TESTS, "test_mul", "mul(2, 4)"),
             _task(NEW_TESTS, "test_expected", "f() =="), _task(NEW_TESTS, "test_kept_variable", "g() =="),
             _task(NEW_TESTS, "TestCase.test_method", "assertEqual"), _task(NEW_TESTS, "test_brand_new", "add(2, 2)")]
    kept, dropped = keep.split(tasks)
    assert [t["prompt_fields"]["function"] for t in kept] == ["test_mul", "test_expected", "test_brand_new"]
    assert dropped == [("repo/lib-1.1/test_renamed_add#masked-assertion", "existed_before: 1.0"),  # moved, reformatted
                       ("repo/lib-1.1/test_kept_variable#masked-assertion", "existed_before: 1.0"),  # same literal
                       ("repo/lib-1.1/TestCase.test_method#masked-assertion", "existed_before: 1.0")]  # quotes
    # the masked value is part of the key: the variable's literal is inlined
    keys = novelty.assertion_keys(NEW_TESTS)
    assert keys[("test_expected", tasks[2]["prompt_fields"]["assertion_line"])] == "assert f() == [1, 2, 3]"
    unknown = {**tasks[0], "prompt_fields": {**tasks[0]["prompt_fields"], "assertion_line": 1}}
    assert keep.split([unknown])[1][0][1].startswith("not_compared")
    assert novelty.assertion_keys("def test_x(:\n") == {}  # hostile text that does not parse is skipped
