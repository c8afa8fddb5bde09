"""The synthetic problems of §5: the RKHS function, the perturbed sine, the shifted Branin."""

from __future__ import annotations

import numpy as np

from ..._validation import check_int
from ...kernels import RBF, Separable, uniform_task_similarity
from ._base import NET, Problem, net_problem_bound


def rkhs_function(n_tasks: int = 2, seed: int = 0, bound: str = "exact") -> Problem:
    """§5 "RKHS function": f(·) = Σ_{i≤50} Γ(·, x_i) c_i with Γ = k B, on the 0.01-net of [0, 1].

    k is the SE kernel with lengthscale 0.2, B = AᵀA with A_ij ~ U[0, 1], the x_i are 50
    distinct points of the net and c_i ~ U[−1, 1]ⁿ; σ = 0.1, as in the paper. Random draws,
    in this order from ``default_rng(seed)``: A (n × n), the 50 anchor indices
    (``choice(101, 50, replace=False)``), C (50 × n). f is defined on all of R (Γ is), so
    ``f`` accepts any x; ``domain`` is [0, 1].

    ``bound`` sets b, the ‖f‖_Γ of the theory radii: ``"exact"`` (default) is the norm
    itself, exact for a finite expansion: ‖f‖²_Γ = Σ_ij c_iᵀΓ(x_i, x_j)c_j = cᵀGc (see
    :func:`rkhs_norm`); ``"paper"`` is §5's b = max_x ‖f(x)‖₂ / κ, κ = λ_max(B), which does
    not bound ‖f‖_Γ when κ > 1. Both are kept in ``details``.

    Parameters
    ----------
    n_tasks : int
        n, the number of tasks.
    seed : int
        Seeds A, the anchors and C.
    bound : {"exact", "paper"}
        Which b becomes ``rkhs_bound``.

    Returns
    -------
    problem : Problem

    Examples
    --------
    >>> problem = rkhs_function(n_tasks=2, seed=0)
    >>> problem.values.shape, problem.noise_std
    ((101, 2), 0.1)
    """
    if not isinstance(n_tasks, (int, np.integer)) or n_tasks < 1:
        raise ValueError(f"n_tasks must be a positive integer, got {n_tasks!r}")
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.0, 1.0, size=(n_tasks, n_tasks))
    anchors = NET[rng.choice(len(NET), size=50, replace=False)][:, None]
    coefficients = rng.uniform(-1.0, 1.0, size=(50, n_tasks))
    if bound not in ("exact", "paper"):
        raise ValueError(f"bound must be 'exact' or 'paper', got {bound!r}")
    B = A.T @ A
    scalar = RBF(lengthscale=0.2)
    norm = rkhs_norm(scalar(anchors, anchors), B, coefficients)

    def function(X):
        # f(x) = Σ_i k(x, x_i) B c_i; as rows: K(X, anchors) C Bᵀ, and B is symmetric
        return scalar(X, anchors) @ coefficients @ B

    problem = Problem(
        name=f"rkhs_function(n_tasks={n_tasks}, seed={seed})",
        candidates=NET[:, None],
        function=function,
        kernel=Separable(scalar, B),
        noise_std=0.1,  # §5: σ = 0.1
        rkhs_bound=None,
        domain=[[0.0, 1.0]],
        description="Σ_{i≤50} Γ(·, x_i) c_i, Γ = SE(0.2) ⊗ AᵀA (§5)",
    )
    paper = net_problem_bound(problem.values, B)
    problem.details.update(rkhs_norm=norm, paper_bound=paper)
    problem.rkhs_bound = norm if bound == "exact" else paper
    return problem


def rkhs_norm(K, B, coefficients) -> float:
    """‖f‖_Γ of f = Σ_i k(·, x_i) B c_i: √(Σ_ij K_ij c_iᵀ B c_j) = √(cᵀ (K ⊗ B) c), for the
    anchors' Gram K (m × m), the task matrix B and the coefficients C (m × n) as rows c_i."""
    return float(np.sqrt(max(np.sum(K * (coefficients @ B @ coefficients.T)), 0.0)))


# --- Perturbed sine (§5) --------------------------------------------------------------------

PERTURBATION_CENTRES = np.array([0.05, 0.4, 0.7])  # §5: x_1, x_2, x_3
PERTURBATION_WIDTH = 0.1  # §5: standard deviation of each Gaussian bump
# Task-specific weights of the three bumps (rows: tasks, columns: centres). The paper does not
# list its weights; these were fixed before any run. Every task keeps the common sine and
# gets its own local difference: a bump of a different sign or place, so no two tasks agree
# everywhere and no centre is perturbed the same way in all tasks.
PERTURBATION_WEIGHTS = np.array(
    [
        [1.0, 0.0, 0.5],
        [0.0, 1.0, 0.0],
        [-0.5, 0.0, 1.0],
        [0.0, -1.0, -0.5],
    ]
)
NOISE_VARIANCE = 0.01  # §5: Gaussian observation noise of variance 0.01


def perturbed_sine_values(x, weights=PERTURBATION_WEIGHTS) -> np.ndarray:
    """Noise-free tasks f_i(x) = sin(2πx) + 0.6 Σ_j w_ij exp(−(x − c_j)² / (2·0.1²)) (§5).

    Parameters
    ----------
    x : array of shape (N,) or (N, 1)
        Inputs in [0, 1].
    weights : array of shape (n_tasks, 3)
        Weights of the Gaussian bumps centred at 0.05, 0.4 and 0.7.

    Returns
    -------
    values : array of shape (N, n_tasks)

    Examples
    --------
    >>> perturbed_sine_values([0.25, 0.4]).round(3)
    array([[ 1.081,  1.195,  0.959,  0.805],
           [ 0.592,  1.188,  0.594, -0.016]])
    """
    x = np.asarray(x, dtype=float).reshape(-1)
    weights = np.asarray(weights, dtype=float)
    bumps = np.exp(-0.5 * ((x[:, None] - PERTURBATION_CENTRES) / PERTURBATION_WIDTH) ** 2)
    return np.sin(2 * np.pi * x)[:, None] + 0.6 * bumps @ weights.T


def perturbed_sine(omega: float = 0.4, lengthscale: float = 0.2) -> Problem:
    """§5 "Perturbed sine": 4 tasks sin(2πx) + 0.6 f_i^pert(x) on the 0.01-net of [0, 1].

    Weights of the bumps: :data:`PERTURBATION_WEIGHTS` (the paper does not list its own).
    Noise variance 0.01 (σ = 0.1). Kernel Γ_ω = k (ωI + (1 − ω)11ᵀ/n), ω = 0.4 in Fig. 1(d);
    the paper does not give the SE lengthscale of k: 0.2, the one it states for the RKHS
    function. It gives no b either: b = max_x ‖f(x)‖₂ / λ_max(B), the RKHS function's rule.

    Parameters
    ----------
    omega : float
        ω of the task matrix ωI + (1 − ω)11ᵀ/n.
    lengthscale : float
        Lengthscale of the SE kernel k.

    Returns
    -------
    problem : Problem

    Examples
    --------
    >>> problem = perturbed_sine()
    >>> problem.candidates.shape, problem.n_tasks
    ((101, 1), 4)
    """
    B = uniform_task_similarity(len(PERTURBATION_WEIGHTS), omega=omega)
    problem = Problem(
        name=f"perturbed_sine(omega={omega:g})",
        candidates=NET[:, None],
        function=perturbed_sine_values,
        kernel=Separable(RBF(lengthscale), B),
        noise_std=float(np.sqrt(NOISE_VARIANCE)),
        rkhs_bound=None,
        domain=[[0.0, 1.0]],
        description="sin(2πx) + 0.6 f_i^pert(x), 4 tasks (§5, after Baldassarre et al. 2012)",
    )
    problem.rkhs_bound = net_problem_bound(problem.values, B)
    return problem


# --- Shifted Branin–Hoo (§5) ----------------------------------------------------------------

BRANIN_LOWER = np.array([-5.0, 0.0])  # the standard domain [−5, 10] × [0, 15] (Jones 2001)
BRANIN_UPPER = np.array([10.0, 15.0])
# Mean and standard deviation of the Branin function over its standard domain (uniform
# measure), by the trapezoid rule on a 2001 × 2001 grid: 54.30723, 51.25127 (a 4001 × 4001
# grid agrees to 4 digits). Fixed constants, so every task is rescaled by the same map.
BRANIN_MEAN = 54.3072
BRANIN_STD = 51.2513


def branin(x1, x2) -> np.ndarray:
    """The Branin–Hoo function in its usual units (minimum 0.397887, at three points).

    Parameters
    ----------
    x1, x2 : float or array
        Coordinates in [−5, 10] × [0, 15]; arrays broadcast together.

    Returns
    -------
    value : float or array
        The broadcast shape of ``x1`` and ``x2``.

    Examples
    --------
    >>> round(float(branin(np.pi, 2.275)), 6)
    0.397887
    """
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1 - t) * np.cos(x1) + 10.0


def shifted_branin(omega: float = 0.5, grid: int = 21, lengthscale: float = 0.2) -> Problem:
    """§5 "Shifted Branin–Hoo": 9 translated copies of Branin, negated, on a grid.

    Choices the paper leaves open, made here:

    - task i = 1, …, 9 is Branin translated by i % of the domain along x1 (0.15·i in Branin
      units): f_i(x1, x2) = g(x1 − 0.15 i, x2);
    - inputs are the unit square, mapped affinely onto [−5, 10] × [0, 15]; the candidates are
      a ``grid`` × ``grid`` grid of it (21 × 21 = 441 points by default);
    - outputs are g = −(Branin − 54.3072) / 51.2513: negated for maximisation and
      standardised by the mean and standard deviation of Branin over the domain, so values
      are O(1) (about −8.2 to 1.05 over the nine tasks) and σ = 0.1 and a unit-variance
      kernel are meaningful;
    - Γ_ω = k (ωI + (1 − ω)11ᵀ/9), ω = 0.5 as in Fig. 1(e), k the SE kernel with lengthscale
      0.2 on the unit square (the paper gives none); σ = 0.1 (not given; ≈ 5 Branin units);
      b = max_x ‖f(x)‖₂ / λ_max(B), the RKHS function's rule (not given either).

    Parameters
    ----------
    omega : float
        ω of the task matrix ωI + (1 − ω)11ᵀ/9.
    grid : int
        Points per side of the candidate grid (≥ 2).
    lengthscale : float
        Lengthscale of the SE kernel k on the unit square.

    Returns
    -------
    problem : Problem

    Examples
    --------
    >>> problem = shifted_branin(grid=5)
    >>> problem.values.shape
    (25, 9)
    """
    check_int(grid, "grid", minimum=2)
    shifts = 0.01 * np.arange(1, 10) * (BRANIN_UPPER[0] - BRANIN_LOWER[0])

    def function(X):
        x1, x2 = (BRANIN_LOWER + X * (BRANIN_UPPER - BRANIN_LOWER)).T
        raw = branin(x1[:, None] - shifts, x2[:, None])
        return -(raw - BRANIN_MEAN) / BRANIN_STD

    axis = np.linspace(0.0, 1.0, grid)
    candidates = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    B = uniform_task_similarity(len(shifts), omega=omega)
    problem = Problem(
        name=f"shifted_branin(omega={omega:g}, grid={grid})",
        candidates=candidates,
        function=function,
        kernel=Separable(RBF(lengthscale), B),
        noise_std=0.1,
        rkhs_bound=None,
        domain=[[0.0, 1.0], [0.0, 1.0]],
        description="9 Branin–Hoo functions shifted by i % along x1, negated, standardised",
    )
    problem.rkhs_bound = net_problem_bound(problem.values, B)
    return problem


# --- Sensor measurements: a substitute (§5) -------------------------------------------------
