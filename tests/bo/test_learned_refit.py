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
    # μ = Γ_CX G⁻¹ vec(Y) and diag Γ_t = diag Γ(c, c) − diag(Γ_CX G⁻¹ Γ_XC) with
    # G = Γ_XX + ηI (dense solve, sample-major Gram matrices of the kernel in use: the ICM
    # K ⊗ B, or one GP per objective, whichever objective_model="auto" kept), Y
    # standardised as at the last fit
    rng = np.random.default_rng(0)
    candidates = rng.uniform(size=(60, 2))
    optimizer = MultiTaskBO(candidates=candidates, kernel="auto", seed=0, refit_every=refit_every)
    for _ in range(n_told):
        x = optimizer.ask()
        optimizer.tell(x, _objectives(x[None, :])[0] + 0.05 * rng.normal(size=3))
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    assert learned._fitted_at == n_told - (n_told - 3) % refit_every
    kernel = posterior.kernel
    X, Y = optimizer.X_, learned.standardize(optimizer.Y_)
    n, t = Y.shape[1], len(X)
    G = kernel.gram(X, X) + posterior.noise * np.eye(n * t)  # sample-major
    cross = kernel.gram(candidates, X)  # (N·n, t·n)
    mean = (cross @ np.linalg.solve(G, Y.ravel())).reshape(-1, n)
    prior_variance = np.diagonal(kernel.diag_blocks(candidates), axis1=1, axis2=2)
    variance = prior_variance - np.einsum("ij,ji->i", cross, np.linalg.solve(G, cross.T)).reshape(
        -1, n
    )
    # both sides are backward-stable solves: errors of order cond(G) · machine epsilon
    tolerance = 1e-12 * np.linalg.cond(G)
    assert_allclose(posterior.mean(), mean, atol=tolerance)
    assert_allclose(np.diagonal(posterior.cov(), axis1=1, axis2=2), variance, atol=tolerance)


def test_independent_objectives_posterior_is_each_objectives_own_dense_gp():
    # objective_model="independent": the posterior of objective i (back in its units) is the
    # dense GP of its own fit (variance b_i, lengthscales, noise η_i) on its standardised
    # values — the rescaling to a common η changes nothing — and the objectives are
    # independent a posteriori
    from manytask.kernels import RBF

    rng = np.random.default_rng(4)
    X = rng.uniform(size=(15, 2))
    Y = np.c_[np.sin(5 * X[:, 0]), 30 * np.cos(4 * X[:, 1])]
    Y = Y + np.array([0.02, 3.0]) * rng.normal(size=(15, 2))  # different noise levels
    optimizer = MultiTaskBO(
        bounds=[[0, 1], [0, 1]],
        objective_model="independent",
        refit_every=1,
        seed=0,
        kernel_mean="zero",  # the dense GP below has a zero mean (the constant: test_optimizer)
    )
    for x, y in zip(X, Y):
        optimizer.tell(x, y)
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    X_new = rng.uniform(size=(6, 2))
    mean, cov = posterior.mean(X_new), posterior.cov(X_new)
    for i, fit in enumerate(learned.fit_.fits):  # one block per objective
        y_hat = (Y[:, i] - Y[:, i].mean()) / Y[:, i].std()
        K = fit.B[0, 0] * RBF(fit.lengthscales)(X, X) + fit.noise * np.eye(15)
        K_new = fit.B[0, 0] * RBF(fit.lengthscales)(X_new, X)
        expected_mean = K_new @ np.linalg.solve(K, y_hat) * Y[:, i].std() + Y[:, i].mean()
        expected_var = fit.B[0, 0] - np.sum(K_new * np.linalg.solve(K, K_new.T).T, axis=1)
        scale = learned.scale_[i]
        assert_allclose(mean[:, i] * scale + learned.mean_[i], expected_mean, rtol=1e-6, atol=1e-6)
        assert_allclose(
            cov[:, i, i] * scale**2, expected_var * Y[:, i].std() ** 2, rtol=1e-6, atol=1e-10
        )
    assert_allclose(cov[:, 0, 1], 0.0, atol=1e-12)
    assert learned.fit_.fits[0].noise != learned.fit_.fits[1].noise  # the rescaling is used


@pytest.mark.parametrize("objective_model", ["icm", "independent"])
def test_constant_mean_posterior_is_the_dense_gp_around_the_fitted_constants(objective_model):
    # kernel_mean="constant": the standardisation's mean is m + s c (m, s the data's mean and
    # sd, c the fitted constants), so in the user's units the posterior mean is
    # m + s c + s · (the dense GP of the fitted kernel on (Y − m)/s − c), which far from the
    # data returns to m + s c
    from manytask.kernels import RBF

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(14, 2))
    Y = _objectives(X)[:, :2] + 0.05 * rng.normal(size=(14, 2))
    optimizer = MultiTaskBO(
        bounds=[[0, 1], [0, 1]], kernel_mean="constant", objective_model=objective_model,
        refit_every=1, seed=0,
    )  # fmt: skip
    for x, y in zip(X, Y):
        optimizer.tell(x, y)
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    m, s, c = Y.mean(axis=0), Y.std(axis=0), learned.fit_.mean
    assert np.all(np.abs(c) > 1e-3)  # the constants are used
    X_new = np.r_[rng.uniform(size=(5, 2)), [[50.0, 50.0]]]
    mean = posterior.mean(X_new) * learned.scale_ + learned.mean_
    fits = [learned.fit_] if objective_model == "icm" else learned.fit_.fits
    tasks = [[0, 1]] if objective_model == "icm" else [[0], [1]]
    for fit, block in zip(fits, tasks):
        k, n = RBF(fit.lengthscales), len(block)
        G = np.kron(k(X, X), fit.B) + fit.noise * np.eye(14 * n)  # sample-major
        residual = (Y[:, block] - m[block]) / s[block] - c[block]
        gp = (np.kron(k(X_new, X), fit.B) @ np.linalg.solve(G, residual.ravel())).reshape(-1, n)
        expected = m[block] + s[block] * (c[block] + gp)
        assert_allclose(mean[:, block], expected, rtol=1e-8, atol=1e-8)
    assert_allclose(mean[-1], m + s * c, rtol=1e-9)


@pytest.mark.parametrize("objective_model", ["icm", "independent"])
def test_refit_without_warm_start_does_not_depend_on_the_previous_fit(objective_model):
    # warm_start=False: a refit runs only the fresh starts, so the fit in use before it
    # (here two different ones) leaves it unchanged
    from manytask.bo.learned import LearnedKernel

    rng = np.random.default_rng(2)
    X = rng.uniform(size=(12, 2))
    Y = _objectives(X)[:, :2] + 0.05 * rng.normal(size=(12, 2))
    settings = dict(n_features=2, n_tasks=2, box=[[0, 1], [0, 1]], seed=0, refit_every=1,
                    prior=True, objective_model=objective_model)  # fmt: skip
    learned = LearnedKernel(**settings, warm_start=False)
    first, other = learned.refit(X[:6], Y[:6]), learned.refit(X[:9], Y[:9])
    results = []
    for previous in (first, other):
        learned.accept(previous)
        refit = learned.refit(X, Y)
        fits = [refit.fit] if objective_model == "icm" else refit.fit.fits
        results.append(np.concatenate([np.r_[f.lengthscales, f.B.ravel(), f.noise] for f in fits]))
        assert all(len(f.start_values) == 1 for f in fits)  # the data-driven start only
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("n_constraints", [0, 1])
def test_auto_keeps_the_model_of_higher_objective_likelihood(n_constraints):
    # objective_model="auto": both models are fitted with the same seed, so each equals the
    # fit of its own setting, and the one kept is the one whose objectives have the higher
    # log marginal likelihood (the sum over the blocks for one GP per objective; the
    # constraints' block, the same model in both, is left out). Two data sets, one of each:
    # two noisy copies of one function (the ICM explains them with one correlated kernel)
    # and two functions of different inputs at different scales of variation
    from manytask.bo.learned import LearnedKernel

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(24, 2))
    shared = np.sin(6 * X[:, 0]) + X[:, 1]
    data = {
        "icm": np.c_[shared, -2.0 * shared + 3.0],
        "independent": np.c_[np.sin(9 * X[:, 0]), X[:, 1] ** 2],
    }
    settings = dict(n_features=2, box=[[0, 1], [0, 1]], seed=0, refit_every=1, prior=True,
                    n_tasks=2 + n_constraints, n_constraints=n_constraints)  # fmt: skip
    for expected, Y in data.items():
        Y = Y + 0.02 * rng.normal(size=Y.shape)
        if n_constraints:
            Y = np.c_[Y, X[:, 0] - 0.5 + 0.02 * rng.normal(size=24)]
        refits = {
            model: LearnedKernel(**settings, objective_model=model).refit(X, Y)
            for model in ("icm", "independent", "auto")
        }
        objective_lml = {}
        for model in ("icm", "independent"):
            fit = refits[model].fit
            fits = fit.fits if hasattr(fit, "fits") else [fit]
            blocks = fit.blocks if hasattr(fit, "blocks") else [[0, 1]]
            objective_lml[model] = sum(
                f.log_marginal_likelihood for f, tasks in zip(fits, blocks) if tasks[0] < 2
            )
        assert objective_lml[expected] > max(objective_lml.values()) - 1e-12
        assert abs(objective_lml["icm"] - objective_lml["independent"]) > 1.0  # not a tie
        chosen = refits["auto"]
        assert chosen.model == expected
        assert_allclose(chosen.mean, refits[expected].mean, rtol=0, atol=0)
        assert_allclose(chosen.scale, refits[expected].scale, rtol=0, atol=0)
        assert chosen.noise == refits[expected].noise


def test_auto_with_one_objective_fits_one_gp():
    from manytask.bo.learned import LearnedKernel

    X = np.linspace(0, 1, 8)[:, None]
    learned = LearnedKernel(
        n_features=1, n_tasks=1, box=[[0, 1]], seed=0, refit_every=1, objective_model="auto"
    )
    refit = learned.refit(X, np.sin(4 * X))
    assert refit.model == "icm" and len(refit.fit.start_values) == 3
