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
  all candidates: RMSE and mean sd (in units of the observed sd), coverage of ±2σ;
* ``--ablation``: instead, MultiTaskBO's expected improvement on BoTorch's SingleTaskGP with
  one feature at a time changed toward manytask's fit (``FEATURES``).

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


# one feature of BoTorch 0.18's SingleTaskGP (fresh MAP fit every round, RBF of unit
# outputscale on Standardize'd outcomes, learned constant mean, the dimension-scaled
# log-normal lengthscale prior with lengthscales ≥ 0.025, noise prior log-normal(−4, 1)
# with noise ≥ 1e-4) changed toward manytask's fit
FEATURES = {
    "BoTorch SingleTaskGP": "as in bench_bo_botorch.py",
    "learned outputscale": "ScaleKernel around the RBF (no prior on the outputscale)",
    "zero mean": "ZeroMean instead of the learned ConstantMean",
    "warm-started fit": "a fit every 2 rounds from the previous fit's values",
    "no priors": "maximum likelihood: no lengthscale or noise prior, the same constraints",
    "shared lengthscale": "one lengthscale for all inputs (under the same prior)",
    "lengthscale ≤ 10": "the lengthscales in [0.025, 10] (manytask's upper bound)",
}


def ablated_model(X, Y, feature, previous=None):
    """ModelListGP of one SingleTaskGP per objective with ``feature`` changed; ``previous``:
    a fitted model whose hyperparameters start the fit (``"warm-started fit"``)."""
    import torch
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
    from gpytorch.constraints import GreaterThan, Interval
    from gpytorch.kernels import RBFKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.means import ZeroMean
    from gpytorch.mlls import SumMarginalLogLikelihood
    from gpytorch.priors import LogNormalPrior

    X, Y = torch.as_tensor(X), torch.as_tensor(Y)
    d = X.shape[1]
    models = []
    for i in range(Y.shape[1]):
        kwargs = {}
        if feature == "learned outputscale":
            kwargs["covar_module"] = ScaleKernel(get_covar_module_with_dim_scaled_prior(d))
        elif feature == "zero mean":
            kwargs["mean_module"] = ZeroMean()
        elif feature == "no priors":
            kwargs["covar_module"] = RBFKernel(
                ard_num_dims=d, lengthscale_constraint=GreaterThan(2.5e-2, transform=None)
            )
            kwargs["likelihood"] = GaussianLikelihood(
                noise_constraint=GreaterThan(1e-4, transform=None)
            )
        elif feature in ("shared lengthscale", "lengthscale ≤ 10"):
            prior = LogNormalPrior(np.sqrt(2.0) + 0.5 * np.log(d), np.sqrt(3.0))
            constraint = GreaterThan(2.5e-2, transform=None, initial_value=prior.mode)
            if feature == "lengthscale ≤ 10":
                constraint = Interval(2.5e-2, 10.0, transform=None, initial_value=prior.mode)
            kwargs["covar_module"] = RBFKernel(
                ard_num_dims=None if feature == "shared lengthscale" else d,
                lengthscale_prior=prior,
                lengthscale_constraint=constraint,
            )
        model = SingleTaskGP(X, Y[:, i : i + 1], outcome_transform=Standardize(m=1), **kwargs)
        if previous is not None:  # the hyperparameters only, not the outcome transform's
            state = previous.models[i].state_dict()
            model.load_state_dict(
                {k: v for k, v in state.items() if not k.startswith("outcome_transform")},
                strict=False,
            )
        models.append(model)
    model = ModelListGP(*models)
    return model, SumMarginalLogLikelihood(model.likelihood, model)


def botorch_ei_run(setting, seed, rounds, feature):
    """MultiTaskBO's acquisition (the expected improvement of the Chebyshev scalarisation on
    the observed range, paria weights, width L_λ max_i σ_i, incumbent the best s_λ(μ) at the
    observations) on the posterior of ``ablated_model(..., feature)``."""
    from botorch.fit import fit_gpytorch_mll

    from manytask.bo.policies import expected_improvement
    from manytask.bo.scalarization import make_scalarization
    from manytask.simplex import weight_sampler

    chosen, draws = initial_design(setting, seed, rounds)
    observed = [setting.observe(i, count, draws) for count, i in enumerate(chosen)]
    rng = np.random.default_rng([seed, 7])
    sample = weight_sampler("paria", 2)
    previous = None
    for count in range(bench.N_INITIAL, bench.N_INITIAL + rounds):
        warm = feature == "warm-started fit" and previous is not None
        model, mll = ablated_model(
            setting.unit[chosen], np.array(observed), feature, previous if warm else None
        )
        if not warm or (count - bench.N_INITIAL) % 2 == 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit_gpytorch_mll(mll)
        previous = model
        mean, sd = botorch_posterior(model, setting.unit)
        weights = sample(rng, 2)
        scalarization = make_scalarization("chebyshev", "observed").fitted(np.array(observed))
        width = scalarization.lipschitz(weights) * sd.max(axis=1)
        best = scalarization(mean[chosen], weights).max()
        u = expected_improvement(scalarization(mean, weights), width, best)
        u[chosen] = -np.inf
        chosen.append(int(np.argmax(u)))
        observed.append(setting.observe(chosen[-1], count, draws))
    return chosen


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
    parser.add_argument(
        "--ablation",
        nargs="*",
        choices=list(FEATURES),
        help="instead of the tables above: MultiTaskBO's expected improvement on BoTorch's "
        "SingleTaskGP with each of these features changed (FEATURES)",
    )
    args = parser.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    setting = bench.Setting(PROBLEM, args.noise)
    g = distance_to_front(setting.unit)
    seeds = range(args.seeds)
    print(f"candidates: median g {np.median(g):.3f}; noise {args.noise}")
    if args.ablation is not None:
        print("| model (BoTorch's, one feature changed) | HV fraction per seed | mean |")
        print("|---|---|---|")
        for feature in args.ablation or FEATURES:
            hv = [
                fraction(setting, botorch_ei_run(setting, s, args.rounds, feature)) for s in seeds
            ]
            per_seed = ", ".join(f"{v:.3f}" for v in hv)
            print(f"| {feature} | {per_seed} | {np.mean(hv):.3f} |", flush=True)
        return
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
