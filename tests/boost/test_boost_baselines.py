"""AdaBoost-k, AdaBoost-all and DMSA against AdaBoost itself and formulas computed by hand."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from manytask.boost.baselines import (
    AdaBoostPerDomain,
    DMSAClassifier,
    PooledAdaBoost,
    dmsa_combination,
)
from manytask.boost.dmsa import _log_loss_gradients
from manytask.boost.evaluation import mixture_errors
from manytask.boost.multiboost import AdaBoost


def _disagreeing_sources(seed=0, sizes=(120, 80, 60)):
    """Three sources in different regions whose labels follow different features, so one
    source's rule is wrong on the others."""
    rng = np.random.default_rng(seed)
    centres = [(-1.5, 0.0, 0.0), (1.5, 0.0, 0.0), (0.0, 1.5, 0.0)]
    X, y, domains = [], [], []
    for k, (size, centre) in enumerate(zip(sizes, centres)):
        points = rng.normal(centre, 1.5, size=(size, 3))
        points[:, 2] = rng.normal(size=size)
        feature = points[:, 2] if k == 2 else points[:, 1]
        labels = (feature > 0) if k != 1 else (feature < 0)
        flip = rng.random(size) < 0.1
        X.append(points)
        y.append(np.where(flip, ~labels, labels).astype(int))
        domains.append(np.full(size, k))
    return np.vstack(X), np.concatenate(y), np.concatenate(domains)


# --------------------------------------------------------------------------- AdaBoost-k


def test_adaboost_k_model_equals_adaboost_on_its_source_alone():
    X, y, domains = _disagreeing_sources()
    model = AdaBoostPerDomain(n_estimators=15).fit(X, y, domains)
    assert model.domains_.tolist() == [0, 1, 2]
    for k in range(3):
        alone = AdaBoost(n_estimators=15).fit(X[domains == k], y[domains == k])
        fitted = model.estimators_[k]
        assert [(s.feature, s.threshold, s.polarity) for s in fitted.estimators_] == [
            (s.feature, s.threshold, s.polarity) for s in alone.estimators_
        ]
        np.testing.assert_array_equal(fitted.estimator_weights_, alone.estimator_weights_)
        np.testing.assert_array_equal(
            model.decision_function(X, domain=k), alone.decision_function(X)
        )
        np.testing.assert_array_equal(model.predict(X, domain=k), alone.predict(X))


def test_predict_all_stacks_each_sources_model():
    X, y, domains = _disagreeing_sources(seed=1)
    labels = np.array(["b", "c", "a"])[domains]  # sorted order a, b, c = sources 2, 0, 1
    model = AdaBoostPerDomain(n_estimators=5).fit(X, y, labels)
    assert model.domains_.tolist() == ["a", "b", "c"]
    stacked = model.predict_all(X)
    for k, label in enumerate(["a", "b", "c"]):
        alone = AdaBoost(n_estimators=5).fit(X[labels == label], y[labels == label])
        np.testing.assert_array_equal(stacked[k], alone.predict(X))


def test_adaboost_k_unknown_domain_raises():
    X, y, domains = _disagreeing_sources()
    model = AdaBoostPerDomain(n_estimators=2).fit(X, y, domains)
    with pytest.raises(ValueError, match="domain must be one of"):
        model.predict(X, domain=7)
    with pytest.raises(ValueError, match="domain must be one of"):
        model.predict(X)


def test_source_with_one_class_raises():
    X, y, domains = _disagreeing_sources()
    y = y.copy()
    y[domains == 1] = 0
    with pytest.raises(ValueError, match="source 1 must contain both classes"):
        AdaBoostPerDomain(n_estimators=2).fit(X, y, domains)


@pytest.mark.parametrize("n_estimators", [0, 2.5, True])
def test_bad_n_estimators_raises(n_estimators):
    X, y, domains = _disagreeing_sources()
    with pytest.raises(ValueError, match="n_estimators"):
        AdaBoostPerDomain(n_estimators=n_estimators).fit(X, y, domains)


# --------------------------------------------------------------------------- AdaBoost-all


def test_pooled_adaboost_equals_adaboost_on_the_union():
    X, y, domains = _disagreeing_sources(seed=2)
    pooled = PooledAdaBoost(n_estimators=12).fit(X, y, domains)
    union = AdaBoost(n_estimators=12).fit(X, y)
    np.testing.assert_array_equal(pooled.decision_function(X), union.decision_function(X))
    np.testing.assert_array_equal(pooled.predict(X), union.predict(X))
    assert pooled.score(X, y) == pytest.approx(np.mean(union.predict(X) == y))


def test_pooled_adaboost_checks_domain_length():
    X, y, domains = _disagreeing_sources()
    with pytest.raises(ValueError, match="domains must have shape"):
        PooledAdaBoost(3).fit(X, y, domains[:-1])


# --------------------------------------------------------------------------- DMSA


def test_dmsa_with_fixed_z_equals_the_formula_by_hand():
    X, y, domains = _disagreeing_sources(seed=3)
    z = np.array([0.5, 0.2, 0.3])
    model = DMSAClassifier(n_estimators=8, z=z).fit(X, y, domains)
    # Independent pieces: AdaBoost per source, the default Q refitted with scikit-learn.
    boosts = [AdaBoost(n_estimators=8).fit(X[domains == k], y[domains == k]) for k in range(3)]
    Q = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X, domains)
    marginals = Q.predict_proba(X).mean(axis=0)
    X_test = np.random.default_rng(9).normal(0, 3, size=(25, 3))
    q_test = Q.predict_proba(X_test)
    expected = []
    for i, x in enumerate(X_test):
        numerator = denominator = 0.0
        for k in range(3):
            h_k = 1.0 / (1.0 + np.exp(-2.0 * boosts[k].decision_function(x[None, :])[0]))
            h_k = min(max(h_k, 1e-6), 1 - 1e-6)  # the documented PROBABILITY_CLIP
            weight = z[k] * q_test[i, k] / marginals[k]
            numerator += weight * h_k
            denominator += weight
        expected.append(numerator / denominator)
    np.testing.assert_allclose(model.predict_proba(X_test)[:, 1], expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(model.predict(X_test), (np.array(expected) > 0.5).astype(int))
    np.testing.assert_allclose(model.z_, z)
    assert model.domain_losses_ is None


def test_dmsa_vertex_z_is_the_source_model_where_q_is_flat():
    """z = e_k makes h_z = h_k whatever Q is (the weights cancel)."""
    X, y, domains = _disagreeing_sources(seed=4)
    model = DMSAClassifier(n_estimators=6, z=[0.0, 1.0, 0.0]).fit(X, y, domains)
    alone = AdaBoost(n_estimators=6).fit(X[domains == 1], y[domains == 1])
    expected = np.clip(1 / (1 + np.exp(-2 * alone.decision_function(X))), 1e-6, 1 - 1e-6)
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], expected, rtol=1e-9)


def _worst_log_loss(model, X, y, domains):
    proba = model.predict_proba(X)[:, 1]
    return max(
        log_loss(y[domains == k], proba[domains == k], labels=[0, 1]) for k in np.unique(domains)
    )


def test_dmsa_worst_domain_loss_is_at_most_that_of_uniform_z():
    X, y, domains = _disagreeing_sources(seed=5)
    # The labelled variant fitted in-sample: z minimises the worst labelled log loss on (X, y).
    fitted = DMSAClassifier(n_estimators=10, z_fit="labelled", validation_fraction=None)
    fitted = fitted.fit(X, y, domains)
    # Only z changes below: h_k and Q stay those of the fitted model (the combination itself is
    # checked against the hand formula above); the log loss is written out per source.
    Q, h = fitted._domain_probabilities(X), fitted._base_probabilities(X)

    def worst_log_loss(z):
        proba = dmsa_combination(np.asarray(z, dtype=float), Q, fitted.domain_marginals_, h)
        losses = -(y * np.log(proba) + (1 - y) * np.log(1 - proba))
        return max(losses[domains == k].mean() for k in range(3))

    fitted_worst = _worst_log_loss(fitted, X, y, domains)
    uniform_worst = worst_log_loss(np.full(3, 1 / 3))
    assert fitted_worst <= uniform_worst + 1e-12
    assert fitted_worst == pytest.approx(fitted.domain_losses_.max(), rel=1e-6)
    assert fitted_worst == pytest.approx(worst_log_loss(fitted.z_), rel=1e-9)
    # The domains disagree, so the uniform z is not optimal, and the solver gets close to the
    # best z of a dense grid on the simplex (brute force, step 1/20).
    grid = [(a / 20, b / 20, 1 - (a + b) / 20) for a in range(21) for b in range(21 - a)]
    best_on_grid = min(worst_log_loss(point) for point in grid)
    assert best_on_grid < uniform_worst - 1e-3
    assert fitted_worst <= best_on_grid + 1e-3


def test_log_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(6)
    n, p = 60, 3
    Q = rng.dirichlet(np.ones(p), size=n)
    marginals = Q.mean(axis=0)
    h = rng.uniform(0.05, 0.95, size=(n, p))
    y_pos = rng.random(n) < 0.5
    index = rng.integers(0, p, n)
    z = np.array([0.2, 0.5, 0.3])
    losses, gradients = _log_loss_gradients(z, Q, marginals, h, y_pos, index, p)
    step = 1e-6
    for j in range(p):
        shifted = z.copy()
        shifted[j] += step
        upper, _ = _log_loss_gradients(shifted, Q, marginals, h, y_pos, index, p)
        shifted[j] -= 2 * step
        lower, _ = _log_loss_gradients(shifted, Q, marginals, h, y_pos, index, p)
        np.testing.assert_allclose(gradients[:, j], (upper - lower) / (2 * step), rtol=1e-5)


def test_dmsa_validation_fraction_is_seeded_and_holds_out_rows():
    X, y, domains = _disagreeing_sources(seed=7)
    params = dict(n_estimators=5, z_fit="labelled", validation_fraction=0.25, random_state=3)
    first = DMSAClassifier(**params).fit(X, y, domains)
    second = DMSAClassifier(**params).fit(X, y, domains)
    np.testing.assert_array_equal(first.z_, second.z_)
    held_out = first._split(domains, 3)
    for k, size in enumerate([120, 80, 60]):
        assert held_out[domains == k].sum() == int(np.ceil(0.25 * size))
        # Source k's model is AdaBoost on exactly its rows that were not held out.
        rows = (domains == k) & ~held_out
        alone = AdaBoost(n_estimators=5).fit(X[rows], y[rows])
        np.testing.assert_array_equal(
            first.estimators_[k].decision_function(X), alone.decision_function(X)
        )
    # z was fitted on the held-out rows: its reported losses are theirs.
    proba = first.predict_proba(X[held_out])[:, 1]
    expected = [
        log_loss(y[held_out][domains[held_out] == k], proba[domains[held_out] == k], labels=[0, 1])
        for k in range(3)
    ]
    np.testing.assert_allclose(first.domain_losses_, expected, rtol=1e-6)


def test_unlabelled_z_does_not_read_the_held_out_labels():
    X, y, domains = _disagreeing_sources(seed=11)
    params = dict(n_estimators=8, validation_fraction=0.3, random_state=4)
    model = DMSAClassifier(**params).fit(X, y, domains)
    held_out = model._split(domains, 3)
    shuffled = y.copy()
    rng = np.random.default_rng(1)
    for k in range(3):
        rows = np.flatnonzero(held_out & (domains == k))
        shuffled[rows] = 1 - y[rows] if k == 0 else rng.permutation(y[rows])
    again = DMSAClassifier(**params).fit(X, shuffled, domains)
    np.testing.assert_array_equal(again.z_, model.z_)
    np.testing.assert_array_equal(again.domain_losses_, model.domain_losses_)
    # The same change of labels moves the labelled variant's z: the check above can fail.
    labelled = DMSAClassifier(z_fit="labelled", **params)
    z_labelled = clone(labelled).fit(X, y, domains).z_
    assert not np.allclose(z_labelled, clone(labelled).fit(X, shuffled, domains).z_, atol=1e-3)


def test_unlabelled_domain_losses_are_h_z_against_h_k_on_the_held_out_rows():
    X, y, domains = _disagreeing_sources(seed=12)
    model = DMSAClassifier(n_estimators=6, random_state=0).fit(X, y, domains)
    held_out = model._split(domains, 3)
    assert held_out.sum() == sum(int(np.ceil(0.2 * m)) for m in (120, 80, 60))
    h_z = model.predict_proba(X)[:, 1]
    expected = []
    for k in range(3):
        rows = held_out & (domains == k)
        decision = model.estimators_[k].decision_function(X[rows])
        h_k = np.clip(1.0 / (1.0 + np.exp(-2.0 * decision)), 1e-6, 1 - 1e-6)
        q = h_z[rows]
        expected.append(np.mean(-(h_k * np.log(q) + (1 - h_k) * np.log(1 - q))))
    np.testing.assert_allclose(model.domain_losses_, expected, rtol=1e-6)
    assert model.n_iter_ >= 1
    np.testing.assert_allclose(model.z_.sum(), 1.0)


def test_dmsa_is_clonable_and_picklable():
    X, y, domains = _disagreeing_sources(seed=8)
    model = DMSAClassifier(n_estimators=4).fit(X, y, domains)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    assert clone(model).get_params() == model.get_params()


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"z": [0.5, 0.6, -0.1]}, "z must be"),
        ({"validation_fraction": 1.5}, "validation_fraction"),
        ({"z_fit": "labels"}, "z_fit must be .unlabelled. or .labelled., got .labels."),
        ({"max_iter": 0}, "max_iter"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"base_estimator": object()}, "base_estimator"),
    ],
)
def test_dmsa_bad_parameters_raise(params, match):
    X, y, domains = _disagreeing_sources()
    with pytest.raises(ValueError, match=match):
        DMSAClassifier(n_estimators=2, **params).fit(X, y, domains)


def test_adaboost_k_rows_of_table1_through_mixture_errors():
    X, y, domains = _disagreeing_sources(seed=9)
    model = AdaBoostPerDomain(n_estimators=6).fit(X, y, domains)
    for k in range(3):
        through_kwargs = mixture_errors(model, X, y, domains, predict_kwargs={"domain": k})
        predictions = AdaBoost(n_estimators=6).fit(X[domains == k], y[domains == k]).predict(X)
        expected = [np.mean(predictions[domains == j] != y[domains == j]) for j in range(3)]
        np.testing.assert_allclose(through_kwargs.domain_errors, expected)
        assert through_kwargs.agnostic == pytest.approx(max(expected))


def test_dmsa_reuses_fitted_adaboost_k_predictors():
    X, y, domains = _disagreeing_sources(seed=10)
    per_domain = AdaBoostPerDomain(n_estimators=7).fit(X, y, domains)
    reused = DMSAClassifier(base_estimator=per_domain, validation_fraction=None)
    reused = reused.fit(X, y, domains)
    assert all(a is b for a, b in zip(reused.estimators_, per_domain.estimators_))
    # Same h_k as the default (AdaBoost(7) per source, deterministic): same DMSA.
    default = DMSAClassifier(n_estimators=7, validation_fraction=None).fit(X, y, domains)
    np.testing.assert_allclose(reused.predict_proba(X), default.predict_proba(X))
    refitted = DMSAClassifier(base_estimator=AdaBoostPerDomain(7), validation_fraction=None)
    refitted = refitted.fit(X, y, domains)
    np.testing.assert_allclose(refitted.predict_proba(X), default.predict_proba(X))
    with pytest.raises(ValueError, match="validation_fraction must be None"):
        DMSAClassifier(base_estimator=per_domain, validation_fraction=0.2).fit(X, y, domains)
    with pytest.raises(ValueError, match="base_estimator: the fitted AdaBoostPerDomain"):
        DMSAClassifier(base_estimator=per_domain, validation_fraction=None).fit(X, y, domains + 1)
