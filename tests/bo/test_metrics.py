"""Regret, Pareto mask and hypervolume against brute-force computations."""

import importlib.util
import itertools

import numpy as np
import pytest

from manytask.bo.metrics import (
    bayes_regret,
    cumulative_regret,
    hypervolume,
    hypervolume_2d,
    pareto_mask,
    time_average_regret,
)
from manytask.bo.problems import perturbed_sine
from manytask.bo.scalarization import Chebyshev, Linear
from manytask.simplex import paria_weights

SCALARIZATIONS = [Linear(), Chebyshev(), Chebyshev(reference=[-2.0, -1.0, -3.0])]


def _random_problem(seed, N=30, n=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, n))


def _weights(seed, T, n):
    rng = np.random.default_rng(seed)
    return np.stack([paria_weights(rng, n) for _ in range(T)])


def _s(scalarization, y, weight):
    """s_λ(y) for one point and one λ, written out from §2."""
    if isinstance(scalarization, Linear):
        return float(np.dot(weight, y))
    reference = np.zeros_like(y) if scalarization.reference is None else scalarization.reference
    return float(min(w * (v - z) for w, v, z in zip(weight, y, reference)))


@pytest.mark.parametrize("scalarization", SCALARIZATIONS)
def test_regret_is_zero_when_every_choice_maximises_its_weights(scalarization):
    values = _random_problem(0)
    weights = _weights(1, 40, 3)
    maximisers = [np.argmax(scalarization(values, w)) for w in weights]
    regret = cumulative_regret(values, values[maximisers], weights, scalarization)
    np.testing.assert_allclose(regret, 0.0, atol=1e-12)
    np.testing.assert_allclose(bayes_regret(values, values, scalarization)[-1], 0.0, atol=1e-12)


@pytest.mark.parametrize("scalarization", SCALARIZATIONS)
def test_cumulative_regret_matches_double_loop(scalarization):
    values = _random_problem(2)
    rng = np.random.default_rng(3)
    chosen = values[rng.integers(0, len(values), size=25)]
    weights = _weights(4, 25, 3)
    expected, total = [], 0.0
    for y, weight in zip(chosen, weights):
        best = max(_s(scalarization, v, weight) for v in values)
        total += best - _s(scalarization, y, weight)
        expected.append(total)
    regret = cumulative_regret(values, chosen, weights, scalarization)
    np.testing.assert_allclose(regret, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        time_average_regret(values, chosen, weights, scalarization),
        np.array(expected) / np.arange(1, 26),
        rtol=1e-12,
    )
    assert np.all(np.diff(regret) >= -1e-12)


def test_cumulative_regret_accepts_a_problem_and_a_scalarization_name():
    problem = perturbed_sine()
    chosen = problem.values[[0, 50, 90]]
    weights = _weights(5, 3, 4)
    np.testing.assert_allclose(
        cumulative_regret(problem, chosen, weights, "chebyshev"),
        cumulative_regret(problem.values, chosen, weights, Chebyshev()),
    )


@pytest.mark.parametrize("scalarization", SCALARIZATIONS)
def test_bayes_regret_matches_brute_force_loop(scalarization):
    values = _random_problem(6, N=12)
    chosen = values[np.random.default_rng(7).integers(0, 12, size=8)]
    regret = bayes_regret(values, chosen, scalarization, n_weights=1000, seed=8)
    # the same Monte-Carlo set: 1000 Paria draws from default_rng(8), in order
    rng = np.random.default_rng(8)
    weight_set = [paria_weights(rng, 3) for _ in range(1000)]
    expected = np.zeros(len(chosen))
    for weight in weight_set:
        best = max(_s(scalarization, v, weight) for v in values)
        for t in range(len(chosen)):
            expected[t] += best - max(_s(scalarization, y, weight) for y in chosen[: t + 1])
    np.testing.assert_allclose(regret, expected / 1000, rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(regret) <= 1e-12)


def test_bayes_regret_accepts_the_weight_set_itself():
    values = _random_problem(9, N=10)
    weight_set = _weights(10, 50, 3)
    regret = bayes_regret(values, values[:4], "linear", weights=weight_set)
    best = (weight_set @ values.T).max(axis=1)
    achieved = np.maximum.accumulate(weight_set @ values[:4].T, axis=1)
    np.testing.assert_allclose(regret, np.mean(best[:, None] - achieved, axis=0))


def test_metrics_reject_mismatched_shapes():
    values = _random_problem(11)
    with pytest.raises(ValueError, match="weights"):
        cumulative_regret(values, values[:5], np.full((4, 3), 1 / 3))
    with pytest.raises(ValueError, match="chosen_values"):
        bayes_regret(values, values[:5, :2])


def _dominates(a, b):
    return np.all(a >= b) and np.any(a > b)


@pytest.mark.parametrize("seed", range(5))
def test_pareto_mask_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    # few distinct levels, so ties and duplicate rows are frequent
    Y = rng.integers(0, 5, size=(40, 1 + seed % 3 + 1)).astype(float)
    expected = [not any(_dominates(other, row) for other in Y) for row in Y]
    np.testing.assert_array_equal(pareto_mask(Y), expected)


def test_pareto_mask_keeps_all_copies_of_a_pareto_point():
    Y = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0], [0.5, 0.5]])
    np.testing.assert_array_equal(pareto_mask(Y), [True, True, True, False])


def _union_of_boxes(Y, reference):
    """Exact volume of ∪_i [reference, y_i] on the grid of the distinct coordinates."""
    Y = Y[np.all(Y > reference, axis=1)]
    if len(Y) == 0:
        return 0.0
    axes = [np.unique(np.append(Y[:, k], reference[k])) for k in range(Y.shape[1])]
    volume = 0.0
    for cell in itertools.product(*[range(len(a) - 1) for a in axes]):
        upper = np.array([a[i + 1] for a, i in zip(axes, cell)])
        if np.any(np.all(Y >= upper, axis=1)):
            volume += np.prod([a[i + 1] - a[i] for a, i in zip(axes, cell)])
    return volume


@pytest.mark.parametrize("seed", range(6))
def test_hypervolume_2d_matches_union_of_rectangles(seed):
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(25, 2))
    if seed % 2:
        Y = np.round(Y, 1)  # ties in both coordinates
    reference = np.array([-0.5, -1.0])
    expected = _union_of_boxes(Y, reference)
    assert hypervolume_2d(Y, reference) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert hypervolume(Y, reference) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_points_not_better_than_the_reference_add_nothing():
    reference = np.array([0.0, 0.0])
    assert hypervolume_2d([[1.0, 0.0], [-1.0, 5.0], [0.0, 0.0]], reference) == 0.0
    assert hypervolume_2d([[1.0, 1.0], [1.0, 0.0], [3.0, -2.0]], reference) == 1.0


def test_hypervolume_of_three_objectives_uses_moocore_or_says_what_to_install():
    rng = np.random.default_rng(0)
    Y = np.round(rng.normal(size=(12, 3)), 1)
    reference = np.array([-1.0, -1.0, -1.0])
    if importlib.util.find_spec("moocore") is None:
        with pytest.raises(NotImplementedError, match="moocore"):
            hypervolume(Y, reference)
    else:
        expected = _union_of_boxes(Y, reference)
        assert hypervolume(Y, reference) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(NotImplementedError, match="moocore"):
        hypervolume_2d(Y, reference)
