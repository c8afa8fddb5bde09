"""Hypervolume scalarisations (Golovin & Zhang 2020): brute force, the Monte Carlo identity
HV = c_n E_λ[max_y s_λ(y)] against manytask.bo.metrics.hypervolume, the Lipschitz bound,
and a run with R_C reported."""

import math

import numpy as np
import pytest

import manytask as mt
from manytask.bo.metrics import hypervolume
from manytask.bo.scalarization import Hypervolume, make_scalarization
from manytask.simplex import unit_sphere_weights, weight_sampler


def brute(y, weights, reference, scale):
    direction = np.asarray(weights) / math.sqrt(sum(w * w for w in weights))
    terms = [
        max(0.0, (v - z) / r) / d if d > 0 else math.inf
        for v, z, r, d in zip(y, reference, scale, direction)
    ]
    return min(terms) ** len(y)


def test_matches_a_loop_for_one_and_many_weights():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(25, 3))
    reference, scale = rng.normal(size=3) - 1, rng.uniform(0.2, 3.0, size=3)
    scalarization = make_scalarization("hypervolume", reference, scale)
    weights = rng.dirichlet(np.ones(3), size=5)
    weights[0, 1] = 0.0  # a zero weight leaves that objective out of the minimum
    for w in weights:
        np.testing.assert_allclose(
            scalarization(Y, w), [brute(y, w, reference, scale) for y in Y], rtol=1e-13
        )
    np.testing.assert_allclose(scalarization(Y, weights), [scalarization(Y, w) for w in weights])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_monte_carlo_mean_is_the_dominated_hypervolume(n):
    """Lemma 5 of Golovin & Zhang: HV_z(Y) = c_n E_λ[max_y s_λ(y)], λ uniform on the positive
    unit sphere, c_n = π^{n/2} / (2ⁿ Γ(n/2 + 1)); the estimate over 100 000 λ lies within 5
    standard errors of the exact hypervolume (metrics.hypervolume; moocore for n = 3).
    With a range r the scalarisation's units are divided by Π r_i."""
    if n == 3:
        pytest.importorskip("moocore", reason="exact 3-D hypervolume needs manytask[mo]")
    rng = np.random.default_rng(1)
    Y = rng.uniform(size=(12, n)) * np.arange(1, n + 1)
    reference, scale = np.full(n, -0.2), np.linspace(0.5, 2.0, n)
    scalarization = Hypervolume(reference, scale)
    sampler = weight_sampler("unit-sphere", n)
    weights = np.array([sampler(rng, n) for _ in range(100_000)])
    best = np.concatenate(
        [scalarization(Y, weights[i : i + 10_000]).max(axis=1) for i in range(0, 100_000, 10_000)]
    )
    constant = math.pi ** (n / 2) / (2**n * math.gamma(n / 2 + 1))
    estimate, error = constant * best.mean(), constant * best.std() / math.sqrt(len(best))
    exact = hypervolume(Y, reference) / np.prod(scale)
    assert abs(estimate - exact) < 5 * error + 1e-12
    assert error < 0.01 * exact  # the check is sharp: 5 errors are < 5 % of the volume


def test_unit_sphere_weights_have_uniform_directions():
    """In 2-D the direction's angle is uniform on [0, π/2]: its quartiles by a count."""
    rng = np.random.default_rng(2)
    weights = np.array([unit_sphere_weights(rng, 2) for _ in range(40_000)])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    angles = np.arctan2(weights[:, 1], weights[:, 0])
    counts = np.histogram(angles, bins=4, range=(0, np.pi / 2))[0] / len(angles)
    np.testing.assert_allclose(counts, 0.25, atol=5 * math.sqrt(0.25 * 0.75 / len(angles)))


def test_lipschitz_bound_holds_on_the_normalised_box():
    """|s(u) − s(v)| ≤ L_λ ‖u − v‖₂ for random close pairs in z ≤ y ≤ z + r (a bound, not
    attained: T and max_i 1/(λ_i r_i) come from different objectives)."""
    rng = np.random.default_rng(3)
    reference, scale = np.array([1.0, -2.0, 0.5]), np.array([2.0, 0.5, 1.0])
    scalarization = Hypervolume(reference, scale)
    for _ in range(20):
        w = rng.dirichlet(np.ones(3))
        L = scalarization.lipschitz(w)
        U = reference + scale * rng.uniform(size=(2000, 3))
        V = np.clip(U + 0.01 * scale * rng.normal(size=(2000, 3)), reference, reference + scale)
        gaps = np.abs(scalarization(U, w) - scalarization(V, w))
        distances = np.linalg.norm(U - V, axis=1)
        assert np.all(gaps <= L * distances * (1 + 1e-9) + 1e-15)


def test_a_run_with_the_hypervolume_scalarization_reports_r_c():
    problem = mt.bo.problems.perturbed_sine()
    opt = mt.bo.MultiTaskBO.from_problem(
        problem, scalarization="hypervolume", weights="unit-sphere", seed=0
    )
    result = mt.bo.run(problem, opt, budget=15, seed=0, progress=False)
    regret = result.cumulative_regret
    assert regret.shape == (15,) and np.all(np.isfinite(regret))
    assert np.all(np.diff(regret) >= -1e-12)  # a sum of non-negative terms
    assert opt.state_dict()["config"]["scalarization"]["name"] == "hypervolume"
    resumed = mt.bo.MultiTaskBO.from_state_dict(opt.state_dict())
    np.testing.assert_array_equal(resumed.ask(), opt.ask())
