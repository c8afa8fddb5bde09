"""DMSA's formulas: the combination h_z, z fitted without labels by DC programming (the
paper's setting) and, as our option, z fitted with labels (end of the module).

The setting of §6 of ``boosting-with-multiple-sources.txt`` for DMSA: one accurate predictor
h_k per source and unlabelled data, no labelled target data. Following Hoffman, Mohri & Zhang
(NeurIPS 2018, "Algorithms and theory for multiple-source adaptation") with the discriminative
densities of Cortes, Mohri, Suresh & Zhang (ICML 2021):

(1) w_k(x) = Q(k|x) / p_k ∝ D_k(x), since D_k(x) = Q(k|x) P(x) / p_k (Bayes; P the pooled
    input density, p_k = E_P[Q(k|x)] the domain prior; P(x) cancels below).
(2) h_z(x) = J⁺_z(x) / K_z(x), J⁺_z = Σ_j z_j w_j h_j, J⁻_z = Σ_j z_j w_j (1 − h_j),
    K_z = Σ_j z_j w_j = J⁺_z + J⁻_z (the distribution-weighted combination, h_j = P_j(+1|x)).
(3) No labels: the loss of h_z on D_k is estimated with h_k's prediction as the (soft) label,
    on unlabelled points U_k of source k that h_k did not see,
    L_k(z) = (1/|U_k|) Σ_{x∈U_k} ℓ(h_z(x), h_k(x)),
    ℓ(q, s) = −s log q − (1 − s) log(1 − q)   (cross-entropy).
(4) DC decomposition: −log h_z = −log J^±_z + log K_z, so L_k(z) = u_k(z) − v_k(z) with
    u_k(z) = −mean_{U_k}[h_k log J⁺_z + (1 − h_k) log J⁻_z],  v_k(z) = −mean_{U_k} log K_z,
    both convex in z (−log of a function linear in z).
(5) z = argmin_{z∈Δ, γ} γ  s.t.  u_k(z) − v_k(z) ≤ γ for every k, i.e. min_z max_k L_k(z):
    the z whose worst source loss is smallest, at which the losses of the sources that bind
    are equal (Hoffman et al.'s z with L(D_k, h_z) = γ on every k).
(6) DC algorithm (convex–concave procedure): at z_t replace v_k by its tangent
    v_k(z_t) + ∇v_k(z_t)·(z − z_t) ≤ v_k(z) and solve the convex programme
    min_{z∈Δ, γ} γ s.t. u_k(z) − v_k(z_t) − ∇v_k(z_t)·(z − z_t) ≤ γ (SLSQP); each step does
    not increase max_k L_k; stop when it decreases by less than ``tol``.

Hoffman et al.'s exact constraint set is reconstructed here from this description, not copied:
(5) is the min–max form of "the same loss on every source", which their guarantee
(L(D_λ, h_z) ≤ γ for every mixture λ) needs.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

__all__ = [
    "adaboost_probability",
    "dmsa_combination",
    "domain_log_losses",
    "fit_mixture_weights",
    "fit_mixture_weights_dc",
    "pseudo_label_losses",
]

# h_k(x) and h_z(x) are kept in [PROBABILITY_CLIP, 1 − PROBABILITY_CLIP] so logs stay finite.
PROBABILITY_CLIP = 1e-6


def dmsa_combination(z, domain_probabilities, domain_marginals, base_probabilities):
    """h_z(x) = Σ_k z_k [Q(k|x)/p_k] h_k(x) / Σ_k z_k [Q(k|x)/p_k], equations (1)–(2).

    Parameters
    ----------
    z : array-like
        (p,) mixture parameters on the simplex.
    domain_probabilities : numpy.ndarray
        (N, p) Q(k|x).
    domain_marginals : array-like
        (p,) the domain priors p_k.
    base_probabilities : numpy.ndarray
        (N, p) h_k(x) = P_k(y = +1 | x).

    Returns
    -------
    numpy.ndarray
        (N,) h_z(x) = P(y = +1 | x).

    Examples
    --------
    >>> Q, h = np.array([[0.75, 0.25]]), np.array([[1.0, 0.0]])
    >>> dmsa_combination([0.5, 0.5], Q, [0.5, 0.5], h).tolist()
    [0.75]
    """
    weights = np.asarray(z)[None, :] * domain_probabilities / np.asarray(domain_marginals)
    return np.sum(weights * base_probabilities, axis=1) / np.sum(weights, axis=1)


def pseudo_label_losses(z, domain_probabilities, domain_marginals, base_probabilities,
                        domain_index):  # fmt: skip
    """(u, v, ∇u, ∇v) of equation (4): u_k(z), v_k(z) and their gradients.

    Row i belongs to source ``domain_index[i]`` and carries the pseudo-label h_k(x_i) of its
    own source's predictor; L_k(z) = u_k(z) − v_k(z).

    Parameters
    ----------
    z : array-like
        (p,) mixture parameters (negative entries are taken as 0).
    domain_probabilities : numpy.ndarray
        (N, p) Q(k|x) on the unlabelled points.
    domain_marginals : array-like
        (p,) the domain priors p_k.
    base_probabilities : numpy.ndarray
        (N, p) h_k(x), clipped to [1e-6, 1 − 1e-6].
    domain_index : numpy.ndarray
        (N,) the source k of each row, every source present.

    Returns
    -------
    u, v : numpy.ndarray
        (p,) the convex parts u_k(z) and v_k(z).
    u_grad, v_grad : numpy.ndarray
        (p, p) their gradients, row k = ∇_z u_k or ∇_z v_k.

    Examples
    --------
    >>> Q, h = np.full((2, 2), 0.5), np.array([[0.5, 0.5], [0.5, 0.5]])
    >>> u, v, _, _ = pseudo_label_losses([0.5, 0.5], Q, [0.5, 0.5], h, np.array([0, 1]))
    >>> np.round(u - v, 6).tolist()  # L_k = log 2: h_z = 1/2 against pseudo-labels 1/2
    [0.693147, 0.693147]
    """
    z = np.maximum(np.asarray(z, dtype=float), 0.0)
    weights = domain_probabilities / np.asarray(domain_marginals)
    base = np.clip(base_probabilities, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    positive, negative = weights * base, weights * (1.0 - base)
    n_rows, n_domains = weights.shape
    pseudo = base[np.arange(n_rows), domain_index]
    j_pos, j_neg, k_all = positive @ z, negative @ z, weights @ z
    u_points = -(pseudo * np.log(j_pos) + (1.0 - pseudo) * np.log(j_neg))
    v_points = -np.log(k_all)
    u_grad_points = -(
        (pseudo / j_pos)[:, None] * positive + ((1.0 - pseudo) / j_neg)[:, None] * negative
    )
    v_grad_points = -weights / k_all[:, None]
    counts = np.bincount(domain_index, minlength=n_domains).astype(float)

    def per_source(values):
        return np.bincount(domain_index, weights=values, minlength=n_domains) / counts

    u, v = per_source(u_points), per_source(v_points)
    u_grad = np.column_stack([per_source(u_grad_points[:, j]) for j in range(n_domains)])
    v_grad = np.column_stack([per_source(v_grad_points[:, j]) for j in range(n_domains)])
    return u, v, u_grad, v_grad


def fit_mixture_weights_dc(domain_probabilities, domain_marginals, base_probabilities,
                           domain_index, max_iter: int = 50, tol: float = 1e-9):  # fmt: skip
    """z = argmin_{z∈Δ} max_k L_k(z) by the DC algorithm, equations (3)–(6); no labels.

    Starts at the uniform z. Every row of source k must come from data h_k did not see for
    L_k to estimate h_z's loss on D_k.

    Parameters
    ----------
    domain_probabilities : numpy.ndarray
        (N, p) Q(k|x) on the unlabelled points.
    domain_marginals : array-like
        (p,) the domain priors p_k.
    base_probabilities : numpy.ndarray
        (N, p) h_k(x) = P_k(y = +1 | x).
    domain_index : array-like
        (N,) the source k of each row, every source present.
    max_iter : int
        Most DC iterations (6).
    tol : float
        Stop when max_k L_k decreases by less than this.

    Returns
    -------
    z : numpy.ndarray
        (p,) the mixture parameters, on the simplex.
    losses : numpy.ndarray
        (p,) L_k(z) at the returned z.
    n_iter : int
        The DC iterations run.

    Examples
    --------
    >>> Q = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> h = np.array([[0.8, 0.8], [0.2, 0.2]])  # both predictors agree: every z is optimal
    >>> z, losses, n_iter = fit_mixture_weights_dc(Q, [0.5, 0.5], h, [0, 1])
    >>> np.round(z, 6).tolist(), np.round(losses, 4).tolist()
    ([0.5, 0.5], [0.5004, 0.5004])
    """
    domain_index = np.asarray(domain_index)
    n_domains = domain_probabilities.shape[1]
    args = (domain_probabilities, domain_marginals, base_probabilities, domain_index)
    z = np.full(n_domains, 1.0 / n_domains)
    u, v, _, v_grad = pseudo_label_losses(z, *args)
    worst = np.max(u - v)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        offset = -v + v_grad @ z  # constant of the tangent of −v_k at z_t

        def surrogate(point, offset=offset, v_grad=v_grad):
            u_point, _, u_grad, _ = pseudo_label_losses(point, *args)
            return u_point - v_grad @ point + offset, u_grad - v_grad

        # variables (z, γ): minimise γ s.t. γ − surrogate_k(z) ≥ 0, Σ z = 1, z ≥ 0
        constraints = [
            {
                "type": "ineq",
                "fun": lambda x: x[-1] - surrogate(x[:-1])[0],
                "jac": lambda x: np.column_stack([-surrogate(x[:-1])[1], np.ones(n_domains)]),
            },
            {
                "type": "eq",
                "fun": lambda x: np.array([x[:-1].sum() - 1.0]),
                "jac": lambda x: np.r_[np.ones(n_domains), 0.0][None, :],
            },
        ]
        start = np.r_[z, worst]
        result = minimize(
            lambda x: x[-1],
            start,
            jac=lambda x: np.r_[np.zeros(n_domains), 1.0],
            method="SLSQP",
            bounds=[(0.0, 1.0)] * n_domains + [(None, None)],
            constraints=constraints,
            options={"maxiter": 200, "ftol": 1e-12},
        )
        candidate = np.clip(result.x[:-1], 0.0, None)
        candidate /= candidate.sum()
        u_new, v_new, _, v_grad_new = pseudo_label_losses(candidate, *args)
        new_worst = np.max(u_new - v_new)
        if not new_worst < worst:  # the tangent majorises: no decrease means a DC stationary z
            break
        improvement = worst - new_worst
        z, u, v, v_grad, worst = candidate, u_new, v_new, v_grad_new, new_worst
        if improvement < tol:
            break
    return z, u - v, n_iter


# --------------------------------------------------------------------------- labelled variant


def adaboost_probability(decision) -> np.ndarray:
    """h_k(x) = P(y = +1 | x) = 1 / (1 + e^{−2 f(x)}), the logistic link of AdaBoost.

    AdaBoost's exponential loss is minimised by f = ½ log(P(+1|x)/P(−1|x)) (Friedman, Hastie
    & Tibshirani 2000, "Additive logistic regression", Lemma 1), so P(+1|x) = σ(2f). Clipped to
    [PROBABILITY_CLIP, 1 − PROBABILITY_CLIP].

    Parameters
    ----------
    decision : array-like
        AdaBoost's scores f(x).

    Returns
    -------
    numpy.ndarray
        σ(2f(x)), clipped, of the shape of ``decision``.

    Examples
    --------
    >>> adaboost_probability([0.0, 100.0]).tolist()
    [0.5, 0.999999]
    """
    probability = expit(2.0 * np.asarray(decision, dtype=float))
    return np.clip(probability, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)


def domain_log_losses(probabilities, y_positive, domain_index, n_domains) -> np.ndarray:
    """L_k(h) = (1/m_k) Σ_{i∈S_k} −[y_i log h(x_i) + (1 − y_i) log(1 − h(x_i))], y ∈ {0, 1}.

    The cross-entropy loss per source, the loss DMSA's mixture parameters are fitted for.

    Parameters
    ----------
    probabilities : numpy.ndarray
        (N,) h(x_i), clipped to [1e-6, 1 − 1e-6].
    y_positive : numpy.ndarray
        (N,) bools or {0, 1}: y_i = 1.
    domain_index : numpy.ndarray
        (N,) the source k of each row.
    n_domains : int
        The number of sources p; every one must have a row.

    Returns
    -------
    numpy.ndarray
        (p,) L_k(h).

    Examples
    --------
    >>> losses = domain_log_losses(np.array([0.5, 0.5, 0.5]), np.array([1, 0, 1]),
    ...                            np.array([0, 0, 1]), 2)
    >>> np.round(losses, 6).tolist()
    [0.693147, 0.693147]
    """
    probabilities = np.clip(probabilities, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    losses = -np.where(y_positive, np.log(probabilities), np.log1p(-probabilities))
    counts = np.bincount(domain_index, minlength=n_domains)
    return np.bincount(domain_index, weights=losses, minlength=n_domains) / counts


def _log_loss_gradients(z, domain_probabilities, domain_marginals, base_probabilities, y_pos,
                        domain_index, n_domains):  # fmt: skip
    """(p,) losses L_k(h_z) and (p, p) gradients ∂L_k/∂z_j.

    ∂h_z/∂z_j = w_j (h_j − h_z) / Σ_l z_l w_l with w_j = Q(j|x)/Q(j); ∂ℓ/∂h = (h − y)/(h(1 − h)).
    """
    weights = domain_probabilities / domain_marginals
    normaliser = weights @ z
    combined = np.sum(weights * z * base_probabilities, axis=1) / normaliser
    combined = np.clip(combined, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    losses = domain_log_losses(combined, y_pos, domain_index, n_domains)
    loss_slope = (combined - y_pos) / (combined * (1.0 - combined))
    point_gradients = (
        (loss_slope / normaliser)[:, None] * weights * (base_probabilities - combined[:, None])
    )
    counts = np.bincount(domain_index, minlength=n_domains)
    gradients = (
        np.vstack(
            [
                np.bincount(domain_index, weights=point_gradients[:, j], minlength=n_domains)
                for j in range(n_domains)
            ]
        ).T
        / counts[:, None]
    )
    return losses, gradients


def fit_mixture_weights(
    domain_probabilities,
    domain_marginals,
    base_probabilities,
    y_positive,
    domain_index,
    max_iter: int = 300,
    learning_rate: float = 1.0,
):
    """z = argmin_{z ∈ Δ} max_k L_k(h_z), L_k against the LABELS (``z_fit="labelled"``).

    Exponentiated subgradient descent on the simplex: z ← z ⊙ exp(−η_t ∇L_{k*}(z)),
    renormalised, with k* the worst source at z and η_t = learning_rate / √t; starts at the
    uniform z and returns the best iterate, so max_k L_k(h_z) never exceeds its value at
    the uniform z. Not the paper's setting, which has no labels: see
    :func:`fit_mixture_weights_dc`.

    Parameters
    ----------
    domain_probabilities : numpy.ndarray
        (N, p) Q(k|x) on the labelled points.
    domain_marginals : numpy.ndarray
        (p,) the domain priors p_k.
    base_probabilities : numpy.ndarray
        (N, p) h_k(x) = P_k(y = +1 | x).
    y_positive : numpy.ndarray
        (N,) bools or {0, 1}: y_i = 1.
    domain_index : numpy.ndarray
        (N,) the source k of each row, every source present.
    max_iter : int
        The number of subgradient steps.
    learning_rate : float
        η_1, the first step's size (relative to the gradient's largest entry).

    Returns
    -------
    z : numpy.ndarray
        (p,) the best iterate, on the simplex.
    losses : numpy.ndarray
        (p,) L_k(h_z) at the returned z.

    Examples
    --------
    >>> Q = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> h = np.array([[0.9, 0.1], [0.1, 0.9]])  # h_1 knows the labels everywhere
    >>> z, losses = fit_mixture_weights(Q, np.array([0.5, 0.5]), h, np.array([1, 0]),
    ...                                 np.array([0, 1]), max_iter=50)
    >>> bool(z[0] > 0.5), bool(losses.max() < 0.2)
    (True, True)
    """
    n_domains = domain_probabilities.shape[1]
    z = np.full(n_domains, 1.0 / n_domains)
    best_z, best_losses = z, None
    for iteration in range(1, max_iter + 1):
        losses, gradients = _log_loss_gradients(
            z, domain_probabilities, domain_marginals, base_probabilities, y_positive,
            domain_index, n_domains,
        )  # fmt: skip
        if best_losses is None or losses.max() < best_losses.max():
            best_z, best_losses = z, losses
        gradient = gradients[int(np.argmax(losses))]
        scale = np.max(np.abs(gradient))
        if scale == 0:
            break
        # the step is normalised by the gradient's size: exp() stays in range for any scale
        step = learning_rate / np.sqrt(iteration) / scale
        log_z = np.log(np.maximum(z, 1e-300)) - step * gradient
        z = np.exp(log_z - log_z.max())
        z /= z.sum()
    return best_z, best_losses
