"""Infinite task learning: ∞-QR against per-level quantile models, its scaling in n, and the
low-rank (Nyström) option.

1. On a heteroscedastic synthetic problem and on mcycle and engel (70/30 splits): fit time,
   test pinball loss at the levels 0.1, 0.3, 0.5, 0.7, 0.9 and crossing loss of ∞-QR (one
   fit for every level) against IND-QR (one kernel quantile regression per level),
   scikit-learn's ``HistGradientBoostingRegressor(loss="quantile")`` fitted once per level,
   and ``quantile_forest.RandomForestQuantileRegressor`` (extra ``bench``; skipped if absent).
2. Fit time of the exact ∞-QR against n on the synthetic problem, m = ⌈√n⌉ anchors, with
   its log-log slope.
3. The low-rank option (``n_components``) on a 6-input version of the synthetic problem:
   test pinball against the exact model at n = 4000, and fit time at n = 20 000.
4. The exact fit before and after whitening, on CobarOre, mcycle and engel, m = 100.
5. ∞-DLSE (``InfiniteLevelSetEstimator`` defaults): fit time, iterations and held-out
   θ-property on Spambase (n = 3221, 57 inputs) and on n = 2000 Gaussian points in 5-D
   (targets: ≤ 10 s and ≤ 5 s; outlier fraction within ±0.03 of θ on [0.05, 1]).
   ``--dlse-only`` runs this part alone (its own section of RESULTS.md).
6. ``--defaults-only``: ∞-QR with its defaults (λ and bandwidth chosen inside ``fit``,
   rearranged predict), no tuning, on the 20 Table-1 sets (paper's scaling, 3 random 70/30
   splits): test pinball against the paper's ∞-QR mean ± sd and against quantile-forest's
   defaults, test crossing, fit time against a fixed-λ fit; the same fits read with
   ``rearrange=False`` (the paper's model h); the test coverage of levels 0.05 … 0.95 on a
   heteroscedastic, heavy-tailed synthetic set (n = 500, several training seeds) against
   the sampling noise of plain sample quantiles of 500 draws. Its own section of RESULTS.md.
7. ``--forest-splits CSV``: ∞-QR's defaults against quantile-forest's on the splits of an
   itl-table1 ``splits.csv`` (``Settings(selection="in-fit")``): the table's raw ∞-QR rows
   and a refit read rearranged, against ``RandomForestQuantileRegressor(random_state=split)``
   on the same 70/30 splits, with Wilcoxon signed-rank p-values per set. Its own section.

Data: ``manytask.datasets.load_quantile_benchmark`` reads ``$MANYTASK_DATA/quantile``
(default here ``/work/shared/data`` when it exists). Run: ``python benchmarks/bench_itl.py``
(``--quick`` for smaller n).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import wilcoxon
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from manytask.datasets import QUANTILE_DATASETS, load_quantile_benchmark
from manytask.experiments.itl_table1 import SIGNIFICANT, paper_table, standardised
from manytask.itl import (
    IndependentQuantileRegressor,
    InfiniteLevelSetEstimator,
    InfiniteQuantileRegressor,
    crossing_loss,
    pinball_loss,
)
from manytask.itl.quantile import SELECTION_MAX_ITER, SMALL_SET
from manytask.itl.selection import BANDWIDTH_FACTORS, CV_TOL, LAMBDA_PATH

from _common import machine, markdown_table, peak_rss_mb, write_section

LEVELS = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
SPLITS = 3
LOW_RANK_COMPONENTS = 300
LOW_RANK_FEATURES = 6
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # ../shared/data


def heteroscedastic(n, seed, n_features=2):
    """x ~ U[−1, 1]^d, y = sin(πx₁) + x₂² + s(x) ε, s(x) = 0.1 + 0.4|x₂| + 0.2·1{x₁ > 0}
    (inputs beyond the second are irrelevant)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, n_features))
    scale = 0.1 + 0.4 * np.abs(X[:, 1]) + 0.2 * (X[:, 0] > 0)
    return X, np.sin(np.pi * X[:, 0]) + X[:, 1] ** 2 + scale * rng.standard_normal(n)


class PerLevel:
    """One scikit-learn-style quantile model per level (HistGradientBoosting)."""

    def __init__(self, seed):
        self.seed = seed

    def fit(self, X, y):
        self.models_ = [
            HistGradientBoostingRegressor(loss="quantile", quantile=q, random_state=self.seed)
            .fit(X, y)
            for q in LEVELS
        ]  # fmt: skip
        return self

    def predict(self, X):
        return np.column_stack([model.predict(X) for model in self.models_])


class Forest:
    """quantile-forest's RandomForestQuantileRegressor: one forest, every level."""

    def __init__(self, seed):
        self.seed = seed

    def fit(self, X, y):
        from quantile_forest import RandomForestQuantileRegressor

        self.model_ = RandomForestQuantileRegressor(random_state=self.seed).fit(X, y)
        return self

    def predict(self, X):
        return self.model_.predict(X, quantiles=list(LEVELS))


def methods(seed):
    infinite = InfiniteQuantileRegressor(random_state=seed)
    independent = IndependentQuantileRegressor(quantiles=tuple(LEVELS), random_state=seed)
    found = {
        "∞-QR": (infinite, lambda model, X: model.predict(X, LEVELS)),
        "IND-QR": (independent, lambda model, X: model.predict(X)),
        "HGB × 5": (PerLevel(seed), lambda model, X: model.predict(X)),
    }
    try:
        import quantile_forest  # noqa: F401
    except ImportError:
        print("quantile-forest not installed (pip install manytask[bench]); skipped")
    else:
        found["QRF"] = (Forest(seed), lambda model, X: model.predict(X))
    return found


def datasets(quick):
    n = 500 if quick else 1000
    X, y = heteroscedastic(int(n / 0.7) + 1, seed=0)
    yield f"synthetic (n = {len(y)})", X, y
    for name in ("mcycle", "engel"):
        data = load_quantile_benchmark(name)
        yield f"{name} (n = {len(data.y)})", data.X, data.y


def compare(quick):
    """Rows (data set, method, fit s, pinball, crossing), means over SPLITS 70/30 splits."""
    rows = []
    for label, X, y in datasets(quick):
        results = {}
        for split in range(SPLITS):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, random_state=split
            )
            for method, (model, predict) in methods(split).items():
                start = time.perf_counter()
                with threadpool_limits(limits=1):  # same footing: one thread each
                    model.fit(X_train, y_train)
                seconds = time.perf_counter() - start
                Q = predict(model, X_test)
                scores = (
                    seconds,
                    pinball_loss(y_test, Q, LEVELS) / LEVELS.size,
                    crossing_loss(Q, LEVELS),
                )
                results.setdefault(method, []).append(scores)
        for method, scores in results.items():
            seconds, pinball, crossing = np.mean(scores, axis=0)
            rows.append((label, method, seconds, pinball, crossing))
            print(
                f"{label:22s} {method:8s} fit {seconds:7.2f} s  pinball {pinball:.4f}  "
                f"crossing {crossing:.5f}",
                flush=True,
            )
    return rows


def fit_exact(n, seed=1, n_components=None, n_features=2):
    X, y = heteroscedastic(n, seed, n_features)
    model = InfiniteQuantileRegressor(
        n_anchors=math.ceil(math.sqrt(n)), n_components=n_components, random_state=0
    )
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


def scaling(sizes):
    rows = []
    for n in sizes:
        model, seconds = fit_exact(n)
        rows.append((n, len(model.anchors_), seconds, model.n_iter_, model.n_components_))
        print(f"exact n={n:6d} m={len(model.anchors_):3d} fit {seconds:7.2f} s", flush=True)
    return rows


def low_rank(n_compare, n_large):
    """Rows (n, r or None, fit s, test pinball, rank) on the LOW_RANK_FEATURES-D problem."""
    X_test, y_test = heteroscedastic(5000, 99, LOW_RANK_FEATURES)
    rows = []
    for n, components in ((n_compare, None), (n_compare, LOW_RANK_COMPONENTS),
                          (n_large, LOW_RANK_COMPONENTS)):  # fmt: skip
        model, seconds = fit_exact(n, n_components=components, n_features=LOW_RANK_FEATURES)
        pinball = pinball_loss(y_test, model.predict(X_test, LEVELS), LEVELS) / LEVELS.size
        rows.append((n, components, seconds, pinball, model.n_components_))
        print(f"n={n} r={components} fit {seconds:.2f} s pinball {pinball:.5f}", flush=True)
    return rows


class DirectQuantileRegressor(InfiniteQuantileRegressor):
    """∞-QR fitted as before whitening: L-BFGS-B directly over the coefficients (A, B, c)."""

    def _precompute(self, model, X, anchors, n_components=None, slopes=True, level_weights=None):
        model.precompute(X, anchors)
        return None


def exact_speedup(names):
    """Rows (data, n, seconds, iterations, objective) for the direct and the whitened fit."""
    rows = []
    for name in names:
        data = load_quantile_benchmark(name)
        for label, estimator in (
            ("direct (A, B, c)", DirectQuantileRegressor(n_anchors=100)),
            ("whitened", InfiniteQuantileRegressor(n_anchors=100)),
        ):
            start = time.perf_counter()
            estimator.fit(data.X, data.y)
            seconds = time.perf_counter() - start
            rows.append(
                (name, len(data.y), label, seconds, estimator.n_iter_, estimator.objective_)
            )
            print(
                f"{name:10s} {label:17s} fit {seconds:7.2f} s  {estimator.n_iter_:5d} iterations"
                f"  objective {estimator.objective_:.8f}",
                flush=True,
            )
    return rows


def report(comparison, scaled, reduced, speedup, quick, total_seconds):
    by_set = {}
    for label, method, seconds, pinball, crossing in comparison:
        by_set.setdefault(label, {})[method] = (seconds, pinball, crossing)
    table = []
    for label, found in by_set.items():
        ref_seconds, ref_pinball, _ = found["∞-QR"]
        for method, (seconds, pinball, crossing) in found.items():
            table.append([
                label, method, f"{seconds:.2f}", f"{seconds / ref_seconds:.2f}",
                f"{pinball:.4f}", f"{pinball / ref_pinball:.3f}", f"{100 * crossing:.3f}",
            ])  # fmt: skip
    sizes = [row[0] for row in scaled]
    slope = np.polyfit(np.log(sizes), np.log([row[2] for row in scaled]), 1)[0]
    top_slope = np.log(scaled[-1][2] / scaled[-2][2]) / np.log(scaled[-1][0] / scaled[-2][0])
    scaling_table = [
        [n, m, f"{seconds:.2f}", iterations, rank] for n, m, seconds, iterations, rank in scaled
    ]
    (n_cmp, _, exact_s, exact_pin, exact_rank), (_, r, low_s, low_pin, _) = reduced[:2]
    n_big, _, big_s, big_pin, _ = reduced[2]
    speedup_rows = []
    for direct, whitened in zip(speedup[::2], speedup[1::2]):
        for row, ratio, gap in (
            (direct, "1", "0"),
            (
                whitened,
                f"{direct[3] / whitened[3]:.0f}×",
                f"{(whitened[5] - direct[5]) / direct[5]:+.2e} (rel.)",
            ),
        ):
            speedup_rows.append([row[0], row[1], row[2], f"{row[3]:.2f}", row[4],
                                 f"{row[5]:.8f}", ratio, gap])  # fmt: skip
    return "\n".join([
        "## Infinite task learning: ∞-QR (`bench_itl.py`)",
        "",
        f"Measured {machine()}, load average {os.getloadavg()[0]:.1f} at the end (the 2 cores",
        "were shared with other jobs, so times are pessimistic and noisy). Whole run "
        f"{total_seconds / 60:.1f} min{' (`--quick`)' if quick else ''}, peak RSS "
        f"{peak_rss_mb():.0f} MiB.",
        "",
        f"### Test pinball and crossing loss, levels {tuple(LEVELS.tolist())}",
        "",
        f"Means over {SPLITS} random 70/30 splits. *pinball*: mean over the 5 levels of the",
        "mean test pinball loss (units of y); *crossing ×100*: `crossing_loss` of the test",
        "predictions at the sorted levels. Ratios are against ∞-QR on the same data. Every fit",
        "runs with BLAS and OpenMP limited to one thread (threadpoolctl). ∞-QR and",
        "IND-QR: defaults (Gaussian kernels, median heuristic, λ = 1e-3, m = min(⌈√n⌉, 100)",
        "anchors for ∞-QR), no tuning; HGB × 5: `HistGradientBoostingRegressor(loss=",
        '"quantile")` fitted once per level; QRF: `quantile_forest.RandomForestQuantileRegressor`',
        "(100 trees).",
        "",
        markdown_table(
            ["data", "method", "fit (s)", "fit / ∞-QR", "pinball", "pinball / ∞-QR",
             "crossing ×100"],
            table,
        ),  # fmt: skip
        "",
        "### Fit time of the exact ∞-QR against n (synthetic, m = ⌈√n⌉)",
        "",
        markdown_table(["n", "m", "fit (s)", "L-BFGS-B iterations", "rank r of K_X"],
                       scaling_table),  # fmt: skip
        "",
        f"Log-log slope of fit time in n over {sizes[0]}–{sizes[-1]}: {slope:.2f} "
        f"({top_slope:.2f} between the last two sizes). Largest n run: {sizes[-1]} (chosen to",
        "keep the whole script under ~10 minutes). The exact fit never forms K_X: a pivoted",
        "Cholesky factorisation to float precision finds its numerical rank r (the last column),",
        "so time grows like n r² + iterations × n r m — here r stays ≈ 100 because the inputs",
        "are 2-D. With many input features r approaches n and the low-rank option is the way",
        "to large n.",
        "",
        f"### Low-rank option (`n_components = {r}` Nyström landmarks)",
        "",
        f"The same problem with d = {LOW_RANK_FEATURES} inputs (4 irrelevant), where K_X has",
        f"full numerical rank ({exact_rank} at n = {n_cmp}); m = ⌈√n⌉ anchors; test set 5000",
        "fresh points.",
        "",
        markdown_table(
            ["n", "model", "fit (s)", "test pinball", "vs exact"],
            [
                [n_cmp, f"exact (r = {exact_rank})", f"{exact_s:.2f}", f"{exact_pin:.5f}", "1"],
                [n_cmp, f"r = {r}", f"{low_s:.2f}", f"{low_pin:.5f}",
                 f"{low_pin / exact_pin:.4f}"],
                [n_big, f"r = {r}", f"{big_s:.2f}", f"{big_pin:.5f}", "—"],
            ],
        ),  # fmt: skip
        "",
        f"Targets: n = {n_big} in under a minute ({big_s:.1f} s); test pinball within 2 % of",
        f"the exact model at n = {n_cmp} ({100 * (low_pin / exact_pin - 1):+.3f} %).",
        "",
        "### Exact fit: whitened coordinates against L-BFGS-B over (A, B, c)",
        "",
        "m = 100 Gauss–Legendre anchors, defaults otherwise (`max_iter = 2000`, `tol = 1e-8`).",
        "*direct*:"
        "the fit before this change (coefficients A, B, c; L-BFGS-B already single-threaded —",
        "with threaded BLAS on this shared machine it was ~5× slower still). *whitened*: the",
        "fit now (`WhitenedModel`: ridge penalty ‖V‖², numerical rank r of K_X).",
        "",
        markdown_table(
            ["data", "n", "fit", "time (s)", "iterations", "objective", "speed-up",
             "objective − direct"],
            speedup_rows,
        ),  # fmt: skip
    ])  # fmt: skip


DLSE_THETAS = np.array([0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0])


def dlse_data():
    """(label, train, test): Spambase 70/30 (seed 0) when spam.rda is here; 5-D Gaussian."""
    rng = np.random.default_rng(0)
    yield "Gaussian 5-D", rng.normal(size=(2000, 5)), rng.normal(size=(20000, 5))
    try:
        from manytask.datasets import load_spambase

        X = load_spambase().X
    except (FileNotFoundError, ImportError) as error:
        print(f"Spambase skipped: {error}")
        return
    order = np.random.default_rng(0).permutation(len(X))
    yield "Spambase", X[order[:3221]], X[order[3221:]]


def level_sets():
    """Rows (data, n, d, fit s, iterations, converged, rank, max |test outliers − θ|)."""
    rows = []
    for label, train, test in dlse_data():
        model = InfiniteLevelSetEstimator(random_state=0)
        start, cpu_start = time.perf_counter(), time.process_time()
        model.fit(train)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        outliers = np.mean(model.predict(test, DLSE_THETAS) == -1, axis=0)
        gap = float(np.max(np.abs(outliers - DLSE_THETAS)))
        rows.append((label, len(train), train.shape[1], seconds, cpu, model.n_iter_,
                     model.converged_, model.n_components_, gap))  # fmt: skip
        print(
            f"{label:14s} n={len(train)} fit {seconds:.2f} s (CPU {cpu:.2f} s)  "
            f"{model.n_iter_} iterations "
            f"converged={model.converged_}  max |outliers − θ| {gap:.3f}",
            flush=True,
        )
    return rows


def report_level_sets(rows, total_seconds):
    table = [
        [label, n, d, f"{seconds:.2f}", f"{cpu:.2f}", iterations, converged, rank, f"{gap:.3f}"]
        for label, n, d, seconds, cpu, iterations, converged, rank, gap in rows
    ]
    return "\n".join([
        "## Infinite task learning: ∞-DLSE (`bench_itl.py --dlse-only`)",
        "",
        f"Measured {machine()}, load average {os.getloadavg()[0]:.1f} at the end (the 2 cores",
        f"were shared with other jobs, so times are pessimistic and noisy). Whole run "
        f"{total_seconds:.0f} s.",
        "",
        "`InfiniteLevelSetEstimator()` defaults: Gaussian k_X (median heuristic), ε = 0.05,",
        "Gauss–Lobatto anchors on [ε, 1] (both ends), ridge ρ = 0.01 on h whitened with the",
        "L2,1 penalty, L-BFGS-B to its tolerance (tol = 1e-8). Held-out test: 20 000 fresh",
        "Gaussian points, or the 1380 Spambase e-mails not trained on; *max gap to θ* is the",
        f"largest |fraction of test outliers − θ| over θ ∈ {DLSE_THETAS.tolist()}.",
        "",
        markdown_table(
            ["data", "n", "d", "fit (s)", "CPU (s)", "iterations", "converged",
             "rank r of K_X", "max gap to θ"],
            table,
        ),  # fmt: skip
        "",
        "Targets: Spambase ≤ 10 s, 5-D n = 2000 ≤ 5 s, |outliers − θ| ≤ 0.03. *CPU*: the",
        "process's CPU time summed over its threads (`time.process_time`): on a busy machine a",
        "better estimate of the wall time on an idle one (L-BFGS-B runs on one thread).",
    ])  # fmt: skip


COVERAGE_LEVELS = np.round(np.linspace(0.05, 0.95, 19), 2)


def heavy_tailed(n, seed):
    """x ~ U[−2, 2], y = sin 2x + (0.2 + 0.3|x|) t₃ (as tests/itl/test_calibration.py)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=n)
    return x[:, None], np.sin(2 * x) + (0.2 + 0.3 * np.abs(x)) * rng.standard_t(3, size=n)


#: The fixed λ of the fixed-parameter fit (the default before λ was chosen in ``fit``).
FIXED_LAMBDA = 1e-3
#: Fits of the defaults section: label, parameters, and whether to read it raw too
#: (``rearrange=False``, the paper's model h; the same fit).
DEFAULT_FITS = (
    ("defaults", {}, True),
    ("fixed λ", {"lambda_": FIXED_LAMBDA}, True),
)
#: Training seeds of the synthetic coverage check.
COVERAGE_SEEDS = 5


def defaults():
    """Per set: name, paper mean, paper sd, and per fit label (pinball×100, crossing×100, fit
    s, per-split crossings), each fit also read with ``rearrange=False`` where DEFAULT_FITS
    says so (same fit), and quantile-forest's defaults ("QRF"); then the synthetic coverage
    of each fit of DEFAULT_FITS."""
    paper, rows = paper_table(), []
    for name in QUANTILE_DATASETS:
        X, y = standardised(load_quantile_benchmark(name))
        scores = {}
        for split in range(SPLITS):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, random_state=split
            )
            for label, params, raw in DEFAULT_FITS:
                start = time.process_time()
                model = InfiniteQuantileRegressor(random_state=split, **params)
                model.fit(X_train, y_train)
                seconds = time.process_time() - start
                readings = [label] + ([f"{label} raw"] if raw else [])
                for reading in readings:  # rearrange only changes predict: the same fit
                    model.set_params(rearrange=not reading.endswith("raw"))
                    Q = model.predict(X_test, LEVELS)
                    scores.setdefault(reading, []).append(
                        (100 * pinball_loss(y_test, Q, LEVELS), 100 * crossing_loss(Q, LEVELS),
                         seconds)
                    )  # fmt: skip
            start = time.process_time()
            forest = Forest(split).fit(X_train, y_train)
            seconds = time.process_time() - start
            Q = forest.predict(X_test)
            scores.setdefault("QRF", []).append(
                (100 * pinball_loss(y_test, Q, LEVELS), 100 * crossing_loss(Q, LEVELS), seconds)
            )
        row = paper[name]
        summary = {
            label: (*np.mean(values, axis=0), [c for _, c, _ in values])
            for label, values in scores.items()
        }
        rows.append((name, float(row["itl_pinball"]), float(row["itl_pinball_sd"]), summary))
        print(
            f"{name:14s} paper {row['itl_pinball']} ± {row['itl_pinball_sd']}  "
            + "  ".join(
                f"{label}: {p:6.1f} cross {c:.2f} {t:.2f} s"
                for label, (p, c, t, _) in summary.items()
            ),
            flush=True,
        )
    X_test, y_test = heavy_tailed(50000, 1)
    coverage = {}
    for label, params, _ in DEFAULT_FITS:
        for seed in range(COVERAGE_SEEDS):
            X, y = heavy_tailed(500, 1000 + seed)
            model = InfiniteQuantileRegressor(random_state=seed, **params).fit(X, y)
            covered = np.mean(y_test[:, None] <= model.predict(X_test, COVERAGE_LEVELS), axis=0)
            coverage.setdefault(label, []).append(covered)
            print(label, seed, "coverage − level:", np.round(covered - COVERAGE_LEVELS, 3))
    return rows, {k: np.array(v) for k, v in coverage.items()}, sample_quantile_gaps(500)


def sample_quantile_gaps(n, repeats=400, seed=0):
    """Largest |coverage − level| over COVERAGE_LEVELS of the plain sample quantiles of n
    draws of the synthetic y (no x): the sampling noise any estimator from n points has."""
    rng = np.random.default_rng(seed)
    reference = np.sort(heavy_tailed(2_000_000, seed + 1)[1])
    gaps = []
    for _ in range(repeats):
        sample = heavy_tailed(n, int(rng.integers(2**31)))[1]
        covered = np.searchsorted(reference, np.quantile(sample, COVERAGE_LEVELS))
        gaps.append(np.max(np.abs(covered / reference.size - COVERAGE_LEVELS)))
    return np.asarray(gaps)


def report_defaults(rows, coverage, sample_gaps, total_seconds):
    readings = list(rows[0][3])
    fits = [label for label, _, _ in DEFAULT_FITS] + ["QRF"]
    table = []
    for name, mean, sd, summary in rows:
        cells = [name, f"{mean:.0f} ± {sd:.0f}"]
        for label in readings:
            pinball, crossing, _, _ = summary[label]
            cells += [f"{pinball:.1f}{'' if pinball <= mean + sd else ' ✗'}", f"{crossing:.2f}"]
        cells += [f"{summary[label][2]:.2f}" for label in fits]
        table.append(cells)
    counts = {
        label: (
            sum(s[label][0] <= mean + sd for _, mean, sd, s in rows),
            sum(s[label][1] <= 0.5 for *_, s in rows),
            sum(s[label][0] < s["QRF"][0] for *_, s in rows),
        )
        for label in readings
    }
    pinball = {label: np.array([s[label][0] for *_, s in rows]) for label in readings}
    seconds = {label: np.array([s[label][2] for *_, s in rows]) for label in fits}
    ratio = seconds["defaults"] / seconds["fixed λ"]
    header = ["data set", "paper ∞-QR"]
    for label in readings:
        header += [label, "cross"]
    header += [f"fit {label} (CPU s)" for label in fits]
    rearrangement = [
        f"*{label}* against *{label} raw*: mean pinball×100 over the {len(rows)} sets "
        f"{pinball[label].mean():.3f} against {pinball[label + ' raw'].mean():.3f} "
        f"(rearranged lower on {int(np.sum(pinball[label] < pinball[label + ' raw']))}, "
        f"equal to 0.05 on {int(np.sum(np.abs(pinball[label] - pinball[label + ' raw']) < 0.05))},"
        f" higher on {int(np.sum(pinball[label] > pinball[label + ' raw']))} sets)."
        for label, _, raw in DEFAULT_FITS
        if raw
    ]
    coverage_lines = []
    for label, covered in coverage.items():
        worst = np.max(np.abs(covered - COVERAGE_LEVELS), axis=1)
        mean_gap = np.mean(covered, axis=0) - COVERAGE_LEVELS
        coverage_lines.append(
            f"*{label}*: largest |coverage − level| per training seed "
            f"{', '.join(f'{w:.3f}' for w in worst)} (median {np.median(worst):.3f}); "
            f"coverage − level averaged over the seeds at 0.05, 0.10, …, 0.95: "
            f"{', '.join(f'{g:+.3f}' for g in mean_gap)}."
        )
    return "\n".join([
        "## Infinite task learning: ∞-QR defaults without tuning (`bench_itl.py --defaults-only`)",
        "",
        f"Measured {machine()}, load average {os.getloadavg()[0]:.1f} at the end (the 2 cores",
        f"were shared with many other jobs: times are pessimistic). Whole run "
        f"{total_seconds:.0f} s.",
        "",
        "On each Table-1 set standardised on the whole data, means over "
        f"{SPLITS} random 70/30 splits (seed i).",
        "pinball×100 = 100 × Σ_τ mean test pinball loss over τ ∈ {0.1, 0.3, 0.5, 0.7, 0.9}",
        "(✗: above the paper's ∞-QR mean + sd); cross = crossing×100 of the test predictions.",
        "*defaults*: `InfiniteQuantileRegressor()`: λ ∈ "
        f"{list(LAMBDA_PATH)} and input bandwidth ∈ {list(BANDWIDTH_FACTORS)} × median",
        "heuristic chosen inside `fit` on a held-out third (averaged over the 3 thirds below",
        f"{SMALL_SET} training points; one factorisation per bandwidth, warm-started λ path, ftol",
        f"{CV_TOL:g}, ≤ {SELECTION_MAX_ITER} iterations per path fit, a bandwidth's path stopped",
        "where its held-out risk rises), then one refit started from the thirds' fits;",
        "λ_b = 1e-6, λ_nc = 1,",
        "Gauss–Legendre anchors, m = max(⌈√n⌉, 20) ≤ 100; predict rearranged (the default).",
        f"*fixed λ*: `InfiniteQuantileRegressor(lambda_={FIXED_LAMBDA:g})`, median heuristic "
        "(the earlier default, one fit).",
        "*… raw*: the same fit read with `rearrange=False` (the paper's model h).",
        "*QRF*: `quantile_forest.RandomForestQuantileRegressor(random_state=i)` (its defaults).",
        "",
        markdown_table(header, table),
        "",
        *[
            f"*{label}*: within the paper's mean + sd on {within} of {len(rows)} sets "
            f"(target ≥ 18); crossing×100 ≤ 0.5 on {ok} of {len(rows)}; lower pinball than "
            f"QRF on {below} of {len(rows)} (target ≥ 16)."
            for label, (within, ok, below) in counts.items()
            if label != "QRF"
        ],
        "",
        *rearrangement,
        "",
        "Cost of the defaults' choice: fit CPU time (`time.process_time`, one thread: robust",
        "to the load) / the fixed-λ fit's, per set: median "
        f"{np.median(ratio):.1f}×, range {ratio.min():.1f}–{ratio.max():.1f}× (target ≤ 5×); "
        f"total fit CPU time over the {len(rows)} × {SPLITS} fits "
        f"{SPLITS * seconds['defaults'].sum():.0f} s against "
        f"{SPLITS * seconds['fixed λ'].sum():.0f} s.",
        "",
        "Heteroscedastic heavy-tailed synthetic set (x ~ U[−2, 2],",
        "y = sin 2x + (0.2 + 0.3|x|) t₃), n = 500, fits on "
        f"{COVERAGE_SEEDS} training samples (seeds 1000…), one test set of 50 000 points",
        "(its own noise: sd of a coverage ≤ √(0.25/50 000) = 0.002):",
        "",
        *coverage_lines,
        "",
        "Sampling noise of the training set alone: the coverage F(q̂_τ) of the plain sample",
        "τ-quantile of n draws is Beta(⌈nτ⌉, n + 1 − ⌈nτ⌉), sd ≈ √(τ(1 − τ)/(n + 2)) = 0.022",
        "at τ = 0.5 for n = 500; over the 19 levels its largest |coverage − level| has median "
        f"{np.median(sample_gaps):.3f} ({sample_gaps.size} simulated samples of y, no x to fit).",
        "Calibrated intervals with a guarantee: `calibrate` / `predict_interval`",
        "(tests/itl/test_conformal.py).",
    ])  # fmt: skip


def table1_splits(path):
    """{(set, split): ∞-QR's raw test pinball×100} of the rows of an itl-table1 ``splits.csv``
    (``Settings(selection="in-fit")``: ``InfiniteQuantileRegressor(rearrange=False,
    random_state=split)``)."""
    with open(path, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["method"] == "itl"]
    return {(r["dataset"], int(r["split"])): float(r["pinball_x100"]) for r in rows}


def forest_on_splits(raw, cache):
    """Per (set, split) of ``raw``: quantile-forest's defaults and a refit of ∞-QR's defaults
    (``random_state=split``: the fit of the table's run) read rearranged and raw, on the
    same 70/30 split of the same standardised data; one JSON line per (set, split) appended
    to ``cache``, whose lines are reused."""
    done = {}
    if os.path.exists(cache):
        with open(cache) as handle:
            done = {(r["dataset"], r["split"]): r for r in map(json.loads, handle)}
    data = {}
    for split in sorted({split for _, split in raw}):
        for name in QUANTILE_DATASETS:
            if (name, split) in done or (name, split) not in raw:
                continue
            if name not in data:
                data[name] = standardised(load_quantile_benchmark(name))
            X_train, X_test, y_train, y_test = train_test_split(
                *data[name], test_size=0.3, random_state=split
            )
            row = {"dataset": name, "split": split, "load": os.getloadavg()[0]}
            start = time.process_time()
            Q = Forest(split).fit(X_train, y_train).predict(X_test)
            row["qrf_seconds"] = time.process_time() - start
            row["qrf"] = 100 * pinball_loss(y_test, Q, LEVELS)
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = InfiniteQuantileRegressor(random_state=split, verbose=0)
                model.fit(X_train, y_train)
            row["itl_seconds"] = time.process_time() - start
            row["itl"] = 100 * pinball_loss(y_test, model.predict(X_test, LEVELS), LEVELS)
            model.set_params(rearrange=False)  # the same fit, read as the table's run reads it
            row["itl_raw"] = 100 * pinball_loss(y_test, model.predict(X_test, LEVELS), LEVELS)
            done[name, split] = row
            with open(cache, "a") as handle:
                handle.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    return {key: row for key, row in done.items() if key in raw}


def report_forest(raw, rows, path, total_seconds):
    """The section: per set, means over the splits, Wilcoxon signed-rank p-values (paired by
    split) of ∞-QR against quantile-forest, and the counts, on the splits run for every set."""
    splits = sorted({split for _, split in rows})
    complete = [s for s in splits if all((name, s) in rows for name in QUANTILE_DATASETS)]
    table, counts = [], {"raw": [0, 0, 0, 0], "itl": [0, 0, 0, 0]}
    differences, paper, within = [], paper_table(), {"raw": 0, "itl": 0}
    for name in QUANTILE_DATASETS:
        bound = float(paper[name]["itl_pinball"]) + float(paper[name]["itl_pinball_sd"])
        keys = [(name, s) for s in complete]
        qrf = np.array([rows[k]["qrf"] for k in keys])
        readings = {"raw": np.array([raw[k] for k in keys]),
                    "itl": np.array([rows[k]["itl"] for k in keys])}  # fmt: skip
        differences.append(np.max(np.abs(readings["raw"] - [rows[k]["itl_raw"] for k in keys])))
        cells = [name]
        for label, values in readings.items():
            p = wilcoxon(values, qrf).pvalue if len(keys) > 1 else float("nan")
            below = values.mean() < qrf.mean()
            counts[label][0] += below
            counts[label][1] += below and p < 0.05
            counts[label][2] += not below and p < 0.05
            counts[label][3] += below and p < SIGNIFICANT
            within[label] += values.mean() <= bound
            cells += [f"{values.mean():.1f} ± {values.std():.1f}", f"{p:.2g}"]
        cells[1:1] = [f"{paper[name]['itl_pinball']} ± {paper[name]['itl_pinball_sd']}",
                      f"{qrf.mean():.1f} ± {qrf.std():.1f}"]  # fmt: skip
        table.append(cells)
    qrf_seconds = np.mean([rows[k]["qrf_seconds"] for k in rows if k[1] in complete])
    itl_seconds = np.mean([rows[k]["itl_seconds"] for k in rows if k[1] in complete])
    loads = [rows[k]["load"] for k in rows if k[1] in complete]
    cpu = sum(rows[k]["qrf_seconds"] + rows[k]["itl_seconds"] for k in rows if k[1] in complete)
    n = len(QUANTILE_DATASETS)
    lines = [
        f"*{label}*: mean test pinball below quantile-forest's on {below} of {n} sets "
        f"(target ≥ 16), significantly (Wilcoxon p < 0.05) on {lower}; significantly above on "
        f"{higher}; below with p < {SIGNIFICANT:g} (Table 1's level) on {strict}; within the "
        f"paper's ∞-QR mean + sd on {within[key]} of {n} (target ≥ 18)."
        for label, key in (("∞-QR raw", "raw"), ("∞-QR", "itl"))
        for below, lower, higher, strict in [counts[key]]
    ]  # fmt: skip
    header = ["data set", "paper ∞-QR", "QRF", "∞-QR raw (the table's run)", "p (raw vs QRF)",
              "∞-QR", "p (∞-QR vs QRF)"]  # fmt: skip
    return "\n".join([
        "## Infinite task learning: ∞-QR defaults against quantile-forest on Table 1's splits "
        "(`bench_itl.py --forest-splits`)",
        "",
        f"Measured {machine()}; load average {min(loads):.1f}–{max(loads):.1f} while it ran",
        f"(2 cores shared with other jobs). This pass {total_seconds:.0f} s (rows cached by "
        f"earlier passes are reused); fit + predict CPU summed over the rows {cpu:.0f} s.",
        "",
        f"The {len(complete)} splits (seeds {complete[0]}…{complete[-1]}) complete for all "
        f"{n} sets in `{path}` (the itl-table1 run, `docs/results/itl-table1-infit`): "
        "the paper's scaling (inputs and target standardised on the whole data), "
        "`train_test_split(test_size=0.3, random_state=split)`; pinball×100 = 100 × Σ_τ mean "
        "test pinball loss, τ ∈ {0.1, 0.3, 0.5, 0.7, 0.9}; mean ± sd over the splits.",
        "*QRF*: `quantile_forest.RandomForestQuantileRegressor(random_state=split)` (its "
        f"defaults), fit + predict {qrf_seconds:.2f} s CPU per split on average.",
        "*∞-QR raw*: `InfiniteQuantileRegressor(rearrange=False, random_state=split)`, the "
        "table's rows (λ and bandwidth chosen inside `fit`, the paper's model h read raw).",
        "*∞-QR*: the defaults `InfiniteQuantileRegressor(random_state=split)` fitted here "
        f"({itl_seconds:.2f} s CPU per split on average; since `aggregate=True` the stacked "
        "average of the refits (each from its fold fits, to ftol 1e-6) of the settings the "
        "held-out fits weight, where the table's run "
        "refitted the one setting of least held-out risk: its raw reading differs from the "
        f"table's rows by up to {max(differences):.2g}) and read rearranged (the default "
        "`predict`).",
        "p: two-sided Wilcoxon signed-rank test (`scipy.stats.wilcoxon`, exact) of ∞-QR's "
        f"per-split pinball against QRF's on the same splits; with {len(complete)} splits the "
        f"smallest attainable p is 2/2^{len(complete)} = {2 / 2 ** len(complete):.2g}.",
        "",
        markdown_table(header, table),
        "",
        *lines,
    ])  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n up to 2000, 20 000 → 8000")
    parser.add_argument("--dlse-only", action="store_true", help="only the ∞-DLSE section")
    parser.add_argument("--defaults-only", action="store_true", help="only ∞-QR's defaults")
    parser.add_argument(
        "--forest-splits",
        metavar="CSV",
        help="only ∞-QR against quantile-forest on an itl-table1 splits.csv",
    )
    parser.add_argument(
        "--cache",
        default="bench_itl_forest.jsonl",
        help="per-split results of --forest-splits, reused when rerun",
    )
    args = parser.parse_args(argv)
    if "MANYTASK_DATA" not in os.environ and SHARED_DATA.is_dir():
        os.environ["MANYTASK_DATA"] = str(SHARED_DATA)
    start = time.perf_counter()
    if args.forest_splits:
        raw = table1_splits(args.forest_splits)
        rows = forest_on_splits(raw, args.cache)
        markdown = report_forest(raw, rows, args.forest_splits, time.perf_counter() - start)
        write_section("bench_itl_forest", markdown)
        print("wrote benchmarks/RESULTS.md")
        return 0
    if args.defaults_only:
        rows, coverage, sample_gaps = defaults()
        markdown = report_defaults(rows, coverage, sample_gaps, time.perf_counter() - start)
        write_section("bench_itl_defaults", markdown)
        print("wrote benchmarks/RESULTS.md")
        return 0
    write_section("bench_itl_dlse", report_level_sets(level_sets(), time.perf_counter() - start))
    if args.dlse_only:
        print("wrote benchmarks/RESULTS.md")
        return 0
    start = time.perf_counter()
    comparison = compare(args.quick)
    sizes = (250, 500, 1000, 2000) if args.quick else (250, 500, 1000, 2000, 4000, 8000, 16000)
    scaled = scaling(sizes)
    reduced = low_rank(2000, 8000) if args.quick else low_rank(4000, 20000)
    speedup = exact_speedup(("CobarOre",) if args.quick else ("CobarOre", "mcycle", "engel"))
    total = time.perf_counter() - start
    write_section("bench_itl", report(comparison, scaled, reduced, speedup, args.quick, total))
    print("wrote benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
