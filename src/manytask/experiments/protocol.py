"""What the experiment modules share beyond tables: a fitted Q(k|x) reused across methods
and the fit wrapper that silences Q's clipping warnings.

Lives here: :class:`PrefittedClassifier`, :func:`without_clip_warnings`. Not here: CSV bytes,
cells and output files (:mod:`._tables`), the atomic write of one file
(:func:`manytask.report.write_atomic`).
"""

from __future__ import annotations

import warnings

__all__ = ["PrefittedClassifier", "without_clip_warnings"]


class PrefittedClassifier:
    """A fitted classifier seen through ``predict_proba``, ``classes_`` and
    ``n_features_in_`` only.

    It has neither ``fit`` nor ``get_params``, so ``DomainClassifier(prefit=True)`` uses it as
    is and :func:`sklearn.base.clone` copies it instead of returning an unfitted copy: one
    Q(k|x) fit per fold serves DMSA and every MultiBoost run.

    Example
    -------
    >>> from sklearn.linear_model import LogisticRegression
    >>> fitted = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    >>> PrefittedClassifier(fitted).classes_.tolist()
    [0, 1]
    """

    def __init__(self, estimator):
        self.estimator = estimator
        self.classes_ = estimator.classes_
        self.n_features_in_ = estimator.n_features_in_

    def predict_proba(self, X):
        """The wrapped estimator's ``predict_proba(X)``."""
        return self.estimator.predict_proba(X)


def without_clip_warnings(fit):
    """Run ``fit()`` with the Q(k|x) clipping warnings silenced (the results count them)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Q\\(k\\|x\\) was below clip")
        return fit()
