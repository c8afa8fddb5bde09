"""The MULTIBOOST objective (§3–4, eq. 4) and the quantities of one round of Figure 1.

One function per formula of ``boosting-with-multiple-sources.txt``: the surrogate Φ (§3:
exp, or logistic log₂(1 + eᵘ) so that Φ(−u) ≥ 1{u ≤ 0}) and its derivatives; F_k (eq. 4);
the vertex losses of the restricted mixture set Λ; the active set K_t (line 5); the hard max
and the soft-max F_μ of §3 with their weights; D_t and Z_{t,k}/m_k (lines 7–9); ε_{t,k,r} and
the direction score (line 10); F_l along one coordinate with its first two derivatives.
The step rules are in :mod:`.steps`, the 1-D solver in :mod:`.line_search`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp, softmax

__all__ = [
    "LOSSES",
    "TIE_RTOL",
    "active_domains",
    "aggregate_slope",
    "aggregate_weights",
    "agnostic_objective",
    "check_mixtures",
    "direction_score",
    "domain_losses",
    "mixture_losses",
    "objective_along",
    "phi",
    "phi_derivative",
    "phi_domain_losses",
    "phi_pieces_along",
    "round_distributions",
    "scaled_exponential_losses",
    "soft_max_stump_weights",
    "weighted_error",
]

LOSSES = ("exponential", "logistic")
#: The relative tolerance of every tie: the active set K_t (Figure 1, line 5), the tied
#: slope of the exact line search, and stumps of equal weighted error, so that rounding never
#: decides between them.
TIE_RTOL = 1e-9
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


def phi_second_derivative(u, loss: str = "exponential"):
    """Φ''(u) = eᵘ or σ(u)(1 − σ(u))/ln 2."""
    u = np.asarray(u, dtype=float)
    if loss == "exponential":
        with np.errstate(over="ignore"):
            return np.exp(u)
    return expit(u) * expit(-u) / _LN2


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


def active_domains(losses, rtol: float = TIE_RTOL) -> np.ndarray:
    """K_t = {k : F_k(α_{t−1}) = F(α_{t−1})}, equality within ``rtol``  (Figure 1, line 5);
    also the active vertices {v : L_v = max L} with Λ's vertex losses.

    Examples
    --------
    >>> active_domains([0.5, 1.0, 1.0 - 1e-12]).tolist()
    [1, 2]
    """
    losses = np.asarray(losses)
    return np.flatnonzero(losses >= losses.max() * (1.0 - rtol))


def objective_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                    loss, mixtures, mu, beta):  # fmt: skip
    """F(α + η e) + β η: the penalised objective along one coordinate (eq. 4, §4)."""
    losses = phi_domain_losses(
        base_margins + step * directions, domain_index, point_weights, n_domains, loss
    )
    return agnostic_objective(mixture_losses(losses, mixtures), mu) + beta * step


def aggregate_slope(vertex_losses, vertex_slopes, mu=None, beta=0.0) -> float:
    """A subgradient of agg_v L_v + βη from the L_v and their slopes: Σ_v ∂F/∂L_v · L_v' + β
    (the soft-max weights; for the hard max the slope of one maximising L_v, a valid
    subgradient, non-decreasing in η since the function is convex); ``inf`` on overflow."""
    if not (np.all(np.isfinite(vertex_losses)) and np.all(np.isfinite(vertex_slopes))):
        return np.inf  # overflow: some F_k → ∞, the objective is increasing there
    if mu is None:
        return float(vertex_slopes[int(np.argmax(vertex_losses))]) + beta
    return float(softmax(mu * vertex_losses) @ vertex_slopes) + beta


def phi_pieces_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                     loss="exponential"):  # fmt: skip
    """(F_k, dF_k/dη, d²F_k/dη²) at α + ηe for every domain k, a (3, p) array (eq. 4 along
    one coordinate): F_k = Σ_{i∈S_k} c_i Σ_c Φ(−(Y_ic f_c + η u_ic)), dF_k/dη = −Σ c_i Σ_c u_ic
    Φ'(·) and d²F_k/dη² = Σ c_i Σ_c u_ic² Φ''(·)."""
    shifted = base_margins + step * directions
    m = shifted.shape[0]
    rows = (
        phi(-shifted, loss),
        -directions * phi_derivative(-shifted, loss),
        directions * directions * phi_second_derivative(-shifted, loss),
    )
    return np.array([
        np.bincount(domain_index, weights=point_weights * row.reshape(m, -1).sum(axis=1),
                    minlength=n_domains)
        for row in rows
    ])  # fmt: skip


def domain_losses(margins, domain_index, point_weights, n_domains) -> np.ndarray:
    """F_k(α) = Σ_{i ∈ S_k} c_i exp(−y_i f(x_i)) for every k  (§3, F = max_k F_k, eq. 4).

    ``margins`` are y_i f(x_i) with f the Q-ensemble of eq. (3); ``point_weights`` c_i are
    1/m_k (no sample weights) or w_i / Σ_{j ∈ S_k} w_j, so each F_k is a weighted mean.

    Examples
    --------
    >>> domain_losses(np.zeros(3), np.array([0, 0, 1]), np.array([0.5, 0.5, 1.0]), 2)
    array([1., 1.])
    """
    return phi_domain_losses(margins, domain_index, point_weights, n_domains, "exponential")


def scaled_exponential_losses(margins, point_weights) -> np.ndarray:
    """a_i = c_i exp(−y_i f(x_i)), the terms of F_k = Σ_{i∈S_k} a_i (eq. 4) and, Φ = exp
    being its own derivative, the unnormalised D_t(k, i) of Figure 1 (line 9).

    Examples
    --------
    >>> scaled_exponential_losses(np.array([0.0, np.log(2.0)]), np.array([0.5, 0.5])).tolist()
    [0.5, 0.25]
    """
    return point_weights * np.exp(-margins)


def round_distributions(margins, domain_index, point_weights, n_domains, scaled_losses=None):
    """D_t(k, i) = c_i Φ'(−y_i f_{t−1}(x_i)) / (Z_{t,k}/m_k) on S_k, Φ = exp  (Figure 1, l. 7–9).

    Returns the (m,) array D (D_t(k, ·) is D restricted to S_k) and the (p,) array
    Z_{t,k}/m_k, which for Φ = exp equals F_k(α_{t−1}). ``scaled_losses``: the a_i of
    :func:`scaled_exponential_losses` if already computed.
    """
    unnormalised = (
        scaled_exponential_losses(margins, point_weights) if scaled_losses is None
        else scaled_losses
    )  # fmt: skip
    normalisers = np.bincount(domain_index, weights=unnormalised, minlength=n_domains)
    return unnormalised / normalisers[domain_index], normalisers


def weighted_error(distribution_mass, misclassified_mass):
    """ε_{t,k,r} = ½(1 − E_{i∼D_t(k,·)}[y_i Q(k|x_i) h_{k,r}(x_i)])  (Figure 1, caption).

    With w_i = D_t(k, i) Q(k|x_i): ε = ½(1 − Σ_i w_i) + Σ_i w_i 1{h(x_i) ≠ y_i}; the arguments
    are Σ w and the :func:`~manytask.boost.stumps.best_stump` error Σ w 1{h ≠ y}.
    """
    return 0.5 * (1.0 - distribution_mass) + misclassified_mass


def direction_score(normaliser, error):
    """(Z_{t,k}/m_k)[1 − 2ε_{t,k,r}] = −F_k'(α_{t−1}; e_{k,r})  (§3, Figure 1 line 10)."""
    return normaliser * (1.0 - 2.0 * error)


def soft_max_stump_weights(scaled_losses, domain_index, Q, domain_weights) -> np.ndarray:
    """Row q: w^q_i = p_{k(i)} a_i Q(q|x_i), the weights of the steepest stump of F_μ along
    e_{q,h} (§3), with a_i = c_i e^{−y_i f(x_i)} and p the soft-max weights.

    By the chain rule −F_μ'(α; e_{q,h}) = Σ_k p_k (Z_k/m_k)[1 − 2ε_{k,q,h}] = Σ_i w^q_i y_i h(x_i)
    = Σ_i w^q_i − 2 Σ_i w^q_i 1{h(x_i) ≠ y_i}: one weighted-error search per q finds the
    steepest stump (Figure 1's score is the diagonal q = k term).
    """
    per_point = domain_weights[domain_index] * scaled_losses
    return (per_point[:, None] * Q).T
