"""Histogram trees as MULTIBOOST's base classes (:mod:`manytask.boost.trees`): the greedy
growth against a loop over nodes, features and edges; depth 1 against the stump search; the
compiled histograms against NumPy; the estimators with ``max_depth`` > 1."""

import numpy as np
import pytest

from manytask.boost import AdaBoost, MultiBoostClassifier, directions, kernels, presort
from manytask.boost.stumps import StumpResult, best_stump
from manytask.boost.trees import Tree, grow_tree, tree_training_values

BACKENDS = ["numpy"] + (["numba"] if kernels.numba_available() else [])


def _signed_problem(seed, m=120, d=3, n_outputs=1):
    """Continuous features (no tied values), signed weights s_ic = w_i Y_ic, a third zero."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    signs = np.where(X[:, :1] * X[:, 1:2] + 0.3 * rng.normal(size=(m, n_outputs)) > 0, 1.0, -1.0)
    weights = rng.exponential(size=(m, 1)) * (rng.random((m, 1)) < 0.67)
    return X, signs * weights


def _score(parts, last_level):
    """Σ over the parts of Σ_c |S_c| (last level) or Σ_c S_c²/W_c (weighted Gini)."""
    total = 0.0
    for part in parts:
        sums, masses = part.sum(axis=0), np.abs(part).sum(axis=0)
        if last_level:
            total += np.abs(sums).sum()
        else:
            total += sum(s * s / w for s, w in zip(sums, masses) if w > 0)
    return total


def _greedy_loop(X, thresholds, signed, depth, rows=None):
    """The greedy tree by loops over nodes, features and thresholds: a node takes the split
    of greatest score (the edge of its two leaves on the last level, the weighted Gini score
    above), the first in feature then threshold order, both sides with weight; a leaf if no
    split beats the node's own score by 1e-9 of its weight. Returns the tree's edge."""
    rows = np.arange(X.shape[0]) if rows is None else rows
    rows = rows[np.any(signed[rows] != 0, axis=1)]
    if depth == 0:
        return np.abs(signed[rows].sum(axis=0)).sum()
    last = depth == 1
    best, best_split = -np.inf, None
    for feature in range(X.shape[1]):
        for threshold in thresholds[feature]:
            right = X[rows, feature] > threshold
            if right.all() or not right.any():
                continue
            gain = _score([signed[rows[~right]], signed[rows[right]]], last)
            if gain > best + 1e-12 * np.abs(signed[rows]).sum():
                best, best_split = gain, (feature, threshold)
    if not best > _score([signed[rows]], last) + 1e-9 * np.abs(signed[rows]).sum():
        return _greedy_loop(X, thresholds, signed, depth - 1, rows)
    feature, threshold = best_split
    right = X[rows, feature] > threshold
    return _greedy_loop(X, thresholds, signed, depth - 1, rows[~right]) + _greedy_loop(
        X, thresholds, signed, depth - 1, rows[right]
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("depth, n_outputs", [(1, 1), (2, 1), (3, 1), (2, 3)])
def test_grown_tree_edge_equals_the_greedy_loop_and_its_predictions(backend, depth, n_outputs):
    X, signed = _signed_problem(depth + n_outputs, n_outputs=n_outputs)
    presorted = presort(X, n_bins=16)
    thresholds = [presorted.thresholds[f, : presorted.n_thresholds[f]] for f in range(3)]
    with kernels.use_backend(backend):
        tree, edge = grow_tree(presorted, signed, depth)
    assert edge == pytest.approx(_greedy_loop(X, thresholds, signed, depth), rel=1e-12)
    values = tree.predict(X).reshape(X.shape[0], -1)
    assert set(np.unique(values)) <= {-1.0, 1.0}
    assert np.sum(signed * values) == pytest.approx(edge, rel=1e-12)  # E = Σ s h
    np.testing.assert_array_equal(tree_training_values(presorted, tree).reshape(values.shape),
                                  values)  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_depth_one_tree_has_the_least_stump_error(seed):
    """Depth-1 trees are the stumps and the constant: ε(tree) = ε(best stump) (no tied
    values, so the same partition of the training points)."""
    X, signed = _signed_problem(10 + seed)
    presorted = presort(X, n_bins=16)
    y, w = np.where(signed[:, 0] < 0, -1.0, 1.0), np.abs(signed[:, 0])
    tree, edge = grow_tree(presorted, signed, 1)
    stump, error, _ = best_stump(presorted, y, w)
    assert 0.5 * (w.sum() - edge) == pytest.approx(error, rel=1e-12, abs=1e-12)
    agree = tree.predict(X) == stump.predict(X)
    assert np.all(agree | (w == 0))


def test_numba_and_numpy_histograms_agree():
    if not kernels.numba_available():
        pytest.skip("numba is not installed")
    X, signed = _signed_problem(7, m=400, d=5, n_outputs=2)
    presorted = presort(X, n_bins=32)
    trees = {}
    for backend in BACKENDS:
        with kernels.use_backend(backend):
            trees[backend] = grow_tree(presorted, signed, 4)
    (numpy_tree, numpy_edge), (numba_tree, numba_edge) = trees["numpy"], trees["numba"]
    assert numba_edge == pytest.approx(numpy_edge, rel=1e-12)
    # the continuous features leave no exact tie between splits: the same tree
    np.testing.assert_array_equal(numba_tree.predict(X), numpy_tree.predict(X))


@pytest.mark.parametrize("n_outputs", [1, 2])
@pytest.mark.parametrize("last_level", [False, True])
def test_compiled_level_equals_direct_histograms_and_a_loop_over_splits(last_level, n_outputs):
    """One level below a parent: the kernel's histograms (smaller child summed, sibling by
    subtraction) against a direct bincount of every child's points, and its maxima (a scalar
    path for one output, C = 1) against _split_scores over every bin edge."""
    if not kernels.numba_available():
        pytest.skip("numba is not installed")
    from manytask.boost.trees import _histograms, _level, _split_scores

    X, signed = _signed_problem(9, m=300, d=4, n_outputs=n_outputs)
    presorted = presort(X, n_bins=16)
    channels = np.hstack([signed, np.abs(signed)])
    points = np.flatnonzero(np.any(signed != 0, axis=1))
    parent = _histograms(presorted, points, np.zeros(points.size, np.intp), channels, 1)
    node_of_point = (X[:, 2] > 0.1).astype(np.intp)  # two children of unequal size
    with kernels.use_backend("numba"):
        histogram, maxima = _level(presorted, points, node_of_point, channels, parent,
                                   last_level)  # fmt: skip
    direct = _histograms(presorted, points, node_of_point[points], channels, 2)
    np.testing.assert_allclose(histogram, direct, rtol=1e-12, atol=1e-12)
    for node in range(2):
        for feature in range(4):
            scores = _split_scores(direct[node, feature], presorted.n_thresholds[feature],
                                   last_level)  # fmt: skip
            assert maxima[node, feature] == pytest.approx(scores.max(), rel=1e-12)


def _stump_search_by_depth_one_trees(presorted, y, weights, check_input=True):
    """best_stump's interface answered by grow_tree(…, 1): the depth-1 tree and its error."""
    rows = np.atleast_2d(weights)
    results = []
    for row in rows:
        tree, edge = grow_tree(presorted, row * y, 1)
        results.append(StumpResult(tree, 0.5 * (row.sum() - edge), None))
    return results if np.ndim(weights) == 2 else results[0]


def test_multiboost_with_depth_one_trees_is_multiboost_with_stumps(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 3))
    domains = np.repeat([0, 1, 2], 80)
    y = (X[:, 0] + 0.6 * (domains - 1) * X[:, 1] + 0.4 * rng.normal(size=240) > 0).astype(int)
    stumps = MultiBoostClassifier(n_estimators=15, n_bins=16).fit(X, y, domains=domains)
    monkeypatch.setattr(directions, "best_stump", _stump_search_by_depth_one_trees)
    trees = MultiBoostClassifier(n_estimators=15, n_bins=16).fit(X, y, domains=domains)
    assert all(isinstance(h, Tree) for _, h in trees.estimators_)
    np.testing.assert_allclose(
        trees.decision_function(X), stumps.decision_function(X), rtol=0.0, atol=1e-9
    )


def test_one_domain_multiboost_with_trees_is_adaboost_with_trees():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=200) > 0).astype(int)
    multiboost = MultiBoostClassifier(n_estimators=10, max_depth=3).fit(X, y)
    adaboost = AdaBoost(n_estimators=10, max_depth=3).fit(X, y)
    np.testing.assert_allclose(
        multiboost.decision_function(X), adaboost.decision_function(X), rtol=0.0, atol=1e-9
    )


def test_trees_learn_what_stumps_cannot():
    """XOR, sources drawn independently of x (so Q(k|x) carries no sign of x0): a sum of
    stumps is additive in x0 and x1 and errs on a quadrant's worth (≥ ~1/4), depth-2 trees
    separate it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    domains = rng.integers(0, 2, size=400)
    stumps = MultiBoostClassifier(n_estimators=20).fit(X, y, domains=domains)
    trees = MultiBoostClassifier(n_estimators=20, max_depth=2).fit(X, y, domains=domains)
    assert trees.score(X, y) > 0.97
    assert stumps.score(X, y) < 0.85
    assert np.isclose(trees.feature_importances_.sum(), 1.0)


def test_multiclass_trees_fit_and_predict_every_class():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])
    domains = rng.integers(0, 2, size=300)
    clf = MultiBoostClassifier(n_estimators=15, max_depth=2).fit(X, y, domains=domains)
    stumps = MultiBoostClassifier(n_estimators=15).fit(X, y, domains=domains)
    assert clf.decision_function(X).shape == (300, 3)
    assert all(h.votes.shape == (4, 3) for _, h in clf.estimators_)
    assert clf.score(X, y) > 0.9 > stumps.score(X, y)  # an oblique boundary: 0.94 vs 0.78


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True])
def test_bad_max_depth_raises_naming_it(value):
    X = np.arange(8.0).reshape(4, 2)
    clf = MultiBoostClassifier(max_depth=value)
    with pytest.raises(ValueError, match="^max_depth must"):
        clf.fit(X, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="^max_depth must"):
        AdaBoost(max_depth=value).fit(X, [0, 1, 0, 1])


def test_pooled_and_per_source_adaboost_take_the_same_trees():
    from manytask.boost import AdaBoostPerDomain, PooledAdaBoost

    rng = np.random.default_rng(6)
    X = rng.normal(size=(240, 3))
    domains = np.repeat([0, 1], 120)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    pooled = PooledAdaBoost(n_estimators=8, max_depth=3).fit(X, y, domains=domains)
    reference = AdaBoost(n_estimators=8, max_depth=3).fit(X, y)
    np.testing.assert_array_equal(pooled.estimator_.decision_function(X),
                                  reference.decision_function(X))  # fmt: skip
    per_source = AdaBoostPerDomain(n_estimators=8, max_depth=3).fit(X, y, domains=domains)
    for k, model in enumerate(per_source.estimators_):
        rows = domains == k
        alone = AdaBoost(n_estimators=8, max_depth=3).fit(X[rows], y[rows])
        assert all(isinstance(h, Tree) for h in model.estimators_)
        np.testing.assert_array_equal(model.decision_function(X), alone.decision_function(X))
