"""Multi-class MULTIBOOST: AdaBoost.MH-style codes, vector stumps and their exact search.

The paper's MCMULTIBOOST (Appendix L) is not in our copy; this is our derivation. Point i
carries the codes Y_ic = ±1 (y_i = c or not; Schapire & Singer 1999), and the base functions
are h(x, c) = v_c φ(x), a stump φ with votes v ∈ {−1, +1}^K (Kégl & Busa-Fekete 2009):
f_c(x) = Σ_t α_t Q(k_t|x) v_{t,c} φ_t(x) (eq. 3 per class), prediction argmax_c f_c.
F_k = Σ_{i∈S_k} (c_i/K) Σ_c Φ(−Y_ic f_c(x_i)) (eq. 4 over the K virtual points (i, c)), and K·F_k
bounds domain k's training error. Every formula of Figure 1 carries over to the virtual points;
for a fixed φ the best votes are v_c = sign(E_c(φ)), E_c = Σ_i w_ic Y_ic Q(q|x_i) φ(x_i), so the
steepest (φ, v) maximises Σ_c |E_c(φ)| (:func:`best_vector_stump`). With K = 2 every round
reproduces the binary algorithm (f_1 = −f_0 = the binary f).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .steps import TIE_RTOL, first_best
from .stumps import Stump
from .thresholds import split_threshold

__all__ = ["VectorStump", "best_vector_stump", "class_codes", "steepest_common_stump"]


def class_codes(class_index, n_classes: int) -> np.ndarray:
    """Y_ic = +1 if y_i = c else −1  (AdaBoost.MH codes), shape (m, K).

    Parameters
    ----------
    class_index : array_like of shape (m,)
        Each point's class, in 0..K−1.
    n_classes : int
        K.

    Returns
    -------
    ndarray of shape (m, K)
        The ±1 codes.

    Examples
    --------
    >>> class_codes([0, 2], 3).tolist()
    [[1.0, -1.0, -1.0], [-1.0, -1.0, 1.0]]
    """
    class_index = np.asarray(class_index)
    return np.where(class_index[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)


@dataclass(frozen=True)
class VectorStump:
    """h(x, c) = votes[c] · φ(x) with φ a binary :class:`~manytask.boost.stumps.Stump`.

    Parameters
    ----------
    stump : Stump
        φ, with values in {−1, +1}.
    votes : tuple of int
        v ∈ {−1, +1}^K, one vote per class.

    Examples
    --------
    >>> h = VectorStump(Stump(0, 0.5, 1), (1, -1, -1))
    >>> h.predict([[0.0], [1.0]]).tolist()
    [[-1.0, 1.0, 1.0], [1.0, -1.0, -1.0]]
    """

    stump: Stump
    votes: tuple

    @property
    def feature(self) -> int:
        """The feature φ splits on.

        Examples
        --------
        >>> VectorStump(Stump(2, 0.5, 1), (1, -1)).feature
        2
        """
        return self.stump.feature

    @property
    def threshold(self) -> float:
        """φ's threshold.

        Examples
        --------
        >>> VectorStump(Stump(0, 0.5, 1), (1, -1)).threshold
        0.5
        """
        return self.stump.threshold

    def predict(self, X, check_input: bool = True) -> np.ndarray:
        """Return h(x, c) for every row of ``X`` and class c.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.
        check_input : bool
            As in :meth:`Stump.predict <manytask.boost.stumps.Stump.predict>`: False skips
            re-checking ``X``.

        Returns
        -------
        ndarray of shape (N, K)
            votes[c] · φ(x).

        Examples
        --------
        >>> VectorStump(Stump(0, 0.5, -1), (1, -1)).predict([[0.0]]).tolist()
        [[1.0, -1.0]]
        """
        values = self.stump.predict(X, check_input=check_input)
        return values[:, None] * np.asarray(self.votes, dtype=float)[None, :]


def _vector_from_split(presorted, feature, split, signed_totals_at_split):
    """The VectorStump of polarity +1 at ``split`` with votes sign(T_c − 2P_c)."""
    threshold = split_threshold(presorted, feature, split)
    votes = tuple(int(v) for v in np.where(signed_totals_at_split < 0, -1, 1))
    return VectorStump(Stump(feature, threshold, 1), votes)


def _split_prefixes(presorted, feature: int, signed):
    """P(s) = Σ of ``signed`` (m, ...) over the points left of split s, and the valid splits.

    Exact mode: split s puts the first s sorted points left (s = 0: the constant stump);
    binned mode: split j puts bins 0..j−1 left.
    """
    if presorted.n_bins is None:
        order = presorted.order[feature]
        prefix = np.zeros((order.size, *signed.shape[1:]))
        np.cumsum(signed[order[:-1]], axis=0, out=prefix[1:])
        return prefix, presorted.split_valid[feature]
    n_bins = presorted.n_bins
    histogram = np.zeros((n_bins, *signed.shape[1:]))
    np.add.at(histogram, presorted.bins[feature], signed)
    prefix = np.zeros_like(histogram)
    np.cumsum(histogram[:-1], axis=0, out=prefix[1:])
    return prefix, np.arange(n_bins) <= presorted.n_thresholds[feature]


def best_vector_stump(presorted, signed) -> tuple[VectorStump, float]:
    """argmax over stumps φ and votes v of Σ_i Σ_c s_ic v_c φ(x_i) = Σ_c |T_c − 2P_c(θ)|.

    Parameters
    ----------
    presorted : PresortedFeatures
        From :func:`~manytask.boost.stumps.presort` (exact or binned mode).
    signed : array-like (m, K)
        s_ic = w_ic Y_ic Q(q|x_i).

    Returns
    -------
    (VectorStump, rate)
        The steepest vector stump and its rate Σ_c |E_c| (≥ 0). Ties go to the lowest
        feature, then the lowest threshold; polarity is +1 (the votes carry the sign).

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> h, rate = best_vector_stump(presort(X), class_codes([0, 1, 1], 2))
    >>> h.threshold, h.votes, rate
    (0.5, (-1, 1), 6.0)
    """
    signed = np.asarray(signed, dtype=float)
    total = signed.sum(axis=0)  # T_c
    scale = np.abs(signed).sum()
    best = (-np.inf, 0, 0, total)
    for feature in range(presorted.n_features):
        prefix, valid = _split_prefixes(presorted, feature, signed)
        rates = np.abs(total[None, :] - 2.0 * prefix).sum(axis=1)
        rates = np.where(valid, rates, -np.inf)
        split = first_best(rates, scale, maximise=True)
        if rates[split] > best[0] + TIE_RTOL * scale:  # a tie keeps the first feature
            best = (float(rates[split]), feature, split, total - 2.0 * prefix[split])
    rate, feature, split, edges = best
    return _vector_from_split(presorted, feature, split, edges), rate


def steepest_common_stump(presorted, signed_by_vertex):
    """argmax over stumps φ, votes v of min_j Σ_i Σ_c s^j_ic v_c φ(x_i), votes sign(Σ_j E^j).

    For the J tied functions L_j the value is min_j −L_j'(α; e_{q,(φ,v)}), the steepest descent
    of their max.

    Parameters
    ----------
    presorted : PresortedFeatures
        From :func:`~manytask.boost.stumps.presort` (exact or binned mode).
    signed_by_vertex : array_like of shape (J, m, C)
        s^j_ic = ω^j_{k(i)} w_ic Y_ic Q(q|x_i).

    Returns
    -------
    votes : ndarray of int, shape (C,)
        The votes v.
    feature : int
        φ's feature.
    threshold : float
        φ's threshold (polarity +1).
    value : float
        min_j −L_j'; ≤ 0 means no coordinate decreases every tied function.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> signed = np.stack([class_codes([0, 1, 1], 2), class_codes([0, 0, 1], 2)])
    >>> votes, feature, threshold, value = steepest_common_stump(presort(X), signed)
    >>> votes.tolist(), feature, threshold, value
    ([-1, 1], 0, 0.5, 2.0)
    """
    signed_by_vertex = np.asarray(signed_by_vertex, dtype=float)
    signed = np.moveaxis(signed_by_vertex, 1, 0)  # (m, J, C)
    total = signed.sum(axis=0)  # (J, C)
    scale = np.abs(signed).sum()
    best = (-np.inf, 0, 0, None)
    for feature in range(presorted.n_features):
        prefix, valid = _split_prefixes(presorted, feature, signed)  # (S, J, C)
        edges = total[None] - 2.0 * prefix
        votes = np.where(edges.sum(axis=1) < 0, -1.0, 1.0)  # (S, C)
        values = np.einsum("sjc,sc->sj", edges, votes).min(axis=1)
        values = np.where(valid, values, -np.inf)
        split = first_best(values, scale, maximise=True)
        if values[split] > best[0] + TIE_RTOL * scale:  # a tie keeps the first feature
            best = (float(values[split]), feature, split, votes[split])
    value, feature, split, votes = best
    stump = _vector_from_split(presorted, feature, split, votes)
    return np.asarray(stump.votes), feature, stump.threshold, value
