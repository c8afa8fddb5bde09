"""Learned ICM kernels: the eigenbasis likelihood against a dense Gaussian log-density, its
gradient against central finite differences, the one-task fit against scikit-learn's GP
regressor, recovery of a known task correlation, warm starts, the normalisation helpers and
input validation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import multivariate_normal
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as skk

from manytask.bo.kernel_learning import (
    LENGTHSCALE_BOUNDS,
    NOISE_BOUNDS,
    ICMFit,
    _Packing,
    _shifted_inverses,
    fit_icm_kernel,
    icm_log_marginal_likelihood,
)
from manytask.bo.transforms import (
    normalize_inputs,
    standardize_outputs,
    unnormalize_inputs,
    unstandardize_outputs,
)
from manytask.kernels import RBF, Matern, Separable

INPUT_KERNELS = {"rbf": RBF, "matern52": lambda l: Matern(l, nu=2.5)}


def _random_problem(seed, t=12, d=2, n=3, rank=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(t, d))
    Y = rng.normal(size=(t, n))
    lengthscales = rng.uniform(0.2, 0.8, size=d)
    W = rng.normal(size=(n, rank))
    task_diagonal = rng.uniform(0.05, 0.5, size=n)
    return X, Y, lengthscales, W, task_diagonal, 0.07


def _sample_icm(rng, X, lengthscales, B, noise):
    """Y (t, n) with vec(Y) (task-major) ~ N(0, B ⊗ K + ηI), by a dense Cholesky factor."""
    t, n = len(X), len(B)
    K = RBF(lengthscales)(X)
    factor = np.linalg.cholesky(np.kron(B, K) + 1e-10 * np.eye(n * t))
    signal = (factor @ rng.normal(size=n * t)).reshape(n, t).T
    return signal + np.sqrt(noise) * rng.normal(size=(t, n))


@pytest.mark.parametrize("kernel", ["rbf", "matern52"])
def test_log_marginal_likelihood_matches_dense_gaussian_logpdf(kernel):
    X, Y, lengthscales, W, task_diagonal, noise = _random_problem(0)
    t, n = Y.shape
    lml = icm_log_marginal_likelihood(X, Y, lengthscales, W, task_diagonal, noise, kernel)
    K = INPUT_KERNELS[kernel](lengthscales)(X)
    B = W @ W.T + np.diag(task_diagonal)
    # task-major: vec stacks the columns of Y, covariance B ⊗ K
    task_major = multivariate_normal(np.zeros(n * t), np.kron(B, K) + noise * np.eye(n * t))
    assert_allclose(lml, task_major.logpdf(Y.ravel(order="F")), rtol=1e-10)
    # sample-major (the posterior's Gram K ⊗ B): rows of Y concatenated
    sample_major = multivariate_normal(np.zeros(n * t), np.kron(K, B) + noise * np.eye(n * t))
    assert_allclose(lml, sample_major.logpdf(Y.ravel()), rtol=1e-10)


@pytest.mark.parametrize("negative", [False, True])
def test_shifted_inverses_match_dense_inverses(negative):
    # (ξ_i K + ηI)⁻¹ and log det against np.linalg.inv and slogdet. With an eigenvalue −0.1
    # of K no Cholesky factor of 2.5 K + 0.01 I exists, and the eigenbasis path clips K's
    # eigenvalues at 0: the inverses are those of ξ_i K₊ + ηI.
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(7, 7)))
    a = np.linspace(-0.1 if negative else 0.05, 3.0, 7)
    K = (Q * a) @ Q.T
    xi, noise = np.array([0.0, 0.4, 2.5]), 1e-2
    inverses, log_dets = _shifted_inverses(K, xi, noise)
    for i, x in enumerate(xi):
        M = (Q * (x * np.maximum(a, 0.0) + noise)) @ Q.T
        # condition number ≤ 7.5/0.01: inverses agree to ~1e-13 relative
        assert_allclose(inverses[i], np.linalg.inv(M), rtol=1e-10, atol=1e-10)
        assert_allclose(log_dets[i], np.linalg.slogdet(M)[1], rtol=1e-12)


def test_constant_mean_likelihood_is_the_dense_likelihood_at_the_gls_means():
    # mean="constant": log p(Y − 1cᵀ) at the generalised-least-squares c of the dense
    # task-major covariance C (P = I_n ⊗ 1_t: c = (PᵀC⁻¹P)⁻¹ PᵀC⁻¹ vec Y), which no other c
    # beats; the fit's means are that c at its parameters
    X, Y, lengthscales, W, task_diagonal, noise = _random_problem(2)
    Y = Y + np.array([3.0, -1.0, 0.5])  # means far from 0
    t, n = Y.shape
    B = W @ W.T + np.diag(task_diagonal)
    C = np.kron(B, RBF(lengthscales)(X)) + noise * np.eye(n * t)
    P = np.kron(np.eye(n), np.ones((t, 1)))
    c = np.linalg.solve(P.T @ np.linalg.solve(C, P), P.T @ np.linalg.solve(C, Y.ravel("F")))
    dense = multivariate_normal(np.zeros(n * t), C)
    lml = icm_log_marginal_likelihood(X, Y, lengthscales, W, task_diagonal, noise, mean="constant")
    assert_allclose(lml, dense.logpdf((Y - c).ravel(order="F")), rtol=1e-10)
    for shift in np.eye(n) * 1e-3:
        assert dense.logpdf((Y - c - shift).ravel(order="F")) < lml
    fit = fit_icm_kernel(X, Y, n_restarts=1, random_state=0, prior=True, mean="constant")
    B = fit.B
    C = np.kron(B, RBF(fit.lengthscales)(X)) + fit.noise * np.eye(n * t)
    c = np.linalg.solve(P.T @ np.linalg.solve(C, P), P.T @ np.linalg.solve(C, Y.ravel("F")))
    assert_allclose(fit.mean, c, rtol=1e-8, atol=1e-10)  # cond(C) ≤ 1/η ~ 1e3 to 1e6
    assert fit.log_marginal_likelihood == pytest.approx(
        multivariate_normal(np.zeros(n * t), C).logpdf((Y - c).ravel(order="F")), rel=1e-9
    )


@pytest.mark.parametrize(
    "kernel, mean", [("rbf", "zero"), ("matern52", "zero"), ("rbf", "constant")]
)
def test_gradient_matches_central_finite_differences(kernel, mean):
    # with mean="constant", of the profile likelihood (c re-maximised at every θ)
    X, Y, lengthscales, W, task_diagonal, noise = _random_problem(1)
    Y = Y + (np.array([2.0, -1.0, 0.0]) if mean == "constant" else 0.0)
    _, grads = icm_log_marginal_likelihood(
        X, Y, lengthscales, W, task_diagonal, noise, kernel, return_gradient=True, mean=mean
    )
    # θ = (log l, W, log v, log η), perturbed one coordinate at a time
    theta = np.concatenate(
        [np.log(lengthscales), W.ravel(), np.log(task_diagonal), [np.log(noise)]]
    )
    d, n, r = len(lengthscales), *W.shape

    def lml(theta):
        return icm_log_marginal_likelihood(
            X,
            Y,
            np.exp(theta[:d]),
            theta[d : d + n * r].reshape(n, r),
            np.exp(theta[d + n * r : -1]),
            float(np.exp(theta[-1])),
            kernel,
            mean=mean,
        )

    step = 1e-6
    numeric = np.array(
        [(lml(theta + step * e) - lml(theta - step * e)) / (2 * step) for e in np.eye(len(theta))]
    )
    analytic = np.concatenate(
        [
            grads["log_lengthscales"],
            grads["W"].ravel(),
            grads["log_task_diagonal"],
            [grads["log_noise"]],
        ]
    )
    # central differences: O(step²) truncation plus ~1e-16·|lml|/step ≈ 1e-9 round-off
    assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


def test_one_task_fit_matches_sklearn_gaussian_process():
    # With n = 1, B = w² + v is the signal variance: the model is
    # ConstantKernel · RBF(ARD) + WhiteKernel, which scikit-learn fits by the same criterion.
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(40, 2))
    Y, _, _ = standardize_outputs(_sample_icm(rng, X, np.array([0.25, 0.6]), [[1.0]], 0.05))
    fit = fit_icm_kernel(X, Y, n_restarts=3, random_state=0)
    sk_kernel = skk.ConstantKernel(1.0, (1e-6, 110.0)) * skk.RBF(
        [0.3, 0.3], LENGTHSCALE_BOUNDS
    ) + skk.WhiteKernel(0.1, NOISE_BOUNDS)
    gpr = GaussianProcessRegressor(sk_kernel, n_restarts_optimizer=3, random_state=0)
    gpr.fit(X, Y[:, 0])
    sk_signal, *sk_lengthscales, sk_noise = np.exp(gpr.kernel_.theta)
    # the same likelihood, evaluated by scikit-learn at our parameters
    ours = np.log([fit.B[0, 0], *fit.lengthscales, fit.noise])
    assert_allclose(gpr.log_marginal_likelihood(ours), fit.log_marginal_likelihood, rtol=1e-8)
    # both optimisers stop at |projected gradient| ≲ 1e-5 of the same smooth objective, so
    # their optima agree far more closely than 3 % (the statistical spread of these estimates
    # with t = 40 is tens of percent); our best must not be worse than theirs
    assert fit.log_marginal_likelihood >= gpr.log_marginal_likelihood_value_ - 1e-4
    assert_allclose(fit.lengthscales, sk_lengthscales, rtol=0.03)
    assert_allclose([fit.noise, fit.B[0, 0]], [sk_noise, sk_signal], rtol=0.03)


def test_fit_recovers_task_correlations_of_a_known_icm_model():
    # The test: t = 200, n = 3. The error of the fitted correlations is statistical:
    # about (1 − ρ²)/√t_eff with t_eff = Σ_j a_j/(a_j + η) ≈ 140 effective samples here
    # (short lengthscales, small noise), i.e. ≲ 0.08 per entry.
    correlation = np.array([[1.0, 0.8, -0.6], [0.8, 1.0, -0.3], [-0.6, -0.3, 1.0]])
    lengthscales, noise = np.array([0.07, 0.14]), 1e-3
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    Y, _, _ = standardize_outputs(_sample_icm(rng, X, lengthscales, correlation, noise))
    fit = fit_icm_kernel(X, Y, n_restarts=2, random_state=0)
    assert np.max(np.abs(fit.correlation - correlation)) <= 0.15
    assert_allclose(fit.lengthscales, lengthscales, rtol=0.2)


def test_fit_returns_a_consistent_result():
    X, Y, *_ = _random_problem(4, t=15, n=2, rank=1)
    fit = fit_icm_kernel(X, Y, rank=1, kernel="matern52", n_restarts=2, random_state=0)
    assert isinstance(fit, ICMFit) and isinstance(fit.kernel, Separable)
    assert isinstance(fit.kernel.kernel, Matern) and fit.kernel.kernel.nu == 2.5
    assert_allclose(fit.kernel.kernel.lengthscale, fit.lengthscales)
    assert_allclose(fit.B, fit.W @ fit.W.T + np.diag(fit.task_diagonal))
    assert_allclose(fit.kernel.B, fit.B)
    assert fit.W.shape == (2, 1) and len(fit.messages) == len(fit.start_values) == 2
    assert fit.log_marginal_likelihood == pytest.approx(max(fit.start_values))
    assert fit.log_marginal_likelihood == pytest.approx(
        icm_log_marginal_likelihood(
            X, Y, fit.lengthscales, fit.W, fit.task_diagonal, fit.noise, "matern52"
        )
    )
    lower, upper = LENGTHSCALE_BOUNDS
    assert np.all((fit.lengthscales >= lower * 0.999) & (fit.lengthscales <= upper * 1.001))
    assert fit.noise >= NOISE_BOUNDS[0] * 0.999


def test_same_random_state_gives_the_same_fit():
    X, Y, *_ = _random_problem(5, t=15)
    first = fit_icm_kernel(X, Y, n_restarts=2, random_state=7)
    second = fit_icm_kernel(X, Y, n_restarts=2, random_state=7)
    assert_allclose(first.B, second.B)
    assert first.noise == second.noise


def test_warm_start_does_not_lose_likelihood():
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(30, 1))
    B = np.array([[1.0, 0.7], [0.7, 1.0]])
    Y, _, _ = standardize_outputs(_sample_icm(rng, X, np.array([0.2]), B, 0.01))
    first = fit_icm_kernel(X[:25], Y[:25], n_restarts=2, random_state=0)
    refit = fit_icm_kernel(X, Y, n_restarts=1, init=first)
    at_init = icm_log_marginal_likelihood(
        X, Y, first.lengthscales, first.W, first.task_diagonal, first.noise
    )
    assert refit.log_marginal_likelihood >= at_init - 1e-9


def test_normalize_inputs_round_trip():
    X = np.array([[2.0, -1.0], [4.0, 3.0], [3.0, 1.0]])
    bounds = [[2.0, 4.0], [-1.0, 3.0]]
    X_unit, checked = normalize_inputs(X, bounds)
    assert_allclose(X_unit, [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    assert_allclose(unnormalize_inputs(X_unit, checked), X)


def test_standardize_outputs_round_trip_and_constant_task():
    Y = np.array([[1.0, 5.0], [2.0, 5.0], [6.0, 5.0]])
    Y_standard, mean, scale = standardize_outputs(Y)
    assert_allclose(Y_standard[:, 0].mean(), 0.0, atol=1e-15)
    assert_allclose(Y_standard[:, 0].std(), 1.0)
    assert_allclose(Y_standard[:, 1], 0.0)  # a constant task is scaled by its magnitude |5|
    assert scale[1] == 5.0
    assert_allclose(unstandardize_outputs(Y_standard, mean, scale), Y)


@pytest.mark.parametrize(
    "bounds, message",
    [([[0.0, 1.0], [2.0, 2.0]], "lower < upper"), ([[0.0, 1.0]], "1 rows but X has 2"),
     ([0.0, 1.0, 2.0], "shape")],
)  # fmt: skip
def test_normalize_inputs_rejects_bad_bounds(bounds, message):
    with pytest.raises(ValueError, match=message):
        normalize_inputs(np.zeros((3, 2)), bounds)


@pytest.mark.parametrize(
    "X, Y, kwargs, message",
    [
        (np.zeros((4, 1)), np.zeros((5, 2)), {}, "same number of rows"),
        (np.zeros((1, 1)), np.zeros((1, 2)), {}, "at least 2 observations"),
        (np.zeros((4, 1)), np.array([[0.0, np.nan]] * 4), {}, "Y must be finite"),
        (np.array([[np.inf]] * 4), np.zeros((4, 2)), {}, "X must be finite"),
        (np.zeros((4, 1)), np.zeros((4, 2, 1)), {}, "Y must be 1- or 2-dimensional"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"rank": 0}, r"rank must be an integer in \[1"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"rank": 3}, "n_tasks = 2"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"rank": 1.5}, "rank"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"kernel": "laplace"}, r"\['rbf', 'matern52'\]"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"n_restarts": 0}, "n_restarts"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"mean": "linear"}, r"mean must be one of"),
        (np.zeros((4, 1)), np.zeros((4, 2)), {"init": {"B": 1}}, "init must be an ICMFit"),
    ],
)
def test_fit_rejects_invalid_input(X, Y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fit_icm_kernel(X, Y, **kwargs)


def test_fit_rejects_init_of_another_shape():
    X, Y, *_ = _random_problem(8, t=10, n=2)
    previous = fit_icm_kernel(X, Y, rank=1, n_restarts=1)
    with pytest.raises(ValueError, match="init was fitted with W of shape"):
        fit_icm_kernel(X, Y, rank=2, init=previous)


@pytest.mark.parametrize("d, n, rank", [(1, 1, 1), (3, 2, 2), (7, 3, 2)])
def test_log_prior_is_scipy_log_normal_log_density_of_lengthscales_and_noise(d, n, rank):
    """_Packing.log_prior, whose arrays are built once per fit, against scipy's log-normal
    log densities at l = e^θ and η = e^θ (μ = √2 + ½ log d, σ = √3 and μ = −4, σ = 1) plus
    the normalising constants log(σ√(2π)) it drops; its gradient against central differences
    of that plain computation (exact up to rounding: the density is quadratic in θ) and 0 on
    W and v. Two packings of one shape give the same values (no state kept between calls)."""
    from scipy.stats import lognorm

    packing = _Packing(d, n, rank)
    size = d + n * rank + n + 1
    constant = d * np.log(np.sqrt(3.0 * 2 * np.pi)) + np.log(np.sqrt(2 * np.pi))

    def plain(theta):
        lengthscale = lognorm(s=np.sqrt(3.0), scale=np.exp(np.sqrt(2.0) + 0.5 * np.log(d)))
        noise = lognorm(s=1.0, scale=np.exp(-4.0))
        return lengthscale.logpdf(np.exp(theta[:d])).sum() + noise.logpdf(np.exp(theta[-1]))

    rng = np.random.default_rng(d)
    for theta in rng.normal(scale=2.0, size=(3, size)):
        value, gradient = packing.log_prior(theta)
        assert value == pytest.approx(plain(theta) + constant, rel=1e-12, abs=1e-12)
        assert _Packing(d, n, rank).log_prior(theta)[0] == value
        step, central = 1e-5, np.empty(size)
        for k in range(size):
            e = np.zeros(size)
            e[k] = step
            central[k] = (plain(theta + e) - plain(theta - e)) / (2 * step)
        assert_allclose(gradient, central, atol=1e-6)
        assert np.all(gradient[d:-1] == 0.0)


def test_map_fit_of_an_icm_is_stationary_for_likelihood_plus_scipy_log_normal_priors():
    """prior=True with two tasks: at the fit, the dense-Gaussian log likelihood plus scipy's
    log-normal log densities of the lengthscales (μ = √2 + ½ log d, σ = √3) and of η
    (μ = −4, σ = 1), the priors of BoTorch's SingleTaskGP (Hvarfner et al. 2024), is not
    beaten by a small step of any parameter (W and v have flat priors)."""
    from scipy.stats import lognorm

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(20, 3))
    f = np.sin(4 * X[:, 0]) + X[:, 1] ** 2
    Y, _, _ = standardize_outputs(np.c_[f, -f + 0.5 * X[:, 2]] + 0.1 * rng.normal(size=(20, 2)))
    fit = fit_icm_kernel(X, Y, n_restarts=2, random_state=0, prior=True)
    lengthscale_prior = lognorm(s=np.sqrt(3), scale=np.exp(np.sqrt(2) + 0.5 * np.log(3)))
    noise_prior = lognorm(s=1.0, scale=np.exp(-4.0))

    def log_posterior(lengthscales, W, v, noise):
        C = np.kron(W @ W.T + np.diag(v), RBF(lengthscales)(X)) + noise * np.eye(40)
        lml = multivariate_normal(np.zeros(40), C).logpdf(Y.ravel(order="F"))
        return lml + lengthscale_prior.logpdf(lengthscales).sum() + noise_prior.logpdf(noise)

    params = [fit.lengthscales, fit.W, fit.task_diagonal, np.array(fit.noise)]
    best = log_posterior(*params)
    assert fit.log_marginal_likelihood == pytest.approx(
        icm_log_marginal_likelihood(X, Y, fit.lengthscales, fit.W, fit.task_diagonal, fit.noise)
    )
    for which, value in enumerate(params):
        for index in np.ndindex(value.shape):
            for step in (-1e-3, 1e-3):
                moved = [p.copy() for p in params]
                if which == 1:  # W: additive steps; the others are positive, log steps
                    moved[1][index] += step
                else:
                    moved[which][index] *= np.exp(step)
                ls, W, v, noise = moved
                inside = (
                    LENGTHSCALE_BOUNDS[0] <= ls.min() <= ls.max() <= LENGTHSCALE_BOUNDS[1]
                    and NOISE_BOUNDS[0] <= noise <= NOISE_BOUNDS[1]
                    and v.min() >= 1e-6
                )
                if inside:  # a stationary point (or a bound): a 1e-3 step gains O(1e-6)
                    assert log_posterior(ls, W, v, float(noise)) <= best + 1e-5


def test_second_start_of_a_warm_fit_is_the_data_driven_guess():
    """With init and n_restarts=2 the fit keeps the better of the warm start and the fresh
    data-driven start, each of which is the whole fit with n_restarts=1."""
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(25, 2))
    Y, _, _ = standardize_outputs(np.c_[np.sin(5 * X[:, 0]), np.cos(5 * X[:, 0])])
    # a poor previous fit: every lengthscale at its upper bound
    stale = fit_icm_kernel(X[:4], Y[:4], n_restarts=1)
    stale.lengthscales = np.full(2, LENGTHSCALE_BOUNDS[1])
    warm_only = fit_icm_kernel(X, Y, n_restarts=1, init=stale)
    fresh_only = fit_icm_kernel(X, Y, n_restarts=1)
    both = fit_icm_kernel(X, Y, n_restarts=2, init=stale)
    assert both.start_values == pytest.approx(
        [warm_only.log_marginal_likelihood, fresh_only.log_marginal_likelihood], rel=1e-9
    )
    assert both.log_marginal_likelihood == pytest.approx(
        max(warm_only.log_marginal_likelihood, fresh_only.log_marginal_likelihood), rel=1e-9
    )


def test_map_icm_posterior_covers_held_out_values_as_botorch_single_task_gps_do():
    """The objectives' MAP ICM against BoTorch's SingleTaskGP per objective (the same priors,
    fitted by ``fit_gpytorch_mll``) on the same noisy points of two correlated functions:
    the share of 500 held-out noise-free values within ±2σ of the posterior mean and the
    RMSE of the mean are close to BoTorch's."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("botorch")
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    rng = np.random.default_rng(5)

    def f(X):
        g = np.sum((X[:, 1:] - 0.5) ** 2, axis=1)
        return np.c_[(1 + g) * np.cos(1.5 * X[:, 0]), (1 + g) * np.sin(1.5 * X[:, 0])]

    X, X_test = rng.uniform(size=(40, 3)), rng.uniform(size=(500, 3))
    Y = f(X) + 0.05 * rng.normal(size=(40, 2))
    Y_std, mean, scale = standardize_outputs(Y)
    F_test = (f(X_test) - mean) / scale
    fit = fit_icm_kernel(X, Y_std, n_restarts=3, random_state=0, prior=True)
    k = RBF(fit.lengthscales)
    C = np.kron(k(X, X), fit.B) + fit.noise * np.eye(80)  # sample-major, Y flattened by rows
    C_new = np.kron(k(X_test, X), fit.B)
    mu = (C_new @ np.linalg.solve(C, Y_std.ravel())).reshape(-1, 2)
    var = np.diag(fit.B) - np.einsum("ij,ji->i", C_new, np.linalg.solve(C, C_new.T)).reshape(-1, 2)
    ours = _coverage_and_rmse(mu, var, F_test)
    torch_mu, torch_var = [], []
    for i in range(2):
        gp = SingleTaskGP(torch.tensor(X), torch.tensor(Y_std[:, i : i + 1]))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        with torch.no_grad():
            posterior = gp.posterior(torch.tensor(X_test))
        torch_mu.append(posterior.mean.numpy()[:, 0])
        torch_var.append(posterior.variance.numpy()[:, 0])
    theirs = _coverage_and_rmse(np.c_[tuple(torch_mu)], np.c_[tuple(torch_var)], F_test)
    assert ours[0] >= theirs[0] - 0.1
    assert ours[1] <= 1.25 * theirs[1]


def _coverage_and_rmse(mu, var, truth):
    covered = np.abs(mu - truth) <= 2 * np.sqrt(np.maximum(var, 0.0))
    return covered.mean(), np.sqrt(np.mean((mu - truth) ** 2))


def test_a_warm_start_stuck_at_the_lower_lengthscale_bound_gets_the_data_driven_start():
    """The white-noise optimum (lengthscales at 0.01: Gram ≈ I) is a stationary point a warm
    start does not leave; the refit then also runs the data-driven start and keeps the better
    — here the fresh fit, whose likelihood is far higher (the case a BO chain fell into)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(14, 2))
    Y = np.c_[np.sin(3 * X[:, 0]), np.cos(3 * X[:, 0])] + 0.05 * rng.normal(size=(14, 2))
    Y = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    fresh = fit_icm_kernel(X, Y, n_restarts=1)  # the data-driven start only
    stuck = dataclasses.replace(
        fresh, lengthscales=np.full(2, LENGTHSCALE_BOUNDS[0]), noise=NOISE_BOUNDS[0]
    )
    refit = fit_icm_kernel(X, Y, n_restarts=1, init=stuck)
    assert len(refit.start_values) == 2  # the stuck start, then the data-driven one
    stuck_value, fresh_value = refit.start_values
    assert stuck_value < fresh.log_marginal_likelihood - 10  # stayed degenerate on its own
    # the data-driven start is the same optimisation as `fresh`: same optimum, kept
    assert fresh_value == pytest.approx(fresh.log_marginal_likelihood, rel=1e-6, abs=1e-6)
    assert refit.log_marginal_likelihood == pytest.approx(fresh_value, rel=1e-6, abs=1e-6)
    assert np.all(refit.lengthscales > 0.1)
    # a warm start that does not collapse is not restarted
    assert len(fit_icm_kernel(X, Y, n_restarts=1, init=fresh).start_values) == 1
