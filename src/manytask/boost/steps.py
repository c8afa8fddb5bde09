"""The step rules of MULTIBOOST (Figure 1, line 11), one function per rule.

- ``"adaboost"`` (default): η = ½ log((1 − ε)/ε), Lemma 1 for the chosen source alone (§6).
- ``"exact_line_search"``: η = argmin_{η≥0} F(α + ηe) (+ βη), exactly (§3).
- ``"lemma1_bound"``: the minimiser of Lemma 1's bound over every source (Φ = exp).
- ``"constant_over_sqrt_t"``: η_t = C/√t (§6).

A direction with y Q h > 0 on every weighted point takes :func:`separating_step`.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice
from .line_search import CoordinatePieces, aggregate_pieces, minimise_max_newton
from .objective import (
    TIE_RTOL,
    mixture_losses,
    phi_pieces_along,
)

__all__ = [
    "RENAMED_STEPS",
    "STEP_RULES",
    "TIE_RTOL",
    "adaboost_error",
    "adaboost_step",
    "check_step",
    "constant_over_sqrt_t_step",
    "FINAL_STOPS",
    "first_best",
    "lemma1_step",
    "lemma1_terms",
    "penalised_line_search",
    "separates",
    "separating_step",
    "two_exponential_step",
]

# Why boosting stopped (a history record's ``stop``), the same strings in every round:
# MultiBoostClassifier's and the federated server's.
STOP_NO_DESCENT = "no coordinate decreases F"
STOP_NO_DESCENT_MU = "no coordinate decreases F_mu"
STOP_NO_EDGE = "no direction with error < 1/2"
STOP_SEPARATING = "separating direction"
FINAL_STOPS = (STOP_NO_DESCENT, STOP_NO_DESCENT_MU, STOP_SEPARATING, STOP_NO_EDGE)

STEP_RULES = ("adaboost", "exact_line_search", "lemma1_bound", "constant_over_sqrt_t")
RENAMED_STEPS = {"line_search": "exact_line_search", "closed_form": "lemma1_bound"}


def first_best(values, scale, maximise: bool = False) -> int:
    """The first index within ``TIE_RTOL · scale`` of the best, so rounding never decides a tie.

    Parameters
    ----------
    values : array_like of shape (n,)
        The candidates' values.
    scale : float
        The magnitude the tolerance is relative to.
    maximise : bool
        Whether the best is the greatest (else the least).

    Returns
    -------
    int
        The index of the first near-best value.

    Examples
    --------
    >>> first_best([3.0, 1.0 + 1e-15, 1.0], scale=1.0)
    1
    """
    values = np.asarray(values, dtype=float)
    if maximise:
        values = -values
    return int(np.argmax(values <= values.min() + TIE_RTOL * abs(float(scale))))


def check_step(step, loss: str) -> str:
    """``step`` if it names a rule of :data:`STEP_RULES` usable with ``loss``, else ValueError.

    Parameters
    ----------
    step : str
        The step rule.
    loss : {"exponential", "logistic"}
        Φ (``"lemma1_bound"`` needs ``"exponential"``).

    Returns
    -------
    str
        ``step``.

    Raises
    ------
    ValueError
        If ``step`` is unknown, was renamed (:data:`RENAMED_STEPS`), or does not fit ``loss``.

    Examples
    --------
    >>> check_step("adaboost", "logistic")
    'adaboost'
    """
    if isinstance(step, str) and step in RENAMED_STEPS:
        raise ValueError(
            f"step={step!r} was renamed: use step={RENAMED_STEPS[step]!r} (or step='adaboost', "
            "the paper's closed form ½ log((1 − ε)/ε) and the default)"
        )
    check_choice(step, "step", STEP_RULES)
    if step == "lemma1_bound" and loss != "exponential":
        raise ValueError(f"step='lemma1_bound' needs loss='exponential', got loss={loss!r}")
    return step


def adaboost_error(rate, normaliser) -> float:
    """ε = ½(1 − rate/normaliser), the weighted error of a direction (Figure 1, line 10).

    Parameters
    ----------
    rate : float
        (Z_{t,k}/m_k)[1 − 2ε_{t,k,r}], the direction score.
    normaliser : float
        Z_{t,k}/m_k.

    Returns
    -------
    float
        ε_{t,k,r}.

    Examples
    --------
    >>> adaboost_error(0.5, 1.0)
    0.25
    """
    return 0.5 * (1.0 - float(rate) / float(normaliser))


def adaboost_step(error, beta: float = 0.0, normaliser: float = 1.0) -> float:
    """η = ½ log((1 − ε)/ε), AdaBoost's step (Lemma 1 with l = k; §6's closed form).

    The minimiser of N[(1 − ε)e^{−η} + εe^{η}] + βη (N = Z_{t,k}/m_k, β of §4).

    Parameters
    ----------
    error : float
        ε_{t,k,r}.
    beta : float
        The ℓ1 penalty β.
    normaliser : float
        N = Z_{t,k}/m_k (matters only with β > 0).

    Returns
    -------
    float
        η ≥ 0; ``inf`` when ε = 0 and β = 0; 0 when no step helps.

    Examples
    --------
    >>> bool(np.isclose(adaboost_step(0.25), 0.5 * np.log(3.0)))
    True
    """
    error, normaliser = float(error), float(normaliser)
    return two_exponential_step(normaliser * (1.0 - error), normaliser * error, beta)


def two_exponential_step(plus, minus, beta: float = 0.0) -> float:
    """argmin_{η ≥ 0} A e^{−η} + B e^{η} + βη.

    e^η is the positive root of B u² + βu − A (β = 0: ½ log(A/B), Lemma 1).

    Parameters
    ----------
    plus : float
        A ≥ 0.
    minus : float
        B ≥ 0.
    beta : float
        β ≥ 0.

    Returns
    -------
    float
        η ≥ 0; B = 0 gives ``inf`` (β = 0) or log(A/β).

    Examples
    --------
    >>> bool(np.isclose(two_exponential_step(4.0, 1.0), np.log(2.0)))
    True
    """
    plus, minus, beta = float(plus), float(minus), float(beta)
    if minus <= 0:
        return np.inf if beta == 0 else float(np.log(plus / beta)) if plus > beta else 0.0
    if beta == 0:
        return max(0.0, 0.5 * float(np.log(plus / minus)))
    root = (-beta + np.sqrt(beta * beta + 4.0 * minus * plus)) / (2.0 * minus)
    return max(0.0, float(np.log(root)))


def lemma1_step(plus, minus, mixtures=None, mu=None, beta=0.0) -> tuple[float, bool]:
    """η minimising Lemma 1's bound agg_v Σ_k λ^v_k (A_k e^{−η} + B_k e^{η}) + βη over η ≥ 0.

    A_l = (Z_l/m_l)(1 − ε_{t,l,k,r}), B_l = (Z_l/m_l)ε_{t,l,k,r} (Lemma 1, Φ = exp, |u| ≤ 1);
    the bound equals F at η = 0, so its minimiser never increases F. Closed form where one
    term attains the max at its own minimiser, else :func:`~.line_search.minimise_max_newton`.

    Parameters
    ----------
    plus : array_like of shape (p,)
        A_l (:func:`lemma1_terms`).
    minus : array_like of shape (p,)
        B_l.
    mixtures : ndarray of shape (v, p) or None
        Λ's vertices; None for the simplex.
    mu : float or None
        The soft-max temperature μ; None for the hard max.
    beta : float
        The ℓ1 penalty β.

    Returns
    -------
    step : float
        η.
    closed_form : bool
        Whether η came from the closed form.

    Examples
    --------
    >>> step, closed_form = lemma1_step([4.0, 1.0], [1.0, 1.0])
    >>> bool(np.isclose(step, np.log(2.0))), closed_form
    (True, True)
    """
    plus, minus = np.asarray(plus, dtype=float), np.asarray(minus, dtype=float)
    plus_v, minus_v = mixture_losses(plus, mixtures), mixture_losses(minus, mixtures)
    if mu is None or plus_v.size == 1:
        for vertex in np.argsort(-(plus_v + minus_v), kind="stable"):
            step = two_exponential_step(plus_v[vertex], minus_v[vertex], beta)
            if not np.isfinite(step):
                continue
            values = plus_v * np.exp(-step) + minus_v * np.exp(step)
            if values[vertex] >= values.max():
                return step, True

    def bound(step):
        with np.errstate(over="ignore"):
            falling, rising = plus_v * np.exp(-step), minus_v * np.exp(step)
        return np.array([falling + rising, rising - falling, falling + rising])

    return minimise_max_newton(aggregate_pieces(bound, None, mu, beta)), False


def constant_over_sqrt_t_step(round_number: int, constant: float) -> float:
    """η_t = C/√t  (the diminishing step of §6; t counts from 1).

    Parameters
    ----------
    round_number : int
        t ≥ 1.
    constant : float
        C.

    Returns
    -------
    float
        η_t.

    Examples
    --------
    >>> float(constant_over_sqrt_t_step(4, 1.0))
    0.5
    """
    return constant / np.sqrt(round_number)


def separates(directions, weighted=None, beta: float = 0.0) -> bool:
    """Whether F → 0 as η → ∞ along the direction (the case ε = 0 of Lemma 1).

    True when β = 0 and u = y Q h > 0 on every point of positive weight.

    Parameters
    ----------
    directions : array_like
        u_i = y_i Q(k|x_i) h(x_i).
    weighted : ndarray of bool or None
        The points of positive weight; None = all.
    beta : float
        The ℓ1 penalty β.

    Returns
    -------
    bool
        Whether the direction separates the weighted points.

    Examples
    --------
    >>> separates([0.5, 1.0]), separates([0.5, -1.0]), separates([0.5, 1.0], beta=0.1)
    (True, False, False)
    """
    seen = np.asarray(directions) if weighted is None else np.asarray(directions)[weighted]
    return beta == 0 and bool(np.all(seen > 0))


def separating_step(weights, min_probability: float) -> float:
    """η = (1 + ‖α‖₁)/min_x Q(q|x) for a separating direction: every training margin turns > 0.

    Parameters
    ----------
    weights : array_like
        The ensemble's step sizes α so far (non-negative).
    min_probability : float
        min_x Q(q|x) over the training points, > 0.

    Returns
    -------
    float
        η.

    Examples
    --------
    >>> separating_step([1.0, 2.0], 0.5)
    8.0
    """
    return (1.0 + float(np.sum(weights))) / float(min_probability)


def penalised_line_search(base_margins, directions, domain_index, point_weights, n_domains,
                          loss="exponential", mixtures=None, mu=None, beta=0.0,
                          layout=None):  # fmt: skip
    """η = argmin_{η≥0} F(α + η e_{q,r}) + β η, exactly  (Figure 1, line 11; §4 with ℓ1).

    F is convex along a coordinate: :func:`~.line_search.minimise_max_newton` on
    :class:`~.line_search.CoordinatePieces` (Φ = exp) or :func:`~.objective.phi_pieces_along`;
    with every |u_i| = 1 Lemma 1's bound is F and :func:`lemma1_step` solves it.

    Parameters
    ----------
    base_margins : ndarray of shape (m,) or (m, K)
        y_i f(x_i) at α.
    directions : ndarray of the shape of ``base_margins``
        u_i = y_i Q(q|x_i) h(x_i).
    domain_index : ndarray of shape (m,)
        The domain of each point.
    point_weights : ndarray of shape (m,)
        c_i.
    n_domains : int
        p.
    loss : {"exponential", "logistic"}
        Φ.
    mixtures : ndarray of shape (v, p) or None
        Λ's vertices; None for the simplex.
    mu : float or None
        The soft-max temperature μ; None for the hard max.
    beta : float
        The ℓ1 penalty β.
    layout : tuple of ndarray, optional
        :func:`~.line_search.domain_layout` of ``domain_index``, if already computed.

    Returns
    -------
    float
        η ≥ 0; ``inf`` if the objective decreases without bound.

    Examples
    --------
    >>> step = penalised_line_search(np.zeros(4), np.array([1.0, 1.0, 1.0, -1.0]),
    ...                              np.zeros(4, dtype=int), np.ones(4), 1)
    >>> bool(np.isclose(step, 0.5 * np.log(3.0)))
    True
    """
    directions = np.asarray(directions, dtype=float)
    weights = np.asarray(point_weights, dtype=float).reshape(-1, *([1] * (directions.ndim - 1)))
    if loss == "exponential":
        scaled = weights * np.exp(-np.asarray(base_margins, dtype=float))  # a_i of eq. (4)
        weighted = scaled > 0
    else:
        weighted = np.broadcast_to(weights, directions.shape) > 0
    if separates(directions, weighted, beta):
        return np.inf
    if loss == "exponential":
        if np.all(np.abs(directions[weighted]) == 1.0):
            plus, minus = lemma1_terms(scaled, directions, domain_index, n_domains)
            return lemma1_step(plus, minus, mixtures, mu, beta)[0]
        codes = 1 if directions.ndim == 1 else directions.shape[1]
        index = domain_index if codes == 1 else np.repeat(domain_index, codes)
        pieces = CoordinatePieces(
            scaled.ravel(), directions.ravel(), index, n_domains, layout if codes == 1 else None
        )
    else:
        arguments = (base_margins, directions, domain_index, point_weights, n_domains, loss)

        def pieces(step):
            return phi_pieces_along(step, *arguments)

    return minimise_max_newton(aggregate_pieces(pieces, mixtures, mu, beta))


def lemma1_terms(scaled_losses, directions, domain_index, n_domains):
    """(A_l, B_l) = (Σ_{S_l} a (1 + u)/2, Σ_{S_l} a (1 − u)/2) with a_i = c_i e^{−y_i f(x_i)}.

    These are (Z_l/m_l)(1 − ε_{t,l,k,r}) and (Z_l/m_l)ε_{t,l,k,r} of Lemma 1 (summed over the
    codes).

    Parameters
    ----------
    scaled_losses : array_like of shape (m,)
        a_i.
    directions : ndarray of shape (m,) or (m, K)
        u_i.
    domain_index : ndarray of shape (m,)
        The domain of each point.
    n_domains : int
        p.

    Returns
    -------
    tuple of ndarray
        (A, B), each of shape (p,).

    Examples
    --------
    >>> plus, minus = lemma1_terms(np.ones(3), np.array([1.0, -1.0, 1.0]), np.array([0, 0, 1]), 2)
    >>> plus.tolist(), minus.tolist()
    ([1.0, 1.0], [1.0, 0.0])
    """
    scaled_losses = np.asarray(scaled_losses, dtype=float)
    m = scaled_losses.shape[0]
    return tuple(
        np.bincount(domain_index, weights=(scaled_losses * (1 + sign * directions) / 2)
                    .reshape(m, -1).sum(axis=1), minlength=n_domains)
        for sign in (1.0, -1.0)
    )  # fmt: skip
