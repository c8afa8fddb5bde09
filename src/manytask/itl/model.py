"""The decomposable vv-RKHS model of infinite task learning (Prop. 3.1) and its gradients.

With an input kernel k_X, a kernel k_Θ on the (1-D) hyperparameter θ, training inputs
x_1 … x_n and anchors θ_1 … θ_m, Proposition 3.1 (``infinite-task-learning.txt``) puts the
minimiser of eq. (15) in the span

    h(x)(θ) = Σ_ij α_ij k_X(x, x_i) k_Θ(θ, θ_j) + Σ_ij β_ij k_X(x, x_i) ∂₂k_Θ(θ, θ_j)
              + b(θ),    b(θ) = Σ_j c_j k_b(θ, θ_j)   (optional; §3 remark "Models with bias"),

with A = (α_ij), B = (β_ij) of shape (n, m) and c of shape (m,). Everything is evaluated
through the (n × n) and (m × m) factors — the (nm × nm) Kronecker Gram matrix is never
formed. This module holds the model only: predictions, θ-derivatives, the RKHS norm, the
chain rule from gradients with respect to predictions back to (A, B, c), and the packing of
(A, B, c) into one vector for SciPy's L-BFGS-B. Losses, quadrature and estimators live in
their own modules of :mod:`manytask.itl`.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array, as_points

__all__ = ["DecomposableModel"]


def _combine(gram_x, theta_value, theta_slope, bias_features, alpha, beta, bias):
    """Σ_ij α_ij k_X(x', x_i) T[a, j] + β_ij k_X(x', x_i) S[a, j] + Σ_j c_j P[a, j].

    In matrix form (Prop. 3.1) ``gram_x (A Tᵀ + B Sᵀ) + 1 (P c)ᵀ``, where ``gram_x`` is
    k_X(X', X) and (T, S, P) are the θ-features at the evaluation levels θ'_a:
    (k_Θ, ∂₂k_Θ, k_b) for h and (∂₁k_Θ, ∂₁∂₂k_Θ, ∂₁k_b) for ∂_θh.
    """
    values = gram_x @ (alpha @ theta_value.T + beta @ theta_slope.T)
    if bias is not None:
        values = values + (bias_features @ bias)[None, :]
    return values


class DecomposableModel:
    """h(x)(θ) = Σ_ij k_X(x, x_i)(α_ij k_Θ(θ, θ_j) + β_ij ∂₂k_Θ(θ, θ_j)) + b(θ) (Prop. 3.1).

    Call :meth:`precompute` with the training inputs and anchors before anything else. The
    coefficients are passed explicitly to every method, as ``alpha`` (A, n × m), ``beta``
    (B, n × m) and ``bias`` (c, length m, or ``None``).

    Parameters
    ----------
    input_kernel : Kernel
        k_X on the inputs x.
    theta_kernel : Kernel
        k_Θ on the hyperparameter θ; needs the θ-derivatives ``dk_dy`` and ``d2k_dxdy``.
    bias_kernel : Kernel or None
        k_b of the bias b(θ) = Σ_j c_j k_b(θ, θ_j); ``None`` for a model without bias
        (then every ``bias`` argument must be ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.kernels import RBF
    >>> model = DecomposableModel(RBF(1.0), RBF(0.3)).precompute(
    ...     np.zeros((2, 1)), np.array([0.25, 0.75]))
    >>> alpha, beta, bias = model.unpack(np.ones(model.n_params))
    >>> model.predict(alpha, beta).shape, model.n_params
    ((2, 2), 8)
    """

    def __init__(self, input_kernel, theta_kernel, bias_kernel=None):
        self.input_kernel = input_kernel
        self.theta_kernel = theta_kernel
        self.bias_kernel = bias_kernel

    # ------------------------------------------------------------------ set-up
    def precompute(self, X, anchors):
        """Store X (n, d), the anchors θ (m,) and the Gram factors; returns ``self``.

        K_X = k_X(X, X); K_Θ = k_Θ(θ, θ); D[a, j] = ∂₂k_Θ(θ_a, θ_j);
        D₁[a, j] = ∂₁k_Θ(θ_a, θ_j); E[a, j] = ∂₁∂₂k_Θ(θ_a, θ_j); and with a bias
        K_b = k_b(θ, θ), D₁b[a, j] = ∂₁k_b(θ_a, θ_j).

        Parameters
        ----------
        X : array-like of shape (n, d)
            Training inputs x_i.
        anchors : array-like of shape (m,)
            Anchors θ_j.

        Returns
        -------
        self
            With ``X_``, ``anchors_`` and the Gram factors.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> model.gram_x_.shape, model.gram_theta_.shape
        ((2, 2), (2, 2))
        """
        X = as_points(X, "X")
        anchors = as_finite_array(anchors, "anchors", ndim=1)
        if len(X) == 0:
            raise ValueError("X must hold at least one point, got shape (0, ...)")
        if len(anchors) == 0:
            raise ValueError("anchors must hold at least one level, got an empty array")
        theta = anchors[:, None]
        self.X_ = X
        self.anchors_ = anchors
        self.gram_x_ = self.input_kernel(X, X)
        self.gram_theta_ = self.theta_kernel(theta, theta)
        self.dtheta_ = self.theta_kernel.dk_dy(theta, theta)  # D
        self.dtheta_first_ = self.theta_kernel.dk_dx(theta, theta)  # D₁
        self.d2theta_ = self.theta_kernel.d2k_dxdy(theta, theta)  # E
        if self.bias_kernel is not None:
            self.gram_bias_ = self.bias_kernel(theta, theta)
            self.dbias_first_ = self.bias_kernel.dk_dx(theta, theta)
        else:
            self.gram_bias_ = self.dbias_first_ = None
        return self

    @property
    def n_samples(self) -> int:
        """n, the number of training points (after :meth:`precompute`).

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> model.n_samples
        2
        """
        return self._fitted_gram()[0]

    @property
    def n_anchors(self) -> int:
        """m, the number of anchors θ_j (after :meth:`precompute`).

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> model.n_anchors
        2
        """
        return self._fitted_gram()[1]

    @property
    def n_params(self) -> int:
        """Length of the packed vector: 2nm, plus m with a bias.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> model.n_params  # 2 × 2 × 2 + 2
        10
        """
        n, m = self._fitted_gram()
        return 2 * n * m + (m if self.bias_kernel is not None else 0)

    def _fitted_gram(self):
        if not hasattr(self, "gram_x_"):
            raise ValueError("DecomposableModel: call precompute(X, anchors) first")
        return self.gram_x_.shape[0], self.gram_theta_.shape[0]

    # ------------------------------------------------------------- validation
    def _check_matrix(self, value, name):
        shape = self._fitted_gram()
        array = as_finite_array(value, name, ndim=2)
        if array.shape != shape:
            raise ValueError(f"{name} must have shape (n, m) = {shape}, got {array.shape}")
        return array

    def _check_bias(self, bias):
        m = self._fitted_gram()[1]
        if self.bias_kernel is None:
            if bias is not None:
                raise ValueError("bias must be None for a model without bias_kernel")
            return None
        if bias is None:
            raise ValueError(f"bias must be an array of shape ({m},) when bias_kernel is set")
        array = as_finite_array(bias, "bias", ndim=1)
        if array.shape != (m,):
            raise ValueError(f"bias must have shape ({m},), got {array.shape}")
        return array

    def _check_params(self, alpha, beta, bias):
        return (
            self._check_matrix(alpha, "alpha"),
            self._check_matrix(beta, "beta"),
            self._check_bias(bias),
        )

    def _input_features(self, X):
        if X is None:
            return self.gram_x_
        X = as_points(X, "X", n_features=self.X_.shape[1])
        return self.input_kernel(X, self.X_)

    def _check_levels(self, theta):
        levels = as_finite_array(theta, "theta")
        if levels.ndim > 1 and not (levels.ndim == 2 and levels.shape[1] == 1):
            raise ValueError(f"theta must be 1-dimensional (levels), got shape {levels.shape}")
        return levels.reshape(-1, 1)

    # ------------------------------------------------------------- predictions
    def predict(self, alpha, beta, bias=None, X=None, theta=None):
        """H[i, a] = h(x'_i)(θ'_a), an (n', m') array (Prop. 3.1).

        H = K_X' (A K_Θ'ᵀ + B D'ᵀ) + 1 (K_b' c)ᵀ with K_X' = k_X(X', X),
        K_Θ' = k_Θ(θ', θ), D' = ∂₂k_Θ(θ', θ), K_b' = k_b(θ', θ). ``X=None`` and ``theta=None``
        mean the training inputs and the anchors, where H = K_X A K_Θ + K_X B Dᵀ + 1 (K_b c)ᵀ
        uses the stored factors.

        Parameters
        ----------
        alpha, beta : array-like of shape (n, m)
            A and B.
        bias : array-like of shape (m,) or None, default=None
            c; None for a model without bias.
        X : array-like of shape (n', d) or None, default=None
            Evaluation inputs x'; None: the training inputs.
        theta : array-like of shape (m',) or None, default=None
            Evaluation levels θ'; None: the anchors.

        Returns
        -------
        ndarray of shape (n', m')
            The predictions.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(model.n_params) / 10)
        >>> H = model.predict(alpha, beta, bias)
        >>> np.allclose(H, model.predict(alpha, beta, bias, X=X, theta=anchors))
        True
        """
        alpha, beta, bias = self._check_params(alpha, beta, bias)
        gram_x = self._input_features(X)
        if theta is None:
            theta_features = (self.gram_theta_, self.dtheta_, self.gram_bias_)
            return _combine(gram_x, *theta_features, alpha, beta, bias)
        levels, anchors = self._check_levels(theta), self.anchors_[:, None]
        bias_features = None if bias is None else self.bias_kernel(levels, anchors)
        return _combine(
            gram_x,
            self.theta_kernel(levels, anchors),
            self.theta_kernel.dk_dy(levels, anchors),
            bias_features,
            alpha,
            beta,
            bias,
        )

    def predict_dtheta(self, alpha, beta, bias=None, X=None, theta=None):
        """∂_θh(x'_i)(θ'_a), an (n', m') array — the slope the non-crossing penalty (14) uses.

        ∂_θH = K_X' (A D₁'ᵀ + B E'ᵀ) + 1 (D₁b' c)ᵀ with D₁' = ∂₁k_Θ(θ', θ),
        E' = ∂₁∂₂k_Θ(θ', θ), D₁b' = ∂₁k_b(θ', θ); at the anchors
        ∂_θH = K_X A D₁ᵀ + K_X B Eᵀ + 1 (D₁b c)ᵀ.

        Parameters
        ----------
        alpha, beta : array-like of shape (n, m)
            A and B.
        bias : array-like of shape (m,) or None, default=None
            c; None for a model without bias.
        X : array-like of shape (n', d) or None, default=None
            Evaluation inputs x'; None: the training inputs.
        theta : array-like of shape (m',) or None, default=None
            Evaluation levels θ'; None: the anchors.

        Returns
        -------
        ndarray of shape (n', m')
            The θ-derivatives.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(model.n_params) / 10)
        >>> step = 1e-6  # central difference in θ
        >>> upper = model.predict(alpha, beta, bias, theta=anchors + step)
        >>> lower = model.predict(alpha, beta, bias, theta=anchors - step)
        >>> np.allclose(model.predict_dtheta(alpha, beta, bias), (upper - lower) / (2 * step))
        True
        """
        alpha, beta, bias = self._check_params(alpha, beta, bias)
        gram_x = self._input_features(X)
        if theta is None:
            theta_features = (self.dtheta_first_, self.d2theta_, self.dbias_first_)
            return _combine(gram_x, *theta_features, alpha, beta, bias)
        levels, anchors = self._check_levels(theta), self.anchors_[:, None]
        bias_features = None if bias is None else self.bias_kernel.dk_dx(levels, anchors)
        return _combine(
            gram_x,
            self.theta_kernel.dk_dx(levels, anchors),
            self.theta_kernel.d2k_dxdy(levels, anchors),
            bias_features,
            alpha,
            beta,
            bias,
        )

    # ---------------------------------------------------------------- gradients
    def backward(self, grad_values, grad_slopes=None):
        """(∂L/∂A, ∂L/∂B, ∂L/∂c) from G = ∂L/∂H and G' = ∂L/∂(∂_θH) at the training points.

        H and ∂_θH are linear in (A, B, c) (see :meth:`predict`, :meth:`predict_dtheta`), so
        ∂L/∂A = K_X (G K_Θ + G' D₁), ∂L/∂B = K_X (G D + G' E),
        ∂L/∂c = K_bᵀ G1 + D₁bᵀ G'1 (1 sums over the n points). ``grad_slopes=None`` means
        G' = 0. The bias gradient is ``None`` for a model without bias.

        Parameters
        ----------
        grad_values : array-like of shape (n, m)
            G = ∂L/∂H at the training points and anchors.
        grad_slopes : array-like of shape (n, m) or None, default=None
            G' = ∂L/∂(∂_θH); None means zero.

        Returns
        -------
        grad_alpha, grad_beta : ndarray of shape (n, m)
            ∂L/∂A and ∂L/∂B.
        grad_bias : ndarray of shape (m,) or None
            ∂L/∂c.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(model.n_params) / 10)
        >>> G = np.ones((2, 2))  # L = sum of H, linear: its gradient is the adjoint
        >>> grad_alpha, grad_beta, grad_bias = model.backward(G)
        >>> coefficients = np.concatenate([alpha.ravel(), beta.ravel(), bias])
        >>> gradient = np.concatenate([grad_alpha.ravel(), grad_beta.ravel(), grad_bias])
        >>> bool(np.isclose(model.predict(alpha, beta, bias).sum(), gradient @ coefficients))
        True
        """
        grad_values = self._check_matrix(grad_values, "grad_values")
        grad_alpha = grad_values @ self.gram_theta_
        grad_beta = grad_values @ self.dtheta_
        grad_bias = None
        if self.bias_kernel is not None:
            grad_bias = self.gram_bias_.T @ grad_values.sum(axis=0)
        if grad_slopes is not None:
            grad_slopes = self._check_matrix(grad_slopes, "grad_slopes")
            grad_alpha = grad_alpha + grad_slopes @ self.dtheta_first_
            grad_beta = grad_beta + grad_slopes @ self.d2theta_
            if grad_bias is not None:
                grad_bias = grad_bias + self.dbias_first_.T @ grad_slopes.sum(axis=0)
        return self.gram_x_.T @ grad_alpha, self.gram_x_.T @ grad_beta, grad_bias

    # -------------------------------------------------------------------- norms
    def _norm_directions(self, alpha, beta):
        """K_X (A K_Θ + B Dᵀ) and K_X (A D + B E): half the gradients of ‖f‖² (k's symmetric)."""
        along_alpha = self.gram_x_ @ (alpha @ self.gram_theta_ + beta @ self.dtheta_.T)
        along_beta = self.gram_x_ @ (alpha @ self.dtheta_ + beta @ self.d2theta_)
        return along_alpha, along_beta

    def rkhs_norm2(self, alpha, beta):
        """‖f‖²_{H_K} of f = h − b, in closed form (Prop. 3.1, K = k_X · I_{H_kΘ}).

        The reproducing property gives ⟨k_Θ(·, θ_a), k_Θ(·, θ_j)⟩ = K_Θ[a, j],
        ⟨k_Θ(·, θ_a), ∂₂k_Θ(·, θ_j)⟩ = D[a, j], ⟨∂₂k_Θ(·, θ_a), ∂₂k_Θ(·, θ_j)⟩ = E[a, j], so
        ‖f‖² = tr(Aᵀ K_X A K_Θ) + 2 tr(Aᵀ K_X B Dᵀ) + tr(Bᵀ K_X B E).

        Parameters
        ----------
        alpha, beta : array-like of shape (n, m)
            A and B.

        Returns
        -------
        float
            ‖f‖²_{H_K}.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, zero = np.array([[1.0, 0.0], [0.0, 0.0]]), np.zeros((2, 2))
        >>> model.rkhs_norm2(alpha, zero)  # k_X(x_1, x_1) k_Θ(θ_1, θ_1)
        1.0
        """
        alpha = self._check_matrix(alpha, "alpha")
        beta = self._check_matrix(beta, "beta")
        along_alpha, along_beta = self._norm_directions(alpha, beta)
        # ⟨A, K_X(A K_Θ + B Dᵀ)⟩ + ⟨B, K_X(A D + B E)⟩ counts the cross term twice.
        return float(np.sum(alpha * along_alpha) + np.sum(beta * along_beta))

    def rkhs_norm2_grad(self, alpha, beta):
        """(∂‖f‖²/∂A, ∂‖f‖²/∂B) = (2 K_X (A K_Θ + B Dᵀ), 2 K_X (A D + B E)).

        Parameters
        ----------
        alpha, beta : array-like of shape (n, m)
            A and B.

        Returns
        -------
        grad_alpha, grad_beta : ndarray of shape (n, m)
            The gradients.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(model.n_params) / 10)
        >>> grad_alpha, grad_beta = model.rkhs_norm2_grad(alpha, beta)
        >>> # ‖f‖² is quadratic: Euler's identity ⟨∇, (A, B)⟩ = 2 ‖f‖²
        >>> inner = np.sum(grad_alpha * alpha) + np.sum(grad_beta * beta)
        >>> bool(np.isclose(inner, 2 * model.rkhs_norm2(alpha, beta)))
        True
        """
        alpha = self._check_matrix(alpha, "alpha")
        beta = self._check_matrix(beta, "beta")
        along_alpha, along_beta = self._norm_directions(alpha, beta)
        return 2.0 * along_alpha, 2.0 * along_beta

    def bias_norm2(self, bias):
        """‖b‖²_{H_kb} = cᵀ K_b c (§3 remark "Models with bias").

        Parameters
        ----------
        bias : array-like of shape (m,)
            c.

        Returns
        -------
        float
            ‖b‖²_{H_kb}.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> model.bias_norm2(np.array([1.0, 0.0]))  # k_b(θ_1, θ_1)
        1.0
        """
        bias = self._check_present_bias(bias)
        return float(bias @ self.gram_bias_ @ bias)

    def bias_norm2_grad(self, bias):
        """∂‖b‖²/∂c = 2 K_b c.

        Parameters
        ----------
        bias : array-like of shape (m,)
            c.

        Returns
        -------
        ndarray of shape (m,)
            The gradient.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> c = np.array([1.0, -2.0])
        >>> bool(np.isclose(model.bias_norm2_grad(c) @ c, 2 * model.bias_norm2(c)))
        True
        """
        bias = self._check_present_bias(bias)
        return 2.0 * self.gram_bias_ @ bias

    def bias_values(self, bias):
        """b(θ_j) = (K_b c)_j at the anchors.

        Parameters
        ----------
        bias : array-like of shape (m,)
            c.

        Returns
        -------
        ndarray of shape (m,)
            b at the anchors.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(model.n_params) / 10)
        >>> zero = np.zeros((2, 2))  # with A = B = 0, h(x)(θ) = b(θ) for every x
        >>> np.allclose(model.predict(zero, zero, bias)[0], model.bias_values(bias))
        True
        """
        return self.gram_bias_ @ self._check_present_bias(bias)

    def bias_backward(self, grad):
        """∂L/∂c from g = ∂L/∂b(θ_j) at the anchors: K_bᵀ g.

        Parameters
        ----------
        grad : array-like of shape (m,)
            g.

        Returns
        -------
        ndarray of shape (m,)
            ∂L/∂c.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> g, c = np.array([1.0, 2.0]), np.array([0.5, -1.0])
        >>> bool(np.isclose(model.bias_backward(g) @ c, g @ model.bias_values(c)))
        True
        """
        return self.gram_bias_.T @ grad

    def bias_dtheta(self, bias):
        """b'(θ_j) = (D₁b c)_j at the anchors.

        Parameters
        ----------
        bias : array-like of shape (m,)
            c.

        Returns
        -------
        ndarray of shape (m,)
            b' at the anchors.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(model.n_params) / 10)
        >>> zero = np.zeros((2, 2))
        >>> np.allclose(model.predict_dtheta(zero, zero, bias)[0], model.bias_dtheta(bias))
        True
        """
        return self.dbias_first_ @ self._check_present_bias(bias)

    def bias_dtheta_backward(self, grad):
        """∂L/∂c from g = ∂L/∂b'(θ_j) at the anchors: D₁bᵀ g.

        Parameters
        ----------
        grad : array-like of shape (m,)
            g.

        Returns
        -------
        ndarray of shape (m,)
            ∂L/∂c.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> g, c = np.array([1.0, 2.0]), np.array([0.5, -1.0])
        >>> bool(np.isclose(model.bias_dtheta_backward(g) @ c, g @ model.bias_dtheta(c)))
        True
        """
        return self.dbias_first_.T @ grad

    def level_norm2(self, alpha, beta, weights):
        """(Σ_j w_j ‖f(·)(θ_j)‖²_{H_kX}, ∂/∂A, ∂/∂B): the L2,1-type norm of eq. (12).

        f(·)(θ_j) = Σ_i G_ij k_X(·, x_i) with G = A K_Θ + B Dᵀ, so the value is
        Σ_j w_j G_jᵀ K_X G_j; with ∂/∂G = 2 K_X G W (W = diag w), ∂/∂A = ∂/∂G K_Θ and
        ∂/∂B = ∂/∂G D.

        Parameters
        ----------
        alpha, beta : array-like of shape (n, m)
            A and B.
        weights : array-like of shape (m,)
            w_j.

        Returns
        -------
        value : float
            Σ_j w_j ‖f(·)(θ_j)‖²_{H_kX}.
        grad_alpha, grad_beta : ndarray of shape (n, m)
            Its gradients.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, zero = np.array([[1.0, 0.0], [0.0, 0.0]]), np.zeros((2, 2))
        >>> value, _, _ = model.level_norm2(alpha, zero, np.array([1.0, 0.0]))
        >>> value  # f(·)(θ_1) = k_X(·, x_1) k_Θ(θ_1, θ_1): norm² k_X(x_1, x_1) = 1
        1.0
        """
        alpha = self._check_matrix(alpha, "alpha")
        beta = self._check_matrix(beta, "beta")
        weights = np.asarray(weights, dtype=float)
        columns = alpha @ self.gram_theta_ + beta @ self.dtheta_.T
        grad_columns = 2.0 * (self.gram_x_ @ columns) * weights[None, :]
        value = 0.5 * float(np.sum(columns * grad_columns))
        return value, grad_columns @ self.gram_theta_, grad_columns @ self.dtheta_

    def _check_present_bias(self, bias):
        if self.bias_kernel is None:
            raise ValueError("bias_kernel is None: this model has no bias to take the norm of")
        return self._check_bias(bias)

    # ---------------------------------------------------------------- packing
    def pack(self, alpha, beta, bias=None):
        """One flat vector [vec(A), vec(B), c] (row-major) for ``scipy.optimize.minimize``.

        Parameters
        ----------
        alpha, beta : array-like of shape (n, m)
            A and B.
        bias : array-like of shape (m,) or None, default=None
            c; None for a model without bias.

        Returns
        -------
        ndarray of shape (n_params,)
            The packed vector.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> params = np.arange(10.0)
        >>> model.pack(*model.unpack(params)).tolist() == params.tolist()
        True
        """
        alpha, beta, bias = self._check_params(alpha, beta, bias)
        parts = [alpha.ravel(), beta.ravel()] + ([] if bias is None else [bias])
        return np.concatenate(parts)

    def unpack(self, params):
        """(A, B, c) from a vector made by :meth:`pack`; c is ``None`` without bias.

        Parameters
        ----------
        params : array-like of shape (n_params,)
            [vec(A), vec(B), c].

        Returns
        -------
        alpha, beta : ndarray of shape (n, m)
            A and B (copies).
        bias : ndarray of shape (m,) or None
            c.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> X, anchors = np.array([[0.0], [1.0]]), np.array([0.25, 0.75])
        >>> model = DecomposableModel(RBF(1.0), RBF(0.3), RBF(0.3)).precompute(X, anchors)
        >>> alpha, beta, bias = model.unpack(np.arange(10.0))
        >>> alpha.tolist(), bias.tolist()
        ([[0.0, 1.0], [2.0, 3.0]], [8.0, 9.0])
        """
        n, m = self._fitted_gram()
        params = as_finite_array(params, "params", ndim=1)
        if params.shape != (self.n_params,):
            raise ValueError(
                f"params must have length n_params = {self.n_params}, got {params.shape[0]}"
            )
        alpha = params[: n * m].reshape(n, m).copy()
        beta = params[n * m : 2 * n * m].reshape(n, m).copy()
        bias = params[2 * n * m :].copy() if self.bias_kernel is not None else None
        return alpha, beta, bias
