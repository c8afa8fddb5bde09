"""How :class:`~manytask.bo.MultiTaskBO` proposes: ``ask(k)``'s batch and one proposal's
acquisition maximisation.

Each of the k points draws its own λ; earlier picks and every pending point are
hallucinated at the posterior mean (which leaves the mean alone and shrinks the variance
there), and the posterior is restored exactly afterwards. With constraints the argmax is over
the optimistic feasible set (:mod:`.constraints`). What lives elsewhere: the argmax itself
(:mod:`.search`), the acquisition (:mod:`.policies`), the optimiser's state.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import qmc

from . import search
from .constraints import FeasibleFirst, ProbabilityWeighted
from .policies import MC_SAMPLES

#: The acquisitions that take the incumbent's value s*.
EXPECTED_IMPROVEMENTS = ("ei", "moment-ei", "noisy-ei", "mc-ei")

# Internal to MultiTaskBO.ask (each function takes the optimizer): no public names.
__all__: list[str] = []


def propose(optimizer, count):
    """``count`` pairs (x, λ); earlier picks and pending points are hallucinated."""
    if optimizer.candidates is not None:  # avoided while others remain
        told = optimizer._X if optimizer.avoid_told else []
        pending = candidate_mask(optimizer, [x for x, _ in optimizer._pending] + list(told))
        batch = np.zeros_like(pending)
    else:
        busy = [x for x, _ in optimizer._pending]
    proposals, token = [], None
    if optimizer._policy is not None:
        token = optimizer._policy.snapshot()
    try:
        if optimizer._policy is not None:
            radius = optimizer._policy.radius()  # from the real observations only
            for x, _ in optimizer._pending:
                hallucinate(optimizer, x)
        for j in range(count):
            # before the first tell of an unknown n, λ is drawn once n is known
            weights = None
            if optimizer.n_tasks is not None:
                weights = optimizer._sample_weights(optimizer._rng, optimizer.n_tasks)
            if optimizer.candidates is not None:  # pending points only while others remain
                excluded = batch | pending if not (batch | pending).all() else batch
            else:
                excluded = np.array(busy).reshape(-1, optimizer.n_features)
            if optimizer._policy is None:  # kernel="auto" before its first fit: a random design
                x = initial_point(optimizer, excluded)
            else:
                scale = 1.0  # radius_draw="exponential": a randomised radius (optimizer.py)
                if optimizer.radius_draw == "exponential":
                    scale = optimizer._rng.exponential()
                x = maximize(optimizer, weights, scale * radius, excluded)
                if j < count - 1:  # the last pick shapes nothing after it
                    hallucinate(optimizer, x)
            proposals.append((x, weights))
            if optimizer.candidates is not None:
                batch |= candidate_mask(optimizer, [x])
            else:
                busy.append(x)
    finally:
        if token is not None:
            optimizer._policy.restore(token)
    return proposals


def candidate_mask(optimizer, points):
    """The candidates equal to any of ``points`` (a point off the set matches none), by a
    look-up of the distinct candidate rows rather than a comparison with every one."""
    matched = np.zeros(optimizer._n_distinct, dtype=bool)
    for x in points:
        group = optimizer._group_of_row.get((np.asarray(x, dtype=float) + 0.0).tobytes())
        if group is not None:
            matched[group] = True
    return matched[optimizer._candidate_group]


def hallucinate(optimizer, x):
    mean = optimizer._policy.posterior.mean(x[None, :])[0]
    optimizer._policy.add(x, mean)


def maximize(optimizer, weights, radius, excluded):
    """argmax of the acquisition away from ``excluded``: a mask of the candidates, or on a
    box the points (m, d) every proposal keeps ``min_distance`` from (:mod:`.search`)."""
    scalarization, feasibility = optimizer._scalarization(), None
    points, values = told_values(optimizer, weights, scalarization)
    best = None if values is None else (points[np.argmax(values)], float(values.max()))
    # acquisition="ei": the improvement on the incumbent's value; "moment-ei": the same with
    # the moments of s_λ(f(x)); "noisy-ei": jointly with every feasible told point (their
    # values then replace the incumbent's); "mc-ei": averaged over draws of f(x)
    expected = optimizer.acquisition in EXPECTED_IMPROVEMENTS and best is not None
    improved = best[1] if expected else None
    joint, base = None, None
    if expected and optimizer.acquisition == "noisy-ei":
        joint, improved = points, values
    if expected and optimizer.acquisition == "mc-ei":
        base = base_samples(optimizer._rng, optimizer.n_tasks)
    if optimizer.n_constraints:
        thresholds = np.zeros(optimizer.n_constraints)
        if optimizer._learned is not None:
            thresholds = optimizer._learned.constraint_thresholds()
        if optimizer.feasibility == "optimistic":
            feasibility = FeasibleFirst(thresholds)
        else:  # EI is already an improvement on s*: PoF · EI (.constraints)
            gain_from = None if best is None else 0.0 if improved is not None else best[1]
            feasibility = ProbabilityWeighted(thresholds, gain_from)

    moments = expected and optimizer.acquisition == "moment-ei"

    def acquisition(X):
        return optimizer._policy.acquisition(
            X, weights, scalarization, radius, feasibility, improved, joint, base, moments
        )

    if optimizer.candidates is not None:
        values = np.where(excluded, -np.inf, acquisition(None))
        return optimizer.candidates[search.argmax_with_ties(values, optimizer._rng)].copy()
    return search.maximize_on_box(
        acquisition, optimizer.bounds, optimizer._rng, excluded, optimizer.n_sobol,
        optimizer.n_restarts, optimizer.min_distance, () if best is None else [best[0]],
        optimizer.X_ if optimizer.avoid_told else (),
    )  # fmt: skip


def told_values(optimizer, weights, scalarization):
    """The told points observed feasible and their s_λ(μ_t(x_s)); the largest is the
    incumbent (x*, s*). (None, None) if no told point is feasible, or where nothing uses
    them: they serve the constraints, EI and the box search's starts, not a UCB on a finite
    set."""
    used = (
        optimizer.n_constraints
        or optimizer.acquisition in EXPECTED_IMPROVEMENTS
        or optimizer.bounds is not None
    )
    if not used or not optimizer.feasible_.any():
        return None, None
    points = optimizer.X_[optimizer.feasible_]
    values = scalarization(
        optimizer._policy.posterior.mean(points)[:, : optimizer.n_tasks], weights
    )
    return points, values


def base_samples(rng, n_objectives):
    """``MC_SAMPLES`` standard normal draws (K, n) for ``acquisition="mc-ei"``: scrambled
    Sobol points mapped by Φ⁻¹ (as BoTorch's SobolQMCNormalSampler), a fresh scramble per
    proposal seeded by a draw from the optimizer's generator (SciPy would spawn from the
    generator itself, a count its saved state does not keep: a resumed run would differ)."""
    scramble_seed = int(rng.integers(2**63))
    uniform = qmc.Sobol(n_objectives, scramble=True, seed=scramble_seed).random(MC_SAMPLES)
    return ndtri(np.clip(uniform, 1e-12, 1 - 1e-12))


def initial_point(optimizer, excluded):
    if optimizer.candidates is not None:
        available = np.flatnonzero(~excluded)
        return optimizer.candidates[available[optimizer._rng.integers(len(available))]].copy()
    return search.random_box_point(
        optimizer.bounds, optimizer._rng, excluded, optimizer.min_distance
    )
