"""What a program's text says about how its trace is cut (CoCoNUT's script convention).

* :func:`main_guard_line`: the line of the first module-level ``if __name__ == "__main__":``;
  a script's answer starts at the first line event after that line's (the whole trace
  when there is no guard);
* :func:`segment_markers`: lines carrying the paper's ``#START`` / ``#END`` comments, which
  delimit concurrent segments where a program has them;
* :func:`tampering`: names a program cannot use without touching the tracer or execbench (the child
  rejects such programs before running them; docs/trace-format.md, "Tampering").

These run on hostile text inside the sandboxed child, or on trusted corpus text.
"""

from __future__ import annotations

import ast
import io
import tokenize

# Attribute names and strings that only code reaching for the tracer uses.
TRACER_NAMES = frozenset({
    "settrace", "setprofile", "gettrace", "getprofile", "settrace_all_threads", "setprofile_all_threads",
    "f_trace", "f_trace_lines", "f_trace_opcodes", "PyEval_SetTrace", "PyEval_SetProfile",
})


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def main_guard_line(tree: ast.Module) -> int | None:
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            return node.lineno
    return None


def segment_markers(source: str) -> tuple[list[int], list[int]] | None:
    """Lines whose comment is ``#START`` / ``#END`` (any case, spaces allowed); None without a start."""
    starts: list[int] = []
    ends: list[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                word = token.string.lstrip("#").strip().upper()
                if word == "START":
                    starts.append(token.start[0])
                elif word == "END":
                    ends.append(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        return None
    return (starts, ends) if starts else None


def tampering(tree: ast.Module) -> str | None:
    """The first use of a tracer-control name (attribute or string constant), if any."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr in TRACER_NAMES or (
                node.attr == "monitoring" and isinstance(node.value, ast.Name) and node.value.id == "sys")):
            return f"line {node.lineno} uses .{node.attr}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in TRACER_NAMES or "execbench" in node.value):
            return f"line {node.lineno} names {node.value[:40]!r}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and "execbench" in (node.module or ""):
                return f"line {node.lineno} imports from {node.module}"
            for alias in node.names:
                if alias.name in TRACER_NAMES or alias.name == "monitoring" or "execbench" in alias.name:
                    return f"line {node.lineno} imports {alias.name}"
    return None
