"""The numba kernels give what the NumPy reference and a brute-force loop give: the same stumps
(feature, threshold, polarity, in the documented tie order) and errors, exact and binned, on
random problems with ties, zero weights, constant features and restricted supports; the same
steepest coordinate at a tie; and the same MultiBoost fit."""

import numpy as np
import pytest

from _helpers import tied_round
from manytask.boost import (
    MultiBoostClassifier,
    Stump,
    best_stump,
    kernels,
    presort,
    search_views,
    stumps,
)
from manytask.boost.steepest import steepest_coordinate

numba_only = pytest.mark.skipif(
    not kernels.numba_available(), reason="numba is not installed (pip install manytask[fast])"
)


def _problem(seed, m, d):
    """Rounded features (ties), a constant feature, ±1 labels, three weight rows: dense with
    zeros, restricted to about a third of the points (a domain), and all zero but two."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(m, d)), int(rng.integers(0, 3)))
    X[:, rng.integers(d)] = 1.5  # a constant feature: only the constant stump
    y = rng.choice([-1.0, 1.0], size=m)
    weights = rng.exponential(size=(3, m))
    weights[0] *= rng.random(m) < 0.7
    weights[1] *= rng.integers(0, 3, size=m) == 0
    weights[2] = 0.0
    weights[2, rng.choice(m, 2, replace=False)] = 1.0
    return X, y, weights


def _ordered_brute_force(X, y, weights, thresholds_of_feature):
    """The first least-error stump over features, thresholds ascending, polarity +1 then −1."""
    best_error, best = np.inf, None
    for feature in range(X.shape[1]):
        for threshold in sorted(thresholds_of_feature(feature)):
            for polarity in (1, -1):
                prediction = np.where(X[:, feature] > threshold, polarity, -polarity)
                error = sum(w for w, p, label in zip(weights, prediction, y) if p != label)
                if error < best_error:
                    best_error, best = error, Stump(feature, float(threshold), polarity)
    return best, best_error


def _exact_thresholds(X):
    def thresholds(feature):
        distinct = np.unique(X[:, feature])
        return [-np.inf, *(0.5 * distinct[:-1] + 0.5 * distinct[1:])]

    return thresholds


def test_backend_follows_the_environment_and_the_context(monkeypatch):
    monkeypatch.setenv("MANYTASK_KERNELS", "numpy")
    assert kernels.backend() == "numpy"
    with kernels.use_backend("auto"):
        assert kernels.backend() == ("numba" if kernels.numba_available() else "numpy")
    monkeypatch.setenv("MANYTASK_KERNELS", "fortran")
    with pytest.raises(ValueError, match="MANYTASK_KERNELS must be one of"):
        kernels.backend()
    with pytest.raises(ValueError, match="name must be one of"):
        with kernels.use_backend("gpu"):
            pass


def test_requesting_numba_without_it_names_the_extra(monkeypatch):
    monkeypatch.setattr(kernels, "_compiled", None)
    monkeypatch.setattr(kernels, "_numba_missing", True)
    with kernels.use_backend("numba"), pytest.raises(ImportError, match=r"manytask\[fast\]"):
        kernels.backend()
    with kernels.use_backend("auto"):
        assert kernels.backend() == "numpy"


@numba_only
@pytest.mark.parametrize("n_bins", [None, 3, 8, 300])
@pytest.mark.parametrize("seed", range(6))
def test_numba_search_equals_numpy_search_and_brute_force(seed, n_bins):
    rng = np.random.default_rng(seed)
    X, y, weights = _problem(seed, m=int(rng.integers(5, 60)), d=int(rng.integers(1, 5)))
    presorted = presort(X, n_bins=n_bins)
    with kernels.use_backend("numpy"):
        reference = best_stump(presorted, y, weights)
    with kernels.use_backend("numba"):
        compiled = best_stump(presorted, y, weights)
    for row, (numpy_result, numba_result) in enumerate(zip(reference, compiled)):
        assert numba_result.stump == numpy_result.stump
        assert numba_result.error == numpy_result.error
        np.testing.assert_array_equal(numba_result.feature_errors, numpy_result.feature_errors)
        if n_bins is None:
            thresholds = _exact_thresholds(X)
        else:

            def thresholds(feature):
                edges = presorted.thresholds[feature, : presorted.n_thresholds[feature]]
                return [-np.inf, *edges]

        _, expected_error = _ordered_brute_force(X, y, weights[row], thresholds)
        assert numba_result.error == pytest.approx(expected_error, abs=1e-12)
        direct = np.sum(weights[row][numba_result.stump.predict(X) != y])
        assert direct == pytest.approx(expected_error, abs=1e-12)


@numba_only
@pytest.mark.parametrize("n_features", [4, 9])
def test_binned_search_in_feature_blocks_equals_numpy(n_features):
    """The binned kernel fills the histograms of four features per pass over the points: with
    d = 4 one full block, with d = 9 two full blocks and a remainder of one feature; every
    feature's sums, and so its errors, splits and stump, are NumPy's bit for bit."""
    X, y, weights = _problem(11, m=70, d=n_features)
    presorted = presort(X, n_bins=5)
    with kernels.use_backend("numpy"):
        reference = best_stump(presorted, y, weights)
    with kernels.use_backend("numba"):
        compiled = best_stump(presorted, y, weights)
    for numpy_result, numba_result in zip(reference, compiled):
        assert (numba_result.stump, numba_result.error) == (numpy_result.stump, numpy_result.error)
        np.testing.assert_array_equal(numba_result.feature_errors, numpy_result.feature_errors)


@numba_only
@pytest.mark.parametrize("n_bins", [None, 4])
def test_numba_breaks_exact_ties_like_the_ordered_brute_force(n_bins):
    # Integer weights and few values: sums are exact, so ties between stumps are exact ties
    # (the NumPy search's tie test in test_stumps.py, run on the kernels).
    for seed in range(60):
        rng = np.random.default_rng(seed)
        X = rng.choice(4, size=(8, 2), p=[0.4, 0.3, 0.2, 0.1]).astype(float)
        y = rng.choice([-1.0, 1.0], size=8)
        weights = rng.integers(0, 4, size=8).astype(float)
        with kernels.use_backend("numba"):
            stump, error, _ = best_stump(presort(X, n_bins=n_bins), y, weights)
        expected_stump, expected_error = _ordered_brute_force(X, y, weights, _exact_thresholds(X))
        assert stump == expected_stump, f"seed {seed}"
        assert error == expected_error


@numba_only
@pytest.mark.parametrize("n_bins", [None, 6])
def test_numba_restricted_and_full_searches_agree(monkeypatch, n_bins):
    X, y, weights = _problem(3, m=90, d=4)
    with kernels.use_backend("numba"):
        monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", 1.0)  # every row on its support
        restricted = best_stump(presort(X, n_bins=n_bins), y, weights)
        monkeypatch.setattr(search_views, "_RESTRICT_FRACTION", -1.0)  # every row on all points
        full = best_stump(presort(X, n_bins=n_bins), y, weights)
    for r, f in zip(restricted, full):
        assert (r.stump, r.error) == (f.stump, f.error)
        np.testing.assert_array_equal(r.feature_errors, f.feature_errors)


def test_kernels_run_as_plain_python_like_numpy():
    """The kernel bodies are plain Python too (what numba compiles): their per-feature
    results equal the NumPy search's, so the logic is checked even without numba."""
    X, y, weights = _problem(5, m=40, d=3)
    presorted = presort(X)
    signed = weights[0] * y
    total, negative_total = np.abs(signed).sum(), 0.5 * (np.abs(signed).sum() - signed.sum())
    view = search_views._compiled_full_view(presorted)
    errors, splits, polarities = kernels._exact_search(
        signed, view.local_order, view.invalid, total, negative_total
    )
    full_view = search_views._full_view(presorted)
    reference = stumps._search_exact(full_view, signed, total, negative_total)
    np.testing.assert_array_equal(errors, reference[0])
    np.testing.assert_array_equal(splits, reference[1])
    np.testing.assert_array_equal(polarities, reference[2])


@numba_only
@pytest.mark.parametrize("n_bins", [None, 16])
def test_multiboost_fit_is_the_same_with_both_kernels(n_bins):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 5))
    domains = rng.integers(0, 3, size=300)
    y = (X[:, 0] + 0.5 * X[:, 1] * (domains - 1) + 0.3 * rng.normal(size=300) > 0).astype(int)
    fits = {}
    for backend in ("numpy", "numba"):
        with kernels.use_backend(backend):
            fits[backend] = MultiBoostClassifier(n_estimators=25, n_bins=n_bins).fit(
                X, y, domains=domains
            )
    numpy_fit, numba_fit = fits["numpy"], fits["numba"]
    # Stumps that agree on every training point (a −inf stump on any feature; two bin edges
    # with no point between them) tie exactly, and a CPU's rounding may break such a tie
    # either way, so the terms are not compared: the function on the training points is,
    # to 1e-9 (25 terms, |α Q h| ≲ 2, each α from sums of ≤ 300 terms).
    np.testing.assert_allclose(
        numba_fit.decision_function(X), numpy_fit.decision_function(X), rtol=0.0, atol=1e-9
    )
    assert numba_fit.objective_ == pytest.approx(numpy_fit.objective_, rel=1e-9)
    assert any(record.get("direction_rule") == "paper" for record in numba_fit.history_)


@numba_only
def test_parallel_kernels_equal_the_serial_ones(monkeypatch):
    """Large problems run the feature loops on numba's threads (the same code compiled with
    ``parallel=True``); forced here on a small one, they give the NumPy results."""
    X, y, weights = _problem(8, m=80, d=5)
    X_tied, *tied = tied_round(8)
    results = {}
    for backend, threshold in (("numpy", None), ("numba", 0)):
        if threshold is not None:
            monkeypatch.setattr(kernels, "PARALLEL_MIN_CELLS", threshold)
        with kernels.use_backend(backend):
            results[backend] = (
                best_stump(presort(X), y, weights),
                best_stump(presort(X, n_bins=6), y, weights),
                steepest_coordinate(presort(X_tied), *tied, np.array([0, 1])),
                steepest_coordinate(presort(X_tied, n_bins=6), *tied, np.array([0, 1])),
            )
    for numpy_part, numba_part in zip(results["numpy"][:2], results["numba"][:2]):
        for r, s in zip(numpy_part, numba_part):
            assert (r.stump, r.error) == (s.stump, s.error)
            np.testing.assert_array_equal(r.feature_errors, s.feature_errors)
    assert results["numba"][2:] == results["numpy"][2:]


_RUN_KERNEL = """
import sys
import numba
import numpy as np
from manytask.boost import kernels

kernels._load()
kernels._compiled[sys.argv[1]](
    np.ones(4), np.zeros((2, 4), np.uint8), np.zeros(2, np.intp), 2, 4.0, 0.0
)
try:
    print(numba.threading_layer())  # set once a parallel region has run
except ValueError:
    print("no threads")
"""


@numba_only
def test_serial_twins_do_not_share_the_parallel_kernels_cache(tmp_path):
    """numba keys its on-disk cache by function name and bytecode, not by ``parallel``: a
    serial twin compiled from the same function loaded whichever of the two was cached
    first, so the one-thread path could start threads and the threaded path run on one.
    Here the parallel kernel is cached first; a second process then runs the serial twin."""
    import os
    import subprocess
    import sys

    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}

    def run(kernel):
        command = [sys.executable, "-c", _RUN_KERNEL, kernel]
        return subprocess.run(
            command, env=environment, capture_output=True, text=True, check=True
        ).stdout.strip()

    assert run("binned_search") != "no threads"
    assert run("binned_search_serial") == "no threads"
    assert run("binned_search") != "no threads"  # and the parallel one still runs threaded


def test_compiled_views_are_row_contiguous():
    """The kernels read one feature's row at a time: a restricted view's rows must be
    contiguous (``bins[:, points]`` is F-ordered; a strided row made the search 2× slower)."""
    X, _, weights = _problem(3, m=90, d=4)
    for n_bins in (None, 6):
        presorted = presort(X, n_bins=n_bins)
        # about a third of the points: a restricted view
        view = search_views._view_for(presorted, weights[1], compiled=True)
        assert view.points is not None
        rows = view.local_order if n_bins is None else view.bins
        assert rows.flags.c_contiguous
