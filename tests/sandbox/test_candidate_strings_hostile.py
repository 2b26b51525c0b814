"""Issue 33, principles 1, 2 and 8, attacked as a hostile checkout would: a string from a
candidate never becomes a host path, what one checkout's install wrote never reaches
another's venv, a venv is checked against its distributions' RECORD files, one candidate
never stops a build, and pytest's rootdir is always the repository's root.

The tests without a sandboxed install are fast; the ones that install are marked slow."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from execbench import registry
from execbench.dataset import read_rejected, read_tasks
from execbench.families.build import build_dataset
from execbench.families.repo import build
from execbench.families.repo.verification.runner import pytest_config, rootdir_args
from execbench.sandbox._cleanup import remove_tree
from execbench.sources import repo_paths, repo_trees, repos, venvs
from execbench.sources.errors import SourceError

# the fixtures' single assertion is small: no difficulty gate, one pinned check seed
PINNED = {**build.DEFAULT_OPTIONS, "check_seeds": "1", "threshold": 0.0, "assertion_threshold": 0.0,
          "trivial_lines": 0}


def checkout(base: Path, name: str, *, value: int = 81, setup: str | None = None, pkg_info: str | None = None,
             extra: dict[str, str] | None = None) -> Path:
    """A small checkout: ``name/__init__.py`` whose ``f()`` sums the first 9 odd numbers in a
    loop of calls (``value - 81`` added), and a test asserting ``f() == value``."""
    root = base / name
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text(textwrap.dedent(f"""\
        def step(total, i):
            odd = 2 * i + 1
            return total + odd


        def f():
            total = {value - 81}
            for i in range(9):
                total = step(total, i)
            return total
    """))
    (root / "tests").mkdir()
    (root / "tests" / "test_f.py").write_text(
        f"from {name} import f\n\n\ndef test_f():\n    x = f()\n    assert x == {value}\n")
    if setup is not None:
        (root / "setup.py").write_text(setup)
    if pkg_info is not None:
        (root / "PKG-INFO").write_text(pkg_info)
    for rel, text in (extra or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


# --- principle 2: no host path from a candidate's string ------------------------------------

@pytest.mark.parametrize("name", ["..", ".", "a/b", "../x", "a b", "-a", "a\x00b", "x" * 201, ""])
def test_package_names_that_are_not_pep508_are_refused(name):
    with pytest.raises(SourceError, match="PEP 508"):
        repo_paths.checked_name(name)


@pytest.mark.parametrize("version", ["0/../../x/y", "..", "1.0/..", "1.0 ", "latest", "1" * 101, ""])
def test_versions_that_are_not_pep440_are_refused(version):
    with pytest.raises(SourceError, match="PEP 440"):
        repo_paths.checked_version(version)


def test_a_pypi_spec_with_a_traversing_version_is_refused_before_any_path_is_made(cache_dir):
    with pytest.raises(SourceError, match="PEP 440"):
        repos.parse_spec("pypi:toolz==..")
    with pytest.raises(SourceError):
        repos.fetch_sdist("toolz", "..")
    assert not cache_dir.exists() or not any(cache_dir.rglob("*"))


def test_every_created_path_is_checked_to_lie_inside_its_root(tmp_path):
    root = tmp_path / "repos"
    (root / "venv").mkdir(parents=True)
    assert repo_paths.within(root, "venv", "x-1.0-py3.11-abc") == root / "venv" / "x-1.0-py3.11-abc"
    for parts in [("venv", "x-0/../../../escape"), ("venv", ".."), ("..", "x"), ("venv", ""), ("a\x00b",)]:
        with pytest.raises(SourceError):
            repo_paths.within(root, *parts)
    (root / "link").symlink_to(tmp_path)  # a symlinked component leading out
    with pytest.raises(SourceError, match="leaves"):
        repo_paths.within(root, "link", "x")


def test_a_traversing_pkg_info_version_names_no_directory(tmp_path):
    root = checkout(tmp_path, "lib", pkg_info="Metadata-Version: 2.1\nName: lib\nVersion: 0/../../escape/x\n")
    version = repos._local_version(root)
    assert version.startswith("local-") and "/" not in version
    good = checkout(tmp_path / "g", "lib", pkg_info="Metadata-Version: 2.1\nName: lib\nVersion: 1.0-post1\n")
    assert repos._local_version(good) == "1.0.post1"  # normalised PEP 440
    assert repo_paths.local_name("my lib/..") == "my-lib" and repo_paths.local_name("..") == "local"


def test_a_checkout_with_a_1100_level_chain_is_its_rejection_and_the_build_goes_on(tmp_path, cache_dir,
                                                                                    monkeypatch):
    """The tree itself holds the chain: refused by the bounded content walk, before pathlib's
    recursive globs (RecursionError) or an install could see it."""
    monkeypatch.setenv(repo_paths.LOCAL_ROOT_ENV, str(tmp_path))
    deep = checkout(tmp_path, "deeplib")
    here = Path.cwd()
    os.chdir(deep)
    try:
        for _ in range(1100):
            os.mkdir("d")
            os.chdir("d")
        os.chdir(here)
        with pytest.raises(SourceError, match="deeper than"):
            repos.prepared(str(deep))
        found = list(build.candidates([str(deep)], PINNED))
        assert [c.payload.get("unprepared") for c in found] == ["local:deeplib"]
        outcome = build.build_candidate(found[0], PINNED)
        assert [(r["candidate"], r["stage"], r["reason"]) for r in outcome.rejected] == [
            ("local:deeplib", "package", "deeplib: directories nested deeper than 64 levels")]
    finally:
        os.chdir(here)
        remove_tree(str(deep / "d"))  # pytest's own clean-up of tmp_path recurses


# --- principle 1: content keys, and a venv checked against RECORD -------------------------------

def test_the_content_key_covers_every_file_not_the_path_or_the_declared_version(tmp_path):
    one = checkout(tmp_path / "a", "lib", pkg_info="Version: 1.0\n", extra={"lib/data.txt": "1\n"})
    two = checkout(tmp_path / "b", "lib", pkg_info="Version: 1.0\n", extra={"lib/data.txt": "1\n"})
    assert repo_trees.content_hash(one) == repo_trees.content_hash(two)  # the same content anywhere
    before = repo_trees.content_hash(one)
    for rel, text in [("lib/data.txt", "2\n"), (".git/config", "[core]\n"), ("zz.pth", "import os\n"),
                      ("build/lib/lib/__init__.py", "x = 1\n")]:
        (one / rel).parent.mkdir(parents=True, exist_ok=True)
        (one / rel).write_text(text)
        assert repo_trees.content_hash(one) != before, rel
        before = repo_trees.content_hash(one)
    (one / "run.sh").write_text("#!/bin/sh\n")
    before = repo_trees.content_hash(one)
    (one / "run.sh").chmod(0o755)
    assert repo_trees.content_hash(one) != before


def _record_line(venv: Path, rel: str) -> str:
    digest = hashlib.sha256((venv / rel).read_bytes()).digest()
    return f"{rel},sha256={base64.urlsafe_b64encode(digest).rstrip(b'=').decode()},{(venv / rel).stat().st_size}"


@pytest.fixture
def bare_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "okpkg").mkdir()
    (site / "okpkg" / "__init__.py").write_text("X = 1\n")
    info = site / "okpkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: okpkg\nVersion: 1.0\n")
    lines = [_record_line(site, "okpkg/__init__.py"), _record_line(site, "okpkg-1.0.dist-info/METADATA"),
             "okpkg-1.0.dist-info/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return venv, site


def test_a_venv_whose_files_match_record_passes(bare_venv):
    venv, _ = bare_venv
    venvs.verify_venv(venv)


@pytest.mark.parametrize("attack", ["stray_pth", "stray_module", "stray_script", "changed_file", "link"])
def test_what_no_distribution_installed_is_refused(bare_venv, attack):
    venv, site = bare_venv
    if attack == "stray_pth":
        (site / "zz_evil.pth").write_text("import sys; sys.path.insert(0, '/x')\n")
    elif attack == "stray_module":
        (site / "sitecustomize.py").write_text("import builtins\n")
    elif attack == "stray_script":
        (venv / "bin" / "pytest").write_text("#!/bin/sh\n")
    elif attack == "changed_file":
        (site / "okpkg" / "__init__.py").write_text("X = 1081\n")
    else:
        (site / "okpkg" / "__init__.py").unlink()
        (site / "okpkg" / "__init__.py").symlink_to("/etc/hostname")
    with pytest.raises(SourceError, match="will not use"):
        venvs.verify_venv(venv)


# --- principle 8: pytest's rootdir, configuration and messages -----------------------------------

def test_pytests_rootdir_is_the_repository_root_and_its_config_its_own(tmp_path):
    bare = checkout(tmp_path / "a", "lib")
    target = bare / "tests" / "test_f.py"
    assert pytest_config(bare, target) is None
    assert rootdir_args(bare, target) == [f"--rootdir={bare}", f"--confcutdir={bare}", "-c", os.devnull]
    (tmp_path / "a" / "pytest.ini").write_text("[pytest]\naddopts = -x\n")  # above the root: never used
    assert pytest_config(bare, target) is None
    (bare / "pyproject.toml").write_text("[project]\nname = 'lib'\n")  # no pytest table: not a config
    assert pytest_config(bare, target) is None
    (bare / "setup.cfg").write_text("[tool:pytest]\nmarkers = slow\n")
    assert pytest_config(bare, target) == bare / "setup.cfg"
    (bare / "tests" / "tox.ini").write_text("[pytest]\n")  # nearer the test module: pytest's own order
    assert pytest_config(bare, target) == bare / "tests" / "tox.ini"
    (bare / "tests" / "tox.ini").unlink()
    (bare / "tests" / "pytest.ini").symlink_to(tmp_path / "a" / "pytest.ini")  # linked out: not read
    assert pytest_config(bare, target) == bare / "setup.cfg"


def test_a_checkout_that_fails_to_prepare_is_named_without_its_path(tmp_path, monkeypatch):
    monkeypatch.setenv(repo_paths.LOCAL_ROOT_ENV, str(tmp_path))
    root = tmp_path / "nopkg"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_x.py").write_text("def test_x():\n    assert 1 == 1\n")
    with pytest.raises(SourceError) as caught:
        repos.prepared(str(root))  # no importable package: find_packages names the tree
    assert "cannot find the importable package" in str(caught.value) and str(tmp_path) not in str(caught.value)


def test_messages_name_no_cache_interpreter_or_home_path(cache_dir):
    venv = repo_paths.repos_dir() / "venv" / "lib-1.0-py3.11-0123456789ab"
    text = (f"E  {venv}/lib/python3.11/site-packages/_pytest/python.py:12 in {sys.base_prefix}/lib/os.py, "
            f"{repo_paths.cache_dir()}/build-cache.sqlite, {Path.home()}/notes")
    out = repo_paths.portable_text(text)
    assert "<venv>/lib/python3.11/site-packages/_pytest/python.py:12" in out
    for path in (str(cache_dir), sys.base_prefix, str(Path.home())):
        assert path not in out


# --- installs (slow): the attacks end to end ------------------------------------------------------

HOOK = """\
import sys


class Hook:
    def find_spec(self, name, path=None, target=None):
        if name != "pthlib":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            real = module.f
            module.f = lambda: real() + 1000
        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, Hook())
"""
HOOK_SETUP = f"""\
import setuptools
open("zz_hook.py", "w").write({HOOK!r})
open("zz_hook.pth", "w").write("import zz_hook\\n")
setuptools.setup(name="pthlib", version="1.0", packages=["pthlib"], py_modules=["zz_hook"],
                 data_files=[("lib/python{{py}}/site-packages", ["zz_hook.pth"])])
"""


@pytest.mark.slow
def test_a_pth_one_checkout_installed_does_not_change_what_a_later_honest_checkout_records(tmp_path, cache_dir):
    """The hostile checkout installs (through RECORD, so its own venv passes the check) a .pth
    whose import hook wraps the library's ``f`` as the source tree's module is imported: its
    own test sees 1081. An honest checkout later at the same path, declaring the same
    version, gets a venv of its own (keyed by content) and records 81."""
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    base = tmp_path / "work"
    hostile = checkout(base, "pthlib", pkg_info="Version: 1.0\n", setup=HOOK_SETUP.format(py=py))
    first = repos.prepare(str(hostile))
    venv = first.python.parent.parent
    assert (venv / "lib" / f"python{py}" / "site-packages" / "zz_hook.pth").is_file(), "the attack did not run"
    forged = build.build_test_file(first, "tests/test_f.py", (hostile / "tests/test_f.py").read_text(), PINNED)
    # the hook reaches the hostile checkout's own run: f() is 1081 there, its assertion fails
    assert not forged.tasks and [r["reason"].split(":")[0] for r in forged.rejected] == ["failed in call"], \
        forged.rejected
    honest_setup = "import setuptools\nsetuptools.setup(name='pthlib', version='1.0', packages=['pthlib'])\n"
    for path in sorted(hostile.rglob("*"), reverse=True):
        path.unlink() if not path.is_dir() else path.rmdir()
    hostile.rmdir()
    honest = checkout(base, "pthlib", pkg_info="Version: 1.0\n", setup=honest_setup)
    second = repos.prepare(str(honest))
    assert second.python != first.python and second.version == first.version
    out = tmp_path / "ds"
    build_dataset(registry.get("repo"), [str(honest)], out, options=PINNED, jobs=1)
    answers = {t.answer for t in read_tasks(out)}
    assert answers == {"81"}, (answers, list(read_rejected(out)))


@pytest.mark.slow
def test_a_stray_pth_an_install_leaves_is_the_packages_rejection(tmp_path, cache_dir):
    setup = textwrap.dedent("""\
        import os, sys, setuptools, sysconfig
        site = sysconfig.get_paths()["purelib"]
        if os.access(site, os.W_OK):
            open(os.path.join(site, "zz_stray.pth"), "w").write("import os\\n")
        setuptools.setup(name="straylib", version="1.0", packages=["straylib"])
    """)
    root = checkout(tmp_path, "straylib", setup=setup)
    with pytest.raises(SourceError, match="not installed by any distribution.*zz_stray.pth"):
        repos.prepared(str(root))
    assert not any((repo_paths.repos_dir() / "venv").iterdir())  # removed, never reused


@pytest.mark.slow
def test_a_1100_level_chain_an_install_leaves_and_a_traversing_version_stop_no_build(tmp_path, cache_dir,
                                                                                      monkeypatch):
    """local: builds: the checkout whose install leaves a 1,100-level chain in the venv is its
    own rejection; the one whose PKG-INFO says ``Version: 0/../../escape/x`` builds, its venv
    inside the cache, nothing created outside."""
    deep_setup = textwrap.dedent("""\
        import os, sys, setuptools
        venv = sys.prefix
        deep = os.path.join(venv, "deep")
        if os.access(venv, os.W_OK) and not os.path.lexists(deep):
            here = os.getcwd()
            os.mkdir(deep)
            os.chdir(deep)
            for _ in range(1100):
                os.mkdir("d")
                os.chdir("d")
            os.chdir(here)
        setuptools.setup(name="deepinstall", version="1.0", packages=["deepinstall"])
    """)
    work = tmp_path / "work"
    monkeypatch.setenv(repo_paths.LOCAL_ROOT_ENV, str(work))
    deep = checkout(work, "deepinstall", setup=deep_setup)
    traversing = checkout(work, "travlib", pkg_info="Version: 0/../../../escape/x\n")
    out = tmp_path / "ds"
    manifest = build_dataset(registry.get("repo"), [str(deep), str(traversing)], out, options=PINNED, jobs=1)
    rejected = list(read_rejected(out))
    mine = [r for r in rejected if r["stage"] == "package"]
    assert len(mine) == 1 and "deeper than" in mine[0]["reason"], rejected
    assert mine[0]["candidate"] == "local:deepinstall" and str(tmp_path) not in json.dumps(rejected)
    tasks = list(read_tasks(out))
    assert manifest["tasks"] == len(tasks) >= 1 and {t.answer for t in tasks} == {"81"}
    assert all(t.prompt_fields["version"].startswith("local-") for t in tasks)
    assert not any(p.name == "escape" for p in tmp_path.rglob("escape"))
    venvs = [p.name for p in (repo_paths.repos_dir() / "venv").iterdir() if not p.name.endswith(".complete")]
    assert len(venvs) == 1 and venvs[0].startswith("travlib-local-")
