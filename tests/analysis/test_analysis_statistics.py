"""Each statistic against an independently computed value, on data with known effects."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from execbench.analysis import compare, correlations, logistic, mann_whitney, memorisation, paired
from execbench.analysis.bootstrap import cluster_ratio_interval
from execbench import registry
from execbench.analysis.schema import facts, normalize


def _paired_arms() -> tuple[str, str]:
    declared = facts("state")
    assert declared is not None and declared.paired_arms is not None
    return declared.paired_arms


def _logit(x):
    return 1 / (1 + np.exp(-x))


# -- correlations (paper 000 tables 4 and 6) -----------------------------------------------------
@pytest.fixture(scope="module")
def repo_frame():
    """Correctness depends on DFI only; ESV and MCL correlate with DFI (so their raw r is
    negative) but carry no independent signal."""
    rng = np.random.default_rng(11)
    n = 1500
    dfi = rng.poisson(8, n) + 1.0
    esv = 40 * dfi + rng.normal(0, 120, n) + 300
    mcl = 10 * dfi + rng.normal(0, 60, n) + 100
    correct = rng.random(n) < _logit(2.5 - 0.3 * dfi)
    return normalize(pd.DataFrame({"setting": "s", "family": "repo", "arm": "masked-assertion",
                                   "source_id": [f"r/{i // 3}" for i in range(n)], "task_id": [f"t{i}" for i in range(n)],
                                   "esv": esv, "mcl": mcl, "dfi": dfi, "correct": correct}))


def test_pearson_matches_scipy(repo_frame):
    table = correlations.pearson_table(repo_frame, ["esv", "mcl", "dfi"]).set_index("metric")
    y = repo_frame["correct"].astype(float)
    for metric in ("esv", "mcl", "dfi"):
        want = stats.pearsonr(repo_frame[metric], y)
        assert table.loc[metric, "r"] == pytest.approx(want.statistic, abs=1e-12)
        assert table.loc[metric, "p"] == pytest.approx(want.pvalue, rel=1e-9)
        # the Fisher-z interval written out: tanh(atanh(r) -+ z / sqrt(n - 3))
        half = stats.norm.ppf(0.975) / math.sqrt(table.loc[metric, "n"] - 3)
        want_ci = (math.tanh(math.atanh(want.statistic) - half), math.tanh(math.atanh(want.statistic) + half))
        assert (table.loc[metric, "r_low"], table.loc[metric, "r_high"]) == pytest.approx(want_ci, abs=1e-9)
    assert table.loc["esv", "r"] < -0.1 and table.loc["dfi", "r"] < table.loc["esv", "r"]


def test_partial_correlation_matches_the_precision_matrix(repo_frame):
    table = correlations.partial_table(repo_frame, ["esv", "mcl", "dfi"]).set_index("metric")
    data = repo_frame[["correct", "esv", "mcl", "dfi"]].astype(float).to_numpy()
    precision = np.linalg.inv(np.corrcoef(data, rowvar=False))
    n, k = len(data), 2
    for j, metric in enumerate(("esv", "mcl", "dfi"), start=1):
        r = -precision[0, j] / math.sqrt(precision[0, 0] * precision[j, j])
        t = r * math.sqrt((n - 2 - k) / (1 - r * r))
        p = 2 * stats.t.sf(abs(t), n - 2 - k)
        assert table.loc[metric, "r"] == pytest.approx(r, abs=1e-10)
        assert table.loc[metric, "p"] == pytest.approx(p, rel=1e-6)
    # the known effect: only DFI keeps an independent association
    assert table.loc["dfi", "r"] < -0.15 and table.loc["dfi", "p"] < 1e-6
    assert abs(table.loc["esv", "r"]) < 0.06 and abs(table.loc["mcl", "r"]) < 0.06


def test_correlations_degrade_when_every_answer_is_wrong(repo_frame):
    wrong = repo_frame.assign(correct=False)
    table = correlations.pearson_table(wrong, ["esv", "dfi"])
    assert table["r"].isna().all() and set(table["note"]) == {"every answer wrong"}
    partial = correlations.partial_table(wrong, ["esv", "mcl", "dfi"])
    assert partial["r"].isna().all() and set(partial["note"]) == {"every answer wrong"}


def test_binned_accuracy_falls_with_dfi(repo_frame):
    table = correlations.binned_accuracy(repo_frame, "dfi", bins=4)
    assert table["N"].sum() == len(repo_frame)
    assert table["acc_cr"].iloc[0] > table["acc_cr"].iloc[-1] + 0.2


# -- paired short vs long (paper 001 §5.1, table 7) ------------------------------------------------
def _state_pairs(seed=5, sources=80, settings=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(sources):
        ease = rng.normal(0, 1.5)
        for setting in settings:
            for arm, shift in (("short-trace-final", 1.0), ("long-trace-final", -0.2)):
                rows.append({"setting": setting, "family": "state", "arm": arm, "source_id": f"lcb/{s}",
                             "task_id": f"state/lcb/{s}#{arm}", "completed": True,
                             "correct": bool(rng.random() < _logit(ease + shift))})
    return normalize(pd.DataFrame(rows))


def test_paired_counts_and_decrement():
    df = _state_pairs()
    pairs = paired.short_long_pairs(df, *_paired_arms())
    assert len(pairs) == 80 * 3
    short = df[df["arm"] == "short-trace-final"].set_index(["setting", "source_id"])["correct"]
    long = df[df["arm"] == "long-trace-final"].set_index(["setting", "source_id"])["correct"]
    summary = paired.paired_summary(pairs, replicates=4000)
    assert summary["correct_to_wrong"] == int((short & ~long).sum())
    assert summary["wrong_to_correct"] == int((~short & long).sum())
    assert summary["decrement"] == pytest.approx(short.mean() - long.mean())
    # an independent loop implementation of the source-clustered percentile bootstrap
    diff = (short.astype(float) - long.astype(float)).groupby(level="source_id").agg(["sum", "size"])
    rng = np.random.default_rng(123)
    reps = []
    for _ in range(4000):
        idx = rng.integers(0, len(diff), len(diff))
        reps.append(diff["sum"].to_numpy()[idx].sum() / diff["size"].to_numpy()[idx].sum())
    low, high = np.quantile(reps, [0.025, 0.975])
    assert summary["low"] == pytest.approx(low, abs=0.012)
    assert summary["high"] == pytest.approx(high, abs=0.012)
    assert summary["low"] > 0  # the known effect: longer inputs are harder


def test_clustered_interval_is_wider_than_an_iid_one_when_clusters_agree():
    # every pair of a source has the same outcome: 20 effective observations, not 200
    num = np.repeat(np.r_[np.ones(8), np.zeros(12)], 10)  # 20 sources x 10 identical pairs
    clustered = cluster_ratio_interval(num.reshape(20, 10).sum(axis=1), np.full(20, 10.0), 4000)
    iid = cluster_ratio_interval(num, np.ones(200), 4000)
    assert clustered.estimate == pytest.approx(0.4) == pytest.approx(iid.estimate)
    assert clustered.high - clustered.low > 2 * (iid.high - iid.low)


def test_pairs_need_both_responses():
    df = _state_pairs(sources=10, settings=("a",))
    df.loc[df.index[1], "completed"] = False  # the long answer of source 0
    pairs = paired.short_long_pairs(df, *_paired_arms())
    assert len(pairs) == 9 and "state/lcb/0" not in set(pairs["case"])


# -- logistic error models (paper 001 appendix D, table 6) -----------------------------------------
def _error_frame(seed=2, sources=150, slope=0.45):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(sources):
        study = "classic" if s % 3 == 0 else "lcb_python"
        base_trace = rng.uniform(3, 10)
        peak = float(2 ** rng.uniform(1, 5))
        for setting, bias in (("high", -1.0), ("off", 0.8)):
            for arm, extra in zip(tuple(registry.get("state").arms), (0.0, 1.5, 2.5, 3.0)):
                trace = float(2 ** (base_trace + extra))
                eta = -1.5 + bias + slope * (math.log2(trace) - 7) + 0.3 * (study == "classic")
                rows.append({"setting": setting, "study": study, "family": "state", "arm": arm,
                             "source_id": f"{study}/{s}", "task_id": f"state/{study}/{s}#{arm}",
                             "trace_length": trace, "peak_state": peak, "state_load": trace * peak,
                             "completed": True, "correct": bool(rng.random() >= _logit(eta))})
    return normalize(pd.DataFrame(rows))


def _cluster_sandwich(X: np.ndarray, y: np.ndarray, beta: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The cluster-robust covariance written out: bread @ meat @ bread with the scores summed
    per cluster and the finite-sample factor G/(G-1) * (N-1)/(N-p)."""
    p = 1 / (1 + np.exp(-(X @ beta)))
    bread = np.linalg.inv((X * (p * (1 - p))[:, None]).T @ X)
    codes, inverse = np.unique(groups, return_inverse=True)
    summed = np.zeros((len(codes), X.shape[1]))
    np.add.at(summed, inverse, X * (y - p)[:, None])
    n, k, g = X.shape[0], X.shape[1], len(codes)
    return g / (g - 1) * (n - 1) / (n - k) * bread @ (summed.T @ summed) @ bread


def test_logistic_fit_matches_a_hand_written_cluster_sandwich():
    import statsmodels.api as sm

    df = _error_frame()
    fit = logistic.fit_error_model(df, ["trace_length", "peak_state"], "Trace + peak")
    assert fit.status == "ok", fit.message
    X, names = logistic.design_matrix(df, ["trace_length", "peak_state"])
    y = 1.0 - df["correct"].to_numpy(dtype=float)
    beta = sm.Logit(y, X).fit(disp=False).params  # the point estimate: plain maximum likelihood
    se = np.sqrt(np.diag(_cluster_sandwich(X, y, beta, df["source_id"].to_numpy())))
    crit = stats.t.ppf(0.975, fit.clusters - 1)
    for term in fit.terms:
        j = names.index(term["predictor"])
        assert term["coef"] == pytest.approx(beta[j], rel=1e-6)
        assert term["se"] == pytest.approx(se[j], rel=1e-6)
        assert term["low"] == pytest.approx(math.exp(beta[j] - crit * se[j]), rel=1e-6)
        assert term["high"] == pytest.approx(math.exp(beta[j] + crit * se[j]), rel=1e-6)
        assert term["p"] == pytest.approx(2 * stats.t.sf(abs(beta[j] / se[j]), fit.clusters - 1), rel=1e-6)
    trace = next(t for t in fit.terms if t["predictor"] == "trace_length")
    assert trace["low"] < math.exp(0.45) < trace["high"]  # the known slope per doubling
    assert fit.clusters == 150 and fit.n == len(df)


def test_logistic_reports_perfect_separation_instead_of_coefficients():
    df = _error_frame(sources=40)
    df["correct"] = df["trace_length"] < df["trace_length"].median()  # error iff long: complete separation
    fit = logistic.fit_error_model(df, ["trace_length", "peak_state"])
    assert fit.status == "separation" and not fit.terms
    assert "trace_length" in fit.separating


def test_logistic_reports_quasi_separation_from_an_all_wrong_setting():
    df = _error_frame(sources=40)
    df.loc[df["setting"] == "off", "correct"] = False
    fit = logistic.fit_error_model(df, ["trace_length", "peak_state"])
    assert fit.status == "separation" and not fit.terms
    assert "setting[off]" in fit.separating


def test_logistic_refuses_a_constant_outcome():
    df = _error_frame(sources=20).assign(correct=False)
    fit = logistic.fit_error_model(df, ["trace_length"])
    assert fit.status == "insufficient" and "every answer wrong" in fit.message


def test_logistic_reports_non_convergence(monkeypatch):
    from statsmodels.discrete import discrete_model

    original = discrete_model.Logit.fit
    monkeypatch.setattr(discrete_model.Logit, "fit", lambda self, **kw: original(self, **{**kw, "maxiter": 1}))
    fit = logistic.fit_error_model(_error_frame(sources=60), ["trace_length", "peak_state"])
    assert fit.status == "no convergence" and not fit.terms


# -- Mann-Whitney theta (paper 001 appendix E) --------------------------------------------------------
def test_theta_matches_scipy_with_ties():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 6, 60).astype(float)
    failed = rng.random(60) < 0.4
    u = stats.mannwhitneyu(x[failed], x[~failed]).statistic
    assert mann_whitney.theta(x, failed) == pytest.approx(u / (failed.sum() * (~failed).sum()))


def test_permutation_p_matches_exact_enumeration():
    x = np.array([1.0, 2, 2, 3, 5, 8, 9, 12, 13, 20])
    failed = np.array([0, 0, 1, 0, 0, 1, 0, 1, 1, 0], dtype=bool)
    observed = mann_whitney.theta(x, failed)
    exact = []
    for chosen in itertools.combinations(range(10), 4):
        mask = np.zeros(10, dtype=bool)
        mask[list(chosen)] = True
        exact.append(mann_whitney.theta(x, mask) >= observed - 1e-12)
    value, p = mann_whitney.permutation_test(x, failed, permutations=20_000)
    assert value == pytest.approx(observed)
    assert p == pytest.approx(np.mean(exact), abs=0.012)
    assert mann_whitney.permutation_test(x, failed, 2000, seed=9) == mann_whitney.permutation_test(x, failed, 2000, seed=9)


def test_theta_table_marks_inestimable_series_and_adjusts_p():
    df = _error_frame(sources=60)
    df.loc[df["setting"] == "off", "correct"] = False
    table = mann_whitney.theta_table(df, ["trace_length", "peak_state"], by=("setting",), permutations=2000)
    off = table[table["setting"] == "off"]
    assert off["theta"].isna().all() and set(off["note"]) == {"all wrong"}
    high = table[table["setting"] == "high"].set_index("metric")
    assert high.loc["trace_length", "theta"] > 0.6 and high.loc["trace_length", "p"] < 0.01
    ok = table["p"].notna()
    assert np.allclose(table.loc[ok, "p_bh"], _bh_by_hand(table.loc[ok, "p"].to_numpy()))


def _bh_by_hand(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up, written out: p_(i) * m / i, made monotone from the top."""
    m = len(p)
    order = np.argsort(p)
    adjusted = np.empty(m)
    running = 1.0
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        running = min(running, p[index] * m / rank)
        adjusted[index] = running
    return adjusted


def test_benjamini_hochberg_textbook_example():
    # Benjamini & Hochberg (1995) section 4: 15 p-values; at q = 0.05 the four smallest are rejected
    p = pd.Series([0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
                   0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000, math.nan])
    adjusted = mann_whitney.benjamini_hochberg(p)
    assert math.isnan(adjusted.iloc[-1])
    assert int((adjusted < 0.05).sum()) == 4
    assert np.allclose(adjusted.iloc[:-1], _bh_by_hand(p.iloc[:-1].to_numpy()))


# -- memorisation (paper 000 §4.4) -----------------------------------------------------------------------
def test_memorisation_rate_and_drop():
    rng = np.random.default_rng(8)
    rows = []
    for i in range(400):
        orig = bool(rng.random() < 0.73)
        mut = bool(rng.random() < (0.75 if orig else 0.2))
        for setting in ("a", "b"):
            base = {"setting": setting, "family": "repo", "arm": "masked-assertion", "completed": True,
                    "source_id": f"toolz/{i // 5}"}
            rows.append({**base, "task_id": f"repo/toolz/{i}#masked-assertion", "correct": orig})
            rows.append({**base, "task_id": f"repo/toolz-m/{i}#masked-assertion", "correct": mut,
                         "original_id": f"repo/toolz/{i}#masked-assertion"})
    rows.append({"setting": "a", "family": "repo", "task_id": "repo/x/orphan#masked-assertion", "correct": True,
                 "original_id": "repo/x/missing#masked-assertion", "source_id": "x/1"})
    df = normalize(pd.DataFrame(rows))
    table = memorisation.memorisation_table(df, replicates=2000).set_index("setting")
    a = df[df["setting"] == "a"]
    orig = a[a["original_id"].isna() & (a["task_id"] != "repo/x/orphan#masked-assertion")].set_index("task_id")["correct"]
    mut = a[a["original_id"].notna()].set_index("original_id")["correct"].reindex(orig.index)
    assert table.loc["a", "pairs"] == 400
    assert table.loc["a", "mr"] == pytest.approx(float((orig & ~mut).mean()))
    assert table.loc["a", "reverse"] == pytest.approx(float((~orig & mut).mean()))
    assert table.loc["a", "drop"] == pytest.approx(float(orig.mean() - mut.mean()))
    assert table.loc["a", "drop_low"] < table.loc["a", "drop"] < table.loc["a", "drop_high"]
    assert table.loc["a", "drop_low"] > 0
    assert table.loc["a", "mr_wilson_low"] < table.loc["a", "mr"] < table.loc["a", "mr_wilson_high"]


def test_memorisation_without_pairs():
    df = normalize(pd.DataFrame([{"setting": "a", "task_id": "t", "correct": True}]))
    assert memorisation.memorisation_table(df).empty


# -- two runs of one model (paper 000 appendix B.4) -----------------------------------------------------
def test_compare_runs_cells_and_stability():
    rng = np.random.default_rng(3)
    rows = []
    for setting, variant, temperature, boost in (("m t0", "direct", 0.0, 0.0), ("m t1", "direct", 1.0, -0.8),
                                                 ("other", "direct", 0.0, 0.0)):
        model = "other" if setting == "other" else "m"
        for i in range(300):
            dfi = 1 + i % 15
            rows.append({"model": model, "setting": setting, "variant": variant, "temperature": temperature,
                         "family": "repo", "arm": "masked-assertion", "repository": ("toolz", "sympy")[i % 2],
                         "task_id": f"repo/x/{i}#masked-assertion", "source_id": f"x/{i // 2}", "dfi": dfi,
                         "esv": 10.0 * dfi + i % 7, "correct": bool(rng.random() < _logit(2 + boost - 0.2 * dfi))})
    df = normalize(pd.DataFrame(rows))
    assert compare.run_pairs(df) == [("m t0", "m t1")]
    cells = compare.cell_deltas(df, "m t0", "m t1").set_index("cell")
    for cell, mask in (("(all)", slice(None)), ("repository=toolz", df["repository"] == "toolz")):
        sub = df[mask] if not isinstance(mask, slice) else df
        a = sub.loc[sub["setting"] == "m t0", "correct"].mean()
        b = sub.loc[sub["setting"] == "m t1", "correct"].mean()
        assert cells.loc[cell, "delta"] == pytest.approx(b - a)
    summary = compare.compare_runs(df, "m t0", "m t1", replicates=2000)
    assert summary["pairs"] == 300 and summary["low"] > 0  # t1 is worse: A minus B is positive
    stab = compare.correlation_stability(df, "m t0", "m t1", ["esv", "dfi"], "repo").set_index("metric")
    t0 = df[df["setting"] == "m t0"]
    t1 = df[df["setting"] == "m t1"]
    r0 = stats.pearsonr(t0["dfi"], t0["correct"].astype(float)).statistic
    r1 = stats.pearsonr(t1["dfi"], t1["correct"].astype(float)).statistic
    assert stab.loc["dfi", "r_a"] == pytest.approx(r0) and stab.loc["dfi", "delta"] == pytest.approx(r1 - r0)


# -- the same programs in two languages (the state family's paired corpus) -----------------------
def _language_pairs_frame(programs=40, settings=("m1", "m2"), seed=5):
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(programs):
        ease = rng.normal(0, 1.0)
        for setting in settings:
            for arm in ("short-trace-final", "long-trace-final"):
                for language, suffix, shift in (("python", "py", 0.8), ("cpp", "cpp", 0.0)):
                    rows.append({"setting": setting, "family": "state", "arm": arm, "language": language,
                                 "source_id": f"paired/p{p}-{suffix}", "pair": f"p{p}",
                                 "task_id": f"state/paired/p{p}-{suffix}#{arm}", "completed": True,
                                 "correct": bool(rng.random() < _logit(ease + shift))})
    return normalize(pd.DataFrame(rows))


def test_language_pairs_match_one_program_in_both_languages():
    df = _language_pairs_frame()
    # a task outside the paired corpus and a C++ answer that did not complete are left out
    df = pd.concat([df, normalize(pd.DataFrame([{"setting": "m1", "family": "state", "arm": "short-trace-final",
                                                  "language": "python", "source_id": "classic/x",
                                                  "task_id": "state/classic/x#short-trace-final",
                                                  "completed": True, "correct": True}]))], ignore_index=True)
    gone = df.index[(df["pair"] == "p0") & (df["language"] == "cpp") & (df["setting"] == "m1")
                    & (df["arm"] == "short-trace-final")][0]
    df.loc[gone, "completed"] = False
    pairs = paired.language_pairs(df, "python", "cpp")
    assert len(pairs) == 40 * 2 * 2 - 1
    assert set(pairs["source_id"]) == {f"p{p}" for p in range(40)}
    python = df[(df["language"] == "python") & df["pair"].notna()].set_index(["setting", "pair", "arm"])["correct"]
    cpp = df[(df["language"] == "cpp")].set_index(["setting", "pair", "arm"])["correct"].drop(("m1", "p0",
                                                                                              "short-trace-final"))
    summary = paired.paired_summary(pairs, replicates=2000)
    assert summary["sources"] == 40
    assert summary["decrement"] == pytest.approx((python.drop(("m1", "p0", "short-trace-final")).astype(float)
                                                  - cpp.astype(float)).mean())
    assert summary["low"] < summary["decrement"] < summary["high"]
    assert paired.language_pairs(df[df["language"] == "python"], "python", "cpp").empty


def test_the_report_shows_the_paired_language_table():
    from execbench.report.sections import Options, slice_tables_section

    headlines: list[str] = []
    sec = slice_tables_section(_language_pairs_frame(programs=12), "state", {}, Options(replicates=500), headlines)
    html = sec.render() if hasattr(sec, "render") else str(sec.__dict__)
    assert "Paired python-minus-cpp accuracy on the same programs" in html
    assert any("the same programs in python and cpp" in h for h in headlines)


def test_theta_series_are_per_language_when_cpp_has_its_own_state_metrics():
    from execbench.report.sections import Options, relations_section

    rng = np.random.default_rng(9)
    rows = []
    for language in ("python", "cpp"):
        for case in range(30):
            load = float(rng.integers(10, 10_000))
            for arm in ("short-trace-final", "long-trace-final"):
                rows.append({"setting": "m", "family": "state", "arm": arm, "language": language,
                             "source_id": f"classic/{case}-{language}", "task_id": f"state/classic/{case}-{language}#{arm}",
                             "completed": True, "correct": bool(load < 5000), "state_load": load,
                             "trace_length": load * 3, "peak_state": load / 10})
    sec = relations_section(normalize(pd.DataFrame(rows)), "state", {}, Options(replicates=200, permutations=200), [])
    from execbench.report.tables import Table

    theta = next(t for _, t in sec.blocks if isinstance(t, Table) and t.title.startswith("θ per series"))
    assert {r["language"] for r in theta.rows} == {"python", "cpp"}
    cpp_load = [r for r in theta.rows if r["language"] == "cpp" and r["metric"] == "state load"]
    assert len(cpp_load) == 1 and cpp_load[0]["theta"] == pytest.approx(1.0)
