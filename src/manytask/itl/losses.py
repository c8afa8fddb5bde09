r"""The ITL losses with gradients and Huber smoothing, and the paper's quantile metrics.

``infinite-task-learning.txt`` §2.1 defines one loss per task family, each a weighted absolute
value or positive part of an affine function of the prediction h = h(x)(θ):

- pinball, eq. (3): ℓ_θ(y, h) = max(θ r, (θ − 1) r) with the residual r = y − h, θ ∈ [0, 1];
- cost-sensitive hinge, eq. (4): c_θ(y) |1 − y h|₊ with c_θ(y) = |½(θ + 1) − 1{y = −1}|,
  θ ∈ [−1, 1], y ∈ {−1, +1} (so c_θ(+1) = (1 + θ)/2 and c_θ(−1) = (1 − θ)/2);
- one-class (density level sets): ℓ_θ(h, t) = −t + |t − h|₊ / θ, θ ∈ (0, 1].

Smoothing (the paper's "infimal convolution", §5 note on optimisation and S.10.3). The
infimal convolution of |·| with p²/(2κ) is the Huber function

    ψ_κ(p) = p² / (2κ)      if |p| ≤ κ,
             |p| − κ/2      otherwise,          ψ_0(p) = |p|,

which is C¹ with ψ_κ'(p) = clip(p / κ, −1, 1) and 0 ≤ |p| − ψ_κ(p) ≤ κ/2. Every loss is
written through ψ_κ only (:func:`smooth_abs`), using the two identities

    |p|₊ = (|p| + p) / 2              → smoothed positive part  (ψ_κ(p) + p) / 2,
    max(θ r, (θ − 1) r) = |r|/2 + (θ − ½) r   → smoothed pinball  ψ_κ(r)/2 + (θ − ½) r,

so the smoothed losses are C¹ and lie below the exact ones by at most

    pinball κ/4,   hinge c_θ(y) κ/4 ≤ κ/4,   one-class κ/(4θ),

bounds attained as soon as the argument of |·| is at least κ away from its kink.

Gradients are taken with respect to the prediction h (and the offset t for the one-class
loss); for the pinball loss dℓ/dh = −dℓ/dr since r = y − h. At κ = 0 and exactly at a kink the
functions return the subgradient obtained with sign(0) = 0, i.e. ψ_0'(0) = 0 and a positive
part slope of ½ — the midpoint of the subdifferential and the limit of the smoothed gradients
as κ → 0.

All functions broadcast their array arguments (e.g. y of shape (n, 1) against h of shape
(n, m) and θ of shape (m,)). The metrics :func:`pinball_loss` and :func:`crossing_loss` are
the unsmoothed quantities of the paper's Table 1. The model and its optimiser live elsewhere.

>>> float(pinball(2.0, 0.0, theta=0.25)), float(pinball(0.0, 2.0, theta=0.25))
(0.5, 1.5)
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array, check_positive

__all__ = [
    "smooth_abs",
    "smooth_abs_gradient",
    "smooth_positive_part",
    "smooth_positive_part_gradient",
    "pinball",
    "pinball_gradient",
    "cost_sensitive_hinge",
    "cost_sensitive_hinge_gradient",
    "one_class",
    "one_class_gradient",
    "pinball_loss",
    "crossing_loss",
]


def _check_kappa(kappa) -> float:
    return check_positive(kappa, "kappa", strict=False)


def check_range(values, name: str, lo: float, hi: float, open_lo: bool = False) -> np.ndarray:
    values = as_finite_array(values, name)
    outside = (values <= lo if open_lo else values < lo) | (values > hi)
    if np.any(outside):
        bad = float(values.flat[int(np.argmax(outside))])
        bracket = "(" if open_lo else "["
        raise ValueError(f"{name} must be in {bracket}{lo:g}, {hi:g}], got {bad!r}")
    return values


def _check_labels(y) -> np.ndarray:
    y = as_finite_array(y, "y")
    bad = (y != 1) & (y != -1)
    if np.any(bad):
        raise ValueError(f"y must be -1 or +1, got {float(y.flat[int(np.argmax(bad))])!r}")
    return y


# --- The Huber function: the only place where the smoothing is computed. ---


def smooth_abs(p, kappa=0.0) -> np.ndarray:
    """ψ_κ(p): p²/(2κ) for |p| ≤ κ, |p| − κ/2 otherwise; |p| at κ = 0 (Huber, S.10.3).

    Parameters
    ----------
    p : array-like
        Argument, any shape.
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        ψ_κ(p), the shape of p.

    Examples
    --------
    >>> smooth_abs([-2.0, 0.5, 3.0], kappa=1.0).tolist()
    [1.5, 0.125, 2.5]
    """
    kappa = _check_kappa(kappa)
    magnitude = np.abs(np.asarray(p, dtype=float))
    if kappa == 0.0:
        return magnitude
    return np.where(magnitude <= kappa, magnitude**2 / (2.0 * kappa), magnitude - kappa / 2.0)


def smooth_abs_gradient(p, kappa=0.0) -> np.ndarray:
    """ψ_κ'(p) = clip(p/κ, −1, 1); sign(p) with sign(0) = 0 at κ = 0.

    Parameters
    ----------
    p : array-like
        Argument, any shape.
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        ψ_κ'(p), the shape of p.

    Examples
    --------
    >>> smooth_abs_gradient([-2.0, 0.5, 0.0], kappa=1.0).tolist()
    [-1.0, 0.5, 0.0]
    """
    kappa = _check_kappa(kappa)
    p = np.asarray(p, dtype=float)
    if kappa == 0.0:
        return np.sign(p)
    return np.clip(p / kappa, -1.0, 1.0)


def smooth_positive_part(p, kappa=0.0) -> np.ndarray:
    """Smoothed |p|₊ = (ψ_κ(p) + p)/2; equals max(p, 0) at κ = 0, within κ/4 below otherwise.

    Parameters
    ----------
    p : array-like
        Argument, any shape.
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        The shape of p.

    Examples
    --------
    >>> smooth_positive_part([-2.0, 0.5, 3.0], kappa=1.0).tolist()
    [-0.25, 0.3125, 2.75]
    """
    return (smooth_abs(p, kappa) + np.asarray(p, dtype=float)) / 2.0


def smooth_positive_part_gradient(p, kappa=0.0) -> np.ndarray:
    """Derivative (ψ_κ'(p) + 1)/2 of :func:`smooth_positive_part`; ½ at p = 0 when κ = 0.

    Parameters
    ----------
    p : array-like
        Argument, any shape.
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        The shape of p.

    Examples
    --------
    >>> smooth_positive_part_gradient([-2.0, 0.5, 0.0], kappa=1.0).tolist()
    [0.0, 0.75, 0.5]
    """
    return (smooth_abs_gradient(p, kappa) + 1.0) / 2.0


# --- Losses (eq. numbers of infinite-task-learning.txt §2.1). ---


def pinball(y, h, theta, kappa=0.0) -> np.ndarray:
    """Pinball loss, eq. (3): max(θ r, (θ − 1) r) = |r|/2 + (θ − ½) r with r = y − h.

    Smoothed: ψ_κ(r)/2 + (θ − ½) r. Under-prediction (y > h) costs θ per unit, so the
    minimiser over h of the expected loss is the θ-quantile of y.

    Parameters
    ----------
    y : array-like
        Targets (broadcast against ``h``).
    h : array-like
        Predictions h(x)(θ).
    theta : array-like
        Quantile levels θ ∈ [0, 1].
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        ℓ_θ(y, h), the broadcast shape.

    Examples
    --------
    >>> pinball([1.0, -1.0], 0.0, theta=0.9).round(12).tolist()
    [0.9, 0.1]
    """
    residual = as_finite_array(y, "y") - as_finite_array(h, "h")
    theta = check_range(theta, "theta", 0.0, 1.0)
    return smooth_abs(residual, kappa) / 2.0 + (theta - 0.5) * residual


def pinball_gradient(y, h, theta, kappa=0.0) -> np.ndarray:
    """dℓ/dh of :func:`pinball`: −(ψ_κ'(r)/2 + θ − ½) with r = y − h (−θ if y > h, 1 − θ if y < h).

    Parameters
    ----------
    y : array-like
        Targets (broadcast against ``h``).
    h : array-like
        Predictions h(x)(θ).
    theta : array-like
        Quantile levels θ ∈ [0, 1].
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        dℓ/dh, the broadcast shape.

    Examples
    --------
    >>> pinball_gradient([1.0, -1.0, 0.0], 0.0, theta=0.9).round(12).tolist()
    [-0.9, 0.1, -0.4]
    """
    residual = as_finite_array(y, "y") - as_finite_array(h, "h")
    theta = check_range(theta, "theta", 0.0, 1.0)
    return -(smooth_abs_gradient(residual, kappa) / 2.0 + theta - 0.5)


def _cost_weight(y, theta) -> np.ndarray:
    """c_θ(y) = |½(θ + 1) − 1{y = −1}| of eq. (4)."""
    return np.abs((theta + 1.0) / 2.0 - (y == -1))


def cost_sensitive_hinge(y, h, theta, kappa=0.0) -> np.ndarray:
    """Cost-sensitive hinge, eq. (4): |½(θ + 1) − 1{y = −1}| · |1 − y h|₊, θ ∈ [−1, 1].

    Smoothed: c_θ(y) (ψ_κ(1 − y h) + 1 − y h)/2.

    Parameters
    ----------
    y : array-like of -1 and +1
        Labels (broadcast against ``h``).
    h : array-like
        Predictions h(x)(θ).
    theta : array-like
        Cost levels θ ∈ [−1, 1].
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        The loss, the broadcast shape.

    Examples
    --------
    >>> cost_sensitive_hinge([1, -1], 0.0, theta=0.5).tolist()
    [0.75, 0.25]
    """
    y = _check_labels(y)
    margin = 1.0 - y * as_finite_array(h, "h")
    theta = check_range(theta, "theta", -1.0, 1.0)
    return _cost_weight(y, theta) * smooth_positive_part(margin, kappa)


def cost_sensitive_hinge_gradient(y, h, theta, kappa=0.0) -> np.ndarray:
    """dℓ/dh of :func:`cost_sensitive_hinge`: −y c_θ(y) (ψ_κ'(1 − y h) + 1)/2.

    Parameters
    ----------
    y : array-like of -1 and +1
        Labels (broadcast against ``h``).
    h : array-like
        Predictions h(x)(θ).
    theta : array-like
        Cost levels θ ∈ [−1, 1].
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        dℓ/dh, the broadcast shape.

    Examples
    --------
    >>> cost_sensitive_hinge_gradient([1, -1], 0.0, theta=0.5).tolist()
    [-0.75, 0.25]
    """
    y = _check_labels(y)
    margin = 1.0 - y * as_finite_array(h, "h")
    theta = check_range(theta, "theta", -1.0, 1.0)
    return -y * _cost_weight(y, theta) * smooth_positive_part_gradient(margin, kappa)


def one_class(h, t, theta, kappa=0.0) -> np.ndarray:
    """One-class (level-set) loss, §2.1: −t + |t − h|₊ / θ, θ ∈ (0, 1].

    Smoothed: −t + (ψ_κ(t − h) + t − h)/(2θ).

    Parameters
    ----------
    h : array-like
        Predictions h(x)(θ) (broadcast against ``t``).
    t : array-like
        The offset t(θ).
    theta : array-like
        Levels θ ∈ (0, 1].
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    ndarray
        The loss, the broadcast shape.

    Examples
    --------
    >>> one_class([0.0, 2.0], 1.0, theta=0.5).tolist()
    [1.0, -1.0]
    """
    t = as_finite_array(t, "t")
    gap = t - as_finite_array(h, "h")
    theta = check_range(theta, "theta", 0.0, 1.0, open_lo=True)
    return -t + smooth_positive_part(gap, kappa) / theta


def one_class_gradient(h, t, theta, kappa=0.0) -> tuple[np.ndarray, np.ndarray]:
    """(dℓ/dh, dℓ/dt) of :func:`one_class`: (−s/θ, −1 + s/θ) with s = (ψ_κ'(t − h) + 1)/2.

    Parameters
    ----------
    h : array-like
        Predictions h(x)(θ) (broadcast against ``t``).
    t : array-like
        The offset t(θ).
    theta : array-like
        Levels θ ∈ (0, 1].
    kappa : float
        κ ≥ 0, the smoothing (0: exact).

    Returns
    -------
    dh, dt : ndarray
        The two partial derivatives, the broadcast shape.

    Examples
    --------
    >>> dh, dt = one_class_gradient([0.0, 1.0], 1.0, theta=0.5)  # t − h = 1, then 0 (kink)
    >>> dh.tolist(), dt.tolist()
    ([-2.0, -1.0], [1.0, 0.0])
    """
    t = as_finite_array(t, "t")
    gap = t - as_finite_array(h, "h")
    theta = check_range(theta, "theta", 0.0, 1.0, open_lo=True)
    slope = smooth_positive_part_gradient(gap, kappa) / theta
    return -slope, slope - 1.0


# --- Metrics of Table 1 (pinball and crossing, ×100 in the paper). ---


def _check_quantile_matrix(Q, n_levels: int | None = None) -> np.ndarray:
    Q = as_finite_array(Q, "Q", ndim=2)
    if Q.shape[0] == 0 or Q.shape[1] == 0:
        raise ValueError(f"Q must be a non-empty (N, n_levels) array, got shape {Q.shape}")
    if n_levels is not None and Q.shape[1] != n_levels:
        raise ValueError(f"Q has {Q.shape[1]} columns but {n_levels} quantiles were given")
    return Q


def check_quantiles(quantiles) -> np.ndarray:
    quantiles = as_finite_array(quantiles, "quantiles")
    quantiles = quantiles.reshape(-1) if quantiles.ndim == 0 else quantiles
    if quantiles.ndim != 1 or quantiles.size == 0:
        raise ValueError(f"quantiles must be a non-empty 1-D array, got shape {quantiles.shape}")
    outside = (quantiles <= 0.0) | (quantiles >= 1.0)
    if np.any(outside):
        raise ValueError(f"quantiles must be in (0, 1), got {float(quantiles[outside][0])!r}")
    return quantiles


def pinball_loss(y, Q, quantiles) -> float:
    """Σ_l mean_i ℓ_{τ_l}(y_i − Q_il): the summed mean test pinball loss of Table 1.

    The paper reports 100 × this value ("pinball ×100"). The sum does not depend on the order
    of the levels, as long as column l of Q is the prediction for ``quantiles[l]``.

    Parameters
    ----------
    y : array of shape (N,)
        Targets.
    Q : array of shape (N, n_levels)
        Predicted quantiles, column l for level ``quantiles[l]``.
    quantiles : array of shape (n_levels,)
        Levels τ_l in (0, 1).

    Returns
    -------
    float
        The summed mean pinball loss.

    Examples
    --------
    >>> round(pinball_loss([0.0, 1.0], [[0.0, 1.0], [0.0, 1.0]], [0.1, 0.9]), 12)
    0.1
    """
    quantiles = check_quantiles(quantiles)
    y = as_finite_array(y, "y", ndim=1)
    Q = _check_quantile_matrix(Q, n_levels=quantiles.size)
    if Q.shape[0] != y.size:
        raise ValueError(f"Q has {Q.shape[0]} rows but y has {y.size} entries")
    return float(np.sum(np.mean(pinball(y[:, None], Q, quantiles), axis=0)))


def crossing_loss(Q, quantiles=None) -> float:
    """Σ_l mean_i max(Q_il − Q_i,l+1, 0) over consecutive levels τ_l < τ_l+1 (Table 1).

    The paper reports 100 × this value ("crossing ×100"). The columns of Q must be in
    increasing order of level; pass ``quantiles`` to have them sorted by level first.

    Parameters
    ----------
    Q : array of shape (N, n_levels)
        Predicted quantiles, one column per level.
    quantiles : array of shape (n_levels,), optional
        Levels τ_l in (0, 1) of the columns, in any order.

    Returns
    -------
    float
        The summed mean crossing.

    Examples
    --------
    >>> crossing_loss([[0.0, 1.0, 0.5], [0.0, 1.0, 2.0]])
    0.25
    """
    if quantiles is None:
        Q = _check_quantile_matrix(Q)
    else:
        quantiles = check_quantiles(quantiles)
        Q = _check_quantile_matrix(Q, n_levels=quantiles.size)[:, np.argsort(quantiles)]
    return float(np.sum(np.mean(np.maximum(Q[:, :-1] - Q[:, 1:], 0.0), axis=0)))
