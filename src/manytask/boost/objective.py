"""The MULTIBOOST objective for every option of §3–4: Φ, Λ, soft-max, ℓ1, step rules.

Lives here, one function per formula of ``boosting-with-multiple-sources.txt``:

- the surrogate Φ (§3): :func:`phi` and :func:`phi_derivative`, exp (ADABOOST) or logistic
  Φ(u) = log₂(1 + eᵘ) (the base-2 logarithm makes Φ(−u) ≥ 1{u ≤ 0}, as §3 requires);
- F_k (eq. 4, :func:`phi_domain_losses`), the restricted mixture set Λ given by the vertices of
  its convex hull (:func:`mixture_losses`, :func:`check_mixtures`), the active set
  (:func:`active_domains`) and the aggregate over them, hard max or soft-max
  (:func:`agnostic_objective`, :func:`aggregate_weights`);
- the 1-D minimisers every exact step uses: :func:`minimise_convex` (bracket, then Brent on
  the values) and :func:`minimise_along` (bracket, then a safeguarded secant / Newton-at-kinks root
  search on the subgradient);
- the coordinate steps: exact line search on F(α + η e) + βη (:func:`objective_along`,
  :func:`slope_along`, :func:`penalised_line_search`), the minimiser of Lemma 1's bound
  (:func:`lemma1_step`, closed form where the bound's max is attained by one l, with the ℓ1
  penalty solved as a quadratic in e^η), and C/√t (:func:`constant_over_sqrt_t_step`).

Does not live here: the default round's per-equation functions (:mod:`.figure1`), the
soft-max of the default path and the block step (:mod:`.ties`), the boosting loop and
estimator (:mod:`.multiboost`, :mod:`.rounds`), the multi-class codes and vector stumps
(:mod:`.multiclass`), the stump search (:mod:`.stumps`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit, logsumexp, softmax

from .steps import TIE_RTOL, two_exponential_step

__all__ = [
    "LOSSES",
    "agnostic_objective",
    "active_domains",
    "aggregate_weights",
    "check_mixtures",
    "constant_over_sqrt_t_step",
    "lemma1_step",
    "aggregate_slope",
    "losses_and_slopes_along",
    "minimise_along",
    "minimise_convex",
    "mixture_losses",
    "objective_along",
    "penalised_line_search",
    "phi",
    "phi_derivative",
    "phi_domain_losses",
    "slope_along",
]

LOSSES = ("exponential", "logistic")
# Relative tolerance of "L_v(α) = F(α)" in the active set (Figure 1, line 5).
ACTIVE_RTOL = TIE_RTOL
_MAX_DOUBLINGS = 60
_LN2 = np.log(2.0)


def phi(u, loss: str = "exponential"):
    """Φ(u) = eᵘ or log₂(1 + eᵘ)  (§3: convex, increasing, Φ(−u) ≥ 1{u ≤ 0}).

    Examples
    --------
    >>> float(phi(0.0, "logistic")), float(phi(0.0))
    (1.0, 1.0)
    """
    u = np.asarray(u, dtype=float)
    if loss == "exponential":
        with np.errstate(over="ignore"):
            return np.exp(u)
    return np.logaddexp(0.0, u) / _LN2


def phi_derivative(u, loss: str = "exponential"):
    """Φ'(u) = eᵘ or σ(u)/ln 2, the weights of the distributions D_t (Figure 1, line 9)."""
    u = np.asarray(u, dtype=float)
    if loss == "exponential":
        with np.errstate(over="ignore"):
            return np.exp(u)
    return expit(u) / _LN2


def phi_domain_losses(margins, domain_index, point_weights, n_domains, loss="exponential"):
    """F_k(α) = Σ_{i∈S_k} c_i Φ(−y_i f(x_i))  (eq. 4 with Λ = Δ), c_i = 1/m_k by default.

    ``margins`` may be any shape whose first axis runs over the points (multi-class: (m, K),
    with c_i the weight of every entry of row i).
    """
    margins = np.asarray(margins, dtype=float)
    per_point = phi(-margins, loss).reshape(margins.shape[0], -1).sum(axis=1)
    return np.bincount(domain_index, weights=point_weights * per_point, minlength=n_domains)


def check_mixtures(mixtures, n_domains: int) -> np.ndarray | None:
    """Return Λ's hull vertices as a (v, p) array of simplex points (None = the simplex).

    Examples
    --------
    >>> check_mixtures([[0.5, 0.5], [1.0, 0.0]], 2).shape
    (2, 2)
    """
    if mixtures is None:
        return None
    try:
        vertices = np.array(mixtures, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"mixtures must be a numeric (v, p) array, got {mixtures!r}") from error
    if vertices.ndim == 1:
        vertices = vertices[None, :]
    if vertices.ndim != 2 or vertices.shape[1] != n_domains or vertices.shape[0] == 0:
        raise ValueError(
            f"mixtures must have shape (v, {n_domains}) with v >= 1 (one column per domain), "
            f"got {vertices.shape}"
        )
    if not np.all(np.isfinite(vertices)) or np.any(vertices < 0):
        raise ValueError(f"mixtures must be finite and >= 0, got {vertices.tolist()}")
    sums = vertices.sum(axis=1)
    if not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"every row of mixtures must sum to 1, got row sums {sums.tolist()}")
    return vertices / sums[:, None]


def mixture_losses(losses, mixtures) -> np.ndarray:
    """L_v = Σ_k λ^v_k F_k for each hull vertex λ^v of Λ  (eq. 4); F_k itself if Λ = Δ.

    max_{λ∈Λ} Σ_k λ_k F_k is linear in λ, so over the convex hull it is attained at a vertex:
    F(α) = max_v L_v.
    """
    losses = np.asarray(losses, dtype=float)
    return losses if mixtures is None else mixtures @ losses


def agnostic_objective(vertex_losses, mu=None) -> float:
    """F = max_v L_v (eq. 4), or the soft-max (1/μ) log Σ_v e^{μ L_v} of §3 when μ is set."""
    vertex_losses = np.asarray(vertex_losses, dtype=float)
    if not np.all(np.isfinite(vertex_losses)):
        return np.inf
    if mu is None:
        return float(vertex_losses.max())
    return float(logsumexp(mu * vertex_losses) / mu)


def aggregate_weights(vertex_losses, mu=None) -> np.ndarray:
    """∂F/∂L_v: the soft-max weights softmax(μ L) (sum to 1); with μ = None, the uniform
    weights of the active set {v : L_v = max L} (one element of the subdifferential)."""
    vertex_losses = np.asarray(vertex_losses, dtype=float)
    if mu is not None:
        return softmax(mu * vertex_losses)
    weights = np.zeros(vertex_losses.size)
    weights[active_domains(vertex_losses)] = 1.0
    return weights / weights.sum()


def active_domains(losses, rtol: float = ACTIVE_RTOL) -> np.ndarray:
    """K_t = {k : F_k(α_{t−1}) = F(α_{t−1})}, equality within ``rtol``  (Figure 1, line 5);
    also the active vertices {v : L_v = max L} with Λ's vertex losses.

    Examples
    --------
    >>> active_domains([0.5, 1.0, 1.0 - 1e-12]).tolist()
    [1, 2]
    """
    losses = np.asarray(losses)
    return np.flatnonzero(losses >= losses.max() * (1.0 - rtol))


def minimise_convex(function, upper: float = 1.0) -> float:
    """argmin_{η ≥ 0} of a convex ``function``: bracket doubling then bounded Brent.

    Returns ``inf`` if the function still decreases at η = 2**60 (unbounded descent). η = 0
    wins ties with the interior and the bracket end (no step unless it helps).
    """
    for _ in range(_MAX_DOUBLINGS):
        if function(upper) >= function(0.5 * upper):
            break
        upper *= 2.0
    else:
        return np.inf
    result = minimize_scalar(
        function, bounds=(0.0, upper), method="bounded", options={"xatol": 1e-12 * upper}
    )
    candidates = [0.0, float(result.x), upper]
    values = [function(step) for step in candidates]
    return candidates[int(np.argmin(values))]


def objective_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                    loss, mixtures, mu, beta):  # fmt: skip
    """F(α + η e) + β η: the penalised objective along one coordinate (eq. 4, §4)."""
    losses = phi_domain_losses(
        base_margins + step * directions, domain_index, point_weights, n_domains, loss
    )
    return agnostic_objective(mixture_losses(losses, mixtures), mu) + beta * step


def losses_and_slopes_along(step, base_margins, directions, domain_index, point_weights,
                            n_domains, loss, mixtures):  # fmt: skip
    """(L_v(α + η e), dL_v/dη) for every vertex v of Λ (every domain if Λ = Δ), with
    dF_k/dη = −Σ_{i∈S_k} c_i Σ_c u_ic Φ'(−(y f + η u))  (eq. 4 along one coordinate)."""
    shifted = base_margins + step * directions
    losses = phi_domain_losses(shifted, domain_index, point_weights, n_domains, loss)
    per_point = (-directions * phi_derivative(-shifted, loss)).reshape(shifted.shape[0], -1)
    slopes = np.bincount(
        domain_index, weights=point_weights * per_point.sum(axis=1), minlength=n_domains
    )
    return mixture_losses(losses, mixtures), mixture_losses(slopes, mixtures)


def aggregate_slope(vertex_losses, vertex_slopes, mu=None, beta=0.0) -> float:
    """A subgradient of agg_v L_v + βη from the L_v and their slopes: Σ_v ∂F/∂L_v · L_v' + β
    (the soft-max weights; for the hard max the slope of one maximising L_v, a valid
    subgradient, non-decreasing in η since the function is convex); ``inf`` on overflow."""
    if not (np.all(np.isfinite(vertex_losses)) and np.all(np.isfinite(vertex_slopes))):
        return np.inf  # overflow: some F_k → ∞, the objective is increasing there
    if mu is None:
        return float(vertex_slopes[int(np.argmax(vertex_losses))]) + beta
    return float(softmax(mu * vertex_losses) @ vertex_slopes) + beta


def slope_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                loss, mixtures, mu, beta):  # fmt: skip
    """A subgradient of η ↦ F(α + η e) + βη  (:func:`aggregate_slope` of
    :func:`losses_and_slopes_along`)."""
    pieces = losses_and_slopes_along(step, base_margins, directions, domain_index,
                                     point_weights, n_domains, loss, mixtures)  # fmt: skip
    return aggregate_slope(*pieces, mu, beta)


def _kink_step(lower, low, upper, high) -> float:
    """The trial point when a = argmax L(lower) ≠ b = argmax L(upper): the kink L_a = L_b.

    A Newton step on the smooth g = L_a − L_b from an end where rounding resolves g (the end
    with the larger |g| first): it converges superlinearly although the subgradient jumps at
    the kink. The midpoint if neither end gives a step inside the bracket, e.g. when the
    bracket starts at a tie (g(lower) ≈ 0, the zig-zag of the hard max).
    """
    a, b = int(np.argmax(low[0])), int(np.argmax(high[0]))
    resolution = 1e3 * np.finfo(float).eps * max(abs(low[0][a]), abs(high[0][b]))
    ends = [(lower, low[0][a] - low[0][b], low), (upper, high[0][a] - high[0][b], high)]
    for at, gap, pieces in sorted(ends, key=lambda end: -abs(end[1])):
        derivative = pieces[1][a] - pieces[1][b]
        if abs(gap) > resolution and derivative < 0 and lower < at - gap / derivative < upper:
            return at - gap / derivative
    return 0.5 * (lower + upper)


def minimise_along(pieces, mu=None, beta=0.0) -> float:
    """argmin_{η ≥ 0} agg_v L_v(η) + βη for convex L_v, with ``pieces(η) = (L_v(η), L_v'(η))``.

    The aggregate is the max (``mu=None``) or the soft-max of :func:`agnostic_objective`;
    the objective is convex, so its subgradient (:func:`aggregate_slope`) is non-decreasing.
    0 if the slope at 0 is ≥ 0; else [0, b] is doubled until the slope at b is ≥ 0 (``inf`` if
    it never is: unbounded descent). The bracket [a, b] (slope(a) < 0 ≤ slope(b)) is then
    shrunk to a few ulps. Each trial point: where the hard max's maximiser changes inside the
    bracket, a Newton step on the crossing L_a = L_b (the kink, where the minimum usually
    sits, found superlinearly although the subgradient jumps there); elsewhere the secant
    root of the end slopes with the Illinois rule; a bisection when two trial points have
    not halved the bracket; every point at least 2 ulps inside, so each one shrinks it. Of
    the two final ends the lower objective wins.
    """

    def evaluate(step):
        values, slopes = pieces(step)
        return values, slopes, aggregate_slope(values, slopes, mu, beta)

    def objective(step):
        return agnostic_objective(pieces(step)[0], mu) + beta * step

    low = evaluate(0.0)
    if low[2] >= 0:
        return 0.0
    lower, upper = 0.0, 1.0
    for _ in range(_MAX_DOUBLINGS):
        high = evaluate(upper)
        if high[2] >= 0:
            break
        lower, low, upper = upper, high, 2.0 * upper
    else:
        return np.inf
    if high[2] == 0:
        return upper
    eps = np.finfo(float).eps
    last, previous = (upper, high[2]), (lower, low[2])  # the last two trial points
    widths, nudged = [upper - lower], False
    for _ in range(200):
        tolerance, middle = 2.0 * eps * upper, 0.5 * (lower + upper)
        if middle <= lower or middle >= upper:
            break  # adjacent floats
        if upper - lower <= 4.0 * tolerance or (len(widths) > 3 and widths[-1] > 0.5 * widths[-4]):
            step = middle  # the last few ulps, or three trial points did not halve the bracket
        else:
            if mu is None and np.argmax(low[0]) != np.argmax(high[0]):
                step = _kink_step(lower, low, upper, high)
            else:
                if last[1] != previous[1]:
                    step = last[0] - last[1] * (last[0] - previous[0]) / (last[1] - previous[1])
                if last[1] == previous[1] or not lower < step < upper:
                    step = lower - low[2] * (upper - lower) / (high[2] - low[2])
            if abs(step - last[0]) > tolerance:
                nudged = False
            elif nudged:  # the last nudge did not close the bracket: the estimate is stuck
                step, nudged = middle, False
            else:  # converged from one side: step past the root to close the bracket there
                step = last[0] + (2.0 * tolerance if last[0] == lower else -2.0 * tolerance)
                nudged = True
            step = min(max(step, lower + tolerance), upper - tolerance)
        current = evaluate(step)
        if current[2] == 0:
            return step
        if current[2] < 0:
            lower, low = step, current
        else:
            upper, high = step, current
        previous, last = last, (step, current[2])
        widths.append(upper - lower)
    return lower if objective(lower) <= objective(upper) else upper


def penalised_line_search(base_margins, directions, domain_index, point_weights, n_domains,
                          loss="exponential", mixtures=None, mu=None, beta=0.0):  # fmt: skip
    """η = argmin_{η≥0} F(α + η e_{q,r}) + β η, exactly  (Figure 1, line 11; §4 with ℓ1).

    F along a coordinate is convex (a max or log-sum-exp of convex increasing combinations of
    the convex F_k), so the root of its subgradient (:func:`slope_along`) is its minimum,
    found to a few ulps by :func:`minimise_along`. The penalty adds βη
    because the steps are ≥ 0 and α ≥ 0, so ‖α + η e‖₁ = ‖α‖₁ + η. Returns ``inf`` if the
    objective decreases without bound (a separating direction with β = 0).
    """
    weighted = np.broadcast_to(point_weights.reshape(-1, *([1] * (directions.ndim - 1))),
                               directions.shape) > 0  # fmt: skip
    if beta == 0 and np.all(directions[weighted] > 0):
        return np.inf
    arguments = (base_margins, directions, domain_index, point_weights, n_domains, loss,
                 mixtures)  # fmt: skip
    return minimise_along(lambda step: losses_and_slopes_along(step, *arguments), mu, beta)


def lemma1_step(plus, minus, mixtures=None, mu=None, beta=0.0) -> tuple[float, bool]:
    """η minimising Lemma 1's bound: agg_v Σ_k λ^v_k (A_k e^{−η} + B_k e^{η}) + βη, η ≥ 0.

    Φ = exp and |u_i| ≤ 1 (u_i = y_i Q(q|x_i) h(x_i)) give e^{−ηu} ≤ ½(1+u)e^{−η} + ½(1−u)e^{η}
    (convexity, §3), so F_l(α + ηe) ≤ A_l e^{−η} + B_l e^{η} with A_l = Σ_{S_l} a_i (1+u_i)/2 =
    (Z_l/m_l)(1 − ε_{t,l,q,r}), B_l = (Z_l/m_l) ε_{t,l,q,r} (Lemma 1). The bound equals F at
    η = 0, so its minimiser never increases F (majorise-minimise). When one term l attains the
    max at its own minimiser that minimiser is the answer, in closed form (½ log((1 − ε)/ε)
    for β = 0: AdaBoost's step); otherwise a 1-D convex search. Returns (η, closed_form?).
    With one domain and |u_i| = 1 the bound is F itself, so this is the exact line search.
    """
    plus, minus = np.asarray(plus, dtype=float), np.asarray(minus, dtype=float)
    plus_v, minus_v = mixture_losses(plus, mixtures), mixture_losses(minus, mixtures)

    def bound(step):
        with np.errstate(over="ignore"):
            values = plus_v * np.exp(-step) + minus_v * np.exp(step)
        return agnostic_objective(values, mu) + beta * step

    if mu is None or plus_v.size == 1:
        for vertex in np.argsort(-(plus_v + minus_v), kind="stable"):
            step = two_exponential_step(plus_v[vertex], minus_v[vertex], beta)
            if not np.isfinite(step):
                continue
            values = plus_v * np.exp(-step) + minus_v * np.exp(step)
            if values[vertex] >= values.max():
                return step, True
    return minimise_convex(bound), False


def constant_over_sqrt_t_step(round_number: int, constant: float) -> float:
    """η_t = C/√t  (the diminishing step of §6; t counts from 1)."""
    return constant / np.sqrt(round_number)
