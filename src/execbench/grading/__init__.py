"""Grading core of execbench: extract answers from untrusted model text and score them.

- `score`: the `Score` record and extraction statuses.
- `reasoning`: `strip_reasoning` removes `<think>` blocks.
- `literal`: `parse_literal` (safe Python literal parser) and `values_equal`.
- `tokens`: the bounded pre-check every answer parser runs before ``ast.parse``.
- `accounting`: C, R and N (completed-response and all-planned accuracy).

Family-specific grading lives with its family (the trace family's line traces and CoCoNUT
metrics: ``execbench.families.trace.grade`` and ``.summary``). Model output is never
evaluated; every parser is bounded in size and nesting depth.
"""
from .literal import LiteralParseError, parse_literal, values_equal
from .reasoning import reasoning_unclosed, strip_reasoning
from .score import BAD_ENVELOPE, GRADING_TIMEOUT, NO_ANSWER, OK, STATUSES, TRUNCATED, Score

__all__ = [
    "BAD_ENVELOPE", "GRADING_TIMEOUT", "LiteralParseError", "NO_ANSWER", "OK", "STATUSES", "Score", "TRUNCATED",
    "parse_literal", "reasoning_unclosed", "strip_reasoning", "values_equal",
]
