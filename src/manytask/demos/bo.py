"""Demo: multi-task against independent-task Bayesian optimisation on the perturbed sine.

MT-KB (the paper's Algorithm 1, kernel Γ_ω with ω = 0.4) and IT-KB (the same policy with each
task learnt alone) optimise the four perturbed sine tasks of
``multitask-bayesian-optimization.txt`` §5 for a few rounds and seeds, with Chebyshev
scalarisation and Paria weights; they are scored by the time-average cumulative regret
R_C(t)/t. The full comparison (every algorithm and problem of Fig. 1 and Appendix E) is
``manytask reproduce bo-figure1`` (:mod:`manytask.experiments.bo_figure1`).

What lives here: the small experiment, its text table, its figure and its report section.
The optimiser is :class:`manytask.bo.MultiTaskBO`, the loop :func:`manytask.bo.run`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from .._figures import agg_figure
from ..bo import MultiTaskBO, run
from ..bo.problems import perturbed_sine
from ..report import Report, Section, text_table

__all__ = ["BODemoResult", "run_bo_demo", "plot_bo_demo", "bo_section", "run_section"]

ALGORITHMS = ("mt-kb", "it-kb")


@dataclass(frozen=True)
class BODemoResult:
    """Time-average regret curves of each algorithm over seeds.

    Parameters
    ----------
    curves : dict
        ``curves[algorithm]`` is an array (n_seeds, rounds) of R_C(t)/t.
    rounds : int
        T, the evaluations per run.
    seed : int
        Run s uses seed ``seed + s`` (weights, noise).

    Examples
    --------
    >>> import numpy as np
    >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
    >>> result = BODemoResult(curves, rounds=2, seed=0)
    >>> result.rows()[0]
    ['MT-KB', 0.5, 0.0, 1]
    """

    curves: dict
    rounds: int
    seed: int

    COLUMNS = ("algorithm", "final R_C(T)/T mean", "std", "runs")

    @property
    def n_seeds(self) -> int:
        """Number of runs per algorithm.

        Examples
        --------
        >>> import numpy as np
        >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
        >>> result = BODemoResult(curves, rounds=2, seed=0)
        >>> result.n_seeds
        1
        """
        return len(next(iter(self.curves.values())))

    def rows(self) -> list[list]:
        """Table rows: algorithm, mean and std over seeds of R_C(T)/T, number of runs.

        Returns
        -------
        list of list
            One row per algorithm, in the order of :attr:`COLUMNS`.

        Examples
        --------
        >>> import numpy as np
        >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
        >>> result = BODemoResult(curves, rounds=2, seed=0)
        >>> result.rows()[1]
        ['IT-KB', 0.75, 0.0, 1]
        """
        return [
            [name.upper(), float(curve[:, -1].mean()), float(curve[:, -1].std()), len(curve)]
            for name, curve in self.curves.items()
        ]

    def summary(self) -> str:
        """One line describing the setting.

        Returns
        -------
        str
            Problem, rounds, seeds, scalarisation.

        Examples
        --------
        >>> import numpy as np
        >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
        >>> result = BODemoResult(curves, rounds=2, seed=0)
        >>> result.summary()[:45]
        'Perturbed sine (4 tasks, omega 0.4), 2 rounds'
        """
        return (
            f"Perturbed sine (4 tasks, omega 0.4), {self.rounds} rounds, {self.n_seeds} seeds "
            f"from {self.seed}; Chebyshev scalarisation, Paria weights, theoretical radii."
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
        >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
        >>> result = BODemoResult(curves, rounds=2, seed=0)
        >>> print(result.table().splitlines()[2])
        MT-KB                   0.5000  0.0000     1
        """
        rows = [[row[0], f"{row[1]:.4f}", f"{row[2]:.4f}", str(row[3])] for row in self.rows()]
        return text_table(self.COLUMNS, rows)


def run_bo_demo(
    seed: int = 0, rounds: int = 30, n_seeds: int = 3, progress: bool = False
) -> BODemoResult:
    """Run MT-KB and IT-KB on the perturbed sine for ``rounds`` rounds and ``n_seeds`` seeds.

    Chebyshev scalarisation with Paria weights (§5), scored by R_C(t)/t.

    Parameters
    ----------
    seed : int, default=0
        Run s uses seed ``seed + s``.
    rounds : int, default=30
        Evaluations T per run, ≥ 1.
    n_seeds : int, default=3
        Runs per algorithm, ≥ 1.
    progress : bool, default=False
        Show a progress bar over the runs.

    Returns
    -------
    BODemoResult
        The regret curves.

    Examples
    --------
    >>> result = run_bo_demo(rounds=3, n_seeds=1)
    >>> result.curves["mt-kb"].shape
    (1, 3)
    """
    if rounds < 1 or n_seeds < 1:
        raise ValueError(f"rounds and n_seeds must be >= 1, got {rounds!r} and {n_seeds!r}")
    problem = perturbed_sine()
    jobs = [(name, seed + s) for name in ALGORITHMS for s in range(n_seeds)]
    curves = {name: [] for name in ALGORITHMS}
    for name, run_seed in tqdm(jobs, desc="bo demo", disable=not progress):
        optimizer = MultiTaskBO.from_problem(
            problem, algorithm=name, scalarization="chebyshev", weights="paria", seed=run_seed
        )
        result = run(problem, optimizer, budget=rounds, seed=run_seed, progress=False)
        curves[name].append(result.time_average_regret)
    return BODemoResult({k: np.array(v) for k, v in curves.items()}, rounds, seed)


def plot_bo_demo(result: BODemoResult):
    """Mean ± std over seeds of R_C(t)/t against t, one line per algorithm (Agg canvas).

    Parameters
    ----------
    result : BODemoResult
        What :func:`run_bo_demo` returned.

    Returns
    -------
    matplotlib.figure.Figure
        One axes.

    Examples
    --------
    >>> import numpy as np
    >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
    >>> result = BODemoResult(curves, rounds=2, seed=0)
    >>> len(plot_bo_demo(result).axes)
    1
    """
    figure = agg_figure(6.4, 3.8)
    ax = figure.subplots()
    steps = np.arange(1, result.rounds + 1)
    for index, (name, curve) in enumerate(result.curves.items()):
        mean, std = curve.mean(axis=0), curve.std(axis=0)
        ax.plot(steps, mean, color=f"C{index}", lw=1.5, label=name.upper())
        ax.fill_between(steps, mean - std, mean + std, color=f"C{index}", alpha=0.2, lw=0)
    ax.set_xlabel("t")
    ax.set_ylabel("R_C(t)/t")
    ax.set_title("Perturbed sine, Chebyshev scalarisation", fontsize=9)
    ax.legend(fontsize=8)
    return figure


def bo_section(result: BODemoResult) -> Section:
    """The report section: setting, table of final regret, the regret curves.

    Parameters
    ----------
    result : BODemoResult
        What :func:`run_bo_demo` returned.

    Returns
    -------
    Section
        Slug ``"bo"``, one figure.

    Examples
    --------
    >>> import numpy as np
    >>> curves = {"mt-kb": np.array([[1.0, 0.5]]), "it-kb": np.array([[1.0, 0.75]])}
    >>> result = BODemoResult(curves, rounds=2, seed=0)
    >>> [name for name, _ in bo_section(result).figures]
    ['bo-regret.png']
    """
    section = Section("Multi-task Bayesian optimisation", slug="bo")
    section.add_paragraph(
        "MT-KB picks each point by an upper confidence bound on a random Chebyshev "
        "scalarisation of the four perturbed sine tasks, with the multi-task kernel "
        "Γ(x, x') = k(x, x')(ωI + (1 − ω)11ᵀ/n); IT-KB does the same with each task learnt "
        "alone. " + result.summary() + " Lower time-average cumulative regret R_C(T)/T is "
        "better."
    )
    section.add_table(
        rows=result.rows(), columns=BODemoResult.COLUMNS, caption="Final R_C(T)/T over seeds"
    )
    section.add_figure(
        plot_bo_demo(result),
        name="regret",
        caption="Time-average cumulative regret, mean ± std over seeds.",
    )
    section.add_paragraph(
        "The paper's whole Figure 1 and Appendix E Figures 2–3 (five algorithms, five "
        "problems, 10 seeds) are reproduced by `manytask reproduce bo-figure1` (add --quick "
        "for a few-minute version). From Optuna: `optuna.create_study(sampler="
        "manytask.bo.optuna.MultiTaskSampler())` (extra `optuna`), README."
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
    'bo'
    """
    result = run_bo_demo(seed=seed, progress=progress)
    report.add_section(bo_section(result))
    return f"{result.summary()}\n\n{result.table()}"
