"""The moment-matched expected improvement (``acquisition="moment-ei"``): the moments of
s_λ(F) for a Gaussian F against integrals computed here, then the optimiser."""

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import qmc

from manytask.bo import AugmentedChebyshev, Chebyshev, Hypervolume, Linear, MultiTaskBO
from manytask.bo.policies import Policy, expected_improvement
from manytask.kernels import RBF, Separable

MEANS = np.array([[1.5, 0.0], [2.0, -0.2], [0.8, 0.4], [0.0, 0.0]])
COVS = np.array(
    [
        [[1.0, 0.6], [0.6, 0.5]],
        [[0.3, -0.2], [-0.2, 0.4]],
        [[2.0, 0.0], [0.0, 0.05]],
        [[1.0, 1.0], [1.0, 1.0]],  # singular: F_0 − F_1 is known
    ]
)


def moments_on_a_grid(mean, cov, scalarization, weights, half_width=9.0, size=1601):
    """E and Var of s_λ(m + R z), z ~ N(0, I₂), by the trapezoidal rule on a square grid of
    ±9 sd (the Gaussian mass outside it is below 1e-18; measured against a grid of 3201², the
    moments of MEANS, COVS move by less than 1.1e-6)."""
    values, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    z = np.linspace(-half_width, half_width, size)
    z1, z2 = np.meshgrid(z, z, indexing="ij")
    points = mean + np.stack([z1.ravel(), z2.ravel()], axis=1) @ root.T
    s = scalarization(points, weights).reshape(size, size)
    density = np.exp(-0.5 * (z1**2 + z2**2)) / (2 * np.pi)
    first = np.trapezoid(np.trapezoid(s * density, z, axis=1), z)
    second = np.trapezoid(np.trapezoid(s**2 * density, z, axis=1), z)
    return first, second - first**2


@pytest.mark.parametrize("kind", [Linear, Chebyshev, AugmentedChebyshev])
def test_two_objectives_moments_are_exact(kind):
    scalarization = kind(reference=[0.5, -1.0], scale=[2.0, 0.5])
    weights = np.array([0.3, 0.7])
    mean, variance = scalarization.moments(MEANS, COVS, weights)
    for m, c, got_mean, got_variance in zip(MEANS, COVS, mean, variance):
        expected_mean, expected_variance = moments_on_a_grid(m, c, scalarization, weights)
        np.testing.assert_allclose(got_mean, expected_mean, atol=1e-5)
        np.testing.assert_allclose(got_variance, expected_variance, atol=1e-5)


def test_a_term_that_is_never_the_smallest_changes_nothing():
    # a third objective far above the other two: Clark's recursion takes it with Φ(g) = 1
    scalarization, weights = Chebyshev(reference=[0, 0, 0], scale=[1, 1, 1]), [0.3, 0.3, 0.4]
    means3 = np.hstack([MEANS, np.full((len(MEANS), 1), 1e3)])
    covs3 = np.zeros((len(COVS), 3, 3))
    covs3[:, :2, :2], covs3[:, 2, 2] = COVS, 0.5
    covs3[:, 0, 2] = covs3[:, 2, 0] = 0.1
    got = scalarization.moments(means3, covs3, weights)
    expected = Chebyshev(reference=[0, 0], scale=[1, 1]).moments(MEANS, COVS, [0.3, 0.3])
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_three_objectives_are_near_the_sampled_moments():
    # n = 3: the minimum of the first two is taken as Gaussian (Clark's approximation); on
    # equally weighted, moderately correlated terms its moments lie within 2 % of the sd of
    # the sampled ones (2^16 scrambled Sobol draws, sampling error below 0.3 % of the sd)
    scalarization, weights = AugmentedChebyshev(reference=[0, 0, 0], scale=[1, 1, 1]), [1, 1, 1]
    mean = np.array([[0.0, 0.2, -0.1], [1.0, 0.0, 0.5]])
    cov = np.array([[[1.0, 0.3, 0.1], [0.3, 0.8, -0.2], [0.1, -0.2, 1.2]]] * 2)
    got_mean, got_variance = scalarization.moments(mean, cov, weights)
    draws = ndtri(qmc.Sobol(3, scramble=True, seed=0).random(2**16))
    samples = scalarization.of_draws(mean, np.linalg.cholesky(cov), weights, draws)
    sd = samples.std(axis=1)
    np.testing.assert_array_less(np.abs(got_mean - samples.mean(axis=1)), 0.02 * sd)
    np.testing.assert_array_less(np.abs(np.sqrt(got_variance) - sd), 0.02 * sd)


def test_moment_ei_of_a_linear_scalarisation_is_the_exact_improvement():
    scalarization, weights = Linear(reference=[0.0, 1.0], scale=[1.0, 4.0]), np.array([0.4, 0.6])
    kernel = Separable(RBF(0.3), np.array([[1.0, 0.4], [0.4, 1.0]]))
    policy = Policy("mt-kb", kernel, noise=0.1).start(1)
    for x, y in [(0.1, [0.3, 1.5]), (0.6, [1.0, 2.5]), (0.9, [-0.2, 3.0])]:
        policy.add(np.array([x]), np.array(y))
    X = np.linspace(0, 1, 7)[:, None]
    got = policy.acquisition(X, weights, scalarization, incumbent=0.2, moments=True)
    a = weights / scalarization.scale
    sd = np.sqrt(np.einsum("i,mij,j->m", a, policy.posterior.cov(X), a))
    expected = expected_improvement(scalarization(policy.posterior.mean(X), weights), sd, 0.2)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_moment_ei_needs_closed_form_moments():
    with pytest.raises(ValueError, match="acquisition='moment-ei' needs a scalarization with"):
        MultiTaskBO(candidates=np.zeros((3, 1)), n_tasks=2, kernel="auto",
                    scalarization="hypervolume", acquisition="moment-ei")  # fmt: skip
    with pytest.raises(NotImplementedError):
        Hypervolume().moments(np.zeros((1, 2)), np.eye(2)[None], [0.5, 0.5])


def test_the_default_acquisition_is_moment_ei_where_the_scalarisation_has_moments():
    settings = dict(candidates=np.zeros((3, 1)), n_tasks=2, kernel="auto")
    assert MultiTaskBO(**settings).acquisition == "moment-ei"
    assert MultiTaskBO(**settings, scalarization="linear").acquisition == "moment-ei"
    assert MultiTaskBO(**settings, scalarization="hypervolume").acquisition == "ei"
