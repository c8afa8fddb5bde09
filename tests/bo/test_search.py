"""The box search of MultiTaskBO (:mod:`manytask.bo.search`): the batched finite-difference
gradient against the analytic one, and the maximiser against known argmaxima."""

import numpy as np
import pytest

from manytask.bo import search
from manytask.bo.search import _negative_with_gradient, maximize_on_box

CENTRE = np.array([0.3, 0.8, 0.55])
CURVATURE = np.array([1.0, 4.0, 0.5])


def quadratic(X):
    """−Σ a_i (x_i − c_i)²: gradient −2 a (x − c), argmax c on a box that holds c."""
    return -np.sum(CURVATURE * (X - CENTRE) ** 2, axis=1)


@pytest.mark.parametrize(
    "z",
    [np.array([0.1, 0.5, 0.9]), np.array([1.0, 0.0, 1.0]), np.array([0.3, 0.8, 0.55])],
)
def test_batched_gradient_matches_the_analytic_gradient(z):
    """One call on d + 1 rows gives −u(z) and −∇u(z) to forward-difference accuracy:
    |error| ≤ a h + rounding, h = √ε ≈ 1.5e-8, so 1e-6 is loose; at the upper bound the
    step goes backwards and stays in the box."""
    seen = []

    def acquisition(X):
        seen.append(X.copy())
        return quadratic(X)

    value, gradient = _negative_with_gradient(acquisition, z, high=np.ones(3))
    assert len(seen) == 1 and seen[0].shape == (4, 3)
    assert np.all(seen[0] <= 1.0)
    assert value == pytest.approx(-quadratic(z[None, :])[0], abs=1e-15)
    np.testing.assert_allclose(gradient, 2 * CURVATURE * (z - CENTRE), atol=1e-6)


def test_maximize_on_box_finds_interior_and_boundary_maxima():
    """Inside the box the argmax is c; with c₁ below the box the argmax is the projection
    of c (the quadratic is separable). L-BFGS-B stops at a projected gradient
    ≤ 1e-5, so |x − x*| ≤ 1e-5 / (2 min a) = 1e-5; 1e-4 is loose."""
    rng = np.random.default_rng(0)
    bounds = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    x = maximize_on_box(quadratic, bounds, rng, [], 64, 2, 1e-3)
    np.testing.assert_allclose(x, CENTRE, atol=1e-4)
    shifted = bounds.copy()
    shifted[0] = [0.4, 1.0]  # c₁ = 0.3 outside: the argmax has x₁ = 0.4
    x = maximize_on_box(quadratic, shifted, rng, [], 64, 2, 1e-3)
    np.testing.assert_allclose(x, [0.4, 0.8, 0.55], atol=1e-4)


def test_maximize_on_box_keeps_away_from_busy_points():
    """A busy point at the argmax: the answer lies min_distance from it in some coordinate
    (:func:`~manytask.bo.search.separated`)."""
    bounds = np.tile([0.0, 1.0], (3, 1))
    x = maximize_on_box(quadratic, bounds, np.random.default_rng(1), [CENTRE], 64, 2, 0.1)
    assert search.separated(x[None, :], [CENTRE], bounds, 0.1)[0]


def test_maximize_on_box_avoids_told_points_while_it_can():
    """A told point at the argmax c: the answer lies min_distance from it, so its value is
    at most the quadratic's maximum outside that cube (a min_distance step from c along
    the flattest axis, written out here: −a₃ m²; a search that kept c would exceed it).
    When no Sobol point lies that far (min_distance = 1: only the corners would), the told
    point is ignored and c comes back."""
    bounds = np.tile([0.0, 1.0], (3, 1))
    m = 0.1
    x = maximize_on_box(quadratic, bounds, np.random.default_rng(1), [], 256, 5, m, [], [CENTRE])
    assert search.separated(x[None, :], [CENTRE], bounds, m)[0]
    constrained_max = -CURVATURE.min() * m**2
    assert quadratic(x[None, :])[0] <= constrained_max + 1e-12
    x = maximize_on_box(quadratic, bounds, np.random.default_rng(1), [], 64, 2, 1.0, [], [CENTRE])
    np.testing.assert_allclose(x, CENTRE, atol=1e-4)


def test_avoid_told_keeps_proposals_off_the_told_points():
    """A noise-free 1-D objective told on a grid that holds its maximiser 0.3: every
    proposal of avoid_told=True lies min_distance (1e-3 of the side) from every told point
    (brute force over them), after each of 8 further tells."""
    from manytask.bo import MultiTaskBO

    optimizer = MultiTaskBO(bounds=[[0.0, 1.0]], seed=0, n_tasks=1, avoid_told=True)
    for x in np.r_[np.linspace(0.0, 1.0, 11), 0.3 + 1e-4 * np.arange(1, 4)]:
        optimizer.tell([x], [-((x - 0.3) ** 2)])
    for _ in range(8):
        x = optimizer.ask()
        assert np.min(np.abs(optimizer.X_[:, 0] - x[0])) >= optimizer.min_distance
        optimizer.tell(x, [-((x[0] - 0.3) ** 2)])
    resumed = MultiTaskBO.from_state_dict(optimizer.state_dict())  # the option is saved
    assert resumed.avoid_told
    np.testing.assert_array_equal(resumed.ask(), optimizer.ask())


def test_avoid_told_on_a_finite_set_skips_told_candidates_while_others_remain():
    """A noise-free 2-objective problem on 6 candidates whose best ones are told first: with
    avoid_told=True the 3 proposals are the 3 untold candidates (brute force: every
    candidate told once); once all 6 are told, a told candidate is proposed again."""
    from manytask.bo import MultiTaskBO

    candidates = np.linspace(0.0, 1.0, 6)[:, None]

    def values(x):
        return [-((x[0] - 0.4) ** 2), -((x[0] - 0.45) ** 2)]

    optimizer = MultiTaskBO(candidates=candidates, seed=0, n_tasks=2, kernel="auto",
                            avoid_told=True)  # fmt: skip
    for x in candidates[[2, 0, 5]]:
        optimizer.tell(x, values(x))
    for _ in range(3):
        x = optimizer.ask()
        optimizer.tell(x, values(x))
    assert sorted(optimizer.X_[:, 0]) == sorted(candidates[:, 0])
    x = optimizer.ask()
    assert any(np.array_equal(x, c) for c in candidates)


def test_maximize_on_box_improves_from_a_warm_start():
    """A peak of width 0.005 at c beside a broad hill at a: from a warm start 0.004 from c,
    L-BFGS-B climbs to c, whose value (≈ 0.9) beats the hill's top (0). Its curvature
    there is ~1/0.005² = 4e4, so the projected-gradient stop (1e-5) leaves |x − c| ≲ 1e-9
    plus the hill's pull (0.2 |c − a| / 4e4 ≈ 7e-6); 1e-4 is loose."""
    c, a = np.array([0.2, 0.2]), np.array([0.9, 0.9])

    def peaked(X):
        hill = -0.1 * np.sum((X - a) ** 2, axis=1)
        return hill + np.exp(-np.sum((X - c) ** 2, axis=1) / (2 * 0.005**2))

    bounds = np.tile([0.0, 1.0], (2, 1))
    x = maximize_on_box(peaked, bounds, np.random.default_rng(0), [], 8, 2, 1e-3, [c + 0.004])
    np.testing.assert_allclose(x, c, atol=1e-4)
