"""The shared input checks of manytask._validation: each refusal names the parameter and the
value, data errors name X or y, a refused fit restores the estimator, and the power-of-two
rescaling is exact where NumPy is finite and finite where NumPy overflows."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from manytask._validation import (
    binary_scale,
    check_bool,
    check_choice,
    check_fitted_X,
    check_int,
    check_probability,
    check_random_state,
    check_retries,
    check_timeout,
    unchanged_on_error,
    validate_X,
    validate_X_y,
)


class _Estimator(BaseEstimator):
    def __init__(self, fail=False):
        self.fail = fail

    @unchanged_on_error
    def fit(self, X, y):
        X, y = validate_X_y(self, X, y)
        self.coef_ = X.mean(axis=0)
        if self.fail:
            raise ValueError("fail: refused after the fitted state was written")
        return self


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.zeros((0, 2)), [], r"^X: Found array with 0 sample"),
        (np.zeros(3), [0, 1, 0], r"^X: Expected 2D array"),
        ([["a", 1.0], [2.0, 3.0]], [0, 1], r"^X: dtype=.numeric. is not compatible"),
        ([[np.nan, 1.0], [2.0, 3.0]], [0, 1], r"Input X contains NaN"),
        (np.zeros((2, 2)), [0.0, np.inf], r"Input y contains infinity"),
        (np.zeros((2, 2)), np.zeros((2, 2)), r"^y should be a 1d array"),
        (np.zeros((2, 2)), None, r"^y: _Estimator requires y to be passed"),
        (np.zeros((3, 2)), [0, 1], r"^X and y have inconsistent numbers of samples: 3 and 2$"),
    ],
)
def test_validate_X_y_names_the_input_at_fault(X, y, match):
    with pytest.raises(ValueError, match=match):
        validate_X_y(_Estimator(), X, y)


def test_check_fitted_X_names_X_and_the_fitted_width():
    estimator = _Estimator().fit(np.zeros((3, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="X has 3 features, but _Estimator is expecting 2"):
        check_fitted_X(estimator, np.zeros((1, 3)), "coef_")
    assert validate_X(estimator, [[1.0, 2.0]], reset=False).shape == (1, 2)


def test_refused_fit_restores_every_attribute():
    estimator = _Estimator().fit(np.ones((3, 2)), [0, 1, 0])
    coef = estimator.coef_
    estimator.set_params(fail=True)
    with pytest.raises(ValueError, match="fail"):
        estimator.fit(np.zeros((4, 5)), [0, 1, 0, 1])
    assert estimator.coef_ is coef and estimator.n_features_in_ == 2
    with pytest.raises(ValueError, match="fail"):
        _Estimator(fail=True).fit(np.zeros((4, 5)), [0, 1, 0, 1])


def test_binary_scale_is_exact_where_numpy_is_finite_and_finite_where_it_overflows():
    values = np.random.default_rng(0).normal(size=(50, 3)) * [1e-3, 1.0, 1e5]
    scale = binary_scale(values, axis=0)
    assert np.all(np.log2(scale) == np.round(np.log2(scale)))  # powers of two
    assert np.array_equal((values / scale).std(axis=0) * scale, values.std(axis=0))
    huge = values * 2.0**900  # NumPy's std squares 1e270-sized numbers: inf
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(huge.std(axis=0)))
    scale = binary_scale(huge, axis=0)
    assert np.array_equal((huge / scale).std(axis=0) * scale, values.std(axis=0) * 2.0**900)
    assert np.isfinite(binary_scale(np.array([np.finfo(float).max])))
    assert binary_scale(np.zeros(3)) > 0


@pytest.mark.parametrize(
    "check, value, match",
    [
        (lambda v: check_int(v, "n_rounds"), 0, r"n_rounds must be an int >= 1, got 0"),
        (lambda v: check_int(v, "n_rounds"), 2.0, r"n_rounds must be an int >= 1, got 2.0"),
        (lambda v: check_int(v, "n_rounds"), True, r"n_rounds must be an int >= 1, got True"),
        (lambda v: check_int(v, "cv", 2, True), 1, r"cv must be None or an int >= 2, got 1"),
        (check_retries, -1, r"retries must be an int >= 0, got -1"),
        (check_timeout, 0, r"timeout must be None or > 0, got 0"),
        (check_timeout, float("inf"), r"timeout must be None or > 0, got inf"),
        (check_timeout, "5", r"timeout must be None or > 0, got '5'"),
        (lambda v: check_probability(v, "epsilon"), 1.0, r"epsilon must be in \(0, 1\), got 1.0"),
        (lambda v: check_probability(v, "epsilon"), np.nan, r"epsilon must be in \(0, 1\)"),
        (lambda v: check_choice(v, "mode", ("a", "b")), "c", r"mode must be 'a' or 'b', got 'c'"),
        (lambda v: check_choice(v, "mode", ("a", "b")), ["a"], r"mode must be 'a' or 'b'"),
        (lambda v: check_choice(v, "mode", ("a", "b")), np.zeros(2), r"mode must be 'a' or 'b'"),
        (lambda v: check_bool(v, "pooled"), 1, r"pooled must be True or False, got 1"),
        (check_random_state, -5, r"random_state must be None, an int >= 0 .*, got -5"),
        (check_random_state, "seed", r"random_state must be None, an int or a numpy Generator"),
    ],
)
def test_parameter_checks_name_the_parameter_and_the_value(check, value, match):
    with pytest.raises(ValueError, match=match):
        check(value)


def test_parameter_checks_return_valid_values():
    assert check_int(np.int64(3), "n") == 3 and type(check_int(np.int64(3), "n")) is int
    assert check_retries(0) == 0 and check_timeout(None) is None and check_timeout(2.5) == 2.5
    assert check_probability(0.25, "p") == 0.25 and check_probability(None, "p", True) is None
    assert check_bool(np.bool_(True), "b") is True
    assert check_random_state(3).integers(100) == np.random.default_rng(3).integers(100)
