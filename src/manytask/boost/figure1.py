"""The math of one default MULTIBOOST round (Figure 1 of ``boosting-with-multiple-sources.txt``).

Lives here, one function per equation of the default round (binary, Φ = exp, Λ = the simplex,
hard max): :func:`domain_losses` (F_k, eq. 4) and its terms :func:`scaled_exponential_losses`
(a_i, shared by one round), :func:`round_distributions` (D_t(k, ·), lines 7–9),
:func:`weighted_error` (ε_{t,k,r}), :func:`direction_score` ((Z_{t,k}/m_k)[1 − 2ε_{t,k,r}],
line 10), :func:`closed_form_step` and :func:`lemma1_bound` (Lemma 1),
:func:`coordinate_losses`, :func:`objective_along_coordinate` and :func:`line_search_step` /
:func:`line_search` (exact argmin_η F(α + η e_{k,r}), line 11; the latter also returns F
there and takes the fit's :func:`domain_layout`); the active set K_t (line 5) is
:func:`~manytask.boost.objective.active_domains`, re-exported here.

Does not live here: the other options' formulas (Φ = logistic, Λ, ℓ1, step rules:
:mod:`.objective`), the soft-max and block-tie remedies (:mod:`.ties`), the boosting loop
(:mod:`.multiboost`, :mod:`.rounds`), the stump search (:mod:`.stumps`).
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from .objective import ACTIVE_RTOL, active_domains, minimise_convex, phi_domain_losses

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
    "objective_along_coordinate",
    "round_distributions",
    "scaled_exponential_losses",
    "weighted_error",
]


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


class _CoordinateObjective:
    """η ↦ F(α + η e_{k,r}) for one line search, bit for bit :func:`objective_along_coordinate`.

    Cheaper because (i) values are memoised (the bracket doubling and the final comparison
    revisit points); (ii) each F_l is convex in η, so between two points where it is known
    its chord bounds it from above: a domain whose bound (plus 1e-9 relative, far above the
    ~m·ε rounding of the sums) is below an F_l already computed cannot be the max and its
    exponentials are skipped, the max of the computed values being then the max over all l;
    (iii) each domain's points are stored contiguously, in their original order, with
    preallocated buffers (no fresh pages per evaluation), and summed left to right by a
    cumulative sum: the same sequential sum, in the same order, as ``np.bincount``.
    """

    _BOUND_RTOL = 1e-9

    def __init__(self, scaled_losses, directional_margins, domain_index, n_domains, layout=None):
        order, counts = domain_layout(domain_index, n_domains) if layout is None else layout
        ends = np.cumsum(counts)
        scaled = np.asarray(scaled_losses, dtype=float)[order]
        margins = np.asarray(directional_margins, dtype=float)[order]
        self._domains = [
            (scaled[end - count : end], margins[end - count : end], np.empty(count))
            for end, count in zip(ends, counts)
        ]
        self._sums = np.empty(int(counts.max(initial=0)))
        self._known = [([], []) for _ in range(n_domains)]  # per domain: sorted η, F_l(η)
        self._values = {}

    def _domain_loss(self, domain, step: float) -> float:
        scaled, margins, terms = self._domains[domain]
        if terms.size == 0:
            value = 0.0
        else:
            np.multiply(-step, margins, out=terms)
            with np.errstate(over="ignore"):
                np.exp(terms, out=terms)
            np.multiply(scaled, terms, out=terms)
            sums = self._sums[: terms.size]
            np.cumsum(terms, out=sums)
            value = float(sums[-1])
        steps, values = self._known[domain]
        position = bisect.bisect_left(steps, step)
        steps.insert(position, step)
        values.insert(position, value)
        return value

    def _chord_bound(self, domain, step: float) -> float:
        steps, values = self._known[domain]
        position = bisect.bisect_left(steps, step)
        if position == 0 or position == len(steps):
            return math.inf
        low, high = steps[position - 1], steps[position]
        low_value, high_value = values[position - 1], values[position]
        chord = low_value + (high_value - low_value) * ((step - low) / (high - low))
        bound = chord + self._BOUND_RTOL * max(abs(low_value), abs(high_value))
        return bound if math.isfinite(bound) else math.inf

    def __call__(self, step) -> float:
        key = float(step)
        value = self._values.get(key)
        if value is not None:
            return value
        bounds = [self._chord_bound(domain, key) for domain in range(len(self._domains))]
        computed, current, all_finite = [], -math.inf, True
        for domain in sorted(range(len(bounds)), key=bounds.__getitem__, reverse=True):
            if all_finite and computed and bounds[domain] < current:
                break  # this bound and every later one: F_l(η) < current ≤ max
            computed.append(self._domain_loss(domain, key))
            all_finite = all_finite and math.isfinite(computed[-1])
            current = max(current, computed[-1])
        value = current if all_finite else float(np.max(computed))
        self._values[key] = value
        return value


def line_search(scaled_losses, directional_margins, domain_index, n_domains, layout=None):
    """(η_t, F(α_{t−1} + η_t e_{k,r})): :func:`line_search_step` and the objective it reaches.

    ``layout``: :func:`domain_layout` of ``domain_index`` if already computed.

    Examples
    --------
    >>> step, value = line_search(np.array([0.5, 0.5]), np.array([1.0, -1.0]), np.zeros(2, int), 1)
    >>> round(step, 6), round(value, 6)  # ε = ½: no step helps, F stays 1
    (0.0, 1.0)
    """
    objective = _CoordinateObjective(
        scaled_losses, directional_margins, domain_index, n_domains, layout
    )
    objective(0.0)  # η = 0 is compared at the end anyway; known first, it bounds every chord
    step = minimise_convex(objective)
    if not np.isfinite(step):
        return step, -np.inf
    return newton_polish(step, objective(step), scaled_losses, directional_margins,
                         domain_index, n_domains)  # fmt: skip


_POLISH_NEAR_RTOL = 1e-6  # F_l this close to the max may cross it within Brent's √ε
# F is flat at a smooth minimum: within ~√ε of η*, F changes below its rounding (~m·ε); a
# Newton step may raise the computed F by that much and is still taken.
_POLISH_VALUE_RTOL = 1e-13


def newton_polish(step, value, scaled_losses, directional_margins, domain_index, n_domains,
                  max_iter: int = 4):  # fmt: skip
    """(η, F(η)) refined by Newton steps from Brent's η.

    Brent's method (scipy's bounded variant) stops at a relative tolerance of √ε ≈ 1.5e-8,
    where F along a coordinate is exact to rounding. Two cases finish the job, by Newton steps
    that converge quadratically: one F_l on top (a smooth minimum, F_l'(η*) = 0: the step is
    η − F_l'/F_l'', F_l'' = Σ a_i u_i² e^{−η u_i} > 0), or two, F_a falling and F_b rising (a
    kink at F_a = F_b: the step is η − (F_a − F_b)/(F_a' − F_b')). A step is kept only if it
    stays ≥ 0 and does not raise F beyond rounding (1e-13 relative); otherwise, or with three
    or more F_l near the top, Brent's η stays.
    """
    eps = np.finfo(float).eps
    for _ in range(max_iter):
        with np.errstate(over="ignore", invalid="ignore"):
            terms = scaled_losses * np.exp(-step * directional_margins)
        losses = np.bincount(domain_index, weights=terms, minlength=n_domains)
        slopes = -np.bincount(domain_index, weights=terms * directional_margins,
                              minlength=n_domains)  # fmt: skip
        if not (np.all(np.isfinite(losses)) and np.all(np.isfinite(slopes))):
            break
        near = np.flatnonzero(losses >= losses.max() * (1.0 - _POLISH_NEAR_RTOL))
        if near.size == 1:
            on_top = domain_index == near[0]
            curvature = float(terms[on_top] @ directional_margins[on_top] ** 2)
            if not curvature > 0:
                break
            candidate = step - slopes[near[0]] / curvature
        elif near.size == 2 and slopes[near].min() < 0 < slopes[near].max():
            falling, rising = near[np.argsort(slopes[near])]
            gap = losses[falling] - losses[rising]
            candidate = step - gap / (slopes[falling] - slopes[rising])
        else:
            break
        if candidate < 0 or abs(candidate - step) <= 4.0 * eps * max(step, 1.0):
            break
        candidate_value = objective_along_coordinate(
            candidate, scaled_losses, directional_margins, domain_index, n_domains
        )
        if candidate_value > value * (1.0 + _POLISH_VALUE_RTOL):
            break
        step, value = candidate, candidate_value
    return step, value


def line_search_step(scaled_losses, directional_margins, domain_index, n_domains):
    """η_t = argmin_{η ≥ 0} F(α_{t−1} + η e_{k,r})  (Figure 1, line 11), exactly.

    F along the coordinate is a max of convex functions of η, hence convex, so
    :func:`~manytask.boost.objective.minimise_convex` (bracket doubling, then bounded Brent)
    finds its minimum. Returns ``inf`` if F decreases without bound (h is right with
    y Q h > 0 on every weighted point).
    """
    return line_search(scaled_losses, directional_margins, domain_index, n_domains)[0]
