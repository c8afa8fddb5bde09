"""MultiTaskBO on a box: ``bench_bo_botorch.py``'s problems with ``bounds`` instead of candidates.

What an Optuna study (``MultiTaskSampler``) or any continuous search meets: each proposal
maximises the acquisition over the unit cube (Sobol starts + L-BFGS-B, ``search.py``), not
over 1000 fixed candidates. Same protocol otherwise: the 12 problems of
``bench_bo_botorch.py`` (negated, maximised), 6 initial uniform points + ``--rounds`` rounds,
Gaussian noise of sd *noise* × each objective's range over that script's candidates, the same
initial points and noise draws for every configuration of a seed. *HV fraction*: hypervolume
of the noise-free values at the evaluated points over the largest among that script's 1000
candidates (so a box run can pass 1), the same reference points. Runs accumulate in
``bench_bo_box_runs.jsonl`` (one line per (problem, noise, configuration, seed), never rerun);
``--render-only`` rewrites the RESULTS.md block. Needs the ``bench`` extra (BoTorch's
problems).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from bench_bo_botorch import NOISES, PROBLEMS, Setting, hypervolume

from _common import machine, markdown_table, write_section

N_INITIAL = 6
# MultiTaskBO options per configuration, beside its defaults (each run records the resolved
# acquisition and scalarisation): the expected improvement of the Gaussian bound, of the
# Gaussian with s_λ's moments, and sampled, with the objectives' ICM (objective_model pinned
# when "auto" became the default, so that the cached runs keep their meaning); and the
# moments' EI with the objectives' model chosen at every refit, and with one GP per objective
CONFIGS = {
    "ei": dict(acquisition="ei", objective_model="icm"),
    "moment-ei": dict(acquisition="moment-ei", objective_model="icm"),
    "mc-ei": dict(acquisition="mc-ei", objective_model="icm"),
    "moment-ei, auto model": dict(acquisition="moment-ei", objective_model="auto"),
    "moment-ei, independent GPs": dict(acquisition="moment-ei", objective_model="independent"),
}


def run_one(setting, config, seed, rounds):
    import torch

    from manytask.bo import MultiTaskBO

    problem = setting.problem
    d = problem.dim
    low, high = (b.to(torch.float64) for b in problem.bounds)
    rng = np.random.default_rng([seed, PROBLEMS.index(setting.name)])
    initial = rng.random((N_INITIAL, d))
    noise = rng.standard_normal((N_INITIAL + rounds, setting.values.shape[1]))

    def values(u):
        with torch.no_grad():
            return problem(low + (high - low) * torch.as_tensor(u)[None], noise=False).numpy()[0]

    optimizer = MultiTaskBO(bounds=[[0.0, 1.0]] * d, kernel="auto", seed=seed, **CONFIGS[config])
    points = list(initial)
    for count, u in enumerate(initial):
        optimizer.tell(u, values(u) + setting.noise_std * noise[count])
    times = []
    for count in range(N_INITIAL, N_INITIAL + rounds):
        start = time.process_time()
        u = optimizer.ask()
        times.append(time.process_time() - start)
        y = values(u) + setting.noise_std * noise[count]
        start = time.process_time()
        optimizer.tell(u, y)
        times[-1] += time.process_time() - start
        points.append(u)
    true = np.array([values(u) for u in points])
    return {
        "hv_fraction": hypervolume(true, setting.ref_point) / setting.max_hv,
        "cpu_per_round_s": float(np.mean(times)),
        "acquisition": optimizer.acquisition,
        "scalarization": optimizer.scalarization.name,
    }


def render(records, args):
    cells = {}
    for r in records:
        cells.setdefault((r["problem"], r["noise"]), {}).setdefault(r["config"], {})[r["seed"]] = r
    others = [c for c in CONFIGS if c != "ei"]  # each against the bound's EI
    rows, diffs = [], {c: [] for c in others}
    for noise in sorted({n for _, n in cells}, reverse=True):
        for problem in PROBLEMS:
            runs = cells.get((problem, noise), {})
            if not all(c in runs for c in CONFIGS):
                continue
            seeds = sorted(set.intersection(*(set(runs[c]) for c in CONFIGS)))
            hv = {c: np.array([runs[c][s]["hv_fraction"] for s in seeds]) for c in CONFIGS}
            gaps = {c: hv[c] - hv["ei"] for c in others}
            for c in others:
                diffs[c].append(gaps[c].mean())
            ms = {
                c: 1000 * np.mean([runs[c][s]["cpu_per_round_s"] for s in seeds]) for c in CONFIGS
            }
            rows.append(
                [problem, f"{noise:g}", str(len(seeds))]
                + [f"{hv[c].mean():.3f} ± {hv[c].std():.3f}" for c in CONFIGS]
                + [
                    f"{gaps[c].mean():+.3f} ± {gaps[c].std(ddof=1) / np.sqrt(len(seeds)):.3f}"
                    for c in others
                ]
                + [f"{ms[c]:.0f}" for c in CONFIGS]
            )
    header = (
        ["problem", "noise", "seeds"]
        + [f"{c} HV fraction" for c in CONFIGS]
        + [f"{c} − ei (paired ± s.e.)" for c in others]
        + [f"{c} CPU ms/round" for c in CONFIGS]
    )
    resolved = {r["config"]: f"{r['acquisition']}, {r['scalarization']}" for r in records}
    summary = " ".join(
        f"Over the {len(d)} cells: {c} − ei {np.mean(d):+.4f} ± "
        f"{np.std(d, ddof=1) / np.sqrt(len(d)):.4f} (cell means), ahead on "
        f"{int((np.array(d) > 0).sum())} cells."
        for c, d in diffs.items()
        if len(d) > 1
    )
    return f"""## Multi-objective BO on a box: the expected improvement's three estimates

Measured {machine()}, one thread. `python benchmarks/bench_bo_box.py` ({args.rounds}
rounds): `MultiTaskBO(bounds=unit cube, kernel="auto")` on the 12 problems of
`bench_bo_botorch.py`, the proposals maximised over the box (1024 Sobol starts, L-BFGS-B).
*ei*: `acquisition="ei"` (the EI of the Gaussian bound; {resolved.get("ei", "—")}),
*moment-ei*: `acquisition="moment-ei"` (of the Gaussian with s_λ's moments;
{resolved.get("moment-ei", "—")}), *mc-ei*: `acquisition="mc-ei"` (sampled;
{resolved.get("mc-ei", "—")}), each with the objectives' ICM (`objective_model="icm"`, the
default until 2026-12-05 17:00); *moment-ei, auto model*: moment-ei with the objectives'
model chosen at every refit (`objective_model="auto"`, the default since). The other options
MultiTaskBO's defaults. HV fraction
against the largest hypervolume among that script's 1000 candidates (a box run can pass
1); mean ± sd over seeds; CPU ms per round: ask + tell.

{markdown_table(header, rows)}

{summary}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--noise", type=float, nargs="*", default=list(NOISES))
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--cache", default=str(Path(__file__).with_name("bench_bo_box_runs.jsonl")))
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="print, leave RESULTS.md")
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    cache = Path(args.cache)

    def cached():
        if not cache.exists():
            return []
        return [json.loads(line) for line in cache.read_text().splitlines() if line]

    if not args.render_only:
        settings = {}
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for noise in args.noise:
                for name in args.problems:
                    for config in args.configs:
                        done = {(r["problem"], r["noise"], r["config"], r["seed"], r["rounds"])
                                for r in cached()}  # fmt: skip
                        if (name, noise, config, seed, args.rounds) in done:
                            continue
                        if (name, noise) not in settings:
                            settings[name, noise] = Setting(name, noise)
                        result = run_one(settings[name, noise], config, seed, args.rounds)
                        record = dict(problem=name, noise=noise, config=config, seed=seed,
                                      rounds=args.rounds, **result,
                                      load=round(os.getloadavg()[0], 2))  # fmt: skip
                        print(json.dumps(record), flush=True)
                        with cache.open("a") as handle:
                            handle.write(json.dumps(record) + "\n")
    records = [r for r in cached() if r["rounds"] == args.rounds]
    text = render(records, args)
    if args.no_write:
        print(text)
    else:
        write_section("bench_bo_box", text)


if __name__ == "__main__":
    main()
