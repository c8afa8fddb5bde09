"""Maps between the user's units and the units a learned kernel is fitted in.

Inputs: a box [lower, upper]^d to the unit cube and back. Outputs: every task centred and
scaled to mean 0 and standard deviation 1, and back; before that, optionally, a strictly
increasing warping per objective (:class:`OutputWarping`: Yeo-Johnson or a Gaussian rank
transform), which leaves the Pareto front unchanged. ``check_bounds`` validates a box for
every caller (the optimiser and the kernel fit).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

from .._validation import as_finite_array, as_points

__all__ = [
    "check_bounds",
    "normalize_inputs",
    "unnormalize_inputs",
    "standardize_outputs",
    "unstandardize_outputs",
    "as_output_matrix",
    "OutputWarping",
    "OUTPUT_WARPINGS",
]

#: The names of :class:`OutputWarping`'s maps.
OUTPUT_WARPINGS = ("none", "yeo-johnson", "rank", "rank-affine")
#: Yeo-Johnson's λ is fitted in this interval: every λ in it keeps the map and its inverse
#: finite on standardised values (powers ≤ 2 of 1 + |u|), and it holds the MLE of most
#: skewed samples (λ < 1 compresses a long upper tail, λ > 1 a long lower one).
YEO_JOHNSON_LAMBDAS = (-1.0, 3.0)


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


class OutputWarping:
    """A strictly increasing map of every column of Y, fitted to observations, and back.

    Every column is first standardised (:func:`standardize_outputs`), so that the map does
    not depend on the column's units, then warped:

    * ``"none"``: the identity;
    * ``"yeo-johnson"``: ψ_λ(u) = ((1 + u)^λ − 1)/λ for u ≥ 0 and
      −((1 − u)^(2−λ) − 1)/(2 − λ) for u < 0 (Yeo & Johnson 2000; log1p at λ = 0, 2), with λ
      maximising the Gaussian log-likelihood of the warped column with its Jacobian
      (:func:`scipy.stats.yeojohnson_llf`) over :data:`YEO_JOHNSON_LAMBDAS`;
    * ``"rank"``: the Gaussian copula transform u ↦ Φ⁻¹(F̂(u)), F̂ the empirical CDF of the
      column at its distinct values (mid-ranks (i − ½)/k), linear between them and linear
      beyond the extreme ones with the slope of the nearest segment (Salinas et al. 2020);
    * ``"rank-affine"``: the rank transform up to the median distinct value, affine in u
      from there to the largest value (which keeps its rank quantile) and beyond. The rank
      map compresses a long lower tail, but between near-tied largest values its slope is
      their quantile gap over their value gap: values a millionth apart end a standard
      deviation apart, and a smooth objective near its maximum looks rough to the kernel.
      The affine upper half keeps the values' own spacing where an optimiser samples.

    Every map is strictly increasing and continuous on ℝ, so new values (told between two
    fits) are mapped too, and :meth:`inverse` undoes it.

    Parameters
    ----------
    kind : {"none", "yeo-johnson", "rank", "rank-affine"}
        The map.
    Y : array-like of shape (t, n)
        The observations it is fitted to, one column per task.

    Examples
    --------
    >>> warping = OutputWarping("yeo-johnson", [[1.0], [2.0], [4.0], [100.0]])
    >>> W = warping([[1.0], [2.0], [4.0], [100.0]])
    >>> bool(np.all(np.diff(W[:, 0]) > 0)), np.allclose(warping.inverse(W)[:, 0], [1, 2, 4, 100])
    (True, True)
    """

    def __init__(self, kind, Y):
        if kind not in OUTPUT_WARPINGS:
            raise ValueError(
                f"output_warping must be one of {', '.join(OUTPUT_WARPINGS)}, got {kind!r}"
            )
        Y = as_output_matrix(Y)
        self.kind = kind
        _, self.mean_, self.scale_ = standardize_outputs(Y)
        U = (Y - self.mean_) / self.scale_
        if kind == "yeo-johnson":
            self.lambdas_ = np.array([_yeo_johnson_lambda(u) for u in U.T])
        elif kind in ("rank", "rank-affine"):
            self.knots_ = [_rank_knots(u, affine_top=kind == "rank-affine") for u in U.T]

    def __call__(self, Y) -> np.ndarray:
        """The warped values of Y (t, n) (a vector is one row).

        Parameters
        ----------
        Y : array-like of shape (t, n) or (n,)
            Values in the user's units.

        Returns
        -------
        ndarray of the shape of Y

        Examples
        --------
        >>> OutputWarping("rank", [[1.0], [5.0], [100.0]])([[1.0], [5.0], [100.0]]).round(4)
        array([[-0.9674],
               [ 0.    ],
               [ 0.9674]])
        """
        Y = np.asarray(Y, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            U = Y / self.scale_ - self.mean_ / self.scale_
        if self.kind == "yeo-johnson":
            return np.stack(
                [_yeo_johnson(u, lam) for u, lam in zip(np.moveaxis(U, -1, 0), self.lambdas_)],
                axis=-1,
            )
        if self.kind in ("rank", "rank-affine"):
            return np.stack(
                [_piecewise(u, *knots) for u, knots in zip(np.moveaxis(U, -1, 0), self.knots_)],
                axis=-1,
            )
        return U

    def inverse(self, W) -> np.ndarray:
        """The values Y whose warping is W: the inverse of :meth:`__call__`.

        Parameters
        ----------
        W : array-like of shape (t, n) or (n,)
            Warped values.

        Returns
        -------
        ndarray of the shape of W

        Examples
        --------
        >>> warping = OutputWarping("rank", [[1.0], [5.0], [100.0]])
        >>> warping.inverse(warping([[3.0]]))
        array([[3.]])
        """
        W = np.asarray(W, dtype=float)
        if self.kind == "yeo-johnson":
            columns = [
                _yeo_johnson_inverse(w, lam) for w, lam in zip(np.moveaxis(W, -1, 0), self.lambdas_)
            ]
            U = np.stack(columns, axis=-1)
        elif self.kind in ("rank", "rank-affine"):
            columns = [_piecewise(w, q, u) for w, (u, q) in zip(np.moveaxis(W, -1, 0), self.knots_)]
            U = np.stack(columns, axis=-1)
        else:
            U = W
        return U * self.scale_ + self.mean_


def _yeo_johnson(u, lam):
    """ψ_λ(u), elementwise (Yeo & Johnson 2000)."""
    u = np.asarray(u, dtype=float)
    positive = u >= 0
    up, un = np.where(positive, u, 0.0), np.where(positive, 0.0, u)
    if abs(lam) < 1e-12:
        plus = np.log1p(up)
    else:
        plus = np.expm1(lam * np.log1p(up)) / lam
    if abs(lam - 2) < 1e-12:
        minus = -np.log1p(-un)
    else:
        minus = -np.expm1((2 - lam) * np.log1p(-un)) / (2 - lam)
    return np.where(positive, plus, minus)


def _yeo_johnson_inverse(w, lam):
    """ψ_λ⁻¹(w), elementwise; ψ_λ keeps the sign, so the branch is that of w."""
    w = np.asarray(w, dtype=float)
    positive = w >= 0
    wp, wn = np.where(positive, w, 0.0), np.where(positive, 0.0, w)
    if abs(lam) < 1e-12:
        plus = np.expm1(wp)
    else:
        plus = np.expm1(np.log1p(lam * wp) / lam)
    if abs(lam - 2) < 1e-12:
        minus = -np.expm1(-wn)
    else:
        minus = -np.expm1(np.log1p(-(2 - lam) * wn) / (2 - lam))
    return np.where(positive, plus, minus)


def _yeo_johnson_lambda(u):
    """The λ in :data:`YEO_JOHNSON_LAMBDAS` maximising the Gaussian log-likelihood of ψ_λ(u)."""
    if np.ptp(u) == 0:
        return 1.0  # the identity
    result = optimize.minimize_scalar(
        lambda lam: -stats.yeojohnson_llf(lam, u), bounds=YEO_JOHNSON_LAMBDAS, method="bounded",
        options={"xatol": 1e-6},
    )  # fmt: skip
    return float(result.x)


def _rank_knots(u, affine_top=False):
    """(distinct values, Φ⁻¹ of their mid-rank CDF): the knots of the rank transform; with
    ``affine_top`` the knots from the median distinct value up lie on the line through the
    median's and the largest value's."""
    values = np.unique(u)
    k = len(values)
    if k < 2:  # one value (0 once standardised): the identity
        return np.array([0.0, 1.0]), np.array([0.0, 1.0])
    quantiles = special.ndtri((np.arange(1, k + 1) - 0.5) / k)
    if affine_top:
        m = (k - 1) // 2
        slope = (quantiles[-1] - quantiles[m]) / (values[-1] - values[m])
        quantiles[m:] = quantiles[m] + slope * (values[m:] - values[m])
    return values, quantiles


def _piecewise(x, knots, values):
    """The increasing piecewise-linear map through (knots, values), extended linearly."""
    x = np.asarray(x, dtype=float)
    inside = np.interp(x, knots, values)
    low = values[0] + (x - knots[0]) * (values[1] - values[0]) / (knots[1] - knots[0])
    high = values[-1] + (x - knots[-1]) * (values[-1] - values[-2]) / (knots[-1] - knots[-2])
    return np.where(x < knots[0], low, np.where(x > knots[-1], high, inside))
