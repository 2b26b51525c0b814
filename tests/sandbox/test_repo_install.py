"""Repository code never runs outside the sandbox (issue 14): pip's download and install
of a checkout run sandboxed, test dependencies are PEP 508 requirements, symlinks in a tree
are not followed out of it."""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

import pytest

from execbench.sources import repo_configs, repos, venvs
from execbench.sources.errors import SourceError


@pytest.mark.parametrize("dep", ["pytest==9.0.3", "hypothesis[cli]>=6.1", "attrs; python_version > '3.8'"])
def test_pep508_requirements_pass(dep):
    assert repo_configs.requirement_text(dep)


@pytest.mark.parametrize("dep", ["--report=/tmp/x.json", "-r /root/.netrc", "--index-url=http://evil",
                                 "--target=/tmp/x", "foo @ https://example.org/foo.whl", "./local/dir",
                                 "/abs/path", "", "foo; ==="])
def test_anything_else_is_refused_with_a_reason(dep):
    with pytest.raises(SourceError, match="refused"):
        repo_configs.requirement_text(dep)


def test_configuration_files_linked_out_of_the_tree_are_not_read(tmp_path):
    secret = tmp_path / "secret.toml"
    secret.write_text('[dependency-groups]\ntest = ["leaked-secret-name"]\n')
    root = tmp_path / "tree"
    (root / "requirements").mkdir(parents=True)
    os.symlink(secret, root / "pyproject.toml")
    os.symlink(secret, root / "requirements" / "test.txt")
    (tmp_path / "PKG-INFO").write_text("Version: secret-version\n")
    os.symlink(tmp_path / "PKG-INFO", root / "PKG-INFO")
    assert repo_configs.infer_config("demo", "1", root).test_deps == (repo_configs.PYTEST,)
    assert repos._local_version(root).startswith("local-")


def test_hostile_test_dependency_groups_never_reach_pip(tmp_path):
    """A dependency group's entry that is not a requirement by name (an option, a URL, a
    path) is dropped when the declarations are read (sources/testdeps.py); the rest stands."""
    (tmp_path / "pyproject.toml").write_text(
        '[dependency-groups]\ntest = ["--report=/tmp/x.json", "-r /root/.netrc", "x @ https://e.invalid/x.whl", '
        '"./local", "hypothesis>=6"]\n')
    config = repo_configs.infer_config("demo", "1", tmp_path)
    assert config.test_deps[1:] == ("hypothesis>=6",) and config.test_deps[0].startswith("pytest")
    assert not any(s in " ".join(config.test_deps) for s in ("--report", "netrc", "https:", "./local"))


@pytest.fixture
def hostile_checkout(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    pwned = tmp_path / "pwned"
    root = tmp_path / "hostile_checkout"
    (root / "hostile_pkg").mkdir(parents=True)
    (root / "hostile_pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    os.symlink(secret, root / "hostile_pkg" / "leak.py")          # a link out of the tree
    (root / "tests").mkdir()
    (root / "tests" / "test_f.py").write_text("from hostile_pkg import f\n\ndef test_f():\n    assert f() == 1\n")
    os.symlink(secret, root / "tests" / "test_leak.py")
    (root / "setup.py").write_text(textwrap.dedent(f"""
        import os, setuptools
        obs = {{"uid": os.getuid(), "env": sorted(os.environ)}}
        for key, act in (("write", lambda: open({str(pwned)!r}, "w").write("x")),
                         ("shadow", lambda: open("/etc/shadow").read()),
                         ("secret", lambda: open({str(secret)!r}).read())):
            try:
                act(); obs[key] = "ESCAPED"
            except OSError as e:
                obs[key] = type(e).__name__
        here = os.path.dirname(os.path.abspath(__file__))
        open(os.path.join(here, "hostile_pkg", "observed.py"), "w").write("OBS = " + repr(obs))
        setuptools.setup(name="hostile-pkg", version="0.1", packages=["hostile_pkg"])
    """))
    return root, secret, pwned


@pytest.mark.slow
def test_checkout_setup_script_runs_sandboxed(hostile_checkout, cache_dir, monkeypatch):
    root, secret, pwned = hostile_checkout
    monkeypatch.setenv("EXECBENCH_TEST_SECRET", "s3cret")
    repo = repos.prepare(str(root))
    site = next(Path(repo.python).parent.parent.glob("lib/python*/site-packages"))
    obs = ast.literal_eval((site / "hostile_pkg" / "observed.py").read_text().split("=", 1)[1])
    assert obs["uid"] != os.getuid() or os.getuid() != 0
    assert "ESCAPED" not in (obs["write"], obs["shadow"], obs["secret"]), obs
    assert "EXECBENCH_TEST_SECRET" not in obs["env"]
    assert not pwned.exists()
    # the build wrote into a copy: the checkout has no build/, *.egg-info or observed.py
    assert sorted(p.name for p in root.iterdir()) == ["hostile_pkg", "setup.py", "tests"]
    assert not (root / "hostile_pkg" / "observed.py").exists()
    # the venv belongs to the builder again, read-only for others
    assert all(os.lstat(p).st_uid == os.getuid() for p in site.rglob("*"))
    # links out of the tree are not library or test files
    assert [p.name for p in repo.library_files()] == ["__init__.py"]
    assert [p.name for p in repo.test_files()] == ["test_f.py"]


def test_inside_never_leaves_the_tree(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    os.symlink(tmp_path, root / "up")
    os.symlink("a.py", root / "b.py")
    assert repos.inside(root / "a.py", root) and repos.inside(root / "b.py", root)
    # what a hostile trace could name: absolute paths, '..', links out
    for path in (root / "/etc/passwd", root / "../tree2/x.py", root / "up" / "secret"):
        assert not repos.inside(path, root)


def test_pip_settings_reach_the_sandbox_without_credentials(monkeypatch, tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://user:s3cret@index.example/simple")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    venvs._pip_settings.cache_clear()
    try:
        env, local = venvs._pip_settings()
    finally:
        venvs._pip_settings.cache_clear()
    env = dict(env)
    assert "s3cret" not in repr(env) and env["PIP_FIND_LINKS"].split()[-1] == str(wheels)
    assert str(wheels) in local
