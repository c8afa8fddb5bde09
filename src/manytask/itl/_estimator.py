"""Shared machinery of the ITL estimators (∞-QR here; ∞-CSC and ∞-DLSE reuse it).

What lives here: input validation (:func:`~manytask._validation.validate_X_y`), standardisation
of X (and y for regression), the default kernels (Gaussian k_X with a median-heuristic
bandwidth on standardised inputs, Gaussian k_Θ), the default anchors (m = ⌈√n⌉ points of a
named quadrature rule, capped), the Dirac kernel 1{θ = θ'} on a finite set of levels (JQR's
bias, IND-QR's k_Θ), the penalties (ridge, eq. 11; L2,1 + ridge + offset, eqs. 12 and 16),
the Nyström landmarks of the low-rank option (``n_components``), and one L-BFGS-B fit of a
:class:`~manytask.itl.model.DecomposableModel` given a data term and a penalty — run in the
whitened coordinates of :class:`~manytask.itl.whitening.WhitenedModel`, mapped back to
(A, B, c), with its convergence reported. What does not: the losses
(:mod:`~manytask.itl.losses`), the model itself (:mod:`~manytask.itl.model`) and the
task-specific risks (one module per estimator).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from .._validation import (
    binary_scale,
    check_choice,
    check_fitted_X,
    check_int,
    check_positive,
    check_random_state,
    validate_X_y,
)
from ..kernels import RBF, Kernel, median_heuristic
from .blockwise import BLOCK_ROWS, blas_threads, blockwise_data_term
from .quadrature import gauss_legendre, gauss_lobatto, sobol_anchors
from .whitening import WhitenedModel, pivoted_cholesky

__all__ = [
    "Dirac",
    "ITLEstimatorMixin",
    "ridge_penalty",
    "level_set_penalty",
    "penalised_objective",
    "minimise",
]

#: Default cap on the number of anchors m = ⌈√n⌉ (the paper's Table 1 uses m = 100).
MAX_DEFAULT_ANCHORS = 100
#: Fewest default Gauss anchors: 20 Gauss–Legendre nodes reach 0.0034 and 0.9966.
MIN_GAUSS_ANCHORS = 20
#: Bandwidths allowed by :func:`check_bandwidth`.
BANDWIDTH_RANGE = (1e-150, 1e150)
#: With ``verbose=1`` the fit's progress bar appears once a fit has run this many seconds.
PROGRESS_DELAY = 2.0
#: Quadrature rules by name (the ``quadrature`` parameter of the estimators).
QUADRATURES = {
    "gauss-legendre": gauss_legendre,
    "gauss-lobatto": gauss_lobatto,
    "sobol": sobol_anchors,
}


class Dirac(Kernel):
    """k(θ, θ') = 1{θ = θ'}: independent levels on a finite set (JQR's bias, IND-QR's k_Θ).

    Its θ-derivatives are taken as zero: the kernel is only ever evaluated on the finite set of
    levels it was fitted on, where a level-to-level slope has no meaning.

    Examples
    --------
    >>> import numpy as np
    >>> levels = np.array([[0.1], [0.5], [0.9]])
    >>> Dirac()(levels, levels[:2]).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """

    def __repr__(self):
        return "Dirac()"

    def _evaluate(self, X, Y):
        return np.all(X[:, None, :] == Y[None, :, :], axis=2).astype(float)

    def _diag(self, X):
        return np.ones(len(X))

    def _dk_dy(self, X, Y):
        return np.zeros((len(X), len(Y)))

    def _d2k_dxdy(self, X, Y):
        return np.zeros((len(X), len(Y)))


def ridge_penalty(lambda_, lambda_b=None):
    """Penalty λ/2 ‖f‖²_{H_K} + λ_b/2 ‖b‖²_{H_kb} of eq. (11) and §3 "Models with bias".

    Parameters
    ----------
    lambda_ : float
        λ > 0.
    lambda_b : float or None, default=None
        λ_b >= 0; None means λ_b = λ.

    Returns
    -------
    callable
        ``(model, alpha, beta, bias) -> (value, grad_alpha, grad_beta, grad_bias)`` for
        :func:`penalised_objective`.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(
    ...     np.zeros((1, 1)), np.array([0.5]))
    >>> penalty = ridge_penalty(2.0, lambda_b=4.0)
    >>> float(penalty(model, np.ones((1, 1)), np.zeros((1, 1)), np.ones(1))[0])  # 1 + 2
    3.0
    """
    lambda_b = lambda_ if lambda_b is None else lambda_b

    def penalty(model, alpha, beta, bias):
        value = 0.5 * lambda_ * model.rkhs_norm2(alpha, beta)
        grad_alpha, grad_beta = model.rkhs_norm2_grad(alpha, beta)
        grad_bias = None
        if bias is not None:
            value += 0.5 * lambda_b * model.bias_norm2(bias)
            grad_bias = 0.5 * lambda_b * model.bias_norm2_grad(bias)
        grad_beta = None if grad_beta is None else 0.5 * lambda_ * grad_beta
        return value, 0.5 * lambda_ * grad_alpha, grad_beta, grad_bias

    return penalty


def level_set_penalty(weights, lambda_, ridge=0.0):
    """Penalty ½ Σ_j w_j ‖f(·)(θ_j)‖²_{H_kX} + ρ/2 ‖f‖²_{H_K} + λ/2 ‖b‖²_{H_kb}, problem (16).

    The first term is the L2,1 penalty of eq. (12) with the quadrature measure
    μ = Σ_j w_j δ_θj (weight ½ as in the paper); the second, ``ridge`` ρ >= 0, is a small
    ridge of eq. (11) that sees f between the anchors too; the third regularises the offset
    of ∞-DLSE, carried by the model's bias. Same shape as :func:`ridge_penalty`: returns a callable
    ``(model, alpha, beta, bias) -> (value, grad_alpha, grad_beta, grad_bias)``; ``model``
    is a :class:`~manytask.itl.model.DecomposableModel` or a
    :class:`~manytask.itl.whitening.WhitenedModel` (both have ``level_norm2``).

    Parameters
    ----------
    weights : array-like of shape (m,)
        Quadrature weights w_j of the anchors.
    lambda_ : float
        λ > 0, weight of the offset's norm.
    ridge : float, default=0.0
        ρ >= 0.

    Returns
    -------
    callable
        ``(model, alpha, beta, bias) -> (value, grad_alpha, grad_beta, grad_bias)``.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(
    ...     np.zeros((1, 1)), np.array([0.5]))
    >>> penalty = level_set_penalty(np.array([1.0]), lambda_=2.0)
    >>> float(penalty(model, np.ones((1, 1)), np.zeros((1, 1)), np.ones(1))[0])  # ½ + 1
    1.5
    """
    weights = np.asarray(weights, dtype=float)

    def penalty(model, alpha, beta, bias):
        value, grad_alpha, grad_beta = model.level_norm2(alpha, beta, weights)
        value, grad_alpha = 0.5 * value, 0.5 * grad_alpha
        grad_beta = None if grad_beta is None else 0.5 * grad_beta
        if ridge:
            ridge_alpha, ridge_beta = model.rkhs_norm2_grad(alpha, beta)
            value += 0.5 * ridge * model.rkhs_norm2(alpha, beta)
            grad_alpha = grad_alpha + 0.5 * ridge * ridge_alpha
            grad_beta = _add(grad_beta, None if ridge_beta is None else 0.5 * ridge * ridge_beta)
        grad_bias = None
        if bias is not None:
            value += 0.5 * lambda_ * model.bias_norm2(bias)
            grad_bias = 0.5 * lambda_ * model.bias_norm2_grad(bias)
        return value, grad_alpha, grad_beta, grad_bias

    return penalty


def _add(first, second):
    """first + second where ``None`` means zero (a model without B or without bias)."""
    if first is None:
        return second
    return first if second is None else first + second


def penalised_objective(params, model, data_term, penalty, block_rows=None, workers=1):
    """(value, gradient) of data term + penalty at the packed parameters (for L-BFGS-B).

    ``model`` may also be a :class:`~manytask.itl.whitening.WhitenedModel`, whose packed
    parameters are [vec V, v] and whose ``beta`` is ``None``. With ``block_rows`` (a
    WhitenedModel only) the data term and its backward pass run over blocks of that many
    rows (:func:`~manytask.itl.blockwise.blockwise_data_term`): memory O(block_rows × m)
    instead of O(n m), the same value and gradient up to rounding.

    Parameters
    ----------
    params : array of shape (model.n_params,)
        [vec(A), vec(B), c] as made by :meth:`DecomposableModel.pack`.
    model : DecomposableModel
        Already precomputed on the training inputs and anchors.
    data_term : callable
        ``(model, alpha, beta, bias) -> (value, grad_values, grad_slopes, grad_bias)``:
        the risk, its gradient with respect to H = h(x_i)(θ_j) and ∂_θH (``None`` if it does
        not use the slopes), and a direct gradient in c (``None`` unless the risk uses the bias
        on its own, as the level-set offset t(θ) does).
    penalty : callable
        ``(model, alpha, beta, bias) -> (value, grad_alpha, grad_beta, grad_bias)``, e.g.
        :func:`ridge_penalty` or :func:`level_set_penalty`.
    block_rows : int or None, default=None
        None: the data term on all rows at once. An integer: blocks of that many rows; the
        data term then takes ``rows=`` (a slice of the model's rows), as
        :func:`~manytask.itl.kernel_quantile.quantile_risk`'s does.
    workers : int, default=1
        Threads over the blocks (each with single-threaded BLAS).

    Returns
    -------
    value : float
        Data term + penalty.
    gradient : ndarray of shape (model.n_params,)
        Its gradient, packed like ``params``.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.itl.kernel_quantile import quantile_risk
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(
    ...     np.zeros((2, 1)), np.array([0.25, 0.75]))
    >>> term = quantile_risk([1.0, -1.0], model.anchors_, [0.5, 0.5])
    >>> value, gradient = penalised_objective(
    ...     np.zeros(model.n_params), model, term, ridge_penalty(1.0))
    >>> value, gradient.shape  # the pinball risk of h = 0, no penalty
    (0.5, (10,))
    """
    alpha, beta, bias = model.unpack(params)
    if block_rows is None:
        value, grad_values, grad_slopes, grad_bias_direct = data_term(model, alpha, beta, bias)
        grad_alpha, grad_beta, grad_bias = model.backward(grad_values, grad_slopes)
    else:
        value, grad_alpha, grad_bias, grad_bias_direct = blockwise_data_term(
            model, data_term, alpha, bias, block_rows, workers
        )
        grad_beta = None
    penalty_value, penalty_alpha, penalty_beta, penalty_bias = penalty(model, alpha, beta, bias)
    grad_alpha = grad_alpha + penalty_alpha
    grad_beta = _add(grad_beta, penalty_beta)
    grad_bias = _add(_add(grad_bias, grad_bias_direct), penalty_bias)
    return value + penalty_value, model.pack(grad_alpha, grad_beta, grad_bias)


def minimise(
    problem,
    data_term,
    penalty,
    max_iter,
    tol,
    start=None,
    block_rows=None,
    progress=None,
    stop=None,
):
    """L-BFGS-B on :func:`penalised_objective` from ``start`` (zeros by default).

    ``ftol`` = ``tol``, ``gtol`` = ``tol``/100. BLAS is held to one thread, except with
    ``block_rows``: the blocks then run on as many threads as BLAS had (one BLAS thread each).

    Parameters
    ----------
    problem : DecomposableModel or WhitenedModel
        Precomputed model whose packed parameters are optimised.
    data_term, penalty : callable
        As in :func:`penalised_objective`.
    max_iter : int
        L-BFGS-B ``maxiter``.
    tol : float
        L-BFGS-B ``ftol``.
    start : ndarray of shape (problem.n_params,) or None, default=None
        Starting point; None means zeros.
    block_rows : int or None, default=None
        As in :func:`penalised_objective` (a WhitenedModel only); None: all rows at once.
    progress : tqdm progress bar or None, default=None
        Advanced by one at every L-BFGS-B iteration.
    stop : callable or None, default=None
        ``stop(value) -> bool``, called with the objective after every iteration: True ends
        the minimisation there (an extra stopping rule, e.g.
        :func:`~manytask.itl.kernel_quantile.statistical_stop`).

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result: ``x`` the packed minimiser, ``fun`` its value; ``stopped`` whether
        ``stop`` ended it.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.itl.kernel_quantile import quantile_risk
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(
    ...     np.array([[0.0], [1.0]]), np.array([0.25, 0.75]))
    >>> term = quantile_risk([1.0, -1.0], model.anchors_, [0.5, 0.5], kappa=1e-2)
    >>> result = minimise(model, term, ridge_penalty(1e-2), 500, 1e-10)
    >>> bool(result.fun < 0.5)  # below the risk of h = 0
    True
    """
    start = np.zeros(problem.n_params) if start is None else start
    workers = 1 if block_rows is None else blas_threads()
    stopped = []

    def callback(intermediate_result):
        if progress is not None:
            progress.update()
        if stop is not None and stop(float(intermediate_result.fun)):
            stopped.append(True)
            raise StopIteration

    # SciPy's L-BFGS-B calls BLAS on short vectors at every step, where threads cost more
    # in synchronisation than they compute.
    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize(
            penalised_objective,
            start,
            args=(problem, data_term, penalty, block_rows, workers),
            jac=True,
            method="L-BFGS-B",
            callback=callback,
            options={"maxiter": max_iter, "ftol": tol, "gtol": tol * 1e-2},
        )
    result.stopped = bool(stopped)
    return result


def random_generator(random_state):
    """A NumPy Generator from None, an int >= 0, a Generator or a legacy RandomState
    (anything else: a ValueError naming ``random_state``)."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31))
    return check_random_state(random_state)


def mean_and_std(values):
    """Column means and standard deviations of ``values`` that cannot overflow.

    Computed on ``values`` divided by a power of two (:func:`~manytask._validation.binary_scale`):
    exactly NumPy's ``mean`` and ``std`` wherever those are finite, and finite for any finite
    input (NumPy's square |y|² overflows for |y| > 1e154, making every prediction ±inf).
    """
    scale = binary_scale(values, axis=0)
    scaled = values / scale
    return scaled.mean(axis=0) * scale, scaled.std(axis=0) * scale


def median_bandwidth(X_standardised, random_state=None):
    """The median heuristic's input bandwidth, or a ValueError that says what to pass instead
    (e.g. for a constant X, where every pair of rows coincides)."""
    try:
        return median_heuristic(X_standardised, random_state=random_state)
    except ValueError as error:
        raise ValueError(
            f"X: the median-heuristic input bandwidth is undefined ({error}); "
            "pass input_bandwidth= (a float > 0) or input_kernel="
        ) from error


def check_bandwidth(value, name, allow_none=False):
    """A kernel bandwidth: finite, in [1e-150, 1e150] so that its square is a normal float
    (beyond, a Gaussian on standardised data is constant or a Dirac to float precision)."""
    value = check_positive(value, name, allow_none=allow_none)
    if value is not None and not BANDWIDTH_RANGE[0] <= value <= BANDWIDTH_RANGE[1]:
        raise ValueError(
            f"{name} must be in [1e-150, 1e150] (its square must be a normal float), got {value!r}"
        )
    return value


def check_two_samples(X):
    if X.shape[0] < 2:
        raise ValueError(f"X must have at least 2 samples to fit, got n_samples = {X.shape[0]}")


class ITLEstimatorMixin:
    """Fit-time helpers shared by the ITL estimators; subclasses are scikit-learn estimators.

    Subclasses keep their constructor arguments unchanged and call, inside ``fit``:
    :meth:`_validate_training_data`, :meth:`_standardise_X` (and :meth:`_standardise_y`),
    :meth:`_input_kernel`, :meth:`_default_anchors` and :meth:`_fit_model`.

    Examples
    --------
    >>> from manytask.itl import InfiniteLevelSetEstimator, InfiniteQuantileRegressor
    >>> issubclass(InfiniteQuantileRegressor, ITLEstimatorMixin)
    True
    >>> issubclass(InfiniteLevelSetEstimator, ITLEstimatorMixin)
    True
    """

    def __sklearn_is_fitted__(self):
        # Parameters such as ``lambda_`` end with "_" too: fitted means a fitted model.
        return hasattr(self, "model_")

    def _validate_training_data(self, X, y):
        """X (n, d), y (n,) finite floats via ``validate_data``; n >= 2 (sets n_features_in_)."""
        X, y = validate_X_y(self, X, y, y_numeric=True, dtype=np.float64)
        check_two_samples(X)
        return X, y

    def _validate_test_data(self, X):
        return check_fitted_X(self, X, "model_", dtype=np.float64)

    def _standardise_X(self, X):
        """Store the column means and scales (1 for constant columns) and standardise X."""
        self.X_mean_, scale = mean_and_std(X)
        self.X_scale_ = np.where(scale > 0, scale, 1.0)
        return self._transform_X(X)

    def _transform_X(self, X):
        return (X - self.X_mean_) / self.X_scale_

    def _standardise_y(self, y):
        mean, scale = mean_and_std(y)
        self.y_mean_ = float(mean)
        self.y_scale_ = float(scale) if scale > 0 else 1.0
        return (y - self.y_mean_) / self.y_scale_

    def _input_kernel(
        self, X_standardised, input_kernel=None, input_bandwidth=None, random_state=None
    ):
        """The given k_X, else a Gaussian with ``input_bandwidth`` or the median heuristic."""
        if input_kernel is not None:
            if not isinstance(input_kernel, Kernel):
                raise ValueError(f"input_kernel must be a Kernel or None, got {input_kernel!r}")
            return input_kernel
        bandwidth = check_bandwidth(input_bandwidth, "input_bandwidth", allow_none=True)
        if bandwidth is None:
            bandwidth = median_bandwidth(X_standardised, random_state)
        return RBF(bandwidth)

    @staticmethod
    def _default_anchors(n_samples, n_anchors=None, interval=(0.0, 1.0), rule="sobol"):
        """Anchors and weights of ``rule`` (a key of :data:`QUADRATURES`) on ``interval``.

        m = ``n_anchors``, or by default min(⌈√n⌉, 100) — at least 20 for the Gauss rules
        (Gauss–Legendre's outer nodes then lie within 0.0034 of the interval's ends).
        """
        check_choice(rule, "quadrature", sorted(QUADRATURES))
        if (
            rule == "gauss-lobatto"
            and n_anchors is not None
            and check_int(n_anchors, "n_anchors") < 2
        ):
            raise ValueError(
                f"n_anchors must be an integer >= 2 with quadrature='gauss-lobatto' (both ends "
                f"of the interval are nodes), got {n_anchors!r}"
            )
        m = check_int(n_anchors, "n_anchors", allow_none=True)
        if m is None:
            m = min(math.ceil(math.sqrt(n_samples)), MAX_DEFAULT_ANCHORS)
            if rule != "sobol":
                m = max(m, MIN_GAUSS_ANCHORS)
        return QUADRATURES[rule](m, interval)

    def _precompute(self, model, X, anchors, n_components=None, **whitening):
        """Precompute ``model`` and return the :class:`WhitenedModel` to optimise on.

        ``n_components=None``: the exact model. K_X = Φ Φᵀ to float precision by a pivoted
        Cholesky factorisation (:func:`~manytask.itl.whitening.pivoted_cholesky`): the model
        is precomputed on the pivots only, r the numerical rank of K_X.
        An integer r < n: the Nyström model, precomputed on r landmarks drawn from X without
        replacement with ``self.random_state`` (memory O(n r + r m)); r >= n uses every
        point, which is the exact model again. ``whitening``: ``slopes``, ``level_weights``
        and ``ridge`` of :class:`WhitenedModel`.
        """
        n_components = check_int(n_components, "n_components", allow_none=True)
        if n_components is None:
            # Pivoted Cholesky to float precision: the landmarks are the pivots, r the
            # numerical rank of K_X (often ≪ n for a Gaussian kernel in few dimensions).
            pivots, factor = pivoted_cholesky(model.input_kernel, X)
            if len(pivots) == 0:  # k_X vanishes on X (e.g. a linear kernel on constant X)
                model.precompute(X[:1], anchors)
                return WhitenedModel(model, X=X, **whitening)
            model.precompute(X[pivots], anchors)
            return WhitenedModel(model, X=X, cholesky=(pivots, factor), **whitening)
        rows = random_generator(self.random_state).permutation(len(X))[:n_components]
        model.precompute(X[np.sort(rows)], anchors)
        return WhitenedModel(model, X=X, **whitening)

    def _overflow_error(self):
        weights = ", ".join(
            f"{name}={value!r}"
            for name, value in self.get_params(deep=False).items()
            if name.startswith("lambda") or name == "ridge"
        )
        return ValueError(
            f"{type(self).__name__}: the objective overflowed the float range; reduce the "
            f"penalty weights ({weights})"
        )

    def _progress_bar(self, max_iter, verbose, stage=""):
        """The tqdm bar of one L-BFGS-B run (``verbose`` as in :meth:`_fit_model`)."""
        return tqdm(
            total=max_iter,
            desc=f"{type(self).__name__}.fit{stage} (L-BFGS-B iterations)",
            disable=verbose == 0,
            delay=PROGRESS_DELAY if verbose == 1 else 0.0,
            leave=False,
        )

    def _fit_model(
        self,
        model,
        data_term,
        penalty,
        max_iter,
        tol,
        whitened=None,
        blockwise=False,
        verbose=0,
        start=None,
        stop=None,
    ):
        """Minimise :func:`penalised_objective` from ``start`` (None: zero) with L-BFGS-B;
        sets the fitted state.

        With ``whitened`` (a :class:`WhitenedModel` of ``model``, see :meth:`_precompute`)
        the minimisation runs in its whitened coordinates, where the penalty is ‖V‖²; the
        solution is mapped back to ``model``'s coefficients. Without it, directly over (A, B, c).
        ``blockwise``: the data term takes ``rows=`` and, on more than
        :data:`~manytask.itl.blockwise.BLOCK_ROWS` rows, is evaluated by blocks
        (:func:`~manytask.itl.blockwise.blockwise_data_term`). ``verbose``: 0 no progress
        bar; 1 a tqdm bar over the iterations on stderr once the fit has run
        :data:`PROGRESS_DELAY` seconds; 2 the bar from the start. ``start``: the packed
        starting point of L-BFGS-B (None: zeros). ``stop``: an extra stopping rule of
        :func:`minimise`; a fit it ends counts as converged.

        Sets ``model_``, ``params_`` (packed [vec A, vec B, c] of ``model``), ``objective_``
        (the minimised value, in the standardised units the estimator works in),
        ``n_iter_``, ``converged_`` (L-BFGS-B met its ``ftol``/``gtol`` test or ``stop``
        before ``max_iter``; otherwise a :class:`~sklearn.exceptions.ConvergenceWarning`) and
        ``n_components_`` (the rank r of the input features used).
        """
        max_iter = check_int(max_iter, "max_iter")
        tol = check_positive(tol, "tol")
        block_rows = None
        if blockwise and whitened is not None and whitened.n_samples > BLOCK_ROWS:
            block_rows = BLOCK_ROWS
        progress = self._progress_bar(max_iter, verbose)
        problem = model if whitened is None else whitened
        try:
            with np.errstate(over="ignore", invalid="ignore"), progress:
                result = minimise(
                    problem, data_term, penalty, max_iter, tol, start, block_rows, progress, stop
                )
        except ValueError as error:  # the losses refuse a non-finite model value
            raise self._overflow_error() from error
        if not (np.isfinite(result.fun) and np.all(np.isfinite(result.x))):
            raise self._overflow_error()
        if whitened is None:
            self.params_ = result.x
            self.n_components_ = model.n_samples
        else:
            alpha, _, bias = whitened.unpack(result.x)
            self.params_ = model.pack(*whitened.to_coefficients(alpha, bias))
            self.n_components_ = whitened.shape[0]
        self.model_ = model
        self.objective_ = float(result.fun)
        self.n_iter_ = int(result.nit)
        self.converged_ = bool(result.status == 0 or result.stopped)
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__}: L-BFGS-B stopped without converging after "
                f"{self.n_iter_} iterations ({result.message}); raise max_iter "
                f"(= {max_iter}) or loosen tol (= {tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self


class ITLEstimator(ITLEstimatorMixin, BaseEstimator):
    """A scikit-learn ``BaseEstimator`` with the ITL fit-time helpers."""
