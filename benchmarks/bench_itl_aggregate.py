"""Screen of ∞-QR's default: select-then-refit against aggregates of the selection's fits.

Per Table-1 set and split (the paper's scaling, 70/30, seed ``split``, as ``bench_itl.py
--forest-splits``): the selection of ``InfiniteQuantileRegressor()`` is replayed (same folds,
grid, capped warm-started path, early stop) keeping every fold fit, and the test pinball×100
(rearranged, levels 0.1 … 0.9) of these candidates is recorded:

- ``default``: the estimator's default (the setting of least held-out risk, refitted);
- ``cvbag``: the mean of the 3 fold fits at that setting (no refit);
- ``top3``: the mean of the rearranged refits of the 3 settings of least held-out risk;
- ``stack``: convex weights over the settings minimising the out-of-fold integrated pinball
  (an LP), applied to the rearranged refits of the settings of weight > 1 %;
- ``stack_bag``: the same weights on the rearranged fold means (no refit);
- ``QRF``: quantile-forest's defaults.

Fit CPU times (one thread) of the earlier default against a fixed-λ fit are recorded too.
One JSON line per (set, split) appended to ``--out``. ``--cost`` times instead (``time.
process_time``, one thread) the fit of the library's defaults with ``aggregate=True`` and
``False`` against a fixed-λ fit (lines to ``--cost-out``). ``--report`` renders both files
into the ``bench_itl_aggregate`` section of RESULTS.md. Run: ``python
benchmarks/bench_itl_aggregate.py --splits 0-4; … --cost --splits 0-2; … --report``.
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
from threadpoolctl import threadpool_limits

from manytask.datasets import QUANTILE_DATASETS, load_quantile_benchmark
from manytask.experiments.itl_table1 import standardised
from manytask.itl import InfiniteQuantileRegressor, pinball_loss
from manytask.itl._estimator import median_bandwidth, minimise, random_generator, ridge_penalty
from manytask.itl.kernel_quantile import quantile_risk
from manytask.itl.losses import pinball
from manytask.itl.model import DecomposableModel
from manytask.itl.quantile import SELECTION_MAX_ITER
from manytask.itl.selection import BANDWIDTH_FACTORS, CV_TOL, LAMBDA_PATH, stacking_weights
from manytask.kernels import RBF

from _common import machine, markdown_table, write_section

LEVELS = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
CANDIDATES = ("default", "cvbag", "top3", "top3_bag", "stack", "stack_bag")


def replay(estimator, X_std, y_std, anchors, weights):
    """Every fold fit of the default's selection: {(b, l): (fold params list, oof (n, m))}."""
    median = median_bandwidth(X_std, estimator.random_state)
    bandwidths = [f * median for f in BANDWIDTH_FACTORS]
    seed = int(random_generator(estimator.random_state).integers(2**31))
    splits = list(KFold(3, shuffle=True, random_state=seed).split(X_std))
    order = np.argsort(LAMBDA_PATH)[::-1]
    risks = np.full((len(bandwidths), len(LAMBDA_PATH)), np.inf)
    fits, wholes = {}, {}
    for b, bandwidth in enumerate(bandwidths):
        kernel = estimator._input_kernel(X_std, None, bandwidth, estimator.random_state)
        model = DecomposableModel(kernel, RBF(0.2), RBF(0.2))
        whole = estimator._precompute(model, X_std, anchors)
        wholes[b] = whole, model
        starts = [None] * 3
        for position, index in enumerate(order):
            penalty = ridge_penalty(LAMBDA_PATH[index], estimator.lambda_b)
            oof, risk = np.zeros((len(y_std), len(anchors))), 0.0
            for part, (train, test) in enumerate(splits):
                fold = whole.rows(train)
                term = quantile_risk(y_std[train], anchors, weights, 1.0, estimator.kappa)
                result = minimise(fold, term, penalty, SELECTION_MAX_ITER, CV_TOL, starts[part])
                starts[part] = result.x
                held = whole.rows(test)
                values = held.predict(*held.unpack(result.x))
                oof[test] = values
                risk += float(np.mean(pinball(y_std[test, None], values, anchors[None]), 0)
                              @ weights)  # fmt: skip
            risks[b, index] = risk / 3
            fits[b, index] = (list(starts), oof)
            if position > 0 and risks[b, index] > risks[b, order[position - 1]]:
                break
    return risks, fits, wholes, bandwidths


def as_estimator(base, whole, params):
    """A copy of ``base`` predicting with ``params`` of the whitened model ``whole``."""
    whole, model = whole
    alpha, _, bias = whole.unpack(params)
    fitted = copy.copy(base)
    fitted.model_, fitted.params_ = model, model.pack(*whole.to_coefficients(alpha, bias))
    return fitted


def run(name, X, y, split):
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=split)
    row = {"dataset": name, "split": split, "load": os.getloadavg()[0]}

    def score(predictions):
        return 100 * pinball_loss(y_test, predictions, LEVELS)

    from quantile_forest import RandomForestQuantileRegressor

    forest = RandomForestQuantileRegressor(random_state=split).fit(X_train, y_train)
    row["qrf"] = score(forest.predict(X_test, quantiles=list(LEVELS)))
    start = time.process_time()
    InfiniteQuantileRegressor(lambda_=1e-3, random_state=split, verbose=0).fit(X_train, y_train)
    row["t_fixed"] = time.process_time() - start
    start = time.process_time()
    base = InfiniteQuantileRegressor(random_state=split, verbose=0, aggregate=False)
    base.fit(X_train, y_train)
    row["t_default"] = time.process_time() - start
    row["default"] = score(base.predict(X_test, LEVELS))
    X_std, y_std = base._standardise_X(X_train), base._standardise_y(y_train)
    anchors, weights = base.anchors_, base.weights_
    start = time.process_time()
    risks, fits, wholes, bandwidths = replay(base, X_std, y_std, anchors, weights)
    row["t_select"] = time.process_time() - start
    assert np.allclose(risks, base.cv_risks_, rtol=1e-6), (risks, base.cv_risks_)
    keys = sorted(fits, key=lambda k: risks[k])

    def bagged(key):
        return as_estimator(base, wholes[key[0]], np.mean(fits[key][0], axis=0))

    refits, refit_seconds = {}, {}

    def refit(key):
        if key not in refits:
            t = time.process_time()
            refits[key] = InfiniteQuantileRegressor(
                lambda_=LAMBDA_PATH[key[1]], input_bandwidth=bandwidths[key[0]],
                random_state=split, verbose=0).fit(X_train, y_train)  # fmt: skip
            refit_seconds[key] = time.process_time() - t
        return refits[key]

    row["cvbag"] = score(bagged(keys[0]).predict(X_test, LEVELS))
    row["top3"] = score(np.mean([refit(k).predict(X_test, LEVELS) for k in keys[:3]], 0))
    row["top3_bag"] = score(np.mean([bagged(k).predict(X_test, LEVELS) for k in keys[:3]], 0))
    start = time.process_time()
    w = stacking_weights([fits[k][1] for k in keys], y_std, anchors, weights)
    row["t_lp"] = time.process_time() - start
    used = [(k, wk) for k, wk in zip(keys, w) if wk > 0.01]
    total = sum(wk for _, wk in used)
    row["stack_weights"] = {f"{k[0]},{k[1]}": round(float(wk), 3) for k, wk in used}
    row["stack"] = score(sum(wk * refit(k).predict(X_test, LEVELS) for k, wk in used) / total)
    row["stack_bag"] = score(sum(wk * bagged(k).predict(X_test, LEVELS) for k, wk in used) / total)
    row["t_refits"] = {f"{k[0]},{k[1]}": refit_seconds[k] for k in refit_seconds}
    return row


def cost(name, X, y, split):
    """Fit CPU seconds of a fixed-λ fit and of the defaults with and without ``aggregate``."""
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=split)
    row = {"dataset": name, "split": split, "load": os.getloadavg()[0]}
    for label, params in (("fixed", {"lambda_": 1e-3}), ("select", {"aggregate": False}),
                          ("stack", {"aggregate": True})):  # fmt: skip
        start = time.process_time()
        InfiniteQuantileRegressor(random_state=split, verbose=0, **params).fit(X_train, y_train)
        row[label] = time.process_time() - start
    return row


def report(path, cost_path):
    """The section: per set the means over the complete splits of every candidate, the wins
    against QRF, mean relative pinball and mean rank over the sets, and the cost ratios."""
    rows = [json.loads(line) for line in open(path)]
    counts = {}
    for r in rows:
        counts[r["split"]] = counts.get(r["split"], 0) + 1
    complete = sorted(s for s, c in counts.items() if c == len(QUANTILE_DATASETS))
    table, wins, relative, ranks = [], dict.fromkeys(CANDIDATES, 0), {}, {}
    for name in QUANTILE_DATASETS:
        mine = [r for r in rows if r["dataset"] == name and r["split"] in complete]
        qrf = np.mean([r["qrf"] for r in mine])
        means = {c: np.mean([r[c] for r in mine]) for c in CANDIDATES}
        order = sorted(CANDIDATES, key=means.get)
        for c in CANDIDATES:
            wins[c] += means[c] < qrf
            relative.setdefault(c, []).append(means[c] / means["default"])
            ranks.setdefault(c, []).append(order.index(c) + 1)
        members = np.mean([len(r["stack_weights"]) for r in mine])
        table.append([name, f"{qrf:.1f}", *(f"{means[c]:.1f}" for c in CANDIDATES),
                      f"{members:.1f}"])  # fmt: skip
    costs = [json.loads(line) for line in open(cost_path)]
    ratios = {}
    for label in ("select", "stack"):
        timed = [name for name in QUANTILE_DATASETS if any(r["dataset"] == name for r in costs)]
        ratios[label] = np.array([
            sum(r[label] for r in costs if r["dataset"] == name)
            / sum(r["fixed"] for r in costs if r["dataset"] == name)
            for name in timed
        ])  # fmt: skip
    loads = [r["load"] for r in rows + costs]
    header = ["data set", "QRF", *CANDIDATES, "stack members"]
    summary = [f"*{c}*: below QRF on {wins[c]} of {len(QUANTILE_DATASETS)}; mean pinball "
               f"relative to *default* {np.mean(relative[c]):.3f}; mean rank "
               f"{np.mean(ranks[c]):.2f}." for c in CANDIDATES]  # fmt: skip
    cost_lines = [f"*{label}*: median {np.median(v):.1f}×, range {v.min():.1f}–{v.max():.1f}×"
                  for label, v in ratios.items()]  # fmt: skip
    return "\n".join([
        "## Infinite task learning: ∞-QR's default, select or aggregate (`bench_itl_aggregate.py`)",
        "",
        f"Measured {machine()}; load average {min(loads):.1f}–{max(loads):.1f} while it ran.",
        f"Test pinball×100 (rearranged, τ ∈ {{0.1, …, 0.9}}), means over the {len(complete)} "
        f"splits {complete[0]}…{complete[-1]} (paper's scaling, 70/30, seed = split) of:",
        "*default*: the earlier default (`aggregate=False`: the setting of least held-out "
        "risk, refitted); *cvbag*: the mean of its 3 fold fits (no refit); *top3*: the mean "
        "of the refits of the 3 settings of least held-out risk; *top3_bag*: of their fold "
        "means; *stack*: the refits of the settings of stacking weight > 1 % (convex weights "
        "of least out-of-fold integrated pinball, `selection.stacking_weights`), averaged "
        "with those weights; *stack_bag*: the same weights on the fold means. *QRF*: "
        "`RandomForestQuantileRegressor(random_state=split)`. Fold fits are the selection's "
        "(≤ 50 L-BFGS-B iterations each). Here the averages are of rearranged predictions "
        "and the refits start from zero; the library's `aggregate=True` rearranges the "
        "average and starts each refit from its fold mean (its figures: `bench_itl_forest`). "
        f"Splits run but incomplete (not counted): {len(counts) - len(complete)}.",
        "",
        markdown_table(header, table),
        "",
        *summary,
        "",
        "Fit CPU time (`time.process_time`, one BLAS thread) of the defaults / a fixed-λ "
        f"fit, per set summed over splits {sorted({r['split'] for r in costs})}:",
        *cost_lines,
    ])  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(QUANTILE_DATASETS))
    parser.add_argument("--splits", default="0-4")
    parser.add_argument("--out", default="bench_itl_aggregate.jsonl")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--cost-out", default="bench_itl_aggregate_cost.jsonl")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args(argv)
    if args.report:
        write_section("bench_itl_aggregate", report(args.out, args.cost_out))
        return 0
    out, task = (args.cost_out, cost) if args.cost else (args.out, run)
    os.environ.setdefault("MANYTASK_DATA", "/work/shared/data")
    low, high = map(int, args.splits.split("-"))
    done = set()
    if os.path.exists(out):
        with open(out) as handle:
            done = {(r["dataset"], r["split"]) for r in map(json.loads, handle)}
    warnings.simplefilter("ignore")
    for split in range(low, high + 1):
        for name in args.datasets.split(","):
            if (name, split) in done:
                continue
            X, y = standardised(load_quantile_benchmark(name))
            with threadpool_limits(1):
                row = task(name, X, y, split)
            print(json.dumps(row), flush=True)
            with open(out, "a") as handle:
                handle.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
