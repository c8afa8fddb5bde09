"""MT-BKB's dictionary over 600 observations: Algorithm 2's redraw against the incremental one.

One run per (dictionary update, q): ``MultiTaskBO(algorithm="mt-bkb")`` over N = 1000
candidates of the paper's RKHS setting (1-D net, SE lengthscale 0.2, B = AᵀA, η = 0.1,
``bench_posterior.problem``), with a fixed weight; T = 600 rounds, each ``tell`` at the
point asked last (observation N(0, I), as in ``bench_bo.time_rounds``) and the next
``ask``. Reported: the dictionary size m_t over the last 200
observations (min, median, max and max/min), and the log-log slope of the round time
(tell + ask) in t over t = 100…600, fitted to the medians of windows of 25 rounds.

Run: ``python benchmarks/bench_bo_dictionary.py`` (``--quick``: T = 300, last 100;
``--with-resample`` adds Algorithm 2's redraw, whose swinging dictionary makes it run for
many minutes at T = 600).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import manytask as mt
from bench_posterior import N_CANDIDATES, NOISE, problem

from _common import machine, markdown_table, run_child, write_section

N_TASKS = 2
QS = (1.0, 10.0)
UPDATES = ("resample", "incremental")
WINDOW = 25


def run_case(update: str, q: float, T: int) -> dict:
    kernel, candidates, _, _ = problem(N_TASKS, T)
    rng = np.random.default_rng(1)
    opt = mt.bo.MultiTaskBO(
        candidates=candidates,
        kernel=kernel,
        algorithm="mt-bkb",
        weights=np.full(N_TASKS, 1.0 / N_TASKS),
        noise=NOISE,
        q=q,
        dictionary=update,
        seed=0,
    )
    times = []
    x = opt.ask()
    for _ in range(T):
        y = rng.normal(size=N_TASKS)
        start = time.perf_counter()
        opt.tell(x, y)
        x = opt.ask()
        times.append(time.perf_counter() - start)
    sizes = opt._policy.posterior.dictionary_sizes_  # read-only
    return {"update": update, "q": q, "T": T, "times": times, "sizes": sizes}


def summarise(case: dict) -> dict:
    T, sizes, times = case["T"], np.array(case["sizes"]), np.array(case["times"])
    last = sizes[-T // 3 :]
    starts = np.arange(T // 6, T - WINDOW + 1, WINDOW)
    t_mid = starts + WINDOW / 2
    medians = np.array([np.median(times[s : s + WINDOW]) for s in starts])
    slope = float(np.polyfit(np.log(t_mid), np.log(medians), 1)[0])
    return {
        "min": int(last.min()),
        "median": float(np.median(last)),
        "max": int(last.max()),
        "ratio": float(last.max() / max(last.min(), 1)),
        "slope": slope,
        "round_ms_end": float(medians[-1] * 1e3),
        "total_s": float(times.sum()),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 300")
    parser.add_argument("--with-resample", action="store_true", help="also Algorithm 2")
    parser.add_argument("--case", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(args.case[0], float(args.case[1]), int(args.case[2]))))
        return 0
    T = 300 if args.quick else 600
    started = time.perf_counter()
    rows = []
    updates = UPDATES if args.with_resample else ("incremental",)
    for q in QS:
        for update in updates:
            case = run_child(__file__, update, q, T)
            s = summarise(case)
            print(f"{update:11s} q={q:4g}  m_t {s['min']}–{s['max']}  slope {s['slope']:.2f}")
            rows.append(
                [
                    update,
                    f"{q:g}",
                    f"{s['min']} / {s['median']:.0f} / {s['max']}",
                    f"{s['ratio']:.1f}",
                    f"{s['slope']:.2f}",
                    f"{s['round_ms_end']:.1f}",
                    f"{s['total_s']:.0f}",
                ]
            )
    wall = time.perf_counter() - started
    header = [
        "dictionary",
        "q",
        f"m_t over the last {T // 3} (min / median / max)",
        "max / min",
        "log-log slope of round time",
        "round at the end (ms)",
        "total (s)",
    ]
    text = "\n".join(
        [
            f"## MT-BKB dictionary updates: m_t and round time over {T} observations",
            "",
            f"Measured {machine()}, on a machine shared with other jobs. "
            f"`python benchmarks/bench_bo_dictionary.py`, {wall / 60:.1f} min in all.",
            "",
            f"n = {N_TASKS} tasks, N = {N_CANDIDATES} candidates, RKHS setting of"
            " `bench_posterior.problem`, η = 0.1, leverage-score sampling q‖Γ̃‖/η. *resample*:"
            " Algorithm 2, every z_{t,i} redrawn in every round; *incremental*: one uniform per"
            " point and non-increasing inclusion probabilities (batched BKB). A round is"
            " `tell` + `ask`; the slope is fitted over t = T/6…T to medians of windows of"
            f" {WINDOW} rounds.",
            "",
            markdown_table(header, rows),
        ]
    )
    write_section("bench_bo_dictionary", text)
    print(f"wrote benchmarks/RESULTS.md ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
