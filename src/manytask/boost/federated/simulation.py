"""FEDMULTIBOOST's in-process transport: :func:`simulate`, with faults and accounting.

Lives here: :class:`ClientFailure`, :class:`FederatedRun` (what a run did), the counting,
retrying transport and one round of Figure 2 over it, and :func:`simulate`, which returns a
fitted :class:`~manytask.boost.MultiBoostClassifier`. Not here: the client functions
(:mod:`.client`) and the server (:mod:`.server`), which a Flower or Dask transport reuses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_X_y

from ..domain import DomainClassifier
from ..multiboost import MultiBoostClassifier
from ..objective import active_domains
from ..stumps import Stump
from .client import (
    ClientShard,
    client_edges,
    client_losses_along,
    client_min_probability,
    client_quantiles,
    client_statistics,
)
from .server import FederatedServer, merge_quantiles, section_search

__all__ = ["ClientFailure", "FederatedRun", "simulate"]


class ClientFailure(RuntimeError):
    """A client raised or timed out, after the retries of the policy."""

    def __init__(self, client, phase, error):
        super().__init__(f"client {client} failed in phase {phase!r}: {error!r}")
        self.client, self.phase, self.error = client, phase, error


def _numbers(message) -> int:
    """How many numbers a message carries (what would cross the wire)."""
    return int(sum(np.size(value) for value in message.values()))


@dataclass
class FederatedRun:
    """What a simulated federation did.

    ``setup``: set-up counts; ``history``: per round ``participants`` (client ids per domain),
    ``failures`` (client, phase, attempt, error), ``restarts``, ``exchanges`` (line-search
    round trips), ``numbers_to_clients`` / ``numbers_from_clients``, ``direction``, ``step``
    and ``stop`` when no step was taken (or, ``"separating direction"``, after the finite step
    of MultiBoost along a stump right on every point, which ends the run); ``messages``:
    (round, phase, client, message) when recorded; ``client_points``: row indices of each
    client's shard (simulation bookkeeping, never sent to the server).
    """

    setup: dict
    history: list = field(default_factory=list)
    messages: list = field(default_factory=list)
    client_points: list = field(default_factory=list)


class _Transport:
    """In-process calls with retries, timeouts, injected faults, counting and logging."""

    def __init__(self, shards, retries, timeout, fault, record):
        self.shards, self.retries, self.timeout, self.fault = shards, retries, timeout, fault
        self.record, self.round = record, 0
        self.log, self.sent, self.received, self.failures = [], 0, 0, []

    def call(self, client, phase, function, sent, *args):
        for attempt in range(self.retries + 1):
            self.sent += sent
            start = time.perf_counter()
            try:
                if self.fault is not None:
                    self.fault(self.round, client, phase)
                message = function(*args)
                elapsed = time.perf_counter() - start
                if self.timeout is not None and elapsed > self.timeout:
                    raise TimeoutError(f"{elapsed:.3g} s > timeout {self.timeout}")
            except Exception as error:  # a client may fail in any way
                self.failures.append(
                    {"client": client, "phase": phase, "attempt": attempt, "error": repr(error)}
                )
                if attempt == self.retries:
                    raise ClientFailure(client, phase, error) from error
                continue
            self.received += _numbers(message)
            if self.record:
                self.log.append((self.round, phase, client, message))
            return message


def _round(server, transport, participants, candidates, batch):
    """One round of Figure 2 with the given participants; returns the round's record.

    Raises :class:`ClientFailure` before any change to the server's state.
    """
    state, shards = server.state, transport.shards
    loss_reports = [
        [transport.call(c, "losses", client_statistics, state.n_numbers, state, shards[c])
         for c in ids] for ids in participants
    ]  # fmt: skip
    n_points = [sum(report["n_points"] for report in reports) for reports in loss_reports]
    losses = np.array([
        server.pooled(reports, "loss_sum", n) for reports, n in zip(loss_reports, n_points)
    ])  # fmt: skip
    active = active_domains(losses)
    asked = np.stack([candidates[k] for k in active])  # (|K_t|, s) candidate indices
    edge_reports = {
        int(l): [
            transport.call(c, "edges", client_edges, asked.size + active.size, state, shards[c],
                           active, server.candidate_features[asked],
                           server.candidate_thresholds[asked])
            for c in participants[l]
        ] for l in active
    }  # fmt: skip
    record = {"losses": losses, "active": active, "exchanges": 0}
    for score, direction in server.directions(active, edge_reports, candidates, n_points):

        def evaluate(steps, direction=direction):
            sent = 4 + steps.size  # the client keeps f_{t−1} from the losses phase
            reports = [
                [transport.call(c, "line_search", client_losses_along, sent, state, shards[c],
                                direction, steps) for c in ids] for ids in participants
            ]  # fmt: skip
            return tuple(
                np.column_stack(
                    [server.pooled(per_domain, key, n) for per_domain, n in zip(reports, n_points)]
                )  # fmt: skip
                for key in ("loss_sums", "slope_sums")
            )

        step, exchanges = section_search(evaluate, batch)
        record["exchanges"] += exchanges
        if np.isinf(step):  # y Q h > 0 on every point: F → 0 as η → ∞
            # MultiBoost's finite step η = (1 + ‖α‖₁)/min_i Q(k|x_i): every margin > 0, stop
            lowest = min(
                transport.call(c, "separating", client_min_probability, 1, shards[c],
                               direction[0])["min_probability"]
                for ids in participants for c in ids
            )  # fmt: skip
            step = (1.0 + float(np.sum(state.steps))) / lowest
            return {**record, "direction": direction, "score": score, "step": step,
                    "stop": "separating direction"}  # fmt: skip
        if step > 0:
            return {**record, "direction": direction, "score": score, "step": step}
    return {**record, "direction": None, "step": 0.0, "stop": "no coordinate decreases F"}


def simulate(X, y, domains, clients_per_domain, r=None, s=None, n_rounds=100, random_state=None,
             *, thresholds=None, n_quantiles=16, domain_classifier=None, line_search_batch=15,
             retries=0, timeout=None, fault=None, record_messages=False):  # fmt: skip
    """FEDMULTIBOOST (Figure 2) run in process; returns a fitted :class:`MultiBoostClassifier`.

    Parameters
    ----------
    X, y, domains : array-like (N, d), (N,), (N,)
        Binary labels; the points of each domain are split at random into
        ``clients_per_domain`` shards (clients) that never leave their client.
    clients_per_domain : int >= 1
    r, s : None or int >= 1
        Clients and candidate stumps sampled per domain and round (None: all).
    n_rounds : int >= 1
    random_state : None, int or Generator
        Seeds the client split and the selections.
    thresholds : None or list of arrays (one per feature)
        Candidate thresholds held by the server (e.g. from public data). None: merged from the
        clients' per-feature quantiles at ``n_quantiles`` levels (:func:`merge_quantiles`).
    domain_classifier : None or DomainClassifier
        Q(k|x), fitted here on (X, domains) (a stand-in for a federated Q, see module notes).
    line_search_batch : int >= 1
        Trial steps per line-search exchange.
    retries : int >= 0
        Times a failing request is repeated before the client is dropped from the round; the
        round is then run again from scratch with the remaining clients (nothing of the failed
        attempt reaches the model). A round in which a domain has no client left is skipped.
    timeout : None or float > 0
        Seconds after which an answer counts as a failure.
    fault : None or callable(round, client, phase)
        Fault injection for tests: raising makes that client call fail.
    record_messages : bool
        Keep every client→server message in ``federated_run_.messages``.

    Returns
    -------
    MultiBoostClassifier
        With ``estimators_``, ``estimator_weights_``, ``domain_classifier_``, ``history_`` and
        ``federated_run_`` (a :class:`FederatedRun`: per round the participants, failures,
        restarts and numbers sent each way).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = simulate(X, y, np.repeat([0, 1], 40), 2, n_rounds=3, random_state=0)
    >>> float(clf.score(X, y)) > 0.9
    True
    """
    X, y = check_X_y(X, y)
    domains = np.asarray(domains)
    if domains.shape != (X.shape[0],):
        raise ValueError(f"domains must have shape ({X.shape[0]},), got {domains.shape}")
    positive_ints = {
        "clients_per_domain": clients_per_domain,
        "n_rounds": n_rounds,
        "line_search_batch": line_search_batch,
        "n_quantiles": n_quantiles,
    }
    for name, value in positive_ints.items():
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    if not isinstance(retries, (int, np.integer)) or retries < 0:
        raise ValueError(f"retries must be an int >= 0, got {retries!r}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"timeout must be None or > 0, got {timeout!r}")
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"y must have exactly 2 classes, got {classes.size}")
    domain_labels, domain_index = np.unique(domains, return_inverse=True)
    rng = np.random.default_rng(random_state)
    q = clone(domain_classifier) if domain_classifier is not None else DomainClassifier()
    q.fit(X, domains)
    signs = np.where(y == classes[1], 1.0, -1.0)
    shards, clients_by_domain, client_points = [], [], []
    for k in range(domain_labels.size):
        points = rng.permutation(np.flatnonzero(domain_index == k))
        parts = [part for part in np.array_split(points, clients_per_domain) if part.size]
        clients_by_domain.append(list(range(len(shards), len(shards) + len(parts))))
        for part in map(np.sort, parts):
            client_points.append(part)
            shards.append(ClientShard(X[part], signs[part], k, q.predict_proba(X[part])))
    levels = np.linspace(0.0, 1.0, n_quantiles + 2)[1:-1]
    transport = _Transport(shards, retries, timeout, fault, record_messages)
    if thresholds is None:
        reports = []
        for c in range(len(shards)):
            try:
                reports.append(
                    transport.call(c, "setup", client_quantiles, levels.size, shards[c], levels)
                )
            except ClientFailure:
                continue  # reported in setup["failures"]; the client may answer later rounds
        if not reports:
            raise RuntimeError("no client answered the set-up (quantile reports)")
        thresholds = merge_quantiles(reports, levels)
    elif len(thresholds) != X.shape[1]:
        raise ValueError(
            f"thresholds must hold one array per feature ({X.shape[1]}), got {len(thresholds)}"
        )
    features = np.concatenate([np.full(len(t), j) for j, t in enumerate(thresholds)]).astype(int)
    server = FederatedServer(
        domain_labels.size, features, np.concatenate(thresholds), r, s, random_state=rng
    )
    run = FederatedRun(
        setup={
            "numbers_to_clients": transport.sent + features.size * len(shards),
            "numbers_from_clients": transport.received,
            "n_candidates": features.size,
            "n_clients": len(shards),
            "failures": transport.failures,
        }
    )
    for round_number in range(1, n_rounds + 1):
        transport.round, transport.sent, transport.received = round_number, 0, 0
        transport.failures = []
        participants = server.select_clients(clients_by_domain)
        candidates = server.select_candidates()
        restarts = 0
        while True:
            if any(not ids for ids in participants):
                record = {"direction": None, "step": 0.0, "stop": "a domain has no client"}
                break
            try:
                record = _round(server, transport, participants, candidates, line_search_batch)
                break
            except ClientFailure as failure:
                participants = [[c for c in ids if c != failure.client] for ids in participants]
                restarts += 1
        if record["direction"] is not None:
            server.commit(record["direction"], record["step"])
        record.update(round=round_number, participants=participants, restarts=restarts,
                      failures=transport.failures, numbers_to_clients=transport.sent,
                      numbers_from_clients=transport.received)  # fmt: skip
        run.history.append(record)
        if record.get("stop") in ("no coordinate decreases F", "separating direction"):
            break
    run.messages, run.client_points = transport.log, client_points
    return _as_estimator(server.state, q, classes, domain_labels, X.shape[1], run)


def _as_estimator(state, q, classes, domain_labels, n_features, run):
    """A fitted MultiBoostClassifier holding the federated ensemble."""
    clf = MultiBoostClassifier(n_estimators=max(len(run.history), 1), domain_classifier=q)
    clf.classes_, clf.domains_, clf.n_features_in_ = classes, domain_labels, n_features
    clf.domain_classifier_ = q
    clf.estimators_ = [
        (int(k), Stump(feature=int(j), threshold=float(t), polarity=int(p)))
        for k, j, t, p in zip(state.domains, state.features, state.thresholds, state.polarities)
    ]
    clf.estimator_weights_ = state.steps.copy()
    clf.history_, terms = [], iter(clf.estimators_)
    for record in run.history:
        entry = {"losses": record.get("losses"), "active": record.get("active"),
                 "step": record["step"], "domain": None, "stump": None}  # fmt: skip
        if record["direction"] is not None:
            entry["domain"], entry["stump"] = domain_labels[record["direction"][0]], next(terms)[1]
        if "stop" in record:
            entry["stop"] = record["stop"]
        clf.history_.append(entry)
    clf.federated_run_ = run
    return clf
