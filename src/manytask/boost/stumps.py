"""Decision stumps and the exact minimum-weighted-error stump search used by the boosters.

A stump is h(x) = +polarity if x[feature] > threshold, else −polarity, with polarity ∈ {−1, +1},
so h(x) ∈ {−1, +1}. A threshold of −inf gives the constant stump h ≡ polarity.

:func:`presort` prepares the features once (an argsort per feature, O(d·m log m), or quantile
bin edges with ``n_bins``); :func:`best_stump` then finds, for one or several weight vectors,
the stump of least weighted error Σ_i w_i 1{h(x_i) ≠ y_i} with cumulative sums of the signed
weights w_i y_i along each sorted feature (both polarities at once): O(d·m) per weight vector,
or O(d·|S|) once a weight vector's support S (its non-zero weights) has been seen before and
is at most half the points — MULTIBOOST's domain-restricted weights. The candidate thresholds
are the midpoints between consecutive distinct values of each feature plus −inf (exact mode),
or the bin edges (binned mode, exact over those thresholds; the same as exact mode on a
feature with at most ``n_bins`` distinct values).

With numba installed (extra ``fast``) the per-feature loops run as compiled kernels
(:mod:`.kernels`, parallel over features) that add in the same order as the NumPy code, so
both give the same stumps and errors bit for bit; ``MANYTASK_KERNELS=numpy`` forces NumPy.

In MULTIBOOST (§3) the weights are w_i = D_t(k, i) Q(k|x_i) ≥ 0; the paper's Q-weighted error
is then ε = ½(1 − Σ_i w_i) + Σ_i w_i 1{h(x_i) ≠ y_i}, computed by the caller. The boosters
live elsewhere, the candidate thresholds in :mod:`.thresholds`, the (cached, support-restricted)
views a search reads in :mod:`.search_views`.

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

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .._validation import as_finite_array, as_points, check_int
from . import kernels
from .search_views import (
    _bin_type,
    _BinnedView,
    _ExactView,
    _view_for,
    histogram_cells,
    support_view,
)
from .steps import first_best
from .thresholds import candidate_thresholds, midpoints, split_threshold

__all__ = [
    "PresortedFeatures",
    "Stump",
    "StumpResult",
    "above_threshold",
    "best_stump",
    "candidate_thresholds",
    "histogram_cells",
    "predict_presorted",
    "presort",
    "presort_at",
    "support_view",
]

# Bound on the features × points block of cumulative sums held at once for one weight vector
# (in floats); small enough that the gathered weights and their prefix sums stay in cache.
_BLOCK_FLOATS = 1 << 17


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

    def predict(self, X, check_input: bool = True) -> np.ndarray:
        """Return h(x) ∈ {−1, +1} for every row of ``X``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs, with d > ``feature``.
        check_input : bool
            False skips converting and checking ``X`` (finite, 2-D, float), an O(N·d) pass,
            for callers that validated it once already, like scikit-learn's trees.

        Returns
        -------
        numpy.ndarray
            (N,) floats in {−1, +1}.

        Examples
        --------
        >>> Stump(feature=0, threshold=-np.inf, polarity=1).predict([[0.0], [1.0]])
        array([1., 1.])
        """
        if check_input:
            X = as_points(X)
        if X.shape[1] <= self.feature:
            raise ValueError(f"X has {X.shape[1]} features, the stump uses feature {self.feature}")
        return _predict_column(X[:, self.feature], self.threshold, self.polarity)


def _predict_column(column: np.ndarray, threshold: float, polarity: int) -> np.ndarray:
    return np.where(column > threshold, float(polarity), -float(polarity))


class StumpResult(NamedTuple):
    """Outcome of :func:`best_stump` for one weight vector.

    Parameters
    ----------
    stump : Stump
        The stump of least weighted error.
    error : float
        Its error Σ_i w_i 1{h(x_i) ≠ y_i} (unnormalised, like the weights).
    feature_errors : numpy.ndarray
        (d,) ``feature_errors[f]``, the least such error among the stumps on feature f.

    Examples
    --------
    >>> result = best_stump(presort([[0.0], [1.0]]), [1, -1], [1.0, 3.0])
    >>> result.stump.polarity, result.error, result.feature_errors.tolist()
    (-1, 0.0, [0.0])
    """

    stump: Stump
    error: float
    feature_errors: np.ndarray


@dataclass(frozen=True, eq=False)
class PresortedFeatures:
    """Features prepared once for repeated stump searches; build it with :func:`presort`.

    The searches keep per-support restrictions of these arrays in private caches.

    Parameters
    ----------
    X : numpy.ndarray
        (m, d) the training inputs.
    n_bins : int or None
        None for exact mode, else the number of histogram bins per feature.
    order : numpy.ndarray, optional
        Exact mode: (d, m), ``order[f]`` sorts feature f.
    sorted_values : numpy.ndarray, optional
        Exact mode: (d, m), ``sorted_values[f]`` are feature f's sorted values.
    split_valid : numpy.ndarray, optional
        Exact mode: (d, m) bools, ``split_valid[f, s]`` says whether a threshold may separate
        the first s sorted points from the rest (s = 0, the constant stump, up to m − 1).
    thresholds : numpy.ndarray, optional
        Binned mode: (d, n_bins − 1), ``thresholds[f, :n_thresholds[f]]`` are the candidate
        thresholds of feature f, padded with +inf.
    n_thresholds : numpy.ndarray, optional
        Binned mode: (d,) the number of candidate thresholds of each feature.
    bins : numpy.ndarray, optional
        Binned mode: (d, m), ``bins[f, i]`` the number of thresholds below x_i[f] (in the
        narrowest unsigned type that holds them: one byte for up to 256 bins).
    flat_bins : numpy.ndarray, optional
        Binned mode: (d, m), ``f · n_bins + bins[f, i]``, the histogram cell of (f, x_i).

    Examples
    --------
    >>> presorted = presort([[2.0, 0.0], [1.0, 0.0], [3.0, 1.0]])
    >>> presorted.order.tolist(), presorted.n_bins
    ([[1, 0, 2], [0, 1, 2]], None)
    """

    X: np.ndarray
    n_bins: int | None
    order: np.ndarray | None = None
    sorted_values: np.ndarray | None = None
    split_valid: np.ndarray | None = None
    thresholds: np.ndarray | None = None
    n_thresholds: np.ndarray | None = None
    bins: np.ndarray | None = None
    flat_bins: np.ndarray | None = None
    _views: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _support_views: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def n_samples(self) -> int:
        """m, the number of training points.

        Examples
        --------
        >>> presort([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]).n_samples
        3
        """
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """d, the number of features.

        Examples
        --------
        >>> presort([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]).n_features
        2
        """
        return self.X.shape[1]


def presort(X, n_bins: int | None = None) -> PresortedFeatures:
    """Prepare the features of ``X`` (m, d) once for :func:`best_stump`.

    Parameters
    ----------
    X : array-like of shape (m, d)
        Training inputs; finite.
    n_bins : int or None
        None (default): exact search, an argsort per feature, O(d·m log m) time and about
        17·d·m bytes (plus the searches' cached views, see :func:`best_stump`).
        An int ≥ 2: histogram mode with at most ``n_bins`` candidate splits per feature: the
        constant stump and the midpoints between consecutive distinct values if the feature
        has at most ``n_bins`` of them (then binned = exact), else ``n_bins − 1`` thresholds
        at the midpoints after the feature's quantiles j/n_bins. Presorting costs
        O(d·m log m) once; each search then costs O(d·m) for the histogram plus O(d·n_bins).

    Returns
    -------
    PresortedFeatures
        The prepared features, in exact or binned mode.

    Examples
    --------
    >>> presort([[3.0], [1.0], [1.0]]).split_valid.tolist()
    [[True, False, True]]
    >>> presort([[3.0], [1.0], [1.0], [2.0]], n_bins=4).thresholds.tolist()
    [[1.5, 2.5, inf]]
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
    n_bins = check_int(n_bins, "n_bins", 2, allow_none=True)
    levels = np.arange(1, n_bins) / n_bins
    sorted_columns = np.sort(X.T, axis=1)  # (d, m): one sort per feature, all at once
    quantile_index = np.floor((m - 1) * levels).astype(np.intp)  # np.quantile's "lower"
    per_feature = []
    for values in sorted_columns:
        distinct = values[np.concatenate(([True], values[1:] > values[:-1]))]
        if distinct.size <= n_bins:  # every distinct value gets its own bin
            upper_index = np.arange(1, distinct.size)
        else:
            quantiles = values[quantile_index]
            upper_index = np.unique(np.searchsorted(distinct, quantiles, side="right"))
            upper_index = upper_index[upper_index < distinct.size]
        per_feature.append(midpoints(distinct[upper_index - 1], distinct[upper_index]))
    return _binned(X, per_feature, n_bins)


def presort_at(X, thresholds) -> PresortedFeatures:
    """:func:`presort`'s binned mode at given thresholds (a federated client's candidate table).

    Parameters
    ----------
    X : array-like of shape (m, d)
        Inputs; finite.
    thresholds : sequence of array-like
        One array of thresholds per feature; non-finite ones (the constant's −∞) are dropped.

    Returns
    -------
    PresortedFeatures
        Binned, ``n_bins`` = 1 + the most thresholds of a feature (at least 2).

    Examples
    --------
    >>> presorted = presort_at([[0.0], [1.0], [2.0]], [[-np.inf, 1.5, 0.5]])
    >>> presorted.thresholds.tolist(), presorted.bins.tolist()
    ([[0.5, 1.5]], [[0, 1, 2]])
    """
    X = as_points(X)
    if len(thresholds) != X.shape[1]:
        raise ValueError(
            f"thresholds must hold one array per feature ({X.shape[1]}), got {len(thresholds)}"
        )
    per_feature = [np.unique(t[np.isfinite(t)]) for t in map(np.asarray, thresholds)]
    return _binned(X, per_feature, max(2, 1 + max(t.size for t in per_feature)))


def _binned(X, per_feature, n_bins) -> PresortedFeatures:
    """The binned :class:`PresortedFeatures` of ``X`` at sorted thresholds, ≤ n_bins − 1 each."""
    d = X.shape[1]
    thresholds = np.full((d, n_bins - 1), np.inf)
    n_thresholds = np.array([t.size for t in per_feature], dtype=np.intp)
    bins = np.empty((d, X.shape[0]), dtype=_bin_type(n_bins))
    for feature, feature_thresholds in enumerate(per_feature):
        thresholds[feature, : feature_thresholds.size] = feature_thresholds
        bins[feature] = np.searchsorted(feature_thresholds, X[:, feature], side="left")
    flat_bins = bins + (np.arange(d) * n_bins)[:, None]
    return PresortedFeatures(
        X=X,
        n_bins=n_bins,
        thresholds=thresholds,
        n_thresholds=n_thresholds,
        bins=bins,
        flat_bins=flat_bins,
    )


def predict_presorted(presorted: PresortedFeatures, stump: Stump) -> np.ndarray:
    """``stump.predict(presorted.X)`` from the presorted arrays.

    It reads no column of X where a presorted array answers (:func:`above_threshold`); same
    values as :meth:`Stump.predict`.

    Parameters
    ----------
    presorted : PresortedFeatures
        The training inputs, from :func:`presort`.
    stump : Stump
        The stump to evaluate.

    Returns
    -------
    numpy.ndarray
        (m,) h(x_i) ∈ {−1, +1} for every training point.

    Examples
    --------
    >>> X = np.array([[3.0], [1.0], [2.0]])
    >>> predict_presorted(presort(X), Stump(0, 1.5, -1))
    array([-1.,  1., -1.])
    """
    polarity = float(stump.polarity)
    predictions = np.multiply(above_threshold(presorted, stump), 2.0 * polarity)  # 0 or 2π
    predictions -= polarity  # −π or π, exactly (faster than np.where)
    return predictions


def above_threshold(presorted: PresortedFeatures, stump: Stump) -> np.ndarray:
    """x_i[feature] > threshold for every training point (bool, (m,)).

    A column of a C-ordered X is strided (one cache line per value); the sorted order, or
    the bin numbers, of the feature are contiguous. Exact mode: the points above the
    threshold are the sorted ones after the last value ≤ it; binned mode with a bin edge as
    threshold: the points whose bin number is past it.

    Parameters
    ----------
    presorted : PresortedFeatures
        The training inputs, from :func:`presort`.
    stump : Stump
        The stump whose feature and threshold are compared.

    Returns
    -------
    numpy.ndarray
        (m,) bools.

    Examples
    --------
    >>> above_threshold(presort([[3.0], [1.0], [2.0]]), Stump(0, 1.5, -1))
    array([ True, False,  True])
    """
    feature, threshold = stump.feature, stump.threshold
    if presorted.n_bins is None:
        below = int(np.searchsorted(presorted.sorted_values[feature], threshold, side="right"))
        above = np.zeros(presorted.n_samples, dtype=bool)
        above[presorted.order[feature, below:]] = True
        return above
    if threshold == -np.inf:
        return np.ones(presorted.n_samples, dtype=bool)
    edges = presorted.thresholds[feature, : presorted.n_thresholds[feature]]
    edge = int(np.searchsorted(edges, threshold, side="left"))
    if edge < edges.size and edges[edge] == threshold:
        # bins[f, i] counts the edges below x_i: x_i > edges[edge] iff bins[f, i] > edge.
        return presorted.bins[feature] > edge
    return presorted.X[:, feature] > threshold


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


def _choose_polarity(error_plus, split_plus, error_minus, split_minus):
    """Per feature: the better polarity; on a tie the lower split, then polarity +1."""
    use_minus = (error_minus < error_plus) | (
        (error_minus == error_plus) & (split_minus < split_plus)
    )
    return (
        np.where(use_minus, error_minus, error_plus),
        np.where(use_minus, split_minus, split_plus),
        np.where(use_minus, -1, 1),
    )


def _search_exact(view: _ExactView, signed_row, total: float, negative_total: float):
    """Per feature: least error, its split r in the view and its polarity (exact mode).

    Per block of feature pairs: gather the signed weights in sorted order, one cumulative
    sum, two reductions: O(d·n). The cumulative sum is bound by the latency of one addition
    after the other; a complex sum adds two independent real sums per step (feature 2j in
    the real part, 2j + 1 in the imaginary part, each bit-for-bit its own real cumsum), which
    halves its cost.
    """
    n_pairs, n, _ = view.paired_order.shape
    d = 2 * n_pairs
    best = (np.empty(d), np.empty(d, dtype=np.intp), np.empty(d, dtype=np.intp))
    block = max(1, min(n_pairs, _BLOCK_FLOATS // (2 * (n + 1))))
    gathered = np.empty((block, n, 2))
    prefix_buffer = np.zeros((block, n + 1), dtype=complex)  # column 0 (constant stump) = 0
    pair_index, component = np.arange(block)[:, None], np.arange(2)[None, :]
    for start in range(0, n_pairs, block):
        stop = min(start + block, n_pairs)
        pairs = stop - start
        np.take(signed_row, view.paired_order[start:stop], out=gathered[:pairs], mode="clip")
        # prefix[j, r, c] = Σ_{first r sorted points of feature 2j + c} w·y.
        np.cumsum(gathered[:pairs].view(complex)[..., 0], axis=1, out=prefix_buffer[:pairs, 1:])
        prefix = prefix_buffer[:pairs].view(float).reshape(pairs, n + 1, 2)
        # Polarity +1 misclassifies positives left of the split and negatives right of it:
        # Σ_left w·1{y=+1} + Σ_right w·1{y=−1} = prefix + Σ w·1{y=−1}; polarity −1 errs on
        # the complement, total − that. So the best +1 split minimises prefix, the best −1
        # split maximises it, over the splits between distinct values.
        has_ties = bool(view.pair_has_ties[start:stop].any())
        if has_ties:
            np.copyto(prefix, np.inf, where=view.paired_invalid[start:stop])
        split_plus = prefix.argmin(axis=1)  # (pairs, 2)
        prefix_min = prefix[pair_index[:pairs], split_plus, component]
        if has_ties:
            np.copyto(prefix, -np.inf, where=view.paired_invalid[start:stop])
        split_minus = prefix.argmax(axis=1)
        prefix_max = prefix[pair_index[:pairs], split_minus, component]
        chosen = _choose_polarity(
            prefix_min + negative_total,
            split_plus,
            total - (prefix_max + negative_total),
            split_minus,
        )
        for array, values in zip(best, chosen):
            array[2 * start : 2 * stop] = values.ravel()
    return tuple(array[: view.n_features] for array in best)


def split_in_full_order(presorted, view: _ExactView, feature: int, split: int) -> int:
    """Position s in feature's full sorted order of the view's split r (the lowest such s)."""
    if view.points is None or split == 0:
        return split
    last_below = view.order(feature)[split - 1]
    position = int(np.flatnonzero(presorted.order[feature] == last_below)[0])
    # The first valid split above it: every point in between ties with it or has weight 0.
    return position + 1 + int(np.argmax(presorted.split_valid[feature, position + 1 :]))


def _search_binned(presorted, view: _BinnedView, signed_row, total, negative_total, valid):
    """Per feature: least error, its split (0 = constant, j = threshold j−1), polarity.

    One weighted ``np.bincount`` over the d·n (feature, point) cells, then O(d·n_bins).
    """
    d, n_bins = presorted.n_features, presorted.n_bins
    signed_points = signed_row if view.points is None else signed_row[view.points]
    cell_weights = np.empty(view.flat_bins.shape)
    cell_weights[:] = signed_points  # row f: the weights of the points, in feature f's cells
    histogram = np.bincount(
        view.flat_bins.ravel(), weights=cell_weights.ravel(), minlength=d * n_bins
    ).reshape(d, n_bins)
    # prefix[:, j] = signed weight of the points left of split j (split j ≥ 1 uses
    # threshold j − 1, which has exactly bins 0..j−1 below it).
    prefix = np.zeros((d, n_bins))
    np.cumsum(histogram[:, :-1], axis=1, out=prefix[:, 1:])
    error_plus = prefix + negative_total
    plus_masked = np.where(valid, error_plus, np.inf)
    minus_masked = np.where(valid, total - error_plus, np.inf)
    split_plus = plus_masked.argmin(axis=1)
    split_minus = minus_masked.argmin(axis=1)
    rows = np.arange(d)
    return _choose_polarity(
        plus_masked[rows, split_plus], split_plus, minus_masked[rows, split_minus], split_minus
    )


def _search_compiled(presorted, view, signed_row, total, negative_total):
    """:func:`_search_exact` / :func:`_search_binned` by the numba kernels (same sums)."""
    values = signed_row if view.points is None else signed_row[view.points]
    if presorted.n_bins is None:
        return kernels.exact_search(values, view.local_order, view.invalid, total, negative_total)
    return kernels.binned_search(
        values, view.bins, presorted.n_thresholds, presorted.n_bins, total, negative_total
    )


def best_stump(presorted: PresortedFeatures, y, weights, check_input: bool = True):
    """The stump of least weighted error Σ_i w_i 1{h(x_i) ≠ y_i}, for one or K weight vectors.

    Parameters
    ----------
    presorted : PresortedFeatures
        The training inputs prepared by :func:`presort`.
    y : array-like of shape (m,)
        Labels in {−1, +1}.
    weights : array-like of shape (m,) or (K, m)
        Non-negative weights, not necessarily normalised; one search per row.
    check_input : bool
        False skips checking ``y`` and ``weights`` (the boosting rounds' own arrays: y a
        float array of ±1, weights a finite non-negative (K, m) float array).

    Returns
    -------
    StumpResult or list of StumpResult
        ``(stump, error, feature_errors)`` for 1-D weights, a list of K of them for 2-D.
        Ties are broken towards the lowest feature, then the lowest threshold, then polarity
        +1. ``error`` is recomputed directly from the weights for the chosen stump;
        ``feature_errors`` (d,) come from the cumulative sums (equal up to rounding).

    Notes
    -----
    Cost per weight vector: O(d·m) in both modes. Exact: gather the signed weights in each
    feature's sorted order (``np.take`` into a preallocated, cache-sized block) and take
    cumulative sums, two features at a time as the real and imaginary parts of one complex
    sum (a cumulative sum is bound by the latency of its additions; this runs two chains per
    step, bit for bit the same sums); then an argmin and an argmax per feature. Binned: one
    weighted ``np.bincount`` over precomputed (feature, bin) cell codes, plus O(d·n_bins).
    A weight vector whose non-zero weights cover at most half of the points (MULTIBOOST's
    weights live on one domain) is searched over its support S only, O(d·|S|), after a
    one-off O(d·m) restriction kept in ``presorted`` (about 9·d·|S| bytes each, up to 16
    supports holding 2m points in all; the view of all points, built on first use, takes
    about 9·d·m bytes). Zero weights add nothing to the sums, so the result is the same as
    the full search's. With numba (:mod:`.kernels`) each feature's prefix sums and their
    extremes (exact), or its histogram and prefix sums (binned), are one compiled loop, the
    features spread over numba's threads; the sums are added in the NumPy order, so the
    results are the same bit for bit.

    Examples
    --------
    >>> X = np.array([[0.0, 5.0], [1.0, 4.0], [2.0, 3.0]])
    >>> results = best_stump(presort(X), [1, -1, -1], [[1, 1, 1], [1, 0, 0]])
    >>> [(r.stump.threshold, r.stump.polarity, r.error) for r in results]
    [(0.5, -1, 0.0), (-inf, 1, 0.0)]
    """
    if check_input:
        y, weights, single = _check_labels_and_weights(presorted, y, weights)
    else:
        single = weights.ndim == 1
        weights = weights[None, :] if single else weights
    signed = weights * y
    total = weights.sum(axis=1)  # = Σ |w y| (y = ±1), the total weight
    negative_total = 0.5 * (total - signed.sum(axis=1))  # Σ w·1{y=−1}
    n_rows, d = weights.shape[0], presorted.n_features
    feature_errors = np.empty((n_rows, d))
    splits = np.empty((n_rows, d), dtype=np.intp)
    polarities = np.empty((n_rows, d), dtype=np.intp)
    compiled = kernels.backend() == "numba"
    views = [_view_for(presorted, weights[row], compiled) for row in range(n_rows)]
    if presorted.n_bins is not None and not compiled:
        valid = np.arange(presorted.n_bins)[None, :] <= presorted.n_thresholds[:, None]
    for row, view in enumerate(views):
        if compiled:
            searched = _search_compiled(presorted, view, signed[row], total[row],
                                        negative_total[row])  # fmt: skip
        elif presorted.n_bins is None:
            searched = _search_exact(view, signed[row], total[row], negative_total[row])
        else:
            searched = _search_binned(
                presorted, view, signed[row], total[row], negative_total[row], valid
            )
        feature_errors[row], splits[row], polarities[row] = searched
    feature_errors = np.clip(feature_errors, 0.0, total[:, None])
    results = []
    for row, view in enumerate(views):
        # Stumps of equal error (to rounding) on several features: the first feature.
        feature = first_best(feature_errors[row], np.abs(weights[row]).sum())
        split = int(splits[row, feature])
        if presorted.n_bins is None:
            split = split_in_full_order(presorted, view, feature, split)
        threshold = split_threshold(presorted, feature, split)
        stump = Stump(feature=feature, threshold=threshold, polarity=int(polarities[row, feature]))
        # h(x_i) ≠ y_i: x_i is above the threshold where y_i is not the polarity, or below it
        # where y_i is.
        wrong = above_threshold(presorted, stump) != (y == stump.polarity)
        # A NumPy sum, not a dot product: a multi-threaded BLAS dot of m > 10⁴ terms can cost
        # more than the whole search on a busy machine (its threads spin for a free core).
        # np.compress = weights[row][wrong], at under half the cost.
        error = float(np.compress(wrong, weights[row]).sum())
        results.append(StumpResult(stump, error, feature_errors[row]))
    return results[0] if single else results
