"""The steepest coordinate of the max at a tie (manytask.boost.steepest), exact and binned,
against a brute-force loop over every (q, stump), and the NumPy and numba searches against
each other."""

import numpy as np
import pytest

from _helpers import tied_round
from manytask.boost import kernels, presort
from manytask.boost.steepest import steepest_coordinate
from manytask.boost.stumps import support_view

numba_only = pytest.mark.skipif(not kernels.numba_available(), reason="needs numba (extra fast)")


def _slots(domain_index, active):
    """Each point's position among the tied domains, or −1 (as steepest_coordinate sets it)."""
    slot_of_domain = np.full(domain_index.max() + 1, -1, dtype=np.int8)
    slot_of_domain[active] = np.arange(active.size)
    return slot_of_domain[domain_index]


def _candidate_thresholds(presorted, feature):
    """The thresholds the model searches: every midpoint (exact) or the bin edges (binned)."""
    if presorted.n_bins is not None:
        return [-np.inf, *presorted.thresholds[feature, : presorted.n_thresholds[feature]]]
    distinct = np.unique(presorted.X[:, feature])
    return [-np.inf, *(0.5 * distinct[:-1] + 0.5 * distinct[1:])]


def _brute_force(presorted, y, Q, scaled, domain_index, active):
    """max over q, threshold, polarity of min_l Σ_{i∈S_l} a_i y_i Q(q|x_i) h(x_i), one by one."""
    X, best = presorted.X, -np.inf
    for q in range(Q.shape[1]):
        for feature in range(X.shape[1]):
            for threshold in _candidate_thresholds(presorted, feature):
                for polarity in (1, -1):
                    h = np.where(X[:, feature] > threshold, polarity, -polarity)
                    rates = [
                        sum(scaled[i] * y[i] * Q[i, q] * h[i]
                            for i in range(len(y)) if domain_index[i] == l)
                        for l in active
                    ]  # fmt: skip
                    best = max(best, min(rates))
    return best


def _rate(stump, q, X, y, Q, scaled, domain_index, active):
    h = stump.predict(X)
    return min(np.sum((scaled * y * Q[:, q] * h)[domain_index == l]) for l in active)


@pytest.mark.parametrize("n_bins", [None, 5])
@pytest.mark.parametrize("active", [[0, 2], [0, 1, 2], [1]])
@pytest.mark.parametrize("seed", range(3))
def test_steepest_coordinate_is_the_brute_force_maximum(seed, active, n_bins):
    X, y, Q, scaled, domain_index = tied_round(seed)
    presorted, active = presort(X, n_bins=n_bins), np.array(active)
    expected = _brute_force(presorted, y, Q, scaled, domain_index, active)
    with kernels.use_backend("numpy"):
        q, stump = steepest_coordinate(presorted, y, Q, scaled, domain_index, active)
    if stump is None:
        assert expected <= 0
        return
    assert expected > 0
    assert stump.threshold in _candidate_thresholds(presorted, stump.feature)
    rate = _rate(stump, q, X, y, Q, scaled, domain_index, active)
    assert rate == pytest.approx(expected, rel=1e-12)


def test_binned_mode_searches_the_bin_edges_only():
    """With 5 bins on ~40 distinct values the binned maximum is below the exact one here, and
    the stump's threshold is a bin edge."""
    X, y, Q, scaled, domain_index = tied_round(1, m=120, d=2)
    active = np.array([0, 1])
    exact = _brute_force(presort(X), y, Q, scaled, domain_index, active)
    binned = presort(X, n_bins=5)
    q, stump = steepest_coordinate(binned, y, Q, scaled, domain_index, active)
    edges = binned.thresholds[stump.feature, : binned.n_thresholds[stump.feature]]
    assert stump.threshold == -np.inf or stump.threshold in edges
    rate = _rate(stump, q, X, y, Q, scaled, domain_index, active)
    assert rate == pytest.approx(_brute_force(binned, y, Q, scaled, domain_index, active))
    assert rate < exact


def test_no_common_descent_gives_none():
    """Two one-point domains with opposite labels and Q ≡ ½: every h helps one and hurts the
    other equally, so the best rate is 0 and no coordinate lowers both."""
    X, y, Q = np.array([[0.0], [0.0]]), np.array([1.0, -1.0]), np.full((2, 2), 0.5)
    for n_bins in (None, 4):
        result = steepest_coordinate(
            presort(X, n_bins=n_bins), y, Q, np.ones(2), np.array([0, 1]), np.array([0, 1])
        )
        assert result == (None, None)


@numba_only
@pytest.mark.parametrize("n_bins", [None, 5, 256, 40_000])  # 40 000: 4-byte histogram cells
@pytest.mark.parametrize("active", [[0, 2], [0, 1, 2], [1]])
@pytest.mark.parametrize("seed", range(3))
def test_numba_steepest_coordinate_equals_numpy(seed, active, n_bins):
    X, y, Q, scaled, domain_index = tied_round(seed, m=200)
    presorted, active = presort(X, n_bins=n_bins), np.array(active)
    if n_bins is not None:
        cells = support_view(presorted, _slots(domain_index, active)).cells
        assert cells.flags.c_contiguous  # the kernel reads a feature's row: strided, 2× slower
        if n_bins == 40_000 and active.size > 1:
            assert cells.dtype == np.int32
    results = {}
    for backend in ("numpy", "numba"):
        with kernels.use_backend(backend):
            results[backend] = steepest_coordinate(presorted, y, Q, scaled, domain_index, active)
    assert results["numba"] == results["numpy"]
