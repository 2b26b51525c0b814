"""What ``execbench --help`` says about the built-in families, without importing any of them.

Typer needs its help texts when ``execbench.cli`` is imported; asking the registry would import
every family folder (seconds) at each start-up. So the facts the help texts need sit in this small
static table, one line per built-in family beside the registry's (``execbench.registry._BUILTIN``),
and ``tests/contract/test_registry.py`` checks it against the plug-ins: the same families, each
family's prompt variants and peer-scoring variants as its plug-in declares them, and its
built-in sources (its ``Demo`` capability) among those named. A third-party family (an entry
point) is not listed here: ``execbench build NAME`` still finds it.
"""

from __future__ import annotations

# family -> the sources `execbench build FAMILY SOURCE...` accepts (help text)
SOURCES: dict[str, str] = {
    "trace": "humaneval, advanced, cruxeval or case directories",
    "state": "classic, networkx-simplex or case directories",
    "repo": "pypi:NAME==VERSION, a local checkout, default or list:FILE",
    "cruxeval": "cruxeval",
}
# family -> its prompt variants (Family.variants)
VARIANTS: dict[str, tuple[str, ...]] = {
    "trace": ("direct", "cot", "static-analysis", "3-shot", "symbols", "line", "coconut", "coconut-direct"),
    "state": ("direct", "cot"),
    "repo": ("direct", "cot", "agent"),
    "cruxeval": ("direct", "cot", "cruxeval"),
}
# family -> the variants graded by a peer benchmark's own rules (its PaperScoring capability)
PAPER_SCORING: dict[str, tuple[str, ...]] = {
    "trace": ("coconut", "coconut-direct"),
}


def families() -> str:
    """``trace, state, repo or cruxeval``."""
    names = list(SOURCES)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def sources() -> str:
    return "; ".join(f"{name}: {text}" for name, text in SOURCES.items()) + "."


def variants(beyond: tuple[str, ...] = ("direct", "cot")) -> str:
    """The families with variants besides ``beyond``, each with all of its variants."""
    return "; ".join(f"{name}: {', '.join(names)}" for name, names in VARIANTS.items()
                     if set(names) - set(beyond))


def paper_scoring() -> str:
    return "; ".join(f"{name}: {' / '.join(names)}" for name, names in PAPER_SCORING.items())
