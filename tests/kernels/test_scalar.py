"""Scalar kernels: values against scikit-learn or brute-force loops, composition, θ-derivatives
against central finite differences, ``median_heuristic`` and input validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from sklearn.gaussian_process import kernels as skk
from sklearn.metrics.pairwise import chi2_kernel, laplacian_kernel

from manytask.kernels import (
    RBF,
    Constant,
    ExpChi2,
    Laplacian,
    Linear,
    Matern,
    median_heuristic,
)

FD_STEP = 1e-5
# Step for differencing the (already checked) analytic first derivative: Matern 1.5 has a
# |x − y| kink in ∂²k/∂x∂y at x = y, where central differences are only O(h) accurate.
FD_STEP_SECOND = 1e-7
FD_RTOL = 1e-5
FD_ATOL = 1e-9


def _points(seed, n, d, nonnegative=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return np.abs(X) if nonnegative else X


def _all_kernels():
    return [
        RBF(0.7),
        Matern(0.8, nu=0.5),
        Matern(0.8, nu=1.5),
        Matern(0.8, nu=2.5),
        Laplacian(1.3),
        ExpChi2(0.6),
        Linear(0.5),
        Constant(2.5),
    ]


# --- values against independent implementations -------------------------------------------


@pytest.mark.parametrize("lengthscale", [0.3, 1.0, 2.5])
def test_rbf_matches_sklearn(lengthscale):
    X, Y = _points(0, 7, 3), _points(1, 5, 3)
    expected = skk.RBF(length_scale=lengthscale)(X, Y)
    assert_allclose(RBF(lengthscale)(X, Y), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("lengthscale", [0.4, 1.7])
def test_matern_matches_sklearn(nu, lengthscale):
    X, Y = _points(2, 6, 2), _points(3, 8, 2)
    expected = skk.Matern(length_scale=lengthscale, nu=nu)(X, Y)
    assert_allclose(Matern(lengthscale, nu=nu)(X, Y), expected, rtol=1e-12, atol=1e-15)


def test_laplacian_matches_sklearn_with_gamma_one_over_lengthscale():
    X, Y = _points(4, 6, 3), _points(5, 4, 3)
    expected = laplacian_kernel(X, Y, gamma=1.0 / 0.9)
    assert_allclose(Laplacian(0.9)(X, Y), expected, rtol=1e-12)


def test_exp_chi2_matches_sklearn_chi2_kernel():
    X, Y = _points(6, 6, 4, nonnegative=True), _points(7, 5, 4, nonnegative=True)
    X[0, 1] = Y[2, 1] = 0.0  # a feature with x_j + y_j = 0 counts as 0
    expected = chi2_kernel(X, Y, gamma=0.6)
    assert_allclose(ExpChi2(0.6)(X, Y), expected, rtol=1e-12)


def test_exp_chi2_matches_brute_force_loop():
    X, Y = _points(8, 5, 3, nonnegative=True), _points(9, 4, 3, nonnegative=True)
    X[1] = 0.0
    Y[3] = 0.0
    gamma = 1.4
    expected = np.empty((len(X), len(Y)))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            chi2 = sum((a - b) ** 2 / (a + b) for a, b in zip(x, y, strict=True) if a + b > 0)
            expected[i, j] = np.exp(-gamma * chi2)
    assert_allclose(ExpChi2(gamma)(X, Y), expected, rtol=1e-12)


def test_matern_matches_brute_force_closed_forms():
    X, Y = _points(10, 5, 2), _points(11, 4, 2)
    lengthscale = 0.6
    closed_forms = {  # the textbook Matérn forms, r = ‖x − y‖₂ (Rasmussen & Williams eq. 4.17)
        0.5: lambda r: np.exp(-r / lengthscale),
        1.5: lambda r: (1 + np.sqrt(3) * r / lengthscale) * np.exp(-np.sqrt(3) * r / lengthscale),
        2.5: lambda r: (
            (1 + np.sqrt(5) * r / lengthscale + 5 * r**2 / (3 * lengthscale**2))
            * np.exp(-np.sqrt(5) * r / lengthscale)
        ),
    }
    for nu, form in closed_forms.items():
        expected = np.array([[form(np.linalg.norm(x - y)) for y in Y] for x in X])
        assert_allclose(Matern(lengthscale, nu=nu)(X, Y), expected, rtol=1e-12)


def test_linear_matches_sklearn_dot_product():
    X, Y = _points(12, 6, 3), _points(13, 5, 3)
    expected = skk.DotProduct(sigma_0=np.sqrt(0.5))(X, Y)  # xᵀy + σ₀²
    assert_allclose(Linear(0.5)(X, Y), expected, rtol=1e-12)


def test_constant_matches_sklearn_constant_kernel():
    X, Y = _points(14, 6, 2), _points(15, 3, 2)
    expected = skk.ConstantKernel(constant_value=2.5)(X, Y)
    assert_allclose(Constant(2.5)(X, Y), expected)


@pytest.mark.parametrize("kernel", _all_kernels(), ids=repr)
def test_call_without_y_is_gram_of_x_with_itself(kernel):
    X = _points(16, 5, 2, nonnegative=True)
    assert_allclose(kernel(X), kernel(X, X))


@pytest.mark.parametrize("kernel", _all_kernels(), ids=repr)
def test_diag_equals_diagonal_of_gram(kernel):
    X = _points(17, 6, 3, nonnegative=True)
    assert_allclose(kernel.diag(X), np.diag(kernel(X, X)), rtol=1e-12)


@pytest.mark.parametrize("kernel", _all_kernels(), ids=repr)
def test_one_dimensional_input_is_points_of_dimension_one(kernel):
    x = np.abs(np.random.default_rng(18).normal(size=6))
    y = np.abs(np.random.default_rng(19).normal(size=4))
    values = kernel(x, y)
    assert values.shape == (6, 4)
    assert_allclose(values, kernel(x[:, None], y[:, None]))
    assert_allclose(kernel.diag(x), kernel.diag(x[:, None]))


# --- composition ----------------------------------------------------------------------------


def test_sum_of_kernels_equals_sum_of_values():
    X, Y = _points(20, 5, 2), _points(21, 4, 2)
    k1, k2 = RBF(0.5), Matern(1.2, nu=2.5)
    assert_allclose((k1 + k2)(X, Y), k1(X, Y) + k2(X, Y))
    assert_allclose((k1 + k2).diag(X), k1.diag(X) + k2.diag(X))


def test_product_of_kernels_equals_product_of_values():
    X, Y = _points(22, 5, 2), _points(23, 4, 2)
    k1, k2 = RBF(0.5), Linear(0.3)
    assert_allclose((k1 * k2)(X, Y), k1(X, Y) * k2(X, Y))
    assert_allclose((k1 * k2).diag(X), k1.diag(X) * k2.diag(X))


def test_number_times_kernel_scales_values():
    X, Y = _points(24, 5, 2), _points(25, 4, 2)
    k = Laplacian(0.8)
    assert_allclose((2.0 * k)(X, Y), 2.0 * k(X, Y))
    assert_allclose((k * 2.0)(X, Y), 2.0 * k(X, Y))
    assert_allclose((2.0 * k).diag(X), 2.0 * k.diag(X))


def test_kernel_plus_number_shifts_values():
    X, Y = _points(26, 5, 2), _points(27, 4, 2)
    k = RBF(1.1)
    assert_allclose((k + 1.0)(X, Y), k(X, Y) + 1.0)
    assert_allclose((1.0 + k)(X, Y), k(X, Y) + 1.0)
    assert_allclose((k + 1.0).diag(X), k.diag(X) + 1.0)


def test_nested_composition_equals_arithmetic_of_parts():
    X, Y = _points(28, 5, 3), _points(29, 6, 3)
    k1, k2, k3 = RBF(0.9), Linear(0.1), Matern(0.5, nu=1.5)
    expected = 3.0 * k1(X, Y) * k2(X, Y) + k3(X, Y) + 0.5
    assert_allclose((3.0 * k1 * k2 + k3 + 0.5)(X, Y), expected, rtol=1e-12)


def test_adding_a_negative_number_raises_value_error():
    with pytest.raises(ValueError, match="constant"):
        RBF() + (-1.0)


# --- θ-derivatives ----------------------------------------------------------------------------

# Includes x = y (0.2 and 1.0 appear in both) and far-apart pairs (2.5 vs −4.0).
THETA_X = np.array([-1.3, 0.2, 1.0, 2.5])
THETA_Y = np.array([0.2, 0.9, 1.0, -4.0])
# ExpChi2 needs θ ≥ 0; again with coinciding (1.0) and far-apart (0.1 vs 7.0) pairs.
THETA_X_POSITIVE = np.array([0.3, 1.0, 2.5, 7.0])
THETA_Y_POSITIVE = np.array([1.0, 0.1, 4.0, 2.5])


def _differentiable_cases():
    general = [
        ("RBF", RBF(0.8)),
        ("Matern1.5", Matern(0.9, nu=1.5)),
        ("Matern2.5", Matern(1.1, nu=2.5)),
        ("Linear", Linear(0.4)),
        ("Constant", Constant(1.7)),
        ("RBF*Linear+Constant", RBF(1.2) * Linear(0.3) + Constant(0.5)),
        ("2*Matern2.5+RBF", 2.0 * Matern(0.7, nu=2.5) + RBF(0.5)),
        ("Matern1.5*RBF*Linear", Matern(1.0, nu=1.5) * RBF(2.0) * Linear(1.0)),
    ]
    positive = [
        ("ExpChi2", ExpChi2(0.7)),
        ("ExpChi2*RBF+Linear", ExpChi2(0.5) * RBF(1.5) + Linear(0.2)),
        ("ExpChi2*ExpChi2", ExpChi2(0.3) * ExpChi2(1.1)),
    ]
    cases = [pytest.param(k, THETA_X, THETA_Y, id=name) for name, k in general]
    cases += [pytest.param(k, THETA_X_POSITIVE, THETA_Y_POSITIVE, id=name) for name, k in positive]
    return cases


def _central_difference_in_y(function, x, y, step):
    return (function(x, y + step) - function(x, y - step)) / (2 * step)


def _central_difference_in_x(function, x, y, step):
    return (function(x + step, y) - function(x - step, y)) / (2 * step)


@pytest.mark.parametrize(("kernel", "x", "y"), _differentiable_cases())
def test_dk_dy_matches_central_differences(kernel, x, y):
    expected = _central_difference_in_y(kernel, x, y, FD_STEP)
    assert_allclose(kernel.dk_dy(x, y), expected, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize(("kernel", "x", "y"), _differentiable_cases())
def test_dk_dx_matches_central_differences(kernel, x, y):
    expected = _central_difference_in_x(kernel, x, y, FD_STEP)
    assert_allclose(kernel.dk_dx(x, y), expected, rtol=FD_RTOL, atol=FD_ATOL)


@pytest.mark.parametrize(("kernel", "x", "y"), _differentiable_cases())
def test_d2k_dxdy_matches_central_differences_of_dk_dy(kernel, x, y):
    expected = _central_difference_in_x(kernel.dk_dy, x, y, FD_STEP_SECOND)
    assert_allclose(kernel.d2k_dxdy(x, y), expected, rtol=FD_RTOL, atol=1e-7)


@pytest.mark.parametrize(
    "kernel", [RBF(0.8), Matern(1.1, nu=2.5), RBF(1.2) * Linear(0.3) + Constant(0.5)], ids=repr
)
def test_d2k_dxdy_matches_mixed_central_difference_of_k(kernel):
    # The four-point stencil on k itself (smooth kernels only: its rounding error is ε/h²).
    step = 1e-4
    x, y = THETA_X, THETA_Y

    def shifted(dx, dy):
        return kernel(x + dx, y + dy)

    expected = (
        shifted(step, step) - shifted(step, -step) - shifted(-step, step) + shifted(-step, -step)
    ) / (4 * step**2)
    assert_allclose(kernel.d2k_dxdy(x, y), expected, rtol=1e-5, atol=1e-6)


def test_derivatives_at_coinciding_points_have_closed_forms():
    # RBF at x = y: ∂k/∂y = 0 and ∂²k/∂x∂y = 1/l² (differentiate exp(−(x−y)²/(2l²)) by hand).
    theta = np.array([-0.4, 0.0, 2.0])
    lengthscale = 0.5
    kernel = RBF(lengthscale)
    assert_allclose(np.diag(kernel.dk_dy(theta, theta)), 0.0, atol=1e-15)
    assert_allclose(np.diag(kernel.d2k_dxdy(theta, theta)), 1 / lengthscale**2)


def test_derivative_shapes_follow_inputs():
    kernel = RBF(1.0) * Linear(0.1)
    assert kernel.dk_dy(THETA_X, THETA_Y[:3]).shape == (4, 3)
    assert kernel.dk_dx(THETA_X, THETA_Y[:3]).shape == (4, 3)
    assert kernel.d2k_dxdy(THETA_X, THETA_Y[:3]).shape == (4, 3)


@settings(max_examples=30, deadline=None, database=None)
@given(
    x=st.floats(min_value=-3.0, max_value=3.0),
    y=st.floats(min_value=-3.0, max_value=3.0),
    lengthscale=st.floats(min_value=0.3, max_value=3.0),
)
def test_rbf_times_matern_dk_dy_matches_central_differences_property(x, y, lengthscale):
    kernel = RBF(lengthscale) * Matern(lengthscale, nu=2.5) + Linear(0.5)
    xs, ys = np.array([x]), np.array([y])
    expected = _central_difference_in_y(kernel, xs, ys, FD_STEP)
    assert_allclose(kernel.dk_dy(xs, ys), expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize(
    "kernel",
    [Matern(1.0, nu=0.5), Laplacian(1.0), RBF(1.0) + Laplacian(1.0), Matern(1.0, nu=0.5) * RBF()],
    ids=repr,
)
@pytest.mark.parametrize("method", ["dk_dy", "dk_dx", "d2k_dxdy"])
def test_non_differentiable_kernels_raise_not_implemented(kernel, method):
    with pytest.raises(NotImplementedError):
        getattr(kernel, method)(THETA_X, THETA_Y)


@pytest.mark.parametrize("method", ["dk_dy", "dk_dx", "d2k_dxdy"])
def test_derivatives_of_two_dimensional_inputs_raise_value_error(method):
    X2, Y2 = _points(30, 4, 2), _points(31, 3, 2)
    with pytest.raises(ValueError, match="1-D inputs"):
        getattr(RBF(), method)(X2, THETA_Y)
    with pytest.raises(ValueError, match="1-D inputs"):
        getattr(RBF(), method)(THETA_X, Y2)


# --- median heuristic ---------------------------------------------------------------------------


def _brute_force_median(X):
    distances = [np.linalg.norm(X[i] - X[j]) for i in range(len(X)) for j in range(i + 1, len(X))]
    return float(np.median(distances))


def test_median_heuristic_matches_brute_force():
    X = _points(32, 40, 3)
    assert median_heuristic(X) == pytest.approx(_brute_force_median(X), rel=1e-12)


def test_median_heuristic_on_one_dimensional_input():
    x = np.random.default_rng(33).uniform(size=15)
    assert median_heuristic(x) == pytest.approx(_brute_force_median(x[:, None]), rel=1e-12)


def test_median_heuristic_subsampling_is_reproducible_with_random_state():
    X = _points(34, 200, 2)
    first = median_heuristic(X, max_samples=50, random_state=7)
    second = median_heuristic(X, max_samples=50, random_state=7)
    assert first == second


def test_median_heuristic_subsampling_is_reproducible_with_a_generator():
    X = _points(35, 120, 2)
    first = median_heuristic(X, max_samples=30, random_state=np.random.default_rng(3))
    second = median_heuristic(X, max_samples=30, random_state=np.random.default_rng(3))
    assert first == second


def test_median_heuristic_ignores_random_state_without_subsampling():
    X = _points(36, 30, 2)
    assert median_heuristic(X, max_samples=30, random_state=1) == median_heuristic(
        X, max_samples=30, random_state=2
    )


@pytest.mark.parametrize("X", [np.zeros((1, 2)), np.zeros((0, 2)), [3.0]])
def test_median_heuristic_needs_two_points(X):
    with pytest.raises(ValueError, match="at least 2 points"):
        median_heuristic(X)


def test_median_heuristic_rejects_max_samples_below_two():
    # Subsampling to fewer than 2 points leaves no pair whose distance could be measured.
    X = _points(37, 10, 2)
    with pytest.raises(ValueError, match="max_samples"):
        median_heuristic(X, max_samples=1, random_state=0)


def test_median_heuristic_rejects_mostly_coinciding_points():
    with pytest.raises(ValueError, match="coincide"):
        median_heuristic(np.zeros((5, 2)))


# --- input validation -----------------------------------------------------------------------------


@pytest.mark.parametrize("make", [RBF, Laplacian, lambda value: Matern(value, nu=1.5)])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_invalid_lengthscale_raises_value_error_naming_it(make, value):
    with pytest.raises(ValueError, match="lengthscale"):
        make(value)


@pytest.mark.parametrize("nu", [1.0, 2.0, 3.5, 0.0, np.nan, "1.5"])
def test_matern_nu_outside_allowed_set_raises_value_error(nu):
    with pytest.raises(ValueError, match="nu must be one of"):
        Matern(1.0, nu=nu)


@pytest.mark.parametrize("gamma", [0.0, -0.5, np.nan, np.inf])
def test_invalid_gamma_raises_value_error_naming_it(gamma):
    with pytest.raises(ValueError, match="gamma"):
        ExpChi2(gamma)


def test_negative_linear_offset_raises_value_error_naming_it():
    with pytest.raises(ValueError, match="offset"):
        Linear(-0.1)


def test_negative_constant_raises_value_error_naming_it():
    with pytest.raises(ValueError, match="value"):
        Constant(-2.0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kernel", _all_kernels(), ids=repr)
def test_non_finite_x_raises_value_error(kernel, bad):
    X = np.abs(_points(38, 4, 2))
    X[1, 0] = bad
    with pytest.raises(ValueError, match="X must be finite"):
        kernel(X, np.ones((3, 2)))
    with pytest.raises(ValueError, match="X must be finite"):
        kernel.diag(X)


@pytest.mark.parametrize("kernel", _all_kernels(), ids=repr)
def test_non_finite_y_raises_value_error(kernel):
    Y = np.ones((3, 2))
    Y[2, 1] = np.nan
    with pytest.raises(ValueError, match="Y must be finite"):
        kernel(np.ones((4, 2)), Y)


def test_non_finite_theta_in_derivative_raises_value_error():
    with pytest.raises(ValueError, match="Y must be finite"):
        RBF().dk_dy(THETA_X, np.array([0.0, np.nan]))


@pytest.mark.parametrize("kernel", _all_kernels(), ids=repr)
def test_different_numbers_of_features_raise_value_error(kernel):
    with pytest.raises(ValueError, match="Y has 2 features, expected 3"):
        kernel(np.ones((4, 3)), np.ones((5, 2)))


def test_exp_chi2_negative_x_raises_value_error():
    with pytest.raises(ValueError, match="non-negative inputs; X"):
        ExpChi2()(np.array([[1.0, -0.5]]), np.ones((2, 2)))


def test_exp_chi2_negative_y_raises_value_error():
    with pytest.raises(ValueError, match="non-negative inputs; Y"):
        ExpChi2()(np.ones((2, 2)), np.array([[1.0, -0.5]]))


def test_exp_chi2_negative_input_in_diag_raises_value_error():
    with pytest.raises(ValueError, match="non-negative"):
        ExpChi2().diag(np.array([[1.0, -0.5]]))


def test_exp_chi2_negative_theta_in_derivative_raises_value_error():
    with pytest.raises(ValueError, match="non-negative"):
        ExpChi2().dk_dy(np.array([1.0, -0.5]), np.array([1.0]))
