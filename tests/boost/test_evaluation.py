"""mixture_errors: per-domain, uniform, agnostic and λ errors against brute-force loops."""

import numpy as np
import pytest

from manytask.boost import mixture_errors


class _Threshold:
    def predict(self, X):
        return (np.asarray(X)[:, 0] > 0).astype(int)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    domains = np.array(["c", "a", "b"])[rng.integers(0, 3, 90)]
    return X, y, domains


def test_mixture_errors_match_brute_force():
    X, y, domains = _data()
    mixtures = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    result = mixture_errors(_Threshold(), X, y, domains, mixtures)
    predictions = _Threshold().predict(X)
    expected = []
    for label in ["a", "b", "c"]:
        rows = [i for i in range(len(y)) if domains[i] == label]
        expected.append(sum(predictions[i] != y[i] for i in rows) / len(rows))
    assert result.domains.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(result.domain_errors, expected)
    assert result.uniform == pytest.approx(np.mean(expected))
    assert result.agnostic == pytest.approx(max(expected))
    for weights, error in zip(mixtures, result.mixture_errors):
        assert error == pytest.approx(sum(w * e for w, e in zip(weights, expected)))


def test_agnostic_error_is_the_max_over_the_simplex():
    X, y, domains = _data(seed=1)
    lambdas = np.random.default_rng(2).dirichlet(np.ones(3), size=500)
    result = mixture_errors(_Threshold(), X, y, domains, lambdas)
    assert result.mixture_errors.max() <= result.agnostic + 1e-12


@pytest.mark.parametrize("mixtures", [[0.5, 0.6, -0.1], [0.5, 0.5, 0.5], [0.5, 0.5]])
def test_mixtures_off_the_simplex_raise(mixtures):
    X, y, domains = _data()
    with pytest.raises(ValueError, match="mixtures"):
        mixture_errors(_Threshold(), X, y, domains, mixtures)


def test_labels_of_wrong_length_raise():
    X, y, domains = _data()
    with pytest.raises(ValueError, match="y must have shape"):
        mixture_errors(_Threshold(), X, y[:-1], domains)
    with pytest.raises(ValueError, match="domains"):
        mixture_errors(_Threshold(), X, y, domains[:-1])
