"""Package lists as a repo source: ``execbench build repo list:FILE``.

FILE holds one ``name==version`` per line (``#`` starts a comment; blank lines are
skipped). Each package is one build candidate: the worker that builds it downloads the
sdist, prepares its venv and builds its test modules as ``pypi:name==version`` would be
built, all in the sandbox. A package that cannot be downloaded, installed or collected is
a rejection (stage ``package``, with the reason), never a failed build, so a list of 500
releases yields a dataset from the ones that work.

Caps keep one large package from dominating (0 = no cap):

- ``max_modules_per_package``: the first N test modules (in path order) are built;
- ``max_tasks_per_package``: the first N tasks (in module order) are kept.

What a cap leaves out is recorded as one rejection (stage ``cap``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

from execbench.families.base import Candidate, Outcome
from execbench.sources import repos
from execbench.sources.errors import SourceError

PREFIX = "list:"
_LINE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)$")

BuildFile = Callable[[repos.Repo, str, str, dict[str, Any]], Outcome]


def is_list(source: str) -> bool:
    return source.startswith(PREFIX)


def read_list(source: str) -> list[str]:
    """The ``pypi:name==version`` specs of ``list:FILE``, in file order, without repeats."""
    path = Path(source[len(PREFIX):]).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{source}: cannot read the package list: {exc}") from None
    specs: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if not match:
            raise SourceError(f"{path}, line {number}: expected name==version, got {line!r}")
        spec = f"pypi:{match['name']}=={match['version']}"
        if spec not in specs:
            specs.append(spec)
    if not specs:
        raise SourceError(f"{path}: the package list is empty")
    return specs


def list_candidates(source: str) -> Iterator[Candidate]:
    for spec in read_list(source):
        yield Candidate(key=f"package/{spec[len('pypi:'):]}", payload={"package": spec})


def build_package(spec: str, options: dict[str, Any], build_file: BuildFile) -> Outcome:
    """Every test module of one package (within the caps), or one rejection saying why not."""
    outcome = Outcome()
    try:
        repo = repos.prepare(spec, full=bool(options.get("full")))
        test_files = repo.test_files()
    except (SourceError, OSError) as exc:
        outcome.reject(spec, "package", str(exc)[:2000])
        return outcome
    if not test_files:
        outcome.reject(spec, "package", "no test modules found in the source distribution")
        return outcome
    module_cap = int(options.get("max_modules_per_package") or 0)
    task_cap = int(options.get("max_tasks_per_package") or 0)
    chosen = test_files[:module_cap] if module_cap else test_files
    skipped_modules = len(test_files) - len(chosen)
    skipped_tasks = 0
    for path in chosen:
        rel = path.relative_to(repo.root).as_posix()
        if task_cap and len(outcome.tasks) >= task_cap:
            skipped_modules += 1
            continue
        try:
            part = build_file(repo, rel, path.read_text(encoding="utf-8"), options)
        except (SourceError, OSError, UnicodeDecodeError) as exc:
            outcome.reject(f"{spec}/{rel}", "package", f"module not built: {exc}"[:2000])
            continue
        room = task_cap - len(outcome.tasks) if task_cap else len(part.tasks)
        outcome.tasks += part.tasks[:room]
        skipped_tasks += len(part.tasks) - min(room, len(part.tasks))
        outcome.rejected += part.rejected
    if skipped_modules or skipped_tasks:
        outcome.reject(spec, "cap", f"package caps (max_modules_per_package={module_cap}, "
                                    f"max_tasks_per_package={task_cap}): {skipped_modules} test modules "
                                    f"and {skipped_tasks} tasks left out")
    return outcome
