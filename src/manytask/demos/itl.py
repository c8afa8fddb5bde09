"""Demo: every conditional quantile from one ∞-QR fit, on the heteroscedastic sine toy data.

One :class:`manytask.itl.InfiniteQuantileRegressor` is fitted on the sine toy data of
Sangnier et al. (:func:`manytask.datasets.toy.make_sine_toy`, noise standard deviation
falling from 1.2 to 0.2), then asked for 19 quantile curves (levels 0.05, …, 0.95) without
refitting; the true quantiles are known in closed form, so the table shows, per level, the
test pinball loss of the fit and of the truth and the test coverage, overall, where the noise
is largest (x < 0.4) and on the rest, and the crossing loss of the 19 curves. The fit uses the
estimator's defaults: λ and the input bandwidth chosen from the data inside ``fit``, the
rearranged (never crossing) curves. Beside the fan, a 90 % interval calibrated by CV+
(:meth:`~manytask.itl.InfiniteQuantileRegressor.calibrate` with ``cv=5``, then
``predict_interval``): a coverage guarantee (marginal over x) that quantile curves alone do
not give. 1000 training points: with 200 (about 50 with x < 0.4) one draw's sampling noise
dominated the picture. Even so, the ridge penalty pulls the fitted spread towards its average
over x, so where the noise is largest (x < 0.4) the 5 % and 95 % curves stay slightly inside
the true ones: hence the coverage per region and the calibrated interval.
The paper's Figure 1, Table 1, cost-sensitive and level-set experiments are
``manytask reproduce itl-figure1 | itl-table1 | itl-csc | itl-dlse``.

What lives here: the small experiment, its text table, its figure and its report section.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .._figures import agg_figure
from ..datasets.toy import SINE_TOY_BOUNDS, make_sine_toy, sine_toy_quantiles
from ..itl import InfiniteQuantileRegressor, crossing_loss, pinball_loss
from ..report import Report, Section, text_table

__all__ = ["ITLDemoResult", "run_itl_demo", "plot_itl_demo", "itl_section", "run_section"]

LEVELS = tuple(np.round(np.linspace(0.05, 0.95, 19), 2))
#: Levels shown in the table (every other one of the 19 plotted, to keep it short).
TABLE_LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
#: Coverage is also reported for x below this (the noisiest inputs: σ(x) ≥ 0.93) and above.
NOISY_BELOW = 0.4
#: Coverage asked of the calibrated interval.
INTERVAL_COVERAGE = 0.9


@dataclass(frozen=True)
class ITLDemoResult:
    """One ∞-QR fit on the sine toy data and its evaluation.

    Parameters
    ----------
    X, y : arrays
        The training data, (n, 1) and (n,).
    grid : array of shape (G,)
        Inputs on which the curves are drawn.
    curves : array of shape (G, 19)
        Predicted quantiles of :data:`LEVELS` on ``grid`` (one fit).
    pinball, pinball_true : arrays of shape (19,)
        Mean test pinball loss per level of the fit and of the true quantiles.
    coverage : array of shape (3, 19)
        Fraction of the test points under each predicted curve (ideally its level): all
        of them, those with x < :data:`NOISY_BELOW`, the others.
    interval : array of shape (G, 2)
        The calibrated :data:`INTERVAL_COVERAGE` interval on ``grid``.
    interval_coverage : array of shape (3,)
        Fraction of the test points inside it: all, x < :data:`NOISY_BELOW`, the others.
    crossing_x100 : float
        100 × crossing loss of the 19 levels on the test points.
    seconds : float
        Fit time (without the calibration).
    seed : int
        Seed of the training data (the test data use ``seed + 1``).

    Examples
    --------
    >>> import numpy as np
    >>> zeros = np.zeros(19)
    >>> grid = np.linspace(0.0, 1.5, 5)
    >>> result = ITLDemoResult(np.zeros((2, 1)), np.zeros(2), grid, np.zeros((5, 19)), zeros,
    ...                        zeros, np.zeros((3, 19)), np.zeros((5, 2)), np.zeros(3),
    ...                        crossing_x100=0.0, seconds=0.1, seed=0)
    >>> result.rows()[0]
    [0.05, 0.0, 0.0, 0.0, 0.0, 0.0]
    """

    X: np.ndarray
    y: np.ndarray
    grid: np.ndarray
    curves: np.ndarray
    pinball: np.ndarray
    pinball_true: np.ndarray
    coverage: np.ndarray
    interval: np.ndarray
    interval_coverage: np.ndarray
    crossing_x100: float
    seconds: float
    seed: int

    COLUMNS = ("level", "test pinball (∞-QR)", "test pinball (true quantile)", "coverage",
               f"coverage x < {NOISY_BELOW}", f"coverage x ≥ {NOISY_BELOW}")  # fmt: skip

    def rows(self) -> list[list]:
        """One row per level of :data:`TABLE_LEVELS`: level, pinball (∞-QR, truth), coverage
        (all test points, x < :data:`NOISY_BELOW`, the others).

        Returns
        -------
        list of list
            Seven rows, in the order of :attr:`COLUMNS`.

        Examples
        --------
        >>> import numpy as np
        >>> zeros = np.zeros(19)
        >>> grid = np.linspace(0.0, 1.5, 5)
        >>> result = ITLDemoResult(np.zeros((2, 1)), np.zeros(2), grid, np.zeros((5, 19)), zeros,
        ...                        zeros, np.zeros((3, 19)), np.zeros((5, 2)), np.zeros(3),
        ...                        crossing_x100=0.0, seconds=0.1, seed=0)
        >>> [row[0] for row in result.rows()]
        [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
        """
        index = {level: i for i, level in enumerate(LEVELS)}
        return [
            [
                level,
                float(self.pinball[index[level]]),
                float(self.pinball_true[index[level]]),
                *(float(c) for c in self.coverage[:, index[level]]),
            ]
            for level in TABLE_LEVELS
        ]

    def summary(self) -> str:
        """One paragraph: data, fit time, crossing loss, summed pinball loss, coverage of the
        calibrated interval and of the fan's 5 %–95 % band.

        Returns
        -------
        str
            The paragraph.

        Examples
        --------
        >>> import numpy as np
        >>> zeros = np.zeros(19)
        >>> grid = np.linspace(0.0, 1.5, 5)
        >>> result = ITLDemoResult(np.zeros((2, 1)), np.zeros(2), grid, np.zeros((5, 19)), zeros,
        ...                        zeros, np.zeros((3, 19)), np.zeros((5, 2)), np.zeros(3),
        ...                        crossing_x100=0.0, seconds=0.1, seed=0)
        >>> result.summary()[:34]
        'Sine toy data (n = 2, seed 0); one'
        """
        interval = " / ".join(f"{c:.3f}" for c in self.interval_coverage)
        band = " / ".join(f"{c:.3f}" for c in self.coverage[:, -1] - self.coverage[:, 0])
        return (
            f"Sine toy data (n = {len(self.y)}, seed {self.seed}); one ∞-QR fit "
            f"({self.seconds:.1f} s), 19 levels 0.05…0.95 predicted from it. Crossing×100 of "
            f"the 19 curves on test points: {self.crossing_x100:.3f}. Summed pinball over the "
            f"19 levels: {self.pinball.sum():.3f} (true quantiles: {self.pinball_true.sum():.3f})."
            f" Largest |test coverage − level|: {np.max(np.abs(self.coverage[0] - LEVELS)):.3f}"
            f" (x < {NOISY_BELOW}: {np.max(np.abs(self.coverage[1] - LEVELS)):.3f})."
            f" Test coverage (all / x < {NOISY_BELOW} / x ≥ {NOISY_BELOW}) of the calibrated "
            f"{INTERVAL_COVERAGE:.0%} interval: {interval}; of the fan's [q_0.05, q_0.95]: {band}."
        )

    def table(self) -> str:
        """The rows as an aligned plain-text table.

        Returns
        -------
        str
            See :func:`manytask.report.text_table`.

        Examples
        --------
        >>> import numpy as np
        >>> zeros = np.zeros(19)
        >>> grid = np.linspace(0.0, 1.5, 5)
        >>> result = ITLDemoResult(np.zeros((2, 1)), np.zeros(2), grid, np.zeros((5, 19)), zeros,
        ...                        zeros, np.zeros((3, 19)), np.zeros((5, 2)), np.zeros(3),
        ...                        crossing_x100=0.0, seconds=0.1, seed=0)
        >>> len(result.table().splitlines())  # header, rule, 7 levels
        9
        """
        rows = [[f"{r[0]:.2f}", f"{r[1]:.4f}", f"{r[2]:.4f}", *(f"{c:.3f}" for c in r[3:])]
                for r in self.rows()]  # fmt: skip
        return text_table(self.COLUMNS, rows)


def run_itl_demo(seed: int = 0, n_samples: int = 1000, n_test: int = 20000) -> ITLDemoResult:
    """Fit ∞-QR once on ``n_samples`` sine-toy points, evaluate 19 levels, and calibrate a
    :data:`INTERVAL_COVERAGE` interval by CV+ on the same points (5 refits).

    Parameters
    ----------
    seed : int, default=0
        Seed of the training data and the model; the test data use ``seed + 1``.
    n_samples : int, default=1000
        Training points (also the calibration points of CV+).
    n_test : int, default=20000
        Test points of the losses and coverages (sd of a coverage ≤ 0.004 over all, ≤ 0.007
        over x < :data:`NOISY_BELOW`).

    Returns
    -------
    ITLDemoResult
        The fit's curves and losses.

    Examples
    --------
    >>> result = run_itl_demo(n_samples=30, n_test=50)
    >>> result.curves.shape
    (200, 19)
    """
    X, y = make_sine_toy(n_samples, random_state=seed)
    X_test, y_test = make_sine_toy(n_test, random_state=seed + 1)
    start = time.perf_counter()
    model = InfiniteQuantileRegressor(random_state=seed, verbose=0).fit(X, y)
    seconds = time.perf_counter() - start
    model.calibrate(X, y, cv=5)
    grid = np.linspace(*SINE_TOY_BOUNDS, 200)
    predicted = model.predict(X_test, quantiles=LEVELS)
    bounds = model.predict_interval(X_test, INTERVAL_COVERAGE)
    inside = (bounds[:, 0] <= y_test) & (y_test <= bounds[:, 1])
    noisy = X_test[:, 0] < NOISY_BELOW
    regions = (np.ones_like(noisy), noisy, ~noisy)
    true = sine_toy_quantiles(X_test, LEVELS)
    per_level = [
        (
            pinball_loss(y_test, predicted[:, [k]], [level]),
            pinball_loss(y_test, true[:, [k]], [level]),
        )
        for k, level in enumerate(LEVELS)
    ]
    return ITLDemoResult(
        X=X,
        y=y,
        grid=grid,
        curves=model.predict(grid[:, None], quantiles=LEVELS),
        pinball=np.array([p for p, _ in per_level]),
        pinball_true=np.array([t for _, t in per_level]),
        coverage=np.array([np.mean(y_test[r, None] <= predicted[r], axis=0) for r in regions]),
        interval=model.predict_interval(grid[:, None], INTERVAL_COVERAGE),
        interval_coverage=np.array([np.mean(inside[r]) for r in regions]),
        crossing_x100=100 * crossing_loss(predicted),
        seconds=seconds,
        seed=seed,
    )


def plot_itl_demo(result: ITLDemoResult):
    """The data, the 19 predicted quantile curves (one fit), the calibrated interval and the
    true 5 % / 50 % / 95 %.

    Parameters
    ----------
    result : ITLDemoResult
        What :func:`run_itl_demo` returned.

    Returns
    -------
    matplotlib.figure.Figure
        One axes.

    Examples
    --------
    >>> import numpy as np
    >>> zeros = np.zeros(19)
    >>> grid = np.linspace(0.0, 1.5, 5)
    >>> result = ITLDemoResult(np.zeros((2, 1)), np.zeros(2), grid, np.zeros((5, 19)), zeros,
    ...                        zeros, np.zeros((3, 19)), np.zeros((5, 2)), np.zeros(3),
    ...                        crossing_x100=0.0, seconds=0.1, seed=0)
    >>> len(plot_itl_demo(result).axes)
    1
    """
    from matplotlib import colormaps

    figure = agg_figure(6.4, 4.0)
    ax = figure.subplots()
    ax.fill_between(result.grid, *result.interval.T, color="0.85", lw=0,
                    label=f"{INTERVAL_COVERAGE:.0%} interval, CV+ calibrated")  # fmt: skip
    ax.plot(result.grid, result.interval, color="0.6", lw=0.8)
    ax.scatter(result.X[:, 0], result.y, s=3, color="0.4", label="data")
    colours = colormaps["coolwarm"](np.asarray(LEVELS))
    for k in range(len(LEVELS)):
        ax.plot(result.grid, result.curves[:, k], color=colours[k], lw=1)
    true = sine_toy_quantiles(result.grid, [0.05, 0.5, 0.95])
    ax.plot(result.grid, true, "k--", lw=1)
    ax.plot([], [], "k--", lw=1, label="true 5 %, 50 %, 95 %")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title("19 quantiles (blue 0.05 … red 0.95) from one ∞-QR fit", fontsize=9)
    ax.legend(fontsize=8)
    return figure


def itl_section(result: ITLDemoResult) -> Section:
    """The report section: what was fitted, the per-level table and the curves.

    Parameters
    ----------
    result : ITLDemoResult
        What :func:`run_itl_demo` returned.

    Returns
    -------
    Section
        Slug ``"itl"``, one figure.

    Examples
    --------
    >>> import numpy as np
    >>> zeros = np.zeros(19)
    >>> grid = np.linspace(0.0, 1.5, 5)
    >>> result = ITLDemoResult(np.zeros((2, 1)), np.zeros(2), grid, np.zeros((5, 19)), zeros,
    ...                        zeros, np.zeros((3, 19)), np.zeros((5, 2)), np.zeros(3),
    ...                        crossing_x100=0.0, seconds=0.1, seed=0)
    >>> itl_section(result).slug
    'itl'
    """
    section = Section("Infinite task learning: every quantile from one fit", slug="itl")
    section.add_paragraph(
        "∞-QR learns the whole quantile function θ ↦ q_θ(x) as one vector-valued kernel "
        "model, with a penalty on −∂q_θ/∂θ against crossing (λ_nc = 1) and a monotone "
        "rearrangement at predict time; `InfiniteQuantileRegressor()` chooses λ and the input "
        "bandwidth inside `fit` on held-out data. Quantile curves carry no coverage guarantee "
        "(the ridge penalty pulls the fitted spread towards its average over x: narrower where "
        f"the noise is largest); `calibrate(X, y, cv=5)` then `predict_interval(X, "
        f"{INTERVAL_COVERAGE})` gives an interval that has one (CV+, marginal over x). "
        + result.summary()
    )
    section.add_table(
        rows=result.rows(), columns=ITLDemoResult.COLUMNS, caption="Mean test pinball loss"
    )
    section.add_figure(
        plot_itl_demo(result),
        name="quantiles",
        caption="Quantile curves of one ∞-QR fit; grey: the calibrated interval; dashed: "
        "true quantiles.",
    )
    section.add_paragraph(
        "The paper's experiments are reproduced by `manytask reproduce itl-figure1` (Fig. 1), "
        "`itl-table1` (Table 1), `itl-csc` (cost-sensitive classification) and `itl-dlse` "
        "(Fig. 2); add --quick for a few-minute version."
    )
    return section


def run_section(report: Report, *, seed: int = 0, progress: bool = False) -> str:
    """Run the demo, add its section to ``report`` and return the text to print.

    This is the ``run`` of its :class:`~manytask.demos.Demo` entry (``manytask demo``).

    Parameters
    ----------
    report : Report
        The report to add the section to.
    seed : int, default=0
        Seed of the demo.
    progress : bool, default=False
        Show a progress bar.

    Returns
    -------
    str
        The summary and the text table.

    Examples
    --------
    >>> from manytask.report import Report
    >>> report = Report("unused-folder")
    >>> text = run_section(report)
    >>> report.sections[0].slug
    'itl'
    """
    result = run_itl_demo(seed=seed)
    report.add_section(itl_section(result))
    return f"{result.summary()}\n\n{result.table()}"
