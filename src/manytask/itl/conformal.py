"""Calibrated intervals at every coverage from one ∞-QR fit: conformalised quantile regression.

Split CQR (Romano, Patterson & Candès 2019, NeurIPS, "Conformalized quantile regression")
turns the fitted conditional quantiles into an interval with a finite-sample guarantee: for a
coverage c, with base interval [q_lo(x), q_hi(x)] at the levels lo = (1 − c)/2 and
hi = (1 + c)/2, the conformity score of a calibration point is
E_i = max(q_lo(x_i) − y_i, y_i − q_hi(x_i)), and

    C(x) = [q_lo(x) − Q, q_hi(x) + Q],   Q = the ⌈c (n + 1)⌉-th smallest of E_1 … E_n,

covers a new exchangeable (x, y) with probability ≥ c (and < c + 1/(n + 1) when the scores
have no ties; Romano et al., Theorem 1). MAPIE fits one quantile model per level and
calibrates one c; ∞-QR gives every level from one fit, so :class:`ConformalIntervalsMixin`
stores, in one pass over the calibration set, the sorted scores for every lower level of the
grid :data:`LOWER_LEVELS` (step 1/400, i.e. a coverage grid of step 0.005) and answers any
c in (0, 1) with the grid level nearest to (1 − c)/2: a fixed function of x, so the guarantee
is exact for every c, not only for those on the grid.

For a small n, ``calibrate(X, y, cv=K)`` runs CV+ instead (Barber, Candès, Ramdas &
Tibshirani 2021, Ann. Statist. 49, "Predictive inference with the jackknife+", §3; with CQR
scores as in Romano et al. §6): K refits on K − 1 folds of (X, y), out-of-fold scores for
every point, and the interval
[⌊α(n + 1)⌋-th smallest of q_lo^{−k(i)}(x) − E_i, ⌈(1 − α)(n + 1)⌉-th smallest of
q_hi^{−k(i)}(x) + E_i], α = 1 − c, whose coverage is ≥ 1 − 2α − √(2/n) in the worst case
(Barber et al., Theorem 4) and close to c in practice; every point serves both to fit and to
calibrate, so pass the training set itself.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold
from sklearn.utils.validation import check_array, check_consistent_length, check_is_fitted

from .._validation import check_int
from ._estimator import random_generator

__all__ = ["LOWER_LEVELS", "ConformalIntervalsMixin", "check_coverage", "conformal_rank"]

#: Lower levels τ_g = g/400, g = 1 … 200, whose base intervals [q_τg, q_{1−τg}] are calibrated.
LOWER_LEVELS = np.arange(1, 201) / 400.0


def check_coverage(coverage):
    """``coverage`` as a float in the open interval (0, 1), else a ValueError naming it.

    Parameters
    ----------
    coverage : float
        The coverage c asked of an interval.

    Returns
    -------
    float
        ``coverage``, checked.

    Examples
    --------
    >>> check_coverage(0.9)
    0.9
    >>> check_coverage(1)
    Traceback (most recent call last):
    ...
    ValueError: coverage must be a real number in (0, 1), got 1
    """
    if (
        not isinstance(coverage, numbers.Real)
        or isinstance(coverage, bool)
        or not 0.0 < coverage < 1.0
    ):
        raise ValueError(f"coverage must be a real number in (0, 1), got {coverage!r}")
    return float(coverage)


def conformal_rank(coverage, n):
    """k = ⌈c (n + 1)⌉, the rank of the conformal quantile among n scores; k ≤ n is needed.

    A product within 1e-9 of an integer counts as that integer (c = 0.9, n = 199: k = 180).

    Parameters
    ----------
    coverage : float
        The coverage c in (0, 1).
    n : int
        Number of calibration scores.

    Returns
    -------
    int
        k; a ValueError saying how many points c needs when k > n.

    Examples
    --------
    >>> conformal_rank(0.9, 199), conformal_rank(0.5, 10)
    (180, 6)
    """
    k = math.ceil(coverage * (n + 1) - 1e-9)
    if k > n:
        needed = math.ceil(coverage / (1.0 - coverage) - 1e-9)
        raise ValueError(
            f"coverage={coverage!r} needs a calibration set of at least {needed} points "
            f"(⌈c (n + 1)⌉ <= n), got {n}"
        )
    return k


def _grid_index(coverage):
    """Index of the grid's lower level nearest to (1 − c)/2."""
    return int(np.argmin(np.abs(LOWER_LEVELS - (1.0 - coverage) / 2.0)))


def _base_bounds(model, X):
    """(N, G) lower and upper quantiles q_τg(x), q_{1−τg}(x) of the fitted ``model``."""
    values = model.predict(X, np.concatenate([LOWER_LEVELS, 1.0 - LOWER_LEVELS]))
    return values[:, : LOWER_LEVELS.size], values[:, LOWER_LEVELS.size :]


def _scores(model, X, y):
    """(N, G) conformity scores E_ig = max(q_τg(x_i) − y_i, y_i − q_{1−τg}(x_i))."""
    lower, upper = _base_bounds(model, X)
    return np.maximum(lower - y[:, None], y[:, None] - upper)


class ConformalIntervalsMixin:
    """``calibrate`` and ``predict_interval`` for a quantile regressor whose
    ``predict(X, levels)`` answers any levels (∞-QR); see the module docstring.

    Split CQR (Romano et al. 2019) or CV+ (Barber et al. 2021) on the conformity scores of
    every lower level of :data:`LOWER_LEVELS`, so one calibration serves every coverage.

    Examples
    --------
    >>> from manytask.itl import InfiniteQuantileRegressor
    >>> issubclass(InfiniteQuantileRegressor, ConformalIntervalsMixin)
    True
    """

    def calibrate(self, X_cal, y_cal, cv=None):
        """Store the conformity scores of every grid level on (X_cal, y_cal); returns self.

        Parameters
        ----------
        X_cal : array of shape (n, n_features_in_)
            Calibration inputs, not used by ``fit`` (split CQR); with ``cv``, the training
            inputs.
        y_cal : array of shape (n,)
            Their targets.
        cv : int or None, default=None
            None: split CQR with the fitted model. An integer K >= 2: CV+, K clones of this
            estimator fitted on K − 1 folds of (X_cal, y_cal) (folds shuffled with
            ``random_state``); the fitted model is then not used by the intervals.

        Returns
        -------
        self
            With ``conformity_scores_`` (G, n) (sorted along n for split CQR) and, with
            ``cv``, ``calibration_models_`` and ``calibration_folds_`` (the fold of each
            point).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.itl import InfiniteQuantileRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(40, 1)); y = X[:, 0] + 0.1 * rng.normal(size=40)
        >>> model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=5, random_state=0)
        >>> model = model.fit(X[:20], y[:20]).calibrate(X[20:], y[20:])
        >>> model.conformity_scores_.shape
        (200, 20)
        """
        check_is_fitted(self)
        folds = check_int(cv, "cv", minimum=2, allow_none=True)
        X_cal = check_array(X_cal, dtype=np.float64, input_name="X_cal")
        y_cal = check_array(y_cal, dtype=np.float64, ensure_2d=False, input_name="y_cal")
        if X_cal.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X_cal must have {self.n_features_in_} columns (the training width), got "
                f"{X_cal.shape[1]}"
            )
        if y_cal.ndim != 1:
            raise ValueError(f"y_cal must be 1-D, got shape {y_cal.shape}")
        check_consistent_length(X_cal, y_cal)
        if folds is not None and folds > len(y_cal):
            raise ValueError(f"cv={folds} is more folds than the {len(y_cal)} points")
        for name in ("calibration_models_", "calibration_folds_"):
            self.__dict__.pop(name, None)
        if folds is None:
            self.conformity_scores_ = np.sort(_scores(self, X_cal, y_cal).T, axis=1)
            return self
        seed = int(random_generator(self.random_state).integers(2**31))
        splits = KFold(folds, shuffle=True, random_state=seed).split(X_cal)
        scores = np.empty((LOWER_LEVELS.size, len(y_cal)))
        fold_of, models = np.empty(len(y_cal), dtype=int), []
        for k, (train, held_out) in enumerate(splits):
            models.append(clone(self).fit(X_cal[train], y_cal[train]))
            scores[:, held_out] = _scores(models[-1], X_cal[held_out], y_cal[held_out]).T
            fold_of[held_out] = k
        self.conformity_scores_ = scores
        self.calibration_models_, self.calibration_folds_ = models, fold_of
        return self

    def predict_interval(self, X, coverage=0.9):
        """Lower and upper bounds, shape (N, 2), covering y with probability ≥ ``coverage``.

        Needs :meth:`calibrate` first. Split CQR: marginal coverage in [c, c + 1/(n + 1))
        over exchangeable calibration and test points; CV+: see the module docstring.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        coverage : float, default=0.9
            The coverage c in (0, 1); the calibration set needs ⌈c (n + 1)⌉ <= n.

        Returns
        -------
        ndarray of shape (N, 2)
            Lower and upper ends of the intervals.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.itl import InfiniteQuantileRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(40, 1)); y = X[:, 0] + 0.1 * rng.normal(size=40)
        >>> model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=5, random_state=0)
        >>> model = model.fit(X[:20], y[:20]).calibrate(X[20:], y[20:])
        >>> bounds = model.predict_interval(X[:3], coverage=0.8)
        >>> bounds.shape, bool(np.all(bounds[:, 0] <= bounds[:, 1]))
        ((3, 2), True)
        """
        coverage = check_coverage(coverage)
        if not hasattr(self, "conformity_scores_"):
            raise NotFittedError("call calibrate(X_cal, y_cal) before predict_interval")
        scores = self.conformity_scores_
        k = conformal_rank(coverage, scores.shape[1])
        g = _grid_index(coverage)
        levels = np.array([LOWER_LEVELS[g], 1.0 - LOWER_LEVELS[g]])
        if not hasattr(self, "calibration_models_"):
            bounds = self.predict(X, levels)
            return bounds + np.array([-1.0, 1.0]) * scores[g, k - 1]
        per_fold = np.stack([model.predict(X, levels) for model in self.calibration_models_])
        lower = per_fold[self.calibration_folds_, :, 0].T - scores[g]  # (N, n)
        upper = per_fold[self.calibration_folds_, :, 1].T + scores[g]
        # the k-th largest of the lower ends is the ⌊α(n + 1)⌋-th smallest, α = 1 − c
        low = -np.partition(-lower, k - 1, axis=1)[:, k - 1]
        return np.column_stack([low, np.partition(upper, k - 1, axis=1)[:, k - 1]])
