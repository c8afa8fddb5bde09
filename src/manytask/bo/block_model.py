"""Block models: the tasks split into blocks, each fitted alone and all used as one multi-task
kernel Γ = Σ_b k_b ⊗ B̃_b (the constraints beside the objectives, :mod:`.constraints`; one GP
per objective with ``objective_model="independent"``).

A block of several tasks is an ICM (:func:`~manytask.bo.kernel_learning.fit_icm_kernel`);
the one-task blocks are fitted together (:func:`~manytask.bo.one_task_gps.fit_one_task_gps`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validation import check_random_state
from .kernel_learning import _check_data, fit_icm_kernel
from .one_task_gps import fit_one_task_gps

__all__ = ["BlockFit", "fit_block_kernels"]


class BlockFit(NamedTuple):
    """Blocks of tasks fitted alone (each an ICM, one task a single GP), as one multi-task
    kernel Γ = Σ_b k_b ⊗ B̃_b for the outputs rescaled to one noise variance η.

    Parameters
    ----------
    blocks : list of list of int
        The tasks (columns of Y) of every block.
    fits : list of ICMFit
        Every block's fit: ARD lengthscales of k_b, task matrix B_b and noise η_b.
    noise : float
        η, the noise variance of every rescaled output (the first block's η).
    rescale : ndarray of shape (n,)
        a_i = √(η/η_b) for task i of block b: the kernel models a_i ŷ_i, whose noise is η.

    Examples
    --------
    >>> X = np.linspace(0, 1, 12)[:, None]
    >>> Y = np.c_[np.sin(4 * X[:, 0]), X[:, 0], np.cos(3 * X[:, 0])]
    >>> fit = fit_block_kernels(X, (Y - Y.mean(0)) / Y.std(0), [[0, 1], [2]], n_restarts=1)
    >>> [B.shape for _, B in fit.terms], float(fit.rescale[0])
    ([(3, 3), (3, 3)], 1.0)
    """

    blocks: list
    fits: list
    noise: float
    rescale: np.ndarray

    @property
    def terms(self) -> list:
        """[(lengthscales, B̃_b)]: B̃_b is a aᵀ ∘ B_b = (η/η_b) B_b on block b's tasks, 0
        elsewhere.

        Examples
        --------
        >>> X = np.linspace(0, 1, 12)[:, None]
        >>> Y = np.c_[np.sin(4 * X[:, 0]), X[:, 0]]
        >>> fit = fit_block_kernels(X, (Y - Y.mean(0)) / Y.std(0), [[1], [0]], n_restarts=1)
        >>> B = fit.terms[1][1]
        >>> bool(B[1, 1] == 0 and B[0, 0] == fit.fits[1].B[0, 0] * fit.rescale[0] ** 2)
        True
        """
        terms = []
        for tasks, fit in zip(self.blocks, self.fits):
            B = np.zeros((len(self.rescale), len(self.rescale)))
            a = self.rescale[tasks]
            B[np.ix_(tasks, tasks)] = fit.B * np.outer(a, a)
            terms.append((fit.lengthscales, B))
        return terms

    @property
    def mean(self) -> np.ndarray:
        """The constant mean c_i of every task (before the rescaling; 0 for a block fitted
        with a zero mean).

        Examples
        --------
        >>> X = np.linspace(0, 1, 12)[:, None]
        >>> Y = np.c_[np.sin(4 * X[:, 0]), X[:, 0]]
        >>> fit_block_kernels(X, Y - Y.mean(0), [[0], [1]], n_restarts=1).mean
        array([0., 0.])
        """
        means = np.zeros(len(self.rescale))
        for tasks, fit in zip(self.blocks, self.fits):
            if fit.mean is not None:
                means[tasks] = fit.mean
        return means


def fit_block_kernels(
    X, Y, blocks, n_restarts=3, random_state=None, init=None, prior=False, mean="zero"
):
    """Fit every block of tasks (columns of Y) alone by :func:`fit_icm_kernel`: its own
    lengthscales, task matrix and noise. The one-task blocks are fitted together
    (:func:`~manytask.bo.one_task_gps.fit_one_task_gps`, the same maxima), after the others.

    The blocks are independent, so the joint log marginal likelihood is the sum of theirs
    and each is maximised alone. One noise η for the posterior comes from rescaling every
    standardised output of block b by a = √(η/η_b), which scales its block of the Gram
    matrix and its noise by η/η_b: the posterior of the rescaled outputs, divided by a, is
    block b's own posterior, and a > 0 leaves the sign of every output unchanged.

    Parameters
    ----------
    X : array-like of shape (t, d)
        Inputs, normalised to the unit cube.
    Y : array-like of shape (t, n)
        Observations, standardised per task.
    blocks : list of list of int
        A partition of the n tasks; the fits run from one random stream, the multi-task blocks
        in this order, then the one-task blocks with a prior, then those without.
    n_restarts : int
        Starts of every block's fit (:func:`fit_icm_kernel`).
    random_state : None, int or numpy Generator
        Seeds the random starts.
    init : BlockFit, optional
        A previous fit with the same blocks: every block warm-starts from its own.
    prior : bool or sequence of bool
        MAP under BoTorch's priors instead of maximum likelihood (:func:`fit_icm_kernel`),
        for every block or per block.
    mean : {"zero", "constant"}
        Every block's mean (:func:`fit_icm_kernel`).

    Returns
    -------
    BlockFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(30, 2))
    >>> Y = np.c_[np.sin(6 * X[:, 0]), np.cos(6 * X[:, 1])] + 0.05 * rng.normal(size=(30, 2))
    >>> fit = fit_block_kernels(X, (Y - Y.mean(0)) / Y.std(0), [[0], [1]], random_state=0)
    >>> [bool(f.lengthscales[i] < f.lengthscales[1 - i]) for i, f in enumerate(fit.fits)]
    [True, True]
    """
    X, Y = _check_data(X, Y)
    blocks = [list(tasks) for tasks in blocks]
    flat = sorted(i for tasks in blocks for i in tasks)
    if flat != list(range(Y.shape[1])) or not all(blocks):
        raise ValueError(
            f"blocks must split the {Y.shape[1]} tasks 0, …, {Y.shape[1] - 1} into non-empty "
            f"lists, each task in one, got {blocks!r}"
        )
    priors = [prior] * len(blocks) if isinstance(prior, bool) else list(prior)
    if len(priors) != len(blocks):
        raise ValueError(f"prior must be a bool or one per block ({len(blocks)}), got {prior!r}")
    rng = check_random_state(random_state)
    fits = [None] * len(blocks)
    for b, tasks in enumerate(blocks):  # the multi-task blocks, one ICM each
        if len(tasks) > 1:
            fits[b] = fit_icm_kernel(
                X, Y[:, tasks], n_restarts=n_restarts, random_state=rng,
                init=None if init is None else init.fits[b], prior=priors[b], mean=mean,
            )  # fmt: skip
    for with_prior in (True, False):  # the one-task blocks of each prior, fitted together
        singles = [
            b for b, tasks in enumerate(blocks) if len(tasks) == 1 and priors[b] == with_prior
        ]
        if singles:
            columns = [blocks[b][0] for b in singles]
            previous = None if init is None else [init.fits[b] for b in singles]
            single_fits = fit_one_task_gps(
                X, Y[:, columns], n_restarts, rng, previous, with_prior, mean
            )
            for b, fit in zip(singles, single_fits):
                fits[b] = fit
    noise = fits[0].noise
    rescale = np.empty(Y.shape[1])
    for tasks, fit in zip(blocks, fits):
        rescale[tasks] = np.sqrt(noise / fit.noise)
    return BlockFit(blocks, fits, noise, rescale)
