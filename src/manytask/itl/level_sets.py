"""∞-DLSE (∞-OCSVM): every density level set θ ∈ [ε, 1] from one fit.

:class:`InfiniteLevelSetEstimator` solves problem (16) of ``infinite-task-learning.txt`` on
standardised inputs, with h(x)(θ) = Σ_ij α_ij k_X(x, x_i) k_Θ(θ, θ_j) (Prop. 3.2: no ∂₂k_Θ
terms) and the offset t(θ) = Σ_j c_j k_b(θ, θ_j) in H_kb:

    Σ_j w_j (1/n) Σ_i [−t(θ_j) + |t(θ_j) − h(x_i)(θ_j)|^κ₊ / θ_j]      one-class risk, §2.1
    + ½ Σ_j w_j ‖h(·)(θ_j)‖²_{H_kX}                                    L2,1 penalty, eq. (12)
    + ρ/2 ‖h‖²_{H_K}                                                    small ridge, eq. (11)
    + λ/2 ‖t‖²_{H_kb}                                                   offset penalty, eq. (16)

with anchors θ_j in Θ = [ε, 1] (Gauss–Lobatto by default: both ends are anchors) and |·|^κ₊
the Huber-smoothed positive part of :mod:`~manytask.itl.losses`. One deliberate reading of
the paper: eq. (16) as printed puts w_j/θ_j in front of (|t − h|₊ − t), i.e. −t/θ; that risk
decreases in t for every t (its t-slope is (fraction of h_i < t − 1)/θ ≤ 0), so it has no
θ-property. The risk above uses the one-class loss of §2.1, −t + |t − h|₊/θ, whose minimiser
in t puts a fraction θ of the points below t (the ν-property of OCSVM, Fig. 2).

The ridge ρ (``ridge``, 0 for problem (16) as printed) is our remedy for an ill-posed
problem: with the discrete measure μ = Σ_j w_j δ_θj the L2,1 penalty sees h only at the
anchors, so the problem splits into m one-class problems coupled only through t and nothing
fixes h between anchors. With ρ > 0 the whole penalty ½ Σ_j w_j ‖h(θ_j)‖² + ρ/2 ‖h‖² is
whitened (:class:`~manytask.itl.whitening.WhitenedModel` with ``level_weights`` and
``ridge``): it becomes ½‖V‖², no coordinate is scaled by more than 1/√ρ, and the minimiser
is unique.

The estimator is fitted through the shared machinery of :mod:`~manytask.itl._estimator`:
the one-class risk is a data term (:func:`one_class_risk`), the penalties a penalty callable
(:func:`~manytask.itl._estimator.level_set_penalty`). The offset is carried by the model's
bias with a minus sign, b = −t, so the model's prediction h + b is the decision function
h − t; the span has no ∂₂k_Θ (β) terms (Prop. 3.2), B stays zero.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import OutlierMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_int,
    check_positive,
    check_probability,
    unchanged_on_error,
    validate_X,
)
from ..kernels import RBF
from ._choice import HOLDOUT_FOLDS, SELECTION_ATTRIBUTES, choose
from ._estimator import (
    ITLEstimator,
    check_bandwidth,
    check_two_samples,
    level_set_penalty,
    penalised_objective,
)
from .losses import check_range, one_class, one_class_gradient
from .model import DecomposableModel

__all__ = [
    "InfiniteLevelSetEstimator",
    "calibration_gap",
    "level_set_objective",
    "one_class_risk",
]

#: Levels at which :meth:`InfiniteLevelSetEstimator.score` checks the θ-property.
SCORE_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Level of :meth:`InfiniteLevelSetEstimator.predict` when none is given: 10 % outliers.
DEFAULT_THETA = 0.1
#: Input bandwidths searched by ``input_bandwidth=None``, as multiples of the median
#: heuristic (a level set is consistent as the bandwidth tends to 0; larger than the
#: median heuristic is calibrated too, but over-smooths: ``benchmarks/RESULTS.md``).
BANDWIDTH_FACTORS = (0.25, 0.5, 1.0)


def calibration_gap(decision, levels, weights):
    """Σ_l w_l |fraction of the points with decision < 0 at θ_l − θ_l| / Σ_l w_l.

    The θ-property (Fig. 2) checked on the points of ``decision`` (N, k): the fraction of
    outliers of level θ should be θ. 0 is perfectly calibrated.

    Parameters
    ----------
    decision : ndarray of shape (N, k)
        h(x_i)(θ_l) − t(θ_l).
    levels, weights : arrays of shape (k,)
        θ_l and their weights w_l > 0.

    Returns
    -------
    float
        The weighted mean gap, in [0, 1].

    Examples
    --------
    >>> calibration_gap(np.array([[-1.0, -1.0], [1.0, -1.0]]), np.array([0.5, 0.5]),
    ...                 np.array([1.0, 3.0]))
    0.375
    """
    outliers = np.mean(decision < 0, axis=0)
    return float(np.abs(outliers - levels) @ weights / np.sum(weights))


def score_levels(epsilon):
    """The levels of :data:`SCORE_LEVELS` in [ε, 1] (just ε if there are none)."""
    levels = np.asarray(SCORE_LEVELS)
    return levels[levels >= epsilon] if epsilon <= levels[-1] else np.array([epsilon])


def _decision_at_levels(whitened, params, levels):
    """h(x_i)(θ) − t(θ) of the whitened ``params`` at its rows, for any levels (k,).

    h = Φ V Θ with Θ = (whitened θ map)ᵀ k_Θ(anchors, levels), and −t = k_b(levels, anchors) c
    (the model's bias); at the anchors this is ``whitened.predict``.
    """
    V, _, v = whitened.unpack(params)
    model, anchors, levels = whitened.model, whitened.anchors_[:, None], levels[:, None]
    values = whitened.features_ @ V @ (whitened.theta_map_.T @ model.theta_kernel(anchors, levels))
    return values + model.bias_kernel(levels, anchors) @ (whitened.bias_map_ @ v)


def one_class_risk(anchors, weights, kappa=0.0):
    """The data term of ∞-DLSE: Σ_j w_j mean_i [−t(θ_j) + |t(θ_j) − f(x_i)(θ_j)|^κ₊ / θ_j].

    The model's prediction is the decision function H = f − t (its bias is b = −t), so
    f = H + t with t = −b(θ_j). Returns a ``data_term`` callable for
    :func:`~manytask.itl._estimator.penalised_objective`: its gradient in H is ∂ℓ/∂f and its
    direct bias gradient carries the t-dependence at fixed H, −K_bᵀ Σ_i (∂ℓ/∂f + ∂ℓ/∂t)
    (through ``model.bias_backward``).

    Parameters
    ----------
    anchors, weights : array-like of shape (m,)
        Quadrature of the levels: θ_j in (0, 1] and w_j.
    kappa : float, default=0.0
        Huber smoothing κ >= 0 of the positive part.

    Returns
    -------
    callable
        ``data_term(model, alpha, beta, bias) -> (risk, grad_values, None, grad_bias)``.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(
    ...     np.zeros((2, 1)), np.array([0.5]))
    >>> term = one_class_risk(model.anchors_, [1.0])
    >>> zeros = np.zeros((2, 1))
    >>> float(term(model, zeros, zeros, np.zeros(1))[0])  # h = t = 0: no loss
    0.0
    """
    theta = np.asarray(anchors, dtype=float)[None, :]
    weights = np.asarray(weights, dtype=float)[None, :]

    def data_term(model, alpha, beta, bias):
        decision = model.predict(alpha, beta, bias)
        offset = -model.bias_values(bias)[None, :]
        point_weights = weights / decision.shape[0]
        values = decision + offset
        risk = float(np.sum(point_weights * one_class(values, offset, theta, kappa)))
        grad_values, grad_offset = one_class_gradient(values, offset, theta, kappa)
        grad_values = point_weights * grad_values
        at_fixed_decision = np.sum(grad_values + point_weights * grad_offset, axis=0)
        return risk, grad_values, None, -model.bias_backward(at_fixed_decision)

    return data_term


def level_set_objective(params, model, weights, lambda_, kappa=0.0):
    """(value, gradient) of problem (16) at the packed parameters [vec(A), c].

    With G = A K_Θ, H = K_X G (H_ij = h(x_i)(θ_j)) and t = K_b c:

        Σ_j w_j mean_i ℓ^κ_θj(H_ij, t_j) + ½ Σ_j w_j G_jᵀ K_X G_j + λ/2 cᵀ K_b c,

    ℓ^κ the smoothed one-class loss. Evaluated through :func:`penalised_objective` with
    :func:`one_class_risk` and :func:`~manytask.itl._estimator.level_set_penalty` (B = 0,
    model bias −c), the pieces the estimator is fitted with.

    Parameters
    ----------
    params : array of shape (n m + m,)
        Row-major vec(A) (n × m) followed by c (m,).
    model : DecomposableModel
        Precomputed on the training inputs and anchors, with a ``bias_kernel`` (k_b of t).
    weights : array of shape (m,)
        Quadrature weights w_j of the anchors.
    lambda_ : float
        Weight λ > 0 of ‖t‖²_{H_kb}.
    kappa : float
        Huber smoothing κ >= 0 of the positive part.

    Returns
    -------
    value : float
        The objective.
    gradient : ndarray of shape (n m + m,)
        Its gradient in [vec(A), c].

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(
    ...     np.zeros((2, 1)), np.array([0.5]))
    >>> value, gradient = level_set_objective(np.zeros(3), model, np.array([1.0]), 1e-2)
    >>> value, gradient.shape
    (0.0, (3,))
    """
    n, m = model.n_samples, model.n_anchors
    params = np.asarray(params, dtype=float)
    alpha, offset_coef = params[: n * m].reshape(n, m), params[n * m :]
    packed = model.pack(alpha, np.zeros_like(alpha), -offset_coef)
    data_term = one_class_risk(model.anchors_, weights, kappa)
    value, gradient = penalised_objective(
        packed, model, data_term, level_set_penalty(weights, lambda_)
    )
    grad_alpha, _, grad_bias = model.unpack(gradient)
    return value, np.concatenate([grad_alpha.ravel(), -grad_bias])


class InfiniteLevelSetEstimator(OutlierMixin, ITLEstimator):
    """∞-DLSE: a density level set for every θ ∈ [ε, 1] — about a fraction θ outside (eq. 16).

    ``decision_function(X, theta)`` is h(x)(θ) − t(θ); points with a negative value are the
    outliers of level θ (``predict`` → −1), the others inliers (+1). On the training data
    the fraction of outliers at level θ is close to θ (the θ-property, Fig. 2).

    Parameters
    ----------
    lambda_ : float, default=1e-4
        Weight λ > 0 of ‖t‖²_{H_kb} in eq. (16) (the L2,1 penalty on h has weight ½, as in
        the paper; the loss is positively homogeneous, so only the ratio matters). Fixed,
        not chosen from the data: it only smooths t(θ) between the anchors, where the data
        pin t(θ_j) (the θ-quantile of h(X)(θ_j)); small is good on every data set.
    epsilon : float, default=0.05
        Lower end ε of Θ = [ε, 1], in (0, 1).
    n_anchors : int or None, default=None
        Number m of anchors on [ε, 1]; None means min(⌈√n⌉, 100), at least 20 for the
        Gauss rules.
    input_kernel : Kernel or None, default=None
        k_X on standardised inputs; None means a Gaussian (RBF) with ``input_bandwidth``.
    input_bandwidth : float, "median" or None, default=None
        Bandwidth of the default Gaussian k_X on standardised inputs. None (our default):
        chosen inside ``fit`` from :data:`BANDWIDTH_FACTORS` × the median heuristic, of
        least held-out :func:`calibration_gap` at θ = 0.1, 0.2, …, 0.9 (the θ-property of
        Fig. 2, as :meth:`score`; between the anchors too) on a held-out third of the
        training set (all three thirds below 200 points), then one refit on all of it
        (:mod:`~manytask.itl._choice`). Ours, the paper gives no value: as for OCSVM the
        bandwidth is the capacity of the sets, which estimate the density's level sets as
        it tends to 0 (Vert & Vert 2006, cited in §2.1), while too small a one leaves
        held-out points outside. The held-out one-class risk is not the criterion: it is
        positively homogeneous in (h, t), so it compares the sizes of the fitted h rather
        than the sets. The gap does not see the volume of the sets (larger bandwidths are
        calibrated too), hence no factor above 1. ``"median"``: the median heuristic (the
        earlier default, which the reproduction of Fig. 2 pins). With fewer than 6 points,
        the median heuristic.
    theta_bandwidth : float, default=0.2
        Bandwidth of the Gaussian k_Θ and of the Gaussian offset kernel k_b. Fixed, not
        chosen from the data: Θ = [ε, 1] does not depend on the data.
    kappa : float, default=1e-3
        Huber smoothing κ >= 0 of the positive part; 0 is the exact, non-smooth objective.
        Fixed: a numerical smoothing, small against the decision values.
    max_iter : int, default=10000
        L-BFGS-B iterations.
    tol : float, default=1e-8
        L-BFGS-B ``ftol`` (``gtol`` is tol/100).
    random_state : None, int or numpy Generator, default=None
        Used by the median heuristic when n > 1000 (random subset) and to draw the Nyström
        landmarks.
    n_components : int or None, default=None
        None: the exact model; an integer r: Nyström features of r landmarks, as in
        :class:`~manytask.itl.InfiniteQuantileRegressor`.
    ridge : float, default=1e-3
        Weight ρ >= 0 of the small ridge ρ/2 ‖h‖²_{H_K} added to the L2,1 penalty (see the
        module); 0 is problem (16) as printed. Fixed: it only makes the problem well posed
        between the anchors, relative to the L2,1 weight ½.
    quadrature : {"gauss-lobatto", "gauss-legendre", "sobol"}, default="gauss-lobatto"
        Rule of the anchors on [ε, 1]; Gauss–Lobatto has ε and 1 among its nodes.

    Attributes
    ----------
    anchors_, weights_ : arrays of shape (m,)
        Quadrature of the levels on [ε, 1].
    model_ : DecomposableModel
        Gram factors and predictions of h; ``alpha_`` (n, m) its coefficients.
    offset_coef_ : array of shape (m,)
        c of t(θ) = Σ_j c_j k_b(θ, θ_j).
    offset_ : float
        t(0.1), the offset of the default level: ``decision_function(X)`` is
        ``score_samples(X) − offset_`` (NaN when ε > 0.1).
    objective_ : float
        The minimised objective; ``n_iter_`` the L-BFGS-B iterations, ``converged_``
        whether L-BFGS-B met its tolerance within ``max_iter``.
    n_components_ : int
        Rank r of the input features the fit used; ``params_`` the packed [vec A, 0, −c].
    selected_input_bandwidth_ : float
        With ``input_bandwidth=None`` (and no ``input_kernel``): the chosen bandwidth;
        ``selected_lambda_`` is then ``lambda_``.
    cv_risks_ : array of shape (len(BANDWIDTH_FACTORS), 1)
        With ``input_bandwidth=None``: the held-out calibration gap of each bandwidth.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
    >>> model.predict(X[:4], theta=0.5).shape
    (4,)
    """

    def __init__(
        self,
        lambda_=1e-4,
        epsilon=0.05,
        n_anchors=None,
        input_kernel=None,
        input_bandwidth=None,
        theta_bandwidth=0.2,
        kappa=1e-3,
        max_iter=10000,
        tol=1e-8,
        random_state=None,
        n_components=None,
        ridge=1e-3,
        quadrature="gauss-lobatto",
    ):
        self.lambda_ = lambda_
        self.ridge = ridge
        self.quadrature = quadrature
        self.epsilon = epsilon
        self.n_anchors = n_anchors
        self.input_kernel = input_kernel
        self.input_bandwidth = input_bandwidth
        self.theta_bandwidth = theta_bandwidth
        self.kappa = kappa
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_components = n_components

    def _check_epsilon(self):
        return check_probability(self.epsilon, "epsilon")

    @unchanged_on_error
    def fit(self, X, y=None):
        """Fit the level sets of every θ ∈ [ε, 1] at once on X; ``y`` is ignored.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Training inputs, n >= 2.
        y : None
            Ignored.

        Returns
        -------
        self
            Fitted.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
        >>> model.anchors_.round(3).tolist()  # Gauss–Lobatto on [ε, 1]: both ends
        [0.05, 0.313, 0.737, 1.0]
        """
        lambda_ = check_positive(self.lambda_, "lambda_")
        kappa = check_positive(self.kappa, "kappa", strict=False)
        theta_bandwidth = check_bandwidth(self.theta_bandwidth, "theta_bandwidth")
        median = isinstance(self.input_bandwidth, str) and self.input_bandwidth == "median"
        bandwidth = None if median else self.input_bandwidth
        check_bandwidth(bandwidth, "input_bandwidth", allow_none=True)
        epsilon = self._check_epsilon()
        max_iter = check_int(self.max_iter, "max_iter")
        tol = check_positive(self.tol, "tol")
        ridge = check_positive(self.ridge, "ridge", strict=False)
        X = validate_X(self, X, dtype=np.float64)
        check_two_samples(X)
        X_standardised = self._standardise_X(X)
        quadrature = self._default_anchors(
            len(X), self.n_anchors, (epsilon, 1.0), rule=self.quadrature
        )
        self.anchors_, self.weights_ = quadrature.anchors, quadrature.weights
        anchors, weights = quadrature.anchors, quadrature.weights
        whitening = {"level_weights": weights, "ridge": ridge} if ridge > 0 else {}
        for name in SELECTION_ATTRIBUTES:
            self.__dict__.pop(name, None)  # none left from an earlier fit

        def whiten(input_kernel):
            model = DecomposableModel(input_kernel, RBF(theta_bandwidth), RBF(theta_bandwidth))
            return self._precompute(
                model, X_standardised, anchors, self.n_components, slopes=False, **whitening
            )

        def data_term(_):
            return one_class_risk(anchors, weights, kappa)

        def penalty(lambda_):
            return level_set_penalty(weights, lambda_, ridge)

        levels = score_levels(epsilon)

        def score(held_out, params, _):  # the θ-property between the anchors too
            decision = _decision_at_levels(held_out, params, levels)
            return calibration_gap(decision, levels, np.ones(len(levels)))

        choosing = not median and bandwidth is None and self.input_kernel is None
        if choosing and len(X) >= 2 * HOLDOUT_FOLDS:
            _, bandwidth = choose(
                self, X_standardised, None, whiten, data_term, penalty, score, max_iter,
                (lambda_,), BANDWIDTH_FACTORS,
            )  # fmt: skip
        input_kernel = self._input_kernel(
            X_standardised, self.input_kernel, bandwidth, self.random_state
        )
        whitened = whiten(input_kernel)
        model, data_term, penalty = whitened.model, data_term(None), penalty(lambda_)
        self._fit_model(model, data_term, penalty, max_iter, tol, whitened)
        alpha, _, bias = model.unpack(self.params_)
        self.alpha_, self.offset_coef_ = alpha, -bias
        self.offset_ = self.offset(DEFAULT_THETA) if epsilon <= DEFAULT_THETA else np.nan
        return self

    def _check_levels(self, theta):
        return check_range(theta, "theta", self._check_epsilon(), 1.0)

    def score_samples(self, X, theta=DEFAULT_THETA):
        """h(x)(θ): larger inside the level sets (shapes as in :meth:`decision_function`).

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        theta : float or array-like of k floats in [ε, 1], default=0.1
            Level(s).

        Returns
        -------
        ndarray of shape (N,) or (N, k)
            h(x)(θ).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
        >>> model.score_samples(X[:3], theta=[0.1, 0.5]).shape
        (3, 2)
        """
        levels = self._check_levels(theta)
        X = self._transform_X(self._validate_test_data(X))
        no_beta, no_bias = np.zeros_like(self.alpha_), np.zeros_like(self.offset_coef_)
        values = self.model_.predict(self.alpha_, no_beta, no_bias, X=X, theta=levels.reshape(-1))
        return values[:, 0] if levels.ndim == 0 else values

    def offset(self, theta=DEFAULT_THETA):
        """t(θ), the offset of level θ: decision_function = score_samples − offset.

        Parameters
        ----------
        theta : float or array-like of k floats in [ε, 1], default=0.1
            Level(s).

        Returns
        -------
        float or ndarray of shape (k,)
            t(θ) = Σ_j c_j k_b(θ, θ_j).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
        >>> model.offset() == model.offset_, model.offset([0.2, 0.4]).shape
        (True, (2,))
        """
        check_is_fitted(self)
        levels = self._check_levels(theta)
        flat = levels.reshape(-1)
        offset = self.model_.bias_kernel(flat[:, None], self.anchors_[:, None]) @ self.offset_coef_
        return float(offset[0]) if levels.ndim == 0 else offset

    def decision_function(self, X, theta=DEFAULT_THETA):
        """h(x)(θ) − t(θ): negative for outliers of level θ ∈ [ε, 1] (default 0.1).

        A scalar ``theta`` gives shape (N,); an array of k levels gives (N, k).

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        theta : float or array-like of k floats in [ε, 1], default=0.1
            Level(s).

        Returns
        -------
        ndarray of shape (N,) or (N, k)
            h(x)(θ) − t(θ).

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
        >>> np.allclose(model.decision_function(X), model.score_samples(X) - model.offset_)
        True
        """
        return self.score_samples(X, theta) - self.offset(theta)

    def predict(self, X, theta=DEFAULT_THETA):
        """+1 for inliers, −1 for outliers of level θ (shapes as in :meth:`decision_function`).

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        theta : float or array-like of k floats in [ε, 1], default=0.1
            Level(s).

        Returns
        -------
        ndarray of shape (N,) or (N, k)
            The labels, +1 or −1.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
        >>> sorted(set(model.predict(X, theta=0.5).tolist()))
        [-1, 1]
        """
        return np.where(self.decision_function(X, theta) < 0, -1, 1)

    def fit_predict(self, X, y=None, theta=DEFAULT_THETA):
        """Fit on X, then +1/−1 labels of X at level(s) θ; ``y`` is ignored.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Training inputs.
        y : None
            Ignored.
        theta : float or array-like of k floats in [ε, 1], default=0.1
            Level(s).

        Returns
        -------
        ndarray of shape (n,) or (n, k)
            The labels of X, +1 or −1.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0)
        >>> model.fit_predict(X, theta=[0.2, 0.8]).shape
        (20, 2)
        """
        return self.fit(X).predict(X, theta)

    def score(self, X, y=None):
        """Minus the mean |fraction of outliers of X at θ − θ| over θ = 0.1, 0.2, …, 0.9.

        The θ-property on (held-out) data: 0 is perfectly calibrated level sets, so
        ``GridSearchCV`` can tune the bandwidths and λ on it. ``y`` is ignored.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs (held out).
        y : None
            Ignored.

        Returns
        -------
        float
            At most 0.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> model = InfiniteLevelSetEstimator(n_anchors=4, random_state=0).fit(X)
        >>> -1 <= model.score(X) <= 0
        True
        """
        levels = score_levels(self._check_epsilon())
        return -calibration_gap(self.decision_function(X, levels), levels, np.ones(len(levels)))
