"""The contamination view (issue 26) on a synthetic log: repo samples dated by release, a model
that does worse on code released after its cutoff; figures checked against independent
computations (Wilson's formula, scipy's Fisher test on the counts)."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import fisher_exact

from analysis.synthetic import synthetic_frame
from execbench.report import contamination, write_report

MONTHS = ["2026-03-14", "2026-04-02", "2026-05-20", "2026-06-09", "2026-07-30", "2026-09-01"]


def dated_frame():
    df = synthetic_frame(scale=0.3, families=("repo", "trace"))
    repo = df.index[df["family"] == "repo"]
    rng = np.random.default_rng(7)
    df.loc[repo, "release_date"] = [MONTHS[i % len(MONTHS)] for i in range(len(repo))]
    after = df["release_date"].fillna("") >= "2026-06-01"
    df.loc[repo, "correct"] = np.where(after[repo], rng.random(len(repo)) < 0.2, rng.random(len(repo)) < 0.7)
    return df


def _wilson(c: int, n: int) -> tuple[float, float]:
    p, z = c / n, 1.959963984540054
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_accuracy_by_month_and_before_after_a_cutoff(tmp_path, fast):
    df = dated_frame()
    months = contamination.by_month(df)
    repo = df[df["family"] == "repo"]
    assert set(months["month"]) == {d[:7] for d in MONTHS}
    assert months["n"].sum() == len(repo)  # only dated samples; trace samples carry no date
    row = months.iloc[0]
    group = repo[(repo["setting"] == row["setting"]) & (repo["release_date"].str[:7] == row["month"])]
    assert (row["n"], row["correct"]) == (len(group), int(group["correct"].sum()))
    assert np.allclose((row["acc_cr_low"], row["acc_cr_high"]), _wilson(row["correct"], row["n"]))

    split = contamination.before_after(df, "2026-06-01")
    for r in split.itertuples():
        mine = repo[repo["setting"] == r.setting]
        before, after = mine[mine["release_date"] < "2026-06-01"], mine[mine["release_date"] >= "2026-06-01"]
        cb, ca = int(before["correct"].sum()), int(after["correct"].sum())
        assert (r.n_before, r.n_after, r.correct_before, r.correct_after) == (len(before), len(after), cb, ca)
        assert math.isclose(r.delta, ca / len(after) - cb / len(before))
        assert r.delta_low < r.delta < r.delta_high
        assert math.isclose(r.p, fisher_exact([[cb, len(before) - cb], [ca, len(after) - ca]])[1])
        assert r.delta < -0.2 and r.p < 0.01  # the effect built into the frame is found
    assert contamination.before_after(df, "2027-01-01")["note"].str.contains("no tasks released after").all()

    written = write_report(df, tmp_path / "r.html", options=type(fast)(**{**fast.__dict__, "cutoff": "2026-06-01"}))
    page = written.html.read_text()
    assert 'id="contamination"' in page and "Accuracy by release month" in page and "Before vs after the cutoff" in page
    assert any("released after 2026-06-01" in h for h in written.headlines)
    assert "release_date" in written.csv.read_text().splitlines()[0]


def test_no_view_without_release_dates(tmp_path, fast):
    df = synthetic_frame(scale=0.3, families=("repo",))
    assert not contamination.has_dates(df) and contamination.by_month(df).empty
    assert 'id="contamination"' not in write_report(df, tmp_path / "r.html", options=fast).html.read_text()


def test_the_month_axis_keeps_gaps_and_places_the_cutoff_inside_its_month():
    assert contamination.month_range(["2026-11", "2026-07", "2026-09"]) == [
        "2026-07", "2026-08", "2026-09", "2026-10", "2026-11"]
    order = contamination.month_range(["2026-03", "2026-09"])
    assert contamination.cutoff_position("2026-06-01", order) == 2.5  # the left edge of June (index 3)
    assert contamination.cutoff_position("2026-06-16", order) == 3.0  # half-way through June's 30 days
    assert contamination.cutoff_position("2025-12-01", order) < -0.5  # before the axis: fill() draws no line


def test_the_figure_labels_c_over_n_and_draws_the_cutoff(tmp_path, fast):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from execbench.report import figures as F

    months = contamination.by_month(dated_frame())
    order = contamination.month_range(list(months["month"]))
    fig, ax = plt.subplots()
    F.accuracy_lines(months, "month", order, F.color_map(list(months["setting"].unique())), "t", "release month",
                     ax=ax, ylabel="accuracy (%, C/N)", marks=[(2.5, "cutoff 2026-06-01")])
    vertical = [line for line in ax.get_lines() if list(line.get_xdata()) == [2.5, 2.5]]
    assert len(vertical) == 1 and ax.get_ylabel() == "accuracy (%, C/N)"
    assert any(text.get_text() == "cutoff 2026-06-01" for text in ax.texts)
    plt.close(fig)

    df = dated_frame()
    page = write_report(df, tmp_path / "r.html", options=type(fast)(**{**fast.__dict__, "cutoff": "2026-06-01"})).html
    assert "Before C/N %" in page.read_text() and "the dashed line is the cutoff" in page.read_text()


def test_equal_accuracy_on_both_sides_reads_as_equal():
    from execbench.report.sections import Section

    df = dated_frame()
    df.loc[df["family"] == "repo", "correct"] = False  # a model that gets nothing right, before or after
    headlines: list[str] = []
    contamination.fill(Section(**contamination.SECTION), df, "2026-06-01", headlines)
    split = contamination.before_after(df, "2026-06-01")
    assert len(headlines) == split["setting"].nunique() and (split["delta"] == 0).all() and (split["p"] == 1).all()
    assert all("are as accurate as those released before it" in h and "pp" not in h for h in headlines)
