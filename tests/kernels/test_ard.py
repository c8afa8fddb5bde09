"""ARD (per-dimension) lengthscales of RBF and Matern: values against brute-force loops and
scikit-learn's anisotropic kernels, agreement with the scalar lengthscale, θ-derivatives with a
length-1 array, and the errors for mismatched or invalid lengthscales."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.gaussian_process import kernels as skk

from manytask.kernels import RBF, Matern

LENGTHSCALES = np.array([0.3, 1.2, 4.0])


def _points(seed, n, d=3):
    return np.random.default_rng(seed).normal(size=(n, d))


def _matern_of_scaled_distance(s, nu):
    if nu == 0.5:
        return np.exp(-s)
    if nu == 1.5:
        return (1 + np.sqrt(3) * s) * np.exp(-np.sqrt(3) * s)
    return (1 + np.sqrt(5) * s + 5 * s**2 / 3) * np.exp(-np.sqrt(5) * s)


def test_ard_rbf_matches_brute_force_loop():
    X, Y = _points(0, 6), _points(1, 4)
    expected = np.empty((6, 4))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            expected[i, j] = np.exp(-0.5 * sum(((x - y) / LENGTHSCALES) ** 2))
    assert_allclose(RBF(LENGTHSCALES)(X, Y), expected, rtol=1e-12)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_ard_matern_matches_brute_force_loop(nu):
    X, Y = _points(2, 5), _points(3, 7)
    expected = np.empty((5, 7))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            s = np.sqrt(sum(((x - y) / LENGTHSCALES) ** 2))
            expected[i, j] = _matern_of_scaled_distance(s, nu)
    assert_allclose(Matern(LENGTHSCALES, nu=nu)(X, Y), expected, rtol=1e-12)


def test_ard_rbf_matches_sklearn_anisotropic_rbf():
    X, Y = _points(4, 8), _points(5, 6)
    expected = skk.RBF(length_scale=LENGTHSCALES)(X, Y)
    assert_allclose(RBF(LENGTHSCALES)(X, Y), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_ard_matern_matches_sklearn_anisotropic_matern(nu):
    X, Y = _points(6, 8), _points(7, 6)
    expected = skk.Matern(length_scale=LENGTHSCALES, nu=nu)(X, Y)
    assert_allclose(Matern(LENGTHSCALES, nu=nu)(X, Y), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("make", [RBF, lambda l: Matern(l, nu=2.5)], ids=["RBF", "Matern"])
def test_equal_ard_lengthscales_equal_the_scalar_lengthscale(make):
    X = _points(8, 9)
    assert_allclose(make(np.full(3, 0.7))(X), make(0.7)(X), rtol=1e-13)


def test_ard_diag_is_one():
    X = _points(9, 4)
    assert_allclose(RBF(LENGTHSCALES).diag(X), np.ones(4))
    assert_allclose(Matern(LENGTHSCALES, nu=1.5).diag(X), np.ones(4))


def test_ard_kernels_compose():
    X = _points(10, 5)
    expected = RBF(LENGTHSCALES)(X) * Matern(LENGTHSCALES, nu=1.5)(X) + 0.5
    assert_allclose((RBF(LENGTHSCALES) * Matern(LENGTHSCALES, nu=1.5) + 0.5)(X), expected)


@pytest.mark.parametrize(
    "scalar, array",
    [
        (RBF(0.8), RBF([0.8])),
        (Matern(0.9, nu=1.5), Matern(np.array([0.9]), nu=1.5)),
        (Matern(1.1, nu=2.5), Matern(np.array([1.1]), nu=2.5)),
    ],
    ids=repr,
)
def test_theta_derivatives_with_length_one_array_equal_scalar(scalar, array):
    theta = np.linspace(-1.0, 1.5, 6)[:, None]
    other = np.linspace(-0.7, 2.0, 5)[:, None]
    assert_allclose(array.dk_dy(theta, other), scalar.dk_dy(theta, other), rtol=1e-13)
    assert_allclose(array.d2k_dxdy(theta, other), scalar.d2k_dxdy(theta, other), rtol=1e-13)


@pytest.mark.parametrize("kernel", [RBF([0.5, 1.0]), Matern([0.5, 1.0], nu=2.5)], ids=repr)
def test_theta_derivatives_reject_several_lengthscales(kernel):
    theta = np.zeros((3, 1))
    with pytest.raises(ValueError, match="lengthscale has 2 entries"):
        kernel.dk_dy(theta, theta)


@pytest.mark.parametrize("make", [RBF, lambda l: Matern(l, nu=0.5)], ids=["RBF", "Matern"])
def test_lengthscale_dimension_mismatch_names_both(make):
    kernel = make([0.5, 1.0])
    with pytest.raises(ValueError, match=r"lengthscale has 2 entries.*3 features"):
        kernel(_points(11, 4, d=3))
    with pytest.raises(ValueError, match=r"lengthscale has 2 entries.*3 features"):
        kernel.diag(_points(11, 4, d=3))


@pytest.mark.parametrize(
    "lengthscale, message",
    [
        ([0.5, 0.0], "> 0 in every dimension"),
        ([0.5, -1.0], "> 0 in every dimension"),
        ([], "at least one entry"),
        ([[0.5, 1.0]], "1-dimensional"),
        ([0.5, np.nan], "finite"),
        (-1.0, "> 0"),
    ],
)
@pytest.mark.parametrize("make", [RBF, Matern], ids=["RBF", "Matern"])
def test_invalid_lengthscales_raise(make, lengthscale, message):
    with pytest.raises(ValueError, match=message):
        make(lengthscale)


def test_ard_lengthscale_is_a_copy_and_repr_lists_it():
    values = np.array([0.5, 2.0])
    kernel = RBF(values)
    values[0] = 100.0
    assert kernel.lengthscale[0] == 0.5
    assert repr(kernel) == "RBF(lengthscale=[0.5, 2.0])"
    assert repr(Matern([1.0], nu=2.5)) == "Matern(lengthscale=[1.0], nu=2.5)"
    assert repr(RBF(0.5)) == "RBF(lengthscale=0.5)"
