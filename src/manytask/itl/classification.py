"""∞-CSC: a binary classifier for every cost trade-off θ ∈ [−1, 1] from one fit.

:class:`InfiniteCostSensitiveClassifier` minimises, over the decomposable model of Prop. 3.1
(``infinite-task-learning.txt``) on standardised inputs,

    Σ_j w_j (1/n) Σ_i |½(θ_j + 1) − 1{y_i = −1}| · |1 − y_i h(x_i)(θ_j)|^κ₊     risk, eq. (4)
    + λ/2 (‖f‖²_{H_K} + ‖b‖²_{H_kb})                                          ridge, eq. (11)

with h = f + b, anchors θ_j on [−1, 1] and |·|^κ₊ the Huber-smoothed positive part of
:mod:`~manytask.itl.losses` (κ = 0 is the exact hinge). There is no non-crossing term: the
representer theorem, Prop. 3.1, applies with λ_nc = 0. The cost weight is (1 + θ)/2 on the
positive class and (1 − θ)/2 on the negative one, so θ → +1 makes errors on the positive
class expensive (high sensitivity, low specificity) and θ → −1 the reverse.

The shared L-BFGS-B machinery lives in :mod:`~manytask.itl._estimator`; the losses and the
model in their own modules.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from .._validation import (
    check_bool,
    check_int,
    check_positive,
    unchanged_on_error,
    validate_X_y,
)
from ..kernels import RBF
from ._choice import HOLDOUT_FOLDS, SELECTION_ATTRIBUTES, choose
from ._estimator import ITLEstimator, check_bandwidth, check_two_samples, ridge_penalty
from .losses import check_range, cost_sensitive_hinge, cost_sensitive_hinge_gradient
from .model import DecomposableModel

__all__ = ["InfiniteCostSensitiveClassifier", "cost_sensitive_risk"]

#: The hyperparameter interval Θ = [−1, 1] of eq. (4).
THETA_INTERVAL = (-1.0, 1.0)
#: L-BFGS-B iterations per fit of the path of ``lambda_=None`` (warm-started).
SELECTION_MAX_ITER = 30
#: λ of ``lambda_=None`` on fewer than 6 points (the earlier fixed default).
FALLBACK_LAMBDA = 1e-3


def cost_sensitive_risk(y, anchors, weights, kappa=0.0):
    """The data term of ∞-CSC: Σ_j w_j mean_i c_θj(y_i) |1 − y_i H_ij|^κ₊ (eq. 4, smoothed).

    H_ij = h(x_i)(θ_j).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels in {−1, +1}.
    anchors : array-like of shape (m,)
        θ_j in [−1, 1].
    weights : array-like of shape (m,)
        The quadrature weights w_j.
    kappa : float
        κ ≥ 0, the Huber smoothing of the hinge.

    Returns
    -------
    callable
        ``data_term(model, alpha, beta, bias) -> (risk, dH, None, None)`` for
        :func:`~manytask.itl._estimator.penalised_objective`, dH the gradient with respect to
        H.

    Examples
    --------
    >>> from manytask.itl.model import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.4)).precompute(
    ...     np.array([[0.0], [1.0]]), np.array([-0.5, 0.5]))
    >>> data_term = cost_sensitive_risk([1.0, -1.0], [-0.5, 0.5], [0.5, 0.5])
    >>> risk, dH, _, _ = data_term(model, *model.unpack(np.zeros(model.n_params)))
    >>> risk, dH.shape  # at h = 0 every hinge is 1, and c_θ(+1) + c_θ(−1) = 1
    (0.5, (2, 2))
    """
    y = np.asarray(y, dtype=float)[:, None]
    theta = np.asarray(anchors, dtype=float)[None, :]
    level_weights = np.asarray(weights, dtype=float)[None, :] / y.shape[0]

    def data_term(model, alpha, beta, bias):
        values = model.predict(alpha, beta, bias)
        risk = float(np.sum(level_weights * cost_sensitive_hinge(y, values, theta, kappa)))
        grad_values = level_weights * cost_sensitive_hinge_gradient(y, values, theta, kappa)
        return risk, grad_values, None, None

    return data_term


def _check_theta(theta):
    """θ as a float array in [−1, 1] (ValueError naming ``theta`` otherwise)."""
    return check_range(theta, "theta", *THETA_INTERVAL)


class InfiniteCostSensitiveClassifier(ClassifierMixin, ITLEstimator):
    """∞-CSC: the decision function h(x)(θ) for every cost trade-off θ ∈ [−1, 1] (eq. 4).

    The two classes are sorted as in ``classes_``; ``classes_[1]`` is the positive class
    (label +1 in eq. (4)) and ``classes_[0]`` the negative one (−1). θ close to +1 favours
    classifying the positive class well, θ close to −1 the negative class.

    Parameters
    ----------
    lambda_ : float or None, default=None
        Ridge weight λ > 0 of eq. (11), on standardised inputs. None (our default): λ from
        :data:`~manytask.itl.selection.LAMBDA_PATH` and, unless ``input_kernel`` or
        ``input_bandwidth`` is given, the bandwidth from
        :data:`~manytask.itl.selection.BANDWIDTH_FACTORS` × the median heuristic, of least
        held-out risk of eq. (4) with the exact hinge (the cost-weighted hinge integrated
        over θ, κ = 0) on a held-out third of the training set (all three thirds below 200
        points), each fit of the warm-started path stopped after :data:`SELECTION_MAX_ITER`
        iterations, then one refit on all of it (:mod:`~manytask.itl._choice`). Ours: the
        paper gives no values for ∞-CSC; λ and the bandwidth set the capacity against n
        and the class overlap, so no fixed value suits every data set (our earlier default,
        λ = 1e-3 with the median heuristic, is what the reproduction pins). Accuracy and
        cost in ``benchmarks/RESULTS.md``. With fewer than 6 points, λ =
        :data:`FALLBACK_LAMBDA`. A float: that λ, fixed.
    n_anchors : int or None, default=None
        Number m of Sobol anchors in (−1, 1); None means min(⌈√n⌉, 100).
    input_kernel : Kernel or None, default=None
        k_X on standardised inputs; None means a Gaussian (RBF) with ``input_bandwidth``.
    input_bandwidth : float or None, default=None
        Bandwidth of the default k_X; None means the median heuristic on standardised X.
    theta_bandwidth : float, default=0.4
        Bandwidth of the Gaussian k_Θ (and of the Gaussian bias kernel k_b); Θ has length 2.
        Fixed, not chosen from the data: Θ = [−1, 1] is the same for every data set.
    kappa : float, default=1e-2
        Huber smoothing κ >= 0 of the hinge; 0 is the exact, non-smooth objective. Fixed:
        it is measured against the hinge's margin 1, the same for every data set.
    bias : bool, default=True
        Add b(θ) = Σ_j c_j k_b(θ, θ_j) with a Gaussian k_b (§3, "Models with bias").
    max_iter : int, default=2000
        L-BFGS-B iterations.
    tol : float, default=1e-8
        L-BFGS-B ``ftol`` (``gtol`` is tol/100).
    random_state : None, int or numpy Generator, default=None
        Used by the median heuristic when n > 1000 (random subset) and to draw the Nyström
        landmarks.
    n_components : int or None, default=None
        None: the exact model; an integer r: Nyström features of r landmarks, as in
        :class:`~manytask.itl.InfiniteQuantileRegressor`.

    Attributes
    ----------
    classes_ : array of shape (2,)
        The labels; ``classes_[1]`` is the positive class.
    anchors_, weights_ : arrays of shape (m,)
        Quadrature of the levels on [−1, 1].
    model_ : DecomposableModel
        The fitted model; ``params_`` its packed coefficients [vec A, vec B, c].
    objective_ : float
        The minimised objective; ``n_iter_`` the L-BFGS-B iterations.
    n_components_ : int
        Rank r of the input features the fit used.
    selected_lambda_, selected_input_bandwidth_ : float
        With ``lambda_=None``: the chosen λ and bandwidth (None when ``input_kernel`` is
        given).
    cv_risks_ : array of shape (bandwidths, λ)
        With ``lambda_=None``: the held-out risk of each setting; +∞ past the first rise
        along a bandwidth's λ path (not fitted).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-1, 1, (20, 2)), rng.normal(1, 1, (20, 2))])
    >>> y = np.repeat(["healthy", "sick"], 20)
    >>> model = InfiniteCostSensitiveClassifier().fit(X, y)
    >>> model.predict(X[:2], theta=[-0.9, 0.0, 0.9]).shape
    (2, 3)
    """

    def __init__(
        self,
        lambda_=None,
        n_anchors=None,
        input_kernel=None,
        input_bandwidth=None,
        theta_bandwidth=0.4,
        kappa=1e-2,
        bias=True,
        max_iter=2000,
        tol=1e-8,
        random_state=None,
        n_components=None,
    ):
        self.lambda_ = lambda_
        self.n_anchors = n_anchors
        self.input_kernel = input_kernel
        self.input_bandwidth = input_bandwidth
        self.theta_bandwidth = theta_bandwidth
        self.kappa = kappa
        self.bias = bias
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_components = n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # eq. (4) is a binary loss
        return tags

    def _validate_labelled_data(self, X, y):
        """Finite X (n, d) with n >= 2 and exactly two classes; returns X and y in {−1, +1}."""
        X, y = validate_X_y(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        check_two_samples(X)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(
                "Only binary classification is supported: y must hold exactly 2 classes, "
                f"got {len(self.classes_)}: {self.classes_!r}"
            )
        return X, 2.0 * encoded - 1.0

    @unchanged_on_error
    def fit(self, X, y):
        """Fit the classifiers of every θ ∈ [−1, 1] at once on (X, y): eqs. (4) and (11).

        Parameters
        ----------
        X : array-like of shape (n, d)
            Finite inputs, n ≥ 2.
        y : array-like of shape (n,)
            Labels of exactly two classes.

        Returns
        -------
        InfiniteCostSensitiveClassifier
            ``self``, fitted.

        Examples
        --------
        >>> X, y = np.array([[-2.0], [-1.0], [1.0], [2.0]]), np.array([0, 0, 1, 1])
        >>> model = InfiniteCostSensitiveClassifier().fit(X, y)
        >>> model.classes_, model.anchors_.shape
        (array([0, 1]), (2,))
        """
        lambda_ = check_positive(self.lambda_, "lambda_", allow_none=True)
        kappa = check_positive(self.kappa, "kappa", strict=False)
        theta_bandwidth = check_bandwidth(self.theta_bandwidth, "theta_bandwidth")
        check_bool(self.bias, "bias")
        max_iter = check_int(self.max_iter, "max_iter")
        check_positive(self.tol, "tol")
        X, signs = self._validate_labelled_data(X, y)
        X_standardised = self._standardise_X(X)
        quadrature = self._default_anchors(len(signs), self.n_anchors, THETA_INTERVAL)
        self.anchors_, self.weights_ = quadrature.anchors, quadrature.weights
        anchors, weights = quadrature.anchors, quadrature.weights
        bias_kernel = RBF(theta_bandwidth) if self.bias else None
        for name in SELECTION_ATTRIBUTES:
            self.__dict__.pop(name, None)  # none left from an earlier fit

        def whiten(input_kernel):
            model = DecomposableModel(input_kernel, RBF(theta_bandwidth), bias_kernel)
            return self._precompute(model, X_standardised, anchors, self.n_components)

        def data_term(signs):
            return cost_sensitive_risk(signs, anchors, weights, kappa)

        def score(held_out, params, held_out_signs):  # eq. (4), exact hinge
            risk = cost_sensitive_risk(held_out_signs, anchors, weights)
            return risk(held_out, *held_out.unpack(params))[0]

        bandwidth, start = self.input_bandwidth, None
        if lambda_ is None and len(signs) >= 2 * HOLDOUT_FOLDS:
            iterations = min(SELECTION_MAX_ITER, max_iter)
            lambda_, bandwidth, start = choose(
                self, X_standardised, signs, whiten, data_term, ridge_penalty, score, iterations,
                return_start=True,
            )  # fmt: skip
            if self.n_components is not None:  # landmarks drawn anew: other coordinates
                start = None
        elif lambda_ is None:
            lambda_ = FALLBACK_LAMBDA
        input_kernel = self._input_kernel(
            X_standardised, self.input_kernel, bandwidth, self.random_state
        )
        whitened = whiten(input_kernel)
        return self._fit_model(
            whitened.model, data_term(signs), ridge_penalty(lambda_), self.max_iter, self.tol,
            whitened, start=start,
        )  # fmt: skip

    def decision_function(self, X, theta=0.0):
        """h(x)(θ): positive values predict ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Points.
        theta : float or array-like of shape (k,)
            Cost trade-offs in [−1, 1].

        Returns
        -------
        ndarray of shape (N,) for a scalar ``theta``, else (N, k)
            Column l for ``theta[l]``.

        Examples
        --------
        >>> X, y = np.array([[-2.0], [-1.0], [1.0], [2.0]]), np.array([0, 0, 1, 1])
        >>> model = InfiniteCostSensitiveClassifier().fit(X, y)
        >>> np.sign(model.decision_function([[-1.5], [1.5]]))
        array([-1.,  1.])
        >>> model.decision_function([[0.0]], theta=[-0.9, 0.9]).shape
        (1, 2)
        """
        levels = _check_theta(theta)
        X = self._transform_X(self._validate_test_data(X))
        alpha, beta, bias = self.model_.unpack(self.params_)
        values = self.model_.predict(alpha, beta, bias, X=X, theta=levels.reshape(-1))
        return values[:, 0] if levels.ndim == 0 else values

    def predict(self, X, theta=0.0):
        """Class labels at cost trade-off θ.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Points.
        theta : float or array-like of shape (k,)
            Cost trade-offs in [−1, 1].

        Returns
        -------
        ndarray of shape (N,) for a scalar ``theta``, else (N, k)
            Labels from ``classes_``; column l for ``theta[l]``.

        Examples
        --------
        >>> X, y = np.array([[-2.0], [-1.0], [1.0], [2.0]]), np.array([0, 0, 1, 1])
        >>> model = InfiniteCostSensitiveClassifier().fit(X, y)
        >>> model.predict([[-1.5], [1.5]])
        array([0, 1])
        """
        positive = self.decision_function(X, theta) > 0
        return self.classes_[positive.astype(int)]
