"""Structure measures of a source tree (issue 25): untyped records, deferred imports, long functions.

    python benchmarks/structure.py [SRC_DIR]          # default: src/execbench of this checkout

Prints, for the Python files under SRC_DIR: lines, ``dict[str, Any]`` and ``Any`` counts (and
``Any`` per 1,000 lines), the share of imports that sit inside functions (all, and of
``execbench`` imports), and the functions longer than 100 lines. Nothing is imported or run:
the files are read as text and with ``ast``. To measure an older commit, extract its tree
first: ``git archive COMMIT src | tar -x -C /tmp/old && python benchmarks/structure.py /tmp/old/src/execbench``.
Results: benchmarks/RESULTS.md ("Structure").
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

LONG = 100


def _imports(tree: ast.Module) -> tuple[int, int, int, int]:
    """(imports, of them inside a function, execbench imports, of them inside a function)."""
    module_level = set()
    for node in tree.body:  # module level, also under `if`/`try` at module level
        module_level.update(id(n) for n in ast.walk(node) if not isinstance(node, (ast.FunctionDef,
                                                                                   ast.AsyncFunctionDef,
                                                                                   ast.ClassDef)))
    total = deferred = internal = internal_deferred = 0
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        is_internal = bool(isinstance(node, ast.ImportFrom) and node.level) or \
            any(n.split(".")[0] == "execbench" for n in names)
        inside = id(node) not in module_level
        total += 1
        deferred += inside
        internal += is_internal
        internal_deferred += is_internal and inside
    return total, deferred, internal, internal_deferred


def measure(src: Path) -> dict[str, object]:
    lines = dict_any = any_count = 0
    counts = [0, 0, 0, 0]
    long_functions = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines += text.count("\n")
        dict_any += text.count("dict[str, Any]")
        any_count += len(re.findall(r"\bAny\b", text))
        tree = ast.parse(text, str(path))
        counts = [a + b for a, b in zip(counts, _imports(tree))]
        long_functions += [f"{path.relative_to(src)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
                           for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and node.end_lineno - node.lineno + 1 > LONG]
    total, deferred, internal, internal_deferred = counts
    return {"lines": lines, "dict[str, Any]": dict_any, "Any": any_count,
            "Any per 1,000 lines": round(1000 * any_count / lines, 1),
            "imports inside functions": f"{deferred}/{total} ({deferred / total:.0%})",
            "execbench imports inside functions": f"{internal_deferred}/{internal} ({internal_deferred / internal:.0%})",
            f"functions over {LONG} lines": long_functions}


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src" / "execbench"
    for key, value in measure(root).items():
        print(f"{key}: {value}")
