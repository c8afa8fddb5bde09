"""Incremental kernel ridge regression for a batch of independent problems.

This is where the posterior of ``multitask-bayesian-optimization.txt`` §3.1 is computed:
μ_t(x) = G_t(x)ᵀ(G_t + ηI)⁻¹Y_t and Γ_t(x, x) = Γ(x, x) − G_t(x)ᵀ(G_t + ηI)⁻¹G_t(x),
for ``batch`` problems that share their inputs and have ``block`` outputs per point (see
:class:`manytask.kernels.Decomposition`). With L Lᵀ = G_t + ηI, w = L⁻¹Y_t and
V = L⁻¹G_t(C) over a fixed candidate set C,

    μ_t(C) = Vᵀw,     Γ_t(C, C) = Γ(C, C) − VᵀV (block diagonal part).

A new observation appends one block row to L, to w and to V (a bordered Cholesky
factorisation), so a round costs O(batch·block²·t·N) over N candidates, not a refit.

Heterotopic data (an output not observed at some x) use a 0/1 mask m over the rows of G_t:
the row and column of an unobserved entry are set to zero and its target to 0, so G_t + ηI
keeps η on that diagonal entry and nothing else. That entry then decouples from the others:
L⁻¹ leaves it alone, the posterior is that of the observed entries only (the dense GP on
them), and its factor √η adds log η − log η = 0 to log det(I + G_t/η).
"""

from __future__ import annotations

import numpy as np

from ..linalg import cholesky, solve_lower

__all__ = ["IncrementalRidge", "block_gram"]


def _solve_small(D, B):
    """D⁻¹B for lower-triangular blocks D of shape (b, p, p); B of shape (b, p, k)."""
    if D.shape[-1] == 1:
        return B / D
    return solve_lower(D, B)


def block_gram(A, block):
    """Diagonal blocks of AᵀA, the VᵀV term of Γ_t(C, C) per problem.

    Parameters
    ----------
    A : ndarray of shape (b, r, N·p)
        A stack of b matrices whose columns come in N groups of p.
    block : int
        p.

    Returns
    -------
    ndarray of shape (b, N, p, p)
        The (p, p) diagonal blocks of AᵀA.

    Examples
    --------
    >>> A = np.arange(8.0).reshape(1, 2, 4)
    >>> block_gram(A, 2)[0, 1]  # columns 2 and 3: [[2, 6], [3, 7]]
    array([[40., 48.],
           [48., 58.]])
    """
    b, r, width = A.shape
    A = A.reshape(b, r, width // block, block)
    if block == 1:
        return np.einsum("brn,brn->bn", A[..., 0], A[..., 0])[..., None, None]
    return np.einsum("brna,brnc->bnac", A, A)


class IncrementalRidge:
    """``batch`` kernel ridge problems on shared inputs, grown one observation at a time.

    Parameters
    ----------
    decomposition : Decomposition
        Kernels of the problems (their Gram matrices and prior blocks).
    noise : float
        The ridge η > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.kernels import RBF, Separable
    >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
    >>> ridge.fit(np.zeros((1, 1)), np.ones((1, 2, 1))).n_observations
    1
    """

    def __init__(self, decomposition, noise: float):
        self.decomposition = decomposition
        self.noise = noise
        self.batch, self.block = decomposition.batch, decomposition.block
        self.n_observations = 0
        self.log_dets = np.zeros(self.batch)  # log det(I + G_t/η) of every problem
        self.candidates = None
        self._capacity = 0
        self._X = None
        self.partial = False  # True once some entry is unobserved (masks are applied)

    # ---- storage -------------------------------------------------------------------------
    def _reserve(self, n_points: int, n_features: int):
        """Grow the buffers (doubling) so that they hold ``n_points`` observations."""
        if n_points <= self._capacity:
            return
        capacity = max(n_points, self._capacity + self._capacity // 4, 16)  # grow by 25 %
        b, p, t = self.batch, self.block, self.n_observations
        size = capacity * p

        def grown(old, shape):
            new = np.zeros(shape)
            if old is not None and t:
                new[tuple(slice(0, s) for s in old.shape)] = old
            return new

        keep = t * p
        self._X = grown(self._X[:t] if t else None, (capacity, n_features))
        self._L = grown(self._L[:, :keep, :keep] if t else None, (b, size, size))
        self._w = grown(self._w[:, :keep] if t else None, (b, size))
        self._m = grown(self._m[:, :keep] if t else None, (b, size))
        if self.candidates is not None:
            width = len(self.candidates) * p
            self._V = grown(self._V[:, :keep] if t else None, (b, size, width))
        self._capacity = capacity

    @property
    def log_det(self) -> float:
        """Σ over problems of log det(I + G_t/η).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> round(ridge.fit(np.zeros((1, 1)), np.ones((1, 2, 1))).log_det, 6)  # 2 log 11
        4.795791
        """
        return float(np.sum(self.log_dets))

    def snapshot(self):
        """What :meth:`restore` needs to undo later ``add`` calls (O(batch·N) copies).

        Returns
        -------
        tuple
            An opaque token for :meth:`restore`.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> token = ridge.fit(np.zeros((1, 1)), np.ones((1, 2, 1))).snapshot()
        >>> ridge.add(np.ones(1), np.ones((2, 1))).n_observations
        2
        >>> ridge.restore(token)
        >>> ridge.n_observations
        1
        """
        cache = None
        if self.candidates is not None:
            cache = (self._candidate_mean.copy(), self._candidate_cov.copy())
        return (self.n_observations, self.log_dets.copy(), cache, self.partial)

    def restore(self, snapshot):
        """Forget the observations added since ``snapshot`` (rows past it are ignored).

        Parameters
        ----------
        snapshot : tuple
            What :meth:`snapshot` returned.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> token = ridge.snapshot()
        >>> ridge.restore(token)
        >>> ridge.n_observations
        0
        """
        self.n_observations, log_dets, cache, self.partial = snapshot
        self.log_dets = log_dets.copy()
        if cache is not None:
            self._candidate_mean, self._candidate_cov = cache[0].copy(), cache[1].copy()

    @property
    def X(self):
        """The inputs x_1 … x_t, shape (t, d).

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> ridge.fit(np.zeros((3, 1)), np.ones((3, 2, 1))).X.shape
        (3, 1)
        """
        return self._X[: self.n_observations]

    # ---- fitting -------------------------------------------------------------------------
    def fit(self, X, Z, candidates=None, mask=None):
        """Factorise G_t + ηI for inputs X and problem outputs Z.

        Parameters
        ----------
        X : ndarray of shape (t, d)
            Inputs.
        Z : ndarray of shape (t, batch, block)
            Outputs in problem coordinates.
        candidates : ndarray of shape (N, d), optional
            Points whose posterior is cached and updated by :meth:`add`.
        mask : ndarray of bool, shape (t, batch, block), optional
            The observed entries (None: all).

        Returns
        -------
        IncrementalRidge
            self.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> ridge.fit(np.zeros((2, 1)), np.ones((2, 2, 1))) is ridge
        True
        """
        t, d = X.shape
        b, p = self.batch, self.block
        self.candidates = candidates
        self._capacity, self._X = 0, None
        self.n_observations = 0
        self._reserve(t + max(16, t // 4), d)  # room for later `add`s without a copy
        self._X[:t] = X
        self.n_observations = t
        tp = t * p
        self.partial = mask is not None and not np.all(mask)
        masks = np.ones((b, tp))
        if self.partial:
            masks = np.asarray(mask, dtype=float).transpose(1, 0, 2).reshape(b, tp)
        self._m[:, :tp] = masks
        d = self.decomposition
        if t:  # one problem at a time: the stacked Gram matrices would double peak memory
            grams = [d.group_gram(X, X, g) for g in range(len(d.kernels))]
            outputs = Z.transpose(1, 0, 2).reshape(b, tp) * masks
            ridge = self.noise * np.eye(tp)
            for beta, (g, scale) in enumerate(zip(d.groups, d.scales)):
                gram = scale * grams[g]
                if self.partial:
                    gram = gram * np.outer(masks[beta], masks[beta])
                L = cholesky(gram + ridge, name="G_t + ηI")
                self._L[beta, :tp, :tp] = L
                self._w[beta, :tp] = solve_lower(L, outputs[beta])
            diagonals = np.diagonal(self._L[:, :tp, :tp], axis1=1, axis2=2)
            self.log_dets = np.sum(2.0 * np.log(diagonals), axis=1) - tp * np.log(self.noise)
        else:
            self.log_dets = np.zeros(b)
        if candidates is not None:
            prior = d.prior_blocks(candidates)
            self._candidate_mean = np.zeros((b, len(candidates) * p))
            self._candidate_cov = prior
            if t:
                cross = [d.group_gram(X, candidates, g) for g in range(len(d.kernels))]
                for beta, (g, scale) in enumerate(zip(d.groups, d.scales)):
                    rows = scale * cross[g]
                    if self.partial:
                        rows = rows * masks[beta][:, None]
                    self._V[beta, :tp] = solve_lower(self._L[beta, :tp, :tp], rows)
                V = self._V[:, :tp]
                self._candidate_mean = np.einsum("brn,br->bn", V, self._w[:, :tp])
                self._candidate_cov = prior - block_gram(V, p)
        return self

    def add(self, x, z, candidate_index=None, mask=None):
        """Append one observation: x (d,), z (batch, block). O(batch·block²·t·N) with a cache.

        ``candidate_index`` (x = candidates[j]) lets the cached column L⁻¹G_t(x) = V[:, j]
        replace a triangular solve.

        Parameters
        ----------
        x : ndarray of shape (d,)
            Input.
        z : ndarray of shape (batch, block)
            Outputs in problem coordinates.
        candidate_index : int, optional
            j with x = candidates[j], if there is one.
        mask : ndarray of bool, shape (batch, block), optional
            The observed entries (None: all).

        Returns
        -------
        IncrementalRidge
            self.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> ridge.add(np.zeros(1), np.ones((2, 1))).n_observations
        1
        """
        t, b, p = self.n_observations, self.batch, self.block
        self._reserve(t + 1, len(x))
        tp = t * p
        x2 = x[None, :]
        decomposition = self.decomposition
        new_mask = np.ones((b, p)) if mask is None else np.asarray(mask, dtype=float)
        partial = not np.all(new_mask)
        self.partial = self.partial or partial
        if candidate_index is not None and t:
            columns = slice(candidate_index * p, (candidate_index + 1) * p)
            # L⁻¹ G_t(x), already cached; contiguous so that the products below use BLAS
            cross = np.ascontiguousarray(self._V[:, :tp, columns])
        elif t:
            cross = self._whitened_gram(x2)
        else:
            cross = np.zeros((b, 0, p))
        block = decomposition.prior_blocks(x2)[:, 0]
        if partial:  # unobserved entries of x: zero columns, and η alone on the diagonal
            cross = cross * new_mask[:, None, :]
            block = block * (new_mask[:, :, None] * new_mask[:, None, :])
            z = z * new_mask
        cross_t = np.ascontiguousarray(cross.transpose(0, 2, 1))  # (b, p, tp)
        block = block + self.noise * np.eye(p)  # Γ(x, x) + ηI
        D = cholesky(
            block - cross_t @ cross,
            name="Schur complement of G_t + ηI",
            scale=np.diagonal(block, axis1=1, axis2=2).mean(axis=1),
        )
        w_new = _solve_small(D, z[..., None] - cross_t @ self._w[:, :tp, None])[..., 0]
        if self.candidates is not None:
            residual = decomposition.gram(x2, self.candidates)  # (b, p, N·p)
            if partial:
                residual *= new_mask[:, :, None]
            if t:
                residual -= np.matmul(cross_t, self._V[:, :tp])
            R = _solve_small(D, residual)
            self._V[:, tp : tp + p] = R
            self._candidate_mean += np.einsum("bpn,bp->bn", R, w_new)
            self._candidate_cov -= block_gram(R, p)
        self._L[:, tp : tp + p, :tp] = cross_t
        self._L[:, tp : tp + p, tp : tp + p] = D
        self._w[:, tp : tp + p] = w_new
        self._m[:, tp : tp + p] = new_mask
        self._X[t] = x
        diagonals = np.diagonal(D, axis1=1, axis2=2)
        self.log_dets = (
            self.log_dets + np.sum(2.0 * np.log(diagonals), axis=1) - p * np.log(self.noise)
        )
        self.n_observations = t + 1
        return self

    # ---- prediction ----------------------------------------------------------------------
    def candidate_posterior(self):
        """Cached posterior over the candidate set, μ_t(C) = Vᵀw and Γ_t(C, C) = Γ(C, C) − VᵀV.

        Returns
        -------
        mean : ndarray of shape (batch, N, block)
            Posterior mean of every problem.
        cov : ndarray of shape (batch, N, block, block)
            Posterior covariance blocks of every problem.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> ridge = ridge.fit(np.zeros((1, 1)), np.ones((1, 2, 1)), candidates=np.zeros((3, 1)))
        >>> [part.shape for part in ridge.candidate_posterior()]
        [(2, 3, 1), (2, 3, 1, 1)]
        """
        b, p = self.batch, self.block
        return self._candidate_mean.reshape(b, -1, p), self._candidate_cov

    def _whitened_gram(self, X):
        """L⁻¹ G_t(X): the observed entries' kernel against X (unobserved rows zero),
        whitened by the Cholesky factor of G_t + ηI; shape (batch, t·block, N·block)."""
        tp = self.n_observations * self.block
        gram = self.decomposition.gram(self.X, X)
        if self.partial:
            gram = gram * self._m[:, :tp, None]
        return solve_lower(self._L[:, :tp, :tp], gram)

    def posterior(self, X, with_cov=True):
        """Posterior mean and covariance blocks at arbitrary inputs.

        Parameters
        ----------
        X : ndarray of shape (N, d)
            Query points.
        with_cov : bool, default=True
            False skips the covariance.

        Returns
        -------
        mean : ndarray of shape (batch, N, block)
            Posterior mean of every problem.
        cov : ndarray of shape (batch, N, block, block) or None
            Posterior covariance blocks of every problem.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> ridge = ridge.fit(np.zeros((1, 1)), np.ones((1, 2, 1)))
        >>> mean, cov = ridge.posterior(np.zeros((1, 1)))
        >>> mean.ravel().round(6)  # 1/(1 + η)
        array([0.909091, 0.909091])
        """
        b, p, t = self.batch, self.block, self.n_observations
        tp = t * p
        if t == 0:
            mean = np.zeros((b, len(X), p))
            return mean, (self.decomposition.prior_blocks(X) if with_cov else None)
        A = self._whitened_gram(X)
        mean = np.einsum("brn,br->bn", A, self._w[:, :tp]).reshape(b, len(X), p)
        if not with_cov:
            return mean, None
        return mean, self.decomposition.prior_blocks(X) - block_gram(A, p)

    def cross_cov(self, X, Z):
        """Posterior cross-covariance blocks Γ_t(X_i, Z_j) = Γ(X_i, Z_j) −
        G_t(X_i)ᵀ(G_t + ηI)⁻¹G_t(Z_j).

        Parameters
        ----------
        X : ndarray of shape (N, d) or None
            Query points; None for the candidates (their cached L⁻¹G_t(C)).
        Z : ndarray of shape (M, d)
            The second points.

        Returns
        -------
        ndarray of shape (batch, N, M, block, block)
            Block (i, j) is the covariance of f(X_i) and f(Z_j) in every problem.

        Examples
        --------
        >>> import numpy as np
        >>> from manytask.kernels import RBF, Separable
        >>> ridge = IncrementalRidge(Separable(RBF(0.3), np.eye(2)).decompose(), noise=0.1)
        >>> ridge = ridge.fit(np.zeros((1, 1)), np.ones((1, 2, 1)))
        >>> cross = ridge.cross_cov(np.zeros((1, 1)), np.zeros((1, 1)))
        >>> bool(np.allclose(cross[:, :, 0], ridge.posterior(np.zeros((1, 1)))[1]))  # Γ_t(x, x)
        True
        """
        b, p, t = self.batch, self.block, self.n_observations
        cached = X is None
        if cached:
            X = self.candidates
        N, M = len(X), len(Z)
        prior = self.decomposition.gram(X, Z).reshape(b, N, p, M, p).transpose(0, 1, 3, 2, 4)
        if t == 0:
            return prior
        tp = t * p
        A = self._V[:, :tp] if cached else self._whitened_gram(X)
        a = self._whitened_gram(Z)
        return prior - np.einsum("brna,brmc->bnmac", A.reshape(b, tp, N, p), a.reshape(b, tp, M, p))
