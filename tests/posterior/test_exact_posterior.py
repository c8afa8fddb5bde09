"""ExactPosterior against independent computations (``multitask-bayesian-optimization.txt``).

The reference is the dense formula of §3.1, solved with ``numpy.linalg.solve`` on the
(nt × nt) system; the separable eigen-split (Appendix A), the incremental ``add`` and the
candidate cache must all agree with it. Lemma 4's identity checks ``log_det``, and
scikit-learn's GaussianProcessRegressor checks the one-task case.
"""

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as sk_kernels

from _helpers import assert_close
from manytask.kernels import RBF, Diagonal, Matern, Separable, SumOfSeparable
from manytask.posterior import ExactPosterior

NOISE = 0.1
N_TASKS = 3
N_FEATURES = 2


def random_task_matrix(rng, n=N_TASKS):
    A = rng.standard_normal((n, n))
    return A.T @ A


def make_kernel(name):
    rng = np.random.default_rng(7)
    if name == "separable":
        return Separable(RBF(0.4), random_task_matrix(rng))
    if name == "separable_rank1":
        a = rng.standard_normal(N_TASKS)
        return Separable(Matern(0.5, nu=2.5), np.outer(a, a))
    if name == "diagonal":
        return Diagonal([RBF(0.3), Matern(0.5, nu=1.5), Matern(0.7, nu=2.5)])
    if name == "sum_of_separable":
        return SumOfSeparable(
            [(RBF(0.3), random_task_matrix(rng)), (Matern(0.8, nu=2.5), random_task_matrix(rng))]
        )
    if name == "block_sum_of_separable":  # tasks {0, 2} and {1}: a learned block model
        B0, B1 = np.zeros((N_TASKS, N_TASKS)), np.zeros((N_TASKS, N_TASKS))
        B0[np.ix_([0, 2], [0, 2])] = random_task_matrix(rng, 2)
        B1[1, 1] = 0.7
        return SumOfSeparable([(RBF(0.3), B0), (Matern(0.8, nu=2.5), B1)])
    raise KeyError(name)


# Every (kernel, solver) pair the API accepts; "split" needs a Separable or Diagonal kernel,
# or a SumOfSeparable whose task matrices act on disjoint tasks.
SPLIT_KERNELS = ["separable", "separable_rank1", "diagonal", "block_sum_of_separable"]
KERNEL_SOLVERS = [
    (kernel, solver)
    for kernel in SPLIT_KERNELS + ["sum_of_separable"]
    for solver in ("auto", "split", "full")
    if not (kernel == "sum_of_separable" and solver == "split")
]


def random_problem(seed, n_observations=12, n_queries=7):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n_observations, N_FEATURES))
    Y = rng.standard_normal((n_observations, N_TASKS))
    queries = rng.uniform(-0.2, 1.2, (n_queries, N_FEATURES))
    return X, Y, queries


def dense_posterior(kernel, noise, X, Y, queries):
    """μ_t(x) = G_t(x)ᵀ(G_t + ηI)⁻¹Y_t and Γ_t(x, x) = Γ(x, x) − G_t(x)ᵀ(G_t + ηI)⁻¹G_t(x)."""
    n = kernel.n_tasks
    system = kernel.gram(X, X) + noise * np.eye(len(X) * n)
    cross = kernel.gram(X, queries)  # G_t(x) for every query, side by side
    mean = cross.T @ np.linalg.solve(system, Y.reshape(-1))
    full_cov = kernel.gram(queries, queries) - cross.T @ np.linalg.solve(system, cross)
    N = len(queries)
    blocks = full_cov.reshape(N, n, N, n)
    cov = np.stack([blocks[i, :, i, :] for i in range(N)])
    return mean.reshape(N, n), cov


def dense_log_det(kernel, noise, X):
    """log det(I + G_t/η) by LU (slogdet), not Cholesky."""
    G = kernel.gram(X, X)
    sign, value = np.linalg.slogdet(np.eye(len(G)) + G / noise)
    assert sign > 0
    return value


# ---- §3.1: the posterior is the dense formula ----------------------------------------------
@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_posterior_matches_dense_formula_at_queries(kernel_name, solver):
    kernel = make_kernel(kernel_name)
    X, Y, queries = random_problem(seed=1)
    posterior = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y)
    mean, cov = dense_posterior(kernel, NOISE, X, Y, queries)
    assert_close(posterior.mean(queries), mean, rtol=1e-9)
    assert_close(posterior.cov(queries), cov, rtol=1e-9)


@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_posterior_matches_dense_formula_at_cached_candidates(kernel_name, solver):
    kernel = make_kernel(kernel_name)
    X, Y, candidates = random_problem(seed=2, n_queries=15)
    posterior = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y, candidates=candidates)
    mean, cov = dense_posterior(kernel, NOISE, X, Y, candidates)
    assert posterior.mean().shape == (15, N_TASKS)
    assert posterior.cov().shape == (15, N_TASKS, N_TASKS)
    assert_close(posterior.mean(), mean, rtol=1e-9)
    assert_close(posterior.cov(), cov, rtol=1e-9)


def test_posterior_at_observed_point_shrinks_toward_observation():
    # A sanity check of the formula itself: tiny noise nearly interpolates.
    kernel = make_kernel("separable")
    X, Y, _ = random_problem(seed=3, n_observations=6)
    posterior = ExactPosterior(kernel, 1e-8).fit(X, Y)
    assert_close(posterior.mean(X), Y, rtol=1e-4)
    assert np.max(posterior.variance_norm(X)) < 1e-6


def test_prior_before_any_observation():
    kernel = make_kernel("sum_of_separable")
    X, Y, queries = random_problem(seed=4)
    posterior = ExactPosterior(kernel, NOISE).fit(X[:0], Y[:0])
    np.testing.assert_array_equal(posterior.mean(queries), np.zeros((len(queries), N_TASKS)))
    assert_close(posterior.cov(queries), kernel.diag_blocks(queries), rtol=1e-14)
    assert posterior.log_det() == 0.0


# ---- Appendix A: the eigen-split path equals the general path -----------------------------
@pytest.mark.parametrize("kernel_name", SPLIT_KERNELS)
def test_split_solver_equals_full_solver(kernel_name):
    kernel = make_kernel(kernel_name)
    X, Y, queries = random_problem(seed=5, n_observations=20)
    split = ExactPosterior(kernel, NOISE, solver="split").fit(X, Y)
    full = ExactPosterior(kernel, NOISE, solver="full").fit(X, Y)
    assert split.uses_split and not full.uses_split
    assert_close(split.mean(queries), full.mean(queries), rtol=1e-8)
    assert_close(split.cov(queries), full.cov(queries), rtol=1e-8)
    assert_close(split.variance_norm(queries), full.variance_norm(queries), rtol=1e-8)
    assert split.log_det() == pytest.approx(full.log_det(), rel=1e-8)


@pytest.mark.parametrize("kernel_name", SPLIT_KERNELS)
def test_auto_solver_splits_separable_and_diagonal_kernels(kernel_name):
    assert ExactPosterior(make_kernel(kernel_name), NOISE).uses_split


def test_auto_solver_does_not_split_sum_of_separable():
    assert not ExactPosterior(make_kernel("sum_of_separable"), NOISE).uses_split


def test_rank_one_task_matrix_gives_rank_one_covariance():
    # Γ = k B with B = a aᵀ: every posterior covariance is a multiple of a aᵀ.
    kernel = make_kernel("separable_rank1")
    X, Y, queries = random_problem(seed=6)
    cov = ExactPosterior(kernel, NOISE).fit(X, Y).cov(queries)
    eigenvalues = np.linalg.eigvalsh(cov)
    assert np.all(np.abs(eigenvalues[:, :-1]) <= 1e-12 * eigenvalues[:, -1:])


# ---- add: the bordered Cholesky equals a refit ---------------------------------------------
@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_adds_after_fit_equal_one_fit(kernel_name, solver):
    kernel = make_kernel(kernel_name)
    X, Y, queries = random_problem(seed=8, n_observations=20)
    grown = ExactPosterior(kernel, NOISE, solver=solver).fit(X[:3], Y[:3])
    for x, y in zip(X[3:], Y[3:]):
        grown.add(x, y)
    refit = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y)
    assert grown.n_observations == refit.n_observations == 20
    assert_close(grown.mean(queries), refit.mean(queries), rtol=1e-9)
    assert_close(grown.cov(queries), refit.cov(queries), rtol=1e-9)
    assert grown.log_det() == pytest.approx(refit.log_det(), rel=1e-10)


@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_adds_from_empty_posterior_equal_one_fit(kernel_name, solver):
    # 20 adds also cross the initial buffer capacity of 16 observations.
    kernel = make_kernel(kernel_name)
    X, Y, queries = random_problem(seed=9, n_observations=20)
    grown = ExactPosterior(kernel, NOISE, solver=solver)
    for x, y in zip(X, Y):
        grown.add(x, y)
    refit = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y)
    assert_close(grown.mean(queries), refit.mean(queries), rtol=1e-9)
    assert_close(grown.cov(queries), refit.cov(queries), rtol=1e-9)
    assert grown.log_det() == pytest.approx(refit.log_det(), rel=1e-10)


def test_add_accepts_one_task_scalar_output():
    X, Y, queries = random_problem(seed=10)
    grown = ExactPosterior(RBF(0.4), NOISE).fit(X[:5], Y[:5, 0])
    for x, y in zip(X[5:], Y[5:, 0]):
        grown.add(x, y)
    refit = ExactPosterior(RBF(0.4), NOISE).fit(X, Y[:, 0])
    assert_close(grown.mean(queries), refit.mean(queries), rtol=1e-9)


# ---- the candidate cache equals uncached queries ------------------------------------------
@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_cached_candidates_equal_uncached_queries_after_adds(kernel_name, solver):
    kernel = make_kernel(kernel_name)
    rng = np.random.default_rng(11)
    candidates = rng.uniform(0.0, 1.0, (25, N_FEATURES))
    off_grid = rng.uniform(0.0, 1.0, (8, N_FEATURES))
    # Observations alternate between candidates (cached column reused) and other points.
    X = np.empty((16, N_FEATURES))
    X[0::2] = candidates[rng.choice(25, 8, replace=False)]
    X[1::2] = off_grid
    Y = rng.standard_normal((16, N_TASKS))
    cached = ExactPosterior(kernel, NOISE, solver=solver).fit(X[:4], Y[:4], candidates=candidates)
    for x, y in zip(X[4:], Y[4:]):
        cached.add(x, y)
    uncached = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y)
    assert_close(cached.mean(), uncached.mean(candidates), rtol=1e-9)
    assert_close(cached.cov(), uncached.cov(candidates), rtol=1e-9)
    assert_close(cached.variance_norm(), uncached.variance_norm(candidates), rtol=1e-9)
    # Queries away from the candidates still go through the factor the adds grew.
    queries = rng.uniform(0.0, 1.0, (5, N_FEATURES))
    assert_close(cached.mean(queries), uncached.mean(queries), rtol=1e-9)


@pytest.mark.parametrize("solver", ["split", "full"])
def test_candidate_cache_grown_from_zero_observations(solver):
    kernel = make_kernel("separable")
    rng = np.random.default_rng(12)
    candidates = rng.uniform(0.0, 1.0, (10, N_FEATURES))
    X = np.vstack([candidates[3], rng.uniform(0, 1, N_FEATURES), candidates[7], candidates[3]])
    Y = rng.standard_normal((4, N_TASKS))
    cached = ExactPosterior(kernel, NOISE, solver=solver).fit(X[:0], Y[:0], candidates=candidates)
    for x, y in zip(X, Y):
        cached.add(x, y)
    mean, cov = dense_posterior(kernel, NOISE, X, Y, candidates)
    assert_close(cached.mean(), mean, rtol=1e-9)
    assert_close(cached.cov(), cov, rtol=1e-9)


def test_candidates_passed_again_as_queries_use_same_values():
    kernel = make_kernel("diagonal")
    X, Y, candidates = random_problem(seed=13, n_queries=9)
    posterior = ExactPosterior(kernel, NOISE).fit(X, Y, candidates=candidates)
    np.testing.assert_allclose(posterior.mean(candidates), posterior.mean(), rtol=1e-12)
    np.testing.assert_allclose(posterior.mean(candidates.copy()), posterior.mean(), rtol=1e-9)


def test_mutating_candidates_after_fit_does_not_corrupt_posterior():
    # A caller reusing its candidate array must not silently change what the posterior
    # caches (scikit-learn estimators copy their inputs for this reason).
    kernel = make_kernel("separable")
    X, Y, candidates = random_problem(seed=14, n_queries=11)
    original = candidates.copy()
    posterior = ExactPosterior(kernel, NOISE).fit(X, Y, candidates=candidates)
    candidates += 0.05  # the caller moves its grid, in place
    reference = ExactPosterior(kernel, NOISE).fit(X, Y)
    assert_close(posterior.mean(candidates), reference.mean(candidates), rtol=1e-9)
    posterior.add(candidates[3], Y[0])
    reference.add(candidates[3], Y[0])
    assert_close(posterior.mean(original), reference.mean(original), rtol=1e-9)


# ---- variance_norm and log_det --------------------------------------------------------------
@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_variance_norm_is_largest_eigenvalue_of_cov(kernel_name, solver):
    kernel = make_kernel(kernel_name)
    X, Y, queries = random_problem(seed=15)
    posterior = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y, candidates=queries)
    expected = np.linalg.eigvalsh(posterior.cov(queries.copy()))[:, -1]
    assert_close(posterior.variance_norm(queries.copy()), expected, rtol=1e-10)
    assert_close(posterior.variance_norm(), expected, rtol=1e-10)


@pytest.mark.parametrize("kernel_name, solver", KERNEL_SOLVERS)
def test_log_det_matches_dense_slogdet(kernel_name, solver):
    kernel = make_kernel(kernel_name)
    X, Y, _ = random_problem(seed=16, n_observations=15)
    posterior = ExactPosterior(kernel, NOISE, solver=solver).fit(X, Y)
    assert posterior.log_det() == pytest.approx(dense_log_det(kernel, NOISE, X), rel=1e-10)


@pytest.mark.parametrize(
    "kernel_name", ["separable", "diagonal", "sum_of_separable", "block_sum_of_separable"]
)
def test_log_det_is_sum_of_one_step_information_gains(kernel_name):
    # Lemma 4: log det(I + G_t/η) = Σ_s log det(Iₙ + η⁻¹Γ_{s−1}(x_s, x_s)).
    kernel = make_kernel(kernel_name)
    X, Y, _ = random_problem(seed=17, n_observations=10)
    total = 0.0
    for s in range(len(X)):
        previous = ExactPosterior(kernel, NOISE).fit(X[:s], Y[:s])
        gamma = previous.cov(X[s : s + 1])[0]
        sign, value = np.linalg.slogdet(np.eye(N_TASKS) + gamma / NOISE)
        assert sign > 0
        total += value
    posterior = ExactPosterior(kernel, NOISE).fit(X, Y)
    assert posterior.log_det() == pytest.approx(total, rel=1e-9)


# ---- one task: scikit-learn's GaussianProcessRegressor -------------------------------------
SKLEARN_PAIRS = [
    (RBF(0.3), sk_kernels.RBF(length_scale=0.3)),
    (Matern(0.4, nu=0.5), sk_kernels.Matern(length_scale=0.4, nu=0.5)),
    (Matern(0.4, nu=1.5), sk_kernels.Matern(length_scale=0.4, nu=1.5)),
    (Matern(0.4, nu=2.5), sk_kernels.Matern(length_scale=0.4, nu=2.5)),
]


@pytest.mark.parametrize("ours, theirs", SKLEARN_PAIRS, ids=["rbf", "m05", "m15", "m25"])
def test_one_task_posterior_equals_sklearn_gaussian_process(ours, theirs):
    rng = np.random.default_rng(18)
    X = rng.uniform(0.0, 1.0, (15, N_FEATURES))
    y = np.sin(4.0 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(15)
    queries = rng.uniform(-0.2, 1.2, (9, N_FEATURES))
    gp = GaussianProcessRegressor(kernel=theirs, alpha=NOISE, optimizer=None, normalize_y=False)
    gp.fit(X, y)
    sk_mean, sk_cov = gp.predict(queries, return_cov=True)
    _, sk_std = gp.predict(queries, return_std=True)

    posterior = ExactPosterior(ours, NOISE).fit(X, y)
    cov = posterior.cov(queries)
    assert posterior.mean(queries).shape == (9, 1)
    assert cov.shape == (9, 1, 1)
    assert_close(posterior.mean(queries)[:, 0], sk_mean, rtol=1e-9)
    assert_close(cov[:, 0, 0], np.diag(sk_cov), rtol=1e-8)
    assert_close(np.sqrt(posterior.variance_norm(queries)), sk_std, rtol=1e-7)
