"""Reproduce Figure 1 and Appendix E Figures 2–3 of ``multitask-bayesian-optimization.txt``.

Panels (ids for ``--panels``):

- ``a``: MT-KB's R_C(t)/t as the task similarity ω of Γ_ω = k (ωI + (1 − ω)11ᵀ/n) varies over
  {0, 0.25, 0.5, 0.75, 1}, on §5's RKHS function built with Γ_ω itself (n = 4), so that ω
  sets how similar the tasks are (Lemma 1) and MT-KB knows Γ_ω;
- ``b``–``f``: MT-KB, MT-BKB, IT-KB, IT-BKB (and MOBO where f is not drawn from an RKHS, as
  in §5) on the RKHS function with n = 2 and n = 20, the perturbed sine, the shifted
  Branin–Hoo and the sensor **substitute** (MASS ``gilgais``), Chebyshev scalarisation and
  Paria weights;
- ``E2a``, ``E2b``: the RKHS function (n = 2) and the perturbed sine with linear
  scalarisation and uniform weights (Appendix E, Fig. 2);
- ``E3a``, ``E3b``: Bayes regret R_B(t) of the Chebyshev runs of ``b`` and ``d`` over one fixed
  set of 1000 Paria weights (Appendix E, Fig. 3).

η = 0.1, δ = 0.1, ε = 0.5 (§5). The paper gives no horizon: T = 100 (40 with ``--quick``),
also the T of Theorem 3's Nyström oversampling. Seed s draws the RKHS function (b = its exact
‖f‖_Γ), the weights λ_t, the noise and the Nyström dictionaries. Objectives are scalarised
after normalisation by their range on the net, with z = min_x f(x)
(:meth:`~manytask.bo.MultiTaskBO.from_problem`), so R_C is in units of each range.

One run is the pure function :func:`run_curves`; :func:`reproduce` writes one PNG per panel,
``curves.csv`` and ``results.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._figures import agg_figure
from . import protocol
from ._tables import csv_bytes, png_bytes
from .bo_figure1_runs import (
    DELTA,
    EPSILON,
    HORIZON,
    METRICS,
    MULTI_TASK_PAIRS,
    N_BAYES_WEIGHTS,
    OMEGA_TASKS,
    PANELS,
    SEEDS,
    Panel,
    build_problem,
    parse_panels,
    problem_label,
    run_curves,
)
from .protocol import Experiment, render

__all__ = [
    "BOFigure1",
    "CSV_COLUMNS",
    "EXPERIMENT",
    "PANELS",
    "Panel",
    "Settings",
    "build_problem",
    "run_curves",
]

CSV_COLUMNS = (
    "figure",
    "panel",
    "problem",
    "algorithm",
    "scalarization",
    "metric",
    "seed",
    "t",
    "value",
)


@dataclass(frozen=True)
class Settings(protocol.Settings):
    """``repeats`` trials (seeds 0, …, repeats − 1) of T = ``horizon`` rounds (§5: 10
    trials; the paper gives no T).

    Parameters
    ----------
    repeats : int, default=10
        Trials, seed s for trial s.
    horizon : int, default=100
        Rounds T of each run.

    Examples
    --------
    >>> Settings.quick()
    Settings(repeats=3, horizon=40)
    """

    QUICK: ClassVar[dict] = {"repeats": 3, "horizon": 40}

    repeats: int = SEEDS
    horizon: int = HORIZON

    def __post_init__(self):
        super().__post_init__()
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, int) or self.horizon < 1:
            raise ValueError(f"horizon must be an int >= 1, got {self.horizon!r}")


def _stack(curves, panel, problem_key, algorithm, seeds):
    return np.stack(
        [curves[(problem_key, algorithm, panel.scalarization, s)][panel.metric] for s in seeds]
    )


def _curve_rows(panels, curves, seeds, horizon):
    for panel in panels:
        for problem_key, algorithm in panel.lines:
            for seed in seeds:
                fixed = {
                    "figure": panel.figure,
                    "panel": panel.key,
                    "problem": build_problem(problem_key, seed).name,
                    "algorithm": algorithm,
                    "scalarization": panel.scalarization,
                    "metric": panel.metric,
                    "seed": seed,
                }
                values = curves[(problem_key, algorithm, panel.scalarization, seed)][panel.metric]
                for t, value in zip(range(1, horizon + 1), values):
                    yield {**fixed, "t": t, "value": float(value)}


def plot_panel(panel: Panel, curves, seeds, horizon):
    """Mean ± std over seeds of the panel's metric against t; log y-axis when it spans > 10×."""
    figure = agg_figure(6.4, 4.2)
    ax = figure.subplots()
    steps = np.arange(1, horizon + 1)
    means = []
    for index, (problem_key, algorithm) in enumerate(panel.lines):
        values = _stack(curves, panel, problem_key, algorithm, seeds)
        mean, std = values.mean(axis=0), values.std(axis=0)
        means.append(mean)
        color = f"C{index}"
        ax.plot(steps, mean, color=color, lw=1.5, label=panel.label(problem_key, algorithm))
        ax.fill_between(steps, mean - std, mean + std, color=color, alpha=0.2, lw=0)
    means = np.concatenate(means)
    if np.all(means > 0) and means.max() / means.min() > 10:
        ax.set_yscale("log")
        # a log axis cannot show the band below zero; keep the y-range to the means' decades
        ax.set_ylim(means.min() / 2, means.max() * 2)
    ax.set_xlabel("t")
    ax.set_ylabel(METRICS[panel.metric])
    ax.set_title(panel.title, fontsize=9)
    ax.legend(fontsize=8)
    ax.text(
        0.99,
        0.01,
        f"{panel.scalarization}, mean ± std over {len(seeds)} seeds",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=7,
        color="0.4",
    )
    return figure


def _verdicts(panels, summary, n_seeds) -> list[str]:
    """One sentence per panel on the paper's claim, from the final means and stds."""
    lines = []
    for panel in panels:
        stats = summary[panel.key]
        if panel.by_problem:
            finals = [stats[line][0] for line in panel.lines]
            order = ", ".join(
                f"{panel.label(*line)}: {mean:.4g}" for line, mean in zip(panel.lines, finals)
            )
            monotone = all(a <= b for a, b in zip(finals, finals[1:]))
            verdict = (
                "holds: regret does not decrease as ω grows"
                if monotone
                else "holds only partly: regret is not monotone in ω"
            )
            lines.append(
                f"- **{panel.key}**: final R_C(T)/T by ω — {order}. The paper's claim (more "
                f"similar tasks, i.e. lower ω, give lower regret) {verdict}."
            )
            continue
        problem_key = panel.lines[0][0]
        parts, wins = [], 0
        for mt, it in MULTI_TASK_PAIRS:
            (mt_mean, mt_std), (it_mean, it_std) = (
                stats[(problem_key, mt)],
                stats[(problem_key, it)],
            )
            gap = it_mean - mt_mean
            tie = abs(gap) <= 1e-12 * max(1.0, abs(it_mean))
            wins += gap > 0 and not tie
            relation = "equal" if tie else ("lower" if gap > 0 else "higher")
            if not tie and n_seeds > 1:
                spread = "beyond" if abs(gap) > max(mt_std, it_std) else "within"
                relation += f", {spread} one seed std"
            parts.append(f"{mt.upper()} {mt_mean:.4g} vs {it.upper()} {it_mean:.4g} ({relation})")
        verdict = {2: "holds", 1: "holds only partly", 0: "does not hold"}[wins]
        text = f"- **{panel.key}** ({panel.title}): {'; '.join(parts)}. The claim {verdict}."
        if (problem_key, "mobo") in stats:
            mobo = stats[(problem_key, "mobo")][0]
            best_mt = min(stats[(problem_key, mt)][0] for mt, _ in MULTI_TASK_PAIRS)
            relation = "below" if mobo < best_mt else "above"
            text += f" MOBO ends at {mobo:.4g}, {relation} the best multi-task algorithm."
        lines.append(text)
    keys = {panel.key for panel in panels}
    if {"b", "c"} <= keys:
        gains = []
        for mt, it in MULTI_TASK_PAIRS:
            gain_2 = 1 - summary["b"][("rkhs_n2", mt)][0] / summary["b"][("rkhs_n2", it)][0]
            gain_20 = 1 - summary["c"][("rkhs_n20", mt)][0] / summary["c"][("rkhs_n20", it)][0]
            gains.append((mt, it, gain_2, gain_20))
        described = "; ".join(
            f"{mt.upper()}/{it.upper()} = {1 - g2:.3f} with n = 2 and {1 - g20:.3f} with "
            f"n = 20 ({100 * g2:.1f} % and {100 * g20:.1f} % lower)"
            for mt, it, g2, g20 in gains
        )
        more = all(g20 > g2 for _, _, g2, g20 in gains)
        lines.append(
            f"- **More tasks (b vs c)**: {described} (negative: higher). 'More so with more "
            f"tasks' {'holds' if more else 'does not hold'} on the RKHS function."
        )
    return lines


class BOFigure1(Experiment):
    """``manytask reproduce bo-figure1``: every panel's runs, serially; writes one PNG per
    panel, ``curves.csv`` and ``results.md``.

    Parameters
    ----------
    settings : Settings or None, default=None
        None means :meth:`Settings.full`.
    panels : str, sequence of str or None, default=None
        Panel ids among :data:`PANELS`; None means all.

    Attributes
    ----------
    curves : dict
        ``curves[(problem key, algorithm, scalarization, seed)]``: the :func:`run_curves`
        dicts.
    summary : dict
        ``summary[panel][(problem key, algorithm)] = (mean, std)`` of the final value over
        seeds.
    verdicts : list of str
        One sentence per panel on the paper's claim.

    Examples
    --------
    >>> BOFigure1(Settings.quick(), panels="d, b").panels  # in the order of PANELS
    ('b', 'd')
    """

    NAME = "bo-figure1"
    SETTINGS = Settings
    HORIZON = "horizon"
    PANELS = tuple(PANELS)

    def __init__(self, settings=None, panels=None):
        super().__init__(settings, panels)
        self.panels = parse_panels(self.panels)  # in the order of PANELS
        self.curves: dict = {}
        self.summary: dict = {}
        self.verdicts: list = []

    def jobs(self) -> list:
        """(problem key, algorithm, scalarization, seed) of every run the panels need, once.

        Returns
        -------
        list of tuple
            The runs.

        Examples
        --------
        >>> BOFigure1(Settings(repeats=1), panels="b").jobs()[:2]
        [('rkhs_n2', 'mt-kb', 'chebyshev', 0), ('rkhs_n2', 'mt-bkb', 'chebyshev', 0)]
        """
        selected = [PANELS[key] for key in self.panels]
        configurations = dict.fromkeys(
            (problem, algorithm, panel.scalarization)
            for panel in selected
            for problem, algorithm in panel.lines
        )
        seeds = range(self.settings.repeats)
        return [(*configuration, seed) for configuration in configurations for seed in seeds]

    def run_job(self, job) -> None:
        """Run :func:`run_curves` for one run and keep its curves.

        Parameters
        ----------
        job : tuple
            One of :meth:`jobs`.

        Examples
        --------
        >>> experiment = BOFigure1(Settings(repeats=1, horizon=3), panels="b")
        >>> job = experiment.jobs()[0]
        >>> experiment.run_job(job)
        >>> experiment.curves[job]["time_average_regret"].shape
        (3,)
        """
        self.curves[job] = run_curves(*job, self.settings.horizon)

    def outputs(self) -> dict:
        """One PNG per panel and ``curves.csv``; sets ``summary`` and ``verdicts``.

        Returns
        -------
        dict of str to bytes
            The files.

        Examples
        --------
        >>> experiment = BOFigure1(Settings(repeats=1, horizon=3), panels="b")
        >>> for job in experiment.jobs():  # 4 runs of 3 rounds
        ...     experiment.run_job(job)
        >>> sorted(experiment.outputs())
        ['curves.csv', 'panel-b.png']
        """
        selected = [PANELS[key] for key in self.panels]
        seeds, horizon = range(self.settings.repeats), self.settings.horizon
        for panel in selected:
            self.summary[panel.key] = {}
            for problem_key, algorithm in panel.lines:
                final = _stack(self.curves, panel, problem_key, algorithm, seeds)[:, -1]
                self.summary[panel.key][(problem_key, algorithm)] = (
                    float(final.mean()),
                    float(final.std()),
                )
        self.verdicts = _verdicts(selected, self.summary, self.settings.repeats)
        outputs = {
            f"panel-{panel.key}.png": png_bytes(plot_panel(panel, self.curves, seeds, horizon))
            for panel in selected
        }
        rows = _curve_rows(selected, self.curves, seeds, horizon)
        outputs["curves.csv"] = csv_bytes(CSV_COLUMNS, rows, significant=None)
        return outputs

    def results(self) -> str:
        """``results.md``: final values per panel and line, the verdicts, the substitutes.

        Needs :meth:`outputs` first (it computes the summary).

        Returns
        -------
        str
            The text, from ``templates/bo_figure1.md``.

        Examples
        --------
        >>> experiment = BOFigure1(Settings(repeats=1, horizon=3), panels="b")
        >>> for job in experiment.jobs():  # 4 runs of 3 rounds
        ...     experiment.run_job(job)
        >>> _ = experiment.outputs()
        >>> "| 1 | b | rkhs_function(n_tasks=2, f drawn per seed) | MT-KB |" in experiment.results()
        True
        """
        panels = [PANELS[key] for key in self.panels]
        rows = []
        for panel in panels:
            for problem_key, algorithm in panel.lines:
                mean, std = self.summary[panel.key][(problem_key, algorithm)]
                problem = problem_label(problem_key)  # a substitute says so in its name
                rows.append(
                    f"| {panel.figure} | {panel.key} | {problem} | {algorithm.upper()} | "
                    f"{panel.scalarization} | {METRICS[panel.metric]} | {mean:.4g} ± {std:.2g} |"
                )
        notes = {
            panel.key: build_problem(key).substitute_note
            for panel in panels
            for key, _ in panel.lines
            if build_problem(key).substitute_note
        }
        substitutes = "".join(f"\nPanel ({key}) is a SUBSTITUTE: {note}\n"
                              for key, note in notes.items())  # fmt: skip
        return render("bo_figure1.md", seeds=self.settings.repeats,
                      horizon=self.settings.horizon, delta=DELTA, epsilon=EPSILON,
                      n_bayes_weights=N_BAYES_WEIGHTS, omega_tasks=OMEGA_TASKS,
                      seconds=f"{self.seconds:.0f}", rows="\n".join(rows),
                      verdicts="\n".join(self.verdicts), substitutes=substitutes)  # fmt: skip


EXPERIMENT = BOFigure1
