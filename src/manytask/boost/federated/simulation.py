"""FEDMULTIBOOST in one process: :func:`simulate`, for tests and quick experiments.

Lives here: :func:`simulate` (split the data into clients, train Q(k|x) over the transport
(:mod:`.domain`) or fit it centrally, run the federation over an
:class:`~.protocol.InProcessTransport`; hard max, soft-max ``mu``, or with ``pooled=True`` the
FedAvg-style federated AdaBoost on the pooled objective, the baseline of the ``fedboost``
experiment), :func:`federated_domain_classifier` (the federated Q alone, on the clients
:func:`simulate` makes) and :func:`make_shards` (the clients' shards). Not here: the client
(:mod:`.client`, :mod:`.protocol`), the server (:mod:`.server`), the loop (:mod:`.driver`),
which the Flower and Dask transports run too.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_X_y

from ..._validation import check_bool, check_int, check_positive, check_positive_int
from ..domain import DomainClassifier
from ..multiboost import MultiBoostClassifier
from .client import ClientShard
from .domain import fit_domain_classifier
from .driver import FederatedRun, fill_estimator, run_rounds
from .protocol import InProcessTransport
from .setup import prepare_server

__all__ = [
    "as_estimator",
    "check_federation_inputs",
    "federated_domain_classifier",
    "make_shards",
    "prepare_clients",
    "simulate",
]

DOMAIN_CLASSIFIERS = ("federated", "central")


def simulate(X, y, domains, clients_per_domain, r=None, s=None, n_rounds=100, random_state=None,
             *, thresholds=None, n_quantiles=16, domain_classifier="federated",
             line_search_batch=15, retries=0, timeout=None, fault=None, record_messages=False,
             mu=None, pooled=False, step="adaboost", max_depth=1,
             histogram_trees=False):  # fmt: skip
    """FEDMULTIBOOST (Figure 2) run in process; returns a fitted :class:`MultiBoostClassifier`.

    Parameters
    ----------
    X, y, domains : array-like (N, d), (N,), (N,)
        Binary labels; the points of each domain are split at random into
        ``clients_per_domain`` shards (clients) that never leave their client.
    clients_per_domain : int >= 1
    r, s : None or int >= 1
        Clients and candidate stumps sampled per domain and round (None: all).
    n_rounds : int >= 1
    random_state : None, int or Generator
        Seeds the client split and the selections.
    thresholds : None or list of arrays (one per feature)
        Candidate thresholds held by the server (e.g. from public data). None: merged from the
        clients' per-feature quantiles at ``n_quantiles`` levels (:func:`merge_quantiles`).
    n_quantiles : int >= 1
        The number of quantile levels each client reports when ``thresholds`` is None.
    domain_classifier : "federated", "central" or a classifier
        Q(k|x). "federated" (default): multinomial logistic regression trained over the
        transport from the clients' summed gradients, the inputs never pooled
        (:func:`~.domain.fit_domain_classifier`, the central default's model and objective);
        its cost is in ``federated_run_.setup`` (``"domain_classifier"``, and in the set-up
        numbers). "central": the default :class:`~manytask.boost.DomainClassifier` fitted on
        the pooled (X, domains). A classifier (e.g. a ``DomainClassifier``, ``prefit`` or
        not): cloned and fitted on the pooled (X, domains), as "central".
    line_search_batch : int >= 1
        Trial steps per line-search exchange.
    retries : int >= 0
        Times a failing request is repeated before the client is dropped from the round; the
        round is then run again from scratch with the remaining clients (nothing of the failed
        attempt reaches the model). A round in which a domain has no client left is skipped.
    timeout : None or float > 0
        Seconds after which an answer counts as a failure.
    fault : None or callable(round, client, phase)
        Fault injection for tests: raising makes that client call fail.
    record_messages : bool
        Keep every client→server message in ``federated_run_.messages``.
    mu : None or float > 0
        None: the hard max F = max_k F_k of Figure 2. A float: the soft-max
        F_μ = (1/μ) log Σ_k e^{μ F_k} (§3), as ``MultiBoostClassifier(mu=mu)``: each round
        every client returns the edge rows of every domain q (p·s + 2 numbers, against s + 2
        for the hard max), the server takes the steepest coordinate of F_μ (rate
        Σ_l p_l E_l(q, r), p = softmax(μ F)) and the step rule's step along it; it does not
        stall at the ties where the hard max zig-zags.
    pooled : bool
        True: the FedAvg-style baseline, federated AdaBoost on the pooled objective. The same
        clients (each still holds points of one source) and protocol, but every point is in one
        domain with Q ≡ 1, so the server minimises Σ_c m_c Φ_c / Σ_c m_c, the exponential loss
        of the union (size-weighted, as FedAvg weights clients); ``domain_classifier`` must
        then be None, and ``r`` counts the clients sampled per round out of all of them. The
        returned estimator has one domain (``domains_ = [0]``).
    step : {"adaboost", "exact_line_search"}
        The step rule (:class:`~.server.FederatedServer`), as ``MultiBoostClassifier(step=step)``.
    max_depth : int >= 1
        1 (default, the paper's): candidate stumps. d > 1: trees of depth d, as
        ``MultiBoostClassifier(max_depth=d)``, split at the candidate thresholds; each
        participant proposes its source's tree, the server sends each participant of an
        active source s of them (``r``, ``s`` as for stumps), the answer is s edge sums
        (:class:`~.server.FederatedServer`; with ``mu`` a tree per domain and p·s edges).
        With one client per source, all of them taking part, the hard max and the
        estimator's bins equal to the candidate thresholds, the ensemble is
        ``MultiBoostClassifier(max_depth=d)``'s.
    histogram_trees : bool
        With ``max_depth`` > 1: the server grows each active source's tree from the sums over
        its participants of their per-(node, feature, bin) histograms, level by level (what
        Flower's secure sums do with trees; :class:`~.server.FederatedServer`), instead of
        taking proposed trees. With every client of a source taking part the tree is
        ``MultiBoostClassifier(max_depth=d)``'s on that source's pooled rows, however many
        clients hold them; with ``mu`` the trees of every domain q are
        ``MultiBoostClassifier(mu=mu, max_depth=d)``'s.

    Returns
    -------
    MultiBoostClassifier
        With ``estimators_``, ``estimator_weights_``, ``domain_classifier_``, ``history_`` and
        ``federated_run_`` (a :class:`FederatedRun`: per round the participants, failures,
        restarts and numbers sent each way).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = simulate(X, y, np.repeat([0, 1], 40), 2, n_rounds=3, random_state=0)
    >>> float(clf.score(X, y)) > 0.9
    True
    """
    clients = prepare_clients(X, y, domains, clients_per_domain, r, s, n_rounds, random_state,
                              n_quantiles=n_quantiles, domain_classifier=domain_classifier,
                              line_search_batch=line_search_batch, mu=mu, pooled=pooled,
                              thresholds=thresholds)  # fmt: skip
    X, classes, domain_labels, shards, clients_by_domain, client_points, q, federated_q, rng = (
        clients[key] for key in ("X", "classes", "domain_labels", "shards", "clients_by_domain",
                                 "client_points", "q", "federated_q", "rng")
    )  # fmt: skip
    transport = InProcessTransport(shards, retries, timeout, fault, record_messages)
    server, setup, federated = prepare_server(
        transport, clients_by_domain, domain_labels, X.shape[1], federated_q=federated_q,
        thresholds=thresholds, n_quantiles=n_quantiles, r=r, s=s, random_state=rng, mu=mu,
        step=step, max_depth=max_depth, histogram_trees=histogram_trees,
    )  # fmt: skip
    q = federated if federated_q else q
    run = FederatedRun(setup=setup, client_points=client_points)
    run.history = run_rounds(server, transport, clients_by_domain, n_rounds, line_search_batch)
    run.messages = transport.log
    return as_estimator(server.state, q, classes, domain_labels, X.shape[1], run, server.mu,
                        server.step, server.max_depth)  # fmt: skip


def prepare_clients(X, y, domains, clients_per_domain, r=None, s=None, n_rounds=100,
                    random_state=None, *, n_quantiles=16, domain_classifier="federated",
                    line_search_batch=15, mu=None, pooled=False, thresholds=None):  # fmt: skip
    """What every federation runner (:func:`simulate`, the Flower runner) does before the
    set-up, written once: the argument checks (:func:`check_federation_inputs`, ``r``, ``s``,
    ``pooled``, one threshold array per feature), Q (fitted centrally, ≡ 1 with one domain or
    ``pooled``, or None when it is trained federated: ``federated_q``) and the clients
    (:func:`make_shards`; without Q(·|x) when Q is federated). Returns a dict with ``X``,
    ``classes``, ``domain_labels``, ``shards``, ``clients_by_domain``, ``client_points``,
    ``q``, ``federated_q`` and ``rng`` (``random_state``'s generator after the split: the
    server's random choices continue it).

    Parameters
    ----------
    X, y, domains : array-like (N, d), (N,), (N,)
        As in :func:`simulate`.
    clients_per_domain : int >= 1
        Shards per domain.
    r, s : None or int >= 1
        Clients and candidate stumps sampled per domain and round (checked only).
    n_rounds : int >= 1
        The number of rounds (checked only).
    random_state : None, int or Generator
        Seeds the client split.
    n_quantiles, domain_classifier, line_search_batch, mu, pooled, thresholds
        As in :func:`simulate`.

    Returns
    -------
    dict
        The checked inputs, Q and the clients, keyed as above.

    Examples
    --------
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> clients = prepare_clients(X, [0, 1, 0, 1], [0, 0, 1, 1], 2, random_state=0)
    >>> clients["clients_by_domain"], clients["federated_q"], clients["q"]
    ([[0, 1], [2, 3]], True, None)
    """
    X, y, domains, classes = check_federation_inputs(
        X, y, domains, clients_per_domain, n_rounds, line_search_batch, n_quantiles, mu
    )
    for name, value in (("r", r), ("s", s)):
        check_positive_int(value, name, allow_none=True)
    check_bool(pooled, "pooled")
    if thresholds is not None and len(thresholds) != X.shape[1]:
        raise ValueError(f"thresholds must hold one array per feature ({X.shape[1]}), "
                         f"got {len(thresholds)}")  # fmt: skip
    federated_q = check_domain_classifier(domain_classifier, pooled)
    domain_labels, domain_index = np.unique(domains, return_inverse=True)
    rng = np.random.default_rng(random_state)
    q, probabilities = None, None
    if pooled or (federated_q and domain_labels.size == 1):  # Q ≡ 1, nothing to train
        federated_q = False
        q = DomainClassifier().fit(X[:1], domains[:1] if not pooled else np.zeros(1, int))
        probabilities = np.ones((X.shape[0], 1))
    elif not federated_q:
        q = DomainClassifier() if domain_classifier == "central" else clone(domain_classifier)
        probabilities = q.fit(X, domains).predict_proba(X)
    signs = np.where(y == classes[1], 1.0, -1.0)
    # The pooled baseline splits the points into the same clients (same draws of rng).
    shards, clients_by_domain, client_points = make_shards(
        X, signs, domain_index, clients_per_domain, probabilities, rng
    )
    if pooled:
        shards = [ClientShard(shard.X, shard.y, 0, shard.domain_probabilities)
                  for shard in shards]  # fmt: skip
        clients_by_domain = [[c for ids in clients_by_domain for c in ids]]
        domain_labels = np.array([0])
    return {"X": X, "classes": classes, "domain_labels": domain_labels, "shards": shards,
            "clients_by_domain": clients_by_domain, "client_points": client_points, "q": q,
            "federated_q": federated_q, "rng": rng}  # fmt: skip


def federated_domain_classifier(X, domains, clients_per_domain, random_state=None, **options):
    """Q(k|x) trained over the clients :func:`simulate` makes with the same arguments (same
    split of each domain's points, the inputs never pooled); returns (Q, record) of
    :func:`~.domain.fit_domain_classifier` (``options``: its ``C``, ``tol``, ``max_iter``,
    ``clip``). Pass Q to several :func:`simulate` runs (``domain_classifier=Q``) to share it.

    Parameters
    ----------
    X : array-like of shape (N, d)
        The points.
    domains : array-like of shape (N,)
        Their domain labels.
    clients_per_domain : int
        Shards per domain.
    random_state : None, int or Generator
        Seeds the client split, as in :func:`simulate`.
    **options
        ``C``, ``tol``, ``max_iter`` and ``clip`` of :func:`~.domain.fit_domain_classifier`.

    Returns
    -------
    q : DomainClassifier
        The fitted Q.
    record : dict
        The training's record.

    Examples
    --------
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> q, record = federated_domain_classifier(X, [0, 0, 1, 1], 1, random_state=0)
    >>> q.predict_proba(np.array([[-3.0], [3.0]])).argmax(axis=1).tolist(), record["converged"]
    ([0, 1], True)
    """
    X = np.asarray(X, dtype=float)
    domain_labels, domain_index = np.unique(np.asarray(domains), return_inverse=True)
    rng = np.random.default_rng(random_state)
    shards, clients_by_domain, _ = make_shards(
        X, np.ones(X.shape[0]), domain_index, clients_per_domain, None, rng
    )
    transport = InProcessTransport(shards)
    return fit_domain_classifier(transport, clients_by_domain, domain_labels, **options)


def check_domain_classifier(domain_classifier, pooled) -> bool:
    """True for the federated Q; ValueError for a bad value or a Q given with ``pooled``.

    Parameters
    ----------
    domain_classifier : str or classifier
        ``"federated"``, ``"central"`` or a classifier with ``fit``.
    pooled : bool
        Whether the run is the pooled baseline.

    Returns
    -------
    bool
        Whether Q is trained over the transport.

    Examples
    --------
    >>> check_domain_classifier("federated", False), check_domain_classifier("central", False)
    (True, False)
    """
    if isinstance(domain_classifier, str):
        if domain_classifier not in DOMAIN_CLASSIFIERS:
            raise ValueError(
                f"domain_classifier must be one of {DOMAIN_CLASSIFIERS} or a classifier, got "
                f"{domain_classifier!r}"
            )
        return domain_classifier == "federated" and not pooled
    if pooled:
        raise ValueError(
            f"domain_classifier must be 'federated' or 'central' with pooled=True (Q ≡ 1), "
            f"got {domain_classifier!r}"
        )
    if not hasattr(domain_classifier, "fit"):
        raise ValueError(
            f"domain_classifier must be one of {DOMAIN_CLASSIFIERS} or a classifier, got "
            f"{domain_classifier!r}"
        )
    return False


def as_estimator(state, q, classes, domain_labels, n_features, run, mu=None, step="adaboost",
                 max_depth=1):  # fmt: skip
    """A fitted :class:`~manytask.boost.MultiBoostClassifier` holding the federated ensemble
    (``mu``, ``step``, ``max_depth``: the server's soft-max parameter, step rule and base
    classifiers, kept as the estimator's).

    Parameters
    ----------
    state : ModelState
        The federated ensemble's terms.
    q : DomainClassifier
        The fitted Q(k|x).
    classes : array-like of shape (2,)
        The class labels of y = −1 and +1.
    domain_labels : array-like of shape (p,)
        The domains' labels.
    n_features : int
        The number of features d.
    run : FederatedRun
        What the federation did.
    mu : None or float, default=None
        The server's soft-max parameter.
    step : {"adaboost", "exact_line_search"}, default="adaboost"
        The server's step rule.
    max_depth : int, default=1
        The depth of the server's trees (1: stumps).

    Returns
    -------
    MultiBoostClassifier
        The fitted estimator.

    Examples
    --------
    >>> from manytask.boost.federated import FederatedRun, ModelState, SoftmaxDomainModel
    >>> from manytask.boost.federated.domain import as_domain_classifier
    >>> q = as_domain_classifier(SoftmaxDomainModel([[0.0]], [0.0], ["a", "b"]), ["a", "b"],
    ...                          clip=1e-6, n_clipped=0)
    >>> state = ModelState().with_term(0, 0, 0.5, 1.0, 0.25)
    >>> run = FederatedRun({}, history=[{"direction": (0, 0, 0.5, 1), "step": 0.25}])
    >>> clf = as_estimator(state, q, np.array([0, 1]), np.array(["a", "b"]), 1, run)
    >>> clf.n_estimators, clf.predict(np.array([[0.0], [1.0]])).tolist()
    (1, [0, 1])
    """
    clf = MultiBoostClassifier(
        n_estimators=max(len(run.history), 1),
        domain_classifier=q,
        mu=mu,
        step=step,
        max_depth=max_depth,
    )
    return fill_estimator(clf, state, q, classes, domain_labels, n_features, run)


def make_shards(X, signs, domain_index, clients_per_domain, probabilities, rng):
    """Split each domain's points at random into ``clients_per_domain`` clients.

    Returns (shards, client ids per domain, row indices of each client's shard); ``signs`` are
    the labels in {−1, +1}, ``probabilities`` Q(·|x) on every row (None: Q is trained and
    installed over the transport later), ``rng`` a Generator.

    Parameters
    ----------
    X : ndarray of shape (N, d)
        The points.
    signs : ndarray of shape (N,)
        Their labels in {−1, +1}.
    domain_index : ndarray of shape (N,)
        Their domain indices 0..p−1.
    clients_per_domain : int
        Shards per domain.
    probabilities : ndarray of shape (N, p) or None
        Q(·|x) on every row.
    rng : Generator
        Draws the split.

    Returns
    -------
    shards : list of ClientShard
        The clients' data.
    clients_by_domain : list of list of int
        The client ids of each domain.
    client_points : list of ndarray
        The sorted row indices of each client's shard.

    Examples
    --------
    >>> shards, clients_by_domain, points = make_shards(
    ...     np.zeros((4, 1)), np.ones(4), np.array([0, 0, 0, 1]), 2, None,
    ...     np.random.default_rng(0))
    >>> clients_by_domain, sorted(p.size for p in points)
    ([[0, 1], [2]], [1, 1, 2])
    """
    shards, clients_by_domain, client_points = [], [], []
    for k in range(int(domain_index.max()) + 1):
        points = rng.permutation(np.flatnonzero(domain_index == k))
        parts = [part for part in np.array_split(points, clients_per_domain) if part.size]
        clients_by_domain.append(list(range(len(shards), len(shards) + len(parts))))
        for part in map(np.sort, parts):
            client_points.append(part)
            q = None if probabilities is None else probabilities[part]
            shards.append(ClientShard(X[part], signs[part], k, q))
    return shards, clients_by_domain, client_points


def check_federation_inputs(X, y, domains, clients_per_domain, n_rounds, line_search_batch,
                            n_quantiles, mu=None):  # fmt: skip
    """The argument checks every federation runner shares; returns (X, y, domains, classes).

    ValueError naming the parameter for a bad value.

    Parameters
    ----------
    X, y, domains : array-like (N, d), (N,), (N,)
        As in :func:`simulate`.
    clients_per_domain, n_rounds, line_search_batch, n_quantiles : int >= 1
        As in :func:`simulate`; ``clients_per_domain`` at most the rows of every domain.
    mu : None or float > 0, default=None
        As in :func:`simulate`.

    Returns
    -------
    X : ndarray of shape (N, d)
        Checked by scikit-learn's ``check_X_y``.
    y : ndarray of shape (N,)
        The labels.
    domains : ndarray of shape (N,)
        The domain labels.
    classes : ndarray of shape (2,)
        The two class labels, sorted.

    Examples
    --------
    >>> X, y, domains, classes = check_federation_inputs(
    ...     np.zeros((4, 1)), [0, 1, 0, 1], [0, 0, 1, 1], 2, 10, 15, 16)
    >>> X.shape, classes.tolist()
    ((4, 1), [0, 1])
    """
    X, y = check_X_y(X, y)
    domains = np.asarray(domains)
    if domains.shape != (X.shape[0],):
        raise ValueError(f"domains must have shape ({X.shape[0]},), got {domains.shape}")
    positive_ints = {
        "clients_per_domain": clients_per_domain,
        "n_rounds": n_rounds,
        "line_search_batch": line_search_batch,
        "n_quantiles": n_quantiles,
    }
    for name, value in positive_ints.items():
        check_int(value, name)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"y must have exactly 2 classes, got {classes.size}")
    labels, rows = np.unique(domains, return_counts=True)
    if rows.min() < clients_per_domain:
        smallest = labels.tolist()[rows.argmin()]
        raise ValueError(
            f"clients_per_domain must be at most the rows of every domain, got "
            f"{clients_per_domain} with {rows.min()} rows in domain {smallest!r}"
        )
    check_positive(mu, "mu", allow_none=True)
    return X, y, domains, classes
