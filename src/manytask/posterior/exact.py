"""The exact multi-task posterior (vector-valued kernel ridge regression = multi-task GP).

``multitask-bayesian-optimization.txt`` §3.1: μ_t(x) = G_t(x)ᵀ(G_t + ηI)⁻¹Y_t and eq. (1),
Γ_t(x, x') = Γ(x, x') − G_t(x)ᵀ(G_t + ηI)⁻¹G_t(x'). Separable and diagonal kernels are
solved as independent scalar problems (Appendix A, eqs. 5–6); other kernels as one
(nt × nt) system. The factorisations live in :mod:`manytask.posterior._ridge`.

Heterotopic data: NaN in Y marks a task not observed at that x, and the posterior is the
multi-task GP conditioned on the observed entries only (G_t restricted to them). The split
into scalar problems stays exact when each problem is one task (diagonal kernels, and
separable ones with a diagonal B); a separable kernel whose B mixes the tasks rotates the
outputs, so a missing entry would touch every problem, and it is solved as one system
from the first NaN on.
"""

from __future__ import annotations

import numpy as np

from ._base import MultiTaskPosterior
from ._ridge import IncrementalRidge

__all__ = ["ExactPosterior"]


class ExactPosterior(MultiTaskPosterior):
    """Exact posterior of a multi-task GP / vector-valued kernel ridge regression.

    Parameters
    ----------
    kernel : OperatorKernel or Kernel
        Multi-task kernel Γ (a scalar kernel means one task).
    noise : float
        η > 0: ridge parameter, i.e. the GP's noise variance.
    solver : {"auto", "split", "full"}
        "auto" splits Separable and Diagonal kernels into independent scalar problems
        (one eigendecomposition of B, Appendix A) and solves other kernels as one
        (nt × nt) system; "full" forces the latter, "split" insists on the former.

    Attributes
    ----------
    n_observations : int
        Number of observations t.
    candidates_ : ndarray or None
        A copy of the candidates given to ``fit``, whose posterior is cached.
    n_features_in_ : int
        Input dimension d.

    Examples
    --------
    >>> import numpy as np
    >>> import manytask as mt
    >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), mt.kernels.uniform_task_similarity(2, 0.4))
    >>> X = np.linspace(0, 1, 8)[:, None]
    >>> Y = np.c_[np.sin(6 * X[:, 0]), np.sin(6 * X[:, 0] + 0.3)]
    >>> post = mt.posterior.ExactPosterior(G, noise=0.01).fit(X, Y)
    >>> post.mean(X).shape, post.cov(X).shape, post.variance_norm(X).shape
    ((8, 2), (8, 2, 2), (8,))
    >>> post = post.add(np.array([0.55]), np.array([0.1, 0.2]))
    >>> post.n_observations
    9
    """

    allows_missing = True

    def fit(self, X, Y, candidates=None):
        """Condition on observations X (t, d) and Y (t, n_tasks); NaN in Y: not observed.

        With ``candidates`` (N, d), L⁻¹G_t(C) is cached and grown by :meth:`add`, so mean
        and variance over the candidates after each new observation cost O(n·t·N).

        Parameters
        ----------
        X : array_like of shape (t, d)
            Inputs (t may be 0).
        Y : array_like of shape (t, n_tasks)
            Outputs; NaN marks an unobserved task (a 1-D Y when n_tasks = 1).
        candidates : array_like of shape (N, d), optional
            Points whose posterior is cached (``mean()`` with no X).

        Returns
        -------
        ExactPosterior
            self, conditioned; on error, the previous state is left intact.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Diagonal([mt.kernels.RBF(0.3)] * 2)
        >>> post = mt.posterior.ExactPosterior(G, noise=0.1)
        >>> post = post.fit([[0.0], [1.0]], [[1.0, np.nan], [np.nan, 2.0]], candidates=[[0.5]])
        >>> post.mean().shape
        (1, 2)
        """
        X, Y = self._check_data(X, Y)
        candidates = self._check_candidates(candidates, X.shape[1])
        observed = ~np.isnan(Y)
        if not hasattr(self, "_split"):
            self._split = self.decomposition  # the kernel's own split, kept for later fits
        decomposition = self._split
        if not observed.all() and not _one_task_per_problem(decomposition):
            if self.solver == "split":
                raise ValueError(
                    "solver='split' cannot condition on NaN (unobserved) outputs of a kernel "
                    "whose task matrix mixes the tasks; use solver='auto'"
                )
            decomposition = self.kernel.full_decomposition()
        ridge = IncrementalRidge(decomposition, self.noise)
        Z, mask = _problem_data(decomposition, Y, observed)
        ridge.fit(X, Z, candidates=candidates, mask=mask)
        # assign only after success: a failed fit leaves the previous posterior intact
        self.n_features_in_, self.candidates_, self._ridge = X.shape[1], candidates, ridge
        self.decomposition, self._outputs = decomposition, list(Y)
        return self

    def add(self, x, y):
        """Add one observation without refactorising: O(n·t²), or O(n·t·N) with candidates.

        If x is one of the candidates, its cached column replaces a triangular solve. The
        first NaN for a kernel whose split mixes the tasks refits once as one system.

        Parameters
        ----------
        x : array_like of shape (d,)
            Input.
        y : array_like of shape (n_tasks,)
            Outputs at x; NaN marks an unobserved task.

        Returns
        -------
        ExactPosterior
            self, conditioned on one more observation (the same as refitting on all).

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.3), [[1.0, 0.5], [0.5, 1.0]])
        >>> one = mt.posterior.ExactPosterior(G, 0.1).fit([[0.0]], [[1.0, 0.0]])
        >>> one = one.add([1.0], [2.0, 1.0])
        >>> both = mt.posterior.ExactPosterior(G, 0.1).fit([[0.0], [1.0]], [[1.0, 0.0], [2.0, 1.0]])
        >>> bool(np.allclose(one.mean([[0.5]]), both.mean([[0.5]])))
        True
        """
        if self.n_features_in_ is None:
            x = np.asarray(x, dtype=float).reshape(-1)
            self.fit(np.zeros((0, x.shape[0])), np.zeros((0, self.n_tasks)))
        x, y = self._check_point(x, y)
        observed = ~np.isnan(y)
        if not observed.all() and not _one_task_per_problem(self.decomposition):
            X = np.vstack([self._ridge.X, x])
            return self.fit(X, np.array([*self._outputs, y]), candidates=self.candidates_)
        index = None
        if self.candidates_ is not None:
            matches = np.flatnonzero(np.all(self.candidates_ == x, axis=1))
            index = int(matches[0]) if matches.size else None
        Z, mask = _problem_data(self.decomposition, y[None, :], observed[None, :])
        self._ridge.add(x, Z[0], candidate_index=index, mask=None if mask is None else mask[0])
        self._outputs.append(y)
        return self

    @property
    def n_observations(self) -> int:
        """Number t of observations conditioned on.

        Examples
        --------
        >>> import manytask as mt
        >>> mt.posterior.ExactPosterior(mt.kernels.RBF(0.3), 0.1).fit([[0.0]], [1.0]).n_observations
        1
        """
        return self._ridge.n_observations if self.n_features_in_ is not None else 0

    def log_det(self) -> float:
        """log det(I + G_t/η), the information gain term of β_t (Theorem 1, 2).

        Returns
        -------
        float
            0 before any observation.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.ExactPosterior(mt.kernels.RBF(0.3), noise=0.5)
        >>> round(post.fit([[0.0]], [1.0]).log_det(), 6)  # log(1 + k(x, x)/η) = log 3
        1.098612
        """
        return self._ridge.log_det if self.n_features_in_ is not None else 0.0

    def log_det_terms(self) -> np.ndarray:
        """log det(I + G_t/η) of every independent problem (per task for a diagonal kernel,
        per eigenvalue of B for a separable one); they sum to :meth:`log_det`.

        Returns
        -------
        ndarray of shape (batch,)
            One term per problem of the kernel's decomposition.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Diagonal([mt.kernels.RBF(0.3)] * 3)
        >>> post = mt.posterior.ExactPosterior(G, 0.1).fit([[0.0]], [[1.0, 2.0, 3.0]])
        >>> terms = post.log_det_terms()
        >>> terms.shape, bool(np.isclose(terms.sum(), post.log_det()))
        ((3,), True)
        """
        if self.n_features_in_ is None:
            return np.zeros(self.decomposition.batch)
        return self._ridge.log_dets.copy()

    def snapshot(self):
        """A token for :meth:`restore`: later ``add`` calls (e.g. hallucinated observations
        of pending points in a batch) can be undone in O(n·N), without a refit.

        Returns
        -------
        object
            An opaque token (None before the first observation).

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.ExactPosterior(mt.kernels.RBF(0.3), 0.1).fit([[0.0]], [1.0])
        >>> token = post.snapshot()
        >>> post.add([1.0], [2.0]).restore(token).n_observations
        1
        """
        if self.n_features_in_ is None:
            return None
        state = (self._ridge, self.decomposition, self.candidates_, len(self._outputs))
        return state, self._ridge.snapshot()

    def restore(self, token) -> ExactPosterior:
        """Undo every ``add`` since :meth:`snapshot` returned ``token``.

        Parameters
        ----------
        token : object
            What :meth:`snapshot` returned.

        Returns
        -------
        ExactPosterior
            self, as it was at the snapshot.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.ExactPosterior(mt.kernels.RBF(0.3), 0.1)
        >>> token = post.snapshot()  # before any observation
        >>> post.add([0.0], [1.0]).restore(token).n_observations
        0
        """
        if token is None:
            self.n_features_in_, self.candidates_ = None, None
            return self
        (self._ridge, self.decomposition, self.candidates_, n_outputs), ridge_state = token
        del self._outputs[n_outputs:]
        self._ridge.restore(ridge_state)
        return self

    def _problem_posterior(self, X, with_cov):
        if X is self.candidates_:
            mean, cov = self._ridge.candidate_posterior()
            return mean, (cov if with_cov else None)
        return self._ridge.posterior(X, with_cov)

    def _problem_cross_cov(self, X, Z):
        return self._ridge.cross_cov(None if X is self.candidates_ else X, Z)


def _one_task_per_problem(decomposition) -> bool:
    """True when every independent problem is one task (a signed permutation rotation), so
    an unobserved task is an unobserved entry of one problem."""
    R = decomposition.rotation
    nonzero = np.abs(R) > 1e-12
    return R.shape[0] == R.shape[1] and bool(np.all(nonzero.sum(axis=1) == 1))


def _problem_data(decomposition, Y, observed):
    """Problem outputs Z (t, batch, block) and their mask (None when all are observed)."""
    R, t = decomposition.rotation, len(Y)
    shape = (t, decomposition.batch, decomposition.block)
    Z = (np.where(observed, Y, 0.0) @ R).reshape(shape)
    if observed.all():
        return Z, None
    return Z, ((observed @ R**2) > 0.5).reshape(shape)
