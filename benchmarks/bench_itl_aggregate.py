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
into the ``bench_itl_aggregate`` section of RESULTS.md. ``--variants CONFIG`` screens the
cost and accuracy of cheaper member refits (and, by CONFIG, cheaper selections): one
snapshotted refit per member (:func:`variants`, lines to ``--variants-out``). Run: ``python
benchmarks/bench_itl_aggregate.py --splits 0-4; … --cost --splits 0-2; … --variants base
--splits 0-4; … --report``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import time
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.model_selection import KFold, train_test_split
from threadpoolctl import threadpool_limits

from manytask.datasets import QUANTILE_DATASETS, load_quantile_benchmark
from manytask.experiments.itl_table1 import standardised
from manytask.itl import InfiniteQuantileRegressor, pinball_loss
from manytask.itl._estimator import (
    median_bandwidth,
    minimise,
    penalised_objective,
    random_generator,
    ridge_penalty,
)
from manytask.itl.kernel_quantile import STOP_WINDOW, quantile_risk
from manytask.itl.losses import pinball
from manytask.itl.model import DecomposableModel
from manytask.itl.quantile import SELECTION_MAX_ITER, iteration_budget
from manytask.itl.selection import BANDWIDTH_FACTORS, CV_TOL, LAMBDA_PATH, stacking_weights
from manytask.kernels import RBF

from _common import machine, markdown_table, write_section

LEVELS = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
CANDIDATES = ("default", "cvbag", "top3", "top3_bag", "stack", "stack_bag")


def replay(
    estimator,
    X_std,
    y_std,
    anchors,
    weights,
    factors=BANDWIDTH_FACTORS,
    fold_iter=SELECTION_MAX_ITER,
    holdouts=3,
    lambdas=LAMBDA_PATH,
):
    """Every fold fit of the default's selection: {(b, l): (fold params list, oof (n, m))}
    (oof NaN on rows no split held out); ``factors``, ``fold_iter`` (iterations of each fold
    fit), ``holdouts`` (splits of the 3 used) and ``lambdas`` change the selection."""
    median = median_bandwidth(X_std, estimator.random_state)
    bandwidths = [f * median for f in factors]
    seed = int(random_generator(estimator.random_state).integers(2**31))
    splits = list(KFold(3, shuffle=True, random_state=seed).split(X_std))[:holdouts]
    order = np.argsort(lambdas)[::-1]
    risks = np.full((len(bandwidths), len(lambdas)), np.inf)
    fits, wholes = {}, {}
    for b, bandwidth in enumerate(bandwidths):
        kernel = estimator._input_kernel(X_std, None, bandwidth, estimator.random_state)
        model = DecomposableModel(kernel, RBF(0.2), RBF(0.2))
        whole = estimator._precompute(model, X_std, anchors)
        wholes[b] = whole, model
        starts = [None] * len(splits)
        for position, index in enumerate(order):
            penalty = ridge_penalty(lambdas[index], estimator.lambda_b)
            oof, risk = np.full((len(y_std), len(anchors)), np.nan), 0.0
            for part, (train, test) in enumerate(splits):
                fold = whole.rows(train)
                term = quantile_risk(y_std[train], anchors, weights, 1.0, estimator.kappa)
                result = minimise(fold, term, penalty, fold_iter, CV_TOL, starts[part])
                starts[part] = result.x
                held = whole.rows(test)
                values = held.predict(*held.unpack(result.x))
                oof[test] = values
                risk += float(np.mean(pinball(y_std[test, None], values, anchors[None]), 0)
                              @ weights)  # fmt: skip
            risks[b, index] = risk / len(splits)
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


#: Iteration caps of the member refits screened by ``--variants`` (snapshots of one run).
REFIT_MARKS = (25, 50, 100, 200, 400)
#: Relative decreases of the objective (L-BFGS-B's ``ftol`` test) screened as refit stops.
REFIT_FTOLS = (1e-6, 1e-7)


def refit_snapshots(whole, term, penalty, start, max_iter):
    """One refit (L-BFGS-B, ftol 1e-8 as the library's) from ``start`` with the iterate and
    CPU seconds where each cap of :data:`REFIT_MARKS`, test of :data:`REFIT_FTOLS` or
    :func:`statistical_stop` (``stat``; ``stat0.1`` at a tenth of its threshold) would have
    stopped it; ``full`` is where it stopped (every unreached stop is that one)."""
    snaps, clock = {}, time.process_time()
    previous = [penalised_objective(start, whole, term, penalty)[0]]
    count = [0]
    row_risks = term.row_risks(whole, *whole.unpack(start))
    spread = float(np.std(row_risks, ddof=1)) / np.sqrt(len(row_risks))
    history = []

    def callback(intermediate_result):
        count[0] += 1
        value, x = float(intermediate_result.fun), intermediate_result.x
        if count[0] in REFIT_MARKS:
            snaps[f"it{count[0]}"] = (x.copy(), time.process_time() - clock, count[0])
        decrease = (previous[0] - value) / max(abs(previous[0]), abs(value), 1.0)
        for ftol in REFIT_FTOLS:
            if f"ftol{ftol:g}" not in snaps and decrease <= ftol:
                snaps[f"ftol{ftol:g}"] = (x.copy(), time.process_time() - clock, count[0])
        previous[0] = value
        history.append(value)
        for label, factor in (("stat", 1.0), ("stat0.1", 0.1)):
            window = len(history) > STOP_WINDOW and history[-STOP_WINDOW - 1] - value
            if label not in snaps and window is not False and window < factor * spread:
                snaps[label] = (x.copy(), time.process_time() - clock, count[0])

    with threadpool_limits(limits=1, user_api="blas"):
        result = minimize(penalised_objective, start, args=(whole, term, penalty), jac=True,
                          method="L-BFGS-B", callback=callback,
                          options={"maxiter": max_iter, "ftol": 1e-8, "gtol": 1e-10})  # fmt: skip
    snaps["full"] = (result.x, time.process_time() - clock, int(result.nit))
    for key in (
        [f"it{k}" for k in REFIT_MARKS] + [f"ftol{t:g}" for t in REFIT_FTOLS] + ["stat", "stat0.1"]
    ):
        snaps.setdefault(key, snaps["full"])
    return snaps


def variants(name, X, y, split, config):
    """Test pinball×100 and fit CPU / a fixed-λ fit of refit and selection variants of the
    stacked default, from one replay of the selection (``config``: its factors, fold
    iterations, held-out splits, λ path, and the LP's method) and one snapshotted refit of
    each member."""
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=split)
    row = {"dataset": name, "split": split, "load": os.getloadavg()[0], "config": config["name"]}

    def score(predictions):
        return 100 * pinball_loss(y_test, predictions, LEVELS)

    start = time.process_time()
    base = InfiniteQuantileRegressor(lambda_=1e-3, random_state=split, verbose=0)
    base.fit(X_train, y_train)
    row["t_fixed"] = time.process_time() - start
    row["fixed_iter"] = base.n_iter_
    X_std, y_std = base._standardise_X(X_train), base._standardise_y(y_train)
    anchors, weights = base.anchors_, base.weights_
    start = time.process_time()
    risks, fits, wholes, bandwidths = replay(
        base, X_std, y_std, anchors, weights, config["factors"], config["fold_iter"],
        config["holdouts"], config["lambdas"])  # fmt: skip
    t_select = time.process_time() - start
    settings = list(fits)
    rows = ~np.isnan(fits[settings[0]][1][:, 0])
    start = time.process_time()
    stacked = stacking_weights([fits[k][1][rows] for k in settings], y_std[rows], anchors,
                               weights, method=config["lp"])  # fmt: skip
    t_lp = time.process_time() - start
    row.update(t_select=t_select / row["t_fixed"], t_lp=t_lp / row["t_fixed"])
    for method in ("highs-ds", "highs"):  # other LP solvers: their cost and weights
        start = time.process_time()
        other = stacking_weights([fits[k][1][rows] for k in settings], y_std[rows], anchors,
                                 weights, method=method)  # fmt: skip
        row[f"t_lp_{method}"] = (time.process_time() - start) / row["t_fixed"]
        row[f"dw_{method}"] = float(np.abs(other - stacked).max())
    kept = [(float(w), k) for w, k in zip(stacked, settings) if w >= 0.01]
    kept.sort(key=lambda m: -m[0])
    row["members"] = [[w, *map(int, k)] for w, k in kept]
    term = quantile_risk(y_std, anchors, weights, 1.0, base.kappa)
    snaps = []
    for _, key in kept:
        whole = wholes[key[0]][0]
        lambda_ = config["lambdas"][key[1]]
        start_params = np.mean(fits[key][0], axis=0)
        found = refit_snapshots(whole, term, ridge_penalty(lambda_, base.lambda_b), start_params,
                                iteration_budget(base.max_iter, lambda_))  # fmt: skip
        found["bag"] = (start_params, 0.0, 0)
        snaps.append(found)
    row["refit_iter"] = [s["full"][2] for s in snaps]

    def evaluate(label, keys, count=None):
        """Pinball of the members' average with ``keys[s]`` the snapshot of member s (the
        ``count`` heaviest only, weights renormalised), and its CPU ratio."""
        used = kept[:count]
        total_weight = sum(w for w, _ in used)
        members = []
        seconds = t_select + t_lp
        for s, (w, key) in enumerate(used):
            params, spent, _ = snaps[s][keys[s]]
            whole, model = wholes[key[0]]
            alpha, _, bias = whole.unpack(params)
            members.append((w / total_weight, config["lambdas"][key[1]], bandwidths[key[0]],
                            model, model.pack(*whole.to_coefficients(alpha, bias))))  # fmt: skip
            seconds += spent
        fitted = copy.copy(base)
        fitted.members_ = members
        row[label] = score(fitted.predict(X_test, LEVELS))
        row["cost_" + label] = seconds / row["t_fixed"]

    n = len(kept)
    for key in ["full", "bag", *(f"it{k}" for k in REFIT_MARKS),
                *(f"ftol{t:g}" for t in REFIT_FTOLS), "stat", "stat0.1"]:  # fmt: skip
        evaluate(key, [key] * n)
    evaluate("heavy_bag", ["full"] + ["bag"] * (n - 1))
    evaluate("heavy_it50", ["full"] + ["it50"] * (n - 1))
    evaluate("heavy_ftol6", ["full"] + ["ftol1e-06"] * (n - 1))
    evaluate("heavy7_it50", ["ftol1e-07"] + ["it50"] * (n - 1))
    evaluate("heavy7_bag", ["ftol1e-07"] + ["bag"] * (n - 1))
    evaluate("top1", ["full"], 1)
    evaluate("top2", ["full"] * 2, 2)
    evaluate("top2_ftol1e-06", ["ftol1e-06"] * 2, 2)
    return row


VARIANTS_NOTE = (
    "Refit and selection variants of the stacked default (`--variants CONFIG`): the "
    "selection replayed with the config's grid and effort, the stacking weights (HiGHS "
    "interior point), then one L-BFGS-B refit of each member (weight ≥ 1 %) on all the "
    "training points from its fold fits' mean, to ftol 1e-8 within the λ's iteration budget "
    "(*full*: the library's stacked default before this change), snapshotted where a "
    "looser stop would have ended it: *itK* after K iterations, *ftolT* at L-BFGS-B's "
    "relative-decrease test at T, *stat* at `statistical_stop` (*stat0.1* a tenth of its "
    "threshold), *bag* the fold mean itself (no refit). *heavy_X*: the heaviest member "
    "refitted fully (*heavy7_X*: to ftol 1e-7), the others stopped by X; *top1*, *top2*: "
    "only the 1 or 2 heaviest, fully refitted, weights renormalised. The model is the "
    "weighted average, rearranged (as `predict`); test pinball×100 at τ ∈ {0.1, …, 0.9}. "
    "Cost: selection + LP + the members' refit CPU up to the stop (one thread), over a "
    "fixed-λ fit (`lambda_=1e-3`), per set summed over the splits. The library's default "
    "is now *ftol1e-06* (every member to the selection's `CV_TOL`: `quantile.MEMBER_TOL`); "
    "*fold30* and *hold2* (cheaper selections) were screened on split 0 only."
)

CONFIGS = {
    "base": {"factors": BANDWIDTH_FACTORS, "fold_iter": SELECTION_MAX_ITER, "holdouts": 3,
             "lambdas": LAMBDA_PATH, "lp": "highs-ipm"},
    "lpds": {"factors": BANDWIDTH_FACTORS, "fold_iter": SELECTION_MAX_ITER, "holdouts": 3,
             "lambdas": LAMBDA_PATH, "lp": "highs-ds"},
    "fold30": {"factors": BANDWIDTH_FACTORS, "fold_iter": 30, "holdouts": 3,
               "lambdas": LAMBDA_PATH, "lp": "highs-ipm"},
    "b3": {"factors": (0.5, 1.0, 4.0), "fold_iter": SELECTION_MAX_ITER, "holdouts": 3,
           "lambdas": LAMBDA_PATH, "lp": "highs-ipm"},
    "hold2": {"factors": BANDWIDTH_FACTORS, "fold_iter": SELECTION_MAX_ITER, "holdouts": 2,
              "lambdas": LAMBDA_PATH, "lp": "highs-ipm"},
}  # fmt: skip


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


def report_variants(path, qrf):
    """Lines of the refit and selection variants of ``--variants`` (``qrf``: {(set, split):
    QRF's pinball}): per config, on its splits complete for all sets, each variant's mean
    over the sets of its per-set mean pinball relative to the library's *full* refits of the
    ``base`` config (same splits), its largest such ratio, its wins against QRF and the
    median (range) over the sets of its fit CPU / a fixed-λ fit."""
    rows = [json.loads(line) for line in open(path)]
    base = {(r["dataset"], r["split"]): r for r in rows if r["config"] == "base"}
    lines = []
    for config in dict.fromkeys(r["config"] for r in rows):
        mine = [r for r in rows if r["config"] == config and (r["dataset"], r["split"]) in base]
        counts = {}
        for r in mine:
            counts[r["split"]] = counts.get(r["split"], 0) + 1
        complete = sorted(s for s, c in counts.items() if c == len(QUANTILE_DATASETS))
        if not complete:
            continue
        mine = [r for r in mine if r["split"] in complete]
        labels = [key[5:] for key in mine[0] if key.startswith("cost_")]
        table = []
        for label in labels:
            ratios, wins, costs = [], 0, []
            for name in QUANTILE_DATASETS:
                own = [r for r in mine if r["dataset"] == name]
                value = np.mean([r[label] for r in own])
                ratios.append(value / np.mean([base[name, r["split"]]["full"] for r in own]))
                wins += value < np.mean([qrf[name, r["split"]] for r in own])
                costs.append(sum(r["cost_" + label] * r["t_fixed"] for r in own)
                             / sum(r["t_fixed"] for r in own))  # fmt: skip
            worst = int(np.argmax(ratios))
            spread = f"{np.median(costs):.1f} ({min(costs):.1f}–{max(costs):.1f})"
            table.append([label, f"{np.mean(ratios):.3f}",
                          f"{ratios[worst]:.3f} ({QUANTILE_DATASETS[worst]})", f"{wins}",
                          spread])  # fmt: skip
        c = CONFIGS[config]
        lines += [
            f"Config *{config}* (bandwidth factors {c['factors']}, ≤ {c['fold_iter']} "
            f"iterations per fold fit, {c['holdouts']} of 3 held-out thirds, LP {c['lp']}), "
            f"splits {complete[0]}…{complete[-1]}; selection CPU / fixed fit median "
            f"{np.median([r['t_select'] for r in mine]):.2f}×, stacking LP "
            f"{np.median([r['t_lp'] for r in mine]):.2f}× (HiGHS dual simplex "
            f"{np.median([r['t_lp_highs-ds'] for r in mine]):.2f}×, same weights); fixed fit "
            f"{np.median([r['fixed_iter'] for r in mine]):.0f} L-BFGS-B iterations (median); "
            f"members {np.mean([len(r['members']) for r in mine]):.1f} on average.",
            "",
            markdown_table(
                [
                    "variant",
                    "pinball / base *full*",
                    "largest (set)",
                    f"below QRF (of {len(QUANTILE_DATASETS)})",
                    "fit CPU / fixed fit, median (range)",
                ],
                table,
            ),
            "",
        ]
    return lines


def report(path, cost_path, variants_path=None):
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
    variant_lines = []
    if variants_path and os.path.exists(variants_path):
        qrf = {(r["dataset"], r["split"]): r["qrf"] for r in rows}
        variants = [json.loads(line) for line in open(variants_path)]
        costs_and_variants = costs + variants
        variant_lines = ["", VARIANTS_NOTE, "", *report_variants(variants_path, qrf)]
    else:
        costs_and_variants = costs
    loads = [r["load"] for r in rows + costs_and_variants]
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
        *variant_lines,
    ])  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(QUANTILE_DATASETS))
    parser.add_argument("--splits", default="0-4")
    parser.add_argument("--out", default="bench_itl_aggregate.jsonl")
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--cost-out", default="bench_itl_aggregate_cost.jsonl")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--variants", choices=sorted(CONFIGS))
    parser.add_argument("--variants-out", default="bench_itl_aggregate_variants.jsonl")
    args = parser.parse_args(argv)
    if args.report:
        write_section("bench_itl_aggregate", report(args.out, args.cost_out, args.variants_out))
        return 0
    out, task = (args.cost_out, cost) if args.cost else (args.out, run)
    if args.variants:
        config = {"name": args.variants, **CONFIGS[args.variants]}
        out = args.variants_out

        def task(name, X, y, split):
            return variants(name, X, y, split, config)

    os.environ.setdefault("MANYTASK_DATA", "/work/shared/data")
    low, high = map(int, args.splits.split("-"))
    done = set()
    if os.path.exists(out):
        with open(out) as handle:
            done = {(r["dataset"], r["split"]) for r in map(json.loads, handle)
                    if r.get("config") == args.variants}  # fmt: skip
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
