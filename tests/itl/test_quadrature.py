import warnings

import numpy as np
import pytest
from numpy.polynomial import polynomial
from scipy.stats import qmc

from manytask.itl import (
    Quadrature,
    custom,
    gauss_legendre,
    gauss_lobatto,
    sobol_anchors,
    uniform_grid,
)

RULES = [sobol_anchors, gauss_legendre, uniform_grid]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("m", [1, 2, 7, 16, 100])
def test_weights_are_non_negative_and_sum_to_one(rule, m):
    anchors, weights = rule(m, interval=(-1.0, 3.0))
    assert anchors.shape == weights.shape == (m,)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-14)


@pytest.mark.parametrize("rule", RULES)
def test_anchors_lie_strictly_inside_the_interval(rule):
    anchors, _ = rule(50, interval=(0.2, 0.7))
    assert np.all((anchors > 0.2) & (anchors < 0.7))


@pytest.mark.parametrize("m", [1, 3, 8, 31, 100])
def test_sobol_equals_unscrambled_sequence_without_origin(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scipy's power-of-two balance warning
        reference = qmc.Sobol(d=1, scramble=False).random(m + 1)[:, 0]
    anchors, _ = sobol_anchors(m)
    assert reference[0] == 0.0
    np.testing.assert_array_equal(anchors, reference[1:])
    assert np.all(anchors != 0.0)


def test_sobol_is_mapped_affinely_to_the_interval():
    unit, _ = sobol_anchors(10)
    mapped, _ = sobol_anchors(10, interval=(-1.0, 1.0))
    np.testing.assert_allclose(mapped, -1.0 + 2.0 * unit)


def test_sobol_does_not_warn_for_non_power_of_two():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sobol_anchors(10)


@pytest.mark.parametrize("m", [1, 2, 5, 10])
@pytest.mark.parametrize("interval", [(0.0, 1.0), (-2.0, 3.5)])
def test_gauss_legendre_is_exact_for_degree_2m_minus_1(m, interval):
    lo, hi = interval
    coefficients = np.random.default_rng(m).normal(size=2 * m)  # degree 2m − 1
    anchors, weights = gauss_legendre(m, interval)
    antiderivative = polynomial.polyint(coefficients)
    exact_mean = (
        polynomial.polyval(hi, antiderivative) - polynomial.polyval(lo, antiderivative)
    ) / (hi - lo)
    np.testing.assert_allclose(
        weights @ polynomial.polyval(anchors, coefficients), exact_mean, rtol=1e-10, atol=1e-12
    )


def test_uniform_grid_is_the_midpoint_rule():
    anchors, weights = uniform_grid(4, interval=(1.0, 3.0))
    np.testing.assert_allclose(anchors, [1.25, 1.75, 2.25, 2.75])
    np.testing.assert_allclose(weights, 0.25)


def test_custom_normalises_weights_and_unpacks():
    rule = custom([0.2, 0.4, 0.6], [2.0, 0.0, 6.0])
    assert isinstance(rule, Quadrature)
    anchors, weights = rule
    np.testing.assert_allclose(anchors, [0.2, 0.4, 0.6])
    np.testing.assert_allclose(weights, [0.25, 0.0, 0.75])


def test_custom_without_weights_uses_equal_weights():
    np.testing.assert_allclose(custom([0.1, 0.9]).weights, [0.5, 0.5])


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("m", [0, -3, 2.5, True])
def test_bad_m_is_rejected(rule, m):
    with pytest.raises(ValueError, match="m must be an integer"):
        rule(m)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(
    "interval, message",
    [
        ((1.0, 1.0), "lo < hi"),
        ((2.0, 1.0), "lo < hi"),
        ((0.0, np.nan), "finite"),
        ((0.0, 1.0, 2.0), "pair"),
    ],
)
def test_bad_interval_is_rejected(rule, interval, message):
    with pytest.raises(ValueError, match=message):
        rule(4, interval=interval)


@pytest.mark.parametrize(
    "anchors, weights, message",
    [
        ([0.1, np.nan], [1.0, 1.0], "anchors must be finite"),
        ([0.1, 0.2], [1.0, np.inf], "weights must be finite"),
        ([0.1, 0.2], [1.0], "same length"),
        ([0.1, 0.2], [1.0, -0.5], "weights must be >= 0, found -0.5"),
        ([0.1, 0.2], [0.0, 0.0], "positive sum"),
        ([[0.1, 0.2]], [1.0, 1.0], "1-dimensional"),
        ([], [], "empty"),
    ],
)
def test_bad_custom_rule_is_rejected(anchors, weights, message):
    with pytest.raises(ValueError, match=message):
        custom(anchors, weights)


@pytest.mark.parametrize("m", [2, 3, 6, 20])
def test_gauss_lobatto_has_both_ends_and_is_exact_for_degree_2m_minus_3(m):
    lo, hi = 0.05, 1.0
    anchors, weights = gauss_lobatto(m, (lo, hi))
    assert anchors[0] == pytest.approx(lo) and anchors[-1] == pytest.approx(hi)
    assert np.all(np.diff(anchors) > 0) and np.all(weights > 0)
    assert weights.sum() == pytest.approx(1.0)
    for degree in range(2 * m - 2):  # mean of θ^k over [lo, hi], exactly
        exact = (hi ** (degree + 1) - lo ** (degree + 1)) / ((degree + 1) * (hi - lo))
        assert weights @ anchors**degree == pytest.approx(exact, rel=1e-12)


def test_gauss_lobatto_needs_two_nodes():
    with pytest.raises(ValueError, match="m must be >= 2"):
        gauss_lobatto(1)
