"""The sampled expected improvement (``acquisition="mc-ei"``) against integrals computed here."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import ndtri
from scipy.stats import multivariate_normal, qmc

from manytask.bo import AugmentedChebyshev, Chebyshev, Hypervolume, Linear, MultiTaskBO
from manytask.bo.policies import expected_improvement, sampled_improvement
from manytask.kernels import RBF, Separable

B = np.array([[1.0, 0.6, 0.2], [0.6, 1.2, -0.3], [0.2, -0.3, 0.8]])
# 2^14 scrambled Sobol draws: the randomised-QMC error of these smooth-but-for-kinks
# integrands is below 1e-4 (measured: at most 3e-5 over the scrambles 0–9 of the first test)
DRAWS = ndtri(qmc.Sobol(2, scramble=True, seed=0).random(2**14))


def chebyshev_ei_by_quadrature(mean, cov, scalarization, weights, incumbent):
    """E[(min_i a_i (F_i − z_i) − s*)₊] = ∫_{s*}^∞ P(a_i (F_i − z_i) > t for all i) dt, the
    orthant probabilities from SciPy's bivariate normal CDF (Genz), integrated by quad."""
    a = np.asarray(weights) / scalarization.scale
    shifted_mean = a * (mean - scalarization.reference)
    shifted_cov = cov * np.outer(a, a)
    law = multivariate_normal(-shifted_mean, shifted_cov)  # P(−A < −t) = P(A > t)

    def survival(t):
        return law.cdf(np.full(2, -t))

    top = shifted_mean.max() + 10 * np.sqrt(shifted_cov.diagonal().max())
    return quad(survival, incumbent, max(top, incumbent), epsabs=1e-7, limit=200)[0]


@pytest.mark.parametrize("incumbent", [-0.5, 0.2, 0.4])
def test_chebyshev_improvement_is_the_integral_of_its_orthant_probabilities(incumbent):
    scalarization = Chebyshev(reference=[0.5, -1.0], scale=[2.0, 0.5])
    weights = np.array([0.3, 0.7])
    means = np.array([[1.5, 0.0], [2.0, -0.2], [0.8, 0.4]])
    covs = np.array(
        [[[1.0, 0.6], [0.6, 0.5]], [[0.3, -0.2], [-0.2, 0.4]], [[2.0, 0.0], [0.0, 0.05]]]
    )
    got = sampled_improvement(means, covs, scalarization, weights, incumbent, DRAWS)
    expected = [
        chebyshev_ei_by_quadrature(m, c, scalarization, weights, incumbent)
        for m, c in zip(means, covs)
    ]
    np.testing.assert_allclose(got, expected, atol=5e-4)


def test_linear_improvement_is_the_gaussian_closed_form():
    scalarization, weights = Linear(reference=[0.0, 1.0], scale=[1.0, 4.0]), np.array([0.4, 0.6])
    means = np.array([[0.5, 2.0], [-1.0, 3.0]])
    covs = np.array([[[1.0, 0.3], [0.3, 2.0]], [[0.2, 0.0], [0.0, 3.0]]])
    a = weights / scalarization.scale
    closed = expected_improvement(
        scalarization(means, weights), np.sqrt(np.einsum("i,mij,j->m", a, covs, a)), 0.1
    )
    got = sampled_improvement(means, covs, scalarization, weights, 0.1, DRAWS)
    np.testing.assert_allclose(got, closed, atol=5e-4)


def test_a_singular_covariance_gives_the_other_objectives_improvement():
    # objective 0 is known and never the smaller one: s = a_1 (F_1 − z_1), Gaussian
    scalarization, weights = Chebyshev(reference=[0.0, 0.0], scale=[1.0, 1.0]), [0.5, 0.5]
    means, covs = np.array([[50.0, 0.3]]), np.array([[[0.0, 0.0], [0.0, 0.8]]])
    got = sampled_improvement(means, covs, scalarization, weights, 0.0, DRAWS)
    closed = expected_improvement(0.5 * 0.3, 0.5 * np.sqrt(0.8), 0.0)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, closed, atol=5e-4)


@pytest.mark.parametrize("kind", [Linear, Chebyshev, AugmentedChebyshev, Hypervolume])
def test_of_draws_is_the_scalarisation_of_every_draw(kind):
    # the per-objective products of of_draws against s_λ applied to each draw, in a loop
    rng = np.random.default_rng(3)
    scalarization = kind(reference=[-1.0, 0.5, -2.0], scale=[2.0, 0.5, 4.0])
    mean = rng.normal(size=(5, 3))
    root = np.tril(rng.normal(size=(5, 3, 3)))
    weights, draws = np.array([0.2, 0.5, 0.3]), rng.normal(size=(7, 3))
    expected = np.array(
        [[scalarization(m[None] + (r @ z)[None], weights)[0] for z in draws]
         for m, r in zip(mean, root)]
    )  # fmt: skip
    got = scalarization.of_draws(mean, root, weights, draws)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def observe(x):
    return [np.sin(4 * x[0]), x[1], x.sum()]


@pytest.mark.parametrize("acquisition", ["mc-ei", "moment-ei"])
@pytest.mark.parametrize("algorithm", ["mt-kb", "mt-bkb", "it-kb"])
@pytest.mark.parametrize("setting", ["candidates", "box"])
def test_multitaskbo_proposes_with_sampled_or_moment_ei_and_resumes_exactly(
    setting, algorithm, acquisition
):
    rng = np.random.default_rng(6)
    candidates = rng.random((40, 2))
    where = dict(candidates=candidates) if setting == "candidates" else dict(bounds=[(0, 1)] * 2)
    optimizer = MultiTaskBO(**where, kernel=Separable(RBF(0.3), B), algorithm=algorithm,
                            acquisition=acquisition, seed=1)  # fmt: skip
    for x in candidates[:6]:
        optimizer.tell(x, observe(x))
    batch = optimizer.ask(3)
    assert batch.shape == (3, 2) and np.all((0 <= batch) & (batch <= 1))
    restored = MultiTaskBO.from_state_dict(optimizer.state_dict())
    assert restored.acquisition == acquisition
    np.testing.assert_array_equal(restored.ask(), optimizer.ask())


@pytest.mark.parametrize("acquisition", ["mc-ei", "moment-ei"])
def test_sampled_and_moment_ei_with_a_learned_kernel_and_a_constraint(acquisition):
    rng = np.random.default_rng(7)
    candidates = rng.random((60, 2))
    optimizer = MultiTaskBO(
        candidates=candidates, kernel="auto", n_constraints=1, acquisition=acquisition, seed=0
    )
    for x in candidates[:8]:
        optimizer.tell(x, [x[0], 1 - x[0] * x[1]], constraints=[x[1] - 0.7])
    for _ in range(3):
        x = optimizer.ask()
        optimizer.tell(x, [x[0], 1 - x[0] * x[1]], constraints=[x[1] - 0.7])
    assert len(optimizer.X_) == 11


def test_mc_ei_needs_an_algorithm_other_than_mobo():
    with pytest.raises(ValueError, match="acquisition='mc-ei' needs an algorithm other than"):
        MultiTaskBO(candidates=np.zeros((3, 1)), n_tasks=2, algorithm="mobo", acquisition="mc-ei")
