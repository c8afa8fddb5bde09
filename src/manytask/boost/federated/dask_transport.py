"""The transport of MULTIBOOST on ``dask.distributed``: :class:`DaskTransport`.

Lives here: :class:`DaskTransport`, the :class:`~.protocol.Transport` whose clients live on
the workers, and what runs there: :class:`WorkerClients` (the actor holding one worker's
clients). A request batch runs :func:`~.protocol.respond`
on the workers holding the shards and brings back only the protocol's aggregates. Not here:
building the shards and the fit (:mod:`.dask_backend`), the protocol (:mod:`.protocol`).

The clients of a worker live in one dask actor (:class:`WorkerClients`, made by
``client.submit(WorkerClients, {client: shard_future}, actor=True)`` on the worker that holds
the shards): it keeps the shards and what :func:`respond` returns to keep, and a request batch
is one direct call per worker, not through the scheduler. A payload shared by several clients
is pickled once per call, and its arrays of 64 kB or more (e.g. the candidate indices a
``round`` request with all candidates repeats) reach each actor once per run: afterwards a
:class:`CachedArray` key stands for them (:class:`SentArrays` on the driver keeps the record
in step with the actor's). The answers are the clients' own messages, not summed on the
worker: the driver counts, logs and drops clients one by one, and a message is at most
p·s + 2 numbers (p sources, s candidates). A client that answers after
the driver gave up on it (timeout) still keeps what the answer keeps; :func:`respond` is
deterministic, so a retry of the same request computes the same numbers.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np

from ..._validation import check_timeout
from .protocol import Transport, respond

__all__ = ["CachedArray", "DaskTransport", "SentArrays", "WorkerClients", "array_key"]

_CACHE_BYTES = 1 << 16  # actors: payload arrays from this size are sent once per worker
_CACHED_ARRAYS = 16  # arrays an actor keeps (least recently used dropped first)


def import_distributed():
    """``distributed``, or an ImportError naming the extra that installs it."""
    try:
        import distributed
    except ImportError as error:  # pragma: no cover - the extra is installed in the test env
        raise ImportError(
            "DaskMultiBoostClassifier needs dask.distributed: pip install manytask[dist]"
        ) from error
    return distributed


# ----------------------------------------------------------------------- on the workers


@dataclass(frozen=True)
class CachedArray:
    """A payload array sent to a worker once: ``value`` on first sending (the worker keeps
    it under ``key``), None afterwards (the worker takes its copy).

    Parameters
    ----------
    key : tuple
        :func:`array_key` of the array.
    value : ndarray, optional
        The array, on first sending only.

    Examples
    --------
    >>> value = np.zeros(3)
    >>> CachedArray(array_key(value)).value is None
    True
    """

    key: tuple
    value: np.ndarray | None = None


def array_key(value: np.ndarray) -> tuple:
    """(dtype, shape, 128-bit BLAKE2b digest of the bytes): equal keys, equal arrays.

    Parameters
    ----------
    value : ndarray
        The array.

    Returns
    -------
    tuple
        (dtype string, shape, 16-byte digest).

    Examples
    --------
    >>> key = array_key(np.arange(3.0))
    >>> key[:2], len(key[2]), key == array_key(np.arange(3.0)), key == array_key(np.ones(3))
    (('<f8', (3,)), 16, True, False)
    """
    value = np.ascontiguousarray(value)
    return (value.dtype.str, value.shape, hashlib.blake2b(value.data, digest_size=16).digest())


class SentArrays:
    """The driver's record of the payload arrays one actor holds, kept in step with the
    actor's (:meth:`WorkerClients.respond`): the same least-recently-used order and size.

    Examples
    --------
    >>> sent = SentArrays()
    >>> big = np.zeros(10_000)  # 80 kB: sent once per actor
    >>> first = sent.encode({0: {"asked": big}})[0]["asked"]
    >>> again = sent.encode({1: {"asked": big}})[1]["asked"]
    >>> first.value is big, again.value is None, first.key == again.key
    (True, True, True)
    """

    def __init__(self):
        self.held = {}

    def encode(self, batch: dict) -> dict:
        """``batch`` ({client: payload}) with each array of ``_CACHE_BYTES`` or more replaced
        by a :class:`CachedArray`, holding the value only if the actor does not yet.

        Parameters
        ----------
        batch : dict
            {client: payload} of one actor's call.

        Returns
        -------
        dict
            {client: payload}, large arrays encoded (a payload shared by several clients
            stays shared).

        Examples
        --------
        >>> SentArrays().encode({0: {"levels": np.array([0.5])}})[0]["levels"].tolist()
        [0.5]
        """
        done, encoded, keys = {}, {}, {}
        for client, payload in batch.items():
            if id(payload) not in done:
                done[id(payload)] = {name: self._encode(value, keys)
                                     for name, value in payload.items()}  # fmt: skip
            encoded[client] = done[id(payload)]
        return encoded

    def _encode(self, value, keys):
        """``keys``: {id: key} of the batch's arrays (an array shared by several payloads,
        such as a domain's candidates in the ``round`` request, is hashed once)."""
        if not isinstance(value, np.ndarray) or value.nbytes < _CACHE_BYTES:
            return value
        if id(value) not in keys:
            keys[id(value)] = array_key(value)
        key = keys[id(value)]
        if key in self.held:
            self.held[key] = self.held.pop(key)  # most recently used last, as on the actor
            return CachedArray(key)
        self.held[key] = None
        while len(self.held) > _CACHED_ARRAYS:
            self.held.pop(next(iter(self.held)))
        return CachedArray(key, value)


class WorkerClients:
    """The clients held by one worker, as one dask actor: their shards, what each keeps
    between requests, the payload arrays sent once (:class:`CachedArray`) and the compute
    time per phase.

    Parameters
    ----------
    shards : dict
        {client id: ClientShard} of the clients on this worker.

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard
    >>> clients = WorkerClients({3: ClientShard(np.zeros((2, 1)), np.ones(2), 0, np.ones((2, 1)))})
    >>> clients.respond("setup", {3: {"levels": np.array([0.5])}})[3]["n_points"]
    2
    """

    def __init__(self, shards: dict):
        self.shards = shards
        self.kept = {client: {} for client in shards}
        self.seconds = {"wall": {}, "cpu": {}}
        self.arrays = {}  # CachedArray key -> array, the last _CACHED_ARRAYS kept

    def _resolve(self, payloads):
        """The payloads with every :class:`CachedArray` replaced by its array."""
        resolved, done = {}, {}
        for client, payload in payloads.items():
            if id(payload) not in done:
                done[id(payload)] = {name: self._array(value) if isinstance(value, CachedArray)
                                     else value for name, value in payload.items()}  # fmt: skip
            resolved[client] = done[id(payload)]
        return resolved

    def _array(self, cached):
        if cached.value is not None:
            self.arrays[cached.key] = cached.value
            while len(self.arrays) > _CACHED_ARRAYS:
                self.arrays.pop(next(iter(self.arrays)))
        value = self.arrays.pop(cached.key)  # KeyError: the driver's record is wrong
        self.arrays[cached.key] = value  # most recently used last
        return value

    def respond(self, phase, payloads, fault=None, round_number=0):
        """{client: message, or the exception it raised}; ``kept`` changes only on success.

        Parameters
        ----------
        phase : str
            The protocol's phase.
        payloads : dict
            {client: payload}, large arrays as :class:`CachedArray`.
        fault : callable, optional
            ``fault(round, client, phase)``, called before each answer; it may raise.
        round_number : int, default=0
            The round, passed to ``fault``.

        Returns
        -------
        dict
            {client: message or exception}.

        Examples
        --------
        >>> from manytask.boost.federated import ClientShard
        >>> shard = ClientShard(np.zeros((2, 1)), np.ones(2), 0, np.ones((2, 1)))
        >>> answers = WorkerClients({0: shard}).respond("no such phase", {0: {}})
        >>> type(answers[0]).__name__
        'ValueError'
        """
        start, cpu_start = time.perf_counter(), time.thread_time()
        messages = {}
        payloads = self._resolve(payloads)
        for client, payload in payloads.items():
            try:
                if fault is not None:
                    fault(round_number, client, phase)
                messages[client], kept = respond(phase, self.shards[client], payload,
                                                 self.kept[client])  # fmt: skip
            except Exception as error:  # a client may fail in any way; the others answer
                messages[client] = error
                continue
            self.kept[client] = kept
        for kind, elapsed in (("wall", time.perf_counter() - start),
                              ("cpu", time.thread_time() - cpu_start)):  # fmt: skip
            self.seconds[kind][phase] = self.seconds[kind].get(phase, 0.0) + elapsed
        return messages

    def compute_seconds(self) -> dict:
        """Seconds spent answering per phase, all of this worker's clients: ``wall`` (time
        in :func:`respond`, waits for a core included) and ``cpu`` (the actor thread's).

        Returns
        -------
        dict
            {"wall" | "cpu": {phase: seconds}}.

        Examples
        --------
        >>> from manytask.boost.federated import ClientShard
        >>> shard = ClientShard(np.zeros((2, 1)), np.ones(2), 0, np.ones((2, 1)))
        >>> clients = WorkerClients({0: shard})
        >>> _ = clients.respond("setup", {0: {"levels": np.array([0.5])}})
        >>> sorted(clients.compute_seconds()["wall"])
        ['setup']
        """
        return {kind: dict(seconds) for kind, seconds in self.seconds.items()}


# ----------------------------------------------------------------------- the transport


class DaskTransport(Transport):
    """Carries the protocol's requests to clients on ``dask.distributed`` workers: a
    :class:`WorkerClients` actor per worker, holding its shards, called directly once per
    request batch.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    shards : list of Future
        One :class:`~.client.ClientShard` future per client, on the worker that holds it.
    retries : int >= 0
        As in :class:`~.protocol.Transport`.
    timeout : None or float > 0
        Seconds to wait for the answers of one request batch; later answers are failures.
    fault : None or callable(round, client, phase)
        Fault injection for tests, called on the worker before the client answers.
    record : bool
        As in :class:`~.protocol.Transport`.

    Attributes
    ----------
    phase_seconds : dict
        Wall time of the request batches per phase, seen from the driver.

    Examples
    --------
    Built by :func:`~.dask_backend.federate_on_dask` on the shards' futures; it needs a
    ``dask.distributed`` client:

    >>> transport = DaskTransport(client, shard_futures)  # doctest: +SKIP
    """

    def __init__(self, client, shards, retries=0, timeout=None, fault=None, record=False):
        super().__init__(retries, record)
        check_timeout(timeout)
        self.client, self.shards = client, list(shards)
        self.timeout, self.fault = timeout, fault
        self.phase_seconds = {}
        distributed = import_distributed()
        distributed.wait(self.shards)
        who_has = client.who_has(self.shards)
        self.workers = [sorted(who_has[shard.key])[:1] or None for shard in self.shards]
        self.actors, self._actor_futures, self._by_worker, self._sent = {}, [], {}, {}
        by_worker = {}  # one actor per worker, holding that worker's clients
        for client_id, (shard, workers) in enumerate(zip(self.shards, self.workers)):
            by_worker.setdefault(workers[0] if workers else None, {})[client_id] = shard
        for worker, shards_here in by_worker.items():
            future = client.submit(WorkerClients, shards_here, actor=True, pure=False,
                                   workers=None if worker is None else [worker])  # fmt: skip
            self._actor_futures.append(future)
            actor = self._by_worker[worker] = future.result()
            for client_id in shards_here:
                self.actors[client_id] = actor

    def _send(self, phase, payloads):
        start = time.perf_counter()
        results = self._send_to_actors(phase, payloads, start)
        self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + (
            time.perf_counter() - start
        )
        return results

    def _send_to_actors(self, phase, payloads, start):
        """One call per worker with its clients' payloads (a payload shared by several
        clients is pickled once per call; its large arrays once per worker and run)."""
        calls, results = {}, {}
        for client, payload in payloads.items():
            calls.setdefault(id(self.actors[client]), (self.actors[client], {}))[1][client] = (
                payload
            )
        pending = []
        for key, (actor, batch) in calls.items():
            sent = self._sent.setdefault(key, SentArrays()).encode(batch)
            pending.append((actor.respond(phase, sent, self.fault, self.round), key, batch))
        for future, key, batch in pending:
            remaining = None
            if self.timeout is not None:
                remaining = max(self.timeout - (time.perf_counter() - start), 1e-3)
            try:
                results.update(future.result(timeout=remaining))
            except Exception as error:  # the worker failed or timed out: all its clients
                results.update({client: error for client in batch})
                self._sent.pop(key, None)  # it may not hold the arrays: send them again
        return results

    def compute_seconds(self) -> dict:
        """{worker: {"wall" | "cpu": {phase: seconds}}} of its clients' answers (actors).

        Returns
        -------
        dict
            Per worker, :meth:`WorkerClients.compute_seconds`.

        Examples
        --------
        >>> transport.compute_seconds()  # doctest: +SKIP
        {'tcp://127.0.0.1:40017': {'wall': {'setup': 0.002}, 'cpu': {'setup': 0.002}}}
        """
        pending = {worker: actor.compute_seconds() for worker, actor in self._by_worker.items()}
        return {worker: future.result() for worker, future in pending.items()}

    def close(self):
        """Release the actors, shards and kept states held on the cluster.

        Examples
        --------
        >>> transport.close()  # doctest: +SKIP
        """
        self.actors, self._actor_futures, self._by_worker = {}, [], {}
        self.shards = []
