"""Time one round of multi-task Bayesian optimisation over N = 1000 candidates, against BoTorch.

A round is what ``MultiTaskBO`` does between two evaluations: ``tell`` (the posterior
update) followed by ``ask`` (the acquisition over all N candidates and its argmax), with a
fixed scalarisation weight so every round does the same work. It is timed for
  * MT-KB (exact posterior, cached candidate columns) against t, with the memory-bandwidth
    floor of a round (one matrix-vector product per task over the n·t·N cached floats);
  * MT-BKB (Nyström posterior) against t, for Theorem 3's q and for q = 1, with its
    dictionary size m_t; growing the data to t replays t Nyström updates (each resamples
    the dictionary and rebuilds the embedding), so each (n, q) grows once through the
    checkpoints within a time budget and reports the checkpoints it reached;
  * BoTorch's ``KroneckerMultiTaskGP`` with the same fixed kernel (RBF(0.2) ⊗ B, B = AᵀA,
    noise 0.1): ``model.posterior(candidates)`` followed by ``.mean`` and ``.variance``.
The setting is the paper's RKHS-function one: a 1-D net, SE lengthscale 0.2, η = 0.1.
Each MT-KB (n, t) and each MT-BKB (n, q) runs in its own process so its peak RSS is its own.

Run: ``python benchmarks/bench_bo.py`` (``--quick`` for a smaller grid). Needs the ``bench``
extra (torch, botorch): ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import manytask as mt
from bench_posterior import N_CANDIDATES, NOISE, bandwidth_floor, problem

from _common import machine, markdown_table, peak_rss_mb, run_child, write_section

KB_ROUNDS = 25
BKB_ROUNDS = 15
EPSILON, DELTA, HORIZON = 0.5, 0.1, 2000
SMALL_Q = 1.0
AGREEMENT_POINTS = 10


def optimizer(kernel, candidates, algorithm, q=None):
    """MultiTaskBO with a fixed (Dirac) weight, so every round's acquisition is alike."""
    n = kernel.n_tasks
    return mt.bo.MultiTaskBO(
        candidates=candidates,
        kernel=kernel,
        algorithm=algorithm,
        weights=np.full(n, 1.0 / n),
        noise=NOISE,
        q=q,
        horizon=HORIZON,
        seed=0,
    )


def time_rounds(opt, rounds, seed=1):
    """Per-round wall times of ``tell`` (at the point asked last) + ``ask``."""
    rng = np.random.default_rng(seed)
    x = opt.ask()
    times = []
    for _ in range(rounds):
        y = rng.normal(size=opt.n_tasks)
        start = time.perf_counter()
        opt.tell(x, y)
        x = opt.ask()
        times.append(time.perf_counter() - start)
    return times


# ---- BoTorch ------------------------------------------------------------------------------
def botorch_model(kernel, X, Y):
    """A KroneckerMultiTaskGP equal to our model: zero mean, RBF(0.2) data kernel, task
    covariance B (IndexKernel: covar_factor·covar_factorᵀ + diag(var), here chol(B) and
    var = 1e-10), one global noise 0.1, no outcome transform; float64, eval mode."""
    import torch
    from botorch.models import KroneckerMultiTaskGP
    from gpytorch.kernels import RBFKernel
    from gpytorch.likelihoods import MultitaskGaussianLikelihood

    n = kernel.n_tasks
    likelihood = MultitaskGaussianLikelihood(num_tasks=n, rank=0, has_task_noise=False)
    model = KroneckerMultiTaskGP(
        torch.tensor(X),
        torch.tensor(Y),
        likelihood=likelihood.double(),
        data_covar_module=RBFKernel().double(),
        outcome_transform=None,
    ).double()
    model.covar_module.data_covar_module.lengthscale = kernel.kernel.lengthscale
    task = model.covar_module.task_covar_module
    task.covar_factor.data = torch.tensor(np.linalg.cholesky(kernel.B))
    task.var = torch.full((n,), 1e-10, dtype=torch.float64)
    model.likelihood.noise = NOISE
    for constant_mean in model.mean_module.base_means:
        constant_mean.constant.data.zero_()
    return model.eval()


def botorch_posterior(kernel, X, Y, candidates, repeats):
    """Median time of posterior(candidates) + .mean + .variance, a fresh model per repetition
    (so no cached solve or eigendecomposition is reused; building it is not timed), after an
    untimed warm-up on a small model."""
    import warnings

    import torch

    test = torch.tensor(candidates)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # untimed warm-up: torch's one-time initialisation
        _ = botorch_model(kernel, X[:20], Y[:20]).posterior(test[:20]).variance
    times, mean = [], None
    for _ in range(repeats):
        model = botorch_model(kernel, X, Y)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # linear_operator's jitter NumericalWarning
            start = time.perf_counter()
            posterior = model.posterior(test)
            mean, variance = posterior.mean, posterior.variance
            times.append(time.perf_counter() - start)
    assert variance.shape == (len(candidates), kernel.n_tasks)
    return float(np.median(times)), mean.numpy()


# ---- child processes ----------------------------------------------------------------------
def run_kb_case(n_tasks: int, t: int, with_botorch: bool, botorch_repeats: int) -> dict:
    kernel, candidates, X, Y = problem(n_tasks, t)
    opt = optimizer(kernel, candidates, "mt-kb")
    start = time.perf_counter()
    for x, y in zip(X[:t], Y[:t]):
        opt.tell(x, y)
    grow_s = time.perf_counter() - start
    round_s = float(np.median(time_rounds(opt, KB_ROUNDS)))
    floor_s = bandwidth_floor(n_tasks, t)
    case = {
        "n": n_tasks,
        "t": t,
        "grow_s": grow_s,
        "round_s": round_s,
        "floor_s": floor_s,
        "peak_rss_mb": peak_rss_mb(),  # manytask's own peak, before BoTorch allocates
        "botorch_s": None,
        "botorch_peak_rss_mb": None,
        "mean_max_abs_diff": None,
    }
    if with_botorch:
        botorch_s, botorch_mean = botorch_posterior(
            kernel, X[:t], Y[:t], candidates, botorch_repeats
        )
        some = np.linspace(0, N_CANDIDATES - 1, AGREEMENT_POINTS).astype(int)
        exact = mt.posterior.ExactPosterior(kernel, NOISE).fit(X[:t], Y[:t])
        difference = np.abs(exact.mean(candidates[some]) - botorch_mean[some]).max()
        case.update(
            botorch_s=botorch_s,
            botorch_peak_rss_mb=peak_rss_mb(),
            mean_max_abs_diff=float(difference),
        )
    return case


def run_bkb_case(n_tasks: int, q_label: str, checkpoints, budget_s: float) -> dict:
    """Grow one MT-BKB run through the checkpoints; at each, time BKB_ROUNDS rounds.
    Stops before a checkpoint the growth would reach only after ``budget_s`` seconds."""
    q = mt.bo.policies.theorem_3_q(EPSILON, DELTA, HORIZON) if q_label == "theorem" else SMALL_Q
    T = max(checkpoints)
    kernel, candidates, X, Y = problem(n_tasks, T)
    opt = optimizer(kernel, candidates, "mt-bkb", q=q)
    posterior = opt._policy.posterior  # read-only: the dictionary size m_t
    rows, told, start, reached = [], 0, time.perf_counter(), None
    for t in sorted(checkpoints):
        begin = time.perf_counter()
        while told < t - BKB_ROUNDS // 2:  # the timed rounds bring it to ≈ t
            opt.tell(X[told], Y[told])
            told += 1
            if time.perf_counter() - start > budget_s:
                break
        if time.perf_counter() - start > budget_s:
            reached = f"stopped at t = {told} after {time.perf_counter() - start:.0f} s"
            break
        grow_s = time.perf_counter() - begin
        times = time_rounds(opt, BKB_ROUNDS)
        rows.append(
            {
                "t": t,
                "round_s": float(np.median(times)),
                "mean_round_s": float(np.mean(times)),
                "m": float(np.median(posterior.dictionary_sizes_[-BKB_ROUNDS:])),
                "m_range": [min(posterior.dictionary_sizes_[-BKB_ROUNDS:]),
                            max(posterior.dictionary_sizes_[-BKB_ROUNDS:])],
                "grow_s": grow_s,
                "peak_rss_mb": peak_rss_mb(),
            }
        )  # fmt: skip
        told += BKB_ROUNDS
    return {"n": n_tasks, "q": q, "q_label": q_label, "rows": rows, "stopped": reached}


# ---- report -------------------------------------------------------------------------------
def slope(ts, times):
    """Least-squares slope of log(time) against log(t)."""
    if len(ts) < 2:
        return None
    return float(np.polyfit(np.log(ts), np.log(times), 1)[0])


def _ms(seconds):
    return "—" if seconds is None else f"{seconds * 1e3:.2f}"


def _s(seconds):
    return "skipped" if seconds is None else f"{seconds:.3g}"


def report(kb_cases, bkb_cases, quick, wall_s, skipped_note):
    header = [
        "n", "t", "MT-KB round (ms)", "floor (ms)", "round / floor", "BoTorch posterior (s)",
        "BoTorch / round", "mean max |Δ|", "peak RSS (MiB)", "with BoTorch (MiB)",
    ]  # fmt: skip
    rows = []
    for c in kb_cases:
        ratio = "—" if c["botorch_s"] is None else f"{c['botorch_s'] / c['round_s']:.0f}×"
        diff = "—" if c["mean_max_abs_diff"] is None else f"{c['mean_max_abs_diff']:.1e}"
        rss_bt = "—" if c["botorch_peak_rss_mb"] is None else f"{c['botorch_peak_rss_mb']:.0f}"
        rows.append([
            c["n"], c["t"], _ms(c["round_s"]), _ms(c["floor_s"]),
            f"{c['round_s'] / c['floor_s']:.2f}", _s(c["botorch_s"]), ratio, diff,
            f"{c['peak_rss_mb']:.0f}", rss_bt,
        ])  # fmt: skip
    kb_slopes = []
    for n in sorted({c["n"] for c in kb_cases}):
        mine = [c for c in kb_cases if c["n"] == n]
        s = slope([c["t"] for c in mine], [c["round_s"] for c in mine])
        if s is not None:
            kb_slopes.append(f"n = {n}: {s:.2f}")
    bkb_header = ["n", "q", "t", "MT-BKB round, median (ms)", "mean (ms)", "median m_t",
                  "m_t range",
                  "peak RSS (MiB)"]  # fmt: skip
    bkb_rows, bkb_slopes = [], []
    for b in bkb_cases:
        q_text = f"{b['q']:.0f} (Thm 3)" if b["q_label"] == "theorem" else f"{b['q']:g}"
        for r in b["rows"]:
            bkb_rows.append([
                b["n"], q_text, r["t"], _ms(r["round_s"]), _ms(r["mean_round_s"]),
                f"{r['m']:.0f}",
                f"{r['m_range'][0]}–{r['m_range'][1]}", f"{r['peak_rss_mb']:.0f}",
            ])  # fmt: skip
        ts = [r["t"] for r in b["rows"]]
        s = slope(ts, [r["round_s"] for r in b["rows"]])
        s_mean = slope(ts, [r["mean_round_s"] for r in b["rows"]])
        reach = f" ({b['stopped']})" if b["stopped"] else ""
        s_text = "—" if s is None else f"{s:.2f} (median), {s_mean:.2f} (mean)"
        bkb_slopes.append(f"n = {b['n']}, q = {q_text}: {s_text}{reach}")
    lines = [
        "## Multi-task BO: one round over N = 1000 candidates",
        "",
        f"Measured {machine()}, torch {_torch_version()} ({_torch_threads()} threads), "
        f"BoTorch {_botorch_version()}. `python benchmarks/bench_bo.py"
        + (" --quick`" if quick else "`")
        + f", {wall_s / 60:.1f} min in all.",
        "",
        "A round = `MultiTaskBO.tell` (posterior update) + `ask` (acquisition over all N",
        "candidates + argmax), fixed weight λ = (1/n, …, 1/n), Chebyshev scalarisation, theory",
        "radius; the data are first grown to t by `tell` at random candidates. Paper's",
        "RKHS-function setting: 1-D net, RBF(0.2) ⊗ B with B = AᵀA, A uniform on [0, 1],",
        f"η = {NOISE}. Medians of {KB_ROUNDS} rounds (MT-KB) and {BKB_ROUNDS} (MT-BKB). *floor*:",
        "one matrix-vector product per task over the n·t·N cached floats read from main memory",
        "(`bench_posterior.bandwidth_floor`). *BoTorch posterior*: `KroneckerMultiTaskGP` with",
        "the same fixed kernel and noise (float64, eval mode, `torch.no_grad()`, default thread",
        "count), time of `model.posterior(candidates)` + `.mean` + `.variance` on the same t",
        "points, a fresh model per repetition (no cached solve reused; building it untimed;",
        "one untimed warm-up on a 20-point model first),",
        "median of 3 repetitions where n·t ≤ 5000, else 1. *mean max |Δ|*: largest difference",
        f"of BoTorch's posterior mean from `ExactPosterior.mean` at {AGREEMENT_POINTS} of the",
        "candidates. Each (n, t) runs in its own process; *peak RSS* is before BoTorch runs,",
        f"*with BoTorch* after.{skipped_note}",
        "",
        markdown_table(header, rows),
        "",
        f"Log-log slope of the MT-KB round time in t (least squares over the t measured): "
        f"{', '.join(kb_slopes)}.",
        "",
        "### MT-BKB (Nyström posterior): round time and dictionary size m_t",
        "",
        f"Theorem 3's q = 6ρ log(4T/δ)/ε² (ε = {EPSILON}, δ = {DELTA}, T = {HORIZON}) keeps every",
        "point at these t (inclusion probability min(q‖Γ̃‖/η, 1) = 1), so m_t = t and a round",
        f"costs O(t·m²) = O(t³); q = {SMALL_Q:g} shows the near-linear regime. Each (n, q) grows",
        "one run by replaying `tell` (one dictionary draw and embedding rebuild per point,",
        "O(t²m²) in all) through the checkpoints, within a time budget; at each checkpoint",
        f"{BKB_ROUNDS} rounds are timed (t is the checkpoint ± {BKB_ROUNDS // 2}). Peak RSS is the",
        "run's peak so far. The dictionary is redrawn every round from Γ̃_{t−1}, so m_t jumps",
        "about (a small dictionary inflates Γ̃ at the data, so the next draw keeps more): the",
        "median, mean and range are over the timed rounds.",
        "",
        markdown_table(bkb_header, bkb_rows),
        "",
        "Log-log slope of the MT-BKB round time in t (least squares over the checkpoints",
        "reached): " + "; ".join(bkb_slopes) + ".",
    ]
    return "\n".join(lines)


def _torch_version():
    import torch

    return torch.__version__


def _torch_threads():
    import torch

    return torch.get_num_threads()


def _botorch_version():
    import botorch

    return botorch.__version__


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="t ∈ {250, 500}, shorter budgets")
    parser.add_argument("--case", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:  # a child: torch is imported only when BoTorch runs, after manytask's peak RSS
        kind, n_tasks = args.case[0], int(args.case[1])
        if kind == "kb":
            case = run_kb_case(n_tasks, int(args.case[2]), args.case[3] == "1", int(args.case[4]))
        else:
            checkpoints = [int(t) for t in args.case[3].split(",")]
            case = run_bkb_case(n_tasks, args.case[2], checkpoints, float(args.case[4]))
        print(json.dumps(case))
        return 0
    try:
        import botorch  # noqa: F401
        import gpytorch  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        print(
            f"bench_bo.py skipped: {error.name} is not installed; it compares against BoTorch "
            "(install the extra: pip install -e '.[bench]')",
            file=sys.stderr,
        )
        return 0

    started = time.perf_counter()
    sizes = (250, 500) if args.quick else (250, 500, 1000, 2000)
    botorch_limit = 20_000  # n·t; (2000, 20) takes far too long
    kb_cases = []
    for n in (2, 20):
        for t in sizes:
            with_botorch = n * t <= botorch_limit
            repeats = 3 if n * t <= 5000 else 1
            case = run_child(__file__, "kb", n, t, int(with_botorch), repeats)
            kb_cases.append(case)
            print(
                f"MT-KB  n={n:3d} t={t:5d}  round {case['round_s'] * 1e3:8.2f} ms  floor "
                f"{case['floor_s'] * 1e3:7.2f} ms  BoTorch (s) {_s(case['botorch_s'])}  "
                f"Δmean {case['mean_max_abs_diff']}",
                flush=True,
            )
    skipped = [f"(n = {c['n']}, t = {c['t']})" for c in kb_cases if c["botorch_s"] is None]
    skipped_note = ""
    if skipped:
        largest = max((c for c in kb_cases if c["botorch_s"]), key=lambda c: c["n"] * c["t"])
        skipped_note = (
            f" BoTorch not run at {', '.join(skipped)}: it took {largest['botorch_s']:.0f} s at"
            f" n·t = {largest['n'] * largest['t']} and grows faster than (nt)², so several"
            " minutes at least."
        )
    bkb_budget = 60.0 if args.quick else 120.0
    bkb_cases = []
    for n in (2, 20):
        for q_label in ("theorem", "small"):
            checkpoints = ",".join(map(str, sizes))
            case = run_child(__file__, "bkb", n, q_label, checkpoints, bkb_budget)
            bkb_cases.append(case)
            for r in case["rows"]:
                print(
                    f"MT-BKB n={n:3d} q={case['q']:6.1f} t={r['t']:5d}  round "
                    f"{r['round_s'] * 1e3:8.2f} ms  median m_t {r['m']:.0f}",
                    flush=True,
                )
            if case["stopped"]:
                print(f"MT-BKB n={n:3d} q={case['q']:6.1f}  {case['stopped']}", flush=True)
    wall_s = time.perf_counter() - started
    write_section("bench_bo", report(kb_cases, bkb_cases, args.quick, wall_s, skipped_note))
    print(f"wrote benchmarks/RESULTS.md ({wall_s / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
