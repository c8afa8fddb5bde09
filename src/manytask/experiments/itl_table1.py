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
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy.stats import mannwhitneyu
from sklearn.model_selection import GridSearchCV, KFold, train_test_split

from ..datasets import QUANTILE_DATASETS, load_quantile_benchmark
from ..datasets.quantile import quantile_data_folder
from ..itl import (
    IndependentQuantileRegressor,
    InfiniteQuantileRegressor,
    JointQuantileRegressor,
    crossing_loss,
    pinball_loss,
)
from ..itl._estimator import median_bandwidth, random_generator
from ..itl.quantile import HOLDOUT_FOLDS, SMALL_SET
from ..itl.selection import BANDWIDTH_FACTORS, LAMBDA_PATH
from ..kernels import median_heuristic
from . import protocol
from ._tables import csv_bytes, mean_std, read_paper_table
from .protocol import Experiment, render

__all__ = [
    "CSV_COLUMNS",
    "EXPERIMENT",
    "LEVELS",
    "METHODS",
    "Settings",
    "Table1",
    "paper_table",
    "run_split",
    "standardised",
]

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
# Table 1 of the paper (§5), kept as data beside the code: per data set and method, mean and sd
# of pinball×100 and crossing×100, and the baselines' p-values against ∞-QR.


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """``repeats`` splits (seed i for split i) and the search and fit settings; the defaults
    are the paper's protocol (20 splits) on a 4 × 2 × 4 grid (θ bandwidth tuned for ∞-QR and
    JQR), ``--quick`` 3 splits, a 2 × 2 grid, 3-fold CV, m = 20 anchors and at most 300
    L-BFGS-B iterations.

    Parameters
    ----------
    repeats : int, default=20
        Random 70/30 splits.
    bandwidth_factors : tuple of float, default=(0.3, 1.0, 3.0, 10.0)
        Input bandwidths searched, as multiples of the median heuristic of the standardised
        training inputs.
    theta_bandwidths : tuple of float, default=(0.1, 0.3)
        θ bandwidths searched (∞-QR and JQR).
    lambdas : tuple of float, default=(1e-5, 1e-4, 1e-3, 1e-2)
        λ searched.
    n_anchors : int, default=100
        Gauss–Legendre anchors of ∞-QR.
    lambda_nc : float, default=1.0
        ∞-QR's non-crossing weight (eq. 14).
    cv_folds : int, default=5
        Folds of the grid search.
    max_iter : int, default=2000
        L-BFGS-B iterations of every fit.
    tol : float, default=1e-8
        L-BFGS-B ``ftol``.
    selection : {"grid", "in-fit"}, default="grid"
        "grid": every method by the grid search above (the paper's protocol, with a grid).
        "in-fit": ∞-QR with its defaults, λ and input bandwidth chosen inside ``fit``
        (``lambda_=None``, :mod:`~manytask.itl.selection`), read raw (``rearrange=False``,
        the paper's model h, so its crossings are counted); JQR and IND-QR tuned the same
        way: the same λ and bandwidth candidates, the same held-out third(s) of the
        training part (all three below ∞-QR's ``SMALL_SET``) and held-out pinball,
        θ bandwidth 0.2; the other settings above are then unused.

    Examples
    --------
    >>> Settings.quick().lambdas
    (0.0001, 0.001)
    """

    QUICK: ClassVar[dict] = {
        "repeats": 3,
        "bandwidth_factors": (0.3, 1.0),
        "theta_bandwidths": (0.2,),
        "lambdas": (1e-4, 1e-3),
        "n_anchors": 20,
        "cv_folds": 3,
        "max_iter": 300,
        "tol": 1e-6,
    }

    repeats: int = 20
    bandwidth_factors: tuple = (0.3, 1.0, 3.0, 10.0)
    theta_bandwidths: tuple = (0.1, 0.3)
    lambdas: tuple = (1e-5, 1e-4, 1e-3, 1e-2)
    n_anchors: int = 100
    lambda_nc: float = 1.0
    cv_folds: int = 5
    max_iter: int = 2000
    tol: float = 1e-8
    selection: str = "grid"

    def describe(self) -> str:
        """The grid and fit settings in one line, for ``results.md``.

        Returns
        -------
        str
            The description.

        Examples
        --------
        >>> Settings.quick().describe()[:56]
        'grid: input bandwidth ∈ [0.3, 1.0] × median heuristic, θ'
        """
        if self.selection == "in-fit":
            return (
                f"in-fit selection: λ ∈ {list(LAMBDA_PATH)} × input bandwidth ∈ "
                f"{list(BANDWIDTH_FACTORS)} × median heuristic on held-out thirds of the "
                f"training part (all 3 below {SMALL_SET} points, else the first), ∞-QR "
                "inside `fit` (the one best setting refitted, `aggregate=False`, read raw), "
                "JQR and IND-QR by the same held-out "
                "split(s) and candidates (θ bandwidth 0.2)"
            )
        return (
            f"grid: input bandwidth ∈ {list(self.bandwidth_factors)} × median heuristic, "
            f"θ bandwidth ∈ {list(self.theta_bandwidths)} (∞-QR, JQR), "
            f"λ ∈ {list(self.lambdas)}; {self.cv_folds}-fold CV; m = {self.n_anchors} "
            "Gauss–Legendre "
            f"anchors, λ_nc = {self.lambda_nc}; L-BFGS-B max_iter = {self.max_iter}, "
            f"tol = {self.tol:g}"
        )


def _estimator(method, settings, random_state):
    if settings.selection == "in-fit":
        if method == "itl":
            # the one-setting choice the committed rows ran (before the stacked default)
            return InfiniteQuantileRegressor(
                rearrange=False, aggregate=False, random_state=random_state
            )
        fixed = JointQuantileRegressor if method == "jqr" else IndependentQuantileRegressor
        return fixed(quantiles=LEVELS, random_state=random_state)
    # κ = 0.01 and the rest as in the committed results, pinned against changes of defaults
    common = dict(max_iter=settings.max_iter, tol=settings.tol, random_state=random_state,
                  kappa=0.01)  # fmt: skip
    if method == "itl":
        return InfiniteQuantileRegressor(
            n_anchors=settings.n_anchors, lambda_nc=settings.lambda_nc, lambda_b=1e-6,
            quadrature="gauss-legendre", bias=True, rearrange=False, **common,
        )  # fmt: skip
    if method == "jqr":
        return JointQuantileRegressor(quantiles=LEVELS, **common)
    return IndependentQuantileRegressor(quantiles=LEVELS, **common)


def _held_out_splits(n, random_state):
    """The held-out third(s) on which ∞-QR's ``lambda_=None`` ranks its candidates."""
    seed = int(random_generator(random_state).integers(2**31))
    splits = list(KFold(HOLDOUT_FOLDS, shuffle=True, random_state=seed).split(np.zeros(n)))
    return splits if n < SMALL_SET else splits[:1]


def _grid(method, settings, X_train, random_state=0):
    scaled = (X_train - X_train.mean(axis=0)) / np.where(X_train.std(axis=0) > 0, X_train.std(0), 1)
    if settings.selection == "in-fit":  # ∞-QR's candidates (its median heuristic)
        median = median_bandwidth(scaled, random_state)
        return {"input_bandwidth": [f * median for f in BANDWIDTH_FACTORS],
                "lambda_": list(LAMBDA_PATH)}  # fmt: skip
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
    test metrics.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Standardised inputs (:func:`standardised`).
    y : ndarray of shape (n,)
        Standardised targets.
    split : int
        Seed of the 70/30 split, of the CV folds and of the estimator.
    method : {"itl", "jqr", "ind"}
        A key of :data:`METHODS`.
    settings : Settings
        The grid and fit settings; a grid of one point is fitted without CV.
    n_jobs : int, default=1
        Parallel CV fits (joblib).

    Returns
    -------
    dict
        A row of :data:`CSV_COLUMNS` without ``dataset``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 1)); y = X[:, 0] + 0.1 * rng.normal(size=30)
    >>> one = Settings(bandwidth_factors=(1.0,), theta_bandwidths=(0.2,), lambdas=(1e-3,),
    ...                n_anchors=5, max_iter=50)
    >>> row = run_split(X, y, 0, "ind", one)
    >>> row["n_train"], row["n_test"], row["lambda"]
    (21, 9, 0.001)
    """
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=split)
    start = time.perf_counter()
    estimator = _estimator(method, settings, random_state=split)
    grid = _grid(method, settings, X_train, split)
    if settings.selection == "in-fit" and method == "itl":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = estimator.fit(X_train, y_train)
        params = {"input_bandwidth": fitted.selected_input_bandwidth_,
                  "lambda_": fitted.selected_lambda_, "theta_bandwidth": 0.2}  # fmt: skip
    elif math.prod(len(values) for values in grid.values()) > 1:
        if settings.selection == "in-fit":
            folds = _held_out_splits(len(y_train), split)
        else:
            folds = KFold(settings.cv_folds, shuffle=True, random_state=split)
        search = GridSearchCV(
            estimator,
            grid,
            cv=folds,
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
    the whole data as in the paper (constant columns left at scale 1).

    Parameters
    ----------
    dataset : object
        With arrays ``X`` (n, d) and ``y`` (n,).

    Returns
    -------
    X : ndarray of shape (n, d)
        Columns of mean 0 and standard deviation 1 (or 0 when constant).
    y : ndarray of shape (n,)
        Mean 0, standard deviation 1.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> data = SimpleNamespace(X=np.array([[1.0, 5.0], [3.0, 5.0]]), y=np.array([0.0, 2.0]))
    >>> X, y = standardised(data)
    >>> X.tolist(), y.tolist()
    ([[-1.0, 0.0], [1.0, 0.0]], [-1.0, 1.0])
    """
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
    paper's order, which is that of :data:`~manytask.datasets.QUANTILE_DATASETS`.

    Returns
    -------
    dict of str to dict
        The rows, read from the package's ``paper_tables/itl_table1.csv``.

    Examples
    --------
    >>> list(paper_table())[:3]
    ['CobarOre', 'engel', 'BostonHousing']
    """
    return {row["dataset"]: row for row in read_paper_table("itl_table1")}


def _typed(row) -> dict:
    """A row of :data:`CSV_COLUMNS` with its numbers as int / float (text from a CSV)."""
    integers = ("split", "n_train", "n_test")
    return {key: value if key in ("dataset", "method") or not isinstance(value, str)
            else int(value) if key in integers else float(value)
            for key, value in row.items()}  # fmt: skip


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


class Table1(Experiment):
    """``manytask reproduce itl-table1``: every method on ``settings.repeats`` splits of each
    data set; writes ``results.md`` and ``splits.csv``.

    Parameters
    ----------
    settings : Settings or None, default=None
        None means :meth:`Settings.full`.
    panels : str, sequence of str or None, default=None
        Data sets among :data:`~manytask.datasets.QUANTILE_DATASETS`; None means all.
    data_home : str, Path or None, default=None
        The folder holding ``quantile/manifest.json``; None: ``$MANYTASK_DATA``.
    n_jobs : int, default=1
        Parallel CV fits (joblib) inside each grid search.

    Attributes
    ----------
    rows : list of dict
        One per (data set, split, method), the columns of :data:`CSV_COLUMNS`.
    paper : dict
        The paper's Table 1 (:func:`paper_table`).

    Examples
    --------
    >>> experiment = Table1(Settings.quick(), "engel")
    >>> len(experiment.settings.lambdas), experiment.panels
    (2, ['engel'])
    """

    NAME = "itl-table1"
    SETTINGS = Settings
    PANELS = QUANTILE_DATASETS
    PANEL_KIND = "data set"
    CLI_OPTIONS = {"n_jobs": 2}  # both CV cores

    def __init__(self, settings=None, panels=None, data_home=None, n_jobs=1):
        super().__init__(settings, panels)
        self.data_home, self.n_jobs = data_home, n_jobs
        self.rows: list = []
        self.paper = paper_table()

    @classmethod
    def from_rows(cls, rows, settings=None, panels=None):
        """A table of rows already run (e.g. a ``splits.csv`` read back), to render again.

        Only the splits run for every data set of ``panels`` and every method are kept, so
        every cell has the same splits; ``settings.repeats`` becomes their number and
        ``seconds`` the summed ``fit_seconds`` of the rows kept.

        Parameters
        ----------
        rows : iterable of dict
            Rows with the columns of :data:`CSV_COLUMNS`, typed or as text (``csv.DictReader``).
        settings : Settings or None, default=None
            The settings the rows were run with (None means :meth:`Settings.full`).
        panels : str, sequence of str or None, default=None
            Data sets to keep; None means all.

        Returns
        -------
        Table1
            With ``rows`` set; :meth:`results` and :meth:`outputs` render them.

        Examples
        --------
        >>> rows = [dict(dataset="engel", split=s, method=m, pinball_x100=10.0 + s)
        ...         for s in (0, 1) for m in METHODS][:-1]  # split 1 of IND-QR missing
        >>> table = Table1.from_rows(rows, Settings(selection="in-fit"), "engel")
        >>> table.settings.repeats, table.values("engel", "itl", "pinball_x100").tolist()
        (1, [10.0])
        """
        table = cls(settings, panels)
        typed = [_typed(row) for row in rows]
        ran = {(r["dataset"], r["method"], r["split"]) for r in typed}
        every = {(name, method) for name in table.panels for method in METHODS}
        seen = {r["split"] for r in typed}
        splits = sorted(s for s in seen if all((*key, s) in ran for key in every))
        if not splits:
            raise ValueError(
                f"rows must hold one split run for every data set of {table.panels} and every "
                f"method of {list(METHODS)}, got {len(typed)} rows without one"
            )
        table.settings = replace(table.settings, repeats=len(splits))
        table.rows = [r for r in typed if r["split"] in splits and r["dataset"] in table.panels]
        table.seconds = float(sum(r.get("fit_seconds", 0.0) for r in table.rows))
        return table

    def values(self, dataset, method, column) -> np.ndarray:
        """``column`` of every split of (``dataset``, ``method``).

        Parameters
        ----------
        dataset : str
            A data set.
        method : str
            A key of :data:`METHODS`.
        column : str
            One of :data:`CSV_COLUMNS`.

        Returns
        -------
        ndarray of shape (splits run,)
            The values.

        Examples
        --------
        >>> experiment = Table1(Settings(repeats=1), "engel")
        >>> experiment.rows = [dict(dataset="engel", method="itl", pinball_x100=12.0)]
        >>> experiment.values("engel", "itl", "pinball_x100").tolist()
        [12.0]
        """
        return np.array(
            [r[column] for r in self.rows if r["dataset"] == dataset and r["method"] == method]
        )

    def check(self) -> None:
        """A FileNotFoundError saying what to set unless the quantile benchmark data is found.

        Examples
        --------
        >>> # skipped: its answer depends on MANYTASK_DATA
        >>> Table1(Settings(repeats=1), "engel").check()  # doctest: +SKIP
        """
        _require_data(self.data_home)

    def jobs(self) -> list:
        """Load and standardise each data set; (data set, split, method) triples.

        Returns
        -------
        list of tuple
            The jobs, data set by data set, split by split.

        Examples
        --------
        >>> # skipped: needs the quantile benchmark data (MANYTASK_DATA)
        >>> Table1(Settings(repeats=1), "engel").jobs()  # doctest: +SKIP
        [('engel', 0, 'itl'), ('engel', 0, 'jqr'), ('engel', 0, 'ind')]
        """
        self._loaded = {name: standardised(load_quantile_benchmark(name, self.data_home))
                        for name in self.panels}  # fmt: skip
        splits = range(self.settings.repeats)
        return [(name, split, method) for name in self.panels for split in splits
                for method in METHODS]  # fmt: skip

    def run_job(self, job) -> None:
        """Run :func:`run_split` for one (data set, split, method) and record its row.

        Parameters
        ----------
        job : tuple of (str, int, str)
            One of :meth:`jobs`.

        Examples
        --------
        >>> experiment = Table1(Settings.quick(), "engel")
        >>> # skipped: needs the data (MANYTASK_DATA) and runs a grid search (seconds)
        >>> experiment.run_job(experiment.jobs()[0])  # doctest: +SKIP
        """
        name, split, method = job
        X, y = self._loaded[name]
        row = run_split(X, y, split, method, self.settings, self.n_jobs)
        self.rows.append({"dataset": name, **row})

    def outputs(self) -> dict:
        """``splits.csv``: every row.

        Returns
        -------
        dict of str to bytes
            The file.

        Examples
        --------
        >>> experiment = Table1(Settings(repeats=1), "engel")
        >>> experiment.outputs()["splits.csv"].decode().split(",")[:3]
        ['dataset', 'split', 'method']
        """
        return {"splits.csv": csv_bytes(CSV_COLUMNS, self.rows)}

    def results(self) -> str:
        """``results.md``: the table beside the paper's, with Mann–Whitney p-values.

        Returns
        -------
        str
            The text, from ``templates/itl_table1.md``.

        Examples
        --------
        >>> experiment = Table1(Settings(repeats=1), "engel")
        >>> experiment.rows = [dict(dataset="engel", method=method, pinball_x100=10.0,
        ...                         crossing_x100=0.0) for method in METHODS]
        >>> "| engel | ∞-QR | 10 ± 0 |" in experiment.results()
        True
        """
        rows, within, crossing_ok = [], 0, 0
        fewer_crossings = dict.fromkeys(PAPER_FEWER_CROSSINGS, 0)
        for name in self.panels:
            paper_row = self.paper.get(name)
            itl_pinball = self.values(name, "itl", "pinball_x100")
            itl_crossing = self.values(name, "itl", "crossing_x100")
            for method, label in METHODS.items():
                pinball = self.values(name, method, "pinball_x100")
                crossing = self.values(name, method, "crossing_x100")
                p = "" if method == "itl" else _p_value(itl_pinball, pinball)
                p_cross = "" if method == "itl" else _p_value(itl_crossing, crossing)
                if method != "itl" and p_cross != "–" and float(p_cross) < SIGNIFICANT:
                    fewer_crossings[method] += itl_crossing.mean() < crossing.mean()
                rows.append(
                    f"| {name} | {label} | {mean_std(pinball, 0)} "
                    f"| {_paper_cell(paper_row, method, 'pinball')} | {p} "
                    f"| {mean_std(crossing, 1)} | {_paper_cell(paper_row, method, 'cross')} "
                    f"| {p_cross} |"
                )
            if paper_row is not None:
                mean, sd = float(itl_pinball.mean()), float(paper_row["itl_pinball_sd"])
                within += abs(mean - float(paper_row["itl_pinball"])) <= sd
            crossing_ok += float(itl_crossing.mean()) <= 0.5
        splits = self.settings.repeats
        return render(
            "itl_table1.md", splits=splits, settings=self.settings.describe(),
            rows="\n".join(rows), within=within,
            with_paper=sum(name in self.paper for name in self.panels),
            crossing_ok=crossing_ok, n=len(self.panels), significant=f"{SIGNIFICANT:g}",
            fewer_jqr=fewer_crossings["jqr"], fewer_ind=fewer_crossings["ind"],
            paper_jqr=PAPER_FEWER_CROSSINGS["jqr"], paper_ind=PAPER_FEWER_CROSSINGS["ind"],
            smallest_p=_smallest_p(splits), seconds=f"{self.seconds:.0f}",
        ) + "\n"  # fmt: skip


EXPERIMENT = Table1
