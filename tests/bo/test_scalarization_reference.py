"""Normalised scalarisations: reference point and range, fixed, known or observed."""

import numpy as np
import pytest

from manytask.bo import MultiTaskBO
from manytask.bo.learned import LearnedKernel
from manytask.bo.metrics import bayes_regret, cumulative_regret
from manytask.bo.problems import perturbed_sine
from manytask.bo.scalarization import Chebyshev, Linear, make_scalarization, value_range
from manytask.kernels import RBF, Separable, uniform_task_similarity


def brute_normalised(y, weights, reference, scale, kind):
    terms = [w * (v - z) / r for w, v, z, r in zip(weights, y, reference, scale)]
    return sum(terms) if kind == "linear" else min(terms)


def brute_range(Y):
    """min and max − min per column by a loop over the finite entries."""
    low, span = [], []
    for column in np.asarray(Y).T:
        seen = [v for v in column if np.isfinite(v)]
        low.append(min(seen) if seen else 0.0)
        width = max(seen) - min(seen) if seen else 0.0
        span.append(width if width > 0 else 1.0)
    return np.array(low), np.array(span)


@pytest.mark.parametrize("kind", ["linear", "chebyshev"])
def test_normalised_scalarizations_match_brute_force(kind):
    rng = np.random.default_rng(0)
    Y, weights = rng.normal(size=(30, 3)), rng.dirichlet(np.ones(3))
    reference, scale = rng.normal(size=3), rng.uniform(0.2, 3.0, size=3)
    expected = [brute_normalised(y, weights, reference, scale, kind) for y in Y]
    scalarization = make_scalarization(kind, reference, scale)
    np.testing.assert_allclose(scalarization(Y, weights), expected, rtol=1e-13)
    many = rng.dirichlet(np.ones(3), size=4)
    np.testing.assert_allclose(
        scalarization(Y, many),
        [[brute_normalised(y, w, reference, scale, kind) for y in Y] for w in many],
        rtol=1e-13,
    )


@pytest.mark.parametrize("kind", ["linear", "chebyshev"])
def test_normalised_lipschitz_constant_bounds_and_is_attained(kind):
    rng = np.random.default_rng(1)
    weights, scale = rng.dirichlet(np.ones(3)), np.array([0.5, 2.0, 4.0])
    scalarization = make_scalarization(kind, np.zeros(3), scale)
    L = scalarization.lipschitz(weights)
    u, v = rng.normal(size=(5000, 3)), rng.normal(size=(5000, 3))
    ratios = np.abs(scalarization(u, weights) - scalarization(v, weights))
    assert np.all(ratios / np.linalg.norm(u - v, axis=1) <= L + 1e-12)
    effective = weights / scale  # independent: the weights of the raw objectives
    if kind == "linear":
        direction, base = effective / np.linalg.norm(effective), np.zeros(3)
        assert L == pytest.approx(np.linalg.norm(effective), rel=1e-12)
    else:
        direction = np.eye(3)[np.argmax(effective)]
        base = 100.0 * (1 - direction)  # the chosen coordinate is the minimiser
        assert L == pytest.approx(effective.max(), rel=1e-12)
    step = 1e-3
    change = scalarization((base + step * direction)[None], weights) - scalarization(
        base[None], weights
    )
    assert abs(change[0]) / step == pytest.approx(L, rel=1e-9)


def test_observed_reference_is_fitted_to_the_finite_data():
    Y = np.array([[1.0, 4.0, 2.0], [3.0, np.nan, 2.0], [-1.0, 5.0, 2.0]])
    np.testing.assert_array_equal(value_range(Y)[0], brute_range(Y)[0])
    np.testing.assert_array_equal(value_range(Y)[1], brute_range(Y)[1])
    fitted = Chebyshev("observed").fitted(Y)
    assert not fitted.adaptive
    np.testing.assert_array_equal(fitted.reference, [-1.0, 4.0, 2.0])
    np.testing.assert_array_equal(fitted.scale, [4.0, 1.0, 1.0])  # constant column: r = 1
    with pytest.raises(ValueError, match="fitted"):
        Chebyshev("observed")(Y, np.ones(3) / 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(reference="nadir"), "'observed', 'ideal'"),
        (dict(reference="observed", scale=[1.0, 1.0]), "scale must be None"),
        (dict(reference=[0.0, 0.0], scale=[1.0, 0.0]), "scale must be > 0"),
    ],
)
def test_bad_reference_or_scale_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Chebyshev(**kwargs)


def test_reference_of_the_wrong_length_is_rejected_by_the_optimizer():
    kernel = Separable(RBF(0.2), np.eye(2))
    with pytest.raises(ValueError, match="reference must have 2 entries"):
        MultiTaskBO(candidates=np.linspace(0, 1, 5)[:, None], kernel=kernel, reference=[0.0])


def test_optimizer_scalarizes_with_the_observed_range_of_its_data():
    candidates = np.linspace(0, 1, 41)[:, None]
    kernel = Separable(RBF(0.2), uniform_task_similarity(2, 0.4))
    optimizer = MultiTaskBO(candidates=candidates, kernel=kernel, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(6):
        x = optimizer.ask()
        optimizer.tell(x, [10.0 * np.sin(6 * x[0]), 0.1 * np.cos(5 * x[0])] + rng.normal(size=2))
        used = optimizer._scalarization()
        low, span = brute_range(optimizer.Y_)
        np.testing.assert_allclose(used.reference, low)
        np.testing.assert_allclose(used.scale, span)


def test_regret_of_an_observed_reference_uses_the_known_range():
    problem = perturbed_sine()
    values = problem.values
    rng = np.random.default_rng(2)
    chosen = values[rng.integers(len(values), size=7)]
    weights = rng.dirichlet(np.ones(4), size=7)
    low, span = brute_range(values)
    expected, total = [], 0.0
    for y, w in zip(chosen, weights):
        best = max(brute_normalised(v, w, low, span, "chebyshev") for v in values)
        total += best - brute_normalised(y, w, low, span, "chebyshev")
        expected.append(total)
    regret = cumulative_regret(problem, chosen, weights, Chebyshev("observed"))
    np.testing.assert_allclose(regret, expected, rtol=1e-12, atol=1e-14)
    # each Chebyshev term of a normalised regret lies in [0, 1]
    assert np.all(np.diff(np.r_[0.0, regret]) <= 1.0 + 1e-12)
    bayes = bayes_regret(problem, chosen, Chebyshev("observed"), weights=weights)
    known = bayes_regret(problem, chosen, Chebyshev(low, span), weights=weights)
    np.testing.assert_allclose(bayes, known, rtol=1e-12)


def test_from_problem_uses_the_known_range_below_all_the_data():
    problem = perturbed_sine()
    optimizer = MultiTaskBO.from_problem(problem, seed=0)
    low, span = brute_range(problem.values)
    np.testing.assert_allclose(optimizer.scalarization.reference, low)
    np.testing.assert_allclose(optimizer.scalarization.scale, span)
    assert np.all(problem.values >= optimizer.scalarization.reference)


@pytest.mark.parametrize("kind", [Linear, Chebyshev])
def test_learned_kernel_maps_a_fixed_reference_to_standardised_units(kind):
    rng = np.random.default_rng(3)
    Y = rng.normal(loc=[5.0, -2.0], scale=[3.0, 0.2], size=(12, 2))
    learned = LearnedKernel(1, 2, np.array([[0.0, 1.0]]), seed=0, refit_every=1)
    learned.mean_, learned.scale_ = Y.mean(axis=0), Y.std(axis=0)
    weights = rng.dirichlet(np.ones(2), size=3)
    for scalarization in (kind([1.0, -3.0], [2.0, 0.5]), kind([1.0, -3.0]), kind(None, [2.0, 4.0])):
        mapped = learned.scalarization(scalarization)
        np.testing.assert_allclose(
            mapped(learned.standardize(Y), weights), scalarization(Y, weights), rtol=1e-12
        )
