"""Why the time ratio of ``bench_bo_botorch.py`` differs between problems: one round's parts.

For each problem of the suite, on the same 6 + ``--observed`` noisy observations (seed 0's
initial points, then random candidates), in one process, on the same threads, the two sides
are timed in turn, ``--repeats`` times each:

* manytask (``MultiTaskBO(candidates=C, kernel="auto")`` with its defaults): ``ask`` +
  ``tell`` of ``refit_every`` consecutive rounds, split into the rounds whose ``tell`` refits
  the ICM kernel and the others (the acquisition over the N candidates alone);
* BoTorch: the fit of the ModelListGP (``fit_gpytorch_mll``, one GP per objective), then
  each acquisition (qLogNParEGO, qLogNEHVI) built and maximised over the candidates by
  ``optimize_acqf_discrete``.

The 1-minute load average is printed beside every problem. Needs the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from bench_bo_botorch import (
    N_CANDIDATES,
    N_INITIAL,
    PROBLEMS,
    Setting,
    botorch_acquisition,
    botorch_model,
)

from _common import machine, markdown_table, write_section


def observed_data(setting, n_observed):
    rng = np.random.default_rng([0, PROBLEMS.index(setting.name)])
    indices = rng.choice(N_CANDIDATES, N_INITIAL + n_observed + 20, replace=False)
    noise = rng.standard_normal((len(indices), setting.values.shape[1]))
    Y = setting.values[indices] + setting.noise_std * noise
    return indices, Y


def time_manytask(setting, indices, Y, n_observed):
    """Seconds of every ask + tell after the first N_INITIAL + n_observed observations, and
    whether that tell refitted the kernel."""
    from manytask.bo import MultiTaskBO

    optimizer = MultiTaskBO(candidates=setting.unit, kernel="auto", seed=0)
    for index, y in zip(indices[: N_INITIAL + n_observed], Y):
        optimizer.tell(setting.unit[index], y)
    times, refits = [], []
    for index, y in zip(indices[N_INITIAL + n_observed :], Y[N_INITIAL + n_observed :]):
        start = time.perf_counter()
        optimizer.ask()
        middle = time.perf_counter()
        optimizer.tell(setting.unit[index], y)  # a fixed point: the same data for both sides
        end = time.perf_counter()
        times.append(end - start)
        refits.append(end - middle > 5 * (middle - start))
    return np.array(times), np.array(refits)


def time_botorch(setting, indices, Y, n_observed):
    """Seconds of the model fit and of each acquisition's build + discrete maximisation."""
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.optim import optimize_acqf_discrete

    torch.manual_seed(0)
    choices = torch.as_tensor(setting.unit, dtype=torch.float64)
    X = choices[indices[: N_INITIAL + n_observed]]
    Yt = torch.as_tensor(Y[: N_INITIAL + n_observed], dtype=torch.float64)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model, mll = botorch_model(X, Yt)
        fit_gpytorch_mll(mll)
        out["fit"] = time.perf_counter() - start
        for method in ("qLogNParEGO", "qLogNEHVI"):
            start = time.perf_counter()
            acquisition = botorch_acquisition(method, model, X, setting.ref_point, Yt.shape[1])
            optimize_acqf_discrete(acquisition, q=1, choices=choices)
            out[method] = time.perf_counter() - start
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observed", type=int, default=20, help="rounds already observed")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--no-write", action="store_true", help="print, leave RESULTS.md")
    args = parser.parse_args()
    import botorch
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    rows = []
    for name in args.problems:
        setting = Setting(name, 0.05)
        indices, Y = observed_data(setting, args.observed)
        loads, mt_times, mt_refits, bt = [os.getloadavg()[0]], [], [], []
        time_manytask(setting, indices, Y, args.observed)  # first-call costs, untimed
        for _ in range(args.repeats):  # the two sides in turn, so that load drifts hit both
            times, refits = time_manytask(setting, indices, Y, args.observed)
            mt_times.append(times)
            mt_refits.append(refits)
            bt.append(time_botorch(setting, indices, Y, args.observed))
            loads.append(os.getloadavg()[0])
        times, refits = np.concatenate(mt_times), np.concatenate(mt_refits)
        per_round = times.mean()
        fit = np.median([b["fit"] for b in bt])
        parego = fit + np.median([b["qLogNParEGO"] for b in bt])
        nehvi = fit + np.median([b["qLogNEHVI"] for b in bt])
        rows.append(
            [
                name,
                setting.problem.dim,
                setting.values.shape[1],
                f"{1000 * np.median(times[~refits]):.1f}",
                f"{1000 * np.median(times[refits]):.0f}" if refits.any() else "—",
                f"{1000 * per_round:.1f}",
                f"{1000 * fit:.0f}",
                f"{1000 * (parego - fit):.0f}",
                f"{1000 * (nehvi - fit):.0f}",
                f"{parego / per_round:.0f}×",
                f"{nehvi / per_round:.0f}×",
                f"{min(loads):.1f}–{max(loads):.1f}",
            ]
        )
        print(rows[-1], flush=True)
    header = [
        "problem",
        "d",
        "objectives",
        "manytask ask + tell, no refit (ms)",
        "manytask round with refit (ms)",
        "manytask mean round (ms)",
        "BoTorch fit (ms)",
        "qLogNParEGO acquisition (ms)",
        "qLogNEHVI acquisition (ms)",
        "ParEGO / manytask",
        "NEHVI / manytask",
        "load",
    ]
    text = f"""## BoTorch against manytask: where one round's time goes

Measured {machine()}, torch {torch.__version__}, BoTorch {botorch.__version__}, one thread
for BLAS and torch on both sides, the two sides timed in turn ({args.repeats} repeats) in one
process. `python benchmarks/bench_bo_botorch_timing.py`: {N_INITIAL} + {args.observed} noisy
observations (noise 0.05), then manytask's next rounds with its defaults (medians of the
rounds without and with a kernel refit, and the mean round), BoTorch's model fit and each
acquisition's build + `optimize_acqf_discrete` over the {N_CANDIDATES} candidates (medians;
a BoTorch round is fit + acquisition). *load*: 1-minute load average over the problem's
measurements.

{markdown_table(header, rows)}
"""
    if args.no_write:
        print(text)
    else:
        write_section("bench_bo_botorch_timing", text)


if __name__ == "__main__":
    main()
