"""The steepest coordinate of F = max_l F_l at a tie, MULTIBOOST's fallback when Figure 1's
directions all fail to lower F (binary codes over the simplex):

    argmax_{q, h} min_{l ∈ K_t} −F_l'(α; e_{q,h}),
    −F_l'(α; e_{q,h}) = Σ_{i∈S_l} a_i y_i Q(q|x_i) h(x_i),

with a_i = c_i e^{−y_i f(x_i)}, over the stumps the model searches (exact or binned). For a
stump of polarity π the sum is π(T_{q,l} − 2P_{q,l}(s)), from one cumulative sum per (q, l).
The compiled twins are :func:`~manytask.boost.kernels.steepest_splits` and
:func:`~manytask.boost.kernels.binned_steepest_splits`.

>>> import numpy as np
>>> from manytask.boost.stumps import presort
>>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
>>> y = np.array([-1.0, -1.0, 1.0, 1.0])
>>> Q = np.full((4, 2), 0.5)
>>> domain_index, tied = np.array([0, 1, 0, 1]), np.array([0, 1])
>>> steepest_coordinate(presort(X), y, Q, np.ones(4), domain_index, tied)
(0, Stump(feature=0, threshold=1.5, polarity=1))
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .steps import first_best
from .stumps import Stump, histogram_cells, split_in_full_order, support_view
from .thresholds import split_threshold

__all__ = ["steepest_coordinate"]


def steepest_coordinate(presorted, y, Q, scaled_losses, domain_index, active):
    """argmax_{q, h} min_{l ∈ active} Σ_{i∈S_l} a_i y_i Q(q|x_i) h(x_i) over the searched stumps.

    Parameters
    ----------
    presorted : PresortedFeatures
        The training inputs (exact or binned mode; the stumps searched are that mode's).
    y : ndarray of shape (m,)
        Labels in {−1, +1}.
    Q : ndarray of shape (m, p)
        Q(q|x_i), the domain classifier on the training points.
    scaled_losses : ndarray of shape (m,)
        a_i = c_i e^{−y_i f(x_i)}.
    domain_index : ndarray of shape (m,)
        The domain of each point, in 0..p−1.
    active : ndarray of int
        The tied domains K_t.

    Returns
    -------
    q : int or None
        The domain of the coordinate's Q(q|·).
    stump : Stump or None
        Its stump. (None, None) if no coordinate lowers every tied F_l (best value ≤ 0). Among
        equal values the first in the order q, feature, polarity +1 then −1, split wins.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> Q = np.full((4, 2), 0.5)
    >>> steepest_coordinate(presort(X), y, Q, np.ones(4), np.array([0, 1, 0, 1]), np.array([0, 1]))
    (0, Stump(feature=0, threshold=1.5, polarity=1))
    """
    n_domains, n_tied = Q.shape[1], active.size
    slot_of_domain = np.full(n_domains, -1, dtype=np.int8 if n_tied < 128 else np.int32)
    slot_of_domain[active] = np.arange(n_tied)
    slots = slot_of_domain[domain_index]  # the point's position among the tied domains, or −1
    points = np.flatnonzero(slots >= 0)
    signed_losses = scaled_losses[points] * y[points]  # a_i y_i
    # signed[q, j, i] = a_i y_i Q(q|x_i) on slot j's points, zero elsewhere; only its sums
    # total[q, j] are needed with numba, but they are taken the same way (the same bits).
    on_active = np.zeros((n_tied, presorted.n_samples))
    on_active[slots[points], points] = signed_losses
    signed = on_active[None, :, :] * Q.T[:, None, :]  # (p, |K_t|, m)
    total = signed.sum(axis=2)  # (p, |K_t|)
    view = None
    if kernels.backend() == "numba":
        best_gain, best_split, view = _compiled_splits(
            presorted, Q, slots, points, signed_losses, total
        )
    elif presorted.n_bins is None:
        best_gain, best_split = _exact_splits(presorted, signed, total)
    else:
        best_gain, best_split = _binned_splits(presorted, signed, domain_index, active, total)
    best_gain = np.where(np.isnan(best_gain), -np.inf, best_gain)
    # the first maximum (to rounding) in C order (q, feature, polarity)
    flat = first_best(best_gain.ravel(), np.abs(signed_losses).sum(), maximise=True)
    if not best_gain.flat[flat] > 0.0:
        return None, None
    q, feature, side = np.unravel_index(flat, best_gain.shape)
    split = int(best_split[q, feature, side])
    polarity = 1 if side == 0 else -1
    if presorted.n_bins is None and view is not None:
        # A split r of the restricted view maps to the lowest full split with the same
        # points below, where the full search finds its first maximum.
        split = split_in_full_order(presorted, view, int(feature), split)
    threshold = split_threshold(presorted, int(feature), split)
    return int(q), Stump(int(feature), threshold, polarity)


def _compiled_splits(presorted, Q, slots, points, signed_losses, total):
    """:func:`_exact_splits` / :func:`_binned_splits` by the numba kernels over the tied
    domains' points (a cached view, returned too); the same gains."""
    view = support_view(presorted, slots)
    contributions = np.take(Q.T, points, axis=1)  # (p, n): signed without the zeros
    contributions *= signed_losses
    if presorted.n_bins is None:
        best_gain, best_split = kernels.steepest_splits(
            view.local_order, view.invalid, slots[points], contributions, total
        )
    else:
        best_gain, best_split = kernels.binned_steepest_splits(
            view.cells, presorted.n_thresholds, presorted.n_bins, contributions, total
        )
    return best_gain, best_split, view


def _exact_splits(presorted, signed, total):
    """Per (q, feature, π): the best split s and its gain min_l π(total − 2 prefix(s))."""
    order, split_valid = presorted.order, presorted.split_valid
    n_domains, n_active, m = signed.shape
    d = order.shape[0]
    # Buffers reused for every feature: fresh arrays of this size cost page faults.
    gathered = np.empty((n_domains, n_active, m - 1))
    prefix = np.zeros((n_domains, n_active, m))
    twice, difference = np.empty_like(prefix), np.empty_like(prefix)
    gains = np.empty((2, n_domains, m))
    # Per feature, the best split of each (q, polarity π); Σ s h = π(total − 2·prefix).
    best_gain = np.empty((n_domains, d, 2))
    best_split = np.empty((n_domains, d, 2), dtype=np.intp)
    rows = np.arange(n_domains)
    for feature in range(d):
        np.take(signed, order[feature, :-1], axis=2, out=gathered)
        np.cumsum(gathered, axis=2, out=prefix[:, :, 1:])
        np.multiply(2.0, prefix, out=twice)
        np.subtract(total[:, :, None], twice, out=difference)
        np.min(difference, axis=1, out=gains[0])  # π = +1
        np.subtract(twice, total[:, :, None], out=difference)
        np.min(difference, axis=1, out=gains[1])  # π = −1
        gains[:, :, ~split_valid[feature]] = -np.inf
        for side in (0, 1):
            splits = np.argmax(gains[side], axis=1)
            best_split[:, feature, side] = splits
            best_gain[:, feature, side] = gains[side, rows, splits]
    return best_gain, best_split


def _binned_splits(presorted, signed, domain_index, active, total):
    """:func:`_exact_splits` over the bin edges: split j puts bins 0..j−1 below.

    Per (q, tied domain l) a weighted ``np.bincount`` over (feature, bin) cells, then prefix
    sums over bins.
    """
    n_domains, n_active, _ = signed.shape
    d, n_bins = presorted.n_features, presorted.n_bins
    flat_bins = histogram_cells(presorted)
    prefix = np.zeros((n_domains, n_active, d, n_bins))
    for row, l in enumerate(active):
        points = np.flatnonzero(domain_index == l)
        cells = flat_bins[:, points].ravel()
        for q in range(n_domains):
            weights = np.broadcast_to(signed[q, row, points], (d, points.size)).ravel()
            histogram = np.bincount(cells, weights=weights, minlength=d * n_bins)
            np.cumsum(histogram.reshape(d, n_bins)[:, :-1], axis=1, out=prefix[q, row, :, 1:])
    twice = 2.0 * prefix
    difference = total[:, :, None, None] - twice
    gains = np.stack([difference.min(axis=1), (-difference).min(axis=1)], axis=-1)
    valid = np.arange(n_bins)[None, :] <= presorted.n_thresholds[:, None]  # (d, n_bins)
    gains[:, ~valid, :] = -np.inf  # (p, d, n_bins, 2)
    best_split = np.argmax(gains, axis=2)  # (p, d, 2): the lowest best split
    best_gain = np.take_along_axis(gains, best_split[:, :, None, :], axis=2)[:, :, 0, :]
    return best_gain, best_split
