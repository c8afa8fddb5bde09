"""Reproduce Table 1 of ``infinite-task-learning.txt``: ∞-QR against JQR and IND-QR.

Protocol (``quantile/README.md`` of the data): inputs and target standardised on the whole
data; split i is a random 70/30 split with seed i; every method's hyper-parameters are chosen
by 5-fold CV on the training part (:class:`~sklearn.model_selection.GridSearchCV`, each
estimator's ``score``); τ ∈ {0.1, 0.3, 0.5, 0.7, 0.9}; λ_nc = 1 and m = 100 Gauss–Legendre
anchors for ∞-QR. Reported on the test part: "pinball ×100" = 100 × Σ_τ mean pinball loss
and "crossing ×100" = 100 × Σ over consecutive level pairs of mean max(q_τ − q_τ', 0).

Differences from the paper: a **grid** search (input bandwidth = multiple of the median
heuristic × θ bandwidth × λ) instead of Bayesian optimisation; manytask's default Huber
smoothing κ = 0.01 of the pinball loss and the non-crossing term (the authors did not
smooth); L-BFGS-B capped at ``max_iter``. ``--quick`` (:meth:`Settings.quick`, 3 splits) is
indicative only.

Data come from ``$MANYTASK_DATA`` or ``data_home`` (a folder holding
``quantile/manifest.json``); the paper's numbers from ``paper_tables/itl_table1.csv``, package
data beside this module. Outputs inside ``out``: ``results.md`` and ``splits.csv``.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy.stats import mannwhitneyu
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from tqdm.auto import tqdm

from ..datasets import QUANTILE_DATASETS, load_quantile_benchmark
from ..datasets.quantile import quantile_data_folder
from ..itl import (
    IndependentQuantileRegressor,
    InfiniteQuantileRegressor,
    JointQuantileRegressor,
    crossing_loss,
    pinball_loss,
)
from ..kernels import median_heuristic
from . import protocol
from ._tables import csv_bytes, mean_std, read_paper_table, write_outputs

__all__ = [
    "CSV_COLUMNS",
    "DEFAULT_OUT",
    "LEVELS",
    "METHODS",
    "Settings",
    "Table1",
    "paper_table",
    "parse_panels",
    "reproduce",
    "standardised",
    "run_from_cli",
    "run_split",
]

DEFAULT_OUT = "manytask-reproduce/itl-table1"
#: The levels of Table 1.
LEVELS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: p-value under which the paper calls a difference significant (Table 1: "p.-val. < 0.25%").
SIGNIFICANT = 0.0025
#: On how many of the 20 sets the paper finds ∞-QR crossing significantly less (§5 "QR").
PAPER_FEWER_CROSSINGS = {"jqr": 2, "ind": 11}
#: Method keys, in table order, with their labels.
METHODS = {"itl": "∞-QR", "jqr": "JQR", "ind": "IND-QR"}
CSV_COLUMNS = (
    "dataset",
    "split",
    "method",
    "n_train",
    "n_test",
    "pinball_x100",
    "crossing_x100",
    "input_bandwidth",
    "theta_bandwidth",
    "lambda",
    "fit_seconds",
)
SPLITS, SPLITS_QUICK = 20, 3
# Table 1 of the paper (§5), kept as data beside the code: per data set and method, mean and sd
# of pinball×100 and crossing×100, and the baselines' p-values against ∞-QR.


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """The search and fit settings of one run; the defaults are the paper's protocol on a
    4 × 2 × 4 grid (θ bandwidth tuned for ∞-QR and JQR), ``--quick`` a 2 × 2 grid, 3-fold CV,
    m = 20 anchors and at most 300 L-BFGS-B iterations.

    ``bandwidth_factors`` multiply the median heuristic of the standardised training inputs.
    """

    QUICK: ClassVar[dict] = {
        "bandwidth_factors": (0.3, 1.0),
        "theta_bandwidths": (0.2,),
        "lambdas": (1e-4, 1e-3),
        "n_anchors": 20,
        "cv_folds": 3,
        "max_iter": 300,
        "tol": 1e-6,
    }

    bandwidth_factors: tuple = (0.3, 1.0, 3.0, 10.0)
    theta_bandwidths: tuple = (0.1, 0.3)
    lambdas: tuple = (1e-5, 1e-4, 1e-3, 1e-2)
    n_anchors: int = 100
    lambda_nc: float = 1.0
    cv_folds: int = 5
    max_iter: int = 2000
    tol: float = 1e-8

    def describe(self) -> str:
        return (
            f"grid: input bandwidth ∈ {list(self.bandwidth_factors)} × median heuristic, "
            f"θ bandwidth ∈ {list(self.theta_bandwidths)} (∞-QR, JQR), "
            f"λ ∈ {list(self.lambdas)}; {self.cv_folds}-fold CV; m = {self.n_anchors} "
            "Gauss–Legendre "
            f"anchors, λ_nc = {self.lambda_nc}; L-BFGS-B max_iter = {self.max_iter}, "
            f"tol = {self.tol:g}"
        )


full_settings, quick_settings = Settings.full, Settings.quick


def parse_panels(text) -> list[str]:
    """Data set names from ``"engel,mcycle"`` or a sequence (None, "" or "all": all 20, in
    Table 1 order)."""
    return protocol.parse_panels(text, QUANTILE_DATASETS, parameter="datasets", kind="data set")


def _estimator(method, settings, random_state):
    common = dict(max_iter=settings.max_iter, tol=settings.tol, random_state=random_state)
    if method == "itl":
        return InfiniteQuantileRegressor(
            n_anchors=settings.n_anchors, lambda_nc=settings.lambda_nc, **common
        )
    if method == "jqr":
        return JointQuantileRegressor(quantiles=LEVELS, **common)
    return IndependentQuantileRegressor(quantiles=LEVELS, **common)


def _grid(method, settings, X_train):
    scaled = (X_train - X_train.mean(axis=0)) / np.where(X_train.std(axis=0) > 0, X_train.std(0), 1)
    median = median_heuristic(scaled, random_state=0)
    grid = {
        "input_bandwidth": [factor * median for factor in settings.bandwidth_factors],
        "lambda_": list(settings.lambdas),
    }
    if method != "ind":
        grid["theta_bandwidth"] = list(settings.theta_bandwidths)
    return grid


def run_split(X, y, split, method, settings, n_jobs=1) -> dict:
    """One method on split ``split`` of standardised (X, y): CV on the training part, refit,
    test metrics. Returns a row of :data:`CSV_COLUMNS` (without ``dataset``)."""
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=split)
    start = time.perf_counter()
    estimator = _estimator(method, settings, random_state=split)
    grid = _grid(method, settings, X_train)
    if math.prod(len(values) for values in grid.values()) > 1:
        search = GridSearchCV(
            estimator,
            grid,
            cv=KFold(settings.cv_folds, shuffle=True, random_state=split),
            n_jobs=n_jobs,
            error_score="raise",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # L-BFGS-B iteration caps on the CV folds
            search.fit(X_train, y_train)
        fitted, params = search.best_estimator_, search.best_params_
    else:
        params = {key: values[0] for key, values in grid.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = estimator.set_params(**params).fit(X_train, y_train)
    seconds = time.perf_counter() - start
    predictions = fitted.predict(X_test, quantiles=LEVELS)
    return {
        "split": split,
        "method": method,
        "n_train": len(y_train),
        "n_test": len(y_test),
        "pinball_x100": 100 * pinball_loss(y_test, predictions, LEVELS),
        "crossing_x100": 100 * crossing_loss(predictions, LEVELS),
        "input_bandwidth": float(params["input_bandwidth"]),
        "theta_bandwidth": float(params.get("theta_bandwidth", float("nan"))),
        "lambda": float(params["lambda_"]),
        "fit_seconds": seconds,
    }


def standardised(dataset):
    """(X, y) of a :func:`~manytask.datasets.load_quantile_benchmark` set, standardised on
    the whole data as in the paper (constant columns left at scale 1)."""
    X, y = dataset.X, dataset.y
    x_scale = np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return (X - X.mean(axis=0)) / x_scale, (y - y.mean()) / y.std()


def _require_data(data_home):
    """Raise a clear FileNotFoundError unless data_home or $MANYTASK_DATA holds the data."""
    if data_home is None and os.environ.get("MANYTASK_DATA") is None:
        raise FileNotFoundError(
            "itl-table1 needs the quantile benchmark data: set MANYTASK_DATA to a folder "
            "holding quantile/manifest.json and the 20 CSV files (or pass data_home=)"
        )
    quantile_data_folder(data_home)  # raises if the folder has no quantile/manifest.json


def paper_table() -> dict:
    """The paper's Table 1: rows (column name → cell as printed) by data set name, in the
    paper's order, which is that of :data:`~manytask.datasets.QUANTILE_DATASETS`."""
    return {row["dataset"]: row for row in read_paper_table("itl_table1")}


@dataclass
class Table1:
    """The outcome of :func:`reproduce`: every split's row, the settings, files and timing."""

    datasets: list
    splits: int
    settings: Settings
    rows: list = field(default_factory=list)
    paper: dict = field(default_factory=dict)
    files: list = field(default_factory=list)
    seconds: float = 0.0

    def values(self, dataset, method, column) -> np.ndarray:
        return np.array(
            [r[column] for r in self.rows if r["dataset"] == dataset and r["method"] == method]
        )


def _p_value(a, b) -> str:
    if len(a) < 2 or np.allclose(a, a[0]) and np.allclose(b, a[0]):
        return "–"
    return f"{mannwhitneyu(a, b, alternative='two-sided').pvalue:.2g}"


def _smallest_p(splits) -> str:
    if splits < 2:
        return "– (one split: no test)"
    low, high = np.arange(splits), np.arange(splits, 2 * splits)
    return f"{mannwhitneyu(low, high, alternative='two-sided').pvalue:.2g}"


def _paper_cell(paper_row, method, metric) -> str:
    if paper_row is None:
        return "–"
    return f"{paper_row[f'{method}_{metric}']} ± {paper_row[f'{method}_{metric}_sd']}"


def _results_markdown(table: Table1) -> str:
    lines = [
        "# Table 1 of infinite-task-learning: ∞-QR vs JQR and IND-QR",
        "",
        f"{table.splits} random 70/30 splits (seed i for split i) of each data set, inputs and "
        "target standardised on the whole data; hyper-parameters by cross-validation on the "
        f"training part over a GRID (not the paper's Bayesian optimisation) — "
        f"{table.settings.describe()}.",
        "",
        "pinball×100 = 100 × Σ_τ mean test pinball loss, τ ∈ {0.1, 0.3, 0.5, 0.7, 0.9}; "
        "crossing×100 = 100 × Σ over consecutive levels of the mean crossing. Mean ± std over "
        "splits (ours) next to the paper's. p: two-sided Mann–Whitney–Wilcoxon p-value "
        "(`scipy.stats.mannwhitneyu`) of ∞-QR's per-split pinball (crossing) against the "
        "baseline's.",
        "",
    ]
    header = (
        "| data set | method | pinball×100 (ours) | pinball×100 (paper) | p vs ∞-QR "
        "| crossing×100 (ours) | crossing×100 (paper) | p vs ∞-QR |"
    )
    lines += [header, "|---|---|---|---|---|---|---|---|"]
    within, crossing_ok = 0, 0
    fewer_crossings = dict.fromkeys(PAPER_FEWER_CROSSINGS, 0)
    for name in table.datasets:
        paper_row = table.paper.get(name)
        itl_pinball = table.values(name, "itl", "pinball_x100")
        itl_crossing = table.values(name, "itl", "crossing_x100")
        for method, label in METHODS.items():
            pinball = table.values(name, method, "pinball_x100")
            crossing = table.values(name, method, "crossing_x100")
            p = "" if method == "itl" else _p_value(itl_pinball, pinball)
            p_cross = "" if method == "itl" else _p_value(itl_crossing, crossing)
            if method != "itl" and p_cross != "–" and float(p_cross) < SIGNIFICANT:
                fewer_crossings[method] += itl_crossing.mean() < crossing.mean()
            lines.append(
                f"| {name} | {label} | {mean_std(pinball, 0)} "
                f"| {_paper_cell(paper_row, method, 'pinball')} | {p} "
                f"| {mean_std(crossing, 1)} | {_paper_cell(paper_row, method, 'cross')} "
                f"| {p_cross} |"
            )
        if paper_row is not None:
            mean, sd = float(itl_pinball.mean()), float(paper_row["itl_pinball_sd"])
            within += abs(mean - float(paper_row["itl_pinball"])) <= sd
        crossing_ok += float(table.values(name, "itl", "crossing_x100").mean()) <= 0.5
    n = len(table.datasets)
    lines += [
        "",
        f"∞-QR mean pinball×100 within the paper's ±1 std on {within} of "
        f"{sum(name in table.paper for name in table.datasets)} data sets with paper numbers; "
        f"∞-QR mean crossing×100 ≤ 0.5 on {crossing_ok} of {n}.",
        "",
        f"∞-QR crosses significantly less (p < {SIGNIFICANT:g}, lower mean) than JQR on "
        f"{fewer_crossings['jqr']} and than IND-QR on {fewer_crossings['ind']} of {n} data "
        f"sets (paper, 20 sets: {PAPER_FEWER_CROSSINGS['jqr']} and "
        f"{PAPER_FEWER_CROSSINGS['ind']}).",
        "",
        f"With {table.splits} splits the smallest attainable p is {_smallest_p(table.splits)}.",
        "",
        f"Wall time {table.seconds:.0f} s. Every split: `splits.csv`.",
    ]
    return "\n".join(lines) + "\n"


def reproduce(
    out=DEFAULT_OUT,
    splits: int = SPLITS,
    datasets=None,
    settings: Settings | None = None,
    data_home=None,
    n_jobs: int = 1,
    progress: bool = True,
) -> Table1:
    """Run Table 1 and write ``results.md`` and ``splits.csv`` inside ``out``.

    Parameters
    ----------
    out : path-like
        Folder for the outputs (created if missing).
    splits : int
        Splits 0, …, splits − 1 (the paper: 20).
    datasets : str, sequence of str or None
        Data set names (comma-separated string allowed); None means all 20.
    settings : Settings or None
        Grid and fit settings; None means :func:`full_settings`.
    data_home : path-like or None
        Folder holding ``quantile/manifest.json``; None means ``$MANYTASK_DATA``.
    n_jobs : int
        Parallel CV fits (joblib) inside each grid search.
    progress : bool
        A tqdm progress bar over (data set, split, method).
    """
    names = parse_panels(datasets)
    if int(splits) < 1:
        raise ValueError(f"splits must be >= 1, got {splits!r}")
    _require_data(data_home)
    settings = settings if settings is not None else full_settings()
    table = Table1(datasets=names, splits=int(splits), settings=settings)
    table.paper = paper_table()
    loaded = {name: standardised(load_quantile_benchmark(name, data_home)) for name in names}
    jobs = [
        (name, split, method)
        for name in names
        for split in range(table.splits)
        for method in METHODS
    ]
    start = time.perf_counter()
    for name, split, method in tqdm(jobs, desc="itl-table1", disable=not progress):
        X, y = loaded[name]
        table.rows.append({"dataset": name, **run_split(X, y, split, method, settings, n_jobs)})
    table.seconds = time.perf_counter() - start

    outputs = {
        "splits.csv": csv_bytes(CSV_COLUMNS, table.rows),
        "results.md": _results_markdown(table).encode(),
    }
    table.files += write_outputs(out, outputs)
    return table


def run_from_cli(out, *, quick=False, seeds=None, horizon=None, panels=None, progress=True) -> str:
    """``manytask reproduce itl-table1``: 20 splits (quick: 3 and :func:`quick_settings`).

    ``--seeds`` sets the number of splits, ``--datasets``/``--panels`` the data sets;
    ``--horizon`` does not apply. Both CV cores are used (``n_jobs=2``).
    """
    splits = protocol.cli_default(seeds, quick, SPLITS_QUICK, SPLITS)
    settings = Settings.from_cli(quick)
    try:
        _require_data(None)
    except FileNotFoundError as error:  # a clear message, not the CLI's "cannot write"
        raise SystemExit(f"manytask reproduce itl-table1: error: {error}") from None
    return protocol.run_and_summarise(
        out,
        reproduce,
        splits=splits,
        datasets=panels,
        settings=settings,
        n_jobs=2,
        progress=progress,
    )
