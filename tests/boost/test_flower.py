"""Tests of FEDMULTIBOOST on Flower (:mod:`manytask.boost.federated.flower`).

The reference is :func:`~manytask.boost.federated.simulate` with the same arguments: the
Flower apps run the same driver over a different transport, so every α, stump and count of
numbers on the wire must be equal. ``test_loopback_*`` run the ServerApp's work
(``apps.run_server``) and the ClientApp's (``clientapp.answer``) on Flower's records
(``RecordDict``, ``ConfigRecord``, ``Context``) in one process, the transport's
``GridLink`` replaced by an in-process loopback (no processes, fast; a Flower ``Message`` is
only built inside Flower's runtimes). The runtime tests run the Flower App with Flower's own
commands on 127.0.0.1, which covers the Message path (``GridLink``, ``client_query``): on the
Deployment Runtime (SuperLink + one SuperNode per client + ``flwr run``, one SuperNode killed
mid-run; started by the module's first test, in the background while the others run, and
checked by its last) and on the Simulation Runtime (``flower-superlink --simulation``;
skipped without Ray, Flower's ``simulation`` extra).
"""

import importlib.util
import json
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

flwr = pytest.importorskip("flwr", reason="FEDMULTIBOOST on Flower needs manytask[fed]")

#: The Deployment Runtime federations: stumps always; trees of depth 3 (two batches a round,
#: ~100 s more of the suite's wall time) only with MANYTASK_SLOW_TESTS=1, to keep ``make test``
#: within its 10 minutes (run on 2026-12-02: docs/results/fedboost/README.md).
DEPLOYMENT_DEPTHS = (1, 3) if os.environ.get("MANYTASK_SLOW_TESTS") == "1" else (1,)

from flwr.app import Context, Error, RecordDict  # noqa: E402

from manytask.boost.federated import ClientShard, ModelState, respond, simulate  # noqa: E402
from manytask.boost.federated.flower import apps, clientapp, runner, transport  # noqa: E402
from manytask.boost.federated.protocol import ClientFailure, state_to_payload  # noqa: E402

# Flower's code of an Error for a ClientApp's exception: ErrorCode.CLIENT_APP_RAISED_EXCEPTION
# in Flower 1.42's flwr/common/constant.py (the codes are not exported publicly)
CLIENT_APP_RAISED_EXCEPTION = 2


def three_domains(n_per_domain=60, seed=0):
    """Two features; the second shifts with the domain (Q informative), the label mixes both."""
    rng = np.random.default_rng(seed)
    domains = np.repeat([0, 1, 2], n_per_domain)
    X = rng.normal(size=(3 * n_per_domain, 2))
    X[:, 1] += domains
    y = X[:, 0] + 0.6 * (domains - 1) * X[:, 1] + 0.5 * rng.normal(size=domains.size) > 0
    return X, y.astype(int), domains


def public_thresholds(X, n=5):
    levels = np.linspace(0.0, 1.0, n + 2)[1:-1]
    return [np.unique(np.quantile(X[:, j], levels)) for j in range(X.shape[1])]


class LoopbackLink:
    """What ``transport.GridLink`` does over Flower's Grid, in one process: a pushed request
    content is answered by ``clientapp.answer`` on its node's Context (its own ``state``, so
    ``kept`` goes through Context.state) when pulled; the nodes in ``silent`` answer the hello,
    then nothing."""

    def __init__(self, shard_paths, silent=(), client_ids=True):
        # without client ids, node ids in the reverse order of the clients: the server numbers
        # the nodes by (domain, node id) itself
        n = len(shard_paths)
        self.contexts = {
            node: Context(run_id=1, node_id=node, state=RecordDict(), run_config={},
                          node_config={"shard": str(path),
                                       **({"client-id": c} if client_ids else {})})
            for c, path in enumerate(shard_paths)
            for node in [100 + c if client_ids else 100 + n - 1 - c]
        }  # fmt: skip
        self.silent, self.inbox, self.pushed = set(silent), {}, 0
        self.reply_bytes = {}  # phase → sizes of the ClientApps' reply records (bytes)
        self.replies = {}  # phase → the ClientApps' replies as (key, dtype, shape) of each array

    def node_ids(self):
        return list(self.contexts)

    def push(self, requests, group_id="", ttl=None):
        ids = []
        for node, content in requests:
            self.pushed += 1
            phase = clientapp.decode_request(content)[0]
            if node not in self.silent or phase == clientapp.HELLO:
                self.inbox[f"message-{self.pushed}"] = (node, phase, content)
            ids.append(f"message-{self.pushed}")
        return ids

    def pull(self, message_ids):
        replies = []
        for message_id in message_ids:
            if message_id not in self.inbox:
                continue
            node, phase, content = self.inbox.pop(message_id)
            reply = clientapp.answer(content, self.contexts[node])
            replies.append((message_id, reply))
            if not isinstance(reply, Error):
                packed = reply["reply"]["message"]
                self.reply_bytes.setdefault(phase, set()).add(len(packed))
                header = json.loads(packed[4 : 4 + int.from_bytes(packed[:4], "little")])
                self.replies.setdefault(phase, []).append(header)
        return replies


def assert_same_run(flower_clf, reference, X, rtol=1e-9):
    """The model of the in-process run: the same participants and numbers on the wire per round,
    each round's domain and stump as the same split of the training points ``X`` (the data are
    continuous draws, so no two candidates split them alike and no two splits tie), and the
    converged quantities (α, the per-round losses F_k, the decision function) to 1e-9 relative:
    both runs add the same client sums, so only the order of float additions may differ, and
    1e-9 is far above that rounding and far below the gap between two candidates (``rtol``
    may say otherwise)."""
    assert len(flower_clf.estimators_) == len(reference.estimators_) > 0
    for (k, stump), (k_ref, stump_ref) in zip(flower_clf.estimators_, reference.estimators_):
        assert k == k_ref
        np.testing.assert_array_equal(stump.predict(X), stump_ref.predict(X))
    np.testing.assert_allclose(
        flower_clf.estimator_weights_, reference.estimator_weights_, rtol=rtol, atol=0
    )
    bound = rtol * np.sum(np.abs(reference.estimator_weights_))  # |f(x)| ≤ Σ|α|
    np.testing.assert_allclose(flower_clf.decision_function(X), reference.decision_function(X),
                               rtol=rtol, atol=bound)  # fmt: skip
    run, run_ref = flower_clf.federated_run_, reference.federated_run_
    keys = ("numbers_to_clients", "numbers_from_clients", "n_candidates", "n_clients")
    assert {key: run.setup[key] for key in keys} == {key: run_ref.setup[key] for key in keys}
    assert len(run.history) == len(run_ref.history)
    for record, record_ref in zip(run.history, run_ref.history):
        for key in ("numbers_to_clients", "numbers_from_clients", "exchanges", "participants"):
            assert record[key] == record_ref[key], key
        assert record["seconds"] > 0
        np.testing.assert_allclose(record["losses"], record_ref["losses"], rtol=rtol)


# ------------------------------------------------------------------ Flower's runtimes, processes


def _processes(predicate):
    """{id: command line parts} of the processes whose (command line parts, environment)
    satisfy ``predicate``."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.name.isdigit() and predicate(command, environment):
            found[int(entry.name)] = command
    return found


def _kill(predicate):
    """SIGKILL the processes (not this one) whose (command, environment) satisfy it."""
    for pid in _processes(predicate):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _kill_marked(marker):
    """SIGKILL the processes (not this one) whose environment holds ``marker``."""
    _kill(lambda command, environment: marker in environment)


@pytest.fixture
def flower_processes(tmp_path):
    """Every process a test's federation starts (``workdir=tmp_path``) has its ``FLWR_HOME``
    under ``tmp_path``; after the test, pass or fail, any of them still alive is killed (the
    runner stops them itself when it returns; this covers a test that fails while its
    federation runs). Not a marker in ``os.environ``: the module's background Deployment
    Runtime federations would inherit it if they started meanwhile."""
    yield
    home = b"FLWR_HOME=" + bytes(tmp_path)
    _kill(lambda command, environment: any(part.startswith(home) for part in environment))


def two_domains(n_per_domain=50, seed=2):
    """Two features, two domains; the label depends on both features and the domain."""
    rng = np.random.default_rng(seed)
    domains = np.repeat([0, 1], n_per_domain)
    X = rng.normal(size=(2 * n_per_domain, 2))
    X[:, 1] += domains
    y = X[:, 0] - 0.8 * (domains - 0.5) * X[:, 1] + 0.5 * rng.normal(size=domains.size) > 0
    return X, y.astype(int), domains


def _supernode_pid(shard):
    """The id of the ``flower-supernode`` process started with ``shard`` in its node config."""

    def supernode(command, environment):
        return any(b"flower-supernode" in part for part in command) and any(
            str(shard).encode() in part for part in command
        )

    pids = list(_processes(supernode))
    return pids[0] if pids else None


@pytest.fixture(scope="module")
def deployment_run(tmp_path_factory):
    """The federations of the Deployment Runtime tests, {max_depth: run} for stumps (1) and
    trees of depth 3 (with MANYTASK_SLOW_TESTS=1: :data:`DEPLOYMENT_DEPTHS`), started once
    for the module in the background, one after the other (each spends most of its ~2-3
    minutes waiting: for processes to start, for Flower's heartbeat
    to give up on the killed SuperNode), so the other tests of the module run meanwhile; the
    first test that asks for them starts them, the last ones wait for their results.

    Each: SuperLink + 4 SuperNodes + ``flwr run`` as processes on 127.0.0.1, public
    thresholds, central Q, 2 rounds. A second thread SIGKILLs SuperNode ``victim`` once it has
    received its first round's message (before or after it answered: the kill lands wherever
    it lands). Every process carries a marker in its environment and is killed at the end of
    the module if still alive."""
    if not sys.platform.startswith("linux"):
        pytest.skip("finds the SuperNode process in /proc")
    X, y, domains = two_domains()
    setup_messages = 2  # the hello and the candidates (public thresholds, central Q)
    runs, previous = {}, None

    def start(max_depth, previous):
        root = tmp_path_factory.mktemp(f"deployment-depth-{max_depth}")
        run = {
            "X": X, "y": y, "domains": domains, "root": root,
            # the round timeout: far above a healthy batch (a ClientApp process per message:
            # ~12 s per batch at load 16 on 2 cores), or healthy clients would be dropped too
            "victim": 1, "timeout": 60.0,
            "kwargs": dict(n_rounds=2, random_state=0, thresholds=public_thresholds(X),
                           domain_classifier="central", max_depth=max_depth),
        }  # fmt: skip

        def federation():
            if previous is not None:  # one federation at a time
                previous.join()
            try:
                run["clf"] = runner.run_local_federation(X, y, domains, 2, workdir=root,
                                                         timeout=run["timeout"],
                                                         **run["kwargs"])  # fmt: skip
            except BaseException as error:  # reported by the test
                run["error"] = error

        def kill_the_victim():
            log = root / "logs" / f"supernode-{run['victim']}.log"
            while worker.is_alive():
                if (log.exists() and log.read_text(errors="replace").count(
                        "Receiving: query message") > setup_messages):  # fmt: skip
                    run["killed"] = _supernode_pid(root / "shards" / f"client-{run['victim']}.npz")
                    if run["killed"] is not None:
                        os.kill(run["killed"], signal.SIGKILL)
                    return
                time.sleep(0.05)

        worker = threading.Thread(target=federation, daemon=True)
        killer = threading.Thread(target=kill_the_victim, daemon=True)
        worker.start()
        killer.start()
        run["threads"] = (worker, killer)
        return run

    marker = f"MANYTASK_FLOWER_DEPLOYMENT_TEST={os.getpid()}-{time.time_ns()}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(*marker.split("=", 1))
        for max_depth in DEPLOYMENT_DEPTHS:
            runs[max_depth] = start(max_depth, previous)
            previous = runs[max_depth]["threads"][0]
        yield runs
        _kill_marked(marker.encode())  # whatever is left if a test failed mid-run


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the processes in /proc")
def test_deployment_runtime_runs_flowers_own_commands(deployment_run):
    """Starts the module's Deployment Runtime federation (checked at the end of the module) and
    checks that its processes are Flower's own commands: ``flower-superlink``, one
    ``flower-supernode`` per client with its shard and client id as node config, ``flwr run``
    on the app directory (the first federation, stumps)."""
    root, worker = deployment_run[1]["root"], deployment_run[1]["threads"][0]

    def ours(command, environment):  # FLWR_HOME of each process is under the run's directory
        return any(part.startswith(b"FLWR_HOME=" + bytes(root)) for part in environment)

    deadline = time.monotonic() + 600  # a generous bound: processes start slowly under load
    commands = {}
    while worker.is_alive() and time.monotonic() < deadline:
        # the scripts run by their Python: [python, script, arguments...]
        commands = {pid: [Path(os.fsdecode(part)).name for part in command[1:3]]
                    for pid, command in _processes(ours).items() if len(command) > 2}  # fmt: skip
        names = [name for name, _ in commands.values()]
        if names.count("flower-supernode") == 4 and "flwr" in names:
            break
        time.sleep(0.1)
    names = [name for name, _ in commands.values()]
    assert names.count("flower-superlink") == 1 and names.count("flower-supernode") == 4, names
    assert ["flwr", "run"] in commands.values(), commands
    for client in range(4):  # node config: the shard and the client id
        assert _supernode_pid(root / "shards" / f"client-{client}.npz") is not None


def test_every_phase_round_trips_through_flower_records_unchanged(tmp_path):
    rng = np.random.default_rng(1)
    shard = ClientShard(rng.normal(size=(7, 2)), np.array([1.0, -1, 1, 1, -1, -1, 1]), 1,
                        rng.dirichlet(np.ones(3), size=7))  # fmt: skip
    runner.save_shard(tmp_path / "shard.npz", shard)
    context = Context(run_id=1, node_id=5, node_config={"shard": str(tmp_path / "shard.npz")},
                      state=RecordDict(), run_config={})  # fmt: skip
    state = ModelState().with_term(2, 0, 0.1, -1, 0.7).with_term(1, 1, -0.3, 1, 0.2)
    requests = [
        ("setup", {"levels": np.array([0.25, 0.5, 0.75])}),
        ("candidates", {"features": np.array([0, 0, 1, 1]),
                        "thresholds": np.array([-0.5, 0.5, -0.2, 0.4])}),
        ("losses", state_to_payload(state)),
        ("edges", {"domains": np.array([1, 2]), "asked": np.array([[0, 2], [1, 3]])}),
        ("line_search", {"direction": np.array([1.0, 1.0, -0.2, 1.0]),
                         "steps": np.array([0.0, 0.5, 2.0])}),
        ("separating", {"domain": 2}),
    ]  # fmt: skip
    kept = {}
    for phase, payload in requests:
        # the wire carries the payload unchanged: same keys, shapes, dtypes and bits
        decoded_phase, decoded = clientapp.decode_request(clientapp.encode_request(phase, payload))
        assert decoded_phase == phase and decoded.keys() == payload.keys()
        for key, value in payload.items():
            assert np.asarray(decoded[key]).dtype == np.asarray(value).dtype
            np.testing.assert_array_equal(decoded[key], value)
        expected, kept = respond(phase, shard, payload, kept)
        reply = clientapp.answer(clientapp.encode_request(phase, payload), context)
        assert isinstance(reply, RecordDict), reply
        message = clientapp.decode_reply(reply)
        assert message.keys() == expected.keys()
        for key, value in expected.items():
            assert type(message[key]) is type(value) or np.asarray(value).ndim > 0
            np.testing.assert_array_equal(message[key], value)  # bit for bit
    restored = clientapp.kept_from_record(context.state[clientapp.KEPT])
    np.testing.assert_array_equal(restored["state"].steps, state.steps)
    np.testing.assert_array_equal(restored["thresholds"], [-0.5, 0.5, -0.2, 0.4])


def test_packed_arrays_are_exact_and_refuse_objects_and_stray_bytes():
    rng = np.random.default_rng(4)
    values = {"x": rng.normal(size=(3, 4)), "i": np.arange(5), "empty": np.zeros((0, 2)),
              "n": 7, "f": 0.1, "bits": np.frombuffer(b"\x00\xff", dtype=np.uint8)}  # fmt: skip
    unpacked = clientapp.unpack_arrays(clientapp.pack_arrays(values))
    assert unpacked.keys() == values.keys()
    for key, value in values.items():
        assert np.asarray(unpacked[key]).dtype == np.asarray(value).dtype
        assert np.asarray(unpacked[key]).shape == np.asarray(value).shape
        np.testing.assert_array_equal(unpacked[key], value)  # bit for bit
    assert type(unpacked["n"]) is int and type(unpacked["f"]) is float
    with pytest.raises(ValueError, match="object arrays"):
        clientapp.unpack_arrays(clientapp.pack_arrays({"o": np.array([None, 1])}))
    with pytest.raises(ValueError, match="3 bytes left"):
        clientapp.unpack_arrays(clientapp.pack_arrays({"x": np.ones(2)}) + b"abc")


def test_client_error_reply_names_the_exception(tmp_path):
    context = Context(run_id=1, node_id=5, node_config={"shard": str(tmp_path / "missing.npz")},
                      state=RecordDict(), run_config={})  # fmt: skip
    request = clientapp.encode_request("losses", state_to_payload(ModelState()))
    reply = clientapp.answer(request, context)
    assert isinstance(reply, Error) and reply.code == CLIENT_APP_RAISED_EXCEPTION
    assert reply.reason.startswith("FileNotFoundError: ") and "missing.npz" in reply.reason


def _loopback_run(tmp_path, silent=(), n_per_domain=40, link_out=None, client_ids=True,
                  **kwargs):  # fmt: skip
    X, y, domains = three_domains(n_per_domain)
    federation = runner.prepare_federation(X, y, domains, **kwargs)
    link = LoopbackLink(runner.write_inputs(tmp_path, federation), silent, client_ids)
    config = {**federation["run_config"], "wait": 0.0}
    apps.run_server(link, config)
    state, run = runner.read_result(config["result"])
    if link_out is not None:
        link_out.append((link, run))
    return runner.federation_estimator(federation, state, run), (X, y, domains)


@pytest.mark.parametrize("mu", [None, 10.0])
def test_loopback_server_app_equals_simulate(tmp_path, mu):
    kwargs = dict(clients_per_domain=2, r=1, s=3, n_rounds=4, random_state=3, n_quantiles=4,
                  mu=mu)  # fmt: skip
    clf, (X, y, domains) = _loopback_run(tmp_path, **kwargs)
    reference = simulate(X, y, domains, **kwargs)
    assert_same_run(clf, reference, X)


@pytest.mark.parametrize("mu", [None, 10.0])
def test_loopback_server_app_with_trees_equals_simulate(tmp_path, mu):
    # max_depth = 2: the propose and score phases through Flower's records (2-D and, with μ,
    # 3-D tree arrays, +inf thresholds of the nodes that do not split) and the result file
    kwargs = dict(clients_per_domain=2, r=2, s=1, n_rounds=4, random_state=3, n_quantiles=6,
                  max_depth=2, mu=mu)  # fmt: skip
    clf, (X, y, domains) = _loopback_run(tmp_path, **kwargs)
    reference = simulate(X, y, domains, **kwargs)
    assert clf.max_depth == 2 and all(np.ndim(tree.features) == 1 for _, tree in clf.estimators_)
    assert_same_run(clf, reference, X)


def test_loopback_server_numbers_supernodes_without_client_ids_by_domain_and_node_id(tmp_path):
    """SuperNodes started without a ``client-id`` node config (as a user may): the server
    numbers them by (domain, node id); the node ids here run against the clients' order, so
    the numbering differs from the runner's, and with every client in every round (r = None)
    the model is still simulate's (each client id maps to a node of the right domain)."""
    kwargs = dict(clients_per_domain=2, n_rounds=3, random_state=3, n_quantiles=4,
                  domain_classifier="central")  # fmt: skip
    links = []
    clf, (X, y, domains) = _loopback_run(tmp_path, client_ids=False, link_out=links, **kwargs)
    nodes = {int(c): node for c, node in links[0][1]["nodes"].items()}
    # client c of domain c // 2 holds shard c, on node 105 - c; by (domain, node id):
    assert nodes == {0: 104, 1: 105, 2: 102, 3: 103, 4: 100, 5: 101}
    assert_same_run(clf, simulate(X, y, domains, **kwargs), X)


def test_loopback_trains_the_federated_q_of_simulate_and_central_is_an_option(tmp_path):
    kwargs = dict(clients_per_domain=2, n_rounds=3, random_state=5, n_quantiles=4)
    clf, (X, y, domains) = _loopback_run(tmp_path / "federated", **kwargs)
    reference = simulate(X, y, domains, **kwargs)  # the federated Q by default
    assert_same_run(clf, reference, X)
    # Q converged in both runs: its loss and probabilities agree to within L-BFGS-B's tolerance
    # (gtol 1e-4 on the gradient, domain.fit_domain_classifier); iteration counts are not compared
    record, record_ref = (c.federated_run_.setup["domain_classifier"] for c in (clf, reference))
    assert record["converged"] and record_ref["converged"] and record["batches"] > 2
    np.testing.assert_allclose(record["log_loss"], record_ref["log_loss"], rtol=1e-6)
    q, q_ref = clf.domain_classifier_, reference.domain_classifier_
    assert list(q.classes_) == list(q_ref.classes_) == [0, 1, 2]
    np.testing.assert_allclose(q.predict_proba(X), q_ref.predict_proba(X), rtol=1e-4, atol=1e-6)
    central, _ = _loopback_run(tmp_path / "central", domain_classifier="central", **kwargs)
    central_ref = simulate(X, y, domains, domain_classifier="central", **kwargs)
    assert_same_run(central, central_ref, X)
    assert "domain_classifier" not in central.federated_run_.setup


def test_flower_replies_carry_no_per_example_values(tmp_path):
    """Every reply record a ClientApp sends has the same size in bytes whether its shard holds
    20 or 200 points per domain: sums, never rows (Q's training included)."""
    sizes = {}
    for n_per_domain in (20, 200):
        links = []
        _loopback_run(tmp_path / str(n_per_domain), n_per_domain=n_per_domain, link_out=links,
                      clients_per_domain=2, n_rounds=3, random_state=0, n_quantiles=4)  # fmt: skip
        sizes[n_per_domain] = links[0][0].reply_bytes
    phases = {"hello", "domain_moments", "domain_loss", "domain_model", "setup", "candidates",
              "round"}  # fmt: skip
    assert set(sizes[20]) == phases
    assert sizes[20] == sizes[200]
    # a shard of 100 points × 2 features is 1600 bytes: every reply is far smaller
    assert max(max(s) for s in sizes[20].values()) < 400


def test_loopback_silent_client_times_out_and_is_dropped(tmp_path):
    kwargs = dict(clients_per_domain=2, n_rounds=2, random_state=0, n_quantiles=4,
                  timeout=3.0)  # fmt: skip
    clf, _ = _loopback_run(tmp_path, silent={100}, **kwargs)  # client 0 never answers
    setup = clf.federated_run_.setup
    assert {failure["client"] for failure in setup["failures"]} == {0}
    assert "no reply within 3.0 s" in setup["failures"][0]["error"]
    for record in clf.federated_run_.history:
        assert record["restarts"] == 1 and 0 not in record["participants"][0]
    assert len(clf.estimators_) == 2


def test_secure_sums_give_the_plain_model_and_the_server_sees_only_masked_replies(tmp_path):
    """Pairwise-masked round replies (3 clients per source): the server's sums are the plain
    ones to the fixed-point resolution 2^-32 per client (≤ 3·2^-33 on a sum of ~13 points'
    losses, so F_k and α move by < 1e-9 relative; 1e-7 is the bound checked), and every round
    reply a client sends holds only uint64 words."""
    kwargs = dict(clients_per_domain=3, n_rounds=4, random_state=3, n_quantiles=4,
                  domain_classifier="central")  # fmt: skip
    links = []
    clf, (X, y, domains) = _loopback_run(tmp_path, link_out=links, secure=True, **kwargs)
    reference = simulate(X, y, domains, **kwargs)
    assert_same_run(clf, reference, X, rtol=1e-7)
    masked = links[0][0].replies["round"]
    assert len(masked) == 4 * 9  # 4 rounds × 9 clients
    for header in masked:  # what the wire carries: names, dtypes, shapes of the arrays
        assert {key for key, _, _ in header} == {"int:n_points", "loss_sum", "edge_sums"}
        assert all(np.dtype(dtype) == np.uint64 for _, dtype, _ in header)
    with pytest.raises(ValueError, match="secure sums need retries=0, got retries=1"):
        runner.prepare_federation(X, y, domains, 1, secure=True, retries=1)
    with pytest.raises(ValueError, match="secure must be True or False, got 'yes'"):
        runner.prepare_federation(X, y, domains, 1, secure="yes")


def grid_three_domains(n_per_domain=40, seed=1):
    """Three sources, 3 features of 7 distinct values each (so the candidate table of every
    midpoint is ``MultiBoostClassifier(n_bins=8)``'s bins) and a label that needs two splits,
    with source-dependent noise (random counts per cell: no two splits tie)."""
    values = np.sort(np.random.default_rng(0).normal(size=(3, 7)), axis=1)
    rng = np.random.default_rng(seed)
    domains = np.repeat([0, 1, 2], n_per_domain)
    X = np.column_stack([values[j, rng.integers(7, size=domains.size)] for j in range(3)])
    X[:, 2] = values[2, domains * 2 + rng.integers(2, size=domains.size)]
    flip = rng.random(domains.size) < 0.05 * (domains + 1)
    y = ((X[:, 0] > values[0, 2]) & (X[:, 1] > values[1, 3])) ^ flip
    return X, y.astype(int), domains


class MaskRecordingLink(LoopbackLink):
    """The loopback that also keeps, per masked request, (phase, the masking group, the masked
    reply as it crossed the wire, the plain reply the client would have sent unmasked: the
    same ``respond`` on the same shard, payload and kept state)."""

    def __init__(self, shard_paths):
        super().__init__(shard_paths)
        self.masked = []

    def pull(self, message_ids):
        plain = {}
        for message_id in message_ids:
            if message_id not in self.inbox:
                continue
            node, phase, content = self.inbox[message_id]
            payload = clientapp.decode_request(content)[1]
            if "mask_me" not in payload:
                continue
            context = self.contexts[node]
            stored = context.state.config_records.get(clientapp.KEPT)
            kept = clientapp.kept_from_record(stored) if stored is not None else {}
            unmasked = {key: value for key, value in payload.items()
                        if key not in clientapp.MASK_FIELDS}  # fmt: skip
            shard = clientapp.load_shard(context.node_config["shard"])
            group = (tuple(payload["mask_nonce"]), tuple(payload["mask_peers"]))
            plain[message_id] = (phase, group, respond(phase, shard, unmasked, kept)[0])
        replies = super().pull(message_ids)
        for message_id, reply in replies:
            if message_id in plain:
                self.masked.append((*plain[message_id], clientapp.decode_reply(reply)))
        return replies


@pytest.mark.parametrize(("max_depth", "mu"), [(2, None), (3, None), (2, 10.0)])
def test_secure_trees_are_multiboost_classifier_trees_and_every_histogram_is_masked(
    tmp_path, max_depth, mu
):
    """Secure sums with trees (3 clients per source, all taking part): the server grows each
    active source's tree from the masked sums of its clients' histograms (with μ each domain
    q's tree from every source's masked sums, weighted by p_l/m_l). The model is
    ``MultiBoostClassifier(max_depth=d, mu=μ)``'s on the pooled rows, to 1e-9 on the decision
    function: the fixed point rounds each client's value by ≤ 2^-33, so a sum of 3 moves by
    ≤ 3.5e-10 absolute, on losses, edges and histograms of sums of ~40 points' weights
    (relative ≤ 1e-11); the step, whose derivative in them is O(1/(ε(1 − ε))), moves α by
    < 1e-10 (checked: < 1e-9 on the decision function, Σ|α| ≤ 4 here). Every reply of
    the grow and histogram phases is uint64 words that differ from the plain
    encoding of what the client computed, and the masks cancel exactly (mod 2^64) in the sum
    over each source's group."""
    from manytask.boost import MultiBoostClassifier
    from manytask.boost.federated.flower import secure
    from manytask.boost.stumps import candidate_thresholds

    X, y, domains = grid_three_domains()
    kwargs = dict(n_rounds=6, random_state=0, thresholds=candidate_thresholds(X.T),
                  domain_classifier="central", max_depth=max_depth, mu=mu)  # fmt: skip
    federation = runner.prepare_federation(X, y, domains, 3, secure=True, **kwargs)
    link = MaskRecordingLink(runner.write_inputs(tmp_path, federation))
    config = {**federation["run_config"], "wait": 0.0}
    apps.run_server(link, config)
    clf = runner.federation_estimator(federation, *runner.read_result(config["result"]))
    central = MultiBoostClassifier(n_estimators=6, max_depth=max_depth, n_bins=8, mu=mu).fit(
        X, y, domains=domains)  # fmt: skip
    assert len(clf.estimators_) == len(central.estimators_) == 6
    assert any(np.isfinite(tree.thresholds).sum() > 1 for _, tree in clf.estimators_)
    Xt, _, _ = grid_three_domains(seed=2)
    for points in (X, Xt):
        np.testing.assert_allclose(
            clf.decision_function(points), central.decision_function(points), rtol=0, atol=1e-9
        )
    # the same run in process without masks: the same numbers on the wire in every round
    reference = simulate(X, y, domains, 3, histogram_trees=True, **kwargs)
    assert_same_run(clf, reference, X, rtol=1e-9)
    phases = {phase for phase, _, _, _ in link.masked}
    assert phases == {"grow", "histogram"}
    groups = {}
    for phase, group, plain, masked in link.masked:
        assert len(group[1]) == 3  # the source's three clients
        for key, value in plain.items():
            name = f"int:{key}" if isinstance(value, (int, np.integer)) else key
            words = np.asarray(masked[name], dtype=np.uint64)  # a 0-d one travels as an int
            assert words.shape == np.shape(value)
            assert np.all(words != secure.encode(value))  # a mask hit 0 with chance 2^-64
            total = groups.setdefault((phase, group, key), [0, 0])
            total[0] = total[0] + words  # mod 2^64
            total[1] = total[1] + secure.encode(value)
    assert any(phase == "histogram" for phase, _, _ in groups)
    for phase in ("grow", "histogram"):  # the arrays on the wire: uint64 words only
        headers = link.replies[phase]
        assert all(np.dtype(dtype) == np.uint64 for header in headers for _, dtype, _ in header)
    for masked_sum, plain_sum in groups.values():
        np.testing.assert_array_equal(masked_sum, plain_sum)  # the masks cancel exactly


def test_one_masked_reply_is_uniform_whatever_its_value():
    """A client's masked ``loss_sum`` over 4000 request batches (fixed keys, so the test is
    deterministic): its top and bottom 4 bits are uniform (χ² over 16 bins, p > 1e-3), for a
    value of 0 as for 10⁶; the plain encoding of the same value fails that test. The three
    clients' masked replies of each batch still sum to the plain total."""
    from scipy.stats import chisquare

    from manytask.boost.federated.flower import secure

    keys = [secure.new_key_pair(bytes([c + 1]) * 32) for c in range(3)]
    peers = {c: public for c, (_, public) in enumerate(keys)}
    for value in (0.0, 1e6):
        words, totals = [], []
        for batch in range(4000):
            replies = [secure.mask({"loss_sum": value + c}, c, keys[c][0], peers, (7, batch))
                       for c in range(3)]  # fmt: skip
            words.append(int(replies[0]["loss_sum"]))
            totals.append(secure.unmask_sum(replies)["loss_sum"])
        words = np.array(words, dtype=np.uint64)
        for bits in (words >> np.uint64(60), words & np.uint64(15)):
            assert chisquare(np.bincount(bits.astype(int), minlength=16)).pvalue > 1e-3
        np.testing.assert_allclose(totals, 3 * value + 3, rtol=0, atol=3 * 2.0**-32)
    plain = np.full(4000, int(secure.encode(1e6)), dtype=np.uint64) >> np.uint64(60)
    assert chisquare(np.bincount(plain.astype(int), minlength=16)).pvalue < 1e-100


def test_server_app_failure_is_reported_in_the_result(tmp_path):
    X, y, domains = three_domains(20)
    federation = runner.prepare_federation(X, y, domains, 1, n_rounds=1)
    link = LoopbackLink(runner.write_inputs(tmp_path, federation))
    config = {**federation["run_config"], "n-clients": 5, "wait": 0.0}  # only 3 nodes
    with pytest.raises(RuntimeError, match="3 SuperNodes connected"):
        apps.run_server(link, config)
    with pytest.raises(RuntimeError, match="the Flower ServerApp failed"):
        runner.read_result(config["result"])


def test_flower_transport_rejects_bad_timeout():
    with pytest.raises(ValueError, match="timeout must be None or > 0, got -1"):
        transport.FlowerTransport(LoopbackLink([]), {}, timeout=-1)


def test_run_local_federation_rejects_bad_arguments():
    X, y, domains = three_domains(10)
    with pytest.raises(ValueError, match="clients_per_domain must be an int >= 1, got 0"):
        runner.run_local_federation(X, y, domains, 0)
    with pytest.raises(ValueError, match="r must be None or an int >= 1, got 0"):
        runner.run_local_federation(X, y, domains, 1, r=0)
    with pytest.raises(ValueError, match="domain_classifier must be one of"):
        runner.run_local_federation(X, y, domains, 1, domain_classifier="pooled")


def test_server_app_rejects_a_bad_domain_classifier_config(tmp_path):
    X, y, domains = three_domains(10)
    federation = runner.prepare_federation(X, y, domains, 1, n_rounds=1)
    link = LoopbackLink(runner.write_inputs(tmp_path, federation))
    config = {**federation["run_config"], "domain-classifier": "pooled", "wait": 0.0}
    with pytest.raises(ValueError, match="domain-classifier must be 'federated' or 'central'"):
        apps.run_server(link, config)
    with pytest.raises(RuntimeError, match="domain-classifier must be"):
        runner.read_result(config["result"])


def test_client_failure_after_retries_names_client(tmp_path):
    link = LoopbackLink([tmp_path / "missing.npz"])
    flower = transport.FlowerTransport(link, {0: 100}, retries=1)
    with pytest.raises(ClientFailure, match="client 0 failed in phase 'losses'"):
        flower.request("losses", {0: state_to_payload(ModelState())})
    assert [failure["attempt"] for failure in flower.failures] == [0, 1]
    # Flower's error code by name (CLIENT_APP_RAISED_EXCEPTION above), then the reason
    for failure in flower.failures:
        assert re.match(r"ClientAppError\(['\"]CLIENT_APP_RAISED_EXCEPTION: .*missing\.npz",
                        failure["error"]), failure["error"]  # fmt: skip


@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="Flower's Simulation Runtime needs Ray: pip install 'flwr[simulation]'",
)
def test_simulation_runtime_equals_simulate(tmp_path, flower_processes):
    """The same app on Flower's Simulation Runtime (``flower-superlink --simulation`` +
    ``flwr run``; virtual SuperNodes read their shard by partition id), federated Q, 3 rounds."""
    X, y, domains = three_domains(40)
    kwargs = dict(n_rounds=3, random_state=0, n_quantiles=4)
    clf = runner.run_local_federation(X, y, domains, 1, runtime="simulation", workdir=tmp_path,
                                      **kwargs)  # fmt: skip
    reference = simulate(X, y, domains, 1, **kwargs)
    assert_same_run(clf, reference, X)
    assert clf.federated_run_.setup["domain_classifier"]["converged"]
    logs = sorted(path.name for path in (tmp_path / "logs").iterdir())
    assert logs == ["flwr-run.log", "superlink.log"]  # no SuperNode processes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the process in /proc")
@pytest.mark.parametrize("max_depth", [1, 3])
def test_deployment_runtime_equals_simulate_and_drops_a_killed_supernode(deployment_run,
                                                                          max_depth):  # fmt: skip
    """The module's Deployment Runtime federations (:func:`deployment_run`: stumps, and trees
    of depth 3 with their propose and score phases), one SuperNode SIGKILLed in the first
    round: the server gets no reply from it within the round timeout (or Flower's
    NODE_UNAVAILABLE / expired-message error first), drops the client and restarts the round;
    later rounds go on without it. The model equals the in-process run in which the same
    client fails from the same round and phase on (so no round committed half of an update),
    and the run's failures name that client and only it."""
    if max_depth not in deployment_run:
        pytest.skip("trees on the Deployment Runtime run with MANYTASK_SLOW_TESTS=1")
    deployment_run = deployment_run[max_depth]
    worker, killer = deployment_run["threads"]
    worker.join(1800)  # a generous bound (it may wait for the other federation first)
    killer.join(10)
    assert not worker.is_alive() and "error" not in deployment_run, deployment_run.get("error")
    assert deployment_run.get("killed") is not None, "the run ended before the kill"
    X, y, domains = deployment_run["X"], deployment_run["y"], deployment_run["domains"]
    victim, timeout, kwargs = (deployment_run[key] for key in ("victim", "timeout", "kwargs"))
    clf = deployment_run["clf"]
    history = clf.federated_run_.history
    failures = [failure for record in history for failure in record["failures"]]
    assert failures and {failure["client"] for failure in failures} == {victim}
    errors = [failure["error"] for failure in failures]
    lost_node = re.compile(r"(ClientAppError\(['\"](NODE_UNAVAILABLE|MESSAGE_UNAVAILABLE|"
                           r"REPLY_MESSAGE_UNAVAILABLE): |TimeoutError\(['\"]no reply within "
                           rf"{timeout} s)")  # fmt: skip
    assert all(lost_node.match(error) for error in errors), errors
    lost = min(record["round"] for record in history if record["failures"])
    assert len(history) == kwargs["n_rounds"]
    for record in history:  # in the run up to its loss, never after
        everyone = [c for ids in record["participants"] for c in ids]
        assert (victim in everyone) == (record["round"] < lost)

    # a round of trees is two batches: the victim may have answered the first before its kill
    first_phase = next(failure["phase"] for failure in failures)
    phases = ["round", "propose", "score", "line_search"]  # a round's batches, in order

    def fault(round_number, client, phase):
        if client == victim and (round_number > lost or round_number == lost and
                                 phases.index(phase) >= phases.index(first_phase)):  # fmt: skip
            raise ConnectionError("lost")

    reference = simulate(X, y, domains, 2, fault=fault, **kwargs)
    assert_same_run(clf, reference, X)  # also the numbers sent and received in every round
    for record, record_ref in zip(history, reference.federated_run_.history):
        assert record["restarts"] == record_ref["restarts"] == int(record["round"] >= lost)
        assert [(f["client"], f["phase"]) for f in record["failures"]] == [
            (f["client"], f["phase"]) for f in record_ref["failures"]
        ]
