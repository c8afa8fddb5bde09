"""End-to-end multi-objective BO against BoTorch on its own test problems.

For each problem (BoTorch's DTLZ2 with 2 and 3 objectives, ZDT1 and VehicleSafety, negated
so that every objective is maximised, as BoTorch's examples do) and each seed:

* a fixed set of N = 1000 scrambled Sobol candidates in the problem's box (the same for every
  seed and method); every method works in the unit cube and picks among these candidates;
* 6 initial points (random candidates, the same for every method of a seed), then
  ``--rounds`` rounds of one point each; observations carry Gaussian noise of standard
  deviation ``--noise`` × (range of the objective over the candidates), the same draws for
  every method (one stream per seed, indexed by the evaluation count);
* methods: ``MultiTaskBO(candidates=C, kernel="auto")`` (manytask's defaults: MT-KB,
  Chebyshev scalarisation on the observed range, ICM kernel refitted every 5 observations),
  BoTorch's ``qLogNParEGO`` (``qLogNoisyExpectedImprovement`` of a random augmented
  Chebyshev scalarisation, as in BoTorch's multi-objective tutorial) and ``qLogNEHVI``, both
  on a ``ModelListGP`` of ``SingleTaskGP`` (noise inferred, ``Standardize``) refitted by
  ``fit_gpytorch_mll`` every round, 128 Sobol QMC samples, acquisition maximised over the
  candidates by ``optimize_acqf_discrete``;
* score: hypervolume of the noise-free values of the evaluated points over the largest
  hypervolume reachable among the N candidates, both against BoTorch's fixed reference
  point of the problem (``problem.ref_point``), computed by BoTorch's ``Hypervolume``;
* time per iteration: wall time of one round's proposal and update (manytask: ``ask`` +
  ``tell``; BoTorch: model refit + acquisition + ``optimize_acqf_discrete``), the objective
  evaluation excluded, mean over the rounds.

Each finished (problem, method, seed) is appended to ``--cache`` (JSON lines) and the table
is rewritten in RESULTS.md after every seed, from every cached run with the same settings,
so runs can be resumed or split; the default cache,
``benchmarks/bench_bo_botorch_runs.jsonl``, is committed with the runs behind RESULTS.md.
Needs the ``bench`` extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import qmc

from _common import machine, markdown_table, write_section

N_CANDIDATES = 1000
N_INITIAL = 6
MC_SAMPLES = 128
METHODS = ("manytask", "qLogNParEGO", "qLogNEHVI")


def make_problem(name):
    from botorch.test_functions.multi_objective import DTLZ2, ZDT1, VehicleSafety

    if name == "DTLZ2 (2 obj.)":
        return DTLZ2(dim=6, num_objectives=2, negate=True)
    if name == "DTLZ2 (3 obj.)":
        return DTLZ2(dim=6, num_objectives=3, negate=True)
    if name == "ZDT1":
        return ZDT1(dim=4, num_objectives=2, negate=True)
    if name == "VehicleSafety":
        return VehicleSafety(negate=True)
    raise ValueError(f"unknown problem {name!r}")


PROBLEMS = ("DTLZ2 (2 obj.)", "DTLZ2 (3 obj.)", "ZDT1", "VehicleSafety")


class Setting:
    """A problem's candidates (unit cube and original box), noise-free values and noise."""

    def __init__(self, name, noise):
        import torch

        self.name = name
        self.problem = make_problem(name)
        bounds = self.problem.bounds.to(torch.float64)
        unit = qmc.Sobol(self.problem.dim, scramble=True, seed=0).random(N_CANDIDATES)
        self.unit = unit  # what the methods see
        box = bounds[0] + (bounds[1] - bounds[0]) * torch.as_tensor(unit)
        with torch.no_grad():
            self.values = self.problem.evaluate_true(box).numpy()  # (N, n), maximised
        self.noise_std = noise * (self.values.max(axis=0) - self.values.min(axis=0))
        self.ref_point = self.problem.ref_point.to(torch.float64)
        self.max_hv = hypervolume(self.values, self.ref_point)

    def observe(self, index, count, noise_draws):
        return self.values[index] + self.noise_std * noise_draws[count]


def hypervolume(values, ref_point):
    import torch
    from botorch.utils.multi_objective.hypervolume import Hypervolume
    from botorch.utils.multi_objective.pareto import is_non_dominated

    Y = torch.as_tensor(np.asarray(values), dtype=torch.float64)
    Y = Y[(Y > ref_point).all(dim=-1)]
    if len(Y) == 0:
        return 0.0
    return float(Hypervolume(ref_point).compute(Y[is_non_dominated(Y)]))


def candidate_index(setting, x):
    matches = np.flatnonzero(np.all(setting.unit == np.asarray(x), axis=1))
    return int(matches[0])


def run_manytask(setting, initial, noise_draws, rounds, seed):
    from manytask.bo import MultiTaskBO

    optimizer = MultiTaskBO(candidates=setting.unit, kernel="auto", seed=seed)
    chosen = list(initial)
    for count, index in enumerate(initial):
        optimizer.tell(setting.unit[index], setting.observe(index, count, noise_draws))
    times = []
    for count in range(len(initial), len(initial) + rounds):
        start = time.perf_counter()
        x = optimizer.ask()
        times.append(time.perf_counter() - start)
        index = candidate_index(setting, x)
        y = setting.observe(index, count, noise_draws)
        start = time.perf_counter()
        optimizer.tell(x, y)  # the refit of the round, counted with the ask that follows
        times[-1] += time.perf_counter() - start
        chosen.append(index)
    return chosen, times


def botorch_model(X, Y):
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from gpytorch.mlls import SumMarginalLogLikelihood

    models = [
        SingleTaskGP(X, Y[:, i : i + 1], outcome_transform=Standardize(m=1))
        for i in range(Y.shape[1])
    ]
    model = ModelListGP(*models)
    return model, SumMarginalLogLikelihood(model.likelihood, model)


def botorch_acquisition(method, model, X, ref_point, n_tasks, n_constraints=0):
    import torch
    from botorch.acquisition.logei import qLogNoisyExpectedImprovement
    from botorch.acquisition.multi_objective.logei import (
        qLogNoisyExpectedHypervolumeImprovement,
    )
    from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective
    from botorch.acquisition.objective import GenericMCObjective
    from botorch.sampling.normal import SobolQMCNormalSampler
    from botorch.utils.multi_objective.scalarization import get_chebyshev_scalarization
    from botorch.utils.sampling import sample_simplex

    sampler = SobolQMCNormalSampler(sample_shape=torch.Size([MC_SAMPLES]))
    # outputs after the n_tasks objectives are constraints c ≤ 0 (bench_bo_constraints.py)
    constraints = [lambda Z, j=j: Z[..., j] for j in range(n_tasks, n_tasks + n_constraints)]
    if method == "qLogNEHVI":
        return qLogNoisyExpectedHypervolumeImprovement(
            model=model,
            ref_point=ref_point.tolist(),
            X_baseline=X,
            prune_baseline=True,
            sampler=sampler,
            objective=IdentityMCMultiOutputObjective(list(range(n_tasks))) if constraints else None,
            constraints=constraints or None,
        )
    with torch.no_grad():
        predicted = model.posterior(X).mean[:, :n_tasks]
    weights = sample_simplex(n_tasks, dtype=torch.float64).squeeze()
    scalarize = get_chebyshev_scalarization(weights=weights, Y=predicted)
    objective = GenericMCObjective(lambda Z, X=None: scalarize(Z[..., :n_tasks]))
    return qLogNoisyExpectedImprovement(
        model=model,
        objective=objective,
        X_baseline=X,
        prune_baseline=True,
        sampler=sampler,
        constraints=constraints or None,
    )


def run_botorch(method, setting, initial, noise_draws, rounds, seed, n_constraints=0):
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.optim import optimize_acqf_discrete

    torch.manual_seed(seed)
    choices = torch.as_tensor(setting.unit, dtype=torch.float64)
    chosen = list(initial)
    observed = [setting.observe(index, count, noise_draws) for count, index in enumerate(initial)]
    times = []
    for count in range(len(initial), len(initial) + rounds):
        start = time.perf_counter()
        X = choices[chosen]
        Y = torch.as_tensor(np.array(observed), dtype=torch.float64)
        model, mll = botorch_model(X, Y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_gpytorch_mll(mll)
            n_tasks = Y.shape[1] - n_constraints
            acquisition = botorch_acquisition(
                method, model, X, setting.ref_point, n_tasks, n_constraints
            )
            x, _ = optimize_acqf_discrete(acquisition, q=1, choices=choices)
        times.append(time.perf_counter() - start)
        index = candidate_index(setting, x[0].numpy())
        chosen.append(index)
        observed.append(setting.observe(index, count, noise_draws))
    return chosen, times


def run_one(setting, method, seed, rounds):
    rng = np.random.default_rng([seed, PROBLEMS.index(setting.name)])
    initial = [int(i) for i in rng.choice(N_CANDIDATES, N_INITIAL, replace=False)]
    noise_draws = rng.standard_normal((N_INITIAL + rounds, setting.values.shape[1]))
    if method == "manytask":
        chosen, times = run_manytask(setting, initial, noise_draws, rounds, seed)
    else:
        chosen, times = run_botorch(method, setting, initial, noise_draws, rounds, seed)
    fraction = hypervolume(setting.values[chosen], setting.ref_point) / setting.max_hv
    return {"hv_fraction": fraction, "time_per_iter_s": float(np.mean(times))}


def summarise(records, args):
    rows, verdicts = [], []
    for name in PROBLEMS:
        stats = {}
        done = {
            m: {r["seed"] for r in records if r["problem"] == name and r["method"] == m}
            for m in METHODS
        }
        for method in METHODS:  # each peer on the seeds manytask also finished: means pair up
            paired = done[method] & done["manytask"]
            runs = sorted(
                (r for r in records if r["problem"] == name and r["method"] == method),
                key=lambda r: r["seed"],
            )
            runs = [r for r in runs if r["seed"] in paired]
            if runs:
                hv = np.array([r["hv_fraction"] for r in runs])
                stats[method] = (hv, np.mean([r["time_per_iter_s"] for r in runs]))
        if not stats:
            continue
        cells = [name]
        for method in METHODS:
            if method in stats:
                hv, t = stats[method]
                sd = hv.std(ddof=1) if len(hv) > 1 else float("nan")
                cells += [f"{hv.mean():.3f} ± {sd:.3f} ({len(hv)})", f"{1000 * t:.1f}"]
            else:
                cells += ["—", "—"]
        if "manytask" in stats and "qLogNParEGO" in stats:
            common = sorted(done["manytask"] & done["qLogNParEGO"])
            hv_of = {
                (r["method"], r["seed"]): r["hv_fraction"] for r in records if r["problem"] == name
            }
            hv_m = np.array([hv_of["manytask", seed] for seed in common])
            hv_p = np.array([hv_of["qLogNParEGO", seed] for seed in common])
            t_m, t_p = stats["manytask"][1], stats["qLogNParEGO"][1]
            ratio = t_p / t_m
            hv_ok = hv_m.mean() >= hv_p.mean() - 0.01
            time_ok = ratio >= 50
            cells += [f"{ratio:.0f}×"]
            if "qLogNEHVI" in stats:
                cells += [f"{stats['qLogNEHVI'][1] / t_m:.0f}×"]
            else:
                cells += ["—"]
            cells += [
                f"HV {'met' if hv_ok else 'not met'} ({hv_m.mean() - hv_p.mean():+.3f} on "
                f"{len(common)} seeds; manytask ≥ ParEGO on {int(np.sum(hv_m >= hv_p))}), "
                f"time {'met' if time_ok else 'not met'}"
            ]
            verdicts.append((name, hv_ok, time_ok))
        else:
            cells += ["—", "—", "—"]
        rows.append(cells)
    header = [
        "problem",
        "manytask HV fraction (seeds)",
        "manytask ms/iter",
        "qLogNParEGO HV fraction",
        "qLogNParEGO ms/iter",
        "qLogNEHVI HV fraction",
        "qLogNEHVI ms/iter",
        "ParEGO / manytask time",
        "NEHVI / manytask time",
        "target (HV ≥ ParEGO − 0.01, time ≤ 1/50)",
    ]
    import botorch
    import torch

    seed_list = ", ".join(str(seed) for seed in sorted({r["seed"] for r in records}))
    seed_list += (
        " (each peer's column: its seeds that manytask also ran, count in brackets; manytask's"
        " column: all its seeds)"
    )

    text = f"""## Multi-objective BO end to end against BoTorch (qLogNParEGO, qLogNEHVI)

Measured {machine()}, torch {torch.__version__}, BoTorch {botorch.__version__},
{args.threads} thread(s) for BLAS and torch, on a machine shared with other jobs
(timings are indicative).
`python benchmarks/bench_bo_botorch.py --rounds {args.rounds}`, seeds
{seed_list} (runs accumulate in `--cache`; the table is rendered from it with `--render-only`).

BoTorch's test problems, negated (all objectives maximised): DTLZ2 (d = 6, 2 and 3
objectives), ZDT1 (d = 4), VehicleSafety (d = 5). N = {N_CANDIDATES} fixed scrambled Sobol
candidates; {N_INITIAL} initial random candidates (the same for every method of a seed) +
{args.rounds} rounds of one point; Gaussian observation noise with sd {args.noise} × the
objective's range over the candidates (the same draws for every method). *manytask*:
`MultiTaskBO(candidates=C, kernel="auto")` with its defaults (MT-KB, Chebyshev on the
observed range, ICM kernel refitted every 5 observations). *BoTorch*: ModelListGP of
SingleTaskGP (noise inferred, Standardize) refitted by `fit_gpytorch_mll` every round,
{MC_SAMPLES} QMC samples, `optimize_acqf_discrete` over the same candidates; qLogNParEGO =
qLogNEI of a random Chebyshev scalarisation (BoTorch's tutorial). *HV fraction*: hypervolume
of the noise-free values at the evaluated points / the largest among the {N_CANDIDATES}
candidates, reference point = BoTorch's `problem.ref_point`; mean ± sd over seeds (count in
brackets). *ms/iter*: mean wall time of one round's proposal + model update (refits
included, the objective evaluation excluded).

{markdown_table(header, rows)}
"""
    return text, verdicts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--threads", type=int, default=1, help="BLAS and torch threads")
    parser.add_argument(
        "--cache",
        default=str(Path(__file__).with_name("bench_bo_botorch_runs.jsonl")),
        help="JSON lines of finished runs (committed, so the table can be re-rendered)",
    )
    parser.add_argument("--render-only", action="store_true", help="table from --cache")
    parser.add_argument("--no-write", action="store_true", help="print, leave RESULTS.md")
    args = parser.parse_args()
    cache = Path(args.cache)
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.threads)  # oversubscribed threads slow torch's fits ~10×
    threadpool_limits(args.threads)
    if args.render_only:
        render(cache, args)
        return
    settings = {name: Setting(name, args.noise) for name in args.problems}
    warm_up = next(iter(settings.values()))
    for method in args.methods:  # imports and first-call costs, untimed
        run_one(warm_up, method, seed=10**6, rounds=1)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for name, setting in settings.items():
            for method in args.methods:
                result = run_one(setting, method, seed, args.rounds)
                record = dict(
                    problem=name,
                    method=method,
                    seed=seed,
                    rounds=args.rounds,
                    noise=args.noise,
                    **result,
                )
                print(json.dumps(record), flush=True)
                with cache.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
        render(cache, args)


def render(cache, args):
    records = [json.loads(line) for line in cache.read_text().splitlines() if line]
    records = [r for r in records if r["rounds"] == args.rounds and r["noise"] == args.noise]
    unique = {(r["problem"], r["method"], r["seed"]): r for r in records}
    text, _ = summarise(list(unique.values()), args)
    if args.no_write:
        print(text)
    else:
        write_section("bench_bo_botorch", text)


if __name__ == "__main__":
    main()
