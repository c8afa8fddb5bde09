"""Multi-class MULTIBOOST: codes, exact vector-stump search, the two-class reduction."""

import itertools
import math

import numpy as np
import pytest

from _helpers import two_separated_domains
from manytask.boost import MultiBoostClassifier
from manytask.boost.multiclass import (
    VectorStump,
    best_vector_stump,
    class_codes,
    steepest_common_stump,
)
from manytask.boost.stumps import Stump, presort


def _candidate_stumps(X):
    """Every distinct stump over the midpoints of each feature (brute force)."""
    for feature in range(X.shape[1]):
        values = np.unique(X[:, feature])
        for threshold in [-np.inf, *(0.5 * (values[:-1] + values[1:]))]:
            yield Stump(feature, float(threshold), 1)


def _three_classes(n=90, seed=0, n_domains=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.argmax(X + 0.4 * rng.normal(size=(n, 3)), axis=1)
    domains = np.arange(n) % n_domains
    X[:, 0] += 2.0 * domains  # sources differ in x0
    return X, y, domains


def _two_domains(n=100, seed=0):
    return two_separated_domains(n, seed)


def test_class_codes_are_plus_one_on_the_label():
    codes = class_codes([1, 0, 2], 3)
    assert codes.tolist() == [[-1, 1, -1], [1, -1, -1], [-1, -1, 1]]


@pytest.mark.parametrize("n_bins", [None, 4])
def test_best_vector_stump_matches_brute_force_over_stumps_and_votes(n_bins):
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(30, 2)), 1)  # ties in the features
    signed = rng.normal(size=(30, 3))
    presorted = presort(X, n_bins=n_bins)
    stump, rate = best_vector_stump(presorted, signed)
    thresholds = (
        [Stump(f, float(t), 1) for f in range(2) for t in
         [-np.inf, *presorted.thresholds[f, : presorted.n_thresholds[f]]]]
        if n_bins else list(_candidate_stumps(X))
    )  # fmt: skip
    brute = max(
        float(np.sum(signed * (phi.predict(X)[:, None] * np.array(votes))))
        for phi in thresholds
        for votes in itertools.product([-1, 1], repeat=3)
    )
    assert rate == pytest.approx(brute, rel=1e-12)
    assert float(np.sum(signed * stump.predict(X))) == pytest.approx(brute, rel=1e-12)


def test_steepest_common_stump_is_the_brute_force_max_min_with_one_code():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 2))
    by_vertex = rng.normal(size=(2, 25, 1)) + 0.3
    votes, feature, threshold, value = steepest_common_stump(presort(X), by_vertex)
    brute = max(
        min(float(np.sum(by_vertex[j, :, 0] * polarity * phi.predict(X))) for j in range(2))
        for phi in _candidate_stumps(X)
        for polarity in (-1, 1)
    )
    assert value == pytest.approx(brute, rel=1e-12)
    chosen = Stump(feature, threshold, int(votes[0])).predict(X)
    assert min(float(by_vertex[j, :, 0] @ chosen) for j in range(2)) == pytest.approx(brute)


# 15 rounds of each path with the same step rule (the AdaBoost step from the same sums, or
# Lemma 1's bound in closed form): the two parametrisations give the same ensemble.
@pytest.mark.parametrize(
    "options, n_estimators",
    [
        ({}, 15),
        ({"loss": "logistic"}, 15),
        ({"mu": 10.0}, 15),
        ({"beta": 0.002}, 15),
        ({"step": "lemma1_bound"}, 15),
        ({"mixtures": [[0.5, 0.5], [0.9, 0.1]]}, 15),
    ],
)
def test_two_classes_multiclass_variant_reduces_to_the_binary_algorithm(options, n_estimators):
    X, y, domains = _two_domains(seed=1)
    binary = MultiBoostClassifier(n_estimators=n_estimators, **options).fit(X, y, domains=domains)
    multi = MultiBoostClassifier(n_estimators=n_estimators, multi_class="mh", **options).fit(
        X, y, domains=domains
    )
    assert len(multi.estimators_) == len(binary.estimators_) > 1
    for (k_multi, vector), (k_binary, stump) in zip(multi.estimators_, binary.estimators_):
        assert isinstance(vector, VectorStump) and k_multi == k_binary
        # Same stump as a function: votes (−π, π) on φ = (feature, threshold, +1).
        assert (vector.feature, vector.threshold) == (stump.feature, stump.threshold)
        assert vector.votes == (-stump.polarity, stump.polarity)
    # Same α: the constant between the parametrisations f_1 = −f_0 = f is 1.
    rtol = 1e-9
    assert len(binary.estimators_) == n_estimators
    np.testing.assert_allclose(multi.estimator_weights_, binary.estimator_weights_, rtol=rtol)
    decision = multi.decision_function(X)
    np.testing.assert_allclose(decision[:, 1], binary.decision_function(X), rtol=rtol, atol=1e-9)
    np.testing.assert_allclose(decision[:, 0], -decision[:, 1], atol=1e-12)
    np.testing.assert_array_equal(multi.predict(X), binary.predict(X))
    np.testing.assert_allclose(multi.predict_proba(X), binary.predict_proba(X), atol=rtol)
    assert multi.objective_ == pytest.approx(binary.objective_, rel=rtol)


def test_two_classes_one_domain_multiclass_variant_is_adaboost():
    X, y, _ = _two_domains(seed=2)
    binary = MultiBoostClassifier(n_estimators=30).fit(X, y)
    multi = MultiBoostClassifier(n_estimators=30, multi_class="mh").fit(X, y)
    assert [(h.feature, h.threshold, h.votes) for _, h in multi.estimators_] == [
        (h.feature, h.threshold, (-h.polarity, h.polarity)) for _, h in binary.estimators_
    ]
    # One domain: AdaBoost.MH's step ½ log((1 + r)/(1 − r)) is AdaBoost's ½ log((1 − ε)/ε).
    np.testing.assert_allclose(multi.estimator_weights_, binary.estimator_weights_, rtol=1e-9)
    np.testing.assert_array_equal(multi.predict(X), binary.predict(X))


def _loop_multiclass_losses(clf, X, y, domains):
    """F_k = (1/m_k) Σ_{i∈S_k} (1/K) Σ_c exp(−Y_ic f_c(x_i)), f from the stumps, loops only."""
    Q = clf.domain_classifier_.predict_proba(X)
    K = clf.classes_.size
    losses = []
    for label in clf.domains_:
        rows = np.flatnonzero(domains == label)
        total = 0.0
        for i in rows:
            f = np.zeros(K)
            for (k, h), alpha in zip(clf.estimators_, clf.estimator_weights_):
                phi = h.stump.predict(X[i : i + 1])[0]
                f += alpha * Q[i, k] * phi * np.array(h.votes)
            codes = np.where(np.arange(K) == list(clf.classes_).index(y[i]), 1.0, -1.0)
            total += np.mean(np.exp(-codes * f))
        losses.append(total / rows.size)
    return losses


def test_three_class_objective_matches_a_loop_and_never_increases_with_exact_steps():
    X, y, domains = _three_classes()
    clf = MultiBoostClassifier(n_estimators=12, step="exact_line_search")
    clf.fit(X, y, domains=domains)
    losses = _loop_multiclass_losses(clf, X, y, domains)
    assert clf.objective_ == pytest.approx(max(losses), rel=1e-10)
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) <= 0)
    # K·F_k bounds domain k's training error (argmax wrong ⇒ some code has Φ ≥ 1).
    wrong = clf.predict(X) != y
    for k, label in enumerate(clf.domains_):
        assert wrong[domains == label].mean() <= 3 * losses[k] + 1e-12


def test_three_class_predictions_and_probabilities():
    X, y, domains = _three_classes(n=150, seed=3)
    clf = MultiBoostClassifier(n_estimators=30).fit(X, y, domains=domains)
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    expected = 1 / (1 + np.exp(-2 * clf.decision_function(X)))
    np.testing.assert_allclose(proba, expected / expected.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))
    staged = list(clf.staged_predict(X))
    np.testing.assert_array_equal(staged[-1], clf.predict(X))
    # Better than the majority class (the data are learnable by stumps on x1, x2).
    assert clf.score(X, y) > max(np.mean(y == c) for c in range(3)) + 0.2
    assert math.isclose(clf.feature_importances_.sum(), 1.0)


def test_binned_multiclass_with_exact_steps_descends():
    X, y, domains = _three_classes(n=120, seed=4)
    clf = MultiBoostClassifier(n_estimators=10, n_bins=8, step="exact_line_search").fit(
        X, y, domains=domains
    )
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) <= 0) and objectives[-1] < objectives[0]
    assert clf.objective_ == pytest.approx(
        max(_loop_multiclass_losses(clf, X, y, domains)), rel=1e-10
    )
    # Binned thresholds are bin edges of presort(X, 8).
    edges = presort(X, n_bins=8).thresholds
    for _, h in clf.estimators_:
        assert h.threshold == -np.inf or h.threshold in edges[h.feature]
