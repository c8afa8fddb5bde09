"""MULTIBOOST (Figure 1 of ``boosting-with-multiple-sources.txt``) as a scikit-learn estimator:
parameters, the fit loop with early stopping, and prediction. The round is a pure function,
:func:`~.rounds.boost_round`; the objective is in :mod:`.objective`, the step rules in
:mod:`.steps`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_choice,
    check_fitted_X,
    check_positive,
    check_positive_int,
    check_probability,
    unchanged_on_error,
    validate_X_y,
)
from .adaboost import AdaBoost
from .directions import stump_values
from .domain import DomainClassifier
from .line_search import domain_layout
from .multiclass import class_codes
from .objective import LOSSES, agnostic_objective, check_mixtures, mixture_losses, phi_domain_losses
from .rounds import RoundData, boost_round, losses_and_active
from .steps import check_step
from .stumps import presort
from .trees import DEFAULT_TREE_BINS, Tree
from .validation import (
    check_domains,
    check_sample_weight,
    normalise_point_weights,
    split_seed,
)

__all__ = ["AdaBoost", "MultiBoostClassifier"]


class MultiBoostClassifier(ClassifierMixin, BaseEstimator):
    """MULTIBOOST (Figure 1): a Q-ensemble of stumps good on every source domain (or mixture).

    Coordinate descent on F(α) = max_{λ∈Λ} Σ_k λ_k F_k(α), F_k(α) = (1/m_k) Σ_{i∈S_k}
    Φ(−y_i Σ_t α_t Q(k_t|x_i) h_t(x_i)) (eq. 4). Round t: the active set K_t (line 5), for
    k ∈ K_t the best stump for the weights D_t(k, i) Q(k|x_i) (line 10), the direction
    maximising (Z_{t,k}/m_k)[1 − 2ε_{t,k,r}], and the step η_t = ½ log((1 − ε)/ε) of Lemma 1
    (§6). More than two classes use :mod:`manytask.boost.multiclass`.

    Parameters
    ----------
    n_estimators : int
        Number of rounds T (fewer if boosting stops, see Notes).
    domain_classifier : DomainClassifier, fitted classifier with predict_proba, or None
        Q(k|x). None: ``DomainClassifier()`` fitted on (X, domains). A ``DomainClassifier`` is
        cloned and fitted; any other classifier must be fitted on the source labels already.
    n_bins : int or None
        None: exact stump search; an int: histogram-binned search (:func:`presort`).
    random_state : None, int or Generator
        Seeds the validation split of early stopping (boosting itself is deterministic).
    mu : None or float > 0
        None: the hard max of Figure 1. A float: the soft-max F_μ = (1/μ) log Σ_k e^{μ F_k}
        (§3); each round takes the steepest coordinate of F_μ over all domains, with the
        soft-max weights p_k ∝ e^{μ F_k}.
    loss : {"exponential", "logistic"}
        Φ(u) = eᵘ or log₂(1 + eᵘ) (§3); D_t uses Φ'.
    step : {"adaboost", "exact_line_search", "lemma1_bound", "constant_over_sqrt_t"}
        The step rule (:mod:`manytask.boost.steps`): ½ log((1 − ε)/ε) of the chosen direction
        (Lemma 1, §6; default); argmin_{η≥0} F(α + ηe) (+ βη) (line 11); the minimiser of
        Lemma 1's whole bound (Φ = exp only); or ``step_constant``/√t (§6). The old names
        "line_search" and "closed_form" raise a ValueError.
    step_constant : float > 0
        C of the C/√t rule.
    mixtures : None or array-like (v, p)
        Vertices of the restricted mixture set Λ (rows on the simplex, columns in
        ``domains_`` order); F is the max over the vertex losses L_v = Σ_k λ^v_k F_k.
        None: Λ = the simplex.
    beta : float >= 0
        ℓ1 penalty of §4: each round minimises F(α + ηe) + β(‖α‖₁ + η); a direction needs a
        descent rate > β.
    multi_class : {"auto", "binary", "mh"}
        "auto": binary for two classes, the MH-style variant for more; "binary": two classes
        required; "mh": the multi-class variant always.
    validation_fraction : float in (0, 1)
        Fraction of every domain held out for early stopping.
    n_iter_no_change : None or int >= 1
        Stop when the held-out agnostic loss has not improved for that many rounds and keep
        the best round's ensemble. None: no early stopping.
    max_depth : int >= 1
        1 (default): the base classes H_k are stumps, as in the paper's experiments. d > 1:
        H_k is the histogram trees of depth d with ±1 leaf votes (:mod:`~.trees`); each
        round grows one tree per source row of line 10 on that source's weights
        D_t(k, i) Q(k|x_i), and the steepest one is taken with the same step rules (Lemma 1
        holds for any ±1-valued h). Trees split at the bin edges of ``n_bins`` (256 if None).
        The steepest-coordinate fallback at ties searches stumps only and is skipped.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
        Binary: ``classes_[1]`` is the positive class (margin > 0).
    domains_ : ndarray (p,)
        Sorted source labels; ``domains_[k]`` is domain k.
    estimators_ : list of (int, Stump, VectorStump or Tree)
        (k_t, h_t) per term: f(x) = Σ_t α_t Q(k_t|x) h_t(x) (eq. 3).
    estimator_weights_ : ndarray (T',)
        The α_t.
    domain_classifier_ : DomainClassifier
    history_ : list of dict
        Per round: ``losses`` (F_k(α_{t−1})), ``objective``, ``active`` (K_t), ``domain``,
        ``stump``, ``step``, ``rate`` (−F'(α; e)), ``step_rule``, ``direction_rule``; with
        ``step="adaboost"`` also ``error``; with ``mu`` ``soft_weights``; with ``mixtures``
        ``vertex_losses``. A last entry with ``stump=None`` and
        ``stop`` gives the reason boosting stopped.
    objective_ : float
        F(α) (F_μ(α) with ``mu``) plus β‖α‖₁ on the training data.
    validation_losses_ : ndarray or None
        With early stopping, the held-out agnostic loss after each round (entry 0: α = 0).
    feature_importances_ : ndarray (d,)
        α-weighted share of the rounds whose stump splits on each feature.

    Notes
    -----
    * Ties: at α = 0 every F_k = 1, and the best direction for one active F_k may raise
      another, so F cannot decrease along it. The AdaBoost step takes it anyway; an exact
      step is 0 there, so the round tries the other active directions, then the steepest
      coordinate of F (:mod:`~manytask.boost.steepest`), and stops if none decreases F.
    * A stump with y Q h > 0 on every training point gives the finite step
      :func:`~.steps.separating_step`, and boosting stops.
    * ``predict_proba`` uses the link 1/(1 + e^{−2f(x)}), the population minimiser of the
      exponential loss; multi-class: one-vs-rest links normalised to sum to one.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = MultiBoostClassifier(n_estimators=5).fit(X, y, domains=np.repeat([0, 1], 30))
    >>> float(clf.score(X, y))
    1.0
    """

    def __init__(
        self,
        n_estimators=100,
        domain_classifier=None,
        n_bins=None,
        random_state=None,
        mu=None,
        loss="exponential",
        step="adaboost",
        step_constant=1.0,
        mixtures=None,
        beta=0.0,
        multi_class="auto",
        validation_fraction=0.1,
        n_iter_no_change=None,
        max_depth=1,
    ):
        self.n_estimators = n_estimators
        self.domain_classifier = domain_classifier
        self.n_bins = n_bins
        self.random_state = random_state
        self.mu = mu
        self.loss = loss
        self.step = step
        self.step_constant = step_constant
        self.mixtures = mixtures
        self.beta = beta
        self.multi_class = multi_class
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.max_depth = max_depth

    # ----------------------------------------------------------------- fitting

    def _check_params(self):
        check_positive_int(self.n_estimators, "n_estimators")
        check_positive_int(self.max_depth, "max_depth")
        check_positive(self.mu, "mu", allow_none=True)
        check_choice(self.loss, "loss", LOSSES)
        check_step(self.step, self.loss)
        check_positive(self.step_constant, "step_constant", strict=True)
        check_positive(self.beta, "beta", strict=False)
        check_choice(self.multi_class, "multi_class", ("auto", "binary", "mh"))
        if self.domain_classifier is not None and not hasattr(
            self.domain_classifier, "predict_proba"
        ):
            raise ValueError(
                "domain_classifier must be None, a DomainClassifier or a fitted classifier "
                f"with predict_proba, got {self.domain_classifier!r}"
            )
        if check_positive_int(self.n_iter_no_change, "n_iter_no_change", allow_none=True):
            check_probability(self.validation_fraction, "validation_fraction")

    @unchanged_on_error
    def fit(self, X, y, domains=None, sample_weight=None):
        """Run T rounds of MULTIBOOST on (X, y) from the sources ``domains``.

        Parameters
        ----------
        X : array-like (m, d)
        y : array-like (m,)
            At least two classes, any labels.
        domains : array-like (m,) or None
            Source label of each row (ints or strings); None means one domain (then this is
            AdaBoost).
        sample_weight : array-like (m,) or None
            Non-negative; each F_k becomes the weighted mean over S_k.

        Returns
        -------
        self

        Notes
        -----
        Data partitioned across a ``dask.distributed`` cluster are fitted where they lie by
        :class:`~manytask.boost.federated.dask.DaskMultiBoostClassifier` (extra ``dist``);
        a dask array here raises ``ValueError`` rather than being gathered.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> clf.domains_.tolist(), len(clf.estimators_) >= 1
        ([0, 1], True)
        """
        if hasattr(X, "__dask_graph__"):
            raise ValueError(
                f"X must be an in-memory array, got a dask collection ({type(X).__name__}): fit "
                "data on a dask cluster with manytask.boost.federated.dask."
                "DaskMultiBoostClassifier (extra dist), which never gathers them"
            )
        self._check_params()
        X, y = validate_X_y(self, X, y)
        check_classification_targets(y)
        self.n_features_in_ = X.shape[1]
        self.classes_, class_index = np.unique(y, return_inverse=True)
        n_classes = self.classes_.size
        if n_classes < 2:
            raise ValueError(
                f"y must contain at least two classes, got 1 class: {self.classes_.tolist()}"
            )
        if self.multi_class == "binary" and n_classes != 2:
            raise ValueError(
                f"y must contain exactly two classes for multi_class='binary', got {n_classes}: "
                f"{self.classes_[:5].tolist()}"
            )
        self._multiclass = self.multi_class == "mh" or n_classes > 2
        m = X.shape[0]
        if domains is None:
            domains = np.zeros(m, dtype=int)
        domains = check_domains(domains, m)
        self.domains_, domain_index = np.unique(domains, return_inverse=True)
        n_domains = self.domains_.size
        self._mixtures = check_mixtures(self.mixtures, n_domains)
        sample_weight = check_sample_weight(sample_weight, m)
        codes = (
            class_codes(class_index, n_classes)
            if self._multiclass
            else np.where(class_index == 1, 1.0, -1.0)[:, None]
        )

        # Points of zero weight are left out (as if removed: they would add stump thresholds).
        train = np.arange(m) if sample_weight is None else np.flatnonzero(sample_weight > 0)
        validation = None
        if self.n_iter_no_change is not None:
            train, validation = train_test_split(
                train,
                test_size=self.validation_fraction,
                stratify=domain_index[train],
                random_state=split_seed(self.random_state),
            )
            train, validation = np.sort(train), np.sort(validation)
        point_weights = normalise_point_weights(
            None if sample_weight is None else sample_weight[train],
            domain_index[train],
            n_domains,
            self.domains_,
        )
        self.domain_classifier_ = self._fit_domain_classifier(X[train], domains[train])
        self._run(
            X[train], codes[train], domain_index[train], point_weights, validation_data=(
                None if validation is None
                else (X[validation], codes[validation], domain_index[validation])
            ),
        )  # fmt: skip
        return self

    @classmethod
    def from_ensemble(cls, estimators, estimator_weights, *, classes, domains,
                      domain_classifier, n_features_in, history=None, objective=None,
                      **params):  # fmt: skip
        """A fitted binary estimator holding an ensemble f = Σ_t α_t Q(k_t|·) h_t (eq. 3)
        fitted elsewhere (e.g. by the federated protocol, Figure 2).

        Parameters
        ----------
        estimators : list of (int, Stump)
            (k_t, h_t) per term, k_t the index of the source in ``domains``.
        estimator_weights : array-like (T,)
            The α_t.
        classes : array-like (2,)
            ``classes[1]`` is the positive class.
        domains : array-like (p,)
            The sorted source labels, in the order of Q's columns.
        domain_classifier : fitted DomainClassifier
            Q(k|x), its ``classes_`` equal to ``domains``.
        n_features_in : int
        history, objective : optional ``history_`` and ``objective_`` (default ``[]``, None)
        **params
            Constructor parameters (default ``n_estimators`` = max(T, 1) and
            ``domain_classifier`` the given Q).

        Returns
        -------
        MultiBoostClassifier
            Fitted: it predicts like an estimator that ran those rounds.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> copy = MultiBoostClassifier.from_ensemble(
        ...     clf.estimators_, clf.estimator_weights_, classes=clf.classes_,
        ...     domains=clf.domains_, domain_classifier=clf.domain_classifier_, n_features_in=1)
        >>> bool(np.array_equal(copy.decision_function(X), clf.decision_function(X)))
        True
        """
        params = {"n_estimators": max(len(estimators), 1), "domain_classifier": domain_classifier,
                  **params}  # fmt: skip
        fitted = (estimators, estimator_weights, classes, domains, domain_classifier)
        return cls(**params)._set_ensemble(*fitted, n_features_in, history, objective)

    def _set_ensemble(self, estimators, estimator_weights, classes, domains, domain_classifier,
                      n_features_in, history=None, objective=None):  # fmt: skip
        """The fitted state of :meth:`from_ensemble`, set on this estimator; returns it."""
        estimators = [(int(k), stump) for k, stump in estimators]
        weights = np.asarray(estimator_weights, dtype=float)
        classes, domains = np.asarray(classes), np.asarray(domains)
        if weights.shape != (len(estimators),):
            raise ValueError(
                f"estimator_weights must have shape ({len(estimators)},), got {weights.shape}"
            )
        if classes.shape != (2,):
            raise ValueError(f"classes must hold two labels, got {classes.tolist()}")
        if not np.array_equal(np.asarray(domain_classifier.classes_), domains):
            raise ValueError(
                f"domain_classifier.classes_ must equal domains {domains.tolist()}, got "
                f"{np.asarray(domain_classifier.classes_).tolist()}"
            )
        if any(not 0 <= k < domains.size for k, _ in estimators):
            raise ValueError(f"estimators' domain indices must be in [0, {domains.size})")
        self.classes_, self.domains_, self.n_features_in_ = classes, domains, int(n_features_in)
        self.domain_classifier_ = domain_classifier
        self.estimators_, self.estimator_weights_ = estimators, weights
        self.history_ = [] if history is None else list(history)
        self.objective_, self.validation_losses_ = objective, None
        self._multiclass = False
        return self

    def _fit_domain_classifier(self, X, domains):
        if self.domain_classifier is None:
            return DomainClassifier().fit(X, domains)
        if isinstance(self.domain_classifier, DomainClassifier):
            return clone(self.domain_classifier).fit(X, domains)
        return DomainClassifier(estimator=self.domain_classifier, prefit=True).fit(X, domains)

    def _run(self, X, codes, domain_index, point_weights, validation_data):
        """The boosting loop of :func:`~.rounds.boost_round` (with early stopping on
        ``validation_data`` if given); sets the fitted attributes once, at the end."""
        n_domains = self.domains_.size
        n_bins = DEFAULT_TREE_BINS if self.max_depth > 1 and self.n_bins is None else self.n_bins
        data = RoundData(
            presort(X, n_bins=n_bins), codes, self.domain_classifier_.predict_proba(X),
            domain_index, point_weights, n_domains, self.loss, self.step,
            float(self.step_constant), self._mixtures, self.mu, float(self.beta),
            self.max_depth, domain_layout(domain_index, n_domains),
        )  # fmt: skip
        estimators, weights, history = [], [], []
        margins = np.zeros(codes.shape)
        if validation_data is not None:
            X_val, codes_val, domain_val = validation_data
            Q_val = self.domain_classifier_.predict_proba(X_val)
            val_weights = normalise_point_weights(None, domain_val, n_domains, self.domains_)
            val_margins = np.zeros(codes_val.shape)
            validation_losses = [self._validation_loss(val_margins, domain_val, val_weights)]
            best = (validation_losses[0], 0, margins)
            since_best = 0
        for round_number in range(1, self.n_estimators + 1):
            record = boost_round(data, margins, float(np.sum(weights)), round_number)
            history.append(self._history_entry(record))
            if record.base is not None:
                margins = record.margins
                estimators.append((record.domain, record.base))
                weights.append(record.step)
            if validation_data is not None and record.base is not None:
                values = stump_values(record.base, X_val, check_input=False)  # X checked by fit
                val_margins = val_margins + record.step * (
                    codes_val * Q_val[:, [record.domain]] * values
                )
                validation_losses.append(
                    self._validation_loss(val_margins, domain_val, val_weights)
                )
                if validation_losses[-1] < best[0]:
                    best, since_best = (validation_losses[-1], len(weights), margins), 0
                else:
                    since_best += 1
                if since_best >= self.n_iter_no_change:
                    history[-1]["stop"] = "early stopping"
                    break
            if record.stop is not None:
                break
        self.validation_losses_ = None
        if validation_data is not None:
            self.validation_losses_ = np.asarray(validation_losses)
            _, n_best, margins = best
            del estimators[n_best:], weights[n_best:]
        self.estimators_, self.history_ = estimators, history
        self.estimator_weights_ = np.asarray(weights, dtype=float)
        l1_norm = float(self.estimator_weights_.sum())
        self.objective_ = losses_and_active(data, margins, l1_norm)[2]  # F(α) + β‖α‖₁

    def _history_entry(self, record):
        """``history_``'s entry of one :class:`~.rounds.RoundRecord` (source labels)."""
        details = dict(record.details)
        active = details["active"]
        details["active"] = (self.domains_[active] if self._mixtures is None else active).tolist()
        domain = None if record.base is None else self.domains_[record.domain]
        entry = {**details, "step": float(record.step), "stump": record.base, "domain": domain}
        if record.stop is not None:
            entry["stop"] = record.stop
        return entry

    def _validation_loss(self, margins, domain_index, point_weights):
        losses = phi_domain_losses(
            margins, domain_index, point_weights / margins.shape[1], self.domains_.size, self.loss
        )
        return agnostic_objective(mixture_losses(losses, self._mixtures))

    # ----------------------------------------------------------------- prediction

    def _check_X(self, X):
        return check_fitted_X(self, X, "estimators_")

    def staged_decision_function(self, X):
        """Yield f_t(x) = Σ_{s≤t} α_s Q(k_s|x) h_s(x)  (eq. 3) after each round t.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Yields
        ------
        ndarray of shape (N,) or (N, K)
            Binary: f_t(x); multi-class: column c is f_c.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> [f.shape for f in clf.staged_decision_function(X)] == [(4,)] * len(clf.estimators_)
        True
        """
        X = self._check_X(X)
        Q = self.domain_classifier_.predict_proba(X)
        multiclass = getattr(self, "_multiclass", False)
        decision = np.zeros((X.shape[0], self.classes_.size) if multiclass else X.shape[0])
        for (k, stump), step in zip(self.estimators_, self.estimator_weights_):
            values = stump.predict(X, check_input=False)  # X checked by _check_X
            scale = Q[:, k][:, None] if multiclass else Q[:, k]
            decision = decision + step * scale * values
            yield decision

    def decision_function(self, X):
        """f(x) = Σ_t α_t Q(k_t|x) h_t(x)  (eq. 3); binary: > 0 predicts ``classes_[1]``.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Returns
        -------
        ndarray of shape (N,) or (N, K)
            Binary: f(x); multi-class: column c is f_c(x).

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> (clf.decision_function(X) > 0).tolist()
        [False, False, True, True]
        """
        X = self._check_X(X)
        multiclass = getattr(self, "_multiclass", False)
        decision = np.zeros((X.shape[0], self.classes_.size) if multiclass else X.shape[0])
        for staged in self.staged_decision_function(X):
            decision = staged
        return decision

    def _labels(self, decision):
        if decision.ndim == 2:
            return self.classes_[np.argmax(decision, axis=1)]
        return self.classes_[(decision > 0).astype(int)]

    def staged_predict(self, X):
        """Yield the predicted labels after each round.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Yields
        ------
        ndarray of shape (N,)
            The labels of :meth:`predict` after rounds 1, 2, ….

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> list(clf.staged_predict(X))[-1].tolist()
        [0, 0, 1, 1]
        """
        for decision in self.staged_decision_function(X):
            yield self._labels(decision)

    def predict(self, X):
        """Binary: ``classes_[1]`` where f(x) > 0, else ``classes_[0]``; else argmax_c f_c(x).

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Returns
        -------
        ndarray of shape (N,)
            The predicted labels.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> clf.predict([[0.5], [2.5]]).tolist()
        [0, 1]
        """
        return self._labels(self.decision_function(X))

    def predict_proba(self, X):
        """Class probabilities by the link 1/(1 + e^{−2f}) (see Notes); rows sum to 1.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Returns
        -------
        ndarray of shape (N, n_classes)
            The probabilities, columns in the order of ``classes_``.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> proba = clf.predict_proba(X)
        >>> proba.shape, bool(np.allclose(proba.sum(axis=1), 1.0))
        ((4, 2), True)
        """
        decision = self.decision_function(X)
        if decision.ndim == 2:
            scores = expit(2.0 * decision)
            return scores / scores.sum(axis=1, keepdims=True)
        positive = 0.5 * (1.0 + np.tanh(decision))  # = 1/(1 + e^{−2f})
        return np.column_stack([1.0 - positive, positive])

    @property
    def feature_importances_(self):
        """Σ_t α_t · (share of base classifier t's splits on feature j) / Σ_t α_t.

        Over the base classifiers that split (a constant stump or tree does not); sums to 1 unless
        none splits (then zeros).

        Examples
        --------
        >>> X = np.array([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
        >>> clf = MultiBoostClassifier(n_estimators=3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1])
        >>> clf.feature_importances_.tolist()
        [1.0, 0.0]
        """
        check_is_fitted(self, "estimators_")
        importances = np.zeros(self.n_features_in_)
        for (_, estimator), step in zip(self.estimators_, self.estimator_weights_):
            if isinstance(estimator, Tree):
                features = estimator.split_features()
                np.add.at(importances, features, step / max(features.size, 1))
            elif np.isfinite(estimator.threshold):
                importances[estimator.feature] += step
        total = importances.sum()
        return importances / total if total > 0 else importances
