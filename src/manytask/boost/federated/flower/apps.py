"""FEDMULTIBOOST's Flower ServerApp.

Lives here: the ServerApp ``server_app`` (:func:`run_server`: waits for the SuperNodes, asks
who they are, then does what :func:`~manytask.boost.federated.simulate` does: the federated
Q(k|x) of
:func:`~..domain.fit_domain_classifier`, then the driver of
:mod:`~manytask.boost.federated.driver`: :func:`setup_candidates`, :class:`FederatedServer`,
:func:`run_rounds`) and its result file (:func:`write_result`); ``client_app`` is re-exported
from :mod:`.clientapp`. Not here: the protocol (:mod:`..protocol`), its transport over
Flower's Grid (:mod:`.transport`), the local deployment runner (:mod:`.runner`).

Both apps take everything from Flower's configs, so the same app runs on Flower's Simulation
Runtime and on its Deployment Runtime on one machine (:func:`~.runner.run_local_federation`,
``runtime="simulation"`` or ``"deployment"``) or across machines, as any Flower App:

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

from ..driver import run_rounds
from ..protocol import state_to_payload
from ..setup import prepare_server
from .clientapp import FLWR_MISSING, client_app
from .transport import FlowerTransport, GridLink, hello

try:
    from flwr.app import Context
    from flwr.serverapp import Grid, ServerApp
except ImportError:  # a bare install still imports this module; the runner says what to install
    ServerApp = None

__all__ = [
    "FLWR_MISSING",
    "RUN_CONFIG",
    "client_app",
    "run_server",
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
    "max-depth": 1,  # base classifiers: 1 stumps, d > 1 trees of depth d
    "shards": "",  # Simulation Runtime: the directory of client-<partition-id>.npz
    "secure": False,  # pairwise-masked sums (.secure): the server sees per-source sums only
}


def _wait_for_nodes(link, n_clients, wait):
    deadline = time.monotonic() + wait
    while True:
        nodes = sorted(link.node_ids())
        if len(nodes) >= n_clients:
            return nodes
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(nodes)} SuperNodes connected in {wait} s, need {n_clients}")
        time.sleep(0.2)


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


def _config(run_config):
    config = {**RUN_CONFIG, **run_config}
    return {key: config[key] for key in RUN_CONFIG}


def _thresholds(path):
    if not path:
        return None
    with np.load(path, allow_pickle=False) as data:
        return [data[str(j)] for j in range(len(data.files))]


def run_server(link, run_config) -> None:
    """What the ServerApp does: wait for the SuperNodes, say hello, train the federated Q if
    asked, then the driver's set-up and rounds; the result file (:func:`write_result`) holds
    the model and the run, or the error.

    Parameters
    ----------
    link : GridLink
        The ServerApp's Grid, wrapped.
    run_config : dict
        Flower's run config (:data:`RUN_CONFIG`: the keys not given take its defaults).

    Examples
    --------
    Run by ``server_app`` on the Grid and run config Flower hands it; it needs connected
    SuperNodes:

    >>> run_server(GridLink(grid), context.run_config)  # doctest: +SKIP
    """
    config = _config(run_config)
    if config["domain-classifier"] not in ("federated", "central"):
        error = ValueError(f"domain-classifier must be 'federated' or 'central', got "
                           f"{config['domain-classifier']!r}")  # fmt: skip
        write_result(config["result"], error=repr(error))
        raise error
    try:
        nodes = _wait_for_nodes(link, int(config["n-clients"]), float(config["wait"]))
        transport = FlowerTransport(link, {}, int(config["retries"]),
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
        federated_q = config["domain-classifier"] == "federated"
        if federated_q and len(clients_by_domain) < 2:
            raise ValueError(
                f"domain-classifier 'federated' needs at least 2 domains, got "
                f"{len(clients_by_domain)}; with one domain use 'central' and shards holding "
                f"Q ≡ 1"
            )
        start = time.perf_counter()
        server, setup, q = prepare_server(
            transport, clients_by_domain, np.arange(n_domains), n_features,
            federated_q=federated_q, thresholds=_thresholds(config["thresholds"]),
            n_quantiles=int(config["n-quantiles"]), r=int(config["r"]) or None,
            s=int(config["s"]) or None, random_state=rng, mu=float(config["mu"]) or None,
            max_depth=int(config["max-depth"]),
            histogram_trees=bool(config["secure"]) and int(config["max-depth"]) > 1,
        )  # fmt: skip
        domain_model = None if q is None else {
            "coef": q.estimator_.coef, "intercept": q.estimator_.intercept, "clip": q.clip,
            "n_clipped": q.n_clipped_}  # fmt: skip
        setup["seconds"] = time.perf_counter() - start  # Q's training and the candidates
        setup["batch_seconds"] = [seconds for _, seconds in transport.batch_seconds]
        setup["batch_started"] = [started for _, started in transport.batch_started]
        history = run_rounds(server, transport, clients_by_domain, int(config["n-rounds"]),
                             int(config["line-search-batch"]))  # fmt: skip
    except Exception:
        write_result(config["result"], error=traceback.format_exc())
        raise
    for record in history:
        record["batch_seconds"] = [s for r, s in transport.batch_seconds if r == record["round"]]
        record["batch_started"] = [t for r, t in transport.batch_started if r == record["round"]]
    run = {"setup": setup, "history": history, "clients_by_domain": clients_by_domain,
           "nodes": {str(c): node for c, node in client_nodes.items()},
           "domain_model": domain_model}  # fmt: skip
    write_result(config["result"], server.state, run)


def server_main(grid: Grid, context: Context) -> None:
    """The ServerApp's main: :func:`run_server` on Flower's Grid and run config."""
    run_server(GridLink(grid), context.run_config)


if ServerApp is not None:
    server_app = ServerApp()
    server_app.main()(server_main)
else:
    server_app = None
