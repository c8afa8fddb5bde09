"""FEDMULTIBOOST on Flower (extra ``fed``: ``pip install manytask[fed]``).

Lives here: :mod:`.clientapp` (the ClientApp: one call of the protocol's ``respond`` per
message, and the wire format), :mod:`.transport` (:class:`FlowerTransport`: the protocol's
transport over Flower's Message API, the only code that builds Messages on the server),
:mod:`.apps` (the ServerApp, which runs the driver of :mod:`manytask.boost.federated` over
that transport; its docstring says how to deploy the app across machines), :mod:`.runner`
(:func:`write_app`, the Flower App project; :func:`run_local_federation`: the same clients
and result as :func:`~manytask.boost.federated.simulate` on Flower's Deployment Runtime, a
SuperLink + one SuperNode per client on loopback, or on its Simulation Runtime). Not here:
the protocol, server and driver, shared with every transport. The modules import without
flwr; running a federation then raises an ImportError naming the extra.

Deploying, as any Flower App (Flower ≥ 1.42; the ``apps`` module's docstring has every run
config key): :func:`write_app` writes the project, a ``pyproject.toml`` whose
``[tool.flwr.app.components]`` name ``manytask.boost.federated.flower.apps:server_app`` and
the ClientApp; each client saves its shard with :func:`save_shard` and runs
``flower-supernode --superlink HOST:PORT --node-config 'shard="/data/shard.npz"'``; the
server side runs ``flower-superlink`` and ``flwr run APP_DIR CONNECTION --run-config
'n-clients=12 n-rounds=100'`` (``CONNECTION``: a SuperLink connection of the ``flwr`` CLI's
configuration, e.g. from :func:`write_connection`); :func:`read_result` reads the model the
ServerApp writes to the run config's ``result`` path.

Timing: ``clf.federated_run_.history[t]["seconds"]`` is the wall time of round t as the
ServerApp measured it (every Flower round trip included), comparable with the same field of
:func:`~manytask.boost.federated.simulate`.
"""

from .runner import (
    read_result,
    run_local_federation,
    save_shard,
    write_app,
    write_connection,
)
from .transport import FlowerTransport

__all__ = [
    "FlowerTransport",
    "read_result",
    "run_local_federation",
    "save_shard",
    "write_app",
    "write_connection",
]
