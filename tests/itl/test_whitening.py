"""Whitened and Nyström coordinates: predictions, norms and objectives against the
coefficient form of DecomposableModel, gradients against finite differences, the whitened fit
against a converged dense Newton solve over (A, B, c), full-rank Nyström against the exact
model."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from manytask.itl import (
    InfiniteCostSensitiveClassifier,
    InfiniteLevelSetEstimator,
    InfiniteQuantileRegressor,
    pinball_loss,
)
from manytask.itl._estimator import level_set_penalty, penalised_objective, ridge_penalty
from manytask.itl.kernel_quantile import quantile_risk
from manytask.itl.level_sets import one_class_risk
from manytask.itl.model import DecomposableModel
from manytask.itl.whitening import WhitenedModel, pivoted_cholesky
from manytask.kernels import RBF, Linear

ANCHORS = np.array([0.15, 0.4, 0.55, 0.85])
WEIGHTS = np.array([0.1, 0.4, 0.3, 0.2])


def _model(X, bias=True):
    bias_kernel = RBF(0.35) if bias else None
    return DecomposableModel(RBF(1.3), RBF(0.3), bias_kernel).precompute(X, ANCHORS)


def _random_whitened_params(whitened, seed):
    return np.random.default_rng(seed).normal(size=whitened.n_params)


@pytest.mark.parametrize("nystrom", [False, True])
def test_predictions_and_norms_match_the_coefficient_form(nystrom):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    model = _model(X[:7] if nystrom else X)
    whitened = WhitenedModel(model, X=X if nystrom else None)
    V, beta, v = whitened.unpack(_random_whitened_params(whitened, 1))
    assert beta is None
    alpha, beta, bias = whitened.to_coefficients(V, v)
    # The coefficient form on the landmarks, evaluated at the training points X.
    assert_allclose(whitened.predict(V, None, v), model.predict(alpha, beta, bias, X=X), atol=1e-9)
    assert_allclose(
        whitened.predict_dtheta(V, None, v),
        model.predict_dtheta(alpha, beta, bias, X=X),
        atol=1e-8,
    )
    assert_allclose(whitened.rkhs_norm2(V), model.rkhs_norm2(alpha, beta), rtol=1e-9)
    assert_allclose(whitened.bias_norm2(v), model.bias_norm2(bias), rtol=1e-9)


def test_exact_features_reproduce_the_input_gram_matrix():
    X = np.random.default_rng(2).normal(size=(15, 3))
    model = _model(X)
    features = WhitenedModel(model).features_
    assert_allclose(features @ features.T, model.gram_x_, atol=1e-12)


@pytest.mark.parametrize("max_dense", [0, 1000])  # column by column; LAPACK's dpstrf
def test_pivoted_cholesky_factor_is_the_nystrom_map_of_its_pivots(max_dense):
    X = np.random.default_rng(20).normal(size=(300, 3))
    kernel = RBF(2.0)
    gram = kernel(X, X)
    pivots, factor = pivoted_cholesky(kernel, X, max_dense=max_dense)
    assert len(pivots) < 300  # a smooth kernel on 300 points has a lower numerical rank
    residual = gram - factor @ factor.T
    assert np.max(np.diag(residual)) <= 1e-13 and np.max(np.abs(residual)) <= 1e-12
    assert np.min(np.linalg.eigvalsh(residual)) >= -1e-12  # PSD residual
    # L = K[:, P] L_PP^{-T}, with L_PP lower triangular in pivot order.
    assert_allclose(np.triu(factor[pivots], 1), 0.0)
    assert_allclose(factor @ factor[pivots].T, gram[:, pivots], atol=1e-12)


@pytest.mark.parametrize("max_dense", [0, 1000])
def test_pivoted_cholesky_keeps_every_point_of_a_full_rank_gram_matrix(max_dense):
    X = 10.0 * np.arange(6.0)[:, None]  # far apart: K ≈ I
    pivots, factor = pivoted_cholesky(RBF(1.0), X, max_dense=max_dense)
    assert sorted(pivots.tolist()) == list(range(6))
    assert_allclose(factor @ factor.T, RBF(1.0)(X, X), atol=1e-14)


@pytest.mark.parametrize("ridge", [0.0, 0.3])
def test_level_weighted_coordinates_make_the_l21_penalty_the_identity(ridge):
    X = np.random.default_rng(3).normal(size=(10, 2))
    model = _model(X)
    whitened = WhitenedModel(model, slopes=False, level_weights=WEIGHTS, ridge=ridge)
    V, _, v = whitened.unpack(_random_whitened_params(whitened, 4))
    alpha, beta, bias = whitened.to_coefficients(V, v)
    assert_allclose(beta, 0.0)
    value, _, _ = whitened.level_norm2(V, None, WEIGHTS)
    # Σ_j w_j ‖f(θ_j)‖² + ρ ‖f‖² is ‖V‖² in these coordinates.
    assert_allclose(value + ridge * whitened.rkhs_norm2(V), np.sum(V * V), rtol=1e-9)
    value = model.level_norm2(alpha, beta, WEIGHTS)[0]
    assert_allclose(whitened.level_norm2(V, None, WEIGHTS)[0], value, rtol=1e-8)
    assert_allclose(whitened.rkhs_norm2(V), model.rkhs_norm2(alpha, beta), rtol=1e-8)
    assert_allclose(whitened.predict(V, None, v), model.predict(alpha, beta, bias), atol=1e-9)


def test_level_set_penalty_matches_a_brute_force_sum():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 2))
    model = _model(X)
    params = rng.normal(size=model.n_params)
    alpha, beta, bias = model.unpack(params)
    value = level_set_penalty(WEIGHTS, lambda_=0.7)(model, alpha, beta, bias)[0]
    k_x, k_theta, k_b = RBF(1.3), RBF(0.3), RBF(0.35)
    expected = 0.0
    for theta, w in zip(ANCHORS, WEIGHTS):
        # f(·)(θ) = Σ_i g_i k_X(·, x_i), g_i = Σ_l α_il k_Θ(θ, θ_l) + β_il ∂₂k_Θ(θ, θ_l).
        g = alpha @ k_theta([[theta]], ANCHORS[:, None])[0]
        g = g + beta @ k_theta.dk_dy([[theta]], ANCHORS[:, None])[0]
        expected += 0.5 * w * g @ k_x(X, X) @ g
    expected += 0.35 * bias @ k_b(ANCHORS[:, None], ANCHORS[:, None]) @ bias
    assert_allclose(value, expected, rtol=1e-12)


def _finite_differences(objective, params, step=1e-6):
    numerical = np.empty_like(params)
    for k in range(params.size):
        shift = np.zeros_like(params)
        shift[k] = step
        numerical[k] = (objective(params + shift)[0] - objective(params - shift)[0]) / (2 * step)
    return numerical


def test_level_set_penalty_gradient_matches_finite_differences():
    rng = np.random.default_rng(6)
    model = _model(rng.normal(size=(5, 2)))
    penalty = level_set_penalty(WEIGHTS, lambda_=0.7)

    def objective(params):
        value, grad_alpha, grad_beta, grad_bias = penalty(model, *model.unpack(params))
        return value, model.pack(grad_alpha, grad_beta, grad_bias)

    params = rng.normal(size=model.n_params)
    assert_allclose(objective(params)[1], _finite_differences(objective, params), rtol=1e-6)


@pytest.mark.parametrize("nystrom", [False, True])
def test_whitened_quantile_objective_gradient_matches_finite_differences(nystrom):
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(9, 2)), rng.normal(size=9)
    whitened = WhitenedModel(_model(X[:5] if nystrom else X), X=X if nystrom else None)
    data_term = quantile_risk(y, ANCHORS, WEIGHTS, lambda_nc=0.7, kappa=0.3)

    def objective(params):
        return penalised_objective(params, whitened, data_term, ridge_penalty(0.2))

    params = 0.3 * _random_whitened_params(whitened, 8)
    assert_allclose(
        objective(params)[1], _finite_differences(objective, params), rtol=1e-5, atol=1e-8
    )


@pytest.mark.parametrize("nystrom", [False, True])
def test_whitened_level_set_objective_matches_coefficient_form_and_differences(nystrom):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(9, 2))
    model = _model(X[:6] if nystrom else X)
    whitened = WhitenedModel(model, X=X if nystrom else None, slopes=False, level_weights=WEIGHTS)
    data_term = one_class_risk(ANCHORS, WEIGHTS, kappa=0.3)
    penalty = level_set_penalty(WEIGHTS, lambda_=0.4)

    def objective(params):
        return penalised_objective(params, whitened, data_term, penalty)

    params = 0.3 * _random_whitened_params(whitened, 10)
    assert_allclose(
        objective(params)[1], _finite_differences(objective, params), rtol=1e-5, atol=1e-8
    )
    if not nystrom:  # same value as the coefficient form over the training points
        V, _, v = whitened.unpack(params)
        coefficients = model.pack(*whitened.to_coefficients(V, v))
        expected = penalised_objective(coefficients, model, data_term, penalty)[0]
        assert_allclose(objective(params)[0], expected, rtol=1e-9)


def _heteroscedastic(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=n)
    return x[:, None], np.sin(2 * x) + (0.2 + 0.3 * np.abs(x)) * rng.normal(size=n)


def _huber(p, kappa):
    return np.where(np.abs(p) <= kappa, p * p / (2 * kappa), np.abs(p) - kappa / 2)


def _dense_newton_solve(model, y, anchors, weights, lambda_, lambda_b, lambda_nc, kappa):
    """Minimise the ∞-QR objective over the packed coefficients p = [vec A, vec B, c] with a
    damped Newton method, independently of WhitenedModel and L-BFGS-B.

    Everything is dense: the maps p ↦ H and p ↦ ∂_θH are assembled column by column, the
    penalty Hessian R (the nm-Kronecker Gram matrix λ K_X ⊗ M ⊕ λ_b K_b) from the penalty's
    gradient, and the problem is solved in z = R^{1/2} p, where the penalty is ½‖z‖² and the
    Huber-smoothed data term is piecewise quadratic. Returns (p, value, Newton decrement²).
    """
    basis = np.eye(model.n_params)
    penalty = ridge_penalty(lambda_, lambda_b)
    J_H = np.column_stack([model.predict(*model.unpack(e)).ravel() for e in basis])
    J_S = np.column_stack([model.predict_dtheta(*model.unpack(e)).ravel() for e in basis])
    R = np.column_stack([model.pack(*penalty(model, *model.unpack(e))[1:]) for e in basis])
    s, U = np.linalg.eigh(0.5 * (R + R.T))
    keep = s > 1e-13 * s.max()
    T = U[:, keep] / np.sqrt(s[keep])  # p = T z
    n = len(y)
    level = np.broadcast_to(anchors, (n, len(anchors))).ravel()
    w = np.broadcast_to(weights / n, (n, len(anchors))).ravel()
    targets = np.repeat(y, len(anchors))

    def value_gradient_hessian(z):
        p = T @ z
        r, slope = targets - J_H @ p, J_S @ p
        huber_r = np.where(np.abs(r) <= kappa, r * r / (2 * kappa), np.abs(r) - kappa / 2)
        huber_s = np.where(
            np.abs(slope) <= kappa, slope**2 / (2 * kappa), np.abs(slope) - kappa / 2
        )
        value = np.sum(w * (huber_r / 2 + (level - 0.5) * r))
        value += lambda_nc * np.sum(w * (huber_s - slope) / 2) + 0.5 * z @ z
        d_h = -w * (np.clip(r / kappa, -1, 1) / 2 + level - 0.5)
        d_s = lambda_nc * w * (np.clip(slope / kappa, -1, 1) - 1) / 2
        curvature_h = w * (np.abs(r) <= kappa) / (2 * kappa)
        curvature_s = lambda_nc * w * (np.abs(slope) <= kappa) / (2 * kappa)
        A_H, A_S = J_H @ T, J_S @ T
        gradient = A_H.T @ d_h + A_S.T @ d_s + z
        hessian = (A_H.T * curvature_h) @ A_H + (A_S.T * curvature_s) @ A_S + np.eye(len(z))
        return value, gradient, hessian

    z = np.zeros(T.shape[1])
    for _ in range(200):
        value, gradient, hessian = value_gradient_hessian(z)
        step = np.linalg.solve(hessian, gradient)
        decrement2 = float(gradient @ step)
        if decrement2 < 1e-24:
            break
        t = 1.0
        while value_gradient_hessian(z - t * step)[0] > value - 0.25 * t * decrement2:
            t /= 2
        z = z - t * step
    return T @ z, value, decrement2


def test_whitened_fit_reaches_the_optimum_of_a_dense_newton_solve():
    # The whitened L-BFGS-B fit against the same objective minimised by damped Newton on the
    # dense Kronecker form over every training point (not only the pivots of K_X).
    X, y = _heteroscedastic(15, 11)
    lambda_, lambda_b, lambda_nc, kappa = 1e-2, 1e-3, 1.0, 1e-2
    estimator = InfiniteQuantileRegressor(
        n_anchors=3,
        lambda_=lambda_,
        lambda_b=lambda_b,
        lambda_nc=lambda_nc,
        tol=1e-13,
        rearrange=False,  # the fitted model h itself
    ).fit(X, y)
    assert estimator.converged_
    fitted = estimator.model_
    X_standardised = estimator._transform_X(X)
    model = DecomposableModel(fitted.input_kernel, fitted.theta_kernel, fitted.bias_kernel)
    model.precompute(X_standardised, estimator.anchors_)
    y_standardised = (y - estimator.y_mean_) / estimator.y_scale_
    params, optimum, decrement2 = _dense_newton_solve(
        model, y_standardised, estimator.anchors_, estimator.weights_, lambda_, lambda_b,
        lambda_nc, kappa,
    )  # fmt: skip
    assert decrement2 < 1e-24  # Newton converged: optimum is the minimum to ~1e-24
    # The same objective, evaluated by the library, at Newton's solution.
    data_term = quantile_risk(y_standardised, estimator.anchors_, estimator.weights_, 1.0, kappa)
    library_value = penalised_objective(params, model, data_term, ridge_penalty(lambda_, lambda_b))
    assert_allclose(library_value[0], optimum, rtol=1e-12)
    gap = estimator.objective_ - optimum
    assert -1e-12 <= gap <= 1e-9 * optimum
    # Strong convexity (modulus λ in ‖f‖, λ_b in ‖b‖): a gap δ bounds the RKHS distance by
    # √(2δ/min(λ, λ_b)), and |Δh(x)(θ)| ≤ that × sup √(k_X k_Θ) (= 1) plus the same for b.
    alpha, beta, bias = model.unpack(params)
    levels = np.array([0.2, 0.5, 0.8])
    X_test = np.linspace(-2, 2, 25)[:, None]
    newton = estimator.y_mean_ + estimator.y_scale_ * model.predict(
        alpha, beta, bias, X=estimator._transform_X(X_test), theta=levels
    )
    bound = 2 * np.sqrt(2 * max(gap, 1e-16) / lambda_b) * estimator.y_scale_
    assert_allclose(estimator.predict(X_test, levels), newton, atol=max(bound, 1e-6))


def test_full_rank_nystrom_equals_the_exact_model():
    X, y = _heteroscedastic(60, 12)
    params = dict(n_anchors=6, lambda_=1e-3, lambda_b=1e-3, tol=1e-12)
    exact = InfiniteQuantileRegressor(**params).fit(X, y)
    nystrom = InfiniteQuantileRegressor(**params, n_components=60, random_state=0).fit(X, y)
    assert exact.converged_ and nystrom.converged_
    X_test = np.linspace(-2, 2, 9)[:, None]
    assert_allclose(nystrom.objective_, exact.objective_, rtol=1e-7)
    # Both stop at L-BFGS-B's tolerance: with strong convexity (λ = λ_b = 1e-3) an objective
    # gap δ ≤ 1e-7 × objective allows an RKHS distance √(2δ/λ) ≈ 1e-3, in units of sd(y).
    assert_allclose(nystrom.predict(X_test), exact.predict(X_test), atol=1e-3 * np.std(y))


def test_low_rank_model_is_close_to_the_exact_one_on_smooth_data():
    X, y = _heteroscedastic(300, 13)
    X_test, y_test = _heteroscedastic(2000, 14)
    common = dict(n_anchors=10, lambda_=1e-3)
    exact = InfiniteQuantileRegressor(**common).fit(X, y)
    low_rank = InfiniteQuantileRegressor(**common, n_components=40, random_state=0).fit(X, y)
    assert low_rank.model_.n_samples == 40
    levels = np.array([0.1, 0.5, 0.9])
    exact_loss = pinball_loss(y_test, exact.predict(X_test, levels), levels)
    low_rank_loss = pinball_loss(y_test, low_rank.predict(X_test, levels), levels)
    assert abs(low_rank_loss - exact_loss) <= 0.02 * exact_loss


def test_landmarks_follow_random_state():
    X, y = _heteroscedastic(50, 15)
    fits = [
        InfiniteQuantileRegressor(
            lambda_=1e-3, n_anchors=4, n_components=10, random_state=seed
        ).fit(X, y)
        for seed in (0, 0, 1)
    ]
    assert_allclose(fits[0].model_.X_, fits[1].model_.X_)
    assert not np.allclose(fits[0].model_.X_, fits[2].model_.X_)


@pytest.mark.parametrize(
    "estimator",
    [InfiniteQuantileRegressor, InfiniteCostSensitiveClassifier, InfiniteLevelSetEstimator],
)
@pytest.mark.parametrize("n_components", [0, -3, 2.5, "10"])
def test_bad_n_components_is_rejected(estimator, n_components):
    X, y = _heteroscedastic(10, 16)
    with pytest.raises(ValueError, match="n_components"):
        estimator(n_components=n_components).fit(X, (y > 0).astype(int))


def test_vanishing_input_kernel_leaves_a_bias_only_model():
    # A linear k_X on a constant (standardised to zero) input is identically zero: no pivot,
    # rank 0, and the quantiles come from the bias b(θ) alone, the same for every x.
    X, y = np.ones((20, 1)), np.random.default_rng(17).normal(size=20)
    model = InfiniteQuantileRegressor(input_kernel=Linear(), n_anchors=5).fit(X, y)
    assert model.n_components_ == 0
    quantiles = model.predict(X[:3], [0.1, 0.5, 0.9])
    assert_allclose(quantiles, np.broadcast_to(quantiles[0], quantiles.shape))
    assert np.all(np.diff(quantiles[0]) > 0)
