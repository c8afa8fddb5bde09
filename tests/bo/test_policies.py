"""Policies, scalarisations and weight samplers against independent computations."""

import numpy as np
import pytest

from manytask.bo import MultiTaskBO
from manytask.bo.policies import Policy, mt_bkb_radius, mt_kb_radius
from manytask.bo.scalarization import Chebyshev, Linear, make_scalarization
from manytask.kernels import RBF, Separable
from manytask.simplex import dirichlet_weights, paria_weights, uniform_weights, weight_sampler

# ---- scalarisations ----------------------------------------------------------------------


def brute_linear(y, weights):
    return sum(w * v for w, v in zip(weights, y))


def brute_chebyshev(y, weights, reference):
    return min(w * (v - z) for w, v, z in zip(weights, y, reference))


def test_scalarizations_match_brute_force_loops():
    rng = np.random.default_rng(0)
    Y, weights, reference = rng.normal(size=(20, 4)), rng.dirichlet(np.ones(4)), rng.normal(size=4)
    expected_linear = [brute_linear(y, weights) for y in Y]
    expected_chebyshev = [brute_chebyshev(y, weights, reference) for y in Y]
    np.testing.assert_allclose(Linear()(Y, weights), expected_linear)
    np.testing.assert_allclose(Chebyshev(reference)(Y, weights), expected_chebyshev)


@pytest.mark.parametrize("scalarization", [Linear(), Chebyshev([0.3, -0.2, 0.1])])
def test_lipschitz_constant_bounds_and_is_attained(scalarization):
    rng = np.random.default_rng(1)
    weights = rng.dirichlet(np.ones(3))
    L = scalarization.lipschitz(weights)
    u, v = rng.normal(size=(5000, 3)), rng.normal(size=(5000, 3))
    ratios = np.abs(scalarization(u, weights) - scalarization(v, weights))
    ratios /= np.linalg.norm(u - v, axis=1)
    assert np.all(ratios <= L + 1e-12)
    # attained: along λ (linear) or along the basis vector of the largest λ_i (Chebyshev),
    # from a point where that coordinate is the minimiser
    if isinstance(scalarization, Linear):
        direction = weights / np.linalg.norm(weights)
        base = np.zeros(3)
    else:
        direction = np.eye(3)[np.argmax(weights)]
        base = scalarization.reference + 10.0 * (1 - direction)
    step = 1e-3
    attained = (
        abs(
            scalarization(base[None] + step * direction[None], weights)[0]
            - scalarization(base[None], weights)[0]
        )
        / step
    )
    assert attained == pytest.approx(L, rel=1e-9)


def test_unknown_scalarization_lists_valid_names():
    with pytest.raises(ValueError, match="chebyshev, linear"):
        make_scalarization("pareto")


# ---- weight samplers ---------------------------------------------------------------------


@pytest.mark.parametrize("sampler", [paria_weights, uniform_weights, dirichlet_weights(0.5)])
def test_weight_samplers_lie_in_the_simplex(sampler):
    rng = np.random.default_rng(2)
    draws = np.array([sampler(rng, 5) for _ in range(500)])
    np.testing.assert_allclose(draws.sum(axis=1), 1.0)
    assert np.all(draws > 0)


def test_paria_weights_follow_the_papers_construction():
    u = np.random.default_rng(3).uniform(size=4)  # the same draw the sampler makes
    alpha = u.sum() / u
    np.testing.assert_allclose(paria_weights(np.random.default_rng(3), 4), alpha / alpha.sum())


def test_fixed_weights_are_a_dirac_and_bad_weights_raise():
    sampler = weight_sampler([0.2, 0.8], 2)
    assert np.array_equal(sampler(np.random.default_rng(0), 2), [0.2, 0.8])
    with pytest.raises(ValueError, match="sum to 1"):
        weight_sampler([0.2, 0.9], 2)
    with pytest.raises(ValueError, match="dirichlet, paria, uniform"):
        weight_sampler("gaussian", 2)


# ---- policies ----------------------------------------------------------------------------


def direct_gp_ucb(X_seen, y_seen, candidates, lengthscale, noise, rkhs_bound, noise_std, delta):
    """GP-UCB written out densely: Theorem 2's radius with n = 1, u = μ + β σ."""
    K = RBF(lengthscale)(X_seen, X_seen) + noise * np.eye(len(X_seen))
    cross = RBF(lengthscale)(X_seen, candidates)
    mean = cross.T @ np.linalg.solve(K, y_seen)
    variance = 1.0 - np.einsum("ij,ij->j", cross, np.linalg.solve(K, cross))
    log_det = np.linalg.slogdet(K / noise)[1]
    beta = rkhs_bound + noise_std / np.sqrt(noise) * np.sqrt(2 * np.log(1 / delta) + log_det)
    return np.argmax(mean + beta * np.sqrt(np.maximum(variance, 0)))


def test_mt_kb_with_one_task_is_gp_ucb():
    candidates = np.linspace(0, 1, 61)[:, None]
    f = np.sin(7 * candidates[:, 0]) * candidates[:, 0]
    noise_draws = np.random.default_rng(4).normal(scale=0.05, size=30)
    settings = dict(noise=0.1, rkhs_bound=1.0, noise_std=0.1, delta=0.1)
    optimizer = MultiTaskBO(
        candidates=candidates, kernel=Separable(RBF(0.15), [[1.0]]), seed=0, **settings
    )
    seen = [7]  # a first observation told, not asked, so round 1 has no ties
    optimizer.tell(candidates[7], [f[7] + noise_draws[0]])
    for t in range(1, 25):
        y_seen = f[seen] + noise_draws[: len(seen)]
        expected = direct_gp_ucb(candidates[seen], y_seen, candidates, 0.15, **settings)
        x = optimizer.ask()
        assert np.array_equal(x, candidates[expected]), f"round {t}"
        seen.append(int(expected))
        optimizer.tell(x, [f[expected] + noise_draws[len(seen) - 1]])


def test_mt_kb_and_it_kb_share_the_posterior_when_b_is_identity():
    kernel = Separable(RBF(0.2), np.eye(3))
    rng = np.random.default_rng(5)
    X, Y, queries = rng.random((12, 1)), rng.normal(size=(12, 3)), rng.random((9, 1))
    multi = Policy("mt-kb", kernel, 0.1).start(1)
    single = Policy("it-kb", kernel, 0.1).start(1)
    for x, y in zip(X, Y):
        multi.add(x, y)
        single.add(x, y)
    np.testing.assert_allclose(multi.posterior.mean(queries), single.posterior.mean(queries))
    np.testing.assert_allclose(multi.posterior.cov(queries), single.posterior.cov(queries))


def test_theory_radii_follow_theorems_2_and_3():
    # hand evaluation of the printed formulas, b = 2, σ = 0.1, η = 0.1, δ = 0.1, ε = 0.5
    log_det = 3.7
    expected_2 = 2 + 0.1 / np.sqrt(0.1) * np.sqrt(2 * np.log(10) + log_det)
    expected_3 = 2 * (1 + 1 / np.sqrt(0.5)) + 0.1 / np.sqrt(0.1) * np.sqrt(
        2 * np.log(20) + 3 * log_det
    )
    assert mt_kb_radius(log_det, 2.0, 0.1, 0.1, 0.1) == pytest.approx(expected_2)
    assert mt_bkb_radius(log_det, 2.0, 0.1, 0.1, 0.1, 0.5) == pytest.approx(expected_3)


def test_mt_kb_radius_uses_the_posteriors_log_det():
    kernel = Separable(RBF(0.2), [[1.0, 0.5], [0.5, 1.0]])
    policy = Policy("mt-kb", kernel, 0.1, rkhs_bound=1.5).start(1)
    X = np.linspace(0, 1, 6)[:, None]
    for x in X:
        policy.add(x, [0.0, 0.0])
    log_det = np.linalg.slogdet(np.eye(12) + kernel.gram(X) / 0.1)[1]
    assert policy.radius() == pytest.approx(mt_kb_radius(log_det, 1.5, 0.1, 0.1, 0.1))


def test_user_beta_overrides_the_theory_radius():
    kernel = Separable(RBF(0.2), np.eye(2))
    assert Policy("mt-kb", kernel, 0.1, beta=0.7).start(1).radius() == 0.7
    assert Policy("mobo", kernel, 0.1, beta=lambda t: 2.0 * t).start(1).radius() == 2.0


def test_unknown_algorithm_lists_valid_names():
    with pytest.raises(ValueError, match="mt-kb, mt-bkb, it-kb, it-bkb, mobo"):
        Policy("ucb", Separable(RBF(0.2), np.eye(2)), 0.1)
