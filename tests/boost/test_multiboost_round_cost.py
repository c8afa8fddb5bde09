"""The exact line search and the round's losses give the same numbers as the plain formulas:
the Newton line search (the minimiser to rounding, checked against an independent bisection)
and F_k, D_t of eq. (4) and Figure 1. Its cost is measured in ``benchmarks/bench_boost.py``."""

import math
import warnings

import numpy as np
import pytest

from _helpers import coordinate_losses
from manytask.boost import kernels
from manytask.boost.line_search import CoordinatePieces, domain_layout, minimise_max_newton
from manytask.boost.objective import phi, phi_derivative, phi_domain_losses


def line_search(scaled, u, domain_index, n_domains, layout=None):
    """(η, F there) by minimise_max_newton on the hard max of the F_l (Figure 1, line 11)."""
    pieces = CoordinatePieces(scaled, u, domain_index, n_domains, layout)
    step = minimise_max_newton(pieces)
    if not np.isfinite(step):
        return step, -np.inf
    return float(step), float(pieces.evaluated[step][0].max())


def coordinate_problem(seed, m=300, n_domains=3, scale=1.0):
    """a_i > 0, u_i = ±Q-like values in [−1, 1], points of the domains interleaved."""
    rng = np.random.default_rng(seed)
    domain_index = rng.integers(0, n_domains, size=m)
    scaled = rng.random(m) * np.exp(rng.normal(size=m))
    u = scale * np.where(rng.random(m) < 0.35, -1.0, 1.0) * rng.uniform(0.05, 1.0, m)
    return scaled, u, domain_index


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("scale", [1.0, 400.0])
def test_newton_line_search_is_consistent(seed, scale):
    """The step does not depend on the precomputed layout and the value is the plain F
    there; the large ``scale`` makes e^{−ηu} overflow inside the bracket. (Exactness: against
    bisection in the next tests; evaluation counts: ``bench_boost --line-search-evaluations``.)"""
    scaled, u, domain_index = coordinate_problem(seed, scale=scale)
    step, value = line_search(scaled, u, domain_index, 3)
    assert line_search(scaled, u, domain_index, 3, domain_layout(domain_index, 3)) == (
        step,
        value,
    )
    assert value == coordinate_losses(step, scaled, u, domain_index, 3).max()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_coordinate_pieces_are_the_plain_losses_and_derivatives(backend):
    if backend == "numba" and not kernels.numba_available():
        pytest.skip("numba is not installed (pip install manytask[fast])")
    scaled, u, domain_index = coordinate_problem(11)
    with kernels.use_backend(backend):
        pieces = CoordinatePieces(scaled, u, domain_index, 3)(0.7)
    losses, slopes = coordinate_losses(0.7, scaled, u, domain_index, 3, with_slopes=True)
    assert np.array_equal(pieces[0], losses)  # the same sums in the same order
    assert np.array_equal(pieces[1], slopes)
    curvatures = [sum(scaled[i] * np.exp(-0.7 * u[i]) * u[i] ** 2 for i in
                      np.flatnonzero(domain_index == l)) for l in range(3)]  # fmt: skip
    np.testing.assert_allclose(pieces[2], curvatures, rtol=1e-12)


def _bisected_minimiser(scaled, u, domain_index, upper=64.0):
    """argmin max_l F_l along the coordinate by plain bisection on the sign of the right
    subgradient (the slope of a maximiser; F is convex), down to adjacent floats."""

    n_domains = int(domain_index.max()) + 1

    def increasing(step):
        terms = scaled * np.exp(-step * u)
        losses = np.bincount(domain_index, weights=terms, minlength=n_domains)
        slopes = -np.bincount(domain_index, weights=terms * u, minlength=n_domains)
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
    """The step matches an independent bisection to 1e-12, at smooth minima and kinks alike
    (bounded Brent on the values, the former search, was off by up to 1.3e-8 here)."""
    scaled, u, domain_index = coordinate_problem(seed)
    step, _ = line_search(scaled, u, domain_index, 3)
    reference = _bisected_minimiser(scaled, u, domain_index)
    assert abs(step - reference) <= 1e-12 * max(1.0, reference)


def kink_problem(seed, m=40_000):
    """Two large domains, F_1(0) = 0.9 < F_0(0) = 1, F_0 falling and F_1 rising along the
    coordinate: the minimum of the max is their crossing, where the computed gap F_0 − F_1
    is rounding noise over a band of η much wider than 4 ulps."""
    rng = np.random.default_rng(seed)
    domain_index = rng.integers(0, 2, size=m)
    scaled = rng.random(m)
    scaled /= np.bincount(domain_index, weights=scaled)[domain_index]
    scaled[domain_index == 1] *= 0.9
    u = rng.uniform(-1.0, 1.0, size=m) + np.where(domain_index == 0, 0.4, -0.2)
    return scaled, u, domain_index


@pytest.mark.parametrize("seed", range(6))
def test_line_search_stops_at_a_kink_within_its_rounding(seed):
    """The step is the bisected crossing to 1e-12."""
    scaled, u, domain_index = kink_problem(seed)
    pieces = CoordinatePieces(scaled, u, domain_index, 2)
    step = minimise_max_newton(pieces)
    reference = _bisected_minimiser(scaled, u, domain_index)
    assert abs(step - reference) <= 1e-12 * max(1.0, reference)


def test_line_search_passes_a_crossing_that_is_not_the_minimum():
    """F_0 = ½e^{−η} + 0.45e^{η} and F_1 = 0.96e^{−η} cross at η = ½ log(0.46/0.45) while
    F_0 still falls: the minimum of the max is F_0's own, η = ½ log(0.5/0.45)."""
    scaled, u = np.array([0.5, 0.45, 0.96]), np.array([1.0, -1.0, 1.0])
    step, _ = line_search(scaled, u, np.array([0, 0, 1]), 2)
    assert step == pytest.approx(0.5 * np.log(0.5 / 0.45), rel=1e-12)


def test_line_search_on_huge_losses_finds_the_kink_without_warnings():
    """F_0 = A e^{−η}, F_1 = ½A e^{η} with A = 1e200 cross at η = ½ log 2; squares of their
    slopes overflow, which must neither warn nor derail the search."""
    scale = 1e200

    def pieces(step):
        falling, rising = scale * np.exp(-step), 0.5 * scale * np.exp(step)
        return np.array([[falling, rising], [-falling, rising], [falling, rising]])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step = minimise_max_newton(pieces)
    assert step == pytest.approx(0.5 * np.log(2.0), rel=1e-12)


def test_a_separating_direction_drives_the_newton_search_to_underflow():
    scaled, u, domain_index = coordinate_problem(3)
    step, value = line_search(scaled, np.abs(u), domain_index, 3)
    # F(0) is about 1 and falls without bound: the search runs e^{−ηu} down to underflow.
    assert not np.isfinite(step) or value <= 1e-50


@pytest.mark.parametrize("loss", ["exponential", "logistic"])
def test_domain_losses_and_distributions_match_a_plain_loop(loss):
    """F_k = Σ_{i∈S_k} c_i Φ(−y_i f(x_i)) (eq. 4) and the weights c_i Φ'(·) of D_t (Figure 1,
    line 9) against a loop over the points; for Φ = exp, Z_{t,k}/m_k = F_k."""
    rng = np.random.default_rng(2)
    m = 200
    margins, domain_index = rng.normal(size=m), rng.integers(0, 3, size=m)
    point_weights = 1.0 / np.bincount(domain_index)[domain_index]
    if loss == "exponential":
        terms = [c * math.exp(-v) for c, v in zip(point_weights, margins)]
        slopes = terms
    else:
        terms = [c * math.log1p(math.exp(-v)) / math.log(2) for c, v in zip(point_weights, margins)]
        slopes = [c / (1 + math.exp(v)) / math.log(2) for c, v in zip(point_weights, margins)]
    expected = [sum(t for t, k in zip(terms, domain_index) if k == l) for l in range(3)]
    losses = phi_domain_losses(margins, domain_index, point_weights, 3, loss)
    np.testing.assert_allclose(losses, expected, rtol=1e-13)
    np.testing.assert_allclose(point_weights * phi(-margins, loss), terms, rtol=1e-13)
    gradient_weights = point_weights * phi_derivative(-margins, loss)
    np.testing.assert_allclose(gradient_weights, slopes, rtol=1e-13)
    if loss == "exponential":
        normalisers = np.bincount(domain_index, weights=gradient_weights, minlength=3)
        np.testing.assert_allclose(normalisers, losses, rtol=1e-13)
