"""The server's set-up of FEDMULTIBOOST, written once for every transport (in process, Flower,
Dask): once the clients exist behind a :class:`~.protocol.Transport`, train Q(k|x) over it if
asked (:func:`~.domain.fit_domain_classifier`), agree on the candidate stumps
(:func:`~.driver.setup_candidates`: given thresholds or the clients' quantile sketches, the
one threshold function of :mod:`manytask.boost.thresholds`), and build the
:class:`~.server.FederatedServer` (which checks r, s, μ and the step rule) holding the clients'
minima of Q for the separating step.
"""

from __future__ import annotations

import numpy as np

from .domain import fit_domain_classifier
from .driver import setup_candidates
from .server import FederatedServer

__all__ = ["prepare_server"]


def prepare_server(transport, clients_by_domain, domain_labels, n_features, *, federated_q,
                   thresholds=None, n_quantiles=16, r=None, s=None, random_state=None, mu=None,
                   step="adaboost", max_depth=1, histogram_trees=False):  # fmt: skip
    """Q (if trained over the transport), the candidates and the server, before any round.

    Parameters
    ----------
    transport : Transport
        The transport to every client (ids 0..n−1).
    clients_by_domain : sequence of sequence of int
        The client ids of each domain.
    domain_labels : array-like of shape (p,)
        The domains' labels, in the order of Q's columns.
    n_features : int
        The number of features d.
    federated_q : bool
        Train Q(k|x) over the transport (the clients then keep their Q(·|x_i)); False: the
        clients already hold Q(·|x_i).
    thresholds : None or sequence of array-like
        One array of candidate thresholds per feature; None: the clients' quantiles.
    n_quantiles : int, default=16
        The quantile levels each client reports when ``thresholds`` is None.
    r, s, random_state, mu, step, max_depth, histogram_trees
        As in :class:`~.server.FederatedServer`.

    Returns
    -------
    server : FederatedServer
        Ready for :func:`~.driver.run_rounds`.
    setup : dict
        :func:`~.driver.setup_candidates`' counts, with Q's training (``domain_classifier``,
        its numbers added to the set-up's) when ``federated_q``.
    q : DomainClassifier or None
        The federated Q; None if not ``federated_q``.

    Examples
    --------
    >>> from manytask.boost.federated import ClientShard, InProcessTransport
    >>> shards = [ClientShard(np.array([[0.0], [1.0]]), np.array([-1.0, 1.0]), k,
    ...                       np.full((2, 2), 0.5)) for k in (0, 1)]
    >>> server, setup, q = prepare_server(InProcessTransport(shards), [[0], [1]], [0, 1], 1,
    ...                                   federated_q=False, thresholds=[[0.5]])
    >>> server.candidate_thresholds.tolist(), setup["n_candidates"], q
    ([0.5], 1, None)
    """
    q, q_record = None, None
    if federated_q:
        q, q_record = fit_domain_classifier(transport, clients_by_domain, np.asarray(domain_labels))
    clients = [c for ids in clients_by_domain for c in ids]
    features, flat, setup = setup_candidates(transport, sorted(clients), n_features, thresholds,
                                             n_quantiles)  # fmt: skip
    if q_record is not None:  # Q's training is part of the set-up's communication
        setup["domain_classifier"] = q_record
        for key in ("numbers_to_clients", "numbers_from_clients"):
            setup[key] += q_record[key]
    server = FederatedServer(len(clients_by_domain), features, flat, r, s,
                             random_state=random_state, mu=mu, step=step,
                             max_depth=max_depth, histogram_trees=histogram_trees)  # fmt: skip
    server.min_probabilities = setup["min_probabilities"]
    return server, setup, q
