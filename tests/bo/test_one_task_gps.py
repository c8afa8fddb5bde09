"""One-task GPs fitted together (manytask.bo.one_task_gps) against the ICM code's one-task case
(its eigen-split likelihood and its own L-BFGS-B fit, task by task) and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from manytask.bo.block_model import fit_block_kernels
from manytask.bo.kernel_learning import _Packing, fit_icm_kernel, icm_log_marginal_likelihood
from manytask.bo.one_task_gps import (
    _lmls_one_by_one,
    fit_one_task_gps,
    one_task_log_marginal_likelihoods,
)


def _data(seed=0, t=20, d=3, n=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(t, d))
    Y = np.c_[np.sin(5 * X[:, 0]), np.cos(3 * X[:, 1]) * X[:, 2], X.sum(axis=1) ** 2][:, :n]
    Y = Y + 0.05 * rng.normal(size=Y.shape)
    return X, (Y - Y.mean(axis=0)) / Y.std(axis=0)


def _theta(rng, n, d):
    return np.column_stack(
        [rng.uniform(-2, 0, (n, d)), rng.normal(size=n), rng.uniform(-3, 0, n),
         rng.uniform(-5, -1, n)]
    )  # fmt: skip


@pytest.mark.parametrize("mean", ["zero", "constant"])
def test_values_and_gradients_are_the_icm_likelihood_of_every_task(mean):
    X, Y = _data()
    theta = _theta(np.random.default_rng(1), 3, 3)
    lml, gradient, means = one_task_log_marginal_likelihoods(X, Y, theta, mean)
    packing = _Packing(3, 1, 1)
    for i in range(3):
        value, grads = icm_log_marginal_likelihood(
            X, Y[:, [i]], *packing.unpack(theta[i]), return_gradient=True, mean=mean
        )
        assert lml[i] == pytest.approx(value, rel=1e-10)
        np.testing.assert_allclose(gradient[i], packing.pack_gradient(grads), rtol=1e-8, atol=1e-10)
    assert (np.abs(means) > 0).all() if mean == "constant" else (means == 0).all()


def test_gradient_matches_central_differences():
    X, Y = _data(seed=2, t=15, n=2)
    theta = _theta(np.random.default_rng(3), 2, 3)
    _, gradient, _ = one_task_log_marginal_likelihoods(X, Y, theta, "constant")
    step = 1e-6
    for i in range(2):
        for k in range(theta.shape[1]):
            up, down = theta.copy(), theta.copy()
            up[i, k] += step
            down[i, k] -= step
            difference = (
                one_task_log_marginal_likelihoods(X, Y, up, "constant")[0]
                - one_task_log_marginal_likelihoods(X, Y, down, "constant")[0]
            ) / (2 * step)
            assert difference[1 - i] == pytest.approx(0.0, abs=1e-6)  # tasks independent
            # central differences err by O(step²) plus rounding of order 1e-16 / step
            assert gradient[i, k] == pytest.approx(difference[i], rel=1e-5, abs=1e-6)


def test_points_whose_squared_distance_overflows_give_finite_values_and_gradients():
    # a point 1e200 away: (Δx)² overflows, the kernel is 0 at its pairs; the ICM code (its
    # pair-by-pair sum where z² overflows) is the reference
    X, Y = _data(seed=6, t=12, n=2)
    X[3, 1] = 1e200
    theta = _theta(np.random.default_rng(7), 2, 3)
    packing = _Packing(3, 1, 1)
    with np.errstate(all="raise"):
        lml, gradient, _ = one_task_log_marginal_likelihoods(X, Y, theta, "constant")
    assert np.isfinite(lml).all() and np.isfinite(gradient).all()
    for i in range(2):
        value, grads = icm_log_marginal_likelihood(
            X, Y[:, [i]], *packing.unpack(theta[i]), return_gradient=True, mean="constant"
        )
        assert lml[i] == pytest.approx(value, rel=1e-10)
        np.testing.assert_allclose(gradient[i], packing.pack_gradient(grads), rtol=1e-8, atol=1e-10)


def test_task_by_task_fallback_gives_the_same_values():
    X, Y = _data(seed=4)
    theta = _theta(np.random.default_rng(5), 3, 3)
    batched = one_task_log_marginal_likelihoods(X, Y, theta, "constant")
    one_by_one = _lmls_one_by_one(X, Y, theta, _Packing(3, 1, 1), "constant")
    for ours, theirs in zip(batched, one_by_one):
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("prior", [False, True])
def test_every_task_reaches_its_own_fits_maximum(prior):
    # the sum's maximum is every task's own: each task's log posterior at the joint fit equals
    # that of fit_icm_kernel on its column alone, from the same data-driven start, within what
    # L-BFGS-B's stopping rule leaves (a relative decrease below ftol ≈ 2.2e-9 per iteration:
    # up to ~1e-4 along slow directions). Every task depends on every input, so that no
    # lengthscale lies on a flat ridge where two stopping points may differ by more
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(30, 3))
    Y = np.c_[
        np.sin(3 * X[:, 0] + 2 * X[:, 1]) + X[:, 2],
        np.cos(2 * X[:, 1]) * X[:, 0] + X[:, 2] ** 2,
        X.sum(axis=1) ** 2,
    ] + 0.05 * rng.normal(size=(30, 3))
    Y = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    fits = fit_one_task_gps(X, Y, n_restarts=1, prior=prior, mean="constant")
    packing = _Packing(3, 1, 1)

    def log_posterior(fit):
        theta = packing.pack(fit.lengthscales, fit.W, fit.task_diagonal, fit.noise)
        return fit.log_marginal_likelihood + (float(packing.log_prior(theta)[0]) if prior else 0)

    for i, fit in enumerate(fits):
        alone = fit_icm_kernel(X, Y[:, [i]], n_restarts=1, prior=prior, mean="constant")
        assert log_posterior(fit) == pytest.approx(log_posterior(alone), rel=1e-4, abs=1e-3)
        assert fit.B.shape == (1, 1) and fit.mean.shape == (1,)
        assert len(fit.start_values) == 1


def test_block_model_fits_one_task_blocks_together_and_the_icm_blocks_alone():
    X, Y = _data(seed=7, t=25)
    fit = fit_block_kernels(X, Y, [[0, 2], [1]], n_restarts=2, random_state=0)
    assert [f.B.shape for f in fit.fits] == [(2, 2), (1, 1)]
    assert [len(f.start_values) for f in fit.fits] == [2, 2]


def test_init_of_the_wrong_length_is_refused():
    X, Y = _data()
    fits = fit_one_task_gps(X, Y[:, :2], n_restarts=1)
    with pytest.raises(ValueError, match=r"init must hold one fit per task \(3\), got 2"):
        fit_one_task_gps(X, Y, n_restarts=1, init=fits)
