"""Constrained multi-objective test problems (objectives minimised, c_j(x) ≤ 0 feasible).

- :func:`c2_dtlz2` — C2-DTLZ2 (Jain & Deb 2014, after DTLZ2 of Deb, Thiele, Laumanns &
  Zitzler 2005): the concave DTLZ2 front of which only the arcs near the axes' ends and
  near the centre are feasible, as in BoTorch's ``C2DTLZ2``.

What lives elsewhere: the paper's unconstrained problems (:mod:`.synthetic`, :mod:`.sensor`).
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_points, check_int, check_positive

__all__ = ["dtlz2", "c2_dtlz2"]


def dtlz2(X, n_objectives=2) -> np.ndarray:
    """DTLZ2 on [0, 1]^d, d ≥ M: f_i(x) = (1 + g(x)) Π_{j < M−1−i} cos(x_j π/2) ·
    sin(x_{M−1−i} π/2) (no sine for i = 0), g(x) = Σ_{j ≥ M−1} (x_j − 1/2)²; (N, M), to be
    minimised. Its Pareto front is the positive part of the unit sphere.

    Parameters
    ----------
    X : array of shape (N, d)
        Points of [0, 1]^d, d ≥ ``n_objectives``.
    n_objectives : int
        M ≥ 2.

    Returns
    -------
    F : array of shape (N, M)

    Examples
    --------
    >>> dtlz2(np.array([[0.0, 0.5, 0.5]]))
    array([[1., 0.]])
    """
    n_objectives = check_int(n_objectives, "n_objectives", minimum=2)
    X = as_points(X, "X")
    if X.shape[1] < n_objectives:
        raise ValueError(
            f"X must have at least n_objectives={n_objectives} columns, got {X.shape[1]}"
        )
    g = np.sum((X[:, n_objectives - 1 :] - 0.5) ** 2, axis=1)
    angles = X[:, : n_objectives - 1] * np.pi / 2
    F = np.empty((len(X), n_objectives))
    for i in range(n_objectives):
        last = n_objectives - 1 - i
        F[:, i] = (1 + g) * np.prod(np.cos(angles[:, :last]), axis=1)
        if i > 0:
            F[:, i] *= np.sin(angles[:, last])
    return F


def c2_dtlz2(X, n_objectives=2, radius=0.2):
    """C2-DTLZ2: (F, c) with F = :func:`dtlz2` (N, M) and one constraint c (N, 1), feasible
    where c ≤ 0:

    c(x) = min{ min_i [(f_i − 1)² + Σ_{j≠i} (f_j² − r²)], Σ_i [(f_i − 1/√M)² − r²] }.

    Jain & Deb (2014) subtract r² once from each bracket; this is BoTorch's ``C2DTLZ2``
    (``-evaluate_slack_true``), which subtracts it once per term — the same for the first
    bracket when M = 2, and 2r² instead of r² around the centre — so that the benchmark
    against BoTorch runs the same problem.

    Parameters
    ----------
    X : array of shape (N, d)
        Points of [0, 1]^d, d ≥ ``n_objectives``.
    n_objectives : int
        M ≥ 2.
    radius : float
        r > 0 (0.2, as BoTorch).

    Returns
    -------
    F : array of shape (N, M)
        The objectives, to be minimised.
    c : array of shape (N, 1)
        The constraint, feasible where ≤ 0.

    Examples
    --------
    >>> F, c = c2_dtlz2(np.array([[0.5, 0.5], [0.25, 0.5]]))
    >>> bool(c[0, 0] <= 0), bool(c[1, 0] <= 0)  # the centre of the front, and off it
    (True, False)
    """
    radius = check_positive(radius, "radius")
    F = dtlz2(X, n_objectives)
    M = F.shape[1]
    squares = F**2
    near_axis = (F - 1) ** 2 + (squares.sum(axis=1, keepdims=True) - squares) - (M - 1) * radius**2
    centre = np.sum((F - 1 / np.sqrt(M)) ** 2, axis=1) - M * radius**2
    c = np.minimum(near_axis.min(axis=1), centre)
    return F, c[:, None]
