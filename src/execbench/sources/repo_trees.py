"""A repository's source tree: unpacking an sdist safely, finding the library's packages,
hashing the tree.

Symlinks are never followed out of a tree (hashing, test and library files). Split out of
:mod:`execbench.sources.repos`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import py_compile
import shutil
import stat
import sys
import tarfile
import zipfile
from pathlib import Path

from execbench.sources.errors import SourceError


_NOT_PACKAGES = {"tests", "test", "testing", "docs", "doc", "examples", "example", "bench", "benchmarks",
                 "build", "dist", "packaging", "tools", "scripts", "requirements", "changelog.d"}


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


# --- bytecode: none from the candidate, the library's own made here --------------------------

BYTECODE_SUFFIXES = (".pyc", ".pyo")


def shipped_bytecode(root: Path) -> list[Path]:
    """Every ``__pycache__`` directory and bytecode file of an unpacked tree, never followed
    through a link. An sdist can ship them: Python runs a ``__pycache__`` entry whose header
    matches its source's size and mtime (both kept by the archive) instead of the source, and
    imports a lone ``mod.pyc`` as a module no text shows."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        found += [Path(dirpath, d) for d in dirnames if d == "__pycache__"]
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        found += [Path(dirpath, f) for f in filenames if f.endswith(BYTECODE_SUFFIXES)]
    return found


def remove_bytecode(root: Path) -> int:
    """Remove every bytecode file and ``__pycache__`` directory of an unpacked tree
    (:func:`shipped_bytecode`; a link is removed, never followed); returns how many."""
    found = shipped_bytecode(root)
    for path in found:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    return len(found)


def compile_library(files: list[Path]) -> int:
    """The library modules' bytecode, compiled here from their text (never run) as checked-hash
    ``.pyc`` beside them: Python uses one only while its source still has the hash it was
    compiled from, and no run of the tree's tests compiles the library again (sympy: 1.4 s of
    CPU per run). For a tree in the cache (an sdist's) whose shipped bytecode is gone
    (:func:`remove_bytecode`), never a user's checkout. Returns the files compiled; one that
    does not compile is left to Python (its SyntaxError stays the run's)."""
    compiled = 0
    for path in files:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            py_compile.compile(str(path), cfile=importlib.util.cache_from_source(str(path)), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
            compiled += 1
        except (py_compile.PyCompileError, ValueError, RecursionError, MemoryError, OSError):
            continue
    return compiled


def bytecode_tag() -> str:
    """The interpreter's bytecode tag (``cpython-311``): ``.pyc`` files of another are not read."""
    return sys.implementation.cache_tag or "none"
