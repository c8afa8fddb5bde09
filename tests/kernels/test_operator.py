"""Operator-valued kernels: Gram matrices against np.kron and block loops, diagonal blocks,
PSD-ness, and the split into independent problems (``decompose``)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from _helpers import random_psd
from manytask.kernels import (
    RBF,
    Diagonal,
    Laplacian,
    Linear,
    Matern,
    Separable,
    SumOfSeparable,
    uniform_task_similarity,
)


def _points(seed, n, d=2):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, d))


def _operator_kernels():
    n = 3
    return [
        pytest.param(Separable(RBF(0.6), random_psd(0, n)), id="Separable"),
        pytest.param(Diagonal([RBF(0.3), Matern(0.8, nu=2.5), Laplacian(1.0)]), id="Diagonal"),
        pytest.param(
            SumOfSeparable(
                [
                    (RBF(0.4), random_psd(1, n)),
                    (Matern(1.2, nu=1.5), uniform_task_similarity(n, 0.3)),
                    (Linear(0.5), random_psd(2, n, rank=1)),
                ]
            ),
            id="SumOfSeparable",
        ),
    ]


def _block(gram, i, j, n):
    return gram[i * n : (i + 1) * n, j * n : (j + 1) * n]


# --- Separable ----------------------------------------------------------------------------------


def test_separable_gram_equals_kronecker_product():
    k, B = RBF(0.5), random_psd(3, 3)
    X, Y = _points(4, 5), _points(5, 4)
    assert_allclose(Separable(k, B).gram(X, Y), np.kron(k(X, Y), B), rtol=1e-12)


def test_separable_gram_blocks_are_kernel_times_task_matrix():
    k, B = Matern(0.7, nu=1.5), random_psd(6, 3)
    X, Y = _points(7, 4), _points(8, 5)
    gram = Separable(k, B).gram(X, Y)
    n = 3
    assert gram.shape == (len(X) * n, len(Y) * n)
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            expected = k(x[None, :], y[None, :])[0, 0] * B
            assert_allclose(gram[i * n : i * n + n, j * n : j * n + n], expected, rtol=1e-12)


def test_separable_gram_without_y_is_gram_of_x_with_itself():
    G = Separable(RBF(0.5), random_psd(9, 2))
    X = _points(10, 4)
    assert_allclose(G.gram(X), G.gram(X, X))


def test_separable_n_tasks_is_size_of_task_matrix():
    assert Separable(RBF(), np.eye(4)).n_tasks == 4


def test_separable_rejects_non_kernel():
    with pytest.raises(ValueError, match="kernel must be a manytask scalar Kernel"):
        Separable(lambda X, Y: X @ Y.T, np.eye(2))


def test_separable_rejects_sklearn_kernel():
    from sklearn.gaussian_process.kernels import RBF as SklearnRBF

    with pytest.raises(ValueError, match="kernel"):
        Separable(SklearnRBF(), np.eye(2))


def test_separable_rejects_non_psd_task_matrix():
    with pytest.raises(ValueError, match="positive semi-definite"):
        Separable(RBF(), [[1.0, 2.0], [2.0, 1.0]])


def test_separable_rejects_non_symmetric_task_matrix():
    with pytest.raises(ValueError, match="symmetric"):
        Separable(RBF(), [[1.0, 0.5], [0.0, 1.0]])


# --- Diagonal -----------------------------------------------------------------------------------


def test_diagonal_gram_blocks_are_diagonal_of_task_kernels():
    kernels = [RBF(0.3), Matern(0.9, nu=0.5), Linear(0.2)]
    X, Y = _points(11, 4), _points(12, 3)
    n = len(kernels)
    gram = Diagonal(kernels).gram(X, Y)
    assert gram.shape == (len(X) * n, len(Y) * n)
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            expected = np.diag([k(x[None, :], y[None, :])[0, 0] for k in kernels])
            assert_allclose(gram[i * n : i * n + n, j * n : j * n + n], expected, rtol=1e-12)


def test_diagonal_with_one_shared_kernel_equals_separable_with_identity():
    k = RBF(0.4)
    X, Y = _points(13, 5), _points(14, 3)
    assert_allclose(Diagonal([k, k, k]).gram(X, Y), Separable(k, np.eye(3)).gram(X, Y))


def test_diagonal_n_tasks_is_number_of_kernels():
    assert Diagonal([RBF(), RBF(), Linear()]).n_tasks == 3


def test_diagonal_rejects_empty_list():
    with pytest.raises(ValueError, match="at least one kernel"):
        Diagonal([])


def test_diagonal_rejects_non_kernel_entry_naming_its_index():
    with pytest.raises(ValueError, match=r"kernels\[1\]"):
        Diagonal([RBF(), "rbf"])


# --- SumOfSeparable -----------------------------------------------------------------------------


def test_sum_of_separable_gram_equals_sum_of_separable_grams():
    terms = [(RBF(0.4), random_psd(15, 3)), (Matern(1.0, nu=2.5), random_psd(16, 3, rank=1))]
    X, Y = _points(17, 5), _points(18, 4)
    expected = sum(Separable(k, B).gram(X, Y) for k, B in terms)
    assert_allclose(SumOfSeparable(terms).gram(X, Y), expected, rtol=1e-12)


def test_sum_of_separable_gram_equals_sum_of_kronecker_products():
    terms = [(RBF(0.4), random_psd(19, 2)), (Linear(0.3), random_psd(20, 2))]
    X, Y = _points(21, 3), _points(22, 6)
    expected = sum(np.kron(k(X, Y), B) for k, B in terms)
    assert_allclose(SumOfSeparable(terms).gram(X, Y), expected, rtol=1e-12)


def test_sum_of_separable_n_tasks_is_size_of_task_matrices():
    assert SumOfSeparable([(RBF(), np.eye(5)), (Linear(), np.ones((5, 5)))]).n_tasks == 5


def test_sum_of_separable_rejects_task_matrices_of_different_sizes():
    with pytest.raises(ValueError, match="same size"):
        SumOfSeparable([(RBF(), np.eye(2)), (RBF(0.5), np.eye(3))])


def test_sum_of_separable_rejects_empty_terms():
    with pytest.raises(ValueError, match="at least one"):
        SumOfSeparable([])


def test_sum_of_separable_rejects_non_kernel():
    with pytest.raises(ValueError, match="kernel"):
        SumOfSeparable([(RBF(), np.eye(2)), (3.0, np.eye(2))])


# --- shared properties --------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", _operator_kernels())
def test_diag_blocks_equal_diagonal_blocks_of_gram(kernel):
    X = _points(23, 6)
    n = kernel.n_tasks
    gram = kernel.gram(X, X)
    blocks = kernel.diag_blocks(X)
    assert blocks.shape == (len(X), n, n)
    for i in range(len(X)):
        assert_allclose(blocks[i], _block(gram, i, i, n), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kernel", _operator_kernels())
def test_gram_is_symmetric_positive_semidefinite(kernel):
    X = _points(24, 8)
    gram = kernel.gram(X)
    assert_allclose(gram, gram.T, rtol=1e-12, atol=1e-14)
    assert np.linalg.eigvalsh(gram)[0] >= -1e-10


@pytest.mark.parametrize("kernel", _operator_kernels())
def test_gram_of_x_y_is_transpose_of_gram_of_y_x(kernel):
    X, Y = _points(25, 4), _points(26, 3)
    assert_allclose(kernel.gram(X, Y), kernel.gram(Y, X).T, rtol=1e-12)


@pytest.mark.parametrize("kernel", _operator_kernels())
def test_gram_shape_is_sample_major(kernel):
    X, Y = _points(27, 4), _points(28, 7)
    assert kernel.gram(X, Y).shape == (4 * kernel.n_tasks, 7 * kernel.n_tasks)


@pytest.mark.parametrize("kernel", _operator_kernels())
def test_n_tasks_is_three(kernel):
    assert kernel.n_tasks == 3


# --- decompose ----------------------------------------------------------------------------------


def test_separable_decomposition_reconstructs_full_rank_task_matrix():
    B = random_psd(29, 4)
    decomposition = Separable(RBF(), B).decompose()
    R, scales = decomposition.rotation, decomposition.scales
    assert R.shape == (4, 4)
    assert decomposition.batch == 4
    assert_allclose(R @ np.diag(scales) @ R.T, B, atol=1e-12 * np.abs(B).max())
    assert_allclose(R.T @ R, np.eye(4), atol=1e-12)


def test_separable_decomposition_of_rank_deficient_task_matrix_drops_null_directions():
    B = random_psd(30, 5, rank=2)
    decomposition = Separable(RBF(), B).decompose()
    R, scales = decomposition.rotation, decomposition.scales
    assert R.shape == (5, 2)
    assert decomposition.batch == 2
    assert np.all(scales > 0)
    assert_allclose(R @ np.diag(scales) @ R.T, B, atol=1e-12 * np.abs(B).max())
    assert_allclose(R.T @ R, np.eye(2), atol=1e-12)


def test_separable_decomposition_grams_are_scaled_scalar_grams():
    k, B = Matern(0.6, nu=2.5), random_psd(31, 3)
    X, Y = _points(32, 5), _points(33, 4)
    decomposition = Separable(k, B).decompose()
    grams = decomposition.gram(X, Y)
    assert grams.shape == (3, 5, 4)
    for beta, scale in enumerate(decomposition.scales):
        assert_allclose(grams[beta], scale * k(X, Y), rtol=1e-12)


def test_separable_decomposition_rebuilds_full_gram():
    # Σ_β kron(s_β K, r_β r_βᵀ) = kron(K, R diag(s) Rᵀ) = kron(K, B).
    k, B = RBF(0.5), random_psd(34, 3, rank=2)
    X, Y = _points(35, 4), _points(36, 3)
    decomposition = Separable(k, B).decompose()
    grams = decomposition.gram(X, Y)
    rebuilt = sum(
        np.kron(grams[beta], np.outer(r, r)) for beta, r in enumerate(decomposition.rotation.T)
    )
    assert_allclose(rebuilt, Separable(k, B).gram(X, Y), atol=1e-12)


def test_separable_decomposition_prior_blocks_are_scaled_kernel_diagonal():
    k, B = Linear(0.3), random_psd(37, 3)
    X = _points(38, 5)
    decomposition = Separable(k, B).decompose()
    blocks = decomposition.prior_blocks(X)
    assert blocks.shape == (3, 5, 1, 1)
    for beta, scale in enumerate(decomposition.scales):
        assert_allclose(blocks[beta, :, 0, 0], scale * k.diag(X), rtol=1e-12)


def test_diagonal_decomposition_is_one_problem_per_task():
    kernels = [RBF(0.3), Matern(0.9, nu=1.5), Linear(0.2)]
    X, Y = _points(39, 4), _points(40, 5)
    decomposition = Diagonal(kernels).decompose()
    assert_allclose(decomposition.rotation, np.eye(3))
    grams = decomposition.gram(X, Y)
    for a, k in enumerate(kernels):
        assert_allclose(grams[a], k(X, Y), rtol=1e-12)


def test_diagonal_decomposition_groups_tasks_sharing_a_kernel_object():
    shared, other = RBF(0.3), RBF(0.3)
    decomposition = Diagonal([shared, other, shared]).decompose()
    assert len(decomposition.kernels) == 2
    assert list(decomposition.groups) == [0, 1, 0]


def test_sum_of_separable_decomposition_is_one_problem_with_all_tasks():
    G = SumOfSeparable([(RBF(0.4), random_psd(41, 3)), (Linear(0.3), random_psd(42, 3))])
    X, Y = _points(43, 4), _points(44, 3)
    decomposition = G.decompose()
    assert decomposition.batch == 1
    assert decomposition.block == 3
    assert_allclose(decomposition.rotation, np.eye(3))
    assert_allclose(decomposition.gram(X, Y)[0], G.gram(X, Y), rtol=1e-12)
    assert_allclose(decomposition.prior_blocks(X)[0], G.diag_blocks(X), rtol=1e-12)
