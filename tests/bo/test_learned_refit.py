"""The learned kernel's refit schedule: the posterior MultiTaskBO rebuilds at a refit, and
grows by incremental updates between refits, against a dense GP computed from the last fitted
kernel and its output standardisation."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from manytask.bo import MultiTaskBO


def _objectives(X):
    return np.c_[np.sin(5 * X[:, 0]) + X[:, 1], np.cos(4 * X[:, 1]) * X[:, 0], X.sum(axis=1)]


@pytest.mark.parametrize("refit_every, n_told", [(1, 9), (2, 9), (2, 10), (3, 10)])
def test_posterior_is_the_dense_gp_of_the_last_fitted_kernel(refit_every, n_told):
    # fits at t = 3 (n_initial), then every refit_every: (2, 10) and (3, 10) end one and
    # two incremental updates after the last fit, the others at a fit. Checked against
    # μ = (K_CX ⊗ B) G⁻¹ vec(Y) and diag Γ = diag B − diag((K_CX ⊗ B) G⁻¹ (K_XC ⊗ B)) with
    # G = K_XX ⊗ B + ηI (dense solve), Y standardised as at the last fit
    rng = np.random.default_rng(0)
    candidates = rng.uniform(size=(60, 2))
    optimizer = MultiTaskBO(candidates=candidates, kernel="auto", seed=0, refit_every=refit_every)
    for _ in range(n_told):
        x = optimizer.ask()
        optimizer.tell(x, _objectives(x[None, :])[0] + 0.05 * rng.normal(size=3))
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    assert learned._fitted_at == n_told - (n_told - 3) % refit_every
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
    # both sides are backward-stable solves: errors of order cond(G) · machine epsilon
    tolerance = 1e-12 * np.linalg.cond(G)
    assert_allclose(posterior.mean(), mean, atol=tolerance)
    assert_allclose(np.diagonal(posterior.cov(), axis1=1, axis2=2), variance, atol=tolerance)


@pytest.mark.parametrize("prior_mean", ["mean", "worst"])
def test_posterior_is_centred_at_the_chosen_prior_mean(prior_mean):
    # μ(x) = m + Γ(x, X)(Γ(X, X) + ηI)⁻¹(y − m) by a dense solve with the fitted kernel, in
    # the user's units, against the optimiser's incremental posterior: m is the observations'
    # mean, or their minimum (the worst value) with prior_mean="worst"
    rng = np.random.default_rng(3)
    candidates = np.linspace(0.0, 1.0, 41)[:, None]
    optimizer = MultiTaskBO(
        candidates=candidates, kernel="auto", seed=2, refit_every=1, prior_mean=prior_mean
    )
    X = rng.uniform(size=(9, 1))
    Y = np.c_[np.sin(5 * X[:, 0]), X[:, 0] ** 2 * 3.0] + 0.05 * rng.normal(size=(9, 2))
    for x, y in zip(X, Y):
        optimizer.tell(x, y)
    learned, policy = optimizer._learned, optimizer._policy
    m = Y.mean(axis=0) if prior_mean == "mean" else Y.min(axis=0)
    assert_allclose(learned.mean_, m, rtol=1e-12, atol=1e-12)
    scale = learned.scale_
    kernel, eta = policy.posterior.kernel, policy.posterior.noise
    G = kernel.gram(X) + eta * np.eye(2 * len(X))
    residual = ((Y - m) / scale).reshape(-1)  # sample-major, as the Gram
    mean = kernel.gram(candidates, X) @ np.linalg.solve(G, residual)
    expected = m + mean.reshape(-1, 2) * scale
    assert_allclose(policy.posterior.mean(None) * scale + learned.mean_, expected, atol=1e-8)
