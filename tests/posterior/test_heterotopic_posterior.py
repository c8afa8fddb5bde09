"""ExactPosterior on heterotopic data (NaN = a task not observed at that x) against the dense
multi-task GP on the observed entries, solved with ``numpy.linalg``."""

import numpy as np
import pytest

from manytask.kernels import RBF, Diagonal, Matern, Separable, SumOfSeparable
from manytask.posterior import ExactPosterior

NOISE = 0.1
N_TASKS = 3


def make_kernel(name):
    rng = np.random.default_rng(7)
    A = rng.standard_normal((N_TASKS, N_TASKS))
    if name == "separable":
        return Separable(RBF(0.4), A.T @ A)
    if name == "separable_diagonal_B":
        return Separable(RBF(0.4), np.diag([2.0, 0.5, 1.0]))
    if name == "diagonal":
        return Diagonal([RBF(0.3), Matern(0.5, nu=1.5), Matern(0.7, nu=2.5)])
    B = rng.standard_normal((N_TASKS, N_TASKS))
    return SumOfSeparable([(RBF(0.3), A.T @ A), (Matern(0.8, nu=2.5), B.T @ B)])


KERNELS = ["separable", "separable_diagonal_B", "diagonal", "sum_of_separable"]


def heterotopic_data(rng, t=14):
    X = rng.uniform(size=(t, 2))
    Y = np.c_[np.sin(4 * X[:, 0]), np.cos(3 * X[:, 1]), X.sum(axis=1)]
    Y += 0.1 * rng.standard_normal(Y.shape)
    missing = rng.uniform(size=Y.shape) < 0.45
    missing[0] = False  # one complete row
    missing[1] = [True, True, True]  # a row with nothing observed carries no information
    return X, np.where(missing, np.nan, Y)


def dense_posterior(kernel, X, Y, Xq):
    """μ and Γ_t(x, x) and log det(I + G/η) from the entries (x_a, i) with Y[a, i] observed."""
    rows, tasks = np.nonzero(~np.isnan(Y))
    full = kernel.gram(X, X)  # sample-major (t·n × t·n)
    entries = rows * N_TASKS + tasks
    G = full[np.ix_(entries, entries)]
    cross = kernel.gram(X, Xq)[entries]  # (m, N·n)
    system = G + NOISE * np.eye(len(entries))
    mean = (cross.T @ np.linalg.solve(system, Y[rows, tasks])).reshape(len(Xq), N_TASKS)
    cov = kernel.gram(Xq, Xq) - cross.T @ np.linalg.solve(system, cross)
    blocks = np.stack(
        [
            cov[i * N_TASKS : (i + 1) * N_TASKS, i * N_TASKS : (i + 1) * N_TASKS]
            for i in range(len(Xq))
        ]
    )
    log_det = np.linalg.slogdet(np.eye(len(entries)) + G / NOISE)[1]
    return mean, blocks, log_det


@pytest.mark.parametrize("name", KERNELS)
def test_fit_with_nan_equals_the_dense_gp_on_observed_entries(name):
    rng = np.random.default_rng(0)
    kernel = make_kernel(name)
    X, Y = heterotopic_data(rng)
    Xq = rng.uniform(size=(9, 2))
    mean, cov, log_det = dense_posterior(kernel, X, Y, Xq)
    post = ExactPosterior(kernel, NOISE).fit(X, Y)
    np.testing.assert_allclose(post.mean(Xq), mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(post.cov(Xq), cov, rtol=1e-8, atol=1e-10)
    assert post.log_det() == pytest.approx(log_det, rel=1e-9)
    # a fast path (one scalar problem per task) stays where one exists
    assert post.uses_split == (name in ("separable_diagonal_B", "diagonal"))


@pytest.mark.parametrize("name", KERNELS)
def test_incremental_add_with_nan_equals_the_dense_gp(name):
    rng = np.random.default_rng(1)
    kernel = make_kernel(name)
    X, Y = heterotopic_data(rng)
    candidates = np.vstack([X[5:9], rng.uniform(size=(6, 2))])
    # complete data first: a separable kernel starts on its eigen-split and must switch
    complete = np.nan_to_num(Y[:1])
    post = ExactPosterior(kernel, NOISE).fit(X[:1], complete, candidates=candidates)
    plain = ExactPosterior(kernel, NOISE).fit(X[:1], complete)
    for x, y in zip(X[1:], Y[1:]):
        post.add(x, y)
        plain.add(x, y)
    Y_all = np.vstack([complete, Y[1:]])
    mean, cov, log_det = dense_posterior(kernel, X, Y_all, candidates)
    for posterior in (post, plain):
        np.testing.assert_allclose(posterior.mean(candidates), mean, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(posterior.cov(candidates), cov, rtol=1e-8, atol=1e-10)
        assert posterior.log_det() == pytest.approx(log_det, rel=1e-9)
    np.testing.assert_allclose(post.mean(), mean, rtol=1e-8, atol=1e-10)  # the cache
    np.testing.assert_allclose(post.cov(), cov, rtol=1e-8, atol=1e-10)


def test_snapshot_restore_undoes_a_switch_to_one_system():
    rng = np.random.default_rng(2)
    kernel = make_kernel("separable")
    X = rng.uniform(size=(6, 2))
    Y = rng.standard_normal((6, N_TASKS))
    post = ExactPosterior(kernel, NOISE).fit(X, Y)
    before = post.mean(X)
    token = post.snapshot()
    post.add(np.array([0.5, 0.5]), np.array([np.nan, 1.0, 2.0]))
    assert not post.uses_split
    post.restore(token)
    assert post.uses_split and post.n_observations == 6
    np.testing.assert_allclose(post.mean(X), before, rtol=1e-12)


def test_infinite_outputs_are_still_rejected():
    post = ExactPosterior(make_kernel("diagonal"), NOISE)
    with pytest.raises(ValueError, match="finite"):
        post.fit(np.zeros((2, 2)), np.array([[1.0, np.inf, 0.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="solver='split'"):
        ExactPosterior(make_kernel("separable"), NOISE, solver="split").fit(
            np.zeros((1, 2)), np.array([[1.0, np.nan, 0.0]])
        )
