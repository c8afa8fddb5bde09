"""Kernels: scalar kernels, task matrices B, and operator-valued (multi-task) kernels.

>>> import numpy as np
>>> import manytask as mt
>>> k = mt.kernels.RBF(lengthscale=0.2)
>>> G = mt.kernels.Separable(k, mt.kernels.uniform_task_similarity(3, omega=0.4))
>>> G.diag_blocks(np.zeros((4, 1))).shape
(4, 3, 3)
"""

from .config import kernel_from_config, kernel_to_config
from .operator import (
    Decomposition,
    Diagonal,
    OperatorKernel,
    Separable,
    SumOfSeparable,
    diagonal_part,
)
from .scalar import (
    RBF,
    Constant,
    ExpChi2,
    Kernel,
    Laplacian,
    Linear,
    Matern,
    Product,
    Sum,
    median_heuristic,
)
from .task import check_task_matrix, estimate_task_matrix, uniform_task_similarity

__all__ = [
    "Kernel",
    "RBF",
    "Matern",
    "Laplacian",
    "ExpChi2",
    "Linear",
    "Constant",
    "Sum",
    "Product",
    "median_heuristic",
    "check_task_matrix",
    "uniform_task_similarity",
    "estimate_task_matrix",
    "OperatorKernel",
    "Separable",
    "Diagonal",
    "SumOfSeparable",
    "Decomposition",
    "diagonal_part",
    "kernel_to_config",
    "kernel_from_config",
]
