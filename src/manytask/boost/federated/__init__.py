"""FEDMULTIBOOST (§5, Figure 2 of ``boosting-with-multiple-sources.txt``): protocol + transports.

The algorithm is separate from the transport:

- the client is one pure function, :func:`respond` (phase, shard, payload, what it kept →
  message, what it keeps), built on the client functions of :mod:`.client`
  (:func:`client_quantiles`, :func:`client_statistics`, :func:`client_edges`,
  :func:`client_losses_along`): model state + local shard → aggregate numbers only;
- the server is :class:`FederatedServer` (state α, selection of r clients and s candidate stumps
  per domain, direction and step from the aggregates; :func:`merge_quantiles`,
  :func:`section_search`) driven by :func:`setup_candidates` and :func:`run_rounds`
  (:mod:`.driver`), which never see how messages travel;
- a transport is a :class:`Transport` (:mod:`.protocol`: retries, counting what crosses the
  wire, the message log) that implements one method. :func:`simulate` runs the federation in
  process (:class:`InProcessTransport`, with injected faults for tests).

Two more transports, each behind an extra and imported only when used:
:mod:`manytask.boost.federated.flower` (``manytask[fed]``: a Flower ServerApp/ClientApp pair on
Flower's deployment runtime, and ``run_local_federation`` that starts a SuperLink and one SuperNode
per client on loopback) and :mod:`manytask.boost.federated.dask` (``manytask[dist]``:
:class:`~manytask.boost.federated.dask.DaskMultiBoostClassifier`, fitted on dask arrays, each
row chunk's sources served as clients by the worker that holds them).

Q is fitted centrally by the simulation (the paper assumes Q given to the server); its K′
numbers are paid at set-up only.

Protocol of one round t (binary, Φ = exp, Λ = the simplex, hard max):

1. ``losses`` → every selected client c: the state f_{t−1} (terms (k, j, θ, polarity, α));
   ← (m_c, Σ_i e^{−y_i f(x_i)}) = (m_c, m_c Φ_{k,c}); for Φ = exp this is also Z_{t,c}.
   The server forms F_k = Σ_{c∈C_k} m_c Φ_{k,c} / Σ_{c∈C_k} m_c (the m-weighted pool: with all
   clients it *is* eq. 4's F_k; Figure 2's unweighted Σ_c Φ_{k,c} is not, unless the m_c are
   equal) and the active set K_t.
2. ``edges`` → the clients of every l ∈ K_t: the s candidate indices of H_{t,k} for each
   k ∈ K_t (|K_t|·s + |K_t| numbers); ← edge_sums[k, r] = Σ_i e^{−y_i f(x_i)} y_i Q(k|x_i)
   h_{k,r}(x_i), |K_t|·s numbers; the row k = l is Figure 2's β_{t,c,r} = Z_{t,c}[1 − 2ε_{t,c,r}].
   Figure 2's direction: per active k the best r for |Σ_{c∈C_k} β_{t,c,r}| / Σ_{c∈C_k} m_c (the
   sign gives the polarity), tried by decreasing score. At a tie each of these may raise another
   active F_l (the zig-zag of :class:`~manytask.boost.MultiBoostClassifier`'s Notes: without a
   remedy the run stalls after 2–4 rounds on the test problems); the cross rows k ≠ l give the
   fallback MultiBoost also uses, the steepest coordinate argmax_{k,r,±} min_{l∈K_t} ±E_l(k, r).
   With |K_t| = 1 this is exactly Figure 2's message (s numbers).
3. ``line search``: F(α + η e) = max_l F_l is not known from one aggregate per client, since
   u_i = y_i Q(k|x_i) h(x_i) takes continuous values. Choice: the server sends a batch of
   ``line_search_batch`` trial steps η_1..η_b (+ the direction, 4 numbers), each selected client
   of every domain returns Σ_i a_i e^{−η u_i} and its slope −Σ_i a_i u_i e^{−η u_i} (2b
   numbers); the server brackets (16 steps per exchange), sections the interval where the
   right-derivative of max_l F_l changes sign, and checks F decreased (one step)
   (:func:`section_search`; measured 13–16 exchanges per round with b = 15, 23 with b = 3).

Wire cost per round and client (numbers; ``FederatedRun.history`` counts them): to the client
5t (the state, sent once per round and kept for the round) + (s + 1)|K_t| + Σ_exchanges (4 + b);
back 2 + s|K_t| + 2b·#exchanges. Set-up: d·L quantiles back, Σ_j #θ_j thresholds out (Q is
fitted once in the simulation and never re-sent, so K′ is paid at set-up only). The paper's
O((t + s)K + K′) server→client and O(p·s) client→server (summed over the domains' clients,
per client s) leave out the step: an exact line search adds O(b·#exchanges) each way, the
largest term in practice (measured, 3 domains × 10 clients, 48 candidates, t ≈ 20, b = 15:
≈ 440 numbers to and ≈ 490 from each client per round, ≈ 450 of them line search; b = 3 cuts
the numbers back to ≈ 165 per client at 23 exchanges instead of 15). A cheaper step (Lemma 1's
closed form from the β alone) would meet the paper's bound; not implemented here.

Soft-max (``mu``, §3) and the pooled baseline. With ``FederatedServer(..., mu=μ)``
(``simulate(..., mu=μ)``) a round descends F_μ = (1/μ) log Σ_k e^{μ F_k}: step 1 as above; in
step 2 the clients of every domain return the rows of every domain q (p + p·s numbers out, p·s
back per client) and the server takes the one steepest coordinate argmax_{q,r,±}
±Σ_l p_l E_l(q, r), p = softmax(μ F) (``MultiBoostClassifier(mu=μ)``'s direction, equal to it to
~1e-13 in α with all clients and all-midpoint candidates); step 3 is the same batched section
search on F_μ (``section_search(..., aggregate=soft_max_aggregate(μ))``). F_μ is smooth, so no
tie fallback is needed; the run stops when that coordinate does not decrease F_μ. It does not
stall where the hard max zig-zags (three test domains, 30 rounds: hard max 4 steps < 1e-6,
soft-max none < 0.1), at ≈ 430 numbers to and ≈ 510 from each client per round instead of
390/500 (3 domains × 10 clients, 48 candidates, b = 15; 13 line-search round trips instead of
16). ``simulate(..., pooled=True)`` is the FedAvg-style baseline: the same clients and protocol
with one domain and Q ≡ 1, so the server minimises Σ_c m_c Φ_c / Σ_c m_c, AdaBoost on the union
(equal to :class:`~manytask.boost.AdaBoost` to ~1e-14 in α).
"""

from .client import (
    ClientShard,
    ModelState,
    client_edges,
    client_losses_along,
    client_margins,
    client_min_probability,
    client_quantiles,
    client_scaled_losses,
    client_statistics,
)
from .driver import FederatedRun, fill_estimator, run_round, run_rounds, setup_candidates
from .protocol import (
    ClientFailure,
    InProcessTransport,
    Transport,
    respond,
    state_from_payload,
    state_to_payload,
)
from .server import FederatedServer, check_mu, merge_quantiles, section_search, soft_max_aggregate
from .simulation import as_estimator, make_shards, simulate

__all__ = [
    "ClientFailure",
    "ClientShard",
    "FederatedRun",
    "FederatedServer",
    "InProcessTransport",
    "Transport",
    "as_estimator",
    "fill_estimator",
    "ModelState",
    "check_mu",
    "client_edges",
    "client_losses_along",
    "client_margins",
    "client_min_probability",
    "client_quantiles",
    "client_scaled_losses",
    "client_statistics",
    "make_shards",
    "merge_quantiles",
    "respond",
    "run_round",
    "run_rounds",
    "section_search",
    "setup_candidates",
    "simulate",
    "soft_max_aggregate",
    "state_from_payload",
    "state_to_payload",
]
