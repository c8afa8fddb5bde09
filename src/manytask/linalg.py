"""Dense linear algebra the posteriors share: factorise, never invert.

- ``cholesky``: lower Cholesky factor, adding jitter in growing steps when the matrix is
  numerically singular and raising :class:`NotPositiveDefiniteError` if that fails too.
- ``solve_lower``: batched triangular solves L⁻¹B.
- ``psd_inverse_sqrt``: the factor E with E Eᵀ = K⁺, for Nyström embeddings.

Posterior formulas live in :mod:`manytask.posterior`, not here.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.blas import dtrsm
from scipy.linalg.lapack import dpotrf

__all__ = ["NotPositiveDefiniteError", "cholesky", "solve_lower", "psd_inverse_sqrt"]

#: Jitter tried, relative to the mean of the diagonal, before giving up.
JITTER_STEPS = (1e-10, 1e-8, 1e-6, 1e-4)


class NotPositiveDefiniteError(np.linalg.LinAlgError, ValueError):
    """A matrix that should be positive definite is not, even after adding jitter.

    A ``ValueError`` too, so callers that check their input catch it with the rest.

    Examples
    --------
    >>> import numpy as np
    >>> try:
    ...     cholesky(-np.eye(2))
    ... except NotPositiveDefiniteError as error:
    ...     print(str(error)[:43])
    matrix (2x2) is not positive definite: smal
    """


def cholesky(A, name: str = "matrix", scale=None) -> np.ndarray:
    """Lower Cholesky factor of a symmetric matrix or a stack of them (shape (..., m, m)).

    When a factorisation fails, jitter ε·scale is added for ε in ``JITTER_STEPS`` and a
    ``RuntimeWarning`` says how much was needed. ``scale`` defaults to the mean of the
    diagonal; a Schur complement passes the diagonal of the matrix it was bordered from, so
    that its jitter is on the same scale as a full factorisation's.

    Parameters
    ----------
    A : array_like of shape (m, m) or (b, m, m)
        Symmetric matrix, or a stack of them factorised one by one.
    name : str, default="matrix"
        What A is, for the warning and the error message.
    scale : float or array_like of shape (b,), optional
        Scale of the jitter (one per matrix of a stack); default: the mean of the diagonal.

    Returns
    -------
    ndarray of shape (m, m) or (b, m, m)
        Lower-triangular L with L Lᵀ = A (+ jitter).

    Raises
    ------
    NotPositiveDefiniteError
        If A is not positive definite even with the largest jitter.

    Examples
    --------
    >>> import numpy as np
    >>> L = cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
    >>> np.allclose(L @ L.T, [[4.0, 2.0], [2.0, 2.0]])
    True
    """
    A = np.asarray(A, dtype=float)
    if A.ndim > 2:  # LAPACK per matrix: numpy's batched cholesky is unblocked and slow
        scales = np.broadcast_to(np.nan if scale is None else scale, A.shape[:1])
        return np.stack([cholesky(block, name, s) for block, s in zip(A, scales)])
    factor = _lapack_cholesky(A)
    if factor is not None:
        return factor
    size = A.shape[-1]
    if scale is None or not np.isfinite(scale):
        scale = float(np.mean(np.diag(A))) if size else 1.0
    scale = scale if np.isfinite(scale) and scale > 0 else 1.0
    for step in JITTER_STEPS:
        factor = _lapack_cholesky(A + step * scale * np.eye(size))
        if factor is None:
            continue
        warnings.warn(
            f"{name} ({size}x{size}) is numerically singular; added jitter {step * scale:.3g} "
            "to its diagonal",
            RuntimeWarning,
            stacklevel=2,
        )
        return factor
    smallest = float(np.linalg.eigvalsh(0.5 * (A + A.T))[0])
    raise NotPositiveDefiniteError(
        f"{name} ({size}x{size}) is not positive definite: smallest eigenvalue {smallest:.3g}, "
        f"and Cholesky failed even with jitter {JITTER_STEPS[-1] * scale:.3g}. The kernel is "
        "ill-conditioned or not PSD; increase noise or check the kernel."
    )


def _lapack_cholesky(A):
    """Lower Cholesky factor by LAPACK's blocked dpotrf, or None if A is not PD."""
    if A.shape[-1] == 0:
        return np.zeros_like(A)
    factor, info = dpotrf(A, lower=1, clean=1)
    return factor if info == 0 else None


def solve_lower(L, B) -> np.ndarray:
    """L⁻¹B for a lower-triangular L, or for a stack of them.

    Parameters
    ----------
    L : array_like of shape (m, m) or (b, m, m)
        Lower-triangular matrix, e.g. from :func:`cholesky`, or a stack of them.
    B : array_like of shape (m, k) or (m,), or (b, m, k) for a stack
        Right-hand sides.

    Returns
    -------
    ndarray
        L⁻¹B, shaped like B.

    Examples
    --------
    >>> import numpy as np
    >>> L = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> solve_lower(L, np.array([2.0, 3.0]))
    array([1., 2.])
    """
    L, B = np.asarray(L), np.asarray(B)
    if L.ndim == 2:
        real = np.isrealobj(L) and np.isrealobj(B)
        if real and B.ndim == 2 and B.size and np.all(np.diagonal(L) != 0):
            # (L⁻¹B)ᵀ = BᵀL⁻ᵀ by BLAS's right-sided solve on the free transpose of B: ~3× faster
            # than LAPACK's trtrs at m ≈ 30 with 1000 columns (the BO candidates' posterior)
            return dtrsm(1.0, L, B.T, side=1, lower=1, trans_a=1).T
        return solve_triangular(L, B, lower=True, check_finite=False)  # raises if L is singular
    return np.stack([solve_lower(Li, Bi) for Li, Bi in zip(L, B)])


def psd_inverse_sqrt(K, rtol: float = 1e-10) -> np.ndarray:
    """E of shape (m, r) with E Eᵀ = K⁺ and Eᵀ K E = I_r, r = numerical rank of K.

    Eigenvalues below ``rtol`` times the largest are treated as zero: this is the
    pseudo-inverse square root (K^{1/2})⁺ up to a rotation of the embedding space, which
    leaves Nyström posteriors unchanged.

    Parameters
    ----------
    K : array_like of shape (m, m)
        Symmetric positive semi-definite matrix.
    rtol : float, default=1e-10
        Relative threshold below which an eigenvalue counts as zero.

    Returns
    -------
    ndarray of shape (m, r)
        The embedding E.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[2.0, 0.0], [0.0, 0.0]])
    >>> psd_inverse_sqrt(K).shape
    (2, 1)
    """
    values, vectors = np.linalg.eigh(np.asarray(K, dtype=float))
    keep = values > rtol * max(float(values[-1]), 0.0) if values.size else values > 0
    keep &= values > 0
    return vectors[:, keep] / np.sqrt(values[keep])
