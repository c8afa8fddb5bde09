"""Compiled (numba) kernels for the hot loops of a MULTIBOOST round, and the switch between them
and the NumPy reference code.

Lives here: :func:`backend` / :func:`use_backend` (which implementation runs) and the compiled
kernels, each a loop that replaces a chain of NumPy passes with one pass over the data:

- :func:`exact_search`: per feature, the cumulative signed weight along the presorted order and
  its least / largest value over the valid splits (the exact stump search of :mod:`.stumps`);
- :func:`binned_search`: per feature, a histogram of the signed weights over the bins (four
  features per pass over the points), its prefix sums and their extremes (the binned search);
- :func:`steepest_splits` / :func:`binned_steepest_splits`: per feature, the split (exact, or
  bin edge) of each (q, polarity) maximising the least rate over the tied domains (the
  steepest coordinate of :mod:`.steepest` at a tie);
- :func:`tree_level`: per level of a histogram tree, the signed weights and masses summed per
  (node, feature, bin) over the smaller child of each split, the sibling as the parent minus
  it, and each (node, feature)'s best split score, in one pass per feature (the split search
  of :mod:`.trees`);
- :func:`coordinate_pieces`: F_l(α + η e) and its first two derivatives in η for every
  domain l, one fused pass over the terms a_i e^{−η u_i} (the line search of :mod:`.figure1`).

Every kernel adds in the same order as the NumPy code it replaces (sequential cumulative
sums and histograms), so searches give bit-for-bit the same sums, stumps and errors; the
features run in parallel (``prange``) over numba's threads, or on one thread below
``PARALLEL_MIN_CELLS`` (feature, point) cells.

Does not live here: the NumPy reference implementations (:mod:`.stumps`, :mod:`.rounds`,
:mod:`.figure1`), which stay the fallback when numba is missing and the reference in tests.

Numba comes with the optional extra ``fast`` (``pip install manytask[fast]``) and is used
automatically when importable. ``MANYTASK_KERNELS=numpy`` in the environment (or
:func:`use_backend`) forces the NumPy path; ``MANYTASK_KERNELS=numba`` requires numba. The
kernels are compiled on first use and cached on disk (``cache=True``; if no cache directory
is writable, numba compiles in memory each run).

>>> with use_backend("numpy"):
...     backend()
'numpy'
"""

from __future__ import annotations

import os
import threading
import types
import warnings
from contextlib import contextmanager

import numpy as np

__all__ = [
    "BACKENDS",
    "PARALLEL_MIN_CELLS",
    "backend",
    "binned_search",
    "binned_steepest_splits",
    "coordinate_pieces",
    "exact_search",
    "numba_available",
    "steepest_splits",
    "tree_level",
    "use_backend",
]

BACKENDS = ("auto", "numba", "numpy")
_ENVIRONMENT = "MANYTASK_KERNELS"
_override: str | None = None
_compiled: dict | None = None
_numba_missing = False
# Replaced by numba.prange when the kernels are compiled (numba is imported lazily: it takes
# a second to import, and most users of manytask never run a boosting round).
prange = range


def _check_backend(name, source: str) -> str:
    if name not in BACKENDS:
        raise ValueError(f"{source} must be one of {BACKENDS}, got {name!r}")
    return name


def numba_available() -> bool:
    """Whether numba can be imported (the ``fast`` extra is installed).

    Returns
    -------
    bool
        True if the compiled kernels can run.

    Examples
    --------
    >>> numba_available() in (True, False)
    True
    """
    return _load() is not None


def backend() -> str:
    """The kernels in use: "numba" or "numpy".

    Decided, in this order, by :func:`use_backend`, the environment variable
    ``MANYTASK_KERNELS`` ("auto", "numba" or "numpy") and, for "auto", whether numba imports.

    Returns
    -------
    str
        "numba" or "numpy".

    Examples
    --------
    >>> backend() in ("numba", "numpy")
    True
    """
    requested = _override
    if requested is None:
        requested = _check_backend(
            os.environ.get(_ENVIRONMENT, "auto").strip().lower() or "auto", _ENVIRONMENT
        )
    if requested == "numpy":
        return "numpy"
    if _load() is not None:
        return "numba"
    if requested == "numba":
        raise ImportError(
            "numba kernels were requested (MANYTASK_KERNELS=numba) but numba is not "
            "installed: pip install manytask[fast]"
        )
    return "numpy"


@contextmanager
def use_backend(name: str):
    """Run the enclosed code with the kernels ``name`` ("auto", "numba" or "numpy").

    A context manager; the previous choice comes back on exit.

    Parameters
    ----------
    name : {"auto", "numba", "numpy"}
        The backend, as for ``MANYTASK_KERNELS``.

    Yields
    ------
    None
        Inside the ``with`` block, :func:`backend` follows ``name``.

    Examples
    --------
    >>> with use_backend("numpy"):
    ...     backend()
    'numpy'
    """
    global _override
    _check_backend(name, "name")
    previous, _override = _override, name
    try:
        yield
    finally:
        _override = previous


_LOADING = threading.Lock()  # two threads' first calls (Dask's in-process workers) compile once


def _load() -> dict | None:
    """The compiled kernels by name (compiled lazily on first call), or None without numba."""
    if _compiled is not None or _numba_missing:
        return _compiled
    with _LOADING:
        return _compile()


def _compile() -> dict | None:
    global _compiled, _numba_missing, prange
    if _compiled is not None or _numba_missing:  # another thread compiled them meanwhile
        return _compiled
    try:
        import numba
    except ImportError:
        _numba_missing = True
        return None
    prange = numba.prange
    # Helpers the kernels call: compiled first, inlined there.
    global _better_polarity, _keep_best_split, _split_maximum, _split_maximum_binary
    _better_polarity = numba.njit(inline="always", nogil=True)(_better_polarity)
    _keep_best_split = numba.njit(inline="always", nogil=True)(_keep_best_split)
    _split_maximum_binary = numba.njit(inline="always", nogil=True)(_split_maximum_binary)
    _split_maximum = numba.njit(inline="always", nogil=True)(_split_maximum)
    kernels = {}
    for name, function in _KERNELS.items():
        # The feature loops also get a serial twin: on small problems starting numba's
        # threads costs more than it saves (and much more on a busy machine).
        variants = [(name, False)]
        if name != "coordinate_pieces":
            variants = [(name, True), (f"{name}_serial", False)]
        for key, parallel in variants:
            source = (
                function if parallel or name == "coordinate_pieces" else _renamed(function, key)
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # numba's cache warnings: fall back silently
                try:
                    kernels[key] = numba.njit(cache=True, parallel=parallel, nogil=True)(source)
                except Exception:  # noqa: BLE001 no usable cache locator: compile in memory
                    kernels[key] = numba.njit(parallel=parallel, nogil=True)(source)
    _compiled = kernels
    return _compiled


def _renamed(function, name: str):
    """``function`` under the qualified name ``_name``.

    numba's on-disk cache names its files after the qualified name and keys their entries by
    signature and bytecode, not by compiler flags: a serial twin compiled from the same function
    would share the parallel kernel's cache entry, and whichever was compiled first would be
    loaded for both.
    """
    twin = types.FunctionType(
        function.__code__, function.__globals__, f"_{name}", function.__defaults__
    )
    twin.__qualname__ = twin.__name__
    twin.__module__ = function.__module__
    return twin


# ------------------------------------------------------------------------------------ kernels
#
# Plain Python functions, compiled by _load(); each is also correct (slowly) as Python.

# Features whose histograms the binned search fills in one pass over the points.
_BLOCK = 4


def _better_polarity(error_plus, split_plus, error_minus, split_minus):
    """(error, split, polarity) of a feature's better polarity: the lower error, on a tie the
    lower split, then polarity +1 (the rule of :func:`~manytask.boost.stumps._choose_polarity`)."""
    if error_minus < error_plus or (error_minus == error_plus and split_minus < split_plus):
        return error_minus, split_minus, -1
    return error_plus, split_plus, 1


def _exact_search(values, order, invalid, total, negative_total):
    d, n = order.shape
    errors = np.empty(d)
    splits = np.empty(d, dtype=np.intp)
    polarities = np.empty(d, dtype=np.intp)
    for feature in prange(d):
        # prefix(r) = Σ of the first r sorted values; the first least / largest over the
        # valid splits (np.argmin / np.argmax order: the lowest r wins ties).
        least, split_least = np.inf, 0
        largest, split_largest = -np.inf, 0
        prefix = 0.0
        for r in range(n + 1):
            if r == 1:
                prefix = values[order[feature, 0]]  # np.cumsum starts with the first term
            elif r > 1:
                prefix += values[order[feature, r - 1]]
            if not invalid[feature, r]:
                if prefix < least:
                    least, split_least = prefix, r
                if prefix > largest:
                    largest, split_largest = prefix, r
        errors[feature], splits[feature], polarities[feature] = _better_polarity(
            least + negative_total, split_least, total - (largest + negative_total), split_largest
        )
    return errors, splits, polarities


def _binned_search(values, bins, n_thresholds, n_bins, total, negative_total):
    d, n = bins.shape
    errors = np.empty(d)
    splits = np.empty(d, dtype=np.intp)
    polarities = np.empty(d, dtype=np.intp)
    for block in prange((d + _BLOCK - 1) // _BLOCK):
        first = block * _BLOCK
        width = min(_BLOCK, d - first)
        # One pass over the points fills the block's histograms: each point's value is read
        # once for _BLOCK independent updates. Every bin still adds its points in point
        # order, like np.bincount.
        histogram = np.zeros((_BLOCK, n_bins))
        if width == _BLOCK:
            for point in range(n):
                value = values[point]
                for j in range(_BLOCK):
                    histogram[j, bins[first + j, point]] += value
        else:
            for j in range(width):
                for point in range(n):
                    histogram[j, bins[first + j, point]] += values[point]
        for j in range(width):
            feature = first + j
            least, split_least = np.inf, 0
            least_minus, split_minus = np.inf, 0
            prefix = 0.0
            for split in range(n_thresholds[feature] + 1):
                if split == 1:
                    prefix = histogram[j, 0]
                elif split > 1:
                    prefix += histogram[j, split - 1]
                error_plus = prefix + negative_total
                error_minus = total - error_plus
                if error_plus < least:
                    least, split_least = error_plus, split
                if error_minus < least_minus:
                    least_minus, split_minus = error_minus, split
            errors[feature], splits[feature], polarities[feature] = _better_polarity(
                least, split_least, least_minus, split_minus
            )
    return errors, splits, polarities


def _keep_best_split(rate, split, gain_plus, split_plus, gain_minus, split_minus):
    """The steepest searches' running best: polarity +1 gains min_j rate[j], −1 gains
    min_j (−rate[j]) = −max_j rate[j]; a strictly larger gain takes the split (the first
    maximum wins, as np.argmax)."""
    least, largest = rate[0], rate[0]
    for other in range(1, rate.size):
        least = min(least, rate[other])
        largest = max(largest, rate[other])
    if least > gain_plus:
        gain_plus, split_plus = least, split
    if -largest > gain_minus:
        gain_minus, split_minus = -largest, split
    return gain_plus, split_plus, gain_minus, split_minus


def _steepest_splits(order, invalid, slot, contributions, totals):
    d, n = order.shape
    n_q, n_slots = totals.shape
    best_gain = np.empty((n_q, d, 2))
    best_split = np.empty((n_q, d, 2), dtype=np.intp)
    for feature in prange(d):
        prefix = np.empty(n_slots)
        # rate[j] = totals[q, j] − 2 prefix[j]; polarity +1 gains min_j rate, −1 gains
        # min_j (2 prefix − totals) = −max_j rate (IEEE subtraction is antisymmetric).
        rate = np.empty(n_slots)
        for q in range(n_q):  # one scan per q: a few scalars of state, one row of values
            values = contributions[q]
            for j in range(n_slots):
                prefix[j], rate[j] = 0.0, totals[q, j]
            gain_plus, gain_minus, split_plus, split_minus = -np.inf, -np.inf, 0, 0
            for split in range(n + 1):
                if split > 0:
                    point = order[feature, split - 1]
                    j = slot[point]
                    # The other slots' sums would add +0 here (NumPy adds the zeros).
                    prefix[j] += values[point]
                    rate[j] = totals[q, j] - 2.0 * prefix[j]
                if invalid[feature, split]:
                    continue
                gain_plus, split_plus, gain_minus, split_minus = _keep_best_split(
                    rate, split, gain_plus, split_plus, gain_minus, split_minus
                )
            best_gain[q, feature, 0], best_split[q, feature, 0] = gain_plus, split_plus
            best_gain[q, feature, 1], best_split[q, feature, 1] = gain_minus, split_minus
    return best_gain, best_split


def _binned_steepest_splits(cells, n_thresholds, n_bins, contributions, totals):
    d, n = cells.shape
    n_q, n_slots = totals.shape
    best_gain = np.empty((n_q, d, 2))
    best_split = np.empty((n_q, d, 2), dtype=np.intp)
    for feature in prange(d):
        # histogram[j·n_bins + b]: Σ contributions[q, i] over slot j's points in bin b, in
        # point order; one pass over the points per q (one index and one value per point).
        histogram = np.empty(n_slots * n_bins)
        prefix = np.empty(n_slots)
        rate = np.empty(n_slots)
        row = cells[feature]
        for q in range(n_q):
            values = contributions[q]
            histogram[:] = 0.0
            for point in range(n):
                histogram[row[point]] += values[point]
            for j in range(n_slots):
                prefix[j], rate[j] = 0.0, totals[q, j]
            gain_plus, gain_minus, split_plus, split_minus = -np.inf, -np.inf, 0, 0
            for split in range(n_thresholds[feature] + 1):
                if split > 0:
                    for j in range(n_slots):
                        prefix[j] += histogram[j * n_bins + split - 1]
                        rate[j] = totals[q, j] - 2.0 * prefix[j]
                gain_plus, split_plus, gain_minus, split_minus = _keep_best_split(
                    rate, split, gain_plus, split_plus, gain_minus, split_minus
                )
            best_gain[q, feature, 0], best_split[q, feature, 0] = gain_plus, split_plus
            best_gain[q, feature, 1], best_split[q, feature, 1] = gain_minus, split_minus
    return best_gain, best_split


def _coordinate_pieces(terms, margins, order, starts):
    n_domains = starts.size - 1
    pieces = np.zeros((3, n_domains))
    for domain in range(n_domains):  # a few domains: threads would cost more than they save
        loss, slope, curvature = 0.0, 0.0, 0.0
        for position in range(starts[domain], starts[domain + 1]):
            point = order[position]
            weighted = terms[point] * margins[point]
            loss += terms[point]
            slope += weighted
            curvature += weighted * margins[point]
        pieces[0, domain], pieces[1, domain], pieces[2, domain] = loss, -slope, curvature
    return pieces


def _split_maximum_binary(cells, n_thresholds, last_level):
    """:func:`_split_maximum` for one output (C = 1): channels (S, W)."""
    total_sum, total_mass = 0.0, 0.0
    for b in range(cells.shape[0]):
        total_sum += cells[b, 0]
        total_mass += cells[b, 1]
    left_sum, left_mass = 0.0, 0.0
    best = -np.inf
    for split in range(1, n_thresholds + 1):
        left_sum += cells[split - 1, 0]
        left_mass += cells[split - 1, 1]
        right_sum, right_mass = total_sum - left_sum, total_mass - left_mass
        if not (left_mass > 0.0 and right_mass > 0.0):
            continue
        if last_level:
            score = abs(left_sum) + abs(right_sum)
        else:
            score = left_sum * left_sum / left_mass + right_sum * right_sum / right_mass
        if score > best:
            best = score
    return best


def _split_maximum(cells, n_thresholds, last_level, left, total):
    """The greatest score over the bin edges 1..n_thresholds of one (node, feature)'s
    histogram ``cells`` (B, 2C); −inf if no edge leaves weight on both sides."""
    channels = cells.shape[1]
    n_outputs = channels // 2
    if channels == 2:  # binary: the same sums in scalars
        return _split_maximum_binary(cells, n_thresholds, last_level)
    total[:] = 0.0
    for b in range(cells.shape[0]):
        for c in range(channels):
            total[c] += cells[b, c]
    left[:] = 0.0
    best = -np.inf
    for split in range(1, n_thresholds + 1):
        for c in range(channels):
            left[c] += cells[split - 1, c]
        left_mass, right_mass, score = 0.0, 0.0, 0.0
        for c in range(n_outputs):
            left_mass += left[n_outputs + c]
            right_mass += total[n_outputs + c] - left[n_outputs + c]
        if not (left_mass > 0.0 and right_mass > 0.0):
            continue
        for c in range(n_outputs):
            s_left, s_right = left[c], total[c] - left[c]
            if last_level:
                score += abs(s_left) + abs(s_right)
            else:
                w_left = left[n_outputs + c]
                w_right = total[n_outputs + c] - w_left
                if w_left > 0.0:
                    score += s_left * s_left / w_left
                if w_right > 0.0:
                    score += s_right * s_right / w_right
        if score > best:
            best = score
    return best


def _tree_level(bins, points, children, channels, parent, smaller, n_nodes, n_bins,
                n_thresholds, last_level):  # fmt: skip
    d = bins.shape[0]
    n, n_channels = channels.shape
    histogram = np.zeros((n_nodes, d, n_bins, n_channels))
    maxima = np.full((n_nodes, d), -np.inf)
    for feature in prange(d):
        row = bins[feature]
        for position in range(n):
            node, b = children[position], row[points[position]]
            for c in range(n_channels):
                histogram[node, feature, b, c] += channels[position, c]
        for j in range(parent.shape[0]):  # the siblings: parent minus the summed child
            summed = smaller[j]
            sibling = summed ^ 1
            for b in range(n_bins):
                for c in range(n_channels):
                    histogram[sibling, feature, b, c] = (
                        parent[j, feature, b, c] - histogram[summed, feature, b, c]
                    )
        left = np.empty(n_channels)
        total = np.empty(n_channels)
        for node in range(n_nodes):
            maxima[node, feature] = _split_maximum(
                histogram[node, feature], n_thresholds[feature], last_level, left, total
            )
    return histogram, maxima


_KERNELS = {
    "exact_search": _exact_search,
    "binned_search": _binned_search,
    "steepest_splits": _steepest_splits,
    "binned_steepest_splits": _binned_steepest_splits,
    "coordinate_pieces": _coordinate_pieces,
    "tree_level": _tree_level,
}


# Below this many (feature, point) cells a feature loop runs on one thread.
PARALLEL_MIN_CELLS = 1 << 16


def _kernel(name: str, cells: int | None = None):
    kernels = _load()
    if kernels is None:
        raise ImportError(f"the {name} kernel needs numba: pip install manytask[fast]")
    if cells is not None and cells < PARALLEL_MIN_CELLS:
        return kernels[f"{name}_serial"]
    return kernels[name]


def exact_search(values, order, invalid, total: float, negative_total: float):
    """Per feature: (least error, its split r, polarity) of the exact stump search.

    ``values`` are the signed weights w_i y_i of the searched points, ``order[f]`` (d, n)
    lists them in feature f's sorted order and ``invalid[f, r]`` (d, n + 1) marks the splits r
    (r = the number of points below) that are not allowed. With P(r) the sum of the first r
    sorted values, polarity +1 errs by P(r) + Σ w 1{y = −1} and −1 by the complement
    ``total`` minus that; ties go to the lower split, then to polarity +1.

    Parameters
    ----------
    values : numpy.ndarray
        (n,) the signed weights w_i y_i of the searched points.
    order : numpy.ndarray
        (d, n) integers, ``order[f]`` the points in feature f's sorted order.
    invalid : numpy.ndarray
        (d, n + 1) bools, the forbidden splits.
    total : float
        Σ_i w_i.
    negative_total : float
        Σ_i w_i 1{y_i = −1}.

    Returns
    -------
    errors : numpy.ndarray
        (d,) each feature's least weighted error.
    splits : numpy.ndarray
        (d,) its split r.
    polarities : numpy.ndarray
        (d,) its polarity, ±1.

    Examples
    --------
    >>> values = np.array([-1.0, -1.0, 1.0])  # x = 0, 1, 2 with y = −1, −1, +1
    >>> order = np.array([[0, 1, 2]])
    >>> errors, splits, polarities = exact_search(values, order, np.zeros((1, 4), bool), 3.0, 2.0)
    >>> float(errors[0]), int(splits[0]), int(polarities[0])
    (0.0, 2, 1)
    """
    kernel = _kernel("exact_search", order.size)
    return kernel(values, order, invalid, float(total), float(negative_total))


def binned_search(values, bins, n_thresholds, n_bins: int, total: float, negative_total: float):
    """Per feature: (least error, its split j, polarity) of the binned stump search.

    ``bins[f, i]`` (d, n) is the bin of point i on feature f (the number of thresholds below
    it), split j ≤ ``n_thresholds[f]`` puts bins 0..j−1 below the threshold (j = 0: the
    constant stump); otherwise as :func:`exact_search`.

    Parameters
    ----------
    values : numpy.ndarray
        (n,) the signed weights w_i y_i of the searched points.
    bins : numpy.ndarray
        (d, n) unsigned integers < ``n_bins``.
    n_thresholds : numpy.ndarray
        (d,) each feature's number of thresholds.
    n_bins : int
        The number of bins per feature.
    total : float
        Σ_i w_i.
    negative_total : float
        Σ_i w_i 1{y_i = −1}.

    Returns
    -------
    errors, splits, polarities : numpy.ndarray
        (d,) each, as :func:`exact_search`'s.

    Examples
    --------
    >>> values = np.array([-1.0, 1.0, 1.0])  # bins 0, 1, 1 with y = −1, +1, +1
    >>> bins = np.array([[0, 1, 1]], dtype=np.uint8)
    >>> errors, splits, polarities = binned_search(values, bins, np.array([1]), 2, 3.0, 1.0)
    >>> float(errors[0]), int(splits[0]), int(polarities[0])
    (0.0, 1, 1)
    """
    return _kernel("binned_search", bins.size)(
        values, bins, n_thresholds, int(n_bins), float(total), float(negative_total)
    )


def steepest_splits(order, invalid, slot, contributions, totals):
    """Per (q, feature, polarity): the best split of the steepest-coordinate search.

    ``order[f]`` (d, n) sorts the n points by feature f, ``invalid[f, r]`` (d, n + 1) marks
    the forbidden splits r (r = the number of points below), point i belongs to slot
    ``slot[i]`` (one of the tied domains). With P_{q,j}(r) the sum of ``contributions[q, i]``
    (p, n) over the first r sorted points of slot j, the gain of split r is
    min_j (``totals[q, j]`` − 2 P_{q,j}(r)) for polarity +1 and min_j (2 P_{q,j}(r) −
    ``totals[q, j]``) for −1.

    Parameters
    ----------
    order : numpy.ndarray
        (d, n) integers, ``order[f]`` the points in feature f's sorted order.
    invalid : numpy.ndarray
        (d, n + 1) bools, the forbidden splits.
    slot : numpy.ndarray
        (n,) integers, each point's tied domain.
    contributions : numpy.ndarray
        (p, n) the per-point terms summed by P_{q,j}.
    totals : numpy.ndarray
        (p, n_slots) the totals of each slot.

    Returns
    -------
    gains : numpy.ndarray
        (p, d, 2) the best gains of polarities +1 and −1 (−inf if no split is valid).
    splits : numpy.ndarray
        (p, d, 2) their first splits.

    Examples
    --------
    >>> order, invalid = np.array([[0, 1]]), np.zeros((1, 3), bool)
    >>> gains, splits = steepest_splits(order, invalid, np.array([0, 0]),
    ...                                 np.array([[-1.0, 1.0]]), np.array([[0.0]]))
    >>> float(gains[0, 0, 0]), int(splits[0, 0, 0])  # polarity +1, split 1: 0 − 2·(−1)
    (2.0, 1)
    """
    kernel = _kernel("steepest_splits", order.size * totals.shape[0])
    return kernel(order, invalid, slot, contributions, totals)


def binned_steepest_splits(cells, n_thresholds, n_bins: int, contributions, totals):
    """:func:`steepest_splits` over the bin edges: split s ≤ ``n_thresholds[f]`` puts bins
    0..s−1 of feature f below.

    ``cells[f, i]`` (d, n) is ``slot · n_bins + bin`` of point i on feature f (its slot among
    the tied domains and its bin, as in :func:`binned_search`); P_{q,j}(s) sums the histogram
    of slot j's ``contributions[q]`` (p, n), each bin in point order, over bins 0..s−1.

    Parameters
    ----------
    cells : numpy.ndarray
        (d, n) unsigned integers, ``slot · n_bins + bin``.
    n_thresholds : numpy.ndarray
        (d,) each feature's number of thresholds.
    n_bins : int
        The number of bins per feature.
    contributions : numpy.ndarray
        (p, n) the per-point terms.
    totals : numpy.ndarray
        (p, n_slots) the totals of each slot.

    Returns
    -------
    gains, splits : numpy.ndarray
        (p, d, 2) each, as :func:`steepest_splits`'s.

    Examples
    --------
    >>> cells = np.array([[0, 1]], dtype=np.uint16)
    >>> gains, splits = binned_steepest_splits(cells, np.array([1]), 2,
    ...                                        np.array([[-1.0, 1.0]]), np.array([[0.0]]))
    >>> float(gains[0, 0, 0]), int(splits[0, 0, 0])
    (2.0, 1)
    """
    kernel = _kernel("binned_steepest_splits", cells.size * totals.shape[0])
    return kernel(cells, n_thresholds, int(n_bins), contributions, totals)


def tree_level(bins, points, children, channels, parent, smaller, n_bins: int, n_thresholds,
               last_level: bool):  # fmt: skip
    """One level of a histogram tree: its histograms and each (node, feature)'s best score.

    H[n, f, b, c] = Σ channels_ic over the ``points`` of node n with bin b on feature f, for
    the children summed directly (``smaller``); the sibling of each is its parent's histogram
    minus it. The score of a split is the leaves' edge Σ_c |S_left,c| + |S_right,c| on the
    last level and the weighted Gini score Σ_c S²_c/W_c of the children above (as
    ``manytask.boost.trees._split_scores``); a split needs weight on both sides.

    Parameters
    ----------
    bins : numpy.ndarray
        (d, m) the bin numbers of every training point.
    points : numpy.ndarray
        (n,) the rows summed directly.
    children : numpy.ndarray
        (n,) their node within the level.
    channels : numpy.ndarray
        (n, 2C) their signed weights s_ic, then their masses |s_ic|.
    parent : numpy.ndarray or None
        (n_parents, d, B, 2C) the previous level's histograms; None at the root.
    smaller : numpy.ndarray
        (n_parents,) the child (2j or 2j + 1) of parent j whose points are in ``points``.
    n_bins : int
        B, the number of bins per feature.
    n_thresholds : numpy.ndarray
        (d,) each feature's number of thresholds.
    last_level : bool
        Whether the level's children are leaves.

    Returns
    -------
    histogram : numpy.ndarray
        (n_nodes, d, B, 2C), n_nodes = 2 n_parents (1 at the root).
    maxima : numpy.ndarray
        (n_nodes, d) the greatest split scores, −inf where no split is allowed.

    Examples
    --------
    >>> bins = np.array([[0, 1, 1]], dtype=np.uint8)
    >>> channels = np.array([[-1.0, 1.0], [2.0, 2.0], [1.0, 1.0]])
    >>> histogram, maxima = tree_level(bins, np.arange(3), np.zeros(3, np.intp), channels,
    ...                                None, np.zeros(0, np.intp), 2, np.array([1]), True)
    >>> histogram[0, 0, :, 0].tolist(), maxima.tolist()  # bins 0 and 1: S = −1 and 3
    ([-1.0, 3.0], [[4.0]])
    """
    d, n_channels = bins.shape[0], channels.shape[1]
    if parent is None:
        parent, n_nodes = np.zeros((0, d, int(n_bins), n_channels)), 1
    else:
        n_nodes = 2 * parent.shape[0]
    kernel = _kernel("tree_level", d * max(points.size, n_nodes * int(n_bins)))
    return kernel(bins, points, children, np.ascontiguousarray(channels),
                  np.ascontiguousarray(parent), smaller, n_nodes, int(n_bins),
                  n_thresholds, bool(last_level))  # fmt: skip


def coordinate_pieces(terms, margins, order, starts):
    """(3, p): Σ t, −Σ t u and Σ (t u) u over each domain's points, in order.

    With the terms t_i = a_i e^{−η u_i} these are F_l(α + η e) and its first two
    derivatives in η; ``order[starts[l]:starts[l + 1]]`` lists domain l's points in increasing
    index order (:func:`~manytask.boost.figure1.domain_layout`). Each sum runs in that order,
    as ``np.bincount`` does over points in index order, so the sums are bit for bit NumPy's
    (the exponentials are left to NumPy, whose vectorised ``exp`` is both faster and the
    reference).

    Parameters
    ----------
    terms : numpy.ndarray
        (m,) t_i = a_i e^{−η u_i}.
    margins : numpy.ndarray
        (m,) u_i.
    order : numpy.ndarray
        (m,) the points grouped by domain.
    starts : numpy.ndarray
        (p + 1,) where each domain's points start in ``order``.

    Returns
    -------
    numpy.ndarray
        (3, p) the rows Σ t, −Σ t u and Σ (t u) u per domain.

    Examples
    --------
    >>> terms, margins = np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0, 2.0])
    >>> order, starts = np.array([0, 2, 1]), np.array([0, 2, 3])  # domains {0, 2} and {1}
    >>> coordinate_pieces(terms, margins, order, starts)
    array([[ 4.,  2.],
           [-7.,  2.],
           [13.,  2.]])
    """
    return _kernel("coordinate_pieces")(terms, margins, order, starts)
