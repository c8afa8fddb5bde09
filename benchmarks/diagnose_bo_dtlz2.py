"""Why MultiTaskBO trails qLogNParEGO on DTLZ2 (2 obj., d = 6): model or acquisition?

The protocol of bench_bo_botorch.py (same candidates, initial points, noise draws and HV
fraction), DTLZ2 with 2 objectives at one noise level, on ``--seeds`` seeds:

* ``oracle``: the Chebyshev scalarisation on the observed range, maximised on the noise-free
  objectives (no model): what the scalarisation and the weights can reach;
* ``manytask``: ``MultiTaskBO(candidates=C, kernel="auto", beta=β, refit_every=2)`` for
  every β of ``--betas`` (the ICM model and the Chebyshev UCB);
* ``botorch model``: the same acquisition, u = s_λ(μ) + L_λ β max_i σ_i (the ‖Γ(x, x)‖^{1/2}
  of independent GPs), on BoTorch's posterior (ModelListGP of SingleTaskGP, refitted every
  round as in bench_bo_botorch.py): if the HV fraction jumps, the model is the cause;
* the g = Σ_{i≥2} (x_i − ½)² of the proposals (the distance to the front), beside the
  candidates' median;
* ``--model``: after 4 and after 40 rounds of the default, both models' posterior of f over
  all candidates: RMSE and mean sd (in units of the observed sd), coverage of ±2σ.

Figures and their reading: docs/results/bo-dtlz2/results.md. Needs the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import bench_bo_botorch as bench

PROBLEM = "DTLZ2 (2 obj.)"


def initial_design(setting, seed, rounds):
    rng = np.random.default_rng([seed, bench.PROBLEMS.index(PROBLEM)])
    initial = [int(i) for i in rng.choice(bench.N_CANDIDATES, bench.N_INITIAL, replace=False)]
    return initial, rng.standard_normal((bench.N_INITIAL + rounds, setting.values.shape[1]))


def distance_to_front(unit):
    return ((unit[:, 1:] - 0.5) ** 2).sum(axis=1)


def fraction(setting, chosen):
    return bench.hypervolume(setting.values[chosen], setting.ref_point) / setting.max_hv


def oracle(setting, seed, rounds):
    from manytask.bo.scalarization import make_scalarization

    chosen, _ = initial_design(setting, seed, rounds)
    rng = np.random.default_rng([seed, 7])
    for _ in range(rounds):
        scalarization = make_scalarization("chebyshev", "observed").fitted(setting.values[chosen])
        u = scalarization(setting.values, rng.dirichlet(np.ones(2)))
        u[chosen] = -np.inf
        chosen.append(int(np.argmax(u)))
    return chosen


def manytask(setting, seed, rounds, beta):
    config = dict(bench.MANYTASK_BASE, beta=beta, refit_every=2)
    initial, draws = initial_design(setting, seed, rounds)
    chosen, _ = bench.run_manytask(setting, initial, draws, rounds, seed, config)
    return chosen


def fit_botorch(X, Y):
    import torch
    from botorch.fit import fit_gpytorch_mll

    model, mll = bench.botorch_model(torch.as_tensor(X), torch.as_tensor(Y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(mll)
    return model


def botorch_posterior(model, X):
    import torch

    with torch.no_grad():
        posterior = model.posterior(torch.as_tensor(X))
        return posterior.mean.numpy(), posterior.variance.clamp_min(1e-12).sqrt().numpy()


def botorch_model_run(setting, seed, rounds, beta):
    from manytask.bo.scalarization import make_scalarization

    chosen, draws = initial_design(setting, seed, rounds)
    observed = [setting.observe(i, count, draws) for count, i in enumerate(chosen)]
    rng = np.random.default_rng([seed, 7])
    for count in range(bench.N_INITIAL, bench.N_INITIAL + rounds):
        model = fit_botorch(setting.unit[chosen], np.array(observed))
        mean, sd = botorch_posterior(model, setting.unit)
        weights = rng.dirichlet(np.ones(2))
        scalarization = make_scalarization("chebyshev", "observed").fitted(np.array(observed))
        width = scalarization.lipschitz(weights) * beta * sd.max(axis=1)
        u = scalarization(mean, weights) + width
        u[chosen] = -np.inf
        chosen.append(int(np.argmax(u)))
        observed.append(setting.observe(chosen[-1], count, draws))
    return chosen


def model_quality(setting, seeds):
    from manytask.bo import MultiTaskBO

    rows = []
    for seed in seeds:
        for rounds in (4, 40):
            initial, draws = initial_design(setting, seed, rounds)
            config = dict(bench.MANYTASK_BASE, beta=1.0, refit_every=2)
            optimizer = MultiTaskBO(candidates=setting.unit, kernel="auto", seed=seed, **config)
            for count, i in enumerate(initial):
                optimizer.tell(setting.unit[i], setting.observe(i, count, draws))
            for count in range(bench.N_INITIAL, bench.N_INITIAL + rounds):
                x = optimizer.ask()
                i = bench.candidate_index(setting, x)
                optimizer.tell(x, setting.observe(i, count, draws))
            learned, posterior = optimizer._learned, optimizer._policy.posterior
            mean = posterior.mean(None) * learned.scale_ + learned.mean_
            variance = np.diagonal(posterior.cov(setting.unit), axis1=1, axis2=2)
            sd = np.sqrt(np.maximum(variance, 1e-300)) * learned.scale_
            model = fit_botorch(optimizer.X_, optimizer.Y_)
            for name, (m, s) in (
                ("manytask ICM", (mean, sd)),
                ("BoTorch", botorch_posterior(model, setting.unit)),
            ):
                unit = optimizer.Y_.std(axis=0)
                error = (setting.values - m) / unit
                cover = np.abs(setting.values - m) <= 2 * s
                rows.append(
                    [seed, len(optimizer.X_), name, fit_text(optimizer, name)]
                    + [
                        " / ".join(f"{v:.2f}" for v in values)
                        for values in (
                            np.sqrt((error**2).mean(axis=0)),
                            (s / unit).mean(axis=0),
                            cover.mean(axis=0),
                        )
                    ]  # fmt: skip
                )
    return rows


def fit_text(optimizer, name):
    if name != "BoTorch":
        fit = optimizer._learned.fit_
        return f"ℓ = {np.round(fit.lengthscales, 2).tolist()}, η = {fit.noise:.2g}"
    return ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--betas", type=float, nargs="*", default=[1.0, 0.0])
    parser.add_argument("--model", action="store_true", help="the posterior-quality table")
    parser.add_argument("--no-botorch", action="store_true", help="skip the BoTorch runs")
    args = parser.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    setting = bench.Setting(PROBLEM, args.noise)
    g = distance_to_front(setting.unit)
    seeds = range(args.seeds)
    print(f"candidates: median g {np.median(g):.3f}; noise {args.noise}")
    methods = {"oracle (noise-free f)": lambda s: oracle(setting, s, args.rounds)}
    for beta in args.betas:
        methods[f"manytask, β = {beta:g}"] = lambda s, b=beta: manytask(setting, s, args.rounds, b)
        if not args.no_botorch:
            methods[f"BoTorch model, β = {beta:g}"] = lambda s, b=beta: botorch_model_run(
                setting, s, args.rounds, b
            )
    print("| method | HV fraction per seed | mean | median g of the proposals |")
    print("|---|---|---|---|")
    for name, method in methods.items():
        runs = [method(seed) for seed in seeds]
        hv = [fraction(setting, chosen) for chosen in runs]
        picks = np.concatenate([g[chosen[bench.N_INITIAL :]] for chosen in runs])
        per_seed = ", ".join(f"{v:.3f}" for v in hv)
        print(f"| {name} | {per_seed} | {np.mean(hv):.3f} | {np.median(picks):.3f} |")
    if args.model:
        print("| seed | t | model | fit | RMSE / sd (f₁ / f₂) | mean posterior sd | ±2σ coverage |")
        print("|---|---|---|---|---|---|---|")
        for row in model_quality(setting, seeds):
            print("| " + " | ".join(str(v) for v in row) + " |")


if __name__ == "__main__":
    main()
