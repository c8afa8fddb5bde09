"""Hypervolume scalarisation (Golovin & Zhang 2020) against Chebyshev on the paper's problems.

``MultiTaskBO.from_problem(problem, "mt-kb", scalarization=..., weights=...)`` on three of
:mod:`manytask.bo.problems` (the known kernel, the paper's radius, the problem's known range
as reference and scale), ``--rounds`` rounds, seeds 0…``--seeds``−1, the same noise draws
(``manytask.bo.run``'s seed) for every method of a seed. Scores: *HV fraction*, the
hypervolume of the noise-free values at the evaluated candidates over the largest among all
candidates (reference point: the minimum of every objective over the candidates); *R_C(T)/T*,
the paper's time-average cumulative regret, each method under its own scalarisation (so
comparable between seeds, not between scalarisations).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import manytask as mt
from manytask.bo.metrics import hypervolume

from _common import machine, markdown_table, write_section

PROBLEMS = {
    "RKHS function (2 tasks)": lambda: mt.bo.problems.rkhs_function(n_tasks=2, seed=0),
    "perturbed sine (4 tasks)": lambda: mt.bo.problems.perturbed_sine(),
    "shifted Branin": lambda: mt.bo.problems.shifted_branin(),
}
METHODS = {
    "Chebyshev, Paria λ (default)": dict(scalarization="chebyshev", weights="paria"),
    "Chebyshev, unit-sphere λ": dict(scalarization="chebyshev", weights="unit-sphere"),
    "hypervolume, unit-sphere λ": dict(scalarization="hypervolume", weights="unit-sphere"),
}


def run(problem, method, seed, rounds):
    optimizer = mt.bo.MultiTaskBO.from_problem(problem, "mt-kb", seed=seed, **METHODS[method])
    result = mt.bo.run(problem, optimizer, budget=rounds, seed=seed, progress=False)
    index = [int(np.flatnonzero(np.all(problem.candidates == x, axis=1))[0]) for x in result.points]
    reference = problem.values.min(axis=0)
    best = hypervolume(problem.values[mt.bo.metrics.pareto_mask(problem.values)], reference)
    fraction = hypervolume(problem.values[index], reference) / best
    return fraction, result.time_average_regret[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="2 seeds, 15 rounds")
    parser.add_argument("--no-write", action="store_true", help="print, leave RESULTS.md")
    args = parser.parse_args()
    if args.quick:
        args.seeds, args.rounds = 2, 15
    load_before, started = os.getloadavg()[0], time.perf_counter()
    rows = []
    for name, make in PROBLEMS.items():
        problem = make()
        for method in METHODS:
            runs = np.array([run(problem, method, seed, args.rounds) for seed in range(args.seeds)])
            (hv, regret), (hv_sd, regret_sd) = runs.mean(axis=0), runs.std(axis=0)
            rows.append(
                [name, method, f"{hv:.3f} ± {hv_sd:.3f}", f"{regret:.4f} ± {regret_sd:.4f}"]
            )
            print(rows[-1], flush=True)
    minutes = (time.perf_counter() - started) / 60
    table = markdown_table(
        ["problem", "scalarisation", "HV fraction", "R_C(T)/T (own units)"], rows
    )
    text = f"""## Hypervolume scalarisation against Chebyshev (MT-KB, the paper's problems)

Measured {machine()}; 1-minute load average {load_before:.1f} at the start.
`python benchmarks/bench_bo_scalarization.py --seeds {args.seeds} --rounds {args.rounds}`,
{minutes:.1f} min. Mean ± sd over seeds; the setting is in the script's docstring.

{table}
"""
    print(text)
    if not args.no_write:
        write_section("bench_bo_scalarization", text)


if __name__ == "__main__":
    main()
