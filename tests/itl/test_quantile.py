"""∞-QR: the objective against a brute-force loop and finite differences, the single-anchor
linear case against scikit-learn's QuantileRegressor (HiGHS LP), non-crossing, the sine toy
data of Sangnier et al. against its closed-form quantiles, calibrated outer levels (free
intercept, anchors near 0 and 1, monotone tails), the scikit-learn API, bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import norm
from sklearn.base import clone
from sklearn.linear_model import QuantileRegressor
from sklearn.model_selection import GridSearchCV

from _helpers import assert_gradient_matches
from manytask.itl import InfiniteQuantileRegressor, crossing_loss, pinball_loss
from manytask.itl._estimator import penalised_objective, ridge_penalty
from manytask.itl.kernel_quantile import quantile_risk
from manytask.itl.model import DecomposableModel
from manytask.kernels import RBF, Linear

#: Levels inside the hull [0.013, 0.987] of 10 Gauss–Legendre anchors, where the penalty acts.
DENSE_LEVELS = np.linspace(0.15, 0.9, 16)


def sine_toy(n, rng):
    """Sangnier et al. (2016): a 1 Hz sine modulated by a 1/3 Hz sine envelope of mean 1,
    x ~ U[0, 1.5], Gaussian noise with sd decreasing linearly from 1.2 (x = 0) to 0.2 (x = 1.5).
    Returns X (n, 1), y and the true-quantile function q(x, τ) = m(x) + sd(x) Φ⁻¹(τ)."""

    def mean(x):
        return np.sin(2 * np.pi * x) * (1.0 + np.sin(2 * np.pi * x / 3.0))

    def sd(x):
        return 1.2 - x / 1.5

    def true_quantiles(x, levels):
        return mean(x)[:, None] + sd(x)[:, None] * norm.ppf(levels)[None, :]

    x = rng.uniform(0.0, 1.5, size=n)
    return x[:, None], mean(x) + sd(x) * rng.normal(size=n), true_quantiles


def _huber(p, kappa):
    return p * p / (2 * kappa) if abs(p) <= kappa else abs(p) - kappa / 2


def _small_problem(seed=0, n=5, m=3):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(n, 2)), rng.normal(size=n)
    anchors, weights = np.array([0.2, 0.5, 0.8]), np.array([0.2, 0.5, 0.3])
    model = DecomposableModel(RBF(1.1), RBF(0.3), RBF(0.4)).precompute(X, anchors)
    params = rng.normal(size=model.n_params)
    return model, y, anchors, weights, params


def test_objective_matches_brute_force_sum():
    model, y, anchors, weights, params = _small_problem()
    lambda_, lambda_nc, kappa = 0.3, 0.7, 0.2
    data_term = quantile_risk(y, anchors, weights, lambda_nc, kappa)
    value, _ = penalised_objective(params, model, data_term, ridge_penalty(lambda_))
    alpha, beta, bias = model.unpack(params)
    H = model.predict(alpha, beta, bias)
    S = model.predict_dtheta(alpha, beta, bias)
    expected = 0.0
    for i in range(len(y)):
        for j, (theta, w) in enumerate(zip(anchors, weights)):
            r = y[i] - H[i, j]
            expected += w / len(y) * (_huber(r, kappa) / 2 + (theta - 0.5) * r)
            expected += lambda_nc * w / len(y) * (_huber(-S[i, j], kappa) - S[i, j]) / 2
    expected += lambda_ / 2 * (model.rkhs_norm2(alpha, beta) + model.bias_norm2(bias))
    assert_allclose(value, expected, rtol=1e-12)


def test_objective_gradient_matches_finite_differences():
    model, y, anchors, weights, params = _small_problem(seed=1)
    data_term = quantile_risk(y, anchors, weights, lambda_nc=0.7, kappa=0.5)
    penalty = ridge_penalty(0.3)
    assert_gradient_matches(
        lambda p: penalised_objective(p, model, data_term, penalty), params, rtol=1e-5, atol=1e-7
    )


def test_single_anchor_linear_kernel_matches_sklearn_quantile_regressor():
    # One anchor (Gauss–Legendre or Sobol) is θ = 0.5; a linear k_X plus the bias (intercept)
    # spans affine functions of x, so with λ → 0 and no non-crossing term ∞-QR is linear
    # median regression.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    y = 1.0 + X @ [1.0, -0.5] + (0.5 + np.abs(X[:, 0])) * rng.standard_t(3, size=80)
    model = InfiniteQuantileRegressor(
        lambda_=1e-9, lambda_nc=0.0, n_anchors=1, input_kernel=Linear(), kappa=1e-6, tol=1e-12
    ).fit(X, y)
    assert model.converged_
    assert model.anchors_.tolist() == [0.5]
    reference = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(X, y)
    ours = pinball_loss(y, model.predict(X, [0.5]), [0.5])
    theirs = pinball_loss(y, reference.predict(X)[:, None], [0.5])
    assert ours == pytest.approx(theirs, rel=1e-3)


def test_non_crossing_penalty_removes_crossings():
    rng = np.random.default_rng(0)
    X, y, _ = sine_toy(60, rng)
    X_test = rng.uniform(0.0, 1.5, size=(100, 1))
    # Solved to tol = 1e-12 so that the assertions hold for the minimiser, not for an iterate:
    # at the default 1e-8 L-BFGS-B stops at crossings of 2.3e-4 to 6.9e-4 depending on the
    # CPU's rounding; converged, two numeric environments (AVX-512 NumPy with OpenBLAS
    # Haswell, baseline-SIMD NumPy with OpenBLAS Sandybridge) give 8.0e-4 on X and 7.4e-4 on
    # X_test, within 1.1 % of each other.
    common = dict(
        lambda_=1e-3, input_bandwidth=0.2, n_anchors=10, random_state=0, tol=1e-12, max_iter=50_000
    )
    common["rearrange"] = False  # the paper's model h: what eq. (14) acts on
    free = InfiniteQuantileRegressor(lambda_nc=0.0, **common).fit(X, y)
    penalised = InfiniteQuantileRegressor(lambda_nc=10.0, **common).fit(X, y)
    assert free.converged_ and penalised.converged_
    # The κ-smoothed positive part still lets slopes of order −κ through (its gradient is ½
    # at 0), so "≈ 0" is 1.5e-3: crossing×100 ≤ 0.15, three times under the paper's 0.5
    # target, and ten times under the unpenalised minimiser's 1.4e-2.
    for points in (X, X_test):
        assert crossing_loss(penalised.predict(points, DENSE_LEVELS)) < 1.5e-3
    assert crossing_loss(free.predict(X_test, DENSE_LEVELS)) > 1e-2


def test_sine_toy_quantiles_close_to_true_ones():
    # sd(x) averages 0.7; a kernel quantile estimate from ~30 effective neighbours has standard
    # error ≈ √(τ(1−τ))/φ(Φ⁻¹(τ)) · sd/√30 ≈ 0.3 sd ≈ 0.2 at τ = 0.1, 0.9: tolerance 0.25 on the
    # mean absolute error, against ≈ 0.7 for the best constant (unconditional quantile).
    rng = np.random.default_rng(0)
    X, y, true_quantiles = sine_toy(200, rng)
    levels = np.array([0.1, 0.5, 0.9])
    model = InfiniteQuantileRegressor(lambda_=1e-3, input_bandwidth=0.4, random_state=0)
    model.fit(X, y)
    grid = np.linspace(0.05, 1.45, 100)
    error = np.abs(model.predict(grid[:, None], levels) - true_quantiles(grid, levels))
    constant_error = np.abs(np.quantile(y, levels) - true_quantiles(grid, levels))
    assert np.all(error.mean(axis=0) < 0.25)
    assert np.all(error.mean(axis=0) < 0.5 * constant_error.mean(axis=0))


@pytest.fixture(scope="module")
def linear_data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    return X, X[:, 0] + 0.3 * rng.normal(size=40)


def test_predicts_any_level_in_order(linear_data):
    X, y = linear_data
    model = InfiniteQuantileRegressor().fit(X, y)
    levels = [0.02, 0.37, 0.5, 0.98]
    both = model.predict(X, levels)
    assert both.shape == (40, 4)
    assert_allclose(both[:, 1], model.predict(X, [0.37])[:, 0])
    # A scalar level gives a 1-D array; the default is the median.
    assert_allclose(model.predict(X, 0.37), both[:, 1])
    assert_allclose(model.predict(X), both[:, 2])


def test_score_is_minus_mean_pinball_over_default_levels(linear_data):
    X, y = linear_data
    model = InfiniteQuantileRegressor().fit(X, y)
    levels = [0.1, 0.3, 0.5, 0.7, 0.9]
    expected = -pinball_loss(y, model.predict(X, levels), levels) / 5
    assert model.score(X, y) == pytest.approx(expected)


def test_clone_keeps_parameters_and_pickle_keeps_predictions(linear_data):
    X, y = linear_data
    model = InfiniteQuantileRegressor(lambda_=0.01, input_kernel=Linear())
    copy = clone(model)
    assert copy.get_params()["lambda_"] == 0.01 and not hasattr(copy, "model_")
    model.fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    assert_allclose(restored.predict(X, [0.2, 0.8]), model.predict(X, [0.2, 0.8]))


def test_grid_search_selects_the_lambda_that_fits(linear_data):
    # y = x₁ + noise of sd 0.3: λ = 1e-3 follows x₁, λ = 1e3 shrinks f to ~0 and leaves only
    # the intercept (the unconditional quantiles), whose pinball loss is ~3 times larger.
    X, y = linear_data
    search = GridSearchCV(InfiniteQuantileRegressor(), {"lambda_": [1e3, 1e-3]}, cv=2).fit(X, y)
    assert search.best_params_["lambda_"] == 1e-3
    scores = search.cv_results_["mean_test_score"]
    assert scores[1] > 2 * scores[0]  # both negative: minus the pinball loss


@pytest.mark.parametrize("level", [0.0, 1.0, 1.5, -0.2])
def test_level_outside_unit_interval_raises(linear_data, level):
    X, y = linear_data
    model = InfiniteQuantileRegressor().fit(X, y)
    with pytest.raises(ValueError, match="quantiles must be in"):
        model.predict(X, [0.5, level])


@pytest.mark.parametrize(
    "params, match",
    [
        ({"lambda_": 0.0}, "lambda_"),
        ({"lambda_": -1.0}, "lambda_"),
        ({"lambda_nc": -1.0}, "lambda_nc"),
        ({"lambda_b": -1.0}, "lambda_b"),
        ({"quadrature": "simpson"}, "quadrature"),
        ({"kappa": -0.1}, "kappa"),
        ({"theta_bandwidth": 0.0}, "theta_bandwidth"),
        ({"n_anchors": 0}, "n_anchors"),
    ],
)
def test_bad_parameters_raise_at_fit(linear_data, params, match):
    X, y = linear_data
    with pytest.raises(ValueError, match=match):
        InfiniteQuantileRegressor(**params).fit(X, y)


def test_nan_input_raises(linear_data):
    X, y = linear_data
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        InfiniteQuantileRegressor().fit(X, y)


def test_single_sample_raises():
    with pytest.raises(ValueError, match="at least 2 samples"):
        InfiniteQuantileRegressor().fit([[0.0]], [1.0])
