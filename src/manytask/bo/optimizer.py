"""``MultiTaskBO``: the ask/tell optimiser a user drives (finite candidates or a box).

Each ``ask`` draws λ_t ~ P_λ and maximises the policy's acquisition (:mod:`.policies`):
by an argmax over a finite candidate set (the paper), or on a box by multi-start L-BFGS-B
from the best points of a scrambled Sobol sample. ``ask(k)`` proposes k points for k
parallel workers, each for its own λ; earlier picks and every pending (asked, not told)
point are hallucinated at the posterior mean, which leaves the mean alone and shrinks the
variance there, so the k points differ. Hallucinations are undone exactly afterwards.

The state (configuration, history, pending points, random generator) is JSON-serialisable;
a run resumed from ``state_dict()`` replays the history through the same incremental
updates and proposes exactly what the uninterrupted run would have.
"""

from __future__ import annotations

import json
import numbers
import os
import tempfile
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from .._validation import as_finite_array, as_points, check_positive, check_probability
from ..kernels import OperatorKernel, kernel_from_config, kernel_to_config
from ..posterior._base import as_outputs_with_missing
from ..posterior.nystrom import DICTIONARY_UPDATES
from ..simplex import weight_sampler
from . import metrics
from .learned import LearnedKernel
from .policies import Policy, check_beta
from .scalarization import make_scalarization, value_range
from .transforms import check_bounds

__all__ = ["MultiTaskBO"]

FORMAT = "manytask.MultiTaskBO"
VERSION = 1


class MultiTaskBO:
    """Multi-task Bayesian optimisation with random scalarisations, driven by ask/tell.

    Parameters
    ----------
    candidates : array of shape (N, d), optional
        A finite domain (the paper's setting). Exactly one of ``candidates`` and ``bounds``.
    bounds : array of shape (d, 2), optional
        A box [low, high] per dimension; the acquisition is maximised by L-BFGS-B.
    kernel : OperatorKernel or "auto"
        The multi-task kernel Γ. ``"auto"`` learns an ICM kernel (ARD input kernel, task
        matrix B = WWᵀ + diag(v), noise) by maximum marginal likelihood every
        ``refit_every`` observations, on standardised outputs (see :mod:`.learned`).
    algorithm : {"mt-kb", "mt-bkb", "it-kb", "it-bkb", "mobo"}
    scalarization : {"chebyshev", "linear"} or Scalarization
    weights : {"paria", "uniform", "dirichlet"}, array of shape (n,) or callable
        P_λ: a named distribution, a fixed λ, or ``weights(rng, n) -> λ``.
    noise : float
        η, the ridge / GP noise variance of the posterior (ignored for ``kernel="auto"``).
    delta, rkhs_bound, noise_std, epsilon : float
        δ, b, σ and ε of the theoretical radii (Theorems 2 and 3).
    beta : None, float or callable
        Overrides the theoretical radius (the multiplier of the posterior standard
        deviation): a number or ``beta(t)``. The theory radii are conservative.
    seed : int or None
        Seed of every random choice (weights, Sobol points, Nyström dictionaries); None
        draws one (kept in ``seed`` and in checkpoints).
    reference : "observed", None or array of shape (n,)
        The reference point z of the scalarisation, which acts on normalised objectives
        (y − z)/r (:mod:`.scalarization`). ``"observed"`` (default): z and r are the
        observed minimum and range of every objective, updated at every tell (ParEGO's
        normalisation); an array: a fixed z given by the user; None: z = 0, r = 1 (raw
        objectives). :meth:`from_problem` uses the problem's known range instead.
    scale : array of shape (n,), optional
        The range r of every objective with a fixed ``reference`` (default 1).
    q, horizon : float, int
        Nyström oversampling for MT-BKB/IT-BKB; None means Theorem 3's q for ``horizon`` T.
    dictionary : {"resample", "incremental"}
        MT-BKB/IT-BKB: redraw the dictionary every round (Algorithm 2) or carry it over with
        non-increasing inclusion probabilities, so that it does not swing (batched BKB).
    n_tasks : int, optional
        Number of objectives. A kernel knows it; with ``kernel="auto"`` and no ``n_tasks``
        it is taken from the first ``tell`` (points asked before that draw their λ then).
    n_sobol, n_restarts : int
        Box domains: Sobol sample size and number of L-BFGS-B starts.
    refit_every : int
        ``kernel="auto"``: observations between two fits of the kernel.

    Example
    -------
    >>> import numpy as np
    >>> import manytask as mt
    >>> X = np.linspace(0, 1, 101)[:, None]
    >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), mt.kernels.uniform_task_similarity(2, 0.4))
    >>> opt = mt.bo.MultiTaskBO(candidates=X, kernel=G, seed=0)
    >>> for _ in range(5):
    ...     x = opt.ask()
    ...     _ = opt.tell(x, [np.sin(3 * x[0]), np.cos(3 * x[0])])
    >>> opt.pareto_front()[1].shape[1]
    2
    """

    def __init__(
        self,
        candidates=None,
        bounds=None,
        kernel="auto",
        algorithm="mt-kb",
        scalarization="chebyshev",
        weights="paria",
        noise=0.1,
        delta=0.1,
        rkhs_bound=1.0,
        noise_std=0.1,
        epsilon=0.5,
        beta=None,
        seed=None,
        *,
        reference="observed",
        scale=None,
        q=None,
        horizon=1000,
        dictionary="resample",
        n_tasks=None,
        n_sobol=1024,
        n_restarts=5,
        refit_every=5,
    ):
        if (candidates is None) == (bounds is None):
            raise ValueError("give exactly one of candidates (a finite set) and bounds (a box)")
        if candidates is not None:
            candidates = as_points(candidates, "candidates").copy()
            if len(candidates) == 0:
                raise ValueError("candidates must hold at least one point, got an empty array")
            self.n_features = candidates.shape[1]
        else:
            bounds = check_bounds(bounds)
            self.n_features = bounds.shape[0]
        if n_tasks is not None and (not isinstance(n_tasks, numbers.Integral) or n_tasks < 1):
            raise ValueError(f"n_tasks must be a positive integer or None, got {n_tasks!r}")
        if isinstance(kernel, str):
            if kernel != "auto":
                raise ValueError(f"kernel must be an OperatorKernel or 'auto', got {kernel!r}")
        elif not isinstance(kernel, OperatorKernel):
            raise ValueError(f"kernel must be an OperatorKernel or 'auto', got {kernel!r}")
        elif n_tasks is not None and n_tasks != kernel.n_tasks:
            raise ValueError(f"n_tasks={n_tasks} but the kernel has {kernel.n_tasks} tasks")
        self.candidates, self.bounds, self.kernel = candidates, bounds, kernel
        if isinstance(kernel, OperatorKernel):
            n_tasks = kernel.n_tasks
        self.algorithm, self.weights = algorithm, weights
        self.scalarization = make_scalarization(scalarization, reference, scale)
        self.n_tasks = None  # set by _set_n_tasks, here or at the first tell
        self.noise, self.delta = check_positive(noise, "noise"), check_positive(delta, "delta")
        if not 0 < self.delta <= 1:
            raise ValueError(f"delta must lie in (0, 1], got {delta!r}")
        self.rkhs_bound = check_positive(rkhs_bound, "rkhs_bound", strict=False)
        self.noise_std = check_positive(noise_std, "noise_std", strict=False)
        self.epsilon = check_probability(epsilon, "epsilon")
        if seed is None:  # draw one, so that a checkpoint can still resume exactly
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        self.beta, self.seed, self.q, self.horizon = check_beta(beta), seed, q, int(horizon)
        if dictionary not in DICTIONARY_UPDATES:
            valid = ", ".join(DICTIONARY_UPDATES)
            raise ValueError(f"dictionary must be one of {valid}, got {dictionary!r}")
        self.dictionary = dictionary
        self.n_sobol, self.n_restarts = int(n_sobol), int(n_restarts)
        self.refit_every = int(refit_every)
        if isinstance(kernel, str) and self.refit_every < 1:
            raise ValueError(f"refit_every must be >= 1, got {refit_every!r}")
        self._rng = np.random.default_rng(seed)
        self._X, self._Y, self._told_weights, self._pending = [], [], [], []
        self._learned, self._policy = None, None
        if n_tasks is not None:
            self._set_n_tasks(int(n_tasks))

    def _set_n_tasks(self, n_tasks):
        """Fix the number of objectives (given, the kernel's, or the first tell's)."""
        self._sample_weights = weight_sampler(self.weights, n_tasks)
        self.scalarization.check_tasks(n_tasks)
        self.n_tasks = n_tasks
        if isinstance(self.kernel, str):
            box = self._domain_box()
            self._learned = LearnedKernel(
                self.n_features, n_tasks, box, self.seed, self.refit_every
            )
        else:
            self._policy = self._make_policy(self.kernel, self.noise, self.beta)
        for i, (x, weights) in enumerate(self._pending):  # asked before n was known
            if weights is None:
                self._pending[i] = (x, self._sample_weights(self._rng, n_tasks))

    # ---- construction helpers ------------------------------------------------------------
    def _domain_box(self):
        if self.bounds is not None:
            return self.bounds
        return np.c_[self.candidates.min(axis=0), self.candidates.max(axis=0)]

    def _make_policy(self, kernel, noise, beta):
        n_points = len(self.candidates) if self.candidates is not None else self.n_sobol
        policy = Policy(
            self.algorithm,
            kernel,
            noise,
            delta=self.delta,
            rkhs_bound=self.rkhs_bound,
            noise_std=self.noise_std,
            epsilon=self.epsilon,
            q=self.q,
            horizon=self.horizon,
            beta=beta,
            n_points=n_points,
            random_state=np.random.SeedSequence([self.seed, 1]),
            dictionary=self.dictionary,
        )
        return policy.start(self.n_features, self.candidates)

    @classmethod
    def from_problem(cls, problem, algorithm="mt-kb", **overrides):
        """An optimiser with the candidate set, kernel, noise and bounds the paper used, and
        the scalarisation on the problem's known range: z = min f, r = max f − min f on the
        candidates (the reference point sits below all the data)."""
        reference, scale = value_range(problem.values)
        settings = dict(
            reference=reference,
            scale=scale,
            candidates=problem.candidates if problem.bounds is None else None,
            bounds=problem.bounds,
            kernel=problem.kernel,
            noise=problem.noise,
            rkhs_bound=1.0 if problem.rkhs_bound is None else problem.rkhs_bound,
            noise_std=problem.noise_std,
            algorithm=algorithm,
        )
        settings.update(overrides)
        return cls(**settings)

    # ---- ask / tell ----------------------------------------------------------------------
    def ask(self, k=None):
        """One point (d,), or ``k`` points (k, d) for k parallel workers."""
        if k is not None and (not isinstance(k, numbers.Integral) or k < 1):
            raise ValueError(f"k must be a positive integer, got {k!r}")
        count = 1 if k is None else int(k)
        proposals = []
        if self._policy is None:  # kernel="auto" before its first fit: a space-filling design
            for _ in range(count):
                # before the first tell of an unknown n, λ is drawn once n is known
                weights = None
                if self.n_tasks is not None:
                    weights = self._sample_weights(self._rng, self.n_tasks)
                proposals.append((self._initial_point(), weights))
        else:
            token = self._policy.snapshot()
            try:
                radius = self._policy.radius()  # from the real observations only
                for x, _ in self._pending:
                    self._hallucinate(x)
                for j in range(count):
                    weights = self._sample_weights(self._rng, self.n_tasks)
                    busy = [x for x, _ in self._pending] + [x for x, _ in proposals]
                    x = self._maximize(weights, radius, busy)
                    proposals.append((x, weights))
                    if j < count - 1:  # the last pick shapes nothing after it
                        self._hallucinate(x)
            finally:
                self._policy.restore(token)
        self._pending.extend(proposals)
        points = np.array([x for x, _ in proposals])
        return points[0] if k is None else points

    def tell(self, x, y):
        """Record the observation y (n,) at x (d,), asked or not.

        NaN in y marks an objective not measured at x (decoupled evaluations): the exact
        posteriors (MT-KB, IT-KB, MOBO with a given kernel) condition on the measured ones.
        """
        x = as_finite_array(x, "x").reshape(-1)
        if x.shape[0] != self.n_features:
            raise ValueError(f"x must have {self.n_features} coordinates, got shape {x.shape}")
        y = as_outputs_with_missing(y, "y").reshape(-1)
        if self.n_tasks is None:
            self._set_n_tasks(y.shape[0])
        if y.shape[0] != self.n_tasks:
            raise ValueError(f"y must have {self.n_tasks} values (one per task), got {y.shape[0]}")
        missing = np.isnan(y)
        if missing.all():
            raise ValueError(f"y must hold at least one measured (non-NaN) value, got {y}")
        if missing.any() and (self.algorithm.endswith("bkb") or isinstance(self.kernel, str)):
            raise ValueError(
                "y has NaN (an objective not measured), which needs a given kernel and an exact "
                f"posterior (algorithm mt-kb, it-kb or mobo); got algorithm={self.algorithm!r}, "
                f"kernel={'auto' if isinstance(self.kernel, str) else 'given'}"
            )
        weights = np.full(self.n_tasks, np.nan)
        for i, (pending, pending_weights) in enumerate(self._pending):
            if np.array_equal(pending, x):
                weights = pending_weights
                del self._pending[i]
                break
        self._observe(x, y, weights)
        return self

    def _observe(self, x, y, weights):
        self._X.append(x)
        self._Y.append(y)
        self._told_weights.append(np.asarray(weights, dtype=float))
        if self._learned is None:
            self._policy.add(x, y)
            return
        refit = self._learned.update(np.array(self._X), np.array(self._Y))
        if refit is not None:  # a new kernel: rebuild the posterior on all standardised data
            kernel, noise = refit
            beta = self.beta if self.beta is not None else self._learned.practical_beta
            self._policy = self._make_policy(kernel, noise, beta)
            for xi, yi in zip(self._X, self._learned.standardize(np.array(self._Y))):
                self._policy.add(xi, yi)
        elif self._policy is not None:
            self._policy.add(x, self._learned.standardize(y[None, :])[0])

    def _hallucinate(self, x):
        mean = self._policy.posterior.mean(x[None, :])[0]
        self._policy.add(x, mean)

    # ---- acquisition maximisation --------------------------------------------------------
    def _scalarization(self):
        """The scalarisation of the next proposal, in the units of the posterior."""
        if self._learned is None:
            return self.scalarization.fitted(self.Y_)
        if self.scalarization.adaptive:
            return self.scalarization.fitted(self._learned.standardize(self.Y_))
        return self._learned.scalarization(self.scalarization)

    def _maximize(self, weights, radius, busy=()):
        """argmax of the acquisition; on a finite set, points in ``busy`` (pending or already
        in this batch) are skipped while others remain, so a batch never repeats a point."""
        scalarization = self._scalarization()
        if self.candidates is not None:
            values = self._policy.acquisition(None, weights, scalarization, radius)
            taken = np.zeros(len(values), dtype=bool)
            for x in busy:
                taken |= np.all(self.candidates == x, axis=1)
            if not taken.all():
                values = np.where(taken, -np.inf, values)
            best = values.max()
            ties = np.flatnonzero(values >= best - 1e-12 * max(1.0, abs(best)))
            index = ties[0] if len(ties) == 1 else self._rng.choice(ties)
            return self.candidates[index].copy()
        low, high = self.bounds[:, 0], self.bounds[:, 1]
        # an integer seed: a Generator passed to Sobol would be *spawned* from, which its
        # saved bit-generator state does not capture, and a resumed run would diverge
        sobol_seed = int(self._rng.integers(2**63))
        sample = qmc.Sobol(self.n_features, scramble=True, seed=sobol_seed).random(self.n_sobol)
        starts = low + (high - low) * sample
        values = self._policy.acquisition(starts, weights, scalarization, radius)
        best_x, best_value = starts[np.argmax(values)], values.max()

        def negative(z):
            return -float(self._policy.acquisition(z[None, :], weights, scalarization, radius)[0])

        for start in starts[np.argsort(values)[::-1][: self.n_restarts]]:
            result = minimize(negative, start, method="L-BFGS-B", bounds=self.bounds)
            if -result.fun > best_value:
                best_x, best_value = np.clip(result.x, low, high), -result.fun
        return np.array(best_x, dtype=float)

    def _initial_point(self):
        if self.candidates is not None:
            return self.candidates[self._rng.integers(len(self.candidates))].copy()
        low, high = self.bounds[:, 0], self.bounds[:, 1]
        return low + (high - low) * self._rng.uniform(size=self.n_features)

    # ---- results -------------------------------------------------------------------------
    @property
    def X_(self):
        """Told points, shape (t, d)."""
        return np.array(self._X).reshape(-1, self.n_features)

    @property
    def Y_(self):
        """Told observations, shape (t, n)."""
        return np.array(self._Y, dtype=float).reshape(len(self._Y), self.n_tasks or 0)

    @property
    def weights_(self):
        """λ drawn for every told point (NaN for points told without being asked), (t, n)."""
        return np.array(self._told_weights, dtype=float).reshape(len(self._Y), self.n_tasks or 0)

    @property
    def pending_(self):
        """Points asked and not yet told, shape (k, d)."""
        return np.array([x for x, _ in self._pending]).reshape(-1, self.n_features)

    def pareto_front(self):
        """(X, Y) of the told points whose observations no other observation dominates
        (among the points with every objective measured)."""
        complete = ~np.isnan(self.Y_).any(axis=1)
        X, Y = self.X_[complete], self.Y_[complete]
        mask = metrics.pareto_mask(Y)
        return X[mask], Y[mask]

    def hypervolume(self, reference):
        """Hypervolume dominated by the observed Pareto front and bounded by ``reference``."""
        reference = as_finite_array(reference, "reference", ndim=1)
        return metrics.hypervolume(self.pareto_front()[1], reference)

    # ---- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything needed to resume, as plain JSON-serialisable values."""
        if callable(self.weights) or callable(self.beta):
            raise ValueError(
                "weights or beta given as a callable cannot be saved: pass them again to "
                "from_state_dict(state, weights=..., beta=...)"
            )
        config = {
            "candidates": None if self.candidates is None else self.candidates.tolist(),
            "bounds": None if self.bounds is None else self.bounds.tolist(),
            "kernel": "auto" if isinstance(self.kernel, str) else kernel_to_config(self.kernel),
            "algorithm": self.algorithm,
            "scalarization": self.scalarization.to_config(),
            "weights": self.weights
            if isinstance(self.weights, str)
            else np.asarray(self.weights).tolist(),
            "noise": self.noise,
            "delta": self.delta,
            "rkhs_bound": self.rkhs_bound,
            "noise_std": self.noise_std,
            "epsilon": self.epsilon,
            "beta": self.beta,
            "seed": self.seed,
            "q": self.q,
            "horizon": self.horizon,
            "dictionary": self.dictionary,
            "n_tasks": self.n_tasks,
            "n_sobol": self.n_sobol,
            "n_restarts": self.n_restarts,
            "refit_every": self.refit_every,
        }
        return {
            "format": FORMAT,
            "version": VERSION,
            "config": config,
            "X": self.X_.tolist(),
            "Y": [[None if np.isnan(v) else v for v in row] for row in self.Y_.tolist()],
            "weights": [None if np.isnan(w).any() else w.tolist() for w in self._told_weights],
            "pending": [[x.tolist(), None if w is None else w.tolist()] for x, w in self._pending],
            "rng": self._rng.bit_generator.state,
        }

    @classmethod
    def from_state_dict(cls, state: dict, **overrides) -> MultiTaskBO:
        """Resume from :meth:`state_dict`: same proposals as the uninterrupted run."""
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise ValueError("state is not a MultiTaskBO state_dict (missing 'format')")
        if state.get("version") != VERSION:
            raise ValueError(
                f"unsupported state version {state.get('version')!r}, expected {VERSION}"
            )
        try:
            config = dict(state["config"])
            if config["kernel"] != "auto":
                config["kernel"] = kernel_from_config(config["kernel"])
            scalarization = config.pop("scalarization")
            config["scalarization"] = make_scalarization(scalarization)
            config.update(overrides)
            optimizer = cls(**config)
            for x, y, w in zip(state["X"], state["Y"], state["weights"]):
                weights = np.full(optimizer.n_tasks, np.nan) if w is None else np.array(w)
                y = np.array([np.nan if v is None else v for v in y], dtype=float)
                optimizer._observe(np.array(x, dtype=float), y, weights)
            optimizer._pending = [
                (np.array(x), None if w is None else np.array(w)) for x, w in state["pending"]
            ]
            optimizer._rng.bit_generator.state = state["rng"]
        except (KeyError, TypeError) as error:
            raise ValueError(f"state_dict is incomplete or malformed: {error!r}") from error
        return optimizer

    def save(self, path) -> Path:
        """Write the state as JSON atomically (temporary file + rename)."""
        path = Path(path)
        text = json.dumps(self.state_dict())
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(handle, "w") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path, **overrides) -> MultiTaskBO:
        """Resume from a file written by :meth:`save`."""
        try:
            state = json.loads(Path(path).read_text())
        except json.JSONDecodeError as error:
            raise ValueError(
                f"checkpoint {str(path)!r} is truncated or not valid JSON: {error}"
            ) from error
        return cls.from_state_dict(state, **overrides)
