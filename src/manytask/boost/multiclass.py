"""Multi-class MULTIBOOST: AdaBoost.MH-style codes, vector stumps and their exact search.

The paper's MCMULTIBOOST (its Appendix L) is not in our copy; this is our derivation.

Codes. With K classes, point i carries the K binary labels Y_ic = +1 if y_i = c else −1
(AdaBoost.MH, Schapire & Singer 1999). The Q-ensemble is vector-valued (eq. 3 per class):

    f_c(x) = Σ_t α_t Q(k_t|x) v_{t,c} φ_t(x),   α_t ≥ 0,

with base functions h_t(x, c) = v_{t,c} φ_t(x): a binary stump φ_t ∈ {−1, +1} and a vote
vector v_t ∈ {−1, +1}^K (the factorised base learner of Kégl & Busa-Fekete 2009). Prediction
is argmax_c f_c(x).

Loss. The multi-class exponential loss of point i is (1/K) Σ_c Φ(−Y_ic f_c(x_i)), and domain
k's loss F_k(α) = Σ_{i∈S_k} c_i (1/K) Σ_c Φ(−Y_ic f_c(x_i)); the objective is the agnostic
max_k F_k (or over the vertices of Λ, or the soft-max) exactly as in the binary case. If
argmax_c f_c(x_i) ≠ y_i then f_{y_i}(x_i) ≤ 0 or f_c(x_i) ≥ f_{y_i}(x_i) for some c ≠ y_i,
and one of those terms has Φ(−Y f) ≥ 1, so K·F_k bounds domain k's training error (the
constant does not move the argmin nor the max over k).

Coordinate descent. Each (i, c) pair is a "virtual point" with margin Y_ic f_c(x_i) and weight
c_i/K, so every formula of Figure 1 carries over with sums over i and c: D_t(k, (i, c)) ∝
c_i Φ'(−Y_ic f_c(x_i)), and the descent rate of F_k along e_{q,(φ,v)} is

    −F_k'(α; e) = Σ_{i∈S_k} Σ_c w_ic Y_ic Q(q|x_i) v_c φ(x_i),   w_ic = (c_i/K) Φ'(−Y_ic f_c),

(the (Z_{t,k}/m_k)[1 − 2ε] of Figure 1 with ε averaged over the K codes). For a fixed φ the
best votes are v_c = sign(E_c(φ)) with E_c(φ) = Σ_i s_ic φ(x_i), s_ic = w_ic Y_ic Q(q|x_i),
so the steepest (φ, v) maximises Σ_c |E_c(φ)|; for a stump φ = π·sign(x_f − θ) that is
Σ_c |T_c − 2P_c(θ)| with P_c the prefix sums of s_·c along the sorted feature and T_c their
total — the polarity π is absorbed by v. :func:`best_vector_stump` evaluates it exactly over
all thresholds in O(d·m·K). The line search and the step rules are those of the binary case
applied to the virtual points (:mod:`.objective`).

Two classes. With K = 2, Y_i1 = −Y_i0 = y_i. If f_0 = −f_1 (true at α = 0) the two codes have
the same weight, E_0(φ) = −E_1(φ), the best votes are v = (−π, π) and the rate is
2·(1/2)·|Σ_i w_i y_i Q(q|x_i) φ(x_i)|: the binary rate, for the same stump. The step along
Q(q|·)(v_0 φ, v_1 φ) keeps f_0 = −f_1, and the loss ½(e^{−y f_1} + e^{y f_0}) = e^{−y f_1} is
the binary loss. By induction every round chooses the binary algorithm's stump and step:
f_1 = −f_0 = the binary f with the same α (the constant between the two parametrisations is
1), and argmax_c f_c = the binary sign. ``predict_proba`` uses the one-vs-rest link
p_c ∝ 1/(1 + e^{−2 f_c}) (the minimiser of the per-code exponential loss), which for K = 2 is
the binary 1/(1 + e^{−2f}).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .steps import TIE_RTOL, first_best
from .stumps import Stump

__all__ = ["VectorStump", "best_vector_stump", "class_codes", "steepest_common_stump"]


def class_codes(class_index, n_classes: int) -> np.ndarray:
    """Y_ic = +1 if y_i = c else −1  (AdaBoost.MH codes), shape (m, K).

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
        return self.stump.feature

    @property
    def threshold(self) -> float:
        return self.stump.threshold

    def predict(self, X, check_input: bool = True) -> np.ndarray:
        """Return h(x, c) for every row of ``X`` and class c, shape (N, K); ``check_input``
        as in :meth:`Stump.predict <manytask.boost.stumps.Stump.predict>`."""
        values = self.stump.predict(X, check_input=check_input)
        return values[:, None] * np.asarray(self.votes, dtype=float)[None, :]


def _vector_from_split(presorted, feature, split, signed_totals_at_split):
    """The VectorStump of polarity +1 at ``split`` with votes sign(T_c − 2P_c)."""
    if split == 0:
        threshold = -np.inf
    elif presorted.n_bins is None:
        values = presorted.sorted_values[feature]
        middle = 0.5 * values[split - 1] + 0.5 * values[split]
        outside = middle >= values[split] or middle < values[split - 1]
        threshold = float(values[split - 1] if outside else middle)
    else:
        threshold = float(presorted.thresholds[feature, split - 1])
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

    ``signed_by_vertex`` (J, m, C) holds s^j_ic = ω^j_{k(i)} w_ic Y_ic Q(q|x_i) for the J
    active functions L_j of a tie, so the value is min_j −L_j'(α; e_{q,(φ,v)}): the rate at
    which the max of the tied functions falls along that coordinate (the steepest coordinate
    descent direction of F at a tie). The votes are the signs of the summed edges Σ_j E^j_c:
    with C = 1 that is exact whenever the value is positive (all E^j then share the sign).

    Returns (votes (C,) int array, feature, threshold, value); value ≤ 0 means no coordinate
    decreases every tied function.
    """
    signed_by_vertex = np.asarray(signed_by_vertex, dtype=float)
    signed = np.moveaxis(signed_by_vertex, 1, 0)  # (m, J, C)
    total = signed.sum(axis=0)  # (J, C)
    best = (-np.inf, 0, 0, None)
    for feature in range(presorted.n_features):
        prefix, valid = _split_prefixes(presorted, feature, signed)  # (S, J, C)
        edges = total[None] - 2.0 * prefix
        votes = np.where(edges.sum(axis=1) < 0, -1.0, 1.0)  # (S, C)
        values = np.einsum("sjc,sc->sj", edges, votes).min(axis=1)
        values = np.where(valid, values, -np.inf)
        split = int(np.argmax(values))
        if values[split] > best[0]:
            best = (float(values[split]), feature, split, votes[split])
    value, feature, split, votes = best
    stump = _vector_from_split(presorted, feature, split, votes)
    return np.asarray(stump.votes), feature, stump.threshold, value
