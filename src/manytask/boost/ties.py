"""Two remedies for ties of the hard max in MULTIBOOST: the soft-max (§3) and the block step.

At a tie F_k = F_l the paper's direction for one active domain may raise the other, so
coordinate descent on F = max_k F_k zig-zags with shrinking steps (see
:class:`~manytask.boost.multiboost.MultiBoostClassifier`, Notes). Lives here:

- the soft-max F_μ = (1/μ) log Σ_k e^{μ F_k} of §3 on the default path (binary, Φ = exp):
  :func:`soft_max_objective`, :func:`soft_max_weights`, the combined stump weights of its
  steepest coordinate (:func:`soft_max_stump_weights`, derivation there) and its exact line
  search (:func:`soft_line_search_step`);
- the block step over one coordinate per tied function (``tie_step="block"``):
  :func:`block_step`.

Does not live here: Φ, Λ, the hard/soft aggregate of every option and the 1-D minimisers
(:mod:`.objective`), the default round's math (:mod:`.figure1`), the loop (:mod:`.rounds`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from .figure1 import coordinate_losses
from .objective import (
    aggregate_weights,
    agnostic_objective,
    minimise_along,
    phi_derivative,
    phi_domain_losses,
)

__all__ = [
    "block_step",
    "soft_line_search_step",
    "soft_max_objective",
    "soft_max_stump_weights",
    "soft_max_weights",
    "soft_objective_along",
]


def soft_max_objective(losses, mu) -> float:
    """F_μ = (1/μ) log Σ_k exp(μ F_k)  (§3, the soft-max replacing max_k F_k); ``mu=None``: max.

    Smooth and convex in α (log-sum-exp is convex and increasing in each F_k, each F_k is
    convex), and max_k F_k ≤ F_μ ≤ max_k F_k + (log p)/μ, so F_μ → F as μ → ∞.
    (:func:`~manytask.boost.objective.agnostic_objective` over the domains.)

    Examples
    --------
    >>> round(soft_max_objective([1.0, 1.0], mu=10.0), 6)  # 1 + log(2)/10
    1.069315
    """
    return agnostic_objective(losses, mu)


def soft_max_weights(losses, mu) -> np.ndarray:
    """p_k = ∂F_μ/∂F_k = exp(μ F_k) / Σ_l exp(μ F_l)  (the soft-max weights, sum to 1)."""
    return aggregate_weights(losses, float(mu))


def soft_max_stump_weights(scaled_losses, domain_index, Q, domain_weights) -> np.ndarray:
    """Row q: w^q_i = p_{k(i)} a_i Q(q|x_i), with a_i = c_i e^{−y_i f(x_i)}, k(i) ∋ i's domain.

    Derivation: along the coordinate e_{q,h} (the base function Q(q|·) h),
    −F_k'(α; e_{q,h}) = Σ_{i∈S_k} a_i y_i Q(q|x_i) h(x_i) = (Z_k/m_k)[1 − 2ε_{k,q,h}] with
    ε_{k,q,h} the cross error of Lemma 1, so by the chain rule the descent rate of F_μ is

        −F_μ'(α; e_{q,h}) = Σ_k p_k (Z_k/m_k)[1 − 2ε_{k,q,h}] = Σ_i w^q_i y_i h(x_i)
                          = Σ_i w^q_i − 2 Σ_i w^q_i 1{h(x_i) ≠ y_i}.

    It is linear in the per-domain errors, i.e. itself a weighted error with the combined
    weights w^q = Σ_k p_k (domain-k weights): for each q ONE :func:`best_stump` search with
    w^q finds the exact steepest stump, and the p rows together the steepest coordinate of
    F_μ over all (q, h). (Figure 1's score (Z_k/m_k)[1 − 2ε_{k,r}] is the diagonal q = k term.)
    """
    per_point = domain_weights[domain_index] * scaled_losses
    return (per_point[:, None] * Q).T


def soft_objective_along(step, scaled_losses, directional_margins, domain_index, n_domains, mu):
    """F_μ(α + η e) with F_l(α + η e) = Σ_{i∈S_l} a_i exp(−η u_i)."""
    losses = coordinate_losses(step, scaled_losses, directional_margins, domain_index, n_domains)
    return soft_max_objective(losses, mu)


def soft_line_search_step(scaled_losses, directional_margins, domain_index, n_domains, mu):
    """η = argmin_{η ≥ 0} F_μ(α + η e_{q,h}), exactly: the root of the slope.

    F_μ along a coordinate is smooth and convex, so its slope Σ_l p_l(η) F_l'(η) is
    non-decreasing and :func:`~manytask.boost.objective.minimise_along` finds its zero to a
    few ulps.
    ``inf`` if F_μ decreases without bound (u_i > 0 on every weighted point).
    """
    weighted = np.asarray(scaled_losses) > 0
    if np.any(weighted) and np.all(np.asarray(directional_margins)[weighted] > 0):
        return np.inf  # checked first: the slope underflows to 0 long before F_μ stops falling
    arguments = (scaled_losses, directional_margins, domain_index, n_domains)
    return minimise_along(
        lambda step: coordinate_losses(step, *arguments, with_slopes=True), float(mu)
    )


def block_step(base_margins, directions, domain_index, point_weights, n_domains,
               loss="exponential", mixtures=None, beta=0.0) -> np.ndarray:  # fmt: skip
    """η ∈ R^J_+ minimising max_v L_v(α + Σ_j η_j e_j) + β Σ_j η_j over a block of J coordinates.

    The tie remedy (``tie_step="block"``): at a tie of the hard max each active function's
    best coordinate increases the others, so single-coordinate steps stop at the next kink
    and shrink to 0 (zig-zag). Minimising over the cone spanned by one coordinate per active
    function lets all of them decrease together. Solved in epigraph form, min s + βΣη
    subject to s ≥ L_v(η) for every vertex v, by SLSQP with exact gradients
    ∂L_v/∂η_j = −Σ_k λ^v_k Σ_{i∈S_k} c_i Σ_c u^j_ic Φ'(−(y f + Σ_j η_j u^j)).
    ``directions`` has shape (J, m, C) or (J, m).
    """
    directions = np.asarray(directions, dtype=float)
    n_block, m = directions.shape[0], directions.shape[1]

    def losses_and_gradients(steps):
        shifted = base_margins + np.tensordot(steps, directions, axes=1)
        losses = phi_domain_losses(shifted, domain_index, point_weights, n_domains, loss)
        derivative = phi_derivative(-shifted, loss)
        per_point = -(directions * derivative[None]).reshape(n_block, m, -1).sum(axis=2)
        gradients = np.array(
            [np.bincount(domain_index, weights=point_weights * row, minlength=n_domains)
             for row in per_point]
        )  # fmt: skip
        if mixtures is not None:
            return mixtures @ losses, gradients @ mixtures.T
        return losses, gradients

    start_losses, _ = losses_and_gradients(np.zeros(n_block))
    n_vertices = start_losses.size
    penalty = np.full(n_block, float(beta))

    def constraint(z):
        return z[-1] - losses_and_gradients(z[:-1])[0]

    def constraint_jacobian(z):
        gradients = losses_and_gradients(z[:-1])[1]  # (J, V)
        return np.column_stack([-gradients.T, np.ones(n_vertices)])

    with np.errstate(over="ignore", invalid="ignore"):
        result = minimize(
            lambda z: z[-1] + penalty @ z[:-1],
            np.r_[np.zeros(n_block), start_losses.max()],
            jac=lambda z: np.r_[penalty, 1.0],
            constraints=[{"type": "ineq", "fun": constraint, "jac": constraint_jacobian}],
            bounds=[(0.0, 1e3)] * n_block + [(None, None)],
            method="SLSQP",
            options={"maxiter": 500, "ftol": 1e-15},
        )
    return np.clip(result.x[:-1], 0.0, None)
