"""manytask: learn and optimise many related tasks at once.

The three families:

- :mod:`manytask.bo`: multi-task Bayesian optimisation (``multitask-bayesian-optimization.txt``);
- :mod:`manytask.boost`: multi-source boosting, also federated
  (``boosting-with-multiple-sources.txt``);
- :mod:`manytask.itl`: infinite task learning (``infinite-task-learning.txt``).

What they share: :mod:`manytask.kernels` (scalar, task and operator-valued kernels),
:mod:`manytask.posterior` (multi-task posteriors), :mod:`manytask.linalg` (factorisations),
:mod:`manytask.simplex` (weights on the simplex) and :mod:`manytask.datasets` (loaders).
``manytask demo`` runs :mod:`manytask.demos`; ``manytask reproduce`` the papers' experiments.

Examples
--------
>>> import manytask as mt
>>> mt.kernels.uniform_task_similarity(2, omega=1.0)
array([[1., 0.],
       [0., 1.]])
"""

from . import bo, boost, datasets, itl, kernels, linalg, posterior, simplex

__version__ = "0.1.0"

__all__ = [
    "bo",
    "boost",
    "datasets",
    "itl",
    "kernels",
    "linalg",
    "posterior",
    "simplex",
    "__version__",
]
