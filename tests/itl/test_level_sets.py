"""∞-DLSE: the objective of problem (16) against a brute-force loop and finite differences, the
θ-property (training and held-out fraction of outliers ≈ θ), the fitted objective against
problem (16) with the ridge in coefficient form, the scikit-learn API, bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from manytask.itl import InfiniteLevelSetEstimator
from manytask.itl.level_sets import level_set_objective
from manytask.itl.model import DecomposableModel
from manytask.kernels import RBF

LEVELS = np.round(np.arange(0.1, 1.0, 0.1), 1)


def _huber(p, kappa):
    return p * p / (2 * kappa) if abs(p) <= kappa else abs(p) - kappa / 2


def _small_problem(seed=0, n=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    anchors, weights = np.array([0.2, 0.5, 0.8]), np.array([0.2, 0.5, 0.3])
    model = DecomposableModel(RBF(1.1), RBF(0.3), RBF(0.4)).precompute(X, anchors)
    return model, weights, rng.normal(size=n * 3 + 3)


def test_objective_matches_brute_force_sum():
    model, weights, params = _small_problem()
    lambda_, kappa = 0.3, 0.4
    value, _ = level_set_objective(params, model, weights, lambda_, kappa)
    X, anchors, n, m = model.X_, model.anchors_, 5, 3
    alpha, offset_coef = params[: n * m].reshape(n, m), params[n * m :]
    k_x, k_theta, k_b = RBF(1.1), RBF(0.3), RBF(0.4)

    def h(x, theta):  # Prop. 3.2, term by term
        return sum(
            alpha[i, j] * k_x(x[None], X[i][None])[0, 0] * k_theta([[theta]], [[anchors[j]]])[0, 0]
            for i in range(n)
            for j in range(m)
        )

    def t(theta):
        return sum(offset_coef[j] * k_b([[theta]], [[anchors[j]]])[0, 0] for j in range(m))

    expected = 0.0
    for theta, w in zip(anchors, weights):
        for i in range(n):
            gap = t(theta) - h(X[i], theta)
            expected += w / n * (-t(theta) + (_huber(gap, kappa) + gap) / 2 / theta)
        # ‖h(·)(θ_j)‖² with h(·)(θ_j) = Σ_i g_i k_X(·, x_i): gᵀ K_X g
        g = np.array(
            [
                sum(alpha[i, l] * k_theta([[theta]], [[anchors[l]]])[0, 0] for l in range(m))
                for i in range(n)
            ]
        )
        expected += 0.5 * w * g @ k_x(X, X) @ g
    expected += 0.5 * lambda_ * offset_coef @ k_b(anchors[:, None], anchors[:, None]) @ offset_coef
    assert_allclose(value, expected, rtol=1e-12)


def test_objective_gradient_matches_finite_differences():
    model, weights, params = _small_problem(seed=1)
    _, gradient = level_set_objective(params, model, weights, 0.3, 0.5)
    step, numerical = 1e-6, np.empty_like(params)
    for k in range(params.size):
        shift = np.zeros_like(params)
        shift[k] = step
        upper, _ = level_set_objective(params + shift, model, weights, 0.3, 0.5)
        lower, _ = level_set_objective(params - shift, model, weights, 0.3, 0.5)
        numerical[k] = (upper - lower) / (2 * step)
    assert_allclose(gradient, numerical, rtol=1e-6, atol=1e-8)


@pytest.fixture(scope="module")
def gaussian_data():
    return np.random.default_rng(0).normal(size=(200, 2))


@pytest.fixture(scope="module")
def fitted_on_gaussian(gaussian_data):
    # A fixed bandwidth: the default's held-out choice between 0.5 × and 1 × the median
    # heuristic is a near-tie of held-out outlier counts on this set, which goes either way
    # on different CPUs; these tests are about the fit at a given bandwidth.
    return InfiniteLevelSetEstimator(input_bandwidth="median", random_state=0).fit(gaussian_data)


def test_training_fraction_of_outliers_is_theta(fitted_on_gaussian, gaussian_data):
    outlier_fraction = np.mean(fitted_on_gaussian.predict(gaussian_data, LEVELS) == -1, axis=0)
    assert_allclose(outlier_fraction, LEVELS, atol=0.05)


def test_outliers_are_the_points_far_from_the_mode(fitted_on_gaussian):
    points = np.array([[0.0, 0.0], [4.0, 4.0]])
    assert_array_equal(fitted_on_gaussian.predict(points, theta=0.5), [1, -1])


def test_predict_is_the_sign_of_decision_function(fitted_on_gaussian, gaussian_data):
    scores = fitted_on_gaussian.decision_function(gaussian_data, LEVELS)
    labels = fitted_on_gaussian.predict(gaussian_data, LEVELS)
    assert scores.shape == labels.shape == (200, LEVELS.size)
    assert_array_equal(labels, np.where(scores < 0, -1, 1))
    assert_allclose(fitted_on_gaussian.decision_function(gaussian_data, 0.3), scores[:, 2])


def test_clone_and_pickle_reproduce_the_fit(fitted_on_gaussian):
    X = np.random.default_rng(3).normal(size=(40, 2))
    model = InfiniteLevelSetEstimator(n_anchors=5, random_state=0).fit(X)  # fixed folds
    refit = clone(model).fit(X)
    restored = pickle.loads(pickle.dumps(fitted_on_gaussian))
    assert_allclose(refit.decision_function(X, LEVELS), model.decision_function(X, LEVELS))
    assert_allclose(
        restored.decision_function(X, LEVELS), fitted_on_gaussian.decision_function(X, LEVELS)
    )


@pytest.mark.parametrize("theta", [0.01, 1.2, np.nan])
def test_theta_outside_epsilon_one_is_rejected(fitted_on_gaussian, theta):
    with pytest.raises(ValueError, match="theta"):
        fitted_on_gaussian.predict(np.zeros((2, 2)), theta=theta)


def test_bad_training_input_is_rejected():
    X = np.random.default_rng(0).normal(size=(10, 2))
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        InfiniteLevelSetEstimator().fit(X_nan)
    with pytest.raises(ValueError, match="at least 2 samples"):
        InfiniteLevelSetEstimator().fit(X[:1])
    for lambda_ in (0.0, -1.0):
        with pytest.raises(ValueError, match="lambda_"):
            InfiniteLevelSetEstimator(lambda_=lambda_).fit(X)
    for epsilon in (0.0, 1.0):
        with pytest.raises(ValueError, match="epsilon"):
            InfiniteLevelSetEstimator(epsilon=epsilon).fit(X)


def test_fit_predict_takes_theta_and_equals_fit_then_predict():
    X = np.random.default_rng(4).normal(size=(50, 2))
    labels = InfiniteLevelSetEstimator(n_anchors=5, random_state=0).fit_predict(X, theta=[0.2, 0.7])
    expected = InfiniteLevelSetEstimator(n_anchors=5, random_state=0).fit(X).predict(X, [0.2, 0.7])
    assert_array_equal(labels, expected)


def test_score_is_minus_the_mean_calibration_error(fitted_on_gaussian):
    X = np.random.default_rng(5).normal(size=(300, 2))
    levels = np.arange(1, 10) / 10
    fractions = np.mean(fitted_on_gaussian.predict(X, levels) == -1, axis=0)
    assert_allclose(fitted_on_gaussian.score(X), -np.mean(np.abs(fractions - levels)))


def test_grid_search_prefers_a_calibrated_bandwidth():
    # With bandwidth 0.02 on standardised data the held-out points are far from every
    # training point, h ≈ 0 there, and the level sets' held-out outlier fractions are far
    # from θ; the default-size bandwidth is calibrated (the θ-property on held-out data).
    X = np.random.default_rng(6).normal(size=(120, 2))
    search = GridSearchCV(
        InfiniteLevelSetEstimator(n_anchors=6), {"input_bandwidth": [0.02, 1.0]}, cv=3
    ).fit(X)
    assert search.best_params_["input_bandwidth"] == 1.0
    assert search.best_score_ > -0.1
    assert search.best_estimator_.predict(X[:3], 0.5).shape == (3,)


def test_low_rank_estimator_clones_and_pickles():
    X = np.random.default_rng(7).normal(size=(80, 2))
    model = InfiniteLevelSetEstimator(n_anchors=5, n_components=20, random_state=0).fit(X)
    assert model.model_.n_samples == 20
    refit = clone(model).fit(X)
    restored = pickle.loads(pickle.dumps(model))
    assert_allclose(refit.decision_function(X, LEVELS), model.decision_function(X, LEVELS))
    assert_allclose(restored.decision_function(X, LEVELS), model.decision_function(X, LEVELS))
    outlier_fraction = np.mean(model.predict(X, LEVELS) == -1, axis=0)
    assert_allclose(outlier_fraction, LEVELS, atol=0.1)


def test_default_anchors_include_both_ends_of_theta():
    model = InfiniteLevelSetEstimator(epsilon=0.05).fit(
        np.random.default_rng(8).normal(size=(50, 2))
    )
    assert model.anchors_.min() == pytest.approx(0.05) and model.anchors_.max() == pytest.approx(
        1.0
    )
    assert model.converged_


def test_held_out_fraction_of_outliers_is_theta_from_epsilon_to_one():
    # The θ-property on fresh data, θ ∈ [0.05, 1]. A level set estimated from n = 1000 points
    # has a true mass within ~√(θ(1−θ)/n) ≤ 0.016 of its training mass, and 20 000 test
    # points measure it to ±0.0035 (one sd): ±0.03 is about two standard deviations.
    # The fit's θ-property at a fixed bandwidth (the median heuristic): the default's
    # held-out choice of the bandwidth picks 0.5 × on some fold draws, whose sets are off by
    # up to 0.04 here (benchmarks/RESULTS.md, bench_itl_csc_dlse).
    rng = np.random.default_rng(9)
    X, X_test = rng.normal(size=(1000, 2)), rng.normal(size=(20000, 2))
    model = InfiniteLevelSetEstimator(input_bandwidth="median").fit(X)
    assert model.converged_
    levels = np.array([0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0])
    outlier_fraction = np.mean(model.predict(X_test, levels) == -1, axis=0)
    assert_allclose(outlier_fraction, levels, atol=0.03)


def test_fitted_objective_is_problem_16_with_the_ridge_in_coefficient_form():
    # The fit runs in coordinates whitened for ½ Σ_j w_j ‖h(θ_j)‖² + ρ/2 ‖h‖²; mapped back to
    # (A, c) over every training point, the same objective, written term by term through
    # DecomposableModel, must have the value the fit reports.
    X = np.random.default_rng(10).normal(size=(40, 2))
    estimator = InfiniteLevelSetEstimator(n_anchors=6, ridge=0.05, tol=1e-12, random_state=0).fit(X)
    assert estimator.converged_
    fitted = estimator.model_
    X_standardised = estimator._transform_X(X)
    model = DecomposableModel(fitted.input_kernel, fitted.theta_kernel, fitted.bias_kernel)
    model.precompute(X_standardised, estimator.anchors_)
    pivots = [int(np.flatnonzero(np.all(X_standardised == z, axis=1))[0]) for z in fitted.X_]
    alpha = np.zeros((len(X), len(estimator.anchors_)))
    alpha[pivots] = estimator.alpha_
    params = np.concatenate([alpha.ravel(), estimator.offset_coef_])

    def objective(params):
        plain, _ = level_set_objective(params, model, estimator.weights_, 1e-4, 1e-3)
        coefficients = params[: alpha.size].reshape(alpha.shape)
        return plain + 0.5 * 0.05 * model.rkhs_norm2(coefficients, np.zeros_like(alpha))

    value = objective(params)
    assert_allclose(value, estimator.objective_, rtol=1e-9)
    # A minimiser of a convex objective: no nearby point is lower (beyond the fit's tolerance).
    rng = np.random.default_rng(11)
    for _ in range(5):
        step = 1e-3 * rng.normal(size=params.size)
        assert objective(params + step) >= value - 1e-10
