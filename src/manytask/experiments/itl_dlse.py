"""Figure 2 of ``infinite-task-learning.txt``: the θ-property of ∞-DLSE (inliers ≈ 1 − θ).

∞-OCSVM (:class:`~manytask.itl.InfiniteLevelSetEstimator`) is fitted and the proportion of
inliers on train and test plotted against θ, next to the oracle 1 − θ:

- data: Spambase (:func:`manytask.datasets.load_spambase`) when ``spam.rda`` is on this
  machine, else the **substitute** breast cancer data of scikit-learn (the output says so);
  Wilt (UCI only) is not run;
- run s trains on a random subset of ``n_train`` points (seed s; default 70 %), labels
  unused, and tests on up to ``n_test`` of the others;
- differences from the paper: a Gaussian k_X with the median-heuristic bandwidth on the
  standardised inputs (the paper's exponentiated χ² kernel needs the raw, non-negative
  inputs), and otherwise the estimator's defaults, pinned (Gauss–Lobatto anchors on [0.05, 1],
  m = max(⌈√n⌉, 20) capped at 100, k_Θ and k_b Gaussian of bandwidth 0.2, ridge ρ = 1e-3 on h
  so that problem (16) is well-posed). ``--quick`` trains on 400 points, tests on 1000.

Outputs inside ``out``: ``figure2.png``, ``results.md`` and ``levels.csv``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._figures import agg_figure
from ..datasets.spambase import load_spambase
from ..itl import InfiniteLevelSetEstimator
from . import protocol
from ._tables import csv_bytes, png_bytes
from .protocol import Experiment, render

__all__ = ["DLSE", "EXPERIMENT", "Settings", "load_dlse_data", "run_once"]

#: θ of the table; the figure uses a finer grid.
TABLE_THETAS = tuple(np.round(np.linspace(0.1, 0.9, 9), 1))
CURVE_THETAS = np.linspace(0.05, 1.0, 39)
EPSILON = 0.05
CSV_COLUMNS = ("dataset", "run", "theta", "inliers_train", "inliers_test", "fit_seconds")


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """``repeats`` runs, each on a random subset of ``n_train`` training points (None: 70 %)
    and up to ``n_test`` test points (None: the rest); ``--quick`` one run on 400 training
    and 1000 test points. L-BFGS-B capped at ``max_iter`` iterations.

    Parameters
    ----------
    repeats : int, default=3
        Runs, run r on the subset drawn with seed r.
    n_train : int or None, default=None
        Training points, >= 2; None: 70 % of the data.
    n_test : int or None, default=None
        Test points; None: the rest.
    max_iter : int, default=10000
        L-BFGS-B iterations of every fit.

    Examples
    --------
    >>> Settings.quick()
    Settings(repeats=1, n_train=400, n_test=1000, max_iter=10000)
    """

    QUICK: ClassVar[dict] = {"repeats": 1, "n_train": 400, "n_test": 1000}

    repeats: int = 3
    n_train: int | None = None
    n_test: int | None = None
    max_iter: int = 10000

    def __post_init__(self):
        super().__post_init__()
        if self.n_train is not None and (isinstance(self.n_train, bool) or int(self.n_train) < 2):
            raise ValueError(f"n_train must be >= 2, got {self.n_train!r}")


def load_dlse_data(data_home=None):
    """(name, X, note): Spambase's 4601 × 57 inputs, or breast cancer when spam.rda is absent.

    Parameters
    ----------
    data_home : str, Path or None, default=None
        Where to look for Spambase (see :func:`~manytask.datasets.load_spambase`).

    Returns
    -------
    name : str
        The data set used.
    X : ndarray of shape (n, d)
        Its inputs (labels unused).
    note : str
        Where the data came from, for ``results.md``.

    Examples
    --------
    >>> name, X, note = load_dlse_data()
    >>> name in ("spambase", "breast-cancer (substitute)")
    True
    """
    try:
        spam = load_spambase(data_home)
    except (FileNotFoundError, ImportError) as error:
        from sklearn.datasets import load_breast_cancer

        note = (
            f"Spambase is not available here ({error}); SUBSTITUTE: scikit-learn's breast "
            "cancer data (569 × 30, labels unused)."
        )
        return "breast-cancer (substitute)", load_breast_cancer().data, note
    return "spambase", spam.X, f"Spambase read from {spam.source} (labels unused)."


def _sizes(n, n_train, n_test):
    """Training and test sizes: None means 70 % for training and all the rest for testing."""
    n_train = round(0.7 * n) if n_train is None else min(int(n_train), n - 1)
    if n_train < 2:
        raise ValueError(f"n_train must be >= 2, got {n_train!r}")
    n_test = n - n_train if n_test is None else min(int(n_test), n - n_train)
    return n_train, n_test


def run_once(X, run, n_train=None, n_test=None, max_iter=10000):
    """Fit ∞-DLSE on a random subset; fractions of inliers on train and test per θ.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data.
    run : int
        Seed of the subset and of the estimator.
    n_train, n_test : int or None, default=None
        Training and test sizes (None: 70 % and the rest).
    max_iter : int, default=10000
        L-BFGS-B iterations.

    Returns
    -------
    inliers_train, inliers_test : ndarray of shape (len(CURVE_THETAS),)
        Fractions of inliers per θ of :data:`CURVE_THETAS`.
    seconds : float
        Wall time of the fit.

    Examples
    --------
    >>> import warnings
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     train, test, seconds = run_once(X, 0, n_train=12, max_iter=50)
    >>> train.shape == test.shape == CURVE_THETAS.shape
    True
    """
    order = np.random.default_rng(run).permutation(len(X))
    n_train, n_test = _sizes(len(X), n_train, n_test)
    train, test = X[order[:n_train]], X[order[n_train : n_train + n_test]]
    start = time.perf_counter()
    # the configuration of the committed results, pinned against changes of the defaults
    model = InfiniteLevelSetEstimator(
        lambda_=1e-4, epsilon=EPSILON, input_bandwidth="median", theta_bandwidth=0.2,
        kappa=1e-3, ridge=1e-3,
        quadrature="gauss-lobatto", max_iter=max_iter, tol=1e-8, random_state=run,
    )  # fmt: skip
    model.fit(train)
    seconds = time.perf_counter() - start
    inliers_train = (model.predict(train, CURVE_THETAS) == 1).mean(axis=0)
    inliers_test = (model.predict(test, CURVE_THETAS) == 1).mean(axis=0)
    return inliers_train, inliers_test, seconds


def plot_figure2(result):
    """Proportion of inliers against θ: train, test (mean ± std over runs) and oracle 1 − θ."""
    figure = agg_figure(4.8, 4.0)
    ax = figure.subplots()
    for index, (which, label) in enumerate((("train", "Train"), ("test", "Test"))):
        values = np.array(getattr(result, which))
        mean, std = values.mean(0), values.std(0)
        ax.plot(CURVE_THETAS, mean, color=f"C{index}", label=label)
        ax.fill_between(CURVE_THETAS, mean - std, mean + std, color=f"C{index}", alpha=0.2)
    ax.plot(CURVE_THETAS, 1 - CURVE_THETAS, "k--", lw=1, label="Oracle 1 − θ")
    ax.set_xlabel("θ")
    ax.set_ylabel("Proportion of inliers")
    ax.set_title(f"Dataset: {result.dataset}", fontsize=10)
    ax.legend(fontsize=8)
    return figure


def _level_rows(result):
    for run, (train, test) in enumerate(zip(result.train, result.test)):
        for theta, inside_train, inside_test in zip(CURVE_THETAS, train, test):
            yield {
                "dataset": result.dataset,
                "run": run,
                "theta": float(theta),
                "inliers_train": float(inside_train),
                "inliers_test": float(inside_test),
                "fit_seconds": float(result.fit_seconds[run]),
            }


class DLSE(Experiment):
    """``manytask reproduce itl-dlse``: ∞-DLSE fitted ``settings.repeats`` times; writes
    ``figure2.png``, ``results.md`` and ``levels.csv``.

    Parameters
    ----------
    settings : Settings or None, default=None
        None means :meth:`Settings.full`.
    panels : None
        Nothing to choose; anything but None, "" or "all" is an error.
    data_home : str, Path or None, default=None
        Where :func:`load_dlse_data` looks for Spambase.
    data : tuple or None, default=None
        (name, X, note) used instead of :func:`load_dlse_data`.

    Attributes
    ----------
    train, test : list of ndarray
        Per run, the fractions of inliers on :data:`CURVE_THETAS`.

    Examples
    --------
    >>> import tempfile
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> # skipped: runs the experiment (one ∞-DLSE fit: seconds)
    >>> with tempfile.TemporaryDirectory() as folder:  # doctest: +SKIP
    ...     result = DLSE(Settings(repeats=1, n_train=30), data=("gauss", X, "generated"))
    ...     result = result.run(folder, progress=False)
    >>> len(result.train[0]) == len(CURVE_THETAS)  # doctest: +SKIP
    True
    """

    NAME = "itl-dlse"
    SETTINGS = Settings

    def __init__(self, settings=None, panels=None, data_home=None, data=None):
        super().__init__(settings, panels)
        self.data_home, self.data = data_home, data
        self.train, self.test, self.fit_seconds = [], [], []

    def jobs(self) -> list:
        """Load the data (or take ``data``); the runs 0 … ``repeats`` − 1.

        Returns
        -------
        list of int
            The runs' seeds.

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> experiment = DLSE(Settings(repeats=2, n_train=12), data=("gauss", X, "generated"))
        >>> experiment.jobs(), experiment.n_train, experiment.n_test
        ([0, 1], 12, 8)
        """
        self.dataset, self.X, self.note = (
            self.data if self.data is not None else load_dlse_data(self.data_home)
        )
        self.n_train, self.n_test = _sizes(len(self.X), self.settings.n_train,
                                           self.settings.n_test)  # fmt: skip
        return list(range(self.settings.repeats))

    def run_job(self, run) -> None:
        """Fit ∞-DLSE for run ``run`` (:func:`run_once`) and record its curves.

        Parameters
        ----------
        run : int
            One of :meth:`jobs`.

        Examples
        --------
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> experiment = DLSE(Settings(repeats=2, n_train=12), data=("gauss", X, "generated"))
        >>> _ = experiment.jobs()
        >>> # skipped: one ∞-DLSE fit (seconds)
        >>> experiment.run_job(0)  # doctest: +SKIP
        >>> len(experiment.train)  # doctest: +SKIP
        1
        """
        settings = self.settings
        train, test, seconds = run_once(self.X, run, settings.n_train, settings.n_test,
                                        max_iter=settings.max_iter)  # fmt: skip
        self.train.append(train)
        self.test.append(test)
        self.fit_seconds.append(seconds)

    def at(self, which, theta) -> np.ndarray:
        """Fractions of inliers over runs at the curve level closest to ``theta``.

        Parameters
        ----------
        which : {"train", "test"}
            The points.
        theta : float
            The level.

        Returns
        -------
        ndarray of shape (runs,)
            The fractions.

        Examples
        --------
        >>> experiment = DLSE(Settings(repeats=1))
        >>> experiment.train = [1.0 - CURVE_THETAS]
        >>> experiment.at("train", 0.3).round(3).tolist()
        [0.7]
        """
        column = int(np.argmin(np.abs(CURVE_THETAS - theta)))
        return np.array(getattr(self, which))[:, column]

    def outputs(self) -> dict:
        """``figure2.png`` (inliers against θ) and ``levels.csv`` (every run and level).

        Returns
        -------
        dict of str to bytes
            The files.

        Examples
        --------
        >>> experiment = DLSE(Settings(repeats=1))
        >>> experiment.dataset, experiment.fit_seconds = "oracle", [0.0]
        >>> experiment.train = experiment.test = [1.0 - CURVE_THETAS]
        >>> sorted(experiment.outputs())
        ['figure2.png', 'levels.csv']
        """
        return {
            "figure2.png": png_bytes(plot_figure2(self)),
            "levels.csv": csv_bytes(CSV_COLUMNS, _level_rows(self)),
        }

    def results(self) -> str:
        """``results.md``: inliers on train and test against 1 − θ at :data:`TABLE_THETAS`.

        Returns
        -------
        str
            The text, from ``templates/itl_dlse.md``.

        Examples
        --------
        >>> experiment = DLSE(Settings(repeats=1))
        >>> experiment.note, experiment.n_train, experiment.n_test = "oracle", 10, 10
        >>> experiment.fit_seconds = [0.0]
        >>> experiment.train = experiment.test = [1.0 - CURVE_THETAS]
        >>> "| 0.3 | 0.70 | 0.700 ± 0.000 | 0.700 ± 0.000 |" in experiment.results()
        True
        """
        rows, gaps = [], []
        for theta in TABLE_THETAS:
            train, test = self.at("train", theta), self.at("test", theta)
            gaps.append(max(abs(train.mean() - (1 - theta)), abs(test.mean() - (1 - theta))))
            rows.append(
                f"| {theta:.1f} | {1 - theta:.2f} | {train.mean():.3f} ± {train.std():.3f} "
                f"| {test.mean():.3f} ± {test.std():.3f} |"
            )
        return render("itl_dlse.md", note=self.note, runs=len(self.train), n_train=self.n_train,
                      n_test=self.n_test, epsilon=EPSILON, rows="\n".join(rows),
                      largest_gap=f"{max(gaps):.3f}",
                      fit_seconds=f"{np.mean(self.fit_seconds):.1f}",
                      seconds=f"{self.seconds:.1f}") + "\n"  # fmt: skip


EXPERIMENT = DLSE
