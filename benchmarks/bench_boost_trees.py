"""MultiBoost with trees (``max_depth`` = d) against the trees people use, and its round time.

Errors (``--errors``): on the multi-source sets of Table 1 (digits 4v9 and 1v7, CPS1988,
Fashion-MNIST), for each depth d, T rounds of
  * ``MultiBoostClassifier(max_depth=d)`` (histogram trees per source, 256 bins);
  * AdaBoost-all: ``AdaBoost(max_depth=d)`` on the pooled data;
  * DMSA: ``DMSAClassifier(base_estimator=AdaBoost(max_depth=d))``;
  * XGBoost (``hist``) and LightGBM on the pooled data, same depth, same T, learning rate 1
    and the best of {0.1, 0.3, 1} chosen on a held-out fifth of the training rows;
uniform and agnostic (worst-source) test error and fit time, over ``--splits`` stratified
70/30 splits per set (rows capped by ``--max-per-domain`` per source).

Round time (``--round``): m = 30 000, 100 features, 3 sources (``bench_boost``'s synthetic
data): a depth-6 MultiBoost round (numba kernels, 256 bins) against XGBoost's depth-6
``hist`` round on 2 threads (numba also on 2 threads); per-round time = (fit with T rounds −
fit with 1 round)/(T − 1), least of three. Target ≤ 1.5×.

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

DATASETS = ("digits-4v9", "digits-1v7", "cps1988", "fashion-mnist")
RATES = (0.1, 0.3, 1.0)
THREADS = 2


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _pooled_peer(name, depth, rounds, rate):
    if name == "xgboost":
        import xgboost

        return xgboost.XGBClassifier(tree_method="hist", max_depth=depth, n_estimators=rounds,
                                     learning_rate=rate, n_jobs=THREADS, max_bin=256)  # fmt: skip
    import lightgbm

    return lightgbm.LGBMClassifier(max_depth=depth, num_leaves=2**depth, n_estimators=rounds,
                                   learning_rate=rate, n_jobs=THREADS, verbose=-1,
                                   min_child_samples=1)  # fmt: skip


def _best_rate(name, depth, rounds, X, y, domains, seed):
    """The rate of RATES with the least agnostic error on a held-out fifth of the rows."""
    fit_rows, held = train_test_split(np.arange(y.size), test_size=0.2, random_state=seed,
                                      stratify=domains * 2 + y)  # fmt: skip
    errors = []
    for rate in RATES:
        model = _pooled_peer(name, depth, rounds, rate).fit(X[fit_rows], y[fit_rows])
        errors.append(mt.boost.mixture_errors(model, X[held], y[held], domains[held]).agnostic)
    return RATES[int(np.argmin(errors))]


def models(depth, rounds, X, y, domains, seed):
    """(label, model, fit) per method of the table."""
    base = mt.boost.AdaBoost(n_estimators=rounds, max_depth=depth)
    rows = [
        ("MultiBoost", mt.boost.MultiBoostClassifier(n_estimators=rounds, max_depth=depth), True),
        ("AdaBoost-all", mt.boost.AdaBoost(n_estimators=rounds, max_depth=depth), False),
        ("DMSA", mt.boost.DMSAClassifier(base_estimator=base, random_state=seed), True),
    ]
    for name in ("xgboost", "lightgbm"):
        rows.append((f"{name} lr=1", _pooled_peer(name, depth, rounds, 1.0), False))
        rate = _best_rate(name, depth, rounds, X, y, domains, seed)
        rows.append((f"{name} best lr", _pooled_peer(name, depth, rounds, rate), False))
    return rows


def errors_table(depths, rounds, n_splits, max_per_domain):
    print(f"## Errors: T = {rounds} rounds, {n_splits} split(s), ≤ {max_per_domain} rows/source")
    print(f"load: {uptime()}\n")
    print("| data | depth | method | uniform error | agnostic error | fit s |")
    print("|---|---|---|---|---|---|")
    for name in DATASETS:
        try:
            bunch = mt.datasets.load_boosting_sources(name, max_per_domain=max_per_domain,
                                                      random_state=0)  # fmt: skip
        except (OSError, ValueError, ImportError) as error:
            print(f"| {name} | – | not available: {error} | | | |")
            continue
        X, y, domains = bunch.data, bunch.target, bunch.domains
        for depth in depths:
            results = {}
            for seed in range(n_splits):
                strata = domains * 2 + y
                train, test = train_test_split(
                    np.arange(y.size), test_size=0.3, random_state=seed, stratify=strata
                )
                for label, model, with_domains in models(depth, rounds, X[train], y[train],
                                                         domains[train], seed):  # fmt: skip
                    start = time.perf_counter()
                    if with_domains:
                        model.fit(X[train], y[train], domains=domains[train])
                    else:
                        model.fit(X[train], y[train])
                    seconds = time.perf_counter() - start
                    errors = mt.boost.mixture_errors(model, X[test], y[test], domains[test])
                    results.setdefault(label, []).append((errors.uniform, errors.agnostic,
                                                          seconds))  # fmt: skip
            for label, values in results.items():
                uniform, agnostic, seconds = np.mean(values, axis=0)
                print(f"| {name} | {depth} | {label} | {uniform:.4f} | {agnostic:.4f} | "
                      f"{seconds:.2f} |", flush=True)  # fmt: skip


def _per_round(fit, rounds):
    times = {}
    for n in (1, rounds) * 3:
        start = time.perf_counter()
        fit(n)
        times.setdefault(n, []).append(time.perf_counter() - start)
    return (min(times[rounds]) - min(times[1])) / (rounds - 1)


def round_times(m, rounds):
    import xgboost

    X, y, domains = synthetic_sources(m)
    multiboost = _per_round(lambda n: mt.boost.MultiBoostClassifier(
        n_estimators=n, max_depth=6).fit(X, y, domains=domains), rounds)  # fmt: skip
    peer = _per_round(lambda n: xgboost.XGBClassifier(
        tree_method="hist", max_depth=6, n_estimators=n, learning_rate=1.0, n_jobs=THREADS,
        max_bin=256).fit(X, y), rounds)  # fmt: skip
    print(f"## Depth-6 round, m = {m}, 100 features, 3 sources ({uptime()})\n")
    print("| method | s / round |\n|---|---|")
    print(f"| MultiBoost max_depth=6, numba ({mt.boost.kernels.backend()}) | {multiboost:.4f} |")
    print(f"| XGBoost hist depth 6, {THREADS} threads | {peer:.4f} |")
    print(f"\nratio MultiBoost / XGBoost: {multiboost / peer:.2f}×", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", action="store_true", help="time a depth-6 round")
    parser.add_argument("--errors", action="store_true", help="the error table")
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--splits", type=int, default=2)
    parser.add_argument("--max-per-domain", type=int, default=600)
    parser.add_argument("--m", type=int, default=30_000)
    arguments = parser.parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", str(THREADS))
    if arguments.round:
        round_times(arguments.m, 6)
    if arguments.errors:
        errors_table(arguments.depths, arguments.rounds, arguments.splits,
                     arguments.max_per_domain)  # fmt: skip


if __name__ == "__main__":
    main()
