"""The MULTIBOOST objective (eq. 4) and the quantities of one round of Figure 1: Φ and its
derivatives (§3), F_k, Λ's vertex losses, K_t (line 5), the hard and soft max (§3), ε_{t,k,r}
and the direction score (line 10).
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
    "mixture_losses",
    "objective_along",
    "phi",
    "phi_derivative",
    "phi_domain_losses",
    "phi_pieces_along",
    "weighted_error",
]

LOSSES = ("exponential", "logistic")
#: Relative tolerance of every tie (K_t of Figure 1, line 5; equal slopes; equal errors).
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
    """F_k(α) = Σ_{i∈S_k} c_i Φ(−y_i f(x_i))  (eq. 4), summed over any trailing axes of
    ``margins`` (multi-class codes)."""
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
    """L_v = Σ_k λ^v_k F_k for each vertex λ^v of Λ, so F = max_v L_v (eq. 4); F_k if Λ = Δ."""
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
    """A subgradient of agg_v L_v + βη: Σ_v ∂F/∂L_v · L_v' + β (hard max: the slope of one
    maximiser); ``inf`` on overflow."""
    if not (np.all(np.isfinite(vertex_losses)) and np.all(np.isfinite(vertex_slopes))):
        return np.inf  # overflow: some F_k → ∞, the objective is increasing there
    if mu is None:
        return float(vertex_slopes[int(np.argmax(vertex_losses))]) + beta
    return float(softmax(mu * vertex_losses) @ vertex_slopes) + beta


def phi_pieces_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                     loss="exponential"):  # fmt: skip
    """(F_k, dF_k/dη, d²F_k/dη²) at α + ηe as a (3, p) array (eq. 4 along one coordinate)."""
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


def weighted_error(distribution_mass, misclassified_mass):
    """ε_{t,k,r} = ½(1 − E_{i∼D_t(k,·)}[y_i Q(k|x_i) h_{k,r}(x_i)])  (Figure 1, caption).

    With w_i = D_t(k, i) Q(k|x_i): ε = ½(1 − Σ w) + Σ w 1{h ≠ y}, from Σ w and the
    :func:`~manytask.boost.stumps.best_stump` error.
    """
    return 0.5 * (1.0 - distribution_mass) + misclassified_mass


def direction_score(normaliser, error):
    """(Z_{t,k}/m_k)[1 − 2ε_{t,k,r}] = −F_k'(α_{t−1}; e_{k,r})  (§3, Figure 1 line 10)."""
    return normaliser * (1.0 - 2.0 * error)
