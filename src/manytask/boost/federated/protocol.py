"""FEDMULTIBOOST's messages: what the server asks, what a client answers, and the transport.

Lives here, shared by every transport (in-process, Flower, Dask):

- :func:`respond`, the whole client: ``(phase, shard, payload, kept) -> (message, kept)``, a
  pure function of the client's shard, the server's payload and what the client kept from
  earlier phases of the run (the candidate stumps, the round's model state). Every value in a
  payload or message is a number or an array of numbers, so each transport can ship it as is.
- :func:`state_to_payload` / :func:`state_from_payload`: :class:`~.client.ModelState` as arrays.
- :class:`Transport`, the base of every transport: retries, the count of numbers that cross
  the wire each way, the log of messages; a transport only implements ``_send``.

Phases (payload → message; n candidates, s per asked domain, p domains, d features, R = 1
if p = 2 else p rows of Q's parameters):

- ``domain_moments``: nothing → ``n_points``, ``mean`` and ``m2`` (d each);
  ``domain_loss``: ``coef`` (R, d), ``intercept`` (R) → ``n_points``, ``loss_sum``,
  ``coef_grad`` (R, d), ``intercept_grad`` (R); ``domain_model``: ``coef``, ``intercept``,
  ``clip`` → ``n_clipped``, the client keeping its Q(·|x_i). Q(k|x) trained without pooling
  inputs (:mod:`.domain`); a client that kept Q uses it instead of its shard's.
- ``setup``: ``levels`` (L) → ``n_points``, ``quantiles`` (d, L).
- ``candidates``: ``features``, ``thresholds`` (n) → ``min_probabilities`` (p), min_i Q(k|x_i)
  (the finite step of a separating stump); the client keeps the table and its
  :class:`~.client.EdgeIndex`.
- ``round``, the whole round of Figure 2 with the AdaBoost step: ``state_start`` (1), the
  terms the client lacks (5 each, :func:`state_to_payload`), ``domains`` (the rows) and
  ``asked`` (rows, s) → ``n_points``, ``loss_sum`` (Φ_c, Z_{t,c}) and ``edge_sums`` (rows, s;
  β_{t,c,r} on the client's own row).
- ``propose`` and ``score``, the round with trees of depth d (``max_depth``): ``propose``
  carries ``state_start``, the terms the client lacks (2 + 2·(2^d − 1) + 2^d each) and
  ``max_depth`` → ``n_points``, ``loss_sum`` and the client's tree for its source
  (:func:`~.client.client_tree`: ``tree_features``, ``tree_thresholds``, ``tree_votes``);
  ``score`` carries the s candidate trees of the client's source (those three arrays, s rows)
  → ``edge_sums`` (1, s; :func:`~.client.client_tree_edges`). With the soft-max both carry
  ``domains`` (all p): a tree per domain q, and the s trees of every q → (p, s) edges.
- ``grow`` and ``histogram``, the round with trees grown from summed histograms
  (``FederatedServer(histogram_trees=True)``, what secure sums need): ``grow`` carries
  ``state_start`` and the terms the client lacks → ``n_points``, ``loss_sum`` and the root's
  ``histogram`` (1, d, B, 2) of its source's tree (:func:`~.client.client_histograms`);
  ``histogram`` carries the tree so far (``tree_features``, ``tree_thresholds``: 2^ℓ − 1
  each) and the ``nodes`` of level ℓ asked → their ``histogram`` (len(nodes), d, B, 2). With
  the soft-max both carry ``domains``: the root of every domain q's tree (p, d, B, 2), then
  each asked q's tree so far (a row each) and a boolean ``nodes`` row of level ℓ → the asked
  (q, node) histograms stacked.
- ``line_search`` (``step="exact_line_search"`` only): ``direction`` (4; a tree:
  ``direction_domain`` and its three tree arrays), ``steps`` (b) → ``loss_sums``,
  ``slope_sums`` (b each).
- ``separating``: ``domain`` (1) → ``min_probability`` (a client whose set-up report is
  missing).
- ``losses`` (a whole state → ``n_points``, ``loss_sum``, e.g. the final objective) and
  ``edges`` (``domains``, ``asked`` → ``edge_sums`` at that state): the two halves of a
  ``round``, for a caller that needs them apart.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import replace

import numpy as np

from . import domain_client
from .client import (
    ClientShard,
    EdgeIndex,
    ModelState,
    advance_margins,
    client_bins,
    client_edges,
    client_histograms,
    client_losses_along,
    client_margins,
    client_min_probability,
    client_quantiles,
    client_statistics,
    client_tree,
    client_tree_edges,
)

__all__ = [
    "PHASES",
    "ClientFailure",
    "InProcessTransport",
    "Transport",
    "ask_every",
    "count_numbers",
    "respond",
    "state_from_payload",
    "state_to_payload",
]

_STATE_FIELDS = ("domains", "features", "thresholds", "polarities", "steps")


class ClientFailure(RuntimeError):
    """A client raised or timed out, after the retries of the policy.

    Parameters
    ----------
    client : int
        The client's id.
    phase : str
        The phase of the request it failed.
    error : BaseException
        What it raised.

    Examples
    --------
    >>> failure = ClientFailure(3, "round", TimeoutError("no answer"))
    >>> failure.client, str(failure)
    (3, "client 3 failed in phase 'round': TimeoutError('no answer')")
    """

    def __init__(self, client, phase, error):
        super().__init__(f"client {client} failed in phase {phase!r}: {error!r}")
        self.client, self.phase, self.error = client, phase, error


def state_to_payload(state: ModelState) -> dict:
    """The state f_{t−1} as five arrays (k, feature, θ, polarity, α per term).

    Parameters
    ----------
    state : ModelState
        The terms of f.

    Returns
    -------
    dict
        ``state_domains``, ``state_features``, ``state_thresholds``, ``state_polarities``
        and ``state_steps``.

    Examples
    --------
    >>> payload = state_to_payload(ModelState().with_term(0, 1, 0.5, -1.0, 0.25))
    >>> sorted(payload), payload["state_steps"].tolist()
    (['state_domains', 'state_features', 'state_polarities', 'state_steps', \
'state_thresholds'], [0.25])
    """
    return {f"state_{name}": getattr(state, name) for name in _STATE_FIELDS}


def state_from_payload(payload: dict) -> ModelState:
    """Inverse of :func:`state_to_payload`.

    Parameters
    ----------
    payload : dict
        The five ``state_*`` arrays (other keys are ignored).

    Returns
    -------
    ModelState
        The state, integer domains and features, float thresholds, polarities and steps.

    Examples
    --------
    >>> state = ModelState().with_term(0, 1, 0.5, -1.0, 0.25)
    >>> state_from_payload(state_to_payload(state)).thresholds.tolist()
    [0.5]
    """
    return ModelState(
        np.asarray(payload["state_domains"], dtype=int),
        np.asarray(payload["state_features"], dtype=int),
        *(np.asarray(payload[f"state_{name}"], dtype=float) for name in _STATE_FIELDS[2:]),
    )


def _setup(shard, payload, kept):
    return client_quantiles(shard, np.asarray(payload["levels"])), kept


def _candidates(shard, payload, kept):
    features = np.asarray(payload["features"], dtype=int)
    thresholds = np.asarray(payload["thresholds"], dtype=float)
    # where the shard's points fall among the thresholds: every later edge request is then
    # O(m·d + n) (client_edges), whichever subset of the candidates it asks for
    index = EdgeIndex(shard.X, features, thresholds)
    message = {"min_probabilities": shard.domain_probabilities.min(axis=0)}
    return message, {**kept, "features": features, "thresholds": thresholds,
                     "edge_index": index}  # fmt: skip


def _losses(shard, payload, kept):
    """Φ and Z at a whole state; the client keeps the state, its margins and a_i, so that
    ``edges`` and ``line_search`` (or a ``round``) may follow."""
    state = state_from_payload(payload)
    margins = client_margins(state, shard)
    scaled = np.exp(-margins)
    message = client_statistics(state, shard, scaled)
    return message, {**kept, "state": state, "margins": margins, "scaled": scaled}


def _edges(shard, payload, kept):
    """The edges of the asked candidates at the state of the last ``losses`` request."""
    asked = np.asarray(payload["asked"], dtype=int)
    message = client_edges(
        kept["state"], shard, np.asarray(payload["domains"], dtype=int),
        kept["features"][asked], kept["thresholds"][asked], index=kept.get("edge_index"),
        scaled=kept["scaled"],
    )  # fmt: skip
    return message, kept


def _advance(shard, payload, kept):
    """The client after the server's new terms: (state, margins, a_i, kept)."""
    state, margins = advance_margins(
        shard, kept.get("state", ModelState()), kept.get("margins"),
        int(np.asarray(payload["state_start"])), state_from_payload(payload),
    )  # fmt: skip
    if "features" not in kept:
        raise ValueError("a round needs the candidate table: the candidates request did not "
                         "reach this client")  # fmt: skip
    scaled = np.exp(-margins)  # a_i, kept for a line search in this round
    return state, scaled, {**kept, "state": state, "margins": margins, "scaled": scaled}


def _round(shard, payload, kept):
    """Figure 2, lines 7–8 and 15–16 in one answer, after applying the terms the server sent."""
    state, scaled, kept = _advance(shard, payload, kept)
    asked = np.asarray(payload["asked"], dtype=int)
    message = client_statistics(state, shard, scaled)
    message.update(client_edges(
        state, shard, np.asarray(payload["domains"], dtype=int), kept["features"][asked],
        kept["thresholds"][asked], index=kept.get("edge_index"), scaled=scaled,
    ))  # fmt: skip
    return message, kept


def _propose(shard, payload, kept):
    """Figure 2, lines 7–8 and the client's candidate tree, after applying the new terms; the
    shard is binned at the candidate table once and kept."""
    state, scaled, kept = _advance(shard, payload, kept)
    kept = _binned(shard, kept)
    message = client_statistics(state, shard, scaled)
    depth = int(np.asarray(payload["max_depth"]))
    if "domains" not in payload:  # the hard max: a tree for the client's source
        message.update(client_tree(shard, kept["binned"], scaled, depth))
        return message, kept
    trees = [client_tree(shard, kept["binned"], scaled, depth, q) for q in payload["domains"]]
    message.update({key: np.stack([tree[key] for tree in trees]) for key in trees[0]})
    return message, kept


def _binned(shard, kept):
    """``kept`` with the shard binned at the candidate table (once per run)."""
    if "binned" in kept:
        return kept
    return {**kept, "binned": client_bins(shard, kept["features"], kept["thresholds"])}


def _grow(shard, payload, kept):
    """Figure 2, lines 7–8 and the root histogram of the client's source tree (with
    ``domains``: of the tree of each domain q), after applying the new terms."""
    state, scaled, kept = _advance(shard, payload, kept)
    kept = _binned(shard, kept)
    message = client_statistics(state, shard, scaled)
    domains = payload.get("domains", [None])
    message["histogram"] = np.concatenate([
        client_histograms(shard, kept["binned"], scaled, {}, q)["histogram"] for q in domains
    ])  # fmt: skip
    return message, kept


def _histogram(shard, payload, kept):
    """A level's histograms of the client's source tree, or with ``domains`` of the tree of
    each domain q (its rows of ``tree_features``, ``tree_thresholds`` and of the boolean
    ``nodes``), stacked in (q, node) order."""
    if "domains" not in payload:
        return client_histograms(shard, kept["binned"], kept["scaled"], payload), kept
    rows = [{"tree_features": features, "tree_thresholds": thresholds,
             "nodes": np.flatnonzero(nodes)}
            for features, thresholds, nodes in zip(*(np.asarray(payload[key]) for key in (
                "tree_features", "tree_thresholds", "nodes")))]  # fmt: skip
    histograms = [client_histograms(shard, kept["binned"], kept["scaled"], tree, q)["histogram"]
                  for tree, q in zip(rows, payload["domains"])]  # fmt: skip
    return {"histogram": np.concatenate(histograms)}, kept


def _score(shard, payload, kept):
    domains = payload.get("domains")
    return client_tree_edges(shard, payload, kept["scaled"], domains), kept


def _line_search(shard, payload, kept):
    if "direction" in payload:  # a stump: (k, j, θ, polarity)
        domain, feature, threshold, polarity = np.asarray(payload["direction"], dtype=float)
        direction = (int(domain), int(feature), float(threshold), int(polarity))
    else:  # a tree
        direction = (int(np.asarray(payload["direction_domain"])),
                     *(np.asarray(payload[key]) for key in ("tree_features", "tree_thresholds",
                                                             "tree_votes")))  # fmt: skip
    steps = np.asarray(payload["steps"], dtype=float)
    message = client_losses_along(kept["state"], shard, direction, steps, kept["scaled"])
    return message, kept


def _separating(shard, payload, kept):
    return client_min_probability(shard, int(np.asarray(payload["domain"]))), kept


PHASES = {
    "domain_moments": domain_client.client_moments,
    "domain_loss": domain_client.client_loss,
    "domain_model": domain_client.client_install,
    "setup": _setup,
    "candidates": _candidates,
    "round": _round,
    "propose": _propose,
    "score": _score,
    "grow": _grow,
    "histogram": _histogram,
    "losses": _losses,
    "edges": _edges,
    "line_search": _line_search,
    "separating": _separating,
}


def respond(phase: str, shard: ClientShard, payload: dict, kept: dict) -> tuple[dict, dict]:
    """The client's answer to one request: (message, what it keeps for later phases).

    ``kept`` is never modified in place (a new dict is returned), so a transport may retry.
    ValueError for an unknown phase.

    Parameters
    ----------
    phase : str
        One of :data:`PHASES` (the module's list of phases).
    shard : ClientShard
        The client's data.
    payload : dict
        The server's request.
    kept : dict
        What the client kept from earlier phases of the run.

    Returns
    -------
    message : dict
        The answer, numbers and arrays of numbers only.
    kept : dict
        What the client keeps for later phases.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> _, kept = respond("candidates", shard, {"features": [0], "thresholds": [0.5]}, {})
    >>> payload = {"state_start": 0, **state_to_payload(ModelState()), "domains": [0],
    ...            "asked": [[0]]}
    >>> message, kept = respond("round", shard, payload, kept)
    >>> message["n_points"], message["loss_sum"], message["edge_sums"].tolist()
    (2, 2.0, [[2.0]])
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {sorted(PHASES)}, got {phase!r}")
    if "domain_probabilities" in kept:  # Q installed by the domain_model phase
        shard = replace(shard, domain_probabilities=kept["domain_probabilities"])
    return PHASES[phase](shard, payload, kept)


def count_numbers(message: dict) -> int:
    """How many numbers a payload or message carries (what crosses the wire).

    Parameters
    ----------
    message : dict
        A payload or message.

    Returns
    -------
    int
        The total size of its values.

    Examples
    --------
    >>> count_numbers({"n_points": 2, "quantiles": np.zeros((3, 4))})
    13
    """
    return int(sum(np.size(value) for value in message.values()))


def ask_every(transport, phase: str, payloads: dict) -> dict:
    """{client: answer} of one request batch, sent again without each client that fails
    (after the transport's retries; the failures stay in ``transport.failures``), so one
    failing client hides no other's answer.

    Parameters
    ----------
    transport : Transport
        The transport to the clients.
    phase : str
        The phase of the request.
    payloads : dict
        {client: payload}.

    Returns
    -------
    dict
        {client: message} of the clients that answered.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> def fail_one(round_, client, phase):
    ...     if client == 1:
    ...         raise RuntimeError("down")
    >>> transport = InProcessTransport([shard, shard], fault=fail_one)
    >>> answers = ask_every(transport, "setup", {0: {"levels": [0.5]}, 1: {"levels": [0.5]}})
    >>> sorted(answers), [failure["client"] for failure in transport.failures]
    ([0], [1])
    """
    pending, answers = dict(payloads), {}
    while pending:
        try:
            answers.update(transport.request(phase, pending))
            break
        except ClientFailure as failure:
            del pending[failure.client]
    return answers


class Transport(ABC):
    """Carries the server's requests to the clients; the same for every transport.

    Subclasses implement :meth:`_send` (one attempt at a batch of requests). This class adds
    the retry policy (``retries`` further attempts for the clients that failed), counts the
    numbers sent each way (``sent``, ``received``) and the request batches (``batches``, one
    per attempt: all reset by the caller each round), keeps the
    failures of the round and, with ``record``, the log of every client→server message as
    (round, phase, client, message).

    Parameters
    ----------
    retries : int, default=0
        Further attempts for the clients that failed (>= 0).
    record : bool, default=False
        Whether to keep the log of every client→server message.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> transport = InProcessTransport([shard], record=True)
    >>> transport.request("setup", {0: {"levels": [0.0, 1.0]}})[0]["quantiles"].tolist()
    [[0.0, 1.0]]
    >>> transport.sent, transport.received, transport.batches, len(transport.log)
    (2, 3, 1, 1)
    """

    def __init__(self, retries: int = 0, record: bool = False):
        if not isinstance(retries, (int, np.integer)) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        self.retries, self.record = retries, record
        self.round, self.sent, self.received, self.batches = 0, 0, 0, 0
        self.log, self.failures = [], []

    @abstractmethod
    def _send(self, phase: str, payloads: dict) -> dict:
        """{client: payload} → {client: message dict, or the exception the client raised}."""

    def close(self) -> None:
        """Release what the transport holds (processes, connections); a no-op by default.

        Examples
        --------
        >>> InProcessTransport([]).close()
        """
        return None

    def request(self, phase: str, payloads: dict) -> dict:
        """Send ``payloads[c]`` to each client c; return {c: message} for all of them.

        Raises :class:`ClientFailure` for the first client (in client order) that still
        fails after the retries; the caller then decides (drop it and restart the round).

        Parameters
        ----------
        phase : str
            The phase of the request.
        payloads : dict
            {client: payload}.

        Returns
        -------
        dict
            {client: message}, in the order of ``payloads``.

        Examples
        --------
        >>> shard = ClientShard(np.zeros((2, 1)), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
        >>> InProcessTransport([shard]).request("setup", {0: {"levels": [0.5]}})
        {0: {'n_points': 2, 'quantiles': array([[0.]])}}
        """
        answers, pending = {}, dict(payloads)
        for attempt in range(self.retries + 1):
            self.sent += sum(count_numbers(payload) for payload in pending.values())
            self.batches += 1
            results = self._send(phase, pending)
            failed = {}
            for client in pending:
                result = results.get(client, TimeoutError("no answer"))
                if isinstance(result, BaseException):
                    self.failures.append({"client": client, "phase": phase, "attempt": attempt,
                                          "error": repr(result)})  # fmt: skip
                    failed[client] = result
                    continue
                self.received += count_numbers(result)
                if self.record:
                    self.log.append((self.round, phase, client, result))
                answers[client] = result
            if not failed:
                return {client: answers[client] for client in payloads}
            pending = {client: payloads[client] for client in failed}
        client = min(failed)
        raise ClientFailure(client, phase, failed[client])


class InProcessTransport(Transport):
    """Calls :func:`respond` in this process: the transport of :func:`~.simulate`.

    ``fault(round, client, phase)`` (tests) may raise to make a call fail; an answer that
    takes longer than ``timeout`` seconds counts as a failure.

    Parameters
    ----------
    shards : sequence of ClientShard
        The clients' data; client c holds ``shards[c]``.
    retries : int, default=0
        Further attempts for the clients that failed.
    timeout : float, optional
        Seconds after which an answer counts as a failure; None waits.
    fault : callable, optional
        ``fault(round, client, phase)``, called before each answer; it may raise.
    record : bool, default=False
        Whether to keep the log of every client→server message.

    Examples
    --------
    >>> shard = ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), 0, np.ones((2, 1)))
    >>> transport = InProcessTransport([shard])
    >>> transport.request("setup", {0: {"levels": [1.0]}})[0]["n_points"]
    2
    """

    def __init__(self, shards, retries=0, timeout=None, fault=None, record=False):
        super().__init__(retries, record)
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be None or > 0, got {timeout!r}")
        self.shards, self.timeout, self.fault = shards, timeout, fault
        self.kept = [{} for _ in shards]

    def _send(self, phase, payloads):
        results = {}
        for client, payload in payloads.items():
            start = time.perf_counter()
            try:
                if self.fault is not None:
                    self.fault(self.round, client, phase)
                message, kept = respond(phase, self.shards[client], payload, self.kept[client])
                elapsed = time.perf_counter() - start
                if self.timeout is not None and elapsed > self.timeout:
                    raise TimeoutError(f"{elapsed:.3g} s > timeout {self.timeout}")
            except Exception as error:  # a client may fail in any way
                results[client] = error
                continue
            self.kept[client] = kept
            results[client] = message
        return results
