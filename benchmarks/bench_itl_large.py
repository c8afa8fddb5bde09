"""∞-QR on a million rows: its large-n path against LightGBM and quantile-forest.

Data: x ~ U[−1, 1]^10, y = sin(πx₁) + x₂² + s(x) ε, ε ~ N(0, 1),
s(x) = 0.1 + 0.4|x₂| + 0.2·1{x₁ > 0} (inputs beyond the second are irrelevant); a test set
of 100 000 rows; 19 levels 0.05, 0.10, …, 0.95. The true quantiles are known, so the
table also gives the pinball loss of the truth (the floor).

Methods, each fitted in a fresh child process (its own peak RSS, ``ru_maxrss``) with a
wall-time budget (a method over budget is reported as not finished):

- ∞-QR: ``InfiniteQuantileRegressor(random_state=0)``, its defaults (beyond 5000 rows:
  300 Nyström landmarks with float32 features, 20 anchors, λ and bandwidth chosen on a
  5000-row random subset, a continuation over 5000, 50 000, 500 000 … rows each stopped by
  the statistical rule, then all rows; blockwise objective on both cores); one model for
  the 19 levels, rearranged (non-crossing) predictions.
- LightGBM: ``LGBMRegressor(objective="quantile", alpha=τ)``, defaults otherwise, one
  model per level (19 fits).
- quantile-forest: ``RandomForestQuantileRegressor(n_jobs=-1)``, defaults otherwise; one
  forest, every level.

Reported: fit wall time and CPU time (user + sys of the child), peak memory, predict time
(100 000 rows × 19 levels), mean test pinball loss over the levels, test crossing
(:func:`~manytask.itl.crossing_loss` over consecutive levels), and the machine's load average
(``uptime``) before and after each fit: timings on a loaded machine are longer than on a
quiet one, CPU times less so.

Run (one command, from the repository root, after ``pip install -e ".[bench]"``):
``python benchmarks/bench_itl_large.py`` (n = 10⁴, 10⁵, 10⁶), ``--quick`` (n = 10⁴, 10⁵),
``--n 1000000 --methods itqr`` for one cell; RESULTS.md is rewritten after every cell
(``--report-only``: from the saved runs alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

from _common import machine, markdown_table, write_section

LEVELS = np.round(np.arange(1, 20) * 0.05, 2)
N_TEST = 100_000
N_FEATURES = 10
METHODS = ("itqr", "lightgbm", "quantile-forest")
#: Wall-time budget of one child process (fit + predict), seconds.
BUDGET = 900
#: What the continuation and the statistical stopping rule changed (measured by hand with
#: the stages' iteration counts; kept here so that ``--report-only`` rewrites them).
CONTINUATION_NOTES = [
    "",
    "Issue 24, item 4 (fit n = 10⁶ in ≤ 120 s, ≤ 4 GiB; predict 10⁵ × 19 in ≤ 5 s): the",
    "table's 10⁶ cell, rerun on the quiet machine (load 1.2), fit in 29.5 s wall (53.1 s",
    "CPU on both threads, 11 iterations on all rows), 1.86 GiB peak, and predicted 10⁵ × 19",
    "in 0.49 s: the three targets are met here. Its first run, at load 25–27, took 728 s",
    "and 19.7 s wall for the same 53.9 s and 1.69 s of CPU. The peers' 10⁶ cells ran at that",
    "load (quantile-forest under an 8 GiB address-space cap, both at nice 10 after their",
    "first 20 min so as not to slow the ∞-QR runs): both were stopped at their budgets, so",
    "their CPU so far is a lower bound of their fit's (at 10⁵ they took 205 s and 129 s CPU).",
    "",
    "Continuation + statistical stopping rule (this version), n = 10⁶, float64 features",
    "(before float32), λ = 1e-5 chosen: stages of 5000 / 50 000 / 500 000 / 10⁶ rows took",
    "42 / 48 / 41 / 11 L-BFGS-B iterations, 0.4 / 4.8 / 38.0 / 22.8 s CPU; the whole fit",
    "84.4 s CPU (983 s wall at load 21–24 on 2 cores), peak 2.93 GiB, test pinball 0.1676,",
    "predict 10⁵ × 19 in 1.87 s CPU (30 s wall at load 25).",
    "",
    "What the rule costs, n = 10⁵ (same data, λ = 1e-5 and bandwidth 2.2 fixed, 2·10⁴ test",
    "rows): continuation + rule 7.4 s CPU, 12 iterations on all rows, objective 0.178313,",
    "test pinball 0.16728; cold fit to tol = 1e-8 42.5 s CPU, 291 iterations, objective",
    "0.177403, test pinball 0.16585 (the rule: 5.7× less CPU, +0.9 % pinball; the stopped",
    "objective is about 2 ŝ/√n above the minimum: a window's decrease underestimates the",
    "remaining gap of a slowly converging L-BFGS-B). Stricter variants, same data: a",
    "quarter of ŝ/√n, 10.8 s CPU, 29 iterations, pinball 0.16634; a 20-iteration window,",
    "9.6 s CPU, 31 iterations, pinball 0.16655. Not adopted: measured on this one set",
    "only (loads 25–33 during these runs).",
    "",
    "float32 features + features on both threads (this version's default) against float64",
    "at n = 10⁶ (same rule, λ = 1e-5 chosen in both): 53.9 s CPU against 84.4 s, peak",
    "1.86 GiB against 2.93 GiB, test pinball 0.1675 against 0.1676. One evaluation at",
    "n = 10⁵: 0.13–0.14 s CPU in float32 against 0.18 s in float64 (load 20).",
    "With λ chosen on the first 5000 rows, the choice varies with the draw: at n = 10⁵ it",
    "was 1e-4 (pinball 0.1734) in the table's run and 1e-5 (0.1673) in the runs above.",
]
#: Every run appends its result here; the RESULTS.md section shows the latest of each cell.
RUNS = Path(__file__).with_name("bench_itl_large_runs.jsonl")


def synthetic(n, seed):
    """(X, y, true quantiles at LEVELS) of the heteroscedastic problem in the docstring."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, N_FEATURES))
    scale = 0.1 + 0.4 * np.abs(X[:, 1]) + 0.2 * (X[:, 0] > 0)
    mean = np.sin(np.pi * X[:, 0]) + X[:, 1] ** 2
    truth = mean[:, None] + scale[:, None] * norm.ppf(LEVELS)[None, :]
    return X, mean + scale * rng.standard_normal(n), truth


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def fit_predict(method, X, y, X_test):
    """Fit ``method`` on (X, y); (predictions at LEVELS on X_test, fit s, predict s, extra:
    the fit's CPU s and, for ∞-QR, its iterations and choices)."""
    start, start_cpu = time.perf_counter(), cpu_seconds()
    extra = {}
    if method == "itqr":
        from manytask.itl import InfiniteQuantileRegressor

        model = InfiniteQuantileRegressor(random_state=0, verbose=0).fit(X, y)
        extra = {
            "n_iter": model.n_iter_,
            "lambda": model.selected_lambda_,
            "r": model.n_components_,
            "m": len(model.anchors_),
        }
        fitted, fit_cpu = time.perf_counter(), cpu_seconds()
        predictions = model.predict(X_test, LEVELS)
    elif method == "lightgbm":
        from lightgbm import LGBMRegressor

        models = [
            LGBMRegressor(objective="quantile", alpha=level, random_state=0, verbose=-1).fit(X, y)
            for level in LEVELS
        ]
        fitted, fit_cpu = time.perf_counter(), cpu_seconds()
        predictions = np.column_stack([model.predict(X_test) for model in models])
    else:
        from quantile_forest import RandomForestQuantileRegressor

        model = RandomForestQuantileRegressor(random_state=0, n_jobs=-1).fit(X, y)
        fitted, fit_cpu = time.perf_counter(), cpu_seconds()
        predictions = model.predict(X_test, quantiles=list(LEVELS))
    extra["fit_cpu_s"] = fit_cpu - start_cpu
    extra["predict_cpu_s"] = cpu_seconds() - fit_cpu
    return predictions, fitted - start, time.perf_counter() - fitted, extra


def case(method, n):
    """One child process: fit, predict, score; prints one JSON line."""
    from manytask.itl import crossing_loss, pinball_loss

    X, y, _ = synthetic(n, 0)
    X_test, y_test, truth = synthetic(N_TEST, 1)
    predictions, fit_s, predict_s, extra = fit_predict(method, X, y, X_test)
    result = {
        "fit_s": fit_s,
        "predict_s": predict_s,
        "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "pinball": pinball_loss(y_test, predictions, LEVELS) / len(LEVELS),
        "crossing": crossing_loss(predictions, LEVELS),
        "truth_pinball": pinball_loss(y_test, truth, LEVELS) / len(LEVELS),
        **extra,
    }
    print(json.dumps(result))


def load():
    return os.getloadavg()[0]


def child_usage(pid):
    """(CPU s, peak GiB) of a running child from /proc (Linux), or (None, None)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as handle:
            peak = next(int(line.split()[1]) for line in handle if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return None, None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, peak / 2**20


def run(method, n, budget, memory_gib=None):
    """The child's JSON result plus the load averages; past ``budget`` seconds the child is
    stopped and its CPU time and peak memory so far are kept. ``memory_gib``: the child's
    address space is capped there (``RLIMIT_AS``); a child that fails (e.g. a MemoryError
    at the cap) is recorded with the last line of its error."""
    command = [sys.executable, __file__, "--case", method, str(n)]
    limit = None
    if memory_gib is not None:
        size = int(memory_gib * 2**30)

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    load_before, start = load(), time.perf_counter()
    child = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit
    )
    try:
        output, errors = child.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        cpu, peak = child_usage(child.pid)
        child.kill()
        child.communicate()
        result = {"timeout": budget, "cpu_so_far_s": cpu, "peak_so_far_gib": peak}
    else:
        lines = output.strip().splitlines()
        if child.returncode == 0 and lines:
            result = json.loads(lines[-1])
        else:
            last = (errors.strip().splitlines() or ["no output"])[-1]
            result = {"failed": last[:200], "returncode": child.returncode}
    if memory_gib is not None:
        result["memory_cap_gib"] = memory_gib
    wall = time.perf_counter() - start
    return {"method": method, "n": n, **result, "wall_s": wall, "load_before": load_before,
            "load_after": load()}  # fmt: skip


def saved_results():
    """The latest saved result of every (method, n), in order of n then method."""
    results = {}
    if RUNS.exists():
        for line in RUNS.read_text().splitlines():
            result = json.loads(line)
            results[result["method"], result["n"]] = result
    order = sorted(results, key=lambda key: (key[1], METHODS.index(key[0])))
    return {key: results[key] for key in order}


def cpu_cell(result, key):
    if key in result:
        return f"{result[key]:.1f}"
    if key == "fit_cpu_s" and "fit_and_predict_cpu_s" in result:  # the first runs' record
        return f"{result['fit_and_predict_cpu_s']:.1f} (fit + predict)"
    return "–"


def report(results):
    rows = []
    for (method, n), result in results.items():
        load_cell = f"{result['load_before']:.1f} → {result['load_after']:.1f}"
        if "failed" in result:
            cap = result.get("memory_cap_gib")
            cause = f"failed ({result['failed'][:60]})"
            if cap is not None:
                cause += f" under a {cap:g} GiB address-space cap"
            rows.append([method, f"{n:,}", cause, *["–"] * 8, load_cell])
            continue
        if "timeout" in result:
            cpu, peak = result["cpu_so_far_s"], result["peak_so_far_gib"]
            rows.append([
                method,
                f"{n:,}",
                f"> {result['timeout']:.0f} (stopped)",
                "–" if cpu is None else f"> {cpu:.0f} (fit + predict)",
                "–" if peak is None else f"≥ {peak:.2f}",
                "–", "–", "–", "–", "–",
                load_cell,
            ])  # fmt: skip
            continue
        rows.append([
            method,
            f"{n:,}",
            f"{result['fit_s']:.1f}",
            cpu_cell(result, "fit_cpu_s"),
            f"{result['peak_gib']:.2f}",
            f"{result['predict_s']:.2f}",
            cpu_cell(result, "predict_cpu_s"),
            f"{result['pinball']:.4f}",
            f"{result['truth_pinball']:.4f}",
            f"{result['crossing']:.2e}",
            load_cell,
        ])  # fmt: skip
    table = markdown_table(
        [
            "method",
            "n",
            "fit s",
            "fit CPU s",
            "peak GiB",
            "predict s (10⁵ × 19)",
            "predict CPU s",
            "test pinball",
            "truth's pinball",
            "crossing",
            "load (1 min) before → after",
        ],
        rows,
    )
    notes = [
        f"{machine()}. `python benchmarks/bench_itl_large.py` (each cell's latest run in",
        "`benchmarks/bench_itl_large_runs.jsonl`). Wall times were taken on a machine shared",
        "with other jobs: the load column says how shared; CPU times depend on it less.",
        "",
        "Synthetic heteroscedastic data, d = 10 (2 relevant inputs), 19 levels 0.05 … 0.95,",
        "10⁵ test rows; pinball is the mean over the levels of the mean test pinball loss;",
        "crossing is Σ over consecutive levels of the mean positive decrease. ∞-QR: defaults",
        "(one model for every level); LightGBM: one `objective='quantile'` model per level;",
        "quantile-forest: one forest. Each cell a fresh process (peak RSS of that process);",
        "a cell past its time budget is stopped, with its CPU time and peak memory so far.",
        "",
        table,
    ]
    details = [
        f"∞-QR at n = {n:,}: {r['n_iter']} L-BFGS-B iterations, r = {r['r']}, m = {r['m']}, "
        f"λ = {r['lambda']:g}"
        for (method, n), r in results.items()
        if method == "itqr" and "n_iter" in r
    ]
    before = [
        "",
        "Before the large-n path (main at 7a76394), on the same data at n = 10⁵ with",
        "`n_components=300, lambda_=1e-3`, 20 L-BFGS-B iterations: 33.0 s CPU, 0.99 GiB peak",
        "(100 anchors, every n × m temporary at once: about 10 GiB at n = 10⁶); now 6.6 s CPU",
        "(warm-start fit on 5000 rows included), 0.47 GiB. Cold start against warm start at",
        "n = 10⁵: 200 iterations, 47.5 s CPU against 30 iterations, 11.7 s CPU, equal test",
        "pinball (0.1900). One objective evaluation (value and gradient) costs about 0.17 s",
        "CPU per 10⁵ rows at r = 300, m = 20 (1.7 s per 10⁶ rows, on one core).",
        "The default path before, `n_components=None` (exact), needs the pivoted Cholesky",
        "of K_X, whose rank on 10 Gaussian-kernel inputs is near n: O(n²) memory, O(n³) time.",
        "Before the continuation (2026-12-02, morning): the n = 10⁶ fit was stopped after",
        "611 s CPU; what set its time was the iteration count at the selected λ (1e-5 at",
        "n = 10⁵: 282 iterations after the warm start, against 30 at λ = 1e-3), at about",
        "1.7 s CPU per evaluation on 10⁶ rows.",
        *CONTINUATION_NOTES,
    ]
    return "\n".join(
        ["## ∞-QR on a million rows (`bench_itl_large`)", "", *notes, "", *details, *before]
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 10⁴ and 10⁵ only")
    parser.add_argument("--n", type=int, nargs="*", help="training sizes (default 10⁴ … 10⁶)")
    parser.add_argument("--methods", nargs="*", choices=METHODS, default=list(METHODS))
    parser.add_argument("--budget", type=float, default=BUDGET, help="seconds per cell")
    parser.add_argument("--memory-gib", type=float, help="address-space cap per cell, GiB")
    parser.add_argument("--no-write", action="store_true", help="print only (no RESULTS.md)")
    parser.add_argument("--report-only", action="store_true", help="rewrite the section only")
    parser.add_argument("--case", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        case(args.case[0], int(args.case[1]))
        return 0
    sizes = args.n or ([10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000])
    for n in [] if args.report_only else sizes:
        for method in args.methods:
            result = run(method, n, args.budget, args.memory_gib)
            print(result, flush=True)
            if not args.no_write:
                with RUNS.open("a") as handle:
                    handle.write(json.dumps(result) + "\n")
                write_section("bench_itl_large", report(saved_results()))
    markdown = report(saved_results())
    print(markdown)
    if not args.no_write:
        write_section("bench_itl_large", markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
