"""Which Python programs may see hash order, and so get extra determinism runs (issue 33).

``PYTHONHASHSEED`` changes ``hash()`` of str, bytes and what is built from them, and with
it the iteration order of sets and frozensets (dicts keep insertion order). A program whose
answer follows that order agrees with the key run under one check seed about half of the
time: with two check runs it is admitted 1 time in 4. The families give a *suspect* program
:data:`execbench.contract.hashseeds.MIN_CHECKS` check runs in all (1 in 32), the others the
``repeats`` runs they ask for.

A program is a suspect unless its source shows none of the ways to build or reach a
hash-ordered container or a hash value (conservative: a false suspect only costs runs):
set displays and comprehensions; the names ``set``, ``frozenset``, ``hash``; attributes
that make sets from dict views or sets (``keys``, ``items``, ``values``, ``union``, ...);
dynamic access that could reach any of them (``getattr``, ``eval``, ``exec``, ``vars``,
``globals``, ``__dict__``, ``__builtins__``, ``__import__``, ...); any import but a short
list of modules that hand out no set; and a source that does not parse.
"""

from __future__ import annotations

import ast

NAMES = frozenset({
    "set", "frozenset", "hash", "__hash__", "getattr", "eval", "exec", "compile", "vars", "globals",
    "locals", "__builtins__", "__import__", "__dict__", "__class__", "__subclasses__", "__globals__",
    "builtins", "importlib", "breakpoint",
})
ATTRIBUTES = frozenset({
    "keys", "items", "values", "union", "intersection", "difference", "symmetric_difference",
    "isdisjoint", "issubset", "issuperset", "__hash__", "__dict__", "__class__", "__globals__",
    "__builtins__", "__subclasses__", "f_globals", "f_locals", "f_builtins", "gi_frame", "tb_frame",
})
# Modules whose functions hand out no set or hash value a program could iterate unseen.
MODULES = frozenset({"math", "cmath", "re", "string", "itertools", "functools", "operator", "heapq",
                     "bisect", "typing", "collections", "fractions", "decimal", "statistics", "random",
                     "copy", "dataclasses", "enum", "abc", "array", "numbers", "__future__", "sys"})


def may_see_hash_order(source: str) -> bool:
    """True unless ``source`` shows none of the ways to reach hash order (module docs)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, (ast.Set, ast.SetComp)):
            return True
        if isinstance(node, ast.Name) and node.id in NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in ATTRIBUTES | NAMES:
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] not in MODULES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] not in MODULES):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in NAMES | ATTRIBUTES:
            return True
    return False
