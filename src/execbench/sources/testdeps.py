"""A repository's own test-dependency declarations, read as text (nothing of the repository runs).

:func:`declared` collects requirements from, in this order:

* ``pyproject.toml``: ``[dependency-groups]`` (PEP 735, ``{include-group = ...}`` followed)
  and ``[project.optional-dependencies]``, groups/extras named test, tests, testing or dev;
* requirement files at the root or under ``requirements/``: ``requirements-test*.txt``,
  ``requirements_test*.txt``, ``test-requirements*.txt``, ``test_requirements*.txt``,
  ``requirements/test*.txt`` (``-r other.txt`` inside the tree followed once);
* ``tox.ini``: the ``deps`` of ``[testenv]`` (``-r`` files followed the same way).

Environment markers are evaluated for the builder's interpreter (the venv has the same
version), so ``pytest==8.3.4; python_version >= "3.8"`` counts and its 3.7 twin does not.
Tools that neither the test run nor its imports need (coverage, tox, linters, xdist/cov
plugins) are dropped; the package itself is dropped. Every kept line must still pass
:func:`execbench.sources.repo_configs.requirement_text` (names only: no URLs, paths or pip options).

:func:`pytest_requirement` picks pytest: the repository's own pin when its declarations
constrain pytest and the builder's default version does not satisfy them (boltons 25.0.0
pins ``pytest==8.3.4``; its conftest's ``pytest_ignore_collect(path, ...)`` is refused by
pytest 9), else the builder's default.

:func:`resolved` reads the versions installed in a venv from its ``*.dist-info`` directory
names (files only: nothing of the venv runs).
"""

from __future__ import annotations

import configparser
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

GROUPS = ("test", "tests", "testing", "dev")
DROP = re.compile(r"^(pytest-(cov|xdist|codspeed|benchmark|mypy.*|flake8|pylint|black|isort|ruff)|coverage|"
                  r"covdefaults|codecov|pre-commit|mypy|pyright|pycodestyle|flake8|ruff|black|isort|pylint|tox|"
                  r"nox|twine|build|wheel|setuptools|sphinx.*|check-manifest|bump.*|pip)$", re.I)
_REQ_FILES = ("requirements-test*.txt", "requirements_test*.txt", "test-requirements*.txt",
              "test_requirements*.txt", "requirements/test*.txt", "requirements/tests*.txt")
_MAX_FILE_BYTES = 256 * 1024


@dataclass
class Declared:
    requirements: list[str] = field(default_factory=list)  # PEP 508 texts, markers already applied
    sources: list[str] = field(default_factory=list)  # where they came from (relative paths)


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve()) and path.is_file()
    except OSError:
        return False


def _read(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.read(_MAX_FILE_BYTES).decode("utf-8", "replace")


def _applies(text: str) -> Requirement | None:
    """The requirement of one declaration line, None when it is not a requirement by name or
    its marker excludes this interpreter."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if req.url:
        return None
    try:
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            return None
    except Exception:  # noqa: BLE001 - an unknown marker variable: the line does not apply
        return None
    return req


def _requirement_lines(path: Path, root: Path, seen: set[Path]) -> list[str]:
    """Requirement lines of a requirements file; ``-r FILE`` inside the tree is followed."""
    if path in seen or not _inside(path, root):
        return []
    seen.add(path)
    out = []
    for line in _read(path).splitlines():
        line = line.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(?:-r|--requirement)\s*=?\s*(\S+)$", line)
        if m:
            out += _requirement_lines((path.parent / m.group(1)), root, seen)
            continue
        if line.startswith("-"):
            continue
        out.append(line)
    return out


def _group(groups: dict, name: str, depth: int = 0) -> list[str]:
    out = []
    for item in groups.get(name, []) or []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str) and depth < 5:
            out += _group(groups, item["include-group"], depth + 1)
    return out


def declared(root: Path, name: str = "") -> Declared:
    """The test requirements ``root`` declares (see the module doc), deduplicated by name
    (first declaration wins), tools and ``name`` itself dropped."""
    root = Path(root)
    found: list[tuple[str, str]] = []  # (line, source)
    pyproject = root / "pyproject.toml"
    if _inside(pyproject, root):
        try:
            data = tomllib.loads(_read(pyproject))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}
        groups = data.get("dependency-groups", {}) if isinstance(data.get("dependency-groups"), dict) else {}
        extras = data.get("project", {}).get("optional-dependencies", {}) if isinstance(data.get("project"), dict) else {}
        for key in GROUPS:
            found += [(line, f"pyproject.toml [dependency-groups] {key}") for line in _group(groups, key)]
        for key in GROUPS:
            found += [(line, f"pyproject.toml [project.optional-dependencies] {key}")
                      for line in extras.get(key, []) or [] if isinstance(line, str)]
    seen: set[Path] = set()
    for pattern in _REQ_FILES:
        for path in sorted(root.glob(pattern)):
            rel = path.relative_to(root).as_posix()
            found += [(line, rel) for line in _requirement_lines(path, root, seen)]
    tox = root / "tox.ini"
    if _inside(tox, root):
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(_read(tox))
            deps = parser.get("testenv", "deps", fallback="")
        except configparser.Error:
            deps = ""
        for line in deps.splitlines():
            line = line.split(" #", 1)[0].strip()
            m = re.match(r"^(?:-r|--requirement)\s*=?\s*(\S+)$", line)
            if m:
                target = m.group(1).replace("{toxinidir}/", "")
                found += [(x, "tox.ini -r " + target) for x in _requirement_lines(root / target, root, seen)]
            elif line and not line.startswith(("-", "{", "#")) and ":" not in line.split(";")[0]:
                found.append((line, "tox.ini [testenv] deps"))
    out = Declared()
    names: set[str] = set()
    own = canonicalize_name(name) if name else ""
    for line, source in found:
        req = _applies(line)
        if req is None:
            continue
        base = canonicalize_name(req.name)
        if base in names or base == own or DROP.match(base):
            continue
        names.add(base)
        req.marker = None
        out.requirements.append(str(req))
        if source not in out.sources:
            out.sources.append(source)
    return out


def pytest_requirement(requirements: list[str], default: str) -> tuple[str, list[str]]:
    """(pytest requirement, the other requirements): the repository's own pytest constraint
    when the builder's ``default`` (``pytest==X``) does not satisfy it, else ``default``."""
    others, mine = [], None
    for text in requirements:
        req = Requirement(text)
        if canonicalize_name(req.name) == "pytest":
            mine = req
        else:
            others.append(text)
    if mine is None or not str(mine.specifier):
        return default, others
    try:
        version = Version(default.split("==", 1)[1])
    except (IndexError, InvalidVersion):
        return str(mine), others
    return (default if mine.specifier.contains(version, prereleases=True) else str(mine)), others


OLDEST_PYTEST_MAJOR = 7


def pytest_fallbacks(declared: list[str], used: str) -> list[str]:
    """The pytest requirements to try, in order, when a module cannot be collected under
    ``used`` (issue 35: docopt-ng 0.9.0 declares an unpinned ``pytest``; its conftest's
    ``pytest_ignore_collect(path, ...)`` is refused by pytest 9, accepted by 8): the
    repository's own constraint (``declared``) bounded below each earlier major, newest first,
    down to pytest 7. Nothing when the repository pins an exact version (that is what it runs)."""
    mine = next((Requirement(t) for t in declared if canonicalize_name(Requirement(t).name) == "pytest"), None)
    spec = str(mine.specifier) if mine is not None else ""
    if mine is not None and any(s.operator in ("==", "===") for s in mine.specifier):
        return []
    try:
        now = Requirement(used)
        pinned = [Version(s.version).major for s in now.specifier if s.operator == "=="]
    except (InvalidRequirement, InvalidVersion):
        return []
    major = pinned[0] if pinned else None
    if major is None:
        return []
    return [f"pytest{spec + ',' if spec else ''}<{m}" for m in range(major, OLDEST_PYTEST_MAJOR, -1)]


def resolved(python: Path) -> dict[str, str]:
    """Installed distributions of the venv whose interpreter is ``python``: name → version,
    read from ``lib/python*/site-packages/*.dist-info`` directory names."""
    out: dict[str, str] = {}
    venv = Path(python).parent.parent
    for info in sorted(venv.glob("lib/python*/site-packages/*.dist-info")):
        stem = info.name[:-len(".dist-info")]
        dist, _, version = stem.rpartition("-")
        if dist and version:
            out[canonicalize_name(dist)] = version
    return out
