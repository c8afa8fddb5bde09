"""Reproduce Figure 1 of ``infinite-task-learning.txt``: ∞-QR with and without non-crossing.

Setting (paper §5 "QR"): the sine toy data of Sangnier et al. (2016)
(:func:`manytask.datasets.toy.make_sine_toy`), n = 40 training points, m = 20 Gauss–Legendre
anchors; left panel λ_nc = 10 (strong non-crossing penalty), right panel λ_nc = 0; the paper plots
100 quantiles of the learnt continuum. We add a third panel with the TRUE quantiles (known in
closed form) and report, for each λ_nc, mean ± std over draws (seed s for draw s):

- pinball = Σ_τ mean test pinball loss over 19 levels τ ∈ {0.05, …, 0.95} on fresh test
  points (:func:`manytask.itl.pinball_loss`), and
- crossing ×100 (:func:`manytask.itl.crossing_loss`) of those 19 levels on the training
  points, on the test points and on a grid of 300 inputs covering [0, 1.5], and of the 100
  plotted levels on that grid,
- MAE to the true quantiles on the grid (19 levels).

The paper does not give the other hyper-parameters of Fig. 1; we fix them (not tuned on the
test data): Gaussian k_X of bandwidth 0.3 on standardised inputs (≈ 0.13 in x), λ = 1e-3,
Gaussian k_Θ of bandwidth 0.2, manytask's default Huber smoothing κ = 0.01. This is the
paper's model as the paper ran it. The figure adds a panel of
:class:`~manytask.itl.InfiniteQuantileRegressor`'s defaults (λ and bandwidth chosen in
``fit``, rearranged ``predict``) on draw 0 (not in the metrics; ``manytask demo`` scores them).
Outputs inside ``out``: ``figure1.png``, ``results.md``, ``draws.csv``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._figures import agg_figure
from ..datasets.toy import SINE_TOY_BOUNDS, make_sine_toy, sine_toy_quantiles
from ..itl import InfiniteQuantileRegressor, crossing_loss, pinball_loss
from . import protocol
from ._tables import csv_bytes, mean_std, png_bytes
from .protocol import Experiment, render

__all__ = ["EXPERIMENT", "Figure1", "LAMBDAS_NC", "LEVELS", "Settings", "fit_pair"]

#: λ_nc of the left (non-crossing) and right (crossing) panels of Fig. 1.
LAMBDAS_NC = (10.0, 0.0)
#: The 19 levels of the metrics; the figure shows 100 levels.
LEVELS = tuple(np.round(np.linspace(0.05, 0.95, 19), 2))
PLOT_LEVELS = np.linspace(0.01, 0.99, 100)
N_TRAIN, N_ANCHORS = 40, 20
N_TEST = 2000
#: The defaults panel's coverage is reported for x below this (the noisiest inputs) and above.
NOISY_BELOW = 0.4


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """``repeats`` draws (seed s for draw s), each scored on ``n_test`` test points; L-BFGS-B
    capped at ``max_iter`` iterations.

    Parameters
    ----------
    repeats : int, default=10
        Draws of the sine toy data.
    n_test : int, default=2000
        Test points per draw.
    max_iter : int, default=2000
        L-BFGS-B iterations of every fit.

    Examples
    --------
    >>> Settings.quick()
    Settings(repeats=2, n_test=500, max_iter=2000)
    """

    QUICK: ClassVar[dict] = {"repeats": 2, "n_test": 500}

    repeats: int = 10
    n_test: int = N_TEST
    max_iter: int = 2000


CSV_COLUMNS = (
    "seed",
    "lambda_nc",
    "pinball",
    "crossing_train_x100",
    "crossing_test_x100",
    "crossing_grid_x100",
    "crossing_grid100_x100",
    "mae_true",
    "fit_seconds",
)


def _estimator(lambda_nc, seed, max_iter):
    return InfiniteQuantileRegressor(
        lambda_=1e-3,
        lambda_nc=lambda_nc,
        n_anchors=N_ANCHORS,
        input_bandwidth=0.3,
        theta_bandwidth=0.2,
        max_iter=max_iter,
        random_state=seed,
        rearrange=False,  # the paper's model h(x)(θ): its crossing is what the figure shows
    )


def fit_pair(seed, n_train=N_TRAIN, n_test=N_TEST, max_iter=2000):
    """Fit ∞-QR with each λ_nc of :data:`LAMBDAS_NC` on draw ``seed``.

    Parameters
    ----------
    seed : int
        The draw: training data from ``seed``, test data from 10000 + ``seed``.
    n_train, n_test : int
        Training and test points.
    max_iter : int, default=2000
        L-BFGS-B iterations of each fit.

    Returns
    -------
    rows : list of dict
        One metrics row per λ_nc (the columns of :data:`CSV_COLUMNS`).
    models : list of InfiniteQuantileRegressor
        The fitted models, in the order of :data:`LAMBDAS_NC`.
    data : tuple of ndarray
        The training (X, y).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rows, models, (X, y) = fit_pair(0, n_train=10, n_test=20, max_iter=20)
    >>> [row["lambda_nc"] for row in rows], X.shape
    ([10.0, 0.0], (10, 1))
    """
    X, y = make_sine_toy(n_train, random_state=seed)
    X_test, y_test = make_sine_toy(n_test, random_state=10_000 + seed)
    grid = np.linspace(*SINE_TOY_BOUNDS, 300)[:, None]
    true_grid = sine_toy_quantiles(grid, LEVELS)
    rows, models = [], []
    for lambda_nc in LAMBDAS_NC:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an L-BFGS-B iteration cap is reported, not fatal
            model = _estimator(lambda_nc, seed, max_iter).fit(X, y)
        seconds = time.perf_counter() - start
        on_grid = model.predict(grid, quantiles=LEVELS)
        rows.append(
            {
                "seed": seed,
                "lambda_nc": lambda_nc,
                "pinball": pinball_loss(y_test, model.predict(X_test, quantiles=LEVELS), LEVELS),
                "crossing_train_x100": 100 * crossing_loss(model.predict(X, quantiles=LEVELS)),
                "crossing_test_x100": 100 * crossing_loss(model.predict(X_test, quantiles=LEVELS)),
                "crossing_grid_x100": 100 * crossing_loss(on_grid),
                "crossing_grid100_x100": 100
                * crossing_loss(model.predict(grid, quantiles=PLOT_LEVELS)),
                "mae_true": float(np.mean(np.abs(on_grid - true_grid))),
                "fit_seconds": seconds,
            }
        )
        models.append(model)
    return rows, models, (X, y)


def _coverage_by_region(model, data, test):
    """A sentence: test coverage of ``model``'s 5 %, 50 %, 95 % curves and the training
    points' fraction under the true ones, for x < :data:`NOISY_BELOW` and for x ≥ it."""
    levels = [0.05, 0.5, 0.95]
    parts = []
    for name, region in (("x < ", np.less), ("x ≥ ", np.greater_equal)):
        (X, y), (X_test, y_test) = data, test
        train, held_out = region(X[:, 0], NOISY_BELOW), region(X_test[:, 0], NOISY_BELOW)
        covered = np.mean(y_test[held_out, None] <= model.predict(X_test[held_out], levels), 0)
        under = np.mean(y[train, None] <= sine_toy_quantiles(X[train], levels), 0)
        parts.append(
            f"{name}{NOISY_BELOW}: test coverage {' / '.join(f'{c:.3f}' for c in covered)}, "
            f"{int(train.sum())} training points of which {' / '.join(f'{u:.2f}' for u in under)}"
            " lie under the true curves"
        )
    return "; ".join(parts)


def plot_figure1(models, data, defaults=None):
    """Panels: 100 learnt quantiles with λ_nc = 10, with λ_nc = 0, of ``defaults`` (a fitted
    ``InfiniteQuantileRegressor()``, if given), and the true ones."""
    from matplotlib import colormaps

    X, y = data
    grid = np.linspace(*SINE_TOY_BOUNDS, 300)[:, None]
    colours = colormaps["coolwarm"](PLOT_LEVELS)
    panels = [
        (models[0].predict(grid, quantiles=PLOT_LEVELS), f"Non-crossing: λ_nc = {LAMBDAS_NC[0]:g}"),
        (models[1].predict(grid, quantiles=PLOT_LEVELS), f"Crossing: λ_nc = {LAMBDAS_NC[1]:g}"),
    ]
    if defaults is not None:
        title = "InfiniteQuantileRegressor() defaults"
        panels.append((defaults.predict(grid, quantiles=PLOT_LEVELS), title))
    panels.append((sine_toy_quantiles(grid, PLOT_LEVELS), "True quantiles"))
    figure = agg_figure(4 * len(panels), 3.8)
    axes = figure.subplots(1, len(panels), sharey=True)
    for ax, (Q, title) in zip(axes, panels):
        for level in range(Q.shape[1]):
            ax.plot(grid[:, 0], Q[:, level], color=colours[level], lw=0.7)
        ax.scatter(X[:, 0], y, s=10, color="k", zorder=3)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("X")
    axes[0].set_ylabel("Y")
    return figure


class Figure1(Experiment):
    """``manytask reproduce itl-figure1``: both panels on ``settings.repeats`` draws of the
    sine toy data; writes ``figure1.png``, ``results.md``, ``draws.csv``.

    Parameters
    ----------
    settings : Settings or None, default=None
        None means :meth:`Settings.full`.
    panels : None
        Figure 1 has no panels to choose; anything but None, "" or "all" is an error.

    Attributes
    ----------
    rows : list of dict
        One per (draw, λ_nc), the columns of :data:`CSV_COLUMNS`.

    Examples
    --------
    >>> import tempfile
    >>> # skipped: runs the experiment (one draw, two fits: about a second)
    >>> with tempfile.TemporaryDirectory() as folder:  # doctest: +SKIP
    ...     result = Figure1(Settings(repeats=1, n_test=50, max_iter=50)).run(folder, False)
    >>> len(result.rows)  # doctest: +SKIP
    2
    """

    NAME = "itl-figure1"
    SETTINGS = Settings

    def __init__(self, settings=None, panels=None):
        super().__init__(settings, panels)
        self.rows: list = []
        self._first = None  # draw 0's models and data, for the figure
        self._coverage = "(no draw run)"  # of the defaults panel, for results.md

    def values(self, lambda_nc, column) -> np.ndarray:
        """``column`` of every draw with penalty ``lambda_nc``.

        Parameters
        ----------
        lambda_nc : float
            One of :data:`LAMBDAS_NC`.
        column : str
            One of :data:`CSV_COLUMNS`.

        Returns
        -------
        ndarray of shape (draws run,)
            The values.

        Examples
        --------
        >>> experiment = Figure1(Settings(repeats=1))
        >>> experiment.rows = [{"lambda_nc": 10.0, "pinball": 0.5}]
        >>> experiment.values(10.0, "pinball").tolist()
        [0.5]
        """
        return np.array([r[column] for r in self.rows if r["lambda_nc"] == lambda_nc])

    def jobs(self) -> list:
        """The draws 0 … ``repeats`` − 1.

        Returns
        -------
        list of int
            The seeds.

        Examples
        --------
        >>> Figure1(Settings(repeats=3)).jobs()
        [0, 1, 2]
        """
        return list(range(self.settings.repeats))

    def run_job(self, seed) -> None:
        """Fit both panels on draw ``seed`` (:func:`fit_pair`); keeps the first draw's for the
        figure, with a fit of ``InfiniteQuantileRegressor()``'s defaults on it.

        Parameters
        ----------
        seed : int
            The draw.

        Examples
        --------
        >>> experiment = Figure1(Settings(repeats=1, n_test=50, max_iter=50))
        >>> # skipped: fits ∞-QR twice (about a second)
        >>> experiment.run_job(0)  # doctest: +SKIP
        >>> len(experiment.rows)  # doctest: +SKIP
        2
        """
        rows, models, data = fit_pair(seed, n_test=self.settings.n_test,
                                      max_iter=self.settings.max_iter)  # fmt: skip
        self.rows += rows
        if self._first is None:  # the figure's draw, also fitted with the defaults
            defaults = InfiniteQuantileRegressor(random_state=seed, verbose=0).fit(*data)
            self._first = (models, data, defaults)
            test = make_sine_toy(self.settings.n_test, random_state=10_000 + seed)
            self._coverage = _coverage_by_region(defaults, data, test)

    def outputs(self) -> dict:
        """``figure1.png`` (draw 0's panels) and ``draws.csv`` (every row).

        Returns
        -------
        dict of str to bytes
            The files.

        Examples
        --------
        >>> experiment = Figure1(Settings(repeats=1, n_test=50, max_iter=50))
        >>> # skipped: needs the draws fitted (about a second)
        >>> experiment.run_job(0)  # doctest: +SKIP
        >>> sorted(experiment.outputs())  # doctest: +SKIP
        ['draws.csv', 'figure1.png']
        """
        return {
            "figure1.png": png_bytes(plot_figure1(*self._first)),
            "draws.csv": csv_bytes(CSV_COLUMNS, self.rows),
        }

    def results(self) -> str:
        """``results.md``: mean ± std over the draws of each metric, per λ_nc.

        Returns
        -------
        str
            The text, from ``templates/itl_figure1.md``.

        Examples
        --------
        >>> experiment = Figure1(Settings(repeats=1))
        >>> "| 10 | – |" in experiment.results()  # no draw run yet: empty cells
        True
        """
        rows = []
        for lambda_nc in LAMBDAS_NC:
            cells = [mean_std(self.values(lambda_nc, column), 3) for column in CSV_COLUMNS[2:8]]
            rows.append(f"| {lambda_nc:g} | " + " | ".join(cells) + " |")
        return render("itl_figure1.md", n_train=N_TRAIN, n_anchors=N_ANCHORS,
                      repeats=self.settings.repeats, n_test=self.settings.n_test,
                      rows="\n".join(rows), seconds=f"{self.seconds:.1f}",
                      defaults=self._coverage) + "\n"  # fmt: skip


EXPERIMENT = Figure1
