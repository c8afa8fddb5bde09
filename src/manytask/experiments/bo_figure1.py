"""Reproduce Figure 1 and Appendix E Figures 2–3 of ``multitask-bayesian-optimization.txt``.

Panels (ids as accepted by ``--panels``):

- ``a`` — MT-KB's time-average cumulative regret R_C(t)/t as the task similarity ω of
  Γ_ω = k (ωI + (1 − ω)11ᵀ/n) varies over {0, 0.25, 0.5, 0.75, 1}, on the RKHS function of §5
  built with Γ_ω itself (n = 4). The perturbed sine is *not* used here: there f stays fixed
  and only the model's ω would change, which mixes task similarity with misspecification,
  while Lemma 1 is about f in the RKHS of Γ_ω, where ω sets how similar the tasks really are
  (ω = 0: identical tasks, ω = 1: unrelated ones) and MT-KB knows Γ_ω;
- ``b``–``f`` — MT-KB, MT-BKB, IT-KB, IT-BKB (and MOBO where f is not drawn from an RKHS, as
  in §5) on the RKHS function with n = 2 and n = 20, the perturbed sine, the shifted
  Branin–Hoo and the sensor **substitute** (MASS ``gilgais``; the Intel lab data cannot be
  obtained here), Chebyshev scalarisation and Paria weights;
- ``E2a``, ``E2b`` — the same on the RKHS function (n = 2) and the perturbed sine with linear
  scalarisation and uniform weights (Appendix E, Fig. 2);
- ``E3a``, ``E3b`` — Bayes regret R_B(t) of the Chebyshev runs of ``b`` and ``d``, over one
  fixed Monte-Carlo set of 1000 Paria weights (Appendix E, Fig. 3).

η = 0.1, δ = 0.1, ε = 0.5 everywhere (§5). The paper gives no horizon: T = 200 here (40 with
``--quick``), also passed to the optimiser as the T of Theorem 3's Nyström oversampling q.
The RKHS functions are drawn once (seed 0); the seeds vary the weights λ_t, the
observation noise and the Nyström dictionaries.

A run is the pure function :func:`run_curves` (problem, algorithm, scalarisation, seed, T)
→ curves, so runs could be spread over workers later; :func:`reproduce` runs them serially
and writes one PNG per panel, ``curves.csv`` and ``results.md`` inside its output folder.
The optimiser is :class:`manytask.bo.MultiTaskBO`, the problems :mod:`manytask.bo.problems`.
"""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..bo import MultiTaskBO, run
from ..bo.metrics import bayes_regret
from ..bo.problems import (
    Problem,
    perturbed_sine,
    rkhs_function,
    sensor_substitute,
    shifted_branin,
)
from ..kernels import RBF, Separable, uniform_task_similarity
from ..report import _write_atomic

__all__ = [
    "DEFAULT_OUT",
    "PANELS",
    "Panel",
    "build_problem",
    "run_curves",
    "reproduce",
    "Reproduction",
    "run_from_cli",
]

DEFAULT_OUT = "manytask-reproduce/bo-figure1"
HORIZON, HORIZON_QUICK = 200, 40  # the paper does not state its T
SEEDS, SEEDS_QUICK = 10, 3  # §5: 10 independent trials
DELTA, EPSILON = 0.1, 0.5  # §5 (η = 0.1 is each problem's `noise`)
N_BAYES_WEIGHTS, BAYES_SEED = 1000, 0  # one fixed Monte-Carlo set of λ for every R_B curve
OMEGAS = (0.0, 0.25, 0.5, 0.75, 1.0)
OMEGA_TASKS = 4
WEIGHTS = {"chebyshev": "paria", "linear": "uniform"}  # §5 and Appendix E
METRICS = {"time_average_regret": "R_C(t)/t", "bayes_regret": "R_B(t)"}
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
MULTI_TASK_PAIRS = (("mt-kb", "it-kb"), ("mt-bkb", "it-bkb"))


# ---- problems -----------------------------------------------------------------------------
def rkhs_function_omega(omega: float, n_tasks: int = OMEGA_TASKS, seed: int = 0) -> Problem:
    """§5's RKHS function with Γ_ω = k (ωI + (1 − ω)11ᵀ/n) in place of k AᵀA (Fig. 1(a)).

    f = Σ_{i≤50} Γ_ω(·, x_i) c_i on the 0.01-net, k the SE kernel with lengthscale 0.2,
    c_i ~ U[−1, 1]ⁿ; the anchors and c_i come from ``default_rng(seed)`` and are the same for
    every ω, so only the similarity of the tasks changes. σ = 0.1, b = max_x ‖f(x)‖₂ / λ_max(B)
    as in §5 (λ_max(B) = 1 here).

    Example
    -------
    >>> problem = rkhs_function_omega(0.0)
    >>> bool(np.allclose(problem.values, problem.values[:, :1]))  # ω = 0: identical tasks
    True
    """
    net = np.linspace(0.0, 1.0, 101)
    rng = np.random.default_rng(seed)
    anchors = net[rng.choice(len(net), size=50, replace=False)][:, None]
    coefficients = rng.uniform(-1.0, 1.0, size=(50, n_tasks))
    B = uniform_task_similarity(n_tasks, omega=omega)
    scalar = RBF(lengthscale=0.2)

    def function(X):
        return scalar(X, anchors) @ coefficients @ B  # Σ_i k(x, x_i) B c_i, B symmetric

    problem = Problem(
        name=f"rkhs_function_omega(omega={omega:g}, n_tasks={n_tasks}, seed={seed})",
        candidates=net[:, None],
        function=function,
        kernel=Separable(scalar, B),
        noise_std=0.1,
        rkhs_bound=None,
        domain=[[0.0, 1.0]],
        description="Σ_{i≤50} Γ_ω(·, x_i) c_i, Γ_ω = SE(0.2) ⊗ (ωI + (1 − ω)11ᵀ/n)",
    )
    kappa = float(np.linalg.eigvalsh(B)[-1])
    problem.rkhs_bound = float(np.max(np.linalg.norm(problem.values, axis=1)) / kappa)
    return problem


PROBLEMS = {
    "rkhs_n2": lambda: rkhs_function(n_tasks=2, seed=0),
    "rkhs_n20": lambda: rkhs_function(n_tasks=20, seed=0),
    "perturbed_sine": lambda: perturbed_sine(),  # ω = 0.4 as in Fig. 1(d)
    "shifted_branin": lambda: shifted_branin(),  # ω = 0.5 as in Fig. 1(e)
    "sensor_substitute": lambda: sensor_substitute(),
    **{
        f"rkhs_omega_{omega:g}": (lambda omega=omega: rkhs_function_omega(omega))
        for omega in OMEGAS
    },
}


@cache
def build_problem(key: str) -> Problem:
    """The problem called ``key`` in :data:`PROBLEMS` (deterministic, so built once)."""
    if key not in PROBLEMS:
        raise ValueError(f"problem must be one of {', '.join(PROBLEMS)}, got {key!r}")
    return PROBLEMS[key]()


# ---- panels -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Panel:
    """One panel of a figure: which runs it shows, and with which metric.

    ``lines`` are (problem key, algorithm) pairs; panel ``a`` draws one line per problem (ω),
    the others one per algorithm.
    """

    key: str
    figure: str
    title: str
    lines: tuple
    scalarization: str
    metric: str

    @property
    def by_problem(self) -> bool:
        return len({problem for problem, _ in self.lines}) > 1

    def label(self, problem_key: str, algorithm: str) -> str:
        if self.by_problem:
            return f"ω = {problem_key.rsplit('_', 1)[1]}"
        return algorithm.upper()


ALGORITHMS = ("mt-kb", "mt-bkb", "it-kb", "it-bkb")
WITH_MOBO = (*ALGORITHMS, "mobo")
SUBSTITUTE_TITLE = "(f) Sensor measurements — SUBSTITUTE: MASS gilgais soil transect"


def _panel(key, figure, title, problem, algorithms, scalarization, metric="time_average_regret"):
    lines = tuple((problem, algorithm) for algorithm in algorithms)
    return Panel(key, figure, title, lines, scalarization, metric)


PANELS: dict[str, Panel] = {
    panel.key: panel
    for panel in (
        Panel(
            "a",
            "1",
            f"(a) MT-KB as the task similarity ω varies (RKHS function, Γ_ω, n = {OMEGA_TASKS})",
            tuple((f"rkhs_omega_{omega:g}", "mt-kb") for omega in OMEGAS),
            "chebyshev",
            "time_average_regret",
        ),
        _panel("b", "1", "(b) RKHS function (2 tasks)", "rkhs_n2", ALGORITHMS, "chebyshev"),
        _panel("c", "1", "(c) RKHS function (20 tasks)", "rkhs_n20", ALGORITHMS, "chebyshev"),
        _panel("d", "1", "(d) Perturbed sine function", "perturbed_sine", WITH_MOBO, "chebyshev"),
        _panel("e", "1", "(e) Shifted Branin-Hoo", "shifted_branin", WITH_MOBO, "chebyshev"),
        _panel("f", "1", SUBSTITUTE_TITLE, "sensor_substitute", WITH_MOBO, "chebyshev"),
        _panel(
            "E2a", "E2", "E2 (a) RKHS function (2 tasks), linear", "rkhs_n2", ALGORITHMS, "linear"
        ),
        _panel(
            "E2b",
            "E2",
            "E2 (b) Perturbed sine function, linear",
            "perturbed_sine",
            WITH_MOBO,
            "linear",
        ),
        _panel(
            "E3a",
            "E3",
            "E3 (a) RKHS function (2 tasks), Bayes regret",
            "rkhs_n2",
            ALGORITHMS,
            "chebyshev",
            "bayes_regret",
        ),
        _panel(
            "E3b",
            "E3",
            "E3 (b) Perturbed sine function, Bayes regret",
            "perturbed_sine",
            WITH_MOBO,
            "chebyshev",
            "bayes_regret",
        ),
    )
}


def parse_panels(text: str | None) -> tuple[str, ...]:
    """Panel ids from ``"a,b,E2a"`` (None or empty: all), in the order of :data:`PANELS`.

    Example
    -------
    >>> parse_panels("d, b")
    ('b', 'd')
    """
    if text is None or not text.strip():
        return tuple(PANELS)
    wanted = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [key for key in wanted if key not in PANELS]
    if unknown:
        raise ValueError(f"panels must be among {','.join(PANELS)}, got {','.join(unknown)}")
    return tuple(key for key in PANELS if key in wanted)


# ---- one run ------------------------------------------------------------------------------
def run_curves(
    problem_key: str, algorithm: str, scalarization: str, seed: int, horizon: int
) -> dict[str, np.ndarray]:
    """One run → its curves for t = 1..T: ``time_average_regret`` R_C(t)/t and
    ``bayes_regret`` R_B(t) (1000 fixed Monte-Carlo weights from the run's P_λ).

    A pure function of its arguments: everything random is seeded by ``seed``.

    Example
    -------
    >>> curves = run_curves("rkhs_n2", "mt-kb", "chebyshev", seed=0, horizon=3)
    >>> sorted(curves), curves["time_average_regret"].shape
    (['bayes_regret', 'time_average_regret'], (3,))
    """
    problem = build_problem(problem_key)
    weights = WEIGHTS[scalarization]
    optimizer = MultiTaskBO.from_problem(
        problem,
        algorithm=algorithm,
        scalarization=scalarization,
        weights=weights,
        seed=seed,
        delta=DELTA,
        epsilon=EPSILON,
        horizon=horizon,
    )
    result = run(problem, optimizer, budget=horizon, seed=seed, progress=False)
    chosen_values = problem.f(result.points)
    bayes = bayes_regret(
        problem,
        chosen_values,
        scalarization,
        n_weights=N_BAYES_WEIGHTS,
        weights=weights,
        seed=BAYES_SEED,
    )
    return {"time_average_regret": result.time_average_regret, "bayes_regret": bayes}


# ---- the whole reproduction ---------------------------------------------------------------
@dataclass
class Reproduction:
    """What :func:`reproduce` computed and wrote.

    ``curves[(problem key, algorithm, scalarization, seed)]`` are the :func:`run_curves`
    dicts; ``summary[panel][(problem key, algorithm)] = (mean, std)`` of the final value
    over seeds; ``files`` the paths written; ``seconds`` the wall time of the runs.
    """

    panels: tuple
    seeds: int
    horizon: int
    curves: dict
    summary: dict
    verdicts: list
    files: list
    seconds: float


def _stack(curves, panel, problem_key, algorithm, seeds):
    return np.stack(
        [curves[(problem_key, algorithm, panel.scalarization, s)][panel.metric] for s in seeds]
    )


def _problem_label(problem: Problem) -> str:
    return (
        f"{problem.name} — {problem.substitute_note}" if problem.substitute_note else problem.name
    )


def _csv_bytes(panels, curves, seeds, horizon) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    steps = range(1, horizon + 1)
    for panel in panels:
        for problem_key, algorithm in panel.lines:
            name = build_problem(problem_key).name
            for seed in seeds:
                values = curves[(problem_key, algorithm, panel.scalarization, seed)][panel.metric]
                for t, value in zip(steps, values):
                    writer.writerow(
                        [
                            panel.figure,
                            panel.key,
                            name,
                            algorithm,
                            panel.scalarization,
                            panel.metric,
                            seed,
                            t,
                            repr(float(value)),
                        ]
                    )
    return buffer.getvalue().encode()


def plot_panel(panel: Panel, curves, seeds, horizon):
    """Mean ± std over seeds of the panel's metric against t; log y-axis when it spans > 10×."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 4.2), layout="constrained")
    FigureCanvasAgg(figure)
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
            f"{mt.upper()} vs {it.upper()}: {100 * g2:.1f} % lower with n = 2, "
            f"{100 * g20:.1f} % lower with n = 20"
            for mt, it, g2, g20 in gains
        )
        more = all(g20 > g2 for _, _, g2, g20 in gains)
        lines.append(
            f"- **More tasks (b vs c)**: {described} (negative: higher). 'More so with more "
            f"tasks' {'holds' if more else 'does not hold'} on the RKHS function."
        )
    return lines


def _results_markdown(reproduction: Reproduction) -> str:
    panels = [PANELS[key] for key in reproduction.panels]
    out = [
        "# Multi-task BO: Figure 1 and Appendix E Figures 2–3",
        "",
        f"Seeds: {reproduction.seeds}; horizon T = {reproduction.horizon} (the paper states no "
        f"T), η = 0.1, δ = {DELTA}, ε = {EPSILON}; Chebyshev scalarisation with Paria weights "
        "(Fig. 1, E3) or linear scalarisation with uniform weights (E2); theoretical "
        "confidence radii, nothing tuned. R_B uses one fixed set of "
        f"{N_BAYES_WEIGHTS} Monte-Carlo weights. Panel (a) uses the RKHS function built with "
        f"Γ_ω (n = {OMEGA_TASKS}) so that ω sets how similar the tasks really are. "
        f"Wall time of the runs: {reproduction.seconds:.0f} s.",
        "",
        f"Final values at t = T (mean ± std over {reproduction.seeds} seeds):",
        "",
        "| figure | panel | problem | algorithm | scalarization | metric | final value |",
        "|---|---|---|---|---|---|---|",
    ]
    for panel in panels:
        for problem_key, algorithm in panel.lines:
            mean, std = reproduction.summary[panel.key][(problem_key, algorithm)]
            problem = build_problem(problem_key).name  # a substitute says so in its name
            out.append(
                f"| {panel.figure} | {panel.key} | {problem} | {algorithm.upper()} | "
                f"{panel.scalarization} | {METRICS[panel.metric]} | {mean:.4g} ± {std:.2g} |"
            )
    out += [
        "",
        "## The paper's claim",
        "",
        '"Multi-task algorithms end with lower regret than the independent ones, more so '
        'with more tasks": per panel, from the final means above.',
        "",
        *reproduction.verdicts,
        "",
    ]
    notes = {
        panel.key: build_problem(key).substitute_note
        for panel in panels
        for key, _ in panel.lines
        if build_problem(key).substitute_note
    }
    for key, note in notes.items():
        out += [f"Panel ({key}) is a SUBSTITUTE: {note}", ""]
    return "\n".join(out)


def reproduce(
    out=DEFAULT_OUT,
    seeds: int = SEEDS,
    horizon: int = HORIZON,
    panels=None,
    progress: bool = True,
) -> Reproduction:
    """Run every panel's runs serially and write PNGs, ``curves.csv`` and ``results.md``.

    Parameters
    ----------
    out : path-like
        Folder for the outputs (created if missing); nothing is written elsewhere.
    seeds : int
        Seeds 0, …, seeds − 1 per configuration.
    horizon : int
        T, the number of rounds of every run.
    panels : str, sequence of str or None
        Panel ids (see :data:`PANELS`); None means all.
    progress : bool
        A tqdm progress bar over all runs.
    """
    if isinstance(panels, str) or panels is None:
        keys = parse_panels(panels)
    else:
        keys = parse_panels(",".join(panels))
    if int(seeds) < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds!r}")
    if int(horizon) < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon!r}")
    seeds, horizon = int(seeds), int(horizon)
    selected = [PANELS[key] for key in keys]
    configurations = list(
        dict.fromkeys(
            (problem, algorithm, panel.scalarization)
            for panel in selected
            for problem, algorithm in panel.lines
        )
    )
    jobs = [(*configuration, seed) for configuration in configurations for seed in range(seeds)]
    curves = {}
    start = time.perf_counter()
    for job in tqdm(jobs, desc="bo-figure1", disable=not progress):
        curves[job] = run_curves(*job, horizon)
    seconds = time.perf_counter() - start

    summary = {}
    for panel in selected:
        summary[panel.key] = {}
        for problem_key, algorithm in panel.lines:
            final = _stack(curves, panel, problem_key, algorithm, range(seeds))[:, -1]
            summary[panel.key][(problem_key, algorithm)] = (float(final.mean()), float(final.std()))
    reproduction = Reproduction(
        panels=keys,
        seeds=seeds,
        horizon=horizon,
        curves=curves,
        summary=summary,
        verdicts=_verdicts(selected, summary, seeds),
        files=[],
        seconds=seconds,
    )

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for panel in selected:
        buffer = io.BytesIO()
        plot_panel(panel, curves, range(seeds), horizon).savefig(buffer, format="png", dpi=100)
        name = f"panel-{panel.key}.png"
        _write_atomic(folder, name, buffer.getvalue())
        reproduction.files.append(folder / name)
    _write_atomic(folder, "curves.csv", _csv_bytes(selected, curves, range(seeds), horizon))
    reproduction.files.append(folder / "curves.csv")
    _write_atomic(folder, "results.md", _results_markdown(reproduction).encode())
    reproduction.files.append(folder / "results.md")
    return reproduction


def run_from_cli(out, *, quick=False, seeds=None, horizon=None, panels=None, progress=True) -> str:
    """``manytask reproduce bo-figure1``: defaults 10 seeds and T = 200 (quick: 3 and 40)."""
    seeds = seeds if seeds is not None else (SEEDS_QUICK if quick else SEEDS)
    horizon = horizon if horizon is not None else (HORIZON_QUICK if quick else HORIZON)
    reproduction = reproduce(out, seeds=seeds, horizon=horizon, panels=panels, progress=progress)
    results = Path(out) / "results.md"
    return f"{results.read_text()}\nWrote {len(reproduction.files)} files into {Path(out)}"
