"""Operator-valued (multi-task) kernels Γ(x, x') ∈ R^{n×n}, and how they split.

``Separable(k, B)`` is Γ = k(x, x') B (the ICM kernel), ``Diagonal([k_1, …, k_n])`` treats
each task alone, ``SumOfSeparable([(k_1, B_1), …])`` is Σ_j k_j B_j, which in general does
not split. Gram matrices are sample-major: rows i·n … i·n + n − 1 belong to X[i].

Each kernel also says how a posterior can be computed as independent problems
(:class:`Decomposition`): for Separable, rotate the outputs by the eigenvectors of B and
solve one scalar problem per eigenvalue (``multitask-bayesian-optimization.txt``,
Appendix A); for Diagonal, one scalar problem per task; otherwise one problem with n
outputs per point. The posterior formulas themselves live in :mod:`manytask.posterior`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .scalar import Kernel
from .task import check_task_matrix

__all__ = [
    "OperatorKernel",
    "Separable",
    "Diagonal",
    "SumOfSeparable",
    "Decomposition",
    "diagonal_part",
]


@dataclass(frozen=True)
class Decomposition:
    """Γ written as ``batch`` independent problems with ``block`` outputs per point.

    Outputs y ∈ Rⁿ map to problem coordinates z = Rᵀy with R = ``rotation`` of shape
    (n, batch·block) (orthonormal columns), and back by y = R z. Problem β has the kernel
    ``scales[β] · kernels[groups[β]]``; problems in one group share a kernel, so its Gram
    matrix is computed once. A ``kernels`` entry is a scalar :class:`Kernel` when
    ``block == 1`` and an :class:`OperatorKernel` otherwise.
    """

    rotation: np.ndarray
    kernels: tuple
    groups: np.ndarray
    scales: np.ndarray
    block: int

    @property
    def batch(self) -> int:
        return len(self.groups)

    def _group_blocks(self, X, Y, g):
        kernel = self.kernels[g]
        return kernel(X, Y) if self.block == 1 else kernel.gram(X, Y)

    def gram(self, X, Y) -> np.ndarray:
        """Gram matrices of every problem, shape (batch, |X|·block, |Y|·block)."""
        per_group = [self._group_blocks(X, Y, g) for g in range(len(self.kernels))]
        return np.stack([s * per_group[g] for g, s in zip(self.groups, self.scales)])

    def group_gram(self, X, Y, g) -> np.ndarray:
        """Unscaled Gram matrix of group g, shape (|X|·block, |Y|·block)."""
        return self._group_blocks(X, Y, g)

    def prior_blocks(self, X) -> np.ndarray:
        """Γ(x, x) of every problem, shape (batch, N, block, block)."""
        per_group = []
        for kernel in self.kernels:
            if self.block == 1:
                per_group.append(kernel.diag(X)[:, None, None])
            else:
                per_group.append(kernel.diag_blocks(X))
        return np.stack([s * per_group[g] for g, s in zip(self.groups, self.scales)])


class OperatorKernel:
    """Base class: ``n_tasks``, ``gram(X, Y)`` and ``diag_blocks(X)``."""

    n_tasks: int

    def gram(self, X, Y=None) -> np.ndarray:
        """(N·n, M·n) Gram matrix; block (i, j) is Γ(X[i], Y[j])."""
        raise NotImplementedError

    def diag_blocks(self, X) -> np.ndarray:
        """Γ(x, x) for every row of X, shape (N, n, n)."""
        raise NotImplementedError

    def full_decomposition(self) -> Decomposition:
        """The trivial split: one problem with n outputs per point."""
        return Decomposition(
            rotation=np.eye(self.n_tasks),
            kernels=(self,),
            groups=np.zeros(1, dtype=int),
            scales=np.ones(1),
            block=self.n_tasks,
        )

    def decompose(self) -> Decomposition:
        """The cheapest exact split into independent problems (the trivial one here)."""
        return self.full_decomposition()


def _check_scalar_kernel(k, name):
    if not isinstance(k, Kernel):
        raise ValueError(f"{name} must be a manytask scalar Kernel, got {type(k).__name__}")
    return k


class Separable(OperatorKernel):
    """Γ(x, x') = k(x, x') B: the separable / ICM kernel (§2).

    Example
    -------
    >>> import numpy as np
    >>> from manytask.kernels import RBF, uniform_task_similarity
    >>> G = Separable(RBF(0.2), uniform_task_similarity(3, omega=0.4))
    >>> G.gram(np.zeros((2, 1))).shape
    (6, 6)
    """

    def __init__(self, kernel: Kernel, B):
        self.kernel = _check_scalar_kernel(kernel, "kernel")
        B = check_task_matrix(B)  # a new array, which nobody else holds
        B.flags.writeable = False  # validated once: B[0, 1] = 5.0 must not undo the check
        self._B = B
        self.n_tasks = B.shape[0]

    @property
    def B(self) -> np.ndarray:
        """The task matrix, read-only (build a new kernel to change it)."""
        return self._B

    def __repr__(self):
        return f"Separable({self.kernel!r}, B with n_tasks={self.n_tasks})"

    def gram(self, X, Y=None):
        return np.kron(self.kernel(X, Y), self.B)

    def diag_blocks(self, X):
        return self.kernel.diag(X)[:, None, None] * self.B

    def decompose(self):
        """One scalar problem ξ_i k per positive eigenvalue ξ_i of B (Appendix A, eq. 3–6)."""
        values, vectors = np.linalg.eigh(self.B)
        active = values > 1e-12 * values[-1]
        return Decomposition(
            rotation=vectors[:, active],
            kernels=(self.kernel,),
            groups=np.zeros(int(active.sum()), dtype=int),
            scales=values[active],
            block=1,
        )


class Diagonal(OperatorKernel):
    """Γ(x, x') = diag(k_1(x, x'), …, k_n(x, x')): every task learnt alone (Remark 1).

    Example
    -------
    >>> from manytask.kernels import RBF
    >>> Diagonal([RBF(0.1), RBF(0.3)]).n_tasks
    2
    """

    def __init__(self, kernels: Sequence[Kernel]):
        self.kernels = [_check_scalar_kernel(k, f"kernels[{i}]") for i, k in enumerate(kernels)]
        if not self.kernels:
            raise ValueError("kernels must hold at least one kernel, got an empty list")
        self.n_tasks = len(self.kernels)

    def __repr__(self):
        return f"Diagonal({self.kernels!r})"

    def gram(self, X, Y=None):
        blocks = [k(X, Y) for k in self.kernels]
        N, M, n = blocks[0].shape[0], blocks[0].shape[1], self.n_tasks
        full = np.zeros((N, n, M, n))
        for a, block in enumerate(blocks):
            full[:, a, :, a] = block
        return full.reshape(N * n, M * n)

    def diag_blocks(self, X):
        diagonals = np.stack([k.diag(X) for k in self.kernels], axis=1)  # (N, n)
        return diagonals[:, :, None] * np.eye(self.n_tasks)

    def decompose(self):
        """One scalar problem per task; tasks that share a kernel object share its Gram."""
        unique, groups = [], []
        for k in self.kernels:
            index = next((g for g, u in enumerate(unique) if u is k), None)
            if index is None:
                unique.append(k)
                index = len(unique) - 1
            groups.append(index)
        return Decomposition(
            rotation=np.eye(self.n_tasks),
            kernels=tuple(unique),
            groups=np.array(groups),
            scales=np.ones(self.n_tasks),
            block=1,
        )


class SumOfSeparable(OperatorKernel):
    """Γ(x, x') = Σ_j k_j(x, x') B_j (§2): in general no rotation makes it diagonal.

    Example
    -------
    >>> import numpy as np
    >>> from manytask.kernels import RBF
    >>> G = SumOfSeparable([(RBF(0.1), np.eye(2)), (RBF(1.0), np.ones((2, 2)))])
    >>> G.diag_blocks(np.zeros((1, 1)))[0]
    array([[2., 1.],
           [1., 2.]])
    """

    def __init__(self, terms):
        terms = list(terms)
        if not terms:
            raise ValueError("terms must hold at least one (kernel, B) pair, got none")
        self.terms = [Separable(k, B) for k, B in terms]
        sizes = {term.n_tasks for term in self.terms}
        if len(sizes) != 1:
            raise ValueError(f"every B in terms must have the same size, got sizes {sorted(sizes)}")
        self.n_tasks = sizes.pop()

    def __repr__(self):
        return f"SumOfSeparable({len(self.terms)} terms, n_tasks={self.n_tasks})"

    def gram(self, X, Y=None):
        return sum(term.gram(X, Y) for term in self.terms)

    def diag_blocks(self, X):
        return sum(term.diag_blocks(X) for term in self.terms)


def diagonal_part(kernel: OperatorKernel) -> OperatorKernel:
    """diag(Γ(x, x')): the same marginal kernel per task, without the correlation between
    tasks (the kernel of the independent baselines IT-KB, IT-BKB and MOBO).

    Example
    -------
    >>> import numpy as np
    >>> from manytask.kernels import RBF
    >>> diagonal_part(Separable(RBF(0.2), [[2.0, 1.0], [1.0, 2.0]])).B
    array([[2., 0.],
           [0., 2.]])
    """
    if isinstance(kernel, Separable):
        return Separable(kernel.kernel, np.diag(np.diag(kernel.B)))
    if isinstance(kernel, Diagonal):
        return kernel
    if isinstance(kernel, SumOfSeparable):
        per_task = []
        for i in range(kernel.n_tasks):
            parts = [float(t.B[i, i]) * t.kernel for t in kernel.terms if t.B[i, i] > 0]
            per_task.append(sum(parts[1:], parts[0]) if parts else 0.0 * kernel.terms[0].kernel)
        return Diagonal(per_task)
    raise ValueError(
        f"diagonal_part needs a Separable, Diagonal or SumOfSeparable kernel, got {kernel!r}"
    )
