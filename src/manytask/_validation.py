"""Input checks shared by every module: one place that turns bad input into a clear ValueError.

Each helper names the offending parameter and value in its message. Nothing here computes
mathematics; it only converts and validates.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

__all__ = [
    "as_points",
    "as_finite_array",
    "check_positive",
    "check_random_state",
    "binary_scale",
    "unchanged_on_error",
]


def as_finite_array(value, name: str, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float array, rejecting NaN/inf and (optionally) the wrong rank."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric, got {type(value).__name__}") from error
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise ValueError(f"{name} must be finite, found {array[bad]} at index {bad}")
    return array


def as_points(X, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """Return inputs as a finite (N, d) float array; a 1-D array is N points in one dimension."""
    array = as_finite_array(X, name)
    if array.ndim == 0:
        array = array.reshape(1, 1)
    elif array.ndim == 1:
        array = array[:, None]
    elif array.ndim != 2:
        raise ValueError(f"{name} must be 1- or 2-dimensional, got shape {array.shape}")
    if n_features is not None and array.shape[1] != n_features:
        raise ValueError(
            f"{name} has {array.shape[1]} features, expected {n_features} (shape {array.shape})"
        )
    return array


def check_positive(value, name: str, strict: bool = True) -> float:
    """Return ``value`` as a float after checking it is (strictly) positive and finite."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or (value <= 0 if strict else value < 0):
        relation = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be {relation}, got {value!r}")
    return value


def check_random_state(seed) -> np.random.Generator:
    """Return a numpy Generator from None, an int, a SeedSequence or a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(seed)
    raise ValueError(f"random_state must be None, an int or a numpy Generator, got {seed!r}")


def binary_scale(values, axis=None):
    """A power of two within a factor 2 of max |values| (along ``axis``); 0.5 where all are 0.

    Dividing by a power of two is exact in floating point, so statistics of the scaled values
    times the scale equal those of the values bit for bit; but the scaled values lie in
    [-2, 2], so their squares and sums cannot overflow where the raw ones would (|x| > 1e154).
    """
    _, exponent = np.frexp(np.max(np.abs(values), axis=axis))
    # 2^(e-1) rather than 2^e: max |values| = 2^1024 - ε has e = 1024, and 2^1024 is inf.
    return np.ldexp(1.0, exponent - 1)


def unchanged_on_error(fit):
    """Decorate an estimator's ``fit``: if it raises, every attribute is restored as it was.

    A refused refit keeps the earlier fitted state, a refused first fit leaves no fitted
    attribute, whichever check (a parameter, the data, a solver) refused it.
    """

    @functools.wraps(fit)
    def fit_or_restore(estimator, *args, **kwargs):
        saved = dict(estimator.__dict__)
        try:
            return fit(estimator, *args, **kwargs)
        except BaseException:
            estimator.__dict__.clear()
            estimator.__dict__.update(saved)
            raise

    return fit_or_restore
