"""∞-CSC and ∞-DLSE: the in-fit choice of λ and bandwidth (``lambda_=None``) against the
earlier fixed defaults, on a broad suite, with the CPU-time ratio of the two fits.

∞-CSC (held-out *cost risk* ×100: the cost-weighted misclassification rate
mean_i c_θ(y_i) 1{wrong} of eq. (4)'s 0-1 version, averaged over θ ∈ {−0.9, −0.8, …, 0.9}):
the reproduction's four sets (``experiments/itl_csc.py``) and three generated ones, stratified
70/30 splits, seed s for split s (generated sets drawn anew with seed s). Fixed: λ = 1e-3,
median heuristic (the reproduction's configuration).

∞-DLSE (held-out *gap* ×100: mean |fraction of test outliers at θ − θ| over
θ ∈ {0.1, …, 0.9}; *set error* ×100 where the density is known: the fraction of test points
whose outlier status at θ differs from the true density level set's — the set of mass
1 − θ of highest density — averaged over the same θ): the reproduction's data (breast
cancer, 70 % training, the rest held out) and three generated sets (n = 300 training points,
5000 test points, seed s). Default: the input bandwidth chosen in ``fit``
(``input_bandwidth=None``); fixed: the median heuristic (``"median"``, the reproduction's).

CPU: ``time.process_time`` of each fit (all threads); the ratio is default / fixed per
(set, split), summarised by its median and maximum. Prints one JSON line per (task, set,
split); ``--write`` replaces this script's section of RESULTS.md.

Run: ``python benchmarks/bench_itl_csc_dlse.py [--splits 3] [--write]``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings

import numpy as np
from scipy.stats import chi2, multivariate_normal
from sklearn import datasets
from sklearn.model_selection import train_test_split

from manytask.experiments.itl_csc import load_csc_dataset
from manytask.itl import InfiniteCostSensitiveClassifier, InfiniteLevelSetEstimator

from _common import machine, markdown_table, write_section

CSC_THETAS = np.round(np.linspace(-0.9, 0.9, 19), 1)
DLSE_THETAS = np.round(np.linspace(0.1, 0.9, 9), 1)
CSC_SETS = ("two-moons", "circles", "iris", "breast-cancer", "xor", "informative-10d", "imbalanced")
DLSE_SETS = ("breast-cancer", "gauss-2d", "mixture-2d", "mixture-5d")


def load_csc(name, seed):
    """X, y in {0, 1}: the reproduction's sets, or a generated one drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    if name == "xor":
        X = rng.normal(size=(300, 2))
        return X, ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
    if name == "informative-10d":
        return datasets.make_classification(
            300, 10, n_informative=5, flip_y=0.05, random_state=seed
        )
    if name == "imbalanced":
        return datasets.make_classification(
            300, 5, n_informative=3, weights=[0.85], flip_y=0.02, random_state=seed
        )
    return load_csc_dataset(name, seed)


def cost_risk(y, predicted):
    """Mean over θ of mean_i c_θ(y_i) 1{wrong}, c_θ = (1 + θ)/2 on class 1, (1 − θ)/2 on 0."""
    cost = np.where(y[:, None] == 1, (1 + CSC_THETAS) / 2, (1 - CSC_THETAS) / 2)
    return float(np.mean(np.mean(cost * (predicted != y[:, None]), axis=0)))


def timed_fit(model, *data):
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(*data)
    return time.process_time() - start


def run_csc(name, split):
    X, y = load_csc(name, split)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=split
    )
    row = {"task": "csc", "set": name, "split": split, "n": len(y_train), "d": X.shape[1]}
    for key, lambda_ in (("default", None), ("fixed", 1e-3)):
        model = InfiniteCostSensitiveClassifier(lambda_=lambda_, random_state=split)
        row[f"{key}_cpu"] = timed_fit(model, X_train, y_train)
        row[key] = 100 * cost_risk(y_test, model.predict(X_test, theta=CSC_THETAS))
        if lambda_ is None:
            row["lambda"] = model.selected_lambda_
            row["bandwidth"] = model.selected_input_bandwidth_
    return row


def sample_dlse(name, n, rng):
    """n points of a generated set and its density (a callable), or None for real data."""
    if name == "gauss-2d":
        return rng.normal(size=(n, 2)), None
    if name == "mixture-2d":
        means, scales, weights = (
            np.array([[0, 0], [3, 0], [0, 3]]),
            (1.0, 0.5, 0.7),
            (0.5, 0.3, 0.2),
        )
        dimension = 2
    else:  # mixture-5d
        means, scales, weights = np.array([[0.0] * 5, [3.0] * 5]), (1.0, 0.6), (0.6, 0.4)
        dimension = 5
    component = rng.choice(len(weights), size=n, p=weights)
    X = means[component] + np.array(scales)[component, None] * rng.normal(size=(n, dimension))

    def density(points):
        return sum(
            w * multivariate_normal(mean, s**2 * np.eye(dimension)).pdf(points)
            for mean, s, w in zip(means, scales, weights)
        )

    return X, density


def true_outliers(name, X_test, rng):
    """(N, 9) true outlier status at DLSE_THETAS: density below its θ-quantile (None: unknown)."""
    if name == "breast-cancer":
        return None
    if name == "gauss-2d":
        radius2 = np.sum(X_test**2, axis=1)
        return radius2[:, None] > chi2(2).ppf(1 - DLSE_THETAS)[None, :]
    reference, density = sample_dlse(name, 200_000, rng)
    thresholds = np.quantile(density(reference), DLSE_THETAS)
    return density(X_test)[:, None] < thresholds[None, :]


def run_dlse(name, split):
    rng = np.random.default_rng(split)
    if name == "breast-cancer":
        X = datasets.load_breast_cancer().data
        order = rng.permutation(len(X))
        train, test = X[order[: int(0.7 * len(X))]], X[order[int(0.7 * len(X)) :]]
    else:
        train, test = sample_dlse(name, 300, rng)[0], sample_dlse(name, 5000, rng)[0]
    truth = true_outliers(name, test, np.random.default_rng(10_000 + split))
    row = {"task": "dlse", "set": name, "split": split, "n": len(train), "d": train.shape[1]}
    for key, bandwidth in (("default", None), ("fixed", "median")):
        model = InfiniteLevelSetEstimator(input_bandwidth=bandwidth, random_state=split)
        row[f"{key}_cpu"] = timed_fit(model, train)
        outliers = model.predict(test, DLSE_THETAS) == -1
        row[key] = 100 * float(np.mean(np.abs(outliers.mean(axis=0) - DLSE_THETAS)))
        if truth is not None:
            row[f"{key}_set_error"] = 100 * float(np.mean(outliers != truth))
        if bandwidth is None:
            row["bandwidth"] = model.selected_input_bandwidth_
    return row


def summary(rows):
    lines = []
    for task, title, metric in (
        ("csc", "∞-CSC: held-out cost risk ×100 (lower is better)", "cost risk"),
        ("dlse", "∞-DLSE: held-out gap to θ ×100 (lower is better)", "gap"),
    ):
        table = []
        chosen = [row for row in rows if row["task"] == task]
        for name in dict.fromkeys(row["set"] for row in chosen):
            mine = [row for row in chosen if row["set"] == name]
            default = np.array([row["default"] for row in mine])
            fixed = np.array([row["fixed"] for row in mine])
            ratio = np.array([row["default_cpu"] / row["fixed_cpu"] for row in mine])
            cells = [
                name, mine[0]["n"], mine[0]["d"], len(mine),
                f"{default.mean():.2f} ± {default.std():.2f}",
                f"{fixed.mean():.2f} ± {fixed.std():.2f}",
            ]  # fmt: skip
            if task == "dlse":
                errors = [row.get("default_set_error") for row in mine]
                if errors[0] is None:
                    cells += ["–", "–"]
                else:
                    fixed_errors = [row["fixed_set_error"] for row in mine]
                    cells += [f"{np.mean(errors):.2f}", f"{np.mean(fixed_errors):.2f}"]
            cells += [
                f"{np.mean([row['default_cpu'] for row in mine]):.2f}",
                f"{np.mean([row['fixed_cpu'] for row in mine]):.2f}",
                f"{np.median(ratio):.1f} / {ratio.max():.1f}",
            ]
            table.append(cells)
        header = ["set", "n", "d", "splits", f"default {metric}", f"fixed {metric}"]
        if task == "dlse":
            header += ["default set error", "fixed set error"]
        header += ["default CPU (s)", "fixed CPU (s)", "ratio median / max"]
        lines += [f"**{title}**", "", markdown_table(header, table), ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--tasks", default="csc,dlse")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--jsonl", default=None, help="append the rows to this file")
    args = parser.parse_args()
    rows, loads, start = [], [os.getloadavg()[0]], time.perf_counter()
    tasks = args.tasks.split(",")
    jobs = [("csc", name, run_csc) for name in CSC_SETS if "csc" in tasks]
    jobs += [("dlse", name, run_dlse) for name in DLSE_SETS if "dlse" in tasks]
    for _, name, run in jobs:
        for split in range(args.splits):
            row = run(name, split)
            row["load1"] = os.getloadavg()[0]
            loads.append(row["load1"])
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a") as handle:
                    handle.write(json.dumps(row) + "\n")
    text = summary(rows)
    print(text)
    if args.write:
        header = (
            "## Infinite task learning: ∞-CSC and ∞-DLSE defaults chosen in `fit` "
            "(`bench_itl_csc_dlse.py`)\n\n"
            f"Measured {machine()}; 1-minute load average {min(loads):.1f}–{max(loads):.1f} "
            f"during the run (2 cores shared), whole run {time.perf_counter() - start:.0f} s. "
            "*Default*: ∞-CSC `lambda_=None` (λ and the input bandwidth chosen inside `fit`), "
            "∞-DLSE `input_bandwidth=None` (the bandwidth chosen inside `fit`); "
            "*fixed*: the earlier defaults, which the reproductions pin. Mean ± sd over "
            "splits; see the script's docstring for the metrics.\n\n"
        )
        write_section("bench_itl_csc_dlse", header + text)


if __name__ == "__main__":
    main()
