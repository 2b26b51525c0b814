"""Case directories: a folder with ``case.toml`` naming a program and how to run it.

Shared by every family; each family checks the keys it needs. Named built-in corpora
(``advanced`` for trace, ``classic`` for state, ...) are folders of case directories under
``execbench/data``; any other source argument is a path to a case directory or to a folder
that contains case directories (searched recursively).
"""

from __future__ import annotations

import importlib.resources
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from execbench.sources.errors import SourceError

CASE_FILE = "case.toml"


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
            raise SourceError(f"{self.directory}: {name!r} is outside the case directory")
        if not path.is_file():
            raise SourceError(f"{self.directory}: file {name!r} named in {CASE_FILE} does not exist")
        return path.read_text(encoding="utf-8")


def builtin_corpus(family: str, name: str) -> Path | None:
    if not name.replace("-", "_").isidentifier():
        return None  # a path, not a corpus name
    root = importlib.resources.files("execbench") / "data" / family / name
    path = Path(str(root))
    return path if path.is_dir() else None


def load_case(directory: Path) -> Case:
    try:
        config = tomllib.loads((directory / CASE_FILE).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SourceError(f"{directory / CASE_FILE}: {exc}") from None
    for key in ("id", "language", "source"):
        if not isinstance(config.get(key), str):
            raise SourceError(f"{directory / CASE_FILE}: missing or non-string key {key!r}")
    return Case(directory, config)


def find_case_dirs(root: Path) -> list[Path]:
    if (root / CASE_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(CASE_FILE))


def resolve_source(family: str, source: str) -> tuple[str, list[Path]]:
    """A source argument → (source name for task ids, case directories)."""
    builtin = builtin_corpus(family, source)
    root = builtin if builtin is not None else Path(source)
    if not root.is_dir():
        raise SourceError(f"source {source!r} is neither a built-in {family} corpus nor a directory")
    dirs = find_case_dirs(root)
    if not dirs:
        raise SourceError(f"no {CASE_FILE} found under {root}")
    name = source if builtin is not None else root.resolve().name
    return name, dirs
