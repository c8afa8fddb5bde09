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


def test_agnostic_error_equals_the_max_over_a_dense_simplex_grid():
    X, y, domains = _data(seed=3)
    n = 30  # every λ = (a, b, n − a − b)/n, vertices included
    grid = np.array([(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a)]) / n
    result = mixture_errors(_Threshold(), X, y, domains, grid)
    assert result.agnostic == pytest.approx(result.mixture_errors.max(), abs=1e-12)
    # Dense random points (Dirichlet(0.05) piles up near the vertices) approach it from below.
    lambdas = np.random.default_rng(4).dirichlet(np.full(3, 0.05), size=2000)
    random_max = mixture_errors(_Threshold(), X, y, domains, lambdas).mixture_errors.max()
    assert result.agnostic - 1e-3 <= random_max <= result.agnostic + 1e-12


class _PerSource:
    """Predicts with a different threshold per requested source, like AdaBoost-k."""

    def predict(self, X, domain=None):
        column = {"a": 0, "b": 1}[domain]
        return (np.asarray(X)[:, column] > 0).astype(int)


def test_predict_kwargs_reach_predict():
    X, y, domains = _data(seed=5)
    for label, column in [("a", 0), ("b", 1)]:
        result = mixture_errors(_PerSource(), X, y, domains, predict_kwargs={"domain": label})
        wrong = (X[:, column] > 0).astype(int) != y
        expected = [wrong[domains == d].mean() for d in ["a", "b", "c"]]
        np.testing.assert_allclose(result.domain_errors, expected)


def test_predict_callable_replaces_clf():
    X, y, domains = _data(seed=6)
    result = mixture_errors(None, X, y, domains, predict=lambda Z: (Z[:, 1] > 0).astype(int))
    wrong = (X[:, 1] > 0).astype(int) != y
    np.testing.assert_allclose(
        result.domain_errors, [wrong[domains == d].mean() for d in ["a", "b", "c"]]
    )


def test_bad_prediction_arguments_raise():
    X, y, domains = _data()
    with pytest.raises(ValueError, match="clf must have a predict method"):
        mixture_errors(None, X, y, domains)
    with pytest.raises(ValueError, match="predict must be callable"):
        mixture_errors(None, X, y, domains, predict=3)
    with pytest.raises(ValueError, match="cannot be given together"):
        mixture_errors(_Threshold(), X, y, domains, predict=len, predict_kwargs={})
    with pytest.raises(ValueError, match="predictions must have shape"):
        mixture_errors(None, X, y, domains, predict=lambda Z: np.zeros(3))
