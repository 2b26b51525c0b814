"""Metric labels and error-model terms come from what the families declare (``AnalysisFacts.metric_labels``)."""

import numpy as np
import pandas as pd

from execbench.analysis import logistic
from execbench.analysis.schema import metric_label, metric_terms
from execbench import registry
from execbench.contract import AnalysisFacts


def _all_facts() -> list[AnalysisFacts]:
    return [a for f in registry.registered() if (a := f.capability(AnalysisFacts)) is not None]


def test_labels_are_the_declared_ones_else_the_static_ones_else_the_name():
    declared = {m.name: m.label for a in _all_facts() for m in a.metric_labels}
    assert declared  # the built-in families declare some
    for name, label in declared.items():
        assert metric_label(name) == label
    assert metric_label("loc") == "LOC"
    assert metric_label("no_such_metric") == "no_such_metric"


def test_an_error_model_names_its_terms_as_the_family_declares():
    facts = next(a for a in _all_facts() if a.logistic_models)
    terms = metric_terms(facts)
    name, predictors = facts.logistic_models[0]
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({
        "completed": True, "study": "s", "arm": "a", "setting": "x", "source_id": [f"p{i % 80}" for i in range(n)],
        **{p: rng.integers(1, 500, n).astype(float) for p in predictors}})
    frame["correct"] = rng.random(n) < 1 / (1 + frame[predictors[0]] / 200)
    fit = logistic.fit_error_model(frame, predictors, name, terms=terms)
    assert fit.status == "ok", fit.message
    assert [t["term"] for t in fit.terms] == [terms.get(p, p) for p in predictors]
    assert any(t["term"] != t["predictor"] for t in fit.terms)  # a declared term differs from its column
    plain = logistic.fit_error_model(frame, predictors, name)
    assert [t["term"] for t in plain.terms] == list(predictors)
