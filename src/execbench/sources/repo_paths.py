"""Where a repository's files live: strings from a candidate never become host paths (issue 33,
principle 2).

Names and versions are checked before they name a directory (:func:`checked_name`,
:func:`checked_version`, :func:`within`); a dataset stores a local checkout's path in a
portable form (:func:`portable`, :func:`from_portable`). Split out of :mod:`execbench.sources.repos`.
"""

from __future__ import annotations

import fcntl
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from packaging.version import InvalidVersion, Version

from execbench.dataset.cache import cache_dir
from execbench.sources.errors import SourceError


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
