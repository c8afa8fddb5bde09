"""Selection criteria of ∞-QR's default, compared on the same fits (Table 1 + synthetic).

For each set and split (the paper's scaling, 70/30, seed i, as ``bench_itl.py
--defaults-only``), on the default grid (bandwidth factors × λ path of
:mod:`manytask.itl.selection`):

- the held-out integrated pinball of every training point, for every (bandwidth, λ), from
  warm-started, capped path fits (as in ``fit``) on ``--shuffles`` independent shufflings
  into 3 folds (every point held out once per shuffling);
- the TEST pinball×100 (rearranged, Table 1's 5 levels) of the full fit at every
  (bandwidth, λ) of the grid.

A criterion maps the held-out losses to one (bandwidth, λ); its test pinball is read from
the table, so criteria are compared on identical fits. Prints one JSON line per (set,
split); ``--out`` appends them to a file. ``--synthetic`` runs heteroscedastic sets (of
``bench_itl.heteroscedastic`` and ``heavy_tailed``) instead of Table 1.

Run: ``python benchmarks/bench_itl_selection.py --out runs.jsonl [--datasets a,b]``.

``--cost``: instead, the CPU time (``time.process_time``) of ``fit`` of the default
``InfiniteQuantileRegressor(random_state=i)`` and of the fixed ``lambda_=1e-3`` one on the same
splits (as ``bench_itl.py --defaults-only``), with the chosen setting and the L-BFGS-B
iterations of the final fit; one JSON line per (set, split), and the per-set ratio of the
mean CPU times at the end (median and range).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time
import warnings

import numpy as np
from sklearn.model_selection import KFold, train_test_split

from manytask.datasets import QUANTILE_DATASETS, load_quantile_benchmark
from manytask.experiments.itl_table1 import standardised
from manytask.itl import InfiniteQuantileRegressor, pinball_loss, quantile
from manytask.itl._estimator import median_bandwidth, minimise, random_generator, ridge_penalty
from manytask.itl.kernel_quantile import quantile_risk
from manytask.itl.losses import pinball
from manytask.itl.model import DecomposableModel
from manytask.itl.quantile import SELECTION_MAX_ITER
from manytask.itl.selection import BANDWIDTH_FACTORS, CV_TOL, LAMBDA_PATH
from manytask.kernels import RBF

LEVELS = np.array([0.1, 0.3, 0.5, 0.7, 0.9])


def grid_losses(X_train, y_train, X_test, y_test, split, shuffles):
    """Held-out per-point losses (shuffles, bandwidths, λ, n) and test pinball×100 (b, λ)."""
    base = InfiniteQuantileRegressor(lambda_=1e-3, random_state=split).fit(X_train, y_train)
    X_std, y_std = base._standardise_X(X_train), base._standardise_y(y_train)
    median = median_bandwidth(X_std, split)
    anchors, weights = base.anchors_, base.weights_
    seed = int(random_generator(split).integers(2**31))
    n = len(y_std)
    held = np.full((shuffles, len(BANDWIDTH_FACTORS), len(LAMBDA_PATH), n), np.nan)
    test = np.full((len(BANDWIDTH_FACTORS), len(LAMBDA_PATH)), np.nan)
    for b, factor in enumerate(BANDWIDTH_FACTORS):
        kernel = base._input_kernel(X_std, None, factor * median, split)
        model = DecomposableModel(kernel, RBF(base.theta_bandwidth), RBF(base.theta_bandwidth))
        whitened = base._precompute(model, X_std, anchors)
        for s in range(shuffles):
            folds = KFold(3, shuffle=True, random_state=seed + s).split(X_std)
            for train, hold in folds:
                part = whitened.rows(train)
                term = quantile_risk(y_std[train], anchors, weights, 1.0, base.kappa)
                start = None
                for k, lambda_ in enumerate(LAMBDA_PATH):
                    result = minimise(part, term, ridge_penalty(lambda_, base.lambda_b),
                                      SELECTION_MAX_ITER, max(base.tol, CV_TOL), start)  # fmt: skip
                    start = result.x
                    alpha, _, bias = whitened.unpack(result.x)
                    values = whitened.rows(hold).predict(alpha, None, bias)
                    held[s, b, k, hold] = pinball(y_std[hold, None], values, anchors) @ weights
        term = quantile_risk(y_std, anchors, weights, 1.0, base.kappa)
        start = None
        for k, lambda_ in enumerate(LAMBDA_PATH):
            result = minimise(whitened, term, ridge_penalty(lambda_, base.lambda_b),
                              base.max_iter, base.tol, start)  # fmt: skip
            start = result.x
            alpha, _, bias = whitened.unpack(result.x)
            fitted = copy.copy(base)
            fitted.model_ = model
            fitted.params_ = model.pack(*whitened.to_coefficients(alpha, bias))
            test[b, k] = 100 * pinball_loss(y_test, fitted.predict(X_test, LEVELS), LEVELS)
    return held, test


def fit_costs(X_train, y_train, X_test, y_test, split):
    """CPU seconds of the default and the fixed-λ fit, the default's choice and its test
    pinball×100 (rearranged, Table 1's 5 levels)."""
    start = time.process_time()
    default = InfiniteQuantileRegressor(random_state=split, verbose=0).fit(X_train, y_train)
    middle = time.process_time()
    fixed = InfiniteQuantileRegressor(lambda_=1e-3, random_state=split, verbose=0)
    fixed.fit(X_train, y_train)
    end = time.process_time()
    pinball = 100 * pinball_loss(y_test, default.predict(X_test, LEVELS), LEVELS)
    return {"default": middle - start, "fixed": end - middle, "pinball": pinball,
            "lambda": default.selected_lambda_, "bandwidth": default.selected_input_bandwidth_,
            "risks": default.cv_risks_.tolist(), "n_iter": default.n_iter_,
            "fixed_n_iter": fixed.n_iter_}  # fmt: skip


def report_costs(lines):
    """Per-set ratio of the mean CPU times default / fixed: printed, median and range."""
    ratios = {}
    for name in dict.fromkeys(line["name"] for line in lines):
        rows = [line for line in lines if line["name"] == name]
        default = np.mean([row["default"] for row in rows])
        fixed = np.mean([row["fixed"] for row in rows])
        ratios[name] = default / fixed
        print(f"{name:14s} default {default:6.2f} s  fixed {fixed:5.2f} s  {ratios[name]:5.1f}×")
    values = np.array(list(ratios.values()))
    print(f"median {np.median(values):.1f}× range {values.min():.1f}–{values.max():.1f}× "
          f"over {len(values)} sets; load {open('/proc/loadavg').read().split()[0]}")  # fmt: skip


def synthetic_sets(seeds):
    """(name, X, y) of the heteroscedastic synthetic sets of bench_itl, several seeds."""
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from bench_itl import heavy_tailed, heteroscedastic

    for seed in seeds:
        X, y = heteroscedastic(300, seed)
        yield f"hetero2d-{seed}", X, y
        X, y = heavy_tailed(300, seed)
        yield f"heavy-{seed}", X, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(QUANTILE_DATASETS))
    parser.add_argument("--synthetic", default="", help="comma-separated seeds")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--shuffles", type=int, default=3)
    parser.add_argument("--out", default=None)
    parser.add_argument("--cost", action="store_true", help="CPU time default / fixed λ")
    parser.add_argument(
        "--selection-max-iter", type=int, default=None, help="override SELECTION_MAX_ITER"
    )
    args = parser.parse_args(argv)
    if args.selection_max_iter is not None:
        quantile.SELECTION_MAX_ITER = args.selection_max_iter
    os.environ.setdefault("MANYTASK_DATA", "/work/shared/data")
    warnings.simplefilter("ignore")  # iteration caps of the path fits
    if args.synthetic:
        sets = synthetic_sets([int(s) for s in args.synthetic.split(",")])
    else:
        sets = ((name, *standardised(load_quantile_benchmark(name)))
                for name in args.datasets.split(","))  # fmt: skip
    costs = []
    for name, X, y in sets:
        for split in range(args.splits):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, random_state=split
            )
            if args.cost:
                cost = fit_costs(X_train, y_train, X_test, y_test, split)
                costs.append({"name": name, "split": split, **cost})
                print(json.dumps(costs[-1]), flush=True)
                if args.out:
                    with open(args.out, "a") as handle:
                        handle.write(json.dumps(costs[-1]) + "\n")
                continue
            held, test = grid_losses(X_train, y_train, X_test, y_test, split, args.shuffles)
            line = json.dumps({"name": name, "split": split, "n": len(y_train),
                               "held": np.round(held, 6).tolist(),
                               "test": test.tolist()})  # fmt: skip
            print(name, split, np.round(test, 1).tolist(), flush=True)
            if args.out:
                with open(args.out, "a") as handle:
                    handle.write(line + "\n")
    if costs:
        report_costs(costs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
