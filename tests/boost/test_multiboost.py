"""MULTIBOOST (Figure 1) and AdaBoost: objective, steps, one-domain reduction, API, errors."""

import math
import pickle

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.base import clone
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _helpers import two_separated_domains
from manytask.boost import AdaBoost, MultiBoostClassifier, mixture_errors
from manytask.boost.directions import steepest_directions
from manytask.boost.line_search import CoordinatePieces, minimise_max_newton
from manytask.boost.objective import aggregate_weights as soft_max_weights
from manytask.boost.objective import agnostic_objective as soft_max_objective
from manytask.boost.rounds import RoundData
from manytask.boost.steps import adaboost_step, penalised_line_search
from manytask.boost.stumps import Stump, presort


def _noisy_problem(n=150, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.8 * rng.normal(size=n) > 0, "yes", "no")
    return X, y


def _two_domains(n=200, seed=0):
    return two_separated_domains(n, seed)


def _brute_force_objective(clf, X, y, domains):
    """max_k (1/m_k) Σ_{i∈S_k} exp(−y_i Σ_t α_t Q(k_t|x_i) h_t(x_i)), loops only (eq. 4)."""
    return max(_brute_force_losses(clf, X, y, domains))


def _brute_force_losses(clf, X, y, domains):
    """[F_k for each k], F_k = (1/m_k) Σ_{i∈S_k} exp(−y_i f(x_i)), loops only (eq. 4)."""
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    losses = []
    for k, label in enumerate(clf.domains_):
        total, count = 0.0, 0
        for i in range(len(X)):
            if domains[i] != label:
                continue
            f = 0.0
            for (kt, stump), alpha in zip(clf.estimators_, clf.estimator_weights_):
                f += alpha * Q[i, kt] * stump.predict(X[i : i + 1])[0]
            total += np.exp(-signs[i] * f)
            count += 1
        losses.append(total / count)
        assert k == list(clf.domains_).index(label)
    return losses


def test_objective_matches_brute_force_loop():
    X, y, domains = _two_domains(n=40, seed=1)
    clf = MultiBoostClassifier(n_estimators=8).fit(X, y, domains=domains)
    assert clf.objective_ == pytest.approx(_brute_force_objective(clf, X, y, domains), rel=1e-10)
    # history_ holds F_k(α_{t−1}); the last round's loss is recomputable too.
    assert clf.history_[0]["losses"] == pytest.approx([1.0, 1.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_line_search_decreases_the_objective_every_round(seed):
    X, y, domains = _two_domains(n=80, seed=seed)
    clf = MultiBoostClassifier(n_estimators=25, step="exact_line_search")
    clf.fit(X, y, domains=domains)
    objectives = [record["losses"].max() for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) < 0) or clf.history_[-1].get("stop")
    assert np.all(np.diff(objectives) <= 0)


def test_adaboost_step_equals_line_search_with_one_domain():
    rng = np.random.default_rng(3)
    m = 50
    scaled = rng.random(m) / m
    u = np.where(rng.random(m) < 0.3, -1.0, 1.0)
    error = scaled[u < 0].sum() / scaled.sum()
    exact = minimise_max_newton(CoordinatePieces(scaled, u, np.zeros(m, dtype=int), 1))
    assert exact == pytest.approx(adaboost_step(error), abs=1e-8)


def test_line_search_step_minimises_on_a_fine_grid():
    rng = np.random.default_rng(4)
    m = 60
    domain_index = np.repeat([0, 1], m // 2)
    scaled = rng.random(m)
    u = rng.uniform(-0.2, 1.0, m)
    step = penalised_line_search(np.zeros(m), u, domain_index, scaled, 2)

    def objective(eta):
        terms = scaled * np.exp(-eta * u)
        return np.bincount(domain_index, weights=terms).max()

    grid = np.linspace(0, 2 * step + 1, 20001)
    assert objective(step) <= min(objective(eta) for eta in grid) + 1e-12
    reference = minimize_scalar(objective, bounds=(0, 10), method="bounded").x
    assert step == pytest.approx(reference, abs=1e-4)


def test_one_domain_multiboost_equals_adaboost():
    X, y = _noisy_problem()
    ours = AdaBoost(n_estimators=30).fit(X, y)
    multi = MultiBoostClassifier(n_estimators=30).fit(X, y)
    assert [stump for _, stump in multi.estimators_] == ours.estimators_
    np.testing.assert_allclose(multi.estimator_weights_, ours.estimator_weights_, atol=1e-10)
    assert {record["step_rule"] for record in multi.history_} == {"adaboost"}
    np.testing.assert_allclose(multi.decision_function(X), ours.decision_function(X), atol=1e-9)


def test_adaboost_training_loss_is_product_of_normalisers():
    X, y = _noisy_problem(seed=5)
    ours = AdaBoost(n_estimators=20).fit(X, y)
    signs = np.where(y == ours.classes_[1], 1.0, -1.0)
    loss = np.mean(np.exp(-signs * ours.decision_function(X)))
    bound = np.prod(2 * np.sqrt(ours.errors_ * (1 - ours.errors_)))
    assert loss == pytest.approx(bound, rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiboost_agnostic_error_not_worse_than_pooled_adaboost(seed):
    X, y, domains = _two_domains(seed=seed)
    multi = MultiBoostClassifier(n_estimators=50).fit(X, y, domains=domains)
    pooled = AdaBoost(n_estimators=50).fit(X, y)
    multi_errors = mixture_errors(multi, X, y, domains)
    pooled_errors = mixture_errors(pooled, X, y, domains)
    assert multi_errors.agnostic <= pooled_errors.agnostic


def mirrored_sources(n=100, seed=0):
    """Two sources with disjoint supports and opposite labels, mirror images of each other:
    S_0 around x0 = −3 labelled 1{x1 > 0}, S_1 its mirror x0 → −x0 labelled 1{x1 < 0}. Every
    F_k is 1 at α = 0, so the first round is a tie by construction."""
    rng = np.random.default_rng(seed)
    X0 = rng.normal(size=(n, 2)) + [-3.0, 0.0]
    X = np.vstack([X0, X0 * [-1.0, 1.0]])
    y = np.concatenate([X0[:, 1] > 0, X0[:, 1] < 0]).astype(int)
    return X, y, np.repeat([0, 1], n)


def test_disjoint_sources_with_opposite_labels_are_learnt_within_ten_rounds():
    X, y, domains = mirrored_sources()
    clf = MultiBoostClassifier(n_estimators=10).fit(X, y, domains=domains)
    errors = mixture_errors(clf, X, y, domains)
    assert errors.domain_errors.max() <= 0.01
    # the tie of round 1: each source's stump raises the other's loss (opposite labels), so
    # the step on one source makes the other the only active one in round 2
    assert clf.history_[0]["active"] == [0, 1]
    assert clf.history_[0]["losses"] == pytest.approx([1.0, 1.0], rel=1e-15)
    assert {clf.history_[0]["domain"], clf.history_[1]["domain"]} == {0, 1}
    assert clf.history_[1]["active"] == [clf.history_[1]["domain"]]
    assert all(record["step"] > 0 for record in clf.history_)


def _brute_force_errors(clf, X, y, domains):
    """Per round t: ε_{t,k,r} = ½(1 − Σ_{i∈S_k} D_t(k, i) y_i Q(k|x_i) h_{k,r}(x_i)) of the
    chosen (k, r), with D_t(k, i) ∝ exp(−y_i f_{t−1}(x_i)) on S_k (Figure 1), by loops."""
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == clf.classes_[1], 1.0, -1.0)
    errors = []
    for t, (k, stump) in enumerate(clf.estimators_):
        label = clf.domains_[k]
        weights, edges = [], []
        for i in range(len(X)):
            if domains[i] != label:
                continue
            f = sum(
                alpha * Q[i, kt] * h.predict(X[i : i + 1])[0]
                for (kt, h), alpha in zip(clf.estimators_[:t], clf.estimator_weights_[:t])
            )
            weights.append(math.exp(-signs[i] * f))
            edges.append(signs[i] * Q[i, k] * stump.predict(X[i : i + 1])[0])
        errors.append(0.5 * (1.0 - np.dot(weights, edges) / sum(weights)))
    return errors


def test_adaboost_step_is_half_log_odds_of_the_brute_force_error():
    X, y, domains = _two_domains(n=30, seed=3)
    clf = MultiBoostClassifier(n_estimators=6).fit(X, y, domains=domains)
    errors = _brute_force_errors(clf, X, y, domains)
    assert len(errors) == 6
    for record, error, step in zip(clf.history_, errors, clf.estimator_weights_):
        assert record["step_rule"] == "adaboost"
        assert record["error"] == pytest.approx(error, rel=1e-9)
        assert step == pytest.approx(0.5 * math.log((1 - error) / error), rel=1e-9)


def test_old_step_names_raise_naming_the_new_ones():
    X, y, domains = _two_domains(n=20)
    for old, new in (("line_search", "exact_line_search"), ("closed_form", "lemma1_bound")):
        with pytest.raises(ValueError, match=f"step='{old}' was renamed: use step='{new}'"):
            MultiBoostClassifier(n_estimators=2, step=old).fit(X, y, domains=domains)


def test_labels_staged_and_probabilities():
    X, y = _noisy_problem()
    clf = MultiBoostClassifier(n_estimators=10).fit(X, y)
    assert clf.classes_.tolist() == ["no", "yes"]
    staged = list(clf.staged_predict(X))
    assert len(staged) == len(clf.estimators_)
    np.testing.assert_array_equal(staged[-1], clf.predict(X))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-2 * clf.decision_function(X))))
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], clf.predict(X))


def test_clone_pickle_pipeline_and_cross_val_score_with_domains():
    X, y, domains = _two_domains(n=60, seed=1)
    clf = MultiBoostClassifier(n_estimators=5)
    assert clone(clf).get_params() == clf.get_params()
    fitted = clf.fit(X, y, domains=domains)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.decision_function(X), fitted.decision_function(X))
    pipeline = make_pipeline(StandardScaler(), MultiBoostClassifier(n_estimators=5))
    scores = cross_val_score(
        pipeline,
        X,
        y,
        cv=KFold(3, shuffle=True, random_state=0),
        params={"multiboostclassifier__domains": domains},
    )
    assert scores.shape == (3,) and np.all(np.isfinite(scores))


def test_a_domain_with_one_class_is_allowed():
    X, y, domains = _two_domains(n=50, seed=2)
    y[domains == 0] = 1
    clf = MultiBoostClassifier(n_estimators=5).fit(X, y, domains=domains)
    assert len(clf.estimators_) >= 1


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda X, y, d: (np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y, d),
            "NaN",
        ),
        (lambda X, y, d: (X, np.zeros_like(y), d), "two classes"),
        (lambda X, y, d: (X, y % 3 + (np.arange(len(y)) == 0) * 2, d), "exactly two classes"),
        (lambda X, y, d: (X, y, d[:-1]), "domains"),
        (lambda X, y, d: (X, y[:-1], d), "inconsistent"),
    ],
)
def test_bad_input_raises(change, message):
    X, y, domains = _two_domains(n=20)
    X, y, domains = change(X, y, domains)
    with pytest.raises(ValueError, match=message):
        MultiBoostClassifier(n_estimators=2, multi_class="binary").fit(X, y, domains=domains)


def test_a_domain_without_weight_raises():
    X, y, domains = _two_domains(n=20)
    weights = np.where(domains == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="positive total sample_weight"):
        MultiBoostClassifier(n_estimators=2).fit(X, y, domains=domains, sample_weight=weights)


def test_wrong_number_of_features_at_predict_raises():
    X, y = _noisy_problem()
    clf = MultiBoostClassifier(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])


# --------------------------------------------------------------------------- soft-max (mu)


def test_soft_max_objective_matches_brute_force_log_sum_exp():
    X, y, domains = _two_domains(n=40, seed=1)
    mu = 10.0
    clf = MultiBoostClassifier(n_estimators=8, mu=mu).fit(X, y, domains=domains)
    losses = _brute_force_losses(clf, X, y, domains)
    expected = math.log(sum(math.exp(mu * loss) for loss in losses)) / mu
    assert clf.objective_ == pytest.approx(expected, rel=1e-10)
    assert soft_max_objective(losses, mu) == pytest.approx(expected, rel=1e-12)
    assert clf.history_[0]["objective"] == pytest.approx(1.0 + math.log(2) / mu, rel=1e-12)
    assert {record["direction_rule"] for record in clf.history_} == {"soft_max"}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mu", [1.0, 10.0, 100.0])
def test_soft_max_exact_line_search_decreases_the_objective_every_round(seed, mu):
    X, y, domains = _two_domains(n=80, seed=seed)
    clf = MultiBoostClassifier(n_estimators=25, mu=mu, step="exact_line_search")
    clf.fit(X, y, domains=domains)
    objectives = [record["objective"] for record in clf.history_] + [clf.objective_]
    assert np.all(np.diff(objectives) < 0)
    for record in clf.history_:
        assert record["soft_weights"] == pytest.approx(soft_max_weights(record["losses"], mu))


def test_soft_max_tends_to_the_max():
    rng = np.random.default_rng(6)
    losses = rng.random(4)
    gaps = []
    for mu in [1.0, 10.0, 100.0, 1e4, 1e8]:
        value = soft_max_objective(losses, mu)
        assert losses.max() <= value <= losses.max() + math.log(4) / mu + 1e-15
        gaps.append(value - losses.max())
    assert np.all(np.diff(gaps) <= 0) and gaps[-1] < 1e-8
    assert soft_max_objective(losses, None) == losses.max()
    weights = soft_max_weights(losses, 1e8)  # no overflow, one-hot at the max
    np.testing.assert_allclose(weights, np.eye(4)[np.argmax(losses)], atol=1e-12)
    assert soft_max_weights(losses, 1.0).sum() == pytest.approx(1.0)


def _random_state(seed=7, n=25):
    """Two domains, random margins and Q: (X, y, domain_index, a_i, Q)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    y = np.where(rng.random(2 * n) < 0.5, -1.0, 1.0)
    domain_index = np.repeat([0, 1], n)
    scaled = np.exp(-rng.normal(size=2 * n)) / n
    Q = rng.dirichlet([1.0, 1.0], size=2 * n)
    return X, y, domain_index, scaled, Q


def test_combined_weights_find_the_steepest_coordinate_of_soft_max():
    X, y, domain_index, scaled, Q = _random_state()
    mu = 5.0

    def objective_along(eta, q, stump):
        u = y * Q[:, q] * stump.predict(X)
        losses = np.bincount(domain_index, weights=scaled * np.exp(-eta * u))
        return soft_max_objective(losses, mu)

    # The round's candidates for F_μ: one per q, with the soft-max weights p of every domain.
    data = RoundData(presort(X), y[:, None], Q, domain_index, np.ones(y.size), 2, "exponential",
                     "adaboost", mu=mu)  # fmt: skip
    p = soft_max_weights(np.bincount(domain_index, weights=scaled), mu)
    candidates = steepest_directions(data, [(q, p) for q in range(2)], scaled[:, None])
    by_q = {d.domain: (d.rate, d.base) for d in candidates}
    rates = [by_q[q][0] for q in range(2)]
    # Brute force over every coordinate (q, stump): −dF_μ/dη at η = 0 by finite differences.
    brute = {}
    for q in range(2):
        for feature in range(X.shape[1]):
            values = np.sort(X[:, feature])
            thresholds = [-np.inf, *(0.5 * (values[:-1] + values[1:]))]
            for threshold in thresholds:
                for polarity in (1, -1):
                    stump = Stump(feature, float(threshold), polarity)
                    h = 1e-6
                    slope = (objective_along(h, q, stump) - objective_along(-h, q, stump)) / (2 * h)
                    brute[(q, feature, threshold, polarity)] = -slope
    for q in range(2):
        best_q = max(value for key, value in brute.items() if key[0] == q)
        assert rates[q] == pytest.approx(best_q, abs=1e-8)
        stump = by_q[q][1]
        assert rates[q] == pytest.approx(
            brute[(q, stump.feature, stump.threshold, stump.polarity)], abs=1e-8
        )


def test_soft_line_search_step_zeroes_the_slope_and_minimises():
    _, _, domain_index, scaled, _ = _random_state(seed=8)
    rng = np.random.default_rng(8)
    u = rng.uniform(-0.3, 1.0, scaled.size)
    mu = 20.0

    def objective(eta):
        return soft_max_objective(np.bincount(domain_index, weights=scaled * np.exp(-eta * u)), mu)

    zero = np.zeros(scaled.size)  # a_i = c_i e^{−0}: the point weights are the a_i

    def soft_line_search_step(directions):
        return penalised_line_search(zero, directions, domain_index, scaled, 2, mu=mu)

    step = soft_line_search_step(u)
    assert 0 < step < np.inf
    h = 1e-6 * max(step, 1.0)
    assert (objective(step + h) - objective(step - h)) / (2 * h) == pytest.approx(0, abs=1e-7)
    grid = np.linspace(0, 2 * step + 1, 4001)
    assert objective(step) <= min(objective(eta) for eta in grid) + 1e-13
    # Ascent direction: no step; separating direction: unbounded descent.
    assert soft_line_search_step(-np.abs(u)) == 0.0
    assert soft_line_search_step(np.abs(u) + 0.1) == np.inf


def test_soft_max_with_one_domain_equals_adaboost():
    X, y = _noisy_problem()
    ours = AdaBoost(n_estimators=30).fit(X, y)
    multi = MultiBoostClassifier(n_estimators=30, mu=10.0).fit(X, y)
    assert [stump for _, stump in multi.estimators_] == ours.estimators_
    np.testing.assert_allclose(multi.estimator_weights_, ours.estimator_weights_, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mu", [10.0, 100.0])
def test_soft_max_agnostic_error_not_worse_than_pooled_adaboost(seed, mu):
    X, y, domains = _two_domains(seed=seed)
    multi = MultiBoostClassifier(n_estimators=50, mu=mu).fit(X, y, domains=domains)
    pooled = AdaBoost(n_estimators=50).fit(X, y)
    multi_errors = mixture_errors(multi, X, y, domains)
    pooled_errors = mixture_errors(pooled, X, y, domains)
    assert multi_errors.agnostic <= pooled_errors.agnostic


@pytest.mark.parametrize("mu", [0, -1.0, float("nan"), float("inf"), True, "10"])
def test_bad_mu_raises(mu):
    X, y, domains = _two_domains(n=20)
    with pytest.raises(ValueError, match="mu must be"):
        MultiBoostClassifier(n_estimators=2, mu=mu).fit(X, y, domains=domains)
