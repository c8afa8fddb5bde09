"""The runs of the BO Figure 1 reproduction: problems, panels and one run as a pure function.

See :mod:`manytask.experiments.bo_figure1` for the panels, the settings and the outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from ..bo import MultiTaskBO, run
from ..bo.metrics import bayes_regret
from ..bo.problems import (
    Problem,
    perturbed_sine,
    rkhs_function,
    sensor_substitute,
    shifted_branin,
)
from ..bo.problems.synthetic import rkhs_norm
from ..kernels import RBF, Separable, uniform_task_similarity
from . import protocol

__all__ = ["PANELS", "Panel", "build_problem", "parse_panels", "problem_label", "run_curves"]

HORIZON = 100  # the paper does not state its T
SEEDS = 10  # §5: 10 independent trials
DELTA, EPSILON = 0.1, 0.5  # §5 (η = 0.1 is each problem's `noise`)
N_BAYES_WEIGHTS, BAYES_SEED = 1000, 0  # one fixed Monte-Carlo set of λ for every R_B curve
OMEGAS = (0.0, 0.25, 0.5, 0.75, 1.0)
OMEGA_TASKS = 4
WEIGHTS = {"chebyshev": "paria", "linear": "uniform"}  # §5 and Appendix E
METRICS = {"time_average_regret": "R_C(t)/t", "bayes_regret": "R_B(t)"}
MULTI_TASK_PAIRS = (("mt-kb", "it-kb"), ("mt-bkb", "it-bkb"))


# ---- problems -----------------------------------------------------------------------------
def rkhs_function_omega(omega: float, n_tasks: int = OMEGA_TASKS, seed: int = 0) -> Problem:
    """§5's RKHS function with Γ_ω = k (ωI + (1 − ω)11ᵀ/n) in place of k AᵀA (Fig. 1(a)).

    f = Σ_{i≤50} Γ_ω(·, x_i) c_i on the 0.01-net, k the SE kernel with lengthscale 0.2,
    c_i ~ U[−1, 1]ⁿ; the anchors and c_i come from ``default_rng(seed)`` and are the same for
    every ω, so only the similarity of the tasks changes. σ = 0.1, b = the exact ‖f‖_Γ
    (:func:`~manytask.bo.problems.synthetic.rkhs_norm`), as for :func:`rkhs_function`.

    Examples
    --------
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
    problem.rkhs_bound = rkhs_norm(scalar(anchors, anchors), B, coefficients)
    return problem


# a problem of these keys is a random draw: each trial (seed) draws its own f
PROBLEMS = {
    "rkhs_n2": lambda seed: rkhs_function(n_tasks=2, seed=seed),
    "rkhs_n20": lambda seed: rkhs_function(n_tasks=20, seed=seed),
    "perturbed_sine": lambda seed: perturbed_sine(),  # ω = 0.4 as in Fig. 1(d)
    "shifted_branin": lambda seed: shifted_branin(),  # ω = 0.5 as in Fig. 1(e)
    "sensor_substitute": lambda seed: sensor_substitute(),
    **{
        f"rkhs_omega_{omega:g}": (lambda seed, omega=omega: rkhs_function_omega(omega, seed=seed))
        for omega in OMEGAS
    },
}
DRAWN = frozenset(key for key in PROBLEMS if key.startswith("rkhs"))


def build_problem(key: str, seed: int = 0) -> Problem:
    """The problem called ``key`` in :data:`PROBLEMS`; the RKHS functions (:data:`DRAWN`)
    are drawn with ``seed``, the others ignore it (deterministic, so each is built once).

    Parameters
    ----------
    key : str
        A key of :data:`PROBLEMS`.
    seed : int, default=0
        Seed of a drawn RKHS function.

    Returns
    -------
    Problem
        The problem.

    Examples
    --------
    >>> build_problem("perturbed_sine").name
    'perturbed_sine(omega=0.4)'
    """
    if key not in PROBLEMS:
        raise ValueError(f"problem must be one of {', '.join(PROBLEMS)}, got {key!r}")
    return _built(key, int(seed) if key in DRAWN else 0)


@cache
def _built(key: str, seed: int) -> Problem:
    return PROBLEMS[key](seed)


def problem_label(key: str) -> str:
    """The problem's name for tables: a drawn one says that each seed draws its own f.

    Parameters
    ----------
    key : str
        A key of :data:`PROBLEMS`.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> problem_label("rkhs_n2")
    'rkhs_function(n_tasks=2, f drawn per seed)'
    """
    name = build_problem(key).name
    return name.replace("seed=0", "f drawn per seed") if key in DRAWN else name


# ---- panels -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Panel:
    """One panel of a figure: which runs it shows, and with which metric.

    Parameters
    ----------
    key : str
        The panel's id (``a`` … ``f``, ``E2a`` …).
    figure : str
        The paper's figure: ``1``, ``E2`` or ``E3``.
    title : str
        The panel's title.
    lines : tuple of (str, str)
        (problem key, algorithm) pairs; panel ``a`` draws one line per problem (ω), the
        others one per algorithm.
    scalarization : str
        ``chebyshev`` or ``linear``.
    metric : str
        ``time_average_regret`` or ``bayes_regret``.

    Examples
    --------
    >>> PANELS["b"].lines[0], PANELS["b"].metric
    (('rkhs_n2', 'mt-kb'), 'time_average_regret')
    """

    key: str
    figure: str
    title: str
    lines: tuple
    scalarization: str
    metric: str

    @property
    def by_problem(self) -> bool:
        """Whether the lines are problems (panel ``a``, one per ω) rather than algorithms.

        Examples
        --------
        >>> PANELS["a"].by_problem, PANELS["b"].by_problem
        (True, False)
        """
        return len({problem for problem, _ in self.lines}) > 1

    def label(self, problem_key: str, algorithm: str) -> str:
        """The legend of a line: its ω on panel ``a``, else its algorithm.

        Parameters
        ----------
        problem_key : str
            The line's problem.
        algorithm : str
            The line's algorithm.

        Returns
        -------
        str
            The legend.

        Examples
        --------
        >>> PANELS["a"].label(*PANELS["a"].lines[1]), PANELS["b"].label("rkhs_n2", "mt-kb")
        ('ω = 0.25', 'MT-KB')
        """
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


def parse_panels(text) -> tuple[str, ...]:
    """Panel ids from ``"a,b,E2a"`` or a sequence (None, "" or "all": all), in the order of
    :data:`PANELS`.

    Parameters
    ----------
    text : str, sequence of str or None
        The panels asked for.

    Returns
    -------
    tuple of str
        The panel ids.

    Examples
    --------
    >>> parse_panels("d, b")
    ('b', 'd')
    """
    chosen = protocol.parse_panels(text, tuple(PANELS))
    return tuple(key for key in PANELS if key in chosen)


# ---- one run ------------------------------------------------------------------------------
def run_curves(
    problem_key: str, algorithm: str, scalarization: str, seed: int, horizon: int
) -> dict[str, np.ndarray]:
    """One run → its curves for t = 1..T: ``time_average_regret`` R_C(t)/t and
    ``bayes_regret`` R_B(t) (1000 fixed Monte-Carlo weights from the run's P_λ).

    A pure function of its arguments: everything random is seeded by ``seed``, including
    the draw of an RKHS function (a new f for every trial).

    Parameters
    ----------
    problem_key : str
        A key of :data:`PROBLEMS`.
    algorithm : str
        MultiTaskBO's ``algorithm`` (``mt-kb``, ``it-bkb``, ``mobo`` …).
    scalarization : str
        ``chebyshev`` or ``linear``.
    seed : int
        The trial.
    horizon : int
        Rounds T.

    Returns
    -------
    dict of str to ndarray of shape (T,)
        The two curves.

    Examples
    --------
    >>> curves = run_curves("rkhs_n2", "mt-kb", "chebyshev", seed=0, horizon=3)
    >>> sorted(curves), curves["time_average_regret"].shape
    (['bayes_regret', 'time_average_regret'], (3,))
    """
    problem = build_problem(problem_key, seed)
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
