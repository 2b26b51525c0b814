"""Case directories: a folder with ``case.toml`` naming a program and how to run it.

Shared by every family; each family declares the keys it reads beyond the common ones
(:data:`COMMON_KEYS`) with their types, and :func:`load_case` checks them all in one place
(issue 34): a key of the wrong type (``calls = "f(1)"`` for a list) or an unknown key (with
the closest known one) is a :class:`CaseError` naming the file, and :func:`load_cases`
finds two directories of one source with the same ``id`` before anything runs. Named built-in corpora
(``advanced`` for trace, ``classic`` for state, ...) are folders of case directories under
``execbench/data``; any other source argument is a path to a case directory or to a folder
that contains case directories (searched recursively).
"""

from __future__ import annotations

import importlib.resources
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from execbench.sources.errors import SourceError
from execbench.usererror import unknown

CASE_FILE = "case.toml"

#: The types a case.toml key can have: what each means in an error message.
TEXT, TEXTS, INTEGER, TABLE = "a string", "a non-empty list of strings", "an integer", "a table"
#: Keys every case directory has (the first three are required), whatever its family.
COMMON_KEYS: dict[str, str] = {"id": TEXT, "language": TEXT, "source": TEXT, "topic": TEXT,
                               "license": TEXT}  # license: the program's (SPDX id), for dataset cards
REQUIRED = ("id", "language", "source")


class CaseError(SourceError):
    """A malformed case directory: ``where`` (its case.toml) and ``problem`` (what is wrong,
    without the path: a rejection's reason, summarised by kind)."""

    def __init__(self, where: Path, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem

    def __reduce__(self) -> tuple[Any, ...]:  # pickled across worker processes with both parts
        return (CaseError, (self.where, self.problem))


@dataclass(frozen=True)
class Case:
    directory: Path
    config: dict[str, Any]

    @property
    def id(self) -> str:
        return self.config["id"]

    def read(self, name: str) -> str:
        """Read a file named in case.toml, refusing paths that leave the case directory."""
        path = (self.directory / name).resolve()
        if self.directory.resolve() not in path.parents:
            raise CaseError(self.directory / CASE_FILE, f"file {name!r} is outside the case directory")
        if not path.is_file():
            raise CaseError(self.directory / CASE_FILE, f"file {name!r} named in {CASE_FILE} does not exist")
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CaseError(self.directory / CASE_FILE, f"file {name!r} cannot be read: {exc}") from None


def builtin_corpus(family: str, name: str) -> Path | None:
    if not name.replace("-", "_").isidentifier():
        return None  # a path, not a corpus name
    root = importlib.resources.files("execbench") / "data" / family / name
    path = Path(str(root))
    return path if path.is_dir() else None


def _type_ok(value: Any, kind: str) -> bool:
    if kind == TEXT:
        return isinstance(value, str)
    if kind == TEXTS:
        return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    if kind == INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, dict)


def _described(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "a list", dict: "a table"}
    text = repr(value)
    return f"{names.get(type(value), type(value).__name__)} ({text[:40] + '…' if len(text) > 40 else text})"


def check_config(config: dict[str, Any], keys: Mapping[str, str] | None, where: Path) -> None:
    """``config`` (a parsed case.toml) against :data:`COMMON_KEYS` and a family's ``keys``
    (None: the family declares none, so only the common keys are checked)."""
    allowed = {**COMMON_KEYS, **(keys or {})}
    for key in config:
        if key not in allowed and keys is not None:
            raise CaseError(where, unknown("key", key, allowed))
    for key in REQUIRED:
        if key not in config:
            raise CaseError(where, f"missing key {key!r} ({allowed[key]})")
    if isinstance(config["id"], str) and not re.fullmatch(r"[^#\s]+", config["id"]):
        raise CaseError(where, f"key 'id' must be a non-empty name without spaces or '#', not {config['id']!r}")
    for key, value in config.items():
        if key in allowed and not _type_ok(value, allowed[key]):
            hint = f"; write {key} = [{json_text(value)}]" if allowed[key] == TEXTS and isinstance(value, str) else ""
            raise CaseError(where, f"key {key!r} must be {allowed[key]}, not {_described(value)}{hint}")


def json_text(value: str) -> str:
    """A TOML basic string of ``value`` (TOML's basic strings are JSON's)."""
    import json

    return json.dumps(value, ensure_ascii=False)


def load_case(directory: Path, keys: Mapping[str, str] | None = None) -> Case:
    """The case in ``directory``; ``keys``: the family's keys beyond :data:`COMMON_KEYS` and
    their types (None: any further keys, only the common ones checked)."""
    where = directory / CASE_FILE
    try:
        config = tomllib.loads(where.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(where, f"not valid TOML: {exc}") from None
    except RecursionError:
        raise CaseError(where, "not valid TOML: nested too deeply") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(where, f"cannot be read: {exc}") from None
    check_config(config, keys, where)
    return Case(directory, config)


def load_cases(dirs: list[Path], keys: Mapping[str, str]) -> list[tuple[Path, Case | CaseError]]:
    """Every directory's case, or the :class:`CaseError` that is its rejection; two directories
    with the same ``id`` are a :class:`SourceError` for the whole source, before anything runs."""
    loaded: list[tuple[Path, Case | CaseError]] = []
    seen: dict[str, Path] = {}
    for directory in dirs:
        try:
            case: Case | CaseError = load_case(directory, keys)
        except CaseError as exc:
            case = exc
        if isinstance(case, Case):
            if case.id in seen:
                raise SourceError(f"two case directories have the id {case.id!r}: {seen[case.id]} and {directory} "
                                  f"(ids must be unique within a source: change one {CASE_FILE})")
            seen[case.id] = directory
        loaded.append((directory, case))
    return loaded


def find_case_dirs(root: Path) -> list[Path]:
    if (root / CASE_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(CASE_FILE))


def resolve_source(family: str, source: str) -> tuple[str, list[Path]]:
    """A source argument → (source name for task ids, case directories)."""
    if not source.strip():
        raise SourceError("an empty source: name a built-in corpus or a directory of case directories")
    builtin = builtin_corpus(family, source)
    root = builtin if builtin is not None else Path(source)
    if not root.is_dir():
        raise SourceError(f"source {source!r} is neither a built-in {family} corpus nor a directory")
    dirs = find_case_dirs(root)
    if not dirs:
        raise SourceError(f"no {CASE_FILE} found under {root}")
    name = source if builtin is not None else root.resolve().name
    return name, dirs
