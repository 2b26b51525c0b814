"""Positions in Python source text: ``ast`` reports columns as UTF-8 byte offsets, string
slicing needs character offsets. Used wherever code is spliced or quoted by node position
(repo-family masking and probes, mutation edits)."""

from __future__ import annotations

from functools import lru_cache


class SourceText:
    """(line, byte column) → character offset into ``text``, and the text between two positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col_bytes: int) -> int:
        if not 0 < lineno <= len(self.lines):
            return self.starts[-1] if lineno > len(self.lines) else 0
        prefix = self.lines[lineno - 1].encode("utf-8")[:col_bytes].decode("utf-8", "replace")
        return self.starts[lineno - 1] + len(prefix)

    def span(self, node: object) -> tuple[int, int]:
        """Character offsets (start, end) of an ``ast`` node."""
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]  # ast.AST declares no fields; the node is a kind that has it

    def segment(self, lineno: int, col: int, end_lineno: int, end_col: int) -> str:
        return self.text[self.offset(lineno, col):self.offset(end_lineno, end_col)]


@lru_cache(maxsize=16)
def source_text(text: str) -> SourceText:
    """A shared :class:`SourceText` for ``text`` (builders quote the same module many times)."""
    return SourceText(text)
