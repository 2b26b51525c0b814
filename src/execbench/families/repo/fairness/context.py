"""The test-side definitions a question needs: what the prompt must carry beside the test function.

A test reads more of its module than the function: helpers and constants at module level
(boltons' ``NORM_DATA``, a ``_make_cache()`` helper), pytest fixtures defined in the module,
and for methods the class's ``setUp``/``setup_method`` (and those of base classes defined in
the module) and the helper methods it calls through ``self``. Without them the answer is
unknowable (the agent is refused the test file).

:func:`needed_definitions` follows the names the test function reads, transitively through
the definitions it finds (a static closure over the module: every definition the test's
dynamic slice can read on the test side is in it; it may hold more). :func:`render` prints
them in file order. The caller rejects a task whose context is over its token budget
(``context_too_large``).

Imports are not definitions here (the prompt shows the module's imports already); neither
are other test functions or test classes.

Beyond the module (:func:`outside_definitions`): pytest fixtures the test (or a carried
fixture) requests that live in a ``conftest.py`` of the test's directory or above, the
autouse fixtures of those conftests, and names imported from test-side files of the tree
(any ``.py`` in the repository outside the library's packages: ``from .helpers import
make_cache``, ``from tests.util import DATA``). They are carried too, under a ``# from
<file>`` line, with their own closure in their file. What cannot be found statically is a
rejection, never a silent gap: ``context_missing: fixture NAME`` (a requested fixture that no
module, test class or conftest defines and pytest does not provide), ``context_missing:
helper NAME from FILE`` (a test-side import whose definition is not in FILE),
``context_missing: test module NAME`` (a test-side module imported as a whole).

A module is parsed once per text (:func:`_parsed`, keyed on the text itself, not on a path:
a mutated test has the path of the original): both functions run for every candidate
assertion, and re-parsing a 7,000-line test module per assertion made the builder's cost
grow with assertions × lines (issue 26). The cached trees are shared and never mutated.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable

from execbench.families.repo.selection.assertions import TestFunction

SETUP_METHODS = ("setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class", "setup", "setUpTestData")
_BUILTINS = set(dir(builtins))
CHARS_PER_TOKEN = 4  # the budget's token estimate (no tokenizer dependency)


@dataclass(frozen=True)
class Definition:
    name: str
    node: ast.stmt
    kind: str  # "constant" | "helper" | "class" | "fixture" | "setup" | "method"


@lru_cache(maxsize=8)
def _parsed(source: str) -> tuple[ast.Module, dict[str, list[ast.stmt]]]:
    """The module's tree and its definitions (:func:`_module_definitions`), once per text."""
    tree = ast.parse(source)
    return tree, _module_definitions(tree)


@lru_cache(maxsize=8)
def _module_imports(source: str) -> tuple[dict[str, tuple[str, str | None, int]], list[tuple[str, int]]]:
    """:func:`_imports` of the module whose text is ``source``, once per text."""
    return _imports(_parsed(source)[0])


def _is_test_name(name: str) -> bool:
    return name.startswith("test") or name.startswith("Test")


def _is_fixture(node: ast.AST) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute) and target.attr == "fixture":
            return True
        if isinstance(target, ast.Name) and target.id == "fixture":
            return True
    return False


def _fixture_alias(node: ast.AST) -> list[str]:
    """The ``name=`` a fixture is requested by (attrs: ``@pytest.fixture(name="slots") def _slots``)."""
    if not _is_fixture(node):
        return []
    return [k.value.value for d in node.decorator_list if isinstance(d, ast.Call)  # type: ignore[attr-defined]  # a def
            for k in d.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)
            and isinstance(k.value.value, str)]


def _is_autouse(node: ast.AST) -> bool:
    if not _is_fixture(node):
        return False
    return any(isinstance(d, ast.Call) and any(k.arg == "autouse" and isinstance(k.value, ast.Constant)
                                               and k.value.value is True for k in d.keywords)
               for d in node.decorator_list)  # type: ignore[attr-defined]  # a fixture is a def


def _module_definitions(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    out: dict[str, list[ast.stmt]] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.If, ast.Try, ast.With)):
                for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                              *[h.body for h in getattr(node, "handlers", [])]):
                    visit(block)
                continue
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name, *_fixture_alias(node)]
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            for name in names:
                out.setdefault(name, []).append(node)

    visit(tree.body)
    return out


def _reads(node: ast.AST) -> set[str]:
    """Names a definition reads (loads), attribute names read through ``self``/``cls``."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
    return out


def _self_attributes(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id in ("self", "cls")}


def _within(node: ast.AST, spans: list[Any]) -> bool:
    pos = (node.lineno, node.col_offset)  # type: ignore[attr-defined]  # expression nodes carry positions
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]  # expression nodes carry positions
    return any((s.lineno, s.col) <= pos and end <= (s.end_lineno, s.end_col) for s in spans)


def needed_definitions(source: str, function: TestFunction, hidden: Iterable[Any] = (),
                       fixtures_run: Iterable[str] = ()) -> list[Definition]:
    """Module-level and class-level definitions the test function can read (see module doc).
    Names the function reads only inside ``hidden`` spans (the masked operands: the question
    and the other assertions' expected values) are not followed: ``NORM_DATA_OUTPUT`` in
    ``assert stats.format_histogram() == NORM_DATA_OUTPUT`` is the answer, not context.
    ``fixtures_run``: fixtures the test's run used that this module defines (``usefixtures``,
    ``pytestmark``, autouse: :mod:`.touched`), carried like requested ones."""
    module_defs = _parsed(source)[1]
    # module-level classes only (a class of the same name nested in some test is not a base)
    classes = {name: d for name, ds in module_defs.items() for d in ds if isinstance(d, ast.ClassDef)}
    found: dict[int, Definition] = {}
    todo: list[ast.AST] = [function.node]
    fixtures = {a.arg for a in function.node.args.args} | set(fixtures_run)
    # the class and its bases defined in this module: setUp methods and helpers through self
    chain: list[ast.ClassDef] = []
    if function.class_node is not None:
        pending = [function.class_node]
        while pending:
            cls = pending.pop(0)
            if cls in chain:
                continue
            chain.append(cls)
            pending += [classes[b.id] for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]
    methods: dict[str, tuple[str, ast.stmt]] = {}
    for cls in chain:
        for member in cls.body:
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.setdefault(member.name, (f"{cls.name}.{member.name}", member))
                if member.name in SETUP_METHODS and id(member) not in found and methods[member.name][1] is member:
                    found[id(member)] = Definition(f"{cls.name}.{member.name}", member, "setup")
                    todo.append(member)
            elif (isinstance(member, ast.Assign) or isinstance(member, ast.AnnAssign) and member.value is not None) \
                    and cls is not function.class_node:
                target = member.targets[0] if isinstance(member, ast.Assign) else member.target
                found.setdefault(id(member), Definition(f"{cls.name}.{ast.unparse(target)}", member, "constant"))
    for name in sorted(fixtures):  # fixtures defined as methods of the test class (or its bases)
        qual, method = methods.get(name, ("", None))
        if method is not None and _is_fixture(method) and id(method) not in found:
            found[id(method)] = Definition(qual, method, "fixture")
            todo.append(method)
    for nodes in module_defs.values():  # autouse fixtures run for every test of the module
        for d in nodes:
            if _is_autouse(d) and id(d) not in found:
                found[id(d)] = Definition(d.name, d, "fixture")  # type: ignore[attr-defined]  # a fixture is a def
                todo.append(d)
    seen_names: set[str] = set()
    while todo:
        node = todo.pop()
        names = _reads(node)
        if node is function.node:
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                     and not (hidden and _within(n, list(hidden)))} | fixtures
        for attr in _self_attributes(node):
            qual, method = methods.get(attr, ("", None))
            if method is not None and id(method) not in found and not _is_test_name(attr):
                found[id(method)] = Definition(qual, method, "method")
                todo.append(method)
        for name in names - seen_names:
            seen_names.add(name)
            if name in _BUILTINS and name not in module_defs:
                continue
            for d in module_defs.get(name, []):
                if d is function.node or id(d) in found:
                    continue
                if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test_name(d.name) \
                        and not _is_fixture(d):
                    continue
                if isinstance(d, ast.ClassDef) and (_is_test_name(d.name) or d in chain):
                    continue
                kind = ("fixture" if _is_fixture(d) else "helper" if isinstance(d, (ast.FunctionDef,
                        ast.AsyncFunctionDef)) else "class" if isinstance(d, ast.ClassDef) else "constant")
                if kind == "fixture" and name not in fixtures and name not in _reads(function.node):
                    continue
                found[id(d)] = Definition(name, d, kind)
                todo.append(d)
    return sorted(found.values(), key=lambda d: d.node.lineno)


def render(source: str, definitions: list[Definition]) -> str:
    """The definitions' source in file order (decorators included), one blank line apart."""
    parts = []
    for d in definitions:
        node = d.node
        first = min([node.lineno, *(x.lineno for x in getattr(node, "decorator_list", []))])
        lines = source.splitlines()[first - 1:node.end_lineno]
        text = "\n".join(lines)
        indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
        body = "\n".join(line[indent:] for line in text.splitlines()).rstrip()
        parts.append(f"# {d.name.rsplit('.', 1)[0]}:\n{body}" if "." in d.name else body)
    return "\n\n".join(parts)


def tokens(text: str) -> int:
    """The budget's estimate of a text's tokens."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN



# --- beyond the module: conftest.py fixtures and test-side imports ----------------------------

# Fixtures pytest itself provides (and those of pytest plugins every build installs): their
# behaviour is pytest's documented one, nothing of the repository.
PYTEST_FIXTURES = frozenset({
    "request", "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "monkeypatch", "capsys", "capsysbinary",
    "capfd", "capfdbinary", "caplog", "recwarn", "pytestconfig", "cache", "record_property",
    "record_testsuite_property", "record_xml_attribute", "doctest_namespace", "testdir", "pytester", "subtests"})
MAX_HOPS = 4  # files followed from the test module (helper of a helper of ...)


@dataclass(frozen=True)
class Outside:
    """A definition carried from another test-side file of the tree."""

    file: str  # relative to the repository root
    definition: Definition
    source: str  # that file's text


def _imports(tree: ast.Module) -> tuple[dict[str, tuple[str, str | None, int]], list[tuple[str, int]]]:
    """Import-bound module-level names → (module, imported name or None for a module, level),
    and the ``from M import *`` modules."""
    names: dict[str, tuple[str, str | None, int]] = {}
    stars: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    stars.append((node.module or "", node.level))
                else:
                    names.setdefault(alias.asname or alias.name, (node.module or "", alias.name, node.level))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names.setdefault(alias.asname, (alias.name, None, 0))
                else:
                    top = alias.name.split(".")[0]
                    names.setdefault(top, (top, None, 0))
    return names, stars


def _module_file(root: Path, importer: str, module: str, level: int) -> Path | None:
    """The file an import names, when it lies in the tree: relative imports from the
    importer's package, absolute ones from the importer's directory or any directory above
    it up to the root (pytest's ``prepend`` import mode and a ``src``-less layout)."""
    parts = [p for p in module.split(".") if p]
    here = (root / importer).parent
    if level:
        bases = [here.parents[level - 2] if level > 1 else here]
    else:
        bases = [*_dirs_up_to(root, importer), root / "src"]
    for base in bases:
        target = base.joinpath(*parts) if parts else base
        for candidate in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
            if candidate is not None and candidate.is_file():
                return candidate
    return None


def _dirs_up_to(root: Path, importer: str) -> list[Path]:
    """The importer's directory and each one above it, up to and including ``root``."""
    rel = PurePosixPath(importer)
    if rel.is_absolute() or ".." in rel.parts:  # not a plain path in the tree: compare as paths
        here = (root / importer).parent
        return [here, *[p for p in here.parents if p == root or root in p.parents]]
    parts = rel.parent.parts
    return [root.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def _locals(node: ast.AST) -> set[str]:
    out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = n.args
            out |= {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None}
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
            out.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    return out


def _fixture_args(node: ast.AST) -> set[str]:
    """The arguments pytest fills with fixtures: those without a default value (toolz's
    ``def test_is_valid(check_valid=is_valid_args)`` requests nothing)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    required = positional[:len(positional) - len(a.defaults)]
    required += [k for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    return {x.arg for x in required} - {"self", "cls"}


class _Files:
    """Parsed files of the tree, read once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._parsed: dict[str, tuple[str, ast.Module, dict[str, list[ast.stmt]]] | None] = {}

    def get(self, rel: str) -> tuple[str, ast.Module, dict[str, list[ast.stmt]]] | None:
        if rel not in self._parsed:
            try:
                text = (self.root / rel).read_text(encoding="utf-8")
                self._parsed[rel] = (text, *_parsed(text))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                self._parsed[rel] = None
        return self._parsed[rel]

    def conftests(self, rel: str) -> list[str]:
        """``conftest.py`` files that apply to ``rel``: its directory first, then upwards."""
        out = []
        here = (self.root / rel).parent
        for d in [here, *here.parents]:
            if d != self.root and self.root not in d.parents:
                break
            if (d / "conftest.py").is_file():
                out.append((d / "conftest.py").relative_to(self.root).as_posix())
        return out


def _resolve_import(root: Path, files: _Files, asker: str, name: str, source: str | None,
                    is_library: Callable[[str], bool]) -> tuple[str, str] | None:
    """Where the test-side definition of ``name`` (read in ``asker``, whose text is ``source``
    or else the file's) lives: (file, name there), ``("missing", reason)`` when it cannot be
    found, None when ``name`` is not test-side (an installed package, the library, a builtin
    or a local)."""
    if source is None:
        parsed = files.get(asker)
        imports, stars = _module_imports(parsed[0]) if parsed else ({}, [])
    else:
        imports, stars = _module_imports(source)
    if name in imports:
        module, attr, level = imports[name]
        target = _module_file(root, asker, module, level)
        if target is None:
            return ("missing", f"context_missing: helper {name} from .{module} (not found in the tree)") if level \
                else None
        path = target.relative_to(root).as_posix()
        if is_library(path):
            return None
        if attr is None:
            return "missing", f"context_missing: test module {name} ({path}) imported as a whole"
        sub = _module_file(root, path, attr, 1) if target.name == "__init__.py" else None
        if sub is not None and attr not in (files.get(path) or ("", None, {}))[2]:
            return "missing", (f"context_missing: test module {attr} ({sub.relative_to(root).as_posix()}) "
                               "imported as a whole")
        return path, attr
    for module, level in stars:  # maybe from a star import of a test-side module
        target = _module_file(root, asker, module, level)
        if target is not None and not is_library(target.relative_to(root).as_posix()):
            got = files.get(target.relative_to(root).as_posix())
            if got and name in got[2]:
                return target.relative_to(root).as_posix(), name
    return None


def outside_definitions(root: Path, rel: str, source: str, function: TestFunction, found: list[Definition],
                        is_library: Callable[[str], bool], hidden: Iterable[Any] = (),
                        parametrized: Iterable[str] = (),
                        fixtures_run: Iterable[tuple[str, str]] = ()) -> tuple[list[Outside], str | None]:
    """Definitions from other test-side files the test reads (module doc), and the
    ``context_missing`` reason when one cannot be found (then the list is partial).

    ``found`` is :func:`needed_definitions`' result for the module at ``rel`` (its text is
    ``source``, which may be a mutated text); ``is_library(rel)`` says whether a file of the
    tree belongs to the library (its imports are the library's API: not carried);
    ``parametrized`` names the test's parametrize arguments (not fixtures); ``fixtures_run``
    (name, file) are fixtures the test's run used from other files of the tree (:mod:`.touched`:
    ``usefixtures`` on a class, autouse at any level), carried from the file pytest took them from."""
    files = _Files(root)
    module_defs = _parsed(source)[1]
    hidden = list(hidden)
    reads = {n.id for n in ast.walk(function.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and not (hidden and _within(n, hidden))} - function.local_names
    for d in found:
        reads |= _reads(d.node) - _locals(d.node)
    fixtures = set(_fixture_args(function.node)) - set(parametrized)
    for d in found:
        if d.kind == "fixture":
            fixtures |= _fixture_args(d.node)
    defined_here = set(module_defs) | {d.name.rsplit(".", 1)[-1] for d in found}
    out: list[Outside] = []
    carried: set[tuple[str, int]] = set()
    # work items: (kind, name, file that asks, hops) with kind "import" or "fixture"
    located = {name for name, _path in fixtures_run}  # the run says where these are: carried from there
    work: list[tuple[str, str, str, int]] = [("fixture", f, rel, 0) for f in sorted(fixtures - defined_here - located)]
    work += [("import", n, rel, 0) for n in sorted(reads - defined_here - _BUILTINS)]
    work += [("carry", f"{path}:{name}", path, 1) for name, path in fixtures_run if path != rel]
    for path in files.conftests(rel):  # autouse fixtures of the conftests run for this test too
        parsed = files.get(path)
        for nodes in (parsed[2].values() if parsed else []):
            for autouse in nodes:
                if _is_autouse(autouse):
                    work.append(("carry", f"{path}:{autouse.name}", path, 1))  # type: ignore[attr-defined]  # a def
    done: set[tuple[str, str, str]] = set()
    while work:
        kind, name, asker, hops = work.pop(0)
        if (kind, name, asker) in done or hops > MAX_HOPS:
            continue
        done.add((kind, name, asker))
        if kind == "fixture":
            if name in PYTEST_FIXTURES:
                continue
            where = next((c for c in files.conftests(asker) if files.get(c) and any(
                _is_fixture(d) for d in files.get(c)[2].get(name, []))), None)  # type: ignore[index]  # checked
            if where is None:
                return out, f"context_missing: fixture {name} (no definition in the module, its class or a conftest.py)"
            kind, name, asker = "carry", f"{where}:{name}", where
        if kind == "carry":
            path, _, wanted = name.rpartition(":")
        else:
            found_at = _resolve_import(root, files, asker, name, source if asker == rel else None, is_library)
            if found_at is None:
                continue  # a builtin, a local of a carried def, an installed package or a library name
            if found_at[0] == "missing":
                return out, found_at[1]
            path, wanted = found_at
        parsed = files.get(path)
        nodes = parsed[2].get(wanted, []) if parsed else []
        if not nodes:
            if parsed and wanted in _module_imports(parsed[0])[0]:  # re-exported: follow the other file's import
                work.append(("import", wanted, path, hops + 1))
                continue
            return out, f"context_missing: helper {wanted} from {path}"
        text, ftree, fdefs = parsed  # type: ignore[misc]  # checked above
        todo = list(nodes)
        while todo:
            node = todo.pop()
            if (path, id(node)) in carried:
                continue
            carried.add((path, id(node)))
            label = getattr(node, "name", wanted)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                label = ", ".join(n.id for t in getattr(node, "targets", [getattr(node, "target", None)])
                                  if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)) or wanted
            dkind = ("fixture" if _is_fixture(node) else "helper" if isinstance(node, (ast.FunctionDef,
                     ast.AsyncFunctionDef)) else "class" if isinstance(node, ast.ClassDef) else "constant")
            out.append(Outside(path, Definition(label, node, dkind), text))
            for n in sorted(_reads(node) - _locals(node) - _BUILTINS):
                if n in fdefs:
                    todo += [d for d in fdefs[n] if (path, id(d)) not in carried]
                else:
                    work.append(("import", n, path, hops + 1))
            if dkind == "fixture":
                for f in sorted(_fixture_args(node)):
                    local = [d for d in fdefs.get(f, []) if _is_fixture(d)]
                    if local:
                        todo += [d for d in local if (path, id(d)) not in carried]
                    elif f not in located:
                        work.append(("fixture", f, path, hops + 1))
    return out, None


def _imports_read(source: str, nodes: list[ast.AST]) -> str:
    """The module-level imports of ``source`` that bind a name ``nodes`` read (issue 35: a carried
    conftest fixture's ``ZoneInfo``, ``datetime``), each narrowed to those names, in file order."""
    wanted = set().union(*(_reads(n) - _locals(n) for n in nodes)) if nodes else set()
    lines = []
    todo, statements = list(_parsed(source)[0].body), []
    while todo:  # module level, through if/try/with blocks (`try: from zoneinfo import ZoneInfo`)
        node = todo.pop(0)
        statements.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            todo[:0] = [*node.body, *getattr(node, "orelse", []), *[x for h in getattr(node, "handlers", [])
                                                                     for x in h.body], *getattr(node, "finalbody", [])]
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            kept = [a for a in node.names if a.name != "*" and (a.asname or a.name).split(".")[0] in wanted
                    and "pytest" not in (getattr(node, "module", None) or a.name).split(".")[:1]]
            if kept:
                copy = ast.ImportFrom(node.module, kept, node.level) if isinstance(node, ast.ImportFrom) \
                    else ast.Import(kept)
                lines.append(ast.unparse(copy))
    return "\n".join(lines)


def render_outside(outside: list[Outside]) -> str:
    """The carried outside definitions, file by file (``# from tests/conftest.py``), in file
    order, under the imports of that file they read."""
    by_file: dict[str, list[Outside]] = {}
    for o in outside:
        by_file.setdefault(o.file, []).append(o)
    parts = []
    for path in sorted(by_file):
        group = sorted(by_file[path], key=lambda o: o.definition.node.lineno)
        imports = _imports_read(group[0].source, [o.definition.node for o in group])
        body = render(group[0].source, [o.definition for o in group])
        parts.append(f"# from {path}\n" + (f"{imports}\n\n" if imports else "") + body)
    return "\n\n".join(parts)
