"""The cheaper default round gives the same numbers as the plain formulas it replaces."""

import numpy as np
import pytest

from manytask.boost import MultiBoostClassifier, figure1
from manytask.boost.figure1 import (
    domain_layout,
    domain_losses,
    line_search,
    line_search_step,
    newton_polish,
    objective_along_coordinate,
    round_distributions,
    scaled_exponential_losses,
)
from manytask.boost.objective import minimise_convex


def _coordinate_problem(seed, m=300, n_domains=3, scale=1.0):
    """a_i > 0, u_i = ±Q-like values in [−1, 1], points of the domains interleaved."""
    rng = np.random.default_rng(seed)
    domain_index = rng.integers(0, n_domains, size=m)
    scaled = rng.random(m) * np.exp(rng.normal(size=m))
    u = scale * np.where(rng.random(m) < 0.35, -1.0, 1.0) * rng.uniform(0.05, 1.0, m)
    return scaled, u, domain_index


@pytest.mark.parametrize("seed", range(6))
def test_memoised_objective_is_bit_identical_to_the_plain_max(seed):
    scaled, u, domain_index = _coordinate_problem(seed)
    objective = figure1._CoordinateObjective(scaled, u, domain_index, 3)
    rng = np.random.default_rng(100 + seed)
    # Points in random order (chords from any side), repeats, 0, and a far point.
    steps = np.concatenate([[0.0, 3.0], rng.uniform(0, 3, 60), rng.uniform(1.0, 1.01, 30)])
    steps = np.concatenate([steps, steps[::7], [50.0]])
    for step in steps:
        plain = objective_along_coordinate(step, scaled, u, domain_index, 3)
        assert objective(step) == plain  # exactly: same sums, same max


def test_memoised_objective_skips_domains_that_cannot_be_the_max():
    scaled, u, domain_index = _coordinate_problem(7)
    scaled[domain_index == 2] *= 5.0  # domain 2 is the max everywhere; 0 and 1 far below
    objective = figure1._CoordinateObjective(scaled, u, domain_index, 3)
    computed = []
    original = objective._domain_loss

    def counting(domain, step):
        computed.append(domain)
        return original(domain, step)

    objective._domain_loss = counting
    objective(0.0)
    objective(2.0)
    computed.clear()
    for step in np.linspace(0.1, 1.9, 10):
        assert objective(step) == objective_along_coordinate(step, scaled, u, domain_index, 3)
    assert computed == [2] * 10


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("scale", [1.0, 400.0])
def test_line_search_step_is_brent_then_newton_on_the_plain_objective(seed, scale):
    """Same bracket and Brent iterates as on the plain objective, then the same Newton
    polish, so the same step to the last bit; the large ``scale`` makes e^{−ηu} overflow
    inside the bracket."""
    scaled, u, domain_index = _coordinate_problem(seed, scale=scale)
    brent = minimise_convex(
        lambda step: objective_along_coordinate(step, scaled, u, domain_index, 3)
    )
    plain = newton_polish(
        brent, objective_along_coordinate(brent, scaled, u, domain_index, 3), scaled, u,
        domain_index, 3,
    )  # fmt: skip
    step, value = line_search(scaled, u, domain_index, 3)
    assert (step, value) == plain
    assert step == line_search_step(scaled, u, domain_index, 3)
    layout = domain_layout(domain_index, 3)
    assert line_search(scaled, u, domain_index, 3, layout) == (step, value)
    assert value == objective_along_coordinate(step, scaled, u, domain_index, 3)


def _bisected_minimiser(scaled, u, domain_index, upper=64.0):
    """argmin max_l F_l along the coordinate by plain bisection on the sign of the right
    subgradient (the slope of a maximiser; F is convex), down to adjacent floats."""

    def increasing(step):
        terms = scaled * np.exp(-step * u)
        losses = np.bincount(domain_index, weights=terms, minlength=3)
        slopes = -np.bincount(domain_index, weights=terms * u, minlength=3)
        top = losses >= losses.max() * (1 - 1e-15)
        return slopes[top].max() >= 0

    low, high = 0.0, upper
    while True:
        middle = 0.5 * (low + high)
        if middle in (low, high):
            return middle
        low, high = (low, middle) if increasing(middle) else (middle, high)


@pytest.mark.parametrize("seed", range(8))
def test_line_search_solves_the_1d_problem_to_rounding(seed):
    """Brent alone stops at a relative √ε (scipy's bounded method); with the Newton polish
    the step matches an independent bisection to 1e-12 (smooth minima and kinks alike)."""
    scaled, u, domain_index = _coordinate_problem(seed)
    step, _ = line_search(scaled, u, domain_index, 3)
    reference = _bisected_minimiser(scaled, u, domain_index)
    assert abs(step - reference) <= 1e-12 * max(1.0, reference)


def test_a_separating_direction_also_gives_brents_step():
    """u > 0 everywhere: F falls until e^{−ηu} underflows, where Brent stops (the round
    itself detects the direction first and takes its separating step)."""
    scaled, u, domain_index = _coordinate_problem(3)
    plain = minimise_convex(
        lambda step: objective_along_coordinate(step, scaled, np.abs(u), domain_index, 3)
    )
    assert line_search(scaled, np.abs(u), domain_index, 3)[0] == plain


def test_scaled_losses_give_the_domain_losses_and_distributions_exactly():
    rng = np.random.default_rng(2)
    m = 200
    margins, domain_index = rng.normal(size=m), rng.integers(0, 3, size=m)
    point_weights = 1.0 / np.bincount(domain_index)[domain_index]
    scaled = scaled_exponential_losses(margins, point_weights)
    np.testing.assert_allclose(scaled, point_weights * np.array([np.exp(-v) for v in margins]))
    losses = np.bincount(domain_index, weights=scaled, minlength=3)
    assert np.array_equal(losses, domain_losses(margins, domain_index, point_weights, 3))
    shared = round_distributions(margins, domain_index, point_weights, 3, scaled_losses=scaled)
    fresh = round_distributions(margins, domain_index, point_weights, 3)
    assert all(np.array_equal(a, b) for a, b in zip(shared, fresh))


def _brute_force_steepest(X, y, Q, scaled, domain_index, active):
    """max over q, feature, threshold, polarity of min_l Σ_{i∈S_l} a_i y_i Q(q|x_i) h(x_i)."""
    best = 0.0
    for q in range(Q.shape[1]):
        for feature in range(X.shape[1]):
            values = np.unique(X[:, feature])
            thresholds = np.concatenate([[-np.inf], 0.5 * (values[:-1] + values[1:])])
            for threshold in thresholds:
                for polarity in (1, -1):
                    h = np.where(X[:, feature] > threshold, polarity, -polarity)
                    rates = [
                        sum(
                            scaled[i] * y[i] * Q[i, q] * h[i]
                            for i in range(len(y))
                            if domain_index[i] == l
                        )
                        for l in active
                    ]
                    best = max(best, min(rates))
    return best


@pytest.mark.parametrize("n_bins", [None, 4])
def test_steepest_coordinate_matches_a_brute_force_search(n_bins):
    rng = np.random.default_rng(5)
    m, d = 40, 3
    X = np.round(rng.normal(size=(m, d)), 1)  # repeated values: invalid splits inside ties
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    domain_index = np.repeat([0, 1, 2], [14, 13, 13])
    Q = rng.dirichlet(np.ones(3), size=m)
    scaled = rng.random(m) / m
    active = np.array([0, 2])
    clf = MultiBoostClassifier(n_bins=n_bins)
    clf.domains_ = np.arange(3)
    clf._exact_presorted = None
    q, stump = clf._steepest_coordinate(X, y, Q, scaled, domain_index, active)
    h = stump.predict(X)
    rates = [np.sum((scaled * y * Q[:, q] * h)[domain_index == l]) for l in active]
    expected = _brute_force_steepest(X, y, Q, scaled, domain_index, active)
    assert expected > 0
    assert min(rates) == pytest.approx(expected, rel=1e-12)
