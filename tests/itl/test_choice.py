"""∞-CSC's and ∞-DLSE's choice of λ / input bandwidth inside ``fit`` (``lambda_=None``,
``input_bandwidth=None``): the held-out scores of the shared factorisation and warm-started
path against a brute-force loop that factorises each fold's own points and fits every
setting from zero (same folds); the refit against a plain fit with the chosen values; the
fitted ``selected_*`` attributes; bad values."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from manytask.itl import (
    InfiniteCostSensitiveClassifier,
    InfiniteLevelSetEstimator,
    classification,
    level_sets,
    selection,
)
from manytask.itl._estimator import level_set_penalty, median_bandwidth, minimise, ridge_penalty
from manytask.itl.classification import cost_sensitive_risk
from manytask.itl.losses import cost_sensitive_hinge
from manytask.itl.model import DecomposableModel
from manytask.kernels import RBF

TIGHT = 1e-12


def _risk_tolerance(lambdas):
    """How far two fits of the same λ-strongly convex problem (in whitened coordinates, where
    the ridge is λ/2 ‖V‖²), each within ~TIGHT of the least objective (< 1), can put the
    held-out risk apart: ‖ΔV‖ ≤ √(2 TIGHT/λ) each, |Δh| ≤ ‖ΔV‖ (Gaussian kernels, k = 1 on
    the diagonal) and the exact hinge is 1-Lipschitz with costs ≤ 1."""
    return 2 * np.sqrt(2 * TIGHT / np.asarray(lambdas))


def _folds(n):
    """The estimators' folds with random_state=0: 3 shuffled folds, all used below 200."""
    seed = int(np.random.default_rng(0).integers(2**31))
    return list(KFold(3, shuffle=True, random_state=seed).split(np.zeros((n, 1))))


def _standardised(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _two_classes(n=36, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-0.7, 1.0, (n // 2, 2)), rng.normal(0.7, 1.0, (n // 2, 2))])
    return X, np.repeat([0, 1], n // 2)


def _brute_force_csc(X, signs, model):
    """Held-out exact cost-sensitive hinge of eq. (4) for every (bandwidth, λ), each fold
    factorised and fitted alone from zero."""
    X_std = _standardised(X)
    median = median_bandwidth(X_std, 0)
    anchors, weights = model.anchors_, model.weights_
    risks = np.zeros((len(selection.BANDWIDTH_FACTORS), len(selection.LAMBDA_PATH)))
    for train, test in _folds(len(X)):
        for b, factor in enumerate(selection.BANDWIDTH_FACTORS):
            for index, lambda_ in enumerate(selection.LAMBDA_PATH):
                decomposable = DecomposableModel(RBF(factor * median), RBF(0.4), RBF(0.4))
                whitened = model._precompute(decomposable, X_std[train], anchors)
                term = cost_sensitive_risk(signs[train], anchors, weights, model.kappa)
                result = minimise(whitened, term, ridge_penalty(lambda_), 20000, TIGHT)
                A, B, c = whitened.to_coefficients(*whitened.unpack(result.x)[::2])
                values = decomposable.predict(A, B, c, X=X_std[test], theta=anchors)
                hinge = cost_sensitive_hinge(signs[test][:, None], values, anchors[None, :])
                risks[b, index] += np.mean(hinge, axis=0) @ weights
    return risks / 3


def test_csc_choice_equals_brute_force_over_the_grid(monkeypatch):
    monkeypatch.setattr(selection, "CV_TOL", TIGHT)
    monkeypatch.setattr(classification, "SELECTION_MAX_ITER", 20000)
    X, y = _two_classes(seed=4)  # a set whose best setting is clear of the second
    model = InfiniteCostSensitiveClassifier(n_anchors=5, tol=TIGHT, max_iter=20000, random_state=0)
    model.fit(X, y)
    expected = _brute_force_csc(X, 2.0 * y - 1.0, model)
    fitted = np.isfinite(model.cv_risks_)  # the early-stopped path: a prefix per bandwidth
    tolerance = np.broadcast_to(_risk_tolerance(selection.LAMBDA_PATH), expected.shape)
    assert np.all(np.abs(model.cv_risks_ - expected)[fitted] <= tolerance[fitted])
    # the least of the fitted settings, and not a near-tie (which could go either way)
    candidates = np.where(fitted, expected, np.inf).ravel()
    best, second = np.sort(candidates)[:2]
    assert second - best > 2 * tolerance.max()
    b, index = np.unravel_index(np.argmin(candidates), expected.shape)
    median = median_bandwidth(_standardised(X), 0)
    assert model.selected_lambda_ == selection.LAMBDA_PATH[index]
    assert model.selected_input_bandwidth_ == pytest.approx(
        selection.BANDWIDTH_FACTORS[b] * median, rel=1e-12
    )
    # the refit is a plain fit with the chosen values
    plain = InfiniteCostSensitiveClassifier(
        lambda_=model.selected_lambda_, input_bandwidth=model.selected_input_bandwidth_,
        n_anchors=5, tol=TIGHT, max_iter=20000,
    ).fit(X, y)  # fmt: skip
    levels = [-0.9, 0.0, 0.9]
    assert_allclose(
        model.decision_function(X, levels), plain.decision_function(X, levels), atol=1e-4
    )


def _brute_force_dlse(X, model, levels):
    """Held-out decision values h(x)(θ) − t(θ) at ``levels`` for every input bandwidth,
    each fold factorised and fitted alone from zero; one array (test points, levels) per
    (bandwidth, fold)."""
    X_std = _standardised(X)
    median = median_bandwidth(X_std, 0)
    anchors, weights = model.anchors_, model.weights_
    decisions = []
    for factor in level_sets.BANDWIDTH_FACTORS:
        per_fold = []
        for train, test in _folds(len(X)):
            decomposable = DecomposableModel(RBF(factor * median), RBF(0.2), RBF(0.2))
            whitened = model._precompute(
                decomposable, X_std[train], anchors, slopes=False, level_weights=weights,
                ridge=model.ridge,
            )  # fmt: skip
            term = level_sets.one_class_risk(anchors, weights, model.kappa)
            penalty = level_set_penalty(weights, model.lambda_, model.ridge)
            result = minimise(whitened, term, penalty, 20000, TIGHT)
            A, B, c = whitened.to_coefficients(*whitened.unpack(result.x)[::2])
            per_fold.append(decomposable.predict(A, B, c, X=X_std[test], theta=levels))
        decisions.append(per_fold)
    return decisions


def test_dlse_choice_equals_brute_force_over_the_bandwidths(monkeypatch):
    monkeypatch.setattr(selection, "CV_TOL", TIGHT)
    X = np.random.default_rng(1).normal(size=(36, 2))
    model = InfiniteLevelSetEstimator(n_anchors=5, tol=TIGHT, max_iter=20000, random_state=0)
    model.fit(X)
    levels = np.asarray(level_sets.SCORE_LEVELS)
    decisions = _brute_force_dlse(X, model, levels)
    # The gap counts signs, which a decision value within the two fits' distance of 0 may
    # flip: each fit is within ~TIGHT of the least objective, strongly convex with modulus 1
    # in V (whose θ-features have norm ≤ 1/√ρ) and λ in v (features of norm ≤ 1).
    tol = 2 * (np.sqrt(2 * TIGHT / model.ridge) + np.sqrt(2 * TIGHT / model.lambda_))
    low, high = [], []  # the brute-force gap of each bandwidth, with those signs either way
    for fold_decisions in decisions:
        bounds = []
        for d in fold_decisions:
            sure, either = np.mean(d < -tol, axis=0), np.mean(np.abs(d) <= tol, axis=0)
            below, above = sure - levels, sure + either - levels
            nearest = np.where(below * above <= 0, 0.0, np.minimum(abs(below), abs(above)))
            bounds.append((nearest.mean(), np.maximum(abs(below), abs(above)).mean()))
        low.append(np.mean([bound[0] for bound in bounds]))
        high.append(np.mean([bound[1] for bound in bounds]))
    low, high = np.array(low), np.array(high)
    risks = model.cv_risks_[:, 0]
    assert np.all(low - 1e-12 <= risks) and np.all(risks <= high + 1e-12)
    best = int(np.argmin(risks))
    assert np.all(low[best] <= high)  # the choice is a least brute-force gap
    median = median_bandwidth(_standardised(X), 0)
    assert model.selected_input_bandwidth_ == pytest.approx(
        level_sets.BANDWIDTH_FACTORS[best] * median, rel=1e-12
    )
    assert model.selected_lambda_ == model.lambda_
    plain = InfiniteLevelSetEstimator(
        input_bandwidth=model.selected_input_bandwidth_, n_anchors=5, tol=TIGHT, max_iter=20000
    ).fit(X)
    assert_allclose(
        model.decision_function(X, levels), plain.decision_function(X, levels), atol=1e-4
    )


def test_decision_between_anchors_is_the_models():
    # the score's h − t at any level (whitened coordinates) against the fitted estimator's
    X = np.random.default_rng(2).normal(size=(30, 2))
    model = InfiniteLevelSetEstimator(input_bandwidth="median", n_anchors=5).fit(X)
    whitened = model._precompute(
        DecomposableModel(model.model_.input_kernel, RBF(0.2), RBF(0.2)),
        model._transform_X(X), model.anchors_, slopes=False, level_weights=model.weights_,
        ridge=model.ridge,
    )  # fmt: skip
    params = minimise(
        whitened, level_sets.one_class_risk(model.anchors_, model.weights_, model.kappa),
        level_set_penalty(model.weights_, model.lambda_, model.ridge), 10000, 1e-8,
    ).x  # fmt: skip
    levels = np.array([0.07, 0.33, 0.5, 0.91])
    decision = level_sets._decision_at_levels(whitened, params, levels)
    A, B, c = whitened.to_coefficients(*whitened.unpack(params)[::2])
    expected = whitened.model.predict(A, B, c, X=model._transform_X(X), theta=levels)
    assert_allclose(decision, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("estimator", "n_lambdas"),
    [(InfiniteCostSensitiveClassifier, len(selection.LAMBDA_PATH)), (InfiniteLevelSetEstimator, 1)],
)
def test_selected_attributes_are_set_by_the_default_and_dropped_by_explicit_values(
    estimator, n_lambdas
):
    X, y = _two_classes(40)
    data = (X, y) if estimator is InfiniteCostSensitiveClassifier else (X,)
    model = estimator(n_anchors=5, random_state=0).fit(*data)
    assert model.cv_risks_.shape[1] == n_lambdas
    assert model.selected_input_bandwidth_ > 0 and model.selected_lambda_ > 0
    explicit = {"input_bandwidth": 1.0}
    if estimator is InfiniteCostSensitiveClassifier:
        explicit["lambda_"] = 1e-3
    model.set_params(**explicit).fit(*data)
    for name in ("cv_risks_", "selected_lambda_", "selected_input_bandwidth_"):
        assert not hasattr(model, name)


def test_csc_with_a_given_kernel_chooses_lambda_only():
    X, y = _two_classes(40)
    model = InfiniteCostSensitiveClassifier(input_kernel=RBF(1.0), n_anchors=5, random_state=0).fit(
        X, y
    )
    assert model.cv_risks_.shape == (1, len(selection.LAMBDA_PATH))
    assert model.selected_input_bandwidth_ is None


def test_too_few_points_to_hold_out_fall_back_to_fixed_values():
    X, y = _two_classes(4)
    csc = InfiniteCostSensitiveClassifier(n_anchors=3).fit(X, y)
    dlse = InfiniteLevelSetEstimator(n_anchors=3).fit(X)
    assert not hasattr(csc, "selected_lambda_") and not hasattr(dlse, "selected_lambda_")


@pytest.mark.parametrize(
    ("estimator", "params", "name"),
    [
        (InfiniteCostSensitiveClassifier, {"lambda_": "auto"}, "lambda_"),
        (InfiniteCostSensitiveClassifier, {"lambda_": -1.0}, "lambda_"),
        (InfiniteLevelSetEstimator, {"input_bandwidth": "mean"}, "input_bandwidth"),
        (InfiniteLevelSetEstimator, {"input_bandwidth": 0.0}, "input_bandwidth"),
        (InfiniteLevelSetEstimator, {"lambda_": None}, "lambda_"),
    ],
)
def test_bad_values_name_the_parameter_and_leave_the_fit_unchanged(estimator, params, name):
    X, y = _two_classes(40)
    data = (X, y) if estimator is InfiniteCostSensitiveClassifier else (X,)
    model = estimator(n_anchors=5, random_state=0).fit(*data)
    before = model.decision_function(X[:5], 0.5)
    with pytest.raises(ValueError, match=name):
        model.set_params(**params).fit(*data)
    assert_allclose(model.decision_function(X[:5], 0.5), before)
