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

Timing: ``clf.federated_run_.history[t]["seconds"]`` is the wall time of round t as the
ServerApp measured it (every Flower round trip included), comparable with the same field of
:func:`~manytask.boost.federated.simulate`.
"""

from .apps import client_app, server_app
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
    "client_app",
    "read_result",
    "run_local_federation",
    "save_shard",
    "server_app",
    "write_app",
    "write_connection",
]
