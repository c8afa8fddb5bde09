"""The augmented Chebyshev scalarisation and the ideal-point and Pareto-set references."""

import numpy as np
import pytest

from manytask.bo import AugmentedChebyshev, MultiTaskBO
from manytask.bo.metrics import pareto_mask
from manytask.bo.scalarization import (
    Chebyshev,
    Hypervolume,
    make_scalarization,
    pareto_range,
    value_range,
)

ALPHA = 0.05  # ParEGO's and BoTorch's augmentation


def brute_augmented(y, weights, reference, scale):
    terms = [w * (v - z) / r for w, v, z, r in zip(weights, y, reference, scale)]
    return min(terms) + ALPHA * sum(terms)


def brute_dominated(Y):
    """Row i is dominated when some row is ≥ in every objective and > in one (a loop)."""
    return [
        any(all(b >= a for a, b in zip(Y[i], Y[j])) and any(b > a for a, b in zip(Y[i], Y[j]))
            for j in range(len(Y)))
        for i in range(len(Y))
    ]  # fmt: skip


def test_augmented_chebyshev_matches_a_loop_for_one_and_many_weights():
    rng = np.random.default_rng(0)
    Y, weights = rng.normal(size=(30, 3)), rng.dirichlet(np.ones(3))
    reference, scale = rng.normal(size=3), rng.uniform(0.2, 3.0, size=3)
    scalarization = make_scalarization("augmented-chebyshev", reference, scale)
    expected = [brute_augmented(y, weights, reference, scale) for y in Y]
    np.testing.assert_allclose(scalarization(Y, weights), expected, rtol=1e-13)
    many = rng.dirichlet(np.ones(3), size=4)
    np.testing.assert_allclose(
        scalarization(Y, many),
        [[brute_augmented(y, w, reference, scale) for y in Y] for w in many],
        rtol=1e-13,
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_augmented_lipschitz_constant_bounds_and_is_attained(seed):
    rng = np.random.default_rng(seed)
    weights, scale = rng.dirichlet(np.ones(3)), rng.uniform(0.3, 4.0, size=3)
    scalarization = AugmentedChebyshev(np.zeros(3), scale)
    L = scalarization.lipschitz(weights)
    # the bound: every pair of random points, near and far
    u = rng.normal(size=(20000, 3))
    v = u + rng.normal(size=(20000, 3)) * rng.choice([1e-3, 1.0, 10.0], size=(20000, 1))
    change = np.abs(scalarization(u, weights) - scalarization(v, weights))
    assert np.all(change / np.linalg.norm(u - v, axis=1) <= L * (1 + 1e-12))
    # attained: inside the cone where term k (largest λ_k/r_k) is the minimum, s is linear
    # with gradient g = a_k e_k + α a; a finite step along g changes s by L per unit length
    a = weights / scale
    k = np.argmax(a)
    gradient = a[k] * np.eye(3)[k] + ALPHA * a
    base = 100.0 * (1 - np.eye(3)[k]) / np.where(a > 0, a, 1.0)  # term k is the smallest
    step = 1e-3 * gradient / np.linalg.norm(gradient)
    rise = scalarization((base + step)[None], weights) - scalarization(base[None], weights)
    assert rise[0] / 1e-3 == pytest.approx(L, rel=1e-9)
    assert L == pytest.approx(np.linalg.norm(gradient), rel=1e-12)


def test_augmented_maximisers_are_pareto_optimal_where_chebyshev_ties():
    # (1, 5) dominates (1, 3); plain Chebyshev from z = 0 with λ = (½, ½) ties them
    Y = np.array([[1.0, 3.0], [1.0, 5.0], [0.5, 0.5]])
    plain = Chebyshev(np.zeros(2))(Y, np.array([0.5, 0.5]))
    assert plain[0] == plain[1]
    augmented = AugmentedChebyshev(np.zeros(2))(Y, np.array([0.5, 0.5]))
    assert np.argmax(augmented) == 1
    # on random sets with many ties, the maximiser is never a dominated point
    rng = np.random.default_rng(3)
    Y = rng.integers(0, 4, size=(40, 3)).astype(float)
    weights = rng.dirichlet(np.ones(3), size=200)
    best = np.argmax(AugmentedChebyshev(np.zeros(3))(Y, weights), axis=1)
    dominated = np.array(brute_dominated(Y))
    assert not dominated[best].any()


def test_pareto_range_is_the_range_of_the_non_dominated_rows():
    rng = np.random.default_rng(4)
    Y = rng.normal(size=(25, 3))
    Y[3, 1] = np.nan  # a row with a NaN takes no part in the Pareto set
    finite = Y[np.all(np.isfinite(Y), axis=1)]
    front = finite[~np.array(brute_dominated(finite))]
    low, span = pareto_range(Y)
    np.testing.assert_array_equal(low, front.min(axis=0))
    np.testing.assert_array_equal(span, front.max(axis=0) - front.min(axis=0))
    np.testing.assert_array_equal(np.sort(front, axis=0), np.sort(finite[pareto_mask(finite)], 0))
    # one Pareto point: every objective falls back to the range of all the rows
    Y = np.array([[2.0, 2.0], [1.0, 0.0], [0.0, 1.5]])
    np.testing.assert_array_equal(pareto_range(Y)[0], value_range(Y)[0])
    np.testing.assert_array_equal(pareto_range(Y)[1], value_range(Y)[1])


@pytest.mark.parametrize("reference", ["ideal", "pareto-ideal"])
def test_ideal_reference_sits_at_the_observed_maximum(reference):
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(20, 2)) * [100.0, 1.0]
    fitted = Chebyshev(reference).fitted(Y)
    np.testing.assert_allclose(fitted.reference, Y.max(axis=0), rtol=1e-15)
    normalised = fitted.normalize(Y)
    assert np.all(normalised <= 0) and np.all(normalised.max(axis=0) == 0)
    rows = "all" if reference == "ideal" else "pareto"
    _, span = value_range(Y) if rows == "all" else pareto_range(Y)
    np.testing.assert_array_equal(fitted.scale, span)


def test_ideal_augmented_chebyshev_is_botorchs_scalarisation():
    # BoTorch's get_chebyshev_scalarization (qLogNParEGO's objective): the negated augmented
    # Chebyshev distance to the best values of Y, on Y's min-max normalisation
    pytest.importorskip("botorch")
    import torch
    from botorch.utils.multi_objective.scalarization import get_chebyshev_scalarization

    rng = np.random.default_rng(6)
    Y = rng.normal(size=(30, 3)) * [1.0, 20.0, 0.1]
    for weights in rng.dirichlet(np.ones(3), size=5):
        theirs = get_chebyshev_scalarization(torch.as_tensor(weights), torch.as_tensor(Y))
        ours = AugmentedChebyshev("ideal").fitted(Y)(Y, weights)
        np.testing.assert_allclose(ours, theirs(torch.as_tensor(Y)).numpy(), rtol=1e-12)


def test_hypervolume_refuses_an_ideal_reference():
    with pytest.raises(ValueError, match="reference='ideal'"):
        Hypervolume("ideal")


@pytest.mark.parametrize("reference", ["ideal", "pareto", "pareto-ideal"])
def test_optimizer_runs_and_checkpoints_with_each_reference(reference):
    rng = np.random.default_rng(7)
    candidates = rng.uniform(size=(50, 2))
    optimizer = MultiTaskBO(
        candidates=candidates, kernel="auto", seed=0, reference=reference,
        scalarization="augmented-chebyshev", weights="dirichlet",
    )  # fmt: skip
    for x in candidates[:6]:
        optimizer.tell(x, [np.sin(3 * x[0]), 10 * np.cos(2 * x[1])])
    x = optimizer.ask()
    assert any(np.array_equal(x, c) for c in candidates)
    config = optimizer.scalarization.to_config()
    assert config == {"name": "augmented-chebyshev", "reference": reference, "scale": None}
    assert type(make_scalarization(config)) is AugmentedChebyshev
