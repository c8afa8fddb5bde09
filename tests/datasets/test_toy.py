"""The sine toy data of Sangnier et al. (2016): the generator and its closed-form quantiles."""

import numpy as np
import pytest
from scipy.stats import norm

from manytask.datasets.toy import (
    make_sine_toy,
    sine_toy_mean,
    sine_toy_quantiles,
    sine_toy_std,
)


def test_shapes_range_and_reproducibility():
    X, y = make_sine_toy(50, random_state=3)
    assert X.shape == (50, 1) and y.shape == (50,)
    assert np.all((X >= 0) & (X <= 1.5))
    X2, y2 = make_sine_toy(50, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


def test_noise_std_matches_the_papers_description():
    # §5 of the paper: std "linearly decreasing ... from 1.2 at x = 0 to 0.2 at x = 1.5".
    np.testing.assert_allclose(sine_toy_std([0.0, 0.75, 1.5]), [1.2, 0.7, 0.2])
    # a sine at 1 Hz times an envelope at 1/3 Hz of mean 1: f(x) = -sin(2πx)(1 + sin(2πx/3))
    x = np.linspace(0, 1.5, 7)
    np.testing.assert_allclose(
        sine_toy_mean(x), [-np.sin(2 * np.pi * t) * (1 + np.sin(2 * np.pi * t / 3)) for t in x]
    )


def test_true_quantiles_match_a_monte_carlo_estimate_at_fixed_inputs():
    # Draw many y at each of a few fixed x by brute force (f(x) + σ(x)·N(0, 1)), and compare the
    # empirical quantiles with the closed form. Standard error of an empirical quantile with
    # N = 40 000 draws: σ √(τ(1 − τ)) / (φ(Φ⁻¹(τ)) √N) ≤ 1.2 · 0.3 / (0.10 · 200) ≈ 0.02 at
    # τ = 0.05; tolerance 0.06 is three standard errors.
    rng = np.random.default_rng(0)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    for x in (0.1, 0.6, 1.2):
        mean = -np.sin(2 * np.pi * x) * (1 + np.sin(2 * np.pi * x / 3))
        std = 1.2 - x / 1.5
        draws = mean + std * rng.standard_normal(40_000)
        expected = sine_toy_quantiles([x], levels)[0]
        np.testing.assert_allclose(np.quantile(draws, levels), expected, atol=0.06)


def test_generated_data_are_calibrated_against_the_true_quantiles():
    # Conditional on x, P(y ≤ q_τ(x)) = τ; over N = 100 000 draws of the generator the fraction
    # has standard error √(τ(1 − τ)/N) ≤ 0.0016, tolerance 0.006, in each third of [0, 1.5].
    X, y = make_sine_toy(100_000, random_state=1)
    levels = np.array([0.1, 0.5, 0.9])
    below = y[:, None] <= sine_toy_quantiles(X, levels)
    for low in (0.0, 0.5, 1.0):
        inside = (X[:, 0] >= low) & (X[:, 0] < low + 0.5)
        np.testing.assert_allclose(below[inside].mean(axis=0), levels, atol=0.006)


def test_quantiles_are_increasing_in_the_level_and_the_median_is_the_mean():
    x = np.linspace(0, 1.5, 11)
    Q = sine_toy_quantiles(x, [0.1, 0.5, 0.9])
    assert np.all(np.diff(Q, axis=1) > 0)
    np.testing.assert_allclose(Q[:, 1], sine_toy_mean(x), atol=1e-12)
    np.testing.assert_allclose(Q[:, 2] - Q[:, 1], sine_toy_std(x) * norm.ppf(0.9))


@pytest.mark.parametrize("levels", [0.0, 1.0, [0.5, 1.2], []])
def test_bad_levels_are_rejected(levels):
    with pytest.raises(ValueError, match="quantiles"):
        sine_toy_quantiles([0.5], levels)


@pytest.mark.parametrize("n", [0, -3, 2.5, True])
def test_bad_sample_size_is_rejected(n):
    with pytest.raises(ValueError, match="n_samples"):
        make_sine_toy(n)


def test_nan_inputs_are_rejected():
    with pytest.raises(ValueError, match="x must be finite"):
        sine_toy_quantiles([np.nan], [0.5])
