"""One round of MULTIBOOST (Figure 1) as a pure function: :func:`boost_round` takes what a fit
holds fixed (:class:`RoundData`) and the state (the margins Y_ic f_c(x_i), ‖α‖₁, t), changes
nothing, and returns a :class:`RoundRecord` (the chosen base classifier, η, the new margins, why
boosting stopped). The caller (:class:`~manytask.boost.MultiBoostClassifier`, binary or
multi-class) keeps the ensemble. Figure 1's lines, one function each:

- lines 4–5, the losses F_k and the active set K_t: :func:`losses_and_active`;
- lines 7–9, Z_{t,k} and D_t (unnormalised, per virtual point): :func:`gradient_weights`;
- line 10, the steepest base classifier of each row:
  :func:`~.directions.steepest_directions` (:mod:`.directions`);
- line 11, the step η_t by the chosen rule (:mod:`.steps`): :func:`step_along`;
- line 12, α_t = α_{t−1} + η_t e_{k,r} on the margins: :func:`advance`.

The federated round (:func:`~manytask.boost.federated.driver.run_round`) is the same round
on the clients' sums: it calls the pieces that do not need the points —
:func:`round_objective` (lines 4–5 from the F_k), :func:`first_taken` (which directions
line 11 tries), :func:`finite_step` (η = ∞ → the separating step) and :func:`stop_reason` —
and differs only in where F_k, the rates and η come from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .directions import Direction, steepest_directions, steepest_tied_direction, training_values
from .objective import (
    active_domains,
    aggregate_weights,
    agnostic_objective,
    mixture_losses,
    objective_along,
    phi,
    phi_derivative,
    phi_domain_losses,
)
from .steps import (
    STOP_NO_DESCENT,
    STOP_NO_DESCENT_MU,
    STOP_NO_EDGE,
    STOP_SEPARATING,
    adaboost_error,
    adaboost_step,
    constant_over_sqrt_t_step,
    lemma1_step,
    lemma1_terms,
    penalised_line_search,
    separates,
    separating_step,
)

__all__ = [
    "RoundData",
    "RoundRecord",
    "advance",
    "boost_round",
    "finite_step",
    "first_taken",
    "gradient_weights",
    "losses_and_active",
    "round_objective",
    "step_along",
    "stop_reason",
]


@dataclass(frozen=True)
class RoundData:
    """What every round of one fit shares: the training points and the options.

    Parameters
    ----------
    presorted : PresortedFeatures
        The training inputs (:func:`~manytask.boost.stumps.presort`).
    codes : ndarray of shape (m, C)
        Y_ic: ±1 labels (C = 1) or the class codes of :mod:`.multiclass`.
    Q : ndarray of shape (m, p)
        Q(k|x_i) on the training points.
    domain_index : ndarray of shape (m,)
        The source of each point, in 0..p−1.
    point_weights : ndarray of shape (m,)
        c_i, normalised per source (F_k is the c-weighted mean over S_k).
    n_domains : int
        p.
    loss : {"exponential", "logistic"}
        Φ.
    step : str
        The step rule (:data:`~.steps.STEP_RULES`).
    step_constant : float, default=1.0
        C of the C/√t rule.
    mixtures : None or ndarray of shape (v, p)
        The vertices of Λ; None: the simplex.
    mu : None or float
        The soft-max temperature; None: the hard max.
    beta : float, default=0.0
        The ℓ1 penalty β.
    max_depth : int, default=1
        Depth of the base trees (1: stumps).
    layout : tuple, optional
        :func:`~.line_search.domain_layout` for the exact line search.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> data = RoundData(presort(np.array([[0.0], [1.0]])), np.array([[-1.0], [1.0]]),
    ...                  np.ones((2, 1)), np.zeros(2, dtype=int), np.full(2, 0.5), 1,
    ...                  "exponential", "adaboost")
    >>> data.code_weights.tolist()
    [0.5, 0.5]
    """

    presorted: object
    codes: np.ndarray
    Q: np.ndarray
    domain_index: np.ndarray
    point_weights: np.ndarray
    n_domains: int
    loss: str
    step: str
    step_constant: float = 1.0
    mixtures: np.ndarray | None = None
    mu: float | None = None
    beta: float = 0.0
    max_depth: int = 1
    layout: tuple | None = None

    @property
    def code_weights(self) -> np.ndarray:
        """c_i/C: the weight of each of a point's C virtual points (:mod:`.multiclass`).

        Returns
        -------
        ndarray of shape (m,)
            ``point_weights / C``.

        Examples
        --------
        >>> from manytask.boost.stumps import presort
        >>> RoundData(presort(np.zeros((2, 1))), np.ones((2, 3)), np.ones((2, 1)),
        ...           np.zeros(2, dtype=int), np.ones(2), 1, "exponential",
        ...           "adaboost").code_weights.round(4).tolist()
        [0.3333, 0.3333]
        """
        return self.point_weights / self.codes.shape[1]


@dataclass(frozen=True)
class RoundRecord:
    """What one round did: the term taken (or none), the new margins and why boosting stops.

    Parameters
    ----------
    margins : ndarray of shape (m, C)
        Y_ic f_c(x_i) after the round (the input margins if no step).
    domain, base : int and base classifier, or None
        The term (q, h) taken; None if the round took no step.
    step : float
        η_t (0 if no step).
    stop : str or None
        Why boosting stops after this round (:mod:`.steps`' ``STOP_*``), None to go on.
    details : dict
        ``losses``, ``objective``, ``active`` (indices), ``rate``, ``step_rule``,
        ``direction_rule`` and, as they apply, ``error``, ``soft_weights``,
        ``vertex_losses``.

    Examples
    --------
    >>> RoundRecord(np.zeros((2, 1)), stop="no direction with error < 1/2").base is None
    True
    """

    margins: np.ndarray
    domain: int | None = None
    base: object = None
    step: float = 0.0
    stop: str | None = None
    details: dict = field(default_factory=dict)


def losses_and_active(data: RoundData, margins, l1_norm: float = 0.0):
    """Figure 1, lines 4–5: F_k(α), the objective (+ β‖α‖₁) and K_t.

    Parameters
    ----------
    data : RoundData
        The fit's points and options.
    margins : ndarray of shape (m, C)
        Y_ic f_c(x_i).
    l1_norm : float, default=0.0
        ‖α‖₁.

    Returns
    -------
    losses : ndarray of shape (p,)
        F_k.
    vertex_losses : ndarray of shape (p,) or (v,)
        The losses of Λ's vertices (F_k for the simplex).
    objective : float
        max_v L_v (F_μ with ``mu``) + β‖α‖₁.
    active : ndarray of int
        The vertices attaining the max (K_t), to :data:`~.steps.TIE_RTOL`.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> data = RoundData(presort(np.zeros((2, 1))), np.ones((2, 1)), np.ones((2, 2)) / 2,
    ...                  np.array([0, 1]), np.ones(2), 2, "exponential", "adaboost")
    >>> losses, _, objective, active = losses_and_active(data, np.array([[0.0], [1.0]]))
    >>> losses.round(4).tolist(), round(objective, 4), active.tolist()
    ([1.0, 0.3679], 1.0, [0])
    """
    losses = phi_domain_losses(
        margins, data.domain_index, data.code_weights, data.n_domains, data.loss
    )
    return losses, *round_objective(losses, data.mixtures, data.mu, data.beta, l1_norm)


def round_objective(losses, mixtures=None, mu=None, beta: float = 0.0, l1_norm: float = 0.0):
    """Figure 1, lines 4–5 from the sources' losses F_k (on the points, or pooled from the
    clients' sums): Λ's vertex losses, the objective (+ β‖α‖₁) and K_t.

    Parameters
    ----------
    losses : ndarray of shape (p,)
        F_k.
    mixtures : None or ndarray of shape (v, p)
        The vertices of Λ; None: the simplex.
    mu : None or float
        The soft-max temperature; None: the hard max.
    beta : float, default=0.0
        The ℓ1 penalty β.
    l1_norm : float, default=0.0
        ‖α‖₁.

    Returns
    -------
    vertex_losses : ndarray of shape (p,) or (v,)
        The losses of Λ's vertices.
    objective : float
        max_v L_v (F_μ with ``mu``) + β‖α‖₁.
    active : ndarray of int
        The vertices attaining the max (K_t), to :data:`~.steps.TIE_RTOL`.

    Examples
    --------
    >>> _, objective, active = round_objective(np.array([1.0, 0.5]))
    >>> objective, active.tolist()
    (1.0, [0])
    """
    vertex_losses = mixture_losses(losses, mixtures)
    objective = agnostic_objective(vertex_losses, mu) + float(beta) * l1_norm
    return vertex_losses, objective, active_domains(vertex_losses)


def first_taken(directions, takes_first: bool, attempt):
    """Line 11's choice among line 10's directions: each in turn (by decreasing rate) until
    ``attempt`` takes it; with ``takes_first`` only the first (the AdaBoost step, Lemma 1, is
    always taken; F_μ is smooth, so its steepest coordinate is its only one).

    Parameters
    ----------
    directions : sequence
        The directions, steepest first.
    takes_first : bool
        Try the first only.
    attempt : callable
        ``attempt(direction)``: the round's record if the step along it is taken, else None.

    Returns
    -------
    object or None
        The first record ``attempt`` returned, None if it took none.

    Examples
    --------
    >>> first_taken([3, 2, 1], False, lambda d: d if d < 3 else None)
    2
    >>> first_taken([3, 2, 1], True, lambda d: d if d < 3 else None) is None
    True
    """
    for direction in directions[:1] if takes_first else directions:
        record = attempt(direction)
        if record is not None:
            return record
    return None


def finite_step(step: float, l1_norm: float, min_probability):
    """η, finite: along a direction where F → 0 (η = ∞) MultiBoost's
    :func:`~.steps.separating_step` (1 + ‖α‖₁)/min_i Q(q|x_i), after which boosting stops.

    Parameters
    ----------
    step : float
        The step rule's η ≥ 0, possibly ∞.
    l1_norm : float
        ‖α_{t−1}‖₁.
    min_probability : callable
        ``min_probability()`` = min_i Q(q|x_i) (asked only for η = ∞: a federated server asks
        the clients).

    Returns
    -------
    step : float
        η, finite.
    separating : bool
        Whether it is the separating step.

    Examples
    --------
    >>> finite_step(np.inf, 1.0, lambda: 0.5), finite_step(0.25, 1.0, lambda: 0.5)
    ((4.0, True), (0.25, False))
    """
    if np.isfinite(step):
        return float(step), False
    return separating_step([l1_norm], min_probability()), True


def stop_reason(step: str, mu=None, beta: float = 0.0) -> str:
    """Why boosting stops when no direction was taken (:mod:`.steps`' ``STOP_*``).

    Parameters
    ----------
    step : str
        The step rule.
    mu : None or float
        The soft-max temperature.
    beta : float, default=0.0
        The ℓ1 penalty β.

    Returns
    -------
    str
        No edge (the AdaBoost step), else no descent of F (F_μ with ``mu``).

    Examples
    --------
    >>> stop_reason("adaboost"), stop_reason("exact_line_search", mu=1.0)
    ('no direction with error < 1/2', 'no coordinate decreases F_mu')
    """
    if step == "adaboost":
        return STOP_NO_EDGE + (" and rate > beta" if beta > 0 else "")
    reason = STOP_NO_DESCENT if mu is None else STOP_NO_DESCENT_MU
    return reason + (" + beta*|alpha|_1" if beta > 0 else "")


def gradient_weights(data: RoundData, margins) -> np.ndarray:
    """Figure 1, lines 7–9: w_ic = (c_i/C) Φ'(−Y_ic f_c(x_i)), D_t before normalisation.

    Summed over source k's points, w gives Z_{t,k}/m_k (line 7); D_t(k, i) = w_i/(Z_{t,k}/m_k)
    (line 9).

    Parameters
    ----------
    data : RoundData
        The fit's points and options.
    margins : ndarray of shape (m, C)
        Y_ic f_c(x_i).

    Returns
    -------
    ndarray of shape (m, C)
        w_ic.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> data = RoundData(presort(np.zeros((2, 1))), np.ones((2, 1)), np.ones((2, 1)),
    ...                  np.zeros(2, dtype=int), np.full(2, 0.5), 1, "exponential", "adaboost")
    >>> gradient_weights(data, np.zeros((2, 1))).tolist()
    [[0.5], [0.5]]
    """
    return data.code_weights[:, None] * phi_derivative(-margins, data.loss)


def _rows(data: RoundData, vertex_losses, active):
    """The rows (q, ω) of line 10 and their rule: per active source (the paper), per (vertex,
    source) for a restricted Λ, per source with the soft-max weights p for F_μ."""
    eye = np.eye(data.n_domains)
    if data.mu is not None:
        weights = aggregate_weights(vertex_losses, data.mu)
        combined = weights if data.mixtures is None else weights @ data.mixtures
        return [(q, combined) for q in range(data.n_domains)], "soft_max"
    if data.mixtures is None:
        return [(int(k), eye[k]) for k in active], "paper"
    return [(q, data.mixtures[v]) for v in active for q in range(data.n_domains)], "vertex"


def step_along(data: RoundData, margins, directions, direction: Direction, round_number: int,
               l1_norm: float = 0.0):  # fmt: skip
    """Figure 1, line 11: (η, rule, error) along the margins' direction u_ic = Y_ic Q(q|x_i) h.

    The rule is ``data.step``'s: Lemma 1's ½ log((1 − ε)/ε) (``"adaboost"``, ``error`` ε), the
    exact argmin_{η≥0} F(α + ηe) + βη, the minimiser of Lemma 1's bound, or C/√t. A direction
    along which F → 0 (η = ∞) is given MultiBoost's finite :func:`~.steps.separating_step`,
    rule ``"separating"``.

    Parameters
    ----------
    data : RoundData
        The fit's points and options.
    margins, directions : ndarray of shape (m, C)
        Y_ic f_c(x_i) and u_ic.
    direction : Direction
        The coordinate (its rate and mass give the AdaBoost step's ε;
        :class:`~.directions.Direction`).
    round_number : int
        t (the C/√t rule).
    l1_norm : float, default=0.0
        ‖α‖₁ (the separating step).

    Returns
    -------
    step : float
        η ≥ 0, finite.
    rule : str
        The rule that gave it.
    error : float or None
        ε of the AdaBoost step.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> data = RoundData(presort(np.zeros((2, 1))), np.ones((2, 1)), np.ones((2, 1)),
    ...                  np.zeros(2, dtype=int), np.full(2, 0.5), 1, "exponential", "adaboost")
    >>> u = np.array([[1.0], [-1.0]])
    >>> step_along(data, np.zeros((2, 1)), u, Direction(0.5, 0, None, 1.0), 1)[:2]
    (0.5493061443340549, 'adaboost')
    """
    n_domains, beta, loss = data.n_domains, float(data.beta), data.loss
    weights, error = data.code_weights, None
    if data.step == "adaboost":
        error = adaboost_error(direction.rate, direction.mass)
        weighted = weights[:, None] * phi(-margins, loss) > 0
        step = np.inf if separates(directions, weighted, beta) else adaboost_step(
            error, beta, direction.mass)  # fmt: skip
        rule = "adaboost"
    elif data.step == "constant_over_sqrt_t":
        step, rule = constant_over_sqrt_t_step(round_number, float(data.step_constant)), data.step
    elif data.step == "lemma1_bound":
        scaled = weights[:, None] * phi(-margins, "exponential")
        plus, minus = lemma1_terms(scaled, directions, data.domain_index, n_domains)
        separating = beta == 0 and np.all(minus <= 0)
        step = np.inf if separating else lemma1_step(plus, minus, data.mixtures, data.mu, beta)[0]
        rule = data.step
    else:
        step = penalised_line_search(
            margins, directions, data.domain_index, weights, n_domains, loss, data.mixtures,
            data.mu, beta, data.layout,
        )  # fmt: skip
        rule = data.step
    step, separating = finite_step(step, l1_norm, lambda: data.Q[:, direction.domain].min())
    return step, "separating" if separating else rule, error


def advance(margins, directions, step: float) -> np.ndarray:
    """Figure 1, line 12: the margins of α_t = α_{t−1} + η_t e_{q,h}, a new array.

    Parameters
    ----------
    margins, directions : ndarray of shape (m, C)
        Y_ic f_c(x_i) and u_ic = Y_ic Q(q|x_i) h_c(x_i).
    step : float
        η_t.

    Returns
    -------
    ndarray of shape (m, C)
        Y_ic (f_c(x_i) + η_t u_ic / Y_ic) = margins + η_t u.

    Examples
    --------
    >>> advance(np.zeros((2, 1)), np.array([[1.0], [-1.0]]), 0.5).tolist()
    [[0.5], [-0.5]]
    """
    return margins + step * directions


def _try(data, margins, l1_norm, objective, round_number, direction, details):
    """The round's record if stepping along ``direction`` is taken, else None: the AdaBoost,
    C/√t and separating steps always are, the others if η > 0 lowers the objective."""
    directions = data.codes * data.Q[:, [direction.domain]] * training_values(
        direction.base, data.presorted)  # fmt: skip
    step, rule, error = step_along(data, margins, directions, direction, round_number, l1_norm)
    if rule not in ("separating", "constant_over_sqrt_t", "adaboost"):
        value = objective_along(
            step, margins, directions, data.domain_index, data.code_weights, data.n_domains,
            data.loss, data.mixtures, data.mu, float(data.beta),
        ) + float(data.beta) * l1_norm  # fmt: skip
        if not (step > 0 and value < objective):
            return None
    details = {**details, "rate": direction.rate, "step_rule": rule}
    if error is not None:
        details["error"] = error
    return RoundRecord(advance(margins, directions, step), direction.domain, direction.base, step,
                       STOP_SEPARATING if rule == "separating" else None, details)  # fmt: skip


def boost_round(data: RoundData, margins, l1_norm: float, round_number: int) -> RoundRecord:
    """One round of Figure 1 (lines 4–12) for every option (Φ, Λ, μ, β, step rule, classes).

    The directions of line 10 are tried by decreasing rate; the AdaBoost step takes the first
    (Lemma 1), the soft-max's single steepest coordinate is the only one (F_μ is smooth).
    With an exact step, a direction that does not lower F (at a tie of the hard max it may
    raise another active F_l) is passed over, then the steepest coordinate of F itself
    (:mod:`.steepest`) is tried; if none lowers F the record says why boosting stops.

    Parameters
    ----------
    data : RoundData
        The fit's points and options.
    margins : ndarray of shape (m, C)
        Y_ic f_c(x_i) of α_{t−1} (C = 1 binary, K multi-class); not modified.
    l1_norm : float
        ‖α_{t−1}‖₁.
    round_number : int
        t ≥ 1.

    Returns
    -------
    RoundRecord
        The term taken (if any), η_t, the new margins and the stop reason.

    Examples
    --------
    >>> from manytask.boost.stumps import presort
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> data = RoundData(presort(X), np.array([[-1.0], [1.0], [-1.0], [1.0]]), np.ones((4, 1)),
    ...                  np.zeros(4, dtype=int), np.full(4, 0.25), 1, "exponential", "adaboost")
    >>> record = boost_round(data, np.zeros((4, 1)), 0.0, 1)
    >>> record.domain, round(record.step, 4), record.stop, record.details["error"]
    (0, 0.5493, None, 0.25)
    """
    losses, vertex_losses, objective, active = losses_and_active(data, margins, l1_norm)
    details = {"losses": losses, "objective": objective, "active": active}
    if data.mixtures is not None:
        details["vertex_losses"] = vertex_losses
    if data.mu is not None:
        details["soft_weights"] = aggregate_weights(vertex_losses, data.mu)
    gradients = gradient_weights(data, margins)
    rows, details["direction_rule"] = _rows(data, vertex_losses, active)
    beta = float(data.beta)
    candidates = [d for d in steepest_directions(data, rows, gradients) if d.rate > beta]
    record = first_taken(
        candidates, data.mu is not None or data.step == "adaboost",
        lambda direction: _try(data, margins, l1_norm, objective, round_number, direction,
                               details),
    )  # fmt: skip
    if record is not None:
        return record
    if data.mu is None and active.size > 1 and data.step != "adaboost":
        direction = steepest_tied_direction(data, active, gradients)
        if direction is not None and direction.rate > beta:
            details["direction_rule"] = "steepest"
            record = _try(data, margins, l1_norm, objective, round_number, direction, details)
            if record is not None:
                return record
    return RoundRecord(margins, stop=stop_reason(data.step, data.mu, beta), details=details)
