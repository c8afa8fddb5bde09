"""Time one round of the multi-task posterior over a fixed candidate set.

A round is what Bayesian optimisation does after each evaluation: one ``add`` followed by
``mean`` and ``variance_norm`` over all N candidates. It is timed for the incremental
cached posterior against
  (a) refitting the separable (eigen-split) posterior from scratch without a cache, and
  (b) the dense (nt × nt) Cholesky solve with NumPy/SciPy, where that is affordable;
and against the memory-bandwidth floor: one matrix-vector product per task over the
cached n·t·N floats. Each (n, t) runs in its own process so its peak RSS is its own.
The NystromPosterior (MT-BKB) dictionary size is reported as t grows.

Run: ``python benchmarks/bench_posterior.py`` (``--quick`` for a smaller grid).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

import manytask as mt

from _common import machine, markdown_table, median_time, peak_rss_mb, run_child, write_section

N_CANDIDATES = 1000
NOISE = 0.1
LENGTHSCALE = 0.2


def problem(n_tasks: int, t: int, seed: int = 0):
    """The paper's RKHS-function setting: 1-D net, SE kernel (l = 0.2), B = AᵀA."""
    rng = np.random.default_rng(seed)
    candidates = np.linspace(0.0, 1.0, N_CANDIDATES)[:, None]
    A = rng.random((n_tasks, n_tasks))
    kernel = mt.kernels.Separable(mt.kernels.RBF(LENGTHSCALE), A.T @ A)
    X = candidates[rng.integers(0, N_CANDIDATES, t + 50)]
    Y = rng.normal(size=(t + 50, n_tasks))
    return kernel, candidates, X, Y


def dense_round(kernel, X, Y, candidates):
    """Mean and ‖Γ_t(c, c)‖ over the candidates by the dense (nt × nt) Cholesky solve."""
    n = kernel.n_tasks
    factor = cho_factor(kernel.gram(X, X) + NOISE * np.eye(len(X) * n), lower=True)
    cross = kernel.gram(X, candidates)
    mean = (cross.T @ cho_solve(factor, Y.reshape(-1))).reshape(-1, n)
    whitened = solve_triangular(factor[0], cross, lower=True).reshape(-1, len(candidates), n)
    explained = np.einsum("rna,rnb->nab", whitened, whitened)
    covariance = kernel.diag_blocks(candidates) - explained
    return mean, np.linalg.eigvalsh(covariance)[:, -1]


def bandwidth_floor(n_tasks: int, t: int) -> float:
    """Median time of one matrix-vector product per task over n·t·N floats, read from main
    memory: a 256 MiB buffer is rewritten between repetitions so no level of cache holds
    them (a round of the posterior touches other memory between two passes too)."""
    rng = np.random.default_rng(1)
    cache = rng.random((n_tasks, t, N_CANDIDATES))
    vectors = rng.random((n_tasks, 1, t))
    scratch = np.empty(2**25)
    times = []
    for _ in range(15):
        scratch.fill(1.0)
        times.append(median_time(lambda: np.matmul(vectors, cache), 1))
    return float(np.median(times))


def run_case(n_tasks: int, t: int) -> dict:
    kernel, candidates, X, Y = problem(n_tasks, t)
    start = time.perf_counter()
    post = mt.posterior.ExactPosterior(kernel, NOISE).fit(X[:t], Y[:t], candidates=candidates)
    fit_seconds = time.perf_counter() - start
    rounds = iter(range(t, t + 50))

    def incremental():
        i = next(rounds)
        post.add(X[i], Y[i])
        post.mean()
        post.variance_norm()

    incremental_s = median_time(incremental, 25)

    floor_s = bandwidth_floor(n_tasks, t)

    def refit():
        fresh = mt.posterior.ExactPosterior(kernel, NOISE).fit(X[: t + 1], Y[: t + 1])
        fresh.mean(candidates)
        fresh.variance_norm(candidates)

    refit_s = median_time(refit, 3 if t <= 1000 else 1)
    peak_rss = peak_rss_mb()  # manytask's own peak, before the dense baseline's allocations
    dense_s = None
    if n_tasks * t <= 5000:
        dense_s = median_time(lambda: dense_round(kernel, X[: t + 1], Y[: t + 1], candidates), 1)
    return {
        "n": n_tasks,
        "t": t,
        "fit_s": fit_seconds,
        "incremental_s": incremental_s,
        "floor_s": floor_s,
        "refit_s": refit_s,
        "dense_s": dense_s,
        "peak_rss_mb": peak_rss,
        "cache_mb": n_tasks * t * N_CANDIDATES * 8 / 2**20,
    }


def theorem_3_q(T: int, epsilon=0.5, delta=0.1) -> float:
    """q = 6ρ log(4T/δ)/ε², ρ = (1 + ε)/(1 − ε) (Theorem 3)."""
    rho = (1 + epsilon) / (1 - epsilon)
    return 6 * rho * np.log(4 * T / delta) / epsilon**2


def dictionary_growth(n_tasks: int, q: float, checkpoints, seed=0):
    """MT-BKB dictionary size along one run: at each checkpoint t, (t, m_t, the smallest and
    largest m_s over s ∈ (t/2, t], and the time of that round's add + variance_norm)."""
    T = max(checkpoints)
    kernel, candidates, X, Y = problem(n_tasks, T, seed)
    post = mt.posterior.NystromPosterior(kernel, NOISE, q=q, random_state=seed)
    rows = []
    for t in range(1, T + 1):
        start = time.perf_counter()
        post.add(X[t - 1], Y[t - 1])
        post.variance_norm(candidates)
        if t in checkpoints:
            window = post.dictionary_sizes_[t // 2 :]
            rows.append(
                (t, post.dictionary_size, min(window), max(window), time.perf_counter() - start)
            )
    return rows


def _fmt(seconds):
    return "—" if seconds is None else f"{seconds * 1e3:.2f}"


def report(cases, growth, quick):
    header = [
        "n", "t", "incremental round (ms)", "floor (ms)", "round / floor",
        "refit (a) (ms)", "refit / round", "dense (b) (ms)", "dense / round",
        "peak RSS (MiB)", "cache (MiB)",
    ]  # fmt: skip
    rows = []
    for c in cases:
        dense_ratio = "—" if c["dense_s"] is None else f"{c['dense_s'] / c['incremental_s']:.0f}×"
        rows.append([
            c["n"], c["t"], _fmt(c["incremental_s"]), _fmt(c["floor_s"]),
            f"{c['incremental_s'] / c['floor_s']:.2f}", _fmt(c["refit_s"]),
            f"{c['refit_s'] / c['incremental_s']:.0f}×", _fmt(c["dense_s"]), dense_ratio,
            f"{c['peak_rss_mb']:.0f}", f"{c['cache_mb']:.0f}",
        ])  # fmt: skip
    slopes = []
    for n in sorted({c["n"] for c in cases}):
        by_t = {c["t"]: c["incremental_s"] for c in cases if c["n"] == n}
        lo, hi = (250, 1000) if quick else (500, 2000)
        if lo in by_t and hi in by_t:
            slope = np.log(by_t[hi] / by_t[lo]) / np.log(hi / lo)
            slopes.append(f"n = {n}: {slope:.2f}")
    q_theorem, theorem_rows, practical_rows = growth
    lines = [
        "## Multi-task posterior: one BO round over N = 1000 candidates",
        "",
        f"Measured {machine()}. `python benchmarks/bench_posterior.py"
        + (" --quick`." if quick else "`."),
        "",
        "A round = one `add` + `mean()` + `variance_norm()` over all candidates. *floor*: one",
        "matrix-vector product per task over the n·t·N cached floats (memory-bandwidth bound).",
        "*(a)*: `ExactPosterior.fit` from scratch (eigen-split path, no cache) + mean +",
        "variance_norm. *(b)*: dense (nt × nt) Cholesky with SciPy, only where nt ≤ 5000.",
        "Medians of 25 rounds (incremental), 15 (floor), 3 or 1 (refit, dense). Separable kernel,",
        "RBF(0.2), B = AᵀA with A uniform on [0, 1], η = 0.1.",
        "",
        markdown_table(header, rows),
        "",
        f"Log-log slope of the incremental round time in t ({'250→1000' if quick else '500→2000'}"
        f"): {', '.join(slopes)}.",
        "",
        f"### NystromPosterior (MT-BKB): dictionary size m_t, n = {GROWTH_TASKS}, η = {NOISE}",
        "",
        f"Theorem 3's q = 6ρ log(4T/δ)/ε² = {q_theorem:.0f} (ε = 0.5, δ = 0.1, T = "
        f"{theorem_rows[-1][0]}) against q = {PRACTICAL_Q:g}; inclusion by leverage scores",
        "‖Γ̃‖/η. The dictionary is redrawn every round, so m_t jumps about: the range is over",
        "the rounds (t/2, t]. One round = `add` (resample the dictionary, rebuild the embedding)",
        "+ `variance_norm` over the candidates.",
        "",
        markdown_table(
            [
                "t",
                f"m_t (q = {q_theorem:.0f})",
                "range",
                "round (ms)",
                f"m_t (q = {PRACTICAL_Q:g})",
                "range",
                "round (ms)",
            ],
            [
                (t, m, f"{lo}–{hi}", f"{s * 1e3:.1f}", m1, f"{lo1}–{hi1}", f"{s1 * 1e3:.1f}")
                for (t, m, lo, hi, s), (_, m1, lo1, hi1, s1) in zip(theorem_rows, practical_rows)
            ],
        ),  # fmt: skip
    ]
    return "\n".join(lines)


GROWTH_TASKS = 2
PRACTICAL_Q = 10.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="t up to 1000, n = 2 and 20")
    parser.add_argument("--case", nargs=2, type=int, metavar=("N_TASKS", "T"))
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(*args.case)))
        return 0
    sizes = (250, 500, 1000) if args.quick else (250, 500, 1000, 2000)
    cases = []
    for n in (2, 20):
        for t in sizes:
            case = run_child(__file__, n, t)
            cases.append(case)
            print(
                f"n={n:3d} t={t:5d}  round {case['incremental_s'] * 1e3:8.2f} ms  "
                f"floor {case['floor_s'] * 1e3:8.2f} ms  refit {case['refit_s'] * 1e3:9.1f} ms",
                flush=True,
            )
    checkpoints = (25, 50, 100, 200) if args.quick else (25, 50, 100, 200, 400, 800)
    q_theorem = theorem_3_q(max(checkpoints))
    theorem_rows = dictionary_growth(GROWTH_TASKS, q_theorem, checkpoints)
    practical_rows = dictionary_growth(GROWTH_TASKS, PRACTICAL_Q, checkpoints)
    for (t, m, _, _, seconds), (_, m1, _, _, s1) in zip(theorem_rows, practical_rows):
        print(
            f"Nyström t={t:5d}  dictionary {m:4d} (q={q_theorem:.0f}, {seconds * 1e3:.1f} ms)"
            f"  {m1:4d} (q={PRACTICAL_Q:g}, {s1 * 1e3:.1f} ms)",
            flush=True,
        )
    growth = (q_theorem, theorem_rows, practical_rows)
    write_section("bench_posterior", report(cases, growth, args.quick))
    print("wrote benchmarks/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
