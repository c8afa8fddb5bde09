"""∞-QR's outer levels: the free intercept keeps the training coverage at the levels, the
Gauss–Legendre anchors reach the 1 % and 99 % quantiles, and levels beyond the outer anchors
get a monotone extension that never crosses."""

from __future__ import annotations

import numpy as np
import pytest

from manytask.itl import InfiniteQuantileRegressor

EXTREME_LEVELS = np.array([1e-5, 1e-4, 1e-3, 0.003, 0.01, 0.05, 0.5, 0.95, 0.99, 0.997, 0.999])


def heavy_tailed(n, seed):
    """x ~ U[−2, 2], y = sin 2x + (0.2 + 0.3|x|) t₃: heteroscedastic, heavy tails."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    return x[:, None], np.sin(2 * x) + (0.2 + 0.3 * np.abs(x)) * rng.standard_t(3, size=n)


@pytest.fixture(scope="module")
def fitted():
    X, y = heavy_tailed(400, 0)
    return InfiniteQuantileRegressor(lambda_=1e-3).fit(X, y), X, y


def test_training_coverage_of_the_outer_levels_is_at_the_level(fitted):
    # With a free intercept the per-anchor stationarity puts the fraction of training points
    # under each curve at its level, up to the points within κ of it, the interpolation
    # between anchors and the non-crossing term: ±0.02 is 8 of the 400 points. A penalised
    # intercept (λ_b = λ = 0.1) is off by more (0.28 / 0.73 on Table 1's sets).
    model, X, y = fitted
    assert model.converged_
    levels = np.array([0.1, 0.9])
    coverage = np.mean(y[:, None] <= model.predict(X, levels), axis=0)
    np.testing.assert_allclose(coverage, levels, atol=0.02)
    shrunk = InfiniteQuantileRegressor(lambda_=0.1, lambda_b=0.1).fit(X, y)
    shrunk_coverage = np.mean(y[:, None] <= shrunk.predict(X, levels), axis=0)
    assert np.all(np.abs(shrunk_coverage - levels) > 0.03)


def test_test_coverage_of_the_1_and_99_percent_quantiles(fitted):
    # 400 points hold ~4 below the true 1 % quantile: the estimated level's coverage on fresh
    # data has a standard deviation of about √(0.01 · 0.99 / 400) = 0.005 even for the
    # unconditional quantile. Tolerance ±0.02, four of those; the Sobol anchors of the
    # previous default (outer anchors 1/16 and 15/16 at n = 400) gave 0.081.
    model, _, _ = fitted
    X_test, y_test = heavy_tailed(20000, 1)
    coverage = np.mean(y_test[:, None] <= model.predict(X_test, [0.01, 0.99]), axis=0)
    np.testing.assert_allclose(coverage, [0.01, 0.99], atol=0.02)


def test_no_crossing_at_extreme_levels(fitted):
    model, _, _ = fitted
    X_test, _ = heavy_tailed(2000, 2)
    Q = model.predict(X_test, EXTREME_LEVELS)
    outside = (EXTREME_LEVELS < model.anchors_.min()) | (EXTREME_LEVELS > model.anchors_.max())
    assert outside.sum() == 6  # 1e-5 … 0.003 and 0.997, 0.999 lie beyond the 20 anchors
    # Beyond the outer anchors the extension is monotone by construction, up to and including
    # the first level inside (0.01, 0.99): not even a rounding-sized crossing.
    for columns in (EXTREME_LEVELS <= 0.01, EXTREME_LEVELS >= 0.99):
        assert np.all(np.diff(Q[:, columns], axis=1) >= 0)
    # Inside, the non-crossing penalty leaves at most κ-sized overlaps (κ = 0.01 sd).
    assert np.all(np.diff(Q, axis=1) >= -0.01 * model.y_scale_)


def test_extension_is_the_running_extremum_of_the_model(fitted):
    model, _, _ = fitted
    X_test = np.linspace(-2, 2, 7)[:, None]
    lowest, highest = model.anchors_.min(), model.anchors_.max()
    for level, anchor, envelope in ((1e-4, lowest, np.min), (0.9999, highest, np.max)):
        fine = np.linspace(level, anchor, 2001)
        raw = model._model_quantiles(model._transform_X(X_test), fine)  # h itself
        expected = envelope(raw, axis=1)
        got = model.predict(X_test, level)
        # The extension takes its extremum on a 33-point grid: at most the fine-grid value
        # plus h's change over one grid step (h is smooth in θ; its bandwidth is 0.2).
        step_change = np.max(np.abs(np.diff(raw, axis=1))) * 2001 / 32
        assert np.all(np.abs(got - expected) <= step_change + 1e-12)
        at_anchor = model.predict(X_test, anchor)
        beyond = got <= at_anchor if envelope is np.min else got >= at_anchor
        assert np.all(beyond)
