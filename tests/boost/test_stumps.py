"""Stump search: exactness against a brute-force loop, tie handling, binned mode, errors;
every test on both kernels (NumPy and numba)."""

import numpy as np
import pytest

from manytask.boost import Stump, best_stump, kernels, presort, search_views, stumps
from manytask.boost.stumps import candidate_thresholds


@pytest.fixture(autouse=True, params=["numpy", "numba"])
def backend(request):
    """Every test runs on the NumPy reference search and on the numba kernels."""
    if request.param == "numba" and not kernels.numba_available():
        pytest.skip("numba is not installed (pip install manytask[fast])")
    with kernels.use_backend(request.param):
        yield request.param


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


def test_stump_predict_without_input_check_agrees():
    X = np.random.default_rng(1).normal(size=(50, 3))
    stump = Stump(feature=2, threshold=0.1, polarity=-1)
    np.testing.assert_array_equal(stump.predict(X, check_input=False), stump.predict(X))
    np.testing.assert_array_equal(stump.predict(X), np.where(X[:, 2] > 0.1, -1.0, 1.0))
    with pytest.raises(ValueError, match="X must be finite"):
        stump.predict(np.where(X == X[0, 0], np.nan, X))  # NaN in a column it does not read


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


# --------------------------------------------------------------------------- ties and supports


def _integer_problem(seed, m=48, d=3, levels=4):
    """Few distinct feature values with unequal counts and integer weights: every sum is exact
    in floating point, so ties between stumps are exact ties."""
    rng = np.random.default_rng(seed)
    frequencies = np.linspace(4, 1, levels)  # unequal counts: quantile bins would merge values
    X = rng.choice(levels, size=(m, d), p=frequencies / frequencies.sum())
    y = rng.choice([-1.0, 1.0], size=m)
    weights = rng.integers(0, 4, size=m).astype(float)
    return X.astype(float), y, weights


def _first_best_stump(X, y, weights, thresholds_of_feature):
    """Brute force in the documented tie order: features, then thresholds ascending, then
    polarity +1 before −1; a later candidate replaces the best only if strictly better."""
    best_error, best = np.inf, None
    for feature in range(X.shape[1]):
        for threshold in sorted(thresholds_of_feature(feature)):
            for polarity in (1, -1):
                stump = Stump(feature, float(threshold), polarity)
                error = _direct_error(stump, X, y, weights)
                if error < best_error:
                    best_error, best = error, stump
    return best, best_error


def _exact_thresholds(X):
    def thresholds(feature):
        distinct = np.unique(X[:, feature])
        return [-np.inf, *(0.5 * (distinct[:-1] + distinct[1:]))]

    return thresholds


@pytest.mark.parametrize("n_bins", [None, 4])
def test_ties_are_broken_like_the_ordered_brute_force(n_bins):
    # Tiny problems tie often: over these 150 draws, both polarities reach the least error
    # at different splits several times (the search once preferred +1 regardless of split).
    for seed in range(150):
        X, y, weights = _integer_problem(seed, m=8, d=2, levels=4)
        stump, error, _ = best_stump(presort(X, n_bins=n_bins), y, weights)
        # At most n_bins distinct values per feature: the bin edges are the exact thresholds.
        expected_stump, expected_error = _first_best_stump(X, y, weights, _exact_thresholds(X))
        assert stump == expected_stump, f"seed {seed}"
        assert error == expected_error


@pytest.mark.parametrize("seed", range(4))
def test_binned_equals_exact_when_features_have_at_most_n_bins_values(seed):
    X, y, _ = _integer_problem(seed, m=200, d=4, levels=6)
    X[:, 0] = np.where(X[:, 0] == 5, 100.0, X[:, 0])  # a rare, far-out value keeps its bin
    weight_batch = np.random.default_rng(seed).integers(0, 5, size=(3, 200)).astype(float)
    exact = best_stump(presort(X), y, weight_batch)
    binned_presorted = presort(X, n_bins=6)
    binned = best_stump(binned_presorted, y, weight_batch)
    for feature in range(4):
        distinct = np.unique(X[:, feature])
        edges = binned_presorted.thresholds[feature, : binned_presorted.n_thresholds[feature]]
        np.testing.assert_array_equal(edges, 0.5 * (distinct[:-1] + distinct[1:]))
    for exact_result, binned_result in zip(exact, binned):
        assert binned_result.stump == exact_result.stump
        assert binned_result.error == exact_result.error
        np.testing.assert_array_equal(binned_result.feature_errors, exact_result.feature_errors)


def _domain_weights(seed, m, n_domains=3):
    """One weight row per domain, zero off the domain (MULTIBOOST's D_t(k, ·) Q(k|·))."""
    rng = np.random.default_rng(seed)
    domain = rng.integers(0, n_domains, size=m)
    return rng.exponential(size=(n_domains, m)) * (domain == np.arange(n_domains)[:, None])


@pytest.mark.parametrize("n_bins", [None, 5])
@pytest.mark.parametrize("seed", range(3))
def test_support_restricted_search_equals_full_search(monkeypatch, seed, n_bins):
    X, y, _ = _data_with_ties(seed, m=60)
    weight_batch = _domain_weights(seed, 60)
    monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", 1.0)  # every row on its support
    restricted = best_stump(presort(X, n_bins=n_bins), y, weight_batch)
    monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", -1.0)  # every row on all points
    full = best_stump(presort(X, n_bins=n_bins), y, weight_batch)
    for r, f in zip(restricted, full):
        assert r.stump == f.stump
        assert r.error == f.error
        np.testing.assert_array_equal(r.feature_errors, f.feature_errors)


@pytest.mark.parametrize("seed", range(3))
def test_domain_weights_match_brute_force(seed):
    X, y, _ = _data_with_ties(seed, m=45, d=5)  # odd d: the last feature pair is padded
    weight_batch = _domain_weights(seed, 45)
    for weights, (stump, error, feature_errors) in zip(
        weight_batch, best_stump(presort(X), y, weight_batch)
    ):
        expected, expected_per_feature = _brute_force(
            X, y, weights, lambda f: _candidate_thresholds(X[:, f])
        )
        assert error == pytest.approx(expected, abs=1e-12)
        assert _direct_error(stump, X, y, weights) == pytest.approx(expected, abs=1e-12)
        np.testing.assert_allclose(feature_errors, expected_per_feature, atol=1e-12)


def test_restricted_threshold_is_the_lowest_over_zero_weight_points():
    # Worked by hand: only x = 0 (y = −1) and x = 3 (y = +1) carry weight; thresholds 0.5,
    # 1.5 and 2.5 all separate them, and the lowest one, 0.5, must be chosen.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    result = best_stump(presort(X), [-1, 1, -1, 1], [1.0, 0.0, 0.0, 1.0])
    assert result.stump == Stump(feature=0, threshold=0.5, polarity=1)
    assert result.error == 0.0


def test_split_above_every_weighted_point_is_kept(monkeypatch):
    # Weighted points x = 0, 1 both y = +1 lie below the zero-weight x = 2, 3: the full search
    # may put a threshold above them (1.5); the restricted one must see the same candidates.
    X = np.array([[0.0, 5.0], [1.0, 4.0], [2.0, 0.0], [3.0, 1.0]])
    y = np.array([1.0, 1.0, -1.0, 1.0])
    weights = np.array([[1.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", -1.0)
    full = best_stump(presort(X), y, weights)
    monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", 1.0)
    restricted = best_stump(presort(X), y, weights)
    for r, f in zip(restricted, full):
        assert (r.stump, r.error) == (f.stump, f.error)
        np.testing.assert_array_equal(r.feature_errors, f.feature_errors)


def test_many_supports_beyond_the_cache_bound(monkeypatch):
    monkeypatch.setattr(search_views, "_MAX_CACHED_SUPPORTS", 2)
    X, y, _ = _data_with_ties(9, m=30)
    presorted = presort(X)
    rng = np.random.default_rng(9)
    for _ in range(5):
        weights = rng.exponential(size=30) * (rng.random(30) < 0.3)
        stump, error, _ = best_stump(presorted, y, weights)
        expected, _ = _brute_force(X, y, weights, lambda f: _candidate_thresholds(X[:, f]))
        assert error == pytest.approx(expected, abs=1e-12)
        assert len(presorted._views) <= 2


def test_cached_supports_hold_at_most_twice_the_points(monkeypatch):
    monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", 1.0)
    X, y, _ = _data_with_ties(10, m=40)
    presorted = presort(X)
    rng = np.random.default_rng(10)
    for _ in range(6):
        weights = rng.exponential(size=40) * (rng.random(40) < 0.8)  # ~32 points each
        stump, error, _ = best_stump(presorted, y, weights)
        expected, _ = _brute_force(X, y, weights, lambda f: _candidate_thresholds(X[:, f]))
        assert error == pytest.approx(expected, abs=1e-12)
        assert sum(view.points.size for view in presorted._views.values()) <= 80


def test_all_zero_weights_give_the_constant_stump():
    X, y, _ = _data_with_ties(2, m=20)
    stump, error, feature_errors = best_stump(presort(X), y, np.zeros(20))
    assert (stump.threshold, stump.polarity, error) == (-np.inf, 1, 0.0)
    np.testing.assert_array_equal(feature_errors, np.zeros(X.shape[1]))


@pytest.mark.parametrize("n_bins", [3, 16, 255])
def test_binned_thresholds_follow_the_quantiles(n_bins):
    # Independent computation with np.unique and np.quantile: the midpoint after each
    # feature's quantile j/n_bins (method "lower"), unless it is the largest value; every
    # midpoint if the feature has at most n_bins distinct values (the rounded column at 255).
    rng = np.random.default_rng(n_bins)
    X = np.column_stack([rng.normal(size=500), np.round(rng.exponential(size=500), 1)])
    presorted = presort(X, n_bins=n_bins)
    for feature in range(2):
        distinct = np.unique(X[:, feature])
        quantiles = np.quantile(X[:, feature], np.arange(1, n_bins) / n_bins, method="lower")
        expected = np.unique(quantiles[quantiles < distinct[-1]])
        if distinct.size <= n_bins:
            expected = distinct[:-1]
        upper = distinct[np.searchsorted(distinct, expected, side="right")]
        edges = presorted.thresholds[feature, : presorted.n_thresholds[feature]]
        np.testing.assert_array_equal(edges, (expected + upper) / 2)
        expected_bins = (X[:, feature][:, None] > edges[None, :]).sum(axis=1)
        np.testing.assert_array_equal(presorted.bins[feature], expected_bins)
    assert presorted.bins.dtype == np.uint8  # one byte per (feature, point) up to 256 bins


def test_bin_numbers_take_the_narrowest_type():
    X = np.arange(600.0)[:, None]
    assert presort(X, n_bins=256).bins.dtype == np.uint8
    wide = presort(X, n_bins=300)  # 600 distinct values: 299 edges, bin numbers up to 299
    assert wide.bins.dtype == np.uint16
    np.testing.assert_array_equal(wide.bins[0], np.minimum(np.arange(600) // 2, 299))


@pytest.mark.parametrize("n_bins", [None, 5])
def test_predictions_from_the_presorted_features_equal_predict(n_bins):
    X, _, _ = _data_with_ties(12, m=50)
    presorted = presort(X, n_bins=n_bins)
    candidates = [-np.inf, 0.05, -0.35, 10.0, -10.0]  # midpoints of ties, outside the range
    if n_bins is not None:
        candidates += list(presorted.thresholds[1, : presorted.n_thresholds[1]])  # bin edges
    for feature in range(X.shape[1]):
        for threshold in [*candidates, X[0, feature]]:  # a data value: x > t is strict
            for polarity in (1, -1):
                stump = Stump(feature, float(threshold), polarity)
                expected = np.where(X[:, feature] > threshold, polarity, -polarity)
                np.testing.assert_array_equal(stumps.predict_presorted(presorted, stump), expected)
                np.testing.assert_array_equal(
                    stumps.above_threshold(presorted, stump), X[:, feature] > threshold
                )


def test_candidate_thresholds_are_the_midpoints_with_the_constant_stump_once():
    X, _, _ = _integer_problem(3, m=12, d=3, levels=5)
    thresholds = candidate_thresholds(X.T)
    for feature, got in enumerate(thresholds):
        expected = _exact_thresholds(X)(feature)  # the brute-force table above, −∞ first
        if feature > 0:
            expected = expected[1:]  # the constant stump is offered once, on feature 0
        np.testing.assert_array_equal(got, expected)
