"""FEDMULTIBOOST's server side: selections, direction and step from aggregates only.

Lives here: :func:`section_search` (the exact line search from batched (F_l, F_l')
aggregates, for the hard max or, with :func:`soft_max_aggregate`, the soft-max F_μ of §3) and
:class:`FederatedServer` (state α and which terms each client holds, SELECTCLIENT /
SELECTBASECLASSIFIER, each round's requests, the hard-max directions of Figure 2 or the
steepest coordinate of F_μ, commit). Not here: the client functions (:mod:`.client`), the
round loop (:mod:`.driver`), the transport (:mod:`.protocol`), Q's training (:mod:`.domain`),
the candidate thresholds (:mod:`manytask.boost.thresholds`; :func:`merge_quantiles` is
re-exported here).
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive, check_positive_int
from ..line_search import section_search
from ..objective import aggregate_slope, aggregate_weights, agnostic_objective
from ..steps import check_step, first_best
from ..thresholds import merge_quantiles
from .client import ModelState
from .protocol import state_to_payload

FEDERATED_STEPS = ("adaboost", "exact_line_search")

__all__ = [
    "FederatedServer",
    "merge_quantiles",
    "section_search",
    "soft_max_aggregate",
]


def soft_max_aggregate(mu):
    """(F_μ, dF_μ/dη) of one trial step from the (F_l, F_l'): the ``aggregate`` of
    :func:`section_search` for the soft-max F_μ = (1/μ) log Σ_l e^{μ F_l} (§3), whose slope is
    Σ_l p_l F_l' with p = softmax(μ F) (chain rule; ``inf`` on overflow).

    Parameters
    ----------
    mu : float
        The soft-max temperature μ > 0.

    Returns
    -------
    callable
        ``aggregate(losses, slopes) -> (F_μ, dF_μ/dη)``.

    Examples
    --------
    >>> value, slope = soft_max_aggregate(10.0)(np.array([1.0, 1.0]), np.array([-1.0, 0.5]))
    >>> round(value, 6), slope  # 1 + log(2)/10, the mean slope at a tie
    (1.069315, -0.25)
    """
    mu = float(mu)

    def aggregate(losses, slopes):
        return agnostic_objective(losses, mu), aggregate_slope(losses, slopes, mu)

    return aggregate


class FederatedServer:
    """The server of Figure 2: state α, selections, direction and step from aggregates only.

    Parameters
    ----------
    n_domains : int
        The number of domains p.
    candidate_features, candidate_thresholds : ndarray (n,)
        The candidate stumps h_r(x) = ±1{x_j > θ} (the polarity comes from the edge's sign).
    r, s : None or int >= 1
        Clients and candidates sampled per domain and round (None: all).
    random_state : None, int or Generator
        The seed of the client and candidate sampling.
    mu : None or float > 0
        None: the hard max F = max_k F_k of Figure 2. A float: each round descends the soft-max
        F_μ = (1/μ) log Σ_k e^{μ F_k} (§3) along its steepest coordinate
        (:meth:`soft_direction`), as ``MultiBoostClassifier(mu=...)`` does; the round loop
        (:func:`~.driver.run_round`) reads it from here, so every transport gets it.
    step : {"adaboost", "exact_line_search"}
        The step along the chosen direction (:mod:`manytask.boost.steps`): "adaboost"
        (default, Lemma 1 and §6) η = ½ log((1 − ε)/ε) from the pooled aggregates, no
        line-search exchanges; "exact_line_search" argmin_η F(α + η e) by
        :func:`section_search` over the clients' batched (F_l, F_l') sums.
    max_depth : int >= 1, default=1
        The base classifiers: 1, the candidate stumps; d > 1, trees of depth d, as
        ``MultiBoostClassifier(max_depth=d)``. Each round every participant proposes the tree
        it grows for its source on its points (``propose``), the server takes s proposals per
        source (:meth:`select_trees`, H_{t,k}) and sends each participant of an active source
        those s trees, which it scores (``score``: s numbers back). With ``mu`` each
        participant proposes a tree per domain q (its points weighted by Q(q|x)), the server
        takes s per q among all of them and every participant scores all p·s.
    histogram_trees : bool, default=False
        With ``max_depth`` > 1: grow each active source's tree on the server from the sums over
        its participants of their histograms (what secure sums need, where the server sees
        sums only; :func:`~.driver.run_round`), instead of taking proposed trees: with all of
        a source's clients taking part, its tree is the one
        ``MultiBoostClassifier(max_depth=d)`` grows on the source's pooled rows, whatever the
        number of clients. With ``mu`` the tree of each domain q, on the sums of every
        source's histograms weighted by p_l/m_l, as ``MultiBoostClassifier(mu=μ,
        max_depth=d)`` grows it. ``s`` is then unused (one tree per source or domain).

    Examples
    --------
    >>> server = FederatedServer(2, [0, 0], [0.0, 1.0], mu=10.0)
    >>> server.mu, server.state.steps.size
    (10.0, 0)
    """

    def __init__(self, n_domains, candidate_features, candidate_thresholds, r=None, s=None,
                 random_state=None, mu=None, step="adaboost", max_depth=1,
                 histogram_trees=False):  # fmt: skip
        if step not in FEDERATED_STEPS:
            check_step(step, "exponential")  # the renamed rules' message
            raise ValueError(f"step must be one of {FEDERATED_STEPS}, got {step!r}")
        self.step = step
        check_positive_int(r, "r", allow_none=True)
        check_positive_int(s, "s", allow_none=True)
        self.mu = check_positive(mu, "mu", allow_none=True)
        self.max_depth = check_positive_int(max_depth, "max_depth")
        if not isinstance(histogram_trees, (bool, np.bool_)):
            raise ValueError(f"histogram_trees must be True or False, got {histogram_trees!r}")
        self.histogram_trees = bool(histogram_trees) and self.max_depth > 1
        self.n_domains = n_domains
        self.candidate_features = np.asarray(candidate_features, dtype=int)
        self.candidate_thresholds = np.asarray(candidate_thresholds, dtype=float)
        self.r, self.s = r, s
        self.rng = np.random.default_rng(random_state)
        self.state = ModelState()
        self.known = {}  # client → the number of terms of α its last answer was computed on
        self.min_probabilities = {}  # client → min_i Q(·|x_i), from the set-up if reported

    @property
    def own_rows_only(self) -> bool:
        """True when a round needs each client's own domain's edges only: Figure 2's
        hard-max direction with the AdaBoost step (no tie fallback, no cross rows).

        Examples
        --------
        >>> FederatedServer(2, [0], [0.0]).own_rows_only
        True
        """
        return self.mu is None and self.step == "adaboost"

    def round_payloads(self, participants, candidates) -> dict:
        """The ``round`` request of each participant (Figure 2, lines 3, 11 and 19).

        The terms of α the client has not acknowledged (``state_start`` and 5 numbers per
        term: usually the one term committed last round), then the candidates to score:
        its own domain's s (``own_rows_only``), else every domain's (p·s), whose cross rows
        the soft-max direction and the hard max's tie fallback combine.

        Parameters
        ----------
        participants : sequence of sequence of int
            The selected clients of each domain.
        candidates : sequence of ndarray
            The selected candidate indices of each domain.

        Returns
        -------
        dict
            {client: payload}.

        Examples
        --------
        >>> server = FederatedServer(2, [0, 0], [0.0, 1.0])
        >>> payloads = server.round_payloads([[0], [1]], server.select_candidates())
        >>> request = payloads[1]  # client 1, of domain 1
        >>> request["state_start"], request["domains"].tolist(), request["asked"].tolist()
        (0, [1], [[0, 1]])
        """
        n_domains = len(participants)
        payloads = {}
        for k, ids in enumerate(participants):
            rows = [k] if self.own_rows_only else list(range(n_domains))
            if self.histogram_trees:  # the ``grow`` request: the root histograms
                asked = {} if self.mu is None else {"domains": np.arange(n_domains)}
            elif self.max_depth > 1:  # the ``propose`` request: the trees come from the clients
                asked = {"max_depth": self.max_depth}
                if self.mu is not None:  # a tree per domain q
                    asked["domains"] = np.arange(n_domains)
            else:
                asked = {"domains": np.array(rows),
                         "asked": np.stack([candidates[q] for q in rows])}  # fmt: skip
            for client in ids:
                start = min(self.known.get(client, 0), self.state.size)
                terms = state_to_payload(self.state.tail(start))
                payloads[client] = {"state_start": start, **terms, **asked}
        return payloads

    def acknowledge(self, clients) -> None:
        """These clients answered a request computed on the current state.

        Parameters
        ----------
        clients : iterable of int
            The clients' ids.

        Examples
        --------
        >>> server = FederatedServer(1, [0], [0.0])
        >>> server.commit((0, 0, 0.0, 1), 0.5)
        >>> server.acknowledge([3])
        >>> server.known
        {3: 1}
        """
        for client in clients:
            self.known[client] = self.state.size

    def select_clients(self, clients_by_domain):
        """C_{t,k} = SELECTCLIENT(k, r) (Figure 2, line 4): r clients per domain, sorted.

        Parameters
        ----------
        clients_by_domain : sequence of sequence of int
            The client ids of each domain.

        Returns
        -------
        list of list of int
            The selected clients of each domain (all of them if ``r`` is None).

        Examples
        --------
        >>> FederatedServer(2, [0], [0.0]).select_clients([[0, 1], [2]])
        [[0, 1], [2]]
        """
        return [
            list(ids) if self.r is None or self.r >= len(ids)
            else sorted(self.rng.choice(ids, self.r, replace=False).tolist())
            for ids in clients_by_domain
        ]  # fmt: skip

    def select_candidates(self):
        """H_{t,k} = SELECTBASECLASSIFIER(k, s) (Figure 2, line 11): candidate indices.

        Returns
        -------
        list of ndarray
            Per domain, the sorted indices of its s candidates (all if ``s`` is None).

        Examples
        --------
        >>> [c.tolist() for c in FederatedServer(2, [0, 0], [0.0, 1.0]).select_candidates()]
        [[0, 1], [0, 1]]
        """
        n = self.candidate_features.size
        return [
            np.arange(n) if self.s is None or self.s >= n
            else np.sort(self.rng.choice(n, self.s, replace=False))
            for _ in range(self.n_domains)
        ]  # fmt: skip

    def bin_table(self, n_features):
        """The candidate table as the clients bin their shards at it
        (:func:`~.client.client_bins`): per feature its sorted thresholds, +inf-padded to
        B − 1, and their numbers.

        Parameters
        ----------
        n_features : int
            d.

        Returns
        -------
        thresholds : ndarray of shape (d, B − 1)
            The thresholds of each feature; split edge b puts x > thresholds[f, b − 1] right.
        n_thresholds : ndarray of shape (d,)
            How many of each row are thresholds.

        Examples
        --------
        >>> thresholds, counts = FederatedServer(1, [0, 1, 0], [2.0, 0.5, 1.0]).bin_table(2)
        >>> thresholds.tolist(), counts.tolist()
        ([[1.0, 2.0], [0.5, inf]], [2, 1])
        """
        from manytask.boost.stumps import presort_at  # noqa: PLC0415 (trees only)

        columns = [self.candidate_thresholds[self.candidate_features == j]
                   for j in range(n_features)]  # fmt: skip
        table = presort_at(np.zeros((1, n_features)), columns)
        return table.thresholds, table.n_thresholds

    def select_trees(self, proposals):
        """H_{t,k} with trees: s of the trees proposed for Q(k|·) (all if ``s`` is None or at
        least their number), in client order: with the hard max, the trees of source k's
        participants; with the soft-max (each participant proposes one per domain), the k-th
        tree of every participant.

        Parameters
        ----------
        proposals : sequence of sequence of dict
            Per source, its participants' ``propose`` messages.

        Returns
        -------
        list of dict
            Per domain, ``tree_features``, ``tree_thresholds`` (s, 2^d − 1) and
            ``tree_votes`` (s, 2^d).

        Examples
        --------
        >>> server = FederatedServer(1, [0], [0.5], max_depth=2)
        >>> tree = {"tree_features": [0, 0, 0], "tree_thresholds": [0.5, np.inf, np.inf],
        ...         "tree_votes": [-1, 1, 1, 1]}
        >>> server.select_trees([[tree, tree]])[0]["tree_votes"].shape
        (2, 4)
        """
        keys = ("tree_features", "tree_thresholds", "tree_votes")
        if self.mu is None:
            pools = [[{key: np.asarray(m[key]) for key in keys} for m in messages]
                     for messages in proposals]  # fmt: skip
        else:
            everyone = [m for messages in proposals for m in messages]
            pools = [[{key: np.asarray(m[key])[q] for key in keys} for m in everyone]
                     for q in range(self.n_domains)]  # fmt: skip
        chosen = []
        for pool in pools:
            keep = np.arange(len(pool))
            if self.s is not None and self.s < keep.size:
                keep = np.sort(self.rng.choice(keep.size, self.s, replace=False))
            chosen.append({key: np.stack([pool[i][key] for i in keep]) for key in keys})
        return chosen

    def score_payloads(self, participants, active, trees):
        """The ``score`` request: each participant of an active source gets the s trees of its
        source (the hard max), or every participant those of every domain (the soft-max).

        Parameters
        ----------
        participants : sequence of sequence of int
            The selected clients of each domain.
        active : sequence of int
            The active domains K_t.
        trees : list of dict
            :meth:`select_trees`' trees per domain.

        Returns
        -------
        dict
            {client: payload}.

        Examples
        --------
        >>> server = FederatedServer(2, [0], [0.5], max_depth=2)
        >>> tree = {"tree_features": [0, 0, 0], "tree_thresholds": [0.5, np.inf, np.inf],
        ...         "tree_votes": [-1, 1, 1, 1]}
        >>> trees = server.select_trees([[tree], [tree]])
        >>> sorted(server.score_payloads([[0], [1]], [1], trees))
        [1]
        """
        if self.mu is None:
            return {c: trees[k] for k in active for c in participants[k]}
        every = {"domains": np.arange(self.n_domains),
                 **{key: np.stack([t[key] for t in trees]) for key in trees[0]}}  # fmt: skip
        return {c: every for ids in participants for c in ids}

    @staticmethod
    def pooled(reports, key, n_points):
        """Σ_{c∈C_k} (key)_c / Σ_{c∈C_k} m_c over one domain's reports.

        Parameters
        ----------
        reports : sequence of dict
            The messages of one domain's clients.
        key : str
            The summed entry, e.g. ``"loss_sum"``.
        n_points : int
            Σ_{c∈C_k} m_c.

        Returns
        -------
        float or ndarray
            The pooled mean.

        Examples
        --------
        >>> FederatedServer.pooled([{"loss_sum": 3.0}, {"loss_sum": 1.0}], "loss_sum", 8)
        0.5
        """
        return sum(report[key] for report in reports) / n_points

    def _direction(self, k, candidates, r, edge):
        sign = 1 if edge >= 0 else -1
        if isinstance(candidates[k], dict):  # a tree: (k, node features, thresholds, votes)
            trees = candidates[k]
            return (int(k), trees["tree_features"][r], trees["tree_thresholds"][r],
                    sign * trees["tree_votes"][r])  # fmt: skip
        index = candidates[k][r]
        return (int(k), int(self.candidate_features[index]),
                float(self.candidate_thresholds[index]), 1 if edge >= 0 else -1)  # fmt: skip

    def directions(self, active, edge_reports, candidates, n_points, asked=None):
        """Directions (score, (k, j, θ, polarity)) to try in order.

        ``edge_reports[l]``: the messages of domain l's clients; their ``edge_sums`` rows are
        the domains ``asked`` (every domain), or with ``asked=None`` the client's own domain
        only (Figure 2's message, :attr:`own_rows_only`: no tie fallback).

        First Figure 2's (line 17): the best candidate of each active domain k for its own
        F_k, by decreasing |Σ_{c∈C_k} β_{t,c,r}| / Σ_{c∈C_k} m_c = (Z_{t,k}/m_k)|1 − 2ε_{t,k,r}|.
        Then, as :class:`MultiBoostClassifier` does when these all raise another active F_l (a
        tie), the steepest coordinate of F itself among the candidates:
        argmax_{k,r,±} min_{l∈K_t} ±E_l(k, r), E_l(k, r) = −F_l'(α; e_{k,r}) pooled over C_l,
        over every asked domain k.

        Parameters
        ----------
        active : sequence of int
            The active domains K_t.
        edge_reports : sequence of sequence of dict
            Per domain, its clients' messages with ``edge_sums``.
        candidates : sequence of ndarray
            The selected candidate indices of each domain.
        n_points : sequence of int
            Per domain, Σ_{c∈C_l} m_c.
        asked : sequence of int, optional
            The domains of the ``edge_sums`` rows; None: the client's own domain only.

        Returns
        -------
        list of tuple
            (score, (k, j, θ, polarity)) by decreasing score; positive scores only.

        Examples
        --------
        >>> server = FederatedServer(1, [0, 0], [0.0, 1.0])
        >>> reports = [[{"edge_sums": np.array([[1.0, -3.0]])}]]
        >>> server.directions([0], reports, server.select_candidates(), [4])
        [(0.75, (0, 0, 1.0, -1))]
        """
        if asked is None:  # Figure 2's message: one row, the client's own domain
            rows = {int(k): 0 for k in active}
        else:
            rows = {int(k): q for q, k in enumerate(asked)}
        pooled = {int(l): self.pooled(edge_reports[l], "edge_sums", n_points[l]) for l in active}
        best = []
        for k in active:
            edges = pooled[int(k)][rows[int(k)]]
            # ties (to rounding) go to the first candidate, as in the stump search
            r = first_best(np.abs(edges), np.abs(edges).max(), maximise=True)
            best.append((float(abs(edges[r])), self._direction(k, candidates, r, edges[r])))
        best.sort(key=lambda item: -item[0])  # stable: ties keep the domain order
        tried = [(score, direction) for score, direction in best if score > 0]
        if len(active) > 1 and asked is not None:
            stacked = np.stack([pooled[int(l)] for l in active])  # (l, q, r)
            rates = np.maximum(stacked.min(axis=0), (-stacked).min(axis=0))
            flat = first_best(rates.ravel(), np.abs(stacked).max(), maximise=True)
            q, r = np.unravel_index(flat, rates.shape)
            if rates[q, r] > 0:
                sign = 1.0 if stacked[:, q, r].min() >= rates[q, r] else -1.0
                steepest = self._direction(asked[q], candidates, r, sign)
                if steepest not in [direction for _, direction in tried]:
                    tried.append((float(rates[q, r]), steepest))
        return tried

    def soft_weights(self, losses):
        """p_k = ∂F_μ/∂F_k = softmax(μ F)_k over all domains (§3; sum to 1).

        Parameters
        ----------
        losses : ndarray of shape (p,)
            The domains' losses F_k.

        Returns
        -------
        ndarray of shape (p,)
            The weights p_k.

        Examples
        --------
        >>> FederatedServer(2, [0], [0.0], mu=1.0).soft_weights(np.array([0.0, 0.0])).tolist()
        [0.5, 0.5]
        """
        return aggregate_weights(losses, self.mu)

    def soft_objective(self, losses):
        """F_μ = (1/μ) log Σ_k e^{μ F_k}  (§3).

        Parameters
        ----------
        losses : ndarray of shape (p,)
            The domains' losses F_k.

        Returns
        -------
        float
            F_μ.

        Examples
        --------
        >>> server = FederatedServer(2, [0], [0.0], mu=1.0)
        >>> round(float(server.soft_objective(np.array([0.0, 0.0]))), 6)  # log 2
        0.693147
        """
        return agnostic_objective(losses, self.mu)

    def soft_direction(self, weights, edge_reports, candidates, n_points):
        """The steepest coordinate of F_μ: (rate, (q, j, θ, polarity)), rate ≤ 0 if none descends.

        ``edge_reports[l]``: the edge messages of domain l's clients, rows q = 0..p−1 over the
        candidates ``candidates[q]``. −F_μ'(α; e_{q,r}) = Σ_l p_l E_l(q, r) with E_l(q, r) =
        Σ_{c∈C_l} edge_sums[q, r] / Σ_{c∈C_l} m_c = −F_l'(α; e_{q,r}) (chain rule, as in
        :func:`~manytask.boost.ties.soft_max_stump_weights`); the direction is
        argmax_{q,r,±} ±Σ_l p_l E_l(q, r), the first maximum in (q, r) order, polarity the sign.

        Parameters
        ----------
        weights : ndarray of shape (p,)
            The weights p_l (:meth:`soft_weights`).
        edge_reports : sequence of sequence of dict
            Per domain, its clients' messages with ``edge_sums`` (p, s).
        candidates : sequence of ndarray
            The selected candidate indices of each domain.
        n_points : sequence of int
            Per domain, Σ_{c∈C_l} m_c.

        Returns
        -------
        rate : float
            |−F_μ'(α; e_{q,r})| of the chosen coordinate.
        direction : tuple
            (q, j, θ, polarity).

        Examples
        --------
        >>> server = FederatedServer(1, [0, 0], [0.0, 1.0], mu=1.0)
        >>> reports = [[{"edge_sums": np.array([[1.0, -3.0]])}]]
        >>> server.soft_direction([1.0], reports, server.select_candidates(), [4])
        (0.75, (0, 0, 1.0, -1))
        """
        rates = sum(
            weight * self.pooled(reports, "edge_sums", n)
            for weight, reports, n in zip(weights, edge_reports, n_points)
        )
        flat = first_best(np.abs(rates).ravel(), np.abs(rates).max(), maximise=True)
        q, r = np.unravel_index(flat, rates.shape)
        return float(abs(rates[q, r])), self._direction(q, candidates, r, rates[q, r])

    def commit(self, direction, step):
        """α_t = α_{t−1} + η_t e_{k,r}  (Figure 2, line 19), in one assignment.

        Parameters
        ----------
        direction : tuple
            (k, j, θ, polarity) of the chosen term.
        step : float
            Its step η_t.

        Examples
        --------
        >>> server = FederatedServer(1, [0], [0.0])
        >>> server.commit((0, 0, 0.0, 1), 0.5)
        >>> server.state.size, server.state.steps.tolist()
        (1, [0.5])
        """
        self.state = self.state.with_term(*direction, step)
