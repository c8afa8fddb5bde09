"""MULTIBOOST on data partitioned across a ``dask.distributed`` cluster (extra ``dist``).

Lives here: :class:`DaskMultiBoostClassifier`, the estimator that takes dask arrays, as
``xgboost.dask`` does: a :class:`~manytask.boost.MultiBoostClassifier` whose ``fit`` runs
the federated protocol (Figure 2) with each row chunk's sources as clients on the workers
that hold them, and which then predicts in memory like the estimator it subclasses. Not here:
the fit's machinery (:mod:`.dask_backend`), the transport (:mod:`.dask_transport`).
"""

from __future__ import annotations

from ..._validation import (
    check_int,
    check_positive,
    check_positive_int,
    check_retries,
    check_timeout,
)
from ..domain import DomainClassifier
from ..multiboost import MultiBoostClassifier
from ..steps import check_step
from .dask_backend import federate_on_dask
from .server import FEDERATED_STEPS

__all__ = ["DaskMultiBoostClassifier"]

THRESHOLD_RULES = ("auto", "exact", "quantiles")
DOMAIN_CLASSIFIERS = ("federated", "central_sample")


class DaskMultiBoostClassifier(MultiBoostClassifier):
    """MULTIBOOST fitted where the data lie: dask arrays on a ``dask.distributed`` cluster.

    ``fit`` runs FEDMULTIBOOST (Figure 2) with all clients and all candidate stumps: each row
    chunk's points of each source are one client, built and kept on the worker that holds the
    chunk; only the protocol's aggregates (Q's summed gradients, losses, edges, quantile
    sketches) reach the driver. With the same Q and the same candidate stumps the fit equals
    ``MultiBoostClassifier(...).fit`` on the gathered data (every α to rounding). The fitted
    estimator predicts on in-memory arrays, as :class:`~manytask.boost.MultiBoostClassifier`.
    The protocol is binary, Φ = exp, Λ = the simplex, no ℓ1 penalty: the parameters are those
    of :class:`~manytask.boost.MultiBoostClassifier` that it carries, plus the distributed
    ones.

    Parameters
    ----------
    n_estimators : int >= 1
        Rounds T (fewer if boosting stops).
    domain_classifier : "federated", "central_sample" or a fitted DomainClassifier
        Q(k|x). "federated" (default): the central default's model (multinomial logistic
        regression, C = 1, on standardised inputs) trained over the same clients from their
        summed moments, losses and gradients (:func:`~.domain.fit_domain_classifier`): no
        input leaves its worker, and each client keeps its Q(·|x_i); the record is in
        ``federated_run_.setup["domain_classifier"]``. A fitted
        :class:`~manytask.boost.DomainClassifier` is used as is. "central_sample": the default
        :class:`~manytask.boost.DomainClassifier` fitted on at most ``q_sample_size`` rows
        gathered to the driver (all rows, in order, when there are no more: then Q is the
        single-process one), drawn without replacement with ``random_state``.
    n_bins : None or int >= 2
        Chooses the candidate thresholds when ``thresholds="auto"``: None the exact ones, an
        int the merged quantile sketches at ``n_bins − 1`` levels.
    random_state : None or int
        Seeds the rows drawn for Q (``"central_sample"``).
    mu : None or float > 0
        The soft-max F_μ of §3 (as ``MultiBoostClassifier(mu=...)``).
    step : {"adaboost", "exact_line_search"}
        The step rule (:class:`~manytask.boost.federated.FederatedServer`).
    thresholds : "auto", "exact", "quantiles" or list of arrays (one per feature)
        "exact": −inf and every midpoint between consecutive distinct values of each feature
        (the single-process exact search's candidates): every client sends its distinct values
        per feature to the driver once, so use it on small or discrete data only.
        "quantiles": −inf and the merged per-feature quantile sketches of the clients
        (:func:`~manytask.boost.federated.merge_quantiles`) at ``n_bins − 1`` levels (255 if
        ``n_bins`` is None); they lie within one quantile spacing of the pooled quantiles.
        A list is used as given (e.g. thresholds known to the server).
    q_sample_size : int >= 1
        Rows gathered to fit Q with ``domain_classifier="central_sample"``.
    line_search_batch : int >= 1
        Trial steps per line-search exchange (``step="exact_line_search"``).
    retries : int >= 0
        Further attempts for a failing request; then the client is dropped from the round,
        which restarts with the others (nothing half-updated).
    timeout : None or float > 0
        Seconds to wait for one request batch's answers.
    max_depth : int >= 1
        1 (default, the paper's): stumps. d > 1: trees of depth d split at the candidate
        thresholds, each client proposing its source's tree and scoring the others' (as
        :func:`~manytask.boost.federated.simulate`).

    Attributes
    ----------
    classes_, domains_, estimators_, estimator_weights_ : as in MultiBoostClassifier
    domain_classifier_, history_, n_features_in_ : as in MultiBoostClassifier
    objective_ : float
        F (F_μ with ``mu``) of the ensemble on the training data, from the clients' losses.
    federated_run_ : FederatedRun
        Per round the participants, numbers sent each way, wall time; set-up counts.
    dask_timings_ : dict
        ``phase_seconds``: the driver's wall time per phase (set-up and rounds);
        ``compute_seconds``: {worker: {"wall" | "cpu": {phase: seconds}}}, the time
        that worker's clients spent answering.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from distributed import Client, LocalCluster
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y, domains = (X[:, 0] > 0).astype(int), np.repeat([0, 1], 30)
    >>> with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
    ...     with Client(cluster) as client:
    ...         clf = DaskMultiBoostClassifier(n_estimators=3).fit(
    ...             da.from_array(X, chunks=(20, 2)), y, domains)
    >>> float(clf.score(X, y))
    1.0
    """

    def __init__(
        self,
        n_estimators=100,
        domain_classifier="federated",
        n_bins=None,
        random_state=None,
        mu=None,
        step="adaboost",
        thresholds="auto",
        q_sample_size=20_000,
        line_search_batch=15,
        retries=0,
        timeout=None,
        max_depth=1,
    ):
        self.n_estimators = n_estimators
        self.domain_classifier = domain_classifier
        self.n_bins = n_bins
        self.random_state = random_state
        self.mu = mu
        self.step = step
        self.thresholds = thresholds
        self.q_sample_size = q_sample_size
        self.line_search_batch = line_search_batch
        self.retries = retries
        self.timeout = timeout
        self.max_depth = max_depth

    def _check_params(self):
        check_positive_int(self.n_estimators, "n_estimators")
        check_positive(self.mu, "mu", allow_none=True)
        check_positive_int(self.max_depth, "max_depth")
        q = self.domain_classifier
        if isinstance(q, str) and q not in DOMAIN_CLASSIFIERS:
            raise ValueError(
                f"domain_classifier must be one of {DOMAIN_CLASSIFIERS} or a fitted "
                f"DomainClassifier, got {q!r}"
            )
        if not isinstance(q, str) and not (
            isinstance(q, DomainClassifier) and hasattr(q, "classes_")
        ):
            raise ValueError(
                f"domain_classifier must be one of {DOMAIN_CLASSIFIERS} or a fitted "
                f"DomainClassifier (fitting one would gather rows), got {q!r}"
            )
        if self.step not in FEDERATED_STEPS:
            check_step(self.step, "exponential")  # the renamed rules' message
            raise ValueError(
                f"step must be one of {FEDERATED_STEPS} on a dask cluster, got {self.step!r}"
            )
        check_int(self.n_bins, "n_bins", 2, allow_none=True)
        if isinstance(self.thresholds, str) and self.thresholds not in THRESHOLD_RULES:
            raise ValueError(
                f"thresholds must be one of {THRESHOLD_RULES} or a list of arrays, got "
                f"{self.thresholds!r}"
            )
        check_positive_int(self.q_sample_size, "q_sample_size")
        check_positive_int(self.line_search_batch, "line_search_batch")
        check_retries(self.retries)
        check_timeout(self.timeout)

    def fit(self, X, y, domains=None, sample_weight=None, *, client=None, fault=None,
            record_messages=False):  # fmt: skip
        """Run T rounds of FEDMULTIBOOST on the cluster holding X.

        Parameters
        ----------
        X : dask array (N, d), chunked by rows (columns are rechunked into one)
        y, domains : dask arrays (rechunked to X's row chunks) or in-memory arrays (N,)
            Two classes; ``domains`` None means one source.
        sample_weight : None
            Not carried by the protocol (``ValueError`` otherwise).
        client : None or distributed.Client
            None: the current client (``distributed.get_client()``).
        fault : None or callable(round, client, phase)
            Fault injection for tests, called on the worker before a client answers.
        record_messages : bool
            Keep every client→server message in ``federated_run_.messages``.

        Returns
        -------
        self
            The fitted estimator.

        Examples
        --------
        The class example fits one on an in-process cluster; on a running cluster:

        >>> clf = DaskMultiBoostClassifier(n_estimators=10).fit(X, y, domains)  # doctest: +SKIP
        """
        self._check_params()
        if sample_weight is not None:
            raise ValueError("sample_weight must be None on a dask cluster, got an array")
        result = federate_on_dask(self, X, y, domains, client=client, fault=fault,
                                  record_messages=record_messages)  # fmt: skip
        self._set_ensemble(*result["ensemble"], objective=result["objective"])
        self.federated_run_ = result["run"]
        self.dask_timings_ = result["timings"]
        return self
