"""FEDMULTIBOOST's server loop over any :class:`~.protocol.Transport` (Figure 2).

Lives here: :class:`FederatedRun` (what a run did), :func:`setup_candidates` (candidate stumps
from the clients' quantile reports, then sent to every client), :func:`run_round` (one round
of Figure 2 with the hard max, or on the soft-max F_μ of §3 when the server has ``mu``;
nothing reaches the model unless it completes), :func:`run_rounds` (the loop, dropping failing
clients and restarting their round), :func:`ensemble_terms` (the fitted ensemble as
:meth:`~manytask.boost.MultiBoostClassifier.from_ensemble` takes it) and
:func:`fill_estimator` (an estimator built by that classmethod; this module does not import
the estimator). A round is :func:`~manytask.boost.rounds.boost_round`'s on the clients' sums:
the same pieces (:func:`~manytask.boost.rounds.round_objective`,
:func:`~manytask.boost.rounds.first_taken`, :func:`~manytask.boost.rounds.finite_step`,
:func:`~manytask.boost.rounds.stop_reason`), only F_k, the rates and η come from the
clients. The in-process, Flower and Dask transports all run these same functions, so
``FederatedServer(..., mu=μ)`` is all a transport needs for the soft-max. Not here: the
client (:mod:`.client`, :mod:`.protocol`), the server's arithmetic (:mod:`.server`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..rounds import finite_step, first_taken, round_objective, stop_reason
from ..steps import FINAL_STOPS, STOP_SEPARATING, adaboost_error, adaboost_step
from ..stumps import Stump
from ..thresholds import sketch_thresholds
from ..trees import Tree
from .protocol import ClientFailure, ask_every
from .server import section_search, soft_max_aggregate

__all__ = [
    "FederatedRun",
    "ensemble_terms",
    "fill_estimator",
    "run_round",
    "run_rounds",
    "setup_candidates",
]


@dataclass
class FederatedRun:
    """What a federation did.

    ``setup``: set-up counts; ``history``: per round ``participants`` (client ids per domain),
    ``failures`` (client, phase, attempt, error), ``restarts``, ``exchanges`` (line-search
    round trips), ``batches`` (request batches sent, retries included: 1 per round with the
    AdaBoost step), ``numbers_to_clients`` / ``numbers_from_clients``, ``seconds`` (wall time),
    ``losses`` (the pooled F_k), ``active``, ``direction``, ``step``, with ``mu`` also
    ``objective`` (F_μ) and ``soft_weights`` (softmax(μ F)), and ``stop`` when no step was
    taken (:func:`~manytask.boost.rounds.stop_reason`: ``"no direction with error < 1/2"``
    with the AdaBoost step, else ``"no coordinate decreases F"``, with ``mu``
    ``"no coordinate decreases F_mu"``, or
    ``"a domain has no client"`` for a skipped round) or, ``"separating direction"``, after the
    finite step of MultiBoost along a stump right on every point, which ends the run;
    ``messages``: (round, phase, client, message) when recorded;
    ``client_points``: row indices of each client's shard (simulation bookkeeping, never sent
    to the server).

    Parameters
    ----------
    setup : dict
        The set-up's counts (:func:`setup_candidates`).
    history : list of dict, optional
        The round records (:func:`run_rounds`).
    messages : list of tuple, optional
        The recorded messages.
    client_points : list of ndarray, optional
        The row indices of each client's shard.

    Examples
    --------
    >>> run = FederatedRun(setup={"n_clients": 2})
    >>> run.history, run.messages
    ([], [])
    """

    setup: dict
    history: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    client_points: list = field(default_factory=list)


def setup_candidates(transport, clients, n_features, thresholds=None, n_quantiles=16):
    """Candidate stumps (features, thresholds) known to the server and to every client.

    ``thresholds`` (one array per feature, e.g. from public data) or, if None, the merged
    per-feature quantiles the clients report at ``n_quantiles`` levels
    (:func:`~manytask.boost.thresholds.sketch_thresholds`, the table of every transport);
    then the table is sent to every client, which
    answers min_i Q(k|x_i) per domain (``setup["min_probabilities"]``, for
    :attr:`FederatedServer.min_probabilities <.server.FederatedServer>`). One request batch
    per phase (:func:`~.protocol.ask_every`); a client that fails here is reported in the
    returned ``setup["failures"]`` and may still train.

    Parameters
    ----------
    transport : Transport
        The transport to the clients.
    clients : sequence of int
        Every client's id.
    n_features : int
        The number of features d.
    thresholds : sequence of array-like, optional
        One array of candidate thresholds per feature; None: the clients' quantiles.
    n_quantiles : int, default=16
        The number of quantile levels the clients report when ``thresholds`` is None.

    Returns
    -------
    features : ndarray of shape (n,)
        The candidates' features.
    thresholds : ndarray of shape (n,)
        Their thresholds.
    setup : dict
        ``numbers_to_clients``, ``numbers_from_clients``, ``n_candidates``, ``n_clients``,
        ``failures`` and ``min_probabilities`` (per client).

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard, FederatedServer, InProcessTransport
    >>> shards = [ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), k,
    ...                       np.full((2, 2), 0.5)) for k in (0, 1)]
    >>> transport = InProcessTransport(shards)
    >>> features, thresholds, setup = setup_candidates(transport, [0, 1], 1, [[0.5]])
    >>> features.tolist(), thresholds.tolist(), setup["n_candidates"]
    ([0], [0.5], 1)
    """
    transport.round, transport.sent, transport.received = 0, 0, 0
    transport.failures = []
    if thresholds is None:
        levels = np.linspace(0.0, 1.0, n_quantiles + 2)[1:-1]
        reports = list(ask_every(transport, "setup", {c: {"levels": levels} for c in clients})
                       .values())  # fmt: skip
        if not reports:
            raise RuntimeError("no client answered the set-up (quantile reports)")
        thresholds = sketch_thresholds(reports, levels)
    elif len(thresholds) != n_features:
        raise ValueError(
            f"thresholds must hold one array per feature ({n_features}), got {len(thresholds)}"
        )
    features = np.concatenate([np.full(len(t), j) for j, t in enumerate(thresholds)]).astype(int)
    flat = np.concatenate([np.asarray(t, dtype=float) for t in thresholds])
    table = {"features": features, "thresholds": flat}
    answers = ask_every(transport, "candidates", {client: table for client in clients})
    min_probabilities = {client: np.asarray(answer["min_probabilities"], dtype=float)
                         for client, answer in answers.items()}  # fmt: skip
    setup = {
        "numbers_to_clients": transport.sent,
        "numbers_from_clients": transport.received,
        "n_candidates": features.size,
        "n_clients": len(clients),
        "failures": list(transport.failures),
        "min_probabilities": min_probabilities,
    }
    return features, flat, setup


def _pooled_columns(server, reports, key, n_points):
    return np.column_stack(
        [server.pooled(per_domain, key, n) for per_domain, n in zip(reports, n_points)]
    )


def _direction_payload(direction):
    """A direction as the ``line_search`` request carries it: 4 numbers for a stump, the
    domain and the three arrays for a tree."""
    if np.ndim(direction[1]) == 0:
        return {"direction": np.array(direction, dtype=float)}
    keys = ("direction_domain", "tree_features", "tree_thresholds", "tree_votes")
    return dict(zip(keys, direction))


def _line_search(server, transport, participants, n_points, direction, batch, aggregate=None):
    """(η, exchanges) along ``direction`` from every participant's batched (F_l, F_l') sums."""
    everyone = [c for ids in participants for c in ids]

    def evaluate(steps):
        payload = {**_direction_payload(direction), "steps": steps}
        answers = transport.request("line_search", {c: payload for c in everyone})
        reports = [[answers[c] for c in ids] for ids in participants]
        return tuple(
            _pooled_columns(server, reports, key, n_points) for key in ("loss_sums", "slope_sums")
        )

    return section_search(evaluate, batch, aggregate=aggregate)


def _min_probability(server, transport, everyone, domain):
    """min_i Q(k|x_i) over the participants, for MultiBoost's finite step
    (:func:`~manytask.boost.rounds.finite_step`): from the set-up reports
    (``server.min_probabilities``); a request is sent only to participants without one."""
    known = [server.min_probabilities[c][domain] for c in everyone
             if c in server.min_probabilities]  # fmt: skip
    missing = [c for c in everyone if c not in server.min_probabilities]
    if missing:
        answers = transport.request("separating", {c: {"domain": domain} for c in missing})
        known += [answer["min_probability"] for answer in answers.values()]
    return min(known)


def run_round(server, transport, participants, candidates, batch):
    """One round of Figure 2 with the given participants; returns the round's record.

    One ``round`` request batch (:meth:`~.server.FederatedServer.round_payloads`): each
    participant applies the terms committed since its last answer and returns Φ_c, Z_{t,c}
    and the edges β_{t,c,r}; the server forms F_k, K_t, the direction and, with the AdaBoost
    step, η_t from these alone (the exact line search adds its exchanges). With trees
    (``server.max_depth`` > 1) the request is ``propose`` (Φ_c, Z_{t,c} and the client's
    tree), then ``score`` (the s trees of the client's source → s edges). With ``server.mu``
    the round descends the soft-max F_μ instead (:func:`_soft_round`). Raises
    :class:`~.protocol.ClientFailure` before any change to the server's state.

    Parameters
    ----------
    server : FederatedServer
        The server; its state is left for the caller to commit.
    transport : Transport
        The transport to the clients.
    participants : sequence of sequence of int
        The clients of each domain taking part.
    candidates : sequence of ndarray
        The candidate indices of each domain.
    batch : int
        Trial steps per line-search exchange (``step="exact_line_search"``).

    Returns
    -------
    dict
        ``losses``, ``active``, ``exchanges``, ``direction`` (None if no step), ``step``, and
        ``stop`` when the run ends.

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard, FederatedServer, InProcessTransport
    >>> shards = [ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), k,
    ...                       np.full((2, 2), 0.5)) for k in (0, 1)]
    >>> transport = InProcessTransport(shards)
    >>> features, thresholds, setup = setup_candidates(transport, [0, 1], 1, [[0.5]])
    >>> server = FederatedServer(2, features, thresholds)
    >>> record = run_round(server, transport, [[0], [1]], server.select_candidates(), 15)
    >>> record["losses"].tolist(), record["direction"]
    ([1.0, 1.0], (0, 0, 0.5, 1))
    """
    everyone = [c for ids in participants for c in ids]
    phase = "round" if server.max_depth == 1 else "grow" if server.histogram_trees else "propose"
    answers = transport.request(phase, server.round_payloads(participants, candidates))
    server.acknowledge(everyone)
    reports = [[answers[c] for c in ids] for ids in participants]
    n_points = [sum(report["n_points"] for report in per_domain) for per_domain in reports]
    losses = np.array([
        server.pooled(per_domain, "loss_sum", n) for per_domain, n in zip(reports, n_points)
    ])  # fmt: skip
    _, _, active = round_objective(losses)
    asked = None if server.own_rows_only else np.arange(losses.size)
    if server.histogram_trees:  # each active source's tree, grown from summed histograms
        candidates, reports = _histogram_trees(server, transport, participants, active, reports,
                                               losses, n_points)  # fmt: skip
        asked = None
    elif server.max_depth > 1:  # the s proposed trees of each domain, scored by the clients
        candidates = server.select_trees(reports)
        scores = transport.request("score", server.score_payloads(participants, active,
                                                                  candidates))  # fmt: skip
        reports = [[scores.get(c) for c in ids] for ids in participants]
        asked = None  # own rows only: no tie fallback with trees, as MultiBoostClassifier
    if server.mu is not None:
        return _soft_round(server, transport, participants, candidates, batch, losses, n_points,
                           reports)  # fmt: skip
    edge_reports = {int(l): reports[l] for l in active}
    record = {"losses": losses, "active": active, "exchanges": 0}
    directions = server.directions(active, edge_reports, candidates, n_points, asked)
    # Figure 2's direction with the AdaBoost step is always taken (Lemma 1, §6); the mass of
    # source k's D_t is Z_{t,k}/m_k = F_k
    return _decide(server, transport, participants, n_points, batch, record, directions,
                   lambda direction: losses[direction[0]])  # fmt: skip


def _histogram_trees(server, transport, participants, active, reports, losses, n_points):
    """Figure 2, lines 10–11 with trees grown from sums: per active source k the tree
    ``MultiBoostClassifier(max_depth=d)`` grows on source k's pooled rows, from the sums over
    k's participants of their histograms (with ``server.mu``: per domain q the tree of
    ``MultiBoostClassifier(mu=μ, max_depth=d)``, on every source's sums weighted by p_l/m_l);
    returns (the tree of each domain, None if not grown; the edge reports of
    :meth:`~.server.FederatedServer.directions` or, with ``mu``, of
    :meth:`~.server.FederatedServer.soft_direction`).

    Level ℓ of source k's tree splits on H_k = Σ_{c∈C_k} H_c, H_c[n, f, b] = Σ over client
    c's points i of node n in bin b of feature f of (s_i, |s_i|), s_i = a_i y_i Q(k|x_i): the
    level's histograms (:func:`~manytask.boost.trees.level_histograms`) are sums over points,
    so H_k is the histogram of source k's pooled rows, up to the factor 1/Z_{t,k} that changes
    no split (see :func:`~.client.client_tree`), and the server takes the central tree's splits
    (:func:`~manytask.boost.trees.choose_splits`). With the soft-max the tree of q splits on
    Σ_l (p_l/m_l) H_l^q, H_l^q the sum over source l's participants of their histograms of
    s_i = a_i y_i Q(q|x_i): the central weights of row q, D ∝ p_l a_i/m_l. The root's H_c came
    with Φ_c, Z_{t,c} (the ``grow`` phase); each further level is one ``histogram`` request
    batch, to the clients whose points the tree holds, for the two children of each node that
    split (a node that does not split sends all its points left: its left child's histogram is
    its own, its right child is empty). The leaves' sums S_ℓ come from the last level's
    histograms (:func:`~manytask.boost.trees.leaf_sums`), votes sign(S_ℓ), and the edges from
    them, Σ_ℓ v_ℓ S_ℓ per source: no ``score`` phase. A client sends 2·n·d·B numbers for n
    nodes, at most 2(2^d − 1)·d·B per tree and round (p trees with ``mu``), whatever its
    number of points; with secure sums the server unmasks only each source's sum.
    """
    from manytask.boost.trees import choose_splits, leaf_sums  # noqa: PLC0415 (trees only)

    n_domains = len(participants)
    if server.mu is None:  # tree k: source k's points, weight 1
        weights = {int(k): {int(k): 1.0} for k in active}
    else:  # tree q: every source l's points, weight p_l / m_l
        soft = server.soft_weights(losses)
        weights = {q: {l: soft[l] / n_points[l] for l in range(n_domains)}
                   for q in range(n_domains)}  # fmt: skip
    trees_of = {l: [q for q in weights if l in weights[q]] for l in range(n_domains)}

    def per_source(answers, l, q, counts):
        """Σ over source l's clients of their rows of tree q (rows stacked in tree order)."""
        start = sum(counts[r] for r in trees_of[l][: trees_of[l].index(q)])
        return sum(answers[c]["histogram"][start : start + counts[q]] for c in participants[l])

    histograms = {(q, l): per_source({c: reports[l][i] for i, c in enumerate(participants[l])},
                                     l, q, dict.fromkeys(weights, 1))
                  for q in weights for l in weights[q]}  # fmt: skip
    n_features = next(iter(histograms.values())).shape[1]
    table, n_thresholds = server.bin_table(n_features)
    n_inner = 2**server.max_depth - 1
    features = {q: np.zeros(n_inner, dtype=np.intp) for q in weights}
    thresholds = {q: np.full(n_inner, np.inf) for q in weights}
    for level in range(server.max_depth):
        first, last_level = 2**level - 1, level == server.max_depth - 1
        chosen, asked = {}, {}
        for q, by_source in weights.items():
            combined = sum(w * histograms[q, l] for l, w in by_source.items())
            splits, feature, edge = chosen[q] = choose_splits(combined, n_thresholds, last_level)
            nodes = first + np.flatnonzero(splits)
            features[q][nodes] = feature[splits]
            thresholds[q][nodes] = table[feature[splits], edge[splits] - 1]
            split = np.flatnonzero(splits)
            if not last_level and split.size:
                asked[q] = np.sort(np.concatenate([2 * split, 2 * split + 1]))
        if last_level:
            break
        payloads = {}
        for l in range(n_domains):
            rows = [q for q in trees_of[l] if q in asked]
            if not rows:
                continue
            if server.mu is None:
                request = {"tree_features": features[rows[0]][: 2 * first + 1],
                           "tree_thresholds": thresholds[rows[0]][: 2 * first + 1],
                           "nodes": asked[rows[0]]}  # fmt: skip
            else:
                mask = np.zeros((len(rows), 2 ** (level + 1)), dtype=bool)
                for row, q in enumerate(rows):
                    mask[row, asked[q]] = True
                request = {"domains": np.array(rows),
                           "tree_features": np.stack([features[q][: 2 * first + 1] for q in rows]),
                           "tree_thresholds": np.stack([thresholds[q][: 2 * first + 1]
                                                        for q in rows]),
                           "nodes": mask}  # fmt: skip
            payloads.update({c: request for c in participants[l]})
        answers = transport.request("histogram", payloads) if payloads else {}
        counts = {q: nodes.size for q, nodes in asked.items()}
        for (q, l), histogram in histograms.items():
            splits = chosen[q][0]
            children = np.zeros((2 * splits.size, *histogram.shape[1:]))
            children[2 * np.flatnonzero(~splits)] = histogram[~splits]
            if q in asked:
                order = [r for r in trees_of[l] if r in asked]
                start = sum(counts[r] for r in order[: order.index(q)])
                children[asked[q]] = sum(answers[c]["histogram"][start : start + counts[q]]
                                         for c in participants[l])  # fmt: skip
            histograms[q, l] = children
    trees, edges = [None] * n_domains, np.zeros((n_domains, n_domains))  # edges[l, q]
    for q, by_source in weights.items():
        combined = sum(w * histograms[q, l] for l, w in by_source.items())
        votes = np.where(leaf_sums(combined, *chosen[q])[:, 0] < 0, -1.0, 1.0)
        trees[q] = {"tree_features": features[q][None], "tree_thresholds": thresholds[q][None],
                    "tree_votes": votes[None]}  # fmt: skip
        for l in by_source:  # Σ_ℓ v_ℓ S_ℓ over source l's points: its pooled edge sum
            edges[l, q] = votes @ leaf_sums(histograms[q, l], *chosen[q])[:, 0]
    if server.mu is None:
        return trees, {int(k): [{"edge_sums": edges[k, k].reshape(1, 1)}] for k in active}
    return trees, [[{"edge_sums": edges[l][:, None]}] for l in range(n_domains)]


def _decide(server, transport, participants, n_points, batch, record, directions, mass,
            aggregate=None):  # fmt: skip
    """Lines 11–12 of the round, :func:`~manytask.boost.rounds.boost_round`'s pieces on the
    pooled sums: the directions (score, direction) tried in turn
    (:func:`~manytask.boost.rounds.first_taken`), η by the step rule — the AdaBoost step from
    the score and ``mass(direction)``, or the exact line search on the clients' (F_l, F_l')
    sums (``aggregate`` for F_μ) — made finite (:func:`~manytask.boost.rounds.finite_step`),
    else the stop reason (:func:`~manytask.boost.rounds.stop_reason`)."""
    everyone = [c for ids in participants for c in ids]
    l1_norm = float(np.sum(server.state.steps))

    def attempt(scored):
        score, direction = scored
        error = None
        if server.step == "adaboost":
            error = adaboost_error(score, mass(direction))
            step = adaboost_step(error)
        else:
            step, exchanges = _line_search(server, transport, participants, n_points,
                                           direction, batch, aggregate)  # fmt: skip
            record["exchanges"] += exchanges
        if not step > 0:
            return None
        step, separating = finite_step(
            step, l1_norm, lambda: _min_probability(server, transport, everyone, direction[0])
        )
        taken = {**record, "direction": direction, "score": score, "step": step}
        if error is not None:
            taken["error"] = error
        if separating:
            taken["stop"] = STOP_SEPARATING
        return taken

    taken = first_taken(directions, server.step == "adaboost" or server.mu is not None, attempt)
    if taken is not None:
        return taken
    return {**record, "direction": None, "step": 0.0, "stop": stop_reason(server.step, server.mu)}


def _soft_round(server, transport, participants, candidates, batch, losses, n_points, reports):
    """One round on F_μ = (1/μ) log Σ_k e^{μ F_k} (§3), as MultiBoostClassifier(mu=μ) does.

    The round request asked every client for the edge rows of every domain q (p·s numbers
    back); the server combines them with the soft-max weights p_l into the descent rate
    Σ_l p_l E_l(q, r) of F_μ, takes the single steepest coordinate
    (:meth:`~.server.FederatedServer.soft_direction`) and the AdaBoost step of its
    distribution (D ∝ p_l a_i: its mass is Σ_l p_l F_l), or the exact line search on F_μ
    along it (:func:`~.server.section_search` with :func:`~.server.soft_max_aggregate`).
    F_μ is smooth, so there is no tie fallback: if that coordinate does not decrease F_μ the
    run stops (``"no coordinate decreases F_mu"``; with the AdaBoost step ``"no direction
    with error < 1/2"``, as MultiBoostClassifier says).
    """
    weights = server.soft_weights(losses)
    _, objective, active = round_objective(losses, mu=server.mu)
    record = {"losses": losses, "active": active, "exchanges": 0, "objective": objective,
              "soft_weights": weights}  # fmt: skip
    score, direction = server.soft_direction(weights, reports, candidates, n_points)
    directions = [(score, direction)] if score > 0 else []
    return _decide(server, transport, participants, n_points, batch, record, directions,
                   lambda _: float(weights @ losses), soft_max_aggregate(server.mu))  # fmt: skip


def run_rounds(server, transport, clients_by_domain, n_rounds, batch=15, progress=None):
    """Figure 2's loop: ``n_rounds`` rounds (fewer if no coordinate decreases F).

    A client that fails (after the transport's retries) is dropped from its round, which then
    runs again from scratch with the others (nothing of the failed attempt reaches the model),
    and is sent the whole state the next time it takes part (it may have lost what it kept);
    a round in which a domain has no client left is skipped. ``progress``: None or a callable
    (round record) → None, called after each round. Returns the list of round records.

    Parameters
    ----------
    server : FederatedServer
        The server; each round's term is committed to it.
    transport : Transport
        The transport to the clients.
    clients_by_domain : sequence of sequence of int
        The client ids of each domain.
    n_rounds : int
        The largest number of rounds.
    batch : int, default=15
        Trial steps per line-search exchange.
    progress : callable, optional
        Called with each round's record.

    Returns
    -------
    list of dict
        The round records (:func:`run_round`'s, with ``round``, ``participants``,
        ``restarts``, ``failures``, the counts and ``seconds``).

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard, FederatedServer, InProcessTransport
    >>> shards = [ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), k,
    ...                       np.full((2, 2), 0.5)) for k in (0, 1)]
    >>> transport = InProcessTransport(shards)
    >>> features, thresholds, setup = setup_candidates(transport, [0, 1], 1, [[0.5]])
    >>> server = FederatedServer(2, features, thresholds)
    >>> history = run_rounds(server, transport, [[0], [1]], n_rounds=3)
    >>> len(history), server.state.size, server.state.steps.round(6).tolist()
    (3, 3, [0.549306, 0.549306, 0.549306])
    """
    history = []
    for round_number in range(1, n_rounds + 1):
        start = time.perf_counter()
        transport.round, transport.sent, transport.received = round_number, 0, 0
        transport.batches, transport.failures = 0, []
        participants = server.select_clients(clients_by_domain)
        candidates = server.select_candidates() if server.max_depth == 1 else None
        restarts = 0
        while True:
            if any(not ids for ids in participants):
                record = {"direction": None, "step": 0.0, "stop": "a domain has no client"}
                break
            try:
                record = run_round(server, transport, participants, candidates, batch)
                break
            except ClientFailure as failure:
                participants = [[c for c in ids if c != failure.client] for ids in participants]
                server.known.pop(failure.client, None)  # resend it every term when it is back
                restarts += 1
        if record["direction"] is not None:
            server.commit(record["direction"], record["step"])
        record.update(round=round_number, participants=participants, restarts=restarts,
                      failures=transport.failures, numbers_to_clients=transport.sent,
                      numbers_from_clients=transport.received, batches=transport.batches,
                      seconds=time.perf_counter() - start)  # fmt: skip
        history.append(record)
        if progress is not None:
            progress(record)
        if record.get("stop") in FINAL_STOPS:  # a skipped round does not end the run
            break
    return history


def ensemble_terms(state, run, domain_labels):
    """The federated ensemble as :meth:`~manytask.boost.MultiBoostClassifier.from_ensemble`
    takes it: (estimators (k, Stump) per term, weights α, ``history_`` entries per round).

    Parameters
    ----------
    state : ModelState
        The federated ensemble's terms.
    run : FederatedRun
        What the federation did (its ``history``, one record per round).
    domain_labels : array-like of shape (p,)
        The domains' labels.

    Returns
    -------
    estimators : list of tuple
        (k, Stump) per term.
    weights : ndarray of shape (t,)
        The steps α.
    history : list of dict
        One ``history_`` entry per round.

    Examples
    --------
    >>> from manytask.boost.federated import ModelState
    >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.25)
    >>> run = FederatedRun({}, history=[{"direction": (0, 0, 0.5, 1), "step": 0.25}])
    >>> estimators, weights, history = ensemble_terms(state, run, ["a", "b"])
    >>> estimators[0][0], weights.tolist(), history[0]["domain"]
    (0, [0.25], 'a')
    """
    estimators = [
        (int(k), _base(j, t, p))
        for k, j, t, p in zip(state.domains, state.features, state.thresholds, state.polarities)
    ]
    history, terms = [], iter(estimators)
    for record in run.history:
        entry = {"losses": record.get("losses"), "active": record.get("active"),
                 "step": record["step"], "domain": None, "stump": None}  # fmt: skip
        if record["direction"] is not None:
            entry["domain"], entry["stump"] = domain_labels[record["direction"][0]], next(terms)[1]
        for key in ("objective", "soft_weights", "error", "stop"):  # not in every round
            if key in record:
                entry[key] = record[key]
        history.append(entry)
    return estimators, state.steps.copy(), history


def _base(feature, threshold, polarity):
    """A term's :class:`~manytask.boost.stumps.Stump`, or its
    :class:`~manytask.boost.trees.Tree` (``split_bins`` −1: it was grown on the clients' bins,
    not the estimator's; prediction reads the thresholds)."""
    if np.ndim(feature) == 0:
        return Stump(feature=int(feature), threshold=float(threshold), polarity=int(polarity))
    votes = np.asarray(polarity, dtype=float)[:, None]
    return Tree(np.asarray(feature, dtype=np.intp), np.asarray(threshold, dtype=float),
                np.full(np.size(feature), -1, dtype=np.intp), votes)  # fmt: skip


def fill_estimator(clf, state, q, classes, domain_labels, n_features, run):
    """A fitted estimator of ``clf``'s class and parameters (e.g. a
    :class:`~manytask.boost.MultiBoostClassifier`) holding the federated ensemble, built by its
    ``from_ensemble``, with ``federated_run_`` = ``run``. Returns a new object; ``clf`` is
    left unfitted.

    Parameters
    ----------
    clf : estimator
        The unfitted estimator whose class and parameters the result takes.
    state : ModelState
        The federated ensemble's terms.
    q : DomainClassifier
        The fitted Q(k|x).
    classes : array-like of shape (2,)
        The class labels of y = −1 and +1.
    domain_labels : array-like of shape (p,)
        The domains' labels.
    n_features : int
        The number of features d.
    run : FederatedRun
        What the federation did.

    Returns
    -------
    estimator
        The fitted estimator.

    Examples
    --------
    >>> from manytask.boost import MultiBoostClassifier
    >>> from manytask.boost.federated import ModelState, SoftmaxDomainModel
    >>> from manytask.boost.federated.domain import as_domain_classifier
    >>> q = as_domain_classifier(SoftmaxDomainModel([[0.0]], [0.0], ["a", "b"]), ["a", "b"],
    ...                          clip=1e-6, n_clipped=0)
    >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.25)
    >>> run = FederatedRun({}, history=[{"direction": (0, 0, 0.5, 1), "step": 0.25}])
    >>> clf = fill_estimator(MultiBoostClassifier(), state, q, np.array([0, 1]),
    ...                      np.array(["a", "b"]), 1, run)
    >>> clf.predict(np.array([[0.0], [1.0]])).tolist()
    [0, 1]
    """
    estimators, weights, history = ensemble_terms(state, run, domain_labels)
    params = clf.get_params(deep=False)
    params.pop("domain_classifier", None)  # the fitted Q
    fitted = type(clf).from_ensemble(
        estimators, weights, classes=classes, domains=domain_labels, domain_classifier=q,
        n_features_in=n_features, history=history, **params,
    )  # fmt: skip
    fitted.federated_run_ = run
    return fitted
