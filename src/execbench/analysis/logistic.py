"""Exploratory logistic models of error (paper 001 §5.2 and appendix D, table 6).

Outcome: 1 for a wrong completed response. Design: an intercept, indicator columns for
study, arm and setting (the first level of each is the reference; a factor with one level
is dropped), and mean-centred ``log2`` of the dynamic predictors (native trace length,
peak state size, cumulative state load: the predictors a family's
``AnalysisFacts.logistic_models`` names). Slopes are changes in error log-odds per
doubling; odds ratios are ``exp(slope)``.

Uncertainty is clustered by clean source (``source_id``): statsmodels' cluster-robust
sandwich covariance (``cov_type="cluster"``, finite-sample factor
``G/(G-1) * (N-1)/(N-p)``); intervals and two-sided Wald tests use a t distribution with
``G-1`` degrees of freedom (``use_t=True``).

A fit is reported as a coefficient table only when the maximum-likelihood estimate exists
and was found. Before fitting, a linear program tests for complete or quasi-complete
separation (Konis 2007: is there a direction ``b != 0`` with ``(2y-1) x_i'b >= 0`` for
every row?): statsmodels would only warn and return huge coefficients. Separation,
non-convergence, a rank-deficient design, a constant outcome or too few clusters are
reported as such, never as coefficients.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import optimize

from execbench.analysis.schema import ARM_ORDER



@dataclass
class Fit:
    name: str
    status: str                 # "ok" | "separation" | "no convergence" | "rank deficient" | "insufficient"
    message: str = ""
    n: int = 0
    clusters: int = 0
    iterations: int | None = None
    condition: float | None = None
    terms: list[dict] = field(default_factory=list)   # predictor rows (odds ratios), only when ok
    separating: list[str] = field(default_factory=list)


def design_matrix(df: pd.DataFrame, predictors: Sequence[str],
                  factors: Sequence[str] = ("study", "arm", "setting")) -> tuple[np.ndarray, list[str]]:
    """Intercept, reference-coded factor indicators, mean-centred log2 predictors."""
    columns = [np.ones(len(df))]
    names = ["Intercept"]
    for factor in factors:
        values = df[factor].astype(str)
        order = ARM_ORDER if factor == "arm" else ()
        levels = sorted(values.unique(), key=lambda v: (order.index(v) if v in order else len(order), v))
        for level in levels[1:]:
            columns.append((values == level).to_numpy(dtype=float))
            names.append(f"{factor}[{level}]")
    for predictor in predictors:
        x = np.log2(df[predictor].to_numpy(dtype=float))
        columns.append(x - x.mean())
        names.append(predictor)
    return np.column_stack(columns), names


def separation(X: np.ndarray, y: np.ndarray, tol: float = 1e-7) -> np.ndarray | None:
    """A direction ``b`` (|b_j| <= 1) with ``(2y-1) * X b >= 0`` everywhere and ``> 0``
    somewhere, or None: the logistic MLE exists iff there is none."""
    signed = (2 * y - 1)[:, None] * X
    scale = np.maximum(1.0, np.abs(signed).max(axis=0))
    signed = signed / scale
    result = optimize.linprog(-signed.sum(axis=0), A_ub=-signed, b_ub=np.zeros(len(y)),
                              bounds=[(-1, 1)] * X.shape[1], method="highs")
    if result.status != 0:
        return None
    if -result.fun > tol * len(y):
        return result.x / scale
    return None


def fit_error_model(df: pd.DataFrame, predictors: Sequence[str], name: str = "",
                    factors: Sequence[str] = ("study", "arm", "setting"), cluster: str = "source_id",
                    terms: Mapping[str, str] | None = None) -> Fit:
    """Fit one error model on completed rows with positive predictor values; ``terms`` names the
    predictors in the fit's rows (a family's ``Metric.term``; default: the column name)."""
    from statsmodels.discrete.discrete_model import Logit

    rows = df[df["completed"]].copy()
    for predictor in predictors:
        rows = rows[pd.to_numeric(rows[predictor], errors="coerce") > 0]
    fit = Fit(name=name or " + ".join(predictors), status="insufficient", n=len(rows),
              clusters=int(rows[cluster].nunique()) if len(rows) else 0)
    if len(rows) < 10:
        fit.message = f"only {len(rows)} completed responses with positive {', '.join(predictors)}"
        return fit
    y = 1.0 - rows["correct"].to_numpy(dtype=float)
    if y.min() == y.max():
        fit.message = "every answer wrong: no variation in the outcome" if y[0] else \
            "every answer correct: no variation in the outcome"
        return fit
    if fit.clusters < 3:
        fit.message = f"only {fit.clusters} source clusters"
        return fit
    X, names = design_matrix(rows, predictors, factors)
    if np.linalg.matrix_rank(X) < X.shape[1]:
        fit.status = "rank deficient"
        fit.message = "the design is not of full column rank (a predictor is collinear with the intercepts)"
        return fit
    direction = separation(X, y)
    if direction is not None:
        fit.status = "separation"
        fit.separating = [n for n, b in zip(names, direction) if abs(b) > 1e-6]
        fit.message = ("perfect (quasi-)separation: the outcome is predicted exactly along "
                       f"{', '.join(fit.separating)}; the maximum-likelihood estimate does not exist")
        return fit
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            groups = pd.factorize(rows[cluster].astype(str))[0]
            result = Logit(y, X).fit(method="newton", maxiter=100, disp=False, cov_type="cluster",
                                     cov_kwds={"groups": groups, "use_correction": True}, use_t=True)
        except (np.linalg.LinAlgError, ValueError, OverflowError) as exc:
            fit.status = "no convergence"
            fit.message = f"the fit failed: {exc}"
            return fit
    converged = bool(result.mle_retvals.get("converged", False))
    fit.iterations = int(result.mle_retvals.get("iterations", 0) or 0)
    beta = np.asarray(result.params, dtype=float)
    if not converged or not np.all(np.isfinite(beta)):
        fit.status = "no convergence"
        warned = "; ".join(sorted({str(w.message).splitlines()[0] for w in caught}))
        fit.message = f"Newton iterations did not converge in {fit.iterations} steps" + (f" ({warned})" if warned else "")
        return fit
    se = np.asarray(result.bse, dtype=float)
    try:
        fit.condition = float(np.linalg.cond(-result.model.hessian(result.params)))
    except np.linalg.LinAlgError:
        fit.condition = math.inf
    if not np.all(np.isfinite(se)) or not np.isfinite(fit.condition):
        fit.status = "no convergence"
        fit.message = "the information matrix is singular at the estimate"
        return fit
    low_high = np.asarray(result.conf_int(alpha=0.05), dtype=float)
    pvalues = np.asarray(result.pvalues, dtype=float)
    for index, term in enumerate(names):
        if term not in predictors:
            continue
        b = beta[index]
        fit.terms.append({
            "term": (terms or {}).get(term, term), "predictor": term, "coef": b, "se": float(se[index]),
            "odds_ratio": math.exp(b), "low": math.exp(low_high[index, 0]), "high": math.exp(low_high[index, 1]),
            "p": float(pvalues[index]),
        })
    fit.status = "ok"
    return fit


def error_models(df: pd.DataFrame, models: Sequence[tuple[str, Sequence[str]]]) -> tuple[list[Fit], pd.DataFrame]:
    """The (name, predictors) models (a family's ``AnalysisFacts.logistic_models``, e.g. paper 001
    table 6) and the correlations of their log2 predictors."""
    fits = [fit_error_model(df, predictors, name) for name, predictors in models]
    needed = sorted({p for _, ps in models for p in ps})
    rows = df[df["completed"]]
    for p in needed:
        rows = rows[pd.to_numeric(rows[p], errors="coerce") > 0]
    logs = np.log2(rows[needed].astype(float)) if len(rows) > 2 else pd.DataFrame(columns=needed)
    corr = logs.corr() if len(logs) > 2 else pd.DataFrame()
    return fits, corr
