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

import fcntl
import functools
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from execbench import sandbox
from execbench.dataset.cache import cache_dir
from execbench.sandbox._cleanup import remove_tree, walk_tree
from execbench.sandbox._interpreters import trusted_python_home
from execbench.sources.errors import SourceError

PYTEST = "pytest==9.0.3"
_SPEC = re.compile(r"^pypi:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")
_NOT_PACKAGES = {"tests", "test", "testing", "docs", "doc", "examples", "example", "bench", "benchmarks",
                 "build", "dist", "packaging", "tools", "scripts", "requirements", "changelog.d"}


@dataclass(frozen=True)
class RepoConfig:
    """How one library is built into tasks. The default corpus pins these; for any other
    spec they are inferred from the source tree (:func:`infer_config`)."""

    name: str
    version: str
    test_deps: tuple[str, ...] = (PYTEST,)
    env: dict[str, str] = field(default_factory=dict)  # run-time environment (pure-Python switches)
    test_modules: tuple[str, ...] = ()  # default subset (relative paths); () = every test file
    exclude: tuple[str, ...] = ()  # regexes on relative test-file paths, never built
    note: str = ""
    license: str = ""  # SPDX id of the library's license (dataset cards)


# The paper's seven libraries (RepoReason table 5), pinned. Test dependencies are what the
# selected suites import; pytest-xdist/cov/codspeed are not needed (addopts are dropped).
DEFAULT_CORPUS: tuple[RepoConfig, ...] = (
    RepoConfig("toolz", "1.2.0", (PYTEST,), exclude=(r"test_curried_doctests", r"test_signatures"),
               note="pure Python", license="BSD-3-Clause"),
    RepoConfig("cachetools", "8.0.2", (PYTEST,), note="pure Python", license="MIT"),
    RepoConfig("yarl", "1.25.1", (PYTEST, "hypothesis==6.155.2"), env={"YARL_NO_EXTENSIONS": "1"},
               exclude=(r"benchmarks", r"test_pydantic", r"test_quoting_hypothesis"),
               note="YARL_NO_EXTENSIONS=1: quoting runs in yarl/_quoting_py.py, not the Cython module",
               license="Apache-2.0"),
    RepoConfig("networkx", "3.6.1", (PYTEST,),
               test_modules=(
                   "networkx/algorithms/tests/test_simple_paths.py",
                   "networkx/algorithms/tests/test_dag.py",
                   "networkx/algorithms/tests/test_cycles.py",
                   "networkx/algorithms/tests/test_cluster.py",
                   "networkx/algorithms/shortest_paths/tests/test_generic.py",
                   "networkx/algorithms/traversal/tests/test_dfs.py",
                   "networkx/algorithms/components/tests/test_connected.py",
                   "networkx/classes/tests/test_function.py",
               ),
               note="pure Python; numpy/scipy not installed (tests needing them are skipped)",
               license="BSD-3-Clause"),
    RepoConfig("jinja2", "3.1.6", (PYTEST,), exclude=(r"test_async",),
               note="pure Python (MarkupSafe's C speedups are a dependency, not traced)", license="BSD-3-Clause"),
    RepoConfig("attrs", "26.1.0", (PYTEST, "hypothesis==6.155.2", "pympler==1.1", "cloudpickle==3.1.3"),
               exclude=(r"test_mypy", r"test_pyright", r"test_3rd_party"), note="pure Python", license="MIT"),
    RepoConfig("sympy", "1.14.0", (PYTEST, "hypothesis==6.155.2"),
               test_modules=(
                   "sympy/sets/tests/test_sets.py",
                   "sympy/core/tests/test_expand.py",
                   "sympy/simplify/tests/test_radsimp.py",
                   "sympy/functions/combinatorial/tests/test_comb_numbers.py",
                   "sympy/polys/tests/test_partfrac.py",
                   "sympy/functions/elementary/tests/test_integers.py",
               ),
               note="pure Python (mpmath dependency, gmpy2 not installed)", license="BSD-3-Clause"),
)
DEFAULT_BY_NAME = {c.name.lower(): c for c in DEFAULT_CORPUS}


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
        """Absolute paths of the library's own modules (:func:`library_files`)."""
        return library_files(self.root, self.import_root, self.packages)

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

_PEP508_NAME = re.compile(r"^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$", re.ASCII)


def checked_name(name: str, what: str = "package") -> str:
    """``name`` if it is a PEP 508 distribution name (letters, digits, ``._-`` inside, at most
    200 characters: never ``..``, a ``/`` or a space), else a SourceError."""
    if len(name) > 200 or not _PEP508_NAME.match(name):
        raise SourceError(f"{what}: {name[:80]!r} is not a PEP 508 package name")
    return name


def checked_version(version: str, what: str = "package") -> str:
    """``version`` if it is a PEP 440 version (at most 100 characters), else a SourceError."""
    try:
        if len(version) <= 100 and re.fullmatch(r"[A-Za-z0-9.+!_-]+", version, re.ASCII):
            Version(version)
            return version
    except InvalidVersion:
        pass
    raise SourceError(f"{what}: {version[:80]!r} is not a PEP 440 version")


def local_name(text: str) -> str:
    """A local checkout's name (from its directory's name) as one safe path component."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text, flags=re.ASCII).strip("._-")[:100].strip("._-")
    return name or "local"


def within(root: Path, *parts: str) -> Path:
    """``root/parts...``: the one way the builder names a path it creates under one of its
    roots. Each part must be one component (not empty, ``.``, ``..``, nor holding a ``/`` or
    NUL); the path, normalised as the filesystem resolves it (``..`` and symlinked parents
    resolved), must lie inside ``root``. Anything else is a SourceError, before anything is
    created."""
    for part in parts:
        if not part or part in (".", "..") or "/" in part or "\0" in part or len(part.encode()) > 255:
            raise SourceError(f"refused path component {part[:80]!r} under {root.name}/")
    path = Path(os.path.normpath(os.path.join(root, *parts)))
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise SourceError(f"refused path {'/'.join(parts)[:120]!r}: it leaves {root.name}/")
    return path


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


def config_for(name: str, version: str, root: Path, full: bool = False) -> RepoConfig:
    default = DEFAULT_BY_NAME.get(name.lower())
    if default is not None and default.version == version:
        if full:
            return RepoConfig(default.name, default.version, default.test_deps, default.env, (),
                              default.exclude, default.note)
        return default
    return infer_config(name, version, root)


def infer_config(name: str, version: str, root: Path) -> RepoConfig:
    """Test dependencies the tree declares (:mod:`execbench.sources.testdeps`: dependency
    groups, extras, requirement files, tox.ini; markers applied); pytest is the repository's
    own pin when the builder's default does not satisfy it."""
    from execbench.sources import testdeps

    declared = testdeps.declared(root, name)
    pytest, others = testdeps.pytest_requirement(declared.requirements, PYTEST)
    deps = [requirement_text(d, f"{name} test dependency") for d in [pytest, *others]]
    env = {"YARL_NO_EXTENSIONS": "1"} if name.lower() == "yarl" else {}
    return RepoConfig(name, version, tuple(deps), env)


def requirement_text(dep: str, what: str = "test dependency") -> str:
    """``dep`` as a normalised PEP 508 requirement by name (version specifiers, extras and
    markers allowed). Options (``--report``, ``-r``, ``--index-url``, ``--target``), direct
    URLs and paths are refused with SourceError: pip would act on them."""
    text = dep.strip()
    if not text or text.startswith("-") or len(text) > 500:
        raise SourceError(f"{what} {dep!r} refused: not a requirement (pip option or empty)")
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise SourceError(f"{what} {dep!r} refused: not a PEP 508 requirement ({exc})") from None
    if requirement.url:
        raise SourceError(f"{what} {dep!r} refused: direct URL or path")
    return str(requirement)


def portable_text(text: str, root: Path | None = None) -> str:
    """A message (a rejection reason) without this machine's paths: inside the package root
    ``root`` relative to it (``tests/test_x.py:12``), ``root`` itself by its directory's name
    (the sdist's ``name-version``), and any other path inside :func:`repos_dir` from the
    unpacked sdist's directory (``packaging-26.4/src``) or else relative to the repos cache
    (a venv's files as ``<venv>/lib/...``), as :func:`portable` stores paths; then what is
    left of the build cache (``<cache>``), the interpreter's installation (``<python>``) and
    the home directory (``~``)."""
    if root is not None:
        here = re.escape(str(root))
        text = re.sub(here + r"/", "", text)
        text = re.sub(here + r"(?![\w.-])", lambda _: root.name, text)

    def from_cache(match: re.Match[str]) -> str:
        parts = match.group(1).split("/")
        if len(parts) >= 4 and parts[0] == "src" and parts[2] == "unpacked":
            return "/".join(parts[3:])
        if len(parts) >= 2 and parts[0] == "venv":  # its name holds a digest of what it installs
            return "/".join(["<venv>", *parts[2:]])
        return match.group(1)

    text = re.sub(re.escape(str(repos_dir())) + r"/([^\s:'\"(),]+)", from_cache, text)
    for path, label in ((str(cache_dir()), "<cache>"), (sys.base_prefix, "<python>"), (sys.prefix, "<python>"),
                        (os.path.expanduser("~"), "~")):
        if len(path) > 1:
            text = re.sub(re.escape(path.rstrip("/")) + r"(?=/|\b|$)", label.replace("\\", r"\\"), text)
    return text


# --- fetching and unpacking ----------------------------------------------------------

def repos_dir() -> Path:
    return cache_dir() / "repos"


LOCAL_ROOT_ENV = "EXECBENCH_LOCAL_ROOT"


def local_root() -> Path:
    """The declared root local checkouts are stored relative to: ``$EXECBENCH_LOCAL_ROOT``,
    else the working directory."""
    return Path(os.environ.get(LOCAL_ROOT_ENV) or os.getcwd()).resolve()


def portable(path: str | Path) -> str:
    """``path`` as a dataset stores it: relative to :func:`repos_dir` when it lies inside
    (so datasets do not depend on the cache's location), else ``local:REL`` relative to
    :func:`local_root` (a local checkout; ``local:../x`` outside it): never an absolute path."""
    path = Path(path)
    try:
        return path.relative_to(repos_dir()).as_posix()
    except ValueError:
        pass
    if path.is_absolute():
        try:
            return "local:" + Path(os.path.relpath(path.resolve(), local_root())).as_posix()
        except (ValueError, OSError):
            pass
    return str(path)


def from_portable(text: str) -> Path:
    """The path a :func:`portable` string names on this machine (absolute ones as they are)."""
    if text.startswith("local:"):
        return local_root() / text[len("local:"):]
    path = Path(text)
    return path if path.is_absolute() else repos_dir() / path


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


INSTALL_PORTS = (443,)  # the package index over HTTPS
_INSTALL_LIMITS = sandbox.Limits(cpu_seconds=1800, wall_seconds=1800, memory_bytes=4 * 1024**3,
                                 file_size_bytes=512 * 1024**2, max_tasks=256, open_files=4096,
                                 output_bytes=1024**2,
                                 # the venv, pip's cache and the checkout's copy together (docs/sandbox.md)
                                 disk_bytes=4 * 1024**3, disk_inodes=500_000)
# Runs in the sandbox: pip with the arguments in argv[1] (JSON); with "tree", the local
# checkout is first copied (symlinks inside the tree as symlinks, links out of it left
# out) so the build writes only the copy; with
# "collect_sdist", the single downloaded archive is renamed so the parent can collect it.
_PIP_WRAPPER = """
import json, os, shutil, subprocess, sys
job = json.loads(sys.argv[1])
args = job["args"]
if job.get("tree"):  # links leading out of the tree are left out of the copy
    top = os.path.realpath(job["tree"])
    def outside(d, names):
        return [n for n in names if os.path.islink(os.path.join(d, n)) and not
                os.path.realpath(os.path.join(d, n)).startswith(top + os.sep)]
    shutil.copytree(job["tree"], "tree", symlinks=True, ignore=outside)
    args = [a if a != job["tree"] else os.path.abspath("tree") for a in args]
code = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input",
                       "-q", *args]).returncode
if code == 0 and job.get("collect_sdist"):
    names = [n for n in os.listdir("dl") if n.endswith((".tar.gz", ".tgz", ".zip"))]
    if len(names) != 1:
        sys.exit(f"expected one sdist, got {sorted(os.listdir('dl'))}")
    ext = ".zip" if names[0].endswith(".zip") else ".tar.gz"
    os.replace(os.path.join("dl", names[0]), "sdist" + ext)
    open("sdist.name", "w").write(names[0])
sys.exit(code)
"""


# pip settings the sandboxed pip inherits from the builder's (all configuration files and
# PIP_* variables, as ``pip config list`` reports them), credentials excepted.
_PIP_KEYS = ("index-url", "extra-index-url", "find-links", "constraint", "cert", "trusted-host",
             "default-timeout", "timeout", "retries", "no-index", "prefer-binary", "only-binary")
_CONFIG_LINE = re.compile(r"^[^.\s]*\.([a-z-]+)='(.*)'$")


@functools.lru_cache(maxsize=1)
def _pip_settings() -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(PIP_* variables, local paths to make readable) for the sandboxed pip: the builder's
    effective settings for _PIP_KEYS (URL items with a user or password dropped: secrets
    stay out of the sandbox) and the local directories and files they name (wheel dirs,
    file:// indexes, constraints, certificates)."""
    from urllib.parse import urlsplit

    proc = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                          text=True, timeout=120)
    env: dict[str, str] = {}
    local: set[str] = set()
    for line in proc.stdout.splitlines():
        match = _CONFIG_LINE.match(line.strip())
        if not match or match[1] not in _PIP_KEYS:
            continue
        items = [i for i in match[2].split() if not (urlsplit(i).username or urlsplit(i).password)]
        if not items:
            continue
        var = "PIP_" + match[1].upper().replace("-", "_")
        env[var] = " ".join(dict.fromkeys(env.get(var, "").split() + items))
        for item in items:
            parts = urlsplit(item)
            path = parts.path if parts.scheme == "file" else item if not parts.scheme else ""
            if path.rstrip("/").endswith("/simple"):  # a local index links to ../files/...
                path = os.path.dirname(path.rstrip("/"))
            if path and os.path.isabs(path) and os.path.exists(path):
                local.add(path)
    return tuple(sorted(env.items())), tuple(sorted(local))


def _pip(python: str | Path, *args: str, tree: Path | None = None, venv: Path | None = None,
         collect_sdist: bool = False) -> sandbox.SandboxResult:
    """pip in the sandbox (see the module docstring); raises SourceError on failure."""
    job = {"args": list(args), "tree": str(tree) if tree else None, "collect_sdist": collect_sdist}
    env, local = _pip_settings()
    try:
        result = sandbox.run([str(python), "-c", _PIP_WRAPPER, json.dumps(job)], env=dict(env),
                             read_only_paths=([str(tree)] if tree else []) + list(local),
                             read_write_paths=[str(venv)] if venv else [],
                             collect=["sdist.tar.gz", "sdist.zip", "sdist.name"] if collect_sdist else [],
                             network_ports=INSTALL_PORTS, limits=_INSTALL_LIMITS)
    except sandbox.SandboxError as exc:  # e.g. no Landlock TCP rules on this kernel
        raise SourceError(f"cannot run pip in the sandbox here: {exc}") from None
    if not result.ok:
        text = (result.stderr or result.stdout).decode("utf-8", "replace")
        tail = "\n".join(text.strip().splitlines()[-6:])
        raise SourceError(f"pip {' '.join(args[:3])} ... failed in the sandbox ({result.reason()}):\n{tail}")
    return result


def _open_for_install(venv: Path) -> None:
    """The sandboxed pip runs as a fresh uid: let it write the venv (just created by the
    builder; walked like any tree all the same)."""
    def visit(dir_fd: int, name: str, st: os.stat_result, depth: int) -> None:
        if not stat.S_ISLNK(st.st_mode):
            os.chmod(name, st.st_mode | (0o777 if stat.S_ISDIR(st.st_mode) else 0o666), dir_fd=dir_fd)

    walk_tree(str(venv), visit, max_depth=VENV_MAX_DEPTH)


VENV_MAX_DEPTH = 64  # directories below a venv's root; site-packages trees are ~10 deep


def _take_back(venv: Path) -> None:
    """Own everything the install wrote (a later run could get the same fresh uid) and
    make it read-only for others (no set-id bits). The tree is the sandbox's work: walked
    iteratively, symlinks never followed, at most VENV_MAX_DEPTH levels; deeper, or a walk
    that fails, is a SourceError (the package's rejection) and the caller removes the venv."""
    uid, gid = os.getuid(), os.getgid()

    def visit(dir_fd: int, name: str, st: os.stat_result, depth: int) -> None:
        try:
            os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISLNK(st.st_mode):
                mode = (st.st_mode & 0o755) | (0o755 if stat.S_ISDIR(st.st_mode) else 0)
                os.chmod(name, mode, dir_fd=dir_fd, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass

    try:
        walk_tree(str(venv), visit, max_depth=VENV_MAX_DEPTH)
    except OSError as exc:  # TreeTooDeep included
        raise SourceError(f"the install left a venv the builder will not use: {exc}") from None


def _venv_marker(venv: Path) -> Path:
    """Where the builder marks a venv complete: next to it, in a directory no sandbox is
    given (inside the venv, the install could plant the marker or a symlink in its place)."""
    return venv.with_name(venv.name + ".complete")


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` afresh (a stale file or link there is removed, never followed)."""
    if os.path.lexists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _is_marked(marker: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(marker).st_mode)
    except OSError:
        return False


def _venv_config(venv: Path) -> tuple[bytes, dict[str, str]]:
    """The venv's pyvenv.cfg and its interpreter links (bin/python*) as ``python -m venv``
    made them, read before the install; its ``home`` (first line) must be one the sandbox
    trusts (:func:`execbench.sandbox._interpreters.trusted_python_home`)."""
    cfg = venv / "pyvenv.cfg"
    fd = os.open(cfg, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        data = f.read(65536)
    first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    key, _, home = first.partition("=")
    if key.strip() != "home" or not trusted_python_home(home.strip()):
        raise SourceError(f"{cfg}: the venv's interpreter home {first!r} is not a trusted interpreter")
    links = {p.name: os.readlink(p) for p in (venv / "bin").iterdir() if p.is_symlink()}
    return data, links


def _restore_venv_config(venv: Path, data: bytes, links: dict[str, str]) -> None:
    """Put back what the builder (and later runs, see _install_prefix) relies on, after
    the install and _take_back: the install could have rewritten or replaced it."""
    _write_new(venv / "pyvenv.cfg", data.decode("utf-8", "surrogateescape"))
    bindir = venv / "bin"
    if bindir.is_symlink() or not bindir.is_dir():
        raise SourceError(f"{venv}: the install replaced the venv's bin directory")
    for name, target in links.items():
        if os.path.lexists(bindir / name):
            os.unlink(bindir / name)
        os.symlink(target, bindir / name)


SDIST_MAX_DEPTH = 32  # path components of a member: deeper trees defeat recursive walks


def _safe_unpack(archive: Path, dest: Path) -> Path:
    """Unpack an sdist refusing absolute paths, '..', links out, special files and paths
    deeper than SDIST_MAX_DEPTH (the archive comes back from the sandboxed pip)."""
    dest.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            names = [info.filename for info in zf.infolist()]
    else:
        with tarfile.open(archive) as tf:
            names = tf.getnames()
    for member in names:
        if len([part for part in member.split("/") if part]) > SDIST_MAX_DEPTH:
            raise SourceError(f"{archive.name}: {member[:120]!r}... is nested deeper than {SDIST_MAX_DEPTH} levels")
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                target = (dest / info.filename).resolve()
                if dest.resolve() not in target.parents and target != dest.resolve():
                    raise SourceError(f"{archive.name}: unsafe path {info.filename!r}")
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")
    entries = [p for p in dest.iterdir()]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else dest


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


def find_packages(root: Path, name: str) -> tuple[Path, tuple[str, ...]]:
    """(import root, top-level packages) of the library in a source tree: ``src/`` layout or
    flat; the package named like the distribution first, plus sibling packages (attrs ships
    ``attr`` and ``attrs``)."""
    candidates = [root / "src", root]
    wanted = {name.lower().replace("-", "_"), name.lower().replace("-", "_").removeprefix("py")}
    for base in candidates:
        if not base.is_dir():
            continue
        packages = sorted(p.name for p in base.iterdir()  # the library's own name is never a non-package
                          if p.is_dir() and (p / "__init__.py").is_file()
                          and (p.name.lower() not in _NOT_PACKAGES or p.name.lower() in wanted)
                          and not p.name.startswith((".", "_")) and not p.name.endswith(".egg-info"))
        modules = sorted(p.stem for p in base.glob("*.py") if p.stem.lower() in wanted)
        if any(p.lower() in wanted for p in packages) or modules:
            return base, tuple(packages + modules)
        if base.name == "src" and packages:
            return base, tuple(packages)
    flat = sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()
                  and p.name.lower() not in _NOT_PACKAGES and not p.name.startswith((".", "_")))
    if flat:  # a local checkout named differently from its package
        return root, tuple(flat)
    raise SourceError(f"{root}: cannot find the importable package of {name!r} (tried src/ and the root)")


_BUILD_OUTPUT_DIRS = frozenset({"build", "dist"})  # top level: what pip/setuptools write into a tree
_NEVER_SOURCE_DIRS = frozenset({"__pycache__", "site-packages", "node_modules"})


def _hashed(rel: tuple[str, ...]) -> bool:
    """Whether a .py file (path parts relative to the tree) is source of the checkout, not
    a build artefact, an install or a hidden directory (.git, .venv, .tox, ...)."""
    if rel[0] in _BUILD_OUTPUT_DIRS:
        return False
    return not any(part.startswith(".") or part in _NEVER_SOURCE_DIRS or part.endswith(".egg-info")
                   for part in rel[:-1])


def tree_hash(root: Path) -> str:
    """Hash of the tree's Python sources: stable across ``pip install`` of the tree (which
    writes build/ and *.egg-info into it)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if not _hashed(parts):
            continue
        if path.is_symlink():  # hashed as a link, never followed
            h.update("/".join(parts).encode() + b"\0-> " + os.readlink(path).encode() + b"\0")
            continue
        rel = "/".join(parts)
        h.update(rel.encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


LOCAL_TREE_MAX_DEPTH = 64  # directories below a local checkout's root
LOCAL_TREE_MAX_ENTRIES = 500_000


def content_hash(root: Path) -> str:
    """Hash of *every* entry of a local tree (issue 33, principle 1): each entry's path, kind
    and executable bit, a regular file's bytes, a symlink's target (never followed), hidden
    directories (``.git``: setuptools-scm reads it), build output and ``__pycache__``
    included: what pip copies into the sandbox and the tests import is keyed by what it is,
    not by the tree's path or the version its metadata declares. An iterative walk (no
    recursion), at most LOCAL_TREE_MAX_DEPTH levels and LOCAL_TREE_MAX_ENTRIES entries;
    beyond, the tree is refused (SourceError)."""
    h = hashlib.sha256()
    stack: list[tuple[str, int]] = [("", 0)]
    seen = 0
    while stack:
        rel, depth = stack.pop()
        if depth > LOCAL_TREE_MAX_DEPTH:
            raise SourceError(f"{root.name}: directories nested deeper than {LOCAL_TREE_MAX_DEPTH} levels")
        try:
            with os.scandir(os.path.join(root, rel)) as it:
                entries = sorted((e.name, e.stat(follow_symlinks=False)) for e in it)
        except OSError as exc:
            raise SourceError(f"{root.name}/{rel}: cannot list the checkout ({exc.strerror})") from None
        children = []
        for name, st in entries:
            seen += 1
            if seen > LOCAL_TREE_MAX_ENTRIES:
                raise SourceError(f"{root.name}: more than {LOCAL_TREE_MAX_ENTRIES} entries")
            path = f"{rel}/{name}" if rel else name
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
            if stat.S_ISDIR(st.st_mode):
                h.update(b"d\0")
                children.append(path)
            elif stat.S_ISLNK(st.st_mode):
                h.update(b"l\0" + os.fsencode(os.readlink(os.path.join(root, path))) + b"\0")
            elif stat.S_ISREG(st.st_mode):
                h.update(b"fx\0" if st.st_mode & 0o111 else b"f\0")
                h.update(_file_digest(os.path.join(root, path)).encode() + b"\0")
            else:
                h.update(b"s%o\0" % stat.S_IFMT(st.st_mode))
        stack += [(child, depth + 1) for child in reversed(children)]
    return h.hexdigest()


def _file_digest(path: str) -> str:
    """sha256 of a regular file, opened without following a link or blocking on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return "special"
        return hashlib.file_digest(fh, "sha256").hexdigest()


INSTALL_SCHEME = "sandboxed-1"  # part of the venv key: venvs installed outside the sandbox are not reused


def venv_dir(name: str, version: str, config: RepoConfig, install: list[str], tree: Path | None = None,
             content: str | None = None) -> Path:
    """Where :func:`ensure_venv` keeps the venv of these requirements: keyed by the Python
    version, the install scheme, what is installed, the test deps and, for a local checkout,
    ``content`` (its :func:`content_hash`; never its path or self-declared version)."""
    deps = [requirement_text(d) for d in config.test_deps]
    install = [requirement_text(d, "package") for d in install]
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    key = [py, INSTALL_SCHEME, *install, *([f"content:{content}"] if content else []),
           *(["tree"] if tree else []), *deps]
    digest = hashlib.sha256("\n".join(key).encode()).hexdigest()[:12]
    return within(repos_dir(), "venv", f"{name.lower()}-{version}-py{py}-{digest}")


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


def ensure_venv(name: str, version: str, config: RepoConfig, install: list[str],
                tree: Path | None = None, content: str | None = None) -> Path:
    """A venv with ``install`` (the package itself, or ``tree``: a local checkout, or
    nothing for a local tree without packaging metadata) and the test deps; created once
    per key and reused. The key is (Python, install scheme, what is installed, the test
    deps) and, for a local checkout, ``content``: the :func:`content_hash` of *every* file of
    its tree (never its path or self-declared version), so what one checkout's install code
    wrote is never another's venv. pip runs in the sandbox; what it left is checked against
    the distributions' RECORD files before the venv is used (:func:`verify_venv`)."""
    deps = [requirement_text(d) for d in config.test_deps]
    install = [requirement_text(d, "package") for d in install]
    if tree is not None and content is None:
        content = content_hash(tree)
    base = venv_dir(name, version, config, install, tree, content)
    python = base / "bin" / "python"
    done = _venv_marker(base)
    with _locked(within(repos_dir(), "locks", f"venv-{base.name}.lock")):
        if _is_marked(done) and VERIFIED not in _marker_text(done):
            _verify_or_remove(base)  # installed before RECORD checks: checked once, then marked
        if not _is_marked(done):
            if os.path.lexists(done):
                os.unlink(done)
            if os.path.lexists(base):
                remove_tree(str(base))
            _install_venv(name, base, install, tree, deps)
            _write_new(done, "\n".join([*install, *([f"content:{content}"] if content else []), *deps,
                                        VERIFIED]) + "\n")
    return python


def _install_venv(name: str, base: Path, install: list[str], tree: Path | None, deps: list[str]) -> None:
    """Create the venv, install into it in the sandbox, take it back and check it; on any
    failure the venv is removed and the failure is a SourceError."""
    python = base / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "venv", str(base)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SourceError(f"cannot create a venv for {name}: {proc.stderr.strip()[-500:]}")
    try:
        config_data, links = _venv_config(base)
        _open_for_install(base)
        try:
            _pip(python, "install", *install, *([str(tree)] if tree else []), *deps, tree=tree, venv=base)
        finally:
            _take_back(base)
        _restore_venv_config(base, config_data, links)
        verify_venv(base)
    except (SourceError, OSError) as exc:
        remove_tree(str(base))
        if isinstance(exc, SourceError):
            raise
        raise SourceError(f"cannot install {name} into its venv: {exc}") from None


VERIFIED = "verified: RECORD-1"  # the marker's last line once verify_venv passed
_VENV_OWN = re.compile(r"^(pyvenv\.cfg|lib64|bin/(python[0-9.]*|activate(\.csh|\.fish)?|Activate\.ps1))$")
RECORD_MAX_BYTES = 16 * 1024**2


def _marker_text(marker: Path) -> str:
    try:
        fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        return fh.read(1 << 20).decode("utf-8", "replace")


def _verify_or_remove(base: Path) -> None:
    """A venv made before its install was checked: checked now and marked, or removed (and
    installed afresh by the caller)."""
    done = _venv_marker(base)
    try:
        verify_venv(base)
    except (SourceError, OSError):
        os.unlink(done)
        remove_tree(str(base))
        return
    _write_new(done, _marker_text(done) + VERIFIED + "\n")


def _recorded(venv: Path) -> dict[str, str]:
    """Path (relative to the venv) → RECORD hash (``sha256=...`` or "") of every file the
    distributions of the venv's site-packages list."""
    import csv
    import io

    recorded: dict[str, str] = {}
    for site in sorted(venv.glob("lib/python*/site-packages")):
        if site.is_symlink() or not site.is_dir():
            raise SourceError(f"{site.relative_to(venv)}: not a directory")
        site_rel = site.relative_to(venv).as_posix()
        for info in sorted(site.iterdir()):
            record = info / "RECORD"
            if not info.name.endswith(".dist-info") or info.is_symlink() or record.is_symlink() \
                    or not record.is_file():
                continue
            with open(record, "rb") as fh:
                text = fh.read(RECORD_MAX_BYTES + 1)
            if len(text) > RECORD_MAX_BYTES:
                raise SourceError(f"{info.name}/RECORD is over {RECORD_MAX_BYTES} bytes")
            for row in csv.reader(io.StringIO(text.decode("utf-8", "replace"))):
                if row and row[0]:
                    recorded[os.path.normpath(f"{site_rel}/{row[0]}")] = row[1] if len(row) > 1 else ""
    return recorded


def verify_venv(venv: Path) -> None:
    """The install's work is checked before any run uses it (issue 33, principle 1): every
    file and link in the venv is the venv's own (``pyvenv.cfg``, ``bin/python*``,
    ``bin/activate*``) or listed in a distribution's RECORD, with the hash RECORD gives.
    A ``.pth``, module or script that no distribution installed, or an installed file
    changed after the fact, is a SourceError (the package's rejection). The walk is
    iterative and bounded (VENV_MAX_DEPTH levels), links never followed."""
    recorded = _recorded(venv)
    stray: list[str] = []
    changed: list[str] = []
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel, depth = stack.pop()
        if depth > VENV_MAX_DEPTH:
            raise SourceError(f"the install left directories nested deeper than {VENV_MAX_DEPTH} levels")
        with os.scandir(os.path.join(venv, rel)) as it:
            entries = sorted((e.name, e.stat(follow_symlinks=False)) for e in it)
        for name, st in entries:
            path = f"{rel}/{name}" if rel else name
            if stat.S_ISDIR(st.st_mode):
                stack.append((path, depth + 1))
            elif _VENV_OWN.match(path):
                continue
            elif path not in recorded:
                stray.append(path)
            elif "=" in recorded[path] and stat.S_ISREG(st.st_mode):
                if not _matches_record(venv / path, recorded[path]):
                    changed.append(path)
            elif not stat.S_ISREG(st.st_mode):
                stray.append(path)  # a link or special file where RECORD lists a file
    if stray or changed:
        what = [f"not installed by any distribution: {', '.join(stray[:5])}"] if stray else []
        what += [f"changed after its install: {', '.join(changed[:5])}"] if changed else []
        raise SourceError(f"the install left a venv the builder will not use ({'; '.join(what)})")


def _matches_record(path: Path, entry: str) -> bool:
    """Whether the file's digest is RECORD's ``algo=value``: PEP 376's urlsafe base64 without
    padding, or as some wheel builders write it (padded, hex: furo 2022.12.7). An algorithm
    hashlib does not guarantee cannot be checked and counts as listed."""
    import base64

    algorithm, _, value = entry.partition("=")
    if algorithm not in hashlib.algorithms_guaranteed or algorithm.startswith("shake"):
        return True
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        digest = hashlib.file_digest(fh, algorithm).digest()
    encoded = base64.urlsafe_b64encode(digest).decode()
    return value in (encoded.rstrip("="), encoded, digest.hex())


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
