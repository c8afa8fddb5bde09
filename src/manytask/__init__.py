"""manytask: learn and optimise many related tasks at once.

Submodules: :mod:`manytask.kernels` (scalar, task and operator-valued kernels),
:mod:`manytask.linalg` (factorisations), :mod:`manytask.posterior` (multi-task posteriors).
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
