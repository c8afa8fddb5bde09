"""MULTIBOOST on data partitioned across a ``dask.distributed`` cluster (extra ``dist``).

Lives here: :func:`fit_on_dask` (what ``MultiBoostClassifier.fit`` runs when X is a dask
array) and the worker-side functions that check the chunks and build the clients. Each row
chunk of X is split by source into clients (one
:class:`~.client.ClientShard` per chunk and source present in it), built on the worker that
holds the chunk and never gathered; every request runs :func:`~.protocol.respond` there and
only the aggregates of the protocol come back. The loop is the one of every transport
(:func:`~.driver.setup_candidates`, :class:`~.server.FederatedServer` with all clients and
all candidates, :func:`~.driver.run_rounds`, :func:`~.driver.fill_estimator`), so with the same
Q and the same candidate stumps the fit equals the single-process one (every α to rounding).
Not here: the transport (:mod:`.dask_transport`), the protocol (:mod:`.protocol`,
:mod:`.client`), the server (:mod:`.server`).

Choices:

- Requests reach the clients through :class:`~.dask_transport.DaskTransport`: one actor
  per worker holding that worker's clients (default), or one task per request
  (``mode="tasks"``).
- Q(k|x): a fitted :class:`~manytask.boost.DomainClassifier` given as ``domain_classifier``
  is used as is; otherwise Q is fitted on at most ``q_sample_size`` rows gathered from the
  partitions (all of them, in order, when the data are no larger: then Q is exactly the
  single-process one), drawn without replacement with ``random_state`` when they are.
- Candidate thresholds: ``"exact"`` = −inf and every midpoint between consecutive distinct
  values of each feature (what the exact search of :func:`~manytask.boost.stumps.presort`
  scans, computed the same way), merged from per-partition ``np.unique``; ``"quantiles"`` =
  −inf and the merged per-feature quantile sketches of the clients
  (:func:`~.server.merge_quantiles`) at ``n_bins − 1`` levels (255 if ``n_bins`` is None).
  The default follows the estimator: ``n_bins=None`` means exact (the result then equals the
  single-process fit); an int ``n_bins`` means the sketch. Exact candidates number up to the
  points times the features and every client returns an edge per candidate and active
  domain each round, so on large continuous data set ``n_bins`` (e.g. 256); the sketch's
  thresholds lie within one quantile spacing of the pooled quantiles that the single-process
  binned search takes, they are not the same. A list of arrays (one per feature, e.g. the
  single-process binned thresholds) is used as given.
- Options the protocol does not carry raise ``ValueError`` naming them: more than two classes
  or ``multi_class="mh"``, ``loss="logistic"``, ``mixtures``, ``beta > 0``, ``step`` other
  than the AdaBoost step or the exact line search, ``tie_step="block"``, early stopping,
  ``sample_weight``. ``mu`` and ``step`` are
  passed to the federated server.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from ..domain import DomainClassifier
from ..objective import agnostic_objective
from ..stumps import candidate_thresholds
from ..validation import check_domains, check_positive_int
from .client import ClientShard
from .dask_transport import DaskTransport, import_distributed
from .driver import FederatedRun, fill_estimator, run_rounds, setup_candidates
from .protocol import state_to_payload
from .server import FEDERATED_STEPS, FederatedServer, merge_quantiles

__all__ = ["fit_on_dask"]


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
    """The client of source ``label`` (index k) in one chunk, with Q(·|x) computed here."""
    rows = np.flatnonzero(check_domains(domains, len(domains)) == label)
    X = np.asarray(X, dtype=float)[rows]
    signs = np.where(np.asarray(y)[rows] == positive, 1.0, -1.0)
    return ClientShard(X, signs, k, q.predict_proba(X))


# ----------------------------------------------------------------------- the fit


def _check_supported(estimator, sample_weight):
    estimator._check_params()
    unsupported = {
        "multi_class": estimator.multi_class == "mh",
        "loss": estimator.loss != "exponential",
        "mixtures": estimator.mixtures is not None,
        "beta": float(estimator.beta) != 0.0,
        "step": estimator.step not in FEDERATED_STEPS,
        "tie_step": estimator.tie_step != "coordinate",
        "n_iter_no_change": estimator.n_iter_no_change is not None,
    }
    for name, bad in unsupported.items():
        if bad:
            raise ValueError(
                f"{name}={getattr(estimator, name)!r} is not supported on dask arrays (the "
                "federated protocol is binary, exponential loss, simplex, no penalty, AdaBoost or "
                "exact coordinate steps); fit on a NumPy array instead"
            )
    n_bins = estimator.n_bins
    if n_bins is not None and (
        isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 2
    ):
        raise ValueError(f"n_bins must be None or an int >= 2, got {n_bins!r}")
    if sample_weight is not None:
        raise ValueError("sample_weight is not supported on dask arrays, got an array")


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


def _domain_classifier(estimator, client, blocks, summaries, labels, sample_size, seed):
    q = estimator.domain_classifier
    if isinstance(q, DomainClassifier) and hasattr(q, "classes_"):
        if not np.array_equal(np.asarray(q.classes_), labels):
            raise ValueError(
                f"domain_classifier.classes_ must be the domain labels {labels.tolist()}, got "
                f"{np.asarray(q.classes_).tolist()}"
            )
        return q
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
    if q is None:
        return DomainClassifier().fit(X_sample, domains_sample)
    if isinstance(q, DomainClassifier):
        return clone(q).fit(X_sample, domains_sample)
    return DomainClassifier(estimator=q, prefit=True).fit(X_sample, domains_sample)


def _exact_thresholds(client, shards, n_features):
    """The exact search's candidates from the union of the shards' distinct values."""
    parts = client.gather([client.submit(_shard_distinct, shard) for shard in shards])
    return candidate_thresholds(
        np.concatenate([part[j] for part in parts]) for j in range(n_features)
    )


def _sketch_thresholds(transport, clients, n_levels):
    """−inf and the merged per-feature quantile sketches of the clients (the ``setup`` phase)."""
    levels = np.linspace(0.0, 1.0, n_levels + 2)[1:-1]
    reports = transport.request("setup", {c: {"levels": levels} for c in clients})
    merged = merge_quantiles([reports[c] for c in clients], levels)
    counts = {"numbers_to_clients": transport.sent, "numbers_from_clients": transport.received}
    return [np.concatenate([[-np.inf], t[np.isfinite(t)]]) for t in merged], counts


def fit_on_dask(estimator, X, y, domains=None, sample_weight=None, *, client=None,
                thresholds="auto", q_sample_size=20_000, line_search_batch=15, mode="actors",
                retries=0, timeout=None, fault=None, record_messages=False):  # fmt: skip
    """Fit ``estimator`` (a :class:`~manytask.boost.MultiBoostClassifier`) on dask arrays.

    Parameters
    ----------
    estimator : MultiBoostClassifier
        Its parameters are used (``n_estimators``, ``domain_classifier``, ``n_bins``,
        ``random_state``, ``mu``); unsupported options raise ``ValueError`` (module notes).
    X : dask array (N, d), chunked by rows
    y, domains : dask arrays with X's row chunks (rechunked if not), or NumPy arrays
        Two classes; ``domains`` None means one source.
    sample_weight : None
        Not supported (``ValueError`` otherwise).
    client : None or distributed.Client
        None: the current client (``distributed.get_client()``).
    thresholds : "auto", "exact", "quantiles" or list of arrays
        Candidate thresholds (module notes); "auto": exact if ``estimator.n_bins`` is None,
        else quantile sketches at ``n_bins − 1`` levels.
    q_sample_size : int >= 1
        Rows gathered to fit Q when it is not given fitted.
    line_search_batch : int >= 1
        Trial steps per line-search exchange.
    mode : {"actors", "tasks"}
        How requests reach the clients (:class:`DaskTransport`).
    retries, timeout, fault, record_messages
        As in :func:`~manytask.boost.federated.simulate`.

    Returns
    -------
    estimator
        Fitted: ``estimators_``, ``estimator_weights_``, ``domain_classifier_``, ``history_``,
        ``objective_`` (F of the final ensemble on the training data) and ``federated_run_``
        (per round the numbers sent each way and the wall time); ``dask_timings_``, set-up
        and rounds: the driver's wall time per phase (``phase_seconds``) and, with actors,
        the time each worker's clients spent answering per phase (``compute_seconds``:
        {worker address: {"wall" | "cpu": {phase: seconds}}}).

    Examples
    --------
    >>> import dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from manytask.boost import MultiBoostClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y, domains = (X[:, 0] > 0).astype(int), np.repeat([0, 1], 30)
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
    ...     with Client(cluster) as client:
    ...         clf = MultiBoostClassifier(n_estimators=3).fit(
    ...             da.from_array(X, chunks=(20, 2)), y, domains)
    >>> float(clf.score(X, y))
    1.0
    """
    distributed = import_distributed()
    _check_supported(estimator, sample_weight)
    if mode not in ("actors", "tasks"):
        raise ValueError(f"mode must be 'actors' or 'tasks', got {mode!r}")
    for name, value in (("q_sample_size", q_sample_size),
                        ("line_search_batch", line_search_batch)):  # fmt: skip
        check_positive_int(value, name)
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
    q = _domain_classifier(estimator, client, blocks, summaries, labels, q_sample_size,
                           estimator.random_state)  # fmt: skip
    q_future = client.scatter(q, broadcast=True, hash=False)
    shards, clients_by_domain = [], [[] for _ in labels]
    for block, summary in zip(blocks, summaries):
        for label in summary["domains"]:
            k = int(np.searchsorted(labels, label))
            clients_by_domain[k].append(len(shards))
            shards.append(client.submit(_block_shard, *block, label, k, classes[1], q_future,
                                        pure=False))  # fmt: skip
    transport = DaskTransport(client, shards, mode, retries, timeout, fault, record_messages)
    try:
        run, server = _federate(estimator, transport, clients_by_domain, n_features,
                                thresholds, line_search_batch)  # fmt: skip
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
    fill_estimator(estimator, server.state, q, classes, labels, n_features, run)
    estimator._multiclass = False
    estimator.validation_losses_ = None
    estimator.objective_ = float(agnostic_objective(losses, estimator.mu))
    estimator.dask_timings_ = timings
    return estimator


def _federate(estimator, transport, clients_by_domain, n_features, thresholds, batch):
    """Candidates, then the rounds: the :class:`~.driver.FederatedRun` and the server."""
    clients = list(range(len(transport.shards)))
    choice = thresholds
    if isinstance(thresholds, str):
        if thresholds not in ("auto", "exact", "quantiles"):
            raise ValueError(
                f"thresholds must be 'auto', 'exact', 'quantiles' or a list of arrays, got "
                f"{thresholds!r}"
            )
        if thresholds == "auto":
            choice = "exact" if estimator.n_bins is None else "quantiles"
    sketch_counts = None
    if choice == "exact":
        thresholds = _exact_thresholds(transport.client, transport.shards, n_features)
    elif choice == "quantiles":
        n_levels = 255 if estimator.n_bins is None else int(estimator.n_bins) - 1
        thresholds, sketch_counts = _sketch_thresholds(transport, clients, n_levels)
    features, flat, setup = setup_candidates(transport, clients, n_features, thresholds)
    setup["thresholds"] = choice if isinstance(choice, str) else "given"
    if sketch_counts is not None:
        for key, value in sketch_counts.items():
            setup[key] += value
    mu = {} if estimator.mu is None else {"mu": estimator.mu}
    server = FederatedServer(len(clients_by_domain), features, flat, **mu, step=estimator.step)
    run = FederatedRun(setup=setup)
    run.history = run_rounds(server, transport, clients_by_domain, estimator.n_estimators, batch)
    run.messages = transport.log
    return run, server
