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
Gaussian k_Θ of bandwidth 0.2, manytask's default Huber smoothing κ = 0.01.
Outputs inside ``out``: ``figure1.png``, ``results.md``, ``draws.csv``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from tqdm.auto import tqdm

from .._figures import agg_figure
from ..datasets.toy import SINE_TOY_BOUNDS, make_sine_toy, sine_toy_quantiles
from ..itl import InfiniteQuantileRegressor, crossing_loss, pinball_loss
from . import protocol
from ._tables import csv_bytes, mean_std, png_bytes, write_outputs

__all__ = [
    "DEFAULT_OUT",
    "Figure1",
    "LAMBDAS_NC",
    "LEVELS",
    "Settings",
    "fit_pair",
    "parse_panels",
    "reproduce",
    "run_from_cli",
]

DEFAULT_OUT = "manytask-reproduce/itl-figure1"
#: λ_nc of the left (non-crossing) and right (crossing) panels of Fig. 1.
LAMBDAS_NC = (10.0, 0.0)
#: The 19 levels of the metrics; the figure shows 100 levels.
LEVELS = tuple(np.round(np.linspace(0.05, 0.95, 19), 2))
PLOT_LEVELS = np.linspace(0.01, 0.99, 100)
N_TRAIN, N_ANCHORS = 40, 20
SEEDS, N_TEST = 10, 2000


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """The command line's defaults: ``seeds`` draws, each scored on ``n_test`` test points."""

    QUICK: ClassVar[dict] = {"seeds": 2, "n_test": 500}

    seeds: int = SEEDS
    n_test: int = N_TEST


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
    )


def fit_pair(seed, n_train=N_TRAIN, n_test=N_TEST, max_iter=2000):
    """Fit ∞-QR with each λ_nc of :data:`LAMBDAS_NC` on draw ``seed``.

    Returns (rows, models, (X, y)): one metrics row per λ_nc, the fitted models and the data.
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


@dataclass
class Figure1:
    """The outcome of :func:`reproduce`: one row per (draw, λ_nc), files and timing."""

    seeds: int
    rows: list = field(default_factory=list)
    files: list = field(default_factory=list)
    seconds: float = 0.0

    def values(self, lambda_nc, column) -> np.ndarray:
        return np.array([r[column] for r in self.rows if r["lambda_nc"] == lambda_nc])


def plot_figure1(models, data):
    """Three panels: 100 learnt quantiles with λ_nc = 10, with λ_nc = 0, and the true ones."""
    from matplotlib import colormaps

    X, y = data
    grid = np.linspace(*SINE_TOY_BOUNDS, 300)[:, None]
    colours = colormaps["coolwarm"](PLOT_LEVELS)
    panels = [
        (models[0].predict(grid, quantiles=PLOT_LEVELS), f"Non-crossing: λ_nc = {LAMBDAS_NC[0]:g}"),
        (models[1].predict(grid, quantiles=PLOT_LEVELS), f"Crossing: λ_nc = {LAMBDAS_NC[1]:g}"),
        (sine_toy_quantiles(grid, PLOT_LEVELS), "True quantiles"),
    ]
    figure = agg_figure(12, 3.8)
    axes = figure.subplots(1, 3, sharey=True)
    for ax, (Q, title) in zip(axes, panels):
        for level in range(Q.shape[1]):
            ax.plot(grid[:, 0], Q[:, level], color=colours[level], lw=0.7)
        ax.scatter(X[:, 0], y, s=10, color="k", zorder=3)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("X")
    axes[0].set_ylabel("Y")
    return figure


def _results_markdown(result: Figure1, n_test) -> str:
    lines = [
        "# Figure 1 of infinite-task-learning: the non-crossing penalty of ∞-QR",
        "",
        f"Sine toy data of Sangnier et al. (2016), n = {N_TRAIN} training points, m = "
        f"{N_ANCHORS} Gauss–Legendre anchors, {result.seeds} draws (seed s), {n_test} test "
        "points per draw. Fixed hyper-parameters (the paper gives none for Fig. 1): Gaussian "
        "k_X of "
        "bandwidth 0.3 on standardised x, λ = 1e-3, θ bandwidth 0.2, Huber κ = 0.01.",
        "",
        "pinball = Σ over 19 levels (0.05…0.95) of the mean test pinball loss; crossing×100 "
        "= 100 × crossing loss of those levels (of 100 levels for `grid, 100 levels`); "
        "MAE = mean |q̂ − q_true| over the grid and the 19 levels. Mean ± std over draws.",
        "",
        "| λ_nc | pinball (test) | crossing×100 train | crossing×100 test "
        "| crossing×100 grid | crossing×100 grid, 100 levels | MAE to true quantiles |",
        "|---|---|---|---|---|---|---|",
    ]
    for lambda_nc in LAMBDAS_NC:
        cells = [
            mean_std(result.values(lambda_nc, "pinball"), 3),
            mean_std(result.values(lambda_nc, "crossing_train_x100"), 3),
            mean_std(result.values(lambda_nc, "crossing_test_x100"), 3),
            mean_std(result.values(lambda_nc, "crossing_grid_x100"), 3),
            mean_std(result.values(lambda_nc, "crossing_grid100_x100"), 3),
            mean_std(result.values(lambda_nc, "mae_true"), 3),
        ]
        lines.append(f"| {lambda_nc:g} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "The paper prints no numbers for Fig. 1, only the picture: many crossings with "
        "λ_nc = 0, almost none with λ_nc = 10 except where there are no training points.",
        "",
        f"`figure1.png` shows draw 0. Wall time {result.seconds:.1f} s. Every draw: `draws.csv`.",
    ]
    return "\n".join(lines) + "\n"


def reproduce(
    out=DEFAULT_OUT, seeds: int = SEEDS, n_test: int = N_TEST, max_iter=2000, progress=True
) -> Figure1:
    """Fit both panels on ``seeds`` draws; write ``figure1.png``, ``results.md``, ``draws.csv``.

    Example
    -------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     result = reproduce(folder, seeds=1, n_test=50, max_iter=50, progress=False)
    >>> len(result.rows)
    2
    """
    if isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or seeds < 1:
        raise ValueError(f"seeds must be an integer >= 1, got {seeds!r}")
    result = Figure1(seeds=int(seeds))
    start = time.perf_counter()
    first = None
    for seed in tqdm(range(result.seeds), desc="itl-figure1", disable=not progress):
        rows, models, data = fit_pair(seed, n_test=n_test, max_iter=max_iter)
        result.rows += rows
        if first is None:
            first = (models, data)
    result.seconds = time.perf_counter() - start
    outputs = {
        "figure1.png": png_bytes(plot_figure1(*first)),
        "draws.csv": csv_bytes(CSV_COLUMNS, result.rows),
        "results.md": _results_markdown(result, n_test).encode(),
    }
    result.files += write_outputs(out, outputs)
    return result


def parse_panels(text) -> list[str]:
    """itl-figure1 has no panels or data sets to choose: only None, "" or "all" are accepted."""
    return protocol.parse_panels(text, (), experiment="itl-figure1")


def run_from_cli(out, *, quick=False, seeds=None, horizon=None, panels=None, progress=True) -> str:
    """``manytask reproduce itl-figure1``: 10 draws (quick: 2 draws, 500 test points).

    ``--seeds`` sets the number of draws; ``--horizon`` and ``--panels`` do not apply.
    """
    parse_panels(panels)
    settings = Settings.from_cli(quick, seeds=seeds)
    return protocol.run_and_summarise(out, reproduce, **settings.arguments(), progress=progress)
