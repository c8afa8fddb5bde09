"""Choice of λ and the input bandwidth of the ITL estimators inside ``fit``: hold-out or K-fold.

The paper chose the hyper-parameters of ∞-QR (input and θ bandwidths, ridge λ) by 5-fold
cross-validation on the training part (``infinite-task-learning.txt``, §5 "QR"; it searched
with Bayesian optimisation). :func:`cross_validate_quantiles` searches a grid of λ and input
bandwidths instead (the θ bandwidth stays the estimator's), and cheaply:

- one factorisation per bandwidth: the pivoted-Cholesky features Φ of k_X on all training
  inputs (Φ Φᵀ = K_X to float precision) serve every fold, since a fold's fit lies in the
  span of its own k_X(·, x_i), which Φ represents exactly with the same RKHS norm ‖V‖
  (:mod:`~manytask.itl.whitening`); a fold keeps the rows of Φ of its points (with
  ``n_components``, the Nyström landmarks are drawn once, from all the training inputs);
- one path per (bandwidth, fold): λ from largest to smallest, each L-BFGS-B run started
  from the previous solution (as scikit-learn's regularisation paths do);
- early stopping of the path: once the held-out risk (averaged over the splits) rises from
  one λ to the next, the smaller λ of that bandwidth are not fitted (risk +∞): the held-out
  risk along a ridge path falls while the fit gains variance it can use, then rises, and
  the smallest λ are the costliest fits.

∞-QR's default (``lambda_=None``) uses the first split only (``max_splits=1`` of 3 folds) from
1000 training points on: a held-out third, at most 16 warm-started fits on two thirds of the
data for the default grid (all 3 splits below); ``cv=K`` uses all K. The refit on all the
points starts from the mean of the splits' fits at the chosen setting: they are parameters
of the same features Φ of all n points (a fold only drops rows), so no mapping is needed.

The held-out score of ∞-QR is the ITL risk of eqs. (8)–(9) without smoothing, Σ_j w_j mean_i
ℓ_θj(y_i − h(x_i)(θ_j)) over the fold's held-out points: the pinball loss integrated over
the levels by the quadrature of the fit. :func:`cross_validate` is the same search for any
data term, penalty and held-out score (∞-CSC and ∞-DLSE use it with their own).

∞-QR's default then averages instead of picking (``aggregate=True``): :func:`stacking_weights`
are the convex weights over the fitted settings of least held-out risk of the weighted
average of their held-out fits (stacking), and the settings so weighted are refitted, each
from its folds' mean to the fold fits' tolerance :data:`CV_TOL`.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from sklearn.model_selection import KFold

from ._estimator import minimise, random_generator, ridge_penalty
from .losses import pinball

__all__ = [
    "BANDWIDTH_FACTORS",
    "CV_TOL",
    "HOLDOUT_FOLDS",
    "LAMBDA_PATH",
    "cross_validate",
    "cross_validate_quantiles",
    "stacking_weights",
]

#: λ searched by ``cv`` (largest first: the path's warm starts).
LAMBDA_PATH = (1e-2, 1e-3, 1e-4, 1e-5)
#: Input bandwidths searched by ``cv``, as multiples of the median heuristic (4 × is where
#: the test-set oracle lands on engel, snowgeese, crabs and cpus: ``benchmarks/RESULTS.md``).
BANDWIDTH_FACTORS = (0.5, 1.0, 2.0, 4.0)
#: Loosest L-BFGS-B ``ftol`` of the fits on the folds (they rank settings, then one refit).
CV_TOL = 1e-6
#: Folds of the default choice of λ and bandwidth (``lambda_=None``) of the ITL estimators:
#: held-out thirds, averaged over all 3 below a small-set size, else the first only.
HOLDOUT_FOLDS = 3


def held_out_risk(whitened, params, y, anchors, weights):
    """Σ_j w_j mean_i ℓ_θj(y_i − h(x_i)(θ_j)) (κ = 0) of ``params`` on the model's points."""
    alpha, beta, bias = whitened.unpack(params)
    values = whitened.predict(alpha, beta, bias)
    return float(np.mean(pinball(y[:, None], values, anchors[None, :]), axis=0) @ weights)


def cross_validate_quantiles(
    X,
    y,
    bandwidths,
    lambdas,
    folds,
    whiten,
    data_term,
    lambda_b,
    anchors,
    weights,
    max_iter,
    tol,
    random_state=None,
    max_splits=None,
):
    """Held-out risks of every (bandwidth, λ) by ``folds``-fold CV, and a warm start.

    Public: the search that ∞-QR's ``cv`` and ``lambda_=None`` run (through
    :func:`~manytask.itl._choice.choose`, with :func:`cross_validate`), as a function for a
    grid, folds or data term of one's own.

    Parameters
    ----------
    X, y : ndarray of shape (n, d) and (n,)
        Standardised training data.
    bandwidths, lambdas : sequences of float
        The grid; ``lambdas`` is walked largest first with warm starts.
    folds : int
        Number of folds (shuffled with ``random_state``).
    whiten : callable
        ``bandwidth -> WhitenedModel`` of all n points with the exact (or Nyström) features.
    data_term : callable
        ``y_fold -> data term`` of :func:`~manytask.itl._estimator.penalised_objective`.
    lambda_b : float
        The bias's own ridge weight.
    anchors, weights : arrays (m,)
        Quadrature of the levels.
    max_iter, tol : int, float
        L-BFGS-B settings of every fit; ``ftol`` is max(tol, :data:`CV_TOL`).
    random_state : None, int or Generator
        Shuffles the folds.
    max_splits : int or None
        Use only the first ``max_splits`` train/held-out splits (1: a single hold-out of
        1/``folds`` of the points, ∞-QR's default); None: all ``folds``.

    Returns
    -------
    risks : ndarray of shape (len(bandwidths), len(lambdas))
        The held-out ITL risk (eqs. 8–9, κ = 0) of each setting, averaged over the splits;
        +∞ for the λ past the first rise of a bandwidth's path (not fitted).
    start : ndarray
        The mean over the splits of the fold fits' packed parameters at the least risk:
        parameters of ``whiten(bandwidth)`` for all n points, since a fold's
        fit lies in the same coordinates; the warm start of the refit on all the points.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel, InfiniteQuantileRegressor
    >>> from manytask.itl.kernel_quantile import quantile_risk
    >>> from manytask.itl.quadrature import gauss_legendre
    >>> from manytask.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(12, 1)); y = X[:, 0] + 0.1 * rng.normal(size=12)
    >>> anchors, weights = gauss_legendre(3)
    >>> def whiten(bandwidth):
    ...     model = DecomposableModel(RBF(bandwidth), RBF(0.2), RBF(0.2))
    ...     return InfiniteQuantileRegressor()._precompute(model, X, anchors)
    >>> def data_term(y_fold):
    ...     return quantile_risk(y_fold, anchors, weights, 1.0, 1e-2)
    >>> risks, start = cross_validate_quantiles(
    ...     X, y, [0.5, 1.0], [1e-2, 1e-3], 3, whiten, data_term, 1e-6, anchors, weights,
    ...     200, 1e-6, random_state=0)
    >>> risks.shape, bool(np.all(risks > 0)), start.shape == (whiten(1.0).n_params,)
    ((2, 2), True, True)
    """

    def score(held_out, params, y_held_out):
        return held_out_risk(held_out, params, y_held_out, anchors, weights)

    def penalty(lambda_):
        return ridge_penalty(lambda_, lambda_b)

    return cross_validate(
        X, y, bandwidths, lambdas, folds, whiten, data_term, penalty, score, max_iter, tol,
        random_state, max_splits,
    )  # fmt: skip


def cross_validate(
    X,
    y,
    bandwidths,
    lambdas,
    folds,
    whiten,
    data_term,
    penalty,
    score,
    max_iter,
    tol,
    random_state=None,
    max_splits=None,
    slack=0.0,
    held_out_values=False,
):
    """Held-out scores of every (bandwidth, λ) for any data term, penalty and score.

    The search of :func:`cross_validate_quantiles` (one factorisation per bandwidth, a
    warm-started λ path per fold, early stop at the first rise) with the task's pieces.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Standardised training inputs.
    y : ndarray of shape (n,) or None
        Training targets (None for an unsupervised task: ``data_term`` then gets None).
    bandwidths, lambdas, folds, whiten
        As in :func:`cross_validate_quantiles`.
    data_term : callable
        ``y_fold -> data term`` of :func:`~manytask.itl._estimator.penalised_objective`.
    penalty : callable
        ``lambda_ -> penalty`` of :func:`~manytask.itl._estimator.penalised_objective`.
    score : callable
        ``(held_out_model, params, y_held_out) -> float``, lower is better: the fit
        ``params`` judged on the held-out rows (``y_held_out`` None without ``y``).
    max_iter, tol, random_state, max_splits
        As in :func:`cross_validate_quantiles`.
    slack : float, default=0.0
        The warm start returned is that of the first setting (bandwidths, then λ in the
        order given) whose score is within ``slack`` of the least.
    held_out_values : bool, default=False
        Also return every fitted setting's mean solution and out-of-fold values.

    Returns
    -------
    risks : ndarray of shape (len(bandwidths), len(lambdas))
        The held-out score of each setting averaged over the splits; +∞ for the λ past the
        first rise of a bandwidth's path (not fitted).
    start : ndarray of shape (whiten(b).n_params,)
        The mean of the splits' solutions at that setting.
    fits : dict
        With ``held_out_values`` only: ``(b, l) -> (mean solution, values)`` for every
        fitted setting (bandwidth index b, λ index l), ``values`` of shape (n, m) the
        held-out model values ``whiten(bandwidth).rows(test).predict`` of each split's fit
        on its held-out rows (NaN on rows no split held out).

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel, InfiniteQuantileRegressor
    >>> from manytask.itl.kernel_quantile import quantile_risk
    >>> from manytask.kernels import RBF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(12, 1)); y = X[:, 0] + 0.1 * rng.normal(size=12)
    >>> anchors, weights = np.array([0.5]), np.array([1.0])
    >>> def whiten(bandwidth):
    ...     model = DecomposableModel(RBF(bandwidth), RBF(0.2))
    ...     return InfiniteQuantileRegressor()._precompute(model, X, anchors)
    >>> def score(held_out, params, y_held_out):  # held-out mean absolute error
    ...     return float(np.mean(np.abs(held_out.predict(*held_out.unpack(params))[:, 0]
    ...                                 - y_held_out)))
    >>> risks, _ = cross_validate(
    ...     X, y, [1.0], [1e-2, 1e-3], 3, whiten,
    ...     lambda y_fold: quantile_risk(y_fold, anchors, weights, 0.0, 1e-2),
    ...     ridge_penalty, score, 200, 1e-6, random_state=0)
    >>> risks.shape
    (1, 2)
    """
    order, tol = np.argsort(lambdas)[::-1], max(tol, CV_TOL)
    seed = int(random_generator(random_state).integers(2**31))
    splits = list(KFold(folds, shuffle=True, random_state=seed).split(X))[:max_splits]
    risks = np.full((len(bandwidths), len(lambdas)), np.inf)
    means, values = {}, {}  # the splits' mean solution (all n points), out-of-fold values
    for b, bandwidth in enumerate(bandwidths):
        whitened = whiten(bandwidth)
        parts = [
            (whitened.rows(train), whitened.rows(test), *_targets(data_term, y, train, test))
            for train, test in splits
        ]
        starts = [None] * len(parts)
        for position, index in enumerate(order):
            path_penalty, risk = penalty(lambdas[index]), 0.0
            for part, (fold, held_out, term, y_held_out) in enumerate(parts):
                result = minimise(fold, term, path_penalty, max_iter, tol, starts[part])
                starts[part] = result.x
                risk += score(held_out, result.x, y_held_out)
                if held_out_values:
                    predicted = held_out.predict(*held_out.unpack(result.x))
                    if part == 0:
                        values[b, index] = np.full((len(X), predicted.shape[1]), np.nan)
                    values[b, index][splits[part][1]] = predicted
            risks[b, index] = risk / len(parts)
            means[b, index] = np.mean(starts, axis=0)
            if position > 0 and risks[b, index] > risks[b, order[position - 1]]:
                break  # past the minimum along the path: smaller λ stay at +inf
    chosen = np.flatnonzero(risks.ravel() <= np.min(risks) + slack)[0]
    b, index = np.unravel_index(chosen, risks.shape)
    if held_out_values:
        fits = {key: (means[key], values[key]) for key in values}
        return risks, means[int(b), int(index)], fits
    return risks, means[int(b), int(index)]


def stacking_weights(values, y, anchors, weights, method="highs-ipm"):
    """Convex weights of least integrated pinball risk of the weighted average of ``values``.

    Solves min over w >= 0, Σ_s w_s = 1 of Σ_j weights_j mean_i ℓ_θj(y_i − Σ_s w_s
    values_s[i, j]), the held-out ITL risk (eqs. 8–9, κ = 0) of the average of the settings'
    out-of-fold fits ("stacking", Wolpert 1992; Breiman 1996), as a linear program
    (residual = u⁺ − u⁻, u± >= 0, by default HiGHS' interior-point method).

    Parameters
    ----------
    values : sequence of S arrays of shape (n, m)
        Each setting's held-out model values at the anchors.
    y : ndarray of shape (n,)
        The held-out targets.
    anchors, weights : arrays (m,)
        Quadrature of the levels.
    method : str, default="highs-ipm"
        :func:`scipy.optimize.linprog`'s method; the interior point was the fastest of
        HiGHS' on the 20 Table-1 sets, with the same weights (``bench_itl_aggregate``).

    Returns
    -------
    ndarray of shape (S,)
        The weights (non-negative, summing to 1).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.0, 1.0, 2.0, 3.0])
    >>> good, bad = y[:, None] + np.zeros((4, 1)), y[:, None] + 1.0
    >>> np.round(stacking_weights([bad, good], y, np.array([0.5]), np.array([1.0])), 6)
    array([0., 1.])
    """
    stacked = np.stack([np.asarray(v, dtype=float).ravel() for v in values], axis=1)
    rows, settings = stacked.shape
    levels = np.tile(anchors, len(y))
    mass = np.tile(weights, len(y)) / len(y)
    identity = sparse.identity(rows, format="csr")
    constraints = sparse.vstack([
        sparse.hstack([sparse.csr_matrix(stacked), identity, -identity]),
        sparse.hstack([sparse.csr_matrix(np.ones((1, settings))),
                       sparse.csr_matrix((1, 2 * rows))]),
    ]).tocsr()  # fmt: skip
    targets = np.append(np.repeat(y, len(anchors)), 1.0)
    cost = np.concatenate([np.zeros(settings), levels * mass, (1 - levels) * mass])
    result = linprog(cost, A_eq=constraints, b_eq=targets, bounds=(0, None), method=method)
    if not result.success:  # not met on sane inputs: the single setting of least risk
        own = [np.mean(pinball(y[:, None], v, anchors[None, :]), axis=0) @ weights for v in values]
        return np.eye(settings)[np.argmin(own)]
    chosen = np.clip(result.x[:settings], 0.0, None)
    return chosen / chosen.sum()


def _targets(data_term, y, train, test):
    """(data term of the fold's training rows, held-out targets); y None: unsupervised."""
    if y is None:
        return data_term(None), None
    return data_term(y[train]), y[test]
