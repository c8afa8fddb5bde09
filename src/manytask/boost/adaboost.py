"""Textbook discrete AdaBoost with exact stumps (Freund & Schapire 1997): the one-domain
special case of MULTIBOOST, kept as an independent check and a baseline.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_fitted_X, check_positive_int, unchanged_on_error, validate_X_y
from .steps import adaboost_step, separating_step
from .stumps import best_stump, presort
from .trees import DEFAULT_TREE_BINS, grow_tree
from .validation import normalise_point_weights, signed_labels

__all__ = ["AdaBoost"]


class AdaBoost(ClassifierMixin, BaseEstimator):
    """Textbook discrete AdaBoost (Freund & Schapire 1997) with exact decision stumps.

    Round t: h_t = the stump (``max_depth`` > 1: the histogram tree of :mod:`.trees`, grown
    greedily) of least ε_t under D_t, α_t = ½ log((1 − ε_t)/ε_t),
    D_{t+1}(i) ∝ D_t(i) exp(−α_t y_i h_t(x_i)). Stops when ε_t ≥ ½; ε_t = 0 adds the stump
    with α_t = 1 + Σ_{s<t} α_s and stops.

    Parameters
    ----------
    n_estimators : int
        Rounds T.
    max_depth : int >= 1
        1: exact stumps; d > 1: histogram trees of depth d (256 bins).

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> AdaBoost(n_estimators=3).fit(X, [0, 0, 1, 1]).predict([[0.5], [2.5]]).tolist()
    [0, 1]
    """

    def __init__(self, n_estimators=100, max_depth=1):
        self.n_estimators = n_estimators
        self.max_depth = max_depth

    @unchanged_on_error
    def fit(self, X, y, sample_weight=None):
        """Run T rounds of AdaBoost on (X, y).

        Parameters
        ----------
        X : array_like of shape (m, d)
            The training inputs.
        y : array_like of shape (m,)
            Two classes.
        sample_weight : array_like of shape (m,), optional
            D_1 up to normalisation (uniform if None); points of zero weight are left out.

        Returns
        -------
        AdaBoost
            self, with ``estimators_``, ``estimator_weights_`` (α_t) and ``errors_`` (ε_t).

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0]])
        >>> len(AdaBoost(n_estimators=5).fit(X, [0, 1, 1]).estimators_)
        1
        """
        check_positive_int(self.n_estimators, "n_estimators")
        depth = check_positive_int(self.max_depth, "max_depth")
        X, y = validate_X_y(self, X, y)
        self.n_features_in_ = X.shape[1]
        self.classes_, y_signed = signed_labels(y)
        one_domain = np.zeros(X.shape[0], dtype=int)
        initial_distribution = normalise_point_weights(sample_weight, one_domain, 1, np.array([0]))
        # Points of zero weight are left out (as if removed: they would add stump thresholds).
        kept = initial_distribution > 0
        X, y_signed, initial_distribution = X[kept], y_signed[kept], initial_distribution[kept]
        one_domain = one_domain[kept]
        presorted = presort(X, n_bins=None if depth == 1 else DEFAULT_TREE_BINS)
        margins = np.zeros(X.shape[0])  # y_i f_{t−1}(x_i)
        self.estimators_, weights, self.errors_ = [], [], []
        for _ in range(self.n_estimators):
            # D_t ∝ D_1 exp(−y f_{t−1}), the multiplicative update unrolled; the sums use the
            # same operations as MultiBoostClassifier so that exact ties break alike.
            unnormalised = initial_distribution * np.exp(-margins)
            total = np.bincount(one_domain, weights=unnormalised)[0]
            if depth == 1:
                stump, _, _ = best_stump(presorted, y_signed, unnormalised / total)
            else:
                stump, _ = grow_tree(presorted, y_signed * unnormalised / total, depth)
            directional_margins = y_signed * stump.predict(X, check_input=False)  # X checked
            wrong = np.bincount(one_domain, weights=unnormalised * (directional_margins < 0))[0]
            error = wrong / total
            if error >= 0.5:
                break
            self.estimators_.append(stump)
            self.errors_.append(error)
            if error <= 0.0:
                weights.append(separating_step(weights, 1.0))
                break
            alpha = adaboost_step(error)
            weights.append(alpha)
            margins += alpha * directional_margins
        self.estimator_weights_ = np.asarray(weights, dtype=float)
        self.errors_ = np.asarray(self.errors_, dtype=float)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    def _check_X(self, X):
        return check_fitted_X(self, X, "estimators_")

    def staged_decision_function(self, X):
        """Yield Σ_{s≤t} α_s h_s(x) after each round.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Yields
        ------
        ndarray of shape (N,)
            The decision after rounds 1, 2, …, T.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> model = AdaBoost(n_estimators=2).fit(X, [0, 1, 0, 1])
        >>> len(list(model.staged_decision_function(X))) == len(model.estimators_)
        True
        """
        X = self._check_X(X)
        decision = np.zeros(X.shape[0])
        for stump, alpha in zip(self.estimators_, self.estimator_weights_):
            decision = decision + alpha * stump.predict(X, check_input=False)
            yield decision

    def decision_function(self, X):
        """Σ_t α_t h_t(x); > 0 predicts ``classes_[1]``.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Returns
        -------
        ndarray of shape (N,)
            The decision values.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> model = AdaBoost(n_estimators=3).fit(X, [0, 0, 1, 1])
        >>> bool(model.decision_function([[3.0]])[0] > 0)
        True
        """
        decision = np.zeros(self._check_X(X).shape[0])
        for staged in self.staged_decision_function(X):
            decision = staged
        return decision

    def predict(self, X):
        """``classes_[1]`` where the decision is > 0, else ``classes_[0]``.

        Parameters
        ----------
        X : array_like of shape (N, d)
            The inputs.

        Returns
        -------
        ndarray of shape (N,)
            The predicted classes.

        Examples
        --------
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> AdaBoost(n_estimators=3).fit(X, ["a", "a", "b", "b"]).predict([[0.2]]).tolist()
        ['a']
        """
        check_is_fitted(self, "estimators_")
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
