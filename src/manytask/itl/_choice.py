"""In-fit choice of λ and the input bandwidth of the ITL estimators (``lambda_=None``, ``cv``).

The grid, the hold-out and the search are ∞-QR's (:mod:`~manytask.itl.selection`): λ from
:data:`~manytask.itl.selection.LAMBDA_PATH` (a warm-started path, early-stopped), the input
bandwidth from :data:`~manytask.itl.selection.BANDWIDTH_FACTORS` × the median heuristic
(unless ``input_kernel`` or ``input_bandwidth`` is given), one factorisation per bandwidth;
the first of :data:`~manytask.itl.selection.HOLDOUT_FOLDS` folds held out, all of them below
:data:`SMALL_SET` points. Each estimator brings its own data term,
penalty and held-out score; ∞-QR's default and its ``cv=K`` call :func:`choose` too (with
its own small-set size, and K folds).
"""

from __future__ import annotations

import numpy as np

from ._estimator import median_bandwidth
from .selection import BANDWIDTH_FACTORS, HOLDOUT_FOLDS, LAMBDA_PATH, cross_validate

__all__ = ["HOLDOUT_FOLDS", "SELECTION_ATTRIBUTES", "choose"]

#: Below this many points the held-out score is averaged over all HOLDOUT_FOLDS folds. Not
#: ∞-QR's 1000: on the ∞-CSC and ∞-DLSE suite (n = 105–398) all three folds from 200
#: points on cost ∞-CSC 10–19× a fixed fit against 6–10× and left the held-out scores within
#: their spread (``benchmarks/RESULTS.md``, ``bench_itl_csc_dlse``).
SMALL_SET = 200

#: Attributes of an earlier ``fit`` with ``lambda_=None``, dropped by every ``fit``.
SELECTION_ATTRIBUTES = ("cv_risks_", "selected_lambda_", "selected_input_bandwidth_")


def choose(
    estimator,
    X,
    y,
    make_whitened,
    data_term,
    penalty,
    score,
    max_iter,
    lambdas=LAMBDA_PATH,
    factors=BANDWIDTH_FACTORS,
    tolerance=None,
    folds=HOLDOUT_FOLDS,
    small_set=SMALL_SET,
    return_start=False,
    return_fits=False,
):
    """(λ, input bandwidth) of least held-out ``score``; sets the ``cv_``/``selected_`` attributes.

    Of the settings whose score is within ``tolerance`` of the least, the first in the
    order of ``factors``, then ``lambdas``, is chosen (with no tolerance: the least).

    Parameters
    ----------
    estimator : ITLEstimator
        Its ``input_kernel``, ``input_bandwidth``, ``random_state`` and ``tol`` are read.
    X : ndarray of shape (n, d)
        Standardised training inputs, n >= 2 × ``folds``.
    y : ndarray of shape (n,) or None
        Training targets (None: unsupervised).
    make_whitened : callable
        ``input_kernel -> WhitenedModel`` on all of X.
    data_term, penalty, score : callable
        As in :func:`~manytask.itl.selection.cross_validate`.
    max_iter : int
        L-BFGS-B iterations of each fit of the path.
    lambdas, factors : sequences of float
        The λ searched, and the bandwidths as multiples of the median heuristic.
    tolerance : callable or None
        ``n_held_out -> float``: the slack above the least score, given the number of
        held-out points the score was averaged over; None: 0.
    folds : int, default=HOLDOUT_FOLDS
        Number of folds (shuffled with the estimator's ``random_state``).
    small_set : float, default=SMALL_SET
        Below this many points the score is averaged over all ``folds`` held-out folds,
        from it on the first only (``math.inf``: always all, K-fold cross-validation).
    return_start : bool, default=False
        Also return the mean of the folds' fits at the chosen setting (the refit's warm
        start, :func:`~manytask.itl.selection.cross_validate`).
    return_fits : bool, default=False
        Also return every fitted setting's folds' mean and out-of-fold values.

    Returns
    -------
    lambda_ : float
        The chosen λ.
    input_bandwidth : float or None
        The chosen bandwidth (the given one, or None with ``input_kernel``).
    start : ndarray
        With ``return_start`` only: the packed warm start, in the coordinates of
        ``make_whitened`` of the chosen kernel on all of X.
    fits : dict
        With ``return_fits`` only: ``(λ, bandwidth) -> (start, held-out values)`` of every
        fitted setting (the ``fits`` of :func:`~manytask.itl.selection.cross_validate`).

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel, InfiniteQuantileRegressor
    >>> from manytask.itl._estimator import ridge_penalty
    >>> from manytask.itl.kernel_quantile import quantile_risk
    >>> from manytask.itl.selection import held_out_risk
    >>> from manytask.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 1)); y = X[:, 0] + 0.1 * rng.normal(size=30)
    >>> anchors, weights = np.array([0.5]), np.array([1.0])
    >>> estimator = InfiniteQuantileRegressor(random_state=0)
    >>> def make_whitened(kernel):
    ...     return estimator._precompute(DecomposableModel(kernel, RBF(0.2)), X, anchors)
    >>> def score(held_out, params, y_held_out):
    ...     return held_out_risk(held_out, params, y_held_out, anchors, weights)
    >>> lambda_, bandwidth = choose(
    ...     estimator, X, y, make_whitened,
    ...     lambda y_fold: quantile_risk(y_fold, anchors, weights, 0.0, 1e-2),
    ...     ridge_penalty, score, 50)
    >>> bool(lambda_ in LAMBDA_PATH), bool(bandwidth > 0)
    (True, True)
    """
    bandwidths = [estimator.input_bandwidth]
    if estimator.input_kernel is None and estimator.input_bandwidth is None:
        median = median_bandwidth(X, estimator.random_state)
        bandwidths = [factor * median for factor in factors]

    def whiten(bandwidth):
        return make_whitened(
            estimator._input_kernel(X, estimator.input_kernel, bandwidth, estimator.random_state)
        )

    splits = folds if len(X) < small_set else 1
    slack = 0.0 if tolerance is None else tolerance(len(X) * splits // folds)
    risks, start, *fits = cross_validate(
        X, y, bandwidths, lambdas, folds, whiten, data_term, penalty, score,
        max_iter, estimator.tol, estimator.random_state, splits, slack, return_fits,
    )  # fmt: skip
    candidates = np.flatnonzero(risks.ravel() <= np.min(risks) + slack)
    best_bandwidth, best_lambda = np.unravel_index(candidates[0], risks.shape)
    estimator.cv_risks_ = risks
    estimator.selected_lambda_ = lambdas[best_lambda]
    estimator.selected_input_bandwidth_ = bandwidths[best_bandwidth]
    chosen = estimator.selected_lambda_, estimator.selected_input_bandwidth_
    if return_start:
        chosen += (start,)
    if return_fits:
        chosen += ({(lambdas[l], bandwidths[b]): fit for (b, l), fit in fits[0].items()},)
    return chosen
