"""Black-box constraints c_j(x) ≤ 0 in :class:`~manytask.bo.MultiTaskBO`: their model and the
acquisition's two rules, the optimistic feasible set and the probability of feasibility.

Model. The m constraints are tasks n + 1, …, n + m of the same multi-task kernel Γ as the
n objectives; with a given kernel the posterior of a constraint borrows from the objectives
(and back) through the task covariance. A learned kernel (``kernel="auto"``,
:func:`fit_constrained_kernel`) is the block model Γ = k₀ B₀ ⊕ b₁ k₁ ⊕ … ⊕ b_m k_m: the
objectives' ICM k₀ B₀, fitted as without constraints, and every constraint with its own ARD
input kernel k_j, variance b_j and noise η_j (a linear model of coregionalisation whose
latent kernels each drive one block), fitted by MAP under BoTorch's priors
(:func:`~manytask.bo.kernel_learning.fit_icm_kernel`). One ICM over all n + m tasks would
give a constraint the objectives' lengthscales and noise and tie it to them by a single
correlation: on C2-DTLZ2 its posterior covered 59 % of held-out constraint values at ±2σ
(the block model's 93 %, as BoTorch's own GP of c; benchmarks/RESULTS.md). Per-task noise
η_j is mapped to the objectives' η exactly by rescaling task j's standardised output by
√(η/η_j), which scales its block by η/η_j and leaves the sign of c_j — hence the feasible
set — unchanged.

Confidence bounds. The proof of Theorem 1 of ``multitask-bayesian-optimization.txt`` writes
f(x) − μ_t(x) = Φ(x)ᵀ(V_t + ηI)⁻¹(S_t − ηθ*) for the whole output vector (objectives and
constraints) and bounds it by Cauchy–Schwarz. Taken along a unit vector e_j instead of in
norm, the same steps give |h_j(x) − μ_{t,j}(x)| ≤ β_t σ_{t,j}(x) with σ²_{t,j} = Γ_t(x, x)_jj
(σ_{t,j} ≤ ‖Γ_t(x, x)‖^{1/2}, which Theorem 1 states), on the same event of probability
1 − δ — no further union bound — and with β_t of Theorem 2 (its log-determinants over the
whole (n + m)-task block; a user ``beta`` or the learned kernel's radius likewise). So every
constraint's lower confidence bound is ℓ_j(x) = μ_{t,j}(x) − β_t σ_{t,j}(x), for every
algorithm (MOBO's independent GPs give the same per-task interval). Along the objectives'
coordinates P the same steps give ‖P(f(x) − μ_t(x))‖₂ ≤ β_t ‖PΓ_t(x, x)Pᵀ‖^{1/2}: the width
of the scalarised UCB is the norm of the objectives' block, which the constraints' prior
variance does not inflate (without constraints it is ‖Γ_t(x, x)‖, as in Algorithm 1).

Acquisition, ``feasibility="optimistic"``. The optimistic feasible set F_t = {x : ℓ_j(x) ≤ 0
for every j} holds every feasible point on that event, the constrained optimum x* among
them; so the scalarised UCB maximised over F_t keeps the step u_t(x_t) ≥ u_t(x*) ≥
s_λ(f(x*)) of Theorem 2's proof, and each proposal violates constraint j by at most
2β_t σ_{t,j}(x_t). This is the optimistic feasibility of CONFIG (Xu, Jiang, Svetozarevic &
Jones, ICML 2023) and of the constrained kernelised bandits of Zhou & Ji (NeurIPS 2022), here
with the multi-task radius. When F_t is empty (on the event: no point is feasible), the
proposal minimises the total optimistic violation Σ_j max(0, ℓ_j(x)), the point the model
says is closest to feasible (:class:`FeasibleFirst`).

Acquisition, ``feasibility="probability"``. The constrained expected improvement of Schonlau,
Welch & Jones (1998), Gardner et al. (ICML 2014) and Gelbart, Snoek & Adams (UAI 2014) —
EI(x) · Π_j P(c_j(x) ≤ 0), the rule inside BoTorch's constrained qLogNEI — with the
scalarised UCB's optimistic improvement (u_t(x) − s*)₊ in place of EI, s* the best
s_λ(μ_t) among the observations found feasible; before any, the probability of feasibility
alone, as Gelbart et al. do (:class:`ProbabilityWeighted`). It uses the constraints'
posterior as Gaussian, which the block model's is; Theorem 2's step does not carry over (the
argmax of the weighted merit need not have u_t(x_t) ≥ u_t(x*)), so no regret bound is
claimed for it. Which rule is the default, and why, is said in
:class:`~manytask.bo.MultiTaskBO` (benchmarks/RESULTS.md, ``bench_bo_constraints``).

What lives elsewhere: the posterior and radius (:mod:`.policies`), the argmax (:mod:`.search`),
the ICM likelihood and its fit (:mod:`.kernel_learning`), the refit schedule and output
standardisation (:mod:`.learned`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import ndtr

from .kernel_learning import ICMFit, fit_icm_kernel

__all__ = [
    "FEASIBILITY_RULES",
    "optimistic_violation",
    "probability_of_feasibility",
    "FeasibleFirst",
    "ProbabilityWeighted",
    "ConstrainedFit",
    "fit_constrained_kernel",
]


class ConstrainedFit(NamedTuple):
    """A learned kernel for n objectives then m constraints, in the units of the fit.

    Parameters
    ----------
    terms : list of (lengthscales, B)
        Γ(x, x′) = Σ_l k_l(x, x′) B_l, k_l the unit-variance ARD RBF with these lengthscales
        and B_l of shape (n + m, n + m): the objectives' ICM, then one term per constraint,
        all for the outputs rescaled by ``rescale``.
    noise : float
        η, the noise variance of every rescaled output (the objectives' fitted η).
    rescale : ndarray of shape (n + m,)
        a_i: the kernel models a_i ŷ_i for the standardised outputs ŷ (1 for the objectives,
        √(η/η_j) for constraint j).
    objectives : ICMFit
        The ICM of the objectives.
    constraints : list of ICMFit
        One single-task MAP fit per constraint.

    Examples
    --------
    >>> X = np.linspace(0, 1, 8)[:, None]
    >>> Y = np.c_[np.sin(3 * X), np.cos(3 * X), X - 0.5]
    >>> fit = fit_constrained_kernel(X, (Y - Y.mean(0)) / Y.std(0), 2, n_restarts=1)
    >>> [B.shape for _, B in fit.terms], fit.rescale[:2]
    ([(3, 3), (3, 3)], array([1., 1.]))
    """

    terms: list
    noise: float
    rescale: np.ndarray
    objectives: ICMFit
    constraints: list


def fit_constrained_kernel(
    X, Y, n_objectives, n_restarts=3, random_state=None, init=None, prior=False
):
    """Fit the block model of the module docstring: the objectives' ICM as without
    constraints (MAP with ``prior``, else maximum marginal likelihood), every constraint's
    GP by MAP under BoTorch's priors.

    The blocks are independent, so the model's log marginal likelihood is the sum of theirs
    and each block is fitted alone by :func:`~manytask.bo.kernel_learning.fit_icm_kernel`.

    Parameters
    ----------
    X : array of shape (t, d)
        Inputs in the unit cube.
    Y : array of shape (t, n + m)
        Standardised outputs: the objectives, then the constraints.
    n_objectives : int
        n ≥ 1; m = Y.shape[1] − n ≥ 1.
    n_restarts : int
        Starts of every fit.
    random_state : numpy Generator, int or None
        Seeds the random starts.
    init : ConstrainedFit, optional
        A previous fit: every block warm-starts from its own.
    prior : bool
        Fit the objectives' ICM by MAP under the same priors
        (:func:`~manytask.bo.kernel_learning.fit_icm_kernel`).

    Returns
    -------
    ConstrainedFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(40, 2))
    >>> f, c = np.sin(3 * X[:, 0]), np.cos(9 * X[:, 1])  # c varies along another axis
    >>> Y = np.c_[f, -f, c] + 0.01 * rng.normal(size=(40, 3))
    >>> Y = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    >>> fit = fit_constrained_kernel(X, Y, n_objectives=2, n_restarts=2, random_state=0)
    >>> len(fit.terms), bool(fit.constraints[0].lengthscales[1] < fit.objectives.lengthscales[1])
    (2, True)
    """
    Y = np.asarray(Y, dtype=float)
    n, m = n_objectives, Y.shape[1] - n_objectives
    rng = np.random.default_rng(random_state)
    objectives = fit_icm_kernel(
        X, Y[:, :n], n_restarts=n_restarts, random_state=rng,
        init=None if init is None else init.objectives, prior=prior,
    )  # fmt: skip
    constraints = [
        fit_icm_kernel(
            X,
            Y[:, [n + j]],
            n_restarts=n_restarts,
            random_state=rng,
            init=None if init is None else init.constraints[j],
            prior=True,
        )  # fmt: skip
        for j in range(m)
    ]
    eta = objectives.noise
    rescale = np.r_[np.ones(n), [np.sqrt(eta / c.noise) for c in constraints]]
    B = np.zeros((n + m, n + m))
    B[:n, :n] = objectives.B
    terms = [(objectives.lengthscales, B)]
    for j, c in enumerate(constraints):
        B = np.zeros((n + m, n + m))
        B[n + j, n + j] = c.B[0, 0] * rescale[n + j] ** 2
        terms.append((c.lengthscales, B))
    return ConstrainedFit(terms, eta, rescale, objectives, constraints)


#: ``MultiTaskBO(feasibility=…)``: the merit of each rule (both below).
FEASIBILITY_RULES = ("optimistic", "probability")


def optimistic_violation(lower, thresholds) -> np.ndarray:
    """Σ_j max(0, ℓ_j(x) − τ_j) for the lower bounds ``lower`` (N, m); τ_j is c_j ≤ 0's bound
    in the posterior's units (0, or where 0 lands after a standardisation).

    Parameters
    ----------
    lower : array of shape (N, m)
        Lower confidence bounds ℓ_j(x) = μ_j(x) − β σ_j(x) of the m constraints.
    thresholds : array of shape (m,)
        τ_j.

    Returns
    -------
    ndarray of shape (N,)
        The total optimistic violation; 0 on the optimistic feasible set.

    Examples
    --------
    >>> optimistic_violation(np.array([[0.5, -1.0], [-0.2, -0.1]]), np.zeros(2))
    array([0.5, 0. ])
    """
    return np.sum(np.maximum(np.asarray(lower) - thresholds, 0.0), axis=1)


class FeasibleFirst:
    """The merit whose argmax is the acquisition's argmax over the optimistic feasible set,
    or, when no point is in it, the argmin of the optimistic violation.

    Feasible points keep their acquisition u; the others get ``floor − violation``, with the
    floor 1 below the smallest u of the first batch evaluated (the whole candidate set, or a
    box's Sobol sample), so every feasible point of that batch ranks above every infeasible
    one. On a box a local search started from a feasible point never leaves F_t, since it
    only accepts a better merit.

    Parameters
    ----------
    thresholds : array of shape (m,)
        τ_j: the bound of every constraint in the posterior's units.

    Examples
    --------
    >>> merit = FeasibleFirst(np.zeros(1))
    >>> merit(np.array([3.0, 1.0, 2.0]), np.array([[0.5], [-1.0], [0.0]]), np.zeros((3, 1)), 1.0)
    array([-0.5,  1. ,  2. ])
    """

    def __init__(self, thresholds):
        self.thresholds = np.asarray(thresholds, dtype=float)
        self.floor = None

    def __call__(self, acquisition, mean, deviation, radius) -> np.ndarray:
        """The merit of N points from their acquisition and the constraints' posterior.

        Parameters
        ----------
        acquisition : array of shape (N,)
            u(x).
        mean, deviation : arrays of shape (N, m)
            μ_j(x) and σ_j(x) of the constraints.
        radius : float
            β: the lower confidence bounds are μ_j − β σ_j.

        Returns
        -------
        ndarray of shape (N,)
            u on the optimistic feasible set, ``floor − violation`` elsewhere.

        Examples
        --------
        >>> FeasibleFirst(np.zeros(1))(np.array([1.0, 2.0]), np.array([[1.0], [-1.0]]),
        ...                            np.ones((2, 1)), 0.0)
        array([-1.,  2.])
        """
        violation = optimistic_violation(mean - radius * deviation, self.thresholds)
        if self.floor is None:
            finite = acquisition[np.isfinite(acquisition)]
            self.floor = (finite.min() if finite.size else 0.0) - 1.0
        with np.errstate(over="ignore"):
            return np.where(violation > 0, self.floor - violation, acquisition)


def probability_of_feasibility(mean, deviation, thresholds) -> np.ndarray:
    """Π_j Φ((τ_j − μ_j(x))/σ_j(x)): the posterior probability that every c_j(x) ≤ τ_j, the
    constraints' posteriors taken independent (exact for the block model of ``"auto"``).

    Parameters
    ----------
    mean, deviation : arrays of shape (N, m)
        μ_j(x) and σ_j(x) of the constraints.
    thresholds : array of shape (m,)
        τ_j.

    Returns
    -------
    ndarray of shape (N,)

    Examples
    --------
    >>> probability_of_feasibility(np.array([[0.0], [-1.0]]), np.ones((2, 1)), np.zeros(1))
    array([0.5       , 0.84134475])
    """
    z = (np.asarray(thresholds) - mean) / np.maximum(deviation, 1e-12)
    return np.prod(ndtr(z), axis=1)


class ProbabilityWeighted:
    """The merit PoF(x) · (u(x) − s*)₊ of the constrained expected improvement (Gardner et
    al., ICML 2014; Gelbart, Snoek & Adams, UAI 2014) with the scalarised UCB's optimistic
    improvement in place of EI; before any feasible observation, PoF(x) alone.

    s* is the incumbent: the largest s_λ(μ_t(x_s)) over the told points observed feasible.
    Points with u ≤ s* get u − s* ≤ 0, below every point that improves, so the merit is
    continuous and the argmax is the UCB's where no point improves optimistically.

    Parameters
    ----------
    thresholds : array of shape (m,)
        τ_j: the bound of every constraint in the posterior's units.
    incumbent : float or None
        s*; None when no told point is feasible.

    Examples
    --------
    >>> merit = ProbabilityWeighted(np.zeros(1), incumbent=1.0)
    >>> merit(np.array([3.0, 3.0, 0.5]), np.array([[0.0], [-9.0], [0.0]]), np.ones((3, 1)), 2.0)
    array([ 1. ,  2. , -0.5])
    """

    def __init__(self, thresholds, incumbent=None):
        self.thresholds = np.asarray(thresholds, dtype=float)
        self.incumbent = incumbent

    def __call__(self, acquisition, mean, deviation, radius) -> np.ndarray:
        """The merit of N points from their acquisition and the constraints' posterior.

        Parameters
        ----------
        acquisition : array of shape (N,)
            u(x).
        mean, deviation : arrays of shape (N, m)
            μ_j(x) and σ_j(x) of the constraints.
        radius : float
            β (unused: the weight is the posterior probability).

        Returns
        -------
        ndarray of shape (N,)

        Examples
        --------
        >>> ProbabilityWeighted(np.zeros(1))(np.zeros(2), np.array([[0.0], [-1.0]]),
        ...                                  np.ones((2, 1)), 1.0)
        array([0.5       , 0.84134475])
        """
        probability = probability_of_feasibility(mean, deviation, self.thresholds)
        if self.incumbent is None:
            return probability
        gain = np.asarray(acquisition, dtype=float) - self.incumbent
        return np.where(gain > 0, probability * gain, gain)
