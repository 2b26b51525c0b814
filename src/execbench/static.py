"""Static program metrics shared by the families: cyclomatic complexity and size.

Cyclomatic complexity comes from lizard, which applies one convention to Python and C++
(FIELD-NOTES: radon is stale). A program's figure is the sum of its functions' CCN (1 for a
program without functions); ``max_function`` reports the largest single function.
"""

from __future__ import annotations

from dataclasses import dataclass

import lizard

_SUFFIX = {"python": "program.py", "cpp": "program.cpp"}


@dataclass(frozen=True)
class Complexity:
    total: int
    max_function: int
    functions: int


def cyclomatic(source: str, language: str = "python") -> Complexity:
    info = lizard.analyze_file.analyze_source_code(_SUFFIX[language], source)
    ccns = [f.cyclomatic_complexity for f in info.function_list]
    total = sum(ccns) or 1
    return Complexity(total=total, max_function=max(ccns, default=1), functions=len(ccns))


def loc(source: str) -> int:
    """Non-blank lines that are not only a comment."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith(("#", "//")))

