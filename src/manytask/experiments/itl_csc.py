"""The cost-sensitive classification experiment of ``infinite-task-learning.txt`` (∞-CSC).

The paper's main text only says "Additional experiments related to the CSC problem are
provided in Section S.10.5"; that supplement is not part of the paper text we have, so its
data sets, splits and numbers are unknown here and **no paper numbers are printed**. What we
run instead, with data that scikit-learn ships (no network):

- data sets: ``two-moons`` (``make_moons(300, noise=0.3)``), ``circles``
  (``make_circles(300, noise=0.15, factor=0.5)``), ``iris`` (versicolor = positive against
  the other two species) and ``breast-cancer`` (malignant = positive, 569 × 30);
- splits: random stratified 70/30 splits, seed s for split s (generated sets: drawn anew
  with seed s); inputs standardised inside the estimators;
- ∞-CSC (:class:`~manytask.itl.InfiniteCostSensitiveClassifier`) fitted once per split with
  fixed hyper-parameters (Gaussian k_X with the median-heuristic bandwidth of the
  standardised training inputs, λ = 1e-3, m = ⌈√n⌉ Sobol anchors, θ bandwidth 0.4), then
  evaluated at θ ∈ {−0.9, 0, 0.9};
- IND-CSC, a baseline: one weighted-hinge SVM per θ (scikit-learn ``SVC`` with the same
  Gaussian kernel, class weights (1 + θ)/2 on the positive and (1 − θ)/2 on the negative
  class as in eq. (4), C = 1/(nλ) to match the ridge weight).

Sensitivity = true-positive rate, specificity = true-negative rate on the test part; mean ±
std over splits. Outputs inside ``out``: ``results.md``, ``splits.csv`` and ``csc.png``
(∞-CSC sensitivity and specificity for θ on a fine grid of [−1, 1], from the same fits).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from .._figures import agg_figure
from ..itl import InfiniteCostSensitiveClassifier
from ..kernels import median_heuristic
from . import protocol
from ._tables import csv_bytes, mean_std, png_bytes
from .protocol import Experiment, render

__all__ = [
    "CSC",
    "DATASETS",
    "EXPERIMENT",
    "Settings",
    "THETAS",
    "load_csc_dataset",
    "run_split",
    "sensitivity_specificity",
]

DATASETS = ("two-moons", "circles", "iris", "breast-cancer")
THETAS = (-0.9, 0.0, 0.9)
CURVE_THETAS = np.linspace(-1.0, 1.0, 41)
METHODS = {"itl": "∞-CSC", "ind": "IND-CSC"}
LAMBDA = 1e-3
CSV_COLUMNS = ("dataset", "split", "method", "theta", "sensitivity", "specificity", "seconds")


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """``repeats`` random splits (seed s for split s), L-BFGS-B capped at ``max_iter``
    iterations.

    Parameters
    ----------
    repeats : int, default=10
        Random stratified 70/30 splits.
    max_iter : int, default=2000
        L-BFGS-B iterations of every ∞-CSC fit.

    Examples
    --------
    >>> Settings.quick()
    Settings(repeats=3, max_iter=500)
    """

    QUICK: ClassVar[dict] = {"repeats": 3, "max_iter": 500}

    repeats: int = 10
    max_iter: int = 2000


def load_csc_dataset(name, seed=0):
    """X and y ∈ {0, 1} (1 = positive class) of data set ``name`` (draw ``seed`` if generated).

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    seed : int, default=0
        Seed of the generated data sets (two-moons, circles).

    Returns
    -------
    X : ndarray of shape (n, d)
        Inputs.
    y : ndarray of shape (n,)
        Labels, 1 for the positive class.

    Examples
    --------
    >>> X, y = load_csc_dataset("iris")
    >>> X.shape, int(y.sum())
    ((150, 4), 50)
    """
    from sklearn import datasets

    if name == "two-moons":
        return datasets.make_moons(300, noise=0.3, random_state=seed)
    if name == "circles":
        return datasets.make_circles(300, noise=0.15, factor=0.5, random_state=seed)
    if name == "iris":
        iris = datasets.load_iris()
        return iris.data, (iris.target == 1).astype(int)  # versicolor against the rest
    if name == "breast-cancer":
        cancer = datasets.load_breast_cancer()
        return cancer.data, (cancer.target == 0).astype(int)  # 0 is "malignant"
    raise ValueError(f"name must be one of {', '.join(DATASETS)}, got {name!r}")


def sensitivity_specificity(y_true, y_pred) -> tuple[float, float]:
    """(true-positive rate, true-negative rate) of 0/1 labels; 1 is the positive class.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True labels, both classes present.
    y_pred : array-like of shape (n,)
        Predicted labels.

    Returns
    -------
    sensitivity, specificity : float
        The two rates.

    Examples
    --------
    >>> sensitivity_specificity([1, 1, 0, 0], [1, 0, 0, 0])
    (0.5, 1.0)
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    positive = y_true == 1
    if positive.all() or not positive.any():
        raise ValueError("y_true must hold both classes 0 and 1")
    return float(np.mean(y_pred[positive] == 1)), float(np.mean(y_pred[~positive] == 0))


def run_split(name, split, thetas=THETAS, max_iter=2000):
    """∞-CSC and IND-CSC on split ``split`` of ``name``: CSV rows and the ∞-CSC θ-curve.

    ∞-CSC is one fit for every θ (the cost-sensitive loss of eq. 4); IND-CSC one weighted
    SVM per θ with the same kernel and λ.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    split : int
        Seed of the split (and of the generated data).
    thetas : sequence of float in [-1, 1], default=(-0.9, 0.0, 0.9)
        Levels of the rows.
    max_iter : int, default=2000
        L-BFGS-B iterations of the ∞-CSC fit.

    Returns
    -------
    rows : list of dict
        One per (method, θ), the columns of :data:`CSV_COLUMNS`.
    curve : ndarray of shape (len(CURVE_THETAS), 2)
        ∞-CSC's test (sensitivity, specificity) on the θ grid.

    Examples
    --------
    >>> # skipped: fits ∞-CSC on 105 points and three SVMs (about a second)
    >>> rows, curve = run_split("iris", 0, max_iter=50)  # doctest: +SKIP
    >>> len(rows), curve.shape  # doctest: +SKIP
    (6, (41, 2))
    """
    X, y = load_csc_dataset(name, seed=split)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=split
    )
    scaled = StandardScaler().fit_transform(X_train)
    bandwidth = median_heuristic(scaled, random_state=split)
    rows = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an L-BFGS-B iteration cap is reported, not fatal
        # the configuration of the committed results, pinned against changes of the defaults
        model = InfiniteCostSensitiveClassifier(
            lambda_=LAMBDA, input_bandwidth=bandwidth, theta_bandwidth=0.4, kappa=0.01,
            max_iter=max_iter, tol=1e-8, random_state=split,
        ).fit(X_train, y_train)  # fmt: skip
    seconds = time.perf_counter() - start
    predictions = model.predict(X_test, theta=np.asarray(thetas, dtype=float))
    for column, theta in enumerate(thetas):
        sens, spec = sensitivity_specificity(y_test, predictions[:, column])
        rows.append(dict(method="itl", theta=theta, sensitivity=sens, specificity=spec))
        rows[-1]["seconds"] = seconds
    curve = np.array(
        [sensitivity_specificity(y_test, p) for p in model.predict(X_test, CURVE_THETAS).T]
    )
    for theta in thetas:
        start = time.perf_counter()
        weights = {1: (1 + theta) / 2, 0: (1 - theta) / 2}
        svm = make_pipeline(
            StandardScaler(),
            SVC(
                C=1.0 / (len(y_train) * LAMBDA),
                gamma=1.0 / (2 * bandwidth**2),
                class_weight=weights,
            ),
        ).fit(X_train, y_train)
        sens, spec = sensitivity_specificity(y_test, svm.predict(X_test))
        rows.append(
            dict(
                method="ind",
                theta=theta,
                sensitivity=sens,
                specificity=spec,
                seconds=time.perf_counter() - start,
            )
        )
    for row in rows:
        row.update(dataset=name, split=split)
    return rows, curve


def plot_curves(result):
    """∞-CSC test sensitivity and specificity against θ, mean ± std over splits."""
    count = len(result.panels)
    figure = agg_figure(3.2 * count, 3.2)
    axes = np.atleast_1d(figure.subplots(1, count, sharey=True))
    for ax, name in zip(axes, result.panels):
        curves = np.array(result.curves[name])  # (splits, thetas, 2)
        for index, label in enumerate(("sensitivity", "specificity")):
            mean, std = curves[:, :, index].mean(0), curves[:, :, index].std(0)
            ax.plot(CURVE_THETAS, mean, color=f"C{index}", label=label)
            ax.fill_between(CURVE_THETAS, mean - std, mean + std, color=f"C{index}", alpha=0.2)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("θ")
    axes[0].set_ylabel("test rate (∞-CSC, one fit)")
    axes[0].legend(fontsize=8)
    return figure


class CSC(Experiment):
    """``manytask reproduce itl-csc``: ∞-CSC and IND-CSC on ``settings.repeats`` splits of
    each data set; writes ``results.md``, ``splits.csv`` and ``csc.png``.

    Parameters
    ----------
    settings : Settings or None, default=None
        None means :meth:`Settings.full`.
    panels : str, sequence of str or None, default=None
        Data sets among :data:`DATASETS`; None means all.

    Attributes
    ----------
    rows : list of dict
        One per (data set, split, method, θ), the columns of :data:`CSV_COLUMNS`.
    curves : dict
        ``curves[data set]``: per split, ∞-CSC's (sensitivity, specificity) on the θ grid.

    Examples
    --------
    >>> import tempfile
    >>> # skipped: runs the experiment on iris (about a second)
    >>> with tempfile.TemporaryDirectory() as folder:  # doctest: +SKIP
    ...     result = CSC(Settings(repeats=1, max_iter=50), "iris").run(folder, progress=False)
    >>> len(result.rows)  # 3 levels × 2 methods  # doctest: +SKIP
    6
    """

    NAME = "itl-csc"
    SETTINGS = Settings
    PANELS = DATASETS
    PANEL_KIND = "data set"

    def __init__(self, settings=None, panels=None):
        super().__init__(settings, panels)
        self.rows: list = []
        self.curves: dict = {}

    def values(self, dataset, method, theta, column) -> np.ndarray:
        """``column`` of every split of (``dataset``, ``method``, ``theta``).

        Parameters
        ----------
        dataset : str
            A data set.
        method : {"itl", "ind"}
            ∞-CSC or IND-CSC.
        theta : float
            One of :data:`THETAS`.
        column : str
            One of :data:`CSV_COLUMNS`.

        Returns
        -------
        ndarray of shape (splits run,)
            The values.

        Examples
        --------
        >>> experiment = CSC(Settings(repeats=1), "iris")
        >>> experiment.rows = [dict(dataset="iris", method="itl", theta=0.0, sensitivity=0.9)]
        >>> experiment.values("iris", "itl", 0.0, "sensitivity").tolist()
        [0.9]
        """
        return np.array([r[column] for r in self.rows if r["dataset"] == dataset
                         and r["method"] == method and r["theta"] == theta])  # fmt: skip

    def jobs(self) -> list:
        """(data set, split) pairs, data set by data set.

        Returns
        -------
        list of tuple
            The jobs.

        Examples
        --------
        >>> CSC(Settings(repeats=2), "iris, circles").jobs()
        [('iris', 0), ('iris', 1), ('circles', 0), ('circles', 1)]
        """
        return [(name, split) for name in self.panels for split in range(self.settings.repeats)]

    def run_job(self, job) -> None:
        """Run :func:`run_split` on one (data set, split) and record its rows and curve.

        Parameters
        ----------
        job : tuple of (str, int)
            One of :meth:`jobs`.

        Examples
        --------
        >>> experiment = CSC(Settings(repeats=1, max_iter=50), "iris")
        >>> # skipped: one ∞-CSC fit and three SVMs (about a second)
        >>> experiment.run_job(("iris", 0))  # doctest: +SKIP
        >>> len(experiment.rows)  # doctest: +SKIP
        6
        """
        name, split = job
        rows, curve = run_split(name, split, max_iter=self.settings.max_iter)
        self.rows += rows
        self.curves.setdefault(name, []).append(curve)

    def outputs(self) -> dict:
        """``csc.png`` (∞-CSC's rates against θ) and ``splits.csv`` (every row).

        Returns
        -------
        dict of str to bytes
            The files.

        Examples
        --------
        >>> experiment = CSC(Settings(repeats=1), "iris")
        >>> experiment.curves = {"iris": [np.full((len(CURVE_THETAS), 2), 0.5)]}
        >>> sorted(experiment.outputs())
        ['csc.png', 'splits.csv']
        """
        return {
            "csc.png": png_bytes(plot_curves(self)),
            "splits.csv": csv_bytes(CSV_COLUMNS, self.rows),
        }

    def results(self) -> str:
        """``results.md``: mean ± std of sensitivity and specificity per method and θ.

        Returns
        -------
        str
            The text, from ``templates/itl_csc.md``.

        Examples
        --------
        >>> experiment = CSC(Settings(repeats=1), "iris")
        >>> "| iris | ∞-CSC | -0.9 | – | – |" in experiment.results()  # nothing run yet
        True
        """
        rows = []
        for name in self.panels:
            for method, label in METHODS.items():
                for theta in THETAS:
                    sens = mean_std(self.values(name, method, theta, "sensitivity"))
                    spec = mean_std(self.values(name, method, theta, "specificity"))
                    rows.append(f"| {name} | {label} | {theta:+.1f} | {sens} | {spec} |")
        return render("itl_csc.md", splits=self.settings.repeats, lambda_=f"{LAMBDA:g}",
                      rows="\n".join(rows), seconds=f"{self.seconds:.1f}") + "\n"  # fmt: skip


EXPERIMENT = CSC
