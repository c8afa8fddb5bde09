"""MultiTaskSampler beside Optuna's GPSampler and TPESampler on standard problems.

Problems (hand-written from their definitions, every objective minimised):

* ZDT1, d = 4, two objectives (Zitzler, Deb & Thiele 2000): f₁ = x₁,
  f₂ = g (1 − √(x₁/g)), g = 1 + 9 mean(x₂…x_d); reference point (1.1, 1.1);
* DTLZ2, d = 6, two objectives (Deb et al. 2002): g = Σ_{i≥2} (x_i − ½)²,
  f₁ = (1 + g) cos(x₁ π/2), f₂ = (1 + g) sin(x₁ π/2); reference point (1.1, 1.1);
* one objective, the standard set of BoTorch's ``test_functions.synthetic`` on their usual
  boxes, each mapped from [0, 1]^d: Branin (d = 2, minimum 0.397887), six-hump camel
  (d = 2, [−3, 3] × [−2, 2], −1.0316285), Hartmann 6 (d = 6, [0, 1]^6, −3.32237; Dixon &
  Szegő 1978), Levy (d = 4, [−10, 10]^4, 0), Rosenbrock (d = 4, [−5, 10]^4, 0; values up
  to ~10⁶, a heavy tail) and Styblinski–Tang (d = 4, [−5, 5]^4, −39.16617 d).

Score: for two objectives the hypervolume of the trials' values over that of the true
Pareto front (ZDT1: 0.1 + 2/3 + 0.11; DTLZ2: 1.21 − π/4; both checked against a dense front
by :func:`manytask.bo.metrics.hypervolume_2d`); for one objective the simple regret (best
value − minimum). Time: wall time of ``study.optimize`` over the trials divided by their number
(objectives cost microseconds, so this is the sampler's time per trial), and the process's
CPU time per trial, the fairer measure on a shared machine (every sampler runs on one
thread). Each sampler at
its defaults with a seed: ``MultiTaskSampler(seed)``, ``GPSampler(seed)`` (10 random
start-up trials, logEI / logEHVI; needs torch, the ``bench`` extra),
``TPESampler(seed)`` (10 start-up trials) and, if optuna-integration is installed (it is not
in the ``bench`` extra), ``BoTorchSampler(seed)`` (10 start-up trials, qLogNEI /
qLogNEHVI; seconds per trial, so run on fewer problems and seeds: ``--samplers
BoTorchSampler --problems ...``). BLAS and torch on one thread each. The table shows
MultiTaskSampler, GPSampler and TPESampler on the seeds all three ran on every problem,
plus the rows of any other ``--samplers`` (``MT_VARIANTS``: options measured beside the
defaults) on their own seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from manytask.bo.metrics import hypervolume_2d

from _common import machine, markdown_table, write_section


def zdt1(x):
    g = 1 + 9 * np.mean(x[1:])
    return [x[0], g * (1 - math.sqrt(x[0] / g))]


def dtlz2(x):
    g = float(np.sum((np.asarray(x[1:]) - 0.5) ** 2))
    angle = x[0] * math.pi / 2
    return [(1 + g) * math.cos(angle), (1 + g) * math.sin(angle)]


def branin(x):
    b, c = 5.1 / (4 * math.pi**2), 5 / math.pi
    x1, x2 = 15 * x[0] - 5, 15 * x[1]
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10


# Hartmann 6 (Dixon & Szegő 1978), on [0, 1]^6, minimum −3.32237
HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
HARTMANN_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
HARTMANN_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def hartmann6(x):
    inner = np.sum(HARTMANN_A * (np.asarray(x) - HARTMANN_P) ** 2, axis=1)
    return -float(HARTMANN_ALPHA @ np.exp(-inner))


def six_hump_camel(x):
    x1, x2 = 6 * x[0] - 3, 4 * x[1] - 2
    return (4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2


def levy(x):
    w = 1 + (20 * np.asarray(x) - 10 - 1) / 4
    middle = np.sum((w[:-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:-1] + 1) ** 2))
    last = (w[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[-1]) ** 2)
    return float(np.sin(np.pi * w[0]) ** 2 + middle + last)


def rosenbrock(x):
    z = 15 * np.asarray(x) - 5
    return float(np.sum(100 * (z[1:] - z[:-1] ** 2) ** 2 + (1 - z[:-1]) ** 2))


def styblinski_tang(x):
    z = 10 * np.asarray(x) - 5
    return float(0.5 * np.sum(z**4 - 16 * z**2 + 5 * z))


REFERENCE = np.array([1.1, 1.1])
PROBLEMS = {  # name: (function, d, objectives, optimal hypervolume or minimum)
    "ZDT1 (d = 4)": (zdt1, 4, 2, 0.1 + 2 / 3 + 0.11),
    "DTLZ2 (d = 6)": (dtlz2, 6, 2, 1.21 - math.pi / 4),
    "Branin (d = 2)": (branin, 2, 1, 0.397887),
    "Six-hump camel (d = 2)": (six_hump_camel, 2, 1, -1.0316285),
    "Hartmann6 (d = 6)": (hartmann6, 6, 1, -3.32237),
    "Levy (d = 4)": (levy, 4, 1, 0.0),
    "Rosenbrock (d = 4)": (rosenbrock, 4, 1, 0.0),
    "Styblinski-Tang (d = 4)": (styblinski_tang, 4, 1, -39.16617 * 4),
}


def check_optimal_hypervolumes():
    s = np.linspace(0, 1, 200_001)
    fronts = {
        "ZDT1 (d = 4)": np.c_[s, 1 - np.sqrt(s)],
        "DTLZ2 (d = 6)": np.c_[np.cos(s * np.pi / 2), np.sin(s * np.pi / 2)],
    }
    for name, front in fronts.items():
        dense = hypervolume_2d(-front, -REFERENCE)
        assert abs(dense - PROBLEMS[name][3]) < 1e-4, (name, dense)


#: MultiTaskSampler with options other than its defaults when the cache began: a new entry is a
#: new sampler name, whose runs accumulate in the cache beside the others'; each runs on top of
#: :data:`VARIANT_BASE`, the defaults they were measured with. "MultiTaskSampler" in the cache
#: is MultiTaskBO's current defaults on multi-objective studies (the runs of its earlier
#: defaults were renamed to the entry that spells them out when it changed); a
#: single-objective run of "MultiTaskSampler" is stored under the entry holding
#: SINGLE_OBJECTIVE_OPTIONS (:func:`cache_name`).
#: MultiTaskBO's model options since 2026-12-05 05:00 (MAP under the priors, a constant mean
#: fitted afresh every 4 observations), under every ``refit_every=4`` entry below.
FRESH_FITS_EVERY_4 = dict(
    kernel_prior=True, refit_every=4, kernel_mean="constant", kernel_warm_start=False
)
MT_VARIANTS = {
    # MultiTaskBO's defaults until 2026-12-05 (maximum likelihood, the UCB)
    "MultiTaskSampler(kernel_prior=False, acquisition='ucb')": dict(),
    "MultiTaskSampler(output_warping='rank')": dict(output_warping="rank"),
    "MultiTaskSampler(output_warping='rank', kernel_prior=True)": dict(
        output_warping="rank", kernel_prior=True
    ),
    "MultiTaskSampler(output_warping='yeo-johnson', kernel_prior=True)": dict(
        output_warping="yeo-johnson", kernel_prior=True
    ),
    "MultiTaskSampler(output_warping='rank', kernel_prior=True, beta=2)": dict(
        output_warping="rank", kernel_prior=True, beta=2.0
    ),
    "MultiTaskSampler(output_warping='rank', kernel_prior=True, n_restarts=10)": dict(
        output_warping="rank", kernel_prior=True, n_restarts=10
    ),
    "MultiTaskSampler(output_warping='rank', kernel_prior=True, refit_every=1)": dict(
        output_warping="rank", kernel_prior=True, refit_every=1
    ),
    "MultiTaskSampler(output_warping='rank', kernel_prior=True, kernel_restarts=3)": dict(
        output_warping="rank", kernel_prior=True, kernel_restarts=3
    ),
    # a refit every 3 observations (MultiTaskBO's default for an hour, from bench_bo_botorch's
    # suite, where it was as good as 2; here it lost on Hartmann6 and ZDT1)
    "MultiTaskSampler(refit_every=3)": dict(refit_every=3),
    "MultiTaskSampler(output_warping='rank', kernel_prior=True, refit_every=3)": dict(
        output_warping="rank", kernel_prior=True, refit_every=3
    ),
    # expected improvement instead of the UCB (run when the refit was every 2 observations)
    "MultiTaskSampler(acquisition='ei', output_warping='rank', kernel_prior=True, refit_every=2)": (
        dict(acquisition="ei", output_warping="rank", kernel_prior=True, refit_every=2)
    ),
    "MultiTaskSampler(acquisition='ei', output_warping='yeo-johnson', kernel_prior=True, "
    "refit_every=2)": dict(
        acquisition="ei", output_warping="yeo-johnson", kernel_prior=True, refit_every=2
    ),
    "MultiTaskSampler(acquisition='ei', output_warping='none', kernel_prior=True, refit_every=2)": (
        dict(acquisition="ei", output_warping="none", kernel_prior=True, refit_every=2)
    ),
    # the rank transform below the median, affine above (transforms.OutputWarping): the rank
    # map spread near-tied best values a standard deviation apart, the kernel's lengthscales
    # collapsed and the UCB re-proposed the stuck seeds' box-edge points (avoid_told=False
    # spelt out: a single-objective study's default is True)
    "MultiTaskSampler(output_warping='rank-affine', kernel_prior=True, avoid_told=False)": dict(
        output_warping="rank-affine", kernel_prior=True, avoid_told=False
    ),
    # and proposals kept min_distance from the told points (MultiTaskBO's avoid_told): with
    # rank-affine alone the UCB's argmax still sat on Branin seed 8's best told point
    "MultiTaskSampler(output_warping='rank-affine', kernel_prior=True, avoid_told=True, "
    "acquisition='ucb')": dict(
        output_warping="rank-affine",
        kernel_prior=True,
        avoid_told=True,
        acquisition="ucb",
        refit_every=2,
        kernel_mean="zero",
        kernel_warm_start=True,
    ),
    # the same with MultiTaskBO's expected improvement (its default since 2026-12-05)
    "MultiTaskSampler(output_warping='rank-affine', kernel_prior=True, avoid_told=True, "
    "acquisition='ei')": dict(
        output_warping="rank-affine", kernel_prior=True, avoid_told=True, acquisition="ei"
    ),
    "MultiTaskSampler(avoid_told=True)": dict(avoid_told=True),
    # MultiTaskBO's defaults of 2026-12-05 01:00 (a multi-objective study's; its rows are those
    # "MultiTaskSampler" had until the constant mean and fresh fits every 4 observations became
    # the defaults, docs/results/bo-dtlz2/results.md, whose runs are now "MultiTaskSampler")
    "MultiTaskSampler(kernel_prior=True, acquisition='ei', refit_every=2)": dict(
        kernel_prior=True, acquisition="ei"
    ),
    # MultiTaskBO's defaults of 2026-12-05 05:00 (its rows are those "MultiTaskSampler" had
    # until avoid_told=True became the default with kernel="auto", 07:30)
    "MultiTaskSampler(kernel_prior=True, acquisition='ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False)": dict(
        FRESH_FITS_EVERY_4,
        acquisition="ei",
    ),
    # MultiTaskBO's defaults of 2026-12-05 07:30 (its rows are those "MultiTaskSampler" had
    # until the augmented Chebyshev became the default scalarisation, 10:30)
    "MultiTaskSampler(kernel_prior=True, acquisition='ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False, avoid_told=True)": dict(
        FRESH_FITS_EVERY_4,
        acquisition="ei",
        avoid_told=True,
    ),
    # the sampled EI of the augmented Chebyshev (the default's scalarisation since 10:30) and
    # of the plain one (bench_bo_botorch.py)
    "MultiTaskSampler(kernel_prior=True, acquisition='mc-ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False, avoid_told=True, "
    "scalarization='augmented-chebyshev')": dict(
        FRESH_FITS_EVERY_4,
        acquisition="mc-ei",
        avoid_told=True,
        scalarization="augmented-chebyshev",
    ),
    # MultiTaskBO's defaults of 2026-12-05 10:30 (its rows are those "MultiTaskSampler" had
    # until the expected improvement of s_λ's moments became the default, 12:45)
    "MultiTaskSampler(kernel_prior=True, acquisition='ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False, avoid_told=True, "
    "scalarization='augmented-chebyshev')": dict(
        FRESH_FITS_EVERY_4,
        acquisition="ei",
        avoid_told=True,
        scalarization="augmented-chebyshev",
    ),
    "MultiTaskSampler(kernel_prior=True, acquisition='mc-ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False, avoid_told=True)": dict(
        FRESH_FITS_EVERY_4,
        acquisition="mc-ei",
        avoid_told=True,
    ),
    # MultiTaskBO's defaults of 2026-12-05 12:45 (its rows are those "MultiTaskSampler" had
    # until the objectives' model chosen at every refit became the default, 17:00)
    "MultiTaskSampler(kernel_prior=True, acquisition='moment-ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False, avoid_told=True, "
    "scalarization='augmented-chebyshev', objective_model='icm')": dict(
        FRESH_FITS_EVERY_4,
        acquisition="moment-ei",
        avoid_told=True,
        scalarization="augmented-chebyshev",
    ),
    # MultiTaskBO's defaults of 2026-12-05 17:00 (its rows are those "MultiTaskSampler" had
    # until one GP per objective became the default, 19:50)
    "MultiTaskSampler(kernel_prior=True, acquisition='moment-ei', refit_every=4, "
    "kernel_mean='constant', kernel_warm_start=False, avoid_told=True, "
    "scalarization='augmented-chebyshev', objective_model='auto')": dict(
        FRESH_FITS_EVERY_4,
        acquisition="moment-ei",
        avoid_told=True,
        scalarization="augmented-chebyshev",
        objective_model="auto",
    ),
}
#: The MultiTaskBO options under every MT_VARIANTS entry unless it sets them: the defaults
#: they were measured with (before avoid_told, the lengthscale prior, EI, the constant mean,
#: fresh fits every 4 and the augmented Chebyshev), so that a cached run keeps its meaning.
VARIANT_BASE = dict(
    scalarization="chebyshev",
    objective_model="icm",
    avoid_told=False,
    kernel_prior=False,
    acquisition="ucb",
    refit_every=2,
    kernel_mean="zero",
    kernel_warm_start=True,
)
SAMPLERS = ("MultiTaskSampler", *MT_VARIANTS, "GPSampler", "TPESampler", "BoTorchSampler")
#: The rows of every problem in the table (other --samplers are added, with their seeds).
COMPARED = ("MultiTaskSampler", "GPSampler", "TPESampler")


def cache_name(name, n_objectives):
    """The cache entry of sampler ``name`` on a problem with ``n_objectives``: the
    MultiTaskSampler of a single-objective study runs with SINGLE_OBJECTIVE_OPTIONS."""
    from manytask.bo.optuna import SINGLE_OBJECTIVE_OPTIONS

    if name != "MultiTaskSampler" or n_objectives > 1:
        return name
    return next(n for n, o in MT_VARIANTS.items() if o == SINGLE_OBJECTIVE_OPTIONS)


def make_sampler(name, seed):
    import optuna

    from manytask.bo.optuna import MultiTaskSampler

    if name == "MultiTaskSampler":
        return MultiTaskSampler(seed=seed)
    if name in MT_VARIANTS:
        return MultiTaskSampler(seed=seed, **{**VARIANT_BASE, **MT_VARIANTS[name]})
    if name == "GPSampler":
        return optuna.samplers.GPSampler(seed=seed)
    if name == "BoTorchSampler":
        from optuna_integration import BoTorchSampler

        return BoTorchSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def run(problem, sampler_name, seed, n_trials):
    import optuna

    function, d, n_objectives, optimum = PROBLEMS[problem]

    def objective(trial):
        return function([trial.suggest_float(f"x{i}", 0, 1) for i in range(d)])

    sampler = make_sampler(sampler_name, seed)
    study = optuna.create_study(directions=["minimize"] * n_objectives, sampler=sampler)
    start, cpu = time.perf_counter(), time.process_time()
    study.optimize(objective, n_trials=n_trials)
    seconds = (time.perf_counter() - start) / n_trials
    cpu_seconds = (time.process_time() - cpu) / n_trials
    values = np.array([t.values for t in study.trials])
    if n_objectives == 1:
        score = float(values.min() - optimum)
    else:
        score = hypervolume_2d(-values, -REFERENCE) / optimum
    return score, seconds, cpu_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="1 seed, 20 trials")
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--samplers", nargs="*", default=list(COMPARED), choices=SAMPLERS)
    parser.add_argument(
        "--cache",
        default=str(Path(__file__).with_name("bench_optuna_runs.jsonl")),
        help="JSON lines of finished runs (committed, so the table can be re-rendered)",
    )
    parser.add_argument("--render-only", action="store_true", help="table from --cache")
    parser.add_argument("--no-write", action="store_true", help="print, leave RESULTS.md")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.trials = 1, 20
    import optuna
    from threadpoolctl import threadpool_limits

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    threadpool_limits(1)
    samplers = list(SAMPLERS)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        print("torch is not installed: GPSampler left out")
        samplers.remove("GPSampler")
    try:
        import optuna_integration  # noqa: F401
    except ImportError:
        print("optuna-integration is not installed: BoTorchSampler left out")
        samplers.remove("BoTorchSampler")
    check_optimal_hypervolumes()
    cache = Path(args.cache)
    if not args.render_only:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for problem in args.problems:
                for name in args.samplers:
                    if name not in samplers:
                        continue
                    score, seconds, cpu = run(problem, name, seed, args.trials)
                    record = dict(
                        problem=problem, sampler=cache_name(name, PROBLEMS[problem][2]),
                        seed=seed, trials=args.trials,
                        score=score, seconds=seconds, cpu_seconds=cpu,
                        load=os.getloadavg()[0],
                    )  # fmt: skip
                    print(json.dumps(record), flush=True)
                    with cache.open("a") as handle:
                        handle.write(json.dumps(record) + "\n")
    records = [json.loads(line) for line in cache.read_text().splitlines() if line]
    records = [r for r in records if r["trials"] == args.trials]
    unique = {(r["problem"], r["sampler"], r["seed"]): r for r in records}
    shown = [n for n in COMPARED if n in samplers]
    shown += [n for n in args.samplers if n in samplers and n not in shown]

    def seeds_of(problem, name):
        key = cache_name(name, PROBLEMS[problem][2])
        return {s for (p, n, s) in unique if p == problem and n == key}

    # the seeds every compared sampler ran on every problem
    seeds = sorted(
        set.intersection(*(seeds_of(p, n) for p in args.problems for n in COMPARED if n in shown))
    )
    results, loads = {}, []
    for problem in args.problems:
        for name in shown:
            key = cache_name(name, PROBLEMS[problem][2])
            runs = [unique[problem, key, s] for s in seeds if (problem, key, s) in unique]
            if name not in COMPARED and len(runs) < len(seeds):  # a partial row: its own seeds
                runs = [unique[problem, key, s] for s in sorted(seeds_of(problem, name))]
            if not runs:
                continue
            loads += [r["load"] for r in runs]
            results[problem, name] = (
                key,
                np.array([[r["score"], r["seconds"], r["cpu_seconds"]] for r in runs]),
            )
    rows = []
    for problem in args.problems:
        digits = 4 if PROBLEMS[problem][2] == 1 else 3
        ours = results[problem, "MultiTaskSampler"][1][:, 2].mean()
        for name in shown:
            if (problem, name) not in results:
                continue
            key, runs = results[problem, name]
            label = name
            if name == "MultiTaskSampler" and key != name:
                label = f"MultiTaskSampler (default: {key[len(name) + 1 : -1]})"
            if len(runs) != len(seeds):
                label += f" ({len(runs)} seeds)"
            rows.append(
                [
                    problem,
                    label,
                    f"{runs[:, 0].mean():.{digits}f} ± {runs[:, 0].std():.{digits}f}",
                    f"{runs[:, 1].mean():.3f}",
                    f"{runs[:, 2].mean():.3f}",
                    f"{runs[:, 2].mean() / ours:.2f}",
                ]
            )
    table = markdown_table(
        [
            "problem",
            "sampler",
            "HV fraction (2 obj.) / regret (1 obj.), mean ± sd",
            "wall s / trial",
            "CPU s / trial",
            "CPU time / MultiTaskSampler's",
        ],
        rows,
    )
    versions = f"Optuna {optuna.__version__}"
    if "GPSampler" in samplers:
        versions += f", torch {torch.__version__}"
    text = f"""## Optuna samplers: MultiTaskSampler beside GPSampler and TPESampler

Measured {machine()}, {versions}; BLAS and torch on 1 thread; 1-minute load average
{min(loads):.1f}–{max(loads):.1f} at the end of the runs (2 cores shared with other jobs:
wall times are indicative, CPU times less affected). `python benchmarks/bench_optuna.py
--trials {args.trials}` (runs accumulate in `--cache`, the table is rendered from it).
Every sampler at its defaults with seeds {", ".join(map(str, seeds))}, {args.trials} trials
per run (MultiTaskSampler's defaults differ for one objective: the row says which; a row
with other options names them, and its seeds if fewer); the problems, reference points
and scores are described in the script's docstring.

{table}
"""
    print(text)
    if not args.no_write:
        write_section("bench_optuna", text)


if __name__ == "__main__":
    main()
