"""Black-box constraints c_j(x) ≤ 0 in :class:`~manytask.bo.MultiTaskBO`: the optimistic
feasible set of the acquisition.

Model. The m constraints are tasks n + 1, …, n + m of the same multi-task kernel Γ as the
n objectives; the posterior of a constraint borrows from the objectives (and back) through
the task covariance, which is what a multi-task posterior adds over one GP per constraint.

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

Acquisition. The optimistic feasible set F_t = {x : ℓ_j(x) ≤ 0 for every j} holds every
feasible point on that event, the constrained optimum x* among them; so the scalarised UCB
maximised over F_t keeps the step u_t(x_t) ≥ u_t(x*) ≥ s_λ(f(x*)) of Theorem 2's proof, and
each proposal violates constraint j by at most 2β_t σ_{t,j}(x_t). This is the
optimistic feasibility of CONFIG (Xu, Jiang, Svetozarevic & Jones, ICML 2023) and of the
constrained kernelised bandits of Zhou & Ji (NeurIPS 2022), here with the multi-task radius;
unlike Gelbart, Snoek & Adams (UAI 2014), who weigh an acquisition by the probability of
feasibility, it needs no Gaussian model of c. When F_t is empty (on the event: no point is
feasible), the proposal minimises the total optimistic violation Σ_j max(0, ℓ_j(x)), the
point the model says is closest to feasible.

What lives elsewhere: the posterior and radius (:mod:`.policies`), the argmax (:mod:`.search`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["optimistic_violation", "FeasibleFirst"]


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
    >>> merit(np.array([3.0, 1.0, 2.0]), np.array([[0.5], [-1.0], [0.0]]))
    array([-0.5,  1. ,  2. ])
    """

    def __init__(self, thresholds):
        self.thresholds = np.asarray(thresholds, dtype=float)
        self.floor = None

    def __call__(self, acquisition, lower) -> np.ndarray:
        """The merit of N points from their acquisition and constraints' lower bounds.

        Parameters
        ----------
        acquisition : array of shape (N,)
            u(x).
        lower : array of shape (N, m)
            Lower confidence bounds of the constraints.

        Returns
        -------
        ndarray of shape (N,)
            u on the optimistic feasible set, ``floor − violation`` elsewhere.

        Examples
        --------
        >>> FeasibleFirst(np.zeros(1))(np.array([1.0, 2.0]), np.array([[1.0], [-1.0]]))
        array([-1.,  2.])
        """
        violation = optimistic_violation(lower, self.thresholds)
        if self.floor is None:
            finite = acquisition[np.isfinite(acquisition)]
            self.floor = (finite.min() if finite.size else 0.0) - 1.0
        with np.errstate(over="ignore"):
            return np.where(violation > 0, self.floor - violation, acquisition)
