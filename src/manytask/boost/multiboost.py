"""MULTIBOOST (Figure 1 of ``boosting-with-multiple-sources.txt``, Φ = exp) and AdaBoost.

Lives here: :class:`MultiBoostClassifier`, the binary coordinate descent on the agnostic
exponential objective F(α) = max_k F_k(α) (eq. 4) over Q-ensembles (eq. 3), and
:class:`AdaBoost`, the textbook discrete AdaBoost with exact stumps (the one-domain special
case, kept separate as an independent check and a baseline). The math of one round is split
into one function per equation: :func:`domain_losses` (F_k, eq. 4), :func:`active_domains`
(K_t), :func:`round_distributions` (D_t(k, ·)), :func:`weighted_error` (ε_{t,k,r}),
:func:`direction_score` ((Z_{t,k}/m_k)[1 − 2ε_{t,k,r}]), :func:`closed_form_step` (Lemma 1) and
:func:`line_search_step` (exact argmin_η F(α + η e_{k,r})); the soft-max variant (``mu``,
§3: F_μ = (1/μ) log Σ_k e^{μ F_k}) in :func:`soft_max_objective`, :func:`soft_max_weights`,
:func:`soft_max_stump_weights` and :func:`soft_line_search_step`.

Does not live here (yet): the logistic Φ, restricted mixture sets Λ, the ℓ1
variant, multi-class, early stopping (issue 5); the stump search (:mod:`.stumps`); Q(k|x)
(:mod:`.domain`); mixture errors (:mod:`.evaluation`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y

from .domain import DomainClassifier, _as_domain_labels
from .stumps import Stump, best_stump, presort

__all__ = [
    "AdaBoost",
    "MultiBoostClassifier",
    "active_domains",
    "closed_form_step",
    "direction_score",
    "domain_losses",
    "line_search_step",
    "round_distributions",
    "soft_line_search_step",
    "soft_max_objective",
    "soft_max_stump_weights",
    "soft_max_weights",
    "weighted_error",
]

# Relative tolerance of "F_k(α) = F(α)" in the active set K_t (line 5 of Figure 1).
ACTIVE_RTOL = 1e-9
# A line search whose bracket passes 2**_MAX_DOUBLINGS means F decreases without bound.
_MAX_DOUBLINGS = 60


# --------------------------------------------------------------------------- one round's math


def domain_losses(margins, domain_index, point_weights, n_domains) -> np.ndarray:
    """F_k(α) = Σ_{i ∈ S_k} c_i exp(−y_i f(x_i)) for every k  (§3, F = max_k F_k, eq. 4).

    ``margins`` are y_i f(x_i) with f the Q-ensemble of eq. (3); ``point_weights`` c_i are
    1/m_k (no sample weights) or w_i / Σ_{j ∈ S_k} w_j, so each F_k is a weighted mean.
    """
    return np.bincount(domain_index, weights=point_weights * np.exp(-margins), minlength=n_domains)


def active_domains(losses, rtol: float = ACTIVE_RTOL) -> np.ndarray:
    """K_t = {k : F_k(α_{t−1}) = F(α_{t−1})}, equality within ``rtol``  (Figure 1, line 5)."""
    losses = np.asarray(losses)
    return np.flatnonzero(losses >= losses.max() * (1.0 - rtol))


def round_distributions(margins, domain_index, point_weights, n_domains):
    """D_t(k, i) = c_i Φ'(−y_i f_{t−1}(x_i)) / (Z_{t,k}/m_k) on S_k, Φ = exp  (Figure 1, l. 7–9).

    Returns the (m,) array D (each point belongs to one domain, so D_t(k, ·) is D restricted
    to S_k) and the (p,) array Z_{t,k}/m_k, which for Φ = exp equals F_k(α_{t−1}).
    """
    unnormalised = point_weights * np.exp(-margins)
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


def _objective_along(step, scaled_losses, directional_margins, domain_index, n_domains):
    """F(α + η e_{k,r}) = max_l Σ_{i∈S_l} a_i exp(−η u_i), a_i = c_i e^{−y_i f(x_i)},
    u_i = y_i Q(k|x_i) h_{k,r}(x_i)  (eq. 4 along one coordinate)."""
    with np.errstate(over="ignore"):
        terms = scaled_losses * np.exp(-step * directional_margins)
    return float(np.bincount(domain_index, weights=terms, minlength=n_domains).max())


def line_search_step(scaled_losses, directional_margins, domain_index, n_domains):
    """η_t = argmin_{η ≥ 0} F(α_{t−1} + η e_{k,r})  (Figure 1, line 11), exactly.

    F along the coordinate is a max of convex functions of η, hence convex: the bracket
    [0, b] is doubled until F(b) ≥ F(b/2) (then the minimiser is ≤ b) and bounded Brent
    search finds the minimum inside it. Returns ``inf`` if F decreases without bound
    (h is right with y Q h > 0 on every weighted point).
    """

    def objective(step):
        return _objective_along(step, scaled_losses, directional_margins, domain_index, n_domains)

    upper = 1.0
    for _ in range(_MAX_DOUBLINGS):
        if objective(upper) >= objective(0.5 * upper):
            break
        upper *= 2.0
    else:
        return np.inf
    result = minimize_scalar(
        objective, bounds=(0.0, upper), method="bounded", options={"xatol": 1e-12 * upper}
    )
    # Brent never evaluates the ends; η = 0 (no progress) must win ties with them.
    candidates = [0.0, float(result.x), upper]
    values = [objective(step) for step in candidates]
    return candidates[int(np.argmin(values))]


# --------------------------------------------------------------------------- soft-max (§3)


def soft_max_objective(losses, mu) -> float:
    """F_μ = (1/μ) log Σ_k exp(μ F_k)  (§3, the soft-max replacing max_k F_k); ``mu=None``: max.

    Smooth and convex in α (log-sum-exp is convex and increasing in each F_k, each F_k is
    convex), and max_k F_k ≤ F_μ ≤ max_k F_k + (log p)/μ, so F_μ → F as μ → ∞.
    """
    losses = np.asarray(losses, dtype=float)
    if mu is None:
        return float(losses.max())
    return float(logsumexp(mu * losses) / mu)


def soft_max_weights(losses, mu) -> np.ndarray:
    """p_k = ∂F_μ/∂F_k = exp(μ F_k) / Σ_l exp(μ F_l)  (the soft-max weights, sum to 1)."""
    return softmax(mu * np.asarray(losses, dtype=float))


def soft_max_stump_weights(scaled_losses, domain_index, Q, domain_weights) -> np.ndarray:
    """Row q: w^q_i = p_{k(i)} a_i Q(q|x_i), with a_i = c_i e^{−y_i f(x_i)}, k(i) ∋ i's domain.

    Derivation: along the coordinate e_{q,h} (the base function Q(q|·) h),
    −F_k'(α; e_{q,h}) = Σ_{i∈S_k} a_i y_i Q(q|x_i) h(x_i) = (Z_k/m_k)[1 − 2ε_{k,q,h}] with
    ε_{k,q,h} the cross error of Lemma 1, so by the chain rule the descent rate of F_μ is

        −F_μ'(α; e_{q,h}) = Σ_k p_k (Z_k/m_k)[1 − 2ε_{k,q,h}] = Σ_i w^q_i y_i h(x_i)
                          = Σ_i w^q_i − 2 Σ_i w^q_i 1{h(x_i) ≠ y_i}.

    It is linear in the per-domain errors, i.e. itself a weighted error with the combined
    weights w^q = Σ_k p_k (domain-k weights): for each q ONE :func:`best_stump` search with
    w^q finds the exact steepest stump, and the p rows together the steepest coordinate of
    F_μ over all (q, h). (Figure 1's score (Z_k/m_k)[1 − 2ε_{k,r}] is the diagonal q = k term.)
    """
    per_point = domain_weights[domain_index] * scaled_losses
    return (per_point[:, None] * Q).T


def _soft_losses_along(step, scaled_losses, directional_margins, domain_index, n_domains):
    with np.errstate(over="ignore"):
        terms = scaled_losses * np.exp(-step * directional_margins)
    losses = np.bincount(domain_index, weights=terms, minlength=n_domains)
    slopes = -np.bincount(domain_index, weights=terms * directional_margins, minlength=n_domains)
    return losses, slopes


def _soft_objective_along(step, scaled_losses, directional_margins, domain_index, n_domains, mu):
    """F_μ(α + η e) with F_l(α + η e) = Σ_{i∈S_l} a_i exp(−η u_i)."""
    losses, _ = _soft_losses_along(
        step, scaled_losses, directional_margins, domain_index, n_domains
    )
    return soft_max_objective(losses, mu)


def _soft_slope_along(step, scaled_losses, directional_margins, domain_index, n_domains, mu):
    """d/dη F_μ(α + η e) = Σ_l p_l(η) F_l'(η), F_l'(η) = −Σ_{i∈S_l} a_i u_i e^{−η u_i}."""
    losses, slopes = _soft_losses_along(
        step, scaled_losses, directional_margins, domain_index, n_domains
    )
    if not np.all(np.isfinite(losses)):
        return np.inf  # overflow: some F_l → ∞, so F_μ is increasing there
    return float(soft_max_weights(losses, mu) @ slopes)


def soft_line_search_step(scaled_losses, directional_margins, domain_index, n_domains, mu):
    """η = argmin_{η ≥ 0} F_μ(α + η e_{q,h}), exactly: the root of the slope.

    F_μ along a coordinate is smooth and convex, so its slope is non-decreasing: 0 if the slope
    at 0 is ≥ 0; otherwise [0, b] is doubled until the slope at b is ≥ 0 and Brent's root
    finder gives the zero of the slope to machine precision. ``inf`` if F_μ decreases without
    bound (u_i > 0 on every weighted point).
    """

    def slope(step):
        return _soft_slope_along(
            step, scaled_losses, directional_margins, domain_index, n_domains, mu
        )

    if slope(0.0) >= 0:
        return 0.0
    if np.all(np.asarray(directional_margins)[np.asarray(scaled_losses) > 0] > 0):
        return np.inf  # checked first: the slope underflows to 0 long before F_μ stops falling
    lower, upper = 0.0, 1.0
    for _ in range(_MAX_DOUBLINGS):
        if slope(upper) >= 0:
            break
        lower, upper = upper, 2.0 * upper
    else:
        return np.inf
    if slope(upper) == 0:
        return upper
    return float(brentq(slope, lower, upper, xtol=1e-15 * upper, rtol=4 * np.finfo(float).eps))


# --------------------------------------------------------------------------- validation


def _signed_labels(y):
    """classes_ (exactly two) and y mapped to −1 (classes_[0]) / +1 (classes_[1])."""
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(
            f"y must contain exactly two classes (multi-class is planned), got {classes.size}: "
            f"{classes[:5].tolist()}"
        )
    return classes, np.where(y == classes[1], 1.0, -1.0)


def _point_weights(sample_weight, domain_index, n_domains, domain_labels):
    """c_i = w_i / Σ_{j ∈ S_k(i)} w_j (1/m_k without sample weights)."""
    m = domain_index.shape[0]
    if sample_weight is None:
        weights = np.ones(m)
    else:
        weights = np.asarray(sample_weight, dtype=float)
        if weights.shape != (m,):
            raise ValueError(f"sample_weight must have shape ({m},), got {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("sample_weight must be finite and >= 0")
    totals = np.bincount(domain_index, weights=weights, minlength=n_domains)
    if np.any(totals <= 0):
        empty = domain_labels[totals <= 0].tolist()
        raise ValueError(f"every domain needs positive total sample_weight, got 0 for {empty}")
    return weights / totals[domain_index]


# --------------------------------------------------------------------------- MULTIBOOST


class MultiBoostClassifier(ClassifierMixin, BaseEstimator):
    """MULTIBOOST (Figure 1, Φ = exp): a Q-ensemble of stumps good on every source domain.

    Coordinate descent on F(α) = max_k F_k(α), F_k(α) = (1/m_k) Σ_{i∈S_k}
    exp(−y_i Σ_t α_t Q(k_t|x_i) h_t(x_i)) (eq. 4, Λ = the simplex). Round t: the losses F_k
    and active set K_t (ties within ``ACTIVE_RTOL``); for k ∈ K_t the distribution D_t(k,·)
    and the exact best stump h_{k,r} for the weights D_t(k, i) Q(k|x_i), i.e. the least ε_{t,k,r};
    the direction (k, r) maximising (Z_{t,k}/m_k)[1 − 2ε_{t,k,r}]; the step
    η_t = argmin_{η≥0} F(α + η e_{k,r}) by Lemma 1's closed form where it is exact (one domain)
    and by an exact line search otherwise.

    Parameters
    ----------
    n_estimators : int
        Number of rounds T (fewer if boosting stops, see Notes).
    domain_classifier : DomainClassifier, fitted classifier with predict_proba, or None
        Q(k|x). None: ``DomainClassifier()`` fitted on (X, domains). A ``DomainClassifier`` is
        cloned and fitted; any other classifier must be already fitted on the source labels
        and is wrapped as ``DomainClassifier(estimator=...)``.
    n_bins : int or None
        None: exact stump search; an int: histogram-binned search (see :func:`presort`).
    random_state : None, int or Generator
        Unused: the algorithm is deterministic (kept for the scikit-learn convention).
    mu : None or float > 0
        None: the hard max F = max_k F_k of Figure 1. A float: coordinate descent on the
        soft-max F_μ(α) = (1/μ) log Σ_k exp(μ F_k(α)) (§3), smooth, with
        max_k F_k ≤ F_μ ≤ max_k F_k + (log p)/μ. Each round takes the steepest coordinate
        (q, h) of F_μ, i.e. the largest Σ_k p_k (Z_k/m_k)[1 − 2ε_{k,q,h}] with the soft-max
        weights p_k ∝ exp(μ F_k) over all domains (one exact stump search per q with the
        combined weights of :func:`soft_max_stump_weights`), and the exact line search
        η = argmin F_μ(α + η e_{q,h}) (:func:`soft_line_search_step`). The F_k start at 1 and
        shrink, so μ is in units of 1/F: μ F_k ≫ log p makes F_μ close to the max.

    Attributes
    ----------
    classes_ : ndarray (2,)
        ``classes_[1]`` is the positive class (margin > 0).
    domains_ : ndarray (p,)
        Sorted source labels; ``domains_[k]`` is domain k.
    estimators_ : list of (int, Stump)
        (k_t, h_t) per round: the ensemble is f(x) = Σ_t α_t Q(k_t|x) h_t(x)  (eq. 3).
    estimator_weights_ : ndarray (T',)
        The α_t.
    domain_classifier_ : DomainClassifier
    history_ : list of dict
        Per round: ``losses`` (F_k(α_{t−1}) per domain), ``active`` (K_t, domain labels),
        ``domain``, ``stump``, ``step``, ``step_rule`` (``"closed_form"``, ``"line_search"``
        or ``"separating"``), ``direction_rule`` (``"paper"``, ``"steepest"`` or, with
        ``mu``, ``"soft_max"``); with ``mu`` also ``objective`` (F_μ(α_{t−1})) and
        ``soft_weights`` (the p_k). A last entry with ``stump=None`` and ``stop`` gives the
        reason when boosting stops early.
    objective_ : float
        The minimised objective of the returned ensemble on the training data: F(α), or
        F_μ(α) when ``mu`` is set.

    Notes
    -----
    * Ties: at α = 0 every F_k = 1, so all domains are active, and the paper's direction
      (best for one active F_k) may increase another active F_l — then F, a max, cannot
      decrease along it (§3 assumes this away). We then try the other active domains' best
      stumps in score order and, failing those, the steepest coordinate direction of F itself,
      argmax_{q,h} min_{l∈K_t} −F_l'(α; e_{q,h}) (exact stumps). If no coordinate decreases F
      boosting stops (``stop="no coordinate decreases F"``).
    * A stump with y Q h > 0 on every training point makes F → 0 as η → ∞; we take the finite
      step η = (1 + ‖α‖₁)/min_i Q(k|x_i), which gives every training point a positive margin,
      and stop (with one domain and t = 1 this is α = 1, scikit-learn's convention).
    * ``predict_proba`` uses the logistic link p(y = classes_[1] | x) = 1/(1 + e^{−2f(x)}):
      the population minimiser of the exponential loss is f = ½ log(p/(1 − p)).
    * A domain whose points all have one class is allowed (its F_k is still defined); the
      whole sample must have two classes.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = MultiBoostClassifier(n_estimators=5).fit(X, y, domains=np.repeat([0, 1], 30))
    >>> float(clf.score(X, y))
    1.0
    """

    def __init__(
        self, n_estimators=100, domain_classifier=None, n_bins=None, random_state=None, mu=None
    ):
        self.n_estimators = n_estimators
        self.domain_classifier = domain_classifier
        self.n_bins = n_bins
        self.random_state = random_state
        self.mu = mu

    # ----------------------------------------------------------------- fitting

    def fit(self, X, y, domains=None, sample_weight=None):
        """Run T rounds of MULTIBOOST on (X, y) from the sources ``domains``.

        Parameters
        ----------
        X : array-like (m, d)
        y : array-like (m,)
            Two classes, any labels.
        domains : array-like (m,) or None
            Source label of each row; None means one domain (then this is AdaBoost).
        sample_weight : array-like (m,) or None
            Non-negative; each F_k becomes the weighted mean over S_k.

        Returns
        -------
        self
        """
        if (
            isinstance(self.n_estimators, bool)
            or not isinstance(self.n_estimators, (int, np.integer))
            or self.n_estimators < 1
        ):
            raise ValueError(f"n_estimators must be an int >= 1, got {self.n_estimators!r}")
        if self.mu is not None and (
            isinstance(self.mu, bool)
            or not isinstance(self.mu, (int, float, np.integer, np.floating))
            or not np.isfinite(self.mu)
            or self.mu <= 0
        ):
            raise ValueError(f"mu must be None or a finite number > 0, got {self.mu!r}")
        X, y = check_X_y(X, y)
        self.n_features_in_ = X.shape[1]
        self.classes_, y_signed = _signed_labels(y)
        m = X.shape[0]
        if domains is None:
            domains = np.zeros(m, dtype=int)
        domains = _as_domain_labels(domains, "domains", m)
        self.domains_, domain_index = np.unique(domains, return_inverse=True)
        n_domains = self.domains_.size
        point_weights = _point_weights(sample_weight, domain_index, n_domains, self.domains_)

        self.domain_classifier_ = self._fit_domain_classifier(X, domains)
        Q = self.domain_classifier_.predict_proba(X)  # (m, p), columns in domains_ order
        presorted = presort(X, n_bins=self.n_bins)
        self._exact_presorted = presorted if self.n_bins is None else None

        margins = np.zeros(m)  # y_i f_{t−1}(x_i)
        self.estimators_, weights, self.history_ = [], [], []
        boost_round = self._boost_round if self.mu is None else self._soft_round
        for _ in range(self.n_estimators):
            stop = boost_round(
                X, y_signed, Q, presorted, domain_index, point_weights, margins, weights
            )
            if stop:
                break
        self.estimator_weights_ = np.asarray(weights, dtype=float)
        self.objective_ = soft_max_objective(
            domain_losses(margins, domain_index, point_weights, n_domains), self.mu
        )
        del self._exact_presorted
        return self

    def _fit_domain_classifier(self, X, domains):
        if self.domain_classifier is None:
            return DomainClassifier().fit(X, domains)
        if isinstance(self.domain_classifier, DomainClassifier):
            return clone(self.domain_classifier).fit(X, domains)
        return DomainClassifier(estimator=self.domain_classifier).fit(X, domains)

    def _boost_round(self, X, y, Q, presorted, domain_index, point_weights, margins, weights):
        """One pass of lines 3–12 of Figure 1; updates margins/weights in place, True = stop."""
        n_domains = self.domains_.size
        losses = domain_losses(margins, domain_index, point_weights, n_domains)
        objective = losses.max()
        active = active_domains(losses)
        distribution, normalisers = round_distributions(
            margins, domain_index, point_weights, n_domains
        )
        # Row j: weights D_t(k, i) Q(k|x_i) on S_k (zero elsewhere) for k = active[j].
        stump_weights = np.zeros((active.size, X.shape[0]))
        for row, k in enumerate(active):
            on_k = domain_index == k
            stump_weights[row, on_k] = distribution[on_k] * Q[on_k, k]
        results = best_stump(presorted, y, stump_weights)
        scores = np.array(
            [
                direction_score(
                    normalisers[k], weighted_error(stump_weights[row].sum(), result.error)
                )
                for row, (k, result) in enumerate(zip(active, results))
            ]
        )
        record = {"losses": losses.copy(), "active": self.domains_[active].tolist()}
        scaled_losses = point_weights * np.exp(-margins)

        candidates = [
            (int(active[row]), results[row].stump)
            for row in np.argsort(-scores, kind="stable")
            if scores[row] > 0
        ]
        chosen = None
        direction_rule = "paper"
        for k, stump in candidates:
            chosen = self._step(k, stump, y, Q, scaled_losses, domain_index, objective, X)
            if chosen is not None:
                break
        if chosen is None and active.size > 1:
            k, stump = self._steepest_coordinate(X, y, Q, scaled_losses, domain_index, active)
            direction_rule = "steepest"
            if stump is not None:
                chosen = self._step(k, stump, y, Q, scaled_losses, domain_index, objective, X)
        if chosen is None:
            record.update(domain=None, stump=None, step=0.0, stop="no coordinate decreases F")
            self.history_.append(record)
            return True

        step, step_rule, directional_margins = chosen
        return self._take_step(
            record, margins, weights, k, stump, step, step_rule, directional_margins, Q,
            direction_rule,
        )  # fmt: skip

    def _take_step(
        self, record, margins, weights, k, stump, step, step_rule, directional_margins, Q,
        direction_rule,
    ):  # fmt: skip
        """Add η·Q(k|·)h to the ensemble and record the round; True if boosting must stop.

        A "separating" direction (every training margin grows) has its minimum at η → ∞: take
        η = (1 + ‖α‖₁)/min_x Q(k|x), which makes every training margin positive, and stop.
        """
        if step_rule == "separating":
            step = (1.0 + float(np.sum(weights))) / Q[:, k].min()
        margins += step * directional_margins
        self.estimators_.append((k, stump))
        weights.append(step)
        record.update(
            domain=self.domains_[k],
            stump=stump,
            step=step,
            step_rule=step_rule,
            direction_rule=direction_rule,
        )
        self.history_.append(record)
        return step_rule == "separating"

    def _soft_round(self, X, y, Q, presorted, domain_index, point_weights, margins, weights):
        """One coordinate-descent round on F_μ (``mu`` set); same contract as _boost_round."""
        n_domains, mu = self.domains_.size, float(self.mu)
        losses = domain_losses(margins, domain_index, point_weights, n_domains)
        objective = soft_max_objective(losses, mu)
        domain_weights = soft_max_weights(losses, mu)
        scaled_losses = point_weights * np.exp(-margins)  # a_i
        # Row q: w^q_i = p_{k(i)} a_i Q(q|x_i); rate(q, h) = Σ w^q − 2·(weighted error of h).
        stump_weights = soft_max_stump_weights(scaled_losses, domain_index, Q, domain_weights)
        results = best_stump(presorted, y, stump_weights)
        rates = stump_weights.sum(axis=1) - 2.0 * np.array([result.error for result in results])
        record = {
            "losses": losses.copy(),
            "active": self.domains_[active_domains(losses)].tolist(),
            "objective": objective,
            "soft_weights": domain_weights,
        }
        q = int(np.argmax(rates))
        stump = results[q].stump
        directional_margins = y * Q[:, q] * stump.predict(X)  # u_i = y_i Q(q|x_i) h(x_i)
        step, step_rule = 0.0, "line_search"
        if rates[q] > 0:
            weighted = scaled_losses > 0
            if np.all(directional_margins[weighted] > 0):
                step = np.inf
            else:
                step = soft_line_search_step(
                    scaled_losses, directional_margins, domain_index, n_domains, mu
                )
        if not np.isfinite(step):
            step_rule = "separating"
        elif not (
            step > 0
            and _soft_objective_along(
                step, scaled_losses, directional_margins, domain_index, n_domains, mu
            )
            < objective
        ):
            record.update(domain=None, stump=None, step=0.0, stop="no coordinate decreases F_mu")
            self.history_.append(record)
            return True
        return self._take_step(
            record, margins, weights, q, stump, step, step_rule, directional_margins, Q,
            "soft_max",
        )  # fmt: skip

    def _step(self, k, stump, y, Q, scaled_losses, domain_index, objective, X):
        """(η_t, rule, u) along e_{k,r} if it decreases F, else None (Figure 1, line 11)."""
        n_domains = self.domains_.size
        directional_margins = y * Q[:, k] * stump.predict(X)  # u_i = y_i Q(k|x_i) h(x_i)
        weighted = scaled_losses > 0
        if np.all(directional_margins[weighted] > 0):
            return np.inf, "separating", directional_margins
        step, rule = None, "line_search"
        if np.all(np.abs(directional_margins[weighted]) == 1.0):
            # Lemma 1's bound is then an equality: F_l(α + ηe) = (Z_l/m_l)[(1−ε_l)e^{−η} + ε_l e^η].
            normalisers = np.bincount(domain_index, weights=scaled_losses, minlength=n_domains)
            wrong = np.bincount(
                domain_index,
                weights=scaled_losses * (directional_margins < 0),
                minlength=n_domains,
            )
            cross_errors = wrong / normalisers
            candidate = closed_form_step(cross_errors[k])
            if lemma1_bound(candidate, normalisers, cross_errors) <= normalisers[k] * (
                (1 - cross_errors[k]) * np.exp(-candidate) + cross_errors[k] * np.exp(candidate)
            ):
                step, rule = float(candidate), "closed_form"
        if step is None:
            step = line_search_step(scaled_losses, directional_margins, domain_index, n_domains)
        if not np.isfinite(step):
            return np.inf, "separating", directional_margins
        value = _objective_along(step, scaled_losses, directional_margins, domain_index, n_domains)
        if not (step > 0 and value < objective):
            return None
        return step, rule, directional_margins

    def _steepest_coordinate(self, X, y, Q, scaled_losses, domain_index, active):
        """argmax_{q, h} min_{l ∈ K_t} Σ_{i∈S_l} a_i y_i Q(q|x_i) h(x_i) over exact stumps.

        −F_l'(α; e_{q,h}) is that sum, so this is the steepest coordinate descent direction
        of F = max_l F_l at a tie; returns (q, stump), stump None if the best value is ≤ 0.
        """
        if self._exact_presorted is None:  # binned mode: presort exactly once, when needed
            self._exact_presorted = presort(X)
        presorted = self._exact_presorted
        order, split_valid = presorted.order, presorted.split_valid
        d, m = order.shape
        best = (0.0, None, None)
        for q in range(self.domains_.size):
            # signed[j, i] = a_i y_i Q(q|x_i) on S_{active[j]}.
            signed = np.zeros((active.size, m))
            for row, l in enumerate(active):
                on_l = domain_index == l
                signed[row, on_l] = scaled_losses[on_l] * y[on_l] * Q[on_l, q]
            total = signed.sum(axis=1)
            for feature in range(d):
                prefix = np.zeros((active.size, m))
                np.cumsum(signed[:, order[feature, :-1]], axis=1, out=prefix[:, 1:])
                # Polarity π: Σ s h = π(total − 2·Σ_{below} s); split 0 is the constant stump.
                gain_plus = (total[:, None] - 2.0 * prefix).min(axis=0)
                gain_minus = (2.0 * prefix - total[:, None]).min(axis=0)
                for polarity, gains in ((1, gain_plus), (-1, gain_minus)):
                    gains = np.where(split_valid[feature], gains, -np.inf)
                    split = int(np.argmax(gains))
                    if gains[split] > best[0]:
                        values = presorted.sorted_values[feature]
                        threshold = (
                            -np.inf
                            if split == 0
                            else float(0.5 * values[split - 1] + 0.5 * values[split])
                        )
                        best = (gains[split], q, Stump(feature, threshold, polarity))
        return best[1], best[2]

    # ----------------------------------------------------------------- prediction

    def _check_X(self, X):
        check_is_fitted(self, "estimators_")
        X = check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the model was fitted on {self.n_features_in_}"
            )
        return X

    def staged_decision_function(self, X):
        """Yield f_t(x) = Σ_{s≤t} α_s Q(k_s|x) h_s(x)  (eq. 3) after each round t."""
        X = self._check_X(X)
        Q = self.domain_classifier_.predict_proba(X)
        decision = np.zeros(X.shape[0])
        for (k, stump), step in zip(self.estimators_, self.estimator_weights_):
            decision = decision + step * Q[:, k] * stump.predict(X)
            yield decision

    def decision_function(self, X):
        """f(x) = Σ_t α_t Q(k_t|x) h_t(x)  (eq. 3); > 0 predicts ``classes_[1]``."""
        X = self._check_X(X)
        decision = np.zeros(X.shape[0])
        for staged in self.staged_decision_function(X):
            decision = staged
        return decision

    def staged_predict(self, X):
        """Yield the predicted labels after each round."""
        for decision in self.staged_decision_function(X):
            yield self.classes_[(decision > 0).astype(int)]

    def predict(self, X):
        """``classes_[1]`` where f(x) > 0, else ``classes_[0]``."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def predict_proba(self, X):
        """(N, 2) probabilities by the logistic link p₁ = 1/(1 + e^{−2f(x)}) (see Notes)."""
        positive = 0.5 * (1.0 + np.tanh(self.decision_function(X)))  # = 1/(1 + e^{−2f})
        return np.column_stack([1.0 - positive, positive])


# --------------------------------------------------------------------------- AdaBoost


class AdaBoost(ClassifierMixin, BaseEstimator):
    """Textbook discrete AdaBoost (Freund & Schapire 1997) with exact decision stumps.

    D_1 = sample weights normalised; round t: h_t = the stump of least ε_t = Σ_i D_t(i)
    1{h_t(x_i) ≠ y_i}, α_t = ½ log((1 − ε_t)/ε_t), D_{t+1}(i) ∝ D_t(i) exp(−α_t y_i h_t(x_i)).
    Stops when ε_t ≥ ½; if ε_t = 0 the stump is added with α_t = 1 + Σ_{s<t} α_s (its sign
    then decides every training point) and boosting stops. Same conventions as
    :class:`MultiBoostClassifier` with one domain.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> AdaBoost(n_estimators=3).fit(X, [0, 0, 1, 1]).predict([[0.5], [2.5]]).tolist()
    [0, 1]
    """

    def __init__(self, n_estimators=100):
        self.n_estimators = n_estimators

    def fit(self, X, y, sample_weight=None):
        """Run T rounds; returns self."""
        if (
            isinstance(self.n_estimators, bool)
            or not isinstance(self.n_estimators, (int, np.integer))
            or self.n_estimators < 1
        ):
            raise ValueError(f"n_estimators must be an int >= 1, got {self.n_estimators!r}")
        X, y = check_X_y(X, y)
        self.n_features_in_ = X.shape[1]
        self.classes_, y_signed = _signed_labels(y)
        one_domain = np.zeros(X.shape[0], dtype=int)
        point_weights = _point_weights(sample_weight, one_domain, 1, np.array([0]))
        presorted = presort(X)
        margins = np.zeros(X.shape[0])  # y_i f_{t−1}(x_i)
        self.estimators_, weights, self.errors_ = [], [], []
        for _ in range(self.n_estimators):
            # D_t ∝ D_1 exp(−y f_{t−1}), the multiplicative update unrolled; the sums use the
            # same operations as MultiBoostClassifier so that exact ties break alike.
            unnormalised = point_weights * np.exp(-margins)
            total = np.bincount(one_domain, weights=unnormalised)[0]
            stump, _, _ = best_stump(presorted, y_signed, unnormalised / total)
            directional_margins = y_signed * stump.predict(X)
            wrong = np.bincount(one_domain, weights=unnormalised * (directional_margins < 0))[0]
            error = wrong / total
            if error >= 0.5:
                break
            self.estimators_.append(stump)
            self.errors_.append(error)
            if error <= 0.0:
                weights.append(1.0 + float(np.sum(weights)))
                break
            alpha = float(0.5 * np.log((1.0 - error) / error))
            weights.append(alpha)
            margins += alpha * directional_margins
        self.estimator_weights_ = np.asarray(weights, dtype=float)
        self.errors_ = np.asarray(self.errors_, dtype=float)
        return self

    def staged_decision_function(self, X):
        """Yield Σ_{s≤t} α_s h_s(x) after each round."""
        check_is_fitted(self, "estimators_")
        X = check_array(X)
        decision = np.zeros(X.shape[0])
        for stump, alpha in zip(self.estimators_, self.estimator_weights_):
            decision = decision + alpha * stump.predict(X)
            yield decision

    def decision_function(self, X):
        """Σ_t α_t h_t(x); > 0 predicts ``classes_[1]``."""
        check_is_fitted(self, "estimators_")
        decision = np.zeros(check_array(X).shape[0])
        for staged in self.staged_decision_function(X):
            decision = staged
        return decision

    def predict(self, X):
        """``classes_[1]`` where the decision is > 0."""
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
