"""Tests of FEDMULTIBOOST's protocol and in-process simulation (:mod:`manytask.boost.federated`).

The centralised reference is a dense re-implementation of Figure 1 over the same candidate
stumps (``MultiBoostClassifier`` searches every threshold and cannot be restricted to a given
set): margins, F_k, K_t and the edges are computed on all points at once, not per client.
"""

import time
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import logsumexp
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _helpers import run_in_fresh_interpreter
from manytask.boost import AdaBoost, MultiBoostClassifier, mixture_errors
from manytask.boost.federated import (
    ClientShard,
    ModelState,
    client_edges,
    client_losses_along,
    client_margins,
    client_statistics,
    federated_domain_classifier,
    merge_quantiles,
    protocol,
    respond,
    section_search,
    simulate,
    state_to_payload,
)
from manytask.boost.federated.client import client_bins, client_histograms
from manytask.boost.federated.server import soft_max_aggregate
from manytask.boost.stumps import candidate_thresholds

ACTIVE_RTOL = 1e-9  # K_t tolerance of Figure 1's implementation (objective.ACTIVE_RTOL)


def three_domains(n_per_domain=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(3 * n_per_domain, 3))
    domains = np.repeat([0, 1, 2], n_per_domain)
    X[:, 2] += domains  # Q(k|x) informative
    noise = 0.5 * rng.normal(size=X.shape[0])
    y = (X[:, 0] + 0.8 * (domains - 1) * X[:, 1] + noise > 0).astype(int)
    return X, y, domains


def public_thresholds(X, n=6):
    """Thresholds a server would take from public data: per-feature quantiles."""
    levels = np.linspace(0.0, 1.0, n + 2)[1:-1]
    return [np.unique(np.quantile(X[:, j], levels)) for j in range(X.shape[1])]


def dense_margins(terms, X, signs, Q):
    f = np.zeros(X.shape[0])
    for k, j, threshold, polarity, step in terms:
        f += step * Q[:, k] * polarity * np.where(X[:, j] > threshold, 1.0, -1.0)
    return signs * f


def dense_round(terms, X, signs, domain_index, Q, features, thresholds, step="adaboost"):
    """One round of Figure 1 on pooled data over the candidate stumps (brute force): with
    ``step="adaboost"`` the best active direction and η = ½ log((1 − ε)/ε), ε from its own
    loop; with ``"exact_line_search"`` the directions in turn and the exact line search."""
    p = Q.shape[1]
    scaled = np.exp(-dense_margins(terms, X, signs, Q))
    losses = np.array([scaled[domain_index == k].mean() for k in range(p)])
    active = np.flatnonzero(losses >= losses.max() * (1.0 - ACTIVE_RTOL))
    H = np.where(X[:, features] > thresholds, 1.0, -1.0)
    # cross[l, k, r] = −F_l'(α; e_{k,r}) = (1/m_l) Σ_{i∈S_l} a_i y_i Q(k|x_i) h_r(x_i)
    cross = np.zeros((p, p, features.size))
    for l in range(p):
        for k in range(p):
            for r in range(features.size):
                inside = domain_index == l
                cross[l, k, r] = (
                    np.sum(scaled[inside] * signs[inside] * Q[inside, k] * H[inside, r])
                    / inside.sum()
                )
    best = []
    for k in active:
        edges = cross[k, k]
        r = int(np.argmax(np.abs(edges)))
        polarity = 1 if edges[r] >= 0 else -1
        best.append((abs(edges[r]), (int(k), int(features[r]), float(thresholds[r]), polarity)))
    best.sort(key=lambda item: -item[0])
    best = [item for item in best if item[0] > 0]
    if step == "adaboost":
        if not best:
            return None, 0.0
        k, j, threshold, polarity = best[0][1]
        inside = domain_index == k
        h = polarity * np.where(X[inside, j] > threshold, 1.0, -1.0)
        D = scaled[inside] / scaled[inside].sum()  # D_t(k, ·), Figure 1 line 9
        error = 0.5 * (1.0 - np.sum(D * signs[inside] * Q[inside, k] * h))  # its caption
        return best[0][1], 0.5 * np.log((1.0 - error) / error)
    if active.size > 1:  # the steepest coordinate of max_l F_l, brute force over (k, r, ±)
        rate, choice = 0.0, None
        for k in range(p):  # every domain's Q(k|·), as MultiBoostClassifier searches it
            for r in range(features.size):
                for polarity in (1, -1):
                    value = min(polarity * cross[l, k, r] for l in active)
                    if value > rate:
                        rate = value
                        choice = (int(k), int(features[r]), float(thresholds[r]), polarity)
        if choice is not None and choice not in [direction for _, direction in best]:
            best.append((rate, choice))
    for _, (k, j, threshold, polarity) in best:
        u = signs * Q[:, k] * polarity * np.where(X[:, j] > threshold, 1.0, -1.0)

        def evaluate(steps, u=u):
            terms_ = scaled * np.exp(-np.outer(steps, u))
            losses_ = np.column_stack([terms_[:, domain_index == l].mean(axis=1) for l in range(p)])
            slopes = np.column_stack(
                [-(terms_[:, domain_index == l] @ u[domain_index == l]) / np.sum(
                    domain_index == l) for l in range(p)]
            )  # fmt: skip
            return losses_, slopes

        step, _ = section_search(evaluate)
        if step > 0:
            return (k, j, threshold, polarity), step
    return None, 0.0


def dense_run(X, y, domains, Q, thresholds, n_rounds, step="adaboost"):
    signs = np.where(y == np.unique(y)[1], 1.0, -1.0)
    domain_index = np.unique(domains, return_inverse=True)[1]
    features = np.concatenate([np.full(len(t), j) for j, t in enumerate(thresholds)])
    flat = np.concatenate(thresholds)
    terms = []
    for _ in range(n_rounds):
        direction, eta = dense_round(terms, X, signs, domain_index, Q, features, flat, step)
        if direction is None:
            break
        terms.append((*direction, eta))
    return terms


@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
def test_simulate_with_all_clients_equals_dense_figure1_over_same_candidates(step):
    X, y, domains = three_domains()
    thresholds = public_thresholds(X)
    clf = simulate(X, y, domains, 4, n_rounds=10, random_state=0, thresholds=thresholds,
                   step=step)  # fmt: skip
    Q = clf.domain_classifier_.predict_proba(X)
    terms = dense_run(X, y, domains, Q, thresholds, n_rounds=10, step=step)
    assert len(terms) == len(clf.estimators_) == 10
    for (k, j, threshold, polarity, step), (kf, stump), stepf in zip(
        terms, clf.estimators_, clf.estimator_weights_
    ):
        assert (k, j, threshold, polarity) == (kf, stump.feature, stump.threshold, stump.polarity)
        assert abs(step - stepf) <= 1e-9 * max(1.0, step)
    # the returned estimator is usable: f(x) = Σ α Q(k|x) h(x) recomputed densely
    Xt, yt, dt = three_domains(seed=1)
    Qt = clf.domain_classifier_.predict_proba(Xt)
    dense_f = dense_margins(terms, Xt, np.ones(Xt.shape[0]), Qt)
    np.testing.assert_allclose(clf.decision_function(Xt), dense_f, rtol=1e-9, atol=1e-12)
    errors = mixture_errors(clf, Xt, yt, dt)
    assert errors.agnostic == pytest.approx(errors.domain_errors.max())
    assert clf.score(Xt, yt) > 0.7


def test_quantile_candidates_need_no_pooling_and_match_dense_run():
    X, y, domains = three_domains()
    clf = simulate(X, y, domains, 3, n_rounds=4, random_state=1, n_quantiles=5)
    setup = [m for m in clf.federated_run_.messages if m[1] == "setup"]
    assert setup == []  # messages are recorded only on request
    clf = simulate(X, y, domains, 3, n_rounds=4, random_state=1, n_quantiles=5,
                   record_messages=True)  # fmt: skip
    reports = [message for _, phase, _, message in clf.federated_run_.messages if phase == "setup"]
    thresholds = merge_quantiles(reports, np.linspace(0, 1, 7)[1:-1])
    terms = dense_run(X, y, domains, clf.domain_classifier_.predict_proba(X), thresholds, 4)
    np.testing.assert_allclose([t[4] for t in terms], clf.estimator_weights_, rtol=1e-9)


def test_one_client_quantile_report_merges_to_its_own_quantiles():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 2))
    levels = np.linspace(0, 1, 6)[1:-1]
    report = {"n_points": 50, "quantiles": np.quantile(X, levels, axis=0).T}
    merged = merge_quantiles([report], levels)
    for j in range(2):
        np.testing.assert_array_equal(merged[j], np.unique(np.quantile(X[:, j], levels)))


def test_merged_quantiles_have_pooled_rank_within_two_levels():
    rng = np.random.default_rng(3)
    shards = [rng.uniform(0, 1, 40), rng.uniform(1, 3, 120), rng.uniform(-1, 0, 80)]
    levels = np.linspace(0, 1, 11)[1:-1]
    reports = [{"n_points": s.size, "quantiles": np.quantile(s, levels)[None, :]} for s in shards]
    merged = merge_quantiles(reports, levels)[0]
    pooled = np.concatenate(shards)
    ranks = np.array([np.mean(pooled <= t) for t in merged])
    # each reported quantile stands for m_c/L points, so a merged rank is off by ≤ 2/L
    nearest = np.abs(ranks[:, None] - levels[None, :]).min(axis=1)
    assert merged.size == levels.size
    assert np.all(nearest <= 2.0 / levels.size)


@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
def test_client_messages_have_no_per_example_values(step):
    sizes = {}
    for n_per_domain in (30, 300):
        X, y, domains = three_domains(n_per_domain, seed=4)
        clf = simulate(X, y, domains, 2, r=1, s=5, n_rounds=3, random_state=0, n_quantiles=4,
                       record_messages=True, step=step)  # fmt: skip
        seen = {}
        for _, phase, _client, message in clf.federated_run_.messages:
            for key, value in message.items():
                assert np.ndim(value) <= 2
                seen.setdefault((phase, key), set()).add(np.size(value))
        sizes[n_per_domain] = seen
    # numbers per message: m_c and Φ-sum, s edges (p·s with the line search's tie fallback),
    # 2 per trial step, d·L quantiles, Q's 2d + 1 moments and R(d + 1) + 2 loss and gradient
    # sums (R = p = 3 rows), p minima of Q at set-up
    assert sizes[30] == sizes[300]
    assert sizes[30][("round", "loss_sum")] == {1}
    assert sizes[30][("round", "edge_sums")] == ({5} if step == "adaboost" else {15})
    assert sizes[30][("setup", "quantiles")] == {3 * 4}
    assert sizes[30][("domain_moments", "m2")] == {3}
    assert sizes[30][("domain_loss", "coef_grad")] == {3 * 3}
    assert sizes[30][("domain_loss", "intercept_grad")] == {3}
    assert sizes[30][("candidates", "min_probabilities")] == {3}
    if step == "adaboost":  # the step comes from the edges: no line-search exchange
        assert not any(phase == "line_search" for phase, _ in sizes[30])
    else:
        assert sizes[30][("line_search", "loss_sums")] <= {1, 15, 16}  # bracket, section, check


def test_sampling_r_clients_and_s_candidates_is_reproducible():
    X, y, domains = three_domains(seed=5)
    kwargs = dict(r=2, s=4, n_rounds=5, random_state=7, record_messages=True)
    first = simulate(X, y, domains, 4, **kwargs)
    second = simulate(X, y, domains, 4, **kwargs)
    np.testing.assert_array_equal(first.estimator_weights_, second.estimator_weights_)
    for record in first.federated_run_.history:
        assert [len(ids) for ids in record["participants"]] == [2, 2, 2]
    edges = [m for _, phase, _, m in first.federated_run_.messages if phase == "round"]
    assert edges and all(m["edge_sums"].shape == (1, 4) for m in edges)
    other = simulate(X, y, domains, 4, **{**kwargs, "random_state": 8})
    assert first.federated_run_.history[0]["participants"] != other.federated_run_.history[0][
        "participants"
    ] or not np.array_equal(first.estimator_weights_, other.estimator_weights_)


def fail(round_number, client, phase, *, once=False):
    """Fault injection: ``client`` fails at (round, phase); ``once``: only then, else from
    then on in every call."""
    tripped = []

    def fault(t, c, ph):
        if c != client:
            return
        if (t, ph) == (round_number, phase) and not tripped:
            tripped.append(1)
            raise TimeoutError("injected")
        if tripped and not once:
            raise RuntimeError("injected, permanent")

    return fault


@pytest.mark.parametrize("mu", [None, 10.0])
def test_transient_failure_is_retried_and_changes_nothing(mu):
    X, y, domains = three_domains(seed=6)
    clean = simulate(X, y, domains, 3, n_rounds=5, random_state=0, mu=mu)
    retried = simulate(X, y, domains, 3, n_rounds=5, random_state=0, retries=1, mu=mu,
                       fault=fail(3, 7, "round", once=True))  # fmt: skip
    # one path, one process: the rounds before the fault are the same computation, bit for bit
    np.testing.assert_array_equal(clean.estimator_weights_, retried.estimator_weights_)
    failures = retried.federated_run_.history[2]["failures"]
    assert [(f["client"], f["phase"], f["attempt"]) for f in failures] == [(7, "round", 0)]
    assert retried.federated_run_.history[2]["batches"] == 2  # the round and its retry
    assert retried.federated_run_.history[2]["restarts"] == 0


@pytest.mark.parametrize("phase", ["round", "line_search"])
def test_dropped_client_round_equals_dense_round_without_it(phase):
    X, y, domains = three_domains(seed=7)
    kwargs = dict(n_rounds=5, random_state=0, step="exact_line_search")  # has a line_search phase
    clean = simulate(X, y, domains, 3, **kwargs)
    faulty = simulate(X, y, domains, 3, fault=fail(3, 1, phase), **kwargs)
    run = faulty.federated_run_
    # one path, one process: the rounds before the fault are the same computation, bit for bit
    np.testing.assert_array_equal(clean.estimator_weights_[:2], faulty.estimator_weights_[:2])
    assert len(faulty.estimators_) == 5
    for record in run.history[2:]:
        assert 1 not in sum(record["participants"], [])
    assert run.history[2]["restarts"] == 1 and run.history[2]["failures"][0]["client"] == 1
    # round 3 is a whole round of the clients that answered: the dense Figure 1 round on their
    # points from the state after round 2 (no half-update from the failed attempt)
    keep = np.sort(np.concatenate([p for c, p in enumerate(run.client_points) if c != 1]))
    Q = faulty.domain_classifier_.predict_proba(X)
    terms = [(k, s.feature, s.threshold, s.polarity, a) for (k, s), a in
             zip(faulty.estimators_[:2], faulty.estimator_weights_[:2])]  # fmt: skip
    signs = np.where(y == 1, 1.0, -1.0)
    # the candidate thresholds of the run: same split (same seed), same quantile reports
    reports = simulate(X, y, domains, 3, n_rounds=1, random_state=0, record_messages=True)
    setup = [m for _, ph, _, m in reports.federated_run_.messages if ph == "setup"]
    merged = merge_quantiles(setup, np.linspace(0, 1, 18)[1:-1])
    features = np.concatenate([np.full(len(t), j) for j, t in enumerate(merged)])
    direction, step = dense_round(terms, X[keep], signs[keep], domains[keep], Q[keep], features,
                                  np.concatenate(merged), "exact_line_search")  # fmt: skip
    k, stump = faulty.estimators_[2]
    assert direction == (k, stump.feature, stump.threshold, stump.polarity)
    assert abs(step - faulty.estimator_weights_[2]) <= 1e-9 * max(1.0, step)


def test_domain_without_any_client_skips_the_round_and_reports_it():
    X, y, domains = three_domains(seed=8)
    faulty = simulate(X, y, domains, 1, n_rounds=3, random_state=0, fault=fail(2, 0, "round"))
    history = faulty.federated_run_.history
    assert history[1]["stop"] == "a domain has no client" and history[1]["step"] == 0.0
    assert [len(ids) for ids in history[1]["participants"]] == [0, 1, 1]
    assert len(faulty.estimators_) == 1  # rounds 2 and 3 skipped: client 0 never answers
    assert faulty.history_[1]["stump"] is None


def test_section_search_matches_brute_force_minimum():
    rng = np.random.default_rng(9)
    a = rng.uniform(0.1, 1.0, size=(3, 20))
    u = rng.uniform(-1.0, 1.0, size=(3, 20))

    def evaluate(steps):
        terms = a[None] * np.exp(-steps[:, None, None] * u[None])
        return terms.sum(axis=2), -(terms * u[None]).sum(axis=2)

    step, exchanges = section_search(evaluate)
    grid = np.linspace(0.0, 10.0, 200001)
    values = evaluate(grid)[0].max(axis=1)
    assert exchanges < 20
    assert abs(step - grid[np.argmin(values)]) <= 2 * (grid[1] - grid[0])
    assert evaluate(np.array([step]))[0].max() <= values.min() + 1e-12


def test_client_functions_compute_the_sums_of_figure2():
    rng = np.random.default_rng(10)
    X, y = rng.normal(size=(7, 2)), rng.choice([-1.0, 1.0], 7)
    Q = rng.dirichlet([1.0, 1.0], size=7)
    shard = ClientShard(X, y, 1, Q)
    state = ModelState().with_term(0, 1, 0.2, -1, 0.7)
    f = 0.7 * Q[:, 0] * -np.where(X[:, 1] > 0.2, 1.0, -1.0)
    a = [np.exp(-y[i] * f[i]) for i in range(7)]
    assert client_statistics(state, shard)["loss_sum"] == pytest.approx(sum(a))
    h = np.where(X[:, 0] > -0.1, 1.0, -1.0)
    edge = sum(a[i] * y[i] * Q[i, 1] * h[i] for i in range(7))
    got = client_edges(state, shard, [1], np.array([[0]]), np.array([[-0.1]]))["edge_sums"]
    assert got[0, 0] == pytest.approx(edge)
    u = y * Q[:, 1] * h
    along = client_losses_along(state, shard, (1, 0, -0.1, 1), np.array([0.5]))
    assert along["loss_sums"][0] == pytest.approx(sum(a[i] * np.exp(-0.5 * u[i]) for i in range(7)))


@pytest.mark.parametrize(
    "kwargs, name",
    [({"r": 0}, "r"), ({"s": -1}, "s"), ({"clients_per_domain": 0}, "clients_per_domain"),
     ({"n_rounds": 0}, "n_rounds"), ({"retries": -1}, "retries"),
     ({"n_quantiles": 0}, "n_quantiles"), ({"timeout": 0.0}, "timeout"),
     ({"thresholds": [np.zeros(1)]}, "thresholds")],
)  # fmt: skip
def test_bad_parameters_raise_naming_them(kwargs, name):
    X, y, domains = three_domains(10)
    arguments = {"clients_per_domain": 2, **kwargs}
    with pytest.raises(ValueError, match=f"^{name} must"):
        simulate(X, y, domains, **arguments)


def test_timed_out_clients_leave_the_model_untouched_and_are_reported(monkeypatch):
    X, y, domains = three_domains(20, seed=11)
    thresholds = public_thresholds(X)
    # The transport's clock, advanced by the fault instead of sleeping: a round answer takes
    # a minute by that clock whatever the machine's load, the set-up its real time (≪ 5 s).
    delay = [0.0]
    monkeypatch.setattr(
        protocol, "time", SimpleNamespace(perf_counter=lambda: time.perf_counter() + delay[0])
    )

    def slow_rounds(round_number, client, phase):  # set-up answers in time, rounds too late
        if phase == "round":
            delay[0] += 60.0

    clf = simulate(X, y, domains, 1, n_rounds=2, random_state=0, thresholds=thresholds,
                   timeout=5.0, retries=1, fault=slow_rounds)  # fmt: skip
    assert clf.federated_run_.setup["failures"] == []
    assert len(clf.estimators_) == 0 and clf.estimator_weights_.size == 0
    for record in clf.federated_run_.history:
        assert record["stop"] == "a domain has no client"
        assert {f["attempt"] for f in record["failures"]} == {0, 1}
        assert all("TimeoutError" in f["error"] for f in record["failures"])


def test_setup_failure_is_reported_and_the_client_still_trains():
    X, y, domains = three_domains(seed=12)
    clf = simulate(
        X, y, domains, 2, n_rounds=2, random_state=0, fault=fail(0, 3, "setup", once=True)
    )
    assert [f["client"] for f in clf.federated_run_.setup["failures"]] == [3]
    assert 3 in sum(clf.federated_run_.history[0]["participants"], [])
    assert len(clf.estimators_) == 2


def test_all_midpoint_candidates_reproduce_multiboost_classifier():
    X, y, domains = three_domains(25, seed=0)
    midpoints = []
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])  # MultiBoost's exact search: −inf and every midpoint
        midpoints.append(np.concatenate([[-np.inf], 0.5 * values[:-1] + 0.5 * values[1:]]))
    fed = simulate(X, y, domains, 3, n_rounds=8, random_state=0, thresholds=midpoints)
    central = MultiBoostClassifier(n_estimators=8).fit(X, y, domains=domains)
    assert_same_ensemble(fed, central, X)


def test_separating_stump_takes_multiboost_finite_step_and_stops():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(40, 2))
    y = (X[:, 1] > 0.1).astype(int)
    domains = np.zeros(40, int)
    values = np.unique(X[:, 1])
    midpoints = [np.array([0.0]), 0.5 * values[:-1] + 0.5 * values[1:]]
    fed = simulate(X, y, domains, 4, n_rounds=5, random_state=0, thresholds=midpoints)
    central = MultiBoostClassifier(n_estimators=5).fit(X, y, domains=domains)
    # one domain: Q = 1, so η = (1 + 0)/1 = 1, as in MultiBoostClassifier (and scikit-learn)
    np.testing.assert_array_equal(fed.estimator_weights_, [1.0])
    np.testing.assert_array_equal(central.estimator_weights_, [1.0])
    assert fed.estimators_[0][1] == central.estimators_[0][1]
    assert fed.federated_run_.history[-1]["stop"] == "separating direction"
    assert fed.score(X, y) == 1.0


# ---------------------------------------------------------------- soft-max and pooled baseline


def all_midpoints(X):
    """MultiBoost's exact candidate set: −inf and every midpoint of each feature."""
    thresholds = []
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        thresholds.append(np.concatenate([[-np.inf], 0.5 * values[:-1] + 0.5 * values[1:]]))
    return thresholds


def assert_same_ensemble(fed, central, X):
    """The two ensembles compute the same function on the training points, to 1e-9.

    Term by term they may differ: stumps that agree on every training point (a −inf stump on
    any feature, say) tie exactly, and the two sides add the same sums in another order, so
    rounding may break such a tie either way, on this CPU or another. The decision function
    on the training points does not depend on that choice; 1e-9 is the issue's tolerance for
    α, over ≤ 15 terms with |Q h| ≤ 1.
    """
    np.testing.assert_allclose(
        fed.decision_function(X), central.decision_function(X), rtol=0.0, atol=1e-9
    )
    np.testing.assert_array_equal(fed.predict(X), central.predict(X))


def test_soft_max_all_midpoint_candidates_reproduce_multiboost_classifier_mu():
    X, y, domains = three_domains(25, seed=0)
    fed = simulate(X, y, domains, 3, n_rounds=15, random_state=0, thresholds=all_midpoints(X),
                   mu=10)  # fmt: skip
    central = MultiBoostClassifier(n_estimators=15, mu=10).fit(X, y, domains=domains)
    assert len(fed.estimators_) == 15 and fed.mu == 10.0
    assert_same_ensemble(fed, central, X)
    # the server's soft-max weights p = softmax(μ F) from pooled client sums, after the last
    # round (the same function on the training points gives the same F_k)
    last, last_c = fed.history_[-1], central.history_[-1]
    np.testing.assert_allclose(last["soft_weights"], last_c["soft_weights"], rtol=1e-9)
    assert last["objective"] == pytest.approx(last_c["objective"], rel=1e-9)


def test_soft_max_edges_ask_every_domain_and_wire_counts_add_up():
    X, y, domains = three_domains(30, seed=3)
    n_rounds, s, p = 3, 4, 3
    clf = simulate(X, y, domains, 2, s=s, n_rounds=n_rounds, random_state=0, n_quantiles=6,
                   mu=10, record_messages=True)  # fmt: skip
    run = clf.federated_run_
    n_clients = len(run.client_points)
    for record in run.history:
        t = record["round"]
        answers = [m for rnd, ph, _, m in run.messages if (rnd, ph) == (t, "round")]
        assert len(answers) == n_clients  # every client of every domain answers
        assert all(m["edge_sums"].shape == (p, s) for m in answers)
        assert record["batches"] == 1 and record["exchanges"] == 0  # the AdaBoost step
        # out: state_start and the term committed last round (5, none in round 1), the rows'
        # domains p and the asked candidates p·s
        expected_to = n_clients * (1 + 5 * (t > 1) + p + p * s)
        # back: m_c and Φ-sum, p·s edges
        expected_from = n_clients * (2 + p * s)
        assert (record["numbers_to_clients"], record["numbers_from_clients"]) == (
            expected_to,
            expected_from,
        )


def test_soft_max_section_search_matches_brute_force_minimum():
    rng = np.random.default_rng(14)
    a = rng.uniform(0.1, 1.0, size=(3, 20))
    u = rng.uniform(-1.0, 1.0, size=(3, 20))
    mu = 4.0

    def evaluate(steps):
        terms = a[None] * np.exp(-steps[:, None, None] * u[None])
        return terms.sum(axis=2), -(terms * u[None]).sum(axis=2)

    step, exchanges = section_search(evaluate, aggregate=soft_max_aggregate(mu))
    grid = np.linspace(0.0, 10.0, 200001)
    values = logsumexp(mu * evaluate(grid)[0], axis=1) / mu  # F_μ on the grid
    assert exchanges < 20
    assert abs(step - grid[np.argmin(values)]) <= 2 * (grid[1] - grid[0])
    at_step = logsumexp(mu * evaluate(np.array([step]))[0]) / mu
    assert at_step <= values.min() + 1e-12
    # the soft minimiser is not the hard one (else this test could not tell them apart)
    hard_step, _ = section_search(evaluate)
    assert abs(hard_step - step) > 10 * (grid[1] - grid[0])


def test_soft_max_separating_stump_takes_multiboost_finite_step():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(40, 2))
    y = (X[:, 1] > 0.1).astype(int)
    domains = np.zeros(40, int)
    fed = simulate(X, y, domains, 4, n_rounds=5, random_state=0, thresholds=all_midpoints(X),
                   mu=5.0)  # fmt: skip
    central = MultiBoostClassifier(n_estimators=5, mu=5.0).fit(X, y, domains=domains)
    np.testing.assert_array_equal(central.estimator_weights_, [1.0])  # (1 + 0)/min Q, Q = 1
    np.testing.assert_array_equal(fed.estimator_weights_, central.estimator_weights_)
    assert fed.estimators_[0][1] == central.estimators_[0][1]
    assert fed.federated_run_.history[-1]["stop"] == "separating direction"


def dense_soft_round(terms, X, signs, domain_index, Q, features, thresholds, mu):
    """One round on F_μ over the candidate stumps, brute force on pooled points: the rates
    −F_μ'(α; e_{q,r}) by loops, the step by brentq on dF_μ/dη = Σ_l softmax(μF)_l F_l'."""
    p = Q.shape[1]
    scaled = np.exp(-dense_margins(terms, X, signs, Q))
    losses = np.array([scaled[domain_index == l].mean() for l in range(p)])
    weights = np.exp(mu * losses - logsumexp(mu * losses))
    H = np.where(X[:, features] > thresholds, 1.0, -1.0)
    rates = np.zeros((p, features.size))
    for q in range(p):
        for r in range(features.size):
            for l in range(p):
                inside = domain_index == l
                edge = np.sum(scaled[inside] * signs[inside] * Q[inside, q] * H[inside, r])
                rates[q, r] += weights[l] * edge / inside.sum()
    q, r = np.unravel_index(np.argmax(np.abs(rates)), rates.shape)
    polarity = 1 if rates[q, r] >= 0 else -1
    u = signs * Q[:, q] * polarity * H[:, r]

    def slope(step):
        along = scaled * np.exp(-step * u)
        values = np.array([along[domain_index == l].mean() for l in range(p)])
        slopes = np.array([-(along * u)[domain_index == l].mean() for l in range(p)])
        return np.exp(mu * values - logsumexp(mu * values)) @ slopes

    step = brentq(slope, 0.0, 50.0, xtol=1e-15, rtol=1e-15)
    return (int(q), int(features[r]), float(thresholds[r]), polarity), step


def test_soft_max_dropped_client_round_equals_dense_soft_round_without_it():
    X, y, domains = three_domains(30, seed=7)
    thresholds = public_thresholds(X)
    kwargs = dict(n_rounds=4, random_state=0, thresholds=thresholds, mu=10.0,
                  step="exact_line_search")  # fmt: skip
    clean = simulate(X, y, domains, 3, **kwargs)
    faulty = simulate(X, y, domains, 3, fault=fail(3, 1, "round"), **kwargs)
    run = faulty.federated_run_
    # one path, one process: the rounds before the fault are the same computation, bit for bit
    np.testing.assert_array_equal(clean.estimator_weights_[:2], faulty.estimator_weights_[:2])
    assert run.history[2]["restarts"] == 1 and run.history[2]["failures"][0]["client"] == 1
    assert len(faulty.estimators_) == 4
    keep = np.sort(np.concatenate([p for c, p in enumerate(run.client_points) if c != 1]))
    Q = faulty.domain_classifier_.predict_proba(X)
    terms = [(k, s.feature, s.threshold, s.polarity, a) for (k, s), a in
             zip(faulty.estimators_[:2], faulty.estimator_weights_[:2])]  # fmt: skip
    features = np.concatenate([np.full(len(t), j) for j, t in enumerate(thresholds)])
    direction, step = dense_soft_round(terms, X[keep], np.where(y[keep] == 1, 1.0, -1.0),
                                       domains[keep], Q[keep], features,
                                       np.concatenate(thresholds), 10.0)  # fmt: skip
    k, stump = faulty.estimators_[2]
    assert direction == (k, stump.feature, stump.threshold, stump.polarity)
    assert abs(step - faulty.estimator_weights_[2]) <= 1e-9 * max(1.0, step)


def unequal_domains():
    """Three sources of 10, 40 and 25 points: clients of very different sizes."""
    X, y, domains = three_domains(40, seed=2)
    keep = np.r_[0:10, 40:80, 80:105]
    return X[keep], y[keep], domains[keep]


def test_pooled_baseline_equals_adaboost_and_one_domain_multiboost_on_the_union():
    X, y, domains = unequal_domains()
    fed = simulate(X, y, domains, 3, n_rounds=12, random_state=0, thresholds=all_midpoints(X),
                   pooled=True)  # fmt: skip
    sizes = [points.size for points in fed.federated_run_.client_points]
    assert min(sizes) <= 4 and max(sizes) >= 13  # FedAvg's size weighting matters here
    ada = AdaBoost(n_estimators=12).fit(X, y)
    one_domain = MultiBoostClassifier(n_estimators=12).fit(X, y)
    assert fed.domains_.tolist() == [0] and len(fed.estimators_) == 12
    assert all(k == 0 for k, _ in fed.estimators_)
    assert_same_ensemble(fed, ada, X)
    assert_same_ensemble(fed, one_domain, X)


def test_pooled_baseline_keeps_the_clients_and_samples_r_of_all():
    X, y, domains = unequal_domains()
    kwargs = dict(n_rounds=4, random_state=5, n_quantiles=6)
    multi = simulate(X, y, domains, 3, **kwargs)
    pooled = simulate(X, y, domains, 3, r=2, pooled=True, **kwargs)
    # the same clients (each still holds points of one source), now all in domain 0
    for points, points_multi in zip(
        pooled.federated_run_.client_points, multi.federated_run_.client_points, strict=True
    ):
        np.testing.assert_array_equal(points, points_multi)
    n_clients = len(pooled.federated_run_.client_points)
    for record in pooled.federated_run_.history:
        (ids,) = record["participants"]
        assert len(ids) == 2 and set(ids) <= set(range(n_clients))
    assert np.all(pooled.domain_classifier_.predict_proba(X) == 1.0)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"mu": 0.0}, "mu"), ({"mu": -1.0}, "mu"), ({"mu": np.inf}, "mu"), ({"mu": "10"}, "mu"),
     ({"mu": True}, "mu"), ({"pooled": "yes"}, "pooled"),
     ({"pooled": True, "domain_classifier": MultiBoostClassifier()}, "domain_classifier")],
)  # fmt: skip
def test_bad_soft_max_and_pooled_parameters_raise_naming_them(kwargs, name):
    X, y, domains = three_domains(10)
    with pytest.raises(ValueError, match=f"^{name} must"):
        simulate(X, y, domains, 2, **kwargs)


# ------------------------------------------------- the paper's round: one batch, O(p·s) numbers


@pytest.mark.parametrize("mu", [None, 10.0])
def test_a_round_is_one_request_batch_of_at_most_4p_s_plus_2_numbers_per_client(mu):
    X, y, domains = three_domains(30, seed=3)
    p, s = 3, 4
    clf = simulate(X, y, domains, 3, r=2, s=s, n_rounds=6, random_state=1, n_quantiles=6,
                   mu=mu, record_messages=True)  # fmt: skip
    run = clf.federated_run_
    rows = 1 if mu is None else p  # Figure 2's own row, or every domain's for F_μ's direction
    for record in run.history:
        assert record["batches"] == 1 and record["exchanges"] == 0
        messages = [m for rnd, _, _, m in run.messages if rnd == record["round"]]
        participants = sum(record["participants"], [])
        assert len(messages) == len(participants)  # one answer per participant, no other
        for message in messages:
            numbers = sum(np.size(value) for value in message.values())
            assert numbers == 2 + rows * s <= 4 * p * (s + 2)
        assert record["numbers_from_clients"] == len(participants) * (2 + rows * s)


def test_each_client_receives_the_terms_it_has_not_seen_and_rounds_equal_dense_rounds():
    # r = 1 of 3 clients per domain: a client sampled again after k rounds away receives
    # the k terms committed meanwhile (5 numbers each); every round equals Figure 1's round
    # on the participants' points from the same state (so no client used a stale f).
    X, y, domains = three_domains(seed=9)
    thresholds = public_thresholds(X)
    features = np.concatenate([np.full(len(t), j) for j, t in enumerate(thresholds)])
    flat = np.concatenate(thresholds)
    clf = simulate(X, y, domains, 3, r=1, n_rounds=8, random_state=2, thresholds=thresholds)
    run = clf.federated_run_
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == 1, 1.0, -1.0)
    terms = [(k, stump.feature, stump.threshold, stump.polarity, step) for (k, stump), step
             in zip(clf.estimators_, clf.estimator_weights_)]  # fmt: skip
    known, resent = {}, 0
    for t, record in enumerate(run.history):
        participants = sum(record["participants"], [])
        missing = [t - known.get(c, 0) for c in participants]
        resent += sum(m > 1 for m in missing)
        # per participant: state_start, 5 per missing term, its domain and s candidate indices
        assert record["numbers_to_clients"] == sum(1 + 5 * m + 1 + flat.size for m in missing)
        known.update({c: t for c in participants})  # answered on the t terms of round t
        keep = np.sort(np.concatenate([run.client_points[c] for c in participants]))
        direction, step = dense_round(terms[:t], X[keep], signs[keep], domains[keep], Q[keep],
                                      features, flat)  # fmt: skip
        assert direction == terms[t][:4]
        assert abs(step - terms[t][4]) <= 1e-9 * max(1.0, step)
    assert resent > 0  # some client did miss rounds


def test_a_client_that_kept_more_terms_than_acknowledged_drops_them():
    # its last answer was lost: the server resends from the last term it knows the client
    # holds; the client's margins equal those recomputed from scratch
    rng = np.random.default_rng(15)
    X, y = rng.normal(size=(9, 2)), rng.choice([-1.0, 1.0], 9)
    shard = ClientShard(X, y, 0, rng.dirichlet([1.0, 1.0], size=9))
    _, kept = respond("candidates", shard, {"features": [0, 1], "thresholds": [0.0, 0.3]}, {})
    state = ModelState().with_term(0, 0, 0.0, 1, 0.4).with_term(1, 1, 0.3, -1, 0.2)
    request = {"state_start": 0, **state_to_payload(state), "domains": [0], "asked": [[0, 1]]}
    _, kept = respond("round", shard, request, kept)  # the answer "lost"
    other = state.head(1).with_term(1, 0, 0.0, -1, 0.7)
    request = {"state_start": 1, **state_to_payload(other.tail(1)), "domains": [0],
               "asked": [[0, 1]]}  # fmt: skip
    message, kept = respond("round", shard, request, kept)
    np.testing.assert_allclose(kept["margins"], client_margins(other, shard), rtol=1e-15)
    fresh, _ = respond("round", shard, {**request, "state_start": 0,
                                        **state_to_payload(other)}, {**kept, "state": ModelState(),
                                                                     "margins": None})  # fmt: skip
    assert message["loss_sum"] == pytest.approx(fresh["loss_sum"], rel=1e-15)
    with pytest.raises(ValueError, match="state_start must be <= the 2 terms"):
        respond("round", shard, {**request, "state_start": 3}, kept)


def with_duplicate_feature(X):
    """X and a copy of its column 0 last: each stump on feature 0 ties exactly with its copy."""
    return np.column_stack([X, X[:, 0]])


@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
def test_all_clients_and_the_exact_candidates_equal_multiboost_round_by_round(step):
    # The server's table is the exact search's (candidate_thresholds), Q the same central
    # one; ties by construction: every F_k = 1 in round 1 (all domains active) and each
    # stump on feature 0 ties with its copy on feature 3, so both keep feature 0's.
    X, y, domains = three_domains(25, seed=0)
    X = with_duplicate_feature(X)
    thresholds = candidate_thresholds(X.T)
    fed = simulate(X, y, domains, 3, n_rounds=10, random_state=0, thresholds=thresholds,
                   step=step, domain_classifier="central")  # fmt: skip
    central = MultiBoostClassifier(n_estimators=10, step=step).fit(X, y, domains=domains)
    assert len(fed.history_[0]["active"]) == 3 == len(central.history_[0]["active"])
    assert len(fed.estimators_) == len(central.estimators_) == 10
    assert all(stump.feature != 3 for _, stump in fed.estimators_)
    assert_same_ensemble(fed, central, X)
    for entry, entry_c in zip(fed.history_, central.history_, strict=True):
        assert entry["domain"] == entry_c["domain"]
        assert entry["step"] == pytest.approx(entry_c["step"], rel=1e-9)
        if step == "adaboost":
            assert entry["error"] == pytest.approx(entry_c["error"], rel=1e-9)
    if step == "adaboost":
        assert fed.federated_run_.history[-1]["batches"] == 1


# ------------------------------------------------------------------ Q(k|x) without pooling


@pytest.mark.parametrize("n_domains", [2, 3])
def test_federated_q_equals_logistic_regression_on_the_pooled_inputs(n_domains):
    X, _, domains = three_domains(40, seed=16)
    keep = domains < n_domains
    X, domains = X[keep] * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0], domains[keep]  # unequal scales
    q, record = federated_domain_classifier(X, domains, 3, random_state=0, tol=1e-10)
    assert record["converged"]
    pooled = make_pipeline(StandardScaler(), LogisticRegression(tol=1e-10, max_iter=1000))
    pooled.fit(X, domains)  # scikit-learn on the pooled inputs, the same penalty (C = 1)
    reference = pooled.predict_proba(X)
    np.testing.assert_allclose(q.predict_proba(X), reference, atol=1e-7)
    assert record["log_loss"] == pytest.approx(log_loss(domains, reference), rel=1e-9)
    scaler, regression = pooled[0], pooled[1]
    model = q.estimator_  # input-space parameters: coef = W/σ, intercept = b − coef·μ
    np.testing.assert_allclose(model.coef * scaler.scale_, regression.coef_, atol=1e-6)
    np.testing.assert_allclose(model.intercept + model.coef @ scaler.mean_,
                               regression.intercept_, atol=1e-6)  # fmt: skip


def test_federated_q_messages_carry_sums_only_and_simulate_uses_it_by_default():
    sizes = {}
    for n_per_domain in (20, 200):
        X, y, domains = three_domains(n_per_domain, seed=17)
        clf = simulate(X, y, domains, 2, n_rounds=2, random_state=0, record_messages=True)
        for _, phase, _, message in clf.federated_run_.messages:
            if phase.startswith("domain_"):
                for key, value in message.items():
                    sizes.setdefault(n_per_domain, {}).setdefault((phase, key), set()).add(
                        np.size(value)
                    )
        setup = clf.federated_run_.setup
        record = setup["domain_classifier"]
        assert record["converged"] and record["batches"] == record["evaluations"] + 2
        assert setup["numbers_from_clients"] > record["numbers_from_clients"] > 0
        central = simulate(X, y, domains, 2, n_rounds=2, random_state=0,
                           domain_classifier="central")  # fmt: skip
        assert "domain_classifier" not in central.federated_run_.setup
    # no message grows with the points: (m_c, mean, M2) and (loss, gradient sums), d = 3
    assert sizes[20] == sizes[200]
    assert sizes[20][("domain_moments", "mean")] == {3}
    assert sizes[20][("domain_loss", "coef_grad")] == {9}
    assert sizes[20][("domain_model", "n_clipped")] == {1}


def test_federated_q_training_drops_a_failing_client_and_reports_it():
    X, y, domains = three_domains(30, seed=18)
    clf = simulate(X, y, domains, 2, n_rounds=2, random_state=0,
                   fault=fail(0, 4, "domain_loss"))  # fmt: skip
    record = clf.federated_run_.setup["domain_classifier"]
    assert record["converged"] and record["restarts"] == 1
    assert {f["client"] for f in record["failures"]} == {4}
    assert 4 not in sum(clf.federated_run_.history[0]["participants"], [])


@pytest.mark.parametrize("value", ["pooled", None, 3])
def test_bad_domain_classifier_raises_naming_it(value):
    X, y, domains = three_domains(10)
    with pytest.raises(ValueError, match="^domain_classifier must be one of"):
        simulate(X, y, domains, 2, domain_classifier=value)


def test_a_client_back_after_a_failure_is_sent_every_term():
    X, y, domains = three_domains(seed=19)
    thresholds = public_thresholds(X)
    n = sum(len(t) for t in thresholds)
    clean = simulate(X, y, domains, 2, n_rounds=5, random_state=0, thresholds=thresholds)
    faulty = simulate(X, y, domains, 2, n_rounds=5, random_state=0, thresholds=thresholds,
                      fault=fail(3, 1, "round", once=True))  # fmt: skip
    history = faulty.federated_run_.history
    assert history[2]["restarts"] == 1 and 1 not in sum(history[2]["participants"], [])
    # round 4: the 5 others get the one term of round 3, client 1 all three terms from 0
    assert history[3]["numbers_to_clients"] == 5 * (1 + 5 + 1 + n) + (1 + 5 * 3 + 1 + n)
    assert history[4]["numbers_to_clients"] == 6 * (1 + 5 + 1 + n)
    assert len(faulty.estimators_) == 5
    # one path, one process: the rounds before the fault are the same computation, bit for bit
    np.testing.assert_array_equal(clean.estimator_weights_[:2], faulty.estimator_weights_[:2])


def test_the_client_side_answers_every_phase_without_scikit_learn():
    """The ClientApp's code path (the loader Flower imports, then Q's phases and a round) runs
    in a fresh interpreter without manytask's top-level package, SciPy or scikit-learn."""
    from manytask.boost.federated.flower.runner import CLIENT_SOURCE

    code = CLIENT_SOURCE + (
        "import json\n"
        "import numpy as np\n"
        "from _fedmultiboost.client import ClientShard\n"
        "from _fedmultiboost.protocol import respond\n"
        "X = np.linspace(-3, 3, 12).reshape(6, 2)\n"
        "shard, kept = ClientShard(X, np.array([1.0, -1] * 3), 1, None), {}\n"
        "for phase, payload in [\n"
        "    ('domain_moments', {}),\n"
        "    ('domain_loss', {'coef': [[1.0, 2.0]], 'intercept': [0.5]}),\n"
        "    ('domain_model', {'coef': [[1.0, 2.0]], 'intercept': [0.5], 'clip': 0.1}),\n"
        "    ('candidates', {'features': [0, 1], 'thresholds': [0.0, 1.0]}),\n"
        "    ('round', {'state_start': 0, 'state_domains': [], 'state_features': [],\n"
        "               'state_thresholds': [], 'state_polarities': [], 'state_steps': [],\n"
        "               'domains': [1], 'asked': [[0, 1]]}),\n"
        "]:\n"
        "    message, kept = respond(phase, shard, payload, kept)\n"
        "print(json.dumps({'n_clipped': 0 + respond('domain_model', shard, {'coef': [[1.0, 2.0]],\n"
        "                  'intercept': [0.5], 'clip': 0.1}, {})[0]['n_clipped'],\n"
        "                  'q': kept['domain_probabilities'].tolist(),\n"
        "                  'loaded': sorted(m for m in sys.modules if m.split('.')[0]\n"
        "                                   in ('sklearn', 'scipy', 'manytask'))}))\n"
    )
    result = run_in_fresh_interpreter(code)
    assert result["loaded"] == []
    # independent: Q(1|x) = logistic(x·coef + intercept), two domains clipped to [0.1, 0.9]
    X = np.linspace(-3, 3, 12).reshape(6, 2)
    q1 = 1 / (1 + np.exp(-(X @ [1.0, 2.0] + 0.5)))
    expected = np.clip(np.column_stack([1 - q1, q1]), 0.1, 0.9)
    np.testing.assert_allclose(result["q"], expected, rtol=1e-12)
    assert result["n_clipped"] == int(np.sum(np.column_stack([1 - q1, q1]) < 0.1)) > 0


def test_the_client_side_answers_the_tree_phases_through_the_clientapp_loader():
    """The tree phases on the ClientApp's code path (the package loaded as Flower loads it):
    they import the tree search from manytask.boost, and answer as in process."""
    from manytask.boost.federated.flower.runner import CLIENT_SOURCE

    X = np.linspace(-3, 3, 12).reshape(6, 2)
    y = np.array([1.0, -1, -1, 1, 1, -1])
    table = {"features": [0, 0, 1, 1], "thresholds": [-1.0, 0.5, 0.0, 2.0]}
    state = {"state_start": 0, "state_domains": [], "state_features": [],
             "state_thresholds": [], "state_polarities": [], "state_steps": []}  # fmt: skip
    code = CLIENT_SOURCE + (
        "import json\n"
        "import numpy as np\n"
        "from _fedmultiboost.client import ClientShard\n"
        "from _fedmultiboost.protocol import respond\n"
        f"shard = ClientShard(np.array({X.tolist()}), np.array({y.tolist()}), 0,\n"
        "                     np.ones((6, 1)))\n"
        f"_, kept = respond('candidates', shard, {table}, {{}})\n"
        f"tree, kept = respond('propose', shard, {{**{state}, 'max_depth': 2}}, kept)\n"
        "trees = {key: [np.asarray(tree[key]).tolist()] for key in\n"
        "         ('tree_features', 'tree_thresholds', 'tree_votes')}\n"
        "score, _ = respond('score', shard, trees, kept)\n"
        "print(json.dumps({'tree': {k: np.asarray(v).tolist() for k, v in tree.items()},\n"
        "                  'edges': score['edge_sums'].tolist()}))\n"
    )
    result = run_in_fresh_interpreter(code)
    shard = ClientShard(X, y, 0, np.ones((6, 1)))
    _, kept = respond("candidates", shard, table, {})
    tree, kept = respond("propose", shard, {**state, "max_depth": 2}, kept)
    for key, value in tree.items():
        np.testing.assert_array_equal(result["tree"][key], value)
    # independent: the tree's edge Σ_i y_i h(x_i) at α = 0 (a_i = 1, Q = 1), h read by hand
    node = np.zeros(6, dtype=int)
    for _ in range(2):
        split = tree["tree_features"][node]
        node = 2 * node + 1 + (X[np.arange(6), split] > tree["tree_thresholds"][node])
    h = tree["tree_votes"][node - 3]
    assert result["edges"] == [[float(y @ h)]] and float(y @ h) > 0


def test_setup_asks_every_client_in_one_batch_per_phase_and_resends_without_a_failing_one():
    from manytask.boost.federated import InProcessTransport, make_shards, setup_candidates
    from manytask.boost.federated.client import client_quantiles

    X, y, domains = three_domains(seed=21)
    q = np.full((X.shape[0], 3), 1 / 3)
    shards, _, _ = make_shards(X, np.where(y == 1, 1.0, -1.0), domains, 2, q,
                               np.random.default_rng(0))  # fmt: skip
    transport = InProcessTransport(shards, fault=fail(0, 3, "setup", once=True))
    features, flat, setup = setup_candidates(transport, range(6), 3, n_quantiles=4)
    # quantiles: all 6, then the 5 others again after client 3 failed; candidates: all 6
    assert transport.batches == 3
    assert [f["client"] for f in setup["failures"]] == [3]
    assert sorted(setup["min_probabilities"]) == list(range(6))  # client 3 still trains
    levels = np.linspace(0.0, 1.0, 6)[1:-1]
    expected = merge_quantiles([client_quantiles(shards[c], levels) for c in (0, 1, 2, 4, 5)],
                               levels)  # fmt: skip
    expected[0] = np.concatenate([[-np.inf], expected[0]])  # the constant stump, once
    np.testing.assert_array_equal(flat, np.concatenate(expected))
    np.testing.assert_array_equal(features, np.repeat(np.arange(3), [t.size for t in expected]))


# ------------------------------------------------------------------ one candidate table


def test_every_transport_builds_the_same_candidate_table_from_quantile_reports():
    """simulate, the Dask estimator (setup.prepare_server) and the Flower ServerApp set up
    through driver.setup_candidates, which takes the clients' quantile reports to thresholds
    by thresholds.sketch_thresholds (−∞ once, on feature 0); test_dask compares the Dask
    run's table with the in-process one on the same clients."""
    from manytask.boost.federated import InProcessTransport, make_shards, setup_candidates
    from manytask.boost.thresholds import merge_quantiles

    X, y, domains = three_domains(seed=22)
    q = np.full((X.shape[0], 3), 1 / 3)
    shards, _, _ = make_shards(X, np.where(y == 1, 1.0, -1.0), domains, 2, q,
                               np.random.default_rng(0))  # fmt: skip
    features, flat, _ = setup_candidates(InProcessTransport(shards), range(6), 3, n_quantiles=5)
    # independent: the merged sketch of the clients' quantiles, −∞ added once
    levels = np.linspace(0.0, 1.0, 7)[1:-1]
    reports = [
        {"quantiles": np.quantile(shard.X, levels, axis=0).T, "n_points": shard.X.shape[0]}
        for shard in shards
    ]
    merged = merge_quantiles(reports, levels)
    assert np.isneginf(flat).sum() == 1 and flat[0] == -np.inf
    np.testing.assert_allclose(flat[1:], np.concatenate(merged), rtol=1e-12)
    expected_features = np.concatenate([np.full(t.size, j) for j, t in enumerate(merged)])
    np.testing.assert_array_equal(features[1:], expected_features)


# ----------------------------------------------------------------------- trees (max_depth > 1)


def few_values(n_per_domain=40, n_values=7, seed=0):
    """Three sources, features taking ``n_values`` distinct random reals each (one grid for
    every seed; so the binned tree search with ``n_bins >= n_values`` splits at every midpoint,
    as the candidate table ``candidate_thresholds`` does) and a label that needs two splits
    (x0 and x1 high), with source-dependent noise: random counts per cell, so no two splits
    tie."""
    values = np.sort(np.random.default_rng(0).normal(size=(3, n_values)), axis=1)
    rng = np.random.default_rng(seed)
    domains = np.repeat([0, 1, 2], n_per_domain)
    X = np.column_stack([values[j, rng.integers(n_values, size=domains.size)] for j in range(3)])
    X[:, 2] = values[2, np.minimum(domains * 2 + rng.integers(2, size=domains.size),
                                   n_values - 1)]  # fmt: skip
    score = (X[:, 0] > values[0, 2]) & (X[:, 1] > values[1, 3])
    flip = rng.random(domains.size) < 0.05 * (domains + 1)
    return X, (score ^ flip).astype(int), domains


@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
@pytest.mark.parametrize("max_depth", [2, 3])
def test_trees_with_one_client_per_source_equal_multiboost_classifier_trees(step, max_depth):
    # One client per source, all taking part, the candidate table = the estimator's bins
    # (every midpoint): each client grows the tree the estimator grows for its source (the
    # weights differ by 1/Z_{t,k}, a constant per source, see client_tree), the pooled edge
    # of that tree is the estimator's rate, so the ensembles are the same function.
    X, y, domains = few_values(seed=1)
    fed = simulate(X, y, domains, 1, n_rounds=8, random_state=0, step=step,
                   thresholds=candidate_thresholds(X.T), domain_classifier="central",
                   max_depth=max_depth)  # fmt: skip
    central = MultiBoostClassifier(n_estimators=8, step=step, max_depth=max_depth,
                                   n_bins=8).fit(X, y, domains=domains)  # fmt: skip
    # the exact step may stop early, at a tie of the hard max that no tree descends (both do)
    assert len(fed.estimators_) == len(central.estimators_) >= 3
    assert any(np.isfinite(tree.thresholds).sum() > 1 for _, tree in fed.estimators_)
    assert_same_ensemble(fed, central, X)
    Xt, yt, _ = few_values(seed=2)  # new points on the grid
    np.testing.assert_allclose(fed.decision_function(Xt), central.decision_function(Xt),
                               rtol=0.0, atol=1e-9)  # fmt: skip
    assert fed.score(Xt, yt) == central.score(Xt, yt)


@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
def test_tree_rounds_send_s_candidate_trees_and_get_s_edges_back(step):
    # Figure 2 with trees: per round a participant receives its missing terms (domain, step,
    # 2(2^d − 1) node numbers and 2^d votes each) and d, answers Φ, Z and its tree; then each
    # participant of an active source receives the s trees of its source and answers s edges.
    X, y, domains = few_values(60, seed=4)
    depth, s = 2, 2
    per_tree = 2 * (2**depth - 1) + 2**depth
    clf = simulate(X, y, domains, 3, r=3, s=s, n_rounds=5, random_state=1, n_quantiles=6,
                   step=step, max_depth=depth, record_messages=True)  # fmt: skip
    run = clf.federated_run_
    known = {}
    for t, record in enumerate(run.history):
        participants = sum(record["participants"], [])
        scorers = sum((record["participants"][k] for k in record["active"]), [])
        messages = [(phase, m) for rnd, phase, _, m in run.messages if rnd == record["round"]]
        proposals = [m for phase, m in messages if phase == "propose"]
        scores = [m for phase, m in messages if phase == "score"]
        assert len(proposals) == len(participants) and len(scores) == len(scorers)
        assert all(protocol.count_numbers(m) == 2 + per_tree for m in proposals)
        assert all(m["edge_sums"].shape == (1, s) for m in scores)  # O(p·s) with p rows at most
        searched = sum(protocol.count_numbers(m) for phase, m in messages if phase == "line_search")
        assert record["numbers_from_clients"] == (2 + per_tree) * len(proposals) + s * len(
            scorers) + searched  # fmt: skip
        missing = [t - known.get(c, 0) for c in participants]
        line_search_sent = (
            record["numbers_to_clients"]
            - sum(1 + (2 + per_tree) * m + 1 for m in missing)
            - s * per_tree * len(scorers)
        )
        assert line_search_sent == 0 if step == "adaboost" else line_search_sent > 0
        known.update({c: t for c in participants})
    Xt, yt, _ = few_values(60, seed=5)
    assert clf.score(Xt, yt) > 0.75


def test_soft_max_trees_take_the_steepest_proposed_tree_of_f_mu():
    # With μ each participant proposes a tree per domain q, every participant scores all of
    # them; the round's term is argmax over the proposals of |−F_μ'| = |Σ_l p_l E_l(q, h)|,
    # recomputed here densely from the points (p = softmax(μ F), E_l pooled over source l),
    # with the AdaBoost step of D ∝ p_l a_i (mass Σ_l p_l F_l).
    X, y, domains = few_values(seed=7)
    mu = 10.0
    clf = simulate(X, y, domains, 2, n_rounds=4, random_state=0, mu=mu, max_depth=2,
                   domain_classifier="central", record_messages=True)  # fmt: skip
    run = clf.federated_run_
    Q = clf.domain_classifier_.predict_proba(X)
    signs = np.where(y == 1, 1.0, -1.0)
    f = np.zeros(X.shape[0])
    for t, record in enumerate(run.history):
        a = np.exp(-signs * f)
        losses = np.array([a[domains == k].mean() for k in range(3)])
        np.testing.assert_allclose(record["losses"], losses, rtol=1e-12)
        weights = np.exp(mu * (losses - losses.max()))
        weights /= weights.sum()
        proposals = [m for rnd, phase, _, m in run.messages if rnd == t + 1 and phase == "propose"]
        assert len(proposals) == 6 and all(m["tree_votes"].shape == (3, 4) for m in proposals)
        best = (-1.0, None)
        for q in range(3):
            for m in proposals:
                tree = (m["tree_features"][q], m["tree_thresholds"][q], m["tree_votes"][q])
                h = client_tree_values(X, tree)
                terms = a * signs * Q[:, q] * h
                rate = sum(weights[k] * terms[domains == k].mean() for k in range(3))
                if abs(rate) > best[0]:
                    best = (abs(rate), np.sign(rate) * h)
        k, tree = clf.estimators_[t]
        np.testing.assert_array_equal(tree.predict(X), best[1])
        assert record["score"] == pytest.approx(best[0], rel=1e-9)
        error = 0.5 * (1 - best[0] / (weights @ losses))
        step = 0.5 * np.log((1 - error) / error)
        assert clf.estimator_weights_[t] == pytest.approx(step, rel=1e-9)
        f = f + step * Q[:, k] * best[1]


def client_tree_values(X, tree):
    """h(x) of a tree given as (node features, node thresholds, leaf votes), by hand."""
    features, thresholds, votes = (np.asarray(v) for v in tree)
    node = np.zeros(X.shape[0], dtype=int)
    for _ in range(int(np.log2(votes.size))):
        node = 2 * node + 1 + (X[np.arange(X.shape[0]), features[node]] > thresholds[node])
    return votes[node - (votes.size - 1)].astype(float)


def test_bad_tree_parameters_raise_naming_them():
    X, y, domains = few_values(seed=6)
    with pytest.raises(ValueError, match="max_depth"):
        simulate(X, y, domains, 1, n_rounds=2, max_depth=0)
    with pytest.raises(ValueError, match="histogram_trees must be True or False, got 'yes'"):
        simulate(X, y, domains, 1, n_rounds=2, max_depth=2, histogram_trees="yes")


# ------------------------------------------- trees grown from summed histograms (secure sums)


@pytest.mark.parametrize("mu", [None, 10.0])
@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
@pytest.mark.parametrize("max_depth", [2, 3])
def test_histogram_trees_with_several_clients_per_source_equal_multiboost_classifier(
    step, max_depth, mu
):
    # Three clients per source, all taking part: the server grows each active source's tree
    # from the sums of its clients' histograms, which are the histograms of the source's pooled
    # rows, so the tree is the estimator's (proposed trees need one client per source for this);
    # with μ the tree of each domain q from every source's sums weighted by p_l/m_l, the
    # central soft-max tree of row q (proposed trees see one client's points: never that)
    X, y, domains = few_values(seed=1)
    fed = simulate(X, y, domains, 3, n_rounds=8, random_state=0, step=step,
                   thresholds=candidate_thresholds(X.T), domain_classifier="central",
                   max_depth=max_depth, histogram_trees=True, mu=mu)  # fmt: skip
    central = MultiBoostClassifier(n_estimators=8, step=step, max_depth=max_depth,
                                   n_bins=8, mu=mu).fit(X, y, domains=domains)  # fmt: skip
    assert len(fed.estimators_) == len(central.estimators_) >= 3
    assert any(np.isfinite(tree.thresholds).sum() > 1 for _, tree in fed.estimators_)
    assert_same_ensemble(fed, central, X)
    Xt, yt, _ = few_values(seed=2)  # new points on the grid
    np.testing.assert_allclose(fed.decision_function(Xt), central.decision_function(Xt),
                               rtol=0.0, atol=1e-9)  # fmt: skip
    assert fed.score(Xt, yt) == central.score(Xt, yt)
    # the proposed-tree protocol with these 3 clients per source is another model
    proposed = simulate(X, y, domains, 3, n_rounds=8, random_state=0, step=step,
                        thresholds=candidate_thresholds(X.T), domain_classifier="central",
                        max_depth=max_depth, mu=mu)  # fmt: skip
    assert not np.allclose(proposed.decision_function(Xt), central.decision_function(Xt))


def test_client_histograms_add_up_to_the_histograms_of_the_pooled_rows():
    # Each client's share, by brute force over its points; summed over the clients of a
    # source they are the level histograms of the source's pooled rows under the same tree.
    X, y, domains = few_values(seed=3)
    signs = np.where(y == 1, 1.0, -1.0)
    rng = np.random.default_rng(0)
    Q = rng.dirichlet(np.ones(3), size=X.shape[0])
    a = rng.exponential(size=X.shape[0])
    thresholds = [t[np.isfinite(t)] for t in candidate_thresholds(X.T)]  # 6 midpoints each
    features = np.concatenate([np.full(t.size, j) for j, t in enumerate(thresholds)])
    flat = np.concatenate(thresholds)
    tree = {"tree_features": np.array([0, 1, 0]),
            "tree_thresholds": np.array([thresholds[0][2], thresholds[1][1], np.inf]),
            "nodes": np.array([1, 2, 3])}  # fmt: skip
    source = np.flatnonzero(domains == 1)
    shares = np.array_split(source, 3)
    total = 0.0
    for points in shares:
        shard = ClientShard(X[points], signs[points], 1, Q[points])
        binned = client_bins(shard, features, flat)
        total = total + client_histograms(shard, binned, a[points], tree)["histogram"]
    expected = np.zeros((4, 3, 7, 2))  # B = 7 bins
    for i in source:
        x = X[i]
        node = 0 if x[0] <= thresholds[0][2] else 1
        node = 2 * node + (x[1] > thresholds[1][1] if node == 0 else 0)  # node 2 splits nowhere
        s = a[i] * signs[i] * Q[i, 1]
        for j in range(3):
            b = int(np.sum(thresholds[j] < x[j]))  # bin b: x above b thresholds
            expected[node, j, b] += (s, abs(s))
    np.testing.assert_allclose(total, expected[[1, 2, 3]], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("max_depth", [2, 3])
def test_histogram_tree_rounds_send_histograms_of_the_asked_nodes_only(max_depth):
    # Per round: the grow batch (the missing terms → Φ, Z and the root histogram, 2 + 2·d·B
    # numbers), then one histogram batch per level below the root to the participants of the
    # active sources, for the two children of each node that split (2·d·B numbers per node
    # back; the tree so far and the nodes asked out). Never more than 2(2^d − 1)·d·B + 2
    # numbers from a client per round, whatever its number of points.
    X, y, domains = few_values(60, seed=4)
    clf = simulate(X, y, domains, 2, n_rounds=5, random_state=1, n_quantiles=6,
                   max_depth=max_depth, histogram_trees=True,
                   record_messages=True)  # fmt: skip
    run = clf.federated_run_
    d = X.shape[1]
    known, single = {}, 0
    for t, record in enumerate(run.history):
        participants = sum(record["participants"], [])
        messages = [(phase, c, m) for rnd, phase, c, m in run.messages if rnd == record["round"]]
        grown = [m for phase, _, m in messages if phase == "grow"]
        assert len(grown) == len(participants)
        B = grown[0]["histogram"].shape[2]
        assert B <= 7 and all(m["histogram"].shape == (1, d, B, 2) for m in grown)  # 6 levels
        scorers = sum((record["participants"][k] for k in record["active"]), [])
        assert all(c in scorers for phase, c, _ in messages if phase == "histogram")
        assert record["numbers_from_clients"] == sum(
            protocol.count_numbers(m) for _, _, m in messages)  # fmt: skip
        for c in participants:
            sent = sum(protocol.count_numbers(m) for _, c_, m in messages if c_ == c)
            assert sent <= 2 * (2**max_depth - 1) * d * B + 2
        missing = [t - known.get(c, 0) for c in participants]
        known.update({c: t for c in participants})
        if len(record["active"]) > 1:  # the trees of the sources not chosen are not kept
            continue
        single += 1
        k, tree = clf.estimators_[t]
        split = np.isfinite(tree.thresholds)
        asked = [2 * int(split[2**level - 1 : 2 ** (level + 1) - 1].sum())
                 for level in range(max_depth - 1)]  # fmt: skip
        n_clients = len(record["participants"][k])
        per_client = [m["histogram"].shape[0] for phase, _, m in messages if phase == "histogram"]
        assert sorted(per_client) == sorted(n for n in asked if n for _ in range(n_clients))
        per_term = 2 + 2 * (2**max_depth - 1) + 2**max_depth
        tree_out = sum(2 * (2 ** (level + 1) - 1) + n for level, n in enumerate(asked) if n)
        assert record["numbers_to_clients"] == sum(1 + per_term * m for m in missing) + (
            n_clients * tree_out)  # fmt: skip
        assert record["batches"] == 1 + sum(1 for n in asked if n)
    assert single >= 3
    Xt, yt, _ = few_values(60, seed=5)
    assert clf.score(Xt, yt) > 0.75
