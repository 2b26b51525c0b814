"""Every third-party module the product imports is declared in pyproject.toml.

An undeclared dependency works on a machine that happens to have it and crashes for a
new user (sympy once did: issue 18). The check reads the imports of ``src/execbench``
with ``ast`` and maps each top-level module to the distribution that provides it in the
running environment.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "execbench"

# Modules imported only by code that runs inside a repository's own virtual environment
# (the repo family's pytest plugin): they are the repository's test dependencies, not ours.
RUN_IN_REPO_VENV = {"pytest": {"families/repo/verification/_plugin.py"}}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_distributions(extra: str | None = None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {_normalise(re.match(r"[A-Za-z0-9_.\-]+", spec).group(0)) for spec in specs}


# Modules only a type checker has (typeshed's stub-only helpers, imported under TYPE_CHECKING):
# part of every type checker's standard library, installed by no distribution.
TYPE_CHECKER_ONLY = {"_typeshed"}


def third_party_imports(root: Path) -> dict[str, set[str]]:
    """Top-level module -> the files (relative to ``root``) that import it."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if "fixtures" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in TYPE_CHECKER_ONLY and top != "execbench":
                    found.setdefault(top, set()).add(path.relative_to(root).as_posix())
    return found


def undeclared(imports: dict[str, set[str]], declared: set[str]) -> list[str]:
    providers = importlib.metadata.packages_distributions()
    problems = []
    for module, files in sorted(imports.items()):
        files = files - RUN_IN_REPO_VENV.get(module, set())
        if not files:
            continue
        dists = {_normalise(d) for d in providers.get(module, [])}
        if not dists:
            problems.append(f"{module} (imported by {sorted(files)}) is not installed by any declared package")
        elif not dists & declared:
            problems.append(f"{module} (imported by {sorted(files)}) comes from {sorted(dists)}, not declared")
    return problems


def optional_extras() -> list[str]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return [name for name in extras if name != "test"]


def test_product_imports_are_declared():
    imports = third_party_imports(SRC)
    assert {"inspect_ai", "sympy", "numpy"} <= set(imports)  # the scan sees real imports
    declared = declared_distributions().union(*(declared_distributions(e) for e in optional_extras()))
    assert undeclared(imports, declared) == []


def test_optional_extras_are_imported_lazily():
    """A module from an optional extra (ray) is imported inside functions only, so that
    `import execbench...` works without the extra."""
    extra_dists = set().union(*(declared_distributions(e) for e in optional_extras()))
    providers = importlib.metadata.packages_distributions()
    eager = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:  # module level only
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
            for name in names:
                dists = {_normalise(d) for d in providers.get(name.split(".")[0], [])}
                if dists & extra_dists and not dists & declared_distributions():
                    eager.append(f"{path.relative_to(SRC)} imports {name} at module level")
    assert eager == []


def test_test_imports_are_declared():
    imports = third_party_imports(ROOT / "tests")
    # the tests' own helper modules, imported by name from their folders
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}
    imports = {m: f for m, f in imports.items() if m not in local}
    declared = declared_distributions() | declared_distributions("test")
    assert undeclared(imports, declared) == []


def test_the_check_fails_on_an_undeclared_module(tmp_path):
    (tmp_path / "uses_sympy.py").write_text("import sympy\nfrom json import dumps\n")
    problems = undeclared(third_party_imports(tmp_path), declared_distributions() - {"sympy"})
    assert len(problems) == 1 and problems[0].startswith("sympy ")
    (tmp_path / "ghost.py").write_text("import no_such_module_anywhere\n")
    problems = undeclared(third_party_imports(tmp_path), declared_distributions())
    assert any(p.startswith("no_such_module_anywhere ") for p in problems)
