"""Task kernels: the n × n PSD matrix B that says how n finite tasks are related.

``check_task_matrix`` validates a user's B; ``uniform_task_similarity`` and
``estimate_task_matrix`` build one (``multitask-bayesian-optimization.txt`` §2 and §5).
Operator-valued kernels that use B are in :mod:`manytask.kernels.operator`.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import cho_solve

from .._validation import as_finite_array
from ..linalg import cholesky

__all__ = ["check_task_matrix", "uniform_task_similarity", "estimate_task_matrix"]


def check_task_matrix(B, name: str = "B", tol: float = 1e-8) -> np.ndarray:
    """Return B as a float (n, n) array after checking it is symmetric and PSD within ``tol``.

    Tolerances are relative to the largest absolute entry of B.

    Parameters
    ----------
    B : array_like of shape (n, n)
        Candidate task matrix.
    name : str, default="B"
        Name of the parameter in error messages.
    tol : float, default=1e-8
        Relative tolerance of the symmetry and PSD checks.

    Returns
    -------
    ndarray of shape (n, n)
        (B + Bᵀ)/2, exactly symmetric.

    Raises
    ------
    ValueError
        If B is not square, not finite, not symmetric or has a negative eigenvalue, with a
        message saying which and by how much.

    Examples
    --------
    >>> check_task_matrix([[1.0, 0.5], [0.5, 1.0]]).shape
    (2, 2)
    """
    B = as_finite_array(B, name, ndim=2)
    if B.shape[0] != B.shape[1] or B.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {B.shape}")
    scale = max(float(np.max(np.abs(B))), np.finfo(float).tiny)
    asymmetry = float(np.max(np.abs(B - B.T)))
    if asymmetry > tol * scale:
        raise ValueError(f"{name} must be symmetric: max |{name} - {name}ᵀ| = {asymmetry:.3g}")
    smallest = float(np.linalg.eigvalsh(B)[0])
    if smallest < -tol * scale:
        raise ValueError(
            f"{name} must be positive semi-definite: smallest eigenvalue {smallest:.3g} < 0"
        )
    if scale <= np.finfo(float).tiny:
        raise ValueError(f"{name} must not be the zero matrix")
    return 0.5 * (B + B.T)


def uniform_task_similarity(n: int, omega: float) -> np.ndarray:
    """B = ω Iₙ + (1 − ω) 1ₙ / n (§2, Evgeniou et al. 2005): ω = 1 unrelated, ω = 0 identical.

    Parameters
    ----------
    n : int
        Number of tasks, ≥ 1.
    omega : float
        ω ∈ [0, 1].

    Returns
    -------
    ndarray of shape (n, n)
        B.

    Examples
    --------
    >>> uniform_task_similarity(2, omega=0.4)
    array([[0.7, 0.3],
           [0.3, 0.7]])
    """
    if not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(omega, numbers.Real) or not 0.0 <= omega <= 1.0:
        raise ValueError(f"omega must lie in [0, 1], got {omega!r}")
    return omega * np.eye(n) + (1.0 - omega) * np.ones((n, n)) / n


def estimate_task_matrix(R, K) -> np.ndarray:
    """B = Rᵀ K⁻¹ R / m (§5, sensor data): task similarity left once K de-correlates R.

    Parameters
    ----------
    R : array of shape (m, n)
        m readings of n tasks.
    K : array of shape (m, m)
        Gram matrix of the scalar kernel at the m readings' inputs. It is factorised by a
        Cholesky decomposition (with jitter if it is singular), never inverted.

    Returns
    -------
    ndarray of shape (n, n)
        B, symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> R = np.random.default_rng(0).normal(size=(50, 3))
    >>> estimate_task_matrix(R, np.eye(50)).shape
    (3, 3)
    """
    R = as_finite_array(R, "R", ndim=2)
    K = as_finite_array(K, "K", ndim=2)
    m = R.shape[0]
    if K.shape != (m, m):
        raise ValueError(f"K must have shape ({m}, {m}) to match R's {m} rows, got {K.shape}")
    factor = cholesky(K, name="K")
    B = R.T @ cho_solve((factor, True), R) / m
    return 0.5 * (B + B.T)
