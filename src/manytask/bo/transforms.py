"""Maps between the user's units and the units a learned kernel is fitted in.

Inputs: a box [lower, upper]^d to the unit cube and back. Outputs: every task centred and
scaled to mean 0 and standard deviation 1, and back. ``check_bounds`` validates a box for
every caller (the optimiser and the kernel fit).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array, as_points

__all__ = [
    "check_bounds",
    "normalize_inputs",
    "unnormalize_inputs",
    "standardize_outputs",
    "unstandardize_outputs",
    "as_output_matrix",
]


def check_bounds(bounds, n_features=None) -> np.ndarray:
    """A box as a (d, 2) float array of (lower, upper) rows, or a ValueError naming it.

    Parameters
    ----------
    bounds : array-like of shape (d, 2), or (2,) for one dimension
        Finite (lower, upper) rows with lower < upper.
    n_features : int, optional
        The d the box must have (that of the inputs X).

    Returns
    -------
    bounds : ndarray of shape (d, 2)

    Examples
    --------
    >>> check_bounds([0, 1])
    array([[0., 1.]])
    """
    bounds = as_finite_array(bounds, "bounds")
    if bounds.ndim == 1 and bounds.shape == (2,):
        bounds = bounds[None, :]
    if bounds.ndim != 2 or bounds.shape[1] != 2 or bounds.shape[0] == 0:
        raise ValueError(
            f"bounds must have shape (d, 2) of (lower, upper) rows, got {bounds.shape}"
        )
    bad = np.flatnonzero(bounds[:, 0] >= bounds[:, 1])
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"bounds must have lower < upper in every dimension, got {bounds[i].tolist()} "
            f"in row {i}"
        )
    with np.errstate(over="ignore"):
        wide = np.flatnonzero(~np.isfinite(bounds[:, 1] - bounds[:, 0]))
    if wide.size:
        i = int(wide[0])
        raise ValueError(
            f"bounds must have a width upper − lower within the float range, got "
            f"{bounds[i].tolist()} in row {i}"
        )
    if n_features is not None and bounds.shape[0] != n_features:
        raise ValueError(
            f"bounds has {bounds.shape[0]} rows but X has {n_features} features; "
            "give one (lower, upper) row per input dimension"
        )
    return bounds


def normalize_inputs(X, bounds):
    """Map inputs from the box ``bounds`` to the unit cube: (X − lower) / (upper − lower).

    Parameters
    ----------
    X : array-like of shape (t, d)
        Inputs in the original units.
    bounds : array-like of shape (d, 2)
        One (lower, upper) row per dimension, lower < upper.

    Returns
    -------
    X_unit : ndarray of shape (t, d)
        The normalised inputs (in [0, 1]^d when X lies in the box).
    bounds : ndarray of shape (d, 2)
        The validated bounds, all :func:`unnormalize_inputs` needs to map back.

    Examples
    --------
    >>> X_unit, bounds = normalize_inputs([[0.0, 10.0], [5.0, 20.0]], [[0, 10], [10, 20]])
    >>> X_unit
    array([[0. , 0. ],
           [0.5, 1. ]])
    """
    X = as_points(X, "X")
    bounds = check_bounds(bounds, X.shape[1])
    return (X - bounds[:, 0]) / (bounds[:, 1] - bounds[:, 0]), bounds


def unnormalize_inputs(X_unit, bounds) -> np.ndarray:
    """The inverse of :func:`normalize_inputs`: lower + X_unit · (upper − lower).

    Parameters
    ----------
    X_unit : array-like of shape (t, d)
        Normalised inputs.
    bounds : array-like of shape (d, 2)
        One (lower, upper) row per dimension, lower < upper.

    Returns
    -------
    X : ndarray of shape (t, d)
        The inputs in the original units.

    Examples
    --------
    >>> unnormalize_inputs([[0.5]], [[-1.0, 1.0]])
    array([[0.]])
    """
    X_unit = as_points(X_unit, "X_unit")
    bounds = check_bounds(bounds, X_unit.shape[1])
    return bounds[:, 0] + X_unit * (bounds[:, 1] - bounds[:, 0])


def standardize_outputs(Y):
    """Centre and scale every task (column) of Y to mean 0 and standard deviation 1.

    Every task is first divided by its largest |y|, so that no mean, square or difference
    overflows however close to the float limit the observations are; the scale returned is
    the standard deviation, finite for every finite Y. A task whose observations are all
    equal (or a single observation) is scaled by that largest |y| (1 if it is 0), so nothing
    is divided by zero.

    Parameters
    ----------
    Y : array-like of shape (t, n)
        Observations, one column per task.

    Returns
    -------
    Y_standard : ndarray of shape (t, n)
    mean, scale : ndarray of shape (n,)
        Y = Y_standard · scale + mean (:func:`unstandardize_outputs`).

    Examples
    --------
    >>> Y_standard, mean, scale = standardize_outputs([[1.0, 10.0], [3.0, 10.0]])
    >>> Y_standard, mean, scale
    (array([[-1.,  0.],
           [ 1.,  0.]]), array([ 2., 10.]), array([ 1., 10.]))
    >>> standardize_outputs([[1.7e308], [-1.7e308]])[0]
    array([[ 1.],
           [-1.]])
    """
    Y = as_output_matrix(Y)
    if len(Y) == 0:
        raise ValueError("Y must hold at least one observation, got shape (0, n)")
    magnitude = np.max(np.abs(Y), axis=0)
    magnitude = np.where(magnitude > 0, magnitude, 1.0)
    unit = Y / magnitude  # |unit| ≤ 1: its mean and squares cannot overflow
    unit_mean, unit_scale = unit.mean(axis=0), unit.std(axis=0)
    unit_scale = np.where(unit_scale > 1e-12, unit_scale, 1.0)
    scale = np.maximum(unit_scale * magnitude, np.finfo(float).tiny)
    return (unit - unit_mean) / unit_scale, unit_mean * magnitude, scale


def unstandardize_outputs(Y_standard, mean, scale) -> np.ndarray:
    """The inverse of :func:`standardize_outputs`: Y_standard · scale + mean.

    Parameters
    ----------
    Y_standard : array-like of shape (t, n)
        Standardised values (a vector is one column).
    mean, scale : array-like of shape (n,)
        What :func:`standardize_outputs` returned.

    Returns
    -------
    Y : ndarray of shape (t, n)

    Examples
    --------
    >>> unstandardize_outputs([[-1.0, 0.0]], [2.0, 10.0], [1.0, 1.0])
    array([[ 1., 10.]])
    """
    Y_standard = as_output_matrix(Y_standard, "Y_standard")
    mean = as_finite_array(mean, "mean", ndim=1)
    scale = as_finite_array(scale, "scale", ndim=1)
    return Y_standard * scale + mean


def as_output_matrix(Y, name="Y") -> np.ndarray:
    """``Y`` as a finite (t, n) array, a vector as one column.

    Parameters
    ----------
    Y : array-like of shape (t, n) or (t,)
        Observations, one column per task.
    name : str
        The parameter's name in error messages.

    Returns
    -------
    Y : ndarray of shape (t, n)

    Examples
    --------
    >>> as_output_matrix([1.0, 2.0])
    array([[1.],
           [2.]])
    """
    Y = as_finite_array(Y, name)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"{name} must be 1- or 2-dimensional (t, n), got shape {Y.shape}")
    return Y
