"""Views of the presorted features for the stump searches of :mod:`.stumps` and
:mod:`.steepest`: the arrays one search reads, for all points or restricted to a weight
vector's support (cached on the :class:`~.stumps.PresortedFeatures`), for the NumPy code and
for the compiled kernels of :mod:`.kernels`. The searches themselves are in :mod:`.stumps`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["histogram_cells", "support_view"]

# A weight vector whose support holds at most this fraction of the points is searched over its
# support only (a cached restriction of the presorted order, built on first use).
_RESTRICT_FRACTION = 0.5
_MAX_CACHED_SUPPORTS = 16
_MAX_SUPPORT_VIEWS = 4


# ----------------------------------------------------------------------------- search views
#
# A view is what one search reads: the presorted arrays, either for all points or restricted
# to a support S. Zero weights add ±0 to the cumulative sums and histograms, so a restricted
# search yields bit-for-bit the same sums as the full one at the splits it keeps.


class _ExactView(NamedTuple):
    """Splits r = 0..n of n sorted points (r = the number below the split), features in pairs.

    ``points`` is None for the full view (n = m − 1: the split above every point is not a
    candidate) or the sorted support S (n = |S|). Features 2j and 2j + 1 are interleaved:
    ``paired_order[j, :, 0]`` sorts feature 2j and ``paired_order[j, :, 1]`` feature 2j + 1
    (the last feature twice if d is odd), so that one complex cumulative sum runs both.
    ``paired_invalid[j, r, c]`` marks splits between equal values (or, r = |S|, above the
    largest value of the feature); ``pair_has_ties[j]`` says whether pair j has any.
    """

    n_features: int
    points: np.ndarray | None
    paired_order: np.ndarray
    paired_invalid: np.ndarray
    pair_has_ties: np.ndarray

    def order(self, feature: int) -> np.ndarray:
        return self.paired_order[feature // 2, :, feature % 2]


def _pair_features(array: np.ndarray) -> np.ndarray:
    """(d, n) → (⌈d/2⌉, n, 2): rows 2j and 2j + 1 interleaved, the last repeated if d is odd."""
    if array.shape[0] % 2:
        array = np.concatenate([array, array[-1:]])
    pairs = array.reshape(array.shape[0] // 2, 2, array.shape[1])
    return np.ascontiguousarray(pairs.transpose(0, 2, 1))


def _exact_view(points, order: np.ndarray, invalid: np.ndarray) -> _ExactView:
    paired_invalid = _pair_features(invalid)
    pair_has_ties = paired_invalid.any(axis=(1, 2))
    return _ExactView(order.shape[0], points, _pair_features(order), paired_invalid, pair_has_ties)


class _BinnedView(NamedTuple):
    points: np.ndarray | None
    flat_bins: np.ndarray  # (d, n), C-contiguous


def histogram_cells(presorted) -> np.ndarray:
    """The histogram cell f · n_bins + bin of each (feature f, point) of a binned presort.

    Parameters
    ----------
    presorted : PresortedFeatures
        Binned features (:func:`~.stumps.presort` with ``n_bins``).

    Returns
    -------
    numpy.ndarray
        (d, m) cells, feature f's in f · n_bins .. (f + 1) · n_bins − 1.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> histogram_cells(presort([[0.0, 5.0], [1.0, 5.0]], n_bins=2)).shape
    (2, 2)
    """
    if presorted.flat_bins is not None:
        return presorted.flat_bins
    offsets = np.arange(presorted.n_features) * presorted.n_bins  # built without presort()
    return np.ascontiguousarray(presorted.bins + offsets[:, None])


class _CompiledExactView(NamedTuple):
    """The exact view for :func:`~manytask.boost.kernels.exact_search`: ``local_order[f]``
    (d, n) sorts feature f by positions in ``points`` (all m points if ``points`` is None,
    the last sorted point left out as in :class:`_ExactView`), ``invalid`` (d, n + 1) marks
    the forbidden splits."""

    n_features: int
    points: np.ndarray | None
    local_order: np.ndarray
    invalid: np.ndarray

    def order(self, feature: int) -> np.ndarray:
        local = self.local_order[feature]
        return local if self.points is None else self.points[local]


class _CompiledBinnedView(NamedTuple):
    points: np.ndarray | None
    # (d, n): the bin numbers (narrowest unsigned type), or for the tie search (support_view)
    # the cells slot · n_bins + bin instead.
    bins: np.ndarray | None
    cells: np.ndarray | None = None


def _index_type(size: int):
    return np.int32 if size < 2**31 else np.intp


def _bin_type(n_bins: int):
    """The narrowest type for bin numbers 0..n_bins − 1."""
    if n_bins <= 2**8:
        return np.uint8
    return np.uint16 if n_bins <= 2**16 else np.intp


def _compiled_full_view(presorted):
    if presorted.n_bins is not None:
        bins = np.ascontiguousarray(presorted.bins, dtype=_bin_type(presorted.n_bins))
        return _CompiledBinnedView(None, bins)
    order = np.ascontiguousarray(presorted.order[:, :-1], dtype=_index_type(presorted.n_samples))
    return _CompiledExactView(presorted.n_features, None, order, ~presorted.split_valid)


def _compiled_restricted_view(presorted, support: np.ndarray):
    """:func:`_restricted_view` for the compiled kernels (positions within the support)."""
    full = _compiled_full_view(presorted) if presorted.n_bins is not None else None
    points = np.flatnonzero(support)
    d, n = presorted.n_features, points.size
    if full is not None:
        return _CompiledBinnedView(points, np.take(full.bins, points, axis=1))
    in_support = np.take(support, presorted.order)
    position = np.full(presorted.n_samples, -1, dtype=_index_type(presorted.n_samples))
    position[points] = np.arange(n)
    local_order = np.ascontiguousarray(position[presorted.order[in_support]].reshape(d, n))
    values = presorted.sorted_values[in_support].reshape(d, n)
    invalid = np.zeros((d, n + 1), dtype=bool)
    if n > 0:
        invalid[:, 1:n] = values[:, 1:] <= values[:, :-1]
        invalid[:, n] = ~(presorted.sorted_values[:, -1] > values[:, -1])
    return _CompiledExactView(d, points, local_order, invalid)


def _full_view(presorted):
    if presorted.n_bins is not None:
        return _BinnedView(None, histogram_cells(presorted))
    return _exact_view(None, presorted.order[:, :-1], ~presorted.split_valid)


def _restricted_view(presorted, support: np.ndarray):
    """The view of the points where ``support`` is True: O(d·m) time, O(d·|S|) memory."""
    points = np.flatnonzero(support)
    d, n = presorted.n_features, points.size
    if presorted.n_bins is not None:
        return _BinnedView(points, np.ascontiguousarray(histogram_cells(presorted)[:, points]))
    in_support = np.take(support, presorted.order)  # (d, m), True where the sorted point ∈ S
    order = presorted.order[in_support].reshape(d, n)
    values = presorted.sorted_values[in_support].reshape(d, n)
    invalid = np.zeros((d, n + 1), dtype=bool)
    if n > 0:
        invalid[:, 1:n] = values[:, 1:] <= values[:, :-1]
        invalid[:, n] = ~(presorted.sorted_values[:, -1] > values[:, -1])
    return _exact_view(points, order, invalid)


def _view_for(presorted, weights_row: np.ndarray, compiled: bool = False):
    """The cached view for this weight vector's support (full if the support is large), for
    the NumPy search or (``compiled``) the numba kernels."""
    support = weights_row != 0
    if np.count_nonzero(support) > _RESTRICT_FRACTION * support.size:
        key = ("full", compiled)
    else:
        key = (np.packbits(support).tobytes(), compiled)
    views = presorted._views
    if key not in views:
        if compiled:
            full, restricted = _compiled_full_view, _compiled_restricted_view
        else:
            full, restricted = _full_view, _restricted_view
        view = full(presorted) if key[0] == "full" else restricted(presorted, support)
        # Bound the cache: at most _MAX_CACHED_SUPPORTS views whose supports hold at most 2m
        # points in all (p disjoint domains hold m), dropping the oldest first.
        while views and (
            len(views) >= _MAX_CACHED_SUPPORTS
            or _cached_points(views) + _view_points(view) > 2 * support.size
        ):
            views.pop(next(iter(views)))
        views[key] = view
    return views[key]


def support_view(presorted, slots: np.ndarray):
    """The compiled view of the points with ``slots[i] >= 0``, however many they are.

    For searches that know their weights vanish off that support, like the steepest
    coordinate over the tied domains (slot = the point's position among them).

    Binned mode: the view holds, in place of the bin numbers, the histogram cell
    ``slot · n_bins + bin`` of every (feature, point), so that a search over per-slot
    histograms reads one index per point (2 bytes each while slots × bins ≤ 2^16).
    Cached apart from the searches' views, at most ``_MAX_SUPPORT_VIEWS`` of them (p domains
    tie in at most 2^p − 1 ways, few in practice), so that they do not evict those.

    Parameters
    ----------
    presorted : PresortedFeatures
        The presorted (exact or binned) features of the m points.
    slots : numpy.ndarray
        (m,) integers: the point's slot, or a negative value off the support.

    Returns
    -------
    NamedTuple
        The view the compiled searches of :mod:`.kernels` read; its ``points`` are the
        support's indices, in increasing order.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.boost.stumps import presort
    >>> view = support_view(presort([[0.0], [2.0], [1.0]]), np.array([0, -1, 1]))
    >>> view.points.tolist()
    [0, 2]
    """
    key = slots.tobytes()
    views = presorted._support_views
    if key not in views:
        if len(views) >= _MAX_SUPPORT_VIEWS:
            views.pop(next(iter(views)))
        if presorted.n_bins is None:
            views[key] = _compiled_restricted_view(presorted, slots >= 0)
        else:
            points = np.flatnonzero(slots >= 0)
            n_cells = (int(slots.max(initial=0)) + 1) * presorted.n_bins
            cell_type = np.uint16 if n_cells <= 2**16 else _index_type(n_cells)
            # np.take keeps rows contiguous (bins[:, points] would be F-ordered: strided rows)
            cells = np.take(presorted.bins, points, axis=1).astype(cell_type)
            cells += (slots[points].astype(cell_type) * cell_type(presorted.n_bins))[None, :]
            views[key] = _CompiledBinnedView(points, None, cells)
    return views[key]


def _view_points(view) -> int:
    return 0 if view.points is None else view.points.size


def _cached_points(views: dict) -> int:
    return sum(_view_points(view) for view in views.values())
