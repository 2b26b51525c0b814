"""The HTML report: one self-contained page (inline CSS/JS, figures as data URIs) plus the
per-sample table it was computed from (CSV and Parquet beside it), and every table of the
page as data: ``<stem>.tables.json`` (a list of ``{"title", "section", "paper", "columns",
"rows", "csv"}``, numbers as numbers: percentages as shown, in percent; an interval column
as three columns ``X``, ``X low``, ``X high``) and one CSV per table in ``<stem>.tables/``.

    from execbench.analysis.logs import read_logs
    from execbench.report import write_report
    write_report(read_logs(["logs/"]), "report.html")

What each section shows and the statistical choices: ``docs/report.md``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from execbench import __version__
from execbench.analysis.logs import EvalDescription, LogSet
from execbench.analysis.schema import families_present, normalize, ordered
from execbench.report.sections import Options, Report, build
from execbench.report.tables import MIN_SAMPLES, TOO_FEW, table_data

TEMPLATES = Path(__file__).parent / "templates"
#: columns written as JSON text in Parquet (mixed or nested values; FIELD-NOTES: Arrow rejects mixed types)
_TEXT_COLUMNS = ("extracted", "oracle", "program")


@dataclass
class Written:
    html: Path
    csv: Path
    parquet: Path | None
    headlines: list[str]
    notes: list[str]
    tables_json: Path | None = None
    table_csvs: list[Path] | None = None


def table_paths(out: Path) -> tuple[Path, Path]:
    stem = out.with_suffix("")
    return stem.with_name(stem.name + ".samples.csv"), stem.with_name(stem.name + ".samples.parquet")


def write_table(df: pd.DataFrame, out: Path) -> tuple[Path, Path | None]:
    """The per-sample table as CSV and (when pyarrow is available) Parquet."""
    csv_path, parquet_path = table_paths(out)
    frame = df.copy()
    for column in frame.columns:
        if frame[column].dtype == object:
            frame[column] = frame[column].map(lambda v: v if v is None or isinstance(v, str) else json.dumps(v))
    frame.to_csv(csv_path, index=False)
    try:
        import pyarrow  # noqa: F401 - only to learn whether Parquet can be written
    except ImportError:
        return csv_path, None
    frame.to_parquet(parquet_path, index=False)
    return csv_path, parquet_path


def _meta(df: pd.DataFrame, logs: list[EvalDescription], files: Sequence[Path]) -> dict:
    datasets = sorted({f"{log.get('dataset') or '?'} {log['dataset_hash']}" for log in logs if log.get("dataset_hash")})
    if not datasets and "dataset_hash" in df:
        datasets = sorted({str(h) for h in df["dataset_hash"].dropna().unique()})
    templates = sorted({t for log in logs for t in log.get("templates", [])})
    if not templates:
        templates = sorted({f"{t} v{v}" for t, v in zip(df["template"], df["template_version"]) if t})
    versions = sorted({str(v) for v in df["execbench_version"].dropna().unique()})
    return {
        "execbench_version": __version__, "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "samples": len(df), "models": ordered(df["model"]), "settings": ordered(df["setting"]),
        "families": families_present(df), "datasets": datasets, "eval_versions": versions,
        "templates": templates, "table_files": [p.name for p in files],
    }


def tables_paths(out: Path) -> tuple[Path, Path]:
    stem = out.with_suffix("")
    return stem.with_name(stem.name + ".tables.json"), stem.with_name(stem.name + ".tables")


def write_tables(report: Report, out: Path) -> tuple[Path, list[Path]]:
    """Every table of the report as data (module doc): the JSON list and one CSV per table."""
    import csv
    import re

    json_path, folder = tables_paths(out)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.csv"):
        old.unlink()
    entries: list[dict[str, Any]] = []
    csvs: list[Path] = []
    for section in report.sections:
        for kind, block in section.blocks:
            if kind != "table":
                continue
            columns, rows = table_data(block)
            slug = re.sub(r"[^a-z0-9]+", "-", f"{section.id} {block.title}".lower()).strip("-")[:80]
            path = folder / f"{len(entries) + 1:02d}-{slug}.csv"
            with open(path, "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(columns)
                writer.writerows(["" if v is None else v for v in row] for row in rows)
            csvs.append(path)
            entries.append({"title": block.title, "section": section.title, "paper": block.paper,
                            "columns": columns, "rows": rows, "csv": f"{folder.name}/{path.name}"})
    tmp = json_path.with_name(f".{json_path.name}.partial")
    tmp.write_text(json.dumps(entries, indent=1, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    tmp.replace(json_path)
    return json_path, csvs


def render_html(df: pd.DataFrame, logs: list[EvalDescription], notes: list[str], files: Sequence[Path],
                options: Options | None = None, title: str = "execbench report",
                report: Report | None = None) -> tuple[str, list[str], list[str]]:
    import jinja2

    report = report or build(df, options)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    all_notes = [*notes, *report.notes]
    page = env.get_template("report.jinja").render(
        title=title, meta=_meta(df, logs, files), logs=logs, sections=report.sections,
        headlines=report.headlines, notes=all_notes, min_samples=MIN_SAMPLES, too_few=TOO_FEW)
    return page, report.headlines, all_notes


def write_report(data: LogSet | pd.DataFrame, out: str | Path, *, options: Options | None = None,
                 title: str = "execbench report") -> Written:
    """Write ``out`` (HTML) and the per-sample table beside it; returns what was written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, LogSet):
        df, logs, notes = data.samples, data.logs, list(data.notes)
    else:
        df, logs, notes = normalize(data), [], []
    csv_path, parquet_path = write_table(df, out)
    report = build(df, options)
    json_path, csvs = write_tables(report, out)
    files = [p for p in (csv_path, parquet_path, json_path) if p is not None]
    page, headlines, all_notes = render_html(df, logs, notes, files, options, title, report)
    tmp = out.with_name(f".{out.name}.partial")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return Written(out, csv_path, parquet_path, headlines, all_notes, json_path, csvs)
