"""FEDMULTIBOOST's Flower ClientApp and the wire format of its messages.

Lives here: the (de)serialisation of the protocol's payloads and messages to Flower records
(:func:`encode_request`, :func:`decode_request`, :func:`encode_reply`, :func:`decode_reply`),
of what a client keeps between messages (:func:`kept_to_record`, :func:`kept_from_record`),
:func:`load_shard`, :func:`answer` (a request's content → the reply's content: one call of
:func:`~manytask.boost.federated.protocol.respond`, no protocol logic of its own) and
``client_app``, whose ``query`` handler wraps it in Flower Messages. Not
here: the ServerApp and :class:`~.apps.FlowerTransport` (:mod:`.apps`). This module imports
only the client side of the protocol (:mod:`..client`, :mod:`..protocol`): Flower's
Deployment Runtime starts a ClientApp process per message, which then starts quickly (see
``runner.CLIENT_SOURCE``).

Where a client's shard is: the SuperNode's node config ``shard`` (a path; the Deployment
Runtime), else ``<run config "shards">/client-<partition-id>.npz`` (Flower's Simulation
Runtime, whose virtual SuperNodes have a ``partition-id``).

Wire format: a request is a ``RecordDict`` with one ``ConfigRecord`` "query" holding the phase
and the payload's arrays packed into one byte string (:func:`pack_arrays`: exact, no pickle); a
reply holds a ``ConfigRecord`` "reply" with the packed message, or a Flower ``Error`` whose
reason is the client's exception. One record of bytes rather than an ``ArrayRecord`` (two
Flower objects per array, each its own request on every hop): a message is three objects.
"""

from __future__ import annotations

import json
import os
import pickle

import numpy as np

from ..client import ClientShard, ModelState
from ..protocol import respond, state_from_payload, state_to_payload
from . import secure

try:
    from flwr.app import ConfigRecord, Context, Error, Message, RecordDict
    from flwr.clientapp import ClientApp
except ImportError:  # a bare install still imports this module; the runner says what to install
    ClientApp = None

__all__ = [
    "FLWR_MISSING",
    "HELLO",
    "MESSAGE_TYPE",
    "CLIENT_APP_RAISED_EXCEPTION",
    "ClientAppError",
    "answer",
    "client_app",
    "client_query",
    "decode_reply",
    "decode_request",
    "encode_reply",
    "encode_request",
    "kept_from_record",
    "kept_to_record",
    "load_shard",
    "pack_arrays",
    "unpack_arrays",
]

FLWR_MISSING = "FEDMULTIBOOST on Flower needs flwr: pip install manytask[fed]"
MESSAGE_TYPE = "query"  # Flower's message category; the phase travels in the content
HELLO = "hello"  # the server's first message: which client, which domain, how many features
KEPT = "fedmultiboost-kept"  # the key of what a client keeps in its Context.state
SECRET = "fedmultiboost-secret"  # the key of its masking key pair in Context.state
# request fields of a masked batch (FlowerTransport(secure=True)): this client's id in the
# server's numbering, its group's ids and public keys, the batch's nonce
MASK_FIELDS = ("mask_me", "mask_peers", "mask_keys", "mask_nonce")
# Flower's code of an Error a ClientApp returns for its exception (``flwr.app.Error.code``;
# the table of codes: .apps.FLOWER_ERRORS)
CLIENT_APP_RAISED_EXCEPTION = 2
_PICKLED = "pickled:"  # prefix of kept objects that are not arrays


class ClientAppError(RuntimeError):
    """A client's error reply (its exception, as Flower's ``Error`` reason).

    Examples
    --------
    >>> str(ClientAppError("client 2: ValueError: bad shard"))
    'client 2: ValueError: bad shard'
    """


def pack_arrays(values: dict) -> bytes:
    """Named arrays (or numbers) as one byte string: a JSON header (name, dtype, shape of each)
    and their raw bytes, exact (no text round trip, no pickle).

    Parameters
    ----------
    values : dict
        {name: array or number}; no object arrays.

    Returns
    -------
    bytes
        The packed arrays.

    Examples
    --------
    >>> data = pack_arrays({"n_points": 3, "mean": np.array([0.1, 0.2])})
    >>> unpack_arrays(data)["mean"].tolist()
    [0.1, 0.2]
    """
    arrays = {key: np.asarray(value) for key, value in values.items()}
    header = json.dumps([[key, array.dtype.str, array.shape] for key, array in arrays.items()])
    head = header.encode()
    return b"".join([len(head).to_bytes(4, "little"), head,
                     *(array.tobytes(order="C") for array in arrays.values())])  # fmt: skip


def unpack_arrays(data: bytes) -> dict:
    """Inverse of :func:`pack_arrays`; 0-d arrays come back as Python numbers (as the client
    functions return them).

    ValueError for an object array or bytes left over.

    Parameters
    ----------
    data : bytes
        What :func:`pack_arrays` wrote.

    Returns
    -------
    dict
        {name: array or number}.

    Examples
    --------
    >>> unpack_arrays(pack_arrays({"n_points": 3, "loss_sum": 1.5}))
    {'n_points': 3, 'loss_sum': 1.5}
    """
    size = int.from_bytes(data[:4], "little")
    offset, values = 4 + size, {}
    for key, dtype, shape in json.loads(data[4:offset]):
        dtype = np.dtype(dtype)
        if dtype.hasobject:
            raise ValueError(f"{key!r}: object arrays are not accepted")
        count = int(np.prod(shape, dtype=np.int64))
        value = np.frombuffer(data, dtype, count, offset).reshape(shape).copy()
        offset += count * dtype.itemsize
        values[key] = value.item() if value.ndim == 0 else value
    if offset != len(data):
        raise ValueError(f"{len(data) - offset} bytes left after the arrays")
    return values


def encode_request(phase: str, payload: dict) -> RecordDict:
    """A server → client request: the phase and the packed payload arrays.

    Parameters
    ----------
    phase : str
        The protocol's phase.
    payload : dict
        The server's payload.

    Returns
    -------
    RecordDict
        One ``ConfigRecord`` "query".

    Examples
    --------
    >>> phase, payload = decode_request(encode_request("setup", {"levels": np.array([0.5])}))
    >>> phase, payload["levels"].tolist()
    ('setup', [0.5])
    """
    return RecordDict({"query": ConfigRecord({"phase": phase, "payload": pack_arrays(payload)})})


def decode_request(content: RecordDict) -> tuple[str, dict]:
    """Inverse of :func:`encode_request`: (phase, payload).

    Parameters
    ----------
    content : RecordDict
        A request's content.

    Returns
    -------
    phase : str
        The protocol's phase.
    payload : dict
        The server's payload.

    Examples
    --------
    >>> decode_request(encode_request("separating", {"domain": 1}))
    ('separating', {'domain': 1})
    """
    record = content["query"]
    return str(record["phase"]), unpack_arrays(record["payload"])


def encode_reply(message: dict) -> RecordDict:
    """A client → server message as records.

    Parameters
    ----------
    message : dict
        The client's answer.

    Returns
    -------
    RecordDict
        One ``ConfigRecord`` "reply".

    Examples
    --------
    >>> decode_reply(encode_reply({"n_points": 2, "loss_sum": 2.0}))
    {'n_points': 2, 'loss_sum': 2.0}
    """
    return RecordDict({"reply": ConfigRecord({"message": pack_arrays(message)})})


def decode_reply(content: RecordDict) -> dict:
    """Inverse of :func:`encode_reply`.

    Parameters
    ----------
    content : RecordDict
        A reply's content.

    Returns
    -------
    dict
        The client's answer.

    Examples
    --------
    >>> decode_reply(encode_reply({"min_probability": 0.25}))
    {'min_probability': 0.25}
    """
    return unpack_arrays(content["reply"]["message"])


def kept_to_record(kept: dict) -> ConfigRecord:
    """What a client keeps between messages as arrays, for its ``Context.state``.

    Arrays as they are, the round's :class:`~..client.ModelState` as its five arrays; any
    other object the protocol keeps (e.g. the candidates' edge index) pickled into a byte
    array. ``Context.state`` never leaves the SuperNode, so these bytes only ever come back to
    the same node (never unpickle anything a peer sent).

    Parameters
    ----------
    kept : dict
        What the client keeps (:func:`~manytask.boost.federated.protocol.respond`).

    Returns
    -------
    ConfigRecord
        The packed arrays under "arrays".

    Examples
    --------
    >>> kept = {"state": ModelState().with_term(0, 1, 0.5, 1.0, 0.25), "scaled": np.ones(2)}
    >>> restored = kept_from_record(kept_to_record(kept))
    >>> restored["state"].steps.tolist(), restored["scaled"].tolist()
    ([0.25], [1.0, 1.0])
    """
    values = {}
    for key, value in kept.items():
        if key == "state" and isinstance(value, ModelState):
            values.update(state_to_payload(value))
        elif isinstance(value, np.ndarray):
            values[key] = value
        else:
            values[_PICKLED + key] = np.frombuffer(pickle.dumps(value), dtype=np.uint8)
    return ConfigRecord({"arrays": pack_arrays(values)})


def kept_from_record(record) -> dict:
    """Inverse of :func:`kept_to_record`.

    Parameters
    ----------
    record : ConfigRecord
        What :func:`kept_to_record` wrote, from this node's ``Context.state``.

    Returns
    -------
    dict
        What the client keeps.

    Examples
    --------
    >>> kept_from_record(kept_to_record({"rows": (1, 2)}))
    {'rows': (1, 2)}
    """
    values = unpack_arrays(record["arrays"])
    kept = {}
    for key, value in values.items():
        if key.startswith(_PICKLED):
            kept[key[len(_PICKLED) :]] = pickle.loads(np.asarray(value).tobytes())
        elif not key.startswith("state_"):
            kept[key] = value
    if "state_steps" in values:
        kept["state"] = state_from_payload(values)
    return kept


def load_shard(path) -> ClientShard:
    """A client's shard from the .npz of :func:`~.runner.save_shard` (without Q(·|x) when Q
    is trained federated); read once per process while the file is unchanged (a Simulation
    Runtime worker answers the messages of many clients).

    Parameters
    ----------
    path : str or path-like
        The shard's .npz file.

    Returns
    -------
    ClientShard
        The client's data.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     path = pathlib.Path(root) / "client-0.npz"
    ...     np.savez(path, X=np.zeros((2, 1)), y=np.array([-1.0, 1.0]), domain=0)
    ...     shard = load_shard(path)
    >>> shard.X.shape, shard.domain, shard.domain_probabilities
    ((2, 1), 0, None)
    """
    stat = os.stat(path)
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _SHARDS.get(os.fspath(path))
    if cached is None or cached[0] != stamp:
        with np.load(path, allow_pickle=False) as data:
            q = data["domain_probabilities"] if "domain_probabilities" in data else None
            shard = ClientShard(data["X"], data["y"], int(data["domain"]), q)
        cached = _SHARDS[os.fspath(path)] = (stamp, shard)
    return cached[1]


_SHARDS = {}  # the shards read: {path: ((mtime, size), ClientShard)}


def shard_path(context: Context) -> str:
    """The shard of this SuperNode: node config ``shard``, or, on the Simulation Runtime, the
    run config's ``shards`` directory and the node's ``partition-id``."""
    if "shard" in context.node_config:
        return str(context.node_config["shard"])
    if "partition-id" in context.node_config and context.run_config.get("shards"):
        return os.path.join(str(context.run_config["shards"]),
                            f"client-{int(context.node_config['partition-id'])}.npz")  # fmt: skip
    raise ValueError("the SuperNode has no 'shard' node config (nor a 'partition-id' and a "
                     "'shards' run config)")  # fmt: skip


def client_id(context: Context) -> int:
    """The client id this SuperNode reports: node config ``client-id``, else its
    ``partition-id`` on the Simulation Runtime, else −1 (the server numbers it)."""
    for key in ("client-id", "partition-id"):
        if key in context.node_config:
            return int(context.node_config[key])
    return -1


def answer(content: RecordDict, context: Context):
    """What the ClientApp replies to a request's content: one :func:`respond` per message,
    ``kept`` in ``context.state``.

    With secure sums, the hello makes the client's key pair (the public key goes to the
    server) and a request carrying :data:`MASK_FIELDS` gets its reply masked
    (:func:`.secure.mask`). Any exception becomes Flower's ``Error`` with code
    :data:`CLIENT_APP_RAISED_EXCEPTION` and the exception as reason.

    Parameters
    ----------
    content : RecordDict
        The server's request (:func:`encode_request`).
    context : Context
        The SuperNode's context: node and run config, ``state``.

    Returns
    -------
    RecordDict or Error
        The reply's content (:func:`encode_reply`), or the error.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from flwr.app import Context, RecordDict
    >>> with tempfile.TemporaryDirectory() as root:
    ...     path = pathlib.Path(root) / "client-0.npz"
    ...     np.savez(path, X=np.zeros((3, 2)), y=np.array([-1.0, 1.0, 1.0]), domain=1)
    ...     context = Context(run_id=1, node_id=7, node_config={"shard": str(path)},
    ...                       state=RecordDict(), run_config={})
    ...     reply = answer(encode_request(HELLO, {}), context)
    >>> decode_reply(reply)
    {'client': -1, 'domain': 1, 'n_features': 2}
    >>> error = answer(encode_request("losses", {}), context)  # the shard is gone
    >>> error.code == CLIENT_APP_RAISED_EXCEPTION, error.reason.split(":")[0]
    (True, 'FileNotFoundError')
    """
    try:
        phase, payload = decode_request(content)
        shard = load_shard(shard_path(context))
        if phase == HELLO:
            reply = {"client": client_id(context),
                     "domain": shard.domain, "n_features": shard.X.shape[1]}  # fmt: skip
            if payload.get("secure"):
                private, public = secure.new_key_pair()
                context.state[SECRET] = ConfigRecord({"private": private})
                reply["public_key"] = np.frombuffer(public, dtype=np.uint8)
            return encode_reply(reply)
        masking = {key: payload.pop(key) for key in MASK_FIELDS if key in payload}
        stored = context.state.config_records.get(KEPT)
        kept = kept_from_record(stored) if stored is not None else {}
        reply, kept = respond(phase, shard, payload, kept)
        context.state[KEPT] = kept_to_record(kept)
        if masking:
            peers = {int(peer): bytes(np.asarray(key, dtype=np.uint8))
                     for peer, key in zip(masking["mask_peers"], masking["mask_keys"])}  # fmt: skip
            private = context.state.config_records[SECRET]["private"]
            reply = secure.mask(reply, int(masking["mask_me"]), private, peers,
                                masking["mask_nonce"])  # fmt: skip
        return encode_reply(reply)
    except Exception as error:  # any failure
        return Error(code=CLIENT_APP_RAISED_EXCEPTION, reason=f"{type(error).__name__}: {error}")


def client_query(message: Message, context: Context) -> Message:
    """The ClientApp's ``query`` handler: :func:`answer` to the message's content, as the
    reply to ``message``.

    Parameters
    ----------
    message : Message
        The server's request.
    context : Context
        The SuperNode's context: node and run config, ``state``.

    Returns
    -------
    Message
        The reply (content or ``Error``).

    Examples
    --------
    Run by Flower's runtime for each message (see :func:`~.runner.run_local_federation`),
    which made the ``message`` and ``context``:

    >>> reply = client_query(message, context)  # doctest: +SKIP
    """
    return Message(answer(message.content, context), reply_to=message)


if ClientApp is not None:
    client_app = ClientApp()
    client_app.query()(client_query)
else:
    client_app = None
