"""Demo: a multi-task posterior against independent posteriors on correlated 1-D tasks.

The tasks are §5's perturbed sine family of ``multitask-bayesian-optimization.txt`` (n = 4 on
the 0.01-net of [0, 1], noise variance 0.01). The multi-task model uses the paper's kernel
Γ_ω = k B, B = ωIₙ + (1 − ω)1ₙ/n, ω = 0.4; the independent model keeps the diagonal of B
only (same prior variance per task, each learnt alone). Every task is observed at inputs of
its own (heterotopic data), and each posterior mean is scored by its RMSE against the
noise-free task at the net points where that task was not observed: what sharing between
tasks buys. The posterior is :class:`manytask.posterior.ExactPosterior`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from .._figures import agg_figure
from ..bo.problems import (
    NOISE_VARIANCE,
    PERTURBATION_CENTRES,
    PERTURBATION_WEIGHTS,
    PERTURBATION_WIDTH,
)
from ..bo.problems import perturbed_sine_values as perturbed_sine
from ..kernels import RBF, Separable, uniform_task_similarity
from ..posterior import ExactPosterior
from ..report import Report, Section, text_table

__all__ = [
    "PERTURBATION_CENTRES",
    "PERTURBATION_WEIGHTS",
    "PERTURBATION_WIDTH",
    "PosteriorDemoResult",
    "ExampleFit",
    "perturbed_sine",
    "run_posterior_demo",
    "plot_posterior_demo",
    "posterior_section",
    "run_section",
]


@dataclass(frozen=True)
class ExampleFit:
    """Both posteriors of one draw on the whole net, for the figure.

    Parameters
    ----------
    x : array of shape (N,)
        The 0.01-net of [0, 1].
    truth : array of shape (N, n_tasks)
        Noise-free tasks on the net.
    x_train, y_train : arrays of shape (t,) and (t, n_tasks)
        The noisy observations; NaN where a task was not observed at that input.
    multitask_mean, multitask_std, independent_mean, independent_std : arrays (N, n_tasks)
        Posterior means of f and marginal standard deviations, on the net.

    Examples
    --------
    >>> run_posterior_demo(seed=0, n_draws=1).example.multitask_mean.shape
    (101, 4)
    """

    x: np.ndarray
    truth: np.ndarray
    x_train: np.ndarray
    y_train: np.ndarray
    multitask_mean: np.ndarray
    multitask_std: np.ndarray
    independent_mean: np.ndarray
    independent_std: np.ndarray


@dataclass(frozen=True)
class PosteriorDemoResult:
    """Held-out errors of the multi-task and independent posteriors over several draws.

    Parameters
    ----------
    rmse_multitask, rmse_independent : arrays of shape (n_draws, n_tasks)
        RMSE of each posterior mean against the noise-free truth at the held-out net points.
    n_train : int
        Training inputs per task and draw (each task has its own inputs).
    lengthscale, omega, noise : float
        RBF lengthscale, ω of the task similarity, and η (= the noise variance).
    seed : int
        Seed of the whole experiment; draw d uses the d-th child of ``SeedSequence(seed)``.
    example : ExampleFit
        The fits of the first draw, for plotting.

    Examples
    --------
    >>> result = run_posterior_demo(seed=0, n_draws=2)
    >>> result.rmse_multitask.shape
    (2, 4)
    """

    rmse_multitask: np.ndarray
    rmse_independent: np.ndarray
    n_train: int
    lengthscale: float
    omega: float
    noise: float
    seed: int
    example: ExampleFit

    @property
    def n_draws(self) -> int:
        """Number of draws of the training set.

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> result.n_draws
        2
        """
        return self.rmse_multitask.shape[0]

    @property
    def n_tasks(self) -> int:
        """Number of tasks.

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> result.n_tasks
        4
        """
        return self.rmse_multitask.shape[1]

    @property
    def mean_rmse_multitask(self) -> np.ndarray:
        """Mean over draws of the multi-task RMSE, shape (n_tasks,).

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> result.mean_rmse_multitask.shape
        (4,)
        """
        return self.rmse_multitask.mean(axis=0)

    @property
    def mean_rmse_independent(self) -> np.ndarray:
        """Mean over draws of the independent RMSE, shape (n_tasks,).

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> result.mean_rmse_independent.shape
        (4,)
        """
        return self.rmse_independent.mean(axis=0)

    @property
    def ratio(self) -> np.ndarray:
        """Mean multi-task RMSE / mean independent RMSE per task (< 1: multi-task is better).

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> ratio = result.ratio
        >>> bool(np.allclose(ratio, result.mean_rmse_multitask / result.mean_rmse_independent))
        True
        """
        return self.mean_rmse_multitask / self.mean_rmse_independent

    @property
    def multitask_wins(self) -> np.ndarray:
        """Number of draws in which the multi-task RMSE is the lower one, per task.

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> bool(np.all((result.multitask_wins >= 0) & (result.multitask_wins <= 2)))
        True
        """
        return (self.rmse_multitask < self.rmse_independent).sum(axis=0)

    def summary(self) -> str:
        """One line describing the setting.

        Returns
        -------
        str
            Tasks, observations, draws, kernel and noise.

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> result.summary()[:36]
        'Perturbed sine, 4 tasks, 10 noisy ob'
        """
        return (
            f"Perturbed sine, {self.n_tasks} tasks, {self.n_train} noisy observations per "
            f"task at inputs of its own, {self.n_draws} draws (seed {self.seed}); RBF lengthscale "
            f"{self.lengthscale:g}, omega {self.omega:g}, eta {self.noise:g}."
        )

    def rows(self) -> list[list]:
        """Table rows: task, mean RMSE multi-task, mean RMSE independent, ratio, wins.

        Returns
        -------
        list of list
            One row per task, then the mean over tasks and draws.

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> [row[0] for row in result.rows()]
        ['task 1', 'task 2', 'task 3', 'task 4', 'mean']
        """
        rows = [
            [f"task {i + 1}", mt, ind, r, f"{w}/{self.n_draws}"]
            for i, (mt, ind, r, w) in enumerate(
                zip(
                    self.mean_rmse_multitask,
                    self.mean_rmse_independent,
                    self.ratio,
                    self.multitask_wins,
                    strict=True,
                )
            )
        ]
        mt_all = float(self.rmse_multitask.mean())
        ind_all = float(self.rmse_independent.mean())
        wins = int((self.rmse_multitask < self.rmse_independent).sum())
        total = self.rmse_multitask.size
        rows.append(["mean", mt_all, ind_all, mt_all / ind_all, f"{wins}/{total}"])
        return rows

    COLUMNS = ("task", "RMSE multi-task", "RMSE independent", "ratio", "multi-task better")

    def table(self) -> str:
        """The rows as an aligned plain-text table.

        Returns
        -------
        str
            See :func:`manytask.report.text_table`.

        Examples
        --------
        >>> result = run_posterior_demo(seed=0, n_draws=2)
        >>> len(result.table().splitlines())  # header, rule, 4 tasks, rule, mean
        8
        """
        rows = [
            [row[0], f"{row[1]:.4f}", f"{row[2]:.4f}", f"{row[3]:.3f}", row[4]]
            for row in self.rows()
        ]
        return text_table(self.COLUMNS, rows, total_row=True)


def _fit_both(x_train, y_train, lengthscale, omega, noise):
    n_tasks = y_train.shape[1]
    scalar = RBF(lengthscale)
    similarity = uniform_task_similarity(n_tasks, omega=omega)
    multitask = Separable(scalar, similarity)
    # diag(B): each task alone, with the same prior variance as in the multi-task model
    independent = Separable(scalar, np.diag(np.diag(similarity)))
    X = x_train[:, None]
    return (
        ExactPosterior(multitask, noise=noise).fit(X, y_train),
        ExactPosterior(independent, noise=noise).fit(X, y_train),
    )


def _marginal_std(posterior, X):
    return np.sqrt(posterior.variance(X))


def run_posterior_demo(
    seed: int = 0,
    n_draws: int = 20,
    n_train: int = 10,
    lengthscale: float = 0.2,
    omega: float = 0.4,
    noise: float = NOISE_VARIANCE,
    progress: bool = False,
) -> PosteriorDemoResult:
    """Compare the multi-task and independent posteriors over ``n_draws`` random draws.

    Each draw picks, for every task, ``n_train`` distinct inputs of its own from the 0.01-net
    of [0, 1] and observes that task there with noise of variance 0.01 (NaN for the other
    tasks), fits both posteriors on the union of inputs and scores each task's mean at the
    net points where that task was not observed against the noise-free task.

    Parameters
    ----------
    seed : int
        Seed of the experiment; the same seed gives the same numbers.
    n_draws : int
        Number of independent draws of the training set and noise.
    n_train : int
        Training inputs per task and draw; few, so that sharing between tasks matters.
    lengthscale : float
        RBF lengthscale (0.2 is the paper's SE lengthscale in §5).
    omega : float
        ω of B = ωIₙ + (1 − ω)1ₙ/n (the paper shows ω = 0.4 for this problem).
    noise : float
        η of both posteriors, set to the true noise variance.
    progress : bool
        Show a tqdm progress bar over the draws.

    Returns
    -------
    PosteriorDemoResult
        Errors of every draw and the fits of the first.

    Examples
    --------
    >>> result = run_posterior_demo(seed=0, n_draws=2)
    >>> result.rmse_multitask.shape
    (2, 4)
    """
    if n_draws < 1:
        raise ValueError(f"n_draws must be >= 1, got {n_draws!r}")
    net = np.linspace(0.0, 1.0, 101)  # §5: the 0.01-net of [0, 1]
    if not 1 <= n_train < len(net):
        raise ValueError(f"n_train must lie in [1, {len(net) - 1}], got {n_train!r}")
    truth = perturbed_sine(net)
    rmse_multitask = np.empty((n_draws, truth.shape[1]))
    rmse_independent = np.empty_like(rmse_multitask)
    example = None
    children = np.random.SeedSequence(seed).spawn(n_draws)
    n_tasks = truth.shape[1]
    for draw, child in enumerate(tqdm(children, desc="posterior demo", disable=not progress)):
        rng = np.random.default_rng(child)
        observed = np.zeros((len(net), n_tasks), dtype=bool)  # heterotopic: inputs per task
        for task in range(n_tasks):
            observed[rng.choice(len(net), size=n_train, replace=False), task] = True
        train = np.flatnonzero(observed.any(axis=1))
        noise_draw = rng.normal(scale=np.sqrt(NOISE_VARIANCE), size=(len(train), n_tasks))
        y_train = np.where(observed[train], truth[train] + noise_draw, np.nan)
        multitask, independent = _fit_both(net[train], y_train, lengthscale, omega, noise)
        X_net = net[:, None]
        for posterior, rmse in ((multitask, rmse_multitask), (independent, rmse_independent)):
            squared = np.where(observed, np.nan, (posterior.mean(X_net) - truth) ** 2)
            rmse[draw] = np.sqrt(np.nanmean(squared, axis=0))
        if draw == 0:
            example = ExampleFit(
                x=net,
                truth=truth,
                x_train=net[train],
                y_train=y_train,
                multitask_mean=multitask.mean(X_net),
                multitask_std=_marginal_std(multitask, X_net),
                independent_mean=independent.mean(X_net),
                independent_std=_marginal_std(independent, X_net),
            )
    return PosteriorDemoResult(
        rmse_multitask=rmse_multitask,
        rmse_independent=rmse_independent,
        n_train=n_train,
        lengthscale=float(lengthscale),
        omega=float(omega),
        noise=float(noise),
        seed=seed,
        example=example,
    )


def plot_posterior_demo(result: PosteriorDemoResult):
    """One panel per task: truth, both posterior means with ±2σ bands, the observations.

    Uses a bare :class:`matplotlib.figure.Figure` on the Agg canvas, so no display and no
    global pyplot state are involved.

    Parameters
    ----------
    result : PosteriorDemoResult
        What :func:`run_posterior_demo` returned.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per task.

    Examples
    --------
    >>> len(plot_posterior_demo(run_posterior_demo(n_draws=1)).axes)
    4
    """
    ex = result.example
    n_tasks = ex.truth.shape[1]
    n_cols = 2
    n_rows = -(-n_tasks // n_cols)
    figure = agg_figure(10, 3.2 * n_rows)
    axes = figure.subplots(n_rows, n_cols, sharex=True, sharey=True, squeeze=False).ravel()
    for task, ax in enumerate(axes[:n_tasks]):
        mt_mean, mt_std = ex.multitask_mean[:, task], ex.multitask_std[:, task]
        ind_mean, ind_std = ex.independent_mean[:, task], ex.independent_std[:, task]
        ax.plot(ex.x, ex.truth[:, task], color="black", lw=1.5, label="truth")
        ax.fill_between(
            ex.x,
            mt_mean - 2 * mt_std,
            mt_mean + 2 * mt_std,
            color="C0",
            alpha=0.25,
            lw=0,
            label="multi-task ±2σ",
        )
        ax.plot(ex.x, mt_mean, color="C0", lw=1.5, label="multi-task mean")
        # The independent band is drawn as outlines so the narrower multi-task band stays visible.
        ax.plot(ex.x, ind_mean - 2 * ind_std, color="C1", lw=0.8, ls=":", label="independent ±2σ")
        ax.plot(ex.x, ind_mean + 2 * ind_std, color="C1", lw=0.8, ls=":")
        ax.plot(ex.x, ind_mean, color="C1", lw=1.5, ls="--", label="independent mean")
        ax.plot(ex.x_train, ex.y_train[:, task], "o", color="black", ms=4, label="observations")
        ax.set_title(
            f"task {task + 1}: RMSE multi-task {result.rmse_multitask[0, task]:.3f}, "
            f"independent {result.rmse_independent[0, task]:.3f}",
            fontsize=9,
        )
        ax.set_xlabel("x")
    for ax in axes[n_tasks:]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7, loc="lower left")
    return figure


def posterior_section(result: PosteriorDemoResult) -> Section:
    """The report section: setting, table of mean RMSE per task, and the figure of draw 1.

    Parameters
    ----------
    result : PosteriorDemoResult
        What :func:`run_posterior_demo` returned.

    Returns
    -------
    Section
        Slug ``"posterior"``, one figure.

    Examples
    --------
    >>> posterior_section(run_posterior_demo(n_draws=1)).slug
    'posterior'
    """
    section = Section("Multi-task posterior vs independent posteriors", slug="posterior")
    section.add_paragraph(
        "Four related tasks from the perturbed sine family of Chowdhury & Gopalan (2021, §5): "
        "f_i(x) = sin(2πx) + 0.6 f_i^pert(x), each perturbation a weighted sum of Gaussian "
        "bumps of width 0.1 at 0.05, 0.4 and 0.7 with task weights "
        f"{PERTURBATION_WEIGHTS.tolist()} (rows: tasks), observed with noise of variance 0.01. "
        "Every task is measured at inputs of its own (heterotopic data): where one task was "
        "not measured, others were, and only a model that correlates the tasks can use them."
    )
    section.add_paragraph(
        "The multi-task model is the exact posterior with Γ(x, x') = k(x, x')(ωI + (1 − ω)11ᵀ/n);"
        " the independent model keeps only the diagonal of B (same prior variance per task, "
        "no correlation between tasks), so each task is learnt from its own observations "
        "only. " + result.summary() + " Errors are the RMSE of the "
        "posterior mean against the noise-free task at the points of the 0.01-net where that "
        "task was not observed, averaged over the draws; a ratio below 1 means the multi-task "
        "posterior is better."
    )
    section.add_table(
        rows=result.rows(),
        columns=PosteriorDemoResult.COLUMNS,
        caption="Mean held-out RMSE per task",
    )
    section.add_figure(
        plot_posterior_demo(result),
        name="tasks",
        caption=(
            "First draw: truth (black), multi-task mean and ±2σ band (blue, shaded), independent "
            "mean (orange, dashed) and its ±2σ band (orange, dotted), noisy observations (dots)."
        ),
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
    'posterior'
    """
    result = run_posterior_demo(seed=seed, progress=progress)
    report.add_section(posterior_section(result))
    return f"{result.summary()}\n\n{result.table()}"
