"""The ``fedboost`` experiment: FEDMULTIBOOST vs centralised MultiBoost (tiny runs).

The data sets are replaced by small toys (the boosting demo's three sources, or integer
features on two sources), so these tests run in seconds without the real loaders' files; one
test runs on a few real Fashion-MNIST images when the files are installed.
"""

import csv
from pathlib import Path

import numpy as np
import pytest

import manytask.experiments.fedboost as fedboost
from _helpers import assert_errors_within
from manytask.boost import AdaBoost, mixture_errors
from manytask.boost.federated import simulate
from manytask.demos.boost import make_three_sources
from manytask.experiments import load_experiment
from manytask.experiments._boost_folds import load_sources, source_folds
from manytask.experiments.fedboost import (
    RESULT_COLUMNS,
    FedBoost,
    Settings,
    plan_runs,
    run_fold,
    staged_errors,
)

TINY = Settings(
    n_folds=3, repeats=1, n_rounds=3, clients_per_domain=2, budgets=((None, None), (1, 3))
)
NULL_STEP = 1e-12  # a step that leaves f unchanged to rounding (f is a sum of O(1) terms)
FASHION = Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")


def toy_loader(name, *, max_per_domain=None, random_state=0, data_home=None):
    """Stand-in for the real loaders: the demo's toy plus one pure-noise feature."""
    X, y, domains = make_three_sources((30, 30, 24), random_state=random_state)
    noise = np.random.default_rng(random_state + 7).normal(size=(len(y), 1))
    return np.hstack([X, noise]), y, domains, ["left", "right", "middle"], f"toy for {name}."


def integer_two_sources(seed=0, n=80):
    """Two sources with integer features: every midpoint is a candidate of both searches."""
    rng = np.random.default_rng(seed)
    domains = np.repeat([0, 1], n)
    X = rng.integers(0, 6, size=(2 * n, 3)).astype(float)
    X[:, 2] += 2 * domains  # Q(k|x) informative
    y = (X[:, 0] + (2 * domains - 1) * X[:, 1] + rng.normal(size=2 * n) > 2.5).astype(int)
    return X, y, domains


def read_csv(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("fedboost")
    table = FedBoost(TINY, "cps1988", loader=toy_loader).run(out, progress=False)
    return out, table


def test_tiny_run_writes_results_curves_and_figures(tiny):
    out, table = tiny
    names = sorted(path.name for path in table.files)
    assert names == ["curves.csv", "error-vs-communication.png", "error-vs-rounds.png",
                     "results.csv", "results.md"]  # fmt: skip
    for name in names:
        assert (out / name).stat().st_size > 0
    with open(out / "results.csv", newline="") as handle:
        header = next(csv.reader(handle))
    errors = ["error_1", "error_2", "error_3"]
    assert header == [*RESULT_COLUMNS[:13], *errors, *RESULT_COLUMNS[13:]]
    rows = read_csv(out / "results.csv")
    assert [row["run"] for row in rows] == [run.key for run in plan_runs(TINY)]
    text = (out / "results.md").read_text()
    for run in plan_runs(TINY):
        assert run.label in text
    assert "O((t + s)K + K′)" in text and "O(p·s)" in text


def test_every_run_is_tested_on_the_same_held_out_fold(tiny):
    out, _ = tiny
    X, y, domains, _, _ = toy_loader("cps1988")
    test = source_folds(domains, TINY.n_folds, TINY.random_state) == 0
    rows = read_csv(out / "results.csv")
    assert {int(row["n_test"]) for row in rows} == {int(test.sum())}
    assert {int(row["n_train"]) for row in rows} == {int((~test).sum())}


def test_communicated_numbers_grow_every_round_and_add_up(tiny):
    out, _ = tiny
    rows = {row["run"]: row for row in read_csv(out / "results.csv")}
    curves = read_csv(out / "curves.csv")
    for key, row in rows.items():
        if row["kind"] == "centralised":
            continue
        numbers = [int(p["numbers_cumulative"]) for p in curves if p["run"] == key]
        assert len(numbers) == int(row["rounds"]) + 1
        assert numbers[0] == int(row["numbers_setup"]) > 0
        assert all(later > earlier for earlier, later in zip(numbers, numbers[1:]))
        total = int(row["numbers_to_clients"]) + int(row["numbers_from_clients"])
        assert numbers[-1] == int(row["numbers_total"]) == total


def test_numbers_from_clients_are_the_sizes_of_their_messages():
    # Independent count: the recorded client→server messages, number by number.
    X, y, domains, _, _ = toy_loader("toy")
    fold_of = source_folds(domains, 3, 0)
    models = {}
    runs = [run for run in plan_runs(TINY) if run.key == "fed-hard-1-3"]
    rows, _ = run_fold(X, y, domains, fold_of, 0, TINY, runs, models=models)
    train = fold_of != 0
    replay = simulate(X[train], y[train], domains[train], 2, 1, 3, n_rounds=3, random_state=0,
                      record_messages=True)  # fmt: skip
    counted = sum(np.size(value) for *_, message in replay.federated_run_.messages
                  for value in message.values())  # fmt: skip
    assert rows[0]["numbers_from_clients"] == counted
    np.testing.assert_allclose(models["fed-hard-1-3"].estimator_weights_,
                               replay.estimator_weights_, rtol=1e-12)  # fmt: skip


def test_curve_errors_match_the_truncated_ensembles_by_brute_force():
    X, y, domains, _, _ = toy_loader("toy")
    fold_of = source_folds(domains, 3, 0)
    models = {}
    runs = [run for run in plan_runs(TINY) if run.key in ("fed-hard-all-all", "central-hard")]
    rows, curves = run_fold(X, y, domains, fold_of, 0, TINY, runs, models=models)
    test = fold_of == 0
    Xt, yt, dt = X[test], y[test], domains[test]
    for key, model in models.items():
        Q = model.domain_classifier_.predict_proba(Xt)
        for t, point in enumerate(curves[key]):
            f = np.zeros(len(Xt))
            for (k, stump), step in list(zip(model.estimators_, model.estimator_weights_))[:t]:
                f += (
                    step
                    * Q[:, k]
                    * stump.polarity
                    * np.where(Xt[:, stump.feature] > stump.threshold, 1, -1)
                )
            predicted = np.where(f > 0, model.classes_[1], model.classes_[0])
            by_source = [np.mean(predicted[dt == k] != yt[dt == k]) for k in range(3)]
            assert point["error_agnostic"] == pytest.approx(max(by_source))
            assert point["error_uniform"] == pytest.approx(np.mean(by_source))
        final = mixture_errors(model, Xt, yt, dt)
        row = next(r for r in rows if r["run"] == key)
        assert row["error_agnostic"] == pytest.approx(final.agnostic)
        assert row["null_steps"] == sum(step <= NULL_STEP for step in model.estimator_weights_)


def test_federated_hard_max_with_all_clients_equals_centralised_on_the_same_candidates():
    # Integer features: the exact search's candidates are the midpoints between distinct
    # values plus the constant stump, exactly the table candidate_thresholds gives the server.
    # The "central Q" run: the federated server uses the centralised run's Q (the default
    # runs use the federated Q, equal to it only within L-BFGS's tolerance).
    # Integer features also make stumps tie (two stumps splitting the chosen source's points
    # alike, equal in ε up to the order of the sums): the implementations may keep different
    # ones, so each round is compared by its source, ε, η and the stump's values on that
    # source's training points (where D_t(k, ·) lives).
    X, y, domains = integer_two_sources(seed=0)
    settings = Settings(n_folds=4, n_rounds=8, clients_per_domain=3, budgets=((None, None),),
                        candidates="exact")  # fmt: skip
    federated_key = "fed-hard-all-all-central-q"
    runs = [run for run in plan_runs(settings) if run.key in (federated_key, "central-hard")]
    models = {}
    fold_of = source_folds(domains, 4, 0)
    _, curves = run_fold(X, y, domains, fold_of, 0, settings, runs, models=models)
    federated, centralised = models[federated_key], models["central-hard"]
    assert federated.domain_classifier_.estimator_ is not None
    np.testing.assert_array_equal(
        federated.domain_classifier_.predict_proba(X),
        centralised.domain_classifier_.predict_proba(X),
    )
    assert len(federated.estimators_) == len(centralised.estimators_) == 8
    np.testing.assert_allclose(federated.estimator_weights_, centralised.estimator_weights_,
                               rtol=1e-8)  # fmt: skip
    train = fold_of != 0
    for (k, stump), (kc, stump_c), record, record_c in zip(
        federated.estimators_, centralised.estimators_, federated.history_, centralised.history_,
        strict=True,
    ):  # fmt: skip
        assert k == kc
        assert record["error"] == pytest.approx(record_c["error"], rel=1e-9)
        on_source = X[train & (domains == centralised.domains_[k])]
        np.testing.assert_array_equal(stump.predict(on_source), stump_c.predict(on_source))
    assert np.all(centralised.estimator_weights_ > NULL_STEP)  # every round made progress
    fed_curve = [point["error_agnostic"] for point in curves[federated_key]]
    assert len(set(fed_curve)) > 1  # the curve moves: the equality is not of two flat lines


def test_pooled_baseline_is_adaboost_on_the_union_over_the_same_candidates():
    # One domain and Q ≡ 1: f = Σ α h, each round AdaBoost's best stump of the table and the
    # exact step; compared with our AdaBoost on the pooled training data (exact stumps), on
    # integer features where the table holds every threshold.
    X, y, domains = integer_two_sources(seed=1)
    settings = Settings(n_folds=4, n_rounds=5, clients_per_domain=3, budgets=((None, None),),
                        candidates="exact")  # fmt: skip
    fold_of = source_folds(domains, 4, 0)
    runs = [run for run in plan_runs(settings) if run.kind == "pooled"]
    models = {}
    run_fold(X, y, domains, fold_of, 0, settings, runs, models=models)
    model = models["fed-pooled-all-all"]
    train = fold_of != 0
    reference = AdaBoost(n_estimators=5).fit(X[train], y[train])
    Xt = X[fold_of == 0]
    np.testing.assert_allclose(model.decision_function(Xt), reference.decision_function(Xt),
                               rtol=1e-7, atol=1e-9)  # fmt: skip


def test_every_budget_has_a_hard_a_soft_and_a_pooled_run():
    keys = [run.key for run in plan_runs(TINY)]
    assert [key for key in keys if key.startswith("fed-soft")] == [
        "fed-soft-all-all", "fed-soft-1-3", "fed-soft-all-all-central-q"
    ]  # fmt: skip
    # the first budget once more with the central Q, to isolate what the federated Q changes
    assert [run.q for run in plan_runs(TINY) if run.key.endswith("central-q")] == ["central"] * 2
    assert [key for key in keys if key.startswith("fed-pooled")] == [
        "fed-pooled-all-all", "fed-pooled-1-3"
    ]  # fmt: skip


def test_staged_errors_start_from_the_empty_ensemble():
    X, y, domains, _, _ = toy_loader("toy")
    model = simulate(X, y, domains, 2, n_rounds=2, random_state=0)
    errors = staged_errors(model, X, y, domains)
    assert errors.shape == (3, 3)
    # f ≡ 0 predicts classes_[0] = 0: the error on source k is its share of label 1
    np.testing.assert_allclose(errors[0], [np.mean(y[domains == k] == 1) for k in range(3)])


def test_bad_settings_name_the_parameter():
    with pytest.raises(ValueError, match="budgets"):
        Settings(budgets=((0, 5),))
    with pytest.raises(ValueError, match="candidates"):
        Settings(candidates="all")
    with pytest.raises(ValueError, match="clients_per_domain"):
        Settings(clients_per_domain=0)
    with pytest.raises(ValueError, match="adult"):
        FedBoost.parse_panels("adult")


def test_fedboost_is_registered_for_the_cli():
    experiment = load_experiment("fedboost")
    assert experiment is fedboost.FedBoost
    assert experiment.DEFAULT_OUT == "manytask-reproduce/fedboost"
    assert experiment.parse_panels(None) == ["fashion-mnist", "cps1988"]


@pytest.mark.skipif(not FASHION.is_file(), reason=f"Fashion-MNIST files absent ({FASHION})")
def test_real_fashion_mnist_subset_runs(tmp_path):
    settings = Settings(n_folds=3, n_rounds=2, max_per_domain=30, clients_per_domain=2,
                        budgets=((2, 5),), n_quantiles=4)  # fmt: skip
    table = FedBoost(settings, "fashion-mnist").run(tmp_path, progress=False)
    assert table.ran == ["fashion-mnist"]
    rows = read_csv(tmp_path / "results.csv")
    assert {int(row["n_test"]) for row in rows} == {30}  # 10 of 30 points of each source
    assert all(0.0 <= float(row["error_agnostic"]) <= 1.0 for row in rows)


COMMITTED_QUICK = Path(__file__).resolve().parents[1] / "docs/results/fedboost/quick/results.csv"


def test_quick_run_reproduces_the_committed_cps1988_errors_within_two_test_points():
    """``--quick`` on CPS1988 against docs/results: every run's test errors within 0.02, two
    of the 100 test points of each source (rounding on another CPU, BLAS or kernel backend
    may flip a few near-tied decisions)."""
    settings = Settings.quick()
    try:
        X, y, domains, _, _ = load_sources(
            "cps1988", max_per_domain=settings.max_per_domain, random_state=settings.random_state
        )
    except (ImportError, OSError) as error:
        pytest.skip(f"CPS1988 is not available: {error}")
    fold_of = source_folds(domains, settings.n_folds, settings.random_state)
    rows, _ = run_fold(X, y, domains, fold_of, 0, settings)
    committed = {
        row["run"]: row
        for row in read_csv(COMMITTED_QUICK)
        if (row["dataset"], row["fold"]) == ("cps1988", "1")
    }
    assert {row["n_test"] for row in rows} == {300}  # 100 test points per source
    assert_errors_within(rows, committed, "run", atol=0.02)


def test_federated_runs_pay_for_the_federated_q_and_report_its_log_loss(tiny):
    out, _ = tiny
    rows = read_csv(out / "results.csv")
    for row in rows:
        if row["kind"] == "federated" and row["q"] == "federated":
            assert 0 < int(row["numbers_q"]) < int(row["numbers_setup"])
        elif row["kind"] == "federated":  # central Q: nothing trained over the clients
            assert int(row["numbers_q"]) == 0
        if row["q"]:
            assert 0 < float(row["q_log_loss_train"]) < np.log(3)  # better than uniform
    fed = {row["q_log_loss_train"] for row in rows if row["q"] == "federated"}
    central = {row["q_log_loss_train"] for row in rows if row["q"] == "central"}
    assert len(fed) == len(central) == 1  # one Q of each kind per fold, shared by the runs
    assert float(fed.pop()) == pytest.approx(float(central.pop()), rel=1e-3)
    assert "Q(k|x): federated" in (out / "results.md").read_text()
