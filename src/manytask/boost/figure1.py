"""The math of one default MULTIBOOST round (Figure 1 of ``boosting-with-multiple-sources.txt``).

Lives here, one function per equation of the default round (binary, Φ = exp, Λ = the simplex,
hard max): :func:`domain_losses` (F_k, eq. 4) and its terms :func:`scaled_exponential_losses`
(a_i, shared by one round), :func:`round_distributions` (D_t(k, ·), lines 7–9),
:func:`weighted_error` (ε_{t,k,r}), :func:`direction_score` ((Z_{t,k}/m_k)[1 − 2ε_{t,k,r}],
line 10), :func:`closed_form_step` and :func:`lemma1_bound` (Lemma 1),
:func:`coordinate_losses`, :func:`objective_along_coordinate` and :func:`line_search_step` /
:func:`line_search` (exact argmin_η F(α + η e_{k,r}), line 11, by the safeguarded Newton
search :func:`minimise_max_newton` on the F_l and their derivatives; the latter also returns
F there and takes the fit's :func:`domain_layout`); the active set K_t (line 5) is
:func:`~manytask.boost.objective.active_domains`, re-exported here.

Does not live here: the other options' formulas (Φ = logistic, Λ, ℓ1, step rules:
:mod:`.objective`), the soft-max and block-tie remedies (:mod:`.ties`), the boosting loop
(:mod:`.multiboost`, :mod:`.rounds`), the stump search (:mod:`.stumps`).
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .objective import (
    _MAX_DOUBLINGS,
    ACTIVE_RTOL,
    active_domains,
    phi_domain_losses,
)

__all__ = [
    "ACTIVE_RTOL",
    "active_domains",
    "closed_form_step",
    "coordinate_losses",
    "direction_score",
    "domain_layout",
    "domain_losses",
    "lemma1_bound",
    "line_search",
    "line_search_step",
    "minimise_max_newton",
    "objective_along_coordinate",
    "round_distributions",
    "scaled_exponential_losses",
    "weighted_error",
]

# The computed F_l and F_l' carry a few ulps of rounding (sums of many terms): they are known
# to about this many ulps of their terms' magnitude, which bounds how well a root of the
# slope, or a crossing F_a = F_b, can be located (see minimise_max_newton).
_ROUNDING_ULPS = 16.0


def domain_losses(margins, domain_index, point_weights, n_domains) -> np.ndarray:
    """F_k(α) = Σ_{i ∈ S_k} c_i exp(−y_i f(x_i)) for every k  (§3, F = max_k F_k, eq. 4).

    ``margins`` are y_i f(x_i) with f the Q-ensemble of eq. (3); ``point_weights`` c_i are
    1/m_k (no sample weights) or w_i / Σ_{j ∈ S_k} w_j, so each F_k is a weighted mean.
    (:func:`~manytask.boost.objective.phi_domain_losses` with Φ = exp.)

    Examples
    --------
    >>> domain_losses(np.zeros(3), np.array([0, 0, 1]), np.array([0.5, 0.5, 1.0]), 2)
    array([1., 1.])
    """
    return phi_domain_losses(margins, domain_index, point_weights, n_domains, "exponential")


def scaled_exponential_losses(margins, point_weights) -> np.ndarray:
    """a_i = c_i exp(−y_i f(x_i)), the terms of F_k = Σ_{i∈S_k} a_i (eq. 4) and, Φ = exp
    being its own derivative, the unnormalised D_t(k, i) of Figure 1 (line 9).

    Examples
    --------
    >>> scaled_exponential_losses(np.array([0.0, np.log(2.0)]), np.array([0.5, 0.5])).tolist()
    [0.5, 0.25]
    """
    return point_weights * np.exp(-margins)


def round_distributions(margins, domain_index, point_weights, n_domains, scaled_losses=None):
    """D_t(k, i) = c_i Φ'(−y_i f_{t−1}(x_i)) / (Z_{t,k}/m_k) on S_k, Φ = exp  (Figure 1, l. 7–9).

    Returns the (m,) array D (each point belongs to one domain, so D_t(k, ·) is D restricted
    to S_k) and the (p,) array Z_{t,k}/m_k, which for Φ = exp equals F_k(α_{t−1}).
    ``scaled_losses``: the a_i of :func:`scaled_exponential_losses` if already computed.
    """
    unnormalised = (
        scaled_exponential_losses(margins, point_weights) if scaled_losses is None
        else scaled_losses
    )  # fmt: skip
    normalisers = np.bincount(domain_index, weights=unnormalised, minlength=n_domains)
    return unnormalised / normalisers[domain_index], normalisers


def weighted_error(distribution_mass, misclassified_mass):
    """ε_{t,k,r} = ½(1 − E_{i∼D_t(k,·)}[y_i Q(k|x_i) h_{k,r}(x_i)])  (Figure 1, caption).

    With w_i = D_t(k, i) Q(k|x_i): E[y Q h] = Σ w_i − 2 Σ w_i 1{h ≠ y}, so
    ε = ½(1 − Σ_i w_i) + Σ_i w_i 1{h(x_i) ≠ y_i}; the arguments are Σ w and the
    :func:`~manytask.boost.stumps.best_stump` error Σ w 1{h ≠ y}.
    """
    return 0.5 * (1.0 - distribution_mass) + misclassified_mass


def direction_score(normaliser, error):
    """(Z_{t,k}/m_k)[1 − 2ε_{t,k,r}] = −F_k'(α_{t−1}; e_{k,r})  (§3, Figure 1 line 10)."""
    return normaliser * (1.0 - 2.0 * error)


def closed_form_step(error) -> float:
    """η = ½ log((1 − ε)/ε), the minimiser of (1 − ε)e^{−η} + ε e^{η}  (Lemma 1, AdaBoost).

    Exact for F when the bound of Lemma 1 is tight (every y Q(k|x) h(x) = ±1, i.e. Q(k|·) = 1
    on the training points: one domain) and l = k attains its max at that η.
    """
    return 0.5 * np.log((1.0 - error) / error)


def lemma1_bound(step, normalisers, cross_errors) -> float:
    """max_l (Z_{t,l}/m_l)[(1 − ε_{t,l,k,r})e^{−η} + ε_{t,l,k,r} e^{η}]  (Lemma 1)."""
    normalisers, cross_errors = np.asarray(normalisers), np.asarray(cross_errors)
    values = normalisers * ((1.0 - cross_errors) * np.exp(-step) + cross_errors * np.exp(step))
    return float(values.max())


def coordinate_losses(step, scaled_losses, directional_margins, domain_index, n_domains,
                      with_slopes: bool = False):  # fmt: skip
    """F_l(α + η e_{k,r}) = Σ_{i∈S_l} a_i exp(−η u_i) for every l, with a_i = c_i e^{−y_i f(x_i)}
    and u_i = y_i Q(k|x_i) h_{k,r}(x_i)  (eq. 4 along one coordinate); ``with_slopes``: also
    dF_l/dη = −Σ_{i∈S_l} a_i u_i exp(−η u_i)."""
    with np.errstate(over="ignore"):
        terms = scaled_losses * np.exp(-step * directional_margins)
    losses = np.bincount(domain_index, weights=terms, minlength=n_domains)
    if not with_slopes:
        return losses
    slopes = -np.bincount(domain_index, weights=terms * directional_margins, minlength=n_domains)
    return losses, slopes


def objective_along_coordinate(step, scaled_losses, directional_margins, domain_index, n_domains):
    """F(α + η e_{k,r}) = max_l F_l(α + η e_{k,r})  (eq. 4 along one coordinate)."""
    return float(
        coordinate_losses(step, scaled_losses, directional_margins, domain_index, n_domains).max()
    )


def domain_layout(domain_index, n_domains):
    """(order, counts): a stable sort of the points by domain and the domain sizes, so that
    ``order[sum(counts[:k]):sum(counts[:k + 1])]`` lists S_k in increasing index order (one
    per fit, for :func:`line_search`)."""
    order = np.argsort(domain_index, kind="stable")
    return order, np.bincount(domain_index, minlength=n_domains)


class _CoordinatePieces:
    """η ↦ (F_l, F_l', F_l'') for every domain l along one coordinate (eq. 4) with
    t_i = a_i e^{−η u_i}: F_l = Σ_{S_l} t, F_l' = −Σ_{S_l} t u, F_l'' = Σ_{S_l} (t u) u.

    One NumPy ``exp`` pass per evaluation, then the three sums per domain, in index order
    within each domain: by ``np.bincount``, or in one fused pass by the numba kernel
    (:func:`~manytask.boost.kernels.coordinate_pieces`, which reads each domain's points
    through the :func:`domain_layout` order); the same sums bit for bit. At η = 0 the terms
    are the a_i themselves (e^{−0·u} = 1 exactly), no ``exp``. ``evaluations`` counts the calls;
    ``evaluated`` keeps each step's pieces (a line search returns one of its trial points,
    whose objective is then read back instead of recomputed).
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
        self.evaluations += 1
        self.evaluated[step] = pieces = self._pieces(step)
        return pieces

    def _pieces(self, step: float):
        terms = self._terms
        with np.errstate(over="ignore", invalid="ignore"):
            if step == 0.0:
                terms = self._scaled  # a e^{−0·u} = a · 1 = a exactly (the margins are finite)
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


def _max_slope(pieces) -> float:
    """A subgradient of F = max_l F_l: the slope of a maximiser (inf on overflow, where F is
    increasing)."""
    if not np.isfinite(pieces[:2]).all():
        return np.inf
    return float(pieces[1][int(pieces[0].argmax())])


def _tied_slope(pieces, rtol: float) -> float:
    """max_{l ∈ K} F_l' over the tied set K = {l : F_l ≥ max F (1 − rtol)} (Figure 1, line 5):
    F's one-sided slope when the ties within ``rtol`` are taken as exact."""
    losses, slopes = pieces[0], pieces[1]
    return float(slopes[losses >= losses.max() * (1.0 - rtol)].max())


def minimise_max_newton(pieces, max_iter: int = 200, tie_rtol: float = ACTIVE_RTOL) -> float:
    """argmin_{η ≥ 0} max_l F_l(η) for smooth convex F_l, with ``pieces(η)`` the (3, p) array
    of the F_l and their first two derivatives: a safeguarded Newton search for the root of
    the (non-decreasing) subgradient.

    0 if the slope at 0 is ≥ 0, where every F_l within ``tie_rtol`` of the max counts as a
    maximiser (the active set K_t of Figure 1, line 5: at such a tie the crossing sits
    within rounding of η = 0, and a step to it would lower F by rounding noise only). Each
    trial point: where the maximiser differs between the
    bracket's ends, the nearer root of the second-order model of the gap F_a − F_b at the
    last point (the kink, where the minimum of a max usually sits; the Newton step on the
    gap if that root is outside the bracket); otherwise a Newton
    step η − F_a'/F_a'' on the maximiser F_a at the last point, quadratically convergent
    on a smooth piece. Until the slope turns ≥ 0 the bracket is open above (``inf`` after 60
    doublings without: unbounded descent); once closed, trials outside it, or steps longer
    than half the step before last (slow progress), give way to bisection. Returns the last
    point once a Newton step from it would move less than the rounding of what it solves
    (closer, the computed slope or gap is noise and further Newton steps wander instead of
    converging): on a smooth piece, 4 ulps of η or the slope's rounding, 16 ulps of
    Σ t|u| ≤ √(F F''), over F'' (judging by F instead would not do, F being flat to
    rounding over ~√ε around a smooth minimum); on a crossing where F_a falls and F_b rises
    (a minimum), 16 ulps of F_a + F_b over the slope difference. A crossing that is not a
    minimum is never returned (its trials give way to bisection). Else, once the bracket
    is a few ulps wide, the end with the lower max (the lower η on ties).
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
            # Newton on the crossing F_a = F_b from the last point (a on top below it, b
            # above); the kink is where the minimum of a max usually sits.
            gap = current[0][falling] - current[0][rising]
            derivative = current[1][falling] - current[1][rising]
            curvature = current[2][falling] - current[2][rising]
            # inf − inf after an overflow: no trial; huge F_l overflow the quadratic model
            with np.errstate(invalid="ignore", over="ignore"):
                # The nearer root of the gap's second-order model gap + g'δ + ½g''δ² (the
                # Newton step −gap/g' when g'' = 0; the F_l are far from linear when one of
                # them is steep, and the plain Newton step then creeps towards the kink).
                # Outside the bracket (or no real root): the Newton step.
                discriminant = derivative * derivative - 2.0 * gap * curvature
                trial = np.nan
                if derivative < 0 and discriminant >= 0.0:
                    trial = last + 2.0 * gap / (np.sqrt(discriminant) - derivative)
                if not lower < trial < upper:
                    trial = last - gap / derivative if derivative < 0 else np.nan
                # A minimum iff the function on top below falls there and the one on top
                # above rises; its gap is known to a few ulps of F only: closer than that
                # over |slope difference|, the crossing is found to within rounding.
                if current[1][falling] <= 0.0 <= current[1][rising]:
                    level = current[0][falling] + current[0][rising]
                    resolution = max(resolution, _ROUNDING_ULPS * eps * level / -derivative)
                else:
                    resolution = -1.0  # not a minimum: never stop on it (bisection takes over)
        elif current[2][top] > 0 and np.isfinite(current[2][top]):
            trial = last - current[1][top] / current[2][top]
            # F' = −Σ t u is known to a few ulps of Σ t|u| ≤ √(F F'') (Cauchy–Schwarz), so
            # its root to that over F'': √(F/F'') times those ulps.
            noise = _ROUNDING_ULPS * eps * np.sqrt(current[0][top] / current[2][top])
            resolution = max(resolution, noise)
        else:
            trial = np.nan
        if last > 0 and abs(trial - last) <= resolution:
            return last  # the Newton iterates have converged: the root is within rounding
        if high is None:
            if not (np.isfinite(trial) and trial > lower):
                trial, doublings = (2.0 * lower if lower > 0 else 1.0), doublings + 1
                if doublings > _MAX_DOUBLINGS:
                    return np.inf
        else:
            middle, tolerance = 0.5 * (lower + upper), 2.0 * eps * upper
            if upper - lower <= 4.0 * tolerance or middle <= lower or middle >= upper:
                break
            # Bisect outside the bracket, or where the step is not below half the step
            # before last (Newton converging slowly; rtsafe's rule).
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


def line_search(scaled_losses, directional_margins, domain_index, n_domains, layout=None):
    """(η_t, F(α_{t−1} + η_t e_{k,r})): the exact minimiser of F along the coordinate
    (Figure 1, line 11) by :func:`minimise_max_newton`, and the objective it reaches.

    F_l(α + η e_{k,r}) = Σ_{i∈S_l} a_i e^{−η u_i} (:func:`coordinate_losses`) is smooth and
    convex with F_l' = −Σ a u e^{−ηu} and F_l'' = Σ a u² e^{−ηu}, so Newton steps on the
    maximiser (or on the crossing of two) converge in a few evaluations (about 6, where
    bounded Brent on the values needed about 70 and stopped at a relative √ε). ``inf`` if F
    decreases without bound.
    ``layout``: :func:`domain_layout` of ``domain_index`` if already computed.

    Examples
    --------
    >>> step, value = line_search(np.array([0.5, 0.5]), np.array([1.0, -1.0]), np.zeros(2, int), 1)
    >>> round(step, 6), round(value, 6)  # ε = ½: no step helps, F stays 1
    (0.0, 1.0)
    >>> step, _ = line_search(np.array([0.75, 0.25]), np.array([1.0, -1.0]), np.zeros(2, int), 1)
    >>> bool(np.isclose(step, 0.5 * np.log(3.0)))  # AdaBoost's ½ log((1 − ε)/ε), ε = ¼
    True
    """
    pieces = _CoordinatePieces(scaled_losses, directional_margins, domain_index, n_domains, layout)
    step = minimise_max_newton(pieces)
    if not np.isfinite(step):
        return step, -np.inf
    # F there, as objective_along_coordinate gives it (the same terms and sums), read back:
    # minimise_max_newton returns 0 or a trial point, all of which it evaluated.
    return float(step), float(pieces.evaluated[step][0].max())


def line_search_step(scaled_losses, directional_margins, domain_index, n_domains):
    """η_t = argmin_{η ≥ 0} F(α_{t−1} + η e_{k,r})  (Figure 1, line 11), exactly.

    F along the coordinate is a max of convex functions of η, hence convex, so
    :func:`minimise_max_newton` finds its minimum (:func:`line_search`). Returns ``inf`` if
    F decreases without bound (h is right with y Q h > 0 on every weighted point).
    """
    return line_search(scaled_losses, directional_margins, domain_index, n_domains)[0]
