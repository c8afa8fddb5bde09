"""Per-round time of MultiBoost on Dask workers against one process; Flower's overhead.

(a) MultiBoost on m = 1 200 000 points × d = 100 features from 3 sources (the model of
``bench_boost.synthetic_sources``, generated chunk by chunk), the rows in 4 chunks generated
on the 4 worker processes (1 thread each) of a ``LocalCluster`` that hold them:
``DaskMultiBoostClassifier(...).fit(X_dask, y_dask, domains_dask)``, i.e. the federated
protocol with each chunk's sources as clients (12 clients), against one process:
  * the central ``MultiBoostClassifier(n_bins=256)`` (histogram stump search),
  * the same protocol over the in-process transport, on the same 12 clients.
The Dask fit trains Q(k|x) federated over its clients (its default: no row reaches the
driver); the two in-process runs get that Q (the in-process clients install it by the same
``domain_model`` request), and all three the same candidate stumps: the single-process binned
thresholds (255 per feature) plus the constant stump.
Per round: the median of the run's round wall times (the central fit's rounds are timed
inside the fit). Where the time goes: per phase, the driver's wall time, the clients'
compute time on their workers (summed, and on the busiest worker) and the rest (pickling,
transfer, waiting); the server's own work is the round time minus the phases. Written to
its own block of RESULTS.md (``bench_fed_dask``).

(b) Flower on loopback: ``flower.run_local_federation`` on Flower's Simulation Runtime
(``flower-superlink --simulation``, Ray) and on its Deployment Runtime (SuperLink and one
SuperNode per client as local processes), unpatched, against ``simulate`` with the same
arguments, 3 and 10 clients of one source, small data (the compute is negligible): start-up,
per-round time and per request batch (the ServerApp's push-to-last-reply time), and the
import time of a ClientApp process (the Deployment Runtime starts one per message).

Run: ``python benchmarks/bench_fed.py`` (``--quick``: m = 120 000, fewer rounds, Flower with 3
clients only; ``--skip-dask``, ``--skip-flower``: leave a part out). Needs the ``dist`` extra
(Dask) and, for (b), the ``fed`` extra (Flower; ``flwr[simulation]`` for its Simulation
Runtime); each Flower federation runs in a child process, stopped after 600 s.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # shared cores; the worker processes inherit this

import argparse  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from bench_boost import synthetic_sources  # noqa: E402

from _common import machine, markdown_table, write_section  # noqa: E402

N_FEATURES = 100
N_WORKERS = 4
N_BINS = 256
# the transport's set-up requests (Q's training, sketches, candidates), not per round
SETUP_PHASES = ("domain_moments", "domain_loss", "domain_model", "setup", "candidates")
Q_ROWS = 20_000  # the central Q of the comparison of log losses


def source_chunk(chunk, rows, d=N_FEATURES, n_sources=3):
    """(X, y, domains) of one chunk: ``bench_boost.synthetic_sources``'s model (means, shared
    and own weights drawn from seed 0, the same in every chunk), the points from seed
    (1, chunk), so a worker generates its chunk where it will stay."""
    model = np.random.default_rng(0)
    means = model.normal(size=(n_sources, d)) * (np.arange(d) < 10)
    informative = np.arange(d) < 20
    shared = model.normal(size=d) * informative
    own = 0.7 * model.normal(size=(n_sources, d)) * informative
    rng = np.random.default_rng([1, chunk])
    domains = rng.integers(0, n_sources, size=rows)
    X = rng.normal(size=(rows, d)) + means[domains]
    score = np.einsum("ij,ij->i", X, shared + own[domains]) + rng.normal(size=rows)
    return X, (score > 0).astype(int), domains


def candidates(X):
    """The single-process binned thresholds of every feature, after the constant stump."""
    from manytask.boost.stumps import presort

    binned = presort(X, n_bins=N_BINS)
    return [
        np.concatenate([[-np.inf], binned.thresholds[j, : binned.n_thresholds[j]]])
        for j in range(X.shape[1])
    ]


def chunk_shards(X, y, domains, probabilities, chunk):
    """The Dask clients, built in this process: each chunk's rows of each source."""
    from manytask.boost.federated import ClientShard

    shards, by_domain = [], [[] for _ in np.unique(domains)]
    signs = np.where(y == 1, 1.0, -1.0)
    for start in range(0, X.shape[0], chunk):
        rows = np.arange(start, min(start + chunk, X.shape[0]))
        for k in np.unique(domains[rows]):
            part = rows[domains[rows] == k]
            by_domain[k].append(len(shards))
            q_part = None if probabilities is None else probabilities[part]
            shards.append(ClientShard(X[part], signs[part], int(k), q_part))
    return shards, by_domain


def run_in_process(X, y, domains, q, thresholds, n_rounds, chunk):
    """The protocol on the in-process transport: (weights, round seconds, {"wall" | "cpu":
    {phase: seconds}}, set-up seconds)."""
    from manytask.boost.federated import (
        FederatedServer,
        InProcessTransport,
        run_rounds,
        setup_candidates,
    )

    class TimedTransport(InProcessTransport):
        def _send(self, phase, payloads):
            start, cpu_start = time.perf_counter(), time.process_time()
            try:
                return super()._send(phase, payloads)
            finally:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start
                self.cpu[phase] = self.cpu.get(phase, 0.0) + time.process_time() - cpu_start

    start = time.perf_counter()
    shards, by_domain = chunk_shards(X, y, domains, None, chunk)
    transport = TimedTransport(shards)
    transport.seconds, transport.cpu = {}, {}
    model = q.estimator_  # the Dask run's federated Q, installed as the Dask clients did
    install = {"coef": model.coef, "intercept": model.intercept, "clip": q.clip}
    transport.request("domain_model", {c: install for c in range(len(shards))})
    features, flat, setup = setup_candidates(transport, range(len(shards)), X.shape[1],
                                             thresholds)  # fmt: skip
    server = FederatedServer(len(by_domain), features, flat)
    server.min_probabilities = setup["min_probabilities"]
    setup = time.perf_counter() - start
    history = run_rounds(server, transport, by_domain, n_rounds)
    phases = {"wall": transport.seconds, "cpu": transport.cpu}
    return server.state.steps, [record["seconds"] for record in history], phases, setup


def run_central(X, y, domains, q, n_rounds):
    """Central binned MultiBoost: (fitted model, median round seconds, set-up seconds).

    Each round is timed inside the fit (the estimator's round method, wrapped on the
    instance); if the fit no longer calls it, (fit with T rounds − fit with 1)/(T − 1).
    """
    from manytask.boost import MultiBoostClassifier

    def make(rounds):
        return MultiBoostClassifier(n_estimators=rounds, n_bins=N_BINS,
                                    domain_classifier=q.estimator_)  # fmt: skip

    warm = slice(0, min(X.shape[0], 20_000))  # warm-up (compiled kernels, caches)
    make(2).fit(X[warm], y[warm], domains[warm])
    model, round_seconds = make(n_rounds), []
    boost_round = getattr(model, "_boost_round", None)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return boost_round(*args, **kwargs)
        finally:
            round_seconds.append(time.perf_counter() - start)

    if boost_round is not None:
        model._boost_round = timed
    start = time.perf_counter()
    model.fit(X, y, domains)
    total = time.perf_counter() - start
    if boost_round is not None:
        del model._boost_round
    if round_seconds:
        return model, float(np.median(round_seconds)), total - sum(round_seconds)
    start = time.perf_counter()
    make(1).fit(X, y, domains)
    one = time.perf_counter() - start
    per_round = (total - one) / max(len(model.estimators_) - 1, 1)
    return model, per_round, one - per_round


def run_dask(thresholds, n_rounds, chunk, d):
    """On a fresh LocalCluster, each worker generates one chunk (``source_chunk``) and keeps
    it; the Dask fit with the federated Q: (model, round seconds, set-up seconds, cluster
    start seconds)."""
    import operator

    import dask.array as da
    from distributed import Client, LocalCluster

    from manytask.boost.federated.dask import DaskMultiBoostClassifier

    start = time.perf_counter()
    with LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:  # fmt: skip
        client.wait_for_workers(N_WORKERS)
        started = time.perf_counter() - start
        start = time.perf_counter()
        workers = sorted(client.scheduler_info()["workers"])
        columns = [[], [], []]
        for c, worker in enumerate(workers):
            made = client.submit(source_chunk, c, chunk, d, workers=[worker], pure=False)
            for position, shape, dtype in ((0, (chunk, d), float), (1, (chunk,), int),
                                           (2, (chunk,), int)):  # fmt: skip
                part = client.submit(operator.itemgetter(position), made, workers=[worker])
                columns[position].append(da.from_delayed(part, shape, dtype))
        X_dask, y_dask, domains_dask = (da.concatenate(parts) for parts in columns)
        model = DaskMultiBoostClassifier(n_estimators=n_rounds, thresholds=thresholds)
        model.fit(X_dask, y_dask, domains_dask, client=client)
        total = time.perf_counter() - start
    rounds = [record["seconds"] for record in model.federated_run_.history]
    return model, rounds, total - sum(rounds), started


def round_phases(phase_seconds):
    return sorted(phase for phase in phase_seconds if phase not in SETUP_PHASES)


def phase_table(dask_model, dask_rounds, process_phases, process_rounds):
    """Per phase and round: in-process wall and CPU; on Dask the driver's wall, the workers'
    CPU (all), the busiest worker's time answering, and the rest of the driver's wall."""
    timings = dask_model.dask_timings_  # the set-up and the rounds, not the final F
    n_dask, n_process = len(dask_rounds), len(process_rounds)
    phases = round_phases({**timings["phase_seconds"], **process_phases["wall"]})
    walls = {phase: timings["phase_seconds"].get(phase, 0.0) / n_dask for phase in phases}
    workers = timings["compute_seconds"].values()  # per worker {"wall"|"cpu": {phase: s}}
    rows = []
    for phase in phases:
        cpu = sum(worker["cpu"].get(phase, 0.0) for worker in workers) / n_dask
        busiest = max(worker["wall"].get(phase, 0.0) for worker in workers) / n_dask
        rows.append([
            phase, f"{process_phases['wall'].get(phase, 0.0) / n_process * 1e3:.0f}",
            f"{process_phases['cpu'].get(phase, 0.0) / n_process * 1e3:.0f}",
            f"{walls[phase] * 1e3:.0f}", f"{cpu * 1e3:.0f}", f"{busiest * 1e3:.0f}",
            f"{(walls[phase] - busiest) * 1e3:.0f}",
        ])  # fmt: skip
    server_dask = np.mean(dask_rounds) - sum(walls.values())
    server_process = np.mean(process_rounds) - sum(
        process_phases["wall"].get(phase, 0.0) / n_process for phase in phases
    )
    rows.append(["server (rest of the round)", f"{server_process * 1e3:.0f}", "—",
                 f"{server_dask * 1e3:.0f}", "—", "—", "—"])  # fmt: skip
    return rows


def first_difference(model, weights):
    """The first round whose α differs by > 1e-9 between the central fit and ``weights``,
    with the central round's direction rule (``paper`` or the ``steepest`` fallback)."""
    central = model.estimator_weights_
    n = min(central.size, weights.size)
    differing = np.flatnonzero(np.abs(central[:n] - weights[:n]) > 1e-9)
    if differing.size == 0:
        return "none"
    entries = [entry for entry in model.history_ if entry.get("stump") is not None]
    rule = entries[differing[0]].get("direction_rule", "?") if differing[0] < len(entries) else "?"
    return f"round {differing[0] + 1} (central direction rule: {rule})"


def section_dask(m, n_rounds):
    from sklearn.metrics import log_loss

    from manytask.boost import DomainClassifier

    chunk = -(-m // N_WORKERS)
    parts = [source_chunk(c, chunk) for c in range(N_WORKERS)]  # the same rows, in process
    X, y, domains = (np.concatenate(column) for column in zip(*parts))
    del parts
    start = time.perf_counter()
    thresholds = candidates(X)
    candidate_seconds = time.perf_counter() - start
    load = [os.getloadavg()[0]]
    model, dask_rounds, dask_setup, cluster_start = run_dask(
        thresholds, n_rounds, chunk, N_FEATURES
    )
    dask_round = float(np.median(dask_rounds))
    print(f"dask: {dask_round * 1e3:.0f} ms/round", flush=True)
    load.append(os.getloadavg()[0])
    q, q_record = model.domain_classifier_, model.federated_run_.setup["domain_classifier"]
    q_seconds = sum(
        model.dask_timings_["phase_seconds"].get(phase, 0.0)
        for phase in ("domain_moments", "domain_loss", "domain_model")
    )
    start = time.perf_counter()
    sample = np.random.default_rng(0).choice(X.shape[0], Q_ROWS, replace=False)
    sample_q = DomainClassifier().fit(X[sample], domains[sample])
    sample_q_seconds = time.perf_counter() - start
    q_losses = [log_loss(domains, c.predict_proba(X), labels=[0, 1, 2]) for c in (q, sample_q)]
    central, central_round, central_setup = run_central(X, y, domains, q, n_rounds)
    central_weights = central.estimator_weights_
    print(f"central: {central_round * 1e3:.0f} ms/round", flush=True)
    load.append(os.getloadavg()[0])
    process_weights, process_rounds, process_phases, process_setup = run_in_process(
        X, y, domains, q, thresholds, n_rounds, chunk
    )
    process_round = float(np.median(process_rounds))
    print(f"in-process protocol: {process_round * 1e3:.0f} ms/round", flush=True)
    load.append(os.getloadavg()[0])
    del X, y, domains
    dask_weights = model.estimator_weights_
    n_common = min(len(dask_weights), len(central_weights))
    rows = [
        ["central `MultiBoostClassifier(n_bins=256)`, 1 process", f"{central_round * 1e3:.0f}",
         f"{dask_round / central_round:.2f}", f"{central_setup:.1f}", len(central_weights)],
        ["federated protocol, in-process transport, 1 process", f"{process_round * 1e3:.0f}",
         f"{dask_round / process_round:.2f}", f"{process_setup:.1f}", len(process_weights)],
        [f"federated protocol on Dask, {N_WORKERS} worker processes (actors)",
         f"{dask_round * 1e3:.0f}", "1.00", f"{dask_setup:.1f}", len(dask_weights)],
    ]  # fmt: skip
    same_process = np.array_equal(dask_weights, process_weights)
    gap = float(np.max(np.abs(dask_weights[:n_common] - central_weights[:n_common])))
    header = ["run", "per round (ms, median)", "Dask round ÷ this round", "set-up (s)", "rounds"]
    phase_header = ["phase (per round)", "in-process wall (ms)", "in-process CPU (ms)",
                    "Dask: driver wall (ms)", "Dask: CPU, all workers (ms)",
                    "Dask: busiest worker answering (ms)",
                    "Dask: rest = wall − busiest (ms)"]  # fmt: skip
    process_mean, dask_mean = float(np.mean(process_rounds)), float(np.mean(dask_rounds))
    received = sum(record["numbers_from_clients"] for record in model.federated_run_.history)
    lines = [
        f"### MultiBoost on Dask: {m} × {N_FEATURES}, 3 sources, T = {n_rounds}",
        "",
        f"**This machine has {os.cpu_count()} cores**, shared with other jobs (1-minute load "
        f"average {' → '.join(f'{value:.1f}' for value in load)} before the Dask, "
        "central and in-process runs and at the end): the "
        f"{N_WORKERS} Dask workers (1 thread each) and the driver share them, so at most a "
        f"{min(os.cpu_count(), N_WORKERS)}× speed-up of the clients' compute is possible here "
        "and 4 workers cannot scale; the comparison measures the overhead of the distributed "
        "round, not scaling.",
        "",
        f"Each of the {N_WORKERS} worker processes (`LocalCluster`, 1 thread each) generates "
        f"its chunk of {chunk} rows and keeps it (the driver never holds the Dask run's data); "
        f"each chunk holds points of all 3 sources, so the protocol has {3 * N_WORKERS} "
        f"clients. The in-process runs use the same rows, generated in this process. Q(k|x): "
        "the Dask fit's default, trained federated over its 12 clients (no row reaches the "
        f"driver): {q_seconds:.1f} s, {q_record['iterations']} L-BFGS iterations, "
        f"{q_record['evaluations']} loss evaluations, {q_record['batches']} request batches, "
        f"{q_record['numbers_to_clients']} numbers to and {q_record['numbers_from_clients']} "
        f"from the clients, converged: {q_record['converged']}; log loss on all {m} rows "
        f"{q_losses[0]:.5f}, against {q_losses[1]:.5f} for the central Q on {Q_ROWS} rows "
        f"drawn at random ({sample_q_seconds:.1f} s). The in-process runs get that Q, and "
        "all runs the same candidates: the central binned thresholds (≤ 255 per feature, "
        "computed in "
        f"{candidate_seconds:.1f} s) + the constant stump. *set-up*: central = the fit minus "
        "its rounds (Q's predictions, presort); in-process = build the 12 shards, their edge "
        "indices and the candidates; Dask = generate and persist the chunks, build the shards, "
        f"actors, train Q, the shards' edge indices and candidates (the cluster itself started in "
        f"{cluster_start:.1f} s, not counted).",
        "",
        markdown_table(header, rows),
        "",
        f"Same ensemble: Dask = in-process transport bit for bit: {same_process}; "
        f"max |Δα| Dask vs central over the first {n_common} rounds: {gap:.1e}; first "
        f"differing round: {first_difference(central, dask_weights)}. Numbers the driver "
        f"received from the clients in all {len(dask_rounds)} rounds: {received} "
        f"(the data: {m * N_FEATURES}). Round wall times (ms), in-process: "
        f"{', '.join(f'{t * 1e3:.0f}' for t in process_rounds)}; Dask: "
        f"{', '.join(f'{t * 1e3:.0f}' for t in dask_rounds)}; means {process_mean * 1e3:.0f} "
        f"and {dask_mean * 1e3:.0f} ({dask_mean / process_mean:.2f}×)."
        "",
        "",
        "Where a round's time goes (per round, mean over the run):",
        "",
        markdown_table(
            phase_header, phase_table(model, dask_rounds, process_phases, process_rounds)
        ),  # fmt: skip
        "",
        "*CPU*: CPU time of the answering threads (immune to waiting for a core); *busiest "
        "worker answering*: the wall time one worker's actor spent in `protocol.respond` "
        "(waits for a core included); *rest*: the driver's wall time of the phase minus "
        "that = pickling, sending, the actor call, collecting. Means over the rounds (the "
        "set-up's requests are in other phases).",
    ]
    return "\n".join(lines)


class SuperNodeLogWatcher:
    """Timestamps (``time.time()``, every 20 ms) the lines of the SuperNodes' logs saying they
    fetched a message ("Receiving: query message") and sent its reply ("Sending: ..."): Flower
    prints no time, and the ServerApp's batch starts are ``time.time()`` too."""

    def __init__(self, logs: Path):
        import threading

        self.logs, self.events, self.stop = logs, {}, threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        seen = {}
        while not self.stop.is_set():
            now = time.time()
            for path in self.logs.glob("supernode-*.log"):
                text = path.read_text(errors="replace")
                for line in text[seen.get(path, 0) :].splitlines():
                    for kind in ("Receiving", "Sending"):
                        if f"{kind}: query message" in line:
                            self.events.setdefault(path.stem, {}).setdefault(kind, []).append(now)
                seen[path] = text.rfind("\n") + 1
            time.sleep(0.02)

    def close(self):
        self.stop.set()
        self.thread.join()


def deployment_breakdown(starts, ends, events) -> dict:
    """Per message (every SuperNode gets one per batch, in order): seconds from the push to
    the SuperNode's fetch, and from the fetch to the reply sent (the ClientApp process); per
    batch: from the last reply sent to the batch's end (the ServerApp holding every reply)."""
    nodes = [
        (node.get("Receiving", [])[1:], node.get("Sending", [])[1:]) for node in events.values()
    ]  # the first message is the hello (not a timed batch)
    fetch, clientapp, back = [], [], []
    for i, (start, end) in enumerate(zip(starts, ends)):
        sent = []
        for got_times, sent_times in nodes:
            if i < min(len(got_times), len(sent_times)):
                fetch.append(got_times[i] - start)
                clientapp.append(sent_times[i] - got_times[i])
                sent.append(sent_times[i])
        if sent:
            back.append(end - max(sent))
    return {"fetch": fetch, "clientapp": clientapp, "back": back}


def flower_case(n_clients, n_rounds, runtime, secure=False) -> dict:
    """In a child process: Flower on ``runtime`` and ``simulate`` with the same arguments,
    round times (``n_clients`` of one source: Q ≡ 1); ``secure``: masked sums. On the
    Deployment Runtime, where each message's time goes (:func:`deployment_breakdown`)."""
    from manytask.boost.federated import simulate
    from manytask.boost.federated.flower import run_local_federation

    X, y, domains = synthetic_sources(600, 5, 1, seed=1)
    levels = np.linspace(0, 1, 10)[1:-1]
    thresholds = [np.unique(np.quantile(X[:, j], levels)) for j in range(X.shape[1])]
    kwargs = dict(n_rounds=n_rounds, random_state=0, thresholds=thresholds)
    with tempfile.TemporaryDirectory(prefix="bench-fed-") as workdir:
        (Path(workdir) / "logs").mkdir()
        watcher = SuperNodeLogWatcher(Path(workdir) / "logs")
        start = time.perf_counter()
        # a round timeout far above any batch here: a loaded machine must not drop healthy
        # clients
        flower = run_local_federation(X, y, domains, n_clients, runtime=runtime, secure=secure,
                                      timeout=300.0, workdir=workdir, **kwargs)  # fmt: skip
        flower_total = time.perf_counter() - start
        watcher.close()
    local = simulate(X, y, domains, n_clients, **kwargs)
    history, setup = flower.federated_run_.history, flower.federated_run_.setup
    starts = setup["batch_started"] + [t for r in history for t in r["batch_started"]]
    seconds = setup["batch_seconds"] + [s for r in history for s in r["batch_seconds"]]
    ends = [start + s for start, s in zip(starts, seconds)]
    return {
        "setup_batches": setup["batch_seconds"],
        "flower_rounds": [r["seconds"] for r in history],
        "local_rounds": [r["seconds"] for r in local.federated_run_.history],
        "batches": [len(r["batch_seconds"]) for r in history],
        "batch_seconds": [s for r in history for s in r["batch_seconds"]],
        "flower_total": flower_total,
        "startup": flower_total - sum(r["seconds"] for r in history),
        "same": bool(
            flower.estimator_weights_.shape == local.estimator_weights_.shape
            and np.allclose(
                flower.estimator_weights_, local.estimator_weights_, rtol=1e-7 if secure else 1e-9
            )
        ),
        "breakdown": deployment_breakdown(starts, ends, watcher.events),
    }


def clientapp_start_seconds() -> tuple[float, float]:
    """Wall seconds of what a Deployment Runtime ClientApp process does before it answers:
    Flower's own ``flwr-clientapp`` command starting (``--help``: Python and Flower's imports),
    and a fresh Python loading the app's ClientApp (``runner.CLIENT_SOURCE``)."""
    from manytask.boost.federated.flower import runner

    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as directory:
        runner.write_app(directory)
        start = time.perf_counter()
        subprocess.run([str(bin_dir / "flwr-clientapp"), "--help"], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        flower = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {runner.CLIENT_MODULE}"], cwd=directory,
                       check=True)  # fmt: skip
        return flower, time.perf_counter() - start


_MARKER = "MANYTASK_BENCH_FED_CHILD"  # set in the Flower child's environment, inherited


def _marked_processes(token: str) -> list[int]:
    """Ids of the processes whose environment holds ``_MARKER=token``: the Flower child and
    every process it started, even those the runner detached into their own sessions."""
    needle = f"{_MARKER}={token}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if needle in handle.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _run_flower_child(n_clients, n_rounds, timeout, runtime, secure=False):
    """``flower_case`` in a child process. On timeout: SIGINT (Flower's runner then stops its
    processes), after min(30 s, timeout/2) SIGKILL to the child and to every process it
    started, found by id through an environment marker. Returns the dict or why not."""
    command = [sys.executable, __file__, "--flower-case", str(n_clients), str(n_rounds),
               runtime + ("+secure" if secure else "")]  # fmt: skip
    token = f"{os.getpid()}-{n_clients}-{time.time_ns()}"
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, _MARKER: token})  # fmt: skip
    try:
        output, errors = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGINT)
        try:
            child.communicate(timeout=min(30.0, timeout / 2))
        except subprocess.TimeoutExpired:
            pass
        output, errors = None, None
    for pid in _marked_processes(token):  # whatever is left, on success or not
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if output is None:
        child.communicate()
        return f"not run: no result within {timeout:.0f} s (stopped)"
    if child.returncode != 0:
        last = (errors.strip().splitlines() or ["no message"])[-1]
        return f"not run: the federation failed ({last[:160]})"
    return json.loads(output.strip().splitlines()[-1])


def section_flower(n_rounds, timeout, client_counts):
    """Flower on both runtimes against simulate, same arguments."""
    title = f"### (b) Flower on loopback: start-up, per round and per request batch, T = {n_rounds}"
    try:
        from manytask.boost.federated.flower import run_local_federation  # noqa: F401
    except ImportError as error:
        return f"{title}\n\nnot run: {error}"
    rows = []
    cases = [(runtime, n, False) for runtime in ("simulation", "deployment") for n in client_counts]
    cases.append(("simulation", client_counts[-1], True))
    breakdowns = {}
    for runtime, n_clients, secure in cases:
        load = os.getloadavg()[0]
        case = _run_flower_child(n_clients, n_rounds, timeout, runtime, secure)
        runtime = runtime + (", secure sums" if secure else "")
        if isinstance(case, str):
            rows.append([runtime, n_clients, case, "", "", "", "", "", "", ""])
            print(f"flower {runtime} {n_clients} clients: {case}", flush=True)
            continue
        flower_round = np.median(case["flower_rounds"])
        rows.append([
            runtime, n_clients, f"{case['startup']:.1f}", f"{flower_round * 1e3:.0f}",
            f"{np.median(case['batches']):.0f}",
            f"{np.median(case['batch_seconds']) * 1e3:.0f}",
            f"{100 * flower_round / 60:.1f}",
            f"{np.median(case['local_rounds']) * 1e3:.1f}", case["same"],
            f"{load:.0f} → {os.getloadavg()[0]:.0f}",
        ])  # fmt: skip
        if runtime == "deployment":
            breakdowns[n_clients] = case["breakdown"]
        print(f"flower {runtime} {n_clients} clients: {flower_round * 1e3:.0f} ms/round",
              flush=True)  # fmt: skip
    load = os.getloadavg()[0]
    flower_start, app_start = clientapp_start_seconds()
    mask_ms, unmask_ms = masking_seconds(client_counts[-1])
    header = ["runtime", "clients", "start-up, set-up, stop (s)", "Flower per round (ms)",
              "request batches per round", "per request batch (ms)", "100 rounds (min)",
              "simulate per round (ms)", "same α as simulate (1e-9; secure 1e-7)",
              "load average"]  # fmt: skip
    parts = [("fetch", "push → the SuperNode fetches it"),
             ("clientapp", "fetched → reply sent (the ClientApp process)"),
             ("back", "last reply sent → the ServerApp has them all (per batch)")]  # fmt: skip
    breakdown_rows = [
        [n, len(times["fetch"]), *(f"{np.median(times[key]):.2f} ({np.max(times[key]):.2f})"
                                   for key, _ in parts)]
        for n, times in breakdowns.items() if times["fetch"]
    ]  # fmt: skip
    breakdown_header = ["deployment, clients", "messages",
                        *(f"{label}: median (max) s" for _, label in parts)]  # fmt: skip
    return "\n".join([
        title,
        "",
        f"Measured {machine()}, Flower {_flwr_version()}, unpatched, started with its own "
        "commands: *simulation*: `flower-superlink --simulation` (Ray workers run the "
        "ClientApps of the virtual SuperNodes, loaded once per worker); *deployment*: "
        "`flower-superlink` and one `flower-supernode` per client (HTTP on 127.0.0.1), "
        "each starting a ClientApp process per message (Flower's design since 1.21); "
        "`flwr run` submits the app to either. Against `simulate` with the same arguments: "
        "600 points × 5 features from one source (Q ≡ 1), 8 quantile thresholds per feature, "
        "AdaBoost step (one request batch per round); medians over the rounds. *start-up, "
        "set-up, stop*: the whole call minus its rounds (processes, Ray, the clients' hello, "
        "the candidates, stopping). *per request batch*: the ServerApp's wall time from "
        "pushing one request to every client to its last reply. "
        f"{os.cpu_count()} cores shared by every process and by other engineers' jobs "
        f"(load average before → after each run); each federation runs in a child process "
        f"stopped after {timeout:.0f} s.",
        "",
        markdown_table(header, rows),
        "",
        "Where a Deployment Runtime message's time goes (every message of the set-up and the "
        "rounds after the hello; the SuperNodes' log lines timestamped every 20 ms against the "
        "ServerApp's batch starts and ends):",
        "",
        markdown_table(breakdown_header, breakdown_rows),
        "",
        "*Push → fetch*: a SuperNode that finds no message waits 3 s before asking the "
        "SuperLink again (a fixed pause in Flower's SuperNode loop, no option), so a request "
        "waits 0–3 s to be fetched. *Fetched → sent*: Flower's SuperExec (polling every "
        "0.05 s here through its `FLWR_SUPEREXEC_TASK_POLL_INTERVAL` environment variable; "
        "1 s by default) starts a ClientApp process for the message; Flower's "
        f"`flwr-clientapp` command alone takes {flower_start:.1f} s to start (`--help`) and a "
        f"fresh Python loading the app's ClientApp {app_start:.1f} s (load {load:.0f}); the "
        "answer itself is under a millisecond, and the SuperNode checks for the reply every "
        "0.5 s. *Sent → ServerApp*: the SuperLink's routing and the ServerApp's pulls. A batch "
        "ends with the slowest of its clients, all of them starting processes on 2 shared "
        "cores. On the Simulation Runtime the ClientApps stay loaded in the Ray workers and a "
        "batch is Flower's message routing (the SuperLink hands messages to the workers every "
        "0.1 s).",
        "",
        f"Secure sums (`secure=True`, `flower.secure`): per round a client masks its "
        f"reply ({N_SECURE} numbers) against its {client_counts[-1] - 1} peers in "
        f"{mask_ms:.2f} ms (X25519 agreement + AES-CTR stream per peer) and the server "
        f"unmasks the source's sum in {unmask_ms:.2f} ms (in-process timings, medians of 50); "
        "each request carries the group's public keys (32 bytes per peer) and the nonce.",
    ])  # fmt: skip


N_SECURE = 12  # numbers in a round reply with s = 10 candidates: n_points, loss_sum, 10 edges


def masking_seconds(n_clients) -> tuple[float, float]:
    """Median milliseconds to mask one client's round reply against ``n_clients − 1`` peers,
    and to unmask the group's sum."""
    from manytask.boost.federated.flower import secure

    keys = [secure.new_key_pair() for _ in range(n_clients)]
    peers = {c: public for c, (_, public) in enumerate(keys)}
    reply = {"n_points": 60, "loss_sum": 12.5, "edge_sums": np.linspace(-1, 1, N_SECURE - 2)}
    mask_times, unmask_times = [], []
    for batch in range(50):
        start = time.perf_counter()
        masked = [secure.mask(reply, c, keys[c][0], peers, (1, batch)) for c in range(n_clients)]
        mask_times.append((time.perf_counter() - start) / n_clients)
        start = time.perf_counter()
        secure.unmask_sum(masked)
        unmask_times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(mask_times)), 1e3 * float(np.median(unmask_times))


def _flwr_version() -> str:
    from importlib.metadata import version

    return version("flwr")


def write_dask_section(m, n_rounds, quick):
    """Part (a), written to its own block of RESULTS.md."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Q clipping notes, Dask's large-graph notes
        section = section_dask(m, n_rounds)
    text = "\n".join([
        "## Federated MultiBoost on Dask: workers against one process",
        "",
        f"Measured {machine()}. `python benchmarks/bench_fed.py --skip-flower"
        + (" --quick`" if quick else "`") + f", {(time.perf_counter() - start) / 60:.1f} min.",
        "",
        section,
    ])  # fmt: skip
    write_section("bench_fed_dask", text)
    print(text)


# ----------------------------------------------- (c) communication per round (the paper's round)


def communication_case(X, y, domains, clients_per_domain, r, s, mu, step, n_rounds,
                       max_depth=1):  # fmt: skip
    """One ``simulate`` run: per client and round the numbers each way, request batches."""
    from manytask.boost.federated import simulate

    start = time.perf_counter()
    model = simulate(X, y, domains, clients_per_domain, r=r, s=s, n_rounds=n_rounds,
                     random_state=0, mu=mu, step=step, domain_classifier="central",
                     record_messages=True, max_depth=max_depth)  # fmt: skip
    seconds = time.perf_counter() - start
    history = model.federated_run_.history
    taking_part = np.array([sum(len(ids) for ids in h["participants"]) for h in history])
    return {
        "to": float(np.mean([h["numbers_to_clients"] for h in history] / taking_part)),
        "from": float(np.mean([h["numbers_from_clients"] for h in history] / taking_part)),
        "most_from": max(
            sum(np.size(value) for value in message.values())
            for round_number, _, _, message in model.federated_run_.messages
            if round_number > 0
        ),  # fmt: skip
        "batches": float(np.mean([h["batches"] for h in history])),
        "rounds": len(history),
        "candidates": model.federated_run_.setup["n_candidates"],
        "seconds": seconds,
        "model": model,
    }


def tree_communication(X, y, domains, clients, n_rounds, p):
    """Trees (max_depth = d): per client and round the numbers each way against the
    protocol's count, the training agnostic error, against stumps with the same r and s."""
    from manytask.boost import mixture_errors

    rows = []
    for depth in (1, 2, 4):
        for step in ("adaboost", "exact_line_search"):
            r, s = 5, 2
            case = communication_case(X, y, domains, clients, r, s, None, step, n_rounds, depth)
            per_tree = 2 * (2**depth - 1) + 2**depth
            expected = "s + 2" if depth == 1 else f"{2 + per_tree} + s (scorers)"
            errors = mixture_errors(case["model"], X, y, domains)
            rows.append([
                depth, r, s, step, case["rounds"], f"{case['to']:.0f}", f"{case['from']:.0f}",
                case["most_from"], expected, f"{case['batches']:.1f}",
                f"{errors.agnostic:.4f}", f"{case['seconds']:.1f}",
            ])  # fmt: skip
            print(f"trees depth={depth} {step}: {rows[-1]}", flush=True)
    header = ["d", "r", "s", "step", "rounds", "to each client (mean)",
              "from each client (mean)", "from a client (max)", "protocol's message",
              "request batches / round", "agnostic training error", "seconds"]  # fmt: skip
    return "\n".join(
        [
            f"### (d) Trees: the same data, r = 5 of {clients} clients and s = 2 candidates per "
            f"source, T = {n_rounds}",
            "",
            "d = 1: the candidate stumps (r, s as above). d > 1: each participant proposes its "
            "source's tree (2 + 2·(2^d − 1) + 2^d numbers: Φ_c, Z_c and the tree), the server "
            "sends each participant of an active source the s trees of its source (their "
            "2·(2^d − 1) + 2^d parameters each, counted in *to each client*) and gets s edges "
            "back: two request batches per round with the AdaBoost step, so *from each client* "
            "(per round) adds the two messages a scorer sends and *from a client (max)* is the "
            "largest single message. *agnostic training error*: max over the sources of the "
            "training error (`mixture_errors`). *seconds*: the whole `simulate` call; the first "
            "tree run (d = 2, adaboost) includes compiling the tree kernels (numba, once per "
            "process).",
            "",
            markdown_table(header, rows),
        ]
    )


def section_communication(quick=False):
    """Numbers per client and round against Figure 2's message, 4·p·(s + 2) and §5's O(p·s);
    request batches per round; the federated Q against the central one."""
    from sklearn.metrics import log_loss

    from manytask.boost import DomainClassifier
    from manytask.boost.federated import federated_domain_classifier

    m, d, clients, n_rounds = (3_000, 10, 10, 10) if quick else (30_000, 20, 10, 30)
    p = 3
    X, y, domains = synthetic_sources(m, d, p)
    rows = []
    for r, s in ((None, 10), (5, 10), (5, 50)):
        for mu in (None, 10.0):
            for step in ("adaboost", "exact_line_search"):
                case = communication_case(X, y, domains, clients, r, s, mu, step, n_rounds)
                s_used = min(s, case["candidates"])
                figure2 = s_used + 2 if mu is None else p * s_used + 2
                rows.append([
                    "all" if r is None else r, s_used, "hard max" if mu is None else f"μ = {mu:g}",
                    step, f"{case['to']:.0f}", f"{case['from']:.0f}", case["most_from"], figure2,
                    4 * p * (s_used + 2), (clients if r is None else r) * p * (s_used + 2),
                    f"{case['batches']:.1f}",
                ])  # fmt: skip
                print(f"communication r={r} s={s} mu={mu} {step}: {rows[-1]}", flush=True)
    start = time.perf_counter()
    central = DomainClassifier().fit(X, domains)
    central_seconds = time.perf_counter() - start
    start = time.perf_counter()
    federated, record = federated_domain_classifier(X, domains, clients, random_state=0)
    federated_seconds = time.perf_counter() - start
    trees = tree_communication(X, y, domains, clients, n_rounds, p)
    losses = [log_loss(domains, q.predict_proba(X)) for q in (central, federated)]
    gap = float(np.max(np.abs(central.predict_proba(X) - federated.predict_proba(X))))
    header = ["r", "s", "objective", "step", "to each client (mean)", "from each client (mean)",
              "from a client (max)", "Figure 2's message s + 2 (soft-max p·s + 2)",
              "bound 4·p·(s + 2)", "§5: r·p·(s + 2), all clients",
              "request batches / round"]  # fmt: skip
    return "\n".join([
        f"### (c) Communication per round: {m} × {d}, p = {p} sources × {clients} clients, "
        f"T = {n_rounds}",
        "",
        "`simulate` (in process) with r clients and s candidate stumps sampled per source and "
        "round, the clients' 16-level quantile thresholds, the central Q (the same for every "
        "row). Numbers per selected client and round, means over the rounds (the set-up, "
        "paid once, is left out); *from a client (max)*: the largest message of the run. "
        "With the AdaBoost step a round is one request batch and a client sends s + 2 "
        "numbers (its Φ_c, Z_c and β_(c,r) for its own source's s candidates; the soft-max "
        "needs every source's row: p·s + 2); §5's O(p·s) is the sum over a round's clients. "
        "The exact line search adds its batches of trial steps.",
        "",
        markdown_table(header, rows),
        "",
        f"Q(k|x) trained federated (L-BFGS on the clients' summed gradients, "
        f"{record['iterations']} iterations, {record['batches']} request batches, "
        f"{record['numbers_to_clients']} numbers to and {record['numbers_from_clients']} from "
        f"the clients in all, {federated_seconds:.1f} s in process) against the central default "
        f"({central_seconds:.1f} s): training log loss {losses[1]:.6f} vs {losses[0]:.6f}; "
        f"max |ΔQ| {gap:.1e} over the training points.",
        "",
        trees,
    ])  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="m = 120 000, fewer rounds")
    parser.add_argument("--skip-flower", action="store_true", help="no part (b)")
    parser.add_argument("--skip-dask", action="store_true", help="no part (a)")
    parser.add_argument("--flower-case", nargs=3, metavar=("CLIENTS", "ROUNDS", "RUNTIME"))
    parser.add_argument("--communication-only", action="store_true",
                        help="only part (c), written to its own section of RESULTS.md")  # fmt: skip
    args = parser.parse_args(argv)
    if args.communication_only:
        start, load = time.perf_counter(), os.getloadavg()[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            section = section_communication(args.quick)
        text = "\n".join([
            "## Federated MultiBoost: numbers and request batches per round",
            "",
            f"Measured {machine()}; 1-minute load average {load:.1f} at the start. "
            "`python benchmarks/bench_fed.py --communication-only"
            + (" --quick`" if args.quick else "`")
            + f", {(time.perf_counter() - start) / 60:.1f} min.",
            "",
            section,
        ])  # fmt: skip
        write_section("bench_fed_communication", text)
        print(text)
        return 0
    if args.flower_case:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            n_clients, n_rounds, runtime = args.flower_case
            case = flower_case(int(n_clients), int(n_rounds), runtime.removesuffix("+secure"),
                               runtime.endswith("+secure"))  # fmt: skip
            print(json.dumps(case))
        return 0
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    threadpool_limits(1, user_api="blas")
    m, n_rounds, flower_rounds, flower_timeout, flower_clients = (
        (120_000, 4, 3, 600.0, (3,)) if args.quick else (1_200_000, 6, 5, 600.0, (3, 10))
    )
    if not args.skip_dask:
        write_dask_section(m, n_rounds, args.quick)
    if args.skip_flower:
        return 0
    start, load = time.perf_counter(), os.getloadavg()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flower_section = (
            "### (b) Flower's per-round overhead\n\nnot run: --skip-flower"
            if args.skip_flower
            else section_flower(flower_rounds, flower_timeout, flower_clients)
        )
    wall = time.perf_counter() - start
    text = "\n".join([
        "## Federated MultiBoost: Flower's overhead",
        "",
        f"Measured {machine()}; 1-minute load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end. `python benchmarks/bench_fed.py --skip-dask"
        + (" --quick`" if args.quick else "`") + f", {wall / 60:.1f} min in all. Dask: the "
        "section *Federated MultiBoost on Dask* (block `bench_fed_dask`).",
        "",
        flower_section,
    ])  # fmt: skip
    write_section("bench_fed", text)
    print(text)
    print("wrote benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
