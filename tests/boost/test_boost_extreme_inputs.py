"""Issue 23's boosting findings, one test each: inputs beyond 1e154 fitted as their exact
rescaling, more clients than rows refused, AdaBoost-k inside a Pipeline and cross_val_score,
and a refused refit leaving the fitted estimator as it was."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from manytask.boost import (
    AdaBoostPerDomain,
    DMSAClassifier,
    DomainClassifier,
    MultiBoostClassifier,
)
from manytask.boost.federated import simulate

#: 2^700 ≈ 5e210: squaring such inputs overflows; multiplying by a power of two is exact.
HUGE = 2.0**700


@pytest.fixture(scope="module")
def sources():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2)) + np.repeat([[-1.0, 0.0], [1.0, 0.0]], 40, axis=0)
    y = np.r_[X[:40, 1] > 0, X[40:, 1] < 0].astype(int)
    return X, y, np.repeat([0, 1], 40)


def test_domain_classifier_is_invariant_to_an_input_scale_beyond_1e154(sources):
    X, _, domains = sources
    ordinary = DomainClassifier().fit(X, domains).predict_proba(X)
    huge = DomainClassifier().fit(X * HUGE, domains).predict_proba(X * HUGE)
    # Standardisation removes the scale; the exact power-of-two rescaling keeps it exact.
    assert_allclose(huge, ordinary, rtol=1e-12)


@pytest.mark.parametrize(
    "estimator",
    [MultiBoostClassifier(n_estimators=5), DMSAClassifier(n_estimators=5, random_state=0)],
    ids=["MultiBoostClassifier", "DMSAClassifier"],
)
def test_boosting_fits_inputs_beyond_1e154_as_their_rescaling(sources, estimator):
    X, y, domains = sources
    ordinary = sklearn.clone(estimator).fit(X, y, domains)
    huge = sklearn.clone(estimator).fit(X * HUGE, y, domains)
    decision = huge.decision_function(X * HUGE)
    assert np.all(np.isfinite(decision))
    assert_allclose(decision, ordinary.decision_function(X), rtol=1e-9, atol=1e-12)
    assert_array_equal(huge.predict(X * HUGE), ordinary.predict(X))


def test_simulate_refuses_more_clients_than_rows_in_a_domain(sources):
    X, y, domains = sources
    with pytest.raises(ValueError, match="clients_per_domain .* got 50 with 40 rows in domain 0"):
        simulate(X, y, domains, clients_per_domain=50, n_rounds=2, random_state=0)
    fitted = simulate(X, y, domains, clients_per_domain=40, n_rounds=2, random_state=0)
    assert [len(points) for points in fitted.federated_run_.client_points] == [1] * 80


def test_adaboost_per_domain_in_a_pipeline_and_cross_val_score(sources):
    X, y, domains = sources
    folds = KFold(4, shuffle=True, random_state=0)
    expected = []  # the same folds by hand: AdaBoost-1 trained per fold, scored on every row
    for train, test in folds.split(X):
        scaler = StandardScaler().fit(X[train])
        model = AdaBoostPerDomain(n_estimators=5).fit(scaler.transform(X[train]), y[train],
                                                      domains[train])  # fmt: skip
        expected.append(np.mean(model.predict(scaler.transform(X[test]), domain=1) == y[test]))
    with sklearn.config_context(enable_metadata_routing=True):
        model = AdaBoostPerDomain(n_estimators=5, domain=1).set_fit_request(domains=True)
        pipeline = make_pipeline(StandardScaler(), model)
        scores = cross_val_score(pipeline, X, y, cv=folds, params={"domains": domains})
        assert_allclose(scores, expected)
        # A per-call domain reaches predict through the pipeline too.
        model.set_predict_request(domain=True)
        pipeline.fit(X, y, domains=domains)
        assert_array_equal(
            pipeline.predict(X, domain=0), pipeline[-1].predict(pipeline[0].transform(X), 0)
        )


def test_adaboost_per_domain_refuses_an_unknown_default_domain(sources):
    X, y, domains = sources
    model = AdaBoostPerDomain(n_estimators=3).fit(X, y, domains)
    fitted = model.estimators_
    with pytest.raises(
        ValueError, match=r"domain must be one of the source labels \[0, 1\], got 7"
    ):
        model.set_params(domain=7).fit(X, y, domains)
    assert model.estimators_ is fitted
    with pytest.raises(ValueError, match="domain must be one of the source labels"):
        model.predict(X)  # domain=7 is still set


@pytest.mark.parametrize(
    "estimator",
    [MultiBoostClassifier(n_estimators=3), DMSAClassifier(n_estimators=3), DomainClassifier()],
    ids=["MultiBoostClassifier", "DMSAClassifier", "DomainClassifier"],
)
def test_refused_refit_leaves_the_fitted_estimator_unchanged(sources, estimator):
    X, y, domains = sources
    target = domains if isinstance(estimator, DomainClassifier) else y
    args = () if isinstance(estimator, DomainClassifier) else (domains,)
    estimator.fit(X, target, *args)
    before = dict(estimator.__dict__)
    lonely = np.r_[domains[:-1], 2]  # a source of one row: refused after the label checks
    with pytest.raises(ValueError, match="domain|source"):
        if isinstance(estimator, DomainClassifier):
            estimator.fit(X[:, :1], lonely)
        else:
            estimator.fit(X[:, :1], y, np.r_[domains[:-1], 2])
    assert estimator.__dict__.keys() == before.keys()
    assert all(estimator.__dict__[key] is value for key, value in before.items())
