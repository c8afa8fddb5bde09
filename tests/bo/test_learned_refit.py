"""The learned kernel's refits: the posterior MultiTaskBO rebuilds after a refit against a
dense GP computed from the fitted kernel."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose

from manytask.bo import MultiTaskBO


def _objectives(X):
    return np.c_[np.sin(5 * X[:, 0]) + X[:, 1], np.cos(4 * X[:, 1]) * X[:, 0], X.sum(axis=1)]


def test_posterior_after_a_refit_is_the_dense_gp_of_the_fitted_kernel():
    # MultiTaskBO rebuilds the posterior over the candidates from all t points at every
    # refit; here it is checked against μ = (K_CX ⊗ B) G⁻¹ vec(Y) and
    # diag Γ = diag B − diag((K_CX ⊗ B) G⁻¹ (K_XC ⊗ B)) with G = K_XX ⊗ B + ηI (dense solve)
    rng = np.random.default_rng(0)
    candidates = rng.uniform(size=(60, 2))
    optimizer = MultiTaskBO(candidates=candidates, kernel="auto", seed=0)
    for _ in range(9):
        x = optimizer.ask()
        optimizer.tell(x, _objectives(x[None, :])[0] + 0.05 * rng.normal(size=3))
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    kernel = posterior.kernel
    B, K = np.asarray(kernel.B), kernel.kernel
    X, Y = optimizer.X_, learned.standardize(optimizer.Y_)
    n, t = Y.shape[1], len(X)
    G = np.kron(K(X, X), B) + posterior.noise * np.eye(n * t)  # sample-major
    cross = np.kron(K(candidates, X), B)  # (N·n, t·n)
    mean = (cross @ np.linalg.solve(G, Y.ravel())).reshape(-1, n)
    variance = np.diag(B)[None, :] - np.einsum(
        "ij,ji->i", cross, np.linalg.solve(G, cross.T)
    ).reshape(-1, n)
    assert_allclose(posterior.mean(), mean, rtol=1e-7, atol=1e-9)
    assert_allclose(np.diagonal(posterior.cov(), axis1=1, axis2=2), variance, atol=1e-9)
