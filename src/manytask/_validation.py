"""Input checks shared by every module: one place that turns bad input into a clear ValueError.

Each helper names the offending parameter and value in its message. Data go through
:func:`validate_X_y`, :func:`validate_X` and :func:`check_fitted_X` (scikit-learn's
``validate_data``, each error naming X or y) or, outside estimators, :func:`as_points` and
:func:`as_finite_array`; every repeated parameter check has one helper (:func:`check_int`,
:func:`check_positive`, :func:`check_probability`, :func:`check_choice`, :func:`check_bool`,
:func:`check_timeout`, :func:`check_retries`, :func:`check_random_state`).
:func:`unchanged_on_error` restores an estimator a refused ``fit`` had begun to change, and
:func:`binary_scale` rescales exactly so that squares cannot overflow. Checks specific to the
boosting sources (labels, domains, point weights) live in :mod:`manytask.boost.validation`.
Nothing here computes mathematics; it only converts and validates.
"""

from __future__ import annotations

import functools
import numbers
import re
from contextlib import contextmanager

import numpy as np
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

__all__ = [
    "as_points",
    "as_finite_array",
    "binary_scale",
    "check_bool",
    "check_choice",
    "check_fitted_X",
    "check_int",
    "check_positive",
    "check_positive_int",
    "check_probability",
    "check_random_state",
    "check_retries",
    "check_seed",
    "check_timeout",
    "unchanged_on_error",
    "validate_X",
    "validate_X_y",
]


def as_finite_array(value, name: str, ndim: int | None = None) -> np.ndarray:
    """Return ``value`` as a float array, rejecting NaN/inf and (optionally) the wrong rank.

    Parameters
    ----------
    value : array-like
        The value to convert.
    name : str
        The parameter's name, for the error message.
    ndim : int, optional
        The required number of dimensions.

    Returns
    -------
    ndarray
        ``value`` as floats.

    Examples
    --------
    >>> as_finite_array([1, 2], "reference", ndim=1)
    array([1., 2.])
    >>> as_finite_array([1.0, np.nan], "reference")
    Traceback (most recent call last):
    ...
    ValueError: reference must be finite, found nan at index (1,)
    """
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
    """Return inputs as a finite (N, d) float array; a 1-D array is N points in one dimension.

    Parameters
    ----------
    X : array-like of shape (N, d), (N,) or ()
        The points.
    name : str, default 'X'
        The parameter's name, for the error message.
    n_features : int, optional
        The required number of columns d.

    Returns
    -------
    ndarray of shape (N, d)
        The points as floats.

    Examples
    --------
    >>> as_points([0.0, 0.5, 1.0]).shape
    (3, 1)
    """
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


def check_positive(value, name: str, strict: bool = True, allow_none: bool = False):
    """Return ``value`` as a float after checking it is (strictly) positive and finite
    (None passes through with ``allow_none``).

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        The parameter's name, for the error message.
    strict : bool
        True: value > 0; False: value ≥ 0.
    allow_none : bool
        Whether None is accepted (and returned).

    Returns
    -------
    float or None
        ``value`` as a float.

    Examples
    --------
    >>> check_positive(2, "noise"), check_positive(0, "noise", strict=False)
    (2.0, 0.0)
    """
    if value is None and allow_none:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or (value <= 0 if strict else value < 0):
        relation = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be {relation}, got {value!r}")
    return value


def check_int(value, name: str, minimum: int = 1, allow_none: bool = False):
    """``value`` as an int if it is an integer >= ``minimum`` (or None with ``allow_none``).

    Parameters
    ----------
    value : int
        The value to check (a bool is refused).
    name : str
        The parameter's name, for the error message.
    minimum : int
        The smallest value accepted.
    allow_none : bool
        Whether None is accepted (and returned).

    Returns
    -------
    int or None
        ``value`` as an int.

    Examples
    --------
    >>> check_int(3, "n_estimators")
    3
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        expected = f"an int >= {minimum}"
        raise ValueError(
            f"{name} must be {'None or ' if allow_none else ''}{expected}, got {value!r}"
        )
    return int(value)


def check_positive_int(value, name: str, allow_none: bool = False):
    """``value`` if it is an int >= 1 (or None with ``allow_none``): :func:`check_int`.

    Parameters
    ----------
    value : int
        The value to check.
    name : str
        The parameter's name, for the error message.
    allow_none : bool
        Whether None is accepted (and returned).

    Returns
    -------
    int or None
        ``value`` as an int.

    Examples
    --------
    >>> check_positive_int(None, "horizon", allow_none=True) is None
    True
    """
    return check_int(value, name, 1, allow_none)


def check_probability(value, name: str, allow_none: bool = False):
    """``value`` as a float strictly inside (0, 1) (or None with ``allow_none``).

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        The parameter's name, for the error message.
    allow_none : bool
        Whether None is accepted (and returned).

    Returns
    -------
    float or None
        ``value`` as a float.

    Examples
    --------
    >>> check_probability(0.1, "delta")
    0.1
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(
            f"{name} must be {'None or ' if allow_none else ''}in (0, 1), got {value!r}"
        )
    return float(value)


def check_choice(value, name: str, choices):
    """``value`` if it is one of the strings ``choices``.

    Parameters
    ----------
    value : str
        The value to check.
    name : str
        The parameter's name, for the error message.
    choices : sequence of str
        The accepted values, in the order the error message lists them.

    Returns
    -------
    str
        ``value``.

    Examples
    --------
    >>> check_choice("tasks", "mode", ("actors", "tasks"))
    'tasks'
    """
    if not isinstance(value, str) or value not in choices:
        quoted = [repr(choice) for choice in choices]
        listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        raise ValueError(f"{name} must be {listed}, got {value!r}")
    return value


def check_bool(value, name: str) -> bool:
    """``value`` if it is True or False (NumPy booleans included).

    Parameters
    ----------
    value : bool
        The value to check.
    name : str
        The parameter's name, for the error message.

    Returns
    -------
    bool
        ``value`` as a Python bool.

    Examples
    --------
    >>> check_bool(np.True_, "warm_start")
    True
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_timeout(value, name: str = "timeout"):
    """None (wait for ever) or a finite number of seconds > 0.

    Parameters
    ----------
    value : float or None
        The timeout.
    name : str, default 'timeout'
        The parameter's name, for the error message.

    Returns
    -------
    float or None
        ``value``.

    Examples
    --------
    >>> check_timeout(None), check_timeout(2.5)
    (None, 2.5)
    """
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < np.inf
    ):
        raise ValueError(f"{name} must be None or > 0, got {value!r}")
    return value


def check_retries(value, name: str = "retries") -> int:
    """Times a failing request is repeated: an int >= 0.

    Parameters
    ----------
    value : int
        The number of retries.
    name : str, default 'retries'
        The parameter's name, for the error message.

    Returns
    -------
    int
        ``value``.

    Examples
    --------
    >>> check_retries(0)
    0
    """
    return check_int(value, name, minimum=0)


def check_random_state(seed, name: str = "random_state") -> np.random.Generator:
    """Return a numpy Generator from None, an int >= 0, a SeedSequence or a Generator.

    Parameters
    ----------
    seed : None, int, SeedSequence or Generator
        The seed; a Generator is returned as it is.
    name : str, default 'random_state'
        The parameter's name, for the error message.

    Returns
    -------
    numpy.random.Generator
        The generator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> check_random_state(rng) is rng, type(check_random_state(1)).__name__
    (True, 'Generator')
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed < 0:
        raise ValueError(f"{name} must be None, an int >= 0 or a numpy Generator, got {seed!r}")
    if seed is None or isinstance(seed, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(seed)
    raise ValueError(f"{name} must be None, an int or a numpy Generator, got {seed!r}")


@contextmanager
def _naming(name: str):
    """Prefix ``name`` to a ValueError (scikit-learn's or NumPy's) that does not name it."""
    try:
        yield
    except ValueError as error:
        if re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", str(error)):
            raise
        raise ValueError(f"{name}: {error}") from error


def validate_X(estimator, X, reset: bool = True, **check_params) -> np.ndarray:
    """X through scikit-learn's ``validate_data`` (2-D, numeric, finite, non-empty; with
    ``reset=False`` the fitted ``n_features_in_``), every ValueError naming X.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator being fitted or used.
    X : array-like of shape (n_samples, n_features)
        The inputs.
    reset : bool
        True in ``fit`` (sets ``n_features_in_``), False after.
    **check_params
        Further arguments of ``validate_data``.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
        The validated X.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> validate_X(Ridge(), [[1, 2], [3, 4]]).shape
    (2, 2)
    """
    with _naming("X"):
        return validate_data(estimator, X, reset=reset, **check_params)


def validate_X_y(estimator, X, y, y_numeric: bool = False, **check_params):
    """(X, y) for ``fit``: X as :func:`validate_X`, y 1-D and finite (numeric with
    ``y_numeric``), the same number of rows; every ValueError naming X or y.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator being fitted or used.
    X : array-like of shape (n_samples, n_features)
        The inputs.
    y : array-like of shape (n_samples,)
        The targets.
    y_numeric : bool
        Whether y must be numeric.
    **check_params
        Further arguments of ``validate_data`` for X.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The validated X.
    y : ndarray of shape (n_samples,)
        The validated y.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> X, y = validate_X_y(Ridge(), [[1, 2], [3, 4]], [0.5, 1.5], y_numeric=True)
    >>> X.shape, y.shape
    ((2, 2), (2,))
    """
    if y is None:
        raise ValueError(
            f"y: {type(estimator).__name__} requires y to be passed, but the target y is None"
        )
    X = validate_X(estimator, X, **check_params)
    with _naming("y"):
        y = check_array(y, ensure_2d=False, dtype="numeric" if y_numeric else None,
                        input_name="y", estimator=estimator)  # fmt: skip
        y = column_or_1d(y, warn=True)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X and y have inconsistent numbers of samples: {X.shape[0]} and "
                         f"{y.shape[0]}")  # fmt: skip
    return X, y


def check_fitted_X(estimator, X, attribute: str | None = None, **check_params) -> np.ndarray:
    """X at prediction: ``estimator`` fitted (``attribute`` set, else ``NotFittedError``), X as
    :func:`validate_X` with the ``n_features_in_`` columns it was fitted on.

    Parameters
    ----------
    estimator : BaseEstimator
        The fitted estimator.
    X : array-like of shape (n_samples, n_features)
        The inputs to predict at.
    attribute : str, optional
        The fitted attribute to look for (default: any attribute ending in "_").
    **check_params
        Further arguments of ``validate_data``.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
        The validated X.

    Examples
    --------
    >>> from sklearn.linear_model import Ridge
    >>> ridge = Ridge().fit([[1.0, 2.0], [3.0, 4.0]], [0.5, 1.5])
    >>> check_fitted_X(ridge, [[0.0, 1.0]]).shape
    (1, 2)
    """
    check_is_fitted(estimator, attribute)
    return validate_X(estimator, X, reset=False, **check_params)


def binary_scale(values, axis=None):
    """A power of two within a factor 2 of max |values| (along ``axis``); 0.5 where all are 0.

    Dividing by a power of two is exact in floating point (short of subnormal results), so
    statistics of the scaled values times the scale equal those of the values bit for bit;
    but the scaled values lie in
    [-2, 2], so their squares and sums cannot overflow where the raw ones would (|x| > 1e154).

    Parameters
    ----------
    values : array-like
        The values.
    axis : int, optional
        The axis along which to take the maximum (None: all values).

    Returns
    -------
    float or ndarray
        The power of two, per slice along ``axis``.

    Examples
    --------
    >>> float(binary_scale([3.0, -5.0])), float(binary_scale([0.0]))
    (4.0, 0.5)
    >>> bool(binary_scale([1e300]) == 2.0**996)  # 1e300 ≈ 2^996.6
    True
    """
    _, exponent = np.frexp(np.max(np.abs(values), axis=axis))
    # 2^(e-1) rather than 2^e: max |values| = 2^1024 - ε has e = 1024, and 2^1024 is inf.
    return np.ldexp(1.0, exponent - 1)


def unchanged_on_error(fit):
    """Decorate an estimator's ``fit``: if it raises, every attribute is restored as it was.

    A refused refit keeps the earlier fitted state, a refused first fit leaves no fitted
    attribute, whichever check (a parameter, the data, a solver) refused it.

    Parameters
    ----------
    fit : callable
        The method ``fit(estimator, *args, **kwargs)``.

    Returns
    -------
    callable
        The decorated method.

    Examples
    --------
    >>> class Model:
    ...     @unchanged_on_error
    ...     def fit(self, value):
    ...         self.value_ = value
    ...         if value < 0:
    ...             raise ValueError("value must be >= 0")
    ...         return self
    >>> model = Model().fit(1)
    >>> try:
    ...     model.fit(-1)
    ... except ValueError:
    ...     pass
    >>> model.value_
    1
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


def check_seed(seed, name: str = "seed") -> int | None:
    """Return ``seed`` after checking it is None or a non-negative integer (a SeedSequence
    entropy that a JSON checkpoint can hold).

    Parameters
    ----------
    seed : int or None
        The seed.
    name : str, default 'seed'
        The parameter's name, for the error message.

    Returns
    -------
    int or None
        ``seed`` as an int.

    Examples
    --------
    >>> check_seed(7), check_seed(None)
    (7, None)
    """
    if seed is None:
        return None
    return check_int(seed, name, minimum=0)
