"""∞-CSC: the objective against a brute-force loop and finite differences, the direction of the
sensitivity/specificity trade-off of eq. (4), labels, the scikit-learn API, bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from _helpers import assert_gradient_matches
from manytask.itl import InfiniteCostSensitiveClassifier
from manytask.itl._estimator import penalised_objective, ridge_penalty
from manytask.itl.classification import cost_sensitive_risk
from manytask.itl.model import DecomposableModel
from manytask.kernels import RBF


def _huber(p, kappa):
    return p * p / (2 * kappa) if abs(p) <= kappa else abs(p) - kappa / 2


def _small_problem(seed=0, n=6):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(n, 2)), np.array([1.0, -1.0] * (n // 2))
    anchors, weights = np.array([-0.6, 0.1, 0.7]), np.array([0.2, 0.5, 0.3])
    model = DecomposableModel(RBF(1.1), RBF(0.5), RBF(0.6)).precompute(X, anchors)
    return model, y, anchors, weights, rng.normal(size=model.n_params)


def _two_gaussians(n_per_class, rng):
    X = np.vstack([rng.normal(-1.0, 1.0, (n_per_class, 2)), rng.normal(1.0, 1.0, (n_per_class, 2))])
    return X, np.repeat(["negative", "positive"], n_per_class)


def test_objective_matches_brute_force_sum():
    model, y, anchors, weights, params = _small_problem()
    lambda_, kappa = 0.3, 0.4
    value, _ = penalised_objective(
        params, model, cost_sensitive_risk(y, anchors, weights, kappa), ridge_penalty(lambda_)
    )
    alpha, beta, bias = model.unpack(params)
    H = model.predict(alpha, beta, bias)
    expected = 0.0
    for i in range(len(y)):
        for j, (theta, w) in enumerate(zip(anchors, weights)):
            cost = (1 + theta) / 2 if y[i] == 1 else (1 - theta) / 2
            margin = 1 - y[i] * H[i, j]
            expected += w / len(y) * cost * (_huber(margin, kappa) + margin) / 2
    expected += lambda_ / 2 * (model.rkhs_norm2(alpha, beta) + model.bias_norm2(bias))
    assert_allclose(value, expected, rtol=1e-12)


def test_objective_gradient_matches_finite_differences():
    model, y, anchors, weights, params = _small_problem(seed=1)
    data_term, penalty = cost_sensitive_risk(y, anchors, weights, kappa=0.5), ridge_penalty(0.3)
    assert_gradient_matches(
        lambda p: penalised_objective(p, model, data_term, penalty), params, rtol=1e-6, atol=1e-8
    )


@pytest.fixture(scope="module")
def fitted_on_two_gaussians():
    X, y = _two_gaussians(100, np.random.default_rng(0))
    return InfiniteCostSensitiveClassifier(random_state=0).fit(X, y)


def test_theta_near_plus_one_trades_specificity_for_sensitivity(fitted_on_two_gaussians):
    # Eq. (4): c_θ(+1) = (1 + θ)/2 and c_θ(−1) = (1 − θ)/2, so at θ = +0.9 a missed positive
    # costs 19 times a false alarm: sensitivity (true positive rate) rises and specificity
    # (true negative rate) falls relative to θ = −0.9.
    X, y = _two_gaussians(1000, np.random.default_rng(1))
    labels = fitted_on_two_gaussians.predict(X, theta=[-0.9, 0.9])
    positive, negative = y == "positive", y == "negative"
    sensitivity = np.mean(labels[positive] == "positive", axis=0)
    specificity = np.mean(labels[negative] == "negative", axis=0)
    assert sensitivity[1] > sensitivity[0] + 0.2
    assert specificity[0] > specificity[1] + 0.2
    assert min(sensitivity[1], specificity[0]) > 0.95


def test_second_sorted_class_is_the_positive_one(fitted_on_two_gaussians):
    model = fitted_on_two_gaussians
    assert_array_equal(model.classes_, ["negative", "positive"])
    X = np.array([[-3.0, -3.0], [3.0, 3.0]])
    assert np.all(np.diff(model.decision_function(X, theta=0.0)) > 0)
    assert_array_equal(model.predict(X, theta=0.0), ["negative", "positive"])


def test_scalar_theta_gives_one_column_and_arrays_give_one_per_level(fitted_on_two_gaussians):
    X = np.zeros((3, 2))
    model = fitted_on_two_gaussians
    assert model.decision_function(X, theta=0.5).shape == (3,)
    many = model.decision_function(X, theta=[-0.5, 0.5])
    assert many.shape == (3, 2)
    assert_allclose(many[:, 1], model.decision_function(X, theta=0.5))


def test_clone_and_pickle_reproduce_the_fit(fitted_on_two_gaussians):
    X, y = _two_gaussians(100, np.random.default_rng(0))
    model = fitted_on_two_gaussians
    refit = clone(model).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    levels = [-0.9, 0.0, 0.9]
    assert_allclose(refit.decision_function(X, levels), model.decision_function(X, levels))
    assert_allclose(restored.decision_function(X, levels), model.decision_function(X, levels))
    assert 0.8 < model.score(X, y) <= 1.0


@pytest.mark.parametrize("theta", [1.5, -1.01, np.nan])
def test_theta_outside_minus_one_one_is_rejected(fitted_on_two_gaussians, theta):
    with pytest.raises(ValueError, match="theta"):
        fitted_on_two_gaussians.predict(np.zeros((2, 2)), theta=theta)


def test_bad_training_input_is_rejected():
    X, y = _two_gaussians(5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="2 classes"):
        InfiniteCostSensitiveClassifier().fit(X, np.ones(len(X)))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        InfiniteCostSensitiveClassifier().fit(X_nan, y)
    with pytest.raises(ValueError, match="at least 2 samples"):
        InfiniteCostSensitiveClassifier().fit(X[:1], y[:1])
    for lambda_ in (0.0, -1.0):
        with pytest.raises(ValueError, match="lambda_"):
            InfiniteCostSensitiveClassifier(lambda_=lambda_).fit(X, y)


def test_grid_search_on_roc_auc_prefers_a_smooth_kernel():
    # Bandwidth 0.02 on standardised inputs: held-out points see only the bias, so the
    # decision function is constant there (AUC 0.5); bandwidth 1 separates the Gaussians
    # (Bayes AUC Φ(√2·√2/√2)… ≈ 0.92 for means ±1, unit variances in 2-D).
    X, y = _two_gaussians(60, np.random.default_rng(2))
    search = GridSearchCV(
        InfiniteCostSensitiveClassifier(n_anchors=5, random_state=0),
        {"input_bandwidth": [0.02, 1.0]},
        scoring="roc_auc",
        cv=3,
    ).fit(X, y)
    assert search.best_params_["input_bandwidth"] == 1.0
    assert search.best_score_ > 0.85
    assert search.best_estimator_.predict(X[:2], theta=[-0.5, 0.5]).shape == (2, 2)


def test_low_rank_classifier_clones_pickles_and_still_trades_off():
    X, y = _two_gaussians(100, np.random.default_rng(0))
    model = InfiniteCostSensitiveClassifier(n_components=30, random_state=0).fit(X, y)
    assert model.model_.n_samples == 30
    levels = [-0.9, 0.0, 0.9]
    refit = clone(model).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    assert_allclose(refit.decision_function(X, levels), model.decision_function(X, levels))
    assert_allclose(restored.decision_function(X, levels), model.decision_function(X, levels))
    positive_rate = np.mean(model.predict(X, theta=levels) == "positive", axis=0)
    assert positive_rate[0] < positive_rate[1] < positive_rate[2]
