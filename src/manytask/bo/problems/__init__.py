"""The benchmark problems of ``multitask-bayesian-optimization.txt`` §5, as :class:`Problem`.

Each problem is a vector-valued black box f: X → Rⁿ on a finite candidate set (the paper
runs every experiment on a finite set), with the noise, the RKHS-norm bound b and the
multi-task kernel Γ the paper used for it:

- :func:`rkhs_function` — f = Σ_{i≤50} Γ(·, x_i) c_i on the 0.01-net of [0, 1];
- :func:`perturbed_sine` — 4 tasks sin(2πx) + 0.6 f_i^pert(x) (after Baldassarre et al. 2012);
- :func:`shifted_branin` — 9 translated (and negated) Branin–Hoo functions on a grid;
- :func:`sensor_substitute` — a **substitute** for the Intel Berkeley lab sensors (not
  obtainable here): soil pH, conductivity and chloride along a real transect (MASS ``gilgais``).

Beyond the paper, for constrained optimisation: :func:`c2_dtlz2` (and :func:`dtlz2`), plain
functions of x (:mod:`.constrained`).

``PROBLEMS`` maps names to constructors and :func:`make_problem` builds one by name. Regret
metrics live in :mod:`manytask.bo.metrics`; the optimisers in the rest of :mod:`manytask.bo`.
"""

from __future__ import annotations

from ._base import Problem
from .constrained import c2_dtlz2, dtlz2
from .sensor import sensor_substitute
from .synthetic import (
    NOISE_VARIANCE,
    PERTURBATION_CENTRES,
    PERTURBATION_WEIGHTS,
    PERTURBATION_WIDTH,
    branin,
    perturbed_sine,
    perturbed_sine_values,
    rkhs_function,
    shifted_branin,
)

__all__ = [
    "Problem",
    "rkhs_function",
    "perturbed_sine",
    "perturbed_sine_values",
    "shifted_branin",
    "branin",
    "sensor_substitute",
    "dtlz2",
    "c2_dtlz2",
    "PROBLEMS",
    "make_problem",
    "PERTURBATION_CENTRES",
    "PERTURBATION_WIDTH",
    "PERTURBATION_WEIGHTS",
    "NOISE_VARIANCE",
]


PROBLEMS = {
    "rkhs_function": rkhs_function,
    "perturbed_sine": perturbed_sine,
    "shifted_branin": shifted_branin,
    "sensor_substitute": sensor_substitute,
}


def make_problem(name: str, **kwargs) -> Problem:
    """Build a problem by name, passing ``kwargs`` to its constructor.

    Parameters
    ----------
    name : str
        A key of ``PROBLEMS``: ``"rkhs_function"``, ``"perturbed_sine"``,
        ``"shifted_branin"`` or ``"sensor_substitute"``.
    **kwargs
        Keyword arguments of that constructor.

    Returns
    -------
    problem : Problem

    Examples
    --------
    >>> make_problem("rkhs_function", n_tasks=3).n_tasks
    3
    """
    if name not in PROBLEMS:
        valid = ", ".join(sorted(PROBLEMS))
        raise ValueError(f"problem must be one of {valid}, got {name!r}")
    return PROBLEMS[name](**kwargs)
