"""Decision stumps and the exact minimum-weighted-error stump search used by the boosters.

A stump is h(x) = +polarity if x[feature] > threshold, else −polarity, with polarity ∈ {−1, +1},
so h(x) ∈ {−1, +1}. A threshold of −inf gives the constant stump h ≡ polarity.

:func:`presort` prepares the features once (an argsort per feature, O(d·m log m), or quantile
bin edges with ``n_bins``); :func:`best_stump` then finds, for one or several weight vectors,
the stump of least weighted error Σ_i w_i 1{h(x_i) ≠ y_i} in O(d·m) per weight vector with
cumulative sums of the signed weights w_i y_i along each sorted feature (both polarities at
once). The candidate thresholds are the midpoints between consecutive distinct values of each
feature plus −inf (exact mode), or the bin edges (binned mode, exact over those thresholds).

In MULTIBOOST (§3) the weights are w_i = D_t(k, i) Q(k|x_i) ≥ 0; the paper's Q-weighted error
is then ε = ½(1 − Σ_i w_i) + Σ_i w_i 1{h(x_i) ≠ y_i}, computed by the caller. The boosters
themselves live elsewhere.

>>> import numpy as np
>>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
>>> y = np.array([-1, -1, 1, 1])
>>> stump, error, feature_errors = best_stump(presort(X), y, np.ones(4))
>>> stump, error
(Stump(feature=0, threshold=1.5, polarity=1), 0.0)
>>> stump.predict(X)
array([-1., -1.,  1.,  1.])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._validation import as_finite_array, as_points

__all__ = ["PresortedFeatures", "Stump", "StumpResult", "best_stump", "presort"]

# Bound on the K × features × m block of cumulative sums held in memory at once (in floats).
_BLOCK_FLOATS = 1 << 22


@dataclass(frozen=True)
class Stump:
    """The decision stump h(x) = polarity if x[feature] > threshold else −polarity.

    Parameters
    ----------
    feature : int
        Column of the input the stump looks at.
    threshold : float
        Split point; ``-inf`` makes the stump constant, equal to ``polarity``.
    polarity : int
        +1 or −1: the value on the side above the threshold.

    Examples
    --------
    >>> Stump(feature=1, threshold=0.0, polarity=-1).predict([[5.0, 2.0], [5.0, -2.0]])
    array([-1.,  1.])
    """

    feature: int
    threshold: float
    polarity: int

    def predict(self, X) -> np.ndarray:
        """Return h(x) ∈ {−1, +1} for every row of ``X`` as a float array of shape (N,)."""
        X = as_points(X)
        if X.shape[1] <= self.feature:
            raise ValueError(f"X has {X.shape[1]} features, the stump uses feature {self.feature}")
        above = X[:, self.feature] > self.threshold
        return np.where(above, float(self.polarity), -float(self.polarity))


class StumpResult(NamedTuple):
    """Outcome of :func:`best_stump` for one weight vector.

    ``error`` is Σ_i w_i 1{h(x_i) ≠ y_i} of ``stump`` (unnormalised, like the weights);
    ``feature_errors[f]`` is the least such error among the stumps on feature f.
    """

    stump: Stump
    error: float
    feature_errors: np.ndarray


@dataclass(frozen=True, eq=False)
class PresortedFeatures:
    """Features prepared once for repeated stump searches; build it with :func:`presort`.

    Exact mode (``n_bins is None``): ``order[f]`` sorts feature f, ``sorted_values[f]`` are
    its sorted values, ``split_valid[f, s]`` says whether a threshold may separate the first s
    sorted points from the rest (s = 0, the constant stump, up to m − 1).
    Binned mode: ``thresholds[f, :n_thresholds[f]]`` are the candidate thresholds of feature
    f (padded with +inf) and ``bins[f, i]`` the number of them below x_i[f].
    """

    X: np.ndarray
    n_bins: int | None
    order: np.ndarray | None = None
    sorted_values: np.ndarray | None = None
    split_valid: np.ndarray | None = None
    thresholds: np.ndarray | None = None
    n_thresholds: np.ndarray | None = None
    bins: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def _midpoints(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Thresholds t with lower ≤ t < upper (the midpoint unless rounding puts it on ``upper``)."""
    middle = 0.5 * lower + 0.5 * upper  # halves first: no overflow for huge values
    return np.where((middle >= upper) | (middle < lower), lower, middle)


def presort(X, n_bins: int | None = None) -> PresortedFeatures:
    """Prepare the features of ``X`` (m, d) once for :func:`best_stump`.

    Parameters
    ----------
    X : array-like of shape (m, d)
        Training inputs; finite.
    n_bins : int or None
        None (default): exact search, an argsort per feature, O(d·m log m).
        An int ≥ 2: histogram mode with at most ``n_bins`` candidate splits per feature (the
        constant stump and ``n_bins − 1`` thresholds at the midpoints after the feature's
        quantiles j/n_bins); each search then costs O(d·m) for the histogram plus O(d·n_bins).

    Returns
    -------
    PresortedFeatures

    Examples
    --------
    >>> presort([[3.0], [1.0], [1.0]]).split_valid.tolist()
    [[True, False, True]]
    """
    X = as_points(X)
    m, d = X.shape
    if m == 0 or d == 0:
        raise ValueError(f"X must have at least one sample and one feature, got shape {X.shape}")
    if n_bins is None:
        order = np.argsort(X, axis=0, kind="stable").T.copy()  # (d, m)
        sorted_values = np.take_along_axis(X.T, order, axis=1)
        split_valid = np.ones((d, m), dtype=bool)
        split_valid[:, 1:] = sorted_values[:, 1:] > sorted_values[:, :-1]
        return PresortedFeatures(
            X=X, n_bins=None, order=order, sorted_values=sorted_values, split_valid=split_valid
        )
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 2:
        raise ValueError(f"n_bins must be None or an int >= 2, got {n_bins!r}")
    n_bins = int(n_bins)
    levels = np.arange(1, n_bins) / n_bins
    thresholds = np.full((d, n_bins - 1), np.inf)
    n_thresholds = np.zeros(d, dtype=np.intp)
    bins = np.empty((d, m), dtype=np.intp)
    for feature in range(d):
        column = X[:, feature]
        distinct = np.unique(column)
        quantiles = np.quantile(column, levels, method="lower")
        upper_index = np.unique(np.searchsorted(distinct, quantiles, side="right"))
        upper_index = upper_index[upper_index < distinct.size]
        feature_thresholds = _midpoints(distinct[upper_index - 1], distinct[upper_index])
        n_thresholds[feature] = feature_thresholds.size
        thresholds[feature, : feature_thresholds.size] = feature_thresholds
        bins[feature] = np.searchsorted(feature_thresholds, column, side="left")
    return PresortedFeatures(
        X=X, n_bins=n_bins, thresholds=thresholds, n_thresholds=n_thresholds, bins=bins
    )


def _check_labels_and_weights(presorted, y, weights) -> tuple[np.ndarray, np.ndarray, bool]:
    """Return y as floats in {−1, +1}, the weights as (K, m), and whether they were 1-D."""
    m = presorted.n_samples
    y = as_finite_array(y, "y", ndim=1)
    if y.shape != (m,):
        raise ValueError(f"y must have shape ({m},) like the presorted X, got {y.shape}")
    if not np.all(np.abs(y) == 1):
        raise ValueError(f"y must contain only -1 and +1, got values {np.unique(y)[:5]}")
    weights = as_finite_array(weights, "weights")
    single = weights.ndim == 1
    if single:
        weights = weights[None, :]
    if weights.ndim != 2 or weights.shape[1] != m:
        raise ValueError(f"weights must have shape ({m},) or (K, {m}), got {weights.shape}")
    if np.any(weights < 0):
        raise ValueError(f"weights must be >= 0, got minimum {weights.min()!r}")
    return y, weights, single


def _search_exact(presorted, signed):
    """Per (row, feature): least error, its split position and polarity (exact mode)."""
    n_rows, m = signed.shape
    d = presorted.n_features
    total = np.abs(signed).sum(axis=1)
    negative_total = 0.5 * (total - signed.sum(axis=1))  # Σ w·1{y=−1}
    best_error = np.empty((n_rows, d))
    best_split = np.empty((n_rows, d), dtype=np.intp)
    best_polarity = np.empty((n_rows, d), dtype=np.intp)
    block = max(1, _BLOCK_FLOATS // (n_rows * m))
    for start in range(0, d, block):
        features = slice(start, min(start + block, d))
        order = presorted.order[features, :-1]
        # prefix[row, f, s] = Σ_{first s sorted points} w·y, for splits s = 0..m−1.
        prefix = np.zeros((n_rows, order.shape[0], m))
        for row in range(n_rows):
            np.cumsum(signed[row][order], axis=1, out=prefix[row, :, 1:])
        # Polarity +1 misclassifies positives left of the split and negatives right of it:
        # Σ_left w·1{y=+1} + Σ_right w·1{y=−1} = prefix + Σ w·1{y=−1}; polarity −1 errs on
        # the complement, total − that. So the best +1 split minimises prefix, the best −1
        # split maximises it, over the splits between distinct values.
        invalid = ~presorted.split_valid[features]
        has_ties = bool(invalid.any())
        if has_ties:
            np.copyto(prefix, np.inf, where=invalid)
        split_plus = prefix.argmin(axis=2)
        prefix_min = np.take_along_axis(prefix, split_plus[..., None], 2)[..., 0]
        if has_ties:
            np.copyto(prefix, -np.inf, where=invalid)
        split_minus = prefix.argmax(axis=2)
        prefix_max = np.take_along_axis(prefix, split_minus[..., None], 2)[..., 0]
        error_plus = prefix_min + negative_total[:, None]
        error_minus = total[:, None] - (prefix_max + negative_total[:, None])
        use_minus = error_minus < error_plus
        best_error[:, features] = np.where(use_minus, error_minus, error_plus)
        best_split[:, features] = np.where(use_minus, split_minus, split_plus)
        best_polarity[:, features] = np.where(use_minus, -1, 1)
    return best_error, best_split, best_polarity


def _threshold_exact(presorted, feature: int, split: int) -> float:
    if split == 0:
        return -np.inf
    values = presorted.sorted_values[feature]
    return float(_midpoints(values[split - 1], values[split]))


def _search_binned(presorted, signed):
    """Per (row, feature): least error, its split (0 = constant, j = threshold j−1), polarity."""
    n_rows, m = signed.shape
    d, n_bins = presorted.n_features, presorted.n_bins
    negative_total = 0.5 * (np.abs(signed).sum(axis=1) - signed.sum(axis=1))
    total = np.abs(signed).sum(axis=1)
    flat_bins = (presorted.bins + (np.arange(d) * n_bins)[:, None]).ravel()
    histogram = np.empty((n_rows, d, n_bins))
    for row in range(n_rows):
        histogram[row] = np.bincount(
            flat_bins, weights=np.tile(signed[row], d), minlength=d * n_bins
        ).reshape(d, n_bins)
    # prefix[:, :, j] = signed weight of the points left of split j (split j ≥ 1 uses
    # threshold j − 1, which has exactly bins 0..j−1 below it).
    prefix = np.zeros((n_rows, d, n_bins))
    np.cumsum(histogram[:, :, :-1], axis=2, out=prefix[:, :, 1:])
    error_plus = prefix + negative_total[:, None, None]
    valid = np.arange(n_bins)[None, :] <= presorted.n_thresholds[:, None]
    plus_masked = np.where(valid, error_plus, np.inf)
    minus_masked = np.where(valid, total[:, None, None] - error_plus, np.inf)
    split_plus = plus_masked.argmin(axis=2)
    split_minus = minus_masked.argmin(axis=2)
    error_plus_best = np.take_along_axis(plus_masked, split_plus[..., None], 2)[..., 0]
    error_minus_best = np.take_along_axis(minus_masked, split_minus[..., None], 2)[..., 0]
    use_minus = error_minus_best < error_plus_best
    return (
        np.where(use_minus, error_minus_best, error_plus_best),
        np.where(use_minus, split_minus, split_plus),
        np.where(use_minus, -1, 1),
    )


def _threshold_binned(presorted, feature: int, split: int) -> float:
    return -np.inf if split == 0 else float(presorted.thresholds[feature, split - 1])


def best_stump(presorted: PresortedFeatures, y, weights):
    """The stump of least weighted error Σ_i w_i 1{h(x_i) ≠ y_i}, for one or K weight vectors.

    Parameters
    ----------
    presorted : PresortedFeatures
        The training inputs prepared by :func:`presort`.
    y : array-like of shape (m,)
        Labels in {−1, +1}.
    weights : array-like of shape (m,) or (K, m)
        Non-negative weights, not necessarily normalised; one search per row.

    Returns
    -------
    StumpResult or list of StumpResult
        ``(stump, error, feature_errors)`` for 1-D weights, a list of K of them for 2-D.
        Ties are broken towards the lowest feature, then the lowest threshold, then polarity
        +1. ``error`` is recomputed directly from the weights for the chosen stump;
        ``feature_errors`` (d,) come from the cumulative sums (equal up to rounding).

    Examples
    --------
    >>> X = np.array([[0.0, 5.0], [1.0, 4.0], [2.0, 3.0]])
    >>> results = best_stump(presort(X), [1, -1, -1], [[1, 1, 1], [1, 0, 0]])
    >>> [(r.stump.threshold, r.stump.polarity, r.error) for r in results]
    [(0.5, -1, 0.0), (-inf, 1, 0.0)]
    """
    y, weights, single = _check_labels_and_weights(presorted, y, weights)
    signed = weights * y
    if presorted.n_bins is None:
        feature_errors, splits, polarities = _search_exact(presorted, signed)
        threshold_of = _threshold_exact
    else:
        feature_errors, splits, polarities = _search_binned(presorted, signed)
        threshold_of = _threshold_binned
    feature_errors = np.clip(feature_errors, 0.0, weights.sum(axis=1)[:, None])
    results = []
    for row in range(weights.shape[0]):
        feature = int(np.argmin(feature_errors[row]))
        stump = Stump(
            feature=feature,
            threshold=threshold_of(presorted, feature, int(splits[row, feature])),
            polarity=int(polarities[row, feature]),
        )
        wrong = stump.predict(presorted.X) != y
        error = float(weights[row] @ wrong)
        results.append(StumpResult(stump, error, feature_errors[row]))
    return results[0] if single else results
