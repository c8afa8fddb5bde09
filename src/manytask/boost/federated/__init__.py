"""FEDMULTIBOOST (§5, Figure 2 of ``boosting-with-multiple-sources.txt``): protocol + transports.

The algorithm is separate from the transport:

- the client is one pure function, :func:`respond` (phase, shard, payload, what it kept →
  message, what it keeps), built on the client functions of :mod:`.client`
  (:func:`client_quantiles`, :func:`client_statistics`, :func:`client_edges`,
  :func:`client_losses_along`) and of :mod:`.domain_client` (Q's moments, loss and gradient
  sums):
  model state + local shard → aggregate numbers only;
- the server is :class:`FederatedServer` (state α, selection of r clients and s candidate stumps
  per domain, direction and step from the aggregates; :func:`merge_quantiles`,
  :func:`section_search`) driven by :func:`setup_candidates` and :func:`run_rounds`
  (:mod:`.driver`), which never see how messages travel; :func:`prepare_server`
  (:mod:`.setup`) is the set-up every transport runs once its clients exist (Q over the
  transport if asked, the candidates, the server);
- a transport is a :class:`Transport` (:mod:`.protocol`: retries, counting what crosses the
  wire, the message log) that implements one method. :func:`simulate` runs the federation in
  process (:class:`InProcessTransport`, with injected faults for tests).

Two more transports, each behind an extra and imported only when used:
:mod:`manytask.boost.federated.flower` (``manytask[fed]``: a Flower ServerApp/ClientApp pair on
Flower's deployment runtime, and ``run_local_federation`` that starts a SuperLink and one SuperNode
per client on loopback) and :mod:`manytask.boost.federated.dask` (``manytask[dist]``:
:class:`~manytask.boost.federated.dask.DaskMultiBoostClassifier`, fitted on dask arrays, each
row chunk's sources served as clients by the worker that holds them).

Set-up: Q(k|x) is trained over the transport without pooling inputs (:mod:`.domain`:
multinomial logistic regression, the central default's model and objective, by L-BFGS on the
clients' summed losses and gradients, R(d + 1) + 2 numbers back per client and evaluation;
``simulate(domain_classifier="central")`` fits it on the pooled inputs instead), then the
clients' quantile reports give the candidate table, sent once to every client.

Protocol of one round t (binary, Φ = exp, Λ = the simplex, hard max, the AdaBoost step): ONE
request batch.

- ``round`` → every selected client c: the terms of α committed since c last answered
  (``state_start`` and 5 numbers per term: one if c took part in round t − 1), the domain of
  its row and the indices of the s candidates H_{t,k} of its domain k (s + 2 numbers + the
  terms); ← (m_c, Σ_i e^{−y_i f(x_i)}) = (m_c, m_c Φ_{k,c}) (for Φ = exp also Z_{t,c}) and
  edge_sums[r] = Σ_i e^{−y_i f(x_i)} y_i Q(k|x_i) h_{k,r}(x_i) = β_{t,c,r} = Z_{t,c}[1 −
  2ε_{t,c,r}]: s + 2 numbers, Figure 2's message (≤ 4·p·(s + 2); §5's O(p·s) summed over
  the domains).
- The server forms F_k = Σ_{c∈C_k} m_c Φ_{k,c} / Σ_{c∈C_k} m_c (the m-weighted pool: with all
  clients it *is* eq. 4's F_k; Figure 2's unweighted Σ_c Φ_{k,c} is not, unless the m_c are
  equal), K_t, Figure 2's direction (per active k the best r for |Σ_{c∈C_k} β_{t,c,r}| /
  Σ_{c∈C_k} m_c, the sign giving the polarity; the best over K_t) and η_t = ½ log((1 −
  ε)/ε) with ε = ½(1 − Σ_c β / Σ_c Z) (Lemma 1, §6), commits α_t and sends the term with the
  next round's request. A stump right on every point (ε = 0) takes MultiBoost's finite step
  from the minima of Q the clients reported at set-up, and ends the run.

``step="exact_line_search"`` (an option): every client returns the edge rows of every domain
(p·s + 2 numbers; the cross rows k ≠ l give MultiBoost's fallback at ties, the steepest
coordinate argmax_{k,r,±} min_{l∈K_t} ±E_l(k, r)), and F(α + η e) = max_l F_l is minimised by
batched exchanges: the server sends ``line_search_batch`` trial steps η_1..η_b (+ the
direction, 4 numbers), each client returns Σ_i a_i e^{−η u_i} and its slope (2b numbers); the
server brackets, sections the interval where the right-derivative of max_l F_l changes sign,
and checks F decreased (:func:`section_search`), each exchange one more request batch.

Soft-max (``mu``, §3) and the pooled baseline. With ``FederatedServer(..., mu=μ)``
(``simulate(..., mu=μ)``) a round descends F_μ = (1/μ) log Σ_k e^{μ F_k}: the same one request,
but every client returns the rows of every domain q (p + p·s numbers out, p·s + 2 back) and
the server takes the one steepest coordinate argmax_{q,r,±} ±Σ_l p_l E_l(q, r), p = softmax(μ
F) (``MultiBoostClassifier(mu=μ)``'s direction) with the AdaBoost step of its distribution
(mass Σ_l p_l F_l), or the batched section search on F_μ
(``section_search(..., aggregate=soft_max_aggregate(μ))``) with the exact line search. F_μ is
smooth, so no tie fallback is needed; it does not stall where the hard max zig-zags.
``simulate(..., pooled=True)`` is the FedAvg-style baseline: the same clients and protocol with
one domain and Q ≡ 1, so the server minimises Σ_c m_c Φ_c / Σ_c m_c: AdaBoost on the union
(:class:`~manytask.boost.AdaBoost`'s α to rounding).
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
from .domain import fit_domain_classifier
from .domain_client import SoftmaxDomainModel
from .driver import FederatedRun, fill_estimator, run_round, run_rounds, setup_candidates
from .protocol import (
    ClientFailure,
    InProcessTransport,
    Transport,
    respond,
    state_from_payload,
    state_to_payload,
)
from .server import FederatedServer, merge_quantiles, section_search, soft_max_aggregate
from .setup import prepare_server
from .simulation import as_estimator, federated_domain_classifier, make_shards, simulate

__all__ = [
    "ClientFailure",
    "ClientShard",
    "FederatedRun",
    "FederatedServer",
    "InProcessTransport",
    "SoftmaxDomainModel",
    "Transport",
    "as_estimator",
    "fill_estimator",
    "ModelState",
    "client_edges",
    "client_losses_along",
    "client_margins",
    "client_min_probability",
    "client_quantiles",
    "client_scaled_losses",
    "client_statistics",
    "federated_domain_classifier",
    "fit_domain_classifier",
    "make_shards",
    "merge_quantiles",
    "prepare_server",
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
