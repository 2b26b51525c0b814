"""Grading core of execbench: extract answers from untrusted model text and score them.

- `score`: the `Score` record and extraction statuses.
- `reasoning`: `strip_reasoning` removes `<think>` blocks.
- `trace`: line-trace answers (extraction, concurrency-aware comparison, similarity).
- `summary`: `trace_summary`, the CoCoNUT metrics over many graded traces.
- `literal`: `parse_literal` (safe Python literal parser) and `values_equal`.
Model output is never evaluated; every parser is bounded in size and nesting depth.
"""
from .literal import LiteralParseError, parse_literal, values_equal
from .reasoning import reasoning_unclosed, strip_reasoning
from .score import BAD_ENVELOPE, GRADING_TIMEOUT, NO_ANSWER, OK, STATUSES, TRUNCATED, Score
from .summary import TraceResult, trace_summary
from .trace import (ExtractedTrace, canonical_trace, extract_line_trace, grade_trace,
                    similarity, trace_tokens)

__all__ = [
    "BAD_ENVELOPE", "ExtractedTrace", "GRADING_TIMEOUT", "LiteralParseError", "NO_ANSWER", "OK", "STATUSES",
    "Score", "TRUNCATED", "TraceResult", "canonical_trace", "extract_line_trace",
    "grade_trace", "parse_literal", "reasoning_unclosed", "similarity", "strip_reasoning",
    "trace_summary", "trace_tokens", "values_equal",
]
