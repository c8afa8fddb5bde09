"""Conformalised ∞-QR (Romano, Patterson & Candès 2019): the intervals against a brute-force
computation of their definition, the marginal guarantee as a statistical property over 200
random calibration/test draws, CV+ against a loop over its definition, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.exceptions import NotFittedError

from manytask.itl import InfiniteQuantileRegressor
from manytask.itl.conformal import LOWER_LEVELS

COVERAGES = (0.5, 0.8, 0.9, 0.95)


def heavy_tailed(n, seed):
    """x ~ U[−2, 2], y = sin 2x + (0.2 + 0.3|x|) t₃: heteroscedastic, heavy tails."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    return x[:, None], np.sin(2 * x) + (0.2 + 0.3 * np.abs(x)) * rng.standard_t(3, size=n)


@pytest.fixture(scope="module")
def fitted():
    X, y = heavy_tailed(200, 0)
    return InfiniteQuantileRegressor(lambda_=1e-3, random_state=0).fit(X, y)


def test_split_interval_is_the_conformal_quantile_of_the_scores(fitted):
    X_cal, y_cal = heavy_tailed(99, 1)
    X_test, _ = heavy_tailed(7, 2)
    model = fitted.calibrate(X_cal, y_cal)
    for coverage in COVERAGES:  # on the grid: the base levels are (1 ∓ c)/2 themselves
        levels = [(1 - coverage) / 2, (1 + coverage) / 2]
        base = model.predict(X_cal, levels)
        scores = np.maximum(base[:, 0] - y_cal, y_cal - base[:, 1])
        # independently: the ⌈c (n + 1)⌉-th smallest score, by sorting a Python list
        rank = math.ceil(round(coverage * 100, 9))  # n + 1 = 100
        q = sorted(scores.tolist())[rank - 1]
        expected = model.predict(X_test, levels) + np.array([-q, q])
        assert_allclose(model.predict_interval(X_test, coverage), expected, rtol=1e-12)


def test_any_coverage_uses_the_nearest_grid_level(fitted):
    model = fitted.calibrate(*heavy_tailed(99, 1))
    X_test, _ = heavy_tailed(5, 2)
    coverage = 0.8312  # lower level 0.0844 → grid level 34/400 = 0.085
    assert LOWER_LEVELS[33] == 0.085
    base = model.predict(X_test, [0.085, 0.915])
    interval = model.predict_interval(X_test, coverage)
    width_added = (interval[:, 1] - base[:, 1]) + (base[:, 0] - interval[:, 0])
    assert_allclose(interval[:, 1] - base[:, 1], base[:, 0] - interval[:, 0], atol=1e-12)
    assert np.all(np.isfinite(width_added))


def test_mean_coverage_over_200_random_draws_is_the_asked_coverage(fitted):
    # The guarantee holds given the fitted model, over exchangeable calibration and test
    # points: 200 independent draws (seeds 1000…1199) of n = 399 calibration and 1000 test
    # points from the same law. With n + 1 = 400, c (n + 1) is an integer for every c
    # tested, so E[coverage] = c exactly (Romano et al., Thm 1; continuous y, no ties).
    # sd of one draw's coverage: Var = c(1 − c)/(n + 2) (the Beta law of the calibrated
    # level) + ≤ c(1 − c)/1000 (the test points) ≤ 0.25 × (1/401 + 1/1000) = 8.7e-4, sd ≤
    # 0.0295; of the mean of 200 draws ≤ 0.0295/√200 = 0.0021: ±0.01 is ≥ 4.8 sd.
    coverage = {c: [] for c in COVERAGES}
    for draw in range(200):
        X, y = heavy_tailed(1399, 1000 + draw)
        fitted.calibrate(X[:399], y[:399])
        for c in COVERAGES:
            interval = fitted.predict_interval(X[399:], c)
            inside = (interval[:, 0] <= y[399:]) & (y[399:] <= interval[:, 1])
            coverage[c].append(inside.mean())
    for c in COVERAGES:
        assert abs(np.mean(coverage[c]) - c) <= 0.01, (c, np.mean(coverage[c]))


def test_cv_plus_matches_its_definition_and_covers(fitted):
    X, y = heavy_tailed(40, 3)
    X_test, y_test = heavy_tailed(300, 4)
    model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=10, random_state=0).fit(X, y)
    model.calibrate(X, y, cv=4)
    assert len(model.calibration_models_) == 4
    for k, fold_model in enumerate(model.calibration_models_):  # fitted without fold k
        assert_allclose(fold_model.X_mean_, X[model.calibration_folds_ != k].mean(axis=0))
    coverage, n = 0.8, len(y)
    levels = [0.1, 0.9]
    # independently: a loop over the points with the fold model that did not see each one
    lows, highs = [], []
    for i in range(n):
        fold_model = model.calibration_models_[model.calibration_folds_[i]]
        q_cal = fold_model.predict(X[i : i + 1], levels)[0]
        score = max(q_cal[0] - y[i], y[i] - q_cal[1])
        q_test = fold_model.predict(X_test, levels)
        lows.append(q_test[:, 0] - score)
        highs.append(q_test[:, 1] + score)
    lows, highs = np.array(lows), np.array(highs)  # (n, N)
    k = math.ceil(round(coverage * (n + 1), 9))  # 33
    expected_low = np.sort(lows, axis=0)[n - k]  # ⌊α(n + 1)⌋ = 8th smallest
    expected_high = np.sort(highs, axis=0)[k - 1]
    interval = model.predict_interval(X_test, coverage)
    assert_allclose(interval, np.column_stack([expected_low, expected_high]), rtol=1e-10)
    inside = np.mean((interval[:, 0] <= y_test) & (y_test <= interval[:, 1]))
    # Barber et al. (2021), Thm 4: ≥ 1 − 2α = 0.6 in expectation; one draw of 300 test
    # points has sd ≤ 0.03 around it, so 0.6 − 3 sd = 0.51 is a safe floor.
    assert inside >= 0.51


@pytest.mark.parametrize("coverage", [0.0, 1.0, -0.1, 1.5, float("nan"), "0.9", True, None])
def test_coverage_outside_the_open_unit_interval_is_refused(fitted, coverage):
    model = fitted.calibrate(*heavy_tailed(50, 1))
    with pytest.raises(ValueError, match="coverage"):
        model.predict_interval(np.zeros((2, 1)), coverage)


def test_bad_calibration_sets_are_refused_before_anything_changes(fitted):
    model = fitted.calibrate(*heavy_tailed(50, 1))
    scores = model.conformity_scores_.copy()
    with pytest.raises(ValueError, match="X_cal must have 1 columns.*got 2"):
        model.calibrate(np.zeros((5, 2)), np.zeros(5))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.calibrate(np.zeros((5, 1)), np.zeros(4))
    with pytest.raises(ValueError, match="cv"):
        model.calibrate(np.zeros((5, 1)), np.zeros(5), cv=1)
    assert_allclose(model.conformity_scores_, scores)
    # 50 points reach c = 50/51 at most: 0.98 needs ⌈0.98/0.02⌉ = 49, 0.99 needs 99
    model.predict_interval(np.zeros((1, 1)), 0.98)
    with pytest.raises(ValueError, match="coverage=0.99 needs a calibration set of at least 99"):
        model.predict_interval(np.zeros((1, 1)), 0.99)


def test_predict_interval_needs_calibrate_and_fit_forgets_it():
    X, y = heavy_tailed(30, 5)
    model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=5).fit(X, y)
    with pytest.raises(NotFittedError, match="calibrate"):
        model.predict_interval(X, 0.9)
    model.calibrate(X, y).fit(X, y)
    with pytest.raises(NotFittedError, match="calibrate"):
        model.predict_interval(X, 0.9)
