"""Tests of MULTIBOOST on Dask (:class:`~manytask.boost.federated.dask.DaskMultiBoostClassifier`),
of the estimator built from a fitted ensemble, and of the clients' edge statistics at scale
(:func:`~manytask.boost.federated.client_edges`).

The references are independent: the single-process ``MultiBoostClassifier`` (its own exact
or binned stump search), the in-process transport on shards built here in NumPy, and for the
edges a dense (m × n) matrix of stump values and a brute-force loop.
"""

import ast
import inspect

import numpy as np
import pytest

from _helpers import run_in_fresh_interpreter
from boost.test_federated import three_domains
from manytask.boost import DomainClassifier, MultiBoostClassifier
from manytask.boost.federated import (
    ClientShard,
    FederatedRun,
    FederatedServer,
    InProcessTransport,
    ModelState,
    client_edges,
    fit_domain_classifier,
    run_rounds,
    setup_candidates,
)
from manytask.boost.federated.client import EdgeIndex
from manytask.boost.federated.dask import DaskMultiBoostClassifier
from manytask.boost.federated.simulation import as_estimator
from manytask.boost.stumps import candidate_thresholds, presort

N_PER_DOMAIN = 40
CHUNK = 35  # 120 rows in 4 chunks, each holding points of one or two sources


# ----------------------------------------------------------------------- edges, no cluster


def random_shard(seed, m=30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    X[:, 1] = np.round(X[:, 1])  # ties: few distinct values
    return ClientShard(X, rng.choice([-1.0, 1.0], m), 1, rng.dirichlet([1.0, 1.0], size=m))


def candidate_table(X, seed):
    """Unsorted candidates per feature: −inf, data values themselves, duplicates, midpoints."""
    rng = np.random.default_rng(seed)
    features, thresholds = [], []
    for j in range(X.shape[1]):
        values = np.concatenate([[-np.inf], X[:6, j], X[:2, j], rng.normal(size=5)])
        features.append(np.full(values.size, j))
        thresholds.append(rng.permutation(values))
    return np.concatenate(features), np.concatenate(thresholds)


def test_histogram_edges_equal_dense_matrix_and_brute_force():
    shard = random_shard(0)
    state = ModelState().with_term(0, 2, 0.1, -1, 0.4).with_term(1, 0, -0.3, 1, 0.2)
    features, thresholds = candidate_table(shard.X, 1)
    asked = np.stack([np.arange(features.size), np.arange(features.size)[::-1]])
    got = client_edges(state, shard, [1, 0], features[asked], thresholds[asked])["edge_sums"]
    indexed = client_edges(state, shard, [1, 0], features[asked], thresholds[asked],
                           index=EdgeIndex(shard.X, features, thresholds))["edge_sums"]  # fmt: skip
    # dense: (m × n) stump values; brute force: one point and one candidate at a time
    f = 0.4 * shard.domain_probabilities[:, 0] * -np.where(shard.X[:, 2] > 0.1, 1.0, -1.0)
    f += 0.2 * shard.domain_probabilities[:, 1] * np.where(shard.X[:, 0] > -0.3, 1.0, -1.0)
    scaled = np.exp(-shard.y * f)
    for q, k in enumerate([1, 0]):
        weights = scaled * shard.y * shard.domain_probabilities[:, k]
        dense = weights @ np.where(shard.X[:, features[asked[q]]] > thresholds[asked[q]], 1, -1)
        np.testing.assert_allclose(got[q], dense, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(indexed[q], got[q])
        for r in range(0, asked.shape[1], 7):
            j, threshold = features[asked[q, r]], thresholds[asked[q, r]]
            brute = sum(
                weights[i] * (1.0 if shard.X[i, j] > threshold else -1.0)
                for i in range(shard.X.shape[0])
            )
            assert got[q, r] == pytest.approx(brute, rel=1e-12, abs=1e-12)


def test_equal_thresholds_and_empty_intervals_give_identical_edges():
    shard = random_shard(2)
    # three thresholds with no point between them, and one repeated: exact ties, as in the
    # single-process search (which then keeps the lowest threshold)
    low = np.sort(shard.X[:, 0])[:2]
    between = low[0] + np.array([0.25, 0.5, 0.75, 0.5]) * (low[1] - low[0])
    edges = client_edges(ModelState(), shard, [1], np.zeros((1, 4), int), between[None])
    assert np.unique(edges["edge_sums"]).size == 1


def test_edge_index_rejects_thresholds_it_does_not_hold():
    shard = random_shard(3)
    index = EdgeIndex(shard.X, [0, 0], [0.0, 1.0])
    with pytest.raises(ValueError, match="^thresholds of feature 0 must be among"):
        client_edges(ModelState(), shard, [1], np.array([[0]]), np.array([[0.5]]), index=index)
    with pytest.raises(ValueError, match="^thresholds of feature 2 must be among"):
        client_edges(ModelState(), shard, [1], np.array([[2]]), np.array([[0.0]]), index=index)


@pytest.mark.parametrize(
    "options, name",
    [({"step": "lemma1_bound"}, "step"), ({"n_bins": 1}, "n_bins"), ({"mu": -1.0}, "mu"),
     ({"thresholds": "x"}, "thresholds"), ({"retries": -1}, "retries"),
     ({"timeout": 0}, "timeout"), ({"q_sample_size": 0}, "q_sample_size"),
     ({"n_estimators": 0}, "n_estimators"), ({"domain_classifier": "central"}, "domain_classifier"),
     ({"domain_classifier": DomainClassifier()}, "domain_classifier"),
     ({"domain_classifier": None}, "domain_classifier"), ({"max_depth": 0}, "max_depth")],
)  # fmt: skip
def test_bad_parameters_raise_naming_them_before_touching_the_cluster(options, name):
    da = pytest.importorskip("dask.array")
    X, y, domains = three_domains(10)
    with pytest.raises(ValueError, match=f"^{name}"):
        DaskMultiBoostClassifier(**options).fit(da.from_array(X, chunks=(10, 3)), y, domains)


def test_in_memory_estimator_refuses_a_dask_array_and_names_the_dask_estimator():
    da = pytest.importorskip("dask.array")
    X, y, domains = three_domains(10)
    clf = MultiBoostClassifier(n_estimators=2)
    with pytest.raises(ValueError, match="^X must be an in-memory array.*DaskMultiBoostClassifier"):
        clf.fit(da.from_array(X, chunks=(10, 3)), y, domains)
    assert not hasattr(clf, "estimators_")  # nothing half-fitted


def test_multiboost_imports_no_dask_module_and_no_federated_code():
    # The estimator module names nothing of the federated package (no import circle) ...
    from manytask.boost import multiboost

    imported = [
        node.module or ""
        for node in ast.walk(ast.parse(inspect.getsource(multiboost)))
        if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(ast.parse(inspect.getsource(multiboost)))
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert not [name for name in imported if "federated" in name or "dask" in name]
    # ... and importing and fitting it in a fresh interpreter loads no Dask module.
    code = (
        "import json, sys, numpy as np\n"
        "from manytask.boost.multiboost import MultiBoostClassifier\n"
        "X = np.random.default_rng(0).normal(size=(40, 2))\n"
        "MultiBoostClassifier(n_estimators=2).fit(X, X[:, 0] > 0, np.repeat([0, 1], 20))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('dask',\n"
        "      'distributed') or m.startswith('manytask.boost.federated.dask'))))\n"
    )
    assert run_in_fresh_interpreter(code) == []


def test_from_ensemble_rebuilds_a_fitted_estimator_and_checks_its_input():
    X, y, domains = three_domains(30)
    fitted = MultiBoostClassifier(n_estimators=6).fit(X, y, domains)
    rebuilt = MultiBoostClassifier.from_ensemble(
        fitted.estimators_, fitted.estimator_weights_, classes=fitted.classes_,
        domains=fitted.domains_, domain_classifier=fitted.domain_classifier_, n_features_in=3,
        mu=None,
    )  # fmt: skip
    assert rebuilt.n_estimators == len(fitted.estimators_)
    assert rebuilt.domain_classifier is fitted.domain_classifier_
    # f(x) = Σ α_t Q(k_t|x) h_t(x) by hand, independently of the estimator's prediction code
    Q = fitted.domain_classifier_.predict_proba(X)
    by_hand = sum(
        step * Q[:, k] * stump.polarity * np.where(X[:, stump.feature] > stump.threshold, 1, -1)
        for (k, stump), step in zip(fitted.estimators_, fitted.estimator_weights_)
    )
    np.testing.assert_allclose(rebuilt.decision_function(X), by_hand, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(rebuilt.predict(X), fitted.predict(X))
    common = dict(classes=fitted.classes_, domains=fitted.domains_, n_features_in=3,
                  domain_classifier=fitted.domain_classifier_)  # fmt: skip
    with pytest.raises(ValueError, match="^estimator_weights must have shape"):
        MultiBoostClassifier.from_ensemble(fitted.estimators_, [1.0], **common)
    with pytest.raises(ValueError, match="^domain_classifier.classes_ must equal domains"):
        MultiBoostClassifier.from_ensemble(
            fitted.estimators_, fitted.estimator_weights_,
            **{**common, "domains": np.array([0, 1, 5])},
        )  # fmt: skip
    with pytest.raises(ValueError, match="^classes must hold two labels"):
        MultiBoostClassifier.from_ensemble([], [], **{**common, "classes": np.arange(3)})


# ----------------------------------------------------------------------- on a LocalCluster


@pytest.fixture(scope="module")
def dask_client():
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:  # fmt: skip
        with Client(cluster) as client:
            yield client


def data(seed=0):
    import dask.array as da

    X, y, domains = three_domains(N_PER_DOMAIN, seed=seed)
    return X, y, domains, da.from_array(X, chunks=(CHUNK, X.shape[1]))


def assert_same_ensemble(fitted, reference, atol=1e-9):
    assert len(fitted.estimators_) == len(reference.estimators_) > 0
    for (k, stump), (kr, stump_r) in zip(fitted.estimators_, reference.estimators_):
        assert (k, stump) == (kr, stump_r)  # thresholds bit for bit: the same midpoints
    np.testing.assert_allclose(
        fitted.estimator_weights_, reference.estimator_weights_, rtol=0.0, atol=atol
    )


def test_dask_fit_equals_single_process_fit_with_the_same_q(dask_client):
    X, y, domains, X_dask = data()
    q = DomainClassifier().fit(X, domains)
    central = MultiBoostClassifier(n_estimators=8, domain_classifier=q).fit(X, y, domains)
    fitted = DaskMultiBoostClassifier(n_estimators=8, domain_classifier=q).fit(X_dask, y, domains)
    assert isinstance(fitted, MultiBoostClassifier)
    assert fitted.domain_classifier_ is q  # a fitted Q is used as is
    assert_same_ensemble(fitted, central)
    np.testing.assert_allclose(
        fitted.decision_function(X), central.decision_function(X), rtol=0, atol=1e-9
    )
    assert fitted.objective_ == pytest.approx(central.objective_, rel=1e-9)
    # 4 chunks × the sources in each: (0), (0, 1), (1, 2), (2)
    assert fitted.federated_run_.setup["n_clients"] == 6
    assert fitted.federated_run_.setup["thresholds"] == "exact"


def test_soft_max_mu_is_passed_to_the_server_and_equals_single_process_fit(dask_client):
    X, y, domains, X_dask = data(seed=5)
    q = DomainClassifier().fit(X, domains)
    options = dict(n_estimators=5, mu=20.0, domain_classifier=q)
    central = MultiBoostClassifier(**options).fit(X, y, domains)
    fitted = DaskMultiBoostClassifier(**options).fit(X_dask, y, domains)
    assert_same_ensemble(fitted, central)
    assert fitted.objective_ == pytest.approx(central.objective_, rel=1e-9)  # F_μ


def test_central_sample_q_on_all_rows_gives_the_single_process_fit(dask_client):
    X, y, domains, X_dask = data(seed=1)
    y_dask = X_dask[:, 0] * 0 + y  # a dask y with X's row chunks
    central = MultiBoostClassifier(n_estimators=3).fit(X, y, domains)
    fitted = DaskMultiBoostClassifier(n_estimators=3, domain_classifier="central_sample").fit(
        X_dask, y_dask, domains, client=dask_client
    )
    np.testing.assert_allclose(
        fitted.domain_classifier_.predict_proba(X), central.domain_classifier_.predict_proba(X)
    )
    assert_same_ensemble(fitted, central)


def in_process_federated_run(X, y, domains, n_rounds, **transport_options):
    """The default Dask fit rebuilt in process: Q trained over the in-process transport on
    the same clients (built here in NumPy), then the exact candidates and the rounds."""
    shards, by_domain = numpy_shards(X, y, domains, None)
    transport = InProcessTransport(shards, **transport_options)
    q, record = fit_domain_classifier(transport, by_domain, np.unique(domains))
    exact = candidate_thresholds(X.T)
    features, flat, setup = setup_candidates(transport, range(len(shards)), 3, thresholds=exact)
    server = FederatedServer(3, features, flat)
    server.min_probabilities = setup["min_probabilities"]
    history = run_rounds(server, transport, by_domain, n_rounds)
    return q, record, server, history


def test_default_federated_q_equals_in_process_training_on_the_same_clients(dask_client):
    X, y, domains, X_dask = data(seed=6)
    fitted = DaskMultiBoostClassifier(n_estimators=6).fit(X_dask, y, domains)
    q, record, server, history = in_process_federated_run(X, y, domains, 6)
    dask_record = fitted.federated_run_.setup["domain_classifier"]
    assert dask_record["converged"] and record["converged"]
    assert dask_record["log_loss"] == pytest.approx(record["log_loss"], rel=1e-9)
    np.testing.assert_allclose(fitted.domain_classifier_.predict_proba(X), q.predict_proba(X),
                               rtol=0, atol=1e-9)  # fmt: skip
    # the same model as the central default (L-BFGS-B stops at gtol 1e-4 on both sides)
    central_q = DomainClassifier().fit(X, domains)
    np.testing.assert_allclose(fitted.domain_classifier_.predict_proba(X),
                               central_q.predict_proba(X), rtol=0, atol=1e-3)  # fmt: skip
    # the rounds, each one request batch, on the clients' own Q(·|x_i): the in-process run
    np.testing.assert_allclose(fitted.estimator_weights_, server.state.steps, rtol=0, atol=1e-9)
    assert [(k, s.feature, s.threshold, s.polarity) for k, s in fitted.estimators_] == list(
        zip(server.state.domains, server.state.features, server.state.thresholds,
            server.state.polarities)
    )  # fmt: skip
    assert [r["batches"] for r in fitted.federated_run_.history] == [1] * len(history)
    # the set-up's numbers include Q's training
    setup = fitted.federated_run_.setup
    assert setup["numbers_from_clients"] > dask_record["numbers_from_clients"] > 0


@pytest.mark.parametrize("mu", [None, 10.0])
def test_dask_and_in_process_set_ups_search_the_same_candidates_and_give_the_same_model(
    dask_client, monkeypatch, mu
):
    """One set-up for every transport: the Dask fit and the in-process transport on the same
    clients (built here in NumPy) run prepare_server, so the clients' merged quantile sketches
    give the same candidate table, and the model is the same within rounding."""
    from manytask.boost.federated import setup as setup_module
    from manytask.boost.federated.simulation import as_estimator

    X, y, domains, X_dask = data(seed=4)
    tables = []

    def recording(*args, **kwargs):
        features, flat, setup = setup_candidates(*args, **kwargs)
        tables.append((features, flat))
        return features, flat, setup

    monkeypatch.setattr(setup_module, "setup_candidates", recording)
    fitted = DaskMultiBoostClassifier(n_estimators=8, n_bins=8, mu=mu).fit(X_dask, y, domains)
    shards, by_domain = numpy_shards(X, y, domains, None)
    transport = InProcessTransport(shards)
    server, setup, q = setup_module.prepare_server(
        transport, by_domain, np.unique(domains), 3, federated_q=True, n_quantiles=7, mu=mu
    )
    monkeypatch.undo()
    (dask_features, dask_flat), (features, flat) = tables
    np.testing.assert_array_equal(dask_features, features)
    # the sketches are computed by the same NumPy code on the same rows: equal to rounding
    np.testing.assert_allclose(dask_flat, flat, rtol=1e-12, atol=0)
    assert np.isneginf(flat).sum() == 1  # the constant stump, once
    assert fitted.federated_run_.setup["n_candidates"] == setup["n_candidates"] == flat.size
    run = FederatedRun(setup=setup, history=run_rounds(server, transport, by_domain, 8))
    in_process = as_estimator(server.state, q, np.array([0, 1]), np.unique(domains), 3, run, mu)
    # Q trained over either transport to L-BFGS-B's tolerance; the ensembles to rounding
    np.testing.assert_allclose(fitted.domain_classifier_.predict_proba(X),
                               q.predict_proba(X), rtol=0, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(fitted.decision_function(X), in_process.decision_function(X),
                               rtol=0, atol=1e-8)  # fmt: skip
    np.testing.assert_array_equal(fitted.predict(X), in_process.predict(X))


def test_given_binned_candidates_give_the_in_process_run_on_the_same_clients(dask_client):
    # Not compared with MultiBoostClassifier(n_bins=8): its tie fallback (the steepest
    # coordinate) searches exact stumps, outside the binned candidates.
    X, y, domains, X_dask = data(seed=2)
    q = DomainClassifier().fit(X, domains)
    binned = presort(X, n_bins=8)
    thresholds = [
        np.concatenate([[-np.inf], binned.thresholds[j, : binned.n_thresholds[j]]])
        for j in range(X.shape[1])
    ]
    fitted = DaskMultiBoostClassifier(
        n_estimators=6, domain_classifier=q, thresholds=thresholds
    ).fit(X_dask, y, domains)
    shards, by_domain = numpy_shards(X, y, domains, q)
    transport = InProcessTransport(shards)
    features, flat, _ = setup_candidates(transport, range(len(shards)), 3, thresholds)
    server = FederatedServer(3, features, flat)
    run_rounds(server, transport, by_domain, 6)
    # the same clients answer the same requests with the same code; the workers may add the
    # sums in another order, so α to 1e-9 (the choices are the same: continuous data, no two
    # candidates split the points alike)
    np.testing.assert_allclose(fitted.estimator_weights_, server.state.steps, rtol=1e-9, atol=0)
    assert [(k, s.feature, s.threshold, s.polarity) for k, s in fitted.estimators_] == list(
        zip(server.state.domains, server.state.features, server.state.thresholds,
            server.state.polarities)
    )  # fmt: skip


@pytest.mark.parametrize(
    "step, mu", [("adaboost", None), ("exact_line_search", None), ("adaboost", 10.0)]
)
def test_trees_give_the_in_process_tree_run_on_the_same_clients(dask_client, step, mu):
    # max_depth = 2: each chunk's clients propose their source's tree and score the trees of
    # their source; the driver's round is the in-process one, so both ensembles compute the
    # same function (converged quantities within 1e-9: the sums may be added in another
    # order on the workers).
    X, y, domains, X_dask = data(seed=4)
    q = DomainClassifier().fit(X, domains)
    thresholds = candidate_thresholds(X.T)
    fitted = DaskMultiBoostClassifier(
        n_estimators=5, domain_classifier=q, thresholds=thresholds, max_depth=2, step=step, mu=mu
    ).fit(X_dask, y, domains)
    shards, by_domain = numpy_shards(X, y, domains, q)
    transport = InProcessTransport(shards)
    features, flat, setup = setup_candidates(transport, range(len(shards)), 3, thresholds)
    server = FederatedServer(3, features, flat, max_depth=2, step=step, mu=mu)
    server.min_probabilities = setup["min_probabilities"]
    run = FederatedRun(setup, history=run_rounds(server, transport, by_domain, 5))
    reference = as_estimator(server.state, q, np.array([0, 1]), np.unique(domains), 3, run,
                             mu=mu, step=step, max_depth=2)  # fmt: skip
    # no client failed (two worker threads compiling the tree kernels at once once did)
    assert not any(record["failures"] for record in fitted.federated_run_.history)
    assert len(fitted.estimators_) == len(reference.estimators_) > 0
    assert all(np.isfinite(tree.thresholds).sum() > 1 for _, tree in fitted.estimators_[:1])
    np.testing.assert_allclose(
        fitted.decision_function(X), reference.decision_function(X), rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(fitted.estimator_weights_, reference.estimator_weights_,
                               rtol=1e-9)  # fmt: skip


def test_quantile_candidates_are_the_merged_sketches_of_chunk_sources(dask_client):
    X, y, domains, X_dask = data(seed=3)
    fitted = DaskMultiBoostClassifier(n_estimators=4, n_bins=5).fit(X_dask, y, domains)
    levels = np.linspace(0.0, 1.0, 6)[1:-1]
    weights, quantiles = [], []
    for start in range(0, X.shape[0], CHUNK):  # the clients: each chunk's sources, in NumPy
        rows = np.arange(start, min(start + CHUNK, X.shape[0]))
        for label in np.unique(domains[rows]):
            part = X[rows[domains[rows] == label]]
            weights.append(np.full(levels.size, part.shape[0]))
            quantiles.append(np.quantile(part, levels, axis=0).T)
    weights, quantiles = np.concatenate(weights), np.concatenate(quantiles, axis=1)
    expected = []
    for j in range(X.shape[1]):  # weighted quantiles of the reported quantiles, by hand
        order = np.argsort(quantiles[j], kind="stable")
        share = np.cumsum(weights[order]) / weights.sum()
        picked = [quantiles[j][order][min(np.argmax(share >= level), order.size - 1)]
                  for level in levels]  # fmt: skip
        expected.append(np.unique(picked))
    expected[0] = np.concatenate([[-np.inf], expected[0]])  # the constant stump, once
    assert fitted.federated_run_.setup["n_candidates"] == sum(t.size for t in expected)
    for _, stump in fitted.estimators_:
        assert stump.threshold in expected[stump.feature]
    assert fitted.score(X, y) > 0.7


def numpy_shards(X, y, domains, q):
    """The Dask backend's clients built here: each chunk's rows of each source, in order."""
    shards, by_domain = [], [[] for _ in np.unique(domains)]
    probabilities = None if q is None else q.predict_proba(X)
    signs = np.where(y == 1, 1.0, -1.0)
    for start in range(0, X.shape[0], CHUNK):
        rows = np.arange(start, min(start + CHUNK, X.shape[0]))
        for k in np.unique(domains[rows]):
            part = rows[domains[rows] == k]
            by_domain[k].append(len(shards))
            q_part = None if probabilities is None else probabilities[part]
            shards.append(ClientShard(X[part], signs[part], int(k), q_part))
    return shards, by_domain


def failing(client, phase, round_number):
    def fault(t, c, ph):
        if c == client and ph == phase and t >= round_number:
            raise RuntimeError("injected")

    return fault


def test_failing_worker_client_is_dropped_like_in_process(dask_client):
    X, y, domains, X_dask = data(seed=4)
    q = DomainClassifier().fit(X, domains)
    fault = failing(3, "line_search", 2)  # the exact line search's phase
    estimator = DaskMultiBoostClassifier(n_estimators=4, domain_classifier=q,
                                         step="exact_line_search", retries=1)  # fmt: skip
    fitted = estimator.fit(X_dask, y, domains, fault=fault)
    # the same protocol in process, on the same clients, with the same fault
    shards, by_domain = numpy_shards(X, y, domains, q)
    transport = InProcessTransport(shards, retries=1, fault=fault)
    exact = candidate_thresholds(X.T)
    features, flat, _ = setup_candidates(transport, range(len(shards)), 3, thresholds=exact)
    server = FederatedServer(3, features, flat, step="exact_line_search")
    history = run_rounds(server, transport, by_domain, 4)
    np.testing.assert_allclose(fitted.estimator_weights_, server.state.steps, rtol=0, atol=1e-9)
    records = fitted.federated_run_.history
    assert records[1]["restarts"] == 1 and history[1]["restarts"] == 1
    assert {(f["client"], f["phase"]) for f in records[1]["failures"]} == {(3, "line_search")}
    assert all(3 not in sum(record["participants"], []) for record in records[1:])


def test_bad_inputs_raise_naming_them(dask_client):
    import dask.array as da

    X, y, domains, X_dask = data()
    with pytest.raises(ValueError, match="^X must not contain NaN"):
        bad = X.copy()
        bad[5, 1] = np.nan
        DaskMultiBoostClassifier(n_estimators=2).fit(da.from_array(bad, chunks=(CHUNK, 3)), y,
                                                     domains)  # fmt: skip
    with pytest.raises(ValueError, match="^y must contain exactly two classes on dask"):
        DaskMultiBoostClassifier(n_estimators=2).fit(X_dask, y + (domains == 2), domains)
    with pytest.raises(ValueError, match=r"^y must have shape \(120,\)"):
        DaskMultiBoostClassifier(n_estimators=2).fit(X_dask, y[:-1], domains)
    with pytest.raises(ValueError, match="^X has unknown chunk sizes"):
        DaskMultiBoostClassifier(n_estimators=2).fit(X_dask[X_dask[:, 0] > 0], y, domains)
    with pytest.raises(ValueError, match="^sample_weight must be None"):
        DaskMultiBoostClassifier(n_estimators=2).fit(X_dask, y, domains, np.ones(y.size))


def received_arrays(value):
    """Every array (and ClientShard) inside a received object: dicts, lists, tuples walked."""
    if isinstance(value, ClientShard):
        return [value]
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        return [a for item in value.values() for a in received_arrays(item)]
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in received_arrays(item)]
    return []


@pytest.mark.parametrize("q_option", ["federated", "given"])
def test_driver_receives_aggregates_only_never_rows(dask_client, monkeypatch, q_option):
    import dask.array as da
    import distributed
    from distributed.actor import ActorFuture

    # 4 chunks of 150 rows, sources at random: 12 clients of about 50 rows each; 4 candidate
    # thresholds per feature (3 quantiles and −inf), so a message holds at most 3 × 12 edges.
    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 3))
    domains = rng.integers(0, 3, size=600)
    X[:, 2] += domains
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(int)
    sizes = [np.bincount(domains[i : i + 150], minlength=3) for i in range(0, 600, 150)]
    smallest = int(np.min(sizes))
    assert smallest > 3 * 12  # a message cannot be mistaken for a client's rows
    received = []
    gather = distributed.Client._gather

    async def recording_gather(self, futures, *args, **kwargs):
        result = await gather(self, futures, *args, **kwargs)
        received.append(result)
        return result

    actor_result = ActorFuture.result

    def recording_result(self, *args, **kwargs):
        result = actor_result(self, *args, **kwargs)
        received.append(result)
        return result

    monkeypatch.setattr(distributed.Client, "_gather", recording_gather)
    monkeypatch.setattr(ActorFuture, "result", recording_result)
    # the default trains Q over the clients; a fitted Q is used as given
    q = "federated" if q_option == "federated" else DomainClassifier().fit(X, domains)
    fitted = DaskMultiBoostClassifier(n_estimators=5, domain_classifier=q, n_bins=4).fit(
        da.from_array(X, chunks=(150, 3)), y, domains
    )
    monkeypatch.undo()
    assert fitted.federated_run_.setup["n_clients"] == 12
    if q_option == "federated":
        assert fitted.federated_run_.setup["domain_classifier"]["converged"]
    assert fitted.score(X, y) > 0.7
    arrays = [array for value in received for array in received_arrays(value)]
    n_candidates = fitted.federated_run_.setup["n_candidates"]  # 3 × 3 quantiles and −∞
    assert any(a.ndim == 2 and a.shape[1] == n_candidates for a in arrays)  # the edge messages
    assert not [a for a in arrays if isinstance(a, ClientShard)]
    assert max(a.size for a in arrays) < smallest  # no chunk, no client's rows, no column


def test_payload_arrays_reach_an_actor_once_and_resolve_to_the_same_values():
    import pickle

    from manytask.boost.federated.dask_transport import (
        _CACHED_ARRAYS,
        CachedArray,
        SentArrays,
        WorkerClients,
    )

    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=10_000) for _ in range(_CACHED_ARRAYS + 4)]  # 80 kB each
    sent, actor = SentArrays(), WorkerClients({})
    # repeats, more distinct arrays than either side keeps, a payload shared by two clients
    order = [0, 1, 0, *range(2, _CACHED_ARRAYS + 4), 0, 5, 1, 1]
    carried = []
    for i in order:
        shared = {"asked": arrays[i], "small": np.arange(3), "n": 7}
        batch = {0: shared, 1: shared, 2: {"asked": arrays[i].copy()}}
        encoded = sent.encode(batch)
        payloads = {id(p): p for p in encoded.values()}.values()  # each pickled once
        values = [v for p in payloads for v in p.values() if isinstance(v, CachedArray)]
        assert len(values) == 2 and sum(v.value is not None for v in values) <= 1
        carried.append(any(v.value is not None for v in values))
        assert encoded[0] is encoded[1] and encoded[0]["small"] is shared["small"]
        received = pickle.loads(pickle.dumps(encoded))  # what the worker unpickles
        resolved = actor._resolve(received)
        for client in batch:
            assert resolved[client].keys() == batch[client].keys()
            for name, value in batch[client].items():
                np.testing.assert_array_equal(resolved[client][name], value)
        assert list(actor.arrays) == list(sent.held)  # the two records stay in step
    assert len(actor.arrays) == _CACHED_ARRAYS
    # 0 and 1 are sent, 0 comes from the cache, 2..19 are sent, then 0 again (evicted by the
    # 16 since), 5 from the cache, 1 again (evicted), then 1 from the cache
    assert carried == [True, True, False, *[True] * (_CACHED_ARRAYS + 2), True, False, True,
                       False]  # fmt: skip
