"""Constrained multi-objective BO against BoTorch's constrained qLogNParEGO on C2-DTLZ2.

Protocol of ``bench_bo_botorch.py`` with one black-box constraint: C2-DTLZ2 (d = 6, two
objectives, :func:`manytask.bo.problems.c2_dtlz2`, equal to BoTorch's ``C2DTLZ2``),
objectives negated (maximised), c(x) ≤ 0 feasible; N = 1000 fixed scrambled Sobol candidates
(the same for every seed and method), 6 initial random candidates (the same for every method
of a seed) + ``--rounds`` rounds of one point; Gaussian noise of sd ``--noise`` × the range
over the candidates on the objectives and on the constraint (the same draws for every
method).

* manytask: ``MultiTaskBO(candidates=C, kernel="auto", n_constraints=1)``: the constraint is
  a third task of the learned kernel (the block model of :mod:`manytask.bo.constraints`);
  proposals maximise the scalarised UCB over the optimistic feasible set. Two more rows: the
  same with ``beta=1``, and the same optimiser told the objectives only (no constraint).
* qLogNParEGO: ``qLogNoisyExpectedImprovement`` of a random Chebyshev scalarisation of the
  objectives with ``constraints=[c]`` (BoTorch's constrained multi-objective tutorial), on a
  ModelListGP of three SingleTaskGPs refitted every round, over the same candidates.
* score: feasible hypervolume — of the noise-free values of the evaluated points whose
  noise-free c ≤ 0 — over the largest one among the N candidates, reference point BoTorch's
  (−1.1, −1.1); and the number of feasible points evaluated.

Results go to the cache (JSON lines) and the section of RESULTS.md. Needs the ``bench``
extra.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy.stats import qmc

from bench_bo_botorch import (
    MC_SAMPLES,
    N_CANDIDATES,
    N_INITIAL,
    candidate_index,
    hypervolume,
    run_botorch,
)

from _common import machine, markdown_table, write_section

# manytask's options per row: its defaults, a smaller radius, and the same optimiser told
# the objectives only (no constraint model: what the objectives' UCB alone evaluates)
MANYTASK = {
    # the optimistic feasible set (feasibility="optimistic"), the first default
    "manytask": dict(n_constraints=1, feasibility="optimistic"),
    "manytask, beta=1": dict(n_constraints=1, feasibility="optimistic", beta=1.0),
    "manytask without constraints": dict(n_constraints=0),
    # the objectives' ICM by MAP under BoTorch's priors (bench_bo_botorch's "prior" variant)
    "manytask, beta=1, prior": dict(
        n_constraints=1, feasibility="optimistic", beta=1.0, kernel_prior=True
    ),
    "manytask, beta=1, prior, restarts=2": dict(
        n_constraints=1,
        feasibility="optimistic",
        beta=1.0,
        kernel_prior=True,
        kernel_restarts=2,
    ),  # fmt: skip
    # the UCB's improvement weighted by the probability of feasibility
    "manytask, probability": dict(n_constraints=1, feasibility="probability"),
    "manytask, probability, beta=0.5": dict(n_constraints=1, feasibility="probability", beta=0.5),
    "manytask, probability, beta=2": dict(n_constraints=1, feasibility="probability", beta=2.0),
    "manytask, optimistic probability": dict(n_constraints=1, feasibility="optimistic probability"),
    "manytask, probability, prior": dict(
        n_constraints=1, feasibility="probability", kernel_prior=True
    ),
}
DEFAULT = "manytask, probability"  # MultiTaskBO's default constraint rule
NOTES = ""  # the hand-written analysis below the tables
METHODS = (*MANYTASK, "qLogNParEGO")
DIM, N_OBJECTIVES = 6, 2  # C2-DTLZ2's
PROBLEMS = ("C2-DTLZ2", "ConstrainedBraninCurrin", "DiscBrake", "MW7")
BOTORCH_OPTIONS = {"MW7": dict(dim=6)}  # BoTorch's problems that need a size


class Setting:
    """A constrained problem on N fixed Sobol candidates: noise-free objectives (maximised)
    then constraints (c ≤ 0 feasible), the noise sd, BoTorch's reference point."""

    def __init__(self, noise, name="C2-DTLZ2"):
        import torch

        self.name = name
        if name == "C2-DTLZ2":
            from manytask.bo.problems import c2_dtlz2

            self.unit = qmc.Sobol(DIM, scramble=True, seed=0).random(N_CANDIDATES)
            F, c = c2_dtlz2(self.unit, N_OBJECTIVES)
            self.values = np.c_[-F, c]  # objectives maximised, then the constraint
            self.ref_point = torch.full((N_OBJECTIVES,), -1.1, dtype=torch.float64)
        else:  # BoTorch's problem, negated (maximised); c = −slack (slack ≥ 0 feasible)
            from botorch.test_functions import multi_objective

            problem = getattr(multi_objective, name)(negate=True, **BOTORCH_OPTIONS.get(name, {}))
            problem = problem.to(torch.float64)
            self.unit = qmc.Sobol(problem.dim, scramble=True, seed=0).random(N_CANDIDATES)
            lower, upper = problem.bounds.numpy()
            X = torch.as_tensor(lower + self.unit * (upper - lower))
            with torch.no_grad():
                F, slack = problem(X, noise=False), problem.evaluate_slack_true(X)
            self.values = np.c_[F.numpy(), -slack.numpy()]
            self.ref_point = problem.ref_point.clone()
        self.n_objectives = len(self.ref_point)
        self.n_constraints = self.values.shape[1] - self.n_objectives
        self.feasible = np.all(self.values[:, self.n_objectives :] <= 0, axis=1)
        self.noise_std = noise * (self.values.max(axis=0) - self.values.min(axis=0))
        self.max_hv = self.feasible_hv(np.flatnonzero(self.feasible))

    def observe(self, index, count, noise_draws):
        return self.values[index] + self.noise_std * noise_draws[count]

    def feasible_hv(self, chosen):
        chosen = [i for i in chosen if self.feasible[i]]
        return hypervolume(self.values[chosen, : self.n_objectives], self.ref_point)


def run_manytask(setting, initial, noise_draws, rounds, seed, options):
    from manytask.bo import MultiTaskBO

    options = dict(options)
    if options["n_constraints"]:
        options["n_constraints"] = setting.n_constraints
    optimizer = MultiTaskBO(candidates=setting.unit, kernel="auto", seed=seed, **options)
    n = setting.n_objectives
    told = n + options["n_constraints"]
    for count, index in enumerate(initial):
        y = setting.observe(index, count, noise_draws)
        optimizer.tell(setting.unit[index], y[:n], constraints=y[n:told])
    chosen, times = list(initial), []
    for count in range(len(initial), len(initial) + rounds):
        start = time.perf_counter()
        x = optimizer.ask()
        elapsed = time.perf_counter() - start
        index = candidate_index(setting, x)
        y = setting.observe(index, count, noise_draws)
        start = time.perf_counter()
        optimizer.tell(x, y[:n], constraints=y[n:told])
        times.append(elapsed + time.perf_counter() - start)
        chosen.append(index)
    return chosen, times


def run_one(setting, method, seed, rounds):
    key = [seed, 27] + ([PROBLEMS.index(setting.name)] if setting.name != "C2-DTLZ2" else [])
    rng = np.random.default_rng(key)
    initial = [int(i) for i in rng.choice(N_CANDIDATES, N_INITIAL, replace=False)]
    noise_draws = rng.standard_normal((N_INITIAL + rounds, setting.values.shape[1]))
    if method in MANYTASK:
        chosen, times = run_manytask(setting, initial, noise_draws, rounds, seed, MANYTASK[method])
    else:  # bench_bo_botorch's loop, the last output a constraint
        chosen, times = run_botorch(
            method, setting, initial, noise_draws, rounds, seed, setting.n_constraints
        )
    return {
        "hv_fraction": setting.feasible_hv(chosen) / setting.max_hv,
        "n_feasible": int(setting.feasible[chosen].sum()),
        "time_per_iter_s": float(np.mean(times)),
    }


def problem_table(records, problem):
    """Rows (method, seeds, feasible HV fraction, feasible points, ms/iter) and the win count
    of the default against qLogNParEGO on their common seeds."""
    runs_of = {
        m: [r for r in records if r["problem"] == problem and r["method"] == m] for m in METHODS
    }
    rows = []
    for method, runs in runs_of.items():
        if not runs:
            continue
        hv = np.array([r["hv_fraction"] for r in runs])
        sd = hv.std(ddof=1) if len(hv) > 1 else float("nan")
        feasible = np.mean([r["n_feasible"] for r in runs])
        t = 1000 * np.mean([r["time_per_iter_s"] for r in runs])
        loads = [r["load"] for r in runs]
        rows.append(
            [method, len(runs), f"{hv.mean():.3f} ± {sd:.3f}", f"{feasible:.1f}", f"{t:.0f}",
             f"{min(loads):.0f}–{max(loads):.0f}"]
        )  # fmt: skip
    hv_of = {(r["method"], r["seed"]): r["hv_fraction"] for r in records if r["problem"] == problem}
    common = sorted(s for m, s in hv_of if m == DEFAULT and ("qLogNParEGO", s) in hv_of)
    wins = sum(hv_of[DEFAULT, s] >= hv_of["qLogNParEGO", s] for s in common)
    return rows, wins, len(common)


def render(records, args):
    import botorch
    import torch

    header = ["method", "seeds", "feasible HV fraction", "feasible points", "ms/iter", "load"]
    tables = []
    for problem in PROBLEMS:
        if not any(r["problem"] == problem for r in records):
            continue
        setting = Setting(args.noise, problem)
        rows, wins, common = problem_table(records, problem)
        tables.append(
            f"**{problem}** (d = {setting.unit.shape[1]}, {setting.n_objectives} objectives, "
            f"{setting.n_constraints} constraint(s), {100 * setting.feasible.mean():.1f} % of the "
            f"candidates feasible; *{DEFAULT}* ≥ qLogNParEGO on {wins} of {common} common "
            f"seeds)\n\n{markdown_table(header, rows)}"
        )
    tables = "\n\n".join(tables)
    return f"""## Constrained multi-objective BO against constrained qLogNParEGO

Measured {machine()}, torch {torch.__version__}, BoTorch {botorch.__version__}, 1 thread,
on a machine shared with other jobs (1-minute load average per row in the last column:
timings are indicative only, and rows measured at different loads are not comparable).
`python benchmarks/bench_bo_constraints.py --problem P --rounds {args.rounds}`; every row
gives its number of seeds (0, 1, …).

Protocol of `bench_bo_botorch.py`: N = {N_CANDIDATES} fixed scrambled Sobol candidates,
{N_INITIAL} initial random candidates + {args.rounds} rounds of one point, noise sd
{args.noise} × range on objectives and constraints. Problems: C2-DTLZ2
(`manytask.bo.problems.c2_dtlz2`, BoTorch's `C2DTLZ2`) and BoTorch's constrained problems
(negated, c = −slack). *manytask*: `MultiTaskBO(candidates=C, kernel="auto",
n_constraints=m)`, the constraints further tasks of the learned kernel (the block model of
`manytask.bo.constraints`); *optimistic*: UCB over the optimistic feasible set
(`feasibility="optimistic"`); *probability*: the UCB's improvement on the best feasible
observation weighted by the probability of feasibility (`feasibility="probability"`);
*without constraints*: the same optimiser told the objectives only. *qLogNParEGO*: qLogNEI
of a random Chebyshev scalarisation with `constraints=[c_j]`, ModelListGP of SingleTaskGPs
refitted every round, {MC_SAMPLES} QMC samples. *Feasible HV fraction*: hypervolume of the
truly feasible evaluated points (noise-free values) over the best feasible one among the
candidates, BoTorch's reference point; mean ± sd over seeds. *Feasible points*: truly
feasible points among the {N_INITIAL} + {args.rounds} evaluated (mean).

{tables}

{NOTES}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--problem", default="C2-DTLZ2", choices=PROBLEMS)
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument(
        "--cache", default=str(Path(__file__).with_name("bench_bo_constraints_runs.jsonl"))
    )
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    cache = Path(args.cache)
    setting = Setting(args.noise, args.problem)
    if not args.render_only:
        for method in args.methods:  # imports and first-call costs, untimed, not recorded
            run_one(setting, method, seed=10**6, rounds=1)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for method in args.methods:
                record = dict(method=method, seed=seed, rounds=args.rounds, noise=args.noise)
                record["problem"] = args.problem
                record.update(run_one(setting, method, seed, args.rounds))
                record["load"] = os.getloadavg()[0]
                print(json.dumps(record), flush=True)
                with cache.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
    records = [json.loads(line) for line in cache.read_text().splitlines() if line]
    records = [r for r in records if r["rounds"] == args.rounds and r["noise"] == args.noise]
    for r in records:  # the first runs, before other problems, were C2-DTLZ2's
        r.setdefault("problem", "C2-DTLZ2")
    records = list({(r["problem"], r["method"], r["seed"]): r for r in records}.values())
    write_section("bench_bo_constraints", render(records, args))


if __name__ == "__main__":
    main()
