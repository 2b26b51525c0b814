"""``DEBUG_RESULT`` probes (paper 000, appendix D.4): format correction, capture rewriting,
and parsing captured output. Parent side: teacher code is parsed with ``ast`` (size-capped),
never executed here.

The mandatory probe form is ``print(f"DEBUG_RESULT: {expr}")``. :func:`fix_probe_format`
rewrites the common deviations (``print("DEBUG_RESULT:", x)``, ``"DEBUG_RESULT: " + str(x)``,
``"DEBUG_RESULT: {}".format(x)``, ``"DEBUG_RESULT: %s" % x``, a missing space) into it.
:func:`route_probes` routes each probe's value through the repo family's probe helper so the
sandboxed run records it structurally (``repr`` literal, sympy text, type), next to the
printed text. :func:`parse_debug_results` reads printed probes from raw output in the three
forms of D.4.2: a standalone line, a line where the marker is embedded in other output
(pytest progress), and a multi-line value continued until its brackets balance.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass

from execbench.errors import InternalError

PREFIX = "DEBUG_RESULT:"
CANONICAL = PREFIX + " "
MAX_CODE_CHARS = 64_000
MAX_VALUE_LINES = 200
_OPEN, _CLOSE = "([{", ")]}"


class ProbeError(InternalError, ValueError):
    """Teacher code that cannot be used (does not parse, too large, no target function)."""


def parse_code(code: str, what: str = "teacher code") -> ast.Module:
    if len(code) > MAX_CODE_CHARS:
        raise ProbeError(f"{what} is too long ({len(code)} characters > {MAX_CODE_CHARS})")
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ProbeError(f"{what} does not parse: {exc}") from None


_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.S | re.I)


def extract_code(reply: str) -> str:
    """The code of a teacher reply: the longest fenced block, else the whole reply."""
    blocks = _FENCE.findall(reply or "")
    text = max(blocks, key=len) if blocks else (reply or "")
    return text.strip("\n") + "\n"


# -- probe statements --------------------------------------------------------------------

def _is_print(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"


def _mentions_marker(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str) and "DEBUG_RESULT" in n.value
               for n in ast.walk(node))


def canonical_probe(node: ast.AST) -> ast.expr | None:
    """The probed expression of ``print(f"DEBUG_RESULT: {expr}")`` (None if not that form)."""
    if not isinstance(node, ast.Call) or not _is_print(node) or len(node.args) != 1 or node.keywords:
        return None
    arg = node.args[0]
    if not isinstance(arg, ast.JoinedStr) or len(arg.values) != 2:
        return None
    head, value = arg.values
    if not (isinstance(head, ast.Constant) and head.value == CANONICAL and isinstance(value, ast.FormattedValue)):
        return None
    if value.conversion != -1 or value.format_spec is not None:
        return None
    return value.value


def probes(tree: ast.AST) -> list[ast.Call]:
    """Canonical probe calls in source order."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and canonical_probe(n) is not None]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def marker_prints(tree: ast.AST) -> list[ast.Call]:
    """Every ``print`` that mentions DEBUG_RESULT (canonical or not)."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_print(n) and _mentions_marker(n)]


def _fstring(expr: ast.expr) -> str | None:
    text = ast.unparse(expr)
    if "\\" in text or "\n" in text:
        return None
    for quote in ('"', "'"):
        if quote not in text:
            return f"print(f{quote}{CANONICAL}{{{text}}}{quote})"
    return None


def _deviation(call: ast.Call) -> ast.expr | None:
    """The probed expression of a non-canonical DEBUG_RESULT print, when it is clear."""
    args = call.args
    if len(args) == 2 and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) \
            and args[0].value.strip() == PREFIX:
        return args[1]  # print("DEBUG_RESULT:", x)
    if len(args) != 1:
        return None
    arg = args[0]
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add) and isinstance(arg.left, ast.Constant) \
            and isinstance(arg.left.value, str) and arg.left.value.strip() == PREFIX:
        right = arg.right  # "DEBUG_RESULT: " + str(x) / + repr(x) / + x
        if isinstance(right, ast.Call) and isinstance(right.func, ast.Name) and right.func.id == "str" \
                and len(right.args) == 1 and not right.keywords:
            return right.args[0]
        return right
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod) and isinstance(arg.left, ast.Constant) \
            and isinstance(arg.left.value, str) and re.fullmatch(r"DEBUG_RESULT:\s*%[sr]", arg.left.value):
        right = arg.right
        if isinstance(right, ast.Tuple) and len(right.elts) == 1:
            return right.elts[0]
        return right  # "DEBUG_RESULT: %s" % x
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "format" \
            and isinstance(arg.func.value, ast.Constant) and isinstance(arg.func.value.value, str) \
            and re.fullmatch(r"DEBUG_RESULT:\s*\{\}", arg.func.value.value) and len(arg.args) == 1:
        return arg.args[0]  # "DEBUG_RESULT: {}".format(x)
    if isinstance(arg, ast.JoinedStr) and len(arg.values) == 2 and isinstance(arg.values[0], ast.Constant) \
            and isinstance(arg.values[0].value, str) and arg.values[0].value.strip() == PREFIX \
            and isinstance(arg.values[1], ast.FormattedValue):
        return arg.values[1].value  # f"DEBUG_RESULT:{x}", f"DEBUG_RESULT: {x!r}"
    return None


@dataclass
class Correction:
    code: str
    fixed: int  # prints rewritten into the canonical form
    unfixable: int  # DEBUG_RESULT prints left in another form


def fix_probe_format(code: str) -> Correction:
    """Rewrite DEBUG_RESULT prints into the canonical f-string form (D.4.1 automatic correction)."""
    tree = parse_code(code)
    lines = code.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode("utf-8", "replace"))

    edits: list[tuple[int, int, str]] = []
    unfixable = 0
    for call in marker_prints(tree):
        if canonical_probe(call) is not None:
            continue
        expr = _deviation(call)
        text = _fstring(expr) if expr is not None else None
        if text is None:
            unfixable += 1
            continue
        # (ast.parse sets every end position)
        edits.append((offset(call.lineno, call.col_offset),
                      offset(call.end_lineno or call.lineno, call.end_col_offset or call.col_offset), text))
    out = code
    for start, end, text in sorted(edits, reverse=True):
        out = out[:start] + text + out[end:]
    if edits:
        parse_code(out, "corrected code")
    return Correction(out, len(edits), unfixable)


def route_probes(function: ast.FunctionDef | ast.AsyncFunctionDef, helper: str) -> tuple[str, list[str]]:
    """The function's source with each canonical probe's value passed through
    ``helper(key, 0, value)`` (the print still prints the same text); returns (text, keys)."""
    keys: list[str] = []

    class Route(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            expr = canonical_probe(node)
            if expr is None:
                return node
            key = f"debug{len(keys)}"
            keys.append(key)
            routed = ast.Call(func=ast.Name(helper, ast.Load()), args=[ast.Constant(key), ast.Constant(0), expr],
                              keywords=[])
            fstring = node.args[0]  # a canonical probe: print(f"DEBUG_RESULT: {expr}")
            if isinstance(fstring, ast.JoinedStr) and isinstance(fstring.values[1], ast.FormattedValue):
                fstring.values[1].value = routed
            return node

    tree = Route().visit(copy.deepcopy(function))
    ast.fix_missing_locations(tree)
    return ast.unparse(tree), keys


# -- parsing printed output ---------------------------------------------------------------

def _balance(text: str) -> int:
    depth = 0
    quote: str | None = None
    escaped = False
    for ch in text:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
    return depth


def parse_debug_results(text: str, max_values: int = 10_000) -> list[str]:
    """DEBUG_RESULT values in ``text``, in order (standalone, embedded, multi-line forms)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines) and len(out) < max_values:
        line = lines[i]
        pieces = line.split(PREFIX)
        if len(pieces) == 1:
            i += 1
            continue
        for piece in pieces[1:-1]:  # several probes printed on one line (end="")
            out.append(piece.strip())
        value = pieces[-1][1:] if pieces[-1].startswith(" ") else pieces[-1]
        collected = [value]
        depth = _balance(value)
        while depth > 0 and i + 1 < len(lines) and len(collected) < MAX_VALUE_LINES and PREFIX not in lines[i + 1]:
            i += 1
            collected.append(lines[i])
            depth += _balance(lines[i])
        out.append("\n".join(collected).rstrip())
        i += 1
    return out
