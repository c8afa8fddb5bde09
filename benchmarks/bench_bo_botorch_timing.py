"""Time per round of ``bench_bo_botorch.py``'s default against BoTorch, on the same threads.

For each problem of the suite, on the same 6 + ``--observed`` noisy observations (seed 0's
initial points, then random candidates), in one process, with ``--threads`` threads for
BLAS and torch on both sides, the two sides are timed in turn, ``--repeats`` times each:

* manytask (``MultiTaskBO(candidates=C, kernel="auto")`` with its defaults): ``--rounds``
  consecutive ``ask`` + ``tell`` of the point asked, observed with noise as in
  ``bench_bo_botorch.py``'s loop (the ``tell`` of every ``refit_every``-th refits the ICM
  kernel; the mean over the rounds), and the same rounds without refits (the kernel fitted
  before them, never again), whose difference is what the refits cost per round;
* BoTorch: the fit of the ModelListGP (``fit_gpytorch_mll``, one GP per objective), then
  each acquisition (qLogNParEGO, qLogNEHVI) built and maximised over the candidates by
  ``optimize_acqf_discrete``; a round is fit + acquisition.

Both wall time and CPU time (``time.process_time``, all threads of the process) are kept:
on a machine shared with other jobs the wall time of each side grows with the load at the
moment it runs, the CPU time much less, so the CPU-time ratio is the one to compare across
loads; the 1-minute load average is printed beside every problem. Needs the ``bench`` extra.
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


def observed_data(setting, n_observed, n_rounds):
    rng = np.random.default_rng([0, PROBLEMS.index(setting.name)])
    indices = rng.choice(N_CANDIDATES, N_INITIAL + n_observed + n_rounds, replace=False)
    noise = rng.standard_normal((len(indices), setting.values.shape[1]))
    Y = setting.values[indices] + setting.noise_std * noise
    return indices, Y


class Clock:
    """Wall and CPU seconds since construction."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self):
        return np.array([time.perf_counter() - self.wall, time.process_time() - self.cpu])


def time_manytask(setting, indices, Y, n_observed, **config):
    """(wall, CPU) seconds of one ask + tell, mean over the rounds after the first
    N_INITIAL + n_observed observations (BoTorch's data). Every round tells the point asked,
    as a loop does (a point asked and never told stays pending, and every later ask would
    hallucinate it), its noise from the draws of the fixed rounds' points. ``config``:
    arguments of MultiTaskBO beside its defaults."""
    from manytask.bo import MultiTaskBO

    optimizer = MultiTaskBO(candidates=setting.unit, kernel="auto", seed=0, **config)
    start = N_INITIAL + n_observed
    for index, y in zip(indices[:start], Y):
        optimizer.tell(setting.unit[index], y)
    noise = Y[start:] - setting.values[indices[start:]]
    index_of = {row.tobytes(): i for i, row in enumerate(setting.unit)}  # a look-up of ~1 µs
    clock = Clock()
    for draw in noise:
        x = optimizer.ask()
        optimizer.tell(x, setting.values[index_of[x.tobytes()]] + draw)
    return clock.read() / (len(indices) - start)


def time_botorch(setting, indices, Y, n_observed, methods):
    """(wall, CPU) seconds of the model fit and of each acquisition's build + discrete
    maximisation."""
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
        clock = Clock()
        model, mll = botorch_model(X, Yt)
        fit_gpytorch_mll(mll)
        out["fit"] = clock.read()
        for method in methods:
            clock = Clock()
            acquisition = botorch_acquisition(method, model, X, setting.ref_point, Yt.shape[1])
            optimize_acqf_discrete(acquisition, q=1, choices=choices)
            out[method] = clock.read()
    return out


def measure(name, args):
    setting = Setting(name, 0.05)
    indices, Y = observed_data(setting, args.observed, args.rounds)
    methods = ["qLogNParEGO"]
    if setting.values.shape[1] <= args.nehvi_max_objectives:
        methods.append("qLogNEHVI")
    loads, mt, frozen, bt = [os.getloadavg()[0]], [], [], []
    time_manytask(setting, indices, Y, args.observed)  # first-call costs, untimed (BoTorch
    time_botorch(setting, indices, Y, args.observed, methods[:1])  # compiles an extension)
    for _ in range(args.repeats):  # the two sides in turn, so that load drifts hit both
        mt.append(time_manytask(setting, indices, Y, args.observed))
        # the same rounds without a refit (the kernel fitted once, before them): ask + the
        # posterior's rank-one update; the difference is the refits' share of a round
        frozen.append(time_manytask(setting, indices, Y, args.observed, refit_every=10**9))
        bt.append(time_botorch(setting, indices, Y, args.observed, methods))
        loads.append(os.getloadavg()[0])
    manytask, without_refits = np.median(mt, axis=0), np.median(frozen, axis=0)
    fit = np.median([b["fit"] for b in bt], axis=0)
    rounds = {m: fit + np.median([b[m] for b in bt], axis=0) for m in methods}
    return setting, (manytask, without_refits), fit, rounds, loads


def refit_every():
    """MultiTaskBO's default refit_every."""
    import inspect

    from manytask.bo import MultiTaskBO

    return inspect.signature(MultiTaskBO).parameters["refit_every"].default


def table_row(setting, threads, manytask, fit, rounds, loads):
    """One problem's row: times as wall / CPU milliseconds, ratios as wall / CPU."""
    manytask, without_refits = manytask

    def ms(pair):
        return "—" if pair is None else f"{1000 * pair[0]:.0f} / {1000 * pair[1]:.0f}"

    def ratio(pair):
        if pair is None:
            return "—"
        return f"{pair[0] / manytask[0]:.0f}× / {pair[1] / manytask[1]:.0f}×"

    parego, nehvi = rounds["qLogNParEGO"], rounds.get("qLogNEHVI")
    return [
        setting.name,
        setting.problem.dim,
        setting.values.shape[1],
        threads,
        f"{1000 * manytask[0]:.1f} / {1000 * manytask[1]:.1f}",
        f"{1000 * without_refits[1]:.1f}",
        ms(fit),
        ms(parego),
        ms(nehvi),
        ratio(parego),
        ratio(nehvi),
        f"{min(loads):.1f}–{max(loads):.1f}",
    ]


def compare_options(args):
    """Print, per problem and thread count, manytask's CPU ms per round with its defaults
    and with ``--compare``'s options (Python literals, else strings), on the same data."""
    import ast

    from threadpoolctl import threadpool_limits

    config = {}
    for item in args.compare:
        key, _, value = item.partition("=")
        try:
            config[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            config[key] = value
    print(f"CPU ms per round: defaults | {config} | ratio | load")
    for threads in args.threads:
        with threadpool_limits(threads):
            for name in args.problems:
                setting = Setting(name, 0.05)
                indices, Y = observed_data(setting, args.observed, args.rounds)
                time_manytask(setting, indices, Y, args.observed, **config)  # untimed warm-up
                base, other = [], []
                for _ in range(args.repeats):
                    base.append(time_manytask(setting, indices, Y, args.observed)[1])
                    other.append(time_manytask(setting, indices, Y, args.observed, **config)[1])
                base, other = 1000 * np.median(base), 1000 * np.median(other)
                load = os.getloadavg()[0]
                print(f"{name} ({threads} thr.): {base:.2f} | {other:.2f} | "
                      f"{other / base:.2f} | {load:.1f}", flush=True)  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observed", type=int, default=20, help="rounds already observed")
    # 12: whole cycles of a refit every 1, 2, 3 or 4 observations, so the mean is per cycle
    parser.add_argument("--rounds", type=int, default=12, help="manytask rounds timed")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--nehvi-max-objectives", type=int, default=3)
    parser.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    parser.add_argument("--no-write", action="store_true", help="print, leave RESULTS.md")
    parser.add_argument(
        "--compare",
        nargs="*",
        metavar="KEY=VALUE",
        help="time manytask only: its defaults against these MultiTaskBO options (printed)",
    )
    args = parser.parse_args()
    if args.compare is not None:
        compare_options(args)
        return
    import botorch
    import torch
    from threadpoolctl import threadpool_limits

    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        with threadpool_limits(threads):
            for name in args.problems:
                setting, manytask, fit, rounds, loads = measure(name, args)
                rows.append(table_row(setting, threads, manytask, fit, rounds, loads))
                print(rows[-1], flush=True)
    header = [
        "problem",
        "d",
        "objectives",
        "threads",
        "manytask round (ms, wall / CPU)",
        "manytask round without refits (CPU ms)",
        "BoTorch fit (ms)",
        "qLogNParEGO round (ms)",
        "qLogNEHVI round (ms)",
        "ParEGO / manytask (wall / CPU)",
        "NEHVI / manytask (wall / CPU)",
        "load",
    ]
    text = f"""## BoTorch against manytask: time per round on the same threads

Measured {machine()}, torch {torch.__version__}, BoTorch {botorch.__version__}; the two
sides timed in turn ({args.repeats} repeats, medians) in one process with the same number of
BLAS and torch threads (*threads*). `python benchmarks/bench_bo_botorch_timing.py`:
{N_INITIAL} + {args.observed} noisy observations (noise 0.05), then {args.rounds} rounds of
manytask with its defaults (a kernel refit every {refit_every()} tells; mean round; *without
refits*: the same rounds with `refit_every=10**9`, ask + the posterior's update), and
BoTorch's round: model fit + the acquisition's build + `optimize_acqf_discrete` over the
{N_CANDIDATES} candidates (qLogNEHVI on problems with ≤ {args.nehvi_max_objectives}
objectives). Every time as wall / CPU (`time.process_time`, all threads of the
process); *load*: 1-minute load average over the problem's measurements.

{markdown_table(header, rows)}
"""
    if args.no_write:
        print(text)
    else:
        write_section("bench_bo_botorch_timing", text)


if __name__ == "__main__":
    main()
