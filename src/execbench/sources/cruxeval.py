"""CRUXEval problems: the shipped copy (``execbench/data/cruxeval/cruxeval.jsonl``, MIT) or a file.

Each line is ``{"code", "input", "output", "id"}``: a function ``f``, the argument text of a
call (``f(<input>)``), the literal of its return value and ``sample_N``. Reading checks the
shape only; whether ``f(<input>) == <output>`` holds is checked by execution when building.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
from dataclasses import dataclass
from pathlib import Path

from execbench.sources.errors import SourceError

_ID = re.compile(r"^sample_\d+$")
FIELDS = ("id", "code", "input", "output")


@dataclass(frozen=True)
class Problem:
    id: str  # "sample_N"
    code: str
    input: str  # argument text of the call
    output: str  # literal of the return value

    @property
    def call(self) -> str:
        return f"f({self.input})"


SHIPPED = "data/cruxeval/cruxeval.jsonl"  # the MIT copy inside the package


def shipped_text() -> str:
    return importlib.resources.files("execbench").joinpath(*SHIPPED.split("/")).read_text("utf-8")


def read(path: str | Path | None = None) -> tuple[list[Problem], dict[str, str]]:
    """The problems of ``path`` (default: the shipped copy) and where they came from
    (``{"file": "shipped" | <name>, "sha256": ...}``: no absolute path, so a dataset does not
    depend on the machine that built it)."""
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SourceError(f"cruxeval: cannot read {path}: {exc}") from None
        name = Path(path).name
    else:
        text, name = shipped_text(), "shipped"
    problems: list[Problem] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourceError(f"cruxeval {name}, line {number}: not JSON: {exc.msg}") from None
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in FIELDS):
            raise SourceError(f"cruxeval {name}, line {number}: expected string fields {', '.join(FIELDS)}")
        if not _ID.match(row["id"]) or row["id"] in seen:
            raise SourceError(f"cruxeval {name}, line {number}: id {row['id']!r} is not a new sample_N")
        seen.add(row["id"])
        problems.append(Problem(**{k: row[k] for k in FIELDS}))
    if not problems:
        raise SourceError(f"cruxeval {name}: no problems")
    return problems, {"file": name, "sha256": hashlib.sha256(text.encode()).hexdigest()}
