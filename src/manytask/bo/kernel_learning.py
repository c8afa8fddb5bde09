"""Learned ICM kernels: fit Γ(x, x') = k(x, x') B and the noise by maximum marginal likelihood.

The paper assumes the kernel is known; a user usually does not know the lengthscales or how
the objectives correlate. Here k is an ARD RBF (or Matérn 5/2) of unit variance, the task
matrix is B = WWᵀ + diag(v) with W of shape (n, rank) (GPyTorch's ``IndexKernel``
parameterisation) and the noise is isotropic, η I. In the BO setting every task is observed
at every input, so Cov(vec Y) = B ⊗ K + ηI is a Kronecker sum that B's eigenvectors split
into n problems ξ_i K + ηI (t × t): the likelihood and its gradient cost
O(n t³ + n³ + t²(n + d)) per evaluation, never an (nt)³ factorisation
(:func:`icm_log_marginal_likelihood`, derivation in its docstring).

Conventions: inputs are normalised by the caller to the unit cube and outputs standardised
per task (:mod:`manytask.bo.transforms`); the bounds of
:func:`fit_icm_kernel` are stated in those units. What lives elsewhere: the posterior that
uses the fitted kernel (:mod:`manytask.posterior`) and the BO loop that decides when to
refit.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf, dsyevd, dtrtri
from scipy.optimize import minimize
from scipy.spatial.distance import cdist

from .._validation import as_finite_array, as_points, check_int, check_positive, check_random_state
from ..kernels.operator import Separable
from ..kernels.scalar import RBF, Matern
from .transforms import as_output_matrix

__all__ = [
    "ICMFit",
    "fit_icm_kernel",
    "icm_log_marginal_likelihood",
    "KERNELS",
    "MEANS",
    "LENGTHSCALE_BOUNDS",
    "TASK_DIAGONAL_BOUNDS",
    "NOISE_BOUNDS",
    "W_BOUND",
]

#: Input kernels k of unit variance that :func:`fit_icm_kernel` can learn.
KERNELS = ("rbf", "matern52")
#: The model's mean: zero, or a constant per task fitted with the kernel.
MEANS = ("zero", "constant")
#: Lengthscales, in units of the (unit-cube) input range: [0.01, 10] × range.
LENGTHSCALE_BOUNDS = (0.01, 10.0)
#: Diagonal part v of B, in units of the (unit) per-task output variance.
TASK_DIAGONAL_BOUNDS = (1e-6, 10.0)
#: Noise variance η, in units of the (unit) per-task output variance: at least 1e-6.
NOISE_BOUNDS = (1e-6, 10.0)
#: |W_ij| ≤ W_BOUND, so that B_ii = Σ_k W_ik² + v_i stays within a few hundred output variances.
W_BOUND = 10.0

_LOG_2PI = np.log(2.0 * np.pi)


# ---------------------------------------------------------------------------------------------
# The likelihood


def _input_kernel(kernel: str, lengthscales):
    if kernel == "rbf":
        return RBF(lengthscales)
    return Matern(lengthscales, nu=2.5)


def _gram_and_lengthscale_factor(X, lengthscales, kernel):
    """K and F with ∂K/∂log l_k = F ∘ D_k / l_k², D_k[j, j'] = (x_jk − x_j'k)².

    RBF: K = exp(−s²/2), so ∂K/∂log l_k = K D_k / l_k² (F = K). Matérn 5/2:
    K = (1 + √5 s + 5s²/3) e^{−√5 s}, dK/ds = −(5/3) s (1 + √5 s) e^{−√5 s} and
    ∂s/∂log l_k = −D_k / (l_k² s), so F = (5/3)(1 + √5 s) e^{−√5 s} (finite at s = 0).
    """
    Z = X / lengthscales
    if kernel == "rbf":
        K = np.exp(-0.5 * cdist(Z, Z, "sqeuclidean"))
        return K, K, Z
    root5_s = np.sqrt(5.0) * cdist(Z, Z, "euclidean")
    decay = np.exp(-root5_s)
    K = (1.0 + root5_s + root5_s**2 / 3.0) * decay
    return K, (5.0 / 3.0) * (1.0 + root5_s) * decay, Z


def _symmetric_eigh(K):
    """``numpy.linalg.eigh(K)``, retried with LAPACK's ``syevr`` when the default driver does
    not converge (it can fail on a Gram matrix of points a few 1e-5 apart)."""
    try:
        return np.linalg.eigh(K)
    except np.linalg.LinAlgError:
        return scipy.linalg.eigh(K, driver="evr")


def _pair_sum(P, D):
    """Σ_jj' P_jj' D_jj', a pair with P_jj' = 0 counting 0 even where D_jj' overflowed."""
    return float(np.sum(np.where(P != 0, P * D, 0.0)))


def _spd_inverses(M):
    """M_i⁻¹ (stacked, (n, t, t)) and log det M_i of a stack of SPD matrices, or None if one
    is not numerically PD: from a Cholesky factor L of each, M_i⁻¹ = L⁻ᵀL⁻¹ (at t = 34 the
    factor, L⁻¹ and the product take ~12 µs, the factor and LAPACK's dpotri ~19 µs, NumPy's
    stacked cholesky and inv ~30 µs). M is overwritten."""
    n, t = M.shape[0], M.shape[1]
    inverses, diagonals = np.empty_like(M), np.empty((n, t))
    for i in range(n):
        # M_i is symmetric, so its transpose is the Fortran-ordered array LAPACK works in
        factor, info = dpotrf(M[i].T, lower=1, overwrite_a=1)  # the upper triangle zeroed
        if info == 0:
            diagonals[i] = factor.diagonal()
            factor, info = dtrtri(factor, lower=1, overwrite_c=1)  # L⁻¹, upper triangle 0
        if info != 0:
            return None
        lower = dsyrk(1.0, factor, trans=1, lower=1)  # the lower triangle of L⁻ᵀL⁻¹, upper 0
        np.add(lower, lower.T, out=inverses[i])
    inverses.reshape(n, t * t)[:, :: t + 1] *= 0.5  # the diagonal was counted twice
    return inverses, 2.0 * np.log(diagonals).sum(axis=1)


def _shifted_inverses(K, xi, noise):
    """M_i⁻¹ (stacked, (n, t, t)) and log det M_i of M_i = ξ_i K + ηI for every ξ_i
    (:func:`_spd_inverses`, an eigendecomposition of K ~80 µs at t = 34); if one fails (K off
    PSD by round-off beside a tiny η), from K = Q diag(a) Qᵀ with a clipped at 0:
    M_i⁻¹ = Q diag(1/(ξ_i a + η)) Qᵀ."""
    t, n = len(K), len(xi)
    M = xi[:, None, None] * K  # every M_i in one allocation, overwritten by its factor
    M.reshape(n, t * t)[:, :: t + 1] += noise
    result = _spd_inverses(M)
    if result is not None:
        return result
    a, Q = _symmetric_eigh(K)
    S = np.outer(np.maximum(a, 0.0), xi) + noise  # S[j, i] = ξ_i a_j + η
    inverses = np.einsum("jk,ki,lk->ijl", Q, 1.0 / S, Q)
    return inverses, np.log(S).sum(axis=0)


def _icm_lml(X, Y, lengthscales, W, task_diagonal, noise, kernel, gradient, mean="zero"):
    """(log p(Y), its gradient with respect to (log l, W, log v, log η) if asked, the task
    means c (n,): zero, or with ``mean="constant"`` those that maximise log p)."""
    t, n = Y.shape
    K, F, Z = _gram_and_lengthscale_factor(X, lengthscales, kernel)
    B = W @ W.T
    B.flat[:: n + 1] += task_diagonal
    xi, U, _ = dsyevd(B, compute_v=1, lower=1)  # np.linalg.eigh's LAPACK call, 1/10 the time
    xi = np.maximum(xi, 0.0)  # B is PSD; clip round-off so that every ξ_i K + ηI ⪰ ηI
    inverses, log_dets = _shifted_inverses(K, xi, noise)  # M_i = ξ_i K + ηI
    Y_rotated = Y @ U  # Ỹ = YU: column i is problem i's data, of covariance M_i
    means = np.zeros(n)
    if mean == "constant":  # Y − 1cᵀ rotates to Ỹ − 1c̃ᵀ, c̃ = Uᵀc: one GLS mean per problem
        ones = inverses.sum(axis=2)  # M_i⁻¹1 (M_i⁻¹ is symmetric)
        rotated_means = np.sum(ones * Y_rotated.T, axis=1) / ones.sum(axis=1)
        Y_rotated = Y_rotated - rotated_means
        means = U @ rotated_means
    alpha = np.matmul(inverses, Y_rotated.T[:, :, None])[:, :, 0].T  # α_i = M_i⁻¹ỹ_i
    lml = -0.5 * (np.vdot(Y_rotated, alpha) + log_dets.sum() + n * t * _LOG_2PI)
    if not gradient:
        return lml, None, means
    A = alpha @ U.T  # unvec of C⁻¹ vec(Y)
    # ∂/∂K (holding B, η): ½ (A B Aᵀ − Σ_i ξ_i M_i⁻¹)
    flat = inverses.reshape(n, t * t)
    grad_K = 0.5 * (A @ B @ A.T - (xi @ flat).reshape(t, t))
    # ∂/∂B (holding K, η): ½ (Aᵀ K A − U diag(tr(M_i⁻¹K)) Uᵀ)
    traces = flat @ K.ravel()
    grad_B = 0.5 * (A.T @ K @ A - (U * traces) @ U.T)
    P = grad_K * F
    row_sums = P.sum(axis=1)
    # Σ_jj' P_jj' (z_jk − z_j'k)² = 2 (Σ_j (P1)_j z_jk² − z_kᵀ P z_k), P symmetric
    with np.errstate(over="ignore", invalid="ignore"):
        grad_log_lengthscales = 2.0 * (row_sums @ Z**2 - np.sum(Z * (P @ Z), axis=0))
        if not np.isfinite(grad_log_lengthscales).all():
            # points so far apart that z² overflows, where P is 0: sum the pairs instead
            grad_log_lengthscales = np.array(
                [_pair_sum(P, np.subtract.outer(z, z) ** 2) for z in Z.T]
            )
    grads = {
        "log_lengthscales": grad_log_lengthscales,
        "W": (grad_B + grad_B.T) @ W,
        "log_task_diagonal": grad_B.diagonal() * task_diagonal,
        "log_noise": 0.5 * noise * (np.vdot(A, A) - flat[:, :: t + 1].sum()),
    }
    return lml, grads, means


def icm_log_marginal_likelihood(
    X, Y, lengthscales, W, task_diagonal, noise, kernel="rbf", return_gradient=False,
    mean="zero",
):  # fmt: skip
    """Log marginal likelihood of Y under the ICM model, split by B's eigenvectors into n
    independent t × t problems.

    Model: vec(Y) ~ N(0, C), C = B ⊗ K + ηI, with vec stacking the columns of Y (task-major;
    the posterior's sample-major Gram K ⊗ B with Y flattened by rows is the same Gaussian),
    K_jj' = k(x_j, x_j') of unit variance and B = WWᵀ + diag(v).

    Derivation. With K = Q diag(a) Qᵀ and B = U diag(ξ) Uᵀ, C = (U ⊗ Q) diag(S) (U ⊗ Q)ᵀ
    with S_ji = ξ_i a_j + η. Writing Ỹ = QᵀYU,

        log p(Y) = −½ Σ_ji Ỹ_ji² / S_ji − ½ Σ_ji log S_ji − ½ nt log 2π,

    and A = Q (Ỹ / S) Uᵀ is the (t, n) matrix with vec(A) = C⁻¹ vec(Y). For any
    parameter θ, ∂ log p/∂θ = ½ vec(A)ᵀ (∂C/∂θ) vec(A) − ½ tr(C⁻¹ ∂C/∂θ), and

    - for ∂C = B ⊗ ∂K: the data term is tr(Aᵀ ∂K A B) = ⟨A B Aᵀ, ∂K⟩ and
      tr(C⁻¹ (B ⊗ ∂K)) = Σ_ji ξ_i (Qᵀ∂KQ)_jj / S_ji = ⟨Q diag(w) Qᵀ, ∂K⟩ with
      w_j = Σ_i ξ_i / S_ji; so ∂ log p/∂K = ½ (A B Aᵀ − Q diag(w) Qᵀ). The lengthscales
      enter through ∂K/∂log l_k = F ∘ D_k / l_k² (D_k the squared differences in dimension k;
      F = K for the RBF, F = (5/3)(1 + √5 s) e^{−√5 s} for Matérn 5/2, s the scaled distance);
    - for ∂C = ∂B ⊗ K: the data term is ⟨AᵀKA, ∂B⟩ and tr(C⁻¹(∂B ⊗ K)) =
      Σ_i g_i (Uᵀ∂BU)_ii = ⟨U diag(g) Uᵀ, ∂B⟩ with g_i = Σ_j a_j / S_ji; so
      G_B = ∂ log p/∂B = ½ (AᵀKA − U diag(g) Uᵀ), ∂ log p/∂W = (G_B + G_Bᵀ) W and
      ∂ log p/∂log v_i = v_i (G_B)_ii;
    - for ∂C = ∂η I: ∂ log p/∂log η = ½ η (‖A‖²_F − Σ_ji 1/S_ji).

    Computation: Q diag(1/S_·i) Qᵀ = M_i⁻¹ with M_i = ξ_i K + ηI and Σ_j log S_ji = log det M_i,
    so every term above is computed from a Cholesky factor and the inverse of each M_i
    (w and g through Σ_i ξ_i M_i⁻¹ and g_i = tr(M_i⁻¹K), Ỹ / S through α_i = M_i⁻¹(YU)_i),
    without the eigendecomposition of K (which costs as much as ~8 factors and inverses at
    t ≈ 30); K's eigenvalues, clipped at 0, serve only where a factor fails (K off PSD by
    round-off beside a tiny η). Each evaluation then costs one eigendecomposition of B
    (n × n) and n factorisations and inverses of t × t matrices.

    Parameters
    ----------
    X : array-like of shape (t, d)
    Y : array-like of shape (t, n)
    lengthscales : float or array-like of shape (d,)
    W : array-like of shape (n, rank)
    task_diagonal : array-like of shape (n,)
        v ≥ 0.
    noise : float
        η > 0.
    kernel : {"rbf", "matern52"}
    return_gradient : bool
        Also return the gradient as a dict with keys ``"log_lengthscales"`` (d,), ``"W"``
        (n, rank), ``"log_task_diagonal"`` (n,) and ``"log_noise"`` (a float).
    mean : {"zero", "constant"}
        ``"constant"``: Y − 1cᵀ in place of Y, with the task means c (n,) that maximise
        log p (the profile likelihood, as a learned constant mean without a prior). Ỹ − 1c̃ᵀ
        with c̃ = Uᵀc splits as above, so c̃_i = 1ᵀM_i⁻¹ỹ_i / 1ᵀM_i⁻¹1 (generalised least
        squares); at that c, ∂ log p/∂c = 0, so the gradient is the one above with Y − 1cᵀ.

    Returns
    -------
    lml : float
        log p(Y).
    gradient : dict
        Only with ``return_gradient``: the gradient, keyed as above.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import multivariate_normal
    >>> from manytask.kernels import RBF
    >>> X, Y = np.linspace(0, 1, 5)[:, None], np.c_[np.ones(5), np.arange(5.0)]
    >>> W, v, eta = np.ones((2, 1)), np.array([0.1, 0.2]), 0.01
    >>> lml = icm_log_marginal_likelihood(X, Y, [0.3], W, v, eta)
    >>> C = np.kron(W @ W.T + np.diag(v), RBF(0.3)(X)) + eta * np.eye(10)  # task-major
    >>> bool(np.isclose(lml, multivariate_normal(np.zeros(10), C).logpdf(Y.ravel(order="F"))))
    True
    """
    X, Y = _check_data(X, Y)
    t, d = X.shape
    n = Y.shape[1]
    lengthscales = as_finite_array(lengthscales, "lengthscales")
    if lengthscales.ndim == 0 or lengthscales.shape == (1,):
        lengthscales = np.full(d, float(lengthscales.reshape(-1)[0]))
    if lengthscales.shape != (d,) or np.any(lengthscales <= 0):
        raise ValueError(
            f"lengthscales must be one positive number or {d} (one per feature of X), "
            f"got {lengthscales.tolist()}"
        )
    W = as_finite_array(W, "W", ndim=2)
    if W.shape[0] != n:
        raise ValueError(f"W must have {n} rows (one per task), got shape {W.shape}")
    task_diagonal = as_finite_array(task_diagonal, "task_diagonal", ndim=1)
    if task_diagonal.shape != (n,) or np.any(task_diagonal < 0):
        raise ValueError(
            f"task_diagonal must hold {n} non-negative entries, got {task_diagonal.tolist()}"
        )
    noise = check_positive(noise, "noise")
    kernel = _check_kernel_name(kernel)
    mean = _check_mean(mean)
    lml, grads, _ = _icm_lml(
        X, Y, lengthscales, W, task_diagonal, noise, kernel, return_gradient, mean
    )
    return (float(lml), grads) if return_gradient else float(lml)


# ---------------------------------------------------------------------------------------------
# The fit


@dataclass
class ICMFit:
    """A fitted ICM kernel Γ(x, x') = k(x, x') B and noise variance η.

    All quantities are in the units of the data given to :func:`fit_icm_kernel`: normalised
    inputs and standardised outputs. ``kernel`` applies to normalised inputs; in the original
    units the lengthscales are ``lengthscales · (upper − lower)``.

    Parameters
    ----------
    kernel : Separable
        k(·, ·) B with k the unit-variance ARD kernel.
    noise : float
        η, the noise variance.
    B : ndarray of shape (n, n)
        WWᵀ + diag(task_diagonal).
    W : ndarray of shape (n, rank)
        The low-rank factor of B.
    task_diagonal : ndarray of shape (n,)
        v, the diagonal part of B.
    lengthscales : ndarray of shape (d,)
        Of k, one per input dimension.
    log_marginal_likelihood : float
        At the fitted parameters (the best over restarts).
    kernel_name : str
        "rbf" or "matern52".
    messages : list of str
        The optimiser's message for every start, in order.
    start_values : list of float
        The final log marginal likelihood of every start.
    mean : ndarray of shape (n,), optional
        The fitted constant mean c of every task (the model is c + GP); None for zero.

    Examples
    --------
    >>> from manytask.kernels import RBF, Separable
    >>> B = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> fit = ICMFit(Separable(RBF(0.3), B), 0.1, B, np.ones((2, 1)), np.zeros(2),
    ...              np.array([0.3]), -1.0, "rbf")
    >>> fit.correlation
    array([[1. , 0.5],
           [0.5, 1. ]])
    """

    kernel: Separable
    noise: float
    B: np.ndarray
    W: np.ndarray
    task_diagonal: np.ndarray
    lengthscales: np.ndarray
    log_marginal_likelihood: float
    kernel_name: str
    messages: list = field(default_factory=list)
    start_values: list = field(default_factory=list)
    mean: np.ndarray | None = None

    @property
    def correlation(self) -> np.ndarray:
        """The task correlation matrix B_ij / √(B_ii B_jj).

        Examples
        --------
        >>> from manytask.kernels import RBF, Separable
        >>> B = np.array([[4.0, 1.0], [1.0, 1.0]])
        >>> fit = ICMFit(Separable(RBF(0.3), B), 0.1, B, np.ones((2, 1)), np.zeros(2),
        ...              np.array([0.3]), -1.0, "rbf")
        >>> float(fit.correlation[0, 1])
        0.5
        """
        scale = np.sqrt(np.diag(self.B))
        return self.B / np.outer(scale, scale)


def _check_kernel_name(kernel) -> str:
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {list(KERNELS)}, got {kernel!r}")
    return kernel


def _check_mean(mean) -> str:
    if mean not in MEANS:
        raise ValueError(f"mean must be one of {list(MEANS)}, got {mean!r}")
    return mean


def _check_data(X, Y):
    X = as_points(X, "X")
    Y = as_output_matrix(Y)
    if len(X) != len(Y):
        raise ValueError(f"X and Y must have the same number of rows, got {len(X)} and {len(Y)}")
    if len(X) < 2:
        raise ValueError(f"fitting a kernel needs at least 2 observations, got {len(X)}")
    if Y.shape[1] == 0:
        raise ValueError(f"Y must have at least one task (column), got shape {Y.shape}")
    return X, Y


class _Packing:
    """θ = (log l (d), W (n·rank), log v (n), log η) as one vector, with L-BFGS-B bounds."""

    def __init__(self, d, n, rank):
        self.d, self.n, self.rank = d, n, rank
        self.size = d + n * rank + n + 1
        # log_prior's log-normal priors, built once per fit (not once per evaluation):
        # the entries of θ they bear on (log l and log η), their μ and σ
        self._prior_at = np.r_[np.arange(d), self.size - 1]
        self._prior_mean = np.r_[np.full(d, np.sqrt(2.0) + 0.5 * np.log(d)), -4.0]
        self._prior_sd = np.r_[np.full(d, np.sqrt(3.0)), 1.0]

    def pack(self, lengthscales, W, task_diagonal, noise):
        return np.concatenate(
            [np.log(lengthscales), W.ravel(), np.log(task_diagonal), [np.log(noise)]]
        )

    def unpack(self, theta):
        d, n, r = self.d, self.n, self.rank
        lengthscales = np.exp(theta[:d])
        W = theta[d : d + n * r].reshape(n, r)
        task_diagonal = np.exp(theta[d + n * r : d + n * r + n])
        return lengthscales, W, task_diagonal, float(np.exp(theta[-1]))

    def pack_gradient(self, grads):
        return np.concatenate(
            [
                grads["log_lengthscales"],
                grads["W"].ravel(),
                grads["log_task_diagonal"],
                [grads["log_noise"]],
            ]
        )

    def bounds(self):
        def log_bounds(pair, count):
            return [(np.log(pair[0]), np.log(pair[1]))] * count

        return (
            log_bounds(LENGTHSCALE_BOUNDS, self.d)
            + [(-W_BOUND, W_BOUND)] * (self.n * self.rank)
            + log_bounds(TASK_DIAGONAL_BOUNDS, self.n)
            + log_bounds(NOISE_BOUNDS, 1)
        )

    def clip(self, theta):
        lower, upper = np.array(self.bounds()).T
        return np.clip(theta, lower, upper)

    def log_prior(self, theta):
        """log p up to a constant and its gradient in θ: BoTorch's priors of ``SingleTaskGP``,
        log-normal densities of every l_k (μ = √2 + ½ log d, σ = √3; Hvarfner, Hellsten &
        Nardi 2024) and of η (μ = −4, σ = 1), evaluated at the values as GPyTorch does:
        log p(e^θ) = −θ − (θ − μ)²/2σ², whose mode is θ = μ − σ² (l = 0.5 for d = 6,
        η = e⁻⁵); W and v are left flat."""
        at = theta[..., self._prior_at]  # θ of shape (size,), or (k, size): k tasks at once
        z = (at - self._prior_mean) / self._prior_sd
        gradient = np.zeros_like(theta)
        gradient[..., self._prior_at] = -1.0 - z / self._prior_sd
        return np.sum(-at - 0.5 * z**2, axis=-1), gradient


def _default_start(Y, packing):
    """A data-driven start: lengthscale 0.3, B from the empirical task covariance, η = 0.1."""
    n, rank = packing.n, packing.rank
    covariance = np.atleast_2d(np.cov(Y, rowvar=False, bias=True)) if len(Y) > 1 else np.eye(n)
    values, vectors = np.linalg.eigh(0.9 * covariance + 1e-3 * np.eye(n))
    top = np.argsort(values)[::-1][:rank]
    W = vectors[:, top] * np.sqrt(np.maximum(values[top], 0.0))
    residual = np.diag(0.9 * covariance) - np.sum(W**2, axis=1)
    task_diagonal = np.maximum(residual, 0.0) + 0.05
    return packing.pack(np.full(packing.d, 0.3), W, task_diagonal, 0.1)


def _random_start(rng, packing):
    """Log-uniform lengthscales in [0.05, 1], W ~ N(0, 1/rank), v and η log-uniform."""
    lengthscales = np.exp(rng.uniform(np.log(0.05), np.log(1.0), size=packing.d))
    W = rng.normal(scale=1.0 / np.sqrt(packing.rank), size=(packing.n, packing.rank))
    task_diagonal = np.exp(rng.uniform(np.log(1e-2), np.log(0.5), size=packing.n))
    noise = float(np.exp(rng.uniform(np.log(1e-3), np.log(0.3))))
    return packing.pack(lengthscales, W, task_diagonal, noise)


def _init_start(init, packing):
    if not isinstance(init, ICMFit):
        raise ValueError(f"init must be an ICMFit from a previous fit or None, got {init!r}")
    if init.W.shape != (packing.n, packing.rank) or init.lengthscales.shape != (packing.d,):
        raise ValueError(
            f"init was fitted with W of shape {init.W.shape} and {init.lengthscales.shape[0]} "
            f"lengthscales; this fit needs W of shape ({packing.n}, {packing.rank}) and "
            f"{packing.d} lengthscales"
        )
    theta = packing.pack(
        init.lengthscales,
        init.W,
        np.maximum(init.task_diagonal, TASK_DIAGONAL_BOUNDS[0]),
        init.noise,
    )
    return packing.clip(theta)


def _collapsed(theta, packing):
    """Whether a fit has a lengthscale at its lower bound: with t ≲ 100 points in the unit cube
    its Gram matrix is ≈ I, the data explained as white noise — a degenerate local optimum that
    a chain of warm-started refits does not leave (its gradient in that lengthscale is ≈ 0)."""
    lengthscales = packing.unpack(theta)[0]
    return bool(np.any(lengthscales <= 1.01 * LENGTHSCALE_BOUNDS[0]))


def fit_icm_kernel(
    X, Y, rank=None, kernel="rbf", n_restarts=3, random_state=None, init=None, prior=False,
    mean="zero",
):  # fmt: skip
    """Fit an ICM kernel k(x, x') B and noise η by maximising the multi-task marginal likelihood.

    Every task must be observed at every input (the BO setting). The caller normalises the
    inputs to [0, 1]^d (:func:`normalize_inputs`) and standardises every task to mean 0,
    standard deviation 1 (:func:`standardize_outputs`): the model's mean is zero (or a
    fitted constant, ``mean``), and its bounds are stated in those units —

    - lengthscales in ``LENGTHSCALE_BOUNDS`` = [0.01, 10] × the input range;
    - W entries in [−``W_BOUND``, ``W_BOUND``], v in ``TASK_DIAGONAL_BOUNDS`` and the noise
      variance η in ``NOISE_BOUNDS`` = [1e-6, 10] × the output variance.

    Without ``prior`` the bounds keep every parameter finite, though the likelihood can have
    a degenerate optimum at the lower lengthscale bound (see ``n_restarts``); with it the fit
    is a MAP estimate under BoTorch's priors of ``SingleTaskGP`` (log-normal densities of l_k,
    μ = √2 + ½ log d and σ = √3, and of η, μ = −4 and σ = 1), which keep a few noisy points
    from being explained by lengthscales at their lower bound and η → 0 (an interpolating,
    overconfident posterior). L-BFGS-B (``scipy.optimize.minimize``) runs with the analytic
    gradient of :func:`icm_log_marginal_likelihood` from ``n_restarts`` starts and keeps the
    best.

    Parameters
    ----------
    X : array-like of shape (t, d)
        Inputs, normalised to the unit cube.
    Y : array-like of shape (t, n)
        Observations of all n tasks at every input, standardised per task.
    rank : int, optional
        Columns of W, 1 ≤ rank ≤ n; default n.
    kernel : {"rbf", "matern52"}
        The unit-variance ARD input kernel k.
    n_restarts : int
        Number of optimiser starts (≥ 1): from ``init`` if given, then from a data-driven
        guess (lengthscale 0.3, B ≈ 0.9 × the empirical task covariance, η = 0.1), then from
        random parameters drawn with ``random_state``. A BO loop that refits every few
        rounds can pass ``init=previous_fit, n_restarts=1``; with 2, a fresh start keeps a
        warm-started chain of fits from staying in a poor local optimum. With ``init`` and
        one start, a fit that ends with a lengthscale at its lower bound (the degenerate
        white-noise optimum) is followed by the data-driven start, and the better is kept.
    random_state : None, int or numpy Generator
        Seeds the random starts.
    init : ICMFit, optional
        A previous fit to warm-start from (same n, d and rank).
    prior : bool
        Maximise the log posterior (the priors above) instead of the likelihood.
    mean : {"zero", "constant"}
        The model's mean: zero, or a constant per task maximising the likelihood with the
        other parameters (flat prior; BoTorch's learned ``ConstantMean``), profiled out in
        closed form (:func:`icm_log_marginal_likelihood`).

    Returns
    -------
    ICMFit
        The fitted kernel, noise, B, lengthscales, log marginal likelihood (without the
        prior), the messages of every start and, with ``mean="constant"``, the means.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(30, 1))
    >>> f = np.sin(6 * X)
    >>> from manytask.bo.transforms import standardize_outputs
    >>> Y, mean, scale = standardize_outputs(np.c_[f, -f] + 0.05 * rng.normal(size=(30, 2)))
    >>> fit = fit_icm_kernel(X, Y, n_restarts=1, random_state=0)
    >>> bool(fit.correlation[0, 1] < -0.9)
    True
    """
    X, Y = _check_data(X, Y)
    t, d = X.shape
    n = Y.shape[1]
    rank = n if rank is None else rank
    if not isinstance(rank, numbers.Integral) or isinstance(rank, bool) or not 1 <= rank <= n:
        raise ValueError(f"rank must be an integer in [1, n_tasks = {n}], got {rank!r}")
    kernel = _check_kernel_name(kernel)
    mean = _check_mean(mean)
    check_int(n_restarts, "n_restarts")
    rng = check_random_state(random_state)
    packing = _Packing(d, n, int(rank))

    def negative_lml(theta):
        lml, grads, _ = _icm_lml(X, Y, *packing.unpack(theta), kernel, True, mean)
        if not prior:
            return -lml, -packing.pack_gradient(grads)
        log_prior, prior_gradient = packing.log_prior(theta)
        return -lml - log_prior, -packing.pack_gradient(grads) - prior_gradient

    starts = [] if init is None else [_init_start(init, packing)]  # the previous fit first,
    if len(starts) < n_restarts:  # then the data-driven guess (not computed if unused)
        starts.append(_default_start(Y, packing))
    starts += [_random_start(rng, packing) for _ in range(int(n_restarts) - len(starts))]
    starts = [packing.clip(theta) for theta in starts]
    bounds = packing.bounds()
    best, messages, values = None, [], []

    def run(theta0):
        nonlocal best
        result = minimize(negative_lml, theta0, jac=True, method="L-BFGS-B", bounds=bounds)
        messages.append(str(result.message))
        values.append(float(-result.fun))
        if np.isfinite(result.fun) and (best is None or result.fun < best.fun):
            best = result

    for theta0 in starts:
        run(theta0)
    if init is not None and n_restarts == 1 and best is not None and _collapsed(best.x, packing):
        run(packing.clip(_default_start(Y, packing)))
    if best is None:
        raise RuntimeError(f"every start of the ICM fit failed: {messages}")
    return _fit_at(X, Y, best.x, packing, kernel, mean, messages, values)


def _fit_at(X, Y, theta, packing, kernel, mean, messages, values) -> ICMFit:
    """The ICMFit of parameters θ: B, the log marginal likelihood and the means at θ."""
    lengthscales, W, task_diagonal, noise = packing.unpack(theta)
    B = W @ W.T + np.diag(task_diagonal)
    lml, _, means = _icm_lml(X, Y, lengthscales, W, task_diagonal, noise, kernel, False, mean)
    return ICMFit(
        kernel=Separable(_input_kernel(kernel, lengthscales), B),
        noise=noise,
        B=B,
        W=W.copy(),
        task_diagonal=task_diagonal,
        lengthscales=lengthscales,
        log_marginal_likelihood=float(lml),
        kernel_name=kernel,
        messages=messages,
        start_values=values,
        mean=means if mean == "constant" else None,
    )
