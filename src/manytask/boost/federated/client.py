"""FEDMULTIBOOST's client side: the pure functions a client runs on its shard.

Lives here: :class:`ClientShard` (what a client keeps), :class:`ModelState` (f_{t−1} as sent
by the server), and the client functions :func:`client_quantiles` (set-up),
:func:`client_statistics` (Φ, Z), :func:`client_edges` (β) and :func:`client_losses_along`
(line search), each returning aggregate numbers only. Not here: the server
(:mod:`.server`), the transport and simulation (:mod:`.simulation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "TERM_SIZE",
    "ClientShard",
    "ModelState",
    "client_edges",
    "client_losses_along",
    "client_margins",
    "client_min_probability",
    "client_quantiles",
    "client_statistics",
]

TERM_SIZE = 5  # numbers per ensemble term: k, feature, threshold, polarity, α


@dataclass(frozen=True)
class ClientShard:
    """The data a client keeps: X, y ∈ {−1, +1}, its domain index and Q(·|x_i) (m, p)."""

    X: np.ndarray
    y: np.ndarray
    domain: int
    domain_probabilities: np.ndarray


@dataclass(frozen=True)
class ModelState:
    """f = Σ_t α_t Q(k_t|·) h_t (eq. 3) as arrays; what the server sends each round."""

    domains: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    features: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0))
    polarities: np.ndarray = field(default_factory=lambda: np.zeros(0))
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def with_term(self, domain, feature, threshold, polarity, step):
        """A new state with one more term (the old one is left untouched)."""
        return ModelState(
            np.append(self.domains, domain), np.append(self.features, feature),
            np.append(self.thresholds, threshold), np.append(self.polarities, polarity),
            np.append(self.steps, step),
        )  # fmt: skip

    @property
    def n_numbers(self) -> int:
        return TERM_SIZE * self.steps.size


def _stump_values(X, features, thresholds):
    """h(x) = +1 if x_j > θ else −1 for every (j, θ), shape (m, n)."""
    return np.where(X[:, features] > thresholds, 1.0, -1.0)


def client_margins(state: ModelState, shard: ClientShard) -> np.ndarray:
    """y_i f(x_i) = y_i Σ_t α_t Q(k_t|x_i) h_t(x_i) on the client's points  (eq. 3)."""
    values = _stump_values(shard.X, state.features, state.thresholds) * state.polarities
    terms = shard.domain_probabilities[:, state.domains] * values * state.steps
    return shard.y * terms.sum(axis=1)


def client_quantiles(shard: ClientShard, levels) -> dict:
    """Set-up message: (m_c, per-feature quantiles at ``levels``), d·L numbers, no points."""
    return {"n_points": shard.y.size, "quantiles": np.quantile(shard.X, levels, axis=0).T}


def client_statistics(state: ModelState, shard: ClientShard) -> dict:
    """Figure 2 lines 7–8 on one client: ``n_points`` m_c and ``loss_sum``
    Σ_i e^{−y_i f(x_i)} = m_c Φ_{k,c} (= Z_{t,c} for Φ = exp); two numbers.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> client_statistics(ModelState(), shard)
    {'n_points': 2, 'loss_sum': 2.0}
    """
    scaled = np.exp(-client_margins(state, shard))
    return {"n_points": shard.y.size, "loss_sum": float(scaled.sum())}


def client_edges(state: ModelState, shard: ClientShard, domains, features, thresholds) -> dict:
    """Figure 2 lines 15–16 on one client: ``edge_sums[q, r]`` =
    Σ_i e^{−y_i f(x_i)} y_i Q(k_q|x_i) h_{q,r}(x_i) for the candidates h_{q,r} = ±1{x_j > θ}
    of each asked domain k_q = ``domains[q]`` (``features``, ``thresholds``: (n_q, s)).
    With k_q = the client's domain these are β_{t,c,r} = Z_{t,c}[1 − 2ε_{t,c,r}]; the other
    rows are the cross edges −F_l'(α; e_{k_q,r}) of the steepest-coordinate fallback at ties.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> message = client_edges(ModelState(), shard, [0], np.array([[0]]), np.array([[0.5]]))
    >>> message["edge_sums"].tolist()
    [[2.0]]
    """
    scaled = np.exp(-client_margins(state, shard))
    features, thresholds = np.atleast_2d(features), np.atleast_2d(thresholds)
    edges = np.empty(features.shape)
    for q, k in enumerate(domains):
        weights = scaled * shard.y * shard.domain_probabilities[:, k]
        edges[q] = weights @ _stump_values(shard.X, features[q], thresholds[q])
    return {"edge_sums": edges}


def client_losses_along(state, shard, direction, steps) -> dict:
    """Σ_i a_i e^{−η u_i} and −Σ_i a_i u_i e^{−η u_i} at each trial η  (eq. 4 along e_{k,r}).

    a_i = e^{−y_i f(x_i)}, u_i = y_i Q(k|x_i) h(x_i); ``direction`` = (k, feature, θ, polarity).
    """
    domain, feature, threshold, polarity = direction
    scaled = np.exp(-client_margins(state, shard))
    values = polarity * np.where(shard.X[:, feature] > threshold, 1.0, -1.0)
    directional = shard.y * shard.domain_probabilities[:, domain] * values
    with np.errstate(over="ignore"):
        terms = scaled * np.exp(-np.outer(steps, directional))
    return {"loss_sums": terms.sum(axis=1), "slope_sums": -(terms @ directional)}


def client_min_probability(shard: ClientShard, domain: int) -> dict:
    """min_i Q(k|x_i) on the client (one number), for the finite step of a separating stump."""
    return {"min_probability": float(shard.domain_probabilities[:, domain].min())}
