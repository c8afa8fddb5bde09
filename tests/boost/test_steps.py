"""The step rules (manytask.boost.steps) and their one 1-D solver (manytask.boost.line_search),
checked against independent computations: SciPy's scalar minimiser and root finder, dense
grids, central differences and the closed forms of Lemma 1."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp

from _helpers import coordinate_losses, loop_objective
from manytask.boost.line_search import (
    CoordinatePieces,
    aggregate_pieces,
    minimise_max_newton,
    section_search,
)
from manytask.boost.objective import check_mixtures, phi_pieces_along
from manytask.boost.steps import (
    adaboost_step,
    lemma1_step,
    lemma1_terms,
    penalised_line_search,
    separating_step,
    two_exponential_step,
)


def coordinate(seed, m=120, n_domains=3, n_codes=1):
    """Margins, directions u ∈ [−1, 1] mostly positive, domains and weights c_i (F_k(0) ≈ 1)."""
    rng = np.random.default_rng(seed)
    margins = 0.3 * rng.normal(size=(m, n_codes))
    directions = np.where(rng.random((m, n_codes)) < 0.3, -1.0, 1.0) * rng.uniform(
        0.1, 1, (m, n_codes)
    )
    domain_index = rng.integers(0, n_domains, size=m)
    weights = rng.random(m)
    weights /= np.bincount(domain_index, weights=weights)[domain_index]
    return margins, directions, domain_index, weights


def scipy_argmin(objective, upper):
    """SciPy's bounded scalar minimiser on [0, upper], to its tightest tolerance."""
    return minimize_scalar(objective, bounds=(0.0, upper), method="bounded",
                           options={"xatol": 1e-12}).x  # fmt: skip


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
@pytest.mark.parametrize("mu", [None, 15.0])
@pytest.mark.parametrize("beta", [0.0, 0.02])
@pytest.mark.parametrize("mixtures", [None, [[0.6, 0.4, 0.0], [0.0, 0.3, 0.7]]])
def test_exact_line_search_is_scipys_minimiser_of_the_written_out_objective(
    loss, mu, beta, mixtures
):
    margins, directions, domain_index, weights = coordinate(seed=1)
    mixtures = check_mixtures(mixtures, 3)
    step = penalised_line_search(margins, directions, domain_index, weights, 3, loss, mixtures,
                                 mu, beta)  # fmt: skip
    arguments = (margins, directions, domain_index, weights, 3, loss, mixtures, mu, beta)

    def objective(eta):
        return loop_objective(eta, *arguments)

    assert 0.0 < step < 20.0
    reference = scipy_argmin(objective, 2.0 * step + 1.0)
    # Both are converged minimisers of the same convex function: equal values to rounding,
    # and the same point to SciPy's resolution (√ε-scale on a smooth minimum, finer at a kink).
    assert objective(step) <= objective(reference) + 1e-12
    assert step == pytest.approx(reference, abs=1e-6)
    grid = np.linspace(0.0, 2.0 * step + 1.0, 201)
    assert objective(step) <= min(objective(eta) for eta in grid) + 1e-12


def test_multiclass_exponential_search_flattens_the_codes_without_changing_the_minimiser():
    """Φ = exp reads the (m, C) codes as m·C virtual points of CoordinatePieces; the Φ-generic
    pieces give the same minimiser."""
    margins, directions, domain_index, weights = coordinate(seed=2, n_codes=3)
    weights = weights / 3
    step = penalised_line_search(margins, directions, domain_index, weights, 3, mu=10.0)
    arguments = (margins, directions, domain_index, weights, 3, "exponential")
    generic = minimise_max_newton(
        aggregate_pieces(lambda eta: phi_pieces_along(eta, *arguments), mu=10.0)
    )
    assert step == pytest.approx(generic, rel=1e-12)


@pytest.mark.parametrize("mu", [None, 5.0])
@pytest.mark.parametrize("mixtures", [None, [[0.5, 0.5, 0.0], [0.2, 0.2, 0.6]]])
def test_unit_directions_take_lemma1s_form_of_the_exact_search(mu, mixtures):
    """|u_i| = 1: F_l(η) = A_l e^{−η} + B_l e^{η} exactly, so the Lemma 1 solution (closed form
    where it applies) is the exact line search on the written-out objective."""
    margins, directions, domain_index, weights = coordinate(seed=3)
    directions = np.sign(directions)
    mixtures = check_mixtures(mixtures, 3)
    step = penalised_line_search(margins, directions, domain_index, weights, 3,
                                 mixtures=mixtures, mu=mu)  # fmt: skip

    def objective(eta):
        return loop_objective(eta, margins, directions, domain_index, weights, 3,
                               "exponential", mixtures, mu)  # fmt: skip

    reference = scipy_argmin(objective, 5.0)
    assert objective(step) <= objective(reference) + 1e-12
    assert step == pytest.approx(reference, abs=1e-6)


def test_lemma1_step_at_a_crossing_is_the_root_of_the_gap():
    """Neither term attains the max at its own minimiser (½ log 20 and ½ log(5/3)), so the
    minimum of the max is where A_0e^{−η} + B_0e^{η} = A_1e^{−η} + B_1e^{η}."""
    plus, minus = np.array([1.0, 0.5]), np.array([0.05, 0.3])
    step, closed_form = lemma1_step(plus, minus)
    assert not closed_form
    root = brentq(lambda eta: (plus[0] - plus[1]) * math.exp(-eta) + (minus[0] - minus[1])
                  * math.exp(eta), 0.0, 2.0, xtol=1e-15, rtol=1e-15)  # fmt: skip
    assert step == pytest.approx(root, rel=1e-12)


@pytest.mark.parametrize("beta", [0.0, 0.1])
def test_adaboost_step_is_the_minimiser_of_its_one_source_bound(beta):
    error, mass = 0.2, 0.7
    step = adaboost_step(error, beta, mass)
    if beta == 0:
        assert step == pytest.approx(0.5 * math.log((1 - error) / error), rel=1e-14)
    reference = scipy_argmin(
        lambda eta: mass * ((1 - error) * math.exp(-eta) + error * math.exp(eta)) + beta * eta,
        5.0,
    )
    assert step == pytest.approx(reference, abs=1e-7)
    assert adaboost_step(0.6) == 0.0  # ε ≥ ½: no step helps
    assert two_exponential_step(1.0, 0.0) == np.inf  # ε = 0: the separating case


def test_lemma1_terms_are_the_cross_errors_of_lemma1():
    margins, directions, domain_index, weights = coordinate(seed=4)
    directions = np.sign(directions)
    scaled = weights[:, None] * np.exp(-margins)
    plus, minus = lemma1_terms(scaled, directions, domain_index, 3)
    for l in range(3):
        on = domain_index == l
        wrong = scaled[on, 0][directions[on, 0] < 0].sum()
        assert minus[l] == pytest.approx(wrong, rel=1e-13)  # (Z_l/m_l) ε_l
        assert plus[l] + minus[l] == pytest.approx(scaled[on].sum(), rel=1e-13)  # Z_l/m_l


@pytest.mark.parametrize("mu", [None, 8.0])
@pytest.mark.parametrize("mixtures", [None, [[0.7, 0.3, 0.0], [0.1, 0.1, 0.8]]])
def test_aggregated_pieces_are_the_derivatives_of_their_values(mu, mixtures):
    margins, directions, domain_index, weights = coordinate(seed=5)
    mixtures = check_mixtures(mixtures, 3)
    scaled, u = weights * np.exp(-margins[:, 0]), directions[:, 0]
    pieces = aggregate_pieces(CoordinatePieces(scaled, u, domain_index, 3), mixtures, mu, 0.03)
    h, eta = 1e-5, 0.4
    values, slopes, curvatures = pieces(eta)
    above, below = pieces(eta + h), pieces(eta - h)
    np.testing.assert_allclose(slopes, (above[0] - below[0]) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(curvatures, (above[1] - below[1]) / (2 * h), rtol=1e-6)


def test_kink_search_matches_a_dense_grid_refined_by_brentq():
    """Two domains whose losses cross while one falls and the other rises: the hard max has
    its minimum at the crossing, found by a root finder on the gap."""
    rng = np.random.default_rng(6)
    m = 200
    domain_index = np.repeat([0, 1], m // 2)
    scaled = rng.random(m) / 50
    u = np.where(domain_index == 0, rng.uniform(0.2, 1.0, m), -rng.uniform(0.1, 0.5, m))
    step = minimise_max_newton(CoordinatePieces(scaled, u, domain_index, 2))

    def gap(eta):
        losses = coordinate_losses(eta, scaled, u, domain_index, 2)
        return losses[0] - losses[1]

    grid = np.linspace(0.0, 10.0, 1001)
    signs = np.sign([gap(eta) for eta in grid])
    crossing = int(np.flatnonzero(signs[:-1] != signs[1:])[0])
    root = brentq(gap, grid[crossing], grid[crossing + 1], xtol=1e-15, rtol=1e-15)
    assert step == pytest.approx(root, rel=1e-12)


@pytest.mark.parametrize("mu", [None, 10.0])
def test_the_federated_batched_search_finds_the_same_minimiser(mu):
    """section_search (batched (F_l, F_l') only) and minimise_max_newton on one coordinate."""
    margins, directions, domain_index, weights = coordinate(seed=7)
    scaled, u = weights * np.exp(-margins[:, 0]), directions[:, 0]

    def evaluate(steps):
        rows = [coordinate_losses(eta, scaled, u, domain_index, 3, with_slopes=True)
                for eta in steps]  # fmt: skip
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])

    aggregate = None
    if mu is not None:

        def aggregate(losses, slopes):
            weights_ = np.exp(mu * (losses - losses.max()))
            weights_ /= weights_.sum()
            return logsumexp(mu * losses) / mu, weights_ @ slopes

    batched, _ = section_search(evaluate, aggregate=aggregate)
    newton = minimise_max_newton(
        aggregate_pieces(CoordinatePieces(scaled, u, domain_index, 3), mu=mu)
    )
    assert batched > 0
    assert batched == pytest.approx(newton, rel=1e-9)


def test_separating_step_gives_every_margin_the_sign_of_its_direction():
    """η = (1 + ‖α‖₁)/min Q: each margin y f = Σ α_t Q_t h_t + η Q y h with |previous| ≤ ‖α‖₁."""
    rng = np.random.default_rng(8)
    alpha = rng.random(5)
    q = rng.uniform(0.05, 1.0, 40)  # Q(k|x_i) of the separating direction
    previous = rng.uniform(-1, 1, (40, 5)) @ alpha  # |Σ_t α_t Q_t h_t| ≤ ‖α‖₁
    step = separating_step(alpha, q.min())
    assert np.all(previous + step * q > 0)
