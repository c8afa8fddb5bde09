"""Line 10 of Figure 1: the steepest base classifier of each row of the round
(:func:`steepest_directions`: stumps, vector stumps for more than two classes, or trees),
the fallback at a tie of the hard max (:func:`steepest_tied_direction`, :mod:`.steepest`),
and a base classifier's values (:func:`stump_values`, :func:`training_values`). The round
that uses them is :func:`~.rounds.boost_round`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .multiclass import VectorStump, best_vector_stump, steepest_common_stump
from .objective import direction_score, weighted_error
from .steepest import steepest_coordinate
from .steps import first_best
from .stumps import Stump, best_stump, predict_presorted
from .trees import Tree, grow_tree, tree_training_values

if TYPE_CHECKING:
    from .rounds import RoundData

__all__ = [
    "Direction",
    "steepest_directions",
    "steepest_tied_direction",
    "stump_values",
    "training_values",
]


def stump_values(stump, X, check_input: bool = True) -> np.ndarray:
    """h(x, c) as an (N, C) array: C = 1 for a binary stump, K for a vector stump.

    Parameters
    ----------
    stump : Stump, Tree or VectorStump
        The base function.
    X : array_like of shape (N, d)
        The inputs.
    check_input : bool
        False skips re-checking ``X`` (the fit loop's inputs, checked once).

    Returns
    -------
    ndarray of shape (N, C)
        The base function's values, one column per code.

    Examples
    --------
    >>> from manytask.boost.stumps import Stump
    >>> stump_values(Stump(0, 0.5, 1), [[0.0], [1.0]]).tolist()
    [[-1.0], [1.0]]
    """
    values = stump.predict(X, check_input=check_input)
    return values[:, None] if values.ndim == 1 else values


def training_values(base, presorted) -> np.ndarray:
    """:func:`stump_values` on the training points, read from the presorted features.

    Parameters
    ----------
    base : Stump, Tree or VectorStump
        The base function.
    presorted : PresortedFeatures
        The training inputs (:func:`~manytask.boost.stumps.presort`).

    Returns
    -------
    ndarray of shape (m, C)
        The base function's values on the training points.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> training_values(Stump(0, 0.5, 1), presort([[0.0], [1.0]])).tolist()
    [[-1.0], [1.0]]
    """
    if isinstance(base, Tree):
        values = tree_training_values(presorted, base)
        return values[:, None] if values.ndim == 1 else values
    if isinstance(base, VectorStump):
        votes = np.asarray(base.votes, dtype=float)
        return predict_presorted(presorted, base.stump)[:, None] * votes[None, :]
    return predict_presorted(presorted, base)[:, None]


@dataclass(frozen=True)
class Direction:
    """A candidate coordinate e_{q,h} of line 10: its descent rate, source, base classifier.

    Parameters
    ----------
    rate : float
        −(Σ_k ω_k F_k)'(α; e_{q,h}) for the row's weights ω.
    domain : int
        q, the index of Q(q|·).
    base : Stump, VectorStump or Tree
        h.
    mass : float, optional
        Σ_k ω_k Z_{t,k}/m_k, the mass of the row's D_t (ε = ½(1 − rate/mass)).

    Examples
    --------
    >>> Direction(0.5, 0, Stump(0, 0.0, 1), 1.0).rate
    0.5
    """

    rate: float
    domain: int
    base: object
    mass: float | None = None


def steepest_directions(data: RoundData, rows, gradients) -> list[Direction]:
    """Figure 1, line 10: per row (q, ω), the base classifier h maximising the descent rate
    −(Σ_k ω_k F_k)'(α; e_{q,h}) = (Z/m)[1 − 2ε] for the weights ω_k D_t(k, i) Q(q|x_i).

    Parameters
    ----------
    data : RoundData
        The fit's points and options.
    rows : sequence of (int, ndarray)
        (q, ω): the source of Q(q|·) and the weights ω of the sources' losses.
    gradients : ndarray of shape (m, C)
        :func:`~.rounds.gradient_weights`.

    Returns
    -------
    list of Direction
        By decreasing rate; rates equal to rounding (:func:`~.steps.first_best`, relative
        to the largest mass) keep the rows' order, so rounding never decides which source's
        direction comes first.

    Examples
    --------
    >>> from manytask.boost.rounds import RoundData, gradient_weights
    >>> from manytask.boost.stumps import presort
    >>> X = np.array([[0.0], [1.0]])
    >>> data = RoundData(presort(X), np.array([[-1.0], [1.0]]), np.ones((2, 1)),
    ...                  np.zeros(2, dtype=int), np.full(2, 0.5), 1, "exponential", "adaboost")
    >>> gradients = gradient_weights(data, np.zeros((2, 1)))
    >>> best = steepest_directions(data, [(0, np.ones(1))], gradients)
    >>> best[0].rate, best[0].base.polarity
    (1.0, 1)
    """
    codes, domain_index = data.codes, data.domain_index
    domain_masses = np.bincount(
        domain_index, weights=gradients.sum(axis=1), minlength=data.n_domains
    )  # Z_{t,k}/m_k
    masses = np.array([weights @ domain_masses for _, weights in rows])
    scale = np.array([weights[domain_index] for _, weights in rows])  # (R, m)
    queried = data.Q[:, [q for q, _ in rows]].T
    found = []
    if data.max_depth > 1:  # a tree per row; its edge is the rate (see .trees)
        for (q, _), row_scale, mass in zip(rows, scale * queried, masses):
            tree, edge = grow_tree(data.presorted, gradients * codes * row_scale[:, None],
                                   data.max_depth)  # fmt: skip
            found.append(Direction(float(edge), int(q), tree, float(mass)))
    elif codes.shape[1] == 1:
        stump_weights = scale * gradients[:, 0][None, :] / masses[:, None] * queried
        results = best_stump(data.presorted, codes[:, 0], stump_weights, check_input=False)
        for (q, _), row_weights, result, mass in zip(rows, stump_weights, results, masses):
            rate = direction_score(mass, weighted_error(row_weights.sum(), result.error))
            found.append(Direction(float(rate), int(q), result.stump, float(mass)))
    else:
        for (q, _), row_scale, mass in zip(rows, scale * queried, masses):
            stump, rate = best_vector_stump(data.presorted, gradients * codes * row_scale[:, None])
            found.append(Direction(float(rate), int(q), stump, float(mass)))
    return _by_rate(found, float(masses.max(initial=0.0)))


def _by_rate(found: list, scale: float) -> list:
    """``found`` by decreasing rate, each place to the first remaining direction within
    ``TIE_RTOL · scale`` of the best remaining one (the one tie rule)."""
    remaining, ordered = list(found), []
    while remaining:
        rates = [direction.rate for direction in remaining]
        ordered.append(remaining.pop(first_best(rates, scale, maximise=True)))
    return ordered


def steepest_tied_direction(data: RoundData, active, gradients) -> Direction | None:
    """The fallback at a tie: argmax_{q,h} min_{j∈K_t} −L_j'(α; e_{q,h}) over stumps.

    Parameters
    ----------
    data : RoundData
        The fit's points and options.
    active : ndarray of int
        The tied sources (or vertices of Λ) K_t.
    gradients : ndarray of shape (m, C)
        :func:`~.rounds.gradient_weights`.

    Returns
    -------
    Direction or None
        Its rate is min_j −L_j'; None with trees (the fallback searches stumps,
        :mod:`.steepest`) or if no stump is found.

    Examples
    --------
    >>> from manytask.boost.rounds import RoundData
    >>> from manytask.boost.stumps import presort
    >>> X = np.array([[0.0], [1.0]])
    >>> data = RoundData(presort(X), np.array([[-1.0], [1.0]]), np.ones((2, 2)) / 2,
    ...                  np.array([0, 1]), np.ones(2), 2, "exponential", "exact_line_search")
    >>> tied = steepest_tied_direction(data, np.array([0, 1]), np.full((2, 1), 0.5))
    >>> tied.rate, tied.base.threshold
    (0.25, 0.5)
    """
    codes, Q, presorted, domain_index = data.codes, data.Q, data.presorted, data.domain_index
    if data.max_depth > 1:
        return None
    if codes.shape[1] == 1 and data.mixtures is None:
        q, stump = steepest_coordinate(presorted, codes[:, 0], Q, gradients[:, 0], domain_index,
                                       active)  # fmt: skip
        if stump is None:
            return None
        signed = gradients[:, 0] * codes[:, 0] * Q[:, q] * predict_presorted(presorted, stump)
        rates = np.bincount(domain_index, weights=signed, minlength=data.n_domains)
        return Direction(float(rates[active].min()), q, stump)
    tied = np.eye(data.n_domains)[active] if data.mixtures is None else data.mixtures[active]
    found = []
    for q in range(data.n_domains):
        signed = gradients * codes * Q[:, [q]]  # (m, C)
        by_vertex = tied[:, domain_index][:, :, None] * signed[None]
        votes, feature, threshold, value = steepest_common_stump(presorted, by_vertex)
        stump = Stump(feature, threshold, int(votes[0]))
        if codes.shape[1] > 1:
            stump = VectorStump(Stump(feature, threshold, 1), tuple(int(v) for v in votes))
        found.append(Direction(float(value), q, stump))
    # the first q within TIE_RTOL of the best (rates are at most Σ |w|)
    return found[first_best([d.rate for d in found], float(np.abs(gradients).sum()), maximise=True)]
