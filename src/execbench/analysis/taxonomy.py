"""A family's first-deviation error taxonomy counted over its wrong answers.

The rules and the categories (names, table order, bar colours) are the family's own,
declared on its plug-in (``AnalysisFacts.taxonomy``, an :class:`~execbench.contract.ErrorTaxonomy`;
the trace family's is ``families/trace/taxonomy.py``): this module names no category.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from execbench.contract import ErrorTaxonomy

FALLBACK = "other"  # the category of a wrong answer the rules call right (a canonical-form tie)


def category_counts(wrong: pd.DataFrame, taxonomy: ErrorTaxonomy, settings: Sequence[str]) -> pd.DataFrame:
    """Wrong answers (rows with ``program``, ``oracle``, ``extracted``, ``status``, ``setting``) per
    setting (rows, in ``settings`` order) and category (columns, in the taxonomy's order; categories
    with no answer left out)."""
    names = [taxonomy.classify(p, o, e, s) or FALLBACK for p, o, e, s in
             zip(wrong["program"], wrong["oracle"], wrong["extracted"], wrong["status"])]
    counts = pd.crosstab(wrong["setting"], pd.Series(names, index=wrong.index, name="category"))
    present = [c.name for c in taxonomy.categories if c.name in counts.columns]
    return counts[present].reindex([s for s in settings if s in counts.index])


def category_colors(taxonomy: ErrorTaxonomy) -> dict[str, str]:
    """Category name -> its bar colour."""
    return {category.name: category.color for category in taxonomy.categories}
