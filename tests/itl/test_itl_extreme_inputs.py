"""Issue 23's ITL findings, one test each: targets and inputs beyond 1e154 fitted as their
exact rescaling, constant X and a single Gauss–Lobatto anchor refused naming what to pass,
and a refused refit leaving the fitted estimator as it was."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone

from manytask.itl import (
    IndependentQuantileRegressor,
    InfiniteCostSensitiveClassifier,
    InfiniteLevelSetEstimator,
    InfiniteQuantileRegressor,
    JointQuantileRegressor,
)

REGRESSORS = [
    InfiniteQuantileRegressor(n_anchors=5, random_state=0),  # the in-fit selection splits at random
    JointQuantileRegressor(),
    IndependentQuantileRegressor(),
]
NAMES = ["InfiniteQuantileRegressor", "JointQuantileRegressor", "IndependentQuantileRegressor"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(30, 1))
    return x, np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=30)


@pytest.mark.parametrize("estimator", REGRESSORS, ids=NAMES)
def test_quantile_regressors_fit_targets_beyond_1e154_as_their_rescaling(data, estimator):
    x, y = data
    estimator = clone(estimator)
    ordinary = estimator.fit(x, y).predict(x)
    # 2^532 ≈ 1.4e160 (the finding's 1e160, where the squares of y overflowed) and 2^996
    # ≈ 6.7e299: a power-of-two scale is exact, so the standardised problem is the same one.
    for scale in (2.0**532, 2.0**996):
        huge = estimator.fit(x, scale * y).predict(x)
        assert np.all(np.isfinite(huge))
        assert_allclose(huge / scale, ordinary, rtol=1e-12, atol=1e-12)
    tiny_inputs = estimator.fit(x * 2.0**-900, y).predict(x * 2.0**-900)
    assert_allclose(tiny_inputs, ordinary, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "estimator",
    [
        *REGRESSORS,
        InfiniteCostSensitiveClassifier(n_anchors=5),
        InfiniteLevelSetEstimator(n_anchors=5),
    ],  # fmt: skip
    ids=[*NAMES, "InfiniteCostSensitiveClassifier", "InfiniteLevelSetEstimator"],
)
def test_constant_X_error_says_to_pass_input_bandwidth(estimator):
    estimator = clone(estimator)
    X = np.ones((10, 2))
    y = np.r_[np.zeros(5), np.ones(5)]
    with pytest.raises(ValueError, match="median-heuristic .* pass input_bandwidth="):
        estimator.fit(X, y)
    assert not hasattr(estimator, "n_features_in_")  # nothing set by the refused fit
    estimator.set_params(input_bandwidth=1.0).fit(X, y)  # the advice works
    assert np.all(np.isfinite(estimator.decision_function(X) if hasattr(
        estimator, "decision_function") else estimator.predict(X)))  # fmt: skip


def test_level_set_refuses_one_anchor_naming_n_anchors(data):
    x, _ = data
    with pytest.raises(ValueError, match="n_anchors must be an integer >= 2 .*gauss-lobatto.* 1"):
        InfiniteLevelSetEstimator(n_anchors=1).fit(x)
    model = InfiniteLevelSetEstimator(n_anchors=1, quadrature="gauss-legendre").fit(x)
    assert model.anchors_.shape == (1,)


@pytest.mark.parametrize(
    "estimator, bad",
    [
        (InfiniteQuantileRegressor(n_anchors=5), {"lambda_nc": -1.0}),
        (JointQuantileRegressor(), {"quantiles": [0.2, 0.2]}),
        (InfiniteLevelSetEstimator(n_anchors=5), {"epsilon": 2.0}),
        (InfiniteCostSensitiveClassifier(n_anchors=5), {"lambda_": 0.0}),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, dict) else next(iter(value)),
)
def test_refused_refit_leaves_the_fitted_estimator_unchanged(data, estimator, bad):
    x, y = data
    target = (y > np.median(y)).astype(int)
    estimator = clone(estimator).fit(x, target)
    estimator.set_params(**bad)
    before = dict(estimator.__dict__)
    with pytest.raises(ValueError, match=next(iter(bad))):
        estimator.fit(np.c_[x, x], target)  # new data too: nothing of it may be kept
    assert estimator.__dict__.keys() == before.keys()
    assert all(estimator.__dict__[key] is value for key, value in before.items())
