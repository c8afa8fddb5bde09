"""The quantile baselines of Table 1: JQR (Sangnier et al., 2016) and IND-QR.

Both are fitted with the ∞-QR machinery of :mod:`~manytask.itl.kernel_quantile` on a *fixed* finite
set of levels τ_1 … τ_k given at construction (anchors = the levels, equal weights), without
the non-crossing term, and predict only those levels:

- :class:`JointQuantileRegressor` (JQR): the paper's special case (§3.3, "Relation to JQR") —
  the quantile measure μ = (1/k) Σ_l δ_τl, a Gaussian k_Θ coupling the levels, and an
  unpenalised intercept per level (bias kernel k_b(τ, τ') = 1{τ = τ'}, λ_b = 0), as in
  Sangnier et al.
- :class:`IndependentQuantileRegressor` (IND-QR): k_Θ(τ, τ') = 1{τ = τ'} too, so the RKHS norm
  and the pinball risk split into one kernel quantile regression per level, solved jointly
  in one L-BFGS-B run but with no coupling between levels, each with its free intercept. As
  the risk is averaged over the k levels, level l solves mean_i ℓ_τl + (k λ)/2 ‖f_l‖², i.e.
  a separate fit with λ·k.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._validation import unchanged_on_error
from ..kernels import RBF
from ._estimator import Dirac, check_bandwidth
from .kernel_quantile import DEFAULT_QUANTILES, KernelQuantileBase
from .losses import check_quantiles
from .quadrature import custom

__all__ = ["JointQuantileRegressor", "IndependentQuantileRegressor"]


class _FixedLevelsQuantileRegressor(KernelQuantileBase):
    """Kernel quantile regression at the fixed levels ``quantiles`` (no non-crossing term)."""

    def __init__(
        self,
        quantiles=DEFAULT_QUANTILES,
        lambda_=1e-3,
        lambda_b=0.0,
        input_kernel=None,
        input_bandwidth=None,
        kappa=1e-2,
        max_iter=2000,
        tol=1e-8,
        random_state=None,
    ):
        self.quantiles = quantiles
        self.lambda_ = lambda_
        self.lambda_b = lambda_b
        self.input_kernel = input_kernel
        self.input_bandwidth = input_bandwidth
        self.kappa = kappa
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _theta_kernel(self):
        raise NotImplementedError

    @unchanged_on_error
    def fit(self, X, y):
        """Fit the k levels of ``quantiles`` on (X, y); returns ``self``.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Training inputs, n >= 2.
        y : array-like of shape (n,)
            Training targets.

        Returns
        -------
        self
            Fitted, with ``quantiles_`` the levels as an array.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.itl import IndependentQuantileRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(20, 1)); y = X[:, 0] + 0.1 * rng.normal(size=20)
        >>> IndependentQuantileRegressor(quantiles=[0.2, 0.8]).fit(X, y).quantiles_.tolist()
        [0.2, 0.8]
        """
        self._check_common_params()
        levels = check_quantiles(self.quantiles)
        if np.unique(levels).size != levels.size:
            raise ValueError(f"quantiles must be distinct, got {levels.tolist()}")
        theta_kernel = self._theta_kernel()
        X, y = self._validate_training_data(X, y)
        self.quantiles_ = levels
        return self._fit_on_levels(X, y, custom(levels), theta_kernel, Dirac(), lambda_nc=0.0)

    def predict(self, X, quantiles=0.5):
        """Conditional quantiles at fitted level(s) ``quantiles``: the median by default.

        A scalar level gives shape (N,), as scikit-learn expects of ``predict``; a sequence
        of k levels gives (N, k), column l for ``quantiles[l]`` (all of them:
        ``quantiles=model.quantiles_``). Every level must be one of the fitted ``quantiles_``:
        the model is defined at those levels only.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        quantiles : float or sequence of float, default=0.5
            Fitted level(s).

        Returns
        -------
        ndarray of shape (N,) or (N, k)
            The conditional quantiles, in the units of y.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.itl import IndependentQuantileRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(20, 1)); y = X[:, 0] + 0.1 * rng.normal(size=20)
        >>> model = IndependentQuantileRegressor(quantiles=[0.2, 0.8]).fit(X, y)
        >>> model.predict(X[:3], quantiles=0.8).shape, model.predict(X[:3], [0.2, 0.8]).shape
        ((3,), (3, 2))
        """
        levels = check_quantiles(quantiles)
        check_is_fitted(self, "quantiles_")
        unknown = ~np.isin(levels, self.quantiles_)
        if np.any(unknown):
            raise ValueError(
                f"quantiles must be fitted levels {self.quantiles_.tolist()}, got "
                f"{float(levels[unknown][0])!r}; refit with it among quantiles="
            )
        values = self._predict_levels(X, levels)
        return values[:, 0] if np.ndim(quantiles) == 0 else values

    def _score_predictions(self, X):
        return self.predict(X, self.quantiles_), self.quantiles_


class JointQuantileRegressor(_FixedLevelsQuantileRegressor):
    """JQR (Sangnier et al., 2016): levels coupled by a Gaussian k_Θ, one intercept per level.

    Parameters
    ----------
    quantiles : sequence of float in (0, 1), default=(0.1, 0.3, 0.5, 0.7, 0.9)
        The fixed levels τ_l, also the anchors (equal weights).
    lambda_ : float, default=1e-3
        Ridge weight λ > 0 (standardised data).
    lambda_b : float, default=0.0
        Ridge weight λ_b >= 0 of the intercepts; 0 leaves them free, as in JQR.
    input_kernel, input_bandwidth
        As in :class:`~manytask.itl.InfiniteQuantileRegressor`.
    theta_bandwidth : float, default=0.2
        Bandwidth of the Gaussian k_Θ on the levels.
    kappa, max_iter, tol, random_state
        As in :class:`~manytask.itl.InfiniteQuantileRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(30, 1)); y = X[:, 0] + 0.1 * rng.normal(size=30)
    >>> model = JointQuantileRegressor(quantiles=[0.1, 0.5, 0.9]).fit(X, y)
    >>> model.predict(X[:2]).shape, model.predict(X[:2], quantiles=[0.1, 0.9]).shape
    ((2,), (2, 2))
    """

    def __init__(
        self,
        quantiles=DEFAULT_QUANTILES,
        lambda_=1e-3,
        lambda_b=0.0,
        input_kernel=None,
        input_bandwidth=None,
        theta_bandwidth=0.2,
        kappa=1e-2,
        max_iter=2000,
        tol=1e-8,
        random_state=None,
    ):
        super().__init__(
            quantiles=quantiles,
            lambda_=lambda_,
            lambda_b=lambda_b,
            input_kernel=input_kernel,
            input_bandwidth=input_bandwidth,
            kappa=kappa,
            max_iter=max_iter,
            tol=tol,
            random_state=random_state,
        )
        self.theta_bandwidth = theta_bandwidth

    def _theta_kernel(self):
        return RBF(check_bandwidth(self.theta_bandwidth, "theta_bandwidth"))


class IndependentQuantileRegressor(_FixedLevelsQuantileRegressor):
    """IND-QR: one kernel quantile regression per level, with no coupling (k_Θ = 1{τ = τ'}).

    Parameters
    ----------
    quantiles : sequence of float in (0, 1), default=(0.1, 0.3, 0.5, 0.7, 0.9)
        The fixed levels τ_l, also the anchors (equal weights).
    lambda_ : float, default=1e-3
        Ridge weight λ > 0 (standardised data); level l is a separate fit with λ·k.
    lambda_b : float, default=0.0
        Ridge weight λ_b >= 0 of the intercepts; 0 leaves them free.
    input_kernel, input_bandwidth, kappa, max_iter, tol, random_state
        As in :class:`~manytask.itl.InfiniteQuantileRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(30, 1)); y = X[:, 0] + 0.1 * rng.normal(size=30)
    >>> IndependentQuantileRegressor(quantiles=[0.5]).fit(X, y).predict(X[:2]).shape
    (2,)
    """

    def _theta_kernel(self):
        return Dirac()
