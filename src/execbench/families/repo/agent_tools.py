"""Read-only repository browsing for agent mode: list, read and search, confined to one
repository's source tree.

Every path is resolved (symlinks followed) and must stay inside the tree. The task's test
file and the module holding its function are never shown as they are: when the task
carries their masked copies (``prompt_fields.agent_copies``, :mod:`.agent_copy`: every
masked value of the module's tasks hidden) reading, listing and searching them shows the
copy, by any spelling of the path (``./``, ``..``, a symlink); without a loadable copy they
are refused (``refused``). Also refused, so no other route shows an answer: any file whose
text contains a refused or copied file's text, or a line the masking changed together with
half of its test function's lines (a copy left by a build in ``build/lib/...``, a backup,
an old version, a hard link, an uncompressed archive; ``agent_copy.holds_copy``),
build artefacts (top-level ``build/``, ``dist/``, ``*.egg-info``, ``__pycache__``),
compiled and archived files (``*.pyc``, ``*.tar``, ``*.whl``, ...), version-control
history (``.git``, ``.hg``, ``.svn``) and installed copies (``site-packages``, any
directory holding a ``pyvenv.cfg``). Regular-expression search uses RE2 (linear time:
``(.+)+#NOPE#`` cannot hang the evaluator). Errors are returned as :class:`ToolError` with a
short message an agent can act on. No code runs.
The eval engineer wraps these as Inspect tools (FIELD-NOTES: Inspect's ``local`` sandbox
is no boundary, so the confinement lives here).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from execbench.errors import InternalError
from execbench.families.repo.fairness import agent_copy
from execbench.sources import repos

MAX_READ_CHARS = 16_000
MAX_LIST = 500
MAX_MATCHES = 100
MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = {".git", ".hg", ".svn", ".bzr", "__pycache__", ".tox", ".nox", ".venv", "node_modules", ".mypy_cache",
              ".pytest_cache", ".eggs", "site-packages", "dist-packages"}
_ARTIFACT_TOP = {"build", "dist"}  # what pip/setuptools write into a tree
_BINARY_SUFFIXES = (".pyc", ".pyo", ".so", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".zip", ".whl", ".egg")


def _artifact(rel: tuple[str, ...]) -> bool:
    return bool(rel) and (rel[0] in _ARTIFACT_TOP or rel[-1].endswith(_BINARY_SUFFIXES) or any(
        p in _SKIP_DIRS or p.endswith(".egg-info") for p in rel))


class ToolError(InternalError, ValueError):
    """A refused or failed tool call (the message is meant for the agent)."""


@dataclass
class RepoBrowser:
    root: Path
    refused: set[str] = field(default_factory=set)  # paths relative to root
    copies: dict[str, str] = field(default_factory=dict)  # path relative to root -> the text shown instead

    def __post_init__(self) -> None:
        self.root = Path(os.path.realpath(self.root))
        if not self.root.is_dir():
            raise ToolError(f"repository root {self.root} is not a directory")
        self._copies = {Path(os.path.realpath(self.root / r)): text for r, text in self.copies.items()}
        self._refused = {Path(os.path.realpath(self.root / r)) for r in self.refused} - set(self._copies)
        self._refused_texts = []
        self._signatures: list[tuple[frozenset[str], frozenset[str]]] = []
        self._inodes: set[tuple[int, int]] = set()
        for path in self._refused | set(self._copies):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                info = path.stat()
            except OSError:
                continue
            self._inodes.add((info.st_dev, info.st_ino))
            if text.strip():
                self._refused_texts.append(text.strip())
            if path in self._copies:
                self._signatures += agent_copy.copy_signatures(text, self._copies[path])

    @classmethod
    def for_task(cls, task: Any) -> "RepoBrowser":
        """The browser a repo task asks for: its source tree, its test file (and the module
        holding the function) shown as their masked copies, or refused when a copy cannot
        be loaded (an older dataset, a cache without the copies)."""
        fields = task.prompt_fields
        refused = {fields["test_file"]}
        if fields.get("function_file"):
            refused.add(fields["function_file"])
        copies = {}
        for path, ref in (fields.get("agent_copies") or {}).items():
            if path in refused:
                try:
                    copies[path] = agent_copy.load(ref)
                except (OSError, ValueError, EOFError):
                    continue  # stays refused
        return cls(repos.from_portable(fields["repo_root"]), refused, copies)

    # -- confinement ---------------------------------------------------------------------
    def _resolve(self, path: str) -> Path:
        if not isinstance(path, str) or "\x00" in path:
            raise ToolError("invalid path")
        candidate = Path(path)
        if candidate.is_absolute():
            raise ToolError("paths must be relative to the repository root")
        real = Path(os.path.realpath(self.root / candidate))
        if real != self.root and self.root not in real.parents:
            raise ToolError(f"{path!r} is outside the repository")
        if self._is_refused(real):
            raise ToolError(f"{path!r} is not available (it contains the test being asked about)")
        if real != self.root and _artifact(real.relative_to(self.root).parts):
            raise ToolError(f"{path!r} is not available (build artefact)")
        return real

    def _is_refused(self, real: Path) -> bool:
        if real in self._copies:
            return False
        if real in self._refused:
            return True
        try:
            info = real.stat()
        except OSError:
            return False
        if (info.st_dev, info.st_ino) in self._inodes:
            return True  # a hard link of the test file
        return real.is_dir() and (real / "pyvenv.cfg").is_file() or any(
            (parent / "pyvenv.cfg").is_file() for parent in real.parents if self.root in parent.parents)

    def _copies_refused(self, text: str) -> bool:
        """The text holds a refused file's text or a copy of a test whose values the masked
        copy hides (one of its answer lines among half of its lines)."""
        if any(refused in text for refused in self._refused_texts):
            return True
        return agent_copy.holds_copy(text, self._signatures)

    def _text(self, real: Path) -> str:
        """A file's text as the agent sees it (the masked copy for the test module)."""
        if real in self._copies:
            return self._copies[real]
        return real.read_text(encoding="utf-8")

    def _rel(self, real: Path) -> str:
        return real.relative_to(self.root).as_posix() or "."

    # -- tools ------------------------------------------------------------------------------
    def list_dir(self, path: str = ".") -> list[str]:
        """Entries of a directory (directories end with '/')."""
        real = self._resolve(path)
        if not real.is_dir():
            raise ToolError(f"{path!r} is not a directory")
        out = []
        for entry in sorted(real.iterdir(), key=lambda p: p.name):
            if _artifact((entry.parent / entry.name).relative_to(self.root).parts):
                continue
            target = Path(os.path.realpath(entry))
            if (target != self.root and self.root not in target.parents) or self._is_refused(target):
                continue  # symlinks out of the tree and refused files are not shown
            out.append(self._rel(entry.parent / entry.name) + ("/" if target.is_dir() else ""))
            if len(out) >= MAX_LIST:
                out.append(f"... (more than {MAX_LIST} entries)")
                break
        return out

    def read_file(self, path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Lines ``start_line..end_line`` (1-based, inclusive) of a text file, numbered."""
        real = self._resolve(path)
        if not real.is_file():
            raise ToolError(f"{path!r} is not a file")
        if real.stat().st_size > MAX_FILE_BYTES:
            raise ToolError(f"{path!r} is too large to read")
        try:
            text = self._text(real)
        except UnicodeDecodeError:
            raise ToolError(f"{path!r} is not a text file") from None
        if real not in self._copies and self._copies_refused(text):
            raise ToolError(f"{path!r} is not available (it contains the test being asked about)")
        lines = text.splitlines()
        start = max(1, int(start_line))
        end = len(lines) if end_line is None else min(len(lines), int(end_line))
        out, size = [], 0
        for number in range(start, end + 1):
            line = f"{number:>5} | {lines[number - 1]}"
            size += len(line) + 1
            if size > MAX_READ_CHARS:
                out.append(f"... (output cut at {MAX_READ_CHARS} characters; read from line {number})")
                break
            out.append(line)
        return "\n".join(out)

    def search(self, pattern: str, path: str = ".", *, regex: bool = False, glob: str = "*.py") -> list[str]:
        """``file:line: text`` for lines matching ``pattern`` (a substring, or a regular
        expression with ``regex=True``) in files under ``path`` matching ``glob``."""
        if not pattern or len(pattern) > 200:
            raise ToolError("pattern must be 1 to 200 characters")
        try:  # RE2: linear time, no backreferences or lookaround
            matcher = re2.compile(pattern if regex else re.escape(pattern))
        except re2.error as exc:
            raise ToolError(f"bad or unsupported regular expression (RE2 syntax): {exc}") from None
        base = self._resolve(path)
        files = [base] if base.is_file() else sorted(base.rglob(glob))
        out: list[str] = []
        for file in files:
            if _artifact(file.relative_to(self.root).parts):
                continue
            real = Path(os.path.realpath(file))
            if (self.root not in real.parents) or self._is_refused(real) or not real.is_file():
                continue
            if real.stat().st_size > MAX_FILE_BYTES:
                continue
            try:
                text = self._text(real)
            except (UnicodeDecodeError, OSError):
                continue
            if real not in self._copies and self._copies_refused(text):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if matcher.search(line):
                    out.append(f"{self._rel(file)}:{number}: {line.strip()[:200]}")
                    if len(out) >= MAX_MATCHES:
                        out.append(f"... (more than {MAX_MATCHES} matches)")
                        return out
        return out
