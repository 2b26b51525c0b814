"""Real repositories with their test suites: a local checkout or a PyPI sdist, plus an
isolated virtual environment to run the tests in.

``pypi:NAME==VERSION`` fetches the sdist with ``pip download --no-binary NAME --no-deps``
(only NAME from source), unpacks it under ``cache_dir()/repos/src/`` and creates a venv
under ``cache_dir()/repos/venv/`` holding pytest, the package's runtime dependencies and its
test dependencies. Both are cached and reused across builds (keyed by name, version, the
dependency list and the Python version; a local checkout's venv by the hash of every file of
its tree, :func:`content_hash`), so a build is offline after the first fetch. A venv is
checked against its distributions' RECORD files before it is used (:func:`verify_venv`).

Trust model: no code of a repository or package runs outside ``execbench.sandbox``. pip
(``download`` of the sdist, which prepares its metadata, and ``install`` of the package,
the checkout and the test dependencies, which runs setup scripts and build backends) runs
in the sandbox: read-confined, as a fresh uid, writing only its work dir and the venv, with
network limited to TCP connections to port 443 (the package index over HTTPS) and the
builder's pip settings minus credentials (local wheel dirs and indexes readable). The parent
only creates the empty venv (``python -m venv``), unpacks archives (no links out of the
tree) and afterwards takes ownership of the venv back. A local checkout is copied into the
sandbox's work dir before it is built, so builds never write ``build/`` or ``*.egg-info``
into the tree. Test dependencies must be PEP 508 requirements by name (no options, URLs or
paths). Symlinks in a tree are never followed out of it (hashing, test and library files).

The code that is traced is the code the model can read: tests run with the unpacked source
tree first on ``PYTHONPATH`` (the package installed in the venv only provides metadata and
dependencies), and libraries with optional C extensions run pure Python
(``YARL_NO_EXTENSIONS=1`` for yarl; the source tree has no compiled modules anyway).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from packaging.version import InvalidVersion, Version

from execbench.sandbox._cleanup import remove_tree
from execbench.sources.errors import SourceError
from execbench.sources.repo_configs import DEFAULT_BY_NAME as DEFAULT_BY_NAME  # read through this module by the family
from execbench.sources.repo_configs import DEFAULT_CORPUS, RepoConfig, config_for
from execbench.sources.repo_paths import (_locked, checked_name, checked_version, from_portable, local_name, portable,
                                          portable_text, repos_dir, within)
from execbench.sources.repo_trees import (_safe_unpack, bytecode_tag, compile_library, content_hash, find_packages,
                                         remove_bytecode, tree_hash)
from execbench.sources.venvs import _is_marked, _pip, _venv_marker, ensure_venv, venv_dir

_SPEC = re.compile(r"^pypi:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")


def library_files(root: Path, import_root: Path, packages: tuple[str, ...]) -> list[Path]:
    """Absolute paths of a library's own modules, ``packages`` under ``import_root`` (test
    directories excluded; never a symlink leading out of the tree ``root``)."""
    out: list[Path] = []
    for package in packages:
        base = import_root / package
        if base.is_dir():
            for path in sorted(base.rglob("*.py")):
                rel = path.relative_to(import_root).parts
                if not any(p in ("tests", "test", "testing") for p in rel[:-1]):
                    out.append(path)
        elif (import_root / f"{package}.py").is_file():
            out.append(import_root / f"{package}.py")
    return [p for p in out if inside(p, root)]


@dataclass(frozen=True)
class Repo:
    """A prepared repository: source tree, venv, and what to trace."""

    spec: str  # "pypi:NAME==VERSION" or an absolute local path
    name: str
    version: str
    root: Path  # the source tree the model may browse
    import_root: Path  # directory put first on PYTHONPATH
    packages: tuple[str, ...]  # top-level import names of the library
    python: Path  # the venv's interpreter
    config: RepoConfig
    tree_sha256: str  # hash of every .py file under root (local checkouts change)
    sdist_sha256: str | None = None
    content_sha256: str | None = None  # a local checkout: hash of every file (content_hash)

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"

    def library_files(self) -> list[Path]:
        """Absolute paths of the library's own modules (:func:`library_files`; listed once per
        tree content: every test job and task asks)."""
        if not self.tree_sha256:   # a repository looked up, not prepared: its tree is not hashed
            return library_files(self.root, self.import_root, self.packages)
        return list(_library_files_of(self.root, self.import_root, self.packages, self.tree_sha256))

    def test_files(self) -> list[Path]:
        """Test modules to build from: the configured subset or every test_*.py/*_test.py;
        without those and without a test directory, the root's ``test*.py`` modules
        (jsonpointer and jsonpatch ship their suite as one root ``tests.py``)."""
        if self.config.test_modules:
            files = [self.root / m for m in self.config.test_modules]
            missing = [str(f) for f in files if not f.is_file()]
            if missing:
                raise SourceError(f"{self.spec}: configured test modules not found: {', '.join(missing)}")
        else:
            files = sorted(p for p in self.root.rglob("*.py")
                           if re.match(r"^(test_.*|.*_test)\.py$", p.name)
                           and not any(part.startswith(".") or part in ("build", "dist", "docs", "doc")
                                       for part in p.relative_to(self.root).parts[:-1]))
            if not files and not any((self.root / d).is_dir() for d in ("tests", "test", "testing")):
                files = sorted(p for p in self.root.glob("test*.py") if p.is_file())
        files = [f for f in files if inside(f, self.root)]
        rels = [f.relative_to(self.root).as_posix() for f in files]
        return [f for f, rel in zip(files, rels) if not any(re.search(x, rel) for x in self.config.exclude)]

    def run_env(self) -> dict[str, str]:
        return {"PYTHONDONTWRITEBYTECODE": "1", **self.config.env}


@functools.lru_cache(maxsize=16)
def _library_files_of(root: Path, import_root: Path, packages: tuple[str, ...], tree_sha256: str) -> tuple[Path, ...]:
    """:func:`library_files`, cached; ``tree_sha256`` (every .py file of the tree) keys it on
    the content too, so an edited local checkout is listed again."""
    return tuple(library_files(root, import_root, packages))


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (following symlinks) stays inside ``root``."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


# --- specs -------------------------------------------------------------------------

def expand_specs(specs: list[str], full: bool = False) -> list[str]:
    """``default`` → the seven pinned libraries; anything else is kept."""
    out: list[str] = []
    for spec in specs:
        if spec == "default":
            out += [f"pypi:{c.name}=={c.version}" for c in DEFAULT_CORPUS]
        else:
            out.append(spec)
    return out


def parse_spec(spec: str) -> tuple[str, str | None, Path | None]:
    """(name, version, local path): version is None for a local path. A package's name and
    version must be a PEP 508 name and a PEP 440 version; a local checkout's name (its
    directory's) is mapped to one safe path component (:func:`local_name`)."""
    match = _SPEC.match(spec)
    if match:
        return checked_name(match["name"], spec), checked_version(match["version"], spec), None
    if spec.startswith("pypi:"):
        raise SourceError(f"{spec!r}: expected pypi:NAME==VERSION")
    path = (from_portable(spec) if spec.startswith("local:") else Path(spec).expanduser()).resolve()
    if not path.is_dir():
        raise SourceError(f"{spec!r} is neither pypi:NAME==VERSION nor a directory")
    return local_name(path.name), None, path


# --- strings from a candidate never become host paths (issue 33, principle 2) ----------------

def prepared(spec: str, *, full: bool = False) -> tuple["Repo", list[Path]]:
    """The one place a repository candidate is prepared for a build: :func:`prepare` and its
    test modules. Whatever goes wrong (a hostile tree, a crashed walk, a bug a candidate
    found) is a SourceError naming the candidate, its message free of this machine's paths
    (:func:`portable_text`): the candidate's rejection, never a stopped build."""
    try:
        repo = prepare(spec, full=full)
        return repo, repo.test_files()
    except SourceError as exc:
        raise SourceError(portable_text(str(exc), _local_path(spec))) from None
    except Exception as exc:  # noqa: BLE001 - one candidate never stops a build
        raise SourceError(f"cannot prepare {spec_label(spec)}: {type(exc).__name__}: "
                          f"{portable_text(str(exc), _local_path(spec))[:1500]}") from None


def _local_path(spec: str) -> Path | None:
    """The checkout a local spec names (its paths are told relative to it), else None."""
    try:
        return parse_spec(spec)[2]
    except (SourceError, OSError, ValueError):
        return None


def spec_label(spec: str) -> str:
    """A spec as a rejection names it: ``pypi:`` specs as they are, a local path as
    :func:`portable` stores it (``local:REL``)."""
    if spec.startswith(("pypi:", "local:", "list:")) or not os.path.isabs(spec):
        return spec
    return portable(spec)


# --- fetching and unpacking ----------------------------------------------------------

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_sdist(name: str, version: str) -> tuple[Path, str]:
    """The unpacked source tree of NAME==VERSION (downloaded once) and the sdist's sha256."""
    name, version = checked_name(name), checked_version(version)
    base = within(repos_dir(), "src", f"{name.lower()}-{version}")
    done = base / ".complete"
    with _locked(within(repos_dir(), "locks", f"src-{name.lower()}-{version}.lock")):
        if not done.is_file():
            if base.exists():
                remove_tree(str(base))
            with tempfile.TemporaryDirectory(prefix="execbench-sdist-") as tmp:
                # pip prepares the sdist's metadata (runs its setup script): sandboxed
                got = _pip(sys.executable, "download", "--no-binary", name, "--no-deps",
                           f"{name}=={version}", "-d", "dl", collect_sdist=True).files
                data = got.get("sdist.tar.gz", got.get("sdist.zip"))
                original = got.get("sdist.name", b"").decode("utf-8", "replace")
                if data is None or not re.fullmatch(r"[A-Za-z0-9._+-]{1,200}", original):
                    raise SourceError(f"pypi:{name}=={version}: no sdist came back")
                archive = within(Path(tmp), original)
                archive.write_bytes(data)
                digest = _sha256(archive)
                tree = _safe_unpack(archive, base / "unpacked")
                (base / "tree").write_text(str(tree.relative_to(base)), encoding="utf-8")
                (base / "sdist.sha256").write_text(f"{digest}  {archive.name}\n", encoding="utf-8")
            done.write_text("ok\n")
    tree = base / (base / "tree").read_text(encoding="utf-8").strip()
    digest = (base / "sdist.sha256").read_text(encoding="utf-8").split()[0]
    return tree, digest


def declared_license(name: str, version: str) -> str | None:
    """The license NAME==VERSION declares in its own package metadata, for dataset cards (issue
    34): the cached sdist's ``PKG-INFO`` (as :func:`fetch_sdist` unpacked it), else the installed
    distribution of that version; ``License-Expression``, else a one-line ``License``, else its
    ``License ::`` classifiers. None when neither is here or it declares none."""
    import email.message
    import email.parser
    import importlib.metadata

    base = repos_dir() / "src" / f"{name.lower()}-{version}"
    headers: email.message.Message | None = None
    if (base / ".complete").is_file() and (base / "tree").is_file():
        pkg_info = base / (base / "tree").read_text(encoding="utf-8").strip() / "PKG-INFO"
        if pkg_info.is_file() and inside(pkg_info, base):
            with open(pkg_info, encoding="utf-8", errors="replace") as fh:
                headers = email.parser.Parser().parsestr(fh.read(200_000), headersonly=True)
    if headers is None:
        try:
            if importlib.metadata.version(name) == version:
                headers = cast(email.message.Message, importlib.metadata.metadata(name))  # one at run time
        except importlib.metadata.PackageNotFoundError:
            return None
    if headers is None:
        return None
    expression = (headers.get("License-Expression") or "").strip()
    text = (headers.get("License") or "").strip()
    classifiers = [c.split("::")[-1].strip() for c in headers.get_all("Classifier") or [] if c.startswith("License ::")]
    found = expression or (text if text and "\n" not in text and len(text) <= 80 and text != "UNKNOWN" else "") \
        or ", ".join(classifiers)
    return found[:200] or None


def existing(spec: str) -> Repo | None:
    """The repository :func:`prepare` would give for ``spec`` when its tree and its complete
    venv are still in the cache, else None: nothing is fetched, installed or run (the grader
    asks this before it runs an answer in the package's environment)."""
    try:
        name, version, local = parse_spec(spec)
    except SourceError:
        return None
    sdist = None
    if local is None:
        assert version is not None
        base = repos_dir() / "src" / f"{name.lower()}-{version}"
        try:
            root = base / (base / "tree").read_text(encoding="utf-8").strip()
            sdist = (base / "sdist.sha256").read_text(encoding="utf-8").split()[0]
        except (OSError, IndexError):
            return None
        if not (base / ".complete").is_file() or not inside(root, base):
            return None
        install, tree = [f"{name}=={version}"], None
    else:
        root = local
        packaged = any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
        install, tree = [], (root if packaged else None)
    try:
        content = None if local is None else content_hash(root)  # first, as in prepare: a deep tree is refused
        version = version if local is None else _local_version(root)
        assert version is not None
        config = config_for(name, version, root)
        venv = venv_dir(name, version, config, install, tree, content)
        import_root, packages = find_packages(root, name)
    except (SourceError, OSError, ValueError):
        return None
    if not _is_marked(_venv_marker(venv)) or not (venv / "bin" / "python").exists():
        return None
    return Repo(spec=f"pypi:{name}=={version}" if local is None else str(root), name=name, version=version,
                root=root, import_root=import_root, packages=packages, python=venv / "bin" / "python",
                config=config, tree_sha256="", sdist_sha256=sdist)


def prepare(spec: str, *, full: bool = False) -> Repo:
    """Fetch (or locate) a repository and its venv; everything cached. Builds go through
    :func:`prepared`, which turns any failure into the candidate's rejection."""
    name, version, local = parse_spec(spec)
    content = None
    if local is None:
        assert version is not None
        root, sdist = fetch_sdist(name, version)
        config = config_for(name, version, root, full)
        import_root, packages = find_packages(root, name)  # before an install that would be wasted
        _library_bytecode(name, version, root, import_root, packages)
        python = ensure_venv(name, version, config, [f"{name}=={version}"])
        spec_out = f"pypi:{name}=={version}"
    else:
        root, sdist = local, None
        content = content_hash(root)  # first: a tree too deep or too large is refused before any other walk
        version = _local_version(root)
        config = config_for(name, version, root, full)
        import_root, packages = find_packages(root, name)
        packaged = any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
        python = ensure_venv(name, version, config, [], tree=root if packaged else None, content=content)
        spec_out = str(root)
    return Repo(spec=spec_out, name=name, version=version, root=root, import_root=import_root,
                packages=packages, python=python, config=config, tree_sha256=tree_hash(root),
                sdist_sha256=sdist, content_sha256=content)


def _library_bytecode(name: str, version: str, root: Path, import_root: Path, packages: tuple[str, ...]) -> None:
    """A cached sdist tree's bytecode: what the sdist shipped removed once (issue 33, principle
    1: it would run instead of the shown source), then the library's own compiled once per
    interpreter (:func:`repo_trees.compile_library`)."""
    base = within(repos_dir(), "src", f"{name.lower()}-{version}")
    clean, compiled = base / ".bytecode-removed", base / f".bytecode-{bytecode_tag()}"
    with _locked(within(repos_dir(), "locks", f"src-{name.lower()}-{version}.lock")):
        if not clean.is_file():
            remove_bytecode(root)
            clean.write_text("ok\n")
        if not compiled.is_file():
            compile_library(library_files(root, import_root, packages))
            compiled.write_text("ok\n")


def with_test_deps(repo: Repo, deps: tuple[str, ...]) -> Repo:
    """``repo`` with other test dependencies (another pytest: issue 35, a module pytest 9
    cannot collect), in a venv of their own made as :func:`prepare` makes one."""
    import dataclasses

    config = dataclasses.replace(repo.config, test_deps=deps)
    if repo.spec.startswith("pypi:"):
        python = ensure_venv(repo.name, repo.version, config, [f"{repo.name}=={repo.version}"])
    else:
        packaged = any((repo.root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg"))
        python = ensure_venv(repo.name, repo.version, config, [], tree=repo.root if packaged else None)
    return dataclasses.replace(repo, python=python, config=config)


def _local_version(root: Path) -> str:
    """A local checkout's version: PKG-INFO's ``Version:`` when it is a PEP 440 version
    (normalised: it names a directory and a task id), else ``local-<hash>``."""
    pkg_info = root / "PKG-INFO"
    if pkg_info.is_file() and inside(pkg_info, root):
        with open(pkg_info, "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8", "replace")
        match = re.search(r"^Version:[ \t]*(\S+)", text, re.M)
        if match:
            try:
                return str(Version(match.group(1)))
            except InvalidVersion:
                pass
    return "local-" + tree_hash(root)[:8]
