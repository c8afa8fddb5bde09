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

    Parameters
    ----------
    u : array_like
        The arguments, −y_i f(x_i) in eq. (4).
    loss : {"exponential", "logistic"}
        Which Φ.

    Returns
    -------
    ndarray
        Φ(u), elementwise (``inf`` where eᵘ overflows).

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
    """Φ'(u) = eᵘ or σ(u)/ln 2, the weights of the distributions D_t (Figure 1, line 9).

    Parameters
    ----------
    u : array_like
        The arguments.
    loss : {"exponential", "logistic"}
        Which Φ.

    Returns
    -------
    ndarray
        Φ'(u), elementwise.

    Examples
    --------
    >>> float(phi_derivative(0.0)), round(float(phi_derivative(0.0, "logistic")), 4)
    (1.0, 0.7213)
    """
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
    """F_k(α) = Σ_{i∈S_k} c_i Φ(−y_i f(x_i))  (eq. 4), per domain.

    Parameters
    ----------
    margins : array_like of shape (m,) or (m, K)
        y_i f(x_i); trailing axes (multi-class codes) are summed over.
    domain_index : ndarray of shape (m,)
        The domain k of each point, in 0..p−1.
    point_weights : ndarray of shape (m,)
        c_i (1/m_k for the paper's F_k).
    n_domains : int
        p.
    loss : {"exponential", "logistic"}
        Which Φ.

    Returns
    -------
    ndarray of shape (p,)
        F_k for each domain.

    Examples
    --------
    >>> phi_domain_losses([0.0, 0.0, 0.0], np.array([0, 1, 1]), np.ones(3), 2).tolist()
    [1.0, 2.0]
    """
    margins = np.asarray(margins, dtype=float)
    per_point = phi(-margins, loss).reshape(margins.shape[0], -1).sum(axis=1)
    return np.bincount(domain_index, weights=point_weights * per_point, minlength=n_domains)


def check_mixtures(mixtures, n_domains: int) -> np.ndarray | None:
    """Return Λ's hull vertices as a (v, p) array of simplex points (None = the simplex).

    Parameters
    ----------
    mixtures : array_like of shape (v, p) or (p,), or None
        The vertices λ^v of the mixture set Λ: each row ≥ 0 and summing to 1.
    n_domains : int
        p.

    Returns
    -------
    ndarray of shape (v, p) or None
        The rows renormalised to sum to 1 exactly; None when ``mixtures`` is None.

    Raises
    ------
    ValueError
        If ``mixtures`` is not numeric, has the wrong shape, is negative or not finite, or a
        row does not sum to 1.

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
    """L_v = Σ_k λ^v_k F_k for each vertex λ^v of Λ, so F = max_v L_v (eq. 4); F_k if Λ = Δ.

    Parameters
    ----------
    losses : array_like of shape (p,)
        F_k.
    mixtures : ndarray of shape (v, p) or None
        Λ's vertices (:func:`check_mixtures`); None for the whole simplex.

    Returns
    -------
    ndarray of shape (v,)
        The vertex losses L_v (``losses`` itself when ``mixtures`` is None).

    Examples
    --------
    >>> mixture_losses([1.0, 3.0], np.array([[0.5, 0.5]])).tolist()
    [2.0]
    """
    losses = np.asarray(losses, dtype=float)
    return losses if mixtures is None else mixtures @ losses


def agnostic_objective(vertex_losses, mu=None) -> float:
    """F = max_v L_v (eq. 4), or the soft-max (1/μ) log Σ_v e^{μ L_v} of §3 when μ is set.

    Parameters
    ----------
    vertex_losses : array_like of shape (v,)
        L_v (:func:`mixture_losses`).
    mu : float or None
        The soft-max temperature μ > 0; None for the hard max.

    Returns
    -------
    float
        F; ``inf`` if some L_v is not finite.

    Examples
    --------
    >>> agnostic_objective([1.0, 2.0]), round(agnostic_objective([1.0, 1.0], mu=1.0), 4)
    (2.0, 1.6931)
    """
    vertex_losses = np.asarray(vertex_losses, dtype=float)
    if not np.all(np.isfinite(vertex_losses)):
        return np.inf
    if mu is None:
        return float(vertex_losses.max())
    return float(logsumexp(mu * vertex_losses) / mu)


def aggregate_weights(vertex_losses, mu=None) -> np.ndarray:
    """∂F/∂L_v: the soft-max weights softmax(μ L), or the hard max's active set.

    With μ = None, the uniform weights of the active set {v : L_v = max L} (one element of the
    subdifferential).

    Parameters
    ----------
    vertex_losses : array_like of shape (v,)
        L_v.
    mu : float or None
        The soft-max temperature μ; None for the hard max.

    Returns
    -------
    ndarray of shape (v,)
        Non-negative weights summing to 1.

    Examples
    --------
    >>> aggregate_weights([1.0, 2.0, 2.0]).tolist()
    [0.0, 0.5, 0.5]
    """
    vertex_losses = np.asarray(vertex_losses, dtype=float)
    if mu is not None:
        return softmax(mu * vertex_losses)
    weights = np.zeros(vertex_losses.size)
    weights[active_domains(vertex_losses)] = 1.0
    return weights / weights.sum()


def active_domains(losses, rtol: float = TIE_RTOL) -> np.ndarray:
    """K_t = {k : F_k(α_{t−1}) = F(α_{t−1})}, equality within ``rtol``  (Figure 1, line 5).

    Also the active vertices {v : L_v = max L} with Λ's vertex losses.

    Parameters
    ----------
    losses : array_like of shape (p,)
        F_k (or L_v), non-negative.
    rtol : float
        Relative tolerance of the tie.

    Returns
    -------
    ndarray of int
        The indices within ``rtol`` of the maximum, increasing.

    Examples
    --------
    >>> active_domains([0.5, 1.0, 1.0 - 1e-12]).tolist()
    [1, 2]
    """
    losses = np.asarray(losses)
    return np.flatnonzero(losses >= losses.max() * (1.0 - rtol))


def objective_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                    loss, mixtures, mu, beta):  # fmt: skip
    """F(α + η e) + β η: the penalised objective along one coordinate (eq. 4, §4).

    Parameters
    ----------
    step : float
        η.
    base_margins : ndarray of shape (m,) or (m, K)
        y_i f(x_i) at α.
    directions : ndarray of the shape of ``base_margins``
        y_i Q(k|x_i) h(x_i), the margins' change per unit step along e.
    domain_index : ndarray of shape (m,)
        The domain of each point.
    point_weights : ndarray of shape (m,)
        c_i.
    n_domains : int
        p.
    loss : {"exponential", "logistic"}
        Which Φ.
    mixtures : ndarray of shape (v, p) or None
        Λ's vertices; None for the simplex.
    mu : float or None
        Soft-max temperature; None for the hard max.
    beta : float
        The ℓ1 penalty β.

    Returns
    -------
    float
        The objective at α + ηe.

    Examples
    --------
    >>> objective_along(0.0, np.zeros(2), np.ones(2), np.array([0, 1]), np.ones(2), 2,
    ...                 "exponential", None, None, 0.0)
    1.0
    """
    losses = phi_domain_losses(
        base_margins + step * directions, domain_index, point_weights, n_domains, loss
    )
    return agnostic_objective(mixture_losses(losses, mixtures), mu) + beta * step


def aggregate_slope(vertex_losses, vertex_slopes, mu=None, beta=0.0) -> float:
    """A subgradient of agg_v L_v + βη: Σ_v ∂F/∂L_v · L_v' + β.

    With the hard max, the slope of one maximiser.

    Parameters
    ----------
    vertex_losses : ndarray of shape (v,)
        L_v.
    vertex_slopes : ndarray of shape (v,)
        dL_v/dη.
    mu : float or None
        Soft-max temperature; None for the hard max.
    beta : float
        The ℓ1 penalty β.

    Returns
    -------
    float
        The slope; ``inf`` on overflow (some L_v or slope not finite).

    Examples
    --------
    >>> aggregate_slope(np.array([1.0, 2.0]), np.array([-1.0, -3.0]), beta=0.5)
    -2.5
    """
    if not (np.all(np.isfinite(vertex_losses)) and np.all(np.isfinite(vertex_slopes))):
        return np.inf  # overflow: some F_k → ∞, the objective is increasing there
    if mu is None:
        return float(vertex_slopes[int(np.argmax(vertex_losses))]) + beta
    return float(softmax(mu * vertex_losses) @ vertex_slopes) + beta


def phi_pieces_along(step, base_margins, directions, domain_index, point_weights, n_domains,
                     loss="exponential"):  # fmt: skip
    """(F_k, dF_k/dη, d²F_k/dη²) at α + ηe as a (3, p) array (eq. 4 along one coordinate).

    Parameters
    ----------
    step : float
        η.
    base_margins : ndarray of shape (m,) or (m, K)
        y_i f(x_i) at α.
    directions : ndarray of the shape of ``base_margins``
        The margins' change per unit step.
    domain_index : ndarray of shape (m,)
        The domain of each point.
    point_weights : ndarray of shape (m,)
        c_i.
    n_domains : int
        p.
    loss : {"exponential", "logistic"}
        Which Φ.

    Returns
    -------
    ndarray of shape (3, p)
        The losses and their first and second derivatives in η.

    Examples
    --------
    >>> phi_pieces_along(0.0, np.zeros(2), np.array([1.0, -1.0]), np.array([0, 0]),
    ...                  np.ones(2), 1).tolist()
    [[2.0], [0.0], [2.0]]
    """
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

    Parameters
    ----------
    distribution_mass : float or ndarray
        Σ_i w_i.
    misclassified_mass : float or ndarray
        Σ_i w_i 1{h(x_i) ≠ y_i}.

    Returns
    -------
    float or ndarray
        ε_{t,k,r}.

    Examples
    --------
    >>> weighted_error(0.5, 0.125)
    0.375
    """
    return 0.5 * (1.0 - distribution_mass) + misclassified_mass


def direction_score(normaliser, error):
    """(Z_{t,k}/m_k)[1 − 2ε_{t,k,r}] = −F_k'(α_{t−1}; e_{k,r})  (§3, Figure 1 line 10).

    Parameters
    ----------
    normaliser : float or ndarray
        Z_{t,k}/m_k.
    error : float or ndarray
        ε_{t,k,r} (:func:`weighted_error`).

    Returns
    -------
    float or ndarray
        The score maximised over (k, r) on line 10.

    Examples
    --------
    >>> direction_score(2.0, 0.25)
    1.0
    """
    return normaliser * (1.0 - 2.0 * error)
