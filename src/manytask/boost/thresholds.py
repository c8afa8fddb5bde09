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
    """Thresholds t with lower ≤ t < upper (the midpoint unless rounding puts it on ``upper``)."""
    middle = 0.5 * lower + 0.5 * upper  # halves first: no overflow for huge values
    return np.where((middle >= upper) | (middle < lower), lower, middle)


def with_constant(thresholds) -> list[np.ndarray]:
    """The per-feature thresholds with −∞ (the constant classifier) once, first on feature 0,
    and no other non-finite value."""
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

    Examples
    --------
    >>> report = {"quantiles": np.array([[0.0, 1.0]]), "n_points": 4}
    >>> [t.tolist() for t in sketch_thresholds([report], [0.25, 0.75])]
    [[-inf, 0.0, 1.0]]
    """
    return with_constant(merge_quantiles(reports, levels))


def split_threshold(presorted, feature: int, split: int) -> float:
    """The threshold of split ``split`` of a presorted feature: −∞ for split 0; exact mode,
    the midpoint between the split-th and the next sorted value; binned mode, bin edge
    ``split − 1``."""
    if split == 0:
        return -np.inf
    if presorted.n_bins is not None:
        return float(presorted.thresholds[feature, split - 1])
    values = presorted.sorted_values[feature]
    return float(midpoints(values[split - 1], values[split]))
