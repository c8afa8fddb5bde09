"""The 1-D convex minimiser behind every exact step of MULTIBOOST (Figure 1, line 11).

:func:`aggregate_pieces` reduces Λ (eq. 4), the soft-max μ (§3) and β (§4) to a max of smooth
convex functions of η, which :func:`minimise_max_newton` minimises. :func:`section_search`
solves the same problem from batched (F_l, F_l') sums (Figure 2).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp, softmax

from . import kernels
from .objective import TIE_RTOL

__all__ = [
    "MAX_DOUBLINGS",
    "CoordinatePieces",
    "aggregate_pieces",
    "domain_layout",
    "minimise_max_newton",
    "section_search",
]

#: Bracket doublings from η = 1 before a descent is declared unbounded (η = inf).
MAX_DOUBLINGS = 60
# The computed F_l and F_l' are known to about this many ulps of their terms' magnitude,
# which bounds how well a root of the slope, or a crossing F_a = F_b, can be located.
_ROUNDING_ULPS = 16.0


def domain_layout(domain_index, n_domains):
    """(order, counts): a stable sort of the points by domain and the domain sizes.

    ``order[sum(counts[:k]):sum(counts[:k + 1])]`` lists S_k in increasing index order.

    Parameters
    ----------
    domain_index : ndarray of shape (m,)
        The domain of each point, in 0..p−1.
    n_domains : int
        p.

    Returns
    -------
    order : ndarray of shape (m,)
        The point indices grouped by domain.
    counts : ndarray of shape (p,)
        The domain sizes m_k.

    Examples
    --------
    >>> order, counts = domain_layout(np.array([1, 0, 1]), 2)
    >>> order.tolist(), counts.tolist()
    ([1, 0, 2], [1, 2])
    """
    order = np.argsort(domain_index, kind="stable")
    return order, np.bincount(domain_index, minlength=n_domains)


class CoordinatePieces:
    """η ↦ (F_l, F_l', F_l'') for every domain l along one coordinate (eq. 4).

    With t_i = a_i e^{−η u_i}: F_l = Σ_{S_l} t, F_l' = −Σ_{S_l} t u, F_l'' = Σ_{S_l} (t u) u.
    Sums by ``np.bincount`` or :func:`~manytask.boost.kernels.coordinate_pieces` (the same
    sums). ``evaluations`` counts the calls; ``evaluated`` keeps each step's pieces.

    Parameters
    ----------
    scaled_losses : array_like of shape (n,)
        a_i = c_i e^{−y_i f(x_i)} (Φ = exp).
    directional_margins : array_like of shape (n,)
        u_i = y_i Q(k|x_i) h(x_i), the direction's margins.
    domain_index : ndarray of shape (n,)
        The domain of each term.
    n_domains : int
        p.
    layout : tuple of ndarray, optional
        :func:`domain_layout` of ``domain_index``, if already computed.

    Examples
    --------
    >>> pieces = CoordinatePieces([1.0, 1.0], [1.0, -1.0], np.array([0, 1]), 2)
    >>> pieces(0.0).tolist()
    [[1.0, 1.0], [-1.0, 1.0], [1.0, 1.0]]
    """

    def __init__(self, scaled_losses, directional_margins, domain_index, n_domains, layout=None):
        self.evaluations = 0
        self.evaluated = {}
        self._compiled = kernels.backend() == "numba"
        self._scaled = np.asarray(scaled_losses, dtype=float)
        self._margins = np.asarray(directional_margins, dtype=float)
        if self._compiled:
            order, counts = domain_layout(domain_index, n_domains) if layout is None else layout
            self._order, self._starts = order, np.concatenate(([0], np.cumsum(counts)))
        else:
            self._domain_index, self._n_domains = domain_index, n_domains
        self._terms = np.empty_like(self._scaled)

    def __call__(self, step: float):
        """The (3, p) array (F_l, F_l', F_l'') at step η, recorded in ``evaluated``.

        Parameters
        ----------
        step : float
            η.

        Returns
        -------
        ndarray of shape (3, p)
            The losses and their first two derivatives in η, per domain.

        Examples
        --------
        >>> pieces = CoordinatePieces([1.0], [1.0], np.array([0]), 1)
        >>> pieces(0.0).shape, pieces.evaluations
        ((3, 1), 1)
        """
        self.evaluations += 1
        self.evaluated[step] = pieces = self._pieces(step)
        return pieces

    def _pieces(self, step: float):
        terms = self._terms
        with np.errstate(over="ignore", invalid="ignore"):
            if step == 0.0:
                terms = self._scaled  # a e^{−0·u} = a exactly (the margins are finite)
            else:
                np.multiply(-step, self._margins, out=terms)
                np.exp(terms, out=terms)
                np.multiply(self._scaled, terms, out=terms)
            if self._compiled:
                return kernels.coordinate_pieces(terms, self._margins, self._order, self._starts)
            weighted = terms * self._margins
            curvature_terms = weighted * self._margins
        domains, n = self._domain_index, self._n_domains
        return np.array([
            np.bincount(domains, weights=terms, minlength=n),
            -np.bincount(domains, weights=weighted, minlength=n),
            np.bincount(domains, weights=curvature_terms, minlength=n),
        ])  # fmt: skip


def aggregate_pieces(pieces, mixtures=None, mu=None, beta=0.0):
    """η ↦ the (3, v) pieces of agg_v L_v(η) + βη from the (3, p) pieces (F_l, F_l', F_l'').

    L_v = Σ_k λ^v_k F_k (eq. 4; the F_l if ``mixtures`` is None). ``mu=None`` keeps them apart;
    a float gives the one piece F_μ = (1/μ) log Σ_v e^{μ L_v} (§3), F_μ' = Σ p_v L_v',
    F_μ'' = Σ p_v L_v'' + μ(Σ p_v L_v'² − F_μ'²), p = softmax(μL). βη is added (§4). Overflow
    gives an infinite slope.

    Parameters
    ----------
    pieces : callable
        η ↦ the (3, p) array (F_l, F_l', F_l''), e.g. a :class:`CoordinatePieces`.
    mixtures : ndarray of shape (v, p) or None
        Λ's vertices; None for the simplex.
    mu : float or None
        The soft-max temperature μ; None for the hard max.
    beta : float
        The ℓ1 penalty β.

    Returns
    -------
    callable
        η ↦ the (3, v) pieces (or (3, 1) with ``mu``), for :func:`minimise_max_newton`.

    Examples
    --------
    >>> pieces = aggregate_pieces(lambda step: np.array([[1.0, 3.0], [0.0, 2.0], [1.0, 1.0]]),
    ...                           mixtures=np.array([[0.5, 0.5]]), beta=1.0)
    >>> pieces(0.0).tolist()
    [[2.0], [2.0], [1.0]]
    """

    def aggregated(step):
        values, slopes, curvatures = (np.asarray(row, dtype=float) for row in pieces(step))
        if mixtures is not None:
            values, slopes, curvatures = mixtures @ values, mixtures @ slopes, mixtures @ curvatures
        if not (np.isfinite(values).all() and np.isfinite(slopes).all()):
            inf = np.full(values.size if mu is None else 1, np.inf)
            return np.array([inf, inf, inf])
        if mu is not None:
            weights = softmax(mu * values)
            slope = weights @ slopes
            curvature = weights @ curvatures + mu * (weights @ slopes**2 - slope**2)
            values = np.array([logsumexp(mu * values) / mu])
            slopes, curvatures = np.array([slope]), np.array([max(curvature, 0.0)])
        return np.array([values + beta * step, slopes + beta, curvatures])

    return aggregated


def _max_slope(pieces) -> float:
    """A subgradient of F = max_l F_l: the slope of a maximiser (inf on overflow, where F is
    increasing)."""
    if not np.isfinite(pieces[:2]).all():
        return np.inf
    return float(pieces[1][int(pieces[0].argmax())])


def _tied_slope(pieces, rtol: float) -> float:
    """max_{l ∈ K} F_l' over the tied set K = {l : F_l ≥ max F (1 − rtol)} (Figure 1, line 5)."""
    losses, slopes = pieces[0], pieces[1]
    return float(slopes[losses >= losses.max() - abs(losses.max()) * rtol].max())


def minimise_max_newton(pieces, max_iter: int = 200, tie_rtol: float = TIE_RTOL) -> float:
    """argmin_{η ≥ 0} max_l g_l(η) for smooth convex g_l (Figure 1, line 11).

    ``pieces(η)`` is the (3, p) array of the g_l and their first two derivatives: a safeguarded
    Newton search for the root of the (non-decreasing) subgradient. 0 if the slope at 0 is ≥ 0
    (every g_l within ``tie_rtol`` of the max counts, the active set K_t of Figure 1, line 5).
    Trials: the root of the second-order model of the gap g_a − g_b where the maximiser changes
    across the bracket, else a Newton step on the maximiser; bisection when a trial leaves the
    bracket. Stops when a step would move by less than the rounding of what it solves.

    Parameters
    ----------
    pieces : callable
        η ↦ the (3, p) array (g_l, g_l', g_l'').
    max_iter : int
        Most evaluations after the one at 0.
    tie_rtol : float
        Relative tolerance of the tie at η = 0.

    Returns
    -------
    float
        The minimiser; ``inf`` after :data:`MAX_DOUBLINGS` doublings (unbounded descent).

    Examples
    --------
    >>> def pieces(step):  # g(η) = e^{−η} + e^{η}/4, minimum at log 2
    ...     down, up = np.exp(-step), np.exp(step) / 4
    ...     return np.array([[down + up], [up - down], [down + up]])
    >>> bool(np.isclose(minimise_max_newton(pieces), np.log(2.0)))
    True
    """
    eps = np.finfo(float).eps
    lower, low = 0.0, pieces(0.0)
    if _max_slope(low) >= 0 or _tied_slope(low, tie_rtol) >= 0:
        return 0.0
    upper, high = np.inf, None
    last, current = 0.0, low
    moves, doublings = [], 0
    for _ in range(max_iter):
        top = int(np.argmax(current[0]))
        falling, rising = np.argmax(low[0]), -1 if high is None else np.argmax(high[0])
        resolution, crossing = 4.0 * eps * last, rising >= 0 and falling != rising
        if crossing:
            with np.errstate(invalid="ignore", over="ignore"):  # inf − inf after an overflow
                gap = current[0][falling] - current[0][rising]
                derivative = current[1][falling] - current[1][rising]
                curvature = current[2][falling] - current[2][rising]
                # The nearer root of gap + g'δ + ½g''δ², else the Newton step −gap/g'.
                discriminant = derivative * derivative - 2.0 * gap * curvature
                trial = np.nan
                if derivative < 0 and discriminant >= 0.0:
                    trial = last + 2.0 * gap / (np.sqrt(discriminant) - derivative)
                if not lower < trial < upper:
                    trial = last - gap / derivative if derivative < 0 else np.nan
                if current[1][falling] <= 0.0 <= current[1][rising]:  # a minimum
                    level = abs(current[0][falling]) + abs(current[0][rising])
                    resolution = max(resolution, _ROUNDING_ULPS * eps * level / -derivative)
                else:
                    resolution = -1.0  # not a minimum: never stop on it
        elif current[2][top] > 0 and np.isfinite(current[2][top]):
            trial = last - current[1][top] / current[2][top]
            noise = _ROUNDING_ULPS * eps * np.sqrt(abs(current[0][top]) / current[2][top])
            resolution = max(resolution, noise)
        else:
            trial = np.nan
        if last > 0 and abs(trial - last) <= resolution:
            return last  # converged: the root is within rounding
        if high is None:
            if not (np.isfinite(trial) and trial > lower):
                trial, doublings = (2.0 * lower if lower > 0 else 1.0), doublings + 1
                if doublings > MAX_DOUBLINGS:
                    return np.inf
        else:
            middle, tolerance = 0.5 * (lower + upper), 2.0 * eps * upper
            if upper - lower <= 4.0 * tolerance or middle <= lower or middle >= upper:
                break
            if not lower < trial < upper or (
                len(moves) > 1 and abs(trial - last) > 0.5 * moves[-2]
            ):
                trial = middle
            trial = min(max(trial, lower + tolerance), upper - tolerance)
        evaluated = pieces(trial)
        slope = _max_slope(evaluated)
        if slope == 0:
            return float(trial)
        moved = abs(trial - last)
        last, current = float(trial), evaluated
        if slope < 0:
            lower, low = last, evaluated
        else:
            upper, high = last, evaluated
        moves.append(moved)
    if high is None:
        return lower
    candidates = sorted({lower: low, upper: high}.items())
    values = [float(np.max(evaluated[0])) for _, evaluated in candidates]
    return candidates[int(np.argmin(values))][0]


def _increasing(losses, slopes, rtol=TIE_RTOL) -> bool:
    """Right-derivative of max_l F_l ≥ 0: the largest slope among the (near-)maximal F_l."""
    if losses.max() == 0.0:  # every term underflowed: F → 0, still decreasing in the limit
        return False
    tied = losses >= losses.max() * (1.0 - rtol)
    return bool(slopes[tied].max() >= 0.0)


def section_search(evaluate, batch: int = 15, rtol: float = 1e-13, max_exchanges: int = 200,
                   aggregate=None):  # fmt: skip
    """argmin_{η ≥ 0} agg_l F_l(α + η e) from batched (F_l, F_l') evaluations (Figure 2).

    Bisection on the sign of the slope, ``batch`` points per exchange, to a width
    ``rtol``·max(η, 1).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(steps) -> (losses, slopes)``, both (len(steps), p).
    batch : int
        Steps evaluated per exchange while bisecting.
    rtol : float
        Relative width of the final bracket.
    max_exchanges : int
        Most exchanges (calls of ``evaluate``).
    aggregate : callable or None
        None for the hard max, or (F_l, F_l') → (value, slope) of a smooth convex aggregate
        (F_μ).

    Returns
    -------
    step : float
        η; 0 if F does not decrease, ``inf`` if it still does at 2^64.
    exchanges : int
        The calls of ``evaluate``.

    Examples
    --------
    >>> def evaluate(steps):  # F(η) = (η − 1)², minimum at 1
    ...     return (steps[:, None] - 1.0) ** 2, 2.0 * (steps[:, None] - 1.0)
    >>> step, exchanges = section_search(evaluate)
    >>> bool(abs(step - 1.0) < 1e-12)
    True
    """
    if aggregate is None:
        value_of, increasing = (lambda losses, slopes: losses.max()), _increasing
    else:

        def value_of(losses, slopes):
            return aggregate(losses, slopes)[0]

        def increasing(losses, slopes, rtol):
            return losses.max() != 0.0 and aggregate(losses, slopes)[1] >= 0.0

    steps = np.concatenate([[0.0], 2.0 ** np.arange(-8, 7)])
    low, high, exchanges, start = 0.0, None, 0, None
    while high is None:
        losses, slopes = evaluate(steps)
        exchanges += 1
        start = value_of(losses[0], slopes[0]) if start is None else start
        flags = [bool(increasing(losses[i], slopes[i], TIE_RTOL if steps[i] == 0 else 0.0))
                 for i in range(steps.size)]  # fmt: skip
        if True in flags:
            first = flags.index(True)
            if steps[first] == 0.0:
                return 0.0, exchanges
            high = steps[first]
            low = steps[first - 1] if first > 0 else low
        else:
            low = steps[-1]
            if low >= 2.0**64:
                return np.inf, exchanges
            steps = low * 2.0 ** np.arange(1, 17)
    while high - low > rtol * max(high, 1.0) and exchanges < max_exchanges:
        steps = np.linspace(low, high, batch + 2)[1:-1]
        losses, slopes = evaluate(steps)
        exchanges += 1
        flags = [bool(increasing(losses[i], slopes[i], 0.0)) for i in range(steps.size)]
        first = flags.index(True) if True in flags else steps.size
        high = steps[first] if first < steps.size else high
        low = steps[first - 1] if first > 0 else low
    step = 0.5 * (low + high)
    exchanges += 1
    losses, slopes = evaluate(np.array([step]))
    if value_of(losses[0], slopes[0]) >= start * (1.0 - TIE_RTOL):
        return 0.0, exchanges  # no decrease above rounding: a zig-zag at a tie has stalled
    return step, exchanges
