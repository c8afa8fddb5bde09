"""Quadrature rules on the hyperparameter interval Θ: anchors θ_j and weights w_j.

The integrated loss of Infinite Task Learning, ∫_Θ v(θ, y, h(x)(θ)) dμ(θ) (eq. 5), is
replaced by the sum Σ_j w_j v(θ_j, y, h(x)(θ_j)) over m anchors
(``infinite-task-learning.txt`` §3.1, eq. 8). Every rule
here returns a :class:`Quadrature` whose weights are non-negative and sum to one, so the sum
is an *average* of the risk over Θ (the uniform probability measure on the interval for the
built-in rules). What lives elsewhere: the losses (:mod:`manytask.itl.losses`) and the model.

>>> anchors, weights = sobol_anchors(4)
>>> anchors.tolist()
[0.5, 0.75, 0.25, 0.375]
>>> float(weights.sum())
1.0
"""

from __future__ import annotations

import numbers
import warnings
from typing import NamedTuple

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy.stats import qmc

from .._validation import as_finite_array

__all__ = [
    "Quadrature",
    "sobol_anchors",
    "gauss_legendre",
    "gauss_lobatto",
    "uniform_grid",
    "custom",
]


class Quadrature(NamedTuple):
    """Anchors θ_j and non-negative weights w_j summing to one: Σ_j w_j f(θ_j) approximates
    the mean of f over the hyperparameter interval (the integral over θ of the ITL risk).

    Parameters
    ----------
    anchors : ndarray of shape (m,)
        θ_j.
    weights : ndarray of shape (m,)
        w_j ≥ 0, summing to one.

    Examples
    --------
    >>> anchors, weights = Quadrature(np.array([0.25, 0.75]), np.array([0.5, 0.5]))
    >>> float(weights @ anchors)
    0.5
    """

    anchors: np.ndarray
    weights: np.ndarray


def _check_size(m) -> int:
    if not isinstance(m, numbers.Integral) or isinstance(m, bool) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    return int(m)


def _check_interval(interval) -> tuple[float, float]:
    bounds = as_finite_array(interval, "interval", ndim=1)
    if bounds.shape != (2,):
        raise ValueError(f"interval must be a pair (lo, hi), got {interval!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    if lo >= hi:
        raise ValueError(f"interval must have lo < hi, got {interval!r}")
    return lo, hi


def sobol_anchors(m, interval=(0.0, 1.0)) -> Quadrature:
    """The first m points of the unscrambled 1-D Sobol sequence after the origin, equal weights.

    The Sobol sequence starts at 0, which maps to the interval's lower end; it is skipped
    because θ = 0 is a degenerate level (the 0-quantile, the one-class loss divides by θ).
    The remaining points are mapped affinely from [0, 1) to the interval, so no anchor equals
    ``lo``.

    Parameters
    ----------
    m : int
        Number of anchors, >= 1.
    interval : pair of float
        (lo, hi) with lo < hi.

    Returns
    -------
    Quadrature
        Anchors in (lo, hi) and weights 1/m.

    Examples
    --------
    >>> sobol_anchors(3, interval=(-1, 1)).anchors.tolist()
    [0.0, 0.5, -0.5]
    """
    m = _check_size(m)
    lo, hi = _check_interval(interval)
    with warnings.catch_warnings():
        # scipy warns when the count is not a power of two; balance is not needed here.
        warnings.simplefilter("ignore", UserWarning)
        unit = qmc.Sobol(d=1, scramble=False).random(m + 1)[1:, 0]
    return Quadrature(lo + (hi - lo) * unit, np.full(m, 1.0 / m))


def gauss_legendre(m, interval=(0.0, 1.0)) -> Quadrature:
    """Gauss–Legendre nodes mapped to the interval, weights rescaled to sum to one.

    Σ_j w_j f(θ_j) = (1 / (hi − lo)) ∫_lo^hi f(θ) dθ exactly for polynomials f of degree
    at most 2m − 1.

    Parameters
    ----------
    m : int
        Number of anchors, >= 1.
    interval : pair of float
        (lo, hi) with lo < hi.

    Returns
    -------
    Quadrature
        Nodes inside (lo, hi) and their weights.

    Examples
    --------
    >>> anchors, weights = gauss_legendre(2, interval=(0, 2))
    >>> round(float(weights @ anchors**3), 12)  # (1/2) ∫_0^2 θ³ dθ
    2.0
    """
    m = _check_size(m)
    lo, hi = _check_interval(interval)
    nodes, weights = leggauss(m)
    return Quadrature(lo + (hi - lo) * (nodes + 1.0) / 2.0, weights / 2.0)


def gauss_lobatto(m, interval=(0.0, 1.0)) -> Quadrature:
    """Gauss–Lobatto nodes (both ends of the interval included), weights summing to one.

    The nodes are ±1 and the roots of P'_{m−1} mapped to the interval, with weights
    2 / (m (m − 1) P_{m−1}(x)²) rescaled to sum to one; Σ_j w_j f(θ_j) is the mean of f
    over the interval exactly for polynomials of degree at most 2m − 3. Needs m >= 2.

    Parameters
    ----------
    m : int
        Number of anchors, >= 2.
    interval : pair of float
        (lo, hi) with lo < hi.

    Returns
    -------
    Quadrature
        Nodes from lo to hi, both included, and their weights.

    Examples
    --------
    >>> anchors, weights = gauss_lobatto(3)  # Simpson's rule
    >>> anchors.tolist(), (6 * weights).round(12).tolist()
    ([0.0, 0.5, 1.0], [1.0, 4.0, 1.0])
    """
    m = _check_size(m)
    if m < 2:
        raise ValueError(f"m must be >= 2 for Gauss–Lobatto (both ends are nodes), got {m}")
    lo, hi = _check_interval(interval)
    legendre = np.polynomial.Legendre.basis(m - 1)
    interior = np.sort(legendre.deriv().roots().real) if m > 2 else np.zeros(0)
    nodes = np.concatenate([[-1.0], interior, [1.0]])
    weights = 2.0 / (m * (m - 1) * legendre(nodes) ** 2)
    return Quadrature(lo + (hi - lo) * (nodes + 1.0) / 2.0, weights / weights.sum())


def uniform_grid(m, interval=(0.0, 1.0)) -> Quadrature:
    """Midpoints of m equal cells of the interval with equal weights 1/m (midpoint rule).

    Parameters
    ----------
    m : int
        Number of anchors, >= 1.
    interval : pair of float
        (lo, hi) with lo < hi.

    Returns
    -------
    Quadrature
        The midpoints and weights 1/m.

    Examples
    --------
    >>> uniform_grid(4).anchors.tolist()
    [0.125, 0.375, 0.625, 0.875]
    """
    m = _check_size(m)
    lo, hi = _check_interval(interval)
    midpoints = lo + (hi - lo) * (np.arange(m) + 0.5) / m
    return Quadrature(midpoints, np.full(m, 1.0 / m))


def custom(anchors, weights=None) -> Quadrature:
    """User-given anchors θ_j and weights w_j ≥ 0 (equal when omitted), normalised to sum one.

    Parameters
    ----------
    anchors : array-like of shape (m,)
        θ_j, in any order (copied).
    weights : array-like of shape (m,), optional
        w_j ≥ 0 with a positive sum; default equal weights.

    Returns
    -------
    Quadrature
        The anchors and the weights divided by their sum.

    Examples
    --------
    >>> custom([0.1, 0.5, 0.9], [1, 2, 1]).weights.tolist()
    [0.25, 0.5, 0.25]
    """
    anchors = as_finite_array(anchors, "anchors", ndim=1)
    if anchors.size == 0:
        raise ValueError("anchors must not be empty")
    if weights is None:
        return Quadrature(anchors.copy(), np.full(anchors.size, 1.0 / anchors.size))
    weights = as_finite_array(weights, "weights", ndim=1)
    if weights.shape != anchors.shape:
        raise ValueError(
            f"weights must have the same length as anchors ({anchors.size}), got {weights.size}"
        )
    if np.any(weights < 0):
        index = int(np.argmax(weights < 0))
        raise ValueError(f"weights must be >= 0, found {weights[index]} at index {index}")
    total = float(weights.sum())
    if total <= 0:
        raise ValueError("weights must have a positive sum, got all zeros")
    return Quadrature(anchors.copy(), weights / total)
