"""∞-QR's default predict, the monotone rearrangement (Chernozhukov, Fernández-Val & Galichon
2010): non-decreasing in the level for any input and any levels (property-based), and never a
larger pinball loss than the paper's model h summed over the rearrangement grid, at every y
(the rearrangement inequality), checked against the raw model evaluated independently."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone

from manytask.itl import InfiniteQuantileRegressor, crossing_loss, pinball
from manytask.itl.quantile import REARRANGEMENT_GRID


def _crossing_fit():
    """A fit whose raw curves cross: 25 points in 8-D, t₃ noise, no non-crossing penalty."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 8))
    y = X[:, 0] + (0.5 + np.abs(X[:, 1])) * rng.standard_t(3, size=25)
    raw = InfiniteQuantileRegressor(lambda_=1e-3, lambda_nc=0.0, rearrange=False, random_state=0)
    raw.fit(X, y)
    return raw, clone(raw).set_params(rearrange=True).fit(X, y), X


@pytest.fixture(scope="module")
def fits():
    raw, rearranged, X = _crossing_fit()
    X_test = np.random.default_rng(1).normal(size=(200, 8))
    levels = np.linspace(0.01, 0.99, 99)
    assert crossing_loss(raw.predict(X_test, levels)) > 0  # there is something to remove
    return raw, rearranged, X_test


def test_rearrange_is_the_default():
    assert InfiniteQuantileRegressor().rearrange is True


_FITS = _crossing_fit()  # hypothesis draws many examples: fit once, outside the examples

levels_strategy = st.lists(
    st.floats(min_value=1e-9, max_value=1 - 1e-9, allow_nan=False), min_size=1, max_size=40
)
inputs_strategy = arrays(
    np.float64,
    st.tuples(st.integers(1, 6), st.just(8)),
    elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=60, deadline=None)
@given(levels=levels_strategy, X=inputs_strategy)
def test_prediction_is_non_decreasing_in_the_level_for_any_input_and_levels(levels, X):
    _, model, _ = _FITS
    levels = np.asarray(levels)
    Q = model.predict(X, levels)
    order = np.argsort(levels, kind="stable")
    assert np.all(np.isfinite(Q))
    assert np.all(np.diff(Q[:, order], axis=1) >= 0)
    # the same level asked twice gets the same value
    first = {level: Q[:, i] for i, level in reversed(list(enumerate(levels)))}
    for i, level in enumerate(levels):
        assert np.array_equal(Q[:, i], first[level])


def test_rearrangement_never_increases_the_pinball_loss_summed_over_its_grid(fits):
    # Σ_g ρ_τg(y − q_g) = Σ_g (y − q_g) τ_g − Σ_g (y − q_g) 1{y < q_g}: the second sum does
    # not depend on the order of the q_g, and Σ_g q_g τ_g is largest when the q_g are sorted
    # as the τ_g (rearrangement inequality), so sorting h(x)(τ_g) lowers the sum at every y.
    raw, rearranged, X_test = fits
    lowest, highest = raw.anchors_.min(), raw.anchors_.max()
    grid = lowest + (np.arange(REARRANGEMENT_GRID) + 0.5) / REARRANGEMENT_GRID * (highest - lowest)
    curves = raw.predict(X_test, grid)
    sorted_curves = rearranged.predict(X_test, grid)
    # independently: the sorted raw curve is what the default predicts on its grid
    np.testing.assert_allclose(sorted_curves, np.sort(curves, axis=1), rtol=1e-12, atol=1e-12)
    rng = np.random.default_rng(2)
    spread = curves.max() - curves.min()
    y = rng.uniform(curves.min() - spread, curves.max() + spread, size=len(X_test))
    before = pinball(y[:, None], curves, grid[None, :]).sum(axis=1)
    after = pinball(y[:, None], sorted_curves, grid[None, :]).sum(axis=1)
    assert np.all(after <= before + 1e-9 * before.max())
    crossed = np.any(np.diff(curves, axis=1) < 0, axis=1)
    assert np.any(after[crossed] < before[crossed] - 1e-9 * before.max())  # and it does lower it
