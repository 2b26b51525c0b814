"""Structure measures of a source tree (issue 25): untyped records, deferred imports, long functions.

    python benchmarks/structure.py [SRC_DIR]          # default: src/execbench of this checkout

Prints, for the Python files under SRC_DIR: lines, ``dict[str, Any]`` and ``Any`` counts (and
``Any`` per 1,000 lines), the substitutes of ``dict[str, Any]`` that would game its count, each
kind apart (``SUBSTITUTES``; an alias counts once per use; the project's JSON type,
``execbench.contract.jsontypes``, is not one), the share of imports that sit inside functions (all, and of
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

# Spellings of an untyped record other than ``dict[str, Any]`` (issue 25 counts them too):
# the other generic names, ``dict[str, object]``, and aliases of any of them
# (``Record = dict[str, Any]``, ``Row: TypeAlias = Mapping[str, Any]``).
SUBSTITUTES = {
    "Mapping[str, Any]": re.compile(r"(?<![\w.])(?:typing\.|abc\.)?Mapping\[str, Any\]"),
    "MutableMapping[str, Any]": re.compile(r"\bMutableMapping\[str, Any\]"),
    "Dict[str, Any]": re.compile(r"\bDict\[str, Any\]"),
    "dict[str, object]": re.compile(r"\b[dD]ict\[str, object\]"),
}
_UNTYPED = r"(?:(?:typing\.)?(?:(?:dict|Dict|Mapping|MutableMapping)\[str, Any\]|[dD]ict\[str, object\]))"
# shown apart, not counted: a read-only map of values that must be narrowed before use
READ_ONLY = re.compile(r"(?<![\w.])(?:typing\.|abc\.)?Mapping\[str, object\]")
# NAME = <untyped>, NAME: TypeAlias = <untyped>, type NAME = <untyped> (optionally quoted or `| None`)
ALIAS = re.compile(rf"^\s*(?:type\s+)?([A-Za-z_]\w*)\s*(?::\s*(?:typing\.)?TypeAlias\s*)?=\s*[\"']?{_UNTYPED}"
                   rf"[\"']?\s*(?:\|\s*None\s*)?(?:#.*)?$", re.MULTILINE)


ALIAS_USES = "uses of an alias of an untyped map"


def substitutes(text: str) -> dict[str, int]:
    """How often ``text`` spells an untyped record some other way than ``dict[str, Any]``
    (aliases apart: :func:`alias_uses`)."""
    return {name: len(pattern.findall(text)) for name, pattern in SUBSTITUTES.items()}


def alias_uses(texts: list[str]) -> int:
    """Uses of the names defined as aliases of an untyped map anywhere in ``texts`` (their
    definitions themselves are counted by what they spell)."""
    aliases = {name for text in texts for name in ALIAS.findall(text)}
    if not aliases:
        return 0
    word = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(aliases)))})\b")
    return sum(len(word.findall(text)) for text in texts) - sum(len(ALIAS.findall(text)) for text in texts)


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
    substituted = dict.fromkeys(SUBSTITUTES, 0)
    texts = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        texts.append(text)
        lines += text.count("\n")
        dict_any += text.count("dict[str, Any]")
        any_count += len(re.findall(r"\bAny\b", text))
        for name, count in substitutes(text).items():
            substituted[name] += count
        tree = ast.parse(text, str(path))
        counts = [a + b for a, b in zip(counts, _imports(tree))]
        long_functions += [f"{path.relative_to(src)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1})"
                           for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and node.end_lineno - node.lineno + 1 > LONG]
    substituted[ALIAS_USES] = alias_uses(texts)
    total, deferred, internal, internal_deferred = counts
    return {"lines": lines, "dict[str, Any]": dict_any,
            **{f"substitute {name}": count for name, count in substituted.items()},
            "dict[str, Any] and its substitutes": dict_any + sum(substituted.values()),
            "Mapping[str, object] (not counted)": sum(len(READ_ONLY.findall(text)) for text in texts),
            "Any": any_count,
            "Any per 1,000 lines": round(1000 * any_count / max(lines, 1), 1),
            "imports inside functions": f"{deferred}/{total} ({deferred / max(total, 1):.0%})",
            "execbench imports inside functions": f"{internal_deferred}/{internal} ({internal_deferred / max(internal, 1):.0%})",
            f"functions over {LONG} lines": long_functions}


def _public_members(node: ast.ClassDef) -> list[str]:
    """The public names a class body defines: methods, assignments and annotations (issue 36)."""
    names: list[str] = []
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.append(item.target.id)
        elif isinstance(item, ast.Assign):
            names += [t.id for t in item.targets if isinstance(t, ast.Name)]
    return sorted({n for n in names if not n.startswith("_")})


def contract_size(src: Path) -> dict[str, object]:
    """The plug-in contract's size (issue 36): ``Family``'s public members, the capability classes
    (``contract/capabilities.py``; before issue 36 there were none) and ``AnalysisFacts``' fields."""
    classes = {node.name: node for path in (src / "contract").glob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ClassDef)}
    capabilities = sorted(name for name, node in classes.items()
                          if any(isinstance(b, ast.Name) and b.id == "Capability" for b in node.bases))
    family = _public_members(classes["Family"]) if "Family" in classes else []
    facts = _public_members(classes["AnalysisFacts"]) if "AnalysisFacts" in classes else []
    return {"Family public members": len(family), "capability kinds": f"{len(capabilities)} {capabilities}",
            "AnalysisFacts fields": len(facts)}


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src" / "execbench"
    for key, value in {**measure(root), **contract_size(root)}.items():
        print(f"{key}: {value}")
