"""The large-n path of ∞-QR: blockwise objective, Nyström default, subset selection, progress.

Independent computations: the unblocked objective (the blockwise sums must equal it to
rounding), central finite differences (its gradient), the exact model's fit (Nyström on
every point is the same problem), and the selection run by hand on the drawn subset.
"""

from __future__ import annotations

import numpy as np
import pytest

from manytask.itl import DecomposableModel, InfiniteQuantileRegressor, _estimator, kernel_quantile
from manytask.itl import quantile as quantile_module
from manytask.itl._estimator import penalised_objective, ridge_penalty
from manytask.itl.blockwise import blockwise_data_term
from manytask.itl.kernel_quantile import quantile_risk, statistical_stop
from manytask.itl.quadrature import gauss_legendre
from manytask.itl.whitening import WhitenedModel
from manytask.kernels import RBF


def heteroscedastic(n, seed, d=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    scale = 0.1 + 0.4 * np.abs(X[:, 1])
    return X, np.sin(np.pi * X[:, 0]) + scale * rng.standard_normal(n)


def problem(n=61, n_extra=9, landmarks=None, seed=0):
    """A whitened ∞-QR problem (exact, or Nyström on ``landmarks`` points), its data term
    (non-crossing on n + n_extra rows, monotone bias) and a random parameter vector."""
    X, y = heteroscedastic(n + n_extra, seed)
    anchors, weights = gauss_legendre(7)
    model = DecomposableModel(RBF(0.7), RBF(0.2), RBF(0.2))
    if landmarks is None:
        whitened = WhitenedModel(model.precompute(X, anchors))
    else:
        whitened = WhitenedModel(model.precompute(X[:landmarks], anchors), X=X)
    term = quantile_risk(y[:n], anchors, weights, 1.0, 1e-2, True, n_extra)
    params = np.random.default_rng(seed + 1).normal(scale=0.3, size=whitened.n_params)
    return whitened, term, params


@pytest.mark.parametrize("landmarks", [None, 12])
@pytest.mark.parametrize("block_rows", [1, 7, 30, 61, 69, 70, 1000])
@pytest.mark.parametrize("workers", [1, 2])
def test_blockwise_objective_equals_unblocked(landmarks, block_rows, workers):
    whitened, term, params = problem(landmarks=landmarks)
    penalty = ridge_penalty(1e-2, 1e-3)
    value, gradient = penalised_objective(params, whitened, term, penalty)
    blocked_value, blocked_gradient = penalised_objective(
        params, whitened, term, penalty, block_rows=block_rows, workers=workers
    )
    assert blocked_value == pytest.approx(value, rel=1e-10)
    scale = np.max(np.abs(gradient))
    np.testing.assert_allclose(blocked_gradient, gradient, rtol=0, atol=1e-10 * scale)


def test_blockwise_gradient_matches_finite_differences():
    whitened, term, params = problem(landmarks=12)
    penalty = ridge_penalty(1e-2, 1e-3)

    def objective(x):
        return penalised_objective(x, whitened, term, penalty, block_rows=8, workers=2)

    _, gradient = objective(params)
    rng = np.random.default_rng(3)
    step = 1e-6
    for _ in range(5):
        direction = rng.normal(size=params.size)
        direction /= np.linalg.norm(direction)
        central = (
            objective(params + step * direction)[0] - objective(params - step * direction)[0]
        ) / (2 * step)
        # C¹ Huber pieces: the central difference is exact to O(step) where a kink of ψ_κ
        # lies within the step, O(step²) elsewhere; the value's rounding adds ~1e-16/step.
        assert central == pytest.approx(gradient @ direction, rel=1e-5, abs=1e-7)


def test_blockwise_data_term_without_rows_argument_fails_loudly():
    whitened, _, params = problem(landmarks=12)
    V, _, v = whitened.unpack(params)

    def term(model, alpha, beta, bias):
        return 0.0, np.zeros((model.n_samples, model.n_anchors)), None, None

    with pytest.raises(TypeError):
        blockwise_data_term(whitened, term, V, v, block_rows=10)


def test_nystrom_on_every_point_fits_the_exact_model():
    X, y = heteroscedastic(40, 5)
    settings = dict(lambda_=1e-2, n_anchors=7, tol=1e-12, max_iter=20_000, random_state=0)
    exact = InfiniteQuantileRegressor(**settings).fit(X, y)
    nystrom = InfiniteQuantileRegressor(n_components=40, **settings).fit(X, y)
    assert exact.converged_ and nystrom.converged_
    # Same strictly convex problem (ridge λ in whitened coordinates, K_X represented to
    # 1e-14 by both factorisations): objectives agree to the solver's ftol, and
    # ‖ΔV‖ ≤ √(2 Δf / λ) with Δf ~ 1e-11 bounds the standardised predictions' gap by ~1e-4
    # (k_X(x, x) = k_Θ(θ, θ) = 1).
    assert nystrom.objective_ == pytest.approx(exact.objective_, rel=1e-9)
    levels = [0.1, 0.5, 0.9]
    gap = np.abs(nystrom.predict(X, levels) - exact.predict(X, levels)) / exact.y_scale_
    assert np.max(gap) < 1e-3


def test_blockwise_fit_equals_unblocked_fit(monkeypatch):
    X, y = heteroscedastic(40, 2)
    settings = dict(lambda_=1e-1, n_anchors=5, n_components=10, tol=1e-12, max_iter=20_000)
    whole = InfiniteQuantileRegressor(random_state=0, **settings).fit(X, y)
    monkeypatch.setattr(_estimator, "BLOCK_ROWS", 8)  # the name _fit_model reads
    blocked = InfiniteQuantileRegressor(random_state=0, **settings).fit(X, y)
    assert whole.converged_ and blocked.converged_
    assert blocked.objective_ == pytest.approx(whole.objective_, rel=1e-9)
    gap = np.abs(blocked.predict(X, [0.1, 0.9]) - whole.predict(X, [0.1, 0.9]))
    assert np.max(gap) / whole.y_scale_ < 1e-3  # the bound of the test above


@pytest.fixture
def small_large_n(monkeypatch):
    """The large-n thresholds scaled down so that 150 points take the large-n path."""
    monkeypatch.setattr(quantile_module, "EXACT_MAX_ROWS", 100)
    monkeypatch.setattr(quantile_module, "LARGE_N_COMPONENTS", 20)
    monkeypatch.setattr(quantile_module, "LARGE_N_ANCHORS", 6)
    monkeypatch.setattr(quantile_module, "SELECTION_ROWS", 60)


def test_large_n_defaults_switch_to_nystrom(small_large_n):
    X, y = heteroscedastic(150, 4)
    model = InfiniteQuantileRegressor(lambda_=1e-2, random_state=0).fit(X, y)
    assert model.n_components_ <= 20 and len(model.model_.X_) == 20
    assert len(model.anchors_) == quantile_module.LARGE_N_ANCHORS
    few = InfiniteQuantileRegressor(lambda_=1e-2, random_state=0).fit(X[:90], y[:90])
    assert len(few.anchors_) == 20  # max(⌈√90⌉, 20) Gauss–Legendre anchors, as before
    # exact: the pivoted Cholesky's pivots are the landmarks, as many as the rank
    assert len(few.model_.X_) == few.n_components_
    exact = InfiniteQuantileRegressor(lambda_=1e-2, n_anchors=7, n_components=None)
    assert len(exact.fit(X, y).model_.X_) == exact.n_components_  # None: exact at any n


def test_n_components_is_validated():
    X, y = heteroscedastic(30, 1)
    for bad in ("exact", 0, 2.5):
        model = InfiniteQuantileRegressor(lambda_=1e-2, n_components=bad)
        with pytest.raises(ValueError, match="n_components"):
            model.fit(X, y)
        assert not hasattr(model, "model_")


# The test is about the selection (its held-out risks), not the final fit's convergence:
# 200 iterations keep it short.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_subset_selection_is_the_selection_on_the_drawn_subset(small_large_n):
    X, y = heteroscedastic(150, 6)
    settings = dict(n_anchors=7, random_state=0, max_iter=200, input_bandwidth=1.0)
    model = InfiniteQuantileRegressor(**settings).fit(X, y)
    again = InfiniteQuantileRegressor(**settings).fit(X, y)
    np.testing.assert_array_equal(again.cv_risks_, model.cv_risks_)
    np.testing.assert_allclose(again.predict(X, [0.2, 0.8]), model.predict(X, [0.2, 0.8]))
    # By hand: the same 60 rows (the estimator's draw), the same 20 landmarks, the same folds.
    rows = np.random.default_rng(0).permutation(150)[:60]  # the first 60 in random order
    subset = InfiniteQuantileRegressor(n_components=20, **settings)
    subset.fit(X[rows], y[rows])
    np.testing.assert_array_equal(subset.cv_risks_, model.cv_risks_)
    assert model.selected_lambda_ == subset.selected_lambda_


@pytest.mark.parametrize("verbose", [0, 2])
def test_progress_bar_follows_verbose(verbose, capsys):
    X, y = heteroscedastic(30, 1)
    InfiniteQuantileRegressor(lambda_=1e-2, n_anchors=5, verbose=verbose).fit(X, y)
    err = capsys.readouterr().err
    assert ("L-BFGS-B iterations" in err) == (verbose > 0)


def test_verbose_is_validated():
    X, y = heteroscedastic(30, 1)
    model = InfiniteQuantileRegressor(lambda_=1e-2, verbose=-1)
    with pytest.raises(ValueError, match="verbose"):
        model.fit(X, y)
    assert not hasattr(model, "model_")


# --------------------------------------------------------------- continuation and stopping
@pytest.fixture
def small_continuation(small_large_n, monkeypatch):
    """Stages of 60 and 120 rows before the fit on all of them (n >= 240)."""
    monkeypatch.setattr(quantile_module, "CONTINUATION_FACTOR", 2)


def test_continuation_sizes(small_continuation):
    assert quantile_module.continuation_sizes(239) == [60]
    assert quantile_module.continuation_sizes(240) == [60, 120]
    assert quantile_module.continuation_sizes(1000) == [60, 120, 240, 480]


def test_continuation_without_the_rule_reaches_the_cold_minimiser(small_continuation, monkeypatch):
    X, y = heteroscedastic(300, 7)
    settings = dict(lambda_=1e-2, input_bandwidth=1.0, tol=1e-12, max_iter=20_000, random_state=0)
    monkeypatch.setattr(kernel_quantile, "statistical_stop", lambda risks, n: lambda value: False)
    monkeypatch.setattr(quantile_module, "LARGE_N_DTYPE", np.float64)  # to tol = 1e-12
    warm = InfiniteQuantileRegressor(**settings).fit(X, y)
    monkeypatch.setattr(quantile_module, "continuation_sizes", lambda n: [])
    cold = InfiniteQuantileRegressor(**settings).fit(X, y)
    assert warm.converged_ and cold.converged_
    # The stages change only the starting point of one strictly convex problem: the bound of
    # test_nystrom_on_every_point_fits_the_exact_model.
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-9)
    gap = np.abs(warm.predict(X, [0.1, 0.5, 0.9]) - cold.predict(X, [0.1, 0.5, 0.9]))
    assert np.max(gap) / cold.y_scale_ < 1e-3


def test_continuation_stages_are_the_first_rows_of_one_problem(small_continuation, monkeypatch):
    """Every stage minimises the objective of the first rows in the final coordinates: each
    stage's data term evaluated by hand on those rows equals the one the stage used."""
    X, y = heteroscedastic(300, 8)
    calls = []
    minimise = kernel_quantile.minimise

    def recording(problem, term, penalty, max_iter, tol, start, blocks, progress, stop):
        calls.append((problem, term))
        return minimise(problem, term, penalty, max_iter, tol, start, blocks, progress, stop)

    monkeypatch.setattr(kernel_quantile, "minimise", recording)
    model = InfiniteQuantileRegressor(lambda_=1e-2, input_bandwidth=1.0, random_state=0)
    model.fit(X, y)
    assert [problem.n_samples for problem, _ in calls] == [60, 120]
    order = np.random.default_rng(0).permutation(300)  # the estimator's random order
    y_standardised = (y[order] - model.y_mean_) / model.y_scale_
    params = np.random.default_rng(1).normal(scale=0.3, size=calls[0][0].n_params)
    for problem, term in calls:
        size = problem.n_samples
        by_hand = quantile_risk(
            y_standardised[:size], model.anchors_, model.weights_, 1.0, model.kappa
        )
        V, _, v = problem.unpack(params)
        assert term(problem, V, None, v)[0] == pytest.approx(by_hand(problem, V, None, v)[0])
        # a view of the final features, no copy
        assert np.shares_memory(problem.features_, calls[-1][0].features_)


def test_statistical_stop_threshold_is_one_standard_error():
    risks = np.random.default_rng(0).exponential(size=50)
    t = np.std(risks, ddof=1) / np.sqrt(400)  # ŝ/√n by hand
    stop = statistical_stop(risks, n=400, window=3)
    values = [1.0, 0.9, 0.8, 0.7, 0.7 - 2 * t, 0.7 - 2 * t, 0.7 - 2 * t, 0.7 - 2.5 * t]
    # decreases over 3 iterations, from the 4th value on: 0.3, 0.2 + 2t, 0.1 + 2t, 2t, t/2
    assert [stop(value) for value in values] == [False] * 7 + [True]


# float32 products cannot meet tol = 1e-12: L-BFGS-B's line search ends the float32 fit.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_float32_features_fit_the_float64_problem(small_large_n, monkeypatch):
    X, y = heteroscedastic(300, 9)
    settings = dict(lambda_=1e-2, input_bandwidth=1.0, tol=1e-12, max_iter=20_000, random_state=0)
    monkeypatch.setattr(kernel_quantile, "statistical_stop", lambda risks, n: lambda value: False)
    single = InfiniteQuantileRegressor(**settings).fit(X, y)
    assert single.model_.X_.dtype == np.float64  # the landmarks; Φ was float32
    monkeypatch.setattr(quantile_module, "LARGE_N_DTYPE", np.float64)
    double = InfiniteQuantileRegressor(**settings).fit(X, y)
    assert double.converged_
    # Φ rounded to float32 (relative 6e-8) moves the objective by about that much; its
    # minimiser then lies within Δf ~ 1e-7 of the float64 one's value, and ‖ΔV‖ ≤ √(2Δf/λ)
    # ~ 5e-3 in a λ-strongly convex objective bounds the standardised predictions' gap.
    assert single.objective_ == pytest.approx(double.objective_, rel=1e-6)
    gap = np.abs(single.predict(X, [0.1, 0.5, 0.9]) - double.predict(X, [0.1, 0.5, 0.9]))
    assert np.max(gap) / double.y_scale_ < 1e-2


def test_blockwise_objective_never_holds_an_n_by_m_array():
    """Memory bound of the blocks: the blocked evaluation's peak allocation stays below one
    n × m float64 array, which the unblocked evaluation holds several of (H, ∂_θH, G, G')."""
    import tracemalloc

    X, y = heteroscedastic(20_000, 10)
    anchors, weights = gauss_legendre(7)
    model = DecomposableModel(RBF(0.7), RBF(0.2), RBF(0.2)).precompute(X[:20], anchors)
    whitened = WhitenedModel(model, X=X)
    term = quantile_risk(y, anchors, weights, 1.0, 1e-2)
    penalty = ridge_penalty(1e-2, 1e-3)
    params = np.random.default_rng(0).normal(scale=0.3, size=whitened.n_params)
    one_array = len(X) * len(anchors) * 8

    def peak(**blocks):
        tracemalloc.start()
        penalised_objective(params, whitened, term, penalty, **blocks)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    assert peak() > 3 * one_array
    assert peak(block_rows=500, workers=1) < one_array


def test_progress_bar_covers_the_continuation(small_continuation, capsys):
    X, y = heteroscedastic(300, 1)
    InfiniteQuantileRegressor(lambda_=1e-2, input_bandwidth=1.0, verbose=2).fit(X, y)
    err = capsys.readouterr().err
    assert "first 60 rows" in err and "first 120 rows" in err
