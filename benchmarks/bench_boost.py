"""Fit time of MultiBoost against AdaBoost, scikit-learn, XGBoost and LightGBM stumps.

T = 100 boosting rounds of depth-1 trees on synthetic data with m = 30 000 points, d = 100
features and 3 sources:
  * ``MultiBoostClassifier(n_estimators=100).fit(X, y, domains=d)``, exact stump search and
    histogram search with ``n_bins=255``, each with the compiled numba kernels (extra
    ``fast``) and with the NumPy kernels (``MANYTASK_KERNELS=numpy``);
  * the same with the defaults (exact stumps) under ``--plain-python``, the interpreter of an
    environment where ``pip install manytask`` ran without extras (no numba: the NumPy
    kernels because nothing else is there);
  * our ``AdaBoost`` on the union (exact stumps);
  * scikit-learn's ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))`` on the union;
  * XGBoost (``tree_method="hist"``, ``max_depth=1``, 2 threads, and 1 thread for
    reference) and LightGBM (``max_depth=1``, ``num_leaves=2``, 2 threads) on the union, if
    installed.
Each run is a fresh process (so the peak RSS it reports is its own) that fits with one round
and with T, alternately, three times each (scikit-learn once), and keeps the least time of
each; runs are interleaved across methods, a few per method, and medians reported. A run's
per-round time is (fit with T rounds − fit with 1 round) / (T − 1), which
leaves out the set-up every method pays once (presort and domain classifier for MultiBoost,
quantile sketch for XGBoost and LightGBM). NumPy's BLAS gets ``--blas-threads`` threads
(default 1: the machines these run on are shared, and a waiting OpenBLAS thread pool made the
domain classifier 10-40× slower there).

Per MultiBoost round the children also time where the round goes: the stump search, the
losses and distributions, the step, the direction and margin update; a numba child first
fits a tiny problem to load (or compile) the kernels, timed as the first-fit overhead, and
one extra child with an empty numba cache directory times a cold compilation.

Targets: the plain install's default fit ≥ 5× faster than scikit-learn's AdaBoost; with the
numba kernels a histogram round (``n_bins=255``) ≤ 1.0× XGBoost's depth-1 histogram round on
2 threads.

Run: ``python benchmarks/bench_boost.py`` (``--quick``: m = 6000, one repeat;
``--plain-python /tmp/plainvenv/bin/python``: add the plain-install row, see above;
``--line-search-evaluations``: the exact line search's evaluation counts, printed). XGBoost and
LightGBM come with the ``bench`` extra: ``pip install -e '.[bench]'``; numba with ``fast``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import manytask as mt

from _common import machine, markdown_table, median_time, peak_rss_mb, run_child, write_section

N_FEATURES = 100
N_SOURCES = 3
ROUNDS = 100
FITS_PER_CHILD = 3  # each child times the 1-round and the T-round fit this often, alternately
THREADS = 2
METHODS = {
    "multiboost": "MultiBoost, exact stumps, numba",
    "multiboost_hist": "MultiBoost, `n_bins=255`, numba",
    "multiboost_numpy": "MultiBoost, exact stumps, NumPy",
    "multiboost_hist_numpy": "MultiBoost, `n_bins=255`, NumPy",
    "multiboost_plain": "MultiBoost, exact stumps, plain install (no numba)",
    "adaboost": "our AdaBoost (union, exact)",
    "sklearn": "scikit-learn AdaBoost (union)",
    "xgboost": "XGBoost hist, depth 1 (union)",
    "xgboost_1": "XGBoost hist, depth 1, 1 thread",
    "lightgbm": "LightGBM, depth 1 (union)",
}
PEER_MODULES = {
    "xgboost": "xgboost",
    "xgboost_1": "xgboost",
    "lightgbm": "lightgbm",
    "multiboost": "numba",
    "multiboost_hist": "numba",
}
MULTIBOOST = (
    "multiboost", "multiboost_hist", "multiboost_numpy", "multiboost_hist_numpy",
    "multiboost_plain",
)  # fmt: skip
TIMED = (*MULTIBOOST, "adaboost")
# Where a round's wall time goes: key → the functions of manytask.boost.rounds (module
# functions, or methods of its round classes) timed into it; a name that is not there (the
# round code is refactored) is skipped, and "round_s" is the whole round.
ROUND_PARTS = {
    "search_s": ("best_stump",),
    "losses_s": ("phi_domain_losses",),
    "step_s": ("adaboost_step", "separating_step", "penalised_line_search", "steepest_coordinate"),
    "margins_s": ("predict_presorted", "_take_step"),
    "round_s": ("_boost_round",),
}
PART_LABELS = {
    "search_s": "stump search",
    "losses_s": "losses & distributions",
    "step_s": "step",
    "margins_s": "direction & margin update",
}


def synthetic_sources(m: int, d: int = N_FEATURES, n_sources: int = N_SOURCES, seed: int = 0):
    """Three sources of Gaussian inputs whose means and labelling rules differ.

    Source k has inputs N(μ_k, I) (μ_k non-zero on the first 10 features) and labels
    1{x·(w + v_k) + noise > 0} with a shared w and a source-specific v_k on the first 20
    features; all values continuous, so the exact search has m candidate splits per feature.
    """
    rng = np.random.default_rng(seed)
    domains = rng.integers(0, n_sources, size=m)
    informative = np.arange(d) < 20
    means = rng.normal(size=(n_sources, d)) * (np.arange(d) < 10)
    X = rng.normal(size=(m, d)) + means[domains]
    shared = rng.normal(size=d) * informative
    own = 0.7 * rng.normal(size=(n_sources, d)) * informative
    score = np.einsum("ij,ij->i", X, shared + own[domains]) + rng.normal(size=m)
    return X, (score > 0).astype(int), domains


def _peer(module: str):
    try:
        return __import__(module)
    except ImportError as error:
        raise ImportError(
            f"{module} is needed for this benchmark row: pip install manytask[bench]"
        ) from error


def make_model(method: str, n_rounds: int):
    """An unfitted model with ``n_rounds`` depth-1 rounds and a ``fit(X, y, domains)``."""
    if method in MULTIBOOST:
        n_bins = 255 if "hist" in method else None
        model = mt.boost.MultiBoostClassifier(n_estimators=n_rounds, n_bins=n_bins)
        return model, lambda X, y, domains: model.fit(X, y, domains=domains)
    if method == "adaboost":
        model = mt.boost.AdaBoost(n_estimators=n_rounds)
    elif method == "sklearn":
        from sklearn.ensemble import AdaBoostClassifier
        from sklearn.tree import DecisionTreeClassifier

        model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=n_rounds)
    elif method in ("xgboost", "xgboost_1"):
        model = _peer("xgboost").XGBClassifier(
            tree_method="hist",
            max_depth=1,
            n_estimators=n_rounds,
            n_jobs=THREADS if method == "xgboost" else 1,
        )
    elif method == "lightgbm":
        model = _peer("lightgbm").LGBMClassifier(
            max_depth=1, num_leaves=2, n_estimators=n_rounds, n_jobs=THREADS, verbose=-1
        )
    else:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    return model, lambda X, y, domains: model.fit(X, y)


def rounds_fitted(method: str, model) -> int:
    if method in ("xgboost", "xgboost_1"):
        return model.get_booster().num_boosted_rounds()
    if method == "lightgbm":
        return model.booster_.num_trees()
    return len(model.estimators_)


def _time_parts(seconds: dict):
    """Make the parts of a round (``ROUND_PARTS``) add their wall times to ``seconds``."""
    from manytask.boost import rounds

    def timed(function, key):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[key] += time.perf_counter() - start

        return wrapper

    search = mt.boost.stumps.best_stump
    for name, module in list(sys.modules.items()):
        if name.startswith("manytask.boost") and getattr(module, "best_stump", None) is search:
            module.best_stump = timed(search, "search_s")
    classes = [value for value in vars(rounds).values() if isinstance(value, type)]
    for key, names in ROUND_PARTS.items():
        if key == "search_s":
            continue
        for name in names:
            if callable(getattr(rounds, name, None)):
                setattr(rounds, name, timed(getattr(rounds, name), key))
            for owner in classes:
                if name in vars(owner):
                    setattr(owner, name, timed(vars(owner)[name], key))


def run_case(method: str, m: int, blas_threads: int) -> dict:
    """One child: a fit with 1 round (the set-up), then one with T rounds, on fresh models."""
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    from manytask.boost import kernels

    threadpool_limits(blas_threads, user_api="blas")
    if method == "multiboost_plain":
        if kernels.numba_available():
            raise RuntimeError("multiboost_plain needs an environment without numba")
        backend = "auto"  # what a plain install runs: the NumPy kernels, nothing else exists
    elif method in MULTIBOOST and not method.endswith("_numpy"):
        backend = "numba"
    else:
        backend = "numpy"
    with kernels.use_backend(backend):
        return _run_case(method, m, backend)


def _run_case(method: str, m: int, backend: str) -> dict:
    from manytask.boost import kernels

    X, y, domains = synthetic_sources(m)
    data_rss = peak_rss_mb()
    result = {"method": method, "data_rss_mb": data_rss, "kernels": kernels.backend()}
    if method in MULTIBOOST and backend == "numba":
        # Load (or compile) every kernel the runs use on a tiny problem: the first fit's cost.
        small_X, small_y, small_domains = synthetic_sources(300, d=4)
        n_bins = 255 if "hist" in method else None
        start = time.perf_counter()
        _warm_up_kernels(small_X, small_y, small_domains, (n_bins,))
        result["first_fit_overhead_s"] = time.perf_counter() - start
    seconds = dict.fromkeys(ROUND_PARTS, 0.0)
    if method in TIMED:
        _time_parts(seconds)
    # The two fits alternate, FITS_PER_CHILD times each (scikit-learn: once); each keeps its
    # least time, the run least disturbed by the machine's other jobs, and the parts and CPU
    # time of that run.
    for _ in range(1 if method == "sklearn" else FITS_PER_CHILD):
        for n_rounds, label in ((1, "setup"), (ROUNDS, "fit")):
            model, fit = make_model(method, n_rounds)
            for key in seconds:
                seconds[key] = 0.0
            start_cpu = time.process_time()
            wall = median_time(lambda fit=fit: fit(X, y, domains), 1)
            if wall < result.get(f"{label}_s", np.inf):
                result[f"{label}_s"] = wall
                result[f"{label}_cpu_s"] = time.process_time() - start_cpu
                result[f"{label}_rounds"] = rounds_fitted(method, model)
                if method in TIMED and label == "fit":
                    result.update(seconds)
    if method == "multiboost":
        result["domain_classifier_s"] = median_time(
            lambda: mt.boost.DomainClassifier().fit(X, domains), 1
        )
    result["train_error"] = float(np.mean(model.predict(X) != y))
    result["peak_rss_mb"] = peak_rss_mb()
    result["load"] = os.getloadavg()[0]
    return result


def summarise(runs: list[dict]) -> dict:
    """Medians over one method's children; per round: the median over the children of each
    child's (fit − set-up) / (extra rounds), both fits timed in the same process."""
    case = dict(runs[0])
    keys = ("fit_s", "setup_s", "fit_cpu_s", "setup_cpu_s", *ROUND_PARTS,
            "domain_classifier_s", "first_fit_overhead_s")  # fmt: skip
    for key in keys:
        if key in case:
            case[key] = float(np.median([run[key] for run in runs]))
    case["peak_rss_mb"] = max(run["peak_rss_mb"] for run in runs)
    case["data_rss_mb"] = min(run["data_rss_mb"] for run in runs)
    case["rounds"] = case["fit_rounds"]
    extra_rounds = max(case["fit_rounds"] - case["setup_rounds"], 1)
    per_round = [(run["fit_s"] - run["setup_s"]) / extra_rounds for run in runs]
    case["per_round_s"] = float(np.median(per_round))
    case["per_round_range_s"] = (min(per_round), max(per_round))
    case["per_round_cpu_s"] = float(
        np.median([(run["fit_cpu_s"] - run["setup_cpu_s"]) / extra_rounds for run in runs])
    )
    case["repeats"] = len(runs)
    case["loads"] = [run["load"] for run in runs]
    case["fit_range_s"] = (min(run["fit_s"] for run in runs), max(run["fit_s"] for run in runs))
    return case


def _verdict(value: float, target: float, at_least: bool) -> str:
    met = value >= target if at_least else value <= target
    relation = "≥" if at_least else "≤"
    return f"{value:.2f} ({'met' if met else 'NOT met'}: target {relation} {target:g})"


def _per_round_ms(case, key) -> str:
    if not case.get("round_s"):  # not a MultiBoost round: at most the stump search
        value = case.get(key) if key == "search_s" else None
        return "—" if value is None else _ms(value, case)
    if key == "rest_s":  # the round minus its timed parts
        return _ms(case["round_s"] - sum(case[part] for part in PART_LABELS), case)
    return _ms(case[key], case)


def _ms(value, case) -> str:
    return f"{value / case['fit_rounds'] * 1e3:.2f}"


def report(cases, m, wall_s, missing, failed, loads, blas_threads, cold_jit) -> str:
    by_method = {case["method"]: case for case in cases}
    run_loads = [load for case in cases for load in case["loads"]]
    sk, xgb, xgb_1 = (by_method.get(name) for name in ("sklearn", "xgboost", "xgboost_1"))
    header = [
        "method", "runs", "rounds", "fit (s)", "fit range (s)", "set-up (s)", "per round (ms)",
        "per round, CPU (ms)", *(f"{label} (ms/round)" for label in PART_LABELS.values()),
        "rest of round (ms/round)", "sklearn / this", "this / XGBoost 2 thr. per round",
        "this / XGBoost 1 thr. per round", "train error", "peak RSS (MiB)", "above data (MiB)",
    ]  # fmt: skip
    rows = []
    for case in cases:
        speedup = "—" if sk is None else f"{sk['fit_s'] / case['fit_s']:.1f}×"
        ratios = [
            "—" if peer is None else f"{case['per_round_s'] / peer['per_round_s']:.2f}"
            for peer in (xgb, xgb_1)
        ]
        rows.append([
            METHODS[case["method"]], case["repeats"], case["rounds"], f"{case['fit_s']:.2f}",
            "{:.2f}–{:.2f}".format(*case["fit_range_s"]), f"{case['setup_s']:.2f}",
            "{:.1f} ({:.1f}–{:.1f})".format(
                case["per_round_s"] * 1e3, *(1e3 * value for value in case["per_round_range_s"])
            ),
            f"{case['per_round_cpu_s'] * 1e3:.1f}",
            *(_per_round_ms(case, key) for key in (*PART_LABELS, "rest_s")), speedup, *ratios,
            f"{case['train_error']:.3f}", f"{case['peak_rss_mb']:.0f}",
            f"{case['peak_rss_mb'] - case['data_rss_mb']:.0f}",
        ])  # fmt: skip
    lines = [
        f"## Multi-source boosting: fit time, T = {ROUNDS} stumps, {m} × {N_FEATURES}, "
        f"{N_SOURCES} sources",
        "",
        f"Measured {machine()}, on a machine shared with other jobs (1-minute load average "
        f"{loads[0]:.1f} at the start, {loads[1]:.1f} at the end; at the end of each run "
        f"median {np.median(run_loads):.1f}, range {min(run_loads):.1f}–{max(run_loads):.1f}, "
        f"on {os.cpu_count()} cores). `python benchmarks/bench_boost.py"
        + ("" if m == 30000 else " --quick")
        + (" --plain-python …" if "multiboost_plain" in by_method else "")
        + f"`, {wall_s / 60:.1f} min in all.",
        "",
        "Synthetic data (`bench_boost.synthetic_sources`): source k has inputs N(μ_k, I) and",
        "labels 1{x·(w + v_k) + noise > 0}; every feature is continuous. MultiBoost gets the",
        "source of each point (its default logistic domain classifier is part of its set-up);",
        "the other methods are fitted on the union. Each run is a fresh process that fits with",
        f"T = 1 (*set-up*) and with T = {ROUNDS} (*fit*), alternately, {FITS_PER_CHILD} times",
        "each, and keeps the least time of each (the run least disturbed by other jobs); runs",
        "are interleaved across methods and the table gives their medians (scikit-learn: one",
        "run with one fit of each, a fit takes minutes).",
        "*per round* = (fit − set-up) / (rounds − 1) of each run, wall time, the median over",
        "the runs (their range in brackets); *CPU*: the same in process",
        "CPU time (all threads). Where a MultiBoost round goes, wall time per round of the",
        "T-round fit: *stump search* (`best_stump`, for our AdaBoost too), *losses &",
        "distributions* (a_i = c_i e^{−y_i f(x_i)}, F_k, D_t), *step* (η_t; with the default",
        '`step="adaboost"` ½ log((1 − ε)/ε)), *direction & margin update* (u = yQ(k|x)h(x),',
        "f += ηu), *rest of round* (the stump weights D_t Q, the directions' scores, Python).",
        "*numba* rows use the compiled kernels of `manytask.boost.kernels` (extra `fast`,",
        "numba's threads over the features); *NumPy* rows the NumPy reference path",
        "(`MANYTASK_KERNELS=numpy`) in the same environment; *plain install* runs in an",
        "environment where `pip install manytask` ran with no extras, so numba is absent;",
        "all give the same stumps and steps. *sklearn / this*: ratio of fit times; *this /",
        "XGBoost*: of per-round",
        f"times. XGBoost and LightGBM use {THREADS} threads (XGBoost also 1) and 255/256 bins;",
        "scikit-learn's AdaBoost has no `n_jobs`; NumPy's BLAS is held to",
        f"{blas_threads} thread(s)",
        "(`--blas-threads`): on this shared machine a two-thread OpenBLAS made MultiBoost's",
        "domain classifier (a multinomial logistic regression, the one BLAS-heavy step)",
        "10-40× slower, its threads waiting for a busy core. *peak RSS*: the largest peak of",
        "the method's processes; *above data*: minus the RSS once the data exist.",
        "",
        markdown_table(header, rows),
    ]
    # The two targets: the plain install (the NumPy path: measured without numba if
    # --plain-python ran, else with MANYTASK_KERNELS=numpy) against scikit-learn's fit, and
    # the compiled histogram round against XGBoost's on 2 threads.
    targets = []
    plain = "multiboost_plain" if "multiboost_plain" in by_method else "multiboost_numpy"
    if plain in by_method and sk is not None:
        ratio = sk["fit_s"] / by_method[plain]["fit_s"]
        targets.append(f"scikit-learn / {METHODS[plain]} fit time {_verdict(ratio, 5, True)}")
    for peer, target in (("xgboost", 1.0), ("xgboost_1", None)):
        if "multiboost_hist" in by_method and peer in by_method:
            ratio = by_method["multiboost_hist"]["per_round_s"] / by_method[peer]["per_round_s"]
            verdict = (
                f"{ratio:.2f} (for reference)" if target is None else _verdict(ratio, target, False)
            )
            targets.append(f"{METHODS['multiboost_hist']} / {METHODS[peer]} per round {verdict}")
    if "multiboost" in by_method:
        lines += [
            "",
            "MultiBoost's set-up = presort + the default domain classifier, which alone took "
            f"{by_method['multiboost']['domain_classifier_s']:.2f} s (median).",
        ]
    overheads = [
        f"{METHODS[method]} {by_method[method]['first_fit_overhead_s']:.2f} s"
        for method in ("multiboost", "multiboost_hist")
        if method in by_method
    ]
    if overheads:
        lines += [
            "",
            "First-fit overhead of the numba kernels (20-round fits on 300 × 4 points with the",
            "one-thread and the threaded kernels, in a fresh process, kernels loaded from",
            "numba's on-disk cache): "
            + "; ".join(overheads)
            + (
                ""
                if cold_jit is None
                else f"; with an empty cache (compiling every kernel): {cold_jit:.1f} s"
            )
            + ".",
        ]
    if targets:
        lines += [
            "",
            "Targets (issue 13, item 5): the plain install (no extras: numba absent, the NumPy",
            "kernels) fits ≥ 5× faster than scikit-learn's AdaBoost with stumps; with the numba",
            "kernels a histogram round (`n_bins=255`) takes ≤ 1.0× XGBoost's depth-1 histogram",
            "round on 2 threads. Measured: " + "; ".join(targets) + ".",
            "",
            "The per-round target names XGBoost's histogram stumps: the like-for-like row is",
            "MultiBoost with `n_bins=255` (a histogram search over 255 bins, as XGBoost's); the",
            "exact rows search every midpoint, a different and costlier search, and are listed",
            "for reference. On this shared machine the threaded runs (numba's and XGBoost's",
            "OpenMP threads) vary most when another job holds a core (see *fit range*), so the",
            "single-thread XGBoost run, a steadier figure, is compared as well.",
        ]
    if missing:
        lines += ["", f"Not installed, rows skipped: {', '.join(missing)} (`pip install "
                  "manytask[bench]`)."]  # fmt: skip
    for method, message in failed.items():
        lines += ["", f"{METHODS[method]}: the run failed ({' '.join(message)})."]
    return "\n".join(lines)


def _run_plain_child(python: str, m: int, blas_threads: int) -> dict:
    """The plain-install run in a fresh process of ``python`` (an environment without numba)."""
    command = [python, __file__, "--case", "multiboost_plain", str(m), str(blas_threads)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def _cold_first_fit(m: int, blas_threads: int) -> float | None:
    """First-fit overhead of a child whose numba cache directory is empty (compiles all)."""
    previous = os.environ.get("NUMBA_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
        try:
            exact = run_child(__file__, "multiboost_first_fit", m, blas_threads)
        except subprocess.CalledProcessError:
            return None
        finally:
            if previous is None:
                del os.environ["NUMBA_CACHE_DIR"]
            else:
                os.environ["NUMBA_CACHE_DIR"] = previous
    return exact["first_fit_overhead_s"]


def first_fit_case() -> dict:
    """One child: the first-fit overhead alone, exact then binned (every kernel used)."""
    from manytask.boost import kernels

    small_X, small_y, small_domains = synthetic_sources(300, d=4)
    start = time.perf_counter()
    with kernels.use_backend("numba"):
        _warm_up_kernels(small_X, small_y, small_domains, (None, 255))
    return {"first_fit_overhead_s": time.perf_counter() - start}


def _warm_up_kernels(X, y, domains, bins_options):
    """Fit a tiny problem with both the one-thread and the threaded kernels (the large fit
    uses the latter, the small one would use only the former)."""
    from manytask.boost import kernels

    for parallel_min_cells in (kernels.PARALLEL_MIN_CELLS, 0):
        previous, kernels.PARALLEL_MIN_CELLS = kernels.PARALLEL_MIN_CELLS, parallel_min_cells
        try:
            for n_bins in bins_options:
                model = mt.boost.MultiBoostClassifier(n_estimators=20, n_bins=n_bins)
                model.fit(X, y, domains=domains)
        finally:
            kernels.PARALLEL_MIN_CELLS = previous


def line_search_evaluations() -> dict:
    """Evaluations of (F_l, F_l', F_l'') the exact line search (``step="exact_line_search"``)
    needs: random coordinates (300 points, 3 sources; ``scale`` 400 makes e^{−ηu} overflow
    inside the bracket) and crossings of two large sources (40 000 points), 8 and 6 seeds."""
    from manytask.boost.line_search import CoordinatePieces, minimise_max_newton

    # The problems of tests/boost/test_multiboost_round_cost.py, which checks the steps.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from boost.test_multiboost_round_cost import coordinate_problem, kink_problem

    problems = {
        "coordinate, scale 1": [(*coordinate_problem(seed), 3) for seed in range(8)],
        "coordinate, scale 400": [(*coordinate_problem(seed, scale=400.0), 3) for seed in range(8)],
        "crossing of two sources": [(*kink_problem(seed), 2) for seed in range(6)],
    }
    counts = {}
    for name, cases in problems.items():
        counts[name] = []
        for case in cases:
            pieces = CoordinatePieces(*case)
            minimise_max_newton(pieces)
            counts[name].append(pieces.evaluations)
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="m = 6000, one repeat")
    parser.add_argument("--repeats", type=int, default=3, help="children per method (default 3)")
    parser.add_argument(
        "--blas-threads", type=int, default=1, help="NumPy/SciPy BLAS threads (default 1)"
    )
    parser.add_argument("--case", nargs=3, metavar=("METHOD", "M", "BLAS_THREADS"))
    parser.add_argument("--no-cold-jit", action="store_true", help="skip the cold-compile run")
    parser.add_argument(
        "--plain-python", metavar="PYTHON",
        help="interpreter of an environment with manytask installed without extras (no "
        "numba): adds the plain-install row",
    )  # fmt: skip
    parser.add_argument(
        "--line-search-evaluations", action="store_true",
        help="print the exact line search's evaluation counts and exit",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.line_search_evaluations:
        for name, counts in line_search_evaluations().items():
            print(f"{name:26s} evaluations per search: {counts} (max {max(counts)})")
        return 0
    if args.case:
        method, m, blas_threads = args.case
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Q(k|x) clipping notes, peers' deprecations
            if method == "multiboost_first_fit":
                print(json.dumps(first_fit_case()))
            else:
                print(json.dumps(run_case(method, int(m), int(blas_threads))))
        return 0
    m = 6000 if args.quick else 30000
    repeats = 1 if args.quick else args.repeats
    start, load_before = time.perf_counter(), os.getloadavg()[0]
    methods, missing, failed = [], [], {}
    for method in METHODS:
        module = PEER_MODULES.get(method)
        if method == "multiboost_plain":
            if args.plain_python:
                methods.append(method)
        elif module is not None and importlib.util.find_spec(module) is None:
            if module not in missing:
                missing.append(module)
        else:
            methods.append(method)
    runs = {method: [] for method in methods}
    # Repeats are interleaved (every method once, then again) so that the load of a shared
    # machine weighs on all methods alike; scikit-learn's fit takes a minute or more: once.
    for repeat in range(repeats):
        for method in methods:
            if method in failed or (method == "sklearn" and repeat > 0):
                continue
            try:
                if method == "multiboost_plain":
                    run = _run_plain_child(args.plain_python, m, args.blas_threads)
                else:
                    run = run_child(__file__, method, m, args.blas_threads)
            except subprocess.CalledProcessError as error:
                failed[method] = (error.stderr or "").strip().splitlines()[-1:]
                print(f"{method:16s} FAILED: {failed[method]}", flush=True)
                continue
            runs[method].append(run)
            print(
                f"{method:22s} fit {run['fit_s']:7.2f} s  set-up {run['setup_s']:6.2f} s  "
                f"rounds {run['fit_rounds']:3d}  peak {run['peak_rss_mb']:6.0f} MiB",
                flush=True,
            )
    cold_jit = None
    if "multiboost" in runs and runs["multiboost"] and not args.no_cold_jit:
        cold_jit = _cold_first_fit(m, args.blas_threads)
    cases = [summarise(runs[method]) for method in methods if runs[method]]
    for case in cases:
        print(
            f"{case['method']:22s} median fit {case['fit_s']:7.2f} s  per round "
            f"{case['per_round_s'] * 1e3:7.1f} ms  ({case['repeats']} runs)"
        )
    wall_s = time.perf_counter() - start
    loads = (load_before, os.getloadavg()[0])
    write_section(
        "bench_boost",
        report(cases, m, wall_s, missing, failed, loads, args.blas_threads, cold_jit),
    )
    print("wrote benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
