"""Multi-task Bayesian optimisation (``multitask-bayesian-optimization.txt``).

:class:`MultiTaskBO` is the ask/tell optimiser (MT-KB, MT-BKB and the baselines IT-KB,
IT-BKB, MOBO); :func:`run` the evaluation loop; :mod:`.problems` the paper's test problems;
:mod:`.metrics` regret, Pareto front and hypervolume.
"""

from . import metrics, problems
from .loop import RunResult, run
from .optimizer import MultiTaskBO
from .policies import ALGORITHMS, Policy
from .scalarization import AugmentedChebyshev, Chebyshev, Hypervolume, Linear, Scalarization

__all__ = [
    "ALGORITHMS",
    "Chebyshev",
    "AugmentedChebyshev",
    "Hypervolume",
    "Linear",
    "MultiTaskBO",
    "Policy",
    "RunResult",
    "Scalarization",
    "metrics",
    "problems",
    "run",
]
