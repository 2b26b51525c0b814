"""The isolated virtual environments a repository's tests run in: pip in the sandbox, the venv's
key, its check.

pip (``install`` of the package, the checkout and the test dependencies) runs in the sandbox;
the parent creates the empty venv, takes ownership of it back, and checks it against its
distributions' RECORD files before it is used (:func:`verify_venv`). Trust model:
:mod:`execbench.sources.repos`. Split out of it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from execbench import sandbox
from execbench.sandbox._cleanup import remove_tree, walk_tree
from execbench.sandbox._interpreters import trusted_python_home
from execbench.sources.errors import SourceError
from execbench.sources.repo_configs import RepoConfig, requirement_text
from execbench.sources.repo_paths import _locked, repos_dir, within
from execbench.sources.repo_trees import content_hash


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
