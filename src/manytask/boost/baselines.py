"""Baselines of Table 1 of ``boosting-with-multiple-sources.txt`` (§6): AdaBoost-k,
AdaBoost-all and DMSA.

Lives here: :class:`AdaBoostPerDomain` (one :class:`~.adaboost.AdaBoost` per source),
:class:`PooledAdaBoost` (one AdaBoost on the union; ``domains`` is taken only to share the
``fit(X, y, domains)`` interface) and :class:`DMSAClassifier` (Cortes, Mohri, Suresh & Zhang,
ICML 2021) on the AdaBoost-k predictors as in §6. Not here: DMSA's formulas (:mod:`.dmsa`,
re-exported here), MULTIBOOST, Q(k|x) (:mod:`.domain`), errors on mixtures
(:mod:`.evaluation`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_choice,
    check_fitted_X,
    check_positive,
    check_positive_int,
    check_probability,
    check_random_state,
    unchanged_on_error,
    validate_X_y,
)
from ..simplex import check_simplex
from .adaboost import AdaBoost
from .dmsa import (
    PROBABILITY_CLIP,
    adaboost_probability,
    dmsa_combination,
    domain_log_losses,
    fit_mixture_weights,
    fit_mixture_weights_dc,
)
from .domain import DomainClassifier
from .validation import as_domain_labels, signed_labels

__all__ = [
    "AdaBoostPerDomain",
    "DMSAClassifier",
    "PooledAdaBoost",
    "adaboost_probability",
    "dmsa_combination",
    "domain_log_losses",
    "fit_mixture_weights",
]


def _check_sources(estimator, X, y, domains):
    """X, y checked, binary; domains as labels (None: one source); per-domain index; every
    source has 2 classes."""
    X, y = validate_X_y(estimator, X, y)
    classes, _ = signed_labels(y)
    if domains is None:
        domains = np.zeros(X.shape[0], dtype=int)
    domains = as_domain_labels(domains, "domains", X.shape[0])
    labels, domain_index = np.unique(domains, return_inverse=True)
    for k, label in enumerate(labels):
        present = np.unique(y[domain_index == k])
        if present.size != 2:
            raise ValueError(
                f"domains: source {label.tolist()!r} must contain both classes "
                f"{classes.tolist()} to train its own AdaBoost, got only {present.tolist()}"
            )
    return X, y, classes, labels, domain_index


def _source_position(labels, domain, name):
    """Index of ``domain`` among the source labels, else ValueError naming ``name``."""
    matches = np.flatnonzero(labels == domain) if domain is not None else []
    if len(matches) != 1:
        raise ValueError(
            f"{name} must be one of the source labels {labels.tolist()}, got {domain!r}"
        )
    return int(matches[0])


# --------------------------------------------------------------------------- AdaBoost-k / all


class AdaBoostPerDomain(ClassifierMixin, BaseEstimator):
    """AdaBoost-k (§6): one :class:`AdaBoost` trained on each source S_k alone.

    Table 1's row AdaBoost-k is the model of source k evaluated on the test data of every
    domain: ``estimators_[k]`` is an ordinary fitted :class:`AdaBoost`, so
    ``mixture_errors(model.estimators_[k], X, y, domains)`` gives that row, as does
    ``mixture_errors(model, X, y, domains, predict_kwargs={"domain": label})``.

    In a ``Pipeline`` or ``cross_val_score``, where ``predict`` gets X alone, the model that
    predicts is the constructor's ``domain``; ``domains`` reach :meth:`fit` through
    scikit-learn's metadata routing (``sklearn.set_config(enable_metadata_routing=True)``
    and ``set_fit_request(domains=True)``; ``set_predict_request(domain=True)`` routes a
    per-call ``domain`` too).

    Parameters
    ----------
    n_estimators : int
        Rounds T of each AdaBoost.
    max_depth : int >= 1
        Depth of each AdaBoost's trees (1: stumps; see :class:`AdaBoost`).
    domain : source label or None
        The source whose AdaBoost :meth:`predict` and :meth:`decision_function` use when
        they are given no ``domain``; None: ``domain`` is required there unless there is
        a single source.

    Attributes
    ----------
    classes_ : ndarray (2,)
        The two class labels.
    domains_ : ndarray (p,)
        Sorted source labels; ``estimators_[k]`` was trained on source ``domains_[k]``.
    estimators_ : list of AdaBoost
        The fitted models, one per source.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
    >>> y = [0, 0, 1, 1, 1, 1, 0, 0]
    >>> model = AdaBoostPerDomain(n_estimators=2).fit(X, y, domains=[0, 0, 0, 0, 1, 1, 1, 1])
    >>> model.predict([[0.5]], domain=0).tolist(), model.predict([[0.5]], domain=1).tolist()
    ([0], [1])
    >>> model.set_params(domain=1).predict([[0.5]]).tolist()
    [1]
    """

    def __init__(self, n_estimators=100, max_depth=1, domain=None):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.domain = domain

    @unchanged_on_error
    def fit(self, X, y, domains=None):
        """Fit ``AdaBoost(n_estimators, max_depth)`` on the rows of each source.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Training inputs of all sources.
        y : array-like of shape (N,)
            Binary labels; each source must hold both classes.
        domains : array-like of shape (N,), optional
            Source label of each row; None: one source.

        Returns
        -------
        AdaBoostPerDomain
            self, fitted.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
        >>> y, domains = [0, 0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> AdaBoostPerDomain(n_estimators=2).fit(X, y, domains).domains_.tolist()
        [0, 1]
        """
        n_estimators = check_positive_int(self.n_estimators, "n_estimators")
        X, y, classes, labels, domain_index = _check_sources(self, X, y, domains)
        if self.domain is not None:
            _source_position(labels, self.domain, "domain")
        estimators = [
            AdaBoost(n_estimators=n_estimators, max_depth=self.max_depth).fit(
                X[domain_index == k], y[domain_index == k]
            )
            for k in range(labels.size)
        ]
        self.classes_, self.domains_, self.n_features_in_ = classes, labels, X.shape[1]
        self.estimators_ = estimators
        return self

    def _position(self, domain):
        check_is_fitted(self, "estimators_")
        if domain is None:
            domain = self.domain
        if domain is None and self.domains_.size == 1:
            return 0
        return _source_position(self.domains_, domain, "domain")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    def decision_function(self, X, domain=None):
        """Σ_t α_t h_t(x) of the model trained on source ``domain``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        domain : source label or None
            A label of ``domains_``; None: the constructor's ``domain`` (or the single
            source).

        Returns
        -------
        numpy.ndarray
            (N,) scores; > 0 predicts ``classes_[1]``.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
        >>> y, domains = [0, 0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> model = AdaBoostPerDomain(n_estimators=2).fit(X, y, domains)
        >>> bool(model.decision_function([[0.5]], domain=0)[0] < 0)
        True
        """
        position = self._position(domain)
        return self.estimators_[position].decision_function(X)

    def predict(self, X, domain=None):
        """Predictions of AdaBoost-``domain``, the model trained on that source alone.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        domain : source label or None
            As in :meth:`decision_function`.

        Returns
        -------
        numpy.ndarray
            (N,) labels from ``classes_``.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
        >>> y, domains = [0, 0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> AdaBoostPerDomain(n_estimators=2).fit(X, y, domains).predict([[3.0]], 1).tolist()
        [0]
        """
        position = self._position(domain)
        return self.estimators_[position].predict(X)

    def predict_all(self, X) -> np.ndarray:
        """The predictions of every source's model.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (p, N): row k is AdaBoost-k, the model of ``domains_[k]``.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
        >>> y, domains = [0, 0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> AdaBoostPerDomain(n_estimators=2).fit(X, y, domains).predict_all([[0.5]]).tolist()
        [[0], [1]]
        """
        check_is_fitted(self, "estimators_")
        return np.array([estimator.predict(X) for estimator in self.estimators_])


class PooledAdaBoost(ClassifierMixin, BaseEstimator):
    """AdaBoost-all (§6): :class:`AdaBoost` on the union of the sources, domains ignored.

    A thin wrapper so every Table 1 method is fitted as ``fit(X, y, domains)``; its
    ``estimator_`` is exactly ``AdaBoost(n_estimators, max_depth).fit(X, y)``.

    Parameters
    ----------
    n_estimators : int
        Rounds T of the AdaBoost.
    max_depth : int >= 1
        Depth of its trees (1: stumps; see :class:`AdaBoost`).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> PooledAdaBoost(3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1]).predict([[2.5]]).tolist()
    [1]
    """

    def __init__(self, n_estimators=100, max_depth=1):
        self.n_estimators = n_estimators
        self.max_depth = max_depth

    def fit(self, X, y, domains=None, sample_weight=None):
        """Fit one AdaBoost on all rows.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Training inputs of all sources.
        y : array-like of shape (N,)
            Binary labels.
        domains : array-like of shape (N,), optional
            Source labels, only checked for length.
        sample_weight : array-like of shape (N,), optional
            Weights of the rows, passed to :meth:`AdaBoost.fit`.

        Returns
        -------
        PooledAdaBoost
            self, fitted.

        Examples
        --------
        >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1]
        >>> PooledAdaBoost(2).fit(X, y).classes_.tolist()
        [0, 1]
        """
        check_positive_int(self.n_estimators, "n_estimators")
        X, y = validate_X_y(self, X, y)
        if domains is not None:
            as_domain_labels(domains, "domains", X.shape[0])
        self.estimator_ = AdaBoost(n_estimators=self.n_estimators, max_depth=self.max_depth).fit(
            X, y, sample_weight=sample_weight
        )
        self.classes_ = self.estimator_.classes_
        self.n_features_in_ = X.shape[1]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    def decision_function(self, X):
        """Σ_t α_t h_t(x) of the pooled AdaBoost.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N,) scores; > 0 predicts ``classes_[1]``.

        Examples
        --------
        >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1]
        >>> bool(PooledAdaBoost(2).fit(X, y).decision_function([[3.0]])[0] > 0)
        True
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """``classes_[1]`` where the decision is > 0, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N,) labels from ``classes_``.

        Examples
        --------
        >>> X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), [0, 0, 1, 1]
        >>> PooledAdaBoost(2).fit(X, y).predict([[0.0], [3.0]]).tolist()
        [0, 1]
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)


# --------------------------------------------------------------------------- DMSA estimator


class DMSAClassifier(ClassifierMixin, BaseEstimator):
    """DMSA (Cortes, Mohri, Suresh & Zhang, ICML 2021) on per-source predictors, as in §6.

    h_k is ``base_estimator`` fitted on source k (default AdaBoost-k), read as P_k(+1|x)
    through ``predict_proba`` or σ(2 f(x)) (:func:`adaboost_probability`); Q(k|x) is
    ``domain_classifier`` fitted on the pooled training inputs, p_k its mean and
    w_k = Q(k|x)/p_k (equation (1) of :mod:`.dmsa`). The prediction is ``classes_[1]`` where
    h_z(x) = Σ_k z_k w_k h_k / Σ_k z_k w_k > ½ (equation (2), :func:`dmsa_combination`).

    z minimises max_k L_k(z) on held-out rows (``validation_fraction`` of every source, seen
    by neither h_k nor Q): with ``z_fit="unlabelled"`` (the paper's) L_k is the cross-entropy
    against h_k's predictions, solved by the DC algorithm (equations (3)–(6),
    :func:`~.dmsa.fit_mixture_weights_dc`); with ``z_fit="labelled"`` (our option) against the
    labels, by exponentiated subgradient (:func:`fit_mixture_weights`).

    Parameters
    ----------
    n_estimators : int
        Rounds of the default AdaBoost base predictors.
    base_estimator : classifier, AdaBoostPerDomain or None
        A classifier is cloned and fitted per source; it needs ``predict_proba`` or
        ``decision_function``. An :class:`AdaBoostPerDomain` already fitted on the same
        (X, y, domains) supplies the h_k as they are (no refit, so ``validation_fraction``
        must be None unless ``z`` is given); an unfitted one is cloned and fitted. None:
        ``AdaBoost(n_estimators)`` per source.
    domain_classifier : DomainClassifier or None
        Cloned and fitted on the pooled training inputs, so its own ``estimator`` must be
        None, unfitted or ``prefit``; None: ``DomainClassifier()``.
    z : array-like (p,) or None
        Fixed mixture parameters (sorted-domain order) instead of fitting them.
    z_fit : {"unlabelled", "labelled"}
        How z is fitted; "unlabelled" is the paper's.
    validation_fraction : float in (0, 1) or None
        Share of every source held out to fit z (default 0.2); None: fit z on the rows the
        h_k were trained on. Unused when ``z`` is given.
    max_iter : int
        DC iterations (``z_fit="unlabelled"``) or subgradient iterations ("labelled").
    learning_rate : float
        Of :func:`fit_mixture_weights` (``z_fit="labelled"`` only).
    random_state : None, int or Generator
        Draws the held-out rows.

    Attributes
    ----------
    classes_, domains_ : ndarray
        The two class labels and the sorted source labels.
    estimators_ : list
        h_k per source (order of ``domains_``).
    domain_classifier_ : DomainClassifier
        The fitted Q(k|x).
    domain_marginals_ : ndarray (p,)
        p_k.
    z_ : ndarray (p,)
        The mixture parameters.
    domain_losses_ : ndarray (p,) or None
        L_k(h_z) on the rows z was fitted on: against h_k's predictions ("unlabelled") or
        the labels ("labelled"); None if ``z`` was given.
    n_iter_ : int
        Iterations of the z solver (0 if ``z`` was given).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)) + np.repeat([[-2.0, 0.0], [2.0, 0.0]], 40, axis=0)
    >>> y = np.r_[(X[:40, 1] > 0), (X[40:, 1] < 0)].astype(int)  # the sources disagree
    >>> model = DMSAClassifier(n_estimators=5, random_state=0)
    >>> model = model.fit(X, y, domains=np.repeat([0, 1], 40))
    >>> bool(np.isclose(model.z_.sum(), 1.0)), model.predict_proba(X[:3]).shape
    (True, (3, 2))
    """

    def __init__(
        self,
        n_estimators=100,
        base_estimator=None,
        domain_classifier=None,
        z=None,
        z_fit="unlabelled",
        validation_fraction=0.2,
        max_iter=300,
        learning_rate=1.0,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.base_estimator = base_estimator
        self.domain_classifier = domain_classifier
        self.z = z
        self.z_fit = z_fit
        self.validation_fraction = validation_fraction
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _check_parameters(self):
        if self.base_estimator is None:
            check_positive_int(self.n_estimators, "n_estimators")
        elif not (
            hasattr(self.base_estimator, "predict_proba")
            or hasattr(self.base_estimator, "decision_function")
        ):
            raise ValueError(
                "base_estimator must have predict_proba or decision_function, got "
                f"{type(self.base_estimator).__name__}"
            )
        check_choice(self.z_fit, "z_fit", ("unlabelled", "labelled"))
        check_probability(self.validation_fraction, "validation_fraction", allow_none=True)
        check_positive_int(self.max_iter, "max_iter")
        check_positive(self.learning_rate, "learning_rate")
        if self.domain_classifier is not None and not isinstance(
            self.domain_classifier, DomainClassifier
        ):
            raise ValueError(
                f"domain_classifier must be None or a DomainClassifier, got "
                f"{self.domain_classifier!r}"
            )

    def _split(self, domain_index, n_domains):
        """Boolean mask of the held-out rows: ⌈fraction·m_k⌉ per source, ≥ 1 left to fit;
        none when z is given (the held-out rows serve only to fit z)."""
        held_out = np.zeros(domain_index.shape[0], dtype=bool)
        if self.validation_fraction is None or self.z is not None:
            return held_out
        rng = check_random_state(self.random_state)
        for k in range(n_domains):
            rows = np.flatnonzero(domain_index == k)
            n_held = int(np.ceil(self.validation_fraction * rows.size))
            if n_held >= rows.size:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction!r} leaves no training row "
                    f"in a source of {rows.size} rows"
                )
            held_out[rng.choice(rows, size=n_held, replace=False)] = True
        return held_out

    def _base_probabilities(self, X) -> np.ndarray:
        columns = []
        for estimator in self.estimators_:
            if hasattr(estimator, "predict_proba"):
                proba = np.asarray(estimator.predict_proba(X), dtype=float)
                positive = list(np.asarray(estimator.classes_)).index(self.classes_[1])
                columns.append(np.clip(proba[:, positive], PROBABILITY_CLIP, 1 - PROBABILITY_CLIP))
            else:
                columns.append(adaboost_probability(estimator.decision_function(X)))
        return np.column_stack(columns)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    @unchanged_on_error
    def fit(self, X, y, domains=None):
        """Fit h_k per source, Q(k|x) and the mixture parameters z.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Training inputs of all sources.
        y : array-like of shape (N,)
            Binary labels; each source must hold both classes.
        domains : array-like of shape (N,), optional
            Source label of each row; None: one source.

        Returns
        -------
        DMSAClassifier
            self, fitted.

        Examples
        --------
        >>> X = np.array([[0.0], [0.5], [1.0], [1.5], [3.0], [3.5], [4.0], [4.5]])
        >>> y, domains = [0, 0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> model = DMSAClassifier(n_estimators=2, z=[0.5, 0.5]).fit(X, y, domains)
        >>> model.z_.tolist(), model.n_iter_
        ([0.5, 0.5], 0)
        """
        self._check_parameters()
        X, y, self.classes_, self.domains_, domain_index = _check_sources(self, X, y, domains)
        n_domains = self.domains_.size
        self.n_features_in_ = X.shape[1]
        held_out = self._split(domain_index, n_domains)
        fit_rows = ~held_out
        base = self.base_estimator
        if isinstance(base, AdaBoostPerDomain):
            self.estimators_ = self._per_domain_predictors(base, X, y, domain_index, fit_rows)
        else:
            base = AdaBoost(n_estimators=self.n_estimators) if base is None else base
            self.estimators_ = []
            for k in range(n_domains):
                rows = fit_rows & (domain_index == k)
                if np.unique(y[rows]).size != 2:
                    raise ValueError(
                        f"validation_fraction={self.validation_fraction!r} leaves one class "
                        f"only in the training rows of source {self.domains_[k].tolist()!r}"
                    )
                self.estimators_.append(clone(base).fit(X[rows], y[rows]))
        domain_classifier = self.domain_classifier
        if domain_classifier is None:
            domain_classifier = DomainClassifier()
        self.domain_classifier_ = clone(domain_classifier).fit(
            X[fit_rows], self.domains_[domain_index[fit_rows]]
        )
        self.domain_marginals_ = self._domain_probabilities(X[fit_rows]).mean(axis=0)

        if self.z is not None:
            self.z_ = check_simplex(self.z, n_domains, name="z")
            self.domain_losses_, self.n_iter_ = None, 0
            return self
        rows = held_out if held_out.any() else fit_rows
        domain_probabilities = self._domain_probabilities(X[rows])
        base_probabilities = self._base_probabilities(X[rows])
        if self.z_fit == "unlabelled":
            self.z_, self.domain_losses_, self.n_iter_ = fit_mixture_weights_dc(
                domain_probabilities, self.domain_marginals_, base_probabilities,
                domain_index[rows], max_iter=int(self.max_iter),
            )  # fmt: skip
            return self
        self.z_, self.domain_losses_ = fit_mixture_weights(
            domain_probabilities,
            self.domain_marginals_,
            base_probabilities,
            y[rows] == self.classes_[1],
            domain_index[rows],
            max_iter=int(self.max_iter),
            learning_rate=float(self.learning_rate),
        )
        self.n_iter_ = int(self.max_iter)  # the subgradient iterations run (best one kept)
        return self

    def _per_domain_predictors(self, base, X, y, domain_index, fit_rows):
        """The h_k of an AdaBoostPerDomain: as they are if it is fitted, else fitted here."""
        if not hasattr(base, "estimators_"):
            fitted = clone(base).fit(
                X[fit_rows], y[fit_rows], self.domains_[domain_index[fit_rows]]
            )
            return list(fitted.estimators_)
        if self.validation_fraction is not None and self.z is None:
            raise ValueError(
                "validation_fraction must be None with an already fitted AdaBoostPerDomain "
                f"base_estimator (its h_k saw every row), got {self.validation_fraction!r}"
            )
        if (
            base.domains_.tolist() != self.domains_.tolist()
            or base.classes_.tolist() != self.classes_.tolist()
            or base.n_features_in_ != X.shape[1]
        ):
            raise ValueError(
                "base_estimator: the fitted AdaBoostPerDomain has domains "
                f"{base.domains_.tolist()}, classes {base.classes_.tolist()} and "
                f"{base.n_features_in_} features; the data has {self.domains_.tolist()}, "
                f"{self.classes_.tolist()} and {X.shape[1]}"
            )
        return list(base.estimators_)

    def _domain_probabilities(self, X) -> np.ndarray:
        """Q(k|x) with columns in the order of ``domains_``."""
        proba = self.domain_classifier_.predict_proba(X)
        order = [list(self.domain_classifier_.classes_).index(d) for d in self.domains_]
        return np.asarray(proba, dtype=float)[:, order]

    def predict_proba(self, X) -> np.ndarray:
        """P(y | x) of the combination h_z (equation (2) of :mod:`.dmsa`).

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N, 2): columns P(classes_[0] | x) = 1 − h_z(x) and P(classes_[1] | x) = h_z(x).

        Examples
        --------
        >>> X = np.array([[0.0], [0.5], [1.0], [1.5], [3.0], [3.5], [4.0], [4.5]])
        >>> y, domains = [0, 0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> model = DMSAClassifier(n_estimators=2, z=[0.5, 0.5]).fit(X, y, domains)
        >>> bool(np.allclose(model.predict_proba(X).sum(axis=1), 1.0))
        True
        """
        X = check_fitted_X(self, X, "z_")
        positive = dmsa_combination(
            self.z_, self._domain_probabilities(X), self.domain_marginals_,
            self._base_probabilities(X),
        )  # fmt: skip
        return np.column_stack([1.0 - positive, positive])

    def decision_function(self, X) -> np.ndarray:
        """log(h_z / (1 − h_z)), h_z clipped to [1e-6, 1 − 1e-6].

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N,) scores; > 0 predicts ``classes_[1]``.

        Examples
        --------
        >>> X = np.array([[0.0], [0.5], [1.0], [1.5], [3.0], [3.5], [4.0], [4.5]])
        >>> y, domains = [0, 0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> model = DMSAClassifier(n_estimators=2, z=[0.5, 0.5]).fit(X, y, domains)
        >>> model.decision_function(X).shape
        (8,)
        """
        positive = np.clip(self.predict_proba(X)[:, 1], PROBABILITY_CLIP, 1 - PROBABILITY_CLIP)
        return np.log(positive) - np.log1p(-positive)

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where h_z(x) > ½, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N,) labels from ``classes_``.

        Examples
        --------
        >>> X = np.array([[0.0], [0.5], [1.0], [1.5], [3.0], [3.5], [4.0], [4.5]])
        >>> y, domains = [0, 0, 1, 1, 0, 0, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]
        >>> model = DMSAClassifier(n_estimators=2, z=[0.5, 0.5]).fit(X, y, domains)
        >>> model.predict(X).shape
        (8,)
        """
        positive = self.predict_proba(X)[:, 1]
        return self.classes_[(positive > 0.5).astype(int)]
