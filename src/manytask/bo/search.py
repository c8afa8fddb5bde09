"""Where :class:`~manytask.bo.MultiTaskBO` maximises an acquisition: an argmax over a finite
set, or multi-start L-BFGS-B on a box from the incumbent (the told point of best scalarised
posterior mean, as Optuna's ``GPSampler`` warm-starts its local search from the best trial)
and the best points of a scrambled Sobol sample (its forward-difference gradient from one
vectorised acquisition call per step), away from the points already proposed (pending, or
earlier in the same ``ask(k)``).

On a box, two points count as different when they lie ``min_distance`` apart — a fraction
of each side — in at least one coordinate (the max-norm of the unit cube). What lives
elsewhere: the acquisition itself (:mod:`.policies`) and the optimiser's state.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

__all__ = [
    "argmax_with_ties",
    "box_capacity",
    "check_batch_size",
    "separated",
    "random_box_point",
    "maximize_on_box",
]


def argmax_with_ties(values, rng) -> int:
    """Index of the largest value; values within 1e-12 (relative) of it are drawn from at
    random (an infinite maximum ties only with itself).

    Parameters
    ----------
    values : ndarray of shape (N,)
        The values, none NaN.
    rng : numpy.random.Generator
        Draws among ties.

    Returns
    -------
    int
        The index chosen.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> argmax_with_ties(np.array([0.0, 2.0, 1.0]), rng)
    1
    >>> argmax_with_ties(np.array([1.0, 0.0, 1.0]), rng) in (0, 2)
    True
    """
    best = values.max()
    tolerance = 1e-12 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
    ties = np.flatnonzero(values >= best - tolerance)
    return int(ties[0] if len(ties) == 1 else rng.choice(ties))


def box_capacity(min_distance, n_features) -> int:
    """The most points of a box pairwise ``min_distance`` apart: (⌊1/min_distance⌋ + 1)^d
    (a grid of that step; one more would put two in a cell of side < min_distance).

    Parameters
    ----------
    min_distance : float in (0, 1]
        The separation, as a fraction of each side.
    n_features : int
        The dimension d.

    Returns
    -------
    int
        The capacity.

    Examples
    --------
    >>> box_capacity(0.5, 2)  # the 3 × 3 grid of step 1/2
    9
    """
    return (int(np.floor(1.0 / min_distance)) + 1) ** n_features


def check_batch_size(count, n_pending, candidates, n_distinct, n_sobol, min_distance, n_features):
    """Raise a ValueError naming k if ``count`` new points cannot be proposed: more than the
    distinct candidates of a finite set, or on a box more than ``n_sobol`` or than fit
    ``min_distance`` apart beside the ``n_pending`` points (:func:`box_capacity`).

    Parameters
    ----------
    count : int
        k, the number of points asked for.
    n_pending : int
        Points asked and not yet told.
    candidates : ndarray of shape (N, d) or None
        The finite domain, or None for a box.
    n_distinct : int or None
        The number of distinct candidates.
    n_sobol : int
        The size of the Sobol sample on a box.
    min_distance : float in (0, 1]
        The separation on a box.
    n_features : int
        The dimension d.

    Examples
    --------
    >>> check_batch_size(9, 0, None, None, 1024, 0.5, 2)  # fits: returns None
    >>> check_batch_size(9, 1, None, None, 1024, 0.5, 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: k=9 points and 1 pending ones cannot lie ... apart in the box: at most 9 fit; ...
    """
    if candidates is not None:
        if count > n_distinct:
            raise ValueError(
                f"k must be at most the number of distinct candidates, {n_distinct}, got {count}"
            )
        return
    if count > n_sobol:
        raise ValueError(
            f"k must be at most n_sobol={n_sobol} on a box (every point starts from its own "
            f"Sobol point), got {count}"
        )
    capacity = box_capacity(min_distance, n_features)
    if count + n_pending > capacity:
        raise ValueError(
            f"k={count} points and {n_pending} pending ones cannot lie "
            f"min_distance={min_distance} apart in the box: at most {capacity} fit; "
            "lower k or min_distance, or tell the pending points"
        )


def separated(points, busy, bounds, min_distance) -> np.ndarray:
    """For every row of ``points``: True if it lies ``min_distance`` apart from every busy
    point in at least one coordinate.

    Parameters
    ----------
    points : ndarray of shape (N, d)
        The points to test.
    busy : sequence of ndarray of shape (d,)
        The points already taken.
    bounds : array of shape (d, 2)
        The box, [low, high] per dimension.
    min_distance : float in (0, 1]
        The separation, as a fraction of each side.

    Returns
    -------
    ndarray of shape (N,)
        True where the point is far enough from every busy point.

    Examples
    --------
    >>> bounds = np.array([[0.0, 1.0], [0.0, 2.0]])
    >>> separated(np.array([[0.1, 0.1], [0.5, 1.5]]), [np.array([0.0, 0.0])], bounds, 0.2)
    array([False,  True])
    """
    width = bounds[:, 1] - bounds[:, 0]
    keep = np.ones(len(points), dtype=bool)
    for b in busy:
        keep &= np.max(np.abs(points - b) / width, axis=1) >= min_distance
    return keep


def random_box_point(bounds, rng, busy, min_distance, attempts=1000) -> np.ndarray:
    """A uniform point of the box, drawn again while it is too close to a busy point.

    Parameters
    ----------
    bounds : array of shape (d, 2)
        The box, [low, high] per dimension.
    rng : numpy.random.Generator
        Draws the point.
    busy : sequence of ndarray of shape (d,)
        The points already taken.
    min_distance : float in (0, 1]
        The separation (:func:`separated`).
    attempts : int
        Draws before a ValueError.

    Returns
    -------
    ndarray of shape (d,)
        The point.

    Examples
    --------
    >>> bounds = np.array([[0.0, 1.0], [-1.0, 1.0]])
    >>> x = random_box_point(bounds, np.random.default_rng(0), [], 1e-3)
    >>> x.shape, bool(np.all((bounds[:, 0] <= x) & (x <= bounds[:, 1])))
    ((2,), True)
    """
    low, high = bounds[:, 0], bounds[:, 1]
    for _ in range(attempts):
        x = low + (high - low) * rng.uniform(size=len(low))
        if separated(x[None, :], busy, bounds, min_distance)[0]:
            return x
    raise ValueError(
        f"no random point of the box lies min_distance={min_distance} away from the "
        f"{len(busy)} pending and batch points: lower k or min_distance"
    )


def maximize_on_box(
    acquisition, bounds, rng, busy, n_sobol, n_restarts, min_distance, warm_starts=(), avoid=()
):
    """argmax of ``acquisition`` (rows (m, d) → values (m,)) on the box, ``min_distance``
    away from ``busy`` (and from ``avoid`` while some Sobol point is): the best of
    ``n_sobol`` scrambled Sobol points, improved by L-BFGS-B from ``warm_starts`` and from
    the ``n_restarts`` best Sobol points.

    Parameters
    ----------
    acquisition : callable
        ``acquisition(X)`` for X of shape (m, d) returns the values, shape (m,).
    bounds : array of shape (d, 2)
        The box, [low, high] per dimension.
    rng : numpy.random.Generator
        Seeds the scrambled Sobol sample.
    busy : sequence of ndarray of shape (d,)
        The points already taken.
    n_sobol : int
        The size of the Sobol sample.
    n_restarts : int
        The number of L-BFGS-B starts.
    min_distance : float in (0, 1]
        The separation (:func:`separated`).
    warm_starts : sequence of ndarray of shape (d,)
        Further L-BFGS-B starts (MultiTaskBO passes its incumbent): they reach a local
        maximum near the best point when no Sobol start lies in its basin.
    avoid : sequence of ndarray of shape (d,)
        Points kept ``min_distance`` away from like ``busy`` unless no Sobol point is
        (MultiTaskBO's told points with ``avoid_told``).

    Returns
    -------
    ndarray of shape (d,)
        The best point found.

    Examples
    --------
    >>> def acquisition(X):
    ...     return -np.sum((X - 0.3) ** 2, axis=1)
    >>> bounds = np.array([[0.0, 1.0], [0.0, 1.0]])
    >>> x = maximize_on_box(acquisition, bounds, np.random.default_rng(0), [], 64, 2, 1e-3)
    >>> np.round(x, 3)
    array([0.3, 0.3])
    """
    low, high = bounds[:, 0], bounds[:, 1]
    # an integer seed: a Generator passed to Sobol would be *spawned* from, which its saved
    # bit-generator state does not capture, and a resumed run would diverge
    sobol_seed = int(rng.integers(2**63))
    sample = qmc.Sobol(len(low), scramble=True, seed=sobol_seed).random(n_sobol)
    starts = low + (high - low) * sample
    starts = starts[separated(starts, busy, bounds, min_distance)]
    if len(starts) == 0:
        raise ValueError(
            f"no point of the n_sobol={n_sobol} Sobol sample lies min_distance={min_distance} "
            f"away from the {len(busy)} pending and batch points: raise n_sobol, or lower k "
            "or min_distance"
        )
    away = separated(starts, avoid, bounds, min_distance)
    if away.any():
        starts, busy = starts[away], [*busy, *avoid]
    values = acquisition(starts)
    best_x, best_value = starts[np.argmax(values)], values.max()

    def negative(z):
        return _negative_with_gradient(acquisition, z, high)

    warm_starts = np.asarray(warm_starts, dtype=float).reshape(-1, len(low))
    for start in np.r_[warm_starts, starts[np.argsort(values)[::-1][:n_restarts]]]:
        result = minimize(negative, start, method="L-BFGS-B", jac=True, bounds=bounds)
        x = np.clip(result.x, low, high)
        if -result.fun > best_value and separated(x[None, :], busy, bounds, min_distance)[0]:
            best_x, best_value = x, -result.fun
    return np.array(best_x, dtype=float)


def _negative_with_gradient(acquisition, z, high):
    """−acquisition(z) and its forward-difference gradient from one call on d + 1 rows.

    The steps are SciPy's ``2-point`` ones, h_i = √ε max(1, |z_i|), taken backwards where
    z_i + h_i would leave the box: the same estimate L-BFGS-B makes without ``jac``, in one
    vectorised evaluation instead of d + 1.
    """
    steps = np.sqrt(np.finfo(float).eps) * np.maximum(1.0, np.abs(z))
    steps = np.where(z + steps > high, -steps, steps)
    rows = np.tile(z, (len(z) + 1, 1))
    rows[1:] += np.diag(steps)
    steps = rows[1:].diagonal() - z  # the steps as represented in floating point
    values = acquisition(rows)
    return -float(values[0]), -(values[1:] - values[0]) / steps
