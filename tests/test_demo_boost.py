"""Tests of the multi-source boosting section of ``manytask demo``."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from manytask.demos import DEMOS
from manytask.demos.boost import (
    FEDERATION,
    METHODS,
    make_three_sources,
    run_boost_demo,
    run_federation_demo,
    run_section,
)
from manytask.report import Report


@pytest.fixture(scope="module")
def demo():
    return run_boost_demo(seed=0)


def test_toy_labels_flip_on_the_middle_source_only():
    X, y, domains = make_three_sources((50, 40, 30), random_state=3)
    assert np.bincount(domains).tolist() == [50, 40, 30]
    for k, centre in enumerate((-3.0, 3.0, 0.0)):
        on_k = domains == k
        assert np.all(np.abs(X[on_k, 0] - centre) <= 1.2)
        expected = X[on_k, 1] < 0 if k == 2 else X[on_k, 1] > 0
        np.testing.assert_array_equal(y[on_k], expected.astype(int))


def test_toy_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n_per_source"):
        make_three_sources((10, 0, 10))
    with pytest.raises(ValueError, match="n_per_source"):
        make_three_sources((10, 10))


def test_reported_errors_match_a_per_source_loop(demo):
    X_test, y_test, domains_test = make_three_sources((1000,) * 3, random_state=1)
    for name in METHODS:
        predicted = demo.models[name].predict(X_test)
        by_loop = [
            np.mean([predicted[i] != y_test[i] for i in np.flatnonzero(domains_test == k)])
            for k in range(3)
        ]
        np.testing.assert_allclose(demo.errors[name].domain_errors, by_loop)
        assert demo.errors[name].agnostic == max(by_loop)


def test_pooled_stumps_fail_the_small_source_and_paper_and_soft_multiboost_do_not(demo):
    # The toy is built so that no additive (sum-of-stumps) model fits all three sources.
    assert demo.errors["adaboost-all"].domain_errors[2] > 0.9
    assert demo.errors["multiboost"].agnostic < 0.1
    assert demo.errors["multiboost-soft"].agnostic < 0.1
    # A peer implementation of pooled stump AdaBoost fails the middle source too.
    X, y, domains = make_three_sources(random_state=0)
    X_test, y_test, domains_test = make_three_sources((1000,) * 3, random_state=1)
    peer = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=50)
    peer.fit(X, y)
    middle = domains_test == 2
    assert np.mean(peer.predict(X_test[middle]) != y_test[middle]) > 0.9


def test_boost_section_runs_and_adds_its_section(tmp_path):
    report = Report(tmp_path / "r")
    text = run_section(report, seed=0)
    for label in METHODS.values():
        assert label in text
    (section,) = report.sections
    assert section.slug == "boost"
    assert [name for name, _ in section.figures] == ["boost-regions.png", "boost-errors.png"]
    index = report.write()
    assert (index.parent / "boost-regions.png").is_file()
    assert "manytask reproduce boost-table1" in index.read_text()
    # the federation part: how to run one in process, on Flower and on Dask, and on real data
    for usage in ("simulate(", "run_local_federation(", "manytask[fed]", "manytask[dist]",
                  "manytask reproduce fedboost"):  # fmt: skip
        assert usage in text
    assert "FEDMULTIBOOST" in index.read_text() and "manytask[dist]" in index.read_text()


@pytest.fixture(scope="module")
def federation():
    return run_federation_demo(seed=0)


def test_federation_errors_and_numbers_match_a_recount(federation):
    X_test, y_test, domains_test = make_three_sources((1000,) * 3, random_state=1)
    predicted = federation.model.predict(X_test)
    by_loop = [np.mean(predicted[domains_test == k] != y_test[domains_test == k]) for k in range(3)]
    np.testing.assert_allclose(federation.errors.domain_errors, by_loop)
    run = federation.model.federated_run_
    records = [run.setup, *run.history]
    recount = sum(r["numbers_to_clients"] + r["numbers_from_clients"] for r in records)
    assert federation.numbers == recount > 0
    assert f"{federation.numbers} numbers" in federation.summary()


def test_federation_samples_r_clients_per_source_every_round(federation):
    history = federation.model.federated_run_.history
    assert len(history) == FEDERATION["n_rounds"]
    for record in history:
        assert [len(ids) for ids in record["participants"]] == [FEDERATION["r"]] * 3


def test_federation_serves_the_small_source_pooled_adaboost_fails(federation, demo):
    assert federation.mu is None  # the paper's hard max (Figure 2)
    # pooled AdaBoost gets > 90% of the middle source wrong (test above); the federation,
    # seeing only 2 of 3 clients and 8 of the candidate stumps per source and round, does not
    assert demo.errors["adaboost-all"].domain_errors[2] > 0.9
    assert federation.errors.domain_errors[2] < 0.2
    assert federation.errors.agnostic < 0.2


def test_boost_demo_is_registered_with_run_section():
    (entry,) = [demo for demo in DEMOS if demo.name == "boost"]
    assert entry.run is run_section
