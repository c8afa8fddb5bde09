"""Per-round time of MultiBoost on Dask workers against one process; Flower's overhead.

(a) MultiBoost on m = 120 000 points × d = 100 features from 3 sources
(``bench_boost.synthetic_sources``), the rows in 4 chunks on a ``LocalCluster`` of 4 worker
processes (1 thread each): ``MultiBoostClassifier(...).fit(X_dask, y, domains)``, i.e. the
federated protocol with each chunk's sources as clients (12 clients), against one process:
  * the central ``MultiBoostClassifier(n_bins=256)`` (histogram stump search),
  * the same protocol over the in-process transport, on the same 12 clients.
All three get the same Q (fitted once) and the same candidate stumps: the single-process
binned thresholds (255 per feature) plus the constant stump. Exact candidates (every midpoint,
12 million here) would make each client return 12 million edges per active source and round.
Per round: the run's round wall times (median); the central fit has none, so its per-round
time is (fit with T rounds − fit with 1 round)/(T − 1), as in bench_boost.py. Where the time
goes: per phase, the driver's wall time, the clients' compute time on their workers (summed,
and on the busiest worker) and the rest (scheduling, transfer, waiting); the server's own
work is the round time minus the phases.

(b) Flower's per-round overhead on loopback: ``flower.run_local_federation`` (SuperLink and
SuperNodes as local processes) against ``simulate`` with the same arguments, 3 and 10 clients
of one source, small data (the compute is negligible): overhead = the difference of the
median round times, also per request batch.

Run: ``python benchmarks/bench_fed.py`` (``--quick``: m = 30 000, fewer rounds, Flower with 3
clients only and 30 s to finish). Needs the ``dist`` extra (Dask) and, for (b), the ``fed``
extra (Flower); each Flower federation runs in a child process, stopped after 400 s (30 s
with --quick).
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
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from bench_boost import synthetic_sources  # noqa: E402

from _common import machine, markdown_table, write_section  # noqa: E402

N_FEATURES = 100
N_WORKERS = 4
N_BINS = 256
PHASES = ("losses", "edges", "line_search")


def candidates(X):
    """The single-process binned thresholds of every feature, after the constant stump."""
    from manytask.boost.stumps import presort

    binned = presort(X, n_bins=N_BINS)
    return [
        np.concatenate([[-np.inf], binned.thresholds[j, : binned.n_thresholds[j]]])
        for j in range(X.shape[1])
    ]


def chunk_shards(X, y, domains, probabilities, chunk):
    """The Dask backend's clients, built in this process: each chunk's rows of each source."""
    from manytask.boost.federated import ClientShard

    shards, by_domain = [], [[] for _ in np.unique(domains)]
    signs = np.where(y == 1, 1.0, -1.0)
    for start in range(0, X.shape[0], chunk):
        rows = np.arange(start, min(start + chunk, X.shape[0]))
        for k in np.unique(domains[rows]):
            part = rows[domains[rows] == k]
            by_domain[k].append(len(shards))
            shards.append(ClientShard(X[part], signs[part], int(k), probabilities[part]))
    return shards, by_domain


def run_in_process(X, y, domains, q, thresholds, n_rounds, chunk):
    """The protocol on the in-process transport: (weights, round seconds, {"wall" | "cpu":
    {phase: seconds}})."""
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

    shards, by_domain = chunk_shards(X, y, domains, q.predict_proba(X), chunk)
    transport = TimedTransport(shards)
    transport.seconds, transport.cpu = {}, {}
    features, flat, _ = setup_candidates(transport, range(len(shards)), X.shape[1], thresholds)
    server = FederatedServer(len(by_domain), features, flat)
    history = run_rounds(server, transport, by_domain, n_rounds)
    phases = {"wall": transport.seconds, "cpu": transport.cpu}
    return server.state.steps, [record["seconds"] for record in history], phases


def run_central(X, y, domains, q, n_rounds):
    """Central binned MultiBoost: (fitted model, median round seconds, set-up seconds).

    Each round is timed inside the fit (the estimator's round method, wrapped on the
    instance); if the fit no longer calls it, (fit with T rounds − fit with 1)/(T − 1).
    """
    from manytask.boost import MultiBoostClassifier

    def make(rounds):
        return MultiBoostClassifier(n_estimators=rounds, n_bins=N_BINS,
                                    domain_classifier=q.estimator_)  # fmt: skip

    seconds = {}
    for rounds in (1, 1):  # the first fit warms up (compiled kernels, caches)
        start = time.perf_counter()
        make(rounds).fit(X, y, domains)
        seconds[rounds] = time.perf_counter() - start
    model, round_seconds = make(n_rounds), []
    boost_round = model._boost_round

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return boost_round(*args, **kwargs)
        finally:
            round_seconds.append(time.perf_counter() - start)

    model._boost_round = timed
    start = time.perf_counter()
    model.fit(X, y, domains)
    seconds[n_rounds] = time.perf_counter() - start
    del model._boost_round
    if round_seconds:
        per_round = float(np.median(round_seconds))
    else:
        per_round = (seconds[n_rounds] - seconds[1]) / max(len(model.estimators_) - 1, 1)
    return model, per_round, seconds[n_rounds] - sum(round_seconds)


def run_dask(X, y, domains, q, thresholds, n_rounds, chunk, mode="actors"):
    """The Dask fit on a fresh LocalCluster: (weights, round seconds, timings, set-up s)."""
    import dask.array as da
    from distributed import Client, LocalCluster

    from manytask.boost import MultiBoostClassifier
    from manytask.boost.federated.dask_backend import fit_on_dask

    with LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:  # fmt: skip
        start = time.perf_counter()
        X_dask = client.persist(da.from_array(X, chunks=(chunk, X.shape[1])))
        client.wait_for_workers(N_WORKERS)
        model = MultiBoostClassifier(n_estimators=n_rounds, domain_classifier=q)
        fit_on_dask(model, X_dask, y, domains, client=client, thresholds=thresholds, mode=mode)
        total = time.perf_counter() - start
    rounds = [record["seconds"] for record in model.federated_run_.history]
    return model, rounds, total - sum(rounds)


def phase_table(dask_model, dask_rounds, process_phases, process_rounds):
    """Per phase and round: in-process wall and CPU; on Dask the driver's wall, the workers'
    CPU (all), the busiest worker's time answering, and the rest of the driver's wall."""
    timings = dask_model.dask_timings_  # the set-up and the rounds, not the final F
    n_dask, n_process = len(dask_rounds), len(process_rounds)
    walls = {phase: timings["phase_seconds"].get(phase, 0.0) / n_dask for phase in PHASES}
    workers = timings["compute_seconds"].values()  # per worker {"wall"|"cpu": {phase: s}}
    rows = []
    for phase in PHASES:
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
        process_phases["wall"].get(phase, 0.0) / n_process for phase in PHASES
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
    from manytask.boost import DomainClassifier

    X, y, domains = synthetic_sources(m, N_FEATURES)
    chunk = -(-m // N_WORKERS)
    start = time.perf_counter()
    q = DomainClassifier().fit(X, domains)
    q_seconds = time.perf_counter() - start
    thresholds = candidates(X)
    central, central_round, central_setup = run_central(X, y, domains, q, n_rounds)
    central_weights = central.estimator_weights_
    print(f"central: {central_round * 1e3:.0f} ms/round", flush=True)
    process_weights, process_rounds, process_phases = run_in_process(
        X, y, domains, q, thresholds, n_rounds, chunk
    )
    print(f"in-process protocol: {np.median(process_rounds) * 1e3:.0f} ms/round", flush=True)
    model, dask_rounds, dask_setup = run_dask(X, y, domains, q, thresholds, n_rounds, chunk)
    print(f"dask: {np.median(dask_rounds) * 1e3:.0f} ms/round", flush=True)
    dask_weights = model.estimator_weights_
    n_common = min(len(dask_weights), len(central_weights))
    rows = [
        ["central `MultiBoostClassifier(n_bins=256)`", f"{central_round * 1e3:.0f}", "1.00",
         f"{central_setup:.1f}", len(central_weights)],
        ["federated protocol, in-process transport (1 process)",
         f"{np.median(process_rounds) * 1e3:.0f}",
         f"{central_round / np.median(process_rounds):.2f}", "—", len(process_weights)],
        [f"federated protocol on Dask, {N_WORKERS} workers (actors)",
         f"{np.median(dask_rounds) * 1e3:.0f}",
         f"{central_round / np.median(dask_rounds):.2f}", f"{dask_setup:.1f}", len(dask_weights)],
    ]  # fmt: skip
    same_process = np.array_equal(dask_weights, process_weights)
    gap = float(np.max(np.abs(dask_weights[:n_common] - central_weights[:n_common])))
    header = ["run", "per round (ms, median)", "speed-up vs central", "set-up (s)", "rounds"]
    phase_header = ["phase (per round)", "in-process wall (ms)", "in-process CPU (ms)",
                    "Dask: driver wall (ms)", "Dask: CPU, all workers (ms)",
                    "Dask: busiest worker answering (ms)",
                    "Dask: rest = wall − busiest (ms)"]  # fmt: skip
    lines = [
        f"### (a) MultiBoost on Dask: {m} × {N_FEATURES}, 3 sources, T = {n_rounds}",
        "",
        f"**This machine has {os.cpu_count()} cores**, shared with other jobs: the "
        f"{N_WORKERS} Dask workers (1 thread each) and the driver share them, so at most a "
        f"{min(os.cpu_count(), N_WORKERS)}× speed-up of the clients' compute is possible here; "
        "the figures measure overhead more than scaling.",
        "",
        f"X in {N_WORKERS} row chunks of {chunk} on a `LocalCluster({N_WORKERS} worker "
        "processes, 1 thread)`; each chunk holds points of all 3 sources, so the protocol has "
        f"{3 * N_WORKERS} clients. Same Q (fitted once, {q_seconds:.1f} s) and the same "
        "candidates for all runs: the central binned thresholds (≤ 255 per feature) + the "
        "constant stump. *set-up*: central = the fit minus its rounds (presort); Dask = "
        "persist the chunks, build the shards and their edge indices, actors, candidates.",
        "",
        markdown_table(header, rows),
        "",
        f"Same ensemble: Dask = in-process transport bit for bit: {same_process}; "
        f"max |Δα| Dask vs central over the first {n_common} rounds: {gap:.1e}; first "
        f"differing round: {first_difference(central, dask_weights)}. Where that rule is "
        "`steepest`, the central tie fallback, it searched exact stumps, outside the shared "
        "candidates; the rounds before agree to rounding.",
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
        "that = sending, pickling, scheduling the actor call, collecting. A line search "
        "makes 15–20 request batches a round. Means over the rounds (the set-up's requests "
        "are in other phases).",
    ]
    return "\n".join(lines)


def flower_case(n_clients, n_rounds) -> dict:
    """In a child process: Flower and ``simulate`` with the same arguments, round times."""
    from manytask.boost.federated import simulate
    from manytask.boost.federated.flower import run_local_federation

    X, y, _ = synthetic_sources(600, 5, 1, seed=1)
    domains = np.zeros(X.shape[0], int)
    levels = np.linspace(0, 1, 10)[1:-1]
    thresholds = [np.unique(np.quantile(X[:, j], levels)) for j in range(X.shape[1])]
    kwargs = dict(n_rounds=n_rounds, random_state=0, thresholds=thresholds)
    start = time.perf_counter()
    flower = run_local_federation(X, y, domains, n_clients, **kwargs)
    flower_total = time.perf_counter() - start
    local = simulate(X, y, domains, n_clients, **kwargs)
    return {
        "flower_rounds": [r["seconds"] for r in flower.federated_run_.history],
        "local_rounds": [r["seconds"] for r in local.federated_run_.history],
        "batches": [r.get("exchanges", 0) + 2 for r in local.federated_run_.history],
        "flower_total": flower_total,
        "same": bool(
            flower.estimator_weights_.shape == local.estimator_weights_.shape
            and np.allclose(flower.estimator_weights_, local.estimator_weights_, atol=1e-9)
        ),
    }


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


def _run_flower_child(n_clients, n_rounds, timeout):
    """``flower_case`` in a child process. On timeout: SIGINT (Flower's runner then stops its
    processes), after min(30 s, timeout/2) SIGKILL to the child and to every process it
    started, found by id through an environment marker. Returns the dict or why not."""
    command = [sys.executable, __file__, "--flower-case", str(n_clients), str(n_rounds)]
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
    """Flower (local SuperLink + SuperNodes) against simulate, same arguments."""
    title = f"### (b) Flower's per-round overhead on loopback, T = {n_rounds}"
    try:
        from manytask.boost.federated.flower import run_local_federation  # noqa: F401
    except ImportError as error:
        return f"{title}\n\nnot run: {error}"
    rows = []
    for n_clients in client_counts:
        case = _run_flower_child(n_clients, n_rounds, timeout)
        if isinstance(case, str):
            rows.append([n_clients, case, "", "", "", "", ""])
            print(f"flower {n_clients} clients: {case}", flush=True)
            continue
        flower_round, local_round = (
            np.median(case["flower_rounds"]),
            np.median(case["local_rounds"]),
        )
        overhead = flower_round - local_round
        rows.append([
            n_clients, f"{flower_round * 1e3:.0f}", f"{local_round * 1e3:.1f}",
            f"{overhead * 1e3:.0f}", f"{overhead / np.median(case['batches']) * 1e3:.1f}",
            f"{case['flower_total']:.1f}", case["same"],
        ])  # fmt: skip
        print(f"flower {n_clients} clients: {flower_round * 1e3:.0f} ms/round", flush=True)
    header = ["clients", "Flower per round (ms)", "simulate per round (ms)",
              "overhead per round (ms)", "per request batch (ms)", "Flower run, all (s)",
              "same α as simulate"]  # fmt: skip
    return "\n".join([
        title,
        "",
        "`flower.run_local_federation` (a SuperLink and one SuperNode per client as local "
        "processes, HTTP on 127.0.0.1) against `simulate` with the same arguments: 600 points "
        "× 5 features, one source, 8 quantile thresholds per feature; medians of the rounds. "
        "*per request batch*: the overhead divided by the request batches of a round (losses, "
        f"edges and the line-search exchanges). {os.cpu_count()} shared cores for all the "
        f"processes; each federation runs in a child process stopped after {timeout:.0f} s.",
        "",
        markdown_table(header, rows),
    ])  # fmt: skip


# ----------------------------------------------- (c) communication per round (the paper's round)


def communication_case(X, y, domains, clients_per_domain, r, s, mu, step, n_rounds):
    """One ``simulate`` run: per client and round the numbers each way, request batches."""
    from manytask.boost.federated import simulate

    model = simulate(X, y, domains, clients_per_domain, r=r, s=s, n_rounds=n_rounds,
                     random_state=0, mu=mu, step=step, domain_classifier="central",
                     record_messages=True)  # fmt: skip
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
    }


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
    ])  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="m = 30 000, fewer rounds")
    parser.add_argument("--skip-flower", action="store_true", help="only part (a)")
    parser.add_argument("--flower-case", nargs=2, type=int, metavar=("CLIENTS", "ROUNDS"))
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
            print(json.dumps(flower_case(*args.flower_case)))
        return 0
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    threadpool_limits(1, user_api="blas")
    m, n_rounds, flower_rounds, flower_timeout, flower_clients = (
        (30_000, 4, 3, 30.0, (3,)) if args.quick else (120_000, 10, 2, 400.0, (3, 10))
    )
    start, load = time.perf_counter(), os.getloadavg()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Q clipping notes, Dask's large-graph notes
        dask_section = section_dask(m, n_rounds)
        flower_section = (
            "### (b) Flower's per-round overhead\n\nnot run: --skip-flower"
            if args.skip_flower
            else section_flower(flower_rounds, flower_timeout, flower_clients)
        )
    wall = time.perf_counter() - start
    text = "\n".join([
        "## Federated MultiBoost: Dask workers against one process, Flower's overhead",
        "",
        f"Measured {machine()}; 1-minute load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end. `python benchmarks/bench_fed.py"
        + (" --quick`" if args.quick else "`") + f", {wall / 60:.1f} min in all.",
        "",
        dask_section,
        "",
        flower_section,
    ])  # fmt: skip
    write_section("bench_fed", text)
    print(text)
    print("wrote benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
