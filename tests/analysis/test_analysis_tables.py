"""Accuracy tables, Wilson intervals, trace-length buckets and the CoCoNUT metrics."""

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from execbench.analysis import tables as T
from execbench.analysis.schema import normalize
from execbench.analysis.trace_metrics import per_task_row, per_task_table
from execbench.families.trace.summary import trace_summary


# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Statistics in
# Medicine 17:857-872, table I, method 3 (score interval without continuity correction).
NEWCOMBE_WILSON = [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
                   (1, 29, 0.0061, 0.1718), (29, 29, 0.8830, 1.0)]


@pytest.mark.parametrize("k,n,low,high", NEWCOMBE_WILSON)
def test_wilson_matches_newcombes_published_intervals(k, n, low, high):
    p, lo, hi = T.wilson(k, n)
    assert p == pytest.approx(k / n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_wilson_at_another_level():
    # z = 2.5758 (99%): the interval widens around the same centre
    p, lo, hi = T.wilson(81, 263, z=2.5758293035489)
    assert lo < 0.2553 and hi > 0.3662
    want_lo, want_hi = proportion_confint(81, 263, alpha=0.01, method="wilson")
    assert (lo, hi) == (pytest.approx(want_lo), pytest.approx(want_hi))


def test_wilson_of_nothing_is_nan():
    assert all(math.isnan(x) for x in T.wilson(0, 0))


def test_accuracy_table_separates_completed_and_planned():
    df = normalize(pd.DataFrame({
        "setting": ["a"] * 10, "family": "state", "arm": "short-trace-final",
        "completed": [True] * 8 + [False] * 2, "correct": [True] * 6 + [False] * 2 + [False] * 2,
    }))
    row = T.accuracy_table(df, ["setting"]).iloc[0]
    assert (row["N"], row["R"], row["C"]) == (10, 8, 6)
    assert row["acc_cr"] == pytest.approx(6 / 8) and row["acc_cn"] == pytest.approx(6 / 10)
    assert (row["acc_cr_low"], row["acc_cr_high"]) == pytest.approx(proportion_confint(6, 8, method="wilson"))
    assert (row["acc_cn_low"], row["acc_cn_high"]) == pytest.approx(proportion_confint(6, 10, method="wilson"))


def test_correct_never_counts_without_a_response():
    df = normalize([{"completed": False, "correct": True, "setting": "s", "family": "trace"}])
    assert not df["correct"].iloc[0]


def test_length_buckets_are_left_closed_as_the_papers_rows_decide():
    lengths = pd.Series([1, 2, 3, 4, 5, 9, 10, 24, 25, 39, 40, 500, 0, np.nan])
    got = list(T.length_buckets(lengths))
    assert got == ["1-3", "1-3", "3-5", "3-5", "5-10", "5-10", "10-25", "10-25", "25-40", "25-40", "40+", "40+",
                   None, None]


def test_bucket_table_counts_each_bucket():
    df = normalize(pd.DataFrame({"setting": "s", "family": "trace", "trace_length": [2, 2, 30, 30, 30, 60],
                                 "correct": [True, True, True, False, False, False]}))
    table = T.bucket_table(df, ("setting",), "trace_length").set_index("bucket")
    assert list(table.index) == ["1-3", "25-40", "40+"]
    assert table.loc["25-40", "acc_cr"] == pytest.approx(1 / 3)
    assert table.loc["1-3", "N"] == 2


def test_quantile_bins_keep_ties_together():
    values = pd.Series([1, 1, 1, 1, 2, 3, 4, 5, 1500, 2600])
    labels = T.quantile_bins(values, bins=5)
    assert labels.iloc[:4].nunique() == 1
    assert T.bin_order(labels)[0].startswith("1")
    assert T.bin_order(labels)[-1].endswith("k")


def _trace_frame(seed=3, tasks=25, traces=6, drop=0.1):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        skill = rng.uniform(0.1, 0.95)
        for k in range(traces):
            correct = bool(rng.random() < skill)
            completed = bool(rng.random() > drop)
            rows.append({"setting": "s", "family": "trace", "arm": "trace", "source_id": f"he/{t}",
                         "task_id": f"trace/he/{t}/{k}#trace", "completed": completed,
                         "correct": correct and completed,
                         "similarity": 1.0 if correct else float(rng.uniform(0, 0.95))})
    return normalize(pd.DataFrame(rows))


def test_coconut_metrics_match_the_grading_summary():
    df = _trace_frame()
    row = per_task_row(df, replicates=500)
    # C/N: every planned sample, a missing response is wrong with similarity 0
    cn = trace_summary({"task_group": s, "correct": c, "similarity": (sim if done else 0.0), "status": "ok"}
                       for s, c, sim, done in zip(df["source_id"], df["correct"], df["similarity"], df["completed"]))
    assert row["accuracy_cn"] == pytest.approx(cn["accuracy"])
    assert row["acc_mean_cn"] == pytest.approx(cn["accuracy_mean"])
    assert row["acc_hard_cn"] == pytest.approx(cn["accuracy_hard"])
    assert row["similarity_cn"] == pytest.approx(cn["similarity"])
    assert row["false_similarity_cn"] == pytest.approx(cn["false_similarity"])
    # C/R: completed responses only
    done = df[df["completed"]]
    cr = trace_summary({"task_group": s, "correct": c, "similarity": sim}
                       for s, c, sim in zip(done["source_id"], done["correct"], done["similarity"]))
    for key, ref in (("accuracy_cr", "accuracy"), ("acc_mean_cr", "accuracy_mean"), ("acc_hard_cr", "accuracy_hard"),
                     ("similarity_cr", "similarity"), ("false_similarity_cr", "false_similarity")):
        assert row[key] == pytest.approx(cr[ref]), key
    for key in ("acc_mean_cr", "similarity_cr", "false_similarity_cr", "acc_hard_cr"):
        assert row[f"{key}_low"] <= row[key] <= row[f"{key}_high"]


def test_coconut_table_by_topic():
    df = _trace_frame()
    df["topic"] = np.where(df["source_id"].str[-1].isin(list("01234")), "oop", "humaneval")
    table = per_task_table(df, ("topic", "setting"), replicates=200)
    assert set(table["topic"]) == {"oop", "humaneval"}
    assert table["N"].sum() == len(df)
