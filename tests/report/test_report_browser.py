"""The report in a real browser: headless Chromium renders it, runs its script, screenshots it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from browser_support import CHROMIUM, MISSING, chromium, png_size

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=MISSING)


def check_page(tmp_path: Path, html: Path, min_tables: int, min_images: int) -> str:
    dom = chromium(tmp_path, html, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    errors = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert not errors, errors
    text = dom.stdout
    tables = int(re.search(r'data-tables-sortable="(\d+)"', text).group(1))  # set by the page's script
    assert tables >= min_tables
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', text)) >= min_images
    assert text.count("<tbody>") == text.count("</tbody>") >= min_tables
    shot = html.with_suffix(".png")
    result = chromium(tmp_path, html, f"--screenshot={shot}")
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    assert png_size(shot) == (1280, 2000)
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one
    return text


def test_synthetic_report_renders(tmp_path, synthetic_report):
    _, written = synthetic_report
    check_page(tmp_path, written.html, min_tables=25, min_images=9)


def test_real_log_report_renders_and_sorts(tmp_path, real_report):
    written = real_report
    check_page(tmp_path, written.html, min_tables=8, min_images=3)
    # click a numeric header twice: the script sorts the rows (descending on the second click)
    probe = tmp_path / "probe.html"
    probe.write_text(written.html.read_text().replace("</body>", """<script>
      var table = document.querySelectorAll("table.sortable")[1];
      var th = table.querySelectorAll("th")[2]; th.click(); th.click();
      var values = Array.prototype.map.call(table.tBodies[0].rows, function (r) {
        return parseFloat(r.cells[2].getAttribute("data-sort")); });
      document.body.setAttribute("data-probe", JSON.stringify(values) + "|" + th.className);
    </script></body>"""))
    dom = chromium(tmp_path, probe, "--dump-dom").stdout
    values, cls = re.search(r'data-probe="([^"]*)"', dom).group(1).split("|")
    numbers = [float(x) for x in values.strip("[]").split(",") if x and x != "null"]
    assert numbers == sorted(numbers, reverse=True) and "desc" in cls


def test_wide_tables_scroll_inside_the_page_and_degenerate_statistics_say_so(tmp_path, synthetic_report, fast):
    """At a narrow window the leaderboard (a column per family and arm) is wider than the page:
    it scrolls inside its wrapper, the page itself never gets wider than the window; a paired
    comparison on too few common tasks reads "too few samples"."""
    import pandas as pd

    from execbench.analysis.schema import normalize
    from execbench.report import write_report
    from execbench.report.leaderboard import TOO_FEW

    _, written = synthetic_report
    probe = tmp_path / "wide.html"
    probe.write_text(written.html.read_text().replace("</body>", """<script>
      var wraps = Array.prototype.slice.call(document.querySelectorAll(".tablewrap"));
      var board = document.querySelector("#leaderboard .tablewrap");
      var scrolling = wraps.filter(function (w) { return w.scrollWidth > w.clientWidth + 1; }).length;
      document.body.setAttribute("data-probe", [board.scrollWidth, board.clientWidth,
        getComputedStyle(board).overflowX, document.documentElement.scrollWidth, window.innerWidth,
        scrolling].join("|"));
    </script></body>"""))
    result = chromium(tmp_path, probe, "--dump-dom", "--window-size=700,1200")
    assert result.returncode == 0, result.stderr[-2000:]
    board_scroll, board_client, overflow, page_width, window, scrolling = \
        re.search(r'data-probe="([^"]*)"', result.stdout).group(1).split("|")
    assert int(board_scroll) > int(board_client) and overflow == "auto" and int(scrolling) >= 1
    assert int(page_width) <= int(window)  # nothing clips or widens the page: the table scrolls instead
    shot = tmp_path / "wide.png"
    assert chromium(tmp_path, probe, f"--screenshot={shot}", "--window-size=700,1200").returncode == 0
    assert png_size(shot) == (700, 1200) and shot.stat().st_size > 20_000

    rows = [{"model": f"prov/{name}", "setting": name, "variant": "direct", "family": "trace", "arm": "trace",
             "task_id": f"trace/s/c{i}#trace", "source_id": f"s/p{i}", "correct": i < right, "completed": True,
             "trace_length": 3 + i, "epoch": 1} for name, right in (("alpha", 4), ("beta", 1)) for i in range(5)]
    small = write_report(normalize(pd.DataFrame(rows)), tmp_path / "small.html", options=fast)
    dom = chromium(tmp_path, small.html, "--dump-dom").stdout
    assert TOO_FEW in dom
