"""The HTML report and the per-sample table: structure, degradation, the CLI command."""

import re

import pandas as pd
from typer.testing import CliRunner

from analysis.inspect_fixture import shared_logs
from analysis.synthetic import synthetic_frame
from execbench.cli import app
from execbench.report import write_report
from execbench.families.trace.prompt import TEMPLATES


def sections(page: str) -> set[str]:
    return set(re.findall(r'<section id="([^"]+)"', page))


def test_full_report_has_every_family_section(synthetic_report):
    df, written = synthetic_report
    page = written.html.read_text()
    assert {"overview", "trace", "trace-metrics", "state", "state-metrics", "repo", "repo-metrics", "compare",
            "memorisation"} <= sections(page)
    for title in ("CoCoNUT metrics", "trace-length bucket", "by topic", "first-deviation category",
                  "Accuracy by arm", "Paired short-minus-long decrement", "Error odds ratio per doubling",
                  "θ per series", "Accuracy by annotated difficulty", "Accuracy by repository",
                  "Accuracy by reasoning scope", "Pearson correlation", "Partial correlation",
                  "Memorisation rate", "Stability of metric", "Accuracy per cell"):
        assert title in page, title
    assert page.count('src="data:image/png;base64,') >= 9
    assert "http://" not in page and "https://" not in page  # self-contained: nothing to fetch
    assert any("memorisation rate" in h for h in written.headlines)
    assert any("paired decrement" in h for h in written.headlines)
    table = pd.read_parquet(written.parquet)
    assert len(table) == len(df) and len(pd.read_csv(written.csv)) == len(df)


def test_report_degrades_when_every_answer_is_wrong(tmp_path, fast):
    df = synthetic_frame(scale=0.3).assign(correct=False)
    written = write_report(df, tmp_path / "wrong.html", options=fast)
    page = written.html.read_text()
    assert "every answer wrong" in page
    assert "no variation in the outcome" in page            # logistic models refuse to fit
    assert "all wrong" in page                               # theta is inestimable
    assert "No coefficients are reported" in page
    assert "C/R" in page


def test_report_with_a_single_family_says_what_is_missing(tmp_path, fast):
    written = write_report(synthetic_frame(families=("state",), scale=0.3), tmp_path / "s.html", options=fast)
    page = written.html.read_text()
    assert "No trace-family samples" in page and "No repo-family samples" in page
    assert "No mutated tasks" in page
    assert sections(page) >= {"overview", "state", "state-metrics"} and "trace" not in sections(page)


def test_report_from_real_logs(real_report):
    written = real_report
    page = written.html.read_text()
    assert "scripted · direct · T=0" in page and "scripted · direct · T=1" in page
    assert f"trace/direct v{TEMPLATES.version('direct')}" in page and "sha256:" in page
    assert "condition skip" in page and "definition call" in page
    assert "Two runs of the same model" in page and "Accuracy per cell" in page
    assert any("returned no response" in h for h in written.headlines)


def test_cli_report_command(tmp_path):
    logs, _ = shared_logs()
    out = tmp_path / "cli" / "report.html"
    result = CliRunner().invoke(app, ["report", str(logs), "-o", str(out), "--replicates", "300",
                                      "--permutations", "300"])
    assert result.exit_code == 0, result.output
    assert out.is_file() and (tmp_path / "cli" / "report.samples.csv").is_file()
    assert "wrote" in result.output


def test_cli_report_refuses_a_missing_path(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path / "missing"), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2
    assert "no such file" in " ".join(result.output.split())
