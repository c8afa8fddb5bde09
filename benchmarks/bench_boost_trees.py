"""MultiBoost with trees (``max_depth`` = d) against the trees people use, and its round time.

Errors (``--errors``): on the multi-source sets of Table 1 (digits 4v9 and 1v7, CPS1988,
Fashion-MNIST), T rounds of
  * ``MultiBoostClassifier(max_depth=d)`` (histogram trees per source, 256 bins), over its
    own settings: d and the clip of Q(k|x) (``--clips``; clip = 1/p is a uniform Q);
  * AdaBoost-all: ``AdaBoost(max_depth=d)`` on the pooled data;
  * DMSA: ``DMSAClassifier(base_estimator=AdaBoost(max_depth=d))``;
  * XGBoost (``hist``) and LightGBM on the pooled data, same depths, same T, learning rate 1
    ("lr=1") and the best of {0.1, 0.3, 1} ("best lr");
each method's setting (d in ``--depths``, and its own grid) chosen by the least agnostic
error on a validation quarter of the training rows, never the test rows; per split: 30 % test,
of the rest 25 % validation and 75 % fit, stratified by (source, label); uniform and agnostic
(worst-source) test error, mean ± std over ``--splits`` splits (rows capped by
``--max-per-domain`` per source). Q(k|x) is fitted once per split and shared by MultiBoost
and DMSA. Numba and the peers on ``--threads`` (default 1) threads here.

Round time (``--round``): m = 30 000, 100 features, 3 sources (``bench_boost``'s synthetic
data): a depth-6 MultiBoost round (numba kernels, 256 bins) against XGBoost's depth-6
``hist`` round on 2 threads (numba also on 2 threads); per-round time = (fit with T rounds −
fit with 1 round)/(T − 1) with T = 11, Q(k|x) fitted once beforehand; median of ``--repeats``
repeats (each the two sides back to back), with the process CPU time beside the wall time;
``--round-threads 1`` runs both sides on one thread (the CPU time then measures the work
alone, steadier than wall time on a busy machine). Target ≤ 1.5× on 2 threads.

Run: ``python benchmarks/bench_boost_trees.py --round --errors`` (``--depths 2 4 6``).
XGBoost and LightGBM come with the ``bench`` extra. The machine's load (``uptime``) is
printed beside every timing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np
from sklearn.model_selection import train_test_split

import manytask as mt
from bench_boost import synthetic_sources
from manytask.experiments._boost_folds import PrefittedClassifier

DATASETS = ("digits-4v9", "digits-1v7", "cps1988", "fashion-mnist")
RATES = (0.1, 0.3, 1.0)
THREADS = 2


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _pooled_peer(name, depth, rounds, rate, threads):
    if name == "xgboost":
        import xgboost

        return xgboost.XGBClassifier(tree_method="hist", max_depth=depth, n_estimators=rounds,
                                     learning_rate=rate, n_jobs=threads, max_bin=256)  # fmt: skip
    import lightgbm

    return lightgbm.LGBMClassifier(max_depth=depth, num_leaves=2**depth, n_estimators=rounds,
                                   learning_rate=rate, n_jobs=threads, verbose=-1,
                                   min_child_samples=1)  # fmt: skip


def _shared(Q, clip=1e-6):
    """Q(k|x), fitted once, passed fitted (clip: its lower bound)."""
    return mt.boost.DomainClassifier(PrefittedClassifier(Q.estimator_), clip=clip, prefit=True)


def candidates(depths, rounds, Q, n_sources, clips, threads):
    """{method: [(setting, unfitted model, whether fit takes domains)]}: each method's grid.

    MultiBoost's grid is its own settings: depth and how sharp Q(k|x) is (``clip``: 1e-6 the
    default; 1/p makes Q uniform, so every tree acts on every source's points).
    """
    grid = {"MultiBoost": [], "AdaBoost-all": [], "DMSA": []}
    grid.update({f"{peer} lr=1": [] for peer in ("XGBoost", "LightGBM")})
    grid.update({f"{peer} best lr": [] for peer in ("XGBoost", "LightGBM")})
    for depth in depths:
        for clip in clips:
            clip = min(clip, 1.0 / n_sources)
            sharp = _shared(Q, clip)
            grid["MultiBoost"].append(((depth, f"clip={clip:.2g}"), mt.boost.MultiBoostClassifier(
                n_estimators=rounds, max_depth=depth, domain_classifier=sharp), True))  # fmt: skip
        grid["AdaBoost-all"].append(((depth,), mt.boost.AdaBoost(rounds, max_depth=depth), False))
        base = mt.boost.AdaBoost(n_estimators=rounds, max_depth=depth)
        grid["DMSA"].append(((depth,), mt.boost.DMSAClassifier(
            base_estimator=base, domain_classifier=_shared(Q), random_state=0), True))  # fmt: skip
        for peer in ("XGBoost", "LightGBM"):
            for rate in RATES:
                model = _pooled_peer(peer.lower(), depth, rounds, rate, threads)
                grid[f"{peer} best lr"].append(((depth, f"lr={rate}"), model, False))
                if rate == 1.0:
                    grid[f"{peer} lr=1"].append(((depth, "lr=1"), model, False))
    return grid


def _split(y, domains, seed):
    """(fit, validation, test) rows: 30 % test, then a quarter of the rest for validation,
    stratified by (source, label)."""
    strata = domains * 2 + y
    train, test = train_test_split(np.arange(y.size), test_size=0.3, random_state=seed,
                                   stratify=strata)  # fmt: skip
    fit, validation = train_test_split(train, test_size=0.25, random_state=seed,
                                       stratify=strata[train])  # fmt: skip
    return fit, validation, test


def errors_table(datasets, depths, rounds, n_splits, max_per_domain, clips, threads):
    print(f"## Errors: T = {rounds} rounds, {n_splits} splits, ≤ {max_per_domain} rows/source, "
          f"settings chosen on validation\n\nload: {uptime()}\n")  # fmt: skip
    print("| data | method | uniform error | agnostic error | chosen (per split) | fit s |")
    print("|---|---|---|---|---|---|")
    details = []
    for name in datasets:
        try:
            bunch = mt.datasets.load_boosting_sources(name, max_per_domain=max_per_domain,
                                                      random_state=0)  # fmt: skip
        except (OSError, ValueError, ImportError) as error:
            print(f"| {name} | not available: {error} | | | | |")
            continue
        X, y, domains = bunch.data, bunch.target, bunch.domains
        n_sources = np.unique(domains).size
        results, q_accuracy = {}, []
        for seed in range(n_splits):
            fit, validation, test = _split(y, domains, seed)
            Q = mt.boost.DomainClassifier().fit(X[fit], domains[fit])
            q_accuracy.append(np.mean(Q.predict(X[test]) == domains[test]))
            grid = candidates(depths, rounds, Q, n_sources, clips, threads)
            for method, settings in grid.items():
                scored = []
                for setting, model, with_domains in settings:
                    start = time.perf_counter()
                    if with_domains:
                        model.fit(X[fit], y[fit], domains=domains[fit])
                    else:
                        model.fit(X[fit], y[fit])
                    seconds = time.perf_counter() - start
                    held = mt.boost.mixture_errors(model, X[validation], y[validation],
                                                   domains[validation])  # fmt: skip
                    tested = mt.boost.mixture_errors(model, X[test], y[test], domains[test])
                    scored.append((held.agnostic, held.uniform, setting, tested, seconds))
                    details.append((name, seed, method, setting, held.agnostic,
                                    tested.uniform, tested.agnostic))  # fmt: skip
                # least validation agnostic error, then uniform; ties: the first (shallowest)
                chosen = min(range(len(scored)), key=lambda i: scored[i][:2])
                _, _, setting, tested, seconds = scored[chosen]
                results.setdefault(method, []).append((tested.uniform, tested.agnostic,
                                                       seconds, setting))  # fmt: skip
        for method, values in results.items():
            uniform = np.array([v[0] for v in values])
            agnostic = np.array([v[1] for v in values])
            seconds = np.mean([v[2] for v in values])
            chosen = "; ".join(" ".join(str(part) for part in v[3]) for v in values)
            print(f"| {name} | {method} | {uniform.mean():.4f} ± {uniform.std():.4f} | "
                  f"{agnostic.mean():.4f} ± {agnostic.std():.4f} | {chosen} | {seconds:.2f} |",
                  flush=True)  # fmt: skip
        print(f"| {name} | Q(k|x) test accuracy | {np.mean(q_accuracy):.4f} | | | |", flush=True)
    print(f"\nload at the end: {uptime()}\n\nEvery setting (mean over splits):\n")
    print("| data | method | setting | validation agnostic | test uniform | test agnostic |")
    print("|---|---|---|---|---|---|")
    keys = {}
    for name, _, method, setting, *errors in details:
        keys.setdefault((name, method, setting), []).append(errors)
    for (name, method, setting), errors in keys.items():
        held, uniform, agnostic = np.mean(errors, axis=0)
        label = " ".join(str(part) for part in setting)
        print(f"| {name} | {method} | {label} | {held:.4f} | {uniform:.4f} | {agnostic:.4f} |")


def _per_round(fit, rounds):
    """(fit with ``rounds`` rounds − fit with 1 round)/(rounds − 1): wall and process CPU s."""
    times = {}
    for n in (1, rounds):
        start, cpu = time.perf_counter(), time.process_time()
        fit(n)
        times[n] = np.array([time.perf_counter() - start, time.process_time() - cpu])
    return (times[rounds] - times[1]) / (rounds - 1)


def round_times(m, rounds, repeats, threads):
    import xgboost

    X, y, domains = synthetic_sources(m)
    # Q(k|x) fitted once and passed fitted: its fit is not a round and only adds noise
    Q = _shared(mt.boost.DomainClassifier().fit(X, domains))
    fits = {
        f"MultiBoost max_depth=6 ({mt.boost.kernels.backend()})": lambda n: (
            mt.boost.MultiBoostClassifier(n_estimators=n, max_depth=6, domain_classifier=Q)
            .fit(X, y, domains=domains)
        ),
        f"XGBoost hist depth 6, {threads} thread(s)": lambda n: xgboost.XGBClassifier(
            tree_method="hist", max_depth=6, n_estimators=n, learning_rate=1.0,
            n_jobs=threads, max_bin=256,
        ).fit(X, y),
    }  # fmt: skip
    for fit in fits.values():
        fit(2)  # compile and warm up
    load_before = uptime()
    # the two sides back to back in every repeat, so that both see the same load
    both = np.array([[_per_round(fit, rounds) for fit in fits.values()] for _ in range(repeats)])
    times, cpu = both[..., 0], both[..., 1]  # (repeats, 2) each
    print(f"## Depth-6 round, m = {m}, 100 features, 3 sources, {threads} thread(s), "
          f"{repeats} repeats\n")  # fmt: skip
    print(f"load before: {load_before}\nload after: {uptime()}\n")
    print("| method | median s / round | min | max | median CPU s / round |")
    print("|---|---|---|---|---|")
    for label, values, seconds in zip(fits, times.T, cpu.T):
        print(f"| {label} | {np.median(values):.4f} | {values.min():.4f} | {values.max():.4f} "
              f"| {np.median(seconds):.4f} |")  # fmt: skip
    ratios = times[:, 0] / times[:, 1]
    print(f"\nratio MultiBoost / XGBoost: median {np.median(ratios):.2f}× (per repeat "
          f"{', '.join(f'{r:.2f}' for r in ratios)}); ratio of the medians "
          f"{np.median(times[:, 0]) / np.median(times[:, 1]):.2f}×", flush=True)  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", action="store_true", help="time a depth-6 round")
    parser.add_argument("--errors", action="store_true", help="the error table")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--clips", type=float, nargs="+", default=[1e-6, 0.1, 1.0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--max-per-domain", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1, help="peers' threads in --errors")
    parser.add_argument("--m", type=int, default=30_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--round-threads", type=int, default=THREADS, help="numba's and XGBoost's")
    arguments = parser.parse_args()
    threads = arguments.threads if arguments.errors else arguments.round_threads
    os.environ.setdefault("NUMBA_NUM_THREADS", str(threads))
    if arguments.round:
        round_times(arguments.m, 11, arguments.repeats, arguments.round_threads)
    if arguments.errors:
        errors_table(arguments.datasets, arguments.depths, arguments.rounds, arguments.splits,
                     arguments.max_per_domain, arguments.clips, arguments.threads)  # fmt: skip


if __name__ == "__main__":
    main()
