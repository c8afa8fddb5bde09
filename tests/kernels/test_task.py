"""Task matrices B: validation, the uniform similarity ωI + (1 − ω)11ᵀ/n, and the estimate
Rᵀ K⁻¹ R / m against a dense solve."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from _helpers import random_psd
from manytask.kernels import (
    RBF,
    check_task_matrix,
    estimate_task_matrix,
    uniform_task_similarity,
)

# --- check_task_matrix ----------------------------------------------------------------------


def test_check_task_matrix_accepts_symmetric_psd_matrix():
    B = random_psd(0, 4)
    assert_allclose(check_task_matrix(B), B)


def test_check_task_matrix_accepts_rank_deficient_psd_matrix():
    B = random_psd(1, 4, rank=2)
    assert_allclose(check_task_matrix(B), B)


def test_check_task_matrix_accepts_nested_lists():
    checked = check_task_matrix([[1.0, 0.5], [0.5, 1.0]])
    assert isinstance(checked, np.ndarray)
    assert checked.dtype == float
    assert_allclose(checked, [[1.0, 0.5], [0.5, 1.0]])


def test_check_task_matrix_symmetrises_rounding_level_asymmetry():
    B = random_psd(2, 3)
    B[0, 1] += 1e-13
    checked = check_task_matrix(B)
    assert_allclose(checked, checked.T, rtol=0, atol=0)
    assert_allclose(checked, B, atol=1e-12)


def test_check_task_matrix_rejects_non_symmetric_matrix():
    with pytest.raises(ValueError, match="symmetric"):
        check_task_matrix([[1.0, 0.5], [0.0, 1.0]])


def test_check_task_matrix_rejects_matrix_with_negative_eigenvalue():
    # Eigenvalues of [[1, 2], [2, 1]] are 3 and −1.
    with pytest.raises(ValueError, match="positive semi-definite"):
        check_task_matrix([[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize("shape", [(2, 3), (3, 1), (0, 0)])
def test_check_task_matrix_rejects_non_square_or_empty_matrix(shape):
    with pytest.raises(ValueError, match="square"):
        check_task_matrix(np.zeros(shape))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_check_task_matrix_rejects_non_finite_entries(bad):
    B = np.eye(3)
    B[1, 1] = bad
    with pytest.raises(ValueError, match="B must be finite"):
        check_task_matrix(B)


def test_check_task_matrix_rejects_wrong_rank():
    with pytest.raises(ValueError, match="2-dimensional"):
        check_task_matrix(np.ones(3))


def test_check_task_matrix_rejects_zero_matrix():
    with pytest.raises(ValueError, match="zero matrix"):
        check_task_matrix(np.zeros((3, 3)))


def test_check_task_matrix_message_uses_given_name():
    with pytest.raises(ValueError, match="B_task must be symmetric"):
        check_task_matrix([[1.0, 0.5], [0.0, 1.0]], name="B_task")


# --- uniform_task_similarity ------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("omega", [0.0, 0.3, 1.0])
def test_uniform_task_similarity_equals_formula(n, omega):
    ones = np.ones((n, 1))
    expected = omega * np.eye(n) + (1 - omega) * (ones @ ones.T) / n
    assert_allclose(uniform_task_similarity(n, omega), expected, rtol=1e-15)


@pytest.mark.parametrize("omega", [0.0, 0.25, 0.9])
def test_uniform_task_similarity_eigenvalues_are_one_once_and_omega_otherwise(omega):
    n = 6
    eigenvalues = np.linalg.eigvalsh(uniform_task_similarity(n, omega))
    expected = np.sort(np.r_[1.0, np.full(n - 1, omega)])
    assert_allclose(eigenvalues, expected, atol=1e-12)


def test_uniform_task_similarity_passes_check_task_matrix():
    B = uniform_task_similarity(4, 0.5)
    assert_allclose(check_task_matrix(B), B)


@pytest.mark.parametrize("omega", [-0.1, 1.5, np.nan, np.inf])
def test_uniform_task_similarity_rejects_omega_outside_unit_interval(omega):
    with pytest.raises(ValueError, match="omega must lie in"):
        uniform_task_similarity(3, omega)


@pytest.mark.parametrize("n", [0, -2, 2.5])
def test_uniform_task_similarity_rejects_n_below_one_or_fractional(n):
    with pytest.raises(ValueError, match="n must be a positive integer"):
        uniform_task_similarity(n, 0.5)


# --- estimate_task_matrix -------------------------------------------------------------------


def _well_conditioned_kernel_matrix(seed, m):
    X = np.random.default_rng(seed).uniform(size=(m, 2))
    return RBF(0.5)(X) + 0.1 * np.eye(m)


def test_estimate_task_matrix_equals_dense_solve():
    m, n = 25, 3
    R = np.random.default_rng(10).normal(size=(m, n))
    K = _well_conditioned_kernel_matrix(11, m)
    expected = R.T @ np.linalg.solve(K, R) / m
    assert_allclose(estimate_task_matrix(R, K), expected, rtol=1e-10)


def test_estimate_task_matrix_equals_dense_solve_for_random_spd_matrix():
    m, n = 12, 4
    R = np.random.default_rng(12).normal(size=(m, n))
    K = random_psd(13, m) + m * np.eye(m)
    expected = R.T @ np.linalg.solve(K, R) / m
    assert_allclose(estimate_task_matrix(R, K), expected, rtol=1e-10)


def test_estimate_task_matrix_with_identity_kernel_is_scaled_gram_of_readings():
    R = np.random.default_rng(14).normal(size=(30, 3))
    assert_allclose(estimate_task_matrix(R, np.eye(30)), R.T @ R / 30, rtol=1e-12)


def test_estimate_task_matrix_result_is_symmetric_psd():
    m = 20
    R = np.random.default_rng(15).normal(size=(m, 4))
    B = estimate_task_matrix(R, _well_conditioned_kernel_matrix(16, m))
    assert_allclose(B, B.T, rtol=0, atol=0)
    assert np.linalg.eigvalsh(B)[0] >= -1e-10


@pytest.mark.parametrize("K_shape", [(9, 9), (10, 9), (11, 11)])
def test_estimate_task_matrix_rejects_kernel_matrix_of_wrong_shape(K_shape):
    R = np.ones((10, 2))
    with pytest.raises(ValueError, match="K must have shape"):
        estimate_task_matrix(R, np.eye(*K_shape))


def test_estimate_task_matrix_rejects_non_finite_readings():
    R = np.ones((5, 2))
    R[3, 0] = np.nan
    with pytest.raises(ValueError, match="R must be finite"):
        estimate_task_matrix(R, np.eye(5))


def test_estimate_task_matrix_rejects_one_dimensional_readings():
    with pytest.raises(ValueError, match="R must be 2-dimensional"):
        estimate_task_matrix(np.ones(5), np.eye(5))


def test_estimate_task_matrix_with_singular_kernel_matrix_adds_jitter():
    X = np.random.default_rng(17).uniform(size=(8, 1))
    X = np.vstack([X, X[:3]])  # duplicate rows make K exactly singular
    K = RBF(0.5)(X)
    R = np.random.default_rng(18).normal(size=(len(X), 3))
    with pytest.warns(RuntimeWarning, match="jitter"):
        B = estimate_task_matrix(R, K)
    assert B.shape == (3, 3)
    assert np.all(np.isfinite(B))
    assert_allclose(B, B.T, rtol=0, atol=0)
