"""Whitened (feature-space) coordinates of the decomposable model, exact or Nyström low-rank.

:class:`~manytask.itl.model.DecomposableModel` is parametrised by coefficients (A, B, c), in
which the ridge penalty is tr(Aᵀ K_X A K_Θ) + … : a quadratic form whose Hessian is the
Kronecker product K_X ⊗ M of two Gram matrices, both ill-conditioned for Gaussian kernels, so
L-BFGS-B converges slowly there. :class:`WhitenedModel` optimises the same problem in
coordinates where that quadratic form is the identity.

Input side. With landmarks z_1 … z_r and K_Z = k_X(Z, Z) = U S Uᵀ (eigenvalues below
``rtol`` × the largest dropped), the features φ(x) = k_X(x, Z) U S^{-1/2} satisfy
φ(x)ᵀφ(x') = k_X(x, Z) K_Z⁺ k_X(Z, x') — the Nyström approximation of k_X, exact on the span
of k_X(·, z_l). With Z = X the training features are Φ = U S^{1/2}, so Φ Φᵀ = K_X. The exact
estimators do better than an O(n³) eigendecomposition: :func:`pivoted_cholesky` picks as
landmarks the r pivots after which every residual variance is below ``rtol`` (r is the
numerical rank of K_X, often ≪ n), and Φ = L = K_XZ L_ZZ^{-T} (Φ Φᵀ = K_X to float precision,
O(n r²) time, O(n r) memory).

θ side. The functions k_Θ(·, θ_j) and ∂₂k_Θ(·, θ_j) (j = 1 … m) have the joint Gram matrix
M = [[K_Θ, D], [Dᵀ, E]] (notation of :meth:`DecomposableModel.precompute`); with
M = Q Λ Qᵀ, Ψ = Q Λ^{1/2} (2m × q) holds their whitened evaluations: the first m rows Ψ_h are
the values at the anchors, the last m rows Ψ_s the θ-slopes. The bias kernel k_b is whitened
the same way (Ψ_b, and Ψ_bs for its slopes).

With [A B] = P V Λ^{-1/2} Qᵀ on the landmarks, P the input map (U S^{-1/2}, or L_ZZ^{-T}
after a pivoted Cholesky), and c = Q_b Λ_b^{-1/2} v (:meth:`to_coefficients`),

    H = Φ V Ψ_hᵀ + 1 (Ψ_b v)ᵀ,   ∂_θH = Φ V Ψ_sᵀ + 1 (Ψ_bs v)ᵀ,
    ‖f‖² = ‖V‖²_F,               ‖b‖² = ‖v‖²,

so the ridge penalty has Hessian λI, the parameters shrink from 2nm + m to r q + q_b, and one
objective costs O(n r q + n q m) instead of O(n² m). Directions with eigenvalues below
``rtol`` × the largest would need coefficients of size ~ 1/√(eigenvalue) to change a
prediction, which the penalty forbids; dropping them leaves the optimum unchanged to the
optimiser's tolerance. The class has the methods of :class:`DecomposableModel` that the data
terms and penalties of :mod:`~manytask.itl._estimator` call (``predict``, ``predict_dtheta``,
``backward``, ``rkhs_norm2``, …), with V in place of A and ``None`` in place of B.
What does not live here: the losses, the estimators and the L-BFGS-B call.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.linalg import eigh, lapack, solve_triangular
from scipy.sparse.linalg import eigsh
from threadpoolctl import threadpool_limits

from .._validation import as_finite_array, as_points
from .blockwise import blas_threads, nystrom_features

__all__ = ["WhitenedModel", "pivoted_cholesky", "psd_factor"]

#: Eigenvalues below RTOL × the largest are dropped (about 50 × float64 resolution).
RTOL = 1e-14
#: Up to this many points :func:`pivoted_cholesky` forms the Gram matrix (8 n² bytes) and
#: factorises it with LAPACK's blocked dpstrf; beyond, column by column in O(n r) memory.
DENSE_CHOLESKY_MAX = 5000


def _largest_eigenvalue(gram):
    """λ_max of a symmetric matrix: Lanczos (O(n²) per step) beyond 100 rows, else eigh."""
    if len(gram) <= 100:
        return float(eigh(gram, eigvals_only=True)[-1])
    return float(eigsh(gram, k=1, which="LA", return_eigenvectors=False)[0])


def psd_factor(gram, rtol=RTOL):
    """(U, s): the eigenpairs of a PSD matrix with eigenvalue > ``rtol`` × the largest.

    ``U * s`` @ ``U.T`` approximates ``gram``; ``U / sqrt(s)`` whitens it.

    Parameters
    ----------
    gram : array of shape (n, n)
        A symmetric positive semi-definite matrix.
    rtol : float
        Relative eigenvalue cut-off.

    Returns
    -------
    U : ndarray of shape (n, k)
        Orthonormal eigenvectors of the k kept eigenvalues.
    s : ndarray of shape (k,)
        Those eigenvalues, increasing.

    Examples
    --------
    >>> U, s = psd_factor(np.array([[2.0, 0.0], [0.0, 0.0]]))
    >>> U.shape, s.tolist()
    ((2, 1), [2.0])
    """
    gram = as_finite_array(gram, "gram", ndim=2)
    # Single-threaded BLAS: these factorisations are too small for threads to pay off.
    with threadpool_limits(limits=1, user_api="blas"):
        top = _largest_eigenvalue(gram)
        if top <= 0:
            return np.zeros((len(gram), 0)), np.zeros(0)
        # Only the eigenpairs above the cut-off (MRRR): cheaper than a full eigh when the
        # numerical rank is small, as for Gaussian kernels on few features.
        eigenvalues, eigenvectors = eigh(gram, driver="evr", subset_by_value=(rtol * top, np.inf))
    return eigenvectors, eigenvalues


def pivoted_cholesky(kernel, X, rtol=RTOL, max_dense=DENSE_CHOLESKY_MAX):
    """(pivots, L) with k_X(X, X) ≈ L Lᵀ, stopping when every residual variance ≤ rtol × max.

    Greedy pivoting on the largest residual diagonal (Harbrecht et al., 2012). The residual
    K − L Lᵀ is PSD with diagonal ≤ ``rtol`` × max k(x, x), and L = K[:, P] L_PP^{-T}
    (L_PP = L[P], lower triangular in pivot order): the Nyström features of the landmarks
    X[P], so the exact model is the Nyström model on the pivots. Up to ``max_dense`` points
    the n × n Gram matrix is formed and LAPACK's blocked ``dpstrf`` does the same greedy
    pivoting; beyond, r kernel columns are computed one by one: O(n r²) time, O(n r) memory.

    Parameters
    ----------
    kernel : Kernel
        k_X.
    X : array of shape (n, d)
        The points.
    rtol : float
        Stop once every residual variance is at most ``rtol`` × max k(x, x).
    max_dense : int
        Up to this many points, form the Gram matrix and call ``dpstrf``.

    Returns
    -------
    pivots : ndarray of int, shape (r,)
        The landmarks, in pivot order.
    L : ndarray of shape (n, r)
        The factor, with L[pivots] lower triangular.

    Examples
    --------
    >>> from manytask.kernels import RBF
    >>> X = np.linspace(0, 1, 50)[:, None]
    >>> pivots, L = pivoted_cholesky(RBF(0.5), X)
    >>> bool(np.allclose(L @ L.T, RBF(0.5)(X, X), atol=1e-12)), len(pivots) < 50
    (True, True)
    """
    n = len(X)
    if 0 < n <= max_dense:
        return _dense_pivoted_cholesky(kernel(X, X), rtol)
    residual = np.array(kernel.diag(X), dtype=float)
    top = float(residual.max()) if n else 0.0
    capacity = min(n, 64)
    factor = np.zeros((n, capacity))
    pivots = []
    while len(pivots) < n and top > 0:
        pivot = int(np.argmax(residual))
        if residual[pivot] <= rtol * top:
            break
        rank = len(pivots)
        if rank == capacity:
            capacity = min(n, 2 * capacity)
            factor = np.hstack([factor, np.zeros((n, capacity - rank))])
        column = kernel(X, X[pivot : pivot + 1])[:, 0] - factor[:, :rank] @ factor[pivot, :rank]
        column /= np.sqrt(residual[pivot])
        pivots.append(pivot)
        column[pivots] = column[pivots] * (np.arange(len(pivots)) == rank)  # exact zeros
        factor[:, rank] = column
        residual -= column * column
        residual[pivots] = 0.0
    return np.array(pivots, dtype=int), factor[:, : len(pivots)]


def _dense_pivoted_cholesky(gram, rtol):
    """:func:`pivoted_cholesky` of a formed Gram matrix by LAPACK's ``dpstrf``."""
    top = float(np.max(np.diag(gram)))
    if top <= 0:
        return np.zeros(0, dtype=int), np.zeros((len(gram), 0))
    # dpstrf stops when the largest residual diagonal is <= tol, as the loop does; it returns
    # Pᵀ K P = L Lᵀ with the permutation P as 1-based indices (row k of L is point perm[k]).
    lower, permutation, rank, _ = lapack.dpstrf(gram, tol=rtol * top, lower=1, overwrite_a=1)
    permutation = permutation - 1
    factor = np.empty((len(gram), rank))
    factor[permutation] = np.tril(lower[:, :rank])
    return permutation[:rank], factor


class WhitenedModel:
    """The model of a :class:`DecomposableModel` in whitened coordinates (V, v) (see module).

    Parameters
    ----------
    model : DecomposableModel
        Precomputed on the landmarks Z (the training inputs themselves for the exact model)
        and the anchors.
    X : array of shape (n, d) or None
        The training inputs where the data term is evaluated; ``None`` means Z (exact model:
        Φ = U S^{1/2}, no k_X(X, Z) needed).
    slopes : bool, default=True
        Whether the span has the ∂₂k_Θ (β) terms of Prop. 3.1; ∞-DLSE (Prop. 3.2) has not.
    level_weights : array of shape (m,) or None, default=None
        For ∞-DLSE, whose penalty is Σ_j w_j ‖f(·)(θ_j)‖² (eq. 12) rather than ‖f‖²: the
        θ-coordinates are rotated and scaled (V = V' R) so that this penalty, plus
        ``ridge`` ‖f‖²_{H_K}, is ‖V'‖². Needs ``slopes=False``.
    rtol : float, default=1e-14
        Relative eigenvalue cut-off of :func:`psd_factor`.
    cholesky : tuple (pivots, L) or None, default=None
        The output of :func:`pivoted_cholesky` on X, with ``model`` precomputed on
        X[pivots] (in pivot order): then Φ = L and no eigendecomposition of K_Z is needed.
    ridge : float, default=0.0
        With ``level_weights``: the weight ρ >= 0 of ‖f‖² whitened along with the L2,1
        penalty. ρ > 0 bounds the scaling of the θ-coordinates by 1/√ρ.
    dtype : numpy dtype, default=float64
        Of the features Φ. float32 (∞-QR's large-n path) halves their memory and the time
        of the products with n rows (Φ V and Φᵀ G, computed in float32); everything else
        stays float64.

    Examples
    --------
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.kernels import RBF
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> model = DecomposableModel(RBF(0.5), RBF(0.3)).precompute(X, np.array([0.25, 0.75]))
    >>> whitened = WhitenedModel(model)
    >>> V, _, _ = whitened.unpack(np.ones(whitened.n_params))
    >>> alpha, beta, _ = whitened.to_coefficients(V)
    >>> bool(np.allclose(whitened.predict(V), model.predict(alpha, beta)))
    True
    """

    def __init__(
        self,
        model,
        X=None,
        slopes=True,
        level_weights=None,
        rtol=RTOL,
        cholesky=None,
        ridge=0.0,
        dtype=np.float64,
    ):
        if level_weights is not None and slopes:
            raise ValueError("level_weights needs slopes=False (the ∞-DLSE span)")
        self.model = model
        self.slopes = slopes
        n_theta = model.n_anchors
        if cholesky is not None:
            # Φ = L = K_XZ L_ZZ^{-T} from pivoted_cholesky, landmarks Z = X[pivots] in order.
            pivots, self.features_ = cholesky
            self.pivot_factor_ = self.features_[pivots]  # L_ZZ: input map L_ZZ^{-T}
            self.input_map_ = None
        else:
            U, s = psd_factor(model.gram_x_, rtol)
            self.input_map_ = U / np.sqrt(s)  # φ(x) = k_X(x, Z) U S^{-1/2}
            self.pivot_factor_ = None
            if X is None:
                self.features_ = U * np.sqrt(s)
            else:
                X = as_points(X, "X", n_features=model.X_.shape[1])
                self.features_ = nystrom_features(
                    model.input_kernel, X, model.X_, self.input_map_, dtype=dtype,
                    workers=blas_threads(),
                )  # fmt: skip
        self.features_ = self.features_.astype(dtype, copy=False)
        if slopes:
            joint = np.block(
                [[model.gram_theta_, model.dtheta_], [model.dtheta_.T, model.d2theta_]]
            )
        else:
            joint = model.gram_theta_
        Q, lam = psd_factor(0.5 * (joint + joint.T), rtol)
        self.theta_map_ = Q / np.sqrt(lam)  # [A B] = input_map V theta_mapᵀ
        theta_features = Q * np.sqrt(lam)
        self.theta_values_ = theta_features[:n_theta]
        self.theta_slopes_ = theta_features[n_theta:] if slopes else None
        self.rotation_ = None
        if level_weights is not None:
            # Whiten Σ_j w_j ‖f(·)(θ_j)‖² + ρ‖f‖² = tr(V (Ψ_hᵀ W Ψ_h + ρ I) Vᵀ): V = V' R.
            level_weights = as_finite_array(level_weights, "level_weights", ndim=1)
            gram = (self.theta_values_.T * level_weights) @ self.theta_values_
            P, sigma = psd_factor(gram + ridge * np.eye(len(gram)), rtol)
            self.rotation_ = (P / np.sqrt(sigma)).T
            self.theta_map_ = self.theta_map_ @ self.rotation_.T
            self.theta_values_ = self.theta_values_ @ self.rotation_.T
        if model.bias_kernel is not None:
            Qb, lam_b = psd_factor(model.gram_bias_, rtol)
            self.bias_map_ = Qb / np.sqrt(lam_b)  # c = bias_map v
            self.bias_values_ = Qb * np.sqrt(lam_b)
            self.bias_slopes_ = model.dbias_first_ @ self.bias_map_
        else:
            self.bias_map_ = self.bias_values_ = self.bias_slopes_ = None

    @property
    def shape(self):
        """(r, q): input and θ ranks, the shape of V.

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> whitened.shape  # r = 5 points, q = 2 anchors × (value, slope)
        (5, 4)
        """
        return self.features_.shape[1], self.theta_values_.shape[1]

    @property
    def n_samples(self) -> int:
        """n, the number of training points.

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> whitened.n_samples
        5
        """
        return self.features_.shape[0]

    @property
    def n_anchors(self) -> int:
        """m, the number of anchors θ_j.

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> whitened.n_anchors
        2
        """
        return self.theta_values_.shape[0]

    @property
    def n_params(self) -> int:
        """r q, plus q_b with a bias: the length of :meth:`pack`'s vector.

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> whitened.n_params  # 5 × 4 + 2
        22
        """
        r, q = self.shape
        return r * q + (0 if self.bias_map_ is None else self.bias_map_.shape[1])

    @property
    def anchors_(self):
        """The anchors θ_j of the model.

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> whitened.anchors_
        array([0.25, 0.75])
        """
        return self.model.anchors_

    def rows(self, rows):
        """The same model seen at the training points ``rows`` only (same coordinates V, v).

        A shallow copy whose features are Φ[rows] (a view for a slice): the data term of a
        block of rows, or of a fold (:mod:`~manytask.itl.selection`).

        Parameters
        ----------
        rows : slice or array of int
            The training points kept.

        Returns
        -------
        WhitenedModel

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> block = whitened.rows(slice(1, 3))
        >>> bool(np.array_equal(block.predict(V, None, v), whitened.predict(V, None, v)[1:3]))
        True
        """
        restricted = copy.copy(self)
        restricted.features_ = self.features_[rows]
        restricted.__dict__.pop("_projection", None)
        return restricted

    # ------------------------------------------------------------- packing
    def pack(self, alpha, beta=None, bias=None):
        """[vec V, v]; ``beta`` must be ``None`` (B is folded into V).

        Parameters
        ----------
        alpha : array of shape (r, q)
            V.
        beta : None
            Unused: B is folded into V.
        bias : array of shape (q_b,) or None
            v; ignored without bias.

        Returns
        -------
        ndarray of shape (n_params,)

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> np.array_equal(whitened.pack(V, None, v), np.ones(22))
        True
        """
        parts = [np.asarray(alpha, dtype=float).ravel()]
        if self.bias_map_ is not None:
            parts.append(np.asarray(bias, dtype=float))
        return np.concatenate(parts)

    def unpack(self, params):
        """(V, None, v) from :meth:`pack`'s vector; v is ``None`` without bias.

        Parameters
        ----------
        params : array of shape (n_params,)
            The packed parameters.

        Returns
        -------
        V : ndarray of shape (r, q)
        beta : None
        v : ndarray of shape (q_b,) or None

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> V.shape, v.shape
        ((5, 4), (2,))
        """
        r, q = self.shape
        params = np.asarray(params, dtype=float)
        if params.shape != (self.n_params,):
            raise ValueError(
                f"params must have length n_params = {self.n_params}, got {params.shape}"
            )
        bias = None if self.bias_map_ is None else params[r * q :]
        return params[: r * q].reshape(r, q), None, bias

    def to_coefficients(self, alpha, bias=None):
        """(A, B, c) of the :class:`DecomposableModel` on the landmarks (B = 0 without slopes).

        Parameters
        ----------
        alpha : ndarray of shape (r, q)
            V.
        bias : ndarray of shape (q_b,) or None
            v, or None without bias.

        Returns
        -------
        A, B : ndarray of shape (r, m)
            The coefficients of k_Θ(·, θ_j) and ∂₂k_Θ(·, θ_j) on the landmarks.
        c : ndarray of shape (m,) or None
            The bias coefficients.

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> A, B, c = whitened.to_coefficients(V, v)
        >>> bool(np.allclose(whitened.predict(V, None, v), model.predict(A, B, c)))
        True
        """
        theta_side = alpha @ self.theta_map_.T
        if self.input_map_ is None:  # L_ZZ^{-T} (V Θᵀ) by one triangular solve, O(r² q)
            both = solve_triangular(self.pivot_factor_, theta_side, lower=True, trans="T")
        else:
            both = self.input_map_ @ theta_side
        m = self.n_anchors
        beta = both[:, m:] if self.slopes else np.zeros_like(both)
        coefficients = bias if bias is None else self.bias_map_ @ bias
        return both[:, :m], beta, coefficients

    # --------------------------------------------------------- predictions
    def _projected(self, alpha):
        """Φ V, kept for the next call with the same ``alpha`` object (a data term asks for
        the values and then the slopes of the same V: one n × r × q product, not two)."""
        kept = self.__dict__.get("_projection")
        if kept is None or kept[0] is not alpha:
            kept = (alpha, self.features_ @ alpha.astype(self.features_.dtype, copy=False))
            self._projection = kept
        return kept[1]

    def predict(self, alpha, beta=None, bias=None):
        """H = Φ V Ψ_hᵀ + 1 (Ψ_b v)ᵀ at the training points and anchors.

        Parameters
        ----------
        alpha : ndarray of shape (r, q)
            V.
        beta : None
            Unused (B is folded into V); for the signature of :class:`DecomposableModel`.
        bias : ndarray of shape (q_b,) or None
            v, or None without bias.

        Returns
        -------
        H : ndarray of shape (n, m)
            h(x_i)(θ_j).

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> whitened.predict(V, None, v).shape
        (5, 2)
        """
        values = self._projected(alpha) @ self.theta_values_.T
        if bias is not None:
            values += (self.bias_values_ @ bias)[None, :]
        return values

    def predict_dtheta(self, alpha, beta=None, bias=None):
        """∂_θH = Φ V Ψ_sᵀ + 1 (Ψ_bs v)ᵀ (needs ``slopes=True``).

        Parameters
        ----------
        alpha : ndarray of shape (r, q)
            V.
        beta : None
            Unused (B is folded into V); for the signature of :class:`DecomposableModel`.
        bias : ndarray of shape (q_b,) or None
            v, or None without bias.

        Returns
        -------
        ndarray of shape (n, m)
            ∂_θ h(x_i)(θ_j).

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> A, B, c = whitened.to_coefficients(V, v)
        >>> bool(np.allclose(whitened.predict_dtheta(V, None, v), model.predict_dtheta(A, B, c)))
        True
        """
        if not self.slopes:
            raise ValueError("predict_dtheta needs a WhitenedModel with slopes=True")
        values = self._projected(alpha) @ self.theta_slopes_.T
        if bias is not None:
            values += (self.bias_slopes_ @ bias)[None, :]
        return values

    def backward(self, grad_values, grad_slopes=None):
        """(∂L/∂V, None, ∂L/∂v) = (Φᵀ (G Ψ_h + G' Ψ_s), None, Ψ_bᵀ G1 + Ψ_bsᵀ G'1).

        Parameters
        ----------
        grad_values : ndarray of shape (n, m)
            G = ∂L/∂H.
        grad_slopes : ndarray of shape (n, m) or None
            G' = ∂L/∂(∂_θH), if L depends on the slopes.

        Returns
        -------
        dV : ndarray of shape (r, q)
        dbeta : None
        dv : ndarray of shape (q_b,) or None

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> G = np.ones((5, 2))  # H is linear in (V, v): ⟨G, H⟩ = ⟨dV, V⟩ + ⟨dv, v⟩
        >>> dV, _, dv = whitened.backward(G)
        >>> bool(np.isclose(np.sum(G * whitened.predict(V, None, v)), np.sum(dV * V) + dv @ v))
        True
        """
        theta_side = grad_values @ self.theta_values_
        grad_bias = None
        if self.bias_map_ is not None:
            grad_bias = self.bias_values_.T @ grad_values.sum(axis=0)
        if grad_slopes is not None:
            theta_side += grad_slopes @ self.theta_slopes_
            if grad_bias is not None:
                grad_bias += self.bias_slopes_.T @ grad_slopes.sum(axis=0)
        grad_alpha = self.features_.T @ theta_side.astype(self.features_.dtype, copy=False)
        return grad_alpha.astype(np.float64, copy=False), None, grad_bias

    def bias_values(self, bias):
        """b(θ_j) = (Ψ_b v)_j at the anchors.

        Parameters
        ----------
        bias : ndarray of shape (q_b,)
            v.

        Returns
        -------
        ndarray of shape (m,)

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> whitened.bias_values(v).shape
        (2,)
        """
        return self.bias_values_ @ bias

    def bias_backward(self, grad):
        """∂L/∂v from ∂L/∂b(θ_j): Ψ_bᵀ g.

        Parameters
        ----------
        grad : ndarray of shape (m,)
            g = ∂L/∂b(θ_j).

        Returns
        -------
        ndarray of shape (q_b,)

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> g = np.array([1.0, -1.0])  # b is linear in v: ⟨g, b⟩ = ⟨Ψ_bᵀ g, v⟩
        >>> bool(np.isclose(g @ whitened.bias_values(v), whitened.bias_backward(g) @ v))
        True
        """
        return self.bias_values_.T @ grad

    def bias_dtheta(self, bias):
        """b'(θ_j) = (Ψ_bs v)_j at the anchors (needs ``slopes=True``).

        Parameters
        ----------
        bias : ndarray of shape (q_b,)
            v.

        Returns
        -------
        ndarray of shape (m,)

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> whitened.bias_dtheta(v).shape
        (2,)
        """
        return self.bias_slopes_ @ bias

    def bias_dtheta_backward(self, grad):
        """∂L/∂v from ∂L/∂b'(θ_j): Ψ_bsᵀ g.

        Parameters
        ----------
        grad : ndarray of shape (m,)
            g = ∂L/∂b'(θ_j).

        Returns
        -------
        ndarray of shape (q_b,)

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> g = np.array([1.0, -1.0])
        >>> bool(np.isclose(g @ whitened.bias_dtheta(v), whitened.bias_dtheta_backward(g) @ v))
        True
        """
        return self.bias_slopes_.T @ grad

    # ---------------------------------------------------------------- norms
    def rkhs_norm2(self, alpha, beta=None):
        """‖f‖²_{H_K} = ‖V‖²_F (‖V R‖²_F with ``level_weights``).

        Parameters
        ----------
        alpha : ndarray of shape (r, q)
            V.
        beta : None
            Unused (B is folded into V); for the signature of :class:`DecomposableModel`.

        Returns
        -------
        float

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> A, B, _ = whitened.to_coefficients(V)
        >>> whitened.rkhs_norm2(V), bool(np.isclose(model.rkhs_norm2(A, B), 20.0))
        (20.0, True)
        """
        coordinates = alpha if self.rotation_ is None else alpha @ self.rotation_
        return float(np.sum(coordinates * coordinates))

    def rkhs_norm2_grad(self, alpha, beta=None):
        """The gradient of :meth:`rkhs_norm2` in V: 2V (2 V R Rᵀ with ``level_weights``), and None.

        Parameters
        ----------
        alpha : ndarray of shape (r, q)
            V.
        beta : None
            Unused (B is folded into V); for the signature of :class:`DecomposableModel`.

        Returns
        -------
        dV : ndarray of shape (r, q)
        dbeta : None

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> bool(np.array_equal(whitened.rkhs_norm2_grad(V)[0], 2 * V))
        True
        """
        if self.rotation_ is None:
            return 2.0 * alpha, None
        return 2.0 * (alpha @ self.rotation_) @ self.rotation_.T, None

    def bias_norm2(self, bias):
        """‖b‖²_{H_kb} = ‖v‖².

        Parameters
        ----------
        bias : ndarray of shape (q_b,)
            v.

        Returns
        -------
        float

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> whitened.bias_norm2(v)
        2.0
        """
        return float(bias @ bias)

    def bias_norm2_grad(self, bias):
        """The gradient 2v of :meth:`bias_norm2`.

        Parameters
        ----------
        bias : ndarray of shape (q_b,)
            v.

        Returns
        -------
        ndarray of shape (q_b,)

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> whitened = WhitenedModel(model)
        >>> V, _, v = whitened.unpack(np.ones(whitened.n_params))
        >>> whitened.bias_norm2_grad(v)
        array([2., 2.])
        """
        return 2.0 * bias

    def level_norm2(self, alpha, beta, weights):
        """(Σ_j w_j ‖f(·)(θ_j)‖²_{H_kX}, gradient in V, None): with C = V Ψ_hᵀ, Σ_j w_j ‖C_j‖².

        f(·)(θ_j) = Σ_l φ-coordinates C[:, j] in an orthonormal basis of the span of
        k_X(·, z_l), so its squared norm is ‖C[:, j]‖² (the penalty of eq. 12).

        Parameters
        ----------
        alpha : ndarray of shape (r, q)
            V.
        beta : None
            Unused (B is folded into V).
        weights : array of shape (m,)
            w_j.

        Returns
        -------
        value : float
        dV : ndarray of shape (r, q)
        dbeta : None

        Examples
        --------
        >>> from manytask.itl import DecomposableModel
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.linspace(0, 1, 5)[:, None], np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(0.5), RBF(0.3)).precompute(X, anchors)
        >>> weights = np.array([0.5, 0.5])  # whitened for this penalty, it is ‖V‖²
        >>> whitened = WhitenedModel(model, slopes=False, level_weights=weights)
        >>> V, _, _ = whitened.unpack(np.ones(whitened.n_params))
        >>> value, dV, _ = whitened.level_norm2(V, None, weights)
        >>> round(value, 9) == V.size
        True
        """
        weights = np.asarray(weights, dtype=float)
        columns = alpha @ self.theta_values_.T
        value = float(np.sum(weights[None, :] * columns * columns))
        return value, 2.0 * (columns * weights[None, :]) @ self.theta_values_, None
