"""Stump search: exactness against a brute-force loop, tie handling, binned mode, errors."""

import numpy as np
import pytest

from manytask.boost import Stump, best_stump, presort, stumps


def _data_with_ties(seed, m=40, d=4):
    """Random features rounded so that values repeat, labels ±1, non-normalised weights."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(m, d)), 1)
    X[:, -1] = np.round(X[:, -1])  # a coarse feature with many ties
    y = rng.choice([-1.0, 1.0], size=m)
    weights = rng.exponential(size=m) * rng.integers(0, 2, size=m)  # some zero weights
    return X, y, weights


def _candidate_thresholds(column):
    """All midpoints between consecutive distinct values, plus one below the minimum."""
    distinct = np.unique(column)
    return np.concatenate([[distinct[0] - 1.0], (distinct[:-1] + distinct[1:]) / 2])


def _brute_force(X, y, weights, thresholds_of_feature):
    """Least Σ w 1{h ≠ y} over every (feature, threshold, polarity), one loop per candidate."""
    best = np.inf
    feature_best = np.full(X.shape[1], np.inf)
    for feature in range(X.shape[1]):
        for threshold in thresholds_of_feature(feature):
            for polarity in (-1, 1):
                prediction = np.where(X[:, feature] > threshold, polarity, -polarity)
                error = sum(w for w, p, label in zip(weights, prediction, y) if p != label)
                feature_best[feature] = min(feature_best[feature], error)
                best = min(best, error)
    return best, feature_best


def _direct_error(stump, X, y, weights):
    return float(np.sum(weights[stump.predict(X) != y]))


@pytest.mark.parametrize("seed", range(5))
def test_exact_search_matches_brute_force(seed):
    X, y, weights = _data_with_ties(seed)
    stump, error, feature_errors = best_stump(presort(X), y, weights)
    expected, expected_per_feature = _brute_force(
        X, y, weights, lambda f: _candidate_thresholds(X[:, f])
    )
    assert error == pytest.approx(expected, abs=1e-12)
    assert _direct_error(stump, X, y, weights) == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(feature_errors, expected_per_feature, atol=1e-12)


def test_exact_search_without_ties_matches_brute_force():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 3))
    y = rng.choice([-1.0, 1.0], size=30)
    weights = rng.exponential(size=30)
    _, error, feature_errors = best_stump(presort(X), y, weights)
    expected, expected_per_feature = _brute_force(
        X, y, weights, lambda f: _candidate_thresholds(X[:, f])
    )
    assert error == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(feature_errors, expected_per_feature, atol=1e-12)


def test_search_in_feature_blocks_equals_search_in_one_block(monkeypatch):
    X, y, weights = _data_with_ties(8, d=7)
    whole = best_stump(presort(X), y, weights)
    monkeypatch.setattr(stumps, "_BLOCK_FLOATS", 2 * X.shape[0])
    blocked = best_stump(presort(X), y, weights)
    assert blocked.stump == whole.stump
    np.testing.assert_allclose(blocked.feature_errors, whole.feature_errors, atol=1e-12)


def test_weight_batch_matches_row_by_row_brute_force():
    X, y, _ = _data_with_ties(7)
    rng = np.random.default_rng(7)
    weight_batch = rng.exponential(size=(3, X.shape[0]))
    weight_batch[1, : X.shape[0] // 2] = 0.0  # a domain-restricted weight vector
    results = best_stump(presort(X), y, weight_batch)
    assert len(results) == 3
    for weights, (stump, error, feature_errors) in zip(weight_batch, results):
        expected, expected_per_feature = _brute_force(
            X, y, weights, lambda f: _candidate_thresholds(X[:, f])
        )
        assert error == pytest.approx(expected, abs=1e-12)
        assert _direct_error(stump, X, y, weights) == pytest.approx(expected, abs=1e-12)
        np.testing.assert_allclose(feature_errors, expected_per_feature, atol=1e-12)


def test_threshold_lies_strictly_between_distinct_values():
    X = np.array([[1.0], [1.0], [2.0], [2.0], [3.0]])
    y = np.array([-1, -1, 1, 1, 1])
    stump, error, _ = best_stump(presort(X), y, np.ones(5))
    assert (stump.feature, stump.threshold, stump.polarity, error) == (0, 1.5, 1, 0.0)


def test_constant_stump_when_all_labels_agree():
    X = np.random.default_rng(0).normal(size=(10, 3))
    stump, error, _ = best_stump(presort(X), -np.ones(10), np.ones(10))
    assert error == 0.0
    np.testing.assert_array_equal(stump.predict(X), -np.ones(10))


def test_constant_feature_offers_only_the_constant_stump():
    X = np.ones((6, 1))
    y = np.array([1, 1, 1, 1, -1, -1])
    stump, error, _ = best_stump(presort(X), y, np.ones(6))
    assert stump.threshold == -np.inf and stump.polarity == 1 and error == 2.0


def test_unnormalised_weights_scale_the_error():
    X, y, weights = _data_with_ties(3)
    _, error, feature_errors = best_stump(presort(X), y, weights)
    _, scaled_error, scaled_feature_errors = best_stump(presort(X), y, 10.0 * weights)
    assert scaled_error == pytest.approx(10.0 * error)
    np.testing.assert_allclose(scaled_feature_errors, 10.0 * feature_errors)


def test_adjacent_floats_get_a_separating_threshold():
    low = 1.0
    high = np.nextafter(low, 2.0)
    X = np.array([[low], [high]])
    stump, error, _ = best_stump(presort(X), [-1, 1], np.ones(2))
    assert error == 0.0
    assert low <= stump.threshold < high


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_bins", [2, 5, 16])
def test_binned_search_matches_brute_force_over_bin_edges(seed, n_bins):
    X, y, weights = _data_with_ties(seed, m=60)
    presorted = presort(X, n_bins=n_bins)

    def bin_edges(feature):
        edges = presorted.thresholds[feature, : presorted.n_thresholds[feature]]
        return np.concatenate([[-np.inf], edges])

    stump, error, feature_errors = best_stump(presorted, y, weights)
    expected, expected_per_feature = _brute_force(X, y, weights, bin_edges)
    assert error == pytest.approx(expected, abs=1e-12)
    assert _direct_error(stump, X, y, weights) == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(feature_errors, expected_per_feature, atol=1e-12)
    assert presorted.n_thresholds.max() <= n_bins - 1


def test_binned_search_with_weight_batch_matches_single_calls():
    X, y, _ = _data_with_ties(4, m=80)
    weight_batch = np.random.default_rng(4).exponential(size=(3, 80))
    presorted = presort(X, n_bins=8)
    for weights, result in zip(weight_batch, best_stump(presorted, y, weight_batch)):
        single = best_stump(presorted, y, weights)
        assert result.stump == single.stump
        assert result.error == pytest.approx(single.error)


def test_binned_thresholds_separate_distinct_values():
    X = np.random.default_rng(5).integers(0, 10, size=(200, 2)).astype(float)
    presorted = presort(X, n_bins=4)
    for feature in range(2):
        edges = presorted.thresholds[feature, : presorted.n_thresholds[feature]]
        assert np.all(np.diff(edges) > 0)
        assert not np.any(np.isin(edges, X[:, feature]))
        assert edges.min() > X[:, feature].min() and edges.max() < X[:, feature].max()


def test_binned_with_many_bins_equals_exact_search():
    X, y, weights = _data_with_ties(6)
    exact = best_stump(presort(X), y, weights)
    binned = best_stump(presort(X, n_bins=1000), y, weights)
    assert binned.stump == exact.stump
    assert binned.error == pytest.approx(exact.error)


def test_stump_predict_follows_the_convention():
    stump = Stump(feature=0, threshold=0.5, polarity=-1)
    np.testing.assert_array_equal(stump.predict([[0.0], [0.5], [1.0]]), [1.0, 1.0, -1.0])


def test_stump_predict_rejects_too_few_features():
    with pytest.raises(ValueError, match="feature 2"):
        Stump(feature=2, threshold=0.0, polarity=1).predict(np.zeros((3, 2)))


@pytest.mark.parametrize(
    ("y", "weights", "match"),
    [
        ([1, -1, 2], np.ones(3), "y must contain only -1 and \\+1"),
        ([1, -1], np.ones(3), "y must have shape"),
        ([1, -1, 1], [1.0, -1.0, 1.0], "weights must be >= 0"),
        ([1, -1, 1], np.ones(4), "weights must have shape"),
        ([1, -1, 1], [1.0, np.nan, 1.0], "weights must be finite"),
    ],
)
def test_best_stump_rejects_bad_input(y, weights, match):
    with pytest.raises(ValueError, match=match):
        best_stump(presort(np.arange(3.0)), y, weights)


@pytest.mark.parametrize("n_bins", [1, 2.5, True])
def test_presort_rejects_bad_n_bins(n_bins):
    with pytest.raises(ValueError, match="n_bins"):
        presort(np.zeros((3, 1)), n_bins=n_bins)


def test_presort_rejects_nan():
    with pytest.raises(ValueError, match="X must be finite"):
        presort([[0.0], [np.nan]])
