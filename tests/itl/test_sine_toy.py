"""∞-QR on the sine toy data: the non-crossing penalty works and the true quantiles are found."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from manytask.datasets.toy import make_sine_toy, sine_toy_quantiles
from manytask.itl import InfiniteQuantileRegressor, crossing_loss

LEVELS = np.linspace(0.1, 0.9, 9)


def _fit(X, y, lambda_nc, bandwidth):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = InfiniteQuantileRegressor(
            lambda_=1e-3,
            lambda_nc=lambda_nc,
            input_bandwidth=bandwidth,
            random_state=0,
            rearrange=False,  # the paper's model h: what the penalty (14) acts on
        ).fit(X, y)
    assert model.converged_
    return model


def _largest_crossing(Q):
    """Largest amount by which a lower level's prediction exceeds the next level's."""
    return float(np.max(Q[:, :-1] - Q[:, 1:]))


@pytest.fixture(scope="module")
def large_penalty_fit():
    X, y = make_sine_toy(200, random_state=0)
    return _fit(X, y, lambda_nc=10.0, bandwidth=0.5), X


def test_large_penalty_quantiles_do_not_cross_on_train_and_test_points(large_penalty_fit):
    model, X = large_penalty_fit
    X_test, _ = make_sine_toy(500, random_state=100)
    # 1e-3 (y has scale ~1): the Huber smoothing κ = 0.01 of the penalty allows tiny overlaps.
    for points in (X, X_test):
        Q = model.predict(points, quantiles=LEVELS)
        assert _largest_crossing(Q) <= 1e-3
        assert crossing_loss(Q) <= 1e-4


def test_penalty_is_what_removes_the_crossings():
    # Figure 1's setting (n = 40, a narrow bandwidth): without the penalty the curves cross on
    # the training points, with λ_nc = 10 they (nearly) do not.
    X, y = make_sine_toy(40, random_state=0)
    free = _fit(X, y, lambda_nc=0.0, bandwidth=0.3).predict(X, quantiles=LEVELS)
    penalised = _fit(X, y, lambda_nc=10.0, bandwidth=0.3).predict(X, quantiles=LEVELS)
    # crossing×100 of the free fit is ~0.3, far above the paper's "almost invisible" 0.05
    assert crossing_loss(free) > 1e-3
    assert crossing_loss(penalised) < crossing_loss(free) / 10


def test_estimated_quantiles_are_close_to_the_true_ones(large_penalty_fit):
    # Tolerance: the noise std is 0.2…1.2 (0.7 on average); a kernel of bandwidth 0.5 on the
    # standardised x (≈ 0.22 in x) averages over some 30-60 of the 200 points, so the standard
    # error of a quantile estimate is about 1.25 · 0.7 / √40 ≈ 0.14 and its mean absolute error
    # ≈ 0.11, plus smoothing bias where the sine bends. We require a mean absolute error ≤ 0.25
    # over a grid of [0.05, 1.45] and 9 levels, and 4 times less error than the unconditional
    # quantiles of y (which ignore x: ≈ 1.1 here).
    model, X = large_penalty_fit
    _, y = make_sine_toy(200, random_state=0)
    grid = np.linspace(0.05, 1.45, 200)[:, None]
    true = sine_toy_quantiles(grid, LEVELS)
    error = np.mean(np.abs(model.predict(grid, quantiles=LEVELS) - true))
    unconditional = np.mean(np.abs(np.quantile(y, LEVELS)[None, :] - true))
    assert error <= 0.25
    assert error <= unconditional / 4
