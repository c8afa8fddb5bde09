"""The objective pieces of every MULTIBOOST option: Φ, Λ, soft-max, ℓ1 line search, Lemma 1."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from _helpers import loop_objective
from manytask.boost.line_search import aggregate_pieces, minimise_max_newton
from manytask.boost.objective import (
    aggregate_weights,
    agnostic_objective,
    check_mixtures,
    mixture_losses,
    phi,
    phi_derivative,
    phi_domain_losses,
    phi_pieces_along,
)
from manytask.boost.steps import constant_over_sqrt_t_step, lemma1_step, penalised_line_search


def _random_coordinate(seed=0, m=40, n_domains=2, n_codes=1):
    rng = np.random.default_rng(seed)
    margins = rng.normal(size=(m, n_codes))
    directions = rng.uniform(-0.4, 1.0, size=(m, n_codes))
    domain_index = np.repeat(np.arange(n_domains), m // n_domains)
    point_weights = rng.random(m)
    point_weights /= np.bincount(domain_index, weights=point_weights)[domain_index]
    return margins, directions, domain_index, point_weights


def test_phi_matches_its_definitions_and_derivative():
    u = np.linspace(-30, 30, 61)
    np.testing.assert_allclose(phi(u), np.exp(u))
    # log1p keeps the reference accurate where 1 + eᵘ rounds (u ≪ 0).
    np.testing.assert_allclose(phi(u, "logistic"), np.log1p(np.exp(u)) / math.log(2), rtol=1e-12)
    h = 1e-6
    for loss in ("exponential", "logistic"):
        numeric = (phi(u + h, loss) - phi(u - h, loss)) / (2 * h)
        np.testing.assert_allclose(phi_derivative(u, loss), numeric, rtol=1e-6, atol=1e-12)
    # Φ(−u) upper-bounds the zero-one loss 1{u ≤ 0} (§3), with equality at u = 0.
    assert np.all(phi(-u, "logistic") >= (u <= 0))
    assert phi(0.0, "logistic") == pytest.approx(1.0)


def test_restricted_mixture_objective_is_the_max_over_the_hull():
    rng = np.random.default_rng(1)
    losses = rng.random(3)
    vertices = check_mixtures([[0.6, 0.3, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]], 3)
    exact = agnostic_objective(mixture_losses(losses, vertices))
    # Brute force: dense random convex combinations of the vertices (points of the hull).
    coefficients = rng.dirichlet(np.ones(3) * 0.3, size=20000)
    hull_values = (coefficients @ vertices) @ losses
    assert hull_values.max() <= exact + 1e-12
    assert hull_values.max() == pytest.approx(exact, abs=2e-3)
    # Λ = the simplex (None) is the max over domains.
    assert agnostic_objective(mixture_losses(losses, None)) == losses.max()


@pytest.mark.parametrize(
    "mixtures, message",
    [
        ([[0.5, 0.6]], "sum to 1"),
        ([[1.5, -0.5]], ">= 0"),
        ([[0.5, 0.25, 0.25]], "shape"),
        ([[np.nan, 1.0]], "finite"),
        ("abc", "numeric"),
    ],
)
def test_bad_mixtures_raise(mixtures, message):
    with pytest.raises(ValueError, match=message):
        check_mixtures(mixtures, 2)


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("mu", [None, 20.0])
@pytest.mark.parametrize("beta", [0.0, 0.05])
@pytest.mark.parametrize("vertices", [None, [[0.7, 0.3], [0.2, 0.8]]])
def test_penalised_line_search_is_the_fine_grid_argmin(loss, mu, beta, vertices):
    margins, directions, domain_index, weights = _random_coordinate(seed=2)
    vertices = check_mixtures(vertices, 2)
    step = penalised_line_search(
        margins, directions, domain_index, weights, 2, loss, vertices, mu, beta
    )

    def objective(eta):
        return loop_objective(eta, margins, directions, domain_index, weights, 2, loss,
                              vertices, mu, beta)  # fmt: skip

    assert 0 < step < np.inf
    grid = np.linspace(0, 2 * step + 1, 2001)
    grid_values = [objective(eta) for eta in grid]
    assert objective(step) <= min(grid_values) + 1e-12
    assert step == pytest.approx(grid[int(np.argmin(grid_values))], abs=2 * (grid[1] - grid[0]))


def test_phi_domain_losses_sum_every_code_of_a_point():
    margins, _, domain_index, weights = _random_coordinate(seed=3, n_codes=3)
    losses = phi_domain_losses(margins, domain_index, weights, 2, "logistic")
    expected = [
        sum(weights[i] * np.log2(1 + np.exp(-margins[i])).sum() for i in np.flatnonzero(
            domain_index == k))
        for k in range(2)
    ]  # fmt: skip
    np.testing.assert_allclose(losses, expected, rtol=1e-12)


def test_line_search_separating_direction_is_unbounded_without_penalty():
    margins, directions, domain_index, weights = _random_coordinate(seed=4)
    positive = np.abs(directions) + 0.1
    assert penalised_line_search(margins, positive, domain_index, weights, 2) == np.inf
    penalised = penalised_line_search(margins, positive, domain_index, weights, 2, beta=0.01)
    assert 0 < penalised < np.inf
    # An ascent direction is not taken.
    assert penalised_line_search(margins, -positive, domain_index, weights, 2) == 0.0


@pytest.mark.parametrize("beta", [0.0, 0.03])
def test_lemma1_step_minimises_the_bound_and_never_raises_f(beta):
    margins, directions, domain_index, weights = _random_coordinate(seed=5)
    directions = np.clip(directions, -1, 1)
    scaled = weights[:, None] * np.exp(-margins)
    plus = np.bincount(domain_index, weights=(scaled * (1 + directions) / 2)[:, 0])
    minus = np.bincount(domain_index, weights=(scaled * (1 - directions) / 2)[:, 0])
    step, _ = lemma1_step(plus, minus, beta=beta)

    def bound(eta):
        return max(plus * np.exp(-eta) + minus * np.exp(eta)) + beta * eta

    reference = minimize_scalar(bound, bounds=(0, 10), method="bounded", options={"xatol": 1e-10})
    assert bound(step) <= reference.fun + 1e-12
    n_domains = int(domain_index.max()) + 1
    args = (margins, directions, domain_index, weights, n_domains, "exponential", None, None, beta)
    assert loop_objective(step, *args) <= loop_objective(0.0, *args)
    assert loop_objective(step, *args) <= bound(step) + 1e-12  # the bound majorises F


def test_lemma1_step_is_adaboosts_closed_form_with_one_domain():
    error = 0.2
    step, exact = lemma1_step([1 - error], [error])
    assert exact and step == pytest.approx(0.5 * math.log((1 - error) / error), rel=1e-14)
    # With the ℓ1 penalty: the positive root of ε u² + β u − (1 − ε) = 0, u = e^η.
    beta = 0.1
    step, exact = lemma1_step([1 - error], [error], beta=beta)
    root = (-beta + math.sqrt(beta**2 + 4 * error * (1 - error))) / (2 * error)
    assert exact and step == pytest.approx(math.log(root), rel=1e-12)


def test_aggregate_weights_and_constant_step():
    losses = np.array([0.3, 0.5, 0.5])
    np.testing.assert_allclose(aggregate_weights(losses), [0, 0.5, 0.5])
    soft = aggregate_weights(losses, 2.0)
    np.testing.assert_allclose(soft, np.exp(2 * losses) / np.exp(2 * losses).sum())
    assert constant_over_sqrt_t_step(4, 0.6) == pytest.approx(0.3)


def _bisection_argmin(margins, directions, domain_index, weights, loss, vertices, mu, beta):
    """Independent reference: bisection on the sign of the subgradient to adjacent floats,
    with the subgradient written out from the loops of :func:`_helpers.loop_objective`."""

    def slope(eta):
        n_domains = domain_index.max() + 1
        losses, slopes = np.zeros(n_domains), np.zeros(n_domains)
        for i in range(margins.shape[0]):
            for c in range(margins.shape[1]):
                z = -(margins[i, c] + eta * directions[i, c])
                value = math.exp(z) if loss == "exponential" else math.log2(1 + math.exp(z))
                derivative = math.exp(z) if loss == "exponential" else 1 / (
                    (1 + math.exp(-z)) * math.log(2))  # fmt: skip
                losses[domain_index[i]] += weights[i] * value
                slopes[domain_index[i]] -= weights[i] * directions[i, c] * derivative
        vertex_losses = losses if vertices is None else vertices @ losses
        vertex_slopes = slopes if vertices is None else vertices @ slopes
        if mu is None:
            return vertex_slopes[np.argmax(vertex_losses)] + beta
        p = np.exp(mu * (vertex_losses - vertex_losses.max()))
        return p @ vertex_slopes / p.sum() + beta

    lower, upper = 0.0, 1.0
    while slope(upper) < 0:
        lower, upper = upper, 2 * upper
    while lower < 0.5 * (lower + upper) < upper:
        middle = 0.5 * (lower + upper)
        lower, upper = (middle, upper) if slope(middle) < 0 else (lower, middle)
    return lower, upper


def _kinked_coordinate(seed):
    """Domain 0 starts above and falls, domain 1 rises along the coordinate: the minimum of
    the max is at their crossing, a kink of F (the usual end of an exact hard-max step)."""
    margins, directions, domain_index, weights = _random_coordinate(seed=seed)
    margins[domain_index == 0] -= 1.0
    directions[domain_index == 0] = np.abs(directions[domain_index == 0]) + 0.2
    directions[domain_index == 1] = -0.3 * np.abs(directions[domain_index == 1])
    return margins, directions, domain_index, weights


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_line_search_at_a_kink_is_the_bisection_and_fine_grid_argmin(loss, seed):
    margins, directions, domain_index, weights = _kinked_coordinate(seed)
    step = penalised_line_search(margins, directions, domain_index, weights, 2, loss)
    lower, upper = _bisection_argmin(margins, directions, domain_index, weights, loss, None,
                                     None, 0.0)  # fmt: skip
    # The loops round differently from the vectorised sums: allow a few ulps.
    assert step == pytest.approx(0.5 * (lower + upper), rel=1e-13)

    def objective(eta):
        return loop_objective(eta, margins, directions, domain_index, weights,
                              int(domain_index.max()) + 1, loss, None, None, 0.0)  # fmt: skip

    losses_below = phi_domain_losses(margins + 0.99 * step * directions, domain_index, weights,
                                     2, loss)  # fmt: skip
    losses_above = phi_domain_losses(margins + 1.01 * step * directions, domain_index, weights,
                                     2, loss)  # fmt: skip
    assert np.argmax(losses_below) == 0 and np.argmax(losses_above) == 1  # a kink
    grid = np.linspace(0, 2 * step, 2001)
    grid_values = [objective(eta) for eta in grid]
    assert objective(step) <= min(grid_values) + 1e-12
    assert step == pytest.approx(grid[int(np.argmin(grid_values))], abs=2 * (grid[1] - grid[0]))


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("mu", [None, 20.0])
@pytest.mark.parametrize("vertices", [None, [[0.7, 0.3], [0.2, 0.8]]])
def test_line_search_ends_in_the_bracket_of_an_independent_bisection(loss, mu, vertices):
    margins, directions, domain_index, weights = _random_coordinate(seed=5)
    vertices = check_mixtures(vertices, 2)
    step = penalised_line_search(margins, directions, domain_index, weights, 2, loss,
                                 vertices, mu, 0.01)  # fmt: skip
    lower, upper = _bisection_argmin(margins, directions, domain_index, weights, loss, vertices,
                                     mu, 0.01)  # fmt: skip
    # The loops round differently from the vectorised sums: allow a few ulps.
    assert step == pytest.approx(0.5 * (lower + upper), rel=1e-13)


def test_soft_max_logistic_search_is_the_bisection_argmin():
    """The one solver on the smooth soft-max of logistic losses (one aggregated piece)."""
    margins, directions, domain_index, weights = _random_coordinate(seed=6)
    arguments = (margins, directions, domain_index, weights, 2, "logistic")
    pieces = aggregate_pieces(lambda step: phi_pieces_along(step, *arguments), mu=20.0)
    step = minimise_max_newton(pieces)
    lower, upper = _bisection_argmin(margins, directions, domain_index, weights, "logistic",
                                     None, 20.0, 0.0)  # fmt: skip
    assert step == pytest.approx(0.5 * (lower + upper), rel=1e-13)
