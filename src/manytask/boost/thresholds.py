"""Candidate thresholds of the stump and tree searches, from a column's values to the splits,
for every transport: the exact search, the federated server's quantile sketch (in process,
on Flower and on Dask) and a split index of a presorted feature.

A threshold t splits x[f] > t from x[f] ≤ t; −∞ gives the constant classifier and comes once,
first on feature 0 (:func:`with_constant`). The presorted features themselves (argsort or
bins) live in :mod:`.stumps`.

>>> [t.tolist() for t in candidate_thresholds([[3.0, 1.0, 2.0, 1.0], [0.0, 0.0, 5.0, 5.0]])]
[[-inf, 1.5, 2.5], [2.5]]
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "candidate_thresholds",
    "merge_quantiles",
    "midpoints",
    "sketch_thresholds",
    "split_threshold",
    "with_constant",
]


def midpoints(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Thresholds t with lower ≤ t < upper (the midpoint unless rounding puts it on ``upper``).

    Parameters
    ----------
    lower, upper : numpy.ndarray
        Consecutive distinct values, ``lower < upper`` elementwise.

    Returns
    -------
    numpy.ndarray
        One threshold per pair; ``lower`` where the midpoint rounds out of [lower, upper).

    Examples
    --------
    >>> midpoints(np.array([0.0, 1.0]), np.array([1.0, 4.0])).tolist()
    [0.5, 2.5]
    """
    middle = 0.5 * lower + 0.5 * upper  # halves first: no overflow for huge values
    return np.where((middle >= upper) | (middle < lower), lower, middle)


def with_constant(thresholds) -> list[np.ndarray]:
    """The per-feature thresholds with −∞ (the constant classifier) once, first on feature 0.

    Parameters
    ----------
    thresholds : sequence of array-like
        One array of thresholds per feature; non-finite values are dropped.

    Returns
    -------
    list of numpy.ndarray
        Float arrays, feature 0's led by −∞.

    Examples
    --------
    >>> [t.tolist() for t in with_constant([[0.5, np.inf], [1.5]])]
    [[-inf, 0.5], [1.5]]
    """
    thresholds = [np.asarray(t, dtype=float) for t in thresholds]
    thresholds = [t[np.isfinite(t)] for t in thresholds]
    if thresholds:
        thresholds[0] = np.concatenate([[-np.inf], thresholds[0]])
    return thresholds


def candidate_thresholds(columns) -> list[np.ndarray]:
    """Candidate thresholds of the exact stump search, one array per feature.

    ``columns[j]`` holds feature j's values in any order, repeats allowed (for data split
    across clients: the union of their values). Feature j gets the midpoints between its
    consecutive distinct values, plus :func:`with_constant`'s −∞. These are the splits
    :func:`~.stumps.presort` searches with ``n_bins=None``.

    Parameters
    ----------
    columns : sequence of array-like
        ``columns[j]``: the values of feature j.

    Returns
    -------
    list of numpy.ndarray
        Feature j's candidate thresholds, increasing (−∞ first on feature 0).

    Examples
    --------
    >>> [t.tolist() for t in candidate_thresholds([[1.0, 0.0, 1.0]])]
    [[-inf, 0.5]]
    """
    thresholds = []
    for values in columns:
        distinct = np.unique(np.asarray(values, dtype=float))
        thresholds.append(midpoints(distinct[:-1], distinct[1:]))
    return with_constant(thresholds)


def merge_quantiles(reports, levels) -> list[np.ndarray]:
    """Per feature, the weighted quantiles at ``levels`` of the clients' quantile reports.

    Each client's quantile q_{c,j,l} stands for m_c/L of its points; the server takes the
    weighted quantiles of these (a quantile sketch of sketches: within one client-quantile
    spacing of the pooled quantile) and keeps the distinct values.

    Parameters
    ----------
    reports : sequence of dict
        One per client: ``"quantiles"`` (d, L) its per-feature quantiles and ``"n_points"``
        m_c, its number of points.
    levels : array-like
        The quantile levels in [0, 1] the server asks for.

    Returns
    -------
    list of numpy.ndarray
        Per feature, the distinct merged quantiles, increasing.

    Examples
    --------
    >>> reports = [{"quantiles": np.array([[0.0, 1.0]]), "n_points": 2},
    ...            {"quantiles": np.array([[2.0, 3.0]]), "n_points": 6}]
    >>> [t.tolist() for t in merge_quantiles(reports, [0.5])]
    [[2.0]]
    """
    quantiles = np.concatenate([report["quantiles"] for report in reports], axis=1)
    weights = np.concatenate(
        [np.full(report["quantiles"].shape[1], report["n_points"]) for report in reports]
    ).astype(float)
    thresholds = []
    for values in quantiles:
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(weights[order]) / weights.sum()
        positions = np.searchsorted(cumulative, levels, side="left")
        thresholds.append(np.unique(values[order][np.minimum(positions, values.size - 1)]))
    return thresholds


def sketch_thresholds(reports, levels) -> list[np.ndarray]:
    """The federated candidate table from the clients' quantile reports: the merged
    quantiles (:func:`merge_quantiles`) plus :func:`with_constant`'s −∞. Every transport's
    server (in process, Flower, Dask) calls this.

    Parameters
    ----------
    reports : sequence of dict
        The clients' quantile reports, as for :func:`merge_quantiles`.
    levels : array-like
        The quantile levels in [0, 1].

    Returns
    -------
    list of numpy.ndarray
        Per feature, the candidate thresholds (−∞ first on feature 0).

    Examples
    --------
    >>> report = {"quantiles": np.array([[0.0, 1.0]]), "n_points": 4}
    >>> [t.tolist() for t in sketch_thresholds([report], [0.25, 0.75])]
    [[-inf, 0.0, 1.0]]
    """
    return with_constant(merge_quantiles(reports, levels))


def split_threshold(presorted, feature: int, split: int) -> float:
    """The threshold of split ``split`` of a presorted feature.

    −∞ for split 0; exact mode, the midpoint between the split-th and the next sorted value;
    binned mode, bin edge ``split − 1``.

    Parameters
    ----------
    presorted : PresortedFeatures
        The features, from :func:`~.stumps.presort`.
    feature : int
        The feature f.
    split : int
        The split: the number of sorted points (exact) or of bins (binned) below it.

    Returns
    -------
    float
        The threshold t of the stump x[f] > t.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> presorted = presort([[0.0], [1.0], [3.0]])
    >>> split_threshold(presorted, 0, 0), split_threshold(presorted, 0, 2)
    (-inf, 2.0)
    """
    if split == 0:
        return -np.inf
    if presorted.n_bins is not None:
        return float(presorted.thresholds[feature, split - 1])
    values = presorted.sorted_values[feature]
    return float(midpoints(values[split - 1], values[split]))
