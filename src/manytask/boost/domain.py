"""The domain classifier Q(k|x) of MULTIBOOST (§3): the probability that x comes from source k.

:class:`DomainClassifier` fits (by default) a multinomial logistic regression on standardised
inputs to predict the source index, optionally on extra unlabelled inputs whose source is
known, or fits a classifier the user gives, or (``prefit=True``) uses one already fitted.
The Q-ensemble (eq. 3) and the Q-weighted errors need Q(k|x) > 0 on the training points,
so the probabilities are clipped from below and renormalised (:func:`clip_probabilities`,
defined NumPy-only in :mod:`manytask.boost.federated.domain_client` for the federated clients).
The boosters that use Q live elsewhere.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_array, check_is_fitted

from .._validation import (
    binary_scale,
    check_bool,
    check_fitted_X,
    check_positive,
    unchanged_on_error,
    validate_X,
)
from .clipping import clip_probabilities
from .validation import as_domain_labels

__all__ = ["DomainClassifier", "clip_probabilities"]


class _BinaryScaler(TransformerMixin, BaseEstimator):
    """Divides each column by a power of two near its largest magnitude (exact in floating
    point: a StandardScaler after it gives the same values bit for bit, without overflow)."""

    def fit(self, X, y=None):
        X = validate_X(self, X)
        self.scale_ = binary_scale(X, axis=0)
        return self

    def transform(self, X):
        return check_fitted_X(self, X, "scale_") / self.scale_


class DomainClassifier(BaseEstimator):
    """Q(k|x): probabilities of the source domains given the input, bounded below by ``clip``.

    Parameters
    ----------
    estimator : classifier or None
        None (default): ``StandardScaler`` (after an exact power-of-two rescaling, so that
        inputs beyond 1e154 cannot overflow it) followed by a multinomial
        ``LogisticRegression``, fitted in :meth:`fit` to predict the source label (§6).
        Otherwise a scikit-learn classifier with ``predict_proba``: cloned and fitted on the
        source labels in :meth:`fit`, or, with ``prefit=True``, already fitted (its
        ``classes_`` exactly the source labels) and used as is.
    clip : float
        Lower bound on every probability, in (0, 1/K]; entries below it are raised to it and
        the rows renormalised (:func:`clip_probabilities`).
    prefit : bool
        True: ``estimator`` is already fitted and is used as is (never refitted).

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The sorted source labels: column k of :meth:`predict_proba` is Q(classes_[k] | x).
    estimator_ : classifier or None
        The fitted classifier; None with a single source, where Q ≡ 1.
    n_features_in_ : int
        The number of features of ``X`` in :meth:`fit`.
    n_clipped_ : int
        Entries of Q on the (labelled) training points raised to ``clip`` during :meth:`fit`
        (clipping is the design: Q is bounded below by ``clip``; no warning is issued).

    Notes
    -----
    With a single source, Q(1|x) = 1 for every x (§2: Q-ensembles then coincide with ordinary
    combinations and MULTIBOOST with AdaBoost), so no classifier is fitted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (20, 2)), rng.normal(3, 1, (20, 2))])
    >>> domains = np.repeat(["a", "b"], 20)
    >>> Q = DomainClassifier().fit(X, domains)
    >>> Q.classes_.tolist(), Q.predict([[-3.0, -3.0], [3.0, 3.0]]).tolist()
    (['a', 'b'], ['a', 'b'])
    >>> Q.predict_proba([[-3.0, -3.0]]).shape
    (1, 2)
    """

    def __init__(self, estimator=None, clip: float = 1e-6, prefit: bool = False):
        self.estimator = estimator
        self.clip = clip
        self.prefit = prefit

    @unchanged_on_error
    def fit(self, X, y, X_unlabeled=None, domains_unlabeled=None):
        """Fit Q on the inputs ``X`` of known source ``y`` (plus extra unlabelled ones).

        Parameters
        ----------
        X : array-like of shape (N, d)
            The (labelled) training inputs of all sources.
        y : array-like of shape (N,)
            Source label of each row of ``X`` (ints or strings): the target of Q.
        X_unlabeled : array-like of shape (N', d), optional
            Extra inputs without class labels but with known source; added to the training
            set (ignored with ``prefit=True``).
        domains_unlabeled : array-like of shape (N',), optional
            Their sources; required with ``X_unlabeled`` and drawn from the labels in ``y``.

        Returns
        -------
        DomainClassifier
            self, fitted.

        Examples
        --------
        >>> X = np.array([[0.0], [0.1], [1.0], [1.1]])
        >>> DomainClassifier().fit(X, [0, 0, 1, 1]).classes_.tolist()
        [0, 1]
        """
        X = validate_X(self, X)
        domains = as_domain_labels(y, "y (the source labels)", X.shape[0])
        check_bool(self.prefit, "prefit")
        if self.prefit and self.estimator is None:
            raise ValueError("estimator must be a fitted classifier with prefit=True, got None")
        classes = np.unique(domains)
        clip = check_positive(self.clip, "clip")
        if clip * classes.size > 1:
            raise ValueError(
                f"clip must be <= 1/K = {1 / classes.size:.6g} for K={classes.size} domains, "
                f"got {self.clip!r}"
            )
        if (X_unlabeled is None) != (domains_unlabeled is None):
            raise ValueError(
                "X_unlabeled and domains_unlabeled must be given together, got "
                f"X_unlabeled={'None' if X_unlabeled is None else 'an array'} and "
                f"domains_unlabeled={'None' if domains_unlabeled is None else 'an array'}"
            )
        X_train, domains_train = X, domains
        if X_unlabeled is not None:
            X_unlabeled = check_array(X_unlabeled, input_name="X_unlabeled")
            if X_unlabeled.shape[1] != X.shape[1]:
                raise ValueError(
                    f"X_unlabeled has {X_unlabeled.shape[1]} features, expected {X.shape[1]}"
                )
            domains_unlabeled = as_domain_labels(
                domains_unlabeled, "domains_unlabeled", X_unlabeled.shape[0]
            )
            unknown = np.setdiff1d(np.unique(domains_unlabeled), classes)
            if unknown.size:
                raise ValueError(
                    f"domains_unlabeled contains labels absent from y: {unknown.tolist()}"
                )
            X_train = np.vstack([X, X_unlabeled])
            domains_train = np.concatenate([domains, domains_unlabeled])

        self.classes_ = classes
        self.n_features_in_ = X.shape[1]
        if self.prefit:
            self.estimator_ = self._check_fitted_estimator(self.estimator)
        else:
            self.estimator_ = self._fit_estimator(X_train, domains_train)
        self._fitted_columns = self._columns_of_classes()
        probabilities = self._raw_probabilities(X)
        _, self.n_clipped_ = clip_probabilities(probabilities, clip)
        return self

    @classmethod
    def from_fitted(cls, estimator, classes, clip: float = 1e-6, n_clipped: int = 0):
        """Q around an already fitted ``estimator``, fitted without seeing any input.

        For a Q trained elsewhere, e.g. over federated clients.

        Parameters
        ----------
        estimator : classifier
            Fitted, with ``predict_proba``, ``classes_`` and ``n_features_in_``.
        classes : array-like
            The source labels, the columns of :meth:`predict_proba` in this order.
        clip : float
            Lower bound on every probability, as in the constructor.
        n_clipped : int
            The entries raised to ``clip`` on the training points, reported by the trainer.

        Returns
        -------
        DomainClassifier
            A fitted Q with ``prefit=True``.

        Examples
        --------
        >>> from sklearn.linear_model import LogisticRegression
        >>> fitted = LogisticRegression().fit([[0.0], [1.0]], ["a", "b"])
        >>> DomainClassifier.from_fitted(fitted, ["b", "a"]).predict_proba([[0.0]]).shape
        (1, 2)
        """
        q = cls(estimator=estimator, clip=clip, prefit=True)
        q.classes_ = np.asarray(classes)
        q.n_features_in_ = estimator.n_features_in_
        q.estimator_ = estimator
        q._fitted_columns = q._columns_of_classes()
        q.n_clipped_ = int(n_clipped)
        return q

    def _fit_estimator(self, X_train, domains_train):
        if self.classes_.size == 1:
            return None
        labels, counts = np.unique(domains_train, return_counts=True)
        if np.any(counts < 2):
            lonely = labels[counts < 2].tolist()
            raise ValueError(
                f"y (the source labels): every source needs at least 2 samples to fit Q, got "
                f"1 for {lonely}"
            )
        if self.estimator is not None:
            if not hasattr(self.estimator, "predict_proba"):
                raise ValueError(
                    "estimator must have a predict_proba method, got "
                    f"{type(self.estimator).__name__}"
                )
            return clone(self.estimator).fit(X_train, domains_train)
        # lbfgs on more than two classes fits the multinomial (softmax) model. The exact
        # power-of-two rescaling first keeps StandardScaler's squares finite for |X| > 1e154.
        pipeline = make_pipeline(
            _BinaryScaler(), StandardScaler(), LogisticRegression(max_iter=1000)
        )
        return pipeline.fit(X_train, domains_train)

    def _check_fitted_estimator(self, estimator):
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(
                f"estimator must have a predict_proba method, got {type(estimator).__name__}"
            )
        try:
            if hasattr(estimator, "fit"):  # duck-typed predictors without fit are taken as fitted
                check_is_fitted(estimator)
        except NotFittedError as error:
            raise ValueError(
                f"estimator must already be fitted, got an unfitted {type(estimator).__name__}"
            ) from error
        estimator_classes = getattr(estimator, "classes_", None)
        if estimator_classes is None or set(np.asarray(estimator_classes).tolist()) != set(
            self.classes_.tolist()
        ):
            raise ValueError(
                f"estimator.classes_ must be the domain labels {self.classes_.tolist()}, got "
                f"{None if estimator_classes is None else np.asarray(estimator_classes).tolist()}"
            )
        n_features = getattr(estimator, "n_features_in_", self.n_features_in_)
        if n_features != self.n_features_in_:
            raise ValueError(
                f"estimator was fitted on {n_features} features, X has {self.n_features_in_}"
            )
        return estimator

    def _columns_of_classes(self) -> np.ndarray | None:
        """Index of each of ``classes_`` among the estimator's predict_proba columns."""
        if self.estimator_ is None:
            return None
        estimator_classes = np.asarray(self.estimator_.classes_).tolist()
        return np.array([estimator_classes.index(label) for label in self.classes_.tolist()])

    def _raw_probabilities(self, X) -> np.ndarray:
        if self.estimator_ is None:
            return np.ones((X.shape[0], 1))
        return np.asarray(self.estimator_.predict_proba(X), dtype=float)[:, self._fitted_columns]

    def predict_proba(self, X) -> np.ndarray:
        """Return Q(k|x), clipped from below by ``clip`` and renormalised.

        Clipping is silent here; :meth:`fit` reports it on the training points.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N, K), columns in the order of ``classes_``, rows summing to one, every entry
            ≥ ``clip``.

        Examples
        --------
        >>> Q = DomainClassifier().fit([[0.0], [0.1], [1.0], [1.1]], [0, 0, 1, 1])
        >>> bool(np.allclose(Q.predict_proba([[0.5], [2.0]]).sum(axis=1), 1.0))
        True
        """
        X = check_fitted_X(self, X, "classes_")
        clipped, _ = clip_probabilities(self._raw_probabilities(X), float(self.clip))
        return clipped

    def predict(self, X) -> np.ndarray:
        """Return the most probable source label of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.

        Returns
        -------
        numpy.ndarray
            (N,) labels from ``classes_``: argmax_k Q(k|x).

        Examples
        --------
        >>> Q = DomainClassifier().fit([[0.0], [0.1], [1.0], [1.1]], ["a", "a", "b", "b"])
        >>> Q.predict([[-1.0], [2.0]]).tolist()
        ['a', 'b']
        """
        probabilities = self.predict_proba(X)
        return self.classes_[np.argmax(probabilities, axis=1)]
