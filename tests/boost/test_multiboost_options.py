"""MULTIBOOST options of issue 5 §1: logistic Φ, step rules, restricted Λ, ℓ1, early stopping,
feature importances, the scikit-learn API, and the §5 checks (scikit-learn AdaBoost,
Propositions 1–2, bad input)."""

import math
import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.ensemble import AdaBoostClassifier
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _helpers import two_separated_domains
from manytask.boost import AdaBoost, DomainClassifier, MultiBoostClassifier
from manytask.boost.stumps import best_stump, presort


def _two_domains(n=80, seed=0):
    return two_separated_domains(n, seed)


def _three_domains(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n, 3))
    domains = np.repeat([0, 1, 2], n)
    X[:, 0] += 1.5 * domains
    y = (X[np.arange(3 * n), 1 + domains % 2] + 0.3 * rng.normal(size=3 * n) > 0).astype(int)
    return X, y, domains


def _phi(u, loss):
    return math.exp(u) if loss == "exponential" else math.log2(1.0 + math.exp(u))


def _loop_losses(clf, X, y, domains, n_rounds=None, extra=None):
    """[F_k], F_k = (1/m_k) Σ_{i∈S_k} Φ(−y_i f(x_i)) by loops over points and rounds (eq. 4).

    ``n_rounds`` keeps the first rounds only; ``extra`` = (q, stump, η) adds one more term.
    """
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    rounds = list(zip(clf.estimators_, clf.estimator_weights_))[:n_rounds]
    if extra is not None:
        rounds.append(((extra[0], extra[1]), extra[2]))
    losses = []
    for label in clf.domains_:
        rows = np.flatnonzero(domains == label)
        total = 0.0
        for i in rows:
            f = sum(alpha * Q[i, k] * h.predict(X[i : i + 1])[0] for (k, h), alpha in rounds)
            total += _phi(-signs[i] * f, clf.loss)
        losses.append(total / rows.size)
    return np.array(losses)


def _agnostic(losses, clf):
    vertices = np.eye(losses.size) if clf.mixtures is None else np.asarray(clf.mixtures)
    values = vertices @ losses
    if clf.mu is None:
        return float(values.max())
    return float(np.log(np.sum(np.exp(clf.mu * values))) / clf.mu)


# --------------------------------------------------------------------------- logistic Φ


@pytest.mark.parametrize("seed", [0, 1])
def test_logistic_objective_matches_loop_and_never_increases_with_exact_steps(seed):
    X, y, domains = _two_domains(seed=seed)
    clf = MultiBoostClassifier(n_estimators=15, loss="logistic", step="exact_line_search")
    clf.fit(X, y, domains=domains)
    assert len(clf.estimators_) == 15
    assert clf.objective_ == pytest.approx(_loop_losses(clf, X, y, domains).max(), rel=1e-10)
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) <= 0)
    assert clf.history_[0]["objective"] == pytest.approx(1.0)  # Φ(0) = log₂ 2


@pytest.mark.parametrize(
    "options",
    [
        {"loss": "logistic"},
        {"loss": "logistic", "mu": 5.0},
        {"mixtures": [[0.5, 0.5], [0.8, 0.2]]},
        {"beta": 0.005},
        {"beta": 0.005, "loss": "logistic", "mixtures": [[0.3, 0.7], [0.9, 0.1]]},
    ],
)
def test_each_exact_step_is_the_fine_grid_argmin_of_the_penalised_objective(options):
    X, y, domains = _two_domains(n=40, seed=2)
    clf = MultiBoostClassifier(n_estimators=6, step="exact_line_search", **options)
    clf.fit(X, y, domains=domains)
    beta = options.get("beta", 0.0)
    assert len(clf.estimators_) >= 3
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    vertices = np.eye(2) if clf.mixtures is None else np.asarray(clf.mixtures)
    for t in [0, 2]:
        (q, stump), step = clf.estimators_[t], clf.estimator_weights_[t]
        norm = clf.estimator_weights_[:t].sum()
        f = sum(
            a * Q[:, k] * h.predict(X)
            for (k, h), a in zip(clf.estimators_[:t], clf.estimator_weights_[:t])
        )
        u = signs * Q[:, q] * stump.predict(X)

        def objective(eta, f=f, u=u, norm=norm):
            z = -signs * f - eta * u
            point = np.exp(z) if clf.loss == "exponential" else np.log1p(np.exp(z)) / np.log(2)
            values = vertices @ np.array([point[domains == k].mean() for k in (0, 1)])
            agg = values.max() if clf.mu is None else np.log(np.exp(clf.mu * values).sum()) / clf.mu
            return agg + beta * (norm + eta)

        grid = np.linspace(0, 2 * step, 2001)
        values = [objective(eta) for eta in grid]
        assert objective(step) <= min(values) + 1e-12
        assert step == pytest.approx(grid[int(np.argmin(values))], abs=2 * (grid[1] - grid[0]))


# --------------------------------------------------------------------------- step rules


@pytest.mark.parametrize(
    "options",
    [{"loss": "logistic"}, {"mu": 5.0}, {"mu": 5.0, "loss": "logistic"}, {"beta": 0.005},
     {"beta": 0.005, "loss": "logistic", "mu": 5.0}],
)  # fmt: skip
def test_adaboost_step_of_every_option_is_the_brute_force_closed_form(options):
    # ε = ½(1 − Σ_i D_i y_i Q(q|x_i) h(x_i)) with D_i ∝ ω_{k(i)} c_i Φ'(−y_i f(x_i)), ω the
    # chosen source (hard max) or the soft-max weights; η minimises N[(1 − ε)e^{−η} + εe^{η}]
    # + βη, N = Σ_i ω_{k(i)} c_i Φ'(−y_i f(x_i)) (β = 0: ½ log((1 − ε)/ε)).
    X, y, domains = _two_domains(n=40, seed=2)
    clf = MultiBoostClassifier(n_estimators=4, **options).fit(X, y, domains=domains)
    beta = options.get("beta", 0.0)
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    assert len(clf.estimators_) == 4
    for t, record in enumerate(clf.history_):
        (q, stump), step = clf.estimators_[t], clf.estimator_weights_[t]
        f = sum(
            (a * Q[:, k] * h.predict(X)
             for (k, h), a in zip(clf.estimators_[:t], clf.estimator_weights_[:t])),
            np.zeros(len(y)),
        )  # fmt: skip
        z = -signs * f
        slope = np.exp(z) if clf.loss == "exponential" else np.exp(z) / (1 + np.exp(z)) / np.log(2)
        omega = record["soft_weights"] if clf.mu is not None else np.eye(2)[q]
        weights = np.array([omega[d] * slope[i] / np.sum(domains == d)
                            for i, d in enumerate(domains)])  # fmt: skip
        mass = weights.sum()
        error = 0.5 * (1 - np.sum(weights * signs * Q[:, q] * stump.predict(X)) / mass)
        assert record["step_rule"] == "adaboost"
        assert record["error"] == pytest.approx(error, rel=1e-9)
        root = (-beta + np.sqrt(beta**2 + 4 * mass**2 * error * (1 - error))) / (2 * mass * error)
        assert step == pytest.approx(np.log(root), rel=1e-9)
        if beta == 0:
            assert step == pytest.approx(0.5 * np.log((1 - error) / error), rel=1e-9)


def test_lemma1_bound_step_with_one_domain_is_adaboost():
    X, y, _ = _two_domains(seed=3)
    ours = AdaBoost(n_estimators=20).fit(X, y)
    multi = MultiBoostClassifier(n_estimators=20, step="lemma1_bound").fit(X, y)
    assert [stump for _, stump in multi.estimators_] == ours.estimators_
    np.testing.assert_allclose(multi.estimator_weights_, ours.estimator_weights_, rtol=1e-12)
    assert {record["step_rule"] for record in multi.history_} == {"lemma1_bound"}


@pytest.mark.parametrize("seed", [0, 1])
def test_lemma1_bound_steps_never_increase_f(seed):
    X, y, domains = _three_domains(seed=seed)
    clf = MultiBoostClassifier(n_estimators=20, step="lemma1_bound").fit(X, y, domains=domains)
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) <= 1e-15)
    assert clf.objective_ < 1.0
    assert clf.objective_ == pytest.approx(_loop_losses(clf, X, y, domains).max(), rel=1e-10)


def test_constant_over_sqrt_t_steps():
    X, y, domains = _two_domains(seed=1)
    clf = MultiBoostClassifier(n_estimators=12, step="constant_over_sqrt_t", step_constant=0.4).fit(
        X, y, domains=domains
    )
    expected = 0.4 / np.sqrt(np.arange(1, 13))
    np.testing.assert_allclose(clf.estimator_weights_, expected, rtol=1e-15)
    assert {record["step_rule"] for record in clf.history_} == {"constant_over_sqrt_t"}


def test_lemma1_bound_needs_the_exponential_loss():
    X, y, domains = _two_domains(n=10)
    with pytest.raises(ValueError, match="step='lemma1_bound' needs loss='exponential'"):
        MultiBoostClassifier(step="lemma1_bound", loss="logistic").fit(X, y, domains=domains)


# --------------------------------------------------------------------------- restricted Λ


@pytest.mark.parametrize("mu", [None, 8.0])
def test_restricted_mixture_objective_is_the_brute_force_max_over_the_hull(mu):
    X, y, domains = _three_domains(seed=4)
    vertices = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.1, 0.1, 0.8]])
    clf = MultiBoostClassifier(n_estimators=12, mixtures=vertices, mu=mu).fit(X, y, domains=domains)
    losses = _loop_losses(clf, X, y, domains)
    hull = np.random.default_rng(0).dirichlet(np.full(3, 0.2), size=20000) @ vertices
    if mu is None:
        assert clf.objective_ <= (hull @ losses).max() + 1e-3
        assert clf.objective_ >= (hull @ losses).max() - 1e-12
    assert clf.objective_ == pytest.approx(_agnostic(losses, clf), rel=1e-10)
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) <= 0)
    np.testing.assert_allclose(clf.history_[-1]["vertex_losses"], vertices @ clf.history_[-1][
        "losses"])  # fmt: skip


def test_bad_mixtures_raise_at_fit():
    X, y, domains = _two_domains(n=10)
    with pytest.raises(ValueError, match="mixtures"):
        MultiBoostClassifier(mixtures=[[0.5, 0.5, 0.0]]).fit(X, y, domains=domains)


# --------------------------------------------------------------------------- ℓ1 (§4)


@pytest.mark.parametrize("beta", [0.002, 0.02])
def test_l1_penalised_objective_never_increases_with_exact_steps(beta):
    X, y, domains = _two_domains(seed=5)
    clf = MultiBoostClassifier(n_estimators=25, beta=beta, step="exact_line_search")
    clf.fit(X, y, domains=domains)
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) <= 0)
    recomputed = _loop_losses(clf, X, y, domains).max() + beta * clf.estimator_weights_.sum()
    assert clf.objective_ == pytest.approx(recomputed, rel=1e-10)
    # Every taken direction descends faster than the penalty grows.
    assert all(record["rate"] > beta for record in clf.history_ if record.get("stump"))


def test_l1_with_beta_zero_equals_the_unregularised_run():
    X, y, domains = _two_domains(seed=1)
    # β = 0 on the generic path (logistic Φ) and β = 0 by default.
    for options in ({"loss": "logistic"}, {}):
        plain = MultiBoostClassifier(n_estimators=10, **options).fit(X, y, domains=domains)
        zero = MultiBoostClassifier(n_estimators=10, beta=0.0, **options).fit(X, y, domains=domains)
        assert zero.estimators_ == plain.estimators_
        np.testing.assert_array_equal(zero.estimator_weights_, plain.estimator_weights_)
    # A vanishing β follows the unregularised run (both on the generic path). One domain: with
    # two, the hard max meets exact ties F_0 = F_1 where a 1e-12 shift of the step can flip
    # the active set (the zig-zag finding of test_multiboost.py).
    tiny = MultiBoostClassifier(n_estimators=15, beta=1e-12, loss="logistic").fit(X, y)
    plain = MultiBoostClassifier(n_estimators=15, loss="logistic").fit(X, y)
    assert tiny.estimators_ == plain.estimators_
    np.testing.assert_allclose(tiny.estimator_weights_, plain.estimator_weights_, rtol=1e-6)


def test_large_l1_penalty_takes_no_step():
    X, y, domains = _two_domains(n=20)
    # Every rate is ≤ Σ_i c_i Φ'(0) Q ≤ 1 at α = 0, so β = 2 leaves α = 0.
    clf = MultiBoostClassifier(n_estimators=5, beta=2.0).fit(X, y, domains=domains)
    assert clf.estimators_ == [] and "beta" in clf.history_[-1]["stop"]
    assert clf.objective_ == pytest.approx(1.0)


def test_l1_steps_with_one_domain_all_solve_the_penalised_adaboost_step():
    # One domain: Q ≡ 1, Lemma 1's bound is F itself, so the three rules coincide.
    X, y, _ = _two_domains(seed=6)
    beta = 0.05
    fits = [
        MultiBoostClassifier(n_estimators=5, step=step, beta=beta).fit(X, y)
        for step in ("adaboost", "lemma1_bound", "exact_line_search")
    ]
    for clf in fits[1:]:
        assert [h for _, h in clf.estimators_] == [h for _, h in fits[0].estimators_]
        np.testing.assert_allclose(clf.estimator_weights_, fits[0].estimator_weights_, rtol=1e-9)


# --------------------------------------------------------------------------- early stopping


def test_early_stopping_keeps_the_best_validation_round():
    X, y, domains = _two_domains(n=150, seed=7)
    clf = MultiBoostClassifier(
        n_estimators=60, mu=10.0, n_iter_no_change=3, validation_fraction=0.3, random_state=0
    ).fit(X, y, domains=domains)
    losses = clf.validation_losses_
    best = int(np.argmin(losses))
    assert len(clf.estimators_) == best  # the ensemble of the best round is kept
    assert len(losses) - 1 - best == 3 or len(losses) == 61  # stopped after 3 without gain
    assert clf.history_[-1]["stop"] == "early stopping" or len(losses) == 61
    # Reproducible with the same random_state; another seed holds out other points.
    again = clone(clf).fit(X, y, domains=domains)
    np.testing.assert_array_equal(again.validation_losses_, clf.validation_losses_)
    other = clone(clf).set_params(random_state=1).fit(X, y, domains=domains)
    assert other.validation_losses_[1] != clf.validation_losses_[1]


def test_early_stopping_validation_losses_match_an_independent_split():
    from sklearn.model_selection import train_test_split

    X, y, domains = _two_domains(n=100, seed=8)
    clf = MultiBoostClassifier(
        n_estimators=30, mu=10.0, n_iter_no_change=50, validation_fraction=0.25, random_state=3
    ).fit(X, y, domains=domains)
    _, held_out = train_test_split(np.arange(200), test_size=0.25, stratify=domains, random_state=3)
    assert len(clf.validation_losses_) == 31  # n_iter_no_change > T: all rounds were run
    best = int(np.argmin(clf.validation_losses_))
    assert len(clf.estimators_) == best
    held_losses = _loop_losses(clf, X[held_out], y[held_out], domains[held_out])
    assert clf.validation_losses_[best] == pytest.approx(held_losses.max(), rel=1e-10)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"n_iter_no_change": 0}, "n_iter_no_change"),
        ({"n_iter_no_change": 2, "validation_fraction": 1.0}, "validation_fraction"),
        ({"loss": "hinge"}, "loss"),
        ({"step": "armijo"}, "step"),
        ({"step_constant": -1.0}, "step_constant"),
        ({"beta": -0.1}, "beta"),
        ({"beta": float("nan")}, "beta"),
        ({"multi_class": "ovr"}, "multi_class"),
        ({"n_iter_no_change": 2, "random_state": "seed"}, "random_state"),
    ],
)
def test_bad_options_raise(options, message):
    X, y, domains = _two_domains(n=10)
    with pytest.raises(ValueError, match=message):
        MultiBoostClassifier(**options).fit(X, y, domains=domains)


# --------------------------------------------------------------------------- API


def test_feature_importances_are_alpha_weighted_feature_shares():
    X, y, domains = _three_domains(seed=9)
    clf = MultiBoostClassifier(n_estimators=15, mu=10.0).fit(X, y, domains=domains)
    expected = np.zeros(X.shape[1])
    for (_, stump), alpha in zip(clf.estimators_, clf.estimator_weights_):
        if stump.threshold != -np.inf:
            expected[stump.feature] += alpha
    np.testing.assert_allclose(clf.feature_importances_, expected / expected.sum())
    assert clf.feature_importances_.sum() == pytest.approx(1.0)


def test_staged_decision_function_accumulates_the_rounds():
    X, y, domains = _two_domains(n=40, seed=10)
    clf = MultiBoostClassifier(n_estimators=8, loss="logistic").fit(X, y, domains=domains)
    Q = clf.domain_classifier_.predict_proba(X)
    staged = list(clf.staged_decision_function(X))
    running = np.zeros(len(X))
    for (k, stump), alpha, decision in zip(clf.estimators_, clf.estimator_weights_, staged):
        running = running + alpha * Q[:, k] * stump.predict(X)
        np.testing.assert_allclose(decision, running, atol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize(
    "options",
    [{"loss": "logistic", "mixtures": [[0.5, 0.5], [1.0, 0.0]]}, {"beta": 0.01, "mu": 5.0}],
)
def test_options_survive_clone_pickle_pipeline_and_cross_val_score(options):
    X, y, domains = _two_domains(n=45, seed=11)
    y = np.where(np.arange(90) % 7 == 0, 2, y)  # three classes: the multi-class path too
    clf = MultiBoostClassifier(n_estimators=4, **options)
    assert clone(clf).get_params()["mixtures"] == clf.get_params()["mixtures"]
    fitted = clf.fit(X, y, domains=domains)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.decision_function(X), fitted.decision_function(X))
    pipeline = make_pipeline(StandardScaler(), MultiBoostClassifier(n_estimators=4, **options))
    scores = cross_val_score(
        pipeline, X, y, cv=KFold(3, shuffle=True, random_state=0),
        params={"multiboostclassifier__domains": domains},
    )  # fmt: skip
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))


# --------------------------------------------------------------------------- issue 5 §5


class _MinimumErrorStump(ClassifierMixin, BaseEstimator):
    """Our exact minimum-weighted-error stump as a scikit-learn base estimator."""

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.unique(y)
        signs = np.where(y == self.classes_[1], 1.0, -1.0)
        weights = np.ones(len(y)) if sample_weight is None else sample_weight
        self.stump_ = best_stump(presort(X), signs, weights / weights.sum()).stump
        return self

    def predict(self, X):
        return self.classes_[(self.stump_.predict(X) > 0).astype(int)]


def test_one_domain_equals_scikit_learn_samme_with_the_same_stump_learner():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(150, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.8 * rng.normal(size=150) > 0).astype(int)
    T = 15
    multi = MultiBoostClassifier(n_estimators=T).fit(X, y)
    ours = AdaBoost(n_estimators=T).fit(X, y)
    kwargs = {"estimator": _MinimumErrorStump(), "n_estimators": T}
    try:
        reference = AdaBoostClassifier(algorithm="SAMME", **kwargs).fit(X, y)
    except TypeError:  # scikit-learn >= 1.8 has SAMME only and no algorithm parameter
        reference = AdaBoostClassifier(**kwargs).fit(X, y)
    assert len(reference.estimators_) == len(multi.estimators_) == T
    for (_, stump), ada_stump, sk in zip(multi.estimators_, ours.estimators_,
                                         reference.estimators_):  # fmt: skip
        assert stump == ada_stump == sk.stump_
    # α = ½ log((1 − ε)/ε): half of SAMME's log((1 − ε)/ε) + log(K − 1) for K = 2.
    np.testing.assert_allclose(2 * multi.estimator_weights_, reference.estimator_weights_,
                               rtol=1e-9)  # fmt: skip
    np.testing.assert_allclose(ours.errors_, reference.estimator_errors_, rtol=1e-9)
    np.testing.assert_array_equal(multi.predict(X), reference.predict(X))
    # Training exp-loss = Π_t 2√(ε_t(1 − ε_t)) = Π_t Z_t.
    signs = np.where(y == 1, 1.0, -1.0)
    loss = np.mean(np.exp(-signs * multi.decision_function(X)))
    errors = reference.estimator_errors_
    assert loss == pytest.approx(np.prod(2 * np.sqrt(errors * (1 - errors))), rel=1e-9)


def test_propositions_1_and_2_two_domain_example():
    # D1: x ∈ [−2, −1], y = +1; D2: x ∈ [1, 2], y = +1; h1 = +1 on x < 0 (perfect on D1, wrong
    # on D2) and h2 = −h1 (perfect on D2, wrong on D1).
    rng = np.random.default_rng(13)
    X = np.concatenate([rng.uniform(-2, -1, 50), rng.uniform(1, 2, 50)])[:, None]
    y = np.ones(100)
    domains = np.repeat([0, 1], 50)
    h1 = np.where(X[:, 0] < 0, 1.0, -1.0)
    h2 = -h1

    def error(f, on):  # binary loss 1{y f ≤ 0} (§2)
        return np.mean((y * f <= 0)[on])

    # The true Q(k|x): the supports are disjoint, so Q(k|x) = 1 on supp D_k.
    Q = np.column_stack([X[:, 0] < 0, X[:, 0] > 0]).astype(float)
    for alpha in np.linspace(0, 1, 101):
        convex = alpha * h1 + (1 - alpha) * h2
        uniform = 0.5 * error(convex, domains == 0) + 0.5 * error(convex, domains == 1)
        assert uniform >= 0.5  # Proposition 1
        if 0 < alpha < 1:  # Proposition 2: the Q-ensemble is right everywhere, any λ
            q_ensemble = alpha * Q[:, 0] * h1 + (1 - alpha) * Q[:, 1] * h2
            assert error(q_ensemble, domains == 0) == error(q_ensemble, domains == 1) == 0
    # The estimated Q (logistic regression, clipped) gives the same for α away from 0 and 1.
    Q_hat = DomainClassifier().fit(X, domains).predict_proba(X)
    q_ensemble = 0.5 * Q_hat[:, 0] * h1 + 0.5 * Q_hat[:, 1] * h2
    assert error(q_ensemble, domains >= 0) == 0


def test_bad_input_gives_clear_errors():
    X, y, domains = _two_domains(n=10)
    clf = MultiBoostClassifier(n_estimators=2)
    with pytest.raises(ValueError, match="domains must have shape"):
        clf.fit(X, y, domains=np.array([], dtype=int))  # empty domain index
    with pytest.raises(ValueError, match="non-integer"):
        clf.fit(X, y, domains=domains + 0.5)
    with pytest.raises(ValueError, match="domains must have shape"):
        clf.fit(X, y, domains=domains[:-3])
    X_inf = X.copy()
    X_inf[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clf.fit(X_inf, y, domains=domains)
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(X, np.linspace(0, 1, len(y)), domains=domains)  # continuous y
    with pytest.raises(ValueError, match="exactly two classes"):
        MultiBoostClassifier(multi_class="binary").fit(X, np.arange(len(y)) % 3, domains=domains)
    # Integer-valued float domains are accepted as integer labels.
    fitted = clf.fit(X, y, domains=domains.astype(float))
    assert fitted.domains_.tolist() == [0, 1]


def test_history_records_losses_active_set_choice_and_step():
    X, y, domains = _two_domains(n=40, seed=15)
    clf = MultiBoostClassifier(n_estimators=6, loss="logistic").fit(X, y, domains=domains)
    taken = [record for record in clf.history_ if record.get("stump") is not None]
    assert len(taken) == len(clf.estimators_)
    for t, record in enumerate(taken):
        np.testing.assert_allclose(
            record["losses"], _loop_losses(clf, X, y, domains, n_rounds=t), rtol=1e-10
        )
        losses = record["losses"]
        assert record["active"] == [k for k in (0, 1) if losses[k] >= losses.max() * (1 - 1e-9)]
        assert record["domain"] == clf.domains_[clf.estimators_[t][0]]
        assert record["stump"] == clf.estimators_[t][1]
        assert record["step"] == clf.estimator_weights_[t]


def test_negative_sample_weight_raises_also_when_held_out_for_early_stopping():
    X, y, domains = _two_domains(n=40, seed=0)
    weights = np.ones(y.size)
    weights[::7] = -1.0  # some of these land in the validation split
    clf = MultiBoostClassifier(n_estimators=3, n_iter_no_change=2, random_state=0)
    with pytest.raises(ValueError, match="sample_weight must be finite and >= 0"):
        clf.fit(X, y, domains=domains, sample_weight=weights)
