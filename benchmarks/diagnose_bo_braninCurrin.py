"""Where MultiTaskBO's random scalarisations send its proposals on BraninCurrin and
CarSideImpact, against qLogNParEGO's.

The protocol of bench_bo_botorch.py (same candidates, initial points, noise draws and HV
fraction against BoTorch's reference point). Two parts:

* ``--oracle``: for every form of the scalarisation (Chebyshev or augmented Chebyshev; z at
  the observed minimum, MultiTaskBO's ``reference="observed"``, or at the maximum,
  ``"ideal"``, qLogNParEGO's form) and every weight distribution (``"paria"``,
  ``"dirichlet"``: uniform on the simplex, as BoTorch's ``sample_simplex``), 4000 draws of λ
  maximised over the noise-free values of all 1000 candidates, normalised by their range
  (what the observed range tends to): the share of maximisers that count in the
  hypervolume (above the reference point in every objective) and that are Pareto optimal;
  no model, so this is what the scalarisation and the weights alone can reach;
* ``--runs``: BraninCurrin, seeds ``--seeds`` at both noise levels, for the manytask
  configurations of ``--methods`` (keys of bench_bo_botorch.VARIANTS) and qLogNParEGO: the HV
  fraction, how many of the 40 proposals count in the hypervolume, and a figure of the
  proposals over the candidates' front and the reference point (``--figure``);
* ``--screen``: every configuration of ``--methods`` paired with the default over the seeds
  both ran in the runs of ``--caches`` (bench_bo_botorch's cache, and the extra seeds kept
  beside the results): per cell the mean difference ± its standard error, over the cells
  their mean ± s.e. (the cells' variances summed), and the cells ≥ qLogNParEGO − 0.01.

Figures and their reading: docs/results/bo-braninCurrin/results.md. Needs the ``bench``
extra.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import bench_bo_botorch as bench

from _common import markdown_table

DEFAULT = "mt refit_every=2, prior, EI"


def oracle_table(names, draws=4000):
    from manytask.bo.metrics import pareto_mask
    from manytask.bo.scalarization import make_scalarization
    from manytask.simplex import WEIGHT_DISTRIBUTIONS

    rows = []
    for name in names:
        setting = bench.Setting(name, 0.01)
        values, n = setting.values, setting.values.shape[1]
        counts = np.all(values > setting.ref_point.numpy(), axis=1)
        front = pareto_mask(values)
        for form in ("chebyshev", "augmented-chebyshev"):
            for reference in ("observed", "ideal"):
                for weights in ("paria", "dirichlet"):
                    rng = np.random.default_rng(0)
                    sample = WEIGHT_DISTRIBUTIONS[weights]
                    W = np.array([sample(rng, n) for _ in range(draws)])
                    S = make_scalarization(form, reference).fitted(values)(values, W)
                    best = S.max(axis=1, keepdims=True)
                    ties = S >= best - 1e-12 * np.maximum(1.0, np.abs(best))
                    share = ties / ties.sum(axis=1, keepdims=True)  # ties split evenly
                    rows.append([
                        name, form, reference, weights,
                        f"{(share * counts).sum(axis=1).mean():.2f}",
                        f"{(share * front).sum(axis=1).mean():.2f}",
                        f"{ties.sum(axis=1).mean():.1f}",
                    ])  # fmt: skip
    header = [
        "problem", "scalarisation", "reference", "weights",
        "maximiser counts in HV", "maximiser Pareto optimal", "maximisers per draw (ties)",
    ]  # fmt: skip
    return markdown_table(header, rows)


def run(setting, method, seed, rounds):
    rng = np.random.default_rng([seed, bench.PROBLEMS.index(setting.name)])
    initial = [int(i) for i in rng.choice(bench.N_CANDIDATES, bench.N_INITIAL, replace=False)]
    draws = rng.standard_normal((bench.N_INITIAL + rounds, setting.values.shape[1]))
    if method in bench.VARIANTS:
        chosen, _ = bench.run_manytask(
            setting, initial, draws, rounds, seed, bench.manytask_config(method)
        )
    else:
        chosen, _ = bench.run_botorch(method, setting, initial, draws, rounds, seed)
    return chosen


def runs_table(methods, seeds, rounds, figure):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from manytask.bo.metrics import pareto_mask

    keys = [(noise, seed) for noise in bench.NOISES for seed in seeds]
    fig, axes = plt.subplots(len(methods), len(keys), figsize=(4 * len(keys), 3.6 * len(methods)),
                             sharex=True, sharey=True, squeeze=False)  # fmt: skip
    rows = []
    for column, (noise, seed) in enumerate(keys):
        setting = bench.Setting("BraninCurrin", noise)
        minimised = -setting.values  # Branin and Currin as BoTorch states them
        ref = -setting.ref_point.numpy()
        front = minimised[pareto_mask(setting.values)]
        front = front[np.argsort(front[:, 0])]
        for row, method in enumerate(methods):
            chosen = run(setting, method, seed, rounds)
            hv = bench.hypervolume(setting.values[chosen], setting.ref_point) / setting.max_hv
            proposals = minimised[chosen[bench.N_INITIAL :]]
            counts = np.all(proposals < ref, axis=1)
            rows.append([
                f"{noise:g}", seed, method, f"{hv:.3f}", f"{counts.sum()}",
                f"{np.sum(proposals[:, 0] < ref[0])}", f"{np.sum(proposals[:, 1] < ref[1])}",
                f"{len(set(chosen[bench.N_INITIAL:]))}",
            ])  # fmt: skip
            ax = axes[row, column]
            ax.scatter(*minimised.T, s=3, c="0.85")
            ax.plot(*front.T, "k-", lw=1)
            ax.scatter(*proposals.T, s=18, c=np.where(counts, "tab:red", "tab:blue"), marker="x")
            ax.axvline(ref[0], c="g", ls="--", lw=1)
            ax.axhline(ref[1], c="g", ls="--", lw=1)
            ax.set_xscale("symlog", linthresh=20)
            ax.set_title(f"{method}\nnoise {noise:g}, seed {seed}: HV {hv:.3f}", fontsize=8)
            ax.set_xlabel("Branin (minimised)", fontsize=8)
            ax.set_ylabel("Currin (minimised)", fontsize=8)
    fig.tight_layout()
    fig.savefig(figure, dpi=70)
    header = [
        "noise", "seed", "method", "HV fraction", "proposals counting in HV (of 40)",
        "Branin < 18", "Currin < 6", "distinct proposals",
    ]  # fmt: skip
    return markdown_table(header, rows)


def screen_table(methods, caches, first_seed, last_seed):
    import json

    runs = {}
    for cache in caches:
        for line in open(cache).read().splitlines():
            r = json.loads(line) if line else None
            if r and r["rounds"] == 40 and first_seed <= r["seed"] <= last_seed:
                runs[r["problem"], r["noise"], r["method"], r["seed"]] = r["hv_fraction"]
    cells = [(p, n) for n in bench.NOISES for p in bench.PROBLEMS]
    header = ["configuration", "seeds", "mean HV", "default's", "difference ± s.e.",
              "≥ ParEGO − 0.01", "default's", "BraninCurrin 0.05 / 0.01",
              "CarSideImpact 0.05 / 0.01", "worst cell"]  # fmt: skip
    rows = []
    for method in methods:
        means, defaults, diffs, ok, ok_default, per = [], [], [], 0, 0, {}
        for cell in cells:
            seeds = [s for (*c, m, s) in runs if tuple(c) == cell and m == method]
            seeds = [s for s in sorted(seeds) if (*cell, DEFAULT, s) in runs]
            if not seeds:
                continue
            mine = np.array([runs[(*cell, method, s)] for s in seeds])
            base = np.array([runs[(*cell, DEFAULT, s)] for s in seeds])
            means.append(mine.mean())
            defaults.append(base.mean())
            diffs.append(mine - base)
            per[cell] = (mine - base).mean(), (mine - base).std(ddof=1) / np.sqrt(len(seeds))
            peer = [s for s in seeds if (*cell, "qLogNParEGO", s) in runs]
            if peer:
                parego = np.mean([runs[(*cell, "qLogNParEGO", s)] for s in peer])
                ok += np.mean([runs[(*cell, method, s)] for s in peer]) >= parego - 0.01
                ok_default += np.mean([runs[(*cell, DEFAULT, s)] for s in peer]) >= parego - 0.01
        if not diffs:
            continue
        se = np.sqrt(sum(d.var(ddof=1) / len(d) for d in diffs)) / len(diffs)
        worst = min(per, key=lambda c: per[c][0])

        def show(cell, per=per):
            return f"{per[cell][0]:+.3f} ± {per[cell][1]:.3f}" if cell in per else "—"

        rows.append([
            method, f"{min(len(d) for d in diffs)}–{max(len(d) for d in diffs)}",
            f"{np.mean(means):.3f}", f"{np.mean(defaults):.3f}",
            f"{np.mean([d.mean() for d in diffs]):+.4f} ± {se:.4f}",
            f"{ok} of {len(diffs)}", f"{ok_default}",
            f"{show(('BraninCurrin', 0.05))} / {show(('BraninCurrin', 0.01))}",
            f"{show(('CarSideImpact', 0.05))} / {show(('CarSideImpact', 0.01))}",
            f"{worst[0]} {worst[1]:g}: {show(worst)}",
        ])  # fmt: skip
    return markdown_table(header, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", action="store_true", help="the λ-draws table")
    parser.add_argument("--runs", action="store_true", help="BraninCurrin's runs and figure")
    parser.add_argument("--seeds", type=int, nargs="*", default=[1, 3])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--methods", nargs="*", default=[DEFAULT, "qLogNParEGO"])
    parser.add_argument("--figure", default="docs/results/bo-braninCurrin/proposals.png")
    parser.add_argument("--screen", action="store_true", help="the paired screening table")
    parser.add_argument(
        "--caches",
        nargs="*",
        default=[
            "benchmarks/bench_bo_botorch_runs.jsonl",
            "docs/results/bo-braninCurrin/runs_seeds10-29.jsonl",
        ],
    )
    parser.add_argument("--seed-range", type=int, nargs=2, default=[0, 9])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    if args.oracle:
        print(oracle_table(["BraninCurrin", "CarSideImpact"]))
    if args.runs:
        print(runs_table(args.methods, args.seeds, args.rounds, args.figure))
    if args.screen:
        print(screen_table(args.methods, args.caches, *args.seed_range))


if __name__ == "__main__":
    main()
