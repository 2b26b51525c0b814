"""Presentation tables: typed columns rendered into sortable HTML cells.

A :class:`Table` holds rows (dicts) and :class:`Col` specs; :meth:`Table.cells` turns each
value into ``(text, sort key, css class)``. Interval columns take a key triple
``(value, low, high)``.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Sequence


#: A statistic over fewer samples than this (paired tasks, responses, series), over samples that are
#: all equal (every answer right, or every answer wrong), or with a zero-width interval is shown as
#: :data:`TOO_FEW`, never as a finding; the page states the minimum once, in its summary.
MIN_SAMPLES = 10
TOO_FEW = "too few samples"


def enough(n: Any) -> bool:
    """Whether ``n`` samples support a finding (:data:`MIN_SAMPLES`)."""
    return _ok(n) and _num(n) >= MIN_SAMPLES


def zero_width(low: Any, high: Any) -> bool:
    return _ok(low) and _ok(high) and _num(low) == _num(high)


def mark_too_few(rows: list[dict[str, Any]], n_key: str, value: str, blank: Sequence[str] = (),
                 interval: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """Rows whose statistic ``value`` is degenerate (``n_key`` below :data:`MIN_SAMPLES`, a zero-width
    ``interval``, or no estimate because the samples are all equal: the analysis left a note): the
    statistic and ``blank`` become missing and the row's ``note`` says :data:`TOO_FEW` and why."""
    for row in rows:
        prior = row.get("note") if isinstance(row.get("note"), str) else None
        if prior and prior.startswith(TOO_FEW):
            continue
        n = row.get(n_key)
        why = None
        if not enough(n):
            why = f"n = {int(_num(n)) if _ok(n) else 0}"
        elif interval is not None and zero_width(row.get(interval[0]), row.get(interval[1])):
            why = "every resample gives the same value"
        elif not _ok(row.get(value)) and prior:
            why = prior
            prior = None
        if why is None:
            continue
        for key in (value, *blank, *(interval or ())):
            row[key] = math.nan
        row["note"] = f"{TOO_FEW} ({why})" + (f"; {prior}" if prior else "")
    return rows


@dataclass
class Col:
    label: str
    key: str | tuple[str, str, str]
    kind: str = "text"   # text | int | pct | pct_ci | num | num_ci | pp_ci | pval | or_ci | r_ci
    tip: str = ""


@dataclass
class Table:
    title: str
    columns: list[Col]
    rows: list[dict[str, Any]]
    caption: str = ""
    paper: str = ""
    notes: list[str] = field(default_factory=list)

    def cells(self) -> list[list[tuple[str, str, str]]]:
        return [[render(col, row) for col in self.columns] for row in self.rows]

    @property
    def empty(self) -> bool:
        return not self.rows


def _num(x: Any) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return math.nan
    return value


def _ok(x: Any) -> bool:
    return math.isfinite(_num(x))


def fmt_pct(x: Any, digits: int = 1) -> str:
    return f"{100 * _num(x):.{digits}f}" if _ok(x) else "–"


def _pp(x: Any) -> str:
    """Percentage points with a sign, never "-0.0"."""
    return f"{round(100 * _num(x), 1) + 0.0:+.1f}"


def fmt_p(p: Any) -> str:
    p = _num(p)
    if not math.isfinite(p):
        return "–"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


def render(col: Col, row: dict[str, Any]) -> tuple[str, str, str]:
    """(text, sort key, css class) of one cell."""
    kind = col.kind
    if isinstance(col.key, tuple):
        value, low, high = (row.get(k) for k in col.key)
    else:
        value, low, high = row.get(col.key), None, None
    if kind == "text":
        text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
        return (html.escape(text), html.escape(text.lower()), "")
    if not _ok(value):
        return ("–", "", "num na")
    v = _num(value)
    interval = _ok(low) and _ok(high)
    if interval and zero_width(low, high):  # a bootstrap whose every resample agrees (Wilson never is)
        return (f"{_shown(kind, v)} <span class=ci>({TOO_FEW})</span>", f"{v}", "num")
    if kind == "int":
        return (f"{int(round(v)):,}", f"{v}", "num")
    if kind == "pct":
        return (fmt_pct(v), f"{v}", "num")
    if kind == "pct_ci":
        ci = f" <span class=ci>[{fmt_pct(low)}, {fmt_pct(high)}]</span>" if interval else ""
        return (f"{fmt_pct(v)}{ci}", f"{v}", "num")
    if kind == "pp_ci":
        ci = f" <span class=ci>[{_pp(low)}, {_pp(high)}]</span>" if interval else ""
        return (f"{_pp(v)}{ci}", f"{v}", "num")
    if kind == "num":
        return (f"{v:.3f}" if abs(v) < 1000 else f"{v:,.0f}", f"{v}", "num")
    if kind in ("num_ci", "r_ci"):
        ci = f" <span class=ci>[{_num(low):.3f}, {_num(high):.3f}]</span>" if interval else ""
        return (f"{v:.3f}{ci}", f"{v}", "num")
    if kind == "or_ci":
        ci = f" <span class=ci>[{_num(low):.3f}, {_num(high):.3f}]</span>" if interval else ""
        return (f"{v:.3f}{ci}", f"{v}", "num")
    if kind == "pval":
        return (fmt_p(v), f"{v}", "num" + (" sig" if v < 0.05 else ""))
    return (html.escape(str(value)), html.escape(str(value)), "")


def _shown(kind: str, v: float) -> str:
    return fmt_pct(v) if kind == "pct_ci" else _pp(v) if kind == "pp_ci" else f"{v:.3f}"


_PERCENT = ("pct", "pct_ci", "pp_ci")


def _datum(kind: str, value: Any) -> Any:
    """A cell as data: None for a missing number, percent kinds in percent (as shown), ints as ints."""
    if kind == "text":
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    if not _ok(value):
        if isinstance(value, str) and value:
            return value
        return None
    v = _num(value)
    if kind == "int":
        return int(round(v))
    return 100 * v if kind in _PERCENT else v


def table_data(table: Table) -> tuple[list[str], list[list[Any]]]:
    """(column names, rows) of a table as data: an interval column becomes three (``X``, ``X low``,
    ``X high``); numbers stay numbers (percent kinds in percent, as the page shows them)."""
    columns: list[str] = []
    for col in table.columns:
        columns += [col.label, f"{col.label} low", f"{col.label} high"] if isinstance(col.key, tuple) else [col.label]
    rows = []
    for row in table.rows:
        out: list[Any] = []
        for col in table.columns:
            keys = col.key if isinstance(col.key, tuple) else (col.key,)
            cells = [_datum(col.kind, row.get(key)) for key in keys]
            if len(cells) == 3 and zero_width(cells[1], cells[2]):  # shown as "too few samples", no interval
                cells[1:] = [None, None]
            out += cells
        rows.append(out)
    return columns, rows


def acc_cols(prefix: str = "acc", label: str = "") -> list[Col]:
    """C/R and C/N accuracy columns side by side (paper 001 table 3)."""
    lead = f"{label} " if label else ""
    return [Col(f"{lead}C/R %", (f"{prefix}_cr", f"{prefix}_cr_low", f"{prefix}_cr_high"), "pct_ci",
                "correct / completed responses, Wilson 95% interval"),
            Col(f"{lead}C/N %", (f"{prefix}_cn", f"{prefix}_cn_low", f"{prefix}_cn_high"), "pct_ci",
                "correct / planned samples (no response = wrong), Wilson 95% interval")]


def records(frame, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    if frame is None or len(frame) == 0:
        return []
    data = frame if columns is None else frame[[c for c in columns if c in frame]]
    return [dict(r) for r in data.to_dict(orient="records")]
