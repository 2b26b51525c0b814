"""Grading a repo answer as the test's assertion judges it, in the package's environment, in
the sandbox (issue 35).

The literal comparison (:func:`compare.grade_answer`) is the fast path and decides every
answer it calls right, and every answer where both texts are plain literals. When it calls an
answer wrong and either text is not a plain literal (a constructor call such as
``OrderedSet('abrcd')`` for ``OrderedSet(['a', 'b', 'r', 'c', 'd'])``, keyword arguments,
``tzinfo='UTC'``, a plain list the type's ``==`` accepts, another name of the value), the
answer is judged by execution:

1. **In the grader's process nothing runs.** The answer is parsed with the size-bounded
   parser (:func:`compare.bounded_parse`) and checked against a whitelist
   (:func:`_answer_eval.check`): literals, containers, signed numbers, names the test module
   imports (its top-level ``import``/``from ... import`` statements, read with ``ast``) or a
   pure builtin (``_answer_eval.SAFE_BUILTINS``: the builtin types, ``range``, ``reversed``,
   ``sorted``, ``len``, ``min``, ``max``, ``abs``), attribute chains on them without ``_``-prefixed parts, calls of those with
   such arguments (keywords, no ``*``/``**``). Anything else stays wrong (``refused``).
2. **In the sandbox**, one job of the job runner under the venv the build made for the
   package (``sources.repos.existing``: found in the build cache, nothing installed): the
   test module's import statements run, the key and the answer are rebuilt from their AST
   by the same whitelist (never ``eval``), and compared with the assertion's operator in its
   operand order (``key == answer`` for ``assert actual == ___``). An answer equal to an
   unrelated sentinel object is wrong (``equal_to_everything``). CPU 20 s, wall 40 s, 2 GiB.
3. The verdict is ``details["execution"]``: ``executed`` (the comparison decided),
   ``refused``, ``answer_raised``, ``compare_raised``, ``equal_to_everything``, ``key_error``
   / ``key_refused`` (the key does not rebuild in the package: the literal verdict stands), ``unavailable``
   (no venv in the build cache, or ``EXECBENCH_REPO_EXEC_GRADING=0``: the literal verdict
   stands, flagged), ``sandbox_failed``.

The key stands in for the test's actual value: it passed the real assertion when the task
was built, so ``key == answer`` is the question "would the assertion pass with this
answer" whenever the type's ``==`` is transitive, which the admission gate's wrong values
already assume.
"""

from __future__ import annotations

import ast
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from execbench.families.repo.grading import _answer_eval

SCRIPT = "_execbench_answer_eval.py"
RESULT = "result.json"
CPU_SECONDS = 20.0
WALL_SECONDS = 40.0
MEMORY_MB = 2048
SWITCH = "EXECBENCH_REPO_EXEC_GRADING"  # "0": literal grading only


def non_literal(c: Any) -> bool:
    """A canonical form (:func:`compare.canonical`) that holds a call or a name somewhere: its
    value is the package's to decide."""
    todo = [c]
    while todo:
        cur = todo.pop()
        if isinstance(cur, tuple) and cur:
            if cur[0] in ("call", "name"):
                return True
            todo.extend(x for x in cur if isinstance(x, tuple))
    return False


def test_imports(source: str) -> tuple[list[list[Any]], set[str], bool]:
    """The test module's absolute imports at module level (also under a top-level ``if``/``try``)
    as the sandboxed script takes them (``[module, [[name, asname], ...]]`` or ``[module, None,
    asname]``), the names they bind, and whether one is a star import."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], set(), False
    todo: list[ast.stmt] = list(tree.body)
    imports: list[list[Any]] = []
    names, star = set(), False
    while todo:
        stmt = todo.pop(0)
        if isinstance(stmt, (ast.If, ast.Try)):
            todo[:0] = [*stmt.body, *getattr(stmt, "orelse", []), *[s for h in getattr(stmt, "handlers", [])
                                                                     for s in h.body]]
            continue
        if isinstance(stmt, ast.Import):
            imports += [[a.name, None, a.asname] for a in stmt.names]
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            imports.append([stmt.module, [[a.name, a.asname] for a in stmt.names]])
            star |= any(a.name == "*" for a in stmt.names)
            names |= {a.asname or a.name for a in stmt.names if a.name != "*"}
    return imports, names, star


def _field(task: Any, name: str) -> Any:
    return task.get(name) if isinstance(task, Mapping) else getattr(task, name, None)


def judge(task: Any, answer: str, tree: ast.expr) -> tuple[bool | None, str, str]:
    """(the assertion's verdict or None when execution did not decide, the ``execution``
    word of the module doc, a detail). ``tree``: the answer as the size-bounded parser
    (:func:`compare.bounded_parse`) read it."""
    if os.environ.get(SWITCH, "1") == "0":
        return None, "unavailable", f"{SWITCH}=0"
    fields = _field(task, "prompt_fields") or {}
    provenance = _field(task, "provenance") or {}
    if not isinstance(fields, Mapping) or not isinstance(provenance, Mapping):
        return None, "unavailable", "no task fields"
    op = provenance.get("operator")
    if op not in ("==", "is"):
        return None, "unavailable", f"operator {op!r}"
    spec, rel = fields.get("repo_spec"), fields.get("function_file") or fields.get("test_file")
    if not isinstance(spec, str) or not isinstance(rel, str):
        return None, "unavailable", "no repository recorded"
    try:
        names = _allowed_names(spec, rel)
        if names is not None:
            _answer_eval.check(ast.Expression(tree), names)
    except (_answer_eval.Refused, RecursionError) as exc:
        return False, "refused", str(exc)[:300]
    return _judged(spec, rel, str(_field(task, "answer")), answer, op, str(provenance.get("masked_side", "right")))


def _allowed_names(spec: str, rel: str) -> set[str] | None:
    """The names the task's test module imports (every name when it star-imports: the sandbox
    checks them against what was imported); None when the repository is not in the cache."""
    found = _module(spec, rel)
    if found is None:
        return None
    _, _, names, star = found
    return _Everything() if star else names


@lru_cache(maxsize=256)
def _module(spec: str, rel: str) -> tuple[Any, Path, set[str], bool] | None:
    """(the cached repository, its test module's path, the names its imports bind, star)."""
    from execbench.sources import repos

    repo = repos.existing(spec)
    if repo is None:
        return None
    path = (repo.root / rel).resolve()
    if not repos.inside(path, repo.root) or not path.is_file():
        return None
    _, names, star = test_imports(path.read_text(encoding="utf-8", errors="replace"))
    return repo, path, names, star


@lru_cache(maxsize=4096)
def _judged(spec: str, rel: str, key: str, answer: str, op: str, side: str) -> tuple[bool | None, str, str]:
    found = _module(spec, rel)
    if found is None:
        return None, "unavailable", "the package's venv is not in the build cache (literal grading only)"
    repo, path, _, _ = found
    imports, _, _ = test_imports(path.read_text(encoding="utf-8", errors="replace"))
    return _run(repo, path, {"imports": imports, "key": key, "answer": answer, "op": op, "masked_side": side})


def clear_caches() -> None:
    """Forget cached verdicts and repositories (a cache directory changed)."""
    _judged.cache_clear()
    _module.cache_clear()


class _Everything(set):  # a star import: the sandbox checks the names against the namespace
    def __contains__(self, item: object) -> bool:
        return True


def _run(repo: Any, test_path: Path, request: dict[str, Any]) -> tuple[bool | None, str, str]:
    from execbench.sandbox import records
    from execbench.sandbox.jobs import Job, run_jobs

    script = Path(_answer_eval.__file__).read_text(encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([".", str(repo.import_root), str(repo.root), str(test_path.parent)]),
           "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", **repo.run_env()}
    job = Job("answer", "exec", args={"argv": [str(repo.python), SCRIPT], "env": env},
              files={SCRIPT: script, "request.json": json.dumps(request)}, collect=[RESULT],
              cpu_seconds=CPU_SECONDS, wall_seconds=WALL_SECONDS, memory_mb=MEMORY_MB, max_output=1 << 16,
              output_is_limit=False, max_collect=1 << 16)
    result = run_jobs([job], read_only_paths=[str(repo.root), str(repo.import_root)], max_tasks=32)[0]
    raw = result.files.get(RESULT)
    if raw is None:
        return None, "sandbox_failed", result.reason()[:300]
    try:
        value = records.check(json.loads(raw.decode("utf-8")), {"equal": bool, "how": str}, {"error": str})
    except (ValueError, UnicodeDecodeError, records.RecordError) as exc:
        return None, "sandbox_failed", f"bad result: {exc}"[:300]
    how, error = value["how"][:40], value.get("error", "")[:300]
    if how == "executed":
        return value["equal"], how, ""
    if how in ("key_error", "key_refused"):
        return None, how, error
    return False, how, error
