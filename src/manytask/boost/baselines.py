"""Baselines of Table 1 of ``boosting-with-multiple-sources.txt`` (§6): AdaBoost-k,
AdaBoost-all and DMSA.

Lives here: :class:`AdaBoostPerDomain` (AdaBoost-k: one :class:`~.adaboost.AdaBoost` per
source), :class:`PooledAdaBoost` (AdaBoost-all: one AdaBoost on the union of the sources,
taking ``domains`` only to share the ``fit(X, y, domains)`` interface) and
:class:`DMSAClassifier`, the discriminative multiple-source adaptation solution of Cortes,
Mohri, Suresh & Zhang (ICML 2021), built on the AdaBoost-k predictors as in §6; the math of
DMSA in one function per formula (:func:`adaboost_probability`, :func:`dmsa_combination`,
:func:`domain_log_losses`, :func:`fit_mixture_weights`).

Does not live here: MULTIBOOST (:mod:`.multiboost`) and AdaBoost (:mod:`.adaboost`)
themselves, Q(k|x) (:mod:`.domain`), errors on mixtures (:mod:`.evaluation`), the Table 1 runner.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, check_X_y

from .._validation import check_random_state
from ..simplex import check_simplex
from .adaboost import AdaBoost
from .domain import DomainClassifier
from .validation import as_domain_labels, check_fitted_X, check_positive_int, signed_labels

__all__ = [
    "AdaBoostPerDomain",
    "DMSAClassifier",
    "PooledAdaBoost",
    "adaboost_probability",
    "dmsa_combination",
    "domain_log_losses",
    "fit_mixture_weights",
]

# h_k(x) is kept in [PROBABILITY_CLIP, 1 − PROBABILITY_CLIP] so the log loss stays finite
# (AdaBoost stops with a huge α when a stump is perfect on its source).
PROBABILITY_CLIP = 1e-6


def _check_sources(X, y, domains):
    """X, y checked, binary; domains as labels (None: one source); per-domain index; every
    source has 2 classes."""
    X, y = check_X_y(X, y)
    classes, _ = signed_labels(y)
    if domains is None:
        domains = np.zeros(X.shape[0], dtype=int)
    domains = as_domain_labels(domains, "domains", X.shape[0])
    labels, domain_index = np.unique(domains, return_inverse=True)
    for k, label in enumerate(labels):
        present = np.unique(y[domain_index == k])
        if present.size != 2:
            raise ValueError(
                f"domains: source {label.tolist()!r} must contain both classes "
                f"{classes.tolist()} to train its own AdaBoost, got only {present.tolist()}"
            )
    return X, y, classes, labels, domain_index


# --------------------------------------------------------------------------- AdaBoost-k / all


class AdaBoostPerDomain(ClassifierMixin, BaseEstimator):
    """AdaBoost-k (§6): one :class:`AdaBoost` trained on each source S_k alone.

    Table 1's row AdaBoost-k is the model of source k evaluated on the test data of every
    domain: ``estimators_[k]`` is an ordinary fitted :class:`AdaBoost`, so
    ``mixture_errors(model.estimators_[k], X, y, domains)`` gives that row, as does
    ``mixture_errors(model, X, y, domains, predict_kwargs={"domain": label})``.

    Parameters
    ----------
    n_estimators : int
        Rounds T of each AdaBoost.

    Attributes
    ----------
    classes_ : ndarray (2,)
    domains_ : ndarray (p,)
        Sorted source labels; ``estimators_[k]`` was trained on source ``domains_[k]``.
    estimators_ : list of AdaBoost

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [0.0], [1.0], [2.0], [3.0]])
    >>> y = [0, 0, 1, 1, 1, 1, 0, 0]
    >>> model = AdaBoostPerDomain(n_estimators=2).fit(X, y, domains=[0, 0, 0, 0, 1, 1, 1, 1])
    >>> model.predict([[0.5]], domain=0).tolist(), model.predict([[0.5]], domain=1).tolist()
    ([0], [1])
    """

    def __init__(self, n_estimators=100):
        self.n_estimators = n_estimators

    def fit(self, X, y, domains=None):
        """Fit ``AdaBoost(n_estimators)`` on the rows of each source (``domains`` None: one
        source); returns self."""
        n_estimators = check_positive_int(self.n_estimators, "n_estimators")
        X, y, self.classes_, self.domains_, domain_index = _check_sources(X, y, domains)
        self.n_features_in_ = X.shape[1]
        self.estimators_ = [
            AdaBoost(n_estimators=n_estimators).fit(X[domain_index == k], y[domain_index == k])
            for k in range(self.domains_.size)
        ]
        return self

    def _position(self, domain):
        check_is_fitted(self, "estimators_")
        if domain is None and self.domains_.size == 1:
            return 0
        matches = np.flatnonzero(self.domains_ == domain) if domain is not None else []
        if len(matches) != 1:
            raise ValueError(
                f"domain must be one of the source labels {self.domains_.tolist()}, got {domain!r}"
            )
        return int(matches[0])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    def decision_function(self, X, domain=None):
        """Σ_t α_t h_t(x) of the model trained on source ``domain`` (a label of ``domains_``;
        None with one source)."""
        position = self._position(domain)
        return self.estimators_[position].decision_function(X)

    def predict(self, X, domain=None):
        """Predictions of AdaBoost-``domain``, the model trained on that source alone."""
        position = self._position(domain)
        return self.estimators_[position].predict(X)

    def predict_all(self, X) -> np.ndarray:
        """(p, N) predictions: row k is AdaBoost-k, the model of ``domains_[k]``."""
        check_is_fitted(self, "estimators_")
        return np.array([estimator.predict(X) for estimator in self.estimators_])


class PooledAdaBoost(ClassifierMixin, BaseEstimator):
    """AdaBoost-all (§6): :class:`AdaBoost` on the union of the sources, domains ignored.

    A thin wrapper so every Table 1 method is fitted as ``fit(X, y, domains)``; its
    ``estimator_`` is exactly ``AdaBoost(n_estimators).fit(X, y)``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> PooledAdaBoost(3).fit(X, [0, 0, 1, 1], domains=[0, 1, 0, 1]).predict([[2.5]]).tolist()
    [1]
    """

    def __init__(self, n_estimators=100):
        self.n_estimators = n_estimators

    def fit(self, X, y, domains=None, sample_weight=None):
        """Fit one AdaBoost on all rows (``domains`` is only checked for length)."""
        check_positive_int(self.n_estimators, "n_estimators")
        X, y = check_X_y(X, y)
        if domains is not None:
            as_domain_labels(domains, "domains", X.shape[0])
        self.estimator_ = AdaBoost(n_estimators=self.n_estimators).fit(
            X, y, sample_weight=sample_weight
        )
        self.classes_ = self.estimator_.classes_
        self.n_features_in_ = X.shape[1]
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    def decision_function(self, X):
        """Σ_t α_t h_t(x) of the pooled AdaBoost."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """``classes_[1]`` where the decision is > 0."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)


# --------------------------------------------------------------------------- DMSA math


def adaboost_probability(decision) -> np.ndarray:
    """h_k(x) = P(y = +1 | x) = 1 / (1 + e^{−2 f(x)}), the logistic link of AdaBoost.

    AdaBoost's exponential loss is minimised by f = ½ log(P(+1|x)/P(−1|x)) (Friedman, Hastie
    & Tibshirani 2000, "Additive logistic regression", Lemma 1), so P(+1|x) = σ(2f). Clipped to
    [PROBABILITY_CLIP, 1 − PROBABILITY_CLIP].
    """
    probability = expit(2.0 * np.asarray(decision, dtype=float))
    return np.clip(probability, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)


def dmsa_combination(z, domain_probabilities, domain_marginals, base_probabilities):
    """h_z(x) = Σ_k z_k [Q(k|x)/Q(k)] h_k(x) / Σ_k z_k [Q(k|x)/Q(k)]  (DMSA, Cortes et al. 2021).

    The distribution-weighted combination Σ_k z_k D_k(x) h_k(x) / Σ_k z_k D_k(x) of Mansour,
    Mohri & Rostamizadeh (2008) with the densities replaced by the discriminative estimate
    D_k(x) ∝ Q(k|x) D(x) / Q(k), D the pooled input distribution Q was trained on and
    Q(k) = E_{x∼D}[Q(k|x)] its domain marginal (D(x) cancels in the ratio).

    Parameters
    ----------
    z : (p,) mixture parameters on the simplex
    domain_probabilities : (N, p) Q(k|x)
    domain_marginals : (p,) Q(k)
    base_probabilities : (N, p) h_k(x) = P_k(y = +1 | x)

    Returns
    -------
    (N,) h_z(x) = P(y = +1 | x)
    """
    weights = np.asarray(z)[None, :] * domain_probabilities / np.asarray(domain_marginals)
    return np.sum(weights * base_probabilities, axis=1) / np.sum(weights, axis=1)


def domain_log_losses(probabilities, y_positive, domain_index, n_domains) -> np.ndarray:
    """L_k(h) = (1/m_k) Σ_{i∈S_k} −[y_i log h(x_i) + (1 − y_i) log(1 − h(x_i))], y ∈ {0, 1}.

    The cross-entropy loss per source, the loss DMSA's mixture parameters are fitted for.
    """
    probabilities = np.clip(probabilities, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    losses = -np.where(y_positive, np.log(probabilities), np.log1p(-probabilities))
    counts = np.bincount(domain_index, minlength=n_domains)
    return np.bincount(domain_index, weights=losses, minlength=n_domains) / counts


def _log_loss_gradients(z, domain_probabilities, domain_marginals, base_probabilities, y_pos,
                        domain_index, n_domains):  # fmt: skip
    """(p,) losses L_k(h_z) and (p, p) gradients ∂L_k/∂z_j.

    ∂h_z/∂z_j = w_j (h_j − h_z) / Σ_l z_l w_l with w_j = Q(j|x)/Q(j); ∂ℓ/∂h = (h − y)/(h(1 − h)).
    """
    weights = domain_probabilities / domain_marginals
    normaliser = weights @ z
    combined = np.sum(weights * z * base_probabilities, axis=1) / normaliser
    combined = np.clip(combined, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    losses = domain_log_losses(combined, y_pos, domain_index, n_domains)
    loss_slope = (combined - y_pos) / (combined * (1.0 - combined))
    point_gradients = (
        (loss_slope / normaliser)[:, None] * weights * (base_probabilities - combined[:, None])
    )
    counts = np.bincount(domain_index, minlength=n_domains)
    gradients = (
        np.vstack(
            [
                np.bincount(domain_index, weights=point_gradients[:, j], minlength=n_domains)
                for j in range(n_domains)
            ]
        ).T
        / counts[:, None]
    )
    return losses, gradients


def fit_mixture_weights(
    domain_probabilities,
    domain_marginals,
    base_probabilities,
    y_positive,
    domain_index,
    max_iter: int = 300,
    learning_rate: float = 1.0,
):
    """z = argmin_{z ∈ Δ} max_k L_k(h_z): the mixture parameters serving the worst source.

    Exponentiated subgradient descent on the simplex: z ← z ⊙ exp(−η_t ∇L_{k*}(z)),
    renormalised, with k* the worst source at z and η_t = learning_rate / √t; starts at the
    uniform z and returns the best iterate, so max_k L_k(h_z) never exceeds its value at
    the uniform z. (Hoffman, Mohri & Zhang 2018 and Cortes et al. 2021 solve the same min–max
    by DC programming; the objective is not convex in z, so both find a local solution.)

    Returns
    -------
    z : (p,) ndarray
    losses : (p,) ndarray, L_k(h_z) at the returned z
    """
    n_domains = domain_probabilities.shape[1]
    z = np.full(n_domains, 1.0 / n_domains)
    best_z, best_losses = z, None
    for iteration in range(1, max_iter + 1):
        losses, gradients = _log_loss_gradients(
            z, domain_probabilities, domain_marginals, base_probabilities, y_positive,
            domain_index, n_domains,
        )  # fmt: skip
        if best_losses is None or losses.max() < best_losses.max():
            best_z, best_losses = z, losses
        gradient = gradients[int(np.argmax(losses))]
        scale = np.max(np.abs(gradient))
        if scale == 0:
            break
        # the step is normalised by the gradient's size: exp() stays in range for any scale
        step = learning_rate / np.sqrt(iteration) / scale
        log_z = np.log(np.maximum(z, 1e-300)) - step * gradient
        z = np.exp(log_z - log_z.max())
        z /= z.sum()
    return best_z, best_losses


# --------------------------------------------------------------------------- DMSA estimator


class DMSAClassifier(ClassifierMixin, BaseEstimator):
    """DMSA (Cortes, Mohri, Suresh & Zhang, ICML 2021) on per-source AdaBoost predictors.

    Formulation implemented:

    1. h_k: ``base_estimator`` (default ``AdaBoost(n_estimators)``, i.e. AdaBoost-k as in §6)
       fitted on source k alone, turned into P_k(y = +1|x) by ``predict_proba`` if it has
       one, else by the logistic link σ(2 f(x)) of its decision function
       (:func:`adaboost_probability`).
    2. Q(k|x): ``domain_classifier`` (default :class:`DomainClassifier`, multinomial logistic
       regression) trained on the pooled inputs; Q(k) = mean of Q(k|x) over those inputs.
    3. h_z(x) = Σ_k z_k Q(k|x)/Q(k) h_k(x) / Σ_k z_k Q(k|x)/Q(k) (:func:`dmsa_combination`).
    4. z = argmin_{z∈Δ} max_k L_k(h_z), L_k the cross-entropy on source k
       (:func:`fit_mixture_weights`; exponentiated subgradient, best iterate, instead of the
       paper's DC programme), on the training data or on a held-out ``validation_fraction``
       of every source (then h_k and Q are fitted on the rest).

    Prediction: ``classes_[1]`` where h_z(x) > ½.

    Parameters
    ----------
    n_estimators : int
        Rounds of the default AdaBoost base predictors.
    base_estimator : classifier, AdaBoostPerDomain or None
        A classifier is cloned and fitted per source; it needs ``predict_proba`` or
        ``decision_function``. An :class:`AdaBoostPerDomain` already fitted on the same
        (X, y, domains) supplies the h_k as they are (§6: "we use the domain predictors
        AdaBoost-k"; no refit, so no ``validation_fraction``); an unfitted one is cloned and
        fitted. None: ``AdaBoost(n_estimators)`` per source.
    domain_classifier : DomainClassifier or None
        Cloned and fitted on the pooled (training) inputs, so its own ``estimator`` must be
        None or unfitted; None: ``DomainClassifier()``.
    z : array-like (p,) or None
        Fixed mixture parameters (sorted-domain order) instead of fitting them.
    validation_fraction : float in (0, 1) or None
        Share of every source held out to fit z; None: fit z on the training data.
    max_iter, learning_rate :
        Of :func:`fit_mixture_weights`.
    random_state : None, int or Generator
        Draws the held-out rows.

    Attributes
    ----------
    classes_, domains_ : ndarray
    estimators_ : list, h_k per source (order of ``domains_``)
    domain_classifier_ : DomainClassifier
    domain_marginals_ : (p,) Q(k)
    z_ : (p,) mixture parameters
    domain_losses_ : (p,) L_k(h_z) on the data z was fitted on (None if ``z`` was given)
    n_iter_ : int, subgradient iterations of :func:`fit_mixture_weights` (0 if ``z`` was given)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-2, 1, (40, 2)), rng.normal(2, 1, (40, 2))])
    >>> y = np.r_[(X[:40, 1] > 0), (X[40:, 1] < 0)].astype(int)
    >>> model = DMSAClassifier(n_estimators=5).fit(X, y, domains=np.repeat([0, 1], 40))
    >>> bool(np.isclose(model.z_.sum(), 1.0)), model.predict_proba(X[:3]).shape
    (True, (3, 2))
    """

    def __init__(
        self,
        n_estimators=100,
        base_estimator=None,
        domain_classifier=None,
        z=None,
        validation_fraction=None,
        max_iter=300,
        learning_rate=1.0,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.base_estimator = base_estimator
        self.domain_classifier = domain_classifier
        self.z = z
        self.validation_fraction = validation_fraction
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _check_parameters(self):
        if self.base_estimator is None:
            check_positive_int(self.n_estimators, "n_estimators")
        elif not (
            hasattr(self.base_estimator, "predict_proba")
            or hasattr(self.base_estimator, "decision_function")
        ):
            raise ValueError(
                "base_estimator must have predict_proba or decision_function, got "
                f"{type(self.base_estimator).__name__}"
            )
        fraction = self.validation_fraction
        if fraction is not None and not (
            isinstance(fraction, numbers.Real) and not isinstance(fraction, bool)
            and 0 < fraction < 1
        ):  # fmt: skip
            raise ValueError(f"validation_fraction must be None or in (0, 1), got {fraction!r}")
        if (
            isinstance(self.max_iter, bool)
            or not isinstance(self.max_iter, numbers.Integral)
            or (self.max_iter < 1)
        ):
            raise ValueError(f"max_iter must be an int >= 1, got {self.max_iter!r}")
        if not isinstance(self.learning_rate, numbers.Real) or not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")

    def _split(self, domain_index, n_domains):
        """Boolean mask of the held-out rows: ⌈fraction·m_k⌉ per source, ≥ 1 left to fit."""
        held_out = np.zeros(domain_index.shape[0], dtype=bool)
        if self.validation_fraction is None:
            return held_out
        rng = check_random_state(self.random_state)
        for k in range(n_domains):
            rows = np.flatnonzero(domain_index == k)
            n_held = int(np.ceil(self.validation_fraction * rows.size))
            if n_held >= rows.size:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction!r} leaves no training row "
                    f"in a source of {rows.size} rows"
                )
            held_out[rng.choice(rows, size=n_held, replace=False)] = True
        return held_out

    def _base_probabilities(self, X) -> np.ndarray:
        columns = []
        for estimator in self.estimators_:
            if hasattr(estimator, "predict_proba"):
                proba = np.asarray(estimator.predict_proba(X), dtype=float)
                positive = list(np.asarray(estimator.classes_)).index(self.classes_[1])
                columns.append(np.clip(proba[:, positive], PROBABILITY_CLIP, 1 - PROBABILITY_CLIP))
            else:
                columns.append(adaboost_probability(estimator.decision_function(X)))
        return np.column_stack(columns)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only
        return tags

    def fit(self, X, y, domains=None):
        """Fit h_k per source, Q(k|x) and the mixture parameters z (``domains`` None: one
        source); returns self."""
        self._check_parameters()
        X, y, self.classes_, self.domains_, domain_index = _check_sources(X, y, domains)
        n_domains = self.domains_.size
        self.n_features_in_ = X.shape[1]
        held_out = self._split(domain_index, n_domains)
        fit_rows = ~held_out
        base = self.base_estimator
        if isinstance(base, AdaBoostPerDomain):
            self.estimators_ = self._per_domain_predictors(base, X, y, domain_index, fit_rows)
        else:
            base = AdaBoost(n_estimators=self.n_estimators) if base is None else base
            self.estimators_ = []
            for k in range(n_domains):
                rows = fit_rows & (domain_index == k)
                if np.unique(y[rows]).size != 2:
                    raise ValueError(
                        f"validation_fraction={self.validation_fraction!r} leaves one class "
                        f"only in the training rows of source {self.domains_[k].tolist()!r}"
                    )
                self.estimators_.append(clone(base).fit(X[rows], y[rows]))
        domain_classifier = self.domain_classifier
        if domain_classifier is None:
            domain_classifier = DomainClassifier()
        self.domain_classifier_ = clone(domain_classifier).fit(
            X[fit_rows], self.domains_[domain_index[fit_rows]]
        )
        self.domain_marginals_ = self._domain_probabilities(X[fit_rows]).mean(axis=0)

        if self.z is not None:
            self.z_ = check_simplex(self.z, n_domains, name="z")
            self.domain_losses_, self.n_iter_ = None, 0
            return self
        rows = held_out if held_out.any() else fit_rows
        self.z_, self.domain_losses_ = fit_mixture_weights(
            self._domain_probabilities(X[rows]),
            self.domain_marginals_,
            self._base_probabilities(X[rows]),
            y[rows] == self.classes_[1],
            domain_index[rows],
            max_iter=int(self.max_iter),
            learning_rate=float(self.learning_rate),
        )
        self.n_iter_ = int(self.max_iter)  # the subgradient iterations run (best one kept)
        return self

    def _per_domain_predictors(self, base, X, y, domain_index, fit_rows):
        """The h_k of an AdaBoostPerDomain: as they are if it is fitted, else fitted here."""
        if not hasattr(base, "estimators_"):
            fitted = clone(base).fit(
                X[fit_rows], y[fit_rows], self.domains_[domain_index[fit_rows]]
            )
            return list(fitted.estimators_)
        if self.validation_fraction is not None:
            raise ValueError(
                "validation_fraction must be None with an already fitted AdaBoostPerDomain "
                f"base_estimator (its h_k saw every row), got {self.validation_fraction!r}"
            )
        if (
            base.domains_.tolist() != self.domains_.tolist()
            or base.classes_.tolist() != self.classes_.tolist()
            or base.n_features_in_ != X.shape[1]
        ):
            raise ValueError(
                "base_estimator: the fitted AdaBoostPerDomain has domains "
                f"{base.domains_.tolist()}, classes {base.classes_.tolist()} and "
                f"{base.n_features_in_} features; the data has {self.domains_.tolist()}, "
                f"{self.classes_.tolist()} and {X.shape[1]}"
            )
        return list(base.estimators_)

    def _domain_probabilities(self, X) -> np.ndarray:
        """Q(k|x) with columns in the order of ``domains_``."""
        proba = self.domain_classifier_.predict_proba(X)
        order = [list(self.domain_classifier_.classes_).index(d) for d in self.domains_]
        return np.asarray(proba, dtype=float)[:, order]

    def predict_proba(self, X) -> np.ndarray:
        """(N, 2): columns P(classes_[0] | x) = 1 − h_z(x) and P(classes_[1] | x) = h_z(x)."""
        X = check_fitted_X(self, X, "z_")
        positive = dmsa_combination(
            self.z_, self._domain_probabilities(X), self.domain_marginals_,
            self._base_probabilities(X),
        )  # fmt: skip
        return np.column_stack([1.0 - positive, positive])

    def decision_function(self, X) -> np.ndarray:
        """log(h_z / (1 − h_z)); > 0 predicts ``classes_[1]``."""
        positive = np.clip(self.predict_proba(X)[:, 1], PROBABILITY_CLIP, 1 - PROBABILITY_CLIP)
        return np.log(positive) - np.log1p(-positive)

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where h_z(x) > ½."""
        positive = self.predict_proba(X)[:, 1]
        return self.classes_[(positive > 0.5).astype(int)]
