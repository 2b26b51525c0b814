"""API-call sequence preservation (paper 000, appendix D.3).

The calls a test makes to the code under test are recorded from the original test
function: free functions (``solve(...)``), methods (``expr.rewrite(...)``) and constructors
(``FiniteSet(...)``), by the name before the opening parenthesis, in source order.
Builtins, ``print``, assertion helpers (``self.assert*``, ``pytest.*``) and calls of the
function's own local names are not API calls. A mutant preserves the sequence when every
recorded name appears in it as a callable occurrence (``name(``, the paper's regex check)
and the names' first occurrences keep their order.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

_HELPERS = re.compile(r"^(assert\w*|fail\w*|skipTest|subTest|addCleanup|raises|warns|approx|deprecated_call|"
                      r"mark|param|fixture|skip|xfail|importorskip)$")
_BUILTINS = frozenset(dir(builtins))


def _callee(call: ast.Call) -> tuple[str, str | None] | None:
    """(name, receiver) of a call: ``f(...)`` -> ("f", None), ``a.b.m(...)`` -> ("m", "a")."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id, None
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return func.attr, root.id if isinstance(root, ast.Name) else None
    return None


def _is_assertion(stmt: ast.AST) -> bool:
    if isinstance(stmt, ast.Assert):
        return True
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr.startswith(("assert", "fail")))


def _walk(node: ast.AST, skip_assertions: bool):
    for child in ast.iter_child_nodes(node):
        if skip_assertions and _is_assertion(child):
            continue
        yield child
        yield from _walk(child, skip_assertions)


def api_calls(function: ast.FunctionDef | ast.AsyncFunctionDef, *, skip_assertions: bool = False) -> list[str]:
    """The API call names of a test function in call order (repeats kept). With
    ``skip_assertions``, calls inside assertion statements are left out: probes replace
    assertions, and the expected operand's constructors follow the new value."""
    params = {a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]}
    locals_ = {n.name for n in ast.walk(function) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n is not function}
    locals_ |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    calls = []
    for node in _walk(function, skip_assertions):
        if not isinstance(node, ast.Call):
            continue
        callee = _callee(node)
        if callee is None:
            continue
        name, receiver = callee
        if name == "print" or _HELPERS.match(name) or receiver in ("pytest", "unittest"):
            continue
        if receiver is None and (name in _BUILTINS or name in locals_ or name in params):
            continue
        if name.startswith("__execbench"):
            continue
        # a call completes after its receiver and arguments: end positions give call order
        calls.append((node.end_lineno, node.end_col_offset, name))
    return [name for _, _, name in sorted(calls)]


@dataclass
class Preservation:
    preserved: bool
    missing: list[str] = field(default_factory=list)
    order_ok: bool = True
    original: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)

    def message(self) -> str:
        if self.preserved:
            return "API calls preserved"
        parts = []
        if self.missing:
            parts.append(f"missing API calls: {', '.join(self.missing)}")
        if not self.order_ok:
            parts.append(f"API calls reordered (required order of first calls: {', '.join(dict.fromkeys(self.original))})")
        return "; ".join(parts)


def check_preserved(original: list[str], mutated_text: str,
                    mutated_function: ast.FunctionDef | ast.AsyncFunctionDef | None = None) -> Preservation:
    """Every original call name occurs as ``name(`` in the mutant, first occurrences in order."""
    wanted = list(dict.fromkeys(original))
    missing = [n for n in wanted if not re.search(rf"(?<![\w]){re.escape(n)}\s*\(", mutated_text)]
    order_ok = True
    mutated: list[str] = []
    if mutated_function is not None:
        mutated = api_calls(mutated_function)
        firsts = [n for n in dict.fromkeys(mutated) if n in wanted]
        expected = [n for n in wanted if n in firsts]
        order_ok = firsts == expected
    return Preservation(not missing and order_ok, missing, order_ok, list(original), mutated)
