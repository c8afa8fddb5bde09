"""FEDMULTIBOOST's transport over Flower's Message API.

Lives here: :class:`GridLink` (the only code that builds and reads Flower Messages on the
server: a request content to its node, a reply back as its content or ``Error``),
:class:`FlowerTransport` (the protocol's transport on a :class:`GridLink`: batches, deadlines,
error codes, secure sums of :mod:`.secure`) and :func:`hello` (who each SuperNode is). Not
here: the ServerApp (:mod:`.apps`), the ClientApp and the wire format (:mod:`.clientapp`).
"""

from __future__ import annotations

import time

import numpy as np

from ...._validation import check_timeout
from ..protocol import Transport
from .clientapp import (
    CLIENT_APP_RAISED_EXCEPTION,
    HELLO,
    MESSAGE_TYPE,
    ClientAppError,
    decode_reply,
    encode_request,
)
from .secure import unmask_sum

try:
    from flwr.app import Error, Message
    from flwr.serverapp import Grid
except ImportError:  # a bare install still imports this module; the runner says what to install
    Error = Message = Grid = None

__all__ = [
    "FLOWER_ERRORS",
    "SECURE_PHASES",
    "FlowerTransport",
    "GridLink",
    "hello",
]

# replies the server only sums over a source
SECURE_PHASES = ("round", "line_search", "grow", "histogram")

# Flower's error codes of a Message's Error (``flwr.app.Error.code``), by name
FLOWER_ERRORS = {
    0: "UNKNOWN", 1: "LOAD_CLIENT_APP_EXCEPTION",
    CLIENT_APP_RAISED_EXCEPTION: "CLIENT_APP_RAISED_EXCEPTION",
    3: "MESSAGE_UNAVAILABLE", 4: "REPLY_MESSAGE_UNAVAILABLE", 5: "NODE_UNAVAILABLE",
    6: "MOD_FAILED_PRECONDITION", 7: "INVALID_FAB", 8: "CLIENT_APP_CRASHED",
}  # fmt: skip


class GridLink:
    """The Flower end of :class:`FlowerTransport`: request contents as Messages on a Grid.

    Everything the transport does with Flower's Message API is here: a request content
    (:func:`~.clientapp.encode_request`) becomes a ``Message`` to its node (type
    :data:`~.clientapp.MESSAGE_TYPE`, the batch's group id and TTL), pushed with
    ``grid.push_messages``; a reply pulled with ``grid.pull_messages`` becomes (the id of the
    message it answers, its content or its ``Error``). Any object with the same three methods
    can stand in for it (the tests' in-process loopback does).

    Parameters
    ----------
    grid : Grid
        The ServerApp's Flower Grid.

    Examples
    --------
    Built by the ServerApp on the Grid Flower hands it (see :func:`run_server`):

    >>> transport = FlowerTransport(GridLink(grid), {}, timeout=30.0)  # doctest: +SKIP
    """

    def __init__(self, grid: Grid):
        self.grid = grid

    def node_ids(self) -> list:
        """The ids of the SuperNodes connected.

        Returns
        -------
        list of int
            Flower's node ids.

        Examples
        --------
        >>> GridLink(grid).node_ids()  # doctest: +SKIP
        [4711, 815]
        """
        return list(self.grid.get_node_ids())

    def push(self, requests, group_id="", ttl=None) -> list:
        """Send one Message per request.

        Parameters
        ----------
        requests : list of (int, RecordDict)
            (node id, content) of each message.
        group_id : str, default=""
            The messages' group (the round).
        ttl : float, optional
            Seconds Flower keeps a message (and its reply) valid; None: Flower's default.

        Returns
        -------
        list of str or None
            The message ids, request by request; None where the SuperLink refused one.

        Examples
        --------
        >>> link.push([(4711, encode_request("separating", {"domain": 0}))], "3", 30.0)
        ... # doctest: +SKIP
        ['5e0c...']
        """
        messages = [Message(content, int(node), MESSAGE_TYPE, group_id=group_id, ttl=ttl)
                    for node, content in requests]  # fmt: skip
        ids = list(self.grid.push_messages(messages))
        return ids + [None] * (len(messages) - len(ids))  # all refused: Flower returns []

    def pull(self, message_ids) -> list:
        """The replies in so far.

        Parameters
        ----------
        message_ids : iterable of str
            The ids :meth:`push` returned.

        Returns
        -------
        list of (str, RecordDict or Error)
            (the id of the message answered, the reply's content or its ``Error``).

        Examples
        --------
        >>> link.pull(ids)  # doctest: +SKIP
        [('5e0c...', RecordDict(...))]
        """
        return [(reply.metadata.reply_to_message_id,
                 reply.error if reply.has_error() else reply.content)
                for reply in self.grid.pull_messages(list(message_ids))]  # fmt: skip


class FlowerTransport(Transport):
    """The protocol's :class:`~manytask.boost.federated.protocol.Transport` over a Flower Grid.

    One Message per client and request (type "query", group id = the round, TTL = ``timeout``:
    Flower discards a message nobody took in time), pushed together through ``link``
    (:class:`GridLink`); the replies are pulled until all are in or ``timeout`` seconds have
    passed (None: wait), as ``grid.send_and_receive`` does, but with pauses from 2 ms doubling
    up to ``poll`` seconds instead of its fixed 3 s. ``nodes`` maps client ids to Flower node
    ids. An error reply becomes :class:`ClientAppError` named by Flower's error code
    (:data:`FLOWER_ERRORS`): the ClientApp's exception (``CLIENT_APP_RAISED_EXCEPTION``), the
    SuperLink's ``NODE_UNAVAILABLE`` for a SuperNode that stopped its heartbeat, ...; a reply
    missing at the deadline becomes ``TimeoutError``, whatever the client was doing. The base
    class retries and counts. ``batch_seconds``: (round, wall seconds from push to the last
    reply) of every request batch; ``batch_started``: (round, its start as ``time.time()``, to
    match with other processes' logs).

    ``secure=True`` (needs ``retries=0`` and the clients' public keys, which :func:`hello`
    collects): in :data:`SECURE_PHASES` each source's clients mask their replies pairwise
    (:mod:`.secure`); the transport sums each source's masked replies, and hands the driver
    that sum as the reply of the source's first client and zeros as the others' (the driver
    sums them: the same totals); a batch in which a client of the source failed is not
    unmasked (the driver restarts the round). The extra request fields (peers, keys, nonce)
    are not counted as protocol numbers.

    Parameters
    ----------
    link : GridLink
        The ServerApp's Flower Grid, wrapped.
    nodes : dict
        {client id: Flower node id}.
    retries : int, default=0
        Further attempts for the clients that failed.
    timeout : float, optional
        Seconds to wait for the replies of one request batch; None waits.
    record : bool, default=False
        Whether to keep the log of every client→server message.
    poll : float, default=0.05
        The longest pause (seconds) between pulls of the replies.
    secure : bool, default=False
        Pairwise-masked sums.

    Examples
    --------
    Built by the ServerApp on the Grid Flower hands it (see :func:`run_server`):

    >>> transport = FlowerTransport(GridLink(grid), {}, timeout=30.0)  # doctest: +SKIP
    """

    def __init__(self, link: GridLink, nodes: dict, retries=0, timeout=None, record=False,
                 poll=0.05, secure=False):  # fmt: skip
        super().__init__(retries, record)
        check_timeout(timeout)
        if secure and retries:
            raise ValueError(f"secure sums need retries=0 (a retry would meet other masks), "
                             f"got retries={retries!r}")  # fmt: skip
        self.secure, self.public_keys, self.domain_of = bool(secure), {}, {}
        if not poll > 0:
            raise ValueError(f"poll must be > 0, got {poll!r}")
        self.link, self.nodes, self.timeout, self.poll = link, dict(nodes), timeout, poll
        self.batch_seconds, self.batch_started = [], []

    def _send(self, phase, payloads):
        start = time.perf_counter()
        self.batch_started.append((self.round, time.time()))
        clients = list(payloads)
        groups = None
        if self.secure and phase in SECURE_PHASES:
            payloads, groups = self._masked_requests(payloads)
        requests = [(self.nodes[client], encode_request(phase, payloads[client]))
                    for client in clients]  # fmt: skip
        results = self._exchange(clients, requests, str(self.round))
        if groups is not None:
            results = _source_sums(results, groups)
        self.batch_seconds.append((self.round, time.perf_counter() - start))
        return results

    def _masked_requests(self, payloads):
        """Each payload with its client's :data:`MASK_FIELDS`; the groups (clients of one
        source in this batch)."""
        groups = {}
        for client in sorted(payloads):
            groups.setdefault(self.domain_of[client], []).append(client)
        nonce = np.array([self.round, self.batches], dtype=np.int64)
        masked = {}
        for group in groups.values():
            keys = np.stack([np.frombuffer(self.public_keys[c], dtype=np.uint8) for c in group])
            for client in group:
                masked[client] = {**payloads[client], "mask_me": client,
                                  "mask_peers": np.array(group), "mask_keys": keys,
                                  "mask_nonce": nonce}  # fmt: skip
        return masked, list(groups.values())

    def _exchange(self, clients, requests, group_id, timeout=None):
        """Push ``requests`` ((node, content), one per client), pull the replies for
        ``timeout`` seconds (None: the transport's): {client: decoded reply or error}."""
        timeout = self.timeout if timeout is None else timeout
        ids = self.link.push(requests, group_id, timeout)
        results = {client: ClientAppError("the SuperLink refused the message")
                   for client, message_id in zip(clients, ids) if message_id is None}  # fmt: skip
        pending = {message_id: client for client, message_id in zip(clients, ids) if message_id}
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = min(0.002, self.poll)
        while pending:
            for message_id, reply in self.link.pull(list(pending)):
                client = pending.pop(message_id, None)
                if client is None:
                    continue
                if isinstance(reply, Error):
                    results[client] = _flower_error(reply)
                else:
                    results[client] = decode_reply(reply)
            if not pending or (deadline is not None and time.monotonic() > deadline):
                break
            time.sleep(pause)
            pause = min(2 * pause, self.poll)
        for client in pending.values():
            results[client] = TimeoutError(f"no reply within {timeout} s")
        return results


def _source_sums(results, groups):
    """Per group, the unmasked sum as its first client's reply and zeros as the others'; a
    group with a failed client is left masked (the driver drops the client, restarts)."""
    results = dict(results)
    for group in groups:
        if any(isinstance(results[c], BaseException) for c in group):
            continue
        total = unmask_sum([results[c] for c in group])
        results.update({c: total if c == group[0] else _zeros_like(total) for c in group})
    return results


def _zeros_like(message):
    return {key: type(value)(0) if np.ndim(value) == 0 else np.zeros_like(value)
            for key, value in message.items()}  # fmt: skip


def _flower_error(error) -> ClientAppError:
    """Flower's ``Error`` of a reply as ``ClientAppError("CODE_NAME: reason")``."""
    return ClientAppError(f"{FLOWER_ERRORS.get(error.code, error.code)}: {error.reason}")


def hello(transport, nodes, wait=60.0):
    """Ask every node who it is; returns ({client id: node id}, clients by domain, d).

    Client ids come from the SuperNodes' ``client-id`` node config, or else are numbered by
    (domain, node id); a node that does not answer within ``wait`` seconds (the first message
    of a run also waits for the runtime to start its ClientApps) takes no part. Not counted as
    protocol traffic (a deployment detail).

    Parameters
    ----------
    transport : FlowerTransport
        The transport; its ``nodes``, ``domain_of`` (and ``public_keys``) are set.
    nodes : sequence of int
        The Flower node ids connected.
    wait : float, default=60.0
        Seconds to wait for the answers.

    Returns
    -------
    nodes : dict
        {client id: node id} of the nodes that answered.
    clients_by_domain : list of list of int
        The client ids of each domain.
    n_features : int
        The number of features d every client holds.

    Examples
    --------
    Run by the ServerApp on a running federation (needs SuperNodes):

    >>> nodes, clients_by_domain, d = hello(transport, transport.link.node_ids())  # doctest: +SKIP
    """
    transport.nodes = {node: node for node in nodes}
    request = encode_request(HELLO, {"secure": 1} if transport.secure else {})
    answers = transport._exchange(nodes, [(node, request) for node in nodes], "", wait)
    silent = {node: answer for node, answer in answers.items()
              if isinstance(answer, BaseException)}  # fmt: skip
    nodes = [node for node in nodes if node not in silent]  # left out of the run
    if not nodes:
        raise RuntimeError(f"no SuperNode answered the hello: {silent}")
    ids = [answers[node]["client"] for node in nodes]
    if min(ids) < 0 or len(set(ids)) < len(ids):
        ordered = sorted(nodes, key=lambda node: (answers[node]["domain"], node))
        ids = [ordered.index(node) for node in nodes]
    features = {answers[node]["n_features"] for node in nodes}
    if len(features) != 1:
        raise RuntimeError(f"the clients hold different numbers of features: {sorted(features)}")
    transport.nodes = dict(zip(ids, nodes))
    transport.domain_of = {c: int(answers[node]["domain"]) for c, node in zip(ids, nodes)}
    if transport.secure:
        transport.public_keys = {c: bytes(np.asarray(answers[node]["public_key"], np.uint8))
                                 for c, node in zip(ids, nodes)}  # fmt: skip
    n_domains = 1 + max(answer["domain"] for answer in answers.values())
    clients_by_domain = [
        sorted(c for c, node in transport.nodes.items() if answers[node]["domain"] == k)
        for k in range(n_domains)
    ]
    return dict(transport.nodes), clients_by_domain, features.pop()
