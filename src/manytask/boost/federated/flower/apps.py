"""FEDMULTIBOOST's Flower ServerApp and :class:`FlowerTransport`.

Lives here: :class:`FlowerTransport` (the protocol's transport over a Flower ``Grid``), the
ServerApp ``server_app`` (waits for the SuperNodes, asks who they are, then does what
:func:`~manytask.boost.federated.simulate` does: the federated Q(k|x) of
:func:`~..domain.fit_domain_classifier`, then the driver of
:mod:`~manytask.boost.federated.driver`: :func:`setup_candidates`, :class:`FederatedServer`,
:func:`run_rounds`) and its result file (:func:`write_result`); ``client_app`` is re-exported
from :mod:`.clientapp`. Not here: the protocol (:mod:`..protocol`), the local deployment
runner (:mod:`.runner`).

Both apps take everything from Flower's configs, so the same app runs on Flower's Simulation
Runtime (:func:`~.runner.run_simulated_federation`), on its Deployment Runtime on one machine
(:func:`~.runner.run_local_federation`) or across machines, as any Flower App:

1. The app directory: :func:`~.runner.write_app` writes it (``pyproject.toml`` with
   ``[tool.flwr.app]`` naming this ServerApp and the ClientApp, and the run config
   :data:`RUN_CONFIG`). Every machine needs ``pip install manytask[fed]``.
2. Each client writes its shard with :func:`~.runner.save_shard` (X, y in {−1, +1}, its domain
   index; Q(·|x) on its points only with ``domain-classifier = "central"``) and starts a
   SuperNode pointing at the SuperLink::

       flower-supernode --superlink HOST:8000 --root-certificates ca.pem \\
           --node-config 'shard="/data/shard.npz" client-id=3'

   (``client-id`` is optional; without it the server numbers the clients by (domain, node id)).
3. The server side starts ``flower-superlink`` (TLS certificates, or ``--insecure`` on a
   trusted network) and the user submits the app with the Flower CLI::

       flwr run APP_DIR CONNECTION --stream --run-config 'n-clients=12 n-rounds=100'

   where ``CONNECTION`` names a SuperLink connection of the Flower configuration
   (``$FLWR_HOME/config.toml``: ``[superlink.CONNECTION]`` with the SuperLink's address and
   certificates). The run config sets ``n-clients`` (SuperNodes to wait for), ``n-rounds``,
   ``r``, ``s`` (0: all), ``seed``, ``thresholds`` (an .npz of per-feature thresholds on the
   server, "": quantile reports), ``domain-classifier`` ("federated": Q(k|x) trained over the
   clients first, the default), ``timeout`` (seconds a request batch waits for its replies: a
   client that has not answered by then is dropped from the round), ``result`` (where the
   server writes the model and the :class:`~manytask.boost.federated.driver.FederatedRun`
   history), ... The result is read back with :func:`~.runner.read_result`.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from pathlib import Path

import numpy as np

from ...._validation import check_timeout
from ..domain import fit_domain_classifier
from ..driver import run_rounds, setup_candidates
from ..protocol import Transport, state_to_payload
from ..server import FederatedServer
from .clientapp import (
    FLWR_MISSING,
    HELLO,
    MESSAGE_TYPE,
    ClientAppError,
    client_app,
    decode_reply,
    encode_request,
)
from .secure import unmask_sum

try:
    from flwr.app import Context, Message
    from flwr.serverapp import Grid, ServerApp
except ImportError:  # a bare install still imports this module; the runner says what to install
    ServerApp = None

__all__ = [
    "FLOWER_ERRORS",
    "FLWR_MISSING",
    "RUN_CONFIG",
    "FlowerTransport",
    "client_app",
    "hello",
    "server_app",
    "write_result",
]

# Run config of the ServerApp with its defaults (Flower's config values: str, int, float, bool);
# 0 or "" stand for None where the Python argument takes None.
RUN_CONFIG = {
    "result": "fedmultiboost-result.npz",  # where the server writes state + history
    # Q(k|x): "federated", trained over the clients before the set-up (their shards hold no
    # Q); "central", every shard holds Q(·|x) on its points (save_shard)
    "domain-classifier": "federated",
    "n-clients": 1,  # SuperNodes to wait for before the set-up
    "n-domains": 0,  # 0: 1 + the largest domain index the clients report
    "wait": 60.0,  # seconds to wait for the SuperNodes to connect, and for their hello
    "n-rounds": 100,
    "r": 0,
    "s": 0,
    "seed": -1,  # -1: fresh entropy
    "rng-state": "",  # JSON of a numpy PCG64 state (overrides seed): the runner's generator
    "thresholds": "",  # .npz with arrays "0", "1", ... (one per feature); "": quantiles
    "n-quantiles": 16,
    "line-search-batch": 15,
    "retries": 0,
    "timeout": 30.0,  # seconds per request batch (also the messages' TTL); 0: wait for all
    "mu": 0.0,  # soft-max μ of F_μ; 0: the hard max of Figure 2
    "shards": "",  # Simulation Runtime: the directory of client-<partition-id>.npz
    "secure": False,  # pairwise-masked sums (.secure): the server sees per-source sums only
}

SECURE_PHASES = ("round", "line_search")  # replies the server only sums over a source

# Flower's error codes of a Message's Error (``flwr.app.Error.code``), by name
FLOWER_ERRORS = {
    0: "UNKNOWN", 1: "LOAD_CLIENT_APP_EXCEPTION", 2: "CLIENT_APP_RAISED_EXCEPTION",
    3: "MESSAGE_UNAVAILABLE", 4: "REPLY_MESSAGE_UNAVAILABLE", 5: "NODE_UNAVAILABLE",
    6: "MOD_FAILED_PRECONDITION", 7: "INVALID_FAB", 8: "CLIENT_APP_CRASHED",
}  # fmt: skip


class FlowerTransport(Transport):
    """The protocol's :class:`~manytask.boost.federated.protocol.Transport` over a Flower Grid.

    One Message per client and request (type "query", group id = the round, TTL = ``timeout``:
    Flower discards a message nobody took in time), pushed together with
    ``grid.push_messages``; the replies are pulled until all are in or ``timeout`` seconds have
    passed (None: wait), as ``grid.send_and_receive`` does, but with pauses from 2 ms doubling
    up to ``poll`` seconds instead of its fixed 3 s. ``nodes`` maps client ids to Flower node
    ids. An error reply becomes :class:`ClientAppError` named by Flower's error code
    (:data:`FLOWER_ERRORS`): the ClientApp's exception (``CLIENT_APP_RAISED_EXCEPTION``), the
    SuperLink's ``NODE_UNAVAILABLE`` for a SuperNode that stopped its heartbeat, ...; a reply
    missing at the deadline becomes ``TimeoutError``, whatever the client was doing. The base
    class retries and counts. ``batch_seconds``: (round, wall seconds from push to the last
    reply) of every request batch.

    ``secure=True`` (needs ``retries=0`` and the clients' public keys, which :func:`hello`
    collects): in :data:`SECURE_PHASES` each source's clients mask their replies pairwise
    (:mod:`.secure`); the transport sums each source's masked replies, and hands the driver
    that sum as the reply of the source's first client and zeros as the others' (the driver
    sums them: the same totals); a batch in which a client of the source failed is not
    unmasked (the driver restarts the round). The extra request fields (peers, keys, nonce)
    are not counted as protocol numbers.

    Parameters
    ----------
    grid : Grid
        The ServerApp's Flower Grid.
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
    Built by the ServerApp on the Grid Flower hands it (see :func:`~.runner.run_local_federation`):

    >>> transport = FlowerTransport(grid, {}, timeout=30.0)  # doctest: +SKIP
    """

    def __init__(self, grid: Grid, nodes: dict, retries=0, timeout=None, record=False,
                 poll=0.05, secure=False):  # fmt: skip
        super().__init__(retries, record)
        check_timeout(timeout)
        if secure and retries:
            raise ValueError(f"secure sums need retries=0 (a retry would meet other masks), "
                             f"got retries={retries!r}")  # fmt: skip
        self.secure, self.public_keys, self.domain_of = bool(secure), {}, {}
        if not poll > 0:
            raise ValueError(f"poll must be > 0, got {poll!r}")
        self.grid, self.nodes, self.timeout, self.poll = grid, dict(nodes), timeout, poll
        self.batch_seconds = []

    def _send(self, phase, payloads):
        start = time.perf_counter()
        clients = list(payloads)
        groups = None
        if self.secure and phase in SECURE_PHASES:
            payloads, groups = self._masked_requests(payloads)
        messages = [
            Message(encode_request(phase, payloads[client]), self.nodes[client], MESSAGE_TYPE,
                    group_id=str(self.round), ttl=self.timeout)
            for client in clients
        ]  # fmt: skip
        results = self._exchange(clients, messages, decode_reply)
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

    def _exchange(self, clients, messages, decode, timeout=None):
        """Push ``messages`` (one per client), pull the replies for ``timeout`` seconds (None:
        the transport's): {client: decoded or error}."""
        timeout = self.timeout if timeout is None else timeout
        ids = list(self.grid.push_messages(messages))
        results = {client: ClientAppError("the SuperLink refused the message")
                   for client, message_id in zip(clients, ids) if message_id is None}  # fmt: skip
        pending = {message_id: client for client, message_id in zip(clients, ids) if message_id}
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = min(0.002, self.poll)
        while pending:
            for reply in self.grid.pull_messages(list(pending)):
                client = pending.pop(reply.metadata.reply_to_message_id, None)
                if client is None:
                    continue
                if reply.has_error():
                    results[client] = _flower_error(reply.error)
                else:
                    results[client] = decode(reply.content)
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


def _wait_for_nodes(grid, n_clients, wait):
    deadline = time.monotonic() + wait
    while True:
        nodes = sorted(grid.get_node_ids())
        if len(nodes) >= n_clients:
            return nodes
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(nodes)} SuperNodes connected in {wait} s, need {n_clients}")
        time.sleep(0.2)


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

    >>> nodes, clients_by_domain, d = hello(transport, grid.get_node_ids())  # doctest: +SKIP
    """
    transport.nodes = {node: node for node in nodes}
    request = {"secure": 1} if transport.secure else {}
    messages = [Message(encode_request(HELLO, request), node, MESSAGE_TYPE, ttl=wait)
                for node in nodes]  # fmt: skip
    answers = transport._exchange(nodes, messages, decode_reply, wait)
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


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot write {type(value).__name__} to the result file")


def write_result(path, state=None, run=None, error=None) -> None:
    """The server's result file (.npz): state arrays and a JSON "run"; atomic (rename).

    Parameters
    ----------
    path : str or path-like
        The result file.
    state : ModelState, optional
        The fitted terms.
    run : dict, optional
        The run's record (JSON-serialisable, NumPy values converted).
    error : str, optional
        The server's error, which :func:`~.runner.read_result` raises.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from manytask.boost.federated import ModelState
    >>> from manytask.boost.federated.flower.runner import read_result
    >>> with tempfile.TemporaryDirectory() as root:
    ...     path = pathlib.Path(root) / "result.npz"
    ...     write_result(path, ModelState().with_term(0, 0, 0.5, 1.0, 0.25), {"history": []})
    ...     state, run = read_result(path)
    >>> state.steps.tolist(), run
    ([0.25], {'history': [], 'error': None})
    """
    path = Path(path)
    arrays = state_to_payload(state) if state is not None else {}
    document = json.dumps({**(run or {}), "error": error}, default=_jsonable)
    partial = path.with_name(path.name + ".partial.npz")
    np.savez(partial, run=np.array(document), **arrays)
    os.replace(partial, path)


def _config(context):
    config = {**RUN_CONFIG, **context.run_config}
    return {key: config[key] for key in RUN_CONFIG}


def _thresholds(path):
    if not path:
        return None
    with np.load(path, allow_pickle=False) as data:
        return [data[str(j)] for j in range(len(data.files))]


def _train_domain_classifier(transport, clients_by_domain):
    """The federated Q(k|x) (:func:`~..domain.fit_domain_classifier`, domains numbered
    0..p−1): ({coef, intercept, clip, n_clipped} for the result file, its record)."""
    if len(clients_by_domain) < 2:
        raise ValueError(
            f"domain-classifier 'federated' needs at least 2 domains, got "
            f"{len(clients_by_domain)}; with one domain use 'central' and shards holding Q ≡ 1"
        )
    q, record = fit_domain_classifier(transport, clients_by_domain,
                                      np.arange(len(clients_by_domain)))  # fmt: skip
    model = {"coef": q.estimator_.coef, "intercept": q.estimator_.intercept, "clip": q.clip,
             "n_clipped": q.n_clipped_}  # fmt: skip
    return model, record


def server_main(grid: Grid, context: Context) -> None:
    """The ServerApp: wait for the SuperNodes, say hello, then the driver's loop."""
    config = _config(context)
    if config["domain-classifier"] not in ("federated", "central"):
        error = ValueError(f"domain-classifier must be 'federated' or 'central', got "
                           f"{config['domain-classifier']!r}")  # fmt: skip
        write_result(config["result"], error=repr(error))
        raise error
    try:
        nodes = _wait_for_nodes(grid, int(config["n-clients"]), float(config["wait"]))
        transport = FlowerTransport(grid, {}, int(config["retries"]),
                                    float(config["timeout"]) or None,
                                    secure=bool(config["secure"]))  # fmt: skip
        client_nodes, clients_by_domain, n_features = hello(transport, nodes,
                                                            float(config["wait"]))  # fmt: skip
        n_domains = max(int(config["n-domains"]), len(clients_by_domain))
        clients_by_domain += [[] for _ in range(n_domains - len(clients_by_domain))]
        if config["rng-state"]:
            rng = np.random.default_rng()
            rng.bit_generator.state = json.loads(config["rng-state"])
        else:
            rng = np.random.default_rng(None if config["seed"] < 0 else int(config["seed"]))
        domain_model, start = None, time.perf_counter()
        if config["domain-classifier"] == "federated":
            domain_model, q_record = _train_domain_classifier(transport, clients_by_domain)
            q_record["seconds"] = time.perf_counter() - start
        features, flat, setup = setup_candidates(
            transport, sorted(client_nodes), n_features, _thresholds(config["thresholds"]),
            int(config["n-quantiles"]),
        )  # fmt: skip
        if domain_model is not None:  # Q's training is part of the set-up's communication
            setup["domain_classifier"] = q_record
            for key in ("numbers_to_clients", "numbers_from_clients"):
                setup[key] += q_record[key]
        server = FederatedServer(n_domains, features, flat, int(config["r"]) or None,
                                 int(config["s"]) or None, random_state=rng,
                                 mu=float(config["mu"]) or None)  # fmt: skip
        server.min_probabilities = setup["min_probabilities"]
        setup["seconds"] = time.perf_counter() - start  # Q's training and the candidates
        setup["batch_seconds"] = [seconds for _, seconds in transport.batch_seconds]
        history = run_rounds(server, transport, clients_by_domain, int(config["n-rounds"]),
                             int(config["line-search-batch"]))  # fmt: skip
    except Exception:
        write_result(config["result"], error=traceback.format_exc())
        raise
    for record in history:
        record["batch_seconds"] = [s for r, s in transport.batch_seconds if r == record["round"]]
    run = {"setup": setup, "history": history, "clients_by_domain": clients_by_domain,
           "nodes": {str(c): node for c, node in client_nodes.items()},
           "domain_model": domain_model}  # fmt: skip
    write_result(config["result"], server.state, run)


if ServerApp is not None:
    server_app = ServerApp()
    server_app.main()(server_main)
else:
    server_app = None
