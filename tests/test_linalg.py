"""Dense linear algebra: Cholesky with jitter, triangular solves and the pseudo-inverse
square root, against numpy / scipy."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.linalg import solve_triangular

from _helpers import random_psd
from manytask.kernels import RBF
from manytask.linalg import NotPositiveDefiniteError, cholesky, psd_inverse_sqrt, solve_lower


def _random_pd(seed, m):
    factor = np.random.default_rng(seed).normal(size=(m, m))
    return factor @ factor.T + m * np.eye(m)


def _singular_rbf_gram():
    X = np.random.default_rng(99).uniform(size=(6, 1))
    X = np.vstack([X, X[:2]])  # duplicated points make the Gram matrix exactly singular
    return RBF(0.4)(X)


# --- cholesky -------------------------------------------------------------------------------


def test_cholesky_matches_numpy_for_positive_definite_matrix():
    A = _random_pd(0, 6)
    assert_allclose(cholesky(A), np.linalg.cholesky(A), rtol=1e-12)


def test_cholesky_of_positive_definite_matrix_is_lower_triangular_and_reconstructs():
    A = _random_pd(1, 5)
    L = cholesky(A)
    assert_allclose(L, np.tril(L))
    assert_allclose(L @ L.T, A, rtol=1e-12)


def test_cholesky_matches_numpy_for_stack_of_matrices():
    A = np.stack([_random_pd(seed, 4) for seed in range(3)])
    L = cholesky(A)
    assert L.shape == (3, 4, 4)
    for block, factor in zip(A, L, strict=True):
        assert_allclose(factor, np.linalg.cholesky(block), rtol=1e-12)


def test_cholesky_of_positive_definite_matrix_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cholesky(_random_pd(2, 5))


def test_cholesky_of_singular_psd_matrix_adds_jitter_with_warning():
    A = _singular_rbf_gram()
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(A)  # the premise: plain Cholesky fails
    with pytest.warns(RuntimeWarning, match="jitter"):
        L = cholesky(A)
    assert np.all(np.isfinite(L))
    assert_allclose(L @ L.T, A, atol=1e-6)


def test_cholesky_jitter_warning_names_the_matrix():
    with pytest.warns(RuntimeWarning, match="K_train"):
        cholesky(_singular_rbf_gram(), name="K_train")


def test_cholesky_of_stack_with_singular_block_adds_jitter_to_that_block():
    A = np.stack([_random_pd(3, 8), _singular_rbf_gram()])
    with pytest.warns(RuntimeWarning, match="jitter"):
        L = cholesky(A)
    assert L.shape == (2, 8, 8)
    assert_allclose(L[0], np.linalg.cholesky(A[0]), rtol=1e-12)
    assert_allclose(L[1] @ L[1].T, A[1], atol=1e-6)


def test_cholesky_of_indefinite_matrix_raises_not_positive_definite_error():
    # Q diag(3, 2, −1) Qᵀ has eigenvalue −1: no jitter up to 1e-4·mean(diag) can fix it.
    Q, _ = np.linalg.qr(np.random.default_rng(4).normal(size=(3, 3)))
    A = Q @ np.diag([3.0, 2.0, -1.0]) @ Q.T
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite") as info:
        cholesky(A)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, np.linalg.LinAlgError)


def test_cholesky_indefinite_error_is_catchable_as_value_error():
    with pytest.raises(ValueError, match="not positive definite"):
        cholesky(np.diag([1.0, -1.0]))


def test_cholesky_indefinite_error_names_the_matrix():
    with pytest.raises(NotPositiveDefiniteError, match="G_t"):
        cholesky(np.diag([2.0, -1.0]), name="G_t")


def test_cholesky_of_stack_with_indefinite_block_raises():
    A = np.stack([_random_pd(5, 3), np.diag([1.0, 1.0, -1.0])])
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
        cholesky(A)


# --- solve_lower ----------------------------------------------------------------------------


def test_solve_lower_matches_scipy_for_matrix_right_hand_side():
    L = np.linalg.cholesky(_random_pd(6, 5))
    B = np.random.default_rng(7).normal(size=(5, 3))
    expected = solve_triangular(L, B, lower=True)
    assert_allclose(solve_lower(L, B), expected, rtol=1e-12)
    assert_allclose(solve_lower(L, B), np.linalg.solve(L, B), rtol=1e-10)


def test_solve_lower_matches_numpy_for_vector_right_hand_side():
    L = np.linalg.cholesky(_random_pd(8, 4))
    b = np.random.default_rng(9).normal(size=4)
    assert_allclose(solve_lower(L, b), np.linalg.solve(L, b), rtol=1e-10)


def test_solve_lower_matches_numpy_for_batched_input():
    L = np.stack([np.linalg.cholesky(_random_pd(seed, 4)) for seed in range(10, 13)])
    B = np.random.default_rng(13).normal(size=(3, 4, 2))
    result = solve_lower(L, B)
    assert result.shape == (3, 4, 2)
    assert_allclose(result, np.linalg.solve(L, B), rtol=1e-10)


def test_solve_lower_with_many_columns_matches_scipy_and_refuses_a_singular_factor():
    # the wide right-hand sides of a candidate set take BLAS's right-sided solve
    L = np.linalg.cholesky(_random_pd(16, 30))
    B = np.random.default_rng(17).normal(size=(30, 1000))
    expected = solve_triangular(L, B, lower=True)
    assert_allclose(solve_lower(L, B), expected, rtol=1e-10, atol=1e-12)
    assert_allclose(solve_lower(L, np.asfortranarray(B)), expected, rtol=1e-10, atol=1e-12)
    L[3, 3] = 0.0
    with pytest.raises(np.linalg.LinAlgError):
        solve_lower(L, B)


def test_solve_lower_ignores_upper_triangle():
    L = np.linalg.cholesky(_random_pd(14, 4))
    B = np.random.default_rng(15).normal(size=(4, 2))
    polluted = L + np.triu(np.ones((4, 4)), k=1)
    assert_allclose(solve_lower(polluted, B), solve_lower(L, B))


# --- psd_inverse_sqrt -----------------------------------------------------------------------


def test_psd_inverse_sqrt_of_full_rank_matrix_gives_inverse():
    K = _random_pd(16, 6)
    E = psd_inverse_sqrt(K)
    assert E.shape == (6, 6)
    assert_allclose(E @ E.T, np.linalg.pinv(K), rtol=1e-9, atol=1e-12)
    assert_allclose(E @ E.T, np.linalg.inv(K), rtol=1e-9, atol=1e-12)


def test_psd_inverse_sqrt_of_rank_deficient_matrix_gives_pseudo_inverse():
    K = random_psd(17, 7, rank=3)
    E = psd_inverse_sqrt(K)
    assert E.shape == (7, 3)
    # The same relative eigenvalue cut-off (1e-10) as psd_inverse_sqrt's default rtol.
    expected = np.linalg.pinv(K, 1e-10, hermitian=True)
    assert_allclose(E @ E.T, expected, rtol=1e-8, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("rank", [7, 3, 1])
def test_psd_inverse_sqrt_whitens_the_matrix(rank):
    K = random_psd(18, 7, rank=rank) + (np.eye(7) if rank == 7 else 0.0)
    E = psd_inverse_sqrt(K)
    assert_allclose(E.T @ K @ E, np.eye(rank), atol=1e-9)


def test_psd_inverse_sqrt_of_singular_rbf_gram_gives_pseudo_inverse():
    K = _singular_rbf_gram()
    E = psd_inverse_sqrt(K)
    expected = np.linalg.pinv(K, 1e-10, hermitian=True)
    assert_allclose(E @ E.T, expected, rtol=1e-6, atol=1e-8 * np.abs(expected).max())
    assert_allclose(E.T @ K @ E, np.eye(E.shape[1]), atol=1e-8)


def test_psd_inverse_sqrt_of_zero_matrix_is_empty():
    assert psd_inverse_sqrt(np.zeros((3, 3))).shape == (3, 0)
