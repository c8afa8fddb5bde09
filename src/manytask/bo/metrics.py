"""Performance metrics of multi-objective BO (``multitask-bayesian-optimization.txt`` §2).

- :func:`cumulative_regret` R_C(t) = Σ_{s≤t} [max_x s_λs(f(x)) − s_λs(f(x_s))] with the λ_s
  actually drawn, and :func:`time_average_regret` R_C(t)/t (the curves of Fig. 1);
- :func:`bayes_regret` R_B(t) = E_λ[max_x s_λ(f(x)) − max_{s≤t} s_λ(f(x_s))] over a fixed
  Monte-Carlo set of weights (Fig. 3);
- :func:`pareto_mask`, :func:`hypervolume_2d` and :func:`hypervolume` (exact in 2-D; in
  more dimensions through the optional ``moocore`` package, extra ``mo``).

Maxima are over a finite candidate set (the paper's setting). All objectives are maximised.
Scalarisations are in :mod:`manytask.bo.scalarization`, weight samplers in
:mod:`manytask.simplex`.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array
from ..simplex import weight_sampler
from .scalarization import make_scalarization

__all__ = [
    "cumulative_regret",
    "time_average_regret",
    "bayes_regret",
    "pareto_mask",
    "hypervolume_2d",
    "hypervolume",
]

_CHUNK_ELEMENTS = 2**22  # bound on the size of (weights × candidates × tasks) temporaries


def _as_values(problem_or_values) -> np.ndarray:
    values = getattr(problem_or_values, "values", problem_or_values)
    values = as_finite_array(values, "values", ndim=2)
    if len(values) == 0:
        raise ValueError("values must hold at least one candidate, got 0 rows")
    return values


def _chosen_and_weights(values, chosen_values, weights):
    chosen_values = as_finite_array(chosen_values, "chosen_values", ndim=2)
    n = values.shape[1]
    if chosen_values.shape[1] != n:
        raise ValueError(
            f"chosen_values must have {n} columns like values, got shape {chosen_values.shape}"
        )
    if weights is not None:
        weights = as_finite_array(weights, "weights", ndim=2)
        if weights.shape != chosen_values.shape:
            raise ValueError(
                f"weights must have shape {chosen_values.shape} (one λ_t per chosen point), "
                f"got {weights.shape}"
            )
    return chosen_values, weights


def _chunks(n_rows: int, row_elements: int):
    size = max(1, _CHUNK_ELEMENTS // max(row_elements, 1))
    for start in range(0, n_rows, size):
        yield slice(start, min(start + size, n_rows))


def _best_scalarized(values, weights, scalarization) -> np.ndarray:
    """max_x s_λ(f(x)) for every row λ of ``weights``, shape (M,)."""
    best = np.empty(len(weights))
    for rows in _chunks(len(weights), values.size):
        best[rows] = scalarization(values, weights[rows]).max(axis=1)
    return best


def _paired_scalarized(chosen_values, weights, scalarization) -> np.ndarray:
    """s_λt(y_t) for matched rows (λ_t, y_t), shape (T,)."""
    paired = np.empty(len(weights))
    n = weights.shape[1]
    for rows in _chunks(len(weights), n * len(weights)):
        # the scalarisation of a single point y against each λ; the diagonal pairs them up
        block = scalarization(chosen_values[rows], weights[rows])
        paired[rows] = np.diagonal(block)
    return paired


def cumulative_regret(
    problem_or_values, chosen_values, weights, scalarization="chebyshev"
) -> np.ndarray:
    """R_C(t) for t = 1, …, T with the λ_t actually drawn (§2, R_C(T)).

    R_C(t) = Σ_{s≤t} [max_{x ∈ candidates} s_λs(f(x)) − s_λs(f(x_s))].

    Parameters
    ----------
    problem_or_values : Problem or array of shape (N, n)
        The noise-free f on the candidate set (a :class:`~manytask.bo.problems.Problem`'s
        ``values`` are used).
    chosen_values : array of shape (T, n)
        Noise-free f(x_t) at the chosen points.
    weights : array of shape (T, n)
        The λ_t drawn in each round.
    scalarization : str or Scalarization
        ``"chebyshev"`` (§5), ``"linear"`` or an instance; one with an observed reference
        is fitted to ``values`` (z = min f, r = range of f on the candidates).

    Returns
    -------
    regret : array of shape (T,)

    Examples
    --------
    >>> values = np.array([[1.0, 0.0], [0.0, 1.0], [0.4, 0.4]])
    >>> weights = np.array([[0.5, 0.5], [0.5, 0.5]])
    >>> cumulative_regret(values, values[[2, 0]], weights, "linear")
    array([0.1, 0.1])
    """
    values = _as_values(problem_or_values)
    chosen_values, weights = _chosen_and_weights(values, chosen_values, weights)
    scalarization = make_scalarization(scalarization).fitted(values)
    best = _best_scalarized(values, weights, scalarization)
    chosen = _paired_scalarized(chosen_values, weights, scalarization)
    return np.cumsum(best - chosen)


def time_average_regret(
    problem_or_values, chosen_values, weights, scalarization="chebyshev"
) -> np.ndarray:
    """R_C(t) / t for t = 1, …, T (the y-axis of Fig. 1).

    From an R_C array already at hand it is ``R / np.arange(1, len(R) + 1)``.

    Parameters
    ----------
    problem_or_values : Problem or array of shape (N, n)
        The noise-free f on the candidate set, as in :func:`cumulative_regret`.
    chosen_values : array of shape (T, n)
        Noise-free f(x_t) at the chosen points.
    weights : array of shape (T, n)
        The λ_t drawn in each round.
    scalarization : str or Scalarization
        As in :func:`cumulative_regret`.

    Returns
    -------
    regret : array of shape (T,)
        R_C(t) / t.

    Examples
    --------
    >>> values = np.array([[1.0, 0.0], [0.0, 1.0], [0.4, 0.4]])
    >>> weights = np.array([[0.5, 0.5], [0.5, 0.5]])
    >>> time_average_regret(values, values[[2, 0]], weights, "linear")
    array([0.1 , 0.05])
    """
    regret = cumulative_regret(problem_or_values, chosen_values, weights, scalarization)
    return regret / np.arange(1, len(regret) + 1)


def bayes_regret(
    problem_or_values,
    chosen_values,
    scalarization="chebyshev",
    n_weights: int = 1000,
    weights="paria",
    seed=0,
) -> np.ndarray:
    """R_B(t) = E_λ[max_x s_λ(f(x)) − max_{s≤t} s_λ(f(x_s))] for t = 1, …, T (§2, R_B(T)).

    The expectation over P_λ is a mean over one fixed Monte-Carlo set of ``n_weights``
    draws (the same set for every t and, with the same ``seed``, for every run compared).

    Parameters
    ----------
    problem_or_values : Problem or array of shape (N, n)
        The noise-free f on the candidate set.
    chosen_values : array of shape (T, n)
        Noise-free f(x_t) at the chosen points.
    scalarization : str or Scalarization
        ``"chebyshev"`` (§5), ``"linear"`` or an instance; one with an observed reference
        is fitted to ``values`` (z = min f, r = range of f on the candidates).
    n_weights : int
        Size of the Monte-Carlo set (≥ 1000 for the paper's figures).
    weights : str, callable or array of shape (M, n)
        P_λ: a sampler accepted by :func:`manytask.simplex.weight_sampler` (``"paria"`` is
        §5's), or the Monte-Carlo set itself as an (M, n) array (then ``n_weights`` is unused).
    seed : int or numpy Generator
        Seeds the Monte-Carlo set.

    Returns
    -------
    regret : array of shape (T,), non-increasing in t

    Examples
    --------
    >>> values = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> regret = bayes_regret(values, values, "linear", n_weights=1000)
    >>> bool(regret[0] > 0), float(regret[-1])
    (True, 0.0)
    """
    values = _as_values(problem_or_values)
    chosen_values, _ = _chosen_and_weights(values, chosen_values, None)
    scalarization = make_scalarization(scalarization).fitted(values)
    n = values.shape[1]
    if not isinstance(weights, str) and not callable(weights) and np.ndim(weights) == 2:
        weight_set = as_finite_array(weights, "weights", ndim=2)
        if weight_set.shape[1] != n:
            raise ValueError(f"weights must have {n} columns, got shape {weight_set.shape}")
    else:
        if int(n_weights) < 1:
            raise ValueError(f"n_weights must be >= 1, got {n_weights!r}")
        sample = weight_sampler(weights, n)
        rng = np.random.default_rng(seed)
        weight_set = np.stack([sample(rng, n) for _ in range(int(n_weights))])
    best = _best_scalarized(values, weight_set, scalarization)
    total = np.zeros(len(chosen_values))
    for rows in _chunks(len(weight_set), chosen_values.size):
        achieved = scalarization(chosen_values, weight_set[rows])  # (m, T)
        running_best = np.maximum.accumulate(achieved, axis=1)
        total += np.sum(best[rows, None] - running_best, axis=0)
    return total / len(weight_set)


def pareto_mask(Y) -> np.ndarray:
    """Boolean mask of the non-dominated rows of Y (maximisation).

    Row i is dominated when some row j has Y_j ≥ Y_i in every coordinate and Y_j > Y_i in
    one; identical rows do not dominate each other, so all copies of a Pareto point are kept.

    Parameters
    ----------
    Y : array of shape (N, n)
        Objective values, one row per point.

    Returns
    -------
    mask : bool array of shape (N,)
        True for the Pareto-optimal rows.

    Examples
    --------
    >>> pareto_mask([[1, 2], [2, 1], [1, 1], [2, 1]])
    array([ True,  True, False,  True])
    """
    Y = as_finite_array(Y, "Y", ndim=2)
    mask = np.empty(len(Y), dtype=bool)
    for rows in _chunks(len(Y), Y.size):
        block = Y[rows, None, :]
        weakly_better = np.all(Y[None, :, :] >= block, axis=-1)
        strictly_somewhere = np.any(Y[None, :, :] > block, axis=-1)
        mask[rows] = ~np.any(weakly_better & strictly_somewhere, axis=1)
    return mask


def _points_and_reference(Y, reference):
    Y = as_finite_array(Y, "Y", ndim=2)
    reference = as_finite_array(reference, "reference", ndim=1)
    if Y.shape[1] != len(reference):
        raise ValueError(
            f"reference must have {Y.shape[1]} entries like the rows of Y, got {len(reference)}"
        )
    # a point not strictly better than the reference in every coordinate bounds no volume
    return Y[np.all(Y > reference, axis=1)], reference


def hypervolume_2d(Y, reference) -> float:
    """Exact area dominated by the rows of Y (maximisation) and bounded below by ``reference``.

    Sweep over the points by decreasing first coordinate: between consecutive first
    coordinates the covered height is the running maximum of the second coordinate.

    Parameters
    ----------
    Y : array of shape (N, 2)
        Objective values; rows not strictly above ``reference`` in both coordinates add
        nothing.
    reference : array of shape (2,)
        The lower corner of the dominated region.

    Returns
    -------
    area : float
        0.0 when no row is above ``reference``.

    Raises
    ------
    NotImplementedError
        If Y does not have 2 columns.

    Examples
    --------
    >>> hypervolume_2d([[2.0, 1.0], [1.0, 2.0]], reference=[0.0, 0.0])
    3.0
    """
    Y = as_finite_array(Y, "Y", ndim=2)
    if Y.shape[1] != 2:
        raise NotImplementedError(
            f"hypervolume_2d needs 2 objectives, got {Y.shape[1]}; for more use "
            "manytask.bo.metrics.hypervolume with the optional moocore package "
            "(pip install 'manytask[mo]')"
        )
    Y, reference = _points_and_reference(Y, reference)
    if len(Y) == 0:
        return 0.0
    order = np.argsort(-Y[:, 0], kind="stable")
    x, height = Y[order, 0], np.maximum.accumulate(Y[order, 1])
    widths = x - np.append(x[1:], reference[0])
    return float(np.sum(widths * (height - reference[1])))


def hypervolume(Y, reference) -> float:
    """Hypervolume dominated by the rows of Y (maximisation), bounded by ``reference``.

    Exact in 2-D (:func:`hypervolume_2d`). With 3 or more objectives it uses the optional
    ``moocore`` package (``pip install 'manytask[mo]'``), whose exact algorithms are
    O(N log N) in 3-D; without it a NotImplementedError says so.

    Parameters
    ----------
    Y : array of shape (N, n)
        Objective values; rows not strictly above ``reference`` in every coordinate add
        nothing.
    reference : array of shape (n,)
        The lower corner of the dominated region.

    Returns
    -------
    volume : float
        0.0 when no row is above ``reference``.

    Examples
    --------
    >>> hypervolume([[2.0, 1.0], [1.0, 2.0]], reference=[0.0, 0.0])
    3.0
    """
    Y = as_finite_array(Y, "Y", ndim=2)
    if Y.shape[1] <= 2:
        if Y.shape[1] == 1:
            Y, reference = _points_and_reference(Y, reference)
            return float(np.max(Y[:, 0]) - reference[0]) if len(Y) else 0.0
        return hypervolume_2d(Y, reference)
    Y, reference = _points_and_reference(Y, reference)
    try:
        import moocore
    except ImportError as error:
        raise NotImplementedError(
            f"the hypervolume of {Y.shape[1]} objectives needs the optional moocore package: "
            "pip install 'manytask[mo]' (or pip install moocore)"
        ) from error
    if len(Y) == 0:
        return 0.0
    return float(moocore.hypervolume(Y, ref=reference, maximise=True))
