"""∞-QR test crossing on the 20 Table-1 sets: the defaults against named variants.

Each variant is a JSON dict of ``InfiniteQuantileRegressor`` parameters (``{}``: the
defaults), with two extra keys: ``"bandwidth_factor": c`` sets ``input_bandwidth`` to c × the
median heuristic of the standardised training inputs; ``"lambda_nc_sum": c`` sets
``lambda_nc`` to c × n_train, i.e. eq. (14) as printed (a sum over the training points,
where ``lambda_nc`` weighs a mean). Protocol of ``bench_itl.py --defaults-only``: data
standardised on the whole set (the paper's scaling), 70/30 splits with seed i. Prints per
set the mean test pinball×100 and crossing×100 (and per split), then on how many sets the
pinball is at most the paper's ∞-QR mean + sd and the crossing ≤ 0.5 (targets ≥ 16, 20).

Run: ``python benchmarks/bench_itl_crossing.py --variants '{}' '{"theta_bandwidth": 1.0}'``
(``--datasets highway,snowgeese`` for a subset, ``--splits`` for more splits).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from manytask.datasets import QUANTILE_DATASETS, load_quantile_benchmark
from manytask.experiments.itl_table1 import LEVELS, paper_table, standardised
from manytask.itl import InfiniteQuantileRegressor, crossing_loss, pinball_loss
from manytask.kernels import median_heuristic

# ../shared/data beside the checkout, as bench_itl.py; MANYTASK_DATA, when set, wins
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if "MANYTASK_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["MANYTASK_DATA"] = str(SHARED_DATA)


def fit_predict(params, X_train, y_train, X_test, split):
    params = dict(params)
    factor = params.pop("bandwidth_factor", None)
    if factor is not None:
        scale = np.where(X_train.std(axis=0) > 0, X_train.std(axis=0), 1.0)
        scaled = (X_train - X_train.mean(axis=0)) / scale
        params["input_bandwidth"] = factor * median_heuristic(scaled, random_state=split)
    per_point = params.pop("lambda_nc_sum", None)
    if per_point is not None:
        params["lambda_nc"] = per_point * len(y_train)
    model = InfiniteQuantileRegressor(random_state=split, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X_train, y_train)
    return model.predict(X_test, LEVELS)


def run(variant, names, splits):
    paper, within, crossing_ok, start = paper_table(), 0, 0, time.perf_counter()
    for name in names:
        X, y = standardised(load_quantile_benchmark(name))
        pinballs, crossings = [], []
        for split in range(splits):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, random_state=split
            )
            Q = fit_predict(variant, X_train, y_train, X_test, split)
            pinballs.append(100 * pinball_loss(y_test, Q, LEVELS))
            crossings.append(100 * crossing_loss(Q, LEVELS))
        mean, sd = float(paper[name]["itl_pinball"]), float(paper[name]["itl_pinball_sd"])
        ok_pinball = np.mean(pinballs) <= mean + sd
        within += ok_pinball
        crossing_ok += np.mean(crossings) <= 0.5
        print(
            f"  {name:14s} pinball {np.mean(pinballs):6.1f}{'' if ok_pinball else ' ✗'} "
            f"(paper {mean:.0f} ± {sd:.0f})  crossing {np.mean(crossings):5.2f} "
            f"({' / '.join(f'{c:.2f}' for c in crossings)})",
            flush=True,
        )
    print(
        f"{json.dumps(variant)}: pinball ≤ the paper's mean + sd on {within} of "
        f"{len(names)}, crossing ≤ 0.5 on {crossing_ok} of {len(names)} "
        f"({time.perf_counter() - start:.0f} s)",
        flush=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["{}"], help="JSON parameter dicts")
    parser.add_argument("--datasets", default="", help="comma-separated (default: all 20)")
    parser.add_argument("--splits", type=int, default=3)
    args = parser.parse_args(argv)
    names = args.datasets.split(",") if args.datasets else list(QUANTILE_DATASETS)
    for variant in args.variants:
        run(json.loads(variant), names, args.splits)


if __name__ == "__main__":
    main()
