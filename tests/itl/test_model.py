"""DecomposableModel (Prop. 3.1): predictions against a brute-force double loop and the
(nm × nm) Kronecker form, θ-slopes and every gradient against central finite differences,
the RKHS norm against the Gram matrix of the representer features, and input validation."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from manytask.itl.model import DecomposableModel
from manytask.kernels import RBF, Matern

N_SAMPLES, N_ANCHORS, N_FEATURES = 6, 5, 2
FD_STEP = 1e-5
FD_RTOL = 1e-6


def _problem(seed=0, with_bias=True, n=N_SAMPLES, m=N_ANCHORS):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    anchors = np.sort(rng.uniform(0.05, 0.95, size=m))
    bias_kernel = RBF(0.4) if with_bias else None
    model = DecomposableModel(RBF(1.3), RBF(0.3), bias_kernel).precompute(X, anchors)
    alpha, beta = rng.normal(size=(n, m)), rng.normal(size=(n, m))
    bias = rng.normal(size=m) if with_bias else None
    return model, X, anchors, alpha, beta, bias


def _scalar(kernel, a, b):
    return float(kernel(np.atleast_2d(a), np.atleast_2d(b))[0, 0])


def _d2k(kernel, a, b):
    """∂k(a, b)/∂b by central differences of kernel values (independent of dk_dy)."""
    return (_scalar(kernel, a, b + FD_STEP) - _scalar(kernel, a, b - FD_STEP)) / (2 * FD_STEP)


def _brute_force_h(model, alpha, beta, bias, x, theta):
    """h(x)(θ) by the double loop over i, j of Prop. 3.1 and the bias sum."""
    k_x, k_theta = model.input_kernel, model.theta_kernel
    total = 0.0
    for i, x_i in enumerate(model.X_):
        for j, theta_j in enumerate(model.anchors_):
            input_part = _scalar(k_x, x, x_i)
            total += alpha[i, j] * input_part * _scalar(k_theta, theta, theta_j)
            total += beta[i, j] * input_part * _d2k(k_theta, theta, theta_j)
    if bias is not None:
        for j, theta_j in enumerate(model.anchors_):
            total += bias[j] * _scalar(model.bias_kernel, theta, theta_j)
    return total


def test_training_predictions_match_double_loop():
    model, X, anchors, alpha, beta, bias = _problem()
    H = model.predict(alpha, beta, bias)
    expected = np.array(
        [[_brute_force_h(model, alpha, beta, bias, x, t) for t in anchors] for x in X]
    )
    assert H.shape == (N_SAMPLES, N_ANCHORS)
    assert_allclose(H, expected, rtol=1e-6, atol=1e-8)


def test_new_point_predictions_match_double_loop():
    model, _, _, alpha, beta, bias = _problem(seed=1)
    rng = np.random.default_rng(11)
    X_new, theta_new = rng.normal(size=(3, N_FEATURES)), np.array([0.1, 0.5, 0.7, 0.99])
    H = model.predict(alpha, beta, bias, X=X_new, theta=theta_new)
    expected = np.array(
        [[_brute_force_h(model, alpha, beta, bias, x, t) for t in theta_new] for x in X_new]
    )
    assert H.shape == (3, 4)
    assert_allclose(H, expected, rtol=1e-6, atol=1e-8)


def test_new_inputs_at_training_points_equal_training_predictions():
    model, X, anchors, alpha, beta, bias = _problem(seed=2)
    assert_allclose(
        model.predict(alpha, beta, bias, X=X, theta=anchors),
        model.predict(alpha, beta, bias),
        rtol=1e-12,
        atol=1e-12,
    )


def _kronecker_gram(model):
    """The (2nm × 2nm) Gram matrix of the features k_X(·, x_i)k_Θ(·, θ_j) and
    k_X(·, x_i)∂₂k_Θ(·, θ_j), with row-major (i, j) order."""
    K_X, K_T = model.gram_x_, model.gram_theta_
    D, E = model.dtheta_, model.d2theta_
    return np.block([[np.kron(K_X, K_T), np.kron(K_X, D)], [np.kron(K_X, D).T, np.kron(K_X, E)]])


def test_kronecker_form_equals_fast_form():
    model, _, _, alpha, beta, _ = _problem(seed=3, with_bias=False, n=4, m=3)
    K_X, K_T, D = model.gram_x_, model.gram_theta_, model.dtheta_
    H_kron = np.kron(K_X, K_T) @ alpha.ravel() + np.kron(K_X, D) @ beta.ravel()
    assert_allclose(model.predict(alpha, beta).ravel(), H_kron, rtol=1e-12, atol=1e-12)
    coefficients = np.concatenate([alpha.ravel(), beta.ravel()])
    norm_kron = coefficients @ _kronecker_gram(model) @ coefficients
    assert_allclose(model.rkhs_norm2(alpha, beta), norm_kron, rtol=1e-10)


def _feature_inner_products(kernel, a, b):
    """⟨k(·, a), k(·, b)⟩, ⟨k(·, a), ∂₂k(·, b)⟩, ⟨∂₂k(·, a), ∂₂k(·, b)⟩ by the reproducing
    property, the derivatives taken by central finite differences of kernel values."""
    h = 1e-4
    value = _scalar(kernel, a, b)
    cross = (_scalar(kernel, a, b + h) - _scalar(kernel, a, b - h)) / (2 * h)
    mixed = (
        _scalar(kernel, a + h, b + h)
        - _scalar(kernel, a + h, b - h)
        - _scalar(kernel, a - h, b + h)
        + _scalar(kernel, a - h, b - h)
    ) / (4 * h**2)
    return value, cross, mixed


@pytest.mark.parametrize("theta_kernel", [RBF(0.3), Matern(0.4, nu=2.5)], ids=repr)
def test_rkhs_norm_equals_feature_gram_form_and_is_nonnegative(theta_kernel):
    rng = np.random.default_rng(4)
    n, m = 4, 3
    X, anchors = rng.normal(size=(n, N_FEATURES)), np.array([0.2, 0.45, 0.8])
    model = DecomposableModel(RBF(1.0), theta_kernel).precompute(X, anchors)
    alpha, beta = rng.normal(size=(n, m)), rng.normal(size=(n, m))
    # Features φ_(i,j,0) = k_X(·, x_i)k_Θ(·, θ_j), φ_(i,j,1) = k_X(·, x_i)∂₂k_Θ(·, θ_j).
    features = [(i, j, s) for s in (0, 1) for i in range(n) for j in range(m)]
    coefficients = np.array([(alpha if s == 0 else beta)[i, j] for i, j, s in features])
    gram = np.empty((len(features), len(features)))
    for p, (i, a, s) in enumerate(features):
        for q, (k, b, t) in enumerate(features):
            value, cross, mixed = _feature_inner_products(theta_kernel, anchors[a], anchors[b])
            reverse_cross = _feature_inner_products(theta_kernel, anchors[b], anchors[a])[1]
            theta_part = {(0, 0): value, (0, 1): cross, (1, 0): reverse_cross, (1, 1): mixed}
            gram[p, q] = _scalar(model.input_kernel, X[i], X[k]) * theta_part[s, t]
    expected = coefficients @ gram @ coefficients
    norm2 = model.rkhs_norm2(alpha, beta)
    assert_allclose(norm2, expected, rtol=1e-5)
    assert norm2 >= 0.0


def test_rkhs_norm_is_nonnegative_for_random_coefficients():
    model, _, _, _, _, _ = _problem(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(20):
        alpha, beta = rng.normal(size=(2, N_SAMPLES, N_ANCHORS))
        assert model.rkhs_norm2(alpha, beta) >= -1e-10
        assert model.bias_norm2(rng.normal(size=N_ANCHORS)) >= -1e-10


def test_bias_norm_is_quadratic_form():
    model, _, anchors, _, _, bias = _problem(seed=6)
    gram = RBF(0.4)(anchors[:, None], anchors[:, None])
    assert_allclose(model.bias_norm2(bias), bias @ gram @ bias, rtol=1e-12)


@pytest.mark.parametrize("with_bias", [True, False])
def test_theta_slope_matches_finite_differences(with_bias):
    model, _, _, alpha, beta, bias = _problem(seed=7, with_bias=with_bias)
    rng = np.random.default_rng(7)
    X_new, theta_new = rng.normal(size=(3, N_FEATURES)), np.array([0.15, 0.4, 0.9])
    slope = model.predict_dtheta(alpha, beta, bias, X=X_new, theta=theta_new)
    upper = model.predict(alpha, beta, bias, X=X_new, theta=theta_new + FD_STEP)
    lower = model.predict(alpha, beta, bias, X=X_new, theta=theta_new - FD_STEP)
    assert_allclose(slope, (upper - lower) / (2 * FD_STEP), rtol=FD_RTOL, atol=1e-7)


def test_training_theta_slope_matches_new_point_slope():
    model, X, anchors, alpha, beta, bias = _problem(seed=8)
    assert_allclose(
        model.predict_dtheta(alpha, beta, bias),
        model.predict_dtheta(alpha, beta, bias, X=X, theta=anchors),
        rtol=1e-12,
        atol=1e-12,
    )


def _central_difference(function, params):
    gradient = np.empty_like(params)
    for k in range(len(params)):
        step = np.zeros_like(params)
        step[k] = FD_STEP
        gradient[k] = (function(params + step) - function(params - step)) / (2 * FD_STEP)
    return gradient


@pytest.mark.parametrize("with_bias", [True, False])
def test_backward_matches_finite_differences_of_linear_functional(with_bias):
    model, _, _, alpha, beta, bias = _problem(seed=9, with_bias=with_bias)
    rng = np.random.default_rng(9)
    G, G_slope = rng.normal(size=(2, N_SAMPLES, N_ANCHORS))

    def functional(params):
        a, b, c = model.unpack(params)
        return np.sum(G * model.predict(a, b, c)) + np.sum(G_slope * model.predict_dtheta(a, b, c))

    grad_alpha, grad_beta, grad_bias = model.backward(G, G_slope)
    analytic = model.pack(grad_alpha, grad_beta, grad_bias)
    numeric = _central_difference(functional, model.pack(alpha, beta, bias))
    assert_allclose(analytic, numeric, rtol=FD_RTOL, atol=1e-6)


def test_backward_without_slope_gradient_matches_finite_differences():
    model, _, _, alpha, beta, bias = _problem(seed=10)
    G = np.random.default_rng(10).normal(size=(N_SAMPLES, N_ANCHORS))

    def functional(params):
        return np.sum(G * model.predict(*model.unpack(params)))

    analytic = model.pack(*model.backward(G))
    numeric = _central_difference(functional, model.pack(alpha, beta, bias))
    assert_allclose(analytic, numeric, rtol=FD_RTOL, atol=1e-6)


def test_norm_gradients_match_finite_differences():
    model, _, _, alpha, beta, bias = _problem(seed=12)

    def norm2(params):
        a, b, c = model.unpack(params)
        return model.rkhs_norm2(a, b) + model.bias_norm2(c)

    grad_alpha, grad_beta = model.rkhs_norm2_grad(alpha, beta)
    analytic = model.pack(grad_alpha, grad_beta, model.bias_norm2_grad(bias))
    numeric = _central_difference(norm2, model.pack(alpha, beta, bias))
    assert_allclose(analytic, numeric, rtol=FD_RTOL, atol=1e-6)


def test_pack_and_unpack_round_trip():
    model, _, _, alpha, beta, bias = _problem(seed=13)
    params = model.pack(alpha, beta, bias)
    assert params.shape == (model.n_params,) == (2 * N_SAMPLES * N_ANCHORS + N_ANCHORS,)
    for recovered, original in zip(model.unpack(params), (alpha, beta, bias)):
        assert_allclose(recovered, original, rtol=0, atol=0)
    no_bias = _problem(seed=13, with_bias=False)[0]
    assert no_bias.unpack(np.zeros(no_bias.n_params))[2] is None


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda m, a, b, c: m.predict(a[:, :-1], b, c), "alpha"),
        (lambda m, a, b, c: m.predict(a, b[:-1], c), "beta"),
        (lambda m, a, b, c: m.predict(a, b, c[:-1]), "bias"),
        (lambda m, a, b, c: m.predict(a, b, None), "bias"),
        (lambda m, a, b, c: m.predict(a, b, c, X=np.zeros((2, 3))), "X"),
        (lambda m, a, b, c: m.predict(a, b, c, theta=np.zeros((2, 2))), "theta"),
        (lambda m, a, b, c: m.backward(a[:-1]), "grad_values"),
        (lambda m, a, b, c: m.backward(a, b.T), "grad_slopes"),
        (lambda m, a, b, c: m.rkhs_norm2(a.ravel(), b), "alpha"),
        (lambda m, a, b, c: m.unpack(np.zeros(3)), "params"),
        (lambda m, a, b, c: m.pack(a, b, np.zeros((2, 2))), "bias"),
    ],
)
def test_bad_shapes_raise_value_error_naming_parameter(call, name):
    model, _, _, alpha, beta, bias = _problem(seed=14)
    with pytest.raises(ValueError, match=name):
        call(model, alpha, beta, bias)


def test_bias_rejected_without_bias_kernel():
    model, _, _, alpha, beta, _ = _problem(seed=15, with_bias=False)
    with pytest.raises(ValueError, match="bias"):
        model.predict(alpha, beta, np.zeros(N_ANCHORS))
    with pytest.raises(ValueError, match="bias_kernel"):
        model.bias_norm2(np.zeros(N_ANCHORS))


def test_methods_require_precompute():
    model = DecomposableModel(RBF(1.0), RBF(0.3))
    with pytest.raises(ValueError, match="precompute"):
        model.predict(np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="anchors"):
        model.precompute(np.zeros((2, 1)), np.array([]))
