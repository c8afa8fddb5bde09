"""Operator-valued (multi-task) kernels Γ(x, x') ∈ R^{n×n}, and how they split.

``Separable(k, B)`` is Γ = k(x, x') B (the ICM kernel), ``Diagonal([k_1, …, k_n])`` treats
each task alone, ``SumOfSeparable([(k_1, B_1), …])`` is Σ_j k_j B_j, which in general does
not split. Gram matrices are sample-major: rows i·n … i·n + n − 1 belong to X[i].

Each kernel also says how a posterior can be computed as independent problems
(:class:`Decomposition`): for Separable, rotate the outputs by the eigenvectors of B and
solve one scalar problem per eigenvalue (``multitask-bayesian-optimization.txt``,
Appendix A); for Diagonal, one scalar problem per task; for a SumOfSeparable whose B_j act
on disjoint sets of tasks, the Separable split of every term; otherwise one problem with n
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

    Parameters
    ----------
    rotation : ndarray of shape (n, batch·block)
        R, with orthonormal columns.
    kernels : tuple of Kernel or OperatorKernel
        The distinct kernels of the problems.
    groups : ndarray of int, shape (batch,)
        Index into ``kernels`` of every problem.
    scales : ndarray of shape (batch,)
        Factor of every problem's kernel (an eigenvalue of B for a separable kernel).
    block : int
        Outputs per point of every problem.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.kernels import RBF
    >>> d = Separable(RBF(0.2), [[2.0, 1.0], [1.0, 2.0]]).decompose()
    >>> d.batch, d.block, d.scales.round(6)  # the eigenvalues of B
    (2, 1, array([1., 3.]))
    """

    rotation: np.ndarray
    kernels: tuple
    groups: np.ndarray
    scales: np.ndarray
    block: int

    @property
    def batch(self) -> int:
        """Number of independent problems.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> Diagonal([RBF(0.1), RBF(0.3), RBF(0.3)]).decompose().batch
        3
        """
        return len(self.groups)

    def _group_blocks(self, X, Y, g):
        kernel = self.kernels[g]
        return kernel(X, Y) if self.block == 1 else kernel.gram(X, Y)

    def gram(self, X, Y) -> np.ndarray:
        """Gram matrices of every problem.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.
        Y : array_like of shape (M, d)
            Points x'.

        Returns
        -------
        ndarray of shape (batch, N·block, M·block)
            ``scales[β] · kernels[groups[β]](X, Y)`` for every problem β.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> d = Separable(RBF(0.2), np.eye(3)).decompose()
        >>> d.gram(np.zeros((4, 1)), np.zeros((5, 1))).shape
        (3, 4, 5)
        """
        per_group = [self._group_blocks(X, Y, g) for g in range(len(self.kernels))]
        return np.stack([s * per_group[g] for g, s in zip(self.groups, self.scales)])

    def group_gram(self, X, Y, g) -> np.ndarray:
        """Unscaled Gram matrix of group g (shared by every problem of the group).

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.
        Y : array_like of shape (M, d)
            Points x'.
        g : int
            Index into ``kernels``.

        Returns
        -------
        ndarray of shape (N·block, M·block)
            ``kernels[g](X, Y)``.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> d = Separable(RBF(0.2), np.eye(3)).decompose()
        >>> d.group_gram(np.zeros((4, 1)), np.zeros((5, 1)), 0).shape
        (4, 5)
        """
        return self._group_blocks(X, Y, g)

    def prior_blocks(self, X) -> np.ndarray:
        """Γ(x, x) of every problem, its prior covariance at each point.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.

        Returns
        -------
        ndarray of shape (batch, N, block, block)
            Prior covariance of every problem at every row of X.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> d = Separable(RBF(0.2), np.diag([1.0, 4.0])).decompose()
        >>> d.prior_blocks(np.zeros((1, 1))).ravel()
        array([1., 4.])
        """
        per_group = []
        for kernel in self.kernels:
            if self.block == 1:
                per_group.append(kernel.diag(X)[:, None, None])
            else:
                per_group.append(kernel.diag_blocks(X))
        return np.stack([s * per_group[g] for g, s in zip(self.groups, self.scales)])


class OperatorKernel:
    """Base class: ``n_tasks``, ``gram(X, Y)`` and ``diag_blocks(X)``.

    Examples
    --------
    >>> from manytask.kernels import RBF
    >>> isinstance(Separable(RBF(0.2), [[1.0]]), OperatorKernel)
    True
    """

    n_tasks: int

    def gram(self, X, Y=None) -> np.ndarray:
        """The sample-major Gram matrix: block (i, j) is Γ(X[i], Y[j]).

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.
        Y : array_like of shape (M, d), optional
            Points x'; default X.

        Returns
        -------
        ndarray of shape (N·n, M·n)
            Rows i·n … i·n + n − 1 belong to X[i].

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> Separable(RBF(0.2), np.eye(2)).gram(np.zeros((3, 1))).shape
        (6, 6)
        """
        raise NotImplementedError

    def diag_blocks(self, X) -> np.ndarray:
        """Γ(x, x) for every row of X, without the off-diagonal blocks of the Gram matrix.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.

        Returns
        -------
        ndarray of shape (N, n, n)
            Γ(X[i], X[i]) for every i.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> Separable(RBF(0.2), np.eye(2)).diag_blocks(np.zeros((3, 1))).shape
        (3, 2, 2)
        """
        raise NotImplementedError

    def full_decomposition(self) -> Decomposition:
        """The trivial split: one problem with n outputs per point.

        Returns
        -------
        Decomposition
            One problem (``batch == 1``), ``block == n_tasks``, identity rotation.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> d = Separable(RBF(0.2), np.eye(3)).full_decomposition()
        >>> d.batch, d.block
        (1, 3)
        """
        return Decomposition(
            rotation=np.eye(self.n_tasks),
            kernels=(self,),
            groups=np.zeros(1, dtype=int),
            scales=np.ones(1),
            block=self.n_tasks,
        )

    def decompose(self) -> Decomposition:
        """The cheapest exact split into independent problems (the trivial one here).

        Returns
        -------
        Decomposition
            For a kernel without structure, :meth:`full_decomposition`.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> G = SumOfSeparable([(RBF(0.1), np.eye(2)), (RBF(1.0), np.ones((2, 2)))])
        >>> G.decompose().block
        2
        """
        return self.full_decomposition()


def _check_scalar_kernel(k, name):
    if not isinstance(k, Kernel):
        raise ValueError(f"{name} must be a manytask scalar Kernel, got {type(k).__name__}")
    return k


class Separable(OperatorKernel):
    """Γ(x, x') = k(x, x') B: the separable / ICM kernel (§2).

    Parameters
    ----------
    kernel : Kernel
        Scalar kernel k.
    B : array_like of shape (n, n)
        Task matrix, symmetric PSD (checked by :func:`check_task_matrix`).

    Examples
    --------
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
        """The task matrix, read-only (build a new kernel to change it).

        Examples
        --------
        >>> from manytask.kernels import RBF, uniform_task_similarity
        >>> G = Separable(RBF(0.2), uniform_task_similarity(2, 0.4))
        >>> G.B.shape, G.B.flags.writeable
        ((2, 2), False)
        """
        return self._B

    def __repr__(self):
        return f"Separable({self.kernel!r}, B with n_tasks={self.n_tasks})"

    def gram(self, X, Y=None):
        """k(X, Y) ⊗ B, the sample-major Gram matrix.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.
        Y : array_like of shape (M, d), optional
            Points x'; default X.

        Returns
        -------
        ndarray of shape (N·n, M·n)
            Block (i, j) is k(X[i], Y[j]) B.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import Constant
        >>> Separable(Constant(2.0), [[1.0, 0.5], [0.5, 1.0]]).gram(np.zeros((1, 1)))
        array([[2., 1.],
               [1., 2.]])
        """
        return np.kron(self.kernel(X, Y), self.B)

    def diag_blocks(self, X):
        """k(x, x) B for every row of X.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.

        Returns
        -------
        ndarray of shape (N, n, n)
            Γ(X[i], X[i]).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> Separable(RBF(0.2), np.eye(2)).diag_blocks(np.zeros((1, 1)))[0]
        array([[1., 0.],
               [0., 1.]])
        """
        return self.kernel.diag(X)[:, None, None] * self.B

    def decompose(self):
        """One scalar problem ξ_i k per positive eigenvalue ξ_i of B (Appendix A, eq. 3–6).

        Returns
        -------
        Decomposition
            ``rotation`` the eigenvectors of B with eigenvalue > 1e-12 times the largest,
            ``scales`` those eigenvalues, ``block == 1``.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> Separable(RBF(0.2), [[1.0, 1.0], [1.0, 1.0]]).decompose().batch  # rank 1
        1
        """
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

    Parameters
    ----------
    kernels : sequence of Kernel
        k_1, …, k_n, one scalar kernel per task (at least one).

    Examples
    --------
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
        """The sample-major Gram matrix, zero between different tasks.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.
        Y : array_like of shape (M, d), optional
            Points x'; default X.

        Returns
        -------
        ndarray of shape (N·n, M·n)
            Block (i, j) is diag(k_1(X[i], Y[j]), …, k_n(X[i], Y[j])).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import Constant
        >>> Diagonal([Constant(1.0), Constant(3.0)]).gram(np.zeros((1, 1)))
        array([[1., 0.],
               [0., 3.]])
        """
        blocks = [k(X, Y) for k in self.kernels]
        N, M, n = blocks[0].shape[0], blocks[0].shape[1], self.n_tasks
        full = np.zeros((N, n, M, n))
        for a, block in enumerate(blocks):
            full[:, a, :, a] = block
        return full.reshape(N * n, M * n)

    def diag_blocks(self, X):
        """diag(k_1(x, x), …, k_n(x, x)) for every row of X.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.

        Returns
        -------
        ndarray of shape (N, n, n)
            Γ(X[i], X[i]).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import Constant
        >>> Diagonal([Constant(1.0), Constant(3.0)]).diag_blocks(np.zeros((2, 1))).shape
        (2, 2, 2)
        """
        diagonals = np.stack([k.diag(X) for k in self.kernels], axis=1)  # (N, n)
        return diagonals[:, :, None] * np.eye(self.n_tasks)

    def decompose(self):
        """One scalar problem per task; tasks that share a kernel object share its Gram.

        Returns
        -------
        Decomposition
            Identity rotation, ``block == 1``, one group per distinct kernel object.

        Examples
        --------
        >>> from manytask.kernels import RBF
        >>> k = RBF(0.3)
        >>> d = Diagonal([k, k, RBF(0.1)]).decompose()
        >>> d.groups, len(d.kernels)
        (array([0, 0, 1]), 2)
        """
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

    Parameters
    ----------
    terms : iterable of (Kernel, array_like of shape (n, n))
        The pairs (k_j, B_j), at least one, every B_j of the same size.

    Examples
    --------
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
        """Σ_j k_j(X, Y) ⊗ B_j, the sample-major Gram matrix.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.
        Y : array_like of shape (M, d), optional
            Points x'; default X.

        Returns
        -------
        ndarray of shape (N·n, M·n)
            Block (i, j) is Γ(X[i], Y[j]).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import Constant
        >>> G = SumOfSeparable([(Constant(1.0), np.eye(2)), (Constant(1.0), np.ones((2, 2)))])
        >>> G.gram(np.zeros((1, 1)))
        array([[2., 1.],
               [1., 2.]])
        """
        return sum(term.gram(X, Y) for term in self.terms)

    def diag_blocks(self, X):
        """Σ_j k_j(x, x) B_j for every row of X.

        Parameters
        ----------
        X : array_like of shape (N, d)
            Points x.

        Returns
        -------
        ndarray of shape (N, n, n)
            Γ(X[i], X[i]).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> G = SumOfSeparable([(RBF(0.1), np.eye(2)), (RBF(1.0), np.eye(2))])
        >>> G.diag_blocks(np.zeros((3, 1))).shape
        (3, 2, 2)
        """
        return sum(term.diag_blocks(X) for term in self.terms)

    def decompose(self):
        """One scalar problem per positive eigenvalue of every B_j when the B_j act on
        disjoint sets of tasks (each task in the rows of one B_j at most: blocks of tasks,
        each with its own kernel, as a learned kernel's block model); otherwise the full
        problem. With disjoint supports Γ = Σ_j k_j U_j diag(ξ_j) U_jᵀ, and the eigenvectors
        of different B_j, zero outside their own tasks, are orthogonal: the split of
        :meth:`Separable.decompose` for every term, side by side.

        Returns
        -------
        Decomposition
            ``rotation`` the eigenvectors of every B_j (restricted to its tasks, exactly zero
            elsewhere) with eigenvalue > 1e-12 times B_j's largest, ``groups`` the term of
            every problem (terms with B_j = 0 left out), ``block == 1``; or
            :meth:`full_decomposition`.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF
        >>> blocks = [(RBF(0.1), np.diag([1.0, 0.0])), (RBF(1.0), np.diag([0.0, 2.0]))]
        >>> d = SumOfSeparable(blocks).decompose()
        >>> d.block, d.groups, d.scales
        (1, array([0, 1]), array([1., 2.]))
        >>> SumOfSeparable([(RBF(0.1), np.eye(2)), (RBF(1.0), np.eye(2))]).decompose().block
        2
        """
        supports = [np.flatnonzero(np.any(term.B != 0, axis=1)) for term in self.terms]
        covered = np.concatenate(supports)
        if len(np.unique(covered)) != len(covered):  # a task shared by two terms
            return self.full_decomposition()
        columns, kernels, groups, scales = [], [], [], []
        for term, tasks in zip(self.terms, supports):
            if len(tasks) == 0:  # B_j = 0: no problem
                continue
            values, vectors = np.linalg.eigh(term.B[np.ix_(tasks, tasks)])
            active = values > 1e-12 * values[-1]
            embedded = np.zeros((self.n_tasks, int(active.sum())))
            embedded[tasks] = vectors[:, active]
            columns.append(embedded)
            groups += [len(kernels)] * int(active.sum())
            kernels.append(term.kernel)
            scales.append(values[active])
        if not kernels:  # Γ = 0
            return self.full_decomposition()
        return Decomposition(
            rotation=np.hstack(columns),
            kernels=tuple(kernels),
            groups=np.array(groups, dtype=int),
            scales=np.concatenate(scales),
            block=1,
        )


def diagonal_part(kernel: OperatorKernel) -> OperatorKernel:
    """diag(Γ(x, x')): the same marginal kernel per task, without the correlation between
    tasks (the kernel of the independent baselines IT-KB, IT-BKB and MOBO).

    Parameters
    ----------
    kernel : Separable, Diagonal or SumOfSeparable
        The multi-task kernel Γ.

    Returns
    -------
    Separable or Diagonal
        Separable(k, diag(B)) for a separable Γ; Γ itself for a diagonal one;
        Diagonal([Σ_j B_j[i, i] k_j for each task i]) for a sum of separable kernels.

    Examples
    --------
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
