"""Noisy EI (``acquisition="noisy-ei"``) against a dense GP's joint posterior written out here."""

import numpy as np
import pytest
from scipy.stats import norm

from manytask.bo import MultiTaskBO
from manytask.bo.policies import Policy
from manytask.bo.scalarization import Chebyshev
from manytask.kernels import RBF, Separable
from manytask.posterior import ExactPosterior, NystromPosterior

B = np.array([[1.0, 0.6, 0.2], [0.6, 1.2, -0.3], [0.2, -0.3, 0.8]])  # mixes the tasks
NOISE = 0.1


def rbf(X, Y, lengthscale=0.3):
    distances = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * distances / lengthscale**2)


def dense_joint(X, Y, queries):
    """Mean (m, n) and covariance (m·n, m·n) of the ICM GP k(x, x')·B at ``queries``, from
    the stacked observed entries (NaN: unobserved), by dense solves."""
    observed = ~np.isnan(Y).ravel()  # sample-major entries (point, task)
    K = np.kron(rbf(X, X), B)[np.ix_(observed, observed)] + NOISE * np.eye(observed.sum())
    cross = np.kron(rbf(X, queries), B)[observed]
    prior = np.kron(rbf(queries, queries), B)
    mean = cross.T @ np.linalg.solve(K, Y.ravel()[observed])
    return mean.reshape(len(queries), -1), prior - cross.T @ np.linalg.solve(K, cross)


def data(missing):
    rng = np.random.default_rng(3)
    X, Y = rng.random((9, 2)), rng.normal(size=(9, 3))
    if missing:
        Y[[1, 4], [0, 2]] = np.nan
    return X, Y


@pytest.mark.parametrize("solver", ["auto", "full"])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("cached", [False, True])
def test_cross_covariance_is_the_dense_gps(solver, missing, cached):
    X, Y = data(missing)
    queries = np.random.default_rng(4).random((7, 2))
    post = ExactPosterior(Separable(RBF(0.3), B), NOISE, solver=solver)
    post.fit(X[:5], Y[:5], candidates=queries if cached else None)
    for x, y in zip(X[5:], Y[5:]):  # the incremental updates of the cache too
        post.add(x, y)
    points = np.vstack([X[2], np.random.default_rng(5).random((2, 2))])  # told and not
    _, joint = dense_joint(X, Y, np.vstack([queries, points]))
    n, m = 3, len(queries)
    # block (i, j): Cov[f(q_i), f(z_j)]
    expected = joint[: m * n, m * n :].reshape(m, n, len(points), n).transpose(0, 2, 1, 3)
    got = post.cross_cov(None if cached else queries, points)
    # the covariances are O(1) and K's condition number is below 1e3: rounding ≪ 1e-9
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_nystrom_posterior_refuses_the_cross_covariance():
    post = NystromPosterior(Separable(RBF(0.3), B), NOISE, q=10.0, random_state=0)
    post.fit(*data(False))
    with pytest.raises(NotImplementedError, match="cross-covariance"):
        post.cross_cov(np.zeros((2, 2)), np.zeros((1, 2)))


def test_noisy_ei_is_the_smallest_ei_of_the_dense_joint_differences_and_zero_at_told_points():
    X, Y = data(False)
    candidates = np.vstack([X, np.random.default_rng(5).random((30, 2))])
    policy = Policy("mt-kb", Separable(RBF(0.3), B), NOISE).start(2, candidates=candidates)
    for x, y in zip(X, Y):
        policy.add(x, y)
    weights, scalarization = np.array([0.5, 0.3, 0.2]), Chebyshev([-1.0, -2.0, -1.5])
    mean, joint = dense_joint(X, Y, candidates)
    values = scalarization(mean, weights)
    n, lipschitz, t = 3, scalarization.lipschitz(weights), len(X)

    def gain(i, j):  # E[(S(c_i) − S(x_j))₊] of the linearisation, by the formula
        rows, told = slice(i * n, (i + 1) * n), slice(j * n, (j + 1) * n)
        difference = joint[rows, rows] + joint[told, told] - joint[rows, told] - joint[told, rows]
        width = lipschitz * np.sqrt(max(np.linalg.eigvalsh(difference)[-1], 0.0))
        gap = values[i] - values[j]
        if width < 1e-6:
            return max(gap, 0.0)
        return gap * norm.cdf(gap / width) + width * norm.pdf(gap / width)

    expected = [min(gain(i, j) for j in range(t)) for i in range(len(candidates))]
    got = policy.acquisition(None, weights, scalarization, 1.0, None, values[:t], X)
    # rounding of O(1e-12) in the covariances becomes O(1e-6) in a width near 0 (a square root)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert np.all(got[:t] < 1e-6)  # no told point gains anything by itself
    assert np.all(got[t:] > 0)  # away from the data, improvement is still possible
    best = int(np.argmax(values[:t]))  # one incumbent: zero there only, where plain EI is not
    single = policy.acquisition(
        None, weights, scalarization, 1.0, None, values[best : best + 1], X[best : best + 1]
    )
    plain = policy.acquisition(None, weights, scalarization, 1.0, None, values[best])
    assert single[best] < 1e-6 < 0.05 < plain[best]  # plain EI gives x* w φ(0)
    assert np.all(single >= got - 1e-12)  # the smallest over all told points is below it


def test_multitaskbo_proposes_with_noisy_ei_on_candidates_and_a_box():
    rng = np.random.default_rng(6)
    candidates = rng.random((40, 2))
    for setting in (dict(candidates=candidates), dict(bounds=[(0.0, 1.0)] * 2)):
        optimizer = MultiTaskBO(**setting, kernel=Separable(RBF(0.3), B), acquisition="noisy-ei")
        for x in candidates[:6]:
            optimizer.tell(x, [np.sin(4 * x[0]), x[1], x.sum()])
        x = optimizer.ask()
        assert x.shape == (2,) and np.all((0 <= x) & (x <= 1))
        restored = MultiTaskBO.from_state_dict(optimizer.state_dict())
        assert restored.acquisition == "noisy-ei"


@pytest.mark.parametrize("algorithm", ["mt-bkb", "it-bkb", "mobo"])
def test_noisy_ei_needs_the_exact_posterior(algorithm):
    with pytest.raises(ValueError, match="acquisition='noisy-ei'"):
        MultiTaskBO(candidates=np.zeros((3, 1)), n_tasks=2, algorithm=algorithm,
                    acquisition="noisy-ei")  # fmt: skip
