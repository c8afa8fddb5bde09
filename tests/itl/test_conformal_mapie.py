"""∞-QR inside MAPIE's conformalised quantile regressor (the ``mapie`` extra): a fitted ∞-QR
read at one level is a prefit quantile model; with the same base levels and MAPIE's
symmetric correction, MAPIE's intervals are ∞-QR's own ``predict_interval``."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import BaseEstimator, RegressorMixin

from manytask.itl import InfiniteQuantileRegressor

mapie_regression = pytest.importorskip("mapie.regression")


class AtLevel(RegressorMixin, BaseEstimator):
    """A fitted ∞-QR read at one level: what MAPIE's ``prefit=True`` expects of each model."""

    def __init__(self, model=None, level=0.5):
        self.model = model
        self.level = level

    def fit(self, X, y):
        return self

    def predict(self, X):
        return self.model.predict(X, self.level)

    def __sklearn_is_fitted__(self):
        return True

    @property
    def n_features_in_(self):
        return self.model.n_features_in_


def heavy_tailed(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    return x[:, None], np.sin(2 * x) + (0.2 + 0.3 * np.abs(x)) * rng.standard_t(3, size=n)


@pytest.mark.parametrize("coverage", [0.5, 0.8, 0.9])
def test_mapie_with_prefit_infinite_qr_gives_our_intervals(coverage):
    X, y = heavy_tailed(200, 0)
    X_cal, y_cal = heavy_tailed(99, 1)
    X_test, _ = heavy_tailed(20, 2)
    model = InfiniteQuantileRegressor(lambda_=1e-3, random_state=0).fit(X, y)
    # MAPIE: three models (lower, upper, median) for this one coverage
    levels = ((1 - coverage) / 2, (1 + coverage) / 2, 0.5)
    mapie = mapie_regression.ConformalizedQuantileRegressor(
        [AtLevel(model, level) for level in levels], confidence_level=coverage, prefit=True
    ).conformalize(X_cal, y_cal)
    _, intervals = mapie.predict_interval(X_test, symmetric_correction=True)
    # ∞-QR: one calibration for every coverage
    ours = model.calibrate(X_cal, y_cal).predict_interval(X_test, coverage)
    assert_allclose(intervals[:, :, 0], ours, rtol=1e-10, atol=1e-12)
