"""Black-box constraints c_j(x) ≤ 0 in :class:`~manytask.bo.MultiTaskBO`: their model and the
acquisition's two rules, the optimistic feasible set and the probability of feasibility.

Model. The m constraints are tasks n + 1, …, n + m of the same multi-task kernel Γ as the
n objectives; with a given kernel the posterior of a constraint borrows from the objectives
(and back) through the task covariance. A learned kernel (``kernel="auto"``) is the block
model Γ = k₀ B₀ ⊕ b₁ k₁ ⊕ … ⊕ b_m k_m: the objectives' model k₀ B₀, fitted as without
constraints (their ICM or one GP per objective, itself a block each, as ``objective_model``
says: by default the one of higher likelihood), and every constraint with its own ARD input
kernel k_j, variance b_j and noise η_j (a linear model of coregionalisation whose latent
kernels each drive one block), fitted by MAP under BoTorch's priors; every block is fitted
alone (:func:`~manytask.bo.block_model.fit_block_kernels`). One ICM over all n + m tasks would
give a constraint the objectives' lengthscales and noise and tie it to them by a single
correlation: on C2-DTLZ2 its posterior covered 59 % of held-out constraint values at ±2σ
(the block model's 93 %, as BoTorch's own GP of c; benchmarks/RESULTS.md). Per-block noise
η_j is mapped to the first block's η exactly by rescaling task j's standardised output by
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
claimed for it. With an expected improvement (``acquisition="moment-ei"``, ``"ei"``, …)
the scalarisation's expected improvement on s*
(:func:`~manytask.bo.policies.expected_improvement`) takes the UCB's place in either rule:
maximised over F_t, or weighted as PoF(x) · EI(x), the constrained EI itself; until an
observation is feasible there is no s*, and both rules act as with the UCB. Which rule is
the default, and why, is said in
:class:`~manytask.bo.MultiTaskBO` (benchmarks/RESULTS.md, ``bench_bo_constraints``).

What lives elsewhere: the posterior and radius (:mod:`.policies`), the argmax (:mod:`.search`),
the ICM likelihood and its fit (:mod:`.kernel_learning`), the refit schedule and output
standardisation (:mod:`.learned`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

__all__ = [
    "FEASIBILITY_RULES",
    "optimistic_violation",
    "probability_of_feasibility",
    "FeasibleFirst",
    "ProbabilityWeighted",
]


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
