"""A report that reads well for any model (issue 37, item 4), measured, not assumed.

Two reports from real Inspect logs: (a) the tiny local model's sparse results (SmolLM2-135M on a
few CRUXEval tasks: mostly wrong, a handful of samples) and (b) published predictions of real
models replayed through the pipeline (CoCoNUT's HumanEval predictions of two models, both prompts,
over a small ``layout=coconut`` build; the demo's shipped CRUXEval generations), with the local
model beside them. For each:

* every figure, before it is encoded: everything drawn (tick labels in view, axis labels, titles,
  legends) lies inside the figure, and every panel has drawn data;
* in headless Chromium at a narrow window: a table wider than its container sits in a scroll
  box (``overflow-x: auto``), the page never gets wider than the window, every image decoded;
  a screenshot is the window's size and not blank (measured pixels);
* degenerate statistics read "too few samples" (the minimum stated once), never as headlines,
  and no interval of the tables' data has zero width.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from browser_support import CHROMIUM, MISSING, chromium, png_size
from execbench.report.tables import MIN_SAMPLES, TOO_FEW

pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason=MISSING)]

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference" / "coconut" / "results"
COCONUT_MODELS = ("Gemini", "CodeLLama7B")  # a strong and a weak model, CoT and Direct each


def layout_problems(fig) -> list[str]:
    """What a reader would miss in ``fig``: drawn things outside the figure, panels without data."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    tight, box = fig.get_tightbbox(renderer), fig.bbox_inches  # inches; tight: every drawn artist
    problems = []
    if (tight.x0 < box.x0 - 0.01 or tight.y0 < box.y0 - 0.01 or tight.x1 > box.x1 + 0.01
            or tight.y1 > box.y1 + 0.01):
        problems.append(f"drawn outside the figure: {tight.extents} vs {box.extents}")
    for ax in fig.axes:
        lines = any(np.isfinite(np.asarray(line.get_xydata(), dtype=float)).all(axis=1).any()
                    for line in ax.lines if len(line.get_xydata()))
        marks = any(len(c.get_offsets()) or len(c.get_paths()) for c in ax.collections)
        bars = any(getattr(patch, "get_width", lambda: 0)() > 0 for patch in ax.patches)
        if not (lines or marks or bars):
            problems.append(f"empty panel {ax.get_title()!r}")
    return problems


def write_checked(data, out: Path, fast) -> tuple[object, list[str], int]:
    """``write_report`` with every figure checked by :func:`layout_problems` before it is encoded."""
    from execbench.report import figures, write_report

    problems: list[str] = []
    seen = []
    encode = figures._encode

    def checked(fig):
        seen.append(fig)
        problems.extend(layout_problems(fig))
        return encode(fig)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figures, "_encode", checked)
        written = write_report(data, out, options=fast)
    return written, problems, len(seen)


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _eval(dataset: Path, model: str, logs: Path, **kwargs) -> None:
    from execbench.eval.run import EvalRequest, run_eval

    outcome = run_eval(EvalRequest(dataset=dataset, model=model, log_dir=logs, defaults={"display": "none"},
                                   **kwargs))
    assert outcome.success, outcome.summaries


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Logs of (a) the local model, sparse, and (b) published predictions replayed."""
    from rich.console import Console

    from execbench.eval.commands import _demo_replays
    from execbench.eval.demo import demo_replays

    root = tmp_path_factory.mktemp("layout")
    local, published = root / "local-logs", root / "demo" / "logs"
    console = Console(record=True, width=120)
    outcomes, code = _demo_replays(console, root / "demo", demo_replays())  # the demo's shipped replay
    assert code == 0, console.export_text()
    crux = root / "demo" / "replay" / "cruxeval-codellama-7b" / "dataset"
    # the live model in a process of its own, as `execbench eval` runs it: Inspect keeps one client per model name
    # in a process, so a server an earlier test of this worker started (another key) would answer 401
    subprocess.run([sys.executable, "-m", "execbench.cli", "eval", str(crux), "--model", "local", "--mode", "direct",
                    "--limit", "6", "--log-dir", str(local)], check=True, capture_output=True,
                   env={**os.environ, "INSPECT_DISPLAY": "none"})
    if REFERENCE.is_dir():
        dataset = root / "humaneval-coconut"
        subprocess.run([sys.executable, "-m", "execbench.cli", "build", "trace", "humaneval", "-o", str(dataset),
                        "--set", "layout=coconut", "--set", "keep_duplicates=true", "--limit", "12", "-j", "2"],
                       check=True, capture_output=True)
        replay = _bench("replay")
        tasks = replay.read_tasks(dataset)
        for model in COCONUT_MODELS:
            for prompt, variant in replay.VARIANTS.items():
                rows = replay.read_published(REFERENCE / f"he_{model}_{prompt}_NoReps.csv.gz")
                lines, _, _ = replay.coconut_replies(rows, tasks)
                path = replay.write_lines(root / "replies" / prompt.lower() / f"{model}.jsonl", lines)
                _eval(dataset, f"replay/{path}", published, variant=variant)
    return local, published


def browser_layout(tmp_path: Path, html: Path, width: int) -> dict:
    probe = tmp_path / f"probe-{html.stem}.html"
    probe.write_text(html.read_text().replace("</body>", """<script>
      var out = {tables: [], images: [], page: [document.documentElement.scrollWidth, window.innerWidth]};
      document.querySelectorAll("main table").forEach(function (t) {
        var wrap = t.parentElement, open = t.offsetParent !== null;
        var tallest = 0, widest = 0;
        Array.prototype.forEach.call(t.rows, function (r) { tallest = Math.max(tallest, r.offsetHeight); });
        Array.prototype.forEach.call(t.querySelectorAll("td"), function (c) { widest = Math.max(widest, c.offsetWidth); });
        out.tables.push({open: open, width: t.scrollWidth, room: wrap.clientWidth, wrap: wrap.className,
                         overflow: getComputedStyle(wrap).overflowX, scrolls: wrap.scrollWidth > wrap.clientWidth,
                         tallest: tallest, widest: widest});
      });
      document.querySelectorAll("main img").forEach(function (i) {
        out.images.push({natural: i.naturalWidth, shown: i.clientWidth, room: i.parentElement.clientWidth,
                         complete: i.complete});
      });
      document.body.setAttribute("data-probe", JSON.stringify(out));
    </script></body>"""))
    result = chromium(tmp_path, probe, "--dump-dom", f"--window-size={width},1400")
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', result.stdout)
    assert found, result.stdout[-2000:]
    import html as html_lib

    return json.loads(html_lib.unescape(found.group(1)))


def check_reads_well(tmp_path: Path, html: Path, width: int = 760) -> dict:
    layout = browser_layout(tmp_path, html, width)
    page_width, window = layout["page"]
    assert page_width <= window, "the page is wider than the window: something clips or widens it"
    shown = [t for t in layout["tables"] if t["open"]]
    assert shown
    for table in shown:  # a table wider than its container scrolls inside a scroll box
        if table["width"] > table["room"] + 1:
            assert "tablewrap" in table["wrap"] and table["overflow"] in ("auto", "scroll") and table["scrolls"], table
        # no column squeezed into a tower of wrapped words, no cell a screen wide (notes wrap at 30em)
        assert table["tallest"] <= 110 and table["widest"] <= 480, table
    assert layout["images"]
    for image in layout["images"]:
        assert image["complete"] and image["natural"] > 100 and 0 < image["shown"] <= image["room"] + 1, image
    shot = tmp_path / f"{html.stem}.png"
    result = chromium(tmp_path, html, f"--screenshot={shot}", f"--window-size={width},1400")
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    assert png_size(shot) == (width, 1400)
    import matplotlib.pyplot as plt

    pixels = plt.imread(str(shot))[..., :3]
    ink = (pixels.mean(axis=2) < 0.9).mean()  # share of non-white pixels
    assert 0.03 < ink < 0.9 and pixels.std() > 0.05, (ink, pixels.std())  # a rendered page, not a blank one
    return layout


def degenerate_intervals(written) -> list[tuple[str, str, list]]:
    """Intervals of zero width in the tables' data (they must read "too few samples" instead)."""
    found = []
    for entry in json.loads(written.tables_json.read_text()):
        columns = entry["columns"]
        for name in columns:
            if f"{name} low" not in columns:
                continue
            low, high = columns.index(f"{name} low"), columns.index(f"{name} high")
            found += [(entry["title"], name, row) for row in entry["rows"]
                      if row[low] is not None and row[low] == row[high]]
    return found


def test_the_tiny_models_sparse_report_reads_well(runs, tmp_path, fast):
    from execbench.analysis.logs import read_logs

    local, _ = runs
    written, problems, figures = write_checked(read_logs([local]), tmp_path / "sparse.html", fast)
    assert figures >= 1 and problems == []
    page = written.html.read_text()
    check_reads_well(tmp_path, written.html)
    # six samples: every statistic is too few; the minimum is stated once, and nothing is a finding
    assert page.count(f"fewer than {MIN_SAMPLES} samples") == 1 and TOO_FEW in page
    assert not any("ranks first" in line or "strongest" in line or "θ series" in line for line in written.headlines)
    assert degenerate_intervals(written) == []
    pearson = next(e for e in json.loads(written.tables_json.read_text()) if e["title"].startswith("Pearson"))
    for row in pearson["rows"]:
        record = dict(zip(pearson["columns"], row))
        assert record["Note"].startswith(TOO_FEW) and all(
            value is None for key, value in record.items() if key.startswith("r(") or key == "p")


def test_published_predictions_replayed_make_a_report_with_signal_that_reads_well(runs, tmp_path, fast):
    from execbench.analysis.logs import read_logs

    local, published = runs
    written, problems, figures = write_checked(read_logs([local, published]), tmp_path / "published.html", fast)
    assert problems == [] and figures >= 4
    layout = check_reads_well(tmp_path, written.html)
    assert any(t["scrolls"] for t in layout["tables"] if t["open"])  # the wide leaderboard scrolls at 760 px
    tables = json.loads(written.tables_json.read_text())
    board = [dict(zip(tables[0]["columns"], row)) for row in tables[0]["rows"]]
    answers = {row["Model"]: row["Answers"] for row in board}
    assert answers.pop("replay/cruxeval-codellama-7b") == "replayed"
    assert {answers.pop(model) for model in list(answers) if model.startswith("replay/")} <= {"replayed"}
    assert set(answers.values()) == {"live"}  # the local model
    page = written.html.read_text()
    assert "Replayed, not run" in page and page.count(f"fewer than {MIN_SAMPLES} samples") == 1
    assert any("ranks first" in line for line in written.headlines)  # real models: findings to state
    assert degenerate_intervals(written) == []
    crux = next(e for e in tables if e["title"].startswith("Accuracy by arm (one reply per task"))
    by_arm = {(r["Setting"], r["Arm"]): r for r in (dict(zip(crux["columns"], row)) for row in crux["rows"])}
    output = by_arm[("cruxeval-codellama-7b · direct", "output-prediction")]  # CRUXEval's own verdicts: 13 of 30
    assert output["N"] == 30 and output["C/N %"] == pytest.approx(100 * 13 / 30)
    if REFERENCE.is_dir():
        assert any(e["title"].startswith("Table I layout") for e in tables)
