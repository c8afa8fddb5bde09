"""∞-QR's choice of λ and bandwidth inside ``fit`` (the default, or ``cv``): the held-out
risks of the shared factorisation and warm-started λ path against a brute-force loop that
factorises each fold's own points and fits every setting from zero; the refit against a plain
fit with the chosen values; bad ``cv`` values."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.model_selection import KFold

from manytask.itl import InfiniteQuantileRegressor, quantile, selection
from manytask.itl._estimator import minimise, ridge_penalty
from manytask.itl.kernel_quantile import quantile_risk
from manytask.itl.losses import pinball
from manytask.itl.model import DecomposableModel
from manytask.itl.quadrature import gauss_legendre
from manytask.kernels import RBF

TIGHT = 1e-12
#: Solver settings under which a warm-started and a cold fit reach the same optimum.
CONVERGED = {"tol": TIGHT, "max_iter": 100000}
#: Bound on the objective gap L-BFGS-B leaves at ftol = TIGHT on these problems.
GAP = 1e-7


def _assert_same_optimum(model, plain, X, levels):
    """The refit of ``model`` starts from the fold fits, ``plain``'s from zero: the same
    strictly convex problem, solved to ftol = TIGHT, where L-BFGS-B leaves an objective gap
    δ ≤ GAP (up to 1.1e-8 measured between the two here; 10× for other CPUs). λ-strong
    convexity (k_X k_Θ ≤ 1) then gives ‖Δh‖∞ ≤ 2√(2 GAP/λ) in standardised units, × the
    scale of y in those of y."""
    assert abs(model.objective_ - plain.objective_) <= GAP
    atol = 2 * np.sqrt(2 * GAP / model.selected_lambda_) * model.y_scale_
    assert_allclose(model.predict(X, levels), plain.predict(X, levels), rtol=0, atol=atol)


def _data(n=36, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 1))
    return X, np.sin(3 * X[:, 0]) + (0.2 + 0.3 * np.abs(X[:, 0])) * rng.normal(size=n)


def _brute_force_risks(X, y, bandwidths, lambdas, folds, quadrature, seed, max_splits=None):
    """Held-out integrated pinball risk, each fold and setting factorised and fitted alone
    (over the first ``max_splits`` splits only, if given), and the mean over the splits of
    the fold fits' h(x_i)(θ_j) at every training point, shape (bandwidths, λ, n, m)."""
    splits = list(KFold(folds, shuffle=True, random_state=seed).split(X))[:max_splits]
    anchors, weights = quadrature.anchors, quadrature.weights
    risks = np.zeros((len(bandwidths), len(lambdas)))
    fitted = np.zeros((len(bandwidths), len(lambdas), len(X), len(anchors)))
    for train, test in splits:
        for b, bandwidth in enumerate(bandwidths):
            for index, lambda_ in enumerate(lambdas):
                model = DecomposableModel(RBF(bandwidth), RBF(0.2), RBF(0.2))
                whitened = InfiniteQuantileRegressor()._precompute(model, X[train], anchors)
                term = quantile_risk(y[train], anchors, weights, 1.0, 1e-2)
                result = minimise(whitened, term, ridge_penalty(lambda_, 1e-6), 20000, TIGHT)
                V, _, v = whitened.unpack(result.x)
                A, B, c = whitened.to_coefficients(V, v)
                values = model.predict(A, B, c, X=X[test], theta=anchors)
                held_out = pinball(y[test][:, None], values, anchors[None, :])
                risks[b, index] += np.mean(held_out, axis=0) @ weights
                fitted[b, index] += model.predict(A, B, c, X=X, theta=anchors)
    return risks / len(splits), fitted / len(splits)


@pytest.mark.parametrize("max_splits", [None, 1])
def test_shared_factorisation_path_equals_separate_fold_fits(monkeypatch, max_splits):
    # With CV_TOL lowered both computations converge; they differ only in the factorisation
    # (all points vs the fold's) and the warm starts, which leave the optimum unchanged.
    monkeypatch.setattr(selection, "CV_TOL", TIGHT)
    X, y = _data()
    quadrature = gauss_legendre(8, (0.0, 1.0))
    bandwidths, lambdas, folds = (0.3, 1.0), (1e-3, 1e-1, 1e-5, 1e-2), 3

    def whiten(bandwidth):
        model = DecomposableModel(RBF(bandwidth), RBF(0.2), RBF(0.2))
        return InfiniteQuantileRegressor()._precompute(model, X, quadrature.anchors)

    def data_term(y_fold):
        return quantile_risk(y_fold, quadrature.anchors, quadrature.weights, 1.0, 1e-2)

    risks, start = selection.cross_validate_quantiles(
        X, y, bandwidths, lambdas, folds, whiten, data_term, 1e-6, quadrature.anchors,
        quadrature.weights, 20000, TIGHT, random_state=0, max_splits=max_splits,
    )  # fmt: skip
    seed = int(np.random.default_rng(0).integers(2**31))  # the folds' seed from random_state
    expected, fold_h = _brute_force_risks(
        X, y, bandwidths, lambdas, folds, quadrature, seed, max_splits
    )
    # Early stopping: along λ largest first, the fitted (finite) risks are a prefix that
    # falls (ties within the tolerance below aside) until its last step, which rose unless
    # the path ran out; the settings past it are +∞.
    order = np.argsort(lambdas)[::-1]
    for path, full in zip(risks[:, order], expected[:, order]):
        fitted = int(np.sum(np.isfinite(path)))
        assert np.all(np.isfinite(path[:fitted])) and np.all(np.isposinf(path[fitted:]))
        assert np.all(np.diff(full[: fitted - 1]) <= 1e-4)
        assert fitted == len(path) or full[fitted - 1] > full[fitted - 2] - 1e-4
    finite = np.isfinite(risks)
    if max_splits is None:  # the rule is exercised here: a path stops before λ = 1e-5
        assert np.sum(~finite) > 0
    # Both stop at ftol = TIGHT, an objective gap δ ≲ TIGHT × f(0) ≤ 1e-12; λ-strong
    # convexity gives ‖Δh‖∞ ≤ √(2δ/λ) (k_X k_Θ ≤ 1), and the held-out pinball risk is
    # 1-Lipschitz in h for the sup norm (its weights sum to 1), per fold and so on average.
    bound = np.broadcast_to(np.sqrt(2 * TIGHT / np.asarray(lambdas)), risks.shape)
    assert np.all(np.abs(risks[finite] - expected[finite]) <= bound[finite])
    # The warm start: the fold fits' mean at the least risk, in the coordinates of the
    # features of all n points, so h of the mean is the mean of the folds' h (h is linear in
    # the parameters), within the same bound in the root mean square over the training
    # points and the quadrature of the levels (no larger than the sup norm).
    best = np.unravel_index(np.argmin(risks), risks.shape)
    V, _, v = whiten(bandwidths[best[0]]).unpack(start)
    h = whiten(bandwidths[best[0]]).predict(V, None, v)
    assert np.sqrt(np.mean((h - fold_h[best]) ** 2, axis=0) @ quadrature.weights) <= bound[best]


def test_cv_refits_with_the_setting_of_least_held_out_risk():
    X, y = _data(n=40, seed=1)
    model = InfiniteQuantileRegressor(cv=3, n_anchors=8, random_state=0, **CONVERGED).fit(X, y)
    best = np.unravel_index(np.argmin(model.cv_risks_), model.cv_risks_.shape)
    assert model.cv_risks_.shape == (len(selection.BANDWIDTH_FACTORS), len(selection.LAMBDA_PATH))
    assert model.selected_lambda_ == selection.LAMBDA_PATH[best[1]]
    plain = InfiniteQuantileRegressor(
        n_anchors=8,
        lambda_=model.selected_lambda_,
        input_bandwidth=model.selected_input_bandwidth_,
        random_state=0,
        **CONVERGED,
    ).fit(X, y)
    levels = [0.1, 0.5, 0.9]
    _assert_same_optimum(model, plain, X, levels)


def test_cv_keeps_a_given_bandwidth_and_skips_small_samples():
    X, y = _data(n=40, seed=2)
    model = InfiniteQuantileRegressor(cv=2, n_anchors=6, input_bandwidth=0.7).fit(X, y)
    assert model.cv_risks_.shape == (1, len(selection.LAMBDA_PATH))
    assert model.selected_input_bandwidth_ == 0.7
    small = InfiniteQuantileRegressor(cv=5, n_anchors=6).fit(X[:9], y[:9])  # 9 < 2 × 5
    assert not hasattr(small, "cv_risks_")


@pytest.mark.parametrize("cv", [1, 0, 2.5, "5", True])
def test_bad_cv_is_a_value_error(cv):
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="cv"):
        InfiniteQuantileRegressor(cv=cv).fit(X, y)


@pytest.mark.parametrize("small_set", [1000, 30])  # 40 points: 3 folds, then one held out
def test_default_chooses_from_the_data_and_refits_with_the_choice(monkeypatch, small_set):
    monkeypatch.setattr(quantile, "SMALL_SET", small_set)
    X, y = _data(n=40, seed=1)
    model = InfiniteQuantileRegressor(
        n_anchors=8, random_state=0, aggregate=False, **CONVERGED
    ).fit(X, y)
    best = np.unravel_index(np.argmin(model.cv_risks_), model.cv_risks_.shape)
    assert model.cv_risks_.shape == (len(selection.BANDWIDTH_FACTORS), len(selection.LAMBDA_PATH))
    assert model.selected_lambda_ == selection.LAMBDA_PATH[best[1]]
    plain = InfiniteQuantileRegressor(
        n_anchors=8,
        lambda_=model.selected_lambda_,
        input_bandwidth=model.selected_input_bandwidth_,
        random_state=0,
        **CONVERGED,
    ).fit(X, y)
    assert not hasattr(plain, "cv_risks_")  # a given λ is fixed: no choice
    levels = [0.1, 0.5, 0.9]
    _assert_same_optimum(model, plain, X, levels)


def test_default_on_too_few_points_falls_back_to_a_fixed_lambda():
    X, y = _data(n=5, seed=3)
    model = InfiniteQuantileRegressor(n_anchors=4).fit(X, y)  # 5 < 2 × 3 folds
    fixed = InfiniteQuantileRegressor(n_anchors=4, lambda_=quantile.FALLBACK_LAMBDA).fit(X, y)
    assert not hasattr(model, "cv_risks_")
    assert_allclose(model.predict(X, [0.3, 0.7]), fixed.predict(X, [0.3, 0.7]), atol=1e-12)


def test_warm_start_is_that_of_the_first_setting_within_the_slack():
    # With an infinite slack every setting is within it: the start returned is the folds'
    # mean fit at the first bandwidth and the first λ, which the path fits first, from zero:
    # the same fits as a search of that one setting alone.
    X, y = _data(n=30, seed=4)
    quadrature = gauss_legendre(6, (0.0, 1.0))

    def whiten(bandwidth):
        model = DecomposableModel(RBF(bandwidth), RBF(0.2), RBF(0.2))
        return InfiniteQuantileRegressor()._precompute(model, X, quadrature.anchors)

    def data_term(y_fold):
        return quantile_risk(y_fold, quadrature.anchors, quadrature.weights, 1.0, 1e-2)

    def score(held_out, params, y_held_out):
        return selection.held_out_risk(
            held_out, params, y_held_out, quadrature.anchors, quadrature.weights
        )

    def search(bandwidths, lambdas, slack):
        return selection.cross_validate(
            X, y, bandwidths, lambdas, 3, whiten, data_term, ridge_penalty, score, 200, 1e-8,
            random_state=0, slack=slack,
        )  # fmt: skip

    risks, start = search((0.5, 1.0), (1e-2, 1e-3, 1e-4), np.inf)
    alone_risks, alone = search((0.5,), (1e-2,), 0.0)
    assert_allclose(risks[0, 0], alone_risks[0, 0], rtol=1e-12)
    assert_allclose(start, alone, rtol=1e-12, atol=1e-12)
    _, least = search((0.5, 1.0), (1e-2, 1e-3, 1e-4), 0.0)
    if np.argmin(risks) != 0:  # no slack: the start of the least risk, another setting
        assert least.shape != start.shape or not np.allclose(least, start)
