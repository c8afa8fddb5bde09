"""Weights λ on the probability simplex: the samplers P_λ of random scalarisations.

Shared by Bayesian optimisation (a λ_t per round, ``multitask-bayesian-optimization.txt``
§2, §5 and Appendix E) and boosting (mixtures of source domains). A sampler is a callable
``sampler(rng, n) -> λ`` with λ > 0 (or ≥ 0 for Dirichlet draws that underflow) and
Σλ = 1; :func:`weight_sampler` turns a name, a fixed λ or a callable into one.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from ._validation import as_finite_array, check_positive

__all__ = [
    "WEIGHT_DISTRIBUTIONS",
    "paria_weights",
    "uniform_weights",
    "dirichlet_weights",
    "unit_sphere_weights",
    "check_simplex",
    "weight_sampler",
]


def paria_weights(rng: np.random.Generator, n: int) -> np.ndarray:
    """§5 (after Paria et al. 2019): λ = α/‖α‖₁ with α_i = ‖u‖₁/u_i, u ~ U[0, 1]ⁿ.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the uniforms u.
    n : int
        Number of tasks.

    Returns
    -------
    ndarray of shape (n,)
        λ > 0 with Σλ = 1.

    Examples
    --------
    >>> w = paria_weights(np.random.default_rng(0), 3)
    >>> bool(np.isclose(w.sum(), 1.0) and np.all(w > 0))
    True
    """
    u = rng.uniform(size=n)
    u = np.maximum(u, np.finfo(float).tiny)  # u = 0 has probability 0 but would divide by 0
    alpha = u.sum() / u
    return alpha / alpha.sum()


def uniform_weights(rng: np.random.Generator, n: int) -> np.ndarray:
    """Appendix E: λ = u/‖u‖₁ with u ~ U[0, 1]ⁿ.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the uniforms u.
    n : int
        Number of tasks.

    Returns
    -------
    ndarray of shape (n,)
        λ > 0 with Σλ = 1.

    Examples
    --------
    >>> w = uniform_weights(np.random.default_rng(0), 4)
    >>> w.shape, bool(np.isclose(w.sum(), 1.0))
    ((4,), True)
    """
    u = np.maximum(rng.uniform(size=n), np.finfo(float).tiny)
    return u / u.sum()


def dirichlet_weights(concentration: float = 1.0) -> Callable:
    """A sampler of λ ~ Dirichlet(concentration · 1ₙ) (1 = uniform on the simplex).

    Parameters
    ----------
    concentration : float, default=1.0
        Concentration > 0 of every coordinate; below 1 the draws favour the corners.

    Returns
    -------
    callable
        ``sample(rng, n) -> λ`` of shape (n,).

    Examples
    --------
    >>> sample = dirichlet_weights(2.0)
    >>> w = sample(np.random.default_rng(0), 3)
    >>> w.shape, bool(np.isclose(w.sum(), 1.0))
    ((3,), True)
    """
    concentration = check_positive(concentration, "concentration")

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.dirichlet(np.full(n, concentration))

    sample.__name__ = f"dirichlet({concentration:g})"
    return sample


def unit_sphere_weights(rng: np.random.Generator, n: int) -> np.ndarray:
    """λ = |g|/‖g‖₁ with g ~ N(0, Iₙ): its direction λ/‖λ‖₂ = |g|/‖g‖₂ is uniform on the
    positive unit sphere, the distribution of the hypervolume scalarisation (Golovin & Zhang
    2020; :class:`manytask.bo.Hypervolume`).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n : int
        Number of tasks.

    Returns
    -------
    ndarray of shape (n,)
        Positive weights that sum to 1.

    Examples
    --------
    >>> w = unit_sphere_weights(np.random.default_rng(0), 3)
    >>> w.shape, bool(np.isclose(w.sum(), 1.0)), bool(np.all(w > 0))
    ((3,), True, True)
    """
    g = np.maximum(np.abs(rng.standard_normal(n)), np.finfo(float).tiny)
    return g / g.sum()


WEIGHT_DISTRIBUTIONS = {
    "paria": paria_weights,
    "uniform": uniform_weights,
    "dirichlet": dirichlet_weights(1.0),
    "unit-sphere": unit_sphere_weights,
}


def check_simplex(weights, n: int | None = None, name: str = "weights") -> np.ndarray:
    """Return ``weights`` as a float vector after checking λ ≥ 0 and Σλ = 1 (within 1e-8).

    Parameters
    ----------
    weights : array_like of shape (n,)
        Candidate λ.
    n : int, optional
        Required number of entries.
    name : str, default="weights"
        Name of the parameter in error messages.

    Returns
    -------
    ndarray of shape (n,)
        ``weights`` as floats.

    Raises
    ------
    ValueError
        If an entry is negative or not finite, the sum is not 1, or the length is not n.

    Examples
    --------
    >>> check_simplex([0.5, 0.5])
    array([0.5, 0.5])
    """
    weights = as_finite_array(weights, name, ndim=1)
    if n is not None and weights.shape[0] != n:
        raise ValueError(f"{name} must have {n} entries, got {weights.shape[0]}")
    if np.any(weights < 0) or not np.isclose(weights.sum(), 1.0, rtol=0, atol=1e-8):
        raise ValueError(f"{name} must be non-negative and sum to 1, got {weights.tolist()}")
    return weights


def weight_sampler(weights, n: int) -> Callable:
    """Turn a name (``"paria"``, ``"uniform"``, ``"dirichlet"``), a fixed λ (a Dirac: one
    deterministic scalarisation) or a callable ``(rng, n) -> λ`` into a sampler for n tasks.

    Parameters
    ----------
    weights : str, array_like of shape (n,) or callable
        A key of ``WEIGHT_DISTRIBUTIONS``, a fixed λ, or a sampler (whose draws are then
        checked by :func:`check_simplex`).
    n : int
        Number of tasks; a fixed λ must have n entries.

    Returns
    -------
    callable
        ``sample(rng, n) -> λ`` of shape (n,).

    Examples
    --------
    >>> sample = weight_sampler([0.25, 0.75], n=2)
    >>> sample(np.random.default_rng(0), 2)
    array([0.25, 0.75])
    """
    if isinstance(weights, str):
        if weights not in WEIGHT_DISTRIBUTIONS:
            valid = ", ".join(sorted(WEIGHT_DISTRIBUTIONS))
            raise ValueError(
                f"weights must be one of {valid}, a fixed λ or a callable, got {weights!r}"
            )
        return WEIGHT_DISTRIBUTIONS[weights]
    if callable(weights):

        def sample(rng, size):
            return check_simplex(weights(rng, size), size, name="weights(rng, n)")

        return sample
    if isinstance(weights, numbers.Number):
        raise ValueError(f"weights must be a name, a fixed λ or a callable, got {weights!r}")
    fixed = check_simplex(weights, n)
    return lambda rng, size: fixed.copy()
