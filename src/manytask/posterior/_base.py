"""What every multi-task posterior shares: input checks and the map between task outputs and
the independent problems of a :class:`~manytask.kernels.Decomposition`.

Outputs y ∈ Rⁿ become problem coordinates z = Rᵀy; a posterior computed per problem maps
back as μ = R μ_z and Γ = R blockdiag(Γ_z) Rᵀ. Subclasses compute the per-problem posterior.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array, as_points, check_positive
from ..kernels import Kernel, OperatorKernel, Separable

SOLVERS = ("auto", "split", "full")


def as_outputs_with_missing(value, name: str) -> np.ndarray:
    """``value`` as a float array in which NaN marks an unobserved output; ±inf is an error."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return as_finite_array(value, name)  # raises the usual message
    as_finite_array(np.where(np.isnan(array), 0.0, array), name)  # rejects ±inf
    return array


class MultiTaskPosterior:
    """Base class: subclasses implement ``_problem_posterior(X, with_cov)``."""

    allows_missing = False  # True: NaN in Y marks a task not observed at that x

    def __init__(self, kernel, noise: float, solver: str = "auto"):
        if isinstance(kernel, Kernel):  # a scalar kernel is a one-task separable kernel
            kernel = Separable(kernel, np.ones((1, 1)))
        if not isinstance(kernel, OperatorKernel):
            raise ValueError(
                f"kernel must be a manytask kernel (Separable, Diagonal, …), got {kernel!r}"
            )
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
        self.kernel = kernel
        self.noise = check_positive(noise, "noise")
        self.solver = solver
        self.n_tasks = kernel.n_tasks
        if solver == "full":
            self.decomposition = kernel.full_decomposition()
        else:
            self.decomposition = kernel.decompose()
            if solver == "split" and self.decomposition.block != 1:
                raise ValueError(
                    f"solver='split' needs a Separable or Diagonal kernel, or a SumOfSeparable "
                    f"whose task matrices act on disjoint tasks, got {kernel!r}"
                )
        self.candidates_ = None
        self.n_features_in_ = None

    @property
    def uses_split(self) -> bool:
        """True when the posterior is computed as independent scalar problems (Appendix A).

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), np.eye(2))
        >>> mt.posterior.ExactPosterior(G, 0.1).uses_split
        True
        >>> mt.posterior.ExactPosterior(G, 0.1, solver="full").uses_split
        False
        """
        return self.decomposition.block == 1

    # ---- input checks --------------------------------------------------------------------
    def _check_data(self, X, Y):
        X = as_finite_array(X, "X")
        if X.ndim == 2 and X.shape[0] == 0:
            X = X.reshape(0, X.shape[1])
        else:
            X = as_points(X, "X")
        Y = self._check_outputs(Y, "Y", len(X))
        return X, Y

    def _as_outputs(self, Y, name):
        if self.allows_missing:
            return as_outputs_with_missing(Y, name)
        return as_finite_array(Y, name)

    def _check_outputs(self, Y, name, n_rows):
        Y = self._as_outputs(Y, name)
        if Y.ndim == 1 and self.n_tasks == 1:
            Y = Y[:, None]
        if Y.ndim != 2 or Y.shape[1] != self.n_tasks:
            raise ValueError(
                f"{name} must have shape (n_samples, {self.n_tasks}) for a kernel with "
                f"n_tasks={self.n_tasks}, got shape {Y.shape}"
            )
        if Y.shape[0] != n_rows:
            raise ValueError(f"X has {n_rows} rows but {name} has {Y.shape[0]}")
        return Y

    def _check_point(self, x, y):
        x = as_finite_array(x, "x").reshape(-1)
        if self.n_features_in_ is not None and x.shape[0] != self.n_features_in_:
            raise ValueError(f"x must have {self.n_features_in_} features, got shape {x.shape}")
        y = self._as_outputs(y, "y").reshape(-1)
        if y.shape[0] != self.n_tasks:
            raise ValueError(f"y must have {self.n_tasks} values (n_tasks), got shape {y.shape}")
        return x, y

    def _check_query(self, X):
        if self.n_features_in_ is None:
            raise ValueError(f"{type(self).__name__} is not fitted yet: call fit or add first")
        return as_points(X, "X", n_features=self.n_features_in_)

    def _check_candidates(self, candidates, n_features):
        if candidates is None:
            return None
        # a copy: the caller may change their array, the cache must not change with it
        return as_points(candidates, "candidates", n_features=n_features).copy()

    # ---- coordinates ---------------------------------------------------------------------
    def _to_problems(self, Y):
        """Outputs (t, n) → problem coordinates (t, batch, block)."""
        d = self.decomposition
        return (Y @ d.rotation).reshape(len(Y), d.batch, d.block)

    def _from_problems(self, mean, cov):
        """Per-problem mean (b, N, p) and cov (b, N, p, p) → task mean (N, n), cov (N, n, n)."""
        R = self.decomposition.rotation
        N = mean.shape[1]
        out_mean = mean.transpose(1, 0, 2).reshape(N, -1) @ R.T
        if cov is None:
            return out_mean, None
        if self.uses_split:  # Σ_b R_ib R_jb var_b(x), one product with the outer products
            n = R.shape[0]
            outer = (R[:, None, :] * R[None, :, :]).reshape(n * n, -1)
            out_cov = (cov[:, :, 0, 0].T @ outer.T).reshape(N, n, n)
        else:
            out_cov = R @ cov[0] @ R.T
        return out_mean, out_cov

    # ---- public queries ------------------------------------------------------------------
    def _problem_posterior(self, X, with_cov):
        raise NotImplementedError

    def _problem_cross_cov(self, X, Z):
        raise NotImplementedError(f"{type(self).__name__} has no cross-covariance Γ_t(X, Z)")

    def _resolve_query(self, X):
        """The checked query points; the candidates themselves (their cache) for None or an
        equal copy."""
        if X is None:
            if self.candidates_ is None:
                raise ValueError("X is required: no candidates were given to fit")
            return self.candidates_
        if X is not self.candidates_:
            X = self._check_query(X)
            if self.candidates_ is not None and np.array_equal(X, self.candidates_):
                return self.candidates_  # an equal copy of the candidates uses their cache
        return X

    def _query(self, X, with_cov):
        return self._problem_posterior(self._resolve_query(X), with_cov)

    def mean(self, X=None) -> np.ndarray:
        """Posterior mean μ_t(x) = G_t(x)ᵀ(G_t + ηI)⁻¹Y_t (§3.1).

        Parameters
        ----------
        X : array_like of shape (N, d), optional
            Query points; default (None) the candidates given to ``fit``, whose posterior
            is cached.

        Returns
        -------
        ndarray of shape (N, n_tasks)
            μ_t at every query point.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), [[1.0, 0.5], [0.5, 1.0]])
        >>> X = np.linspace(0, 1, 5)[:, None]
        >>> post = mt.posterior.ExactPosterior(G, noise=0.1).fit(X, np.c_[X, -X])
        >>> post.mean([[0.5]]).shape
        (1, 2)
        """
        mean, _ = self._query(X, with_cov=False)
        return self._from_problems(mean, None)[0]

    def cov(self, X=None) -> np.ndarray:
        """Posterior covariance Γ_t(x, x) = Γ(x, x) − G_t(x)ᵀ(G_t + ηI)⁻¹G_t(x) (eq. 1).

        Parameters
        ----------
        X : array_like of shape (N, d), optional
            Query points; default (None) the candidates given to ``fit``, whose posterior
            is cached.

        Returns
        -------
        ndarray of shape (N, n_tasks, n_tasks)
            Γ_t(x, x) at every query point.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), [[1.0, 0.5], [0.5, 1.0]])
        >>> X = np.linspace(0, 1, 5)[:, None]
        >>> post = mt.posterior.ExactPosterior(G, noise=0.1).fit(X, np.c_[X, -X])
        >>> C = post.cov([[0.5], [2.0]])
        >>> C.shape, bool(np.allclose(C[1], G.B, atol=1e-3))  # far from data: the prior
        ((2, 2, 2), True)
        """
        mean, cov = self._query(X, with_cov=True)
        return self._from_problems(mean, cov)[1]

    def variance(self, X=None) -> np.ndarray:
        """Per-task posterior variances, the diagonal of Γ_t(x, x).

        Parameters
        ----------
        X : array_like of shape (N, d), optional
            Query points; default (None) the candidates given to ``fit``, whose posterior
            is cached.

        Returns
        -------
        ndarray of shape (N, n_tasks)
            Variances, clipped at 0 against rounding.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), [[1.0, 0.5], [0.5, 1.0]])
        >>> X = np.linspace(0, 1, 5)[:, None]
        >>> post = mt.posterior.ExactPosterior(G, noise=0.1).fit(X, np.c_[X, -X])
        >>> diagonal = np.diagonal(post.cov([[0.5]]), axis1=1, axis2=2)
        >>> bool(np.allclose(post.variance([[0.5]]), diagonal))
        True
        """
        _, cov = self._query(X, with_cov=True)
        R = self.decomposition.rotation
        if self.uses_split:
            variances = cov[:, :, 0, 0].T @ (R**2).T
        else:
            variances = np.diagonal(R @ cov[0] @ R.T, axis1=1, axis2=2)
        return np.maximum(variances, 0.0)

    def variance_norm(self, X=None) -> np.ndarray:
        """Operator norm ‖Γ_t(x, x)‖ (largest eigenvalue), the width of the confidence bounds.

        Parameters
        ----------
        X : array_like of shape (N, d), optional
            Query points; default (None) the candidates given to ``fit``, whose posterior
            is cached.

        Returns
        -------
        ndarray of shape (N,)
            ‖Γ_t(x, x)‖ at every query point.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), [[1.0, 0.5], [0.5, 1.0]])
        >>> X = np.linspace(0, 1, 5)[:, None]
        >>> post = mt.posterior.ExactPosterior(G, noise=0.1).fit(X, np.c_[X, -X])
        >>> norm = post.variance_norm([[0.5]])
        >>> bool(np.isclose(norm[0], np.linalg.eigvalsh(post.cov([[0.5]])[0])[-1]))
        True
        """
        _, cov = self._query(X, with_cov=True)
        if self.uses_split:  # Γ_t(x, x) = R diag(var) Rᵀ with orthonormal R (eq. 6)
            norms = cov[:, :, 0, 0].max(axis=0)
        else:
            norms = np.linalg.eigvalsh(cov[0])[:, -1]
        return np.maximum(norms, 0.0)

    def cross_cov(self, X, Z) -> np.ndarray:
        """Posterior cross-covariance Γ_t(X_i, Z_j) = Γ(X_i, Z_j) − G_t(X_i)ᵀ(G_t + ηI)⁻¹G_t(Z_j)
        (eq. 1 at two points): block (a, c) is Cov[f_a(X_i), f_c(Z_j)].

        Parameters
        ----------
        X : array_like of shape (N, d), optional
            Query points; None for the candidates given to ``fit`` (their cache is used).
        Z : array_like of shape (M, d)
            The second points.

        Returns
        -------
        ndarray of shape (N, M, n_tasks, n_tasks)
            Γ_t(X_i, Z_j) for every pair.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), [[1.0, 0.5], [0.5, 1.0]])
        >>> X = np.linspace(0, 1, 5)[:, None]
        >>> post = mt.posterior.ExactPosterior(G, noise=0.1).fit(X, np.c_[X, -X])
        >>> bool(np.allclose(post.cross_cov([[0.5]], [[0.5]])[:, 0], post.cov([[0.5]])))
        True
        """
        if self.n_features_in_ is None:
            raise ValueError(f"{type(self).__name__} is not fitted yet: call fit or add first")
        Z = as_points(Z, "Z", n_features=self.n_features_in_)
        cross = self._problem_cross_cov(self._resolve_query(X), Z)  # (batch, N, M, block, block)
        R = self.decomposition.rotation
        if self.uses_split:
            return np.einsum("ib,bNM,jb->NMij", R, cross[..., 0, 0], R)
        return R @ cross[0] @ R.T
