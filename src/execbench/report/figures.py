"""Matplotlib figures for the report, returned as base64 PNG data URIs (Agg backend).

matplotlib is imported lazily (it honours ``MPLCONFIGDIR``); every function takes long
tables from ``execbench.analysis`` and returns ``None`` when there is nothing to draw.
"""

from __future__ import annotations

import base64
import io
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from execbench.analysis.schema import SIMILARITY_FAMILIES

PALETTE = ("#2f6db5", "#e0702b", "#3a9d5d", "#c43d3d", "#8160b8", "#8c6d3f", "#d16aa8", "#6f7782",
           "#b5a42f", "#2fb5b0")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "figure.dpi": 100, "savefig.dpi": 110, "font.size": 9.5, "axes.titlesize": 10.5,
        "axes.titleweight": "bold", "axes.spines.top": False, "axes.spines.right": False,
        "axes.grid": True, "grid.alpha": 0.25, "grid.linestyle": "-", "legend.frameon": False,
        "font.family": "DejaVu Sans",
    })
    return plt


def _horizontal() -> dict:
    """``orientation="horizontal"`` (matplotlib >= 3.10) or the older ``vert=False``."""
    import matplotlib

    major, minor = (int(x) for x in matplotlib.__version__.split(".")[:2])
    return {"orientation": "horizontal"} if (major, minor) >= (3, 10) else {"vert": False}


def _encode(fig) -> str:
    """The figure as a PNG data URI. The saved area is the tight box of everything drawn (plus a
    margin), so no tick label, axis label, title or legend is ever cut off at the edge."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", facecolor="white", bbox_inches="tight", pad_inches=0.08)
    _plt().close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _width(labels: Sequence[str], base: float = 6.4) -> float:
    """A figure's width (inches) that leaves its axes room beside tick labels as long as ``labels``
    (about 0.07 in per character at the report's font size): long setting names never squeeze the
    plot until its axis label spills over the edge."""
    longest = max((len(str(label)) for label in labels), default=0)
    return base + max(0.0, 0.07 * (longest - 18))


def _label(text: str, width: int = 48) -> str:
    """An axis label wrapped to lines of at most ``width`` characters (it never outgrows its axes)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text


def color_map(settings: Sequence[str]) -> dict[str, str]:
    return {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(settings)}


def _err(table: pd.DataFrame, value: str = "acc_cr") -> np.ndarray:
    low = (table[value] - table[f"{value}_low"]).clip(lower=0).to_numpy(dtype=float)
    high = (table[f"{value}_high"] - table[value]).clip(lower=0).to_numpy(dtype=float)
    return np.vstack([low, high]) * 100


def accuracy_lines(table: pd.DataFrame, x: str, order: Sequence[str], colors: dict[str, str], title: str,
                   xlabel: str, series: str = "setting", ax=None, legend: bool = True,
                   ylabel: str = "accuracy (%, C/R)", marks: Sequence[tuple[float, str]] = ()):
    """Accuracy (C/R unless ``ylabel`` says otherwise, Wilson bars) over ordered categories
    ``x``, one line per series; ``marks``: (position on the category axis, label) drawn as
    dashed vertical lines (e.g. a cutoff between two months)."""
    table = table[np.isfinite(table["acc_cr"].to_numpy(dtype=float))] if not table.empty else table
    if table.empty or not table[x].isin(list(order)).any():  # nothing to draw: no empty panel
        return None
    plt = _plt()
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    positions = {label: i for i, label in enumerate(order)}
    offset_step = 0.06 if table[series].nunique() > 1 else 0.0
    for k, (name, group) in enumerate(table.groupby(series, sort=False)):
        group = group[group[x].isin(positions)].copy()
        group["_pos"] = group[x].map(positions)
        group = group.sort_values("_pos")
        shift = (k - (table[series].nunique() - 1) / 2) * offset_step
        ax.errorbar(group["_pos"] + shift, group["acc_cr"] * 100, yerr=_err(group), marker="o", ms=4.5, lw=1.8,
                    capsize=2.5, color=colors.get(name), label=str(name))
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels(order, rotation=0 if len(order) <= 7 else 30, ha="center" if len(order) <= 7 else "right")
    for position, label in marks:
        ax.axvline(position, color="#666", ls="--", lw=1)
        ax.annotate(label, (position, 50), xytext=(-3, 0), textcoords="offset points", fontsize=8, color="#444",
                    rotation=90, ha="right", va="center")  # along the line, clear of the legend
    if marks:  # a mark outside the categories stays in view
        ax.set_xlim(min(-0.5, *(m - 0.3 for m, _ in marks)), max(len(order) - 0.5, *(m + 0.3 for m, _ in marks)))
    ax.set_ylim(-3, 103)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(_label(xlabel))
    ax.set_title(_label(title, 64))
    if legend:
        ax.legend(fontsize=8, loc="best")
    if own:
        return _encode(fig)
    return None


def metric_panels(tables: dict[str, pd.DataFrame], colors: dict[str, str], title: str) -> str | None:
    """One accuracy-over-bins panel per metric (e.g. ESV, MCL, DFI), shared legend."""
    tables = {m: t for m, t in tables.items()  # a panel only where some bin has an accuracy to draw
              if not t.empty and np.isfinite(t["acc_cr"].to_numpy(dtype=float)).any()}
    if not tables:
        return None
    plt = _plt()
    longest = max(len(str(s)) for t in tables.values() for s in t["setting"].unique())
    fig, axes = plt.subplots(1, len(tables), figsize=(max(6.4, 4.1 * len(tables)), 3.9), squeeze=False, sharey=True,
                             layout="constrained")
    for ax, (metric, table) in zip(axes[0], tables.items()):
        order = list(dict.fromkeys(table["bin"]))
        accuracy_lines(table, "bin", order, colors, metric.upper() if len(metric) <= 3 else metric.replace("_", " "),
                       f"{metric} (equal-count bins)", ax=ax, legend=False)
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_ha("right")
    shown: dict[str, object] = {}  # every setting drawn in some panel, once
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            shown.setdefault(label, handle)
    handles, labels = list(shown.values()), list(shown)
    width = max(6.4, 4.1 * len(tables))
    per_row = max(1, min(5, int(width * 11 / (max(12, longest) + 4))))  # ~11 legend characters per inch
    fig.legend(handles, labels, loc="outside lower center", ncol=min(per_row, len(labels)), fontsize=8)
    fig.suptitle(title, fontweight="bold", fontsize=10.5)
    return _encode(fig)


def similarity_distributions(df: pd.DataFrame, settings: Sequence[str], colors: dict[str, str]) -> str | None:
    """Violin of trace similarity per setting (completed responses), wrong answers dotted."""
    rows = df[df["family"].isin(SIMILARITY_FAMILIES) & df["completed"] & df["similarity"].notna()]
    data = [(s, rows.loc[rows["setting"] == s]) for s in settings if (rows["setting"] == s).any()]
    if not data:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(_width([s for s, _ in data]), 0.55 * len(data) + 1.6), layout="constrained")
    rng = np.random.default_rng(0)
    for i, (setting, group) in enumerate(data):
        values = group["similarity"].to_numpy(dtype=float)
        if len(values) > 1 and np.ptp(values) > 0:
            parts = ax.violinplot(values, positions=[i], widths=0.8, showextrema=False, **_horizontal())
            for body in parts["bodies"]:
                body.set_facecolor(colors.get(setting))
                body.set_alpha(0.35)
        wrong = group.loc[~group["correct"], "similarity"].to_numpy(dtype=float)
        ax.scatter(wrong, i + rng.uniform(-0.18, 0.18, len(wrong)), s=6, color=colors.get(setting), alpha=0.6, lw=0)
        ax.plot([values.mean()], [i], marker="|", ms=16, mew=2.5, color="black")
    ax.set_yticks(range(len(data)))
    ax.set_yticklabels([s for s, _ in data])
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(_label("Gestalt similarity to the oracle trace (dots: wrong answers, bar: mean)"))
    ax.set_title("Similarity distributions")
    ax.invert_yaxis()
    return _encode(fig)


def taxonomy_bars(counts: pd.DataFrame, categories: Sequence[str], colors: Mapping[str, str]) -> str | None:
    """Stacked horizontal bars: share of wrong traces per first-deviation category (``colors``: the
    family's colour of each category, ``ErrorTaxonomy``)."""
    if counts.empty:
        return None
    plt = _plt()
    shares = counts.div(counts.sum(axis=1), axis=0).fillna(0) * 100
    fig, ax = plt.subplots(figsize=(_width(list(shares.index), 7.2), 0.5 * len(shares) + 2.2), layout="constrained")
    left = np.zeros(len(shares))
    for category in categories:
        if category not in shares or shares[category].sum() == 0:
            continue
        values = shares[category].to_numpy()
        ax.barh(range(len(shares)), values, left=left, color=colors.get(category, "#999"),
                label=category, height=0.62)
        for i, (v, start) in enumerate(zip(values, left)):
            if v >= 7:
                ax.text(start + v / 2, i, f"{v:.0f}", ha="center", va="center", fontsize=7.5, color="white")
        left += values
    ax.set_yticks(range(len(shares)))
    ax.set_yticklabels(shares.index)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of wrong traces (%)")
    ax.set_title("First-deviation error categories")
    ax.grid(axis="y", visible=False)
    fig.legend(loc="outside lower center", ncol=4, fontsize=8)
    return _encode(fig)


def forest(rows: list[dict], title: str) -> str | None:
    """Odds ratios with intervals on a log axis (logistic fits)."""
    rows = [r for r in rows if np.isfinite(r.get("odds_ratio", np.nan))]
    if not rows:
        return None
    plt = _plt()
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fig, ax = plt.subplots(figsize=(_width([r["label"] for r in rows]), 0.42 * len(rows) + 1.3), layout="constrained")
    for i, row in enumerate(rows):
        ax.plot([row["low"], row["high"]], [i, i], color="#2f6db5", lw=2)
        ax.plot([row["odds_ratio"]], [i], "o", color="#2f6db5")
    ax.axvline(1.0, color="#777", lw=1, ls="--")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["label"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(_label("error odds ratio per doubling (95% interval, source-clustered)"))
    ax.set_title(title)
    return _encode(fig)
