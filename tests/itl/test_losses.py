import numpy as np
import pytest
from sklearn.metrics import mean_pinball_loss

from manytask.itl import (
    cost_sensitive_hinge,
    cost_sensitive_hinge_gradient,
    crossing_loss,
    one_class,
    one_class_gradient,
    pinball,
    pinball_gradient,
    pinball_loss,
    smooth_abs,
    smooth_abs_gradient,
    smooth_positive_part,
    smooth_positive_part_gradient,
)

STEP = 1e-6
KAPPAS = [0.05, 0.5, 2.0]


def central_difference(function, x):
    return (function(x + STEP) - function(x - STEP)) / (2 * STEP)


def random_problem(seed, n=400):
    """Predictions h, offsets t, labels y ∈ {±1}, real targets and levels θ for each family."""
    rng = np.random.default_rng(seed)
    return {
        "h": rng.uniform(-3, 3, n),
        "t": rng.uniform(-2, 2, n),
        "target": rng.uniform(-3, 3, n),
        "label": rng.choice([-1.0, 1.0], n),
        "quantile": rng.uniform(0, 1, n),
        "cost": rng.uniform(-1, 1, n),
        "level": rng.uniform(0.05, 1, n),
    }


# Each loss as (value of h, gradient w.r.t. h, the argument of |·| whose zero is the kink,
# the h at which that argument equals a given shift).
def pinball_case(data, kappa):
    y, theta = data["target"], data["quantile"]
    return (
        lambda h: pinball(y, h, theta, kappa),
        lambda h: pinball_gradient(y, h, theta, kappa),
        lambda h: y - h,
        lambda shift: y - shift,
    )


def hinge_case(data, kappa):
    y, theta = data["label"], data["cost"]
    return (
        lambda h: cost_sensitive_hinge(y, h, theta, kappa),
        lambda h: cost_sensitive_hinge_gradient(y, h, theta, kappa),
        lambda h: 1 - y * h,
        lambda shift: (1 - shift) * y,
    )


def one_class_case(data, kappa):
    t, theta = data["t"], data["level"]
    return (
        lambda h: one_class(h, t, theta, kappa),
        lambda h: one_class_gradient(h, t, theta, kappa)[0],
        lambda h: t - h,
        lambda shift: t - shift,
    )


CASES = [pinball_case, hinge_case, one_class_case]


def test_smooth_abs_gradient_matches_finite_differences_everywhere():
    p = np.linspace(-3, 3, 601)
    for kappa in KAPPAS:
        numeric = central_difference(lambda q, k=kappa: smooth_abs(q, k), p)
        np.testing.assert_allclose(smooth_abs_gradient(p, kappa), numeric, atol=STEP / kappa)


def test_smooth_abs_is_within_half_kappa_below_abs_and_attains_it():
    p = np.linspace(-5, 5, 2001)
    for kappa in [1.0, 0.1, 1e-3]:
        gap = np.abs(p) - smooth_abs(p, kappa)
        assert np.all(gap >= 0)
        assert np.max(gap) <= kappa / 2 + 1e-15
        np.testing.assert_allclose(gap[np.abs(p) >= kappa], kappa / 2, rtol=1e-9)


def test_smooth_abs_is_continuously_differentiable_at_the_switch():
    kappa = 0.3
    np.testing.assert_allclose(smooth_abs([kappa, -kappa], kappa), [kappa / 2] * 2)
    np.testing.assert_allclose(
        smooth_abs_gradient([kappa * (1 - 1e-12), kappa * (1 + 1e-12)], kappa), [1, 1]
    )


def test_smooth_positive_part_is_exact_at_zero_kappa():
    p = np.linspace(-2, 2, 41)
    np.testing.assert_array_equal(smooth_positive_part(p), np.maximum(p, 0))
    np.testing.assert_array_equal(smooth_positive_part_gradient(p[p != 0]), p[p != 0] > 0)


@pytest.mark.parametrize("case", CASES)
def test_exact_gradient_matches_finite_differences_away_from_kinks(case):
    data = random_problem(0)
    _, _, kink_argument, _ = case(data, 0.0)
    away = np.abs(kink_argument(data["h"])) > 1e-3
    assert away.sum() > 300
    data = {key: array[away] for key, array in data.items()}
    value, gradient, _, _ = case(data, 0.0)
    np.testing.assert_allclose(gradient(data["h"]), central_difference(value, data["h"]), atol=1e-6)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kappa", KAPPAS)
def test_smoothed_gradient_matches_finite_differences_everywhere(case, kappa):
    data = random_problem(1)
    value, gradient, kink_argument, place = case(data, kappa)
    # Where ψ_κ'' jumps (|p| = κ) a central difference is off by at most STEP/(4κθ) here.
    tolerance = STEP / kappa * 10
    points = [data["h"]] + [place(shift) for shift in [0.0, kappa, -kappa, 0.3 * kappa]]
    for h in points:
        np.testing.assert_allclose(gradient(h), central_difference(value, h), atol=tolerance)
    np.testing.assert_allclose(kink_argument(points[2]), kappa, atol=1e-12)


@pytest.mark.parametrize("kappa", [0.0, *KAPPAS])
def test_one_class_gradient_in_t_matches_finite_differences(kappa):
    data = random_problem(2)
    keep = np.abs(data["t"] - data["h"]) > 1e-3 if kappa == 0 else slice(None)
    h, t, theta = data["h"][keep], data["t"][keep], data["level"][keep]
    numeric = central_difference(lambda s: one_class(h, s, theta, kappa), t)
    analytic = one_class_gradient(h, t, theta, kappa)[1]
    np.testing.assert_allclose(analytic, numeric, atol=1e-5 if kappa == 0 else STEP / kappa * 10)


def brute_force_losses(data):
    """Eq. (3), eq. (4) and the one-class loss written straight from the paper, one by one."""
    pin, hinge, level = [], [], []
    for i in range(data["h"].size):
        h, r = data["h"][i], data["target"][i] - data["h"][i]
        theta = data["quantile"][i]
        pin.append(abs(theta - (1.0 if r < 0 else 0.0)) * abs(r))  # eq. (3) as printed
        y, gamma = data["label"][i], data["cost"][i]
        weight = abs(0.5 * (gamma + 1) - (1.0 if y == -1 else 0.0))
        hinge.append(weight * max(1 - y * h, 0.0))
        level.append(-data["t"][i] + max(data["t"][i] - h, 0.0) / data["level"][i])
    return np.array(pin), np.array(hinge), np.array(level)


def test_exact_losses_match_the_paper_formulas():
    data = random_problem(3)
    pin, hinge, level = brute_force_losses(data)
    h = data["h"]
    np.testing.assert_allclose(pinball(data["target"], h, data["quantile"]), pin, atol=1e-14)
    np.testing.assert_allclose(
        cost_sensitive_hinge(data["label"], h, data["cost"]), hinge, atol=1e-14
    )
    np.testing.assert_allclose(one_class(h, data["t"], data["level"]), level, atol=1e-13)


def test_pinball_equals_max_form():
    r = np.linspace(-2, 2, 9)
    for theta in [0.0, 0.1, 0.5, 0.9, 1.0]:
        expected = np.maximum(theta * r, (theta - 1) * r)
        np.testing.assert_allclose(pinball(r, 0.0, theta), expected, atol=1e-15)


@pytest.mark.parametrize("kappa", [1.0, 0.1, 1e-3, 1e-6])
def test_smoothed_losses_approach_exact_within_derived_bounds(kappa):
    # ψ_κ ≤ |·| ≤ ψ_κ + κ/2, and each loss holds |·| with factor ½, c_θ(y)/2 or 1/(2θ).
    data = random_problem(4, n=2000)
    h = data["h"]
    weight = np.abs((data["cost"] + 1) / 2 - (data["label"] == -1))
    checks = [
        (
            pinball(data["target"], h, data["quantile"], kappa),
            pinball(data["target"], h, data["quantile"]),
            kappa / 4 * np.ones_like(h),
            data["target"] - h,
        ),
        (
            cost_sensitive_hinge(data["label"], h, data["cost"], kappa),
            cost_sensitive_hinge(data["label"], h, data["cost"]),
            weight * kappa / 4,
            1 - data["label"] * h,
        ),
        (
            one_class(h, data["t"], data["level"], kappa),
            one_class(h, data["t"], data["level"]),
            kappa / (4 * data["level"]),
            data["t"] - h,
        ),
    ]
    for smoothed, exact, bound, kink_argument in checks:
        gap = exact - smoothed
        assert np.all(gap >= -1e-12)
        assert np.all(gap <= bound + 1e-12)
        far = np.abs(kink_argument) >= kappa
        np.testing.assert_allclose(gap[far], bound[far], rtol=1e-6, atol=1e-12)


def test_exact_gradient_at_kink_is_the_midpoint_subgradient():
    theta = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(pinball_gradient(1.0, 1.0, theta), 0.5 - theta)
    for y in [-1.0, 1.0]:  # margin 1 − y h = 0 at h = y
        expected = -y * np.abs((theta + 1) / 2 - (y == -1)) / 2
        np.testing.assert_allclose(cost_sensitive_hinge_gradient(y, y, theta), expected)
    d_h, d_t = one_class_gradient(0.3, 0.3, theta)
    np.testing.assert_allclose(d_h, -0.5 / theta)
    np.testing.assert_allclose(d_t, 0.5 / theta - 1)


def test_smoothed_gradient_tends_to_exact_gradient_away_from_kinks():
    data = random_problem(5)
    y, h, theta = data["target"], data["h"], data["quantile"]
    kappa = 1e-4
    far = np.abs(y - h) > kappa
    np.testing.assert_array_equal(
        pinball_gradient(y, h, theta, kappa)[far], pinball_gradient(y, h, theta)[far]
    )


def test_losses_broadcast_samples_against_levels():
    rng = np.random.default_rng(6)
    y, H = rng.normal(size=(5, 1)), rng.normal(size=(5, 3))
    theta = np.array([0.1, 0.5, 0.9])
    values = pinball(y, H, theta, 0.1)
    assert values.shape == pinball_gradient(y, H, theta, 0.1).shape == (5, 3)
    np.testing.assert_allclose(values[:, 2], pinball(y[:, 0], H[:, 2], 0.9, 0.1))
    assert one_class_gradient(H, rng.normal(size=3), theta)[1].shape == (5, 3)


def test_pinball_loss_matches_brute_force_loop():
    rng = np.random.default_rng(7)
    y, Q = rng.normal(size=30), rng.normal(size=(30, 5))
    quantiles = [0.1, 0.3, 0.5, 0.7, 0.9]
    total = 0.0
    for level, tau in enumerate(quantiles):
        losses = []
        for i in range(y.size):
            r = y[i] - Q[i, level]
            losses.append(tau * r if r >= 0 else (tau - 1) * r)
        total += sum(losses) / len(losses)
    np.testing.assert_allclose(pinball_loss(y, Q, quantiles), total, rtol=1e-12)


def test_pinball_loss_matches_sklearn_summed_over_levels():
    # sklearn's alpha is the quantile level τ: alpha·max(y − q, 0) + (1 − alpha)·max(q − y, 0).
    rng = np.random.default_rng(8)
    y, Q = rng.normal(size=50), rng.normal(size=(50, 3))
    quantiles = [0.9, 0.2, 0.5]
    expected = sum(mean_pinball_loss(y, Q[:, j], alpha=tau) for j, tau in enumerate(quantiles))
    np.testing.assert_allclose(pinball_loss(y, Q, quantiles), expected, rtol=1e-12)
    for j, tau in enumerate(quantiles):
        single = pinball_loss(y, Q[:, [j]], [tau])
        np.testing.assert_allclose(single, mean_pinball_loss(y, Q[:, j], alpha=tau), rtol=1e-12)


def brute_force_crossing(Q):
    total = 0.0
    for level in range(Q.shape[1] - 1):
        total += np.mean([max(row[level] - row[level + 1], 0.0) for row in Q])
    return total


def test_crossing_loss_matches_brute_force_loop():
    Q = np.random.default_rng(9).normal(size=(40, 5))
    np.testing.assert_allclose(crossing_loss(Q), brute_force_crossing(Q), rtol=1e-12)


def test_crossing_loss_sorts_columns_by_level():
    Q = np.random.default_rng(10).normal(size=(40, 4))
    quantiles = np.array([0.7, 0.1, 0.9, 0.3])
    order = np.argsort(quantiles)
    np.testing.assert_allclose(crossing_loss(Q, quantiles), brute_force_crossing(Q[:, order]))


def test_crossing_loss_is_zero_for_monotone_quantiles_and_one_level():
    Q = np.cumsum(np.random.default_rng(11).uniform(size=(20, 5)), axis=1)
    assert crossing_loss(Q) == 0.0
    assert crossing_loss(Q[:, :1]) == 0.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pinball(0.0, 0.0, 0.5, kappa=-1.0), "kappa must be >= 0, got -1.0"),
        (lambda: pinball(0.0, 0.0, 1.5), r"theta must be in \[0, 1\], got 1.5"),
        (lambda: pinball(np.nan, 0.0, 0.5), "y must be finite"),
        (lambda: cost_sensitive_hinge(0.0, 0.0, 0.5), "y must be -1 or \\+1, got 0.0"),
        (lambda: cost_sensitive_hinge(1.0, 0.0, -1.5), r"theta must be in \[-1, 1\], got -1.5"),
        (lambda: one_class(0.0, 0.0, 0.0), r"theta must be in \(0, 1\], got 0.0"),
        (lambda: one_class_gradient(0.0, np.inf, 0.5), "t must be finite"),
        (lambda: pinball_loss([0.0], [[0.0]], [1.0]), r"quantiles must be in \(0, 1\), got 1.0"),
        (lambda: pinball_loss([0.0], [[0.0, 1.0]], [0.5]), "2 columns but 1 quantiles"),
        (lambda: pinball_loss([0.0, 1.0], [[0.0]], [0.5]), "1 rows but y has 2"),
        (lambda: pinball_loss([0.0], [0.0], [0.5]), "Q must be 2-dimensional"),
        (lambda: crossing_loss([[0.0, 1.0]], [0.5, 0.0]), r"\(0, 1\), got 0.0"),
        (lambda: crossing_loss(np.zeros((0, 3))), "non-empty"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()
