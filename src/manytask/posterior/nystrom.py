"""The Nyström posterior of MT-BKB (``multitask-bayesian-optimization.txt`` §3.2, Algorithm 2).

After each observation the dictionary D_t is resampled from all points seen so far, x_i
kept with probability p_{t,i} = min(q‖Γ̃_{t−1}(x_i, x_i)‖/η, 1). With the reweighted Gram
G̃_t and embedding Φ̃_t(x) = (G̃_t^{1/2})⁺ G̃_t(x), and Ṽ_t = Σ_s Φ̃_t(x_s)Φ̃_t(x_s)ᵀ,

    μ̃_t(x)     = Φ̃_t(x)ᵀ(Ṽ_t + ηI)⁻¹ Σ_s Φ̃_t(x_s) y_s,
    Γ̃_t(x, x)  = Γ(x, x) − Φ̃_t(x)ᵀΦ̃_t(x) + η Φ̃_t(x)ᵀ(Ṽ_t + ηI)⁻¹Φ̃_t(x).

Separable kernels use the scalar embedding φ̃ of k once and scale it by √ξ_i per
eigenvalue of B (Appendix A, eqs. 7–8); diagonal kernels share the dictionary across tasks.

Dictionary updates. ``dictionary="resample"`` (Algorithm 2 as printed, the default) redraws
every z_{t,i} ~ Bernoulli(p_{t,i}) in every round, so the size m_t swings from round to
round. ``dictionary="incremental"`` carries the dictionary over, as batched BKB and SQUEAK do
(Calandriello et al. 2017, 2020): x_i draws one u_i ~ U[0, 1] when it arrives,
p_{t,i} = min(p_{t−1,i}, q‖Γ̃_{t−1}(x_i, x_i)‖/η) never grows, and x_i ∈ D_t iff
u_i < p_{t,i}: each z_{t,i} is still Bernoulli(p_{t,i}), but a point leaves at most once and
only the new point can join, so m_t follows the effective dimension.

On the 1/η: Algorithm 2 prints p = min(q‖Γ̃‖, 1), but Theorem 3's proof (following
Calandriello et al. 2019) samples by ridge leverage scores ‖Γ̃(x_i, x_i)‖/η, which the
spectral bound (1 − ε)ΦᵀΦ − εηI ⪯ Φ_DᵀΦ_D needs; without the 1/η a small η undersamples and
Γ_t/ρ ⪯ Γ̃_t ⪯ ρΓ_t fails. ``leverage=False`` gives Algorithm 2 as printed.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import cho_solve

from .._validation import check_random_state
from ..linalg import cholesky, psd_inverse_sqrt, solve_lower
from ._base import MultiTaskPosterior
from ._ridge import block_gram

__all__ = ["NystromPosterior", "DICTIONARY_UPDATES", "check_oversampling"]

DICTIONARY_UPDATES = ("resample", "incremental")


def check_oversampling(q, name: str = "q") -> float:
    """The oversampling q as a float after checking it is a number > 0 (``np.inf`` allowed).

    Parameters
    ----------
    q : float
        MT-BKB's oversampling factor (the q of the dictionary's inclusion probabilities).
    name : str, default="q"
        The parameter's name in the error message.

    Returns
    -------
    float
        ``q`` as a float.

    Examples
    --------
    >>> check_oversampling(2)
    2.0
    >>> check_oversampling(0, name="horizon")
    Traceback (most recent call last):
    ...
    ValueError: horizon must be a positive number (np.inf allowed), got 0
    """
    if not isinstance(q, numbers.Real) or isinstance(q, bool) or not q > 0:
        raise ValueError(f"{name} must be a positive number (np.inf allowed), got {q!r}")
    return float(q)


class NystromPosterior(MultiTaskPosterior):
    """MT-BKB's approximate posterior on a dictionary resampled at every observation.

    Parameters
    ----------
    kernel : OperatorKernel or Kernel
        Multi-task kernel Γ.
    noise : float
        η > 0.
    q : float
        Oversampling parameter q ≥ 1 (``np.inf`` keeps every point: the exact posterior).
        Theorem 3 sets q = 6ρ log(4T/δ)/ε² with ρ = (1 + ε)/(1 − ε).
    random_state : None, int or numpy Generator
        Seed of the Bernoulli draws that choose the dictionary.
    solver : {"auto", "split", "full"}
        As for :class:`~manytask.posterior.ExactPosterior`.
    leverage : bool
        True (default): p = min(q‖Γ̃‖/η, 1), the ridge leverage score for which Theorem 3
        holds. False: p = min(q‖Γ̃‖, 1) as printed in Algorithm 2 (identical when η = 1).
    dictionary : {"resample", "incremental"}
        "resample" (default): Algorithm 2, an independent draw of D_t in every round;
        "incremental": D_t carried over with one uniform per point and non-increasing
        probabilities (see the module docstring), a dictionary that does not swing.

    Attributes
    ----------
    dictionary_ : ndarray of int
        Indices (into the observations) of the current dictionary.
    dictionary_sizes_ : list of int
        Dictionary size m_t after every observation t = 1, 2, …
    candidates_ : ndarray or None
        A copy of the candidates given to ``fit``.
    n_features_in_ : int
        Input dimension d.

    Examples
    --------
    >>> import numpy as np
    >>> import manytask as mt
    >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), np.eye(2))
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> Y = np.c_[np.sin(6 * X[:, 0]), np.cos(6 * X[:, 0])]
    >>> post = mt.posterior.NystromPosterior(G, noise=0.1, q=1.0, random_state=0).fit(X, Y)
    >>> post.dictionary_size < 30  # a subsample of the 30 points
    True
    """

    def __init__(
        self,
        kernel,
        noise: float,
        q: float,
        random_state=None,
        solver="auto",
        leverage=True,
        dictionary="resample",
    ):
        super().__init__(kernel, noise, solver)
        self.leverage = bool(leverage)
        if dictionary not in DICTIONARY_UPDATES:
            raise ValueError(
                f"dictionary must be one of {', '.join(DICTIONARY_UPDATES)}, got {dictionary!r}"
            )
        self.dictionary = dictionary
        self.q = check_oversampling(q)
        self.random_state = random_state

    # ---- fitting -------------------------------------------------------------------------
    def fit(self, X, Y, candidates=None):
        """Replay Algorithm 2 over the observations in order (one dictionary draw each).

        Parameters
        ----------
        X : array_like of shape (t, d)
            Inputs.
        Y : array_like of shape (t, n_tasks)
            Outputs.
        candidates : array_like of shape (N, d), optional
            Default query points of ``mean()``, ``cov()`` and the like.

        Returns
        -------
        NystromPosterior
            self; on error, the previous state is left intact.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> post = mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), noise=0.1, q=np.inf)
        >>> post.fit(np.linspace(0, 1, 6)[:, None], np.zeros(6)).dictionary_size  # q = ∞ keeps all
        6
        """
        X, Y = self._check_data(X, Y)
        previous = dict(self.__dict__)
        try:
            self._reset(X.shape[1], candidates)
            for x, y in zip(X, Y):
                self.add(x, y)
        except Exception:
            self.__dict__.update(previous)  # a failed fit leaves the previous state intact
            raise
        return self

    def _reset(self, n_features, candidates=None):
        self.n_features_in_ = n_features
        self.candidates_ = self._check_candidates(candidates, n_features)
        self._rng = check_random_state(self.random_state)
        self._X = np.zeros((0, n_features))
        self._Z = np.zeros((0, self.decomposition.batch, self.decomposition.block))
        self._norms = np.zeros(0)
        self._probabilities, self._uniforms = np.zeros(0), np.zeros(0)
        self._log_dets = np.zeros(self.decomposition.batch)
        self.dictionary_ = np.zeros(0, dtype=int)
        self.dictionary_sizes_ = []
        self._embedding = None

    def add(self, x, y):
        """Observe (x, y), resample the dictionary from all points, rebuild the embedding.

        Point s enters the dictionary with probability p_s = min(q‖Γ̃_{s−1}(x_s, x_s)‖/η, 1)
        (Algorithm 2; without /η if ``leverage=False``).

        Parameters
        ----------
        x : array_like of shape (d,)
            Input.
        y : array_like of shape (n_tasks,)
            Outputs at x.

        Returns
        -------
        NystromPosterior
            self; on error, the previous state (and random stream) is left intact.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), 0.1, q=2.0, random_state=0)
        >>> post.add([0.0], [1.0]).add([0.5], [0.0]).dictionary_sizes_[0]  # p_1 = 1
        1
        """
        if self.n_features_in_ is None:
            self._reset(np.asarray(x, dtype=float).reshape(-1).shape[0])
        x, y = self._check_point(x, y)
        _, cov = self._problem_posterior(x[None, :], with_cov=True)  # Γ̃_{t−1}(x_t, x_t)
        norms = np.append(self._norms, self._norm(cov))
        X = np.vstack([self._X, x])
        Z = np.concatenate([self._Z, self._to_problems(y[None, :])])
        probabilities = self._inclusion_probabilities(norms)
        uniforms = self._uniforms
        rng_state = self._rng.bit_generator.state
        try:
            if self.dictionary == "incremental":  # one uniform per point, p never grows
                probabilities = np.minimum(probabilities, np.append(self._probabilities, 1.0))
                uniforms = np.append(uniforms, self._rng.random())
                keep = uniforms < probabilities
            else:
                keep = self._rng.random(len(probabilities)) < probabilities
            embedding, solutions = self._build(X, Z, np.flatnonzero(keep), probabilities[keep])
        except Exception:
            self._rng.bit_generator.state = rng_state
            raise
        # commit only now: an error above leaves the posterior as it was
        self._log_dets = self._log_dets + self._log_det_terms(cov)
        self._X, self._Z, self._embedding, self._solutions = X, Z, embedding, solutions
        self._probabilities, self._uniforms = probabilities, uniforms
        self.dictionary_ = np.flatnonzero(keep)
        self.dictionary_sizes_.append(int(keep.sum()))
        _, cov = self._problem_posterior(X, with_cov=True)  # Γ̃_t at x_1 … x_t, for round t + 1
        self._norms = self._norm(cov)
        return self

    def _inclusion_probabilities(self, norms):
        """p_{t,i} = min(q‖Γ̃_{t−1}(x_i, x_i)‖/η, 1), or without /η (Algorithm 2 as printed)."""
        if np.isinf(self.q):
            return np.ones_like(norms)
        scores = norms / self.noise if self.leverage else norms
        return np.minimum(self.q * scores, 1.0)

    def _norm(self, cov):
        if self.uses_split:
            return np.maximum(cov[:, :, 0, 0].max(axis=0), 0.0)
        return np.maximum(np.linalg.eigvalsh(cov[0])[:, -1], 0.0)

    def _log_det_terms(self, cov):
        """log det(I + η⁻¹Γ̃_{t−1}(x_t, x_t)) of every problem, for the point in ``cov``."""
        if self.uses_split:
            return np.log1p(np.maximum(cov[:, 0, 0, 0], 0.0) / self.noise)
        eigenvalues = np.linalg.eigvalsh(cov[0, 0])
        return np.array([np.sum(np.log1p(np.maximum(eigenvalues, 0.0) / self.noise))])

    def _build(self, X, Z, dictionary, probabilities):
        """Embedding of D_t, and per problem the factor of Ṽ_t + ηI and
        (Ṽ_t + ηI)⁻¹ Σ_s Φ̃_t(x_s) y_s, for observations X (t, d) and Z (t, batch, block)."""
        d, p = self.decomposition, self.decomposition.block
        points = X[dictionary]
        weights = np.repeat(1.0 / np.sqrt(probabilities), p)
        factors = []
        for g in range(len(d.kernels)):
            reweighted = d.group_gram(points, points, g) * np.outer(weights, weights)
            factors.append(psd_inverse_sqrt(reweighted))
        embedding = (points, weights, factors)
        solutions = []
        for beta, F in enumerate(self._features(X, embedding)):
            L = cholesky(F.T @ F + self.noise * np.eye(F.shape[1]), name="Ṽ_t + ηI")
            rhs = F.T @ Z[:, beta, :].reshape(-1)
            # L⁻¹ (r × r, small) once, so queries whiten by one matrix product
            inverse = solve_lower(L, np.eye(L.shape[0]))
            solutions.append((inverse, cho_solve((L, True), rhs)))
        return embedding, solutions

    def _features(self, X, embedding):
        """Φ̃_t of every problem at X: list of (N·block, r) arrays (√ξ_β times its group's)."""
        d = self.decomposition
        points, weights, factors = embedding
        base = [(d.group_gram(X, points, g) * weights) @ factors[g] for g in range(len(factors))]
        return [np.sqrt(s) * base[g] for g, s in zip(d.groups, d.scales)]

    # ---- prediction ----------------------------------------------------------------------
    @property
    def n_observations(self) -> int:
        """Number t of observations conditioned on.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), 0.1, q=2.0, random_state=0)
        >>> post.fit([[0.0], [1.0]], [1.0, 2.0]).n_observations
        2
        """
        return 0 if self.n_features_in_ is None else len(self._X)

    @property
    def dictionary_size(self) -> int:
        """m_t, the number of points in the current dictionary.

        Examples
        --------
        >>> import manytask as mt
        >>> mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), 0.1, q=2.0).dictionary_size
        0
        """
        return len(self.dictionary_) if self.n_features_in_ is not None else 0

    def log_det(self) -> float:
        """Σ_s log det(Iₙ + η⁻¹Γ̃_{s−1}(x_s, x_s)), the sum in β̃_t of Theorem 3.

        Returns
        -------
        float
            0 before any observation.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), 0.5, q=2.0, random_state=0)
        >>> round(post.add([0.0], [1.0]).log_det(), 6)  # log(1 + k(x, x)/η) = log 3
        1.098612
        """
        return float(np.sum(self.log_det_terms()))

    def log_det_terms(self) -> np.ndarray:
        """The sum of :meth:`log_det` split by independent problem (per task for a
        diagonal kernel).

        Returns
        -------
        ndarray of shape (batch,)
            One term per problem of the kernel's decomposition.

        Examples
        --------
        >>> import numpy as np
        >>> import manytask as mt
        >>> G = mt.kernels.Diagonal([mt.kernels.RBF(0.3)] * 2)
        >>> post = mt.posterior.NystromPosterior(G, 0.1, q=2.0, random_state=0)
        >>> post.log_det_terms()
        array([0., 0.])
        """
        if self.n_features_in_ is None:
            return np.zeros(self.decomposition.batch)
        return self._log_dets.copy()

    def snapshot(self):
        """A token for :meth:`restore`, which undoes later ``add`` calls (and their draws).

        Returns
        -------
        object
            An opaque token.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), 0.1, q=2.0, random_state=0)
        >>> token = post.add([0.0], [1.0]).snapshot()
        >>> post.add([1.0], [2.0]).restore(token).n_observations
        1
        """
        state = dict(self.__dict__)
        if "dictionary_sizes_" in state:
            state["dictionary_sizes_"] = list(state["dictionary_sizes_"])
        rng_state = self._rng.bit_generator.state if "_rng" in state else None
        return state, rng_state

    def restore(self, token) -> NystromPosterior:
        """Undo every ``add`` since :meth:`snapshot` returned ``token``.

        The random stream is rewound too: the same ``add`` calls redraw the same dictionaries.

        Parameters
        ----------
        token : object
            What :meth:`snapshot` returned.

        Returns
        -------
        NystromPosterior
            self, as it was at the snapshot.

        Examples
        --------
        >>> import manytask as mt
        >>> post = mt.posterior.NystromPosterior(mt.kernels.RBF(0.3), 0.1, q=2.0, random_state=0)
        >>> post.restore(post.snapshot()).n_observations
        0
        """
        state, rng_state = token
        self.__dict__.clear()
        self.__dict__.update(state)
        self.dictionary_sizes_ = list(state.get("dictionary_sizes_", []))
        if rng_state is not None:
            self._rng.bit_generator.state = rng_state
        return self

    def _problem_posterior(self, X, with_cov):
        d = self.decomposition
        b, p, N = d.batch, d.block, len(X)
        if self._embedding is None:
            mean = np.zeros((b, N, p))
            return mean, (d.prior_blocks(X) if with_cov else None)
        features = self._features(X, self._embedding)
        mean = np.stack([F @ alpha for F, (_, alpha) in zip(features, self._solutions)])
        mean = mean.reshape(b, N, p)
        if not with_cov:
            return mean, None
        explained = np.stack([block_gram(F.T[None], p)[0] for F in features])
        whitened = [inverse @ F.T for F, (inverse, _) in zip(features, self._solutions)]
        shrunk = np.stack([block_gram(H[None], p)[0] for H in whitened])
        return mean, d.prior_blocks(X) - explained + self.noise * shrunk
