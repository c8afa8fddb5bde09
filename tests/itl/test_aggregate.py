"""∞-QR's default aggregate (``aggregate=True``): the stacking weights against a brute-force
search over the simplex, the fitted average against a weighted sum of plain fits of its
members, the members' looser stop against a tight solve, and the earlier single-setting
default one flag away."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

from manytask.itl import InfiniteQuantileRegressor, quantile
from manytask.itl.losses import pinball
from manytask.itl.selection import stacking_weights

TIGHT = 1e-12
CONVERGED = {"tol": TIGHT, "max_iter": 100000}
#: Bound on the objective gap L-BFGS-B leaves at ftol = TIGHT on these problems (as in
#: test_selection.py).
GAP = 1e-7


def _data(n=36, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 1))
    return X, np.sin(3 * X[:, 0]) + (0.2 + 0.3 * np.abs(X[:, 0])) * rng.normal(size=n)


def _risk(w, values, y, anchors, weights):
    average = sum(wk * v for wk, v in zip(w, values))
    return float(np.mean(pinball(y[:, None], average, anchors[None, :]), axis=0) @ weights)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stacking_weights_minimise_the_risk_over_the_simplex(seed):
    rng = np.random.default_rng(seed)
    n, anchors = 30, np.array([0.1, 0.5, 0.9])
    weights = np.array([0.3, 0.4, 0.3])
    y = rng.normal(size=n)
    truth = y[:, None] + 0.3 * (anchors[None, :] - 0.5)
    values = [truth + scale * rng.normal(size=truth.shape) + shift
              for scale, shift in [(0.3, 0.1), (0.5, -0.2), (0.8, 0.0)]]  # fmt: skip
    w = stacking_weights(values, y, anchors, weights)
    assert np.all(w >= 0) and w.sum() == pytest.approx(1.0, abs=1e-12)
    # brute force: a grid of step h on the simplex. The risk is Lipschitz in w with constant
    # L = max_s mean_i Σ_j weights_j |values_s[i, j]| (|∂ℓ_θ/∂r| ≤ 1), and every point of the
    # simplex is within h (in the l1 norm) of a grid point, so the least grid risk is at most
    # L h above the minimum; the LP's risk is at most the minimum (HiGHS' tolerance 1e-7).
    step = 1 / 200
    grid = [
        (a * step, b * step, 1 - (a + b) * step)
        for a, b in itertools.product(range(201), repeat=2)
        if a + b <= 200
    ]
    risks = [_risk(g, values, y, anchors, weights) for g in grid]
    lipschitz = max(float(np.mean(np.abs(v), axis=0) @ weights) for v in values)
    found = _risk(w, values, y, anchors, weights)
    assert found <= min(risks) + 1e-6
    assert found >= min(risks) - lipschitz * step


def test_stacking_weights_put_all_the_mass_on_a_setting_that_is_exact():
    y = np.linspace(-1, 1, 20)
    anchors, weights = np.array([0.25, 0.75]), np.array([0.5, 0.5])
    exact = np.repeat(y[:, None], 2, axis=1)
    w = stacking_weights([exact + 0.5, exact, exact + 0.3], y, anchors, weights)
    assert_allclose(w, [0.0, 1.0, 0.0], atol=1e-6)


def _plain_fit(X, lambda_, bandwidth):
    return InfiniteQuantileRegressor(
        n_anchors=8, lambda_=lambda_, input_bandwidth=bandwidth, random_state=0,
        rearrange=False, **CONVERGED,
    )  # fmt: skip


def test_default_is_the_weighted_sum_of_plain_fits_of_its_members(monkeypatch):
    # every member refitted to ftol = TIGHT (by default at least MEMBER_TOL: the gap below
    # would be unbounded, test_members_stop_at_the_selection_tolerance)
    monkeypatch.setattr(quantile, "MEMBER_TOL", TIGHT)
    X, y = _data(n=40, seed=1)
    model = InfiniteQuantileRegressor(n_anchors=8, random_state=0, **CONVERGED).fit(X, y)
    members = model.members_
    shares = np.array([member[0] for member in members])
    assert shares.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(shares >= quantile.MIN_MEMBER_WEIGHT) and np.all(np.diff(shares) <= 0)
    model.set_params(rearrange=False)
    levels = [0.1, 0.5, 0.9]
    expected, atol = 0.0, 0.0
    for weight, lambda_, bandwidth, _, _ in members:
        plain = _plain_fit(X, lambda_, bandwidth).fit(X, y)
        expected = expected + weight * plain.predict(X, levels)
        # each member's refit starts from the fold fits, plain's from zero: ‖Δh‖∞ ≤
        # 2√(2 GAP/λ) × the scale of y (λ-strong convexity, test_selection.py)
        atol += weight * 2 * np.sqrt(2 * GAP / lambda_) * model.y_scale_
    assert_allclose(model.predict(X, levels), expected, rtol=0, atol=atol)
    # rearranged: non-decreasing in the level at every input
    model.set_params(rearrange=True)
    grid = np.linspace(0.01, 0.99, 40)
    assert np.all(np.diff(model.predict(X, grid), axis=1) >= 0)


def test_members_stop_at_the_selection_tolerance():
    # By default the members are refitted to ftol = max(tol, MEMBER_TOL): the heaviest one's
    # objective (``objective_``, it is fitted last) is above a tight solve of its setting by
    # less than the standard error ŝ/√n of the empirical risk, ŝ the sd of the per-point
    # integrated pinball risk: optimisation error below estimation error, as in
    # test_convergence.py's refit at a small chosen λ.
    X, y = _data(n=40, seed=1)
    model = InfiniteQuantileRegressor(n_anchors=8, random_state=0, verbose=0).fit(X, y)
    assert quantile.MEMBER_TOL > model.tol and len(model.members_) > 1
    _, lambda_, bandwidth, _, _ = model.members_[0]
    tight = _plain_fit(X, lambda_, bandwidth).fit(X, y)
    levels = tight.anchors_[None, :]
    residuals = (y[:, None] - tight.predict(X, tight.anchors_)) / tight.y_scale_
    risks = np.maximum(levels * residuals, (levels - 1) * residuals) @ tight.weights_
    standard_error = np.std(risks, ddof=1) / np.sqrt(len(y))
    assert tight.objective_ - GAP <= model.objective_ < tight.objective_ + standard_error


def test_aggregate_false_is_one_setting_and_refit_drops_the_members():
    X, y = _data(n=40, seed=1)
    model = InfiniteQuantileRegressor(n_anchors=8, random_state=0).fit(X, y)
    assert hasattr(model, "members_")
    model.set_params(aggregate=False).fit(X, y)
    assert not hasattr(model, "members_")
    assert model.cv_risks_.shape[0] > 0
    fixed = InfiniteQuantileRegressor(n_anchors=8, lambda_=1e-3, random_state=0).fit(X, y)
    assert not hasattr(fixed, "members_")


@pytest.mark.parametrize("aggregate", ["yes", 1, None])
def test_bad_aggregate_is_a_value_error(aggregate):
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="aggregate"):
        InfiniteQuantileRegressor(aggregate=aggregate).fit(X, y)
