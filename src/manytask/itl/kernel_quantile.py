"""Kernel quantile regression on given anchors: the part ∞-QR, JQR and IND-QR share.

:func:`quantile_risk` is the data term of the ∞-QR objective, the smoothed pinball risk
(eqs. 8–9) plus λ_nc times the non-crossing penalty (eq. 14); :class:`KernelQuantileBase` fits
it with the ridge penalty (eq. 11, bias as in §3.3 "Models with bias") on standardised data,
predicts at given levels and scores. The estimators themselves live in
:mod:`~manytask.itl.quantile` (∞-QR) and :mod:`~manytask.itl.baselines` (JQR, IND-QR).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import RegressorMixin

from .._validation import check_positive
from ._estimator import ITLEstimator, minimise, random_generator, ridge_penalty
from .blockwise import BLOCK_ROWS
from .losses import (
    pinball,
    pinball_gradient,
    pinball_loss,
    smooth_positive_part,
    smooth_positive_part_gradient,
)
from .model import DecomposableModel

__all__ = [
    "DEFAULT_QUANTILES",
    "KernelQuantileBase",
    "quantile_risk",
    "smoothed_inputs",
    "statistical_stop",
]

#: Table 1's levels: the baselines' default ``quantiles``, and the levels of ∞-QR's ``score``.
DEFAULT_QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)
#: Iterations over which :func:`statistical_stop` measures the objective's decrease.
STOP_WINDOW = 10


def quantile_risk(
    y, anchors, weights, lambda_nc=0.0, kappa=0.0, monotone_bias=False, n_extra_points=0
):
    """The data term of ∞-QR: smoothed pinball risk (eqs. 8–9) + λ_nc × non-crossing (eq. 14).

    R(H, S) = Σ_j w_j mean_i ℓ^κ_θj(y_i − H_ij) + λ_nc Σ_j w_j mean_i |−S_ij|^κ₊, where
    H_ij = h(x_i)(θ_j) and S_ij = ∂_θh(x_i)(θ_j). With ``n_extra_points`` = e > 0 the model
    has n + e rows, the last e (inputs without a y) seen by the non-crossing mean only. With
    ``monotone_bias`` it adds λ_nc Σ_j w_j |−b'(θ_j)|^κ₊, the same penalty on the bias alone,
    which is h(x)(θ) at an x far from every training input.

    Parameters
    ----------
    y : array-like of shape (n,)
        Standardised targets.
    anchors, weights : array-like of shape (m,)
        Quadrature of the levels: θ_j and w_j.
    lambda_nc : float, default=0.0
        Weight λ_nc >= 0 of the non-crossing penalty (eq. 14); 0 leaves it out.
    kappa : float, default=0.0
        Huber smoothing κ >= 0 of the pinball loss and of the positive part.
    monotone_bias : bool, default=False
        Also penalise a decreasing bias b(θ).
    n_extra_points : int, default=0
        Number e of extra model rows (inputs without a y) seen by the non-crossing term only.

    Returns
    -------
    callable
        ``data_term(model, alpha, beta, bias, rows=None) -> (risk, grad_values, grad_slopes,
        grad_bias)`` for :func:`~manytask.itl._estimator.penalised_objective`. With ``rows``
        (a slice of the n + e rows, ``model`` restricted to them) it returns that block's
        share of the sums, the ``monotone_bias`` term with the block that starts at row 0.
        Its attribute ``row_risks(model, alpha, beta, bias)`` gives the per-row risks ρ_i
        whose mean the risk is (``model`` on the first labelled rows), for
        :func:`statistical_stop`.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3)).precompute(
    ...     np.zeros((2, 1)), np.array([0.25, 0.75]))
    >>> term = quantile_risk([1.0, -1.0], model.anchors_, [0.5, 0.5])
    >>> zeros = np.zeros((2, 2))
    >>> float(term(model, zeros, zeros, None)[0])  # mean pinball loss of h = 0: ½ (½ + ½)
    0.5
    """
    y = np.asarray(y, dtype=float)[:, None]
    theta = np.asarray(anchors, dtype=float)[None, :]
    anchor_weights = np.asarray(weights, dtype=float)
    n = y.shape[0]
    level_weights = anchor_weights[None, :] / n
    crossing_weights = anchor_weights[None, :] / (n + n_extra_points)

    def data_term(model, alpha, beta, bias, rows=None):
        first, stop, _ = (rows or slice(0, n + n_extra_points)).indices(n + n_extra_points)
        labelled = max(0, min(stop, n) - first)  # rows of the block that carry a y
        values = model.predict(alpha, beta, bias)
        fitted, targets = values[:labelled], y[first : first + labelled]
        risk = float(np.sum(level_weights * pinball(targets, fitted, theta, kappa)))
        grad_values = np.zeros_like(values)
        grad_values[:labelled] = level_weights * pinball_gradient(targets, fitted, theta, kappa)
        if lambda_nc == 0.0:
            return risk, grad_values, None, None
        decrease = -model.predict_dtheta(alpha, beta, bias)
        risk += lambda_nc * float(np.sum(crossing_weights * smooth_positive_part(decrease, kappa)))
        grad_slopes = -lambda_nc * crossing_weights * smooth_positive_part_gradient(decrease, kappa)
        if not monotone_bias or bias is None or first > 0:
            return risk, grad_values, grad_slopes, None
        bias_decrease = -model.bias_dtheta(bias)
        risk += lambda_nc * float(anchor_weights @ smooth_positive_part(bias_decrease, kappa))
        grad = -lambda_nc * anchor_weights * smooth_positive_part_gradient(bias_decrease, kappa)
        return risk, grad_values, grad_slopes, model.bias_dtheta_backward(grad)

    def row_risks(model, alpha, beta, bias):
        """ρ_i = Σ_j w_j ℓ^κ_θj(y_i − H_ij) + λ_nc Σ_j w_j |−S_ij|^κ₊ of the model's rows,
        the first of the n labelled ones: the risk is their mean (plus the bias term)."""
        values = model.predict(alpha, beta, bias)
        risks = pinball(y[: len(values)], values, theta, kappa) @ anchor_weights
        if lambda_nc != 0.0:
            decrease = -model.predict_dtheta(alpha, beta, bias)
            risks += lambda_nc * (smooth_positive_part(decrease, kappa) @ anchor_weights)
        return risks

    data_term.row_risks = row_risks
    return data_term


def statistical_stop(row_risks, n, window=STOP_WINDOW):
    """Stop L-BFGS-B on n rows once the objective falls by less than ŝ/√n in ``window`` steps.

    The risk of :func:`quantile_risk` is the mean of n per-row risks ρ_i, so on n rows it
    is known up to its standard error ŝ/√n, ŝ the sample standard deviation of the ρ_i
    (``row_risks``, e.g. on a subset of the rows at the starting point). A decrease below
    that over ``window`` iterations is below what the n rows resolve: optimising further
    buys nothing measurable on new data (optimisation error below estimation error, Bottou
    & Bousquet 2008, NIPS 20). Ours, for the large-n fits of ∞-QR.

    Parameters
    ----------
    row_risks : array-like of shape (k,)
        Per-row risks ρ_i, k >= 2.
    n : int
        Rows of the objective being minimised.
    window : int, default=STOP_WINDOW
        Iterations over which the decrease is measured.

    Returns
    -------
    callable
        ``stop(value) -> bool`` for :func:`~manytask.itl._estimator.minimise`, fed the
        objective after every iteration (stateful: one per minimisation).

    Examples
    --------
    >>> stop = statistical_stop([0.0, 2.0], n=100, window=2)  # ŝ/√n = √2/10 ≈ 0.14
    >>> [stop(value) for value in (1.0, 0.5, 0.45, 0.4)]
    [False, False, False, True]
    """
    threshold = float(np.std(row_risks, ddof=1)) / math.sqrt(n)
    history = []

    def stop(value):
        history.append(value)
        return len(history) > window and history[-window - 1] - value < threshold

    return stop


def smoothed_inputs(X, input_kernel, n_points, random_state):
    """``n_points`` draws x_i + (ℓ/2) ε/√d from the empirical P_X smoothed by a Gaussian.

    i uniform, ε ~ N(0, I_d), ℓ the lengthscale of ``input_kernel`` (1 if it has none): the
    extra inputs on which ``extra_crossing_points`` evaluates the non-crossing penalty, so
    that its mean over P_X (eq. 13) sees inputs near, not only at, the training points.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Standardised training inputs.
    input_kernel : Kernel
        k_X; its ``lengthscale`` (mean of, if several) sets the noise scale.
    n_points : int
        Number of draws, >= 0.
    random_state : None, int or Generator
        Draws the rows and the noise.

    Returns
    -------
    ndarray of shape (n_points, d)
        The smoothed inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.kernels import RBF
    >>> X = np.zeros((5, 2))
    >>> smoothed_inputs(X, RBF(1.0), 3, random_state=0).shape
    (3, 2)
    """
    if n_points == 0:
        return X[:0]
    rng = random_generator(random_state)
    scale = float(np.mean(getattr(input_kernel, "lengthscale", 1.0))) / 2.0
    rows = rng.integers(len(X), size=n_points)
    noise = rng.normal(size=(n_points, X.shape[1])) / np.sqrt(X.shape[1])
    return X[rows] + scale * noise


class KernelQuantileBase(RegressorMixin, ITLEstimator):
    """Kernel quantile regression on given anchors: the shared core of ∞-QR, JQR and IND-QR.

    Minimises the data term of :func:`quantile_risk` (eqs. 8–9, 14) plus the ridge penalty
    of eq. (11) on standardised data. The constructor parameters are the subclasses'.

    Examples
    --------
    >>> from manytask.itl import InfiniteQuantileRegressor, JointQuantileRegressor
    >>> issubclass(InfiniteQuantileRegressor, KernelQuantileBase)
    True
    >>> issubclass(JointQuantileRegressor, KernelQuantileBase)
    True
    """

    def _check_common_params(self, allow_none_lambda=False):
        check_positive(self.lambda_, "lambda_", allow_none=allow_none_lambda)
        check_positive(self.lambda_b, "lambda_b", strict=False)
        check_positive(self.kappa, "kappa", strict=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score is minus the mean pinball loss, not R²: it is never above 0.
        tags.regressor_tags.poor_score = True
        return tags

    def _fit_on_levels(
        self,
        X,
        y,
        quadrature,
        theta_kernel,
        bias_kernel,
        lambda_nc,
        monotone_bias=False,
        n_extra_points=0,
        lambda_=None,
        input_bandwidth=None,
        n_components=None,
        warm_sizes=(),
        feature_dtype=np.float64,
        start=None,
        max_iter=None,
        tol=None,
    ):
        """Standardise, build the model on the anchors and minimise the ∞-QR objective.

        ``lambda_`` and ``input_bandwidth`` (None: the estimator's) override its parameters;
        ``n_components`` is the Nyström rank r of
        :meth:`~manytask.itl._estimator.ITLEstimatorMixin._precompute` (None: exact).
        ``warm_sizes`` (increasing, below n; ignored with extra points): a continuation over
        the first rows, which should be in random order: the same problem (same landmarks
        and coordinates) is minimised on the first ``warm_sizes[0]`` rows from zero, then on
        the first ``warm_sizes[1]`` from that solution, …, then on all n; each of these
        stops by :func:`statistical_stop` on its own rows (ŝ on the first
        ``warm_sizes[0]`` rows at its starting point), or by ``tol``. ``feature_dtype``: of
        the input features Φ (:class:`~manytask.itl.whitening.WhitenedModel`).
        ``start``: the packed starting point of L-BFGS-B in the coordinates of the whitened
        model built here (None: zeros; with ``warm_sizes``, of the first stage).
        ``max_iter``, ``tol``: the L-BFGS-B iterations and ``ftol`` of each stage and of the
        fit (None: the estimator's).
        """
        X_standardised = self._standardise_X(X)
        y_standardised = self._standardise_y(y)
        bandwidth = self.input_bandwidth if input_bandwidth is None else input_bandwidth
        input_kernel = self._input_kernel(
            X_standardised, self.input_kernel, bandwidth, self.random_state
        )
        model = DecomposableModel(input_kernel, theta_kernel, bias_kernel)
        extra = smoothed_inputs(X_standardised, input_kernel, n_extra_points, self.random_state)
        whitened = self._precompute(
            model,
            np.vstack([X_standardised, extra]),
            quadrature.anchors,
            n_components,
            dtype=feature_dtype,
        )
        self.anchors_, self.weights_ = quadrature.anchors, quadrature.weights
        data_term = quantile_risk(
            y_standardised,
            quadrature.anchors,
            quadrature.weights,
            lambda_nc,
            self.kappa,
            monotone_bias,
            len(extra),
        )
        penalty = ridge_penalty(self.lambda_ if lambda_ is None else lambda_, self.lambda_b)
        stop = None
        max_iter = self.max_iter if max_iter is None else max_iter
        tol = self.tol if tol is None else tol
        verbose = getattr(self, "verbose", 0)
        if len(warm_sizes) and len(extra) == 0:
            probe = whitened.rows(slice(0, warm_sizes[0]))

            def stage_stop(size, params):
                params = np.zeros(whitened.n_params) if params is None else params
                return statistical_stop(data_term.row_risks(probe, *probe.unpack(params)), size)

            for size in warm_sizes:
                term = quantile_risk(
                    y_standardised[:size],
                    quadrature.anchors,
                    quadrature.weights,
                    lambda_nc,
                    self.kappa,
                    monotone_bias,
                )
                stage = whitened.rows(slice(0, size))
                blocks = BLOCK_ROWS if size > BLOCK_ROWS else None
                stage_rule = stage_stop(size, start)
                bar = self._progress_bar(max_iter, verbose, f", first {size} rows")
                with bar:
                    start = minimise(
                        stage, term, penalty, max_iter, tol, start, blocks, bar,
                        stop=stage_rule,
                    ).x  # fmt: skip
            stop = stage_stop(len(y_standardised), start)
        return self._fit_model(
            model,
            data_term,
            penalty,
            max_iter,
            tol,
            whitened,
            blockwise=True,
            verbose=verbose,
            start=start,
            stop=stop,
        )

    def _predict_levels(self, X, levels):
        """Quantile predictions at ``levels`` (None: the anchors), back in the units of y."""
        return self._model_quantiles(self._transform_X(self._validate_test_data(X)), levels)

    def _model_quantiles(self, X_standardised, levels):
        alpha, beta, bias = self.model_.unpack(self.params_)
        values = self.model_.predict(alpha, beta, bias, X=X_standardised, theta=levels)
        return self.y_mean_ + self.y_scale_ * values

    def _score_predictions(self, X):
        """(predictions, levels) that :meth:`score` evaluates."""
        levels = np.asarray(DEFAULT_QUANTILES)
        return self._predict_levels(X, levels), levels

    def score(self, X, y):
        """Minus the mean (over levels) of the mean pinball loss; higher is better.

        The levels are (0.1, 0.3, 0.5, 0.7, 0.9) for ∞-QR and the fitted levels for the
        baselines.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Test inputs.
        y : array-like of shape (N,)
            Their targets.

        Returns
        -------
        float
            −(1/k) Σ_l mean_i ℓ_τl(y_i − q_τl(x_i)), at most 0.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.itl import IndependentQuantileRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(20, 1)); y = X[:, 0] + 0.1 * rng.normal(size=20)
        >>> model = IndependentQuantileRegressor(quantiles=[0.5], random_state=0).fit(X, y)
        >>> model.score(X, y) <= 0
        True
        """
        predictions, levels = self._score_predictions(X)
        return -pinball_loss(y, predictions, levels) / levels.size
