"""The machinery of :class:`~.dask.DaskMultiBoostClassifier`: MULTIBOOST's federated fit
on data partitioned across a ``dask.distributed`` cluster.

Lives here: :func:`federate_on_dask` (what the estimator's ``fit`` runs) and the worker-side
functions that check the chunks and build the clients. Each row chunk of X is split by source
into clients (one :class:`~.client.ClientShard` per chunk and source present in it), built on
the worker that holds the chunk and never gathered; every request runs
:func:`~.protocol.respond` there and only the aggregates of the protocol come back. The loop is
the one of every transport (:func:`~.setup.prepare_server`: Q, the candidates and a
:class:`~.server.FederatedServer` with all clients and all candidates, then
:func:`~.driver.run_rounds`), so with the same Q and the same candidate stumps the fit equals
the single-process one (every α to rounding). Not here: the estimator and its parameters
(:mod:`.dask`), the transport (:mod:`.dask_transport`), the protocol (:mod:`.protocol`,
:mod:`.client`), the server (:mod:`.server`).

Q(k|x) is by default trained over the same transport (:func:`~.domain.fit_domain_classifier`:
moments, then summed losses and gradients per L-BFGS evaluation; each client keeps its
Q(·|x_i)), so the shards are built without it; a fitted Q is used as given, and
``domain_classifier="central_sample"`` fits it on rows drawn to the driver.

What reaches the driver: per chunk its row count, whether it is finite and its class and
source labels; the protocol's aggregates (Q's training included); with ``thresholds="exact"``
every client's distinct values per feature (once); with ``"central_sample"`` the rows drawn to
fit Q. Otherwise (quantile or given thresholds) no row and no feature value of the data does.
"""

from __future__ import annotations

import numpy as np

from ..domain import DomainClassifier
from ..objective import agnostic_objective
from ..thresholds import candidate_thresholds
from ..validation import check_domains
from .client import ClientShard
from .dask_transport import DaskTransport, import_distributed
from .driver import FederatedRun, ensemble_terms, run_rounds
from .protocol import state_to_payload
from .setup import prepare_server

__all__ = ["federate_on_dask"]


def _block_summary(X, y, domains) -> dict:
    """Per chunk: rows, whether X is finite, the class and source labels present."""
    X = np.asarray(X)
    if X.ndim != 2 or np.asarray(y).shape != (X.shape[0],):
        raise ValueError(f"X and y chunks must be (m, d) and (m,), got {X.shape}, {y.shape}")
    return {
        "n_rows": X.shape[0],
        "finite": bool(np.isfinite(X).all()),
        "classes": np.unique(y),
        "domains": np.unique(check_domains(domains, X.shape[0])),
    }


def _block_rows(X, domains, rows):
    return np.asarray(X, dtype=float)[rows], np.asarray(domains)[rows]


def _shard_distinct(shard: ClientShard) -> list:
    return [np.unique(shard.X[:, j]) for j in range(shard.X.shape[1])]


def _block_shard(X, y, domains, label, k, positive, q) -> ClientShard:
    """The client of source ``label`` (index k) in one chunk, with Q(·|x) computed here (None:
    Q is trained and installed over the transport later)."""
    rows = np.flatnonzero(check_domains(domains, len(domains)) == label)
    X = np.asarray(X, dtype=float)[rows]
    signs = np.where(np.asarray(y)[rows] == positive, 1.0, -1.0)
    return ClientShard(X, signs, k, None if q is None else q.predict_proba(X))


# ----------------------------------------------------------------------- the fit


def _row_chunked(X, y, domains):
    """X (dask, one column chunk, float), y and domains as dask arrays with X's row chunks."""
    import dask.array as da

    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array, got {type(X).__name__}")
    if any(np.isnan(size) for size in X.chunks[0]):
        raise ValueError("X has unknown chunk sizes: call X.compute_chunk_sizes() first")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have at least one sample and one feature, got {X.shape}")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: X.shape[1]})
    rows = (X.chunks[0],)
    arrays = []
    for name, values in (("y", y), ("domains", domains)):
        if values is None:
            values = da.zeros(X.shape[0], chunks=rows, dtype=int)
        if np.shape(values) != (X.shape[0],):
            raise ValueError(f"{name} must have shape ({X.shape[0]},), got {np.shape(values)}")
        if not isinstance(values, da.Array):
            values = da.from_array(np.asarray(values), chunks=rows)
        arrays.append(values.rechunk(rows) if values.chunks != rows else values)
    return X, *arrays


def _blocks(distributed, client, arrays):
    """Per row chunk, the futures of its blocks of ``arrays`` (persisted, in row order)."""
    persisted = client.persist(list(arrays))
    columns = []
    for array in persisted:
        futures = {future.key: future for future in distributed.futures_of(array)}
        keys = [key[0] if isinstance(key, list) else key for key in array.__dask_keys__()]
        columns.append([futures[key] for key in keys])
    return list(zip(*columns))


def _given_domain_classifier(model, client, blocks, summaries, labels):
    """Q fitted before the clients are built: ``model.domain_classifier`` if it is a fitted
    :class:`DomainClassifier`; with ``"central_sample"`` the default one fitted on at most
    ``q_sample_size`` rows drawn to the driver; None for the federated Q."""
    q, sample_size, seed = model.domain_classifier, model.q_sample_size, model.random_state
    if isinstance(q, DomainClassifier):
        if not np.array_equal(np.asarray(q.classes_), labels):
            raise ValueError(
                f"domain_classifier.classes_ must be the domain labels {labels.tolist()}, got "
                f"{np.asarray(q.classes_).tolist()}"
            )
        return q
    if q == "federated":
        return None
    sizes = np.array([summary["n_rows"] for summary in summaries])
    total = int(sizes.sum())
    if total <= sample_size:
        chosen = np.arange(total)
    else:
        chosen = np.sort(np.random.default_rng(seed).choice(total, sample_size, replace=False))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    futures = []
    for (X_block, _, domain_block), low, high in zip(blocks, offsets[:-1], offsets[1:]):
        rows = chosen[(chosen >= low) & (chosen < high)] - low
        if rows.size:
            futures.append(client.submit(_block_rows, X_block, domain_block, rows, pure=False))
    parts = client.gather(futures)
    X_sample = np.concatenate([part[0] for part in parts])
    domains_sample = np.concatenate([part[1] for part in parts])
    return DomainClassifier().fit(X_sample, domains_sample)


def _exact_thresholds(client, shards, n_features):
    """The exact search's candidates from the union of the shards' distinct values."""
    parts = client.gather([client.submit(_shard_distinct, shard) for shard in shards])
    return candidate_thresholds(
        np.concatenate([part[j] for part in parts]) for j in range(n_features)
    )


def federate_on_dask(model, X, y, domains=None, *, client=None, fault=None,
                     record_messages=False) -> dict:  # fmt: skip
    """FEDMULTIBOOST on the cluster holding X, with the parameters of ``model`` (a
    :class:`~.dask.DaskMultiBoostClassifier`, checked by it).

    Returns {"ensemble": (estimators, weights, classes, domain labels, Q, n_features,
    history), "objective": F of the ensemble from the clients' final losses, "run": the
    :class:`~.driver.FederatedRun`, "timings": the transport's per-phase times}.

    Parameters
    ----------
    model : DaskMultiBoostClassifier
        Its parameters (already checked) drive the federation.
    X, y, domains, client, fault, record_messages
        As in :meth:`~.dask.DaskMultiBoostClassifier.fit`.

    Returns
    -------
    dict
        ``ensemble``, ``objective``, ``run`` and ``timings``, as above.

    Examples
    --------
    Called by :meth:`~.dask.DaskMultiBoostClassifier.fit`, whose class example runs it on an
    in-process cluster; it needs a ``dask.distributed`` client:

    >>> result = federate_on_dask(DaskMultiBoostClassifier(), X, y, domains)  # doctest: +SKIP
    """
    distributed = import_distributed()
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError as error:
            raise ValueError(
                "client must be given when no dask.distributed Client is running, got None"
            ) from error
    X, y, domains = _row_chunked(X, y, domains)
    n_features = X.shape[1]
    blocks = _blocks(distributed, client, (X, y, domains))
    summaries = client.gather([client.submit(_block_summary, *block) for block in blocks])
    if not all(summary["finite"] for summary in summaries):
        raise ValueError("X must not contain NaN or infinity")
    classes = np.unique(np.concatenate([summary["classes"] for summary in summaries]))
    if classes.size != 2:
        raise ValueError(
            f"y must contain exactly two classes on dask arrays, got {classes.size}: "
            f"{classes[:5].tolist()}"
        )
    labels = np.unique(np.concatenate([summary["domains"] for summary in summaries]))
    q = _given_domain_classifier(model, client, blocks, summaries, labels)
    q_future = None if q is None else client.scatter(q, broadcast=True, hash=False)
    shards, clients_by_domain = [], [[] for _ in labels]
    for block, summary in zip(blocks, summaries):
        for label in summary["domains"]:
            k = int(np.searchsorted(labels, label))
            clients_by_domain[k].append(len(shards))
            shards.append(client.submit(_block_shard, *block, label, k, classes[1], q_future,
                                        pure=False))  # fmt: skip
    del blocks  # the shards hold what the clients need
    transport = DaskTransport(client, shards, model.retries, model.timeout, fault,
                              record_messages)  # fmt: skip
    try:  # with the federated Q (q None), each client keeps its Q(·|x_i)
        run, server, federated = _federate(model, transport, clients_by_domain, labels,
                                           n_features, federated_q=q is None)  # fmt: skip
        q = federated if q is None else q
        timings = {"phase_seconds": dict(transport.phase_seconds),
                   "compute_seconds": transport.compute_seconds()}  # fmt: skip
        final = transport.request("losses", {c: state_to_payload(server.state)
                                             for c in range(len(shards))})  # fmt: skip
    finally:
        transport.close()
    losses = np.array([
        sum(final[c]["loss_sum"] for c in ids) / sum(final[c]["n_points"] for c in ids)
        for ids in clients_by_domain
    ])  # fmt: skip
    estimators, weights, history = ensemble_terms(server.state, run, labels)
    return {
        "ensemble": (estimators, weights, classes, labels, q, n_features, history),
        "objective": float(agnostic_objective(losses, model.mu)),
        "run": run,
        "timings": timings,
    }


def _federate(model, transport, clients_by_domain, labels, n_features, federated_q):
    """The set-up of every transport (:func:`~.setup.prepare_server`: Q if federated, the
    candidates, the server), then the rounds: the :class:`~.driver.FederatedRun`, the server
    and the federated Q (None if given)."""
    thresholds = choice = model.thresholds
    if isinstance(thresholds, str) and thresholds == "auto":
        choice = "exact" if model.n_bins is None else "quantiles"
    n_quantiles = 16
    if choice == "exact":
        thresholds = _exact_thresholds(transport.client, transport.shards, n_features)
    elif choice == "quantiles":  # the clients' sketches, merged by setup_candidates
        thresholds, n_quantiles = None, 255 if model.n_bins is None else int(model.n_bins) - 1
    server, setup, q = prepare_server(
        transport, clients_by_domain, labels, n_features, federated_q=federated_q,
        thresholds=thresholds, n_quantiles=n_quantiles, mu=model.mu, step=model.step,
        max_depth=model.max_depth,
    )  # fmt: skip
    setup["thresholds"] = choice if isinstance(choice, str) else "given"
    run = FederatedRun(setup=setup)
    run.history = run_rounds(
        server, transport, clients_by_domain, model.n_estimators, model.line_search_batch
    )
    run.messages = transport.log
    return run, server, q
