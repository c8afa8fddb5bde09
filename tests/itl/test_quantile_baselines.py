"""JQR and IND-QR: the IND-QR levels equal separate single-level fits, JQR at one level equals
scikit-learn's linear QuantileRegressor with a linear kernel, the free intercepts put the
training coverage at the levels, prediction shapes, the scikit-learn API, and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.linear_model import QuantileRegressor

from manytask.itl import IndependentQuantileRegressor, JointQuantileRegressor, pinball_loss
from manytask.kernels import Linear


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 2))
    return X, X[:, 0] + (0.4 + 0.3 * np.abs(X[:, 1])) * rng.normal(size=50)


def test_jqr_single_level_linear_kernel_matches_sklearn(data):
    X, y = data
    model = JointQuantileRegressor(
        quantiles=[0.25], lambda_=1e-9, input_kernel=Linear(), kappa=1e-6, tol=1e-12
    ).fit(X, y)
    assert model.converged_
    reference = QuantileRegressor(quantile=0.25, alpha=0.0, solver="highs").fit(X, y)
    ours = pinball_loss(y, model.predict(X, quantiles=[0.25]), [0.25])
    theirs = pinball_loss(y, reference.predict(X)[:, None], [0.25])
    assert ours == pytest.approx(theirs, rel=1e-3)


def test_ind_qr_levels_equal_separate_fits(data):
    X, y = data
    # The risk is averaged over the k = 2 levels, so each level sees λ·k against its own risk.
    params = dict(input_bandwidth=1.0, kappa=1e-2, tol=1e-13, max_iter=5000)
    joint = IndependentQuantileRegressor(quantiles=[0.2, 0.7], lambda_=1e-2, **params).fit(X, y)
    assert joint.converged_
    for level in [0.2, 0.7]:
        alone = IndependentQuantileRegressor(quantiles=[level], lambda_=2e-2, **params)
        alone.fit(X, y)
        assert alone.converged_
        # Same minimiser; each fit stops within δ ≈ 1e-13 × objective of it, which with
        # λ-strong convexity in f is an RKHS distance √(2δ/λ) ~ 1e-6. The intercepts are
        # free (λ_b = 0), so they are pinned only through the data: allow 1e-4 × sd(y).
        assert_allclose(joint.predict(X, level), alone.predict(X, level), atol=1e-4 * np.std(y))


@pytest.mark.parametrize("estimator", [JointQuantileRegressor, IndependentQuantileRegressor])
def test_free_intercepts_put_training_coverage_at_the_levels(data, estimator):
    # Stationarity in the unpenalised intercept b_l of level τ_l: the Huber-smoothed pinball
    # gradients balance, mean_i clip(r_i/κ, −1, 1) = 1 − 2τ_l (r = y − q), so the fraction of
    # points at or below the curve differs from τ_l by at most the fraction within κ of it.
    X, y = data
    levels = np.array([0.1, 0.9])
    kappa = 1e-2
    model = estimator(quantiles=levels, kappa=kappa, tol=1e-12).fit(X, y)
    assert model.converged_
    residuals = y[:, None] - model.predict(X, quantiles=levels)
    coverage = np.mean(residuals <= 0, axis=0)
    within = np.mean(np.abs(residuals) <= kappa * np.std(y), axis=0)
    assert np.all(np.abs(coverage - levels) <= within + 1e-9)
    # A penalised intercept (λ_b = λ = 0.1) pulls the outer levels towards the median.
    shrunk = estimator(quantiles=levels, lambda_=0.1, lambda_b=0.1, kappa=kappa).fit(X, y)
    shrunk_coverage = np.mean(y[:, None] <= shrunk.predict(X, quantiles=levels), axis=0)
    assert shrunk_coverage[0] > 0.13 and shrunk_coverage[1] < 0.87


def test_jqr_predicts_fitted_levels_in_given_order(data):
    X, y = data
    model = JointQuantileRegressor(quantiles=[0.9, 0.1, 0.5]).fit(X, y)
    predictions = model.predict(X[:7], quantiles=[0.9, 0.1, 0.5])
    assert predictions.shape == (7, 3)
    assert np.mean(predictions[:, 0] > predictions[:, 1]) > 0.9
    assert_allclose(model.predict(X[:7]), predictions[:, 2])  # one level: shape (N,)
    assert_allclose(model.predict(X[:7], quantiles=[0.1]), predictions[:, [1]])


@pytest.mark.parametrize("estimator", [JointQuantileRegressor, IndependentQuantileRegressor])
def test_predict_refuses_a_level_that_was_not_fitted(data, estimator):
    X, y = data
    model = estimator(quantiles=[0.1, 0.9]).fit(X, y)
    with pytest.raises(ValueError, match=r"quantiles must be fitted levels \[0.1, 0.9\], got 0.5"):
        model.predict(X)
    with pytest.raises(ValueError, match="quantiles must be in"):
        model.predict(X, quantiles=1.5)


def test_score_is_minus_mean_pinball_over_fitted_levels(data):
    X, y = data
    model = IndependentQuantileRegressor(quantiles=[0.3, 0.6]).fit(X, y)
    expected = -pinball_loss(y, model.predict(X, [0.3, 0.6]), [0.3, 0.6]) / 2
    assert model.score(X, y) == pytest.approx(expected)


@pytest.mark.parametrize("estimator", [JointQuantileRegressor, IndependentQuantileRegressor])
def test_clone_and_pickle(data, estimator):
    X, y = data
    model = estimator(quantiles=[0.3, 0.6], lambda_=0.05)
    assert clone(model).get_params() == model.get_params()
    model.fit(X, y)
    assert_allclose(pickle.loads(pickle.dumps(model)).predict(X, 0.3), model.predict(X, 0.3))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"quantiles": [0.5, 1.0]}, "quantiles must be in"),
        ({"quantiles": [0.5, 0.5]}, "distinct"),
        ({"lambda_": 0.0}, "lambda_"),
        ({"theta_bandwidth": -1.0}, "theta_bandwidth"),
    ],
)
def test_bad_parameters_raise(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        JointQuantileRegressor(**params).fit(X, y)


def test_nan_target_raises(data):
    X, y = data
    y = y.copy()
    y[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        IndependentQuantileRegressor().fit(X, y)
