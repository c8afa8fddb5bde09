"""Bad input to the posteriors: a clear ValueError naming the parameter, and no half-update.

Also the ill-conditioned case (duplicated inputs, noise 1e-12): the Cholesky factorisation
either succeeds with jitter and a RuntimeWarning, or raises NotPositiveDefiniteError.
"""

import warnings

import numpy as np
import pytest

from manytask.kernels import RBF, Diagonal, Matern, Separable, SumOfSeparable
from manytask.linalg import NotPositiveDefiniteError
from manytask.posterior import ExactPosterior, NystromPosterior

NOISE = 0.1
N_TASKS = 3

POSTERIORS = {
    "exact": lambda kernel, **kw: ExactPosterior(kernel, NOISE, **kw),
    "nystrom": lambda kernel, **kw: NystromPosterior(kernel, NOISE, q=4.0, random_state=0, **kw),
}


def separable_kernel():
    rng = np.random.default_rng(0)
    A = rng.uniform(0.0, 1.0, (N_TASKS, N_TASKS))
    return Separable(RBF(0.3), A.T @ A)


def sum_of_separable_kernel():
    return SumOfSeparable([(RBF(0.3), np.eye(N_TASKS)), (Matern(0.6), np.ones((3, 3)))])


def data(n_observations=8, n_features=2, seed=1):
    rng = np.random.default_rng(seed)
    return (
        rng.uniform(0.0, 1.0, (n_observations, n_features)),
        rng.standard_normal((n_observations, N_TASKS)),
    )


@pytest.fixture(params=sorted(POSTERIORS))
def make_posterior(request):
    return POSTERIORS[request.param]


# ---- fit ------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_X_is_rejected(make_posterior, bad):
    X, Y = data()
    X[2, 1] = bad
    with pytest.raises(ValueError, match=r"X must be finite"):
        make_posterior(separable_kernel()).fit(X, Y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_Y_is_rejected(make_posterior, bad):
    X, Y = data()
    Y[5, 0] = bad
    posterior = make_posterior(separable_kernel())
    if np.isnan(bad) and posterior.allows_missing:  # NaN: a task not observed at that x
        posterior.fit(X, Y)
        return
    with pytest.raises(ValueError, match=r"Y must be finite"):
        posterior.fit(X, Y)


def test_X_and_Y_with_different_numbers_of_rows_are_rejected(make_posterior):
    X, Y = data()
    with pytest.raises(ValueError, match=r"X has 8 rows but Y has 7"):
        make_posterior(separable_kernel()).fit(X, Y[:7])


@pytest.mark.parametrize("n_columns", [1, 2, 4])
def test_Y_with_wrong_number_of_tasks_is_rejected(make_posterior, n_columns):
    X, _ = data()
    Y = np.zeros((len(X), n_columns))
    with pytest.raises(ValueError, match=r"Y must have shape \(n_samples, 3\).*n_tasks=3"):
        make_posterior(separable_kernel()).fit(X, Y)


def test_one_dimensional_Y_is_rejected_for_several_tasks(make_posterior):
    X, Y = data()
    with pytest.raises(ValueError, match=r"Y must have shape"):
        make_posterior(separable_kernel()).fit(X, Y[:, 0])


def test_non_finite_candidates_are_rejected(make_posterior):
    X, Y = data()
    candidates = np.full((4, 2), np.nan)
    with pytest.raises(ValueError, match=r"candidates must be finite"):
        make_posterior(separable_kernel()).fit(X, Y, candidates=candidates)


def test_candidates_with_wrong_number_of_features_are_rejected(make_posterior):
    X, Y = data()
    with pytest.raises(ValueError, match=r"candidates has 3 features, expected 2"):
        make_posterior(separable_kernel()).fit(X, Y, candidates=np.zeros((4, 3)))


# ---- add ------------------------------------------------------------------------------------
@pytest.mark.parametrize("y", [np.zeros(2), np.zeros(4), np.zeros((2, 3))])
def test_add_with_wrong_number_of_outputs_is_rejected(make_posterior, y):
    X, Y = data()
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    with pytest.raises(ValueError, match=r"y must have 3 values \(n_tasks\)"):
        posterior.add(X[0], y)


@pytest.mark.parametrize("x", [np.zeros(1), np.zeros(3)])
def test_add_with_wrong_number_of_features_is_rejected(make_posterior, x):
    X, Y = data()
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    with pytest.raises(ValueError, match=r"x must have 2 features"):
        posterior.add(x, Y[0])


@pytest.mark.parametrize("field", ["x", "y"])
def test_add_with_nan_is_rejected(make_posterior, field):
    X, Y = data()
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    x, y = X[0].copy(), Y[0].copy()
    (x if field == "x" else y)[0] = np.nan
    if field == "y" and posterior.allows_missing:  # NaN: a task not observed at that x
        y[0] = np.inf
    with pytest.raises(ValueError, match=rf"{field} must be finite"):
        posterior.add(x, y)


@pytest.mark.parametrize("field", ["x", "y"])
def test_failed_add_leaves_posterior_unchanged(make_posterior, field):
    X, Y = data()
    candidates = np.random.default_rng(2).uniform(0.0, 1.0, (6, 2))
    posterior = make_posterior(separable_kernel()).fit(X, Y, candidates=candidates)
    mean, cov = posterior.mean(), posterior.cov()
    n_observations = posterior.n_observations
    x, y = X[0].copy(), Y[0].copy()
    (x if field == "x" else y)[-1] = np.inf if field == "y" else np.nan
    with pytest.raises(ValueError):
        posterior.add(x, y)
    with pytest.raises(ValueError):
        posterior.add(X[0], Y[0, :2])
    assert posterior.n_observations == n_observations
    np.testing.assert_array_equal(posterior.mean(), mean)
    np.testing.assert_array_equal(posterior.cov(), cov)
    # and it still grows correctly afterwards
    posterior.add(X[0], Y[0])
    assert posterior.n_observations == n_observations + 1


def test_failed_refit_leaves_previous_posterior_unchanged(make_posterior):
    # A refit that fails validation (here: NaN candidates, with inputs of another
    # dimension) must leave the earlier fit fully usable.
    X, Y = data(n_features=2)
    queries = np.random.default_rng(3).uniform(0.0, 1.0, (5, 2))
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    mean = posterior.mean(queries)
    X3, Y3 = data(n_features=3, seed=4)
    with pytest.raises(ValueError, match=r"candidates must be finite"):
        posterior.fit(X3, Y3, candidates=np.full((4, 3), np.nan))
    np.testing.assert_array_equal(posterior.mean(queries), mean)


def test_failed_refit_with_bad_Y_leaves_previous_posterior_unchanged(make_posterior):
    X, Y = data()
    queries = np.random.default_rng(5).uniform(0.0, 1.0, (5, 2))
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    mean = posterior.mean(queries)
    Y_bad = Y.copy()
    Y_bad[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"Y must be finite"):
        posterior.fit(X, Y_bad)
    np.testing.assert_array_equal(posterior.mean(queries), mean)


# ---- constructor ----------------------------------------------------------------------------
@pytest.mark.parametrize("noise", [0.0, -1.0, np.nan, np.inf])
def test_non_positive_or_non_finite_noise_is_rejected(noise):
    with pytest.raises(ValueError, match=r"noise must be > 0"):
        ExactPosterior(separable_kernel(), noise)
    with pytest.raises(ValueError, match=r"noise must be > 0"):
        NystromPosterior(separable_kernel(), noise, q=4.0)


def test_non_numeric_noise_is_rejected():
    with pytest.raises(ValueError, match=r"noise must be a real number"):
        ExactPosterior(separable_kernel(), "0.1")


def test_non_psd_task_matrix_is_rejected():
    with pytest.raises(ValueError, match=r"B must be positive semi-definite"):
        Separable(RBF(0.3), np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_non_symmetric_task_matrix_is_rejected():
    with pytest.raises(ValueError, match=r"B must be symmetric"):
        Separable(RBF(0.3), np.array([[1.0, 0.5], [0.1, 1.0]]))


def test_non_psd_task_matrix_is_rejected_in_sum_of_separable():
    with pytest.raises(ValueError, match=r"B must be positive semi-definite"):
        SumOfSeparable([(RBF(0.3), np.eye(2)), (RBF(1.0), -np.eye(2))])


def test_unknown_solver_is_rejected(make_posterior):
    with pytest.raises(ValueError, match=r"solver must be one of .*'cholesky'"):
        make_posterior(separable_kernel(), solver="cholesky")


def test_split_solver_with_sum_of_separable_kernel_is_rejected(make_posterior):
    with pytest.raises(ValueError, match=r"solver='split' needs a Separable or Diagonal"):
        make_posterior(sum_of_separable_kernel(), solver="split")


@pytest.mark.parametrize("kernel", ["rbf", None, np.eye(3)], ids=["string", "none", "matrix"])
def test_non_kernel_is_rejected(kernel):
    with pytest.raises(ValueError, match=r"kernel must be a manytask kernel"):
        ExactPosterior(kernel, NOISE)


@pytest.mark.parametrize("q", [0, 0.0, -1.0, np.nan, True, "10"])
def test_non_positive_q_is_rejected(q):
    with pytest.raises(ValueError, match=r"q must be a positive number"):
        NystromPosterior(separable_kernel(), NOISE, q=q)


def test_bad_random_state_is_rejected():
    X, Y = data()
    posterior = NystromPosterior(separable_kernel(), NOISE, q=4.0, random_state="seed")
    with pytest.raises(ValueError, match=r"random_state must be"):
        posterior.fit(X, Y)


# ---- queries --------------------------------------------------------------------------------
def test_query_with_wrong_number_of_features_is_rejected(make_posterior):
    X, Y = data()
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    with pytest.raises(ValueError, match=r"X has 3 features, expected 2"):
        posterior.mean(np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"X has 1 features, expected 2"):
        posterior.cov(np.zeros(4))


def test_query_with_nan_is_rejected(make_posterior):
    X, Y = data()
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    with pytest.raises(ValueError, match=r"X must be finite"):
        posterior.variance_norm(np.full((2, 2), np.nan))


def test_query_without_candidates_is_rejected(make_posterior):
    X, Y = data()
    posterior = make_posterior(separable_kernel()).fit(X, Y)
    for query in (posterior.mean, posterior.cov, posterior.variance_norm):
        with pytest.raises(ValueError, match=r"X is required: no candidates were given"):
            query()


def test_query_before_fit_is_rejected(make_posterior):
    posterior = make_posterior(separable_kernel())
    with pytest.raises(ValueError, match=r"not fitted yet"):
        posterior.mean(np.zeros((2, 2)))


def test_one_task_scalar_kernel_accepts_column_or_vector_Y(make_posterior):
    X, Y = data()
    queries = np.random.default_rng(6).uniform(0.0, 1.0, (4, 2))
    column = make_posterior(Diagonal([RBF(0.3)])).fit(X, Y[:, :1]).mean(queries)
    vector = make_posterior(RBF(0.3)).fit(X, Y[:, 0]).mean(queries)
    np.testing.assert_allclose(vector, column, rtol=1e-12)


# ---- ill-conditioned input ------------------------------------------------------------------
def duplicated_problem(seed=7):
    # 4 distinct inputs, each observed 50 times, with a large task matrix: G_t has rank 12
    # out of 600 and ‖G_t‖·ε_machine ≫ η = 1e-12, so G_t + ηI is numerically singular.
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.0, 1.0, (N_TASKS, N_TASKS))
    kernel = Separable(RBF(0.3), 1e4 * A.T @ A)
    distinct = rng.uniform(0.0, 1.0, (4, 1))
    X = np.repeat(distinct, 50, axis=0)
    Y = rng.standard_normal((len(X), N_TASKS))
    return kernel, X, Y, distinct


@pytest.mark.parametrize("solver", ["split", "full"])
def test_numerically_singular_fit_adds_jitter_with_warning(solver):
    kernel, X, Y, distinct = duplicated_problem()
    posterior = ExactPosterior(kernel, 1e-12, solver=solver)
    with pytest.warns(RuntimeWarning, match=r"G_t \+ ηI .* numerically singular; added jitter"):
        posterior.fit(X, Y, candidates=distinct)
    assert np.all(np.isfinite(posterior.mean()))
    assert np.all(np.isfinite(posterior.cov()))
    assert np.all(np.isfinite(posterior.variance_norm()))
    assert np.isfinite(posterior.log_det())


@pytest.mark.parametrize("solver", ["split", "full"])
def test_numerically_singular_adds_jitter_or_raise_naming_the_condition(solver):
    kernel, X, Y, distinct = duplicated_problem()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        posterior = ExactPosterior(kernel, 1e-12, solver=solver).fit(X[:4], Y[:4])
        try:
            for x, y in zip(X[4:], Y[4:]):
                before = posterior.mean(distinct)
                posterior.add(x, y)
        except NotPositiveDefiniteError as error:
            assert "Schur complement of G_t + ηI" in str(error)
            assert "not positive definite" in str(error)
            # the failed add left the posterior as it was
            np.testing.assert_array_equal(posterior.mean(distinct), before)
            return
    assert any("jitter" in str(w.message) for w in caught)
    assert all(issubclass(w.category, RuntimeWarning) for w in caught)
    assert np.all(np.isfinite(posterior.mean(distinct)))
    assert np.all(np.isfinite(posterior.cov(distinct)))


def test_not_positive_definite_error_is_a_value_error():
    assert issubclass(NotPositiveDefiniteError, ValueError)
    assert issubclass(NotPositiveDefiniteError, np.linalg.LinAlgError)
