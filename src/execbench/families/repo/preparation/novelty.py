"""New-tests-only mode (``--set new_tests_only=true``): keep the assertions a release added.

A task of a release chosen from a date window survives when its assertion, masked value
included, does not stand anywhere in the test modules of the release uploaded last before
the window (:mod:`execbench.sources.index`); otherwise it is rejected
``existed_before: <version>`` (stage ``new-tests-only``).

"Stands" is compared on text, never by running the older release: an assertion's key is
its statement as ``ast.unparse`` prints it (formatting and quotes normalised), with every
name the test function binds exactly once to a literal replaced by that literal, so
``expected = [1, 2]; assert f() == expected`` is keyed ``assert f() == [1, 2]`` and a
changed ``expected`` makes the assertion new. The match is global over the older test
modules (a test moved to another file or renamed still existed). What it does not see:
values that come from ``@pytest.mark.parametrize`` rows or fixtures (a test whose
statement is unchanged but whose parameter rows grew counts as existing), and tests the
older sdist did not ship.

Both trees are unpacked sdists (hostile input): files are read with a size bound and only
parsed (``ast``), never imported; a file that does not parse is skipped.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from execbench.contract.jsontypes import JSONObject, as_object
from execbench.families.repo.selection import assertions as A

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_FILES = 5000
STAGE = "new-tests-only"
_TEST_DIRS = {"tests", "test", "testing"}
_TEST_NAME = re.compile(r"^(test_.*|.*_test|conftest)\.py$")


def _literal(node: ast.expr) -> bool:
    """A literal the test writes: constants and containers of them (signs included)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    return False


def literal_bindings(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Names the function stores exactly once, by a plain ``name = <literal>``."""
    stores: dict[str, int] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
    out: dict[str, ast.expr] = {}
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and stores.get(node.targets[0].id) == 1 and _literal(node.value)):
            out[node.targets[0].id] = node.value
    return out


class _Inline(ast.NodeTransformer):
    def __init__(self, bindings: dict[str, ast.expr]) -> None:
        self.bindings = bindings

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.bindings.get(node.id, node) if isinstance(node.ctx, ast.Load) else node


def statement_key(statement: ast.stmt, bindings: dict[str, ast.expr]) -> str:
    """The normalised text of an assertion statement with its literal-bound names inlined."""
    return ast.unparse(_Inline(bindings).visit(copy.deepcopy(statement)))


def assertion_keys(source: str) -> dict[tuple[str, int], str]:
    """(function qualname, first line of the statement) → key, for every assertion of a
    module; {} when the module does not parse."""
    try:
        functions = A.test_functions(source)
        out: dict[tuple[str, int], str] = {}
        for function in functions.values():
            bindings = literal_bindings(function.node)
            for assertion in function.assertions:
                if assertion.node is not None:
                    out[(function.qualname, assertion.span.lineno)] = statement_key(assertion.node, bindings)
        return out
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}


def test_side_files(root: Path) -> list[Path]:
    """Test modules and the helper modules beside them (any .py under a tests/test/testing
    directory, conftest.py, a root ``test*.py`` such as jsonpointer's ``tests.py``), never
    following a link out of the tree."""
    top = root.resolve()
    found: list[Path] = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") for p in parts[:-1]):
            continue
        if not (_TEST_NAME.match(path.name) or _TEST_DIRS & set(parts[:-1])
                or len(parts) == 1 and path.name.startswith("test")):
            continue
        try:
            if path.is_symlink() or not path.resolve().is_relative_to(top) or path.stat().st_size > MAX_FILE_BYTES:
                continue
        except OSError:
            continue
        found.append(path)
        if len(found) >= MAX_FILES:
            break
    return found


def tree_keys(root: Path) -> set[str]:
    """Every assertion key of a tree's test-side modules."""
    keys: set[str] = set()
    for path in test_side_files(root):
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        keys.update(assertion_keys(source).values())
    return keys


class NewTestsOnly:
    """The filter of one package: the new release's tree against the older release's keys."""

    def __init__(self, new_root: Path, old_keys: set[str], old_version: str) -> None:
        self.new_root, self.old_keys, self.old_version = new_root, old_keys, old_version
        self._modules: dict[str, dict[tuple[str, int], str]] = {}

    def key_of(self, task: JSONObject) -> str | None:
        fields = as_object(task["prompt_fields"])
        rel = fields.get("function_file") or fields.get("test_file")
        if not isinstance(rel, str):
            return None
        if rel not in self._modules:
            path = self.new_root / rel
            try:
                self._modules[rel] = assertion_keys(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self._modules[rel] = {}
        function, line = fields.get("function"), fields.get("assertion_line")
        if not isinstance(function, str) or not isinstance(line, int):
            return None
        return self._modules[rel].get((function, line))

    def split(self, tasks: list[JSONObject]) -> tuple[list[JSONObject], list[tuple[str, str]]]:
        """(tasks that survive, (task id, reason) of the others)."""
        kept: list[JSONObject] = []
        dropped: list[tuple[str, str]] = []
        for task in tasks:
            key = self.key_of(task)
            if key is None:
                dropped.append((str(task["id"]), "not_compared: the assertion was not found in the release's test text"))
            elif key in self.old_keys:
                dropped.append((str(task["id"]), f"existed_before: {self.old_version}"))
            else:
                kept.append(task)
        return kept, dropped
