"""``kernel="auto"`` in :class:`~manytask.bo.MultiTaskBO`: when to refit the ICM kernel, and
the units it works in (beyond the paper, which assumes the kernel is known).

Inputs are mapped to the unit cube of the domain's box for the fit, and the fitted ARD
lengthscales mapped back, so the posterior works in the user's units. Outputs are
standardised per task (mean 0, standard deviation 1) at every refit, and the posterior and
the scalarisations act on standardised outputs: a per-objective increasing affine map leaves
the Pareto front unchanged, and it makes an isotropic noise η sensible when the objectives
have different units. A fixed reference point and range are mapped the same way.

The theory radii assume a known kernel; with a learned kernel the default radius is
:data:`LEARNED_BETA` (a user ``beta`` still wins). The math of the fit is in
:mod:`.kernel_learning`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels import RBF, Separable, SumOfSeparable
from .block_model import BlockFit, fit_block_kernels
from .kernel_learning import fit_icm_kernel
from .transforms import OutputWarping, normalize_inputs, standardize_outputs

__all__ = ["LearnedKernel", "LEARNED_BETA", "OBJECTIVE_MODELS"]

#: The radius β of every policy with ``kernel="auto"`` and no user ``beta``: a constant 1
#: beat Kandasamy et al. (2017)'s practical β_t = √(0.2 d log(2t)) (1.3–3 at d = 2–10 over
#: 46 rounds) on the suite of benchmarks/bench_bo_botorch.py (benchmarks/RESULTS.md).
LEARNED_BETA = 1.0
#: The objectives' models of ``LearnedKernel(objective_model=...)``.
OBJECTIVE_MODELS = ("icm", "independent", "auto")


class Refit(NamedTuple):
    """A fitted kernel with the output standardisation it was fitted in, not yet in use."""

    kernel: Separable | SumOfSeparable
    noise: float
    fit: object
    mean: np.ndarray
    scale: np.ndarray
    n_observations: int
    warping: OutputWarping | None = None
    model: str = "icm"  # the objectives' model: "icm" or "independent"


class LearnedKernel:
    """Refit schedule and output standardisation of a learned ICM kernel.

    The first fit happens once ``n_initial = max(3, d + 1)`` observations exist (until
    then the optimiser proposes random points of the domain); later fits every
    ``refit_every`` observations, warm-started from the previous one or not (``warm_start``).
    A fit is computed by :meth:`refit` and takes effect only once passed to :meth:`accept`,
    so that a failure leaves everything as it was.

    Parameters
    ----------
    n_features : int
        The input dimension d.
    n_tasks : int
        The number of tasks: the objectives, then the constraints.
    box : array of shape (d, 2)
        The domain's box; inputs are fitted in its unit cube.
    seed : int
        Seed of the fits' restarts.
    refit_every : int
        Observations between two fits (≥ 1).
    n_constraints : int
        How many of the last tasks are constraints.
    prior : bool
        Fit the objectives' ICM by MAP under BoTorch's log-normal priors of the lengthscales
        and the noise (:func:`~manytask.bo.kernel_learning.fit_icm_kernel`) instead of by
        maximum marginal likelihood.
    refit_restarts : int
        Optimiser starts of every fit after the first (which has 3): the previous fit, then
        the data-driven guess, then random ones.
    warping : {"none", "yeo-johnson", "rank"}
        The increasing map of every objective fitted at every refit, before the
        standardisation (:class:`~manytask.bo.transforms.OutputWarping`); constraints are
        only standardised.
    objective_model : {"icm", "independent", "auto"}
        The objectives' model: the ICM (one ARD kernel, task matrix B) or one GP per
        objective; beside constraints, and for ``"independent"``, every block is fitted alone
        (:func:`~manytask.bo.block_model.fit_block_kernels`). ``"auto"`` fits both at
        every refit (the same seeds) and keeps the one whose objectives have the higher
        log marginal likelihood (without the priors).
    mean : {"zero", "constant"}
        The model's mean on the standardised outputs: zero, or a constant per task fitted
        with the kernel (:func:`~manytask.bo.kernel_learning.fit_icm_kernel`), which then
        shifts the standardisation: ŷ = (y − m − s c)/s.
    warm_start : bool
        Start every refit from the previous fit (then the fresh starts); False: from the
        fresh starts only, as BoTorch refits a ``SingleTaskGP``.

    Examples
    --------
    >>> learned = LearnedKernel(n_features=2, n_tasks=2, box=[[0.0, 1.0], [0.0, 1.0]],
    ...                         seed=0, refit_every=5)
    >>> learned.n_initial, learned.due(2), learned.due(3)
    (3, False, True)
    """

    def __init__(
        self, n_features, n_tasks, box, seed, refit_every, n_constraints=0, prior=False,
        refit_restarts=1, warping="none", objective_model="icm", mean="zero", warm_start=True,
    ):  # fmt: skip
        if refit_every < 1:
            raise ValueError(f"refit_every must be >= 1, got {refit_every!r}")
        self.n_features, self.n_tasks = n_features, n_tasks
        self.n_objectives = n_tasks - n_constraints  # the last tasks are constraints
        self.box, self.seed, self.refit_every = np.array(box, dtype=float), seed, refit_every
        low, width = self.box[:, 0], self.box[:, 1] - self.box[:, 0]
        # a dimension in which every candidate is equal: a box of width max(1, |x|/1024)
        # around it, extended away from the float limit, so that it cannot overflow
        pad = np.maximum(1.0, np.abs(low) / 1024)
        self.box[:, 0] = np.where((width > 0) | (low <= 0), low, low - pad)
        self.box[:, 1] = np.where((width > 0) | (low > 0), self.box[:, 1], low + pad)
        self.n_initial = max(3, n_features + 1)
        self.prior, self.refit_restarts = bool(prior), refit_restarts
        self.warping, self.warping_ = warping, None
        self.objective_model, self.mean = objective_model, mean
        self.warm_start = bool(warm_start)
        self.fit_, self.model_ = None, None
        self._fitted_at = 0
        self.mean_, self.scale_ = np.zeros(n_tasks), np.ones(n_tasks)

    def due(self, t) -> bool:
        """True when t observations call for a (re)fit.

        Parameters
        ----------
        t : int
            The number of observations.

        Returns
        -------
        bool
            Whether to refit: at ``n_initial`` observations, then every ``refit_every``.

        Examples
        --------
        >>> learned = LearnedKernel(n_features=1, n_tasks=2, box=[[0.0, 1.0]], seed=0,
        ...                         refit_every=5)
        >>> learned.due(2), learned.due(3)
        (False, True)
        """
        if t < self.n_initial:
            return False
        return self.fit_ is None or t - self._fitted_at >= self.refit_every

    def refit(self, X, Y) -> Refit:
        """Fit the kernel to all observations; (kernel, noise) in the user's input units.

        The fit maximises the marginal likelihood (times the prior with ``prior``) of the
        standardised outputs on the unit cube of the box; nothing of this object changes
        until :meth:`accept`.

        Parameters
        ----------
        X : array of shape (t, d)
            The told points.
        Y : array of shape (t, n_tasks)
            Their outputs (objectives, then constraints).

        Returns
        -------
        Refit
            The kernel, noise and fit, with the standardisation (mean, scale) they belong to.

        Examples
        --------
        >>> learned = LearnedKernel(n_features=1, n_tasks=2, box=[[0.0, 1.0]], seed=0,
        ...                         refit_every=5)
        >>> X = np.linspace(0, 1, 6)[:, None]
        >>> refit = learned.refit(X, np.c_[np.sin(3 * X), np.cos(3 * X)])
        >>> refit.n_observations, refit.mean.shape, learned.fit_ is None
        (6, (2,), True)
        """
        t = len(X)
        X_unit, _ = normalize_inputs(X, self.box)
        warping = None
        if self.warping != "none":
            Y = np.array(Y, dtype=float)
            warping = OutputWarping(self.warping, Y[:, : self.n_objectives])
            Y[:, : self.n_objectives] = warping(Y[:, : self.n_objectives])
        Y_standard, mean, scale = standardize_outputs(Y)
        seed = np.random.SeedSequence([self.seed, 2, t])
        restarts = 3 if self.fit_ is None else self.refit_restarts
        models = [self.objective_model]
        if self.objective_model == "auto":  # one objective: the two models are one GP
            models = ["icm", "independent"] if self.n_objectives > 1 else ["icm"]
        refits = [
            self._fit_model(model, X_unit, Y_standard, mean, scale, seed, restarts, warping)
            for model in models
        ]
        # "auto": the model of higher marginal likelihood of the objectives (both fitted with
        # the same starts' seed; the constraints' blocks are the same model in both)
        return max(refits, key=lambda refit: _objectives_lml(refit.fit, self.n_objectives))

    def _fit_model(self, model, X_unit, Y_standard, mean, scale, seed, restarts, warping):
        """The objectives' ``model`` ("icm" or "independent") fitted beside the constraints."""
        t = len(X_unit)
        init = self.fit_ if self.warm_start and self.model_ == model else None
        width = self.box[:, 1] - self.box[:, 0]
        rng = np.random.default_rng(seed)
        n, m = self.n_objectives, self.n_tasks - self.n_objectives
        if model == "icm" and m == 0:
            fit = fit_icm_kernel(
                X_unit, Y_standard, n_restarts=restarts, random_state=rng, init=init,
                prior=self.prior, mean=self.mean,
            )  # fmt: skip
            kernel = Separable(RBF(fit.lengthscales * width), fit.B)
            if fit.mean is not None:  # (y − m)/s − c = (y − (m + s c))/s
                mean = mean + scale * fit.mean
            return Refit(kernel, float(fit.noise), fit, mean, scale, t, warping, model)
        # blocks fitted alone (.block_model.fit_block_kernels): the objectives' ICM or one
        # GP per objective, then every constraint by MAP (the block model of .constraints)
        blocks = [list(range(n))] if model == "icm" else [[i] for i in range(n)]
        blocks += [[n + j] for j in range(m)]
        priors = [self.prior] * (len(blocks) - m) + [True] * m
        fit = fit_block_kernels(X_unit, Y_standard, blocks, restarts, rng, init, priors, self.mean)
        kernel = SumOfSeparable([(RBF(ls * width), B) for ls, B in fit.terms])
        mean = mean + scale * fit.mean  # the rescaled outputs a_i ((y − m)/s − c)_i
        return Refit(kernel, float(fit.noise), fit, mean, scale / fit.rescale, t, warping, model)

    def accept(self, refit: Refit):
        """Use ``refit``'s fit and standardisation from now on.

        Parameters
        ----------
        refit : Refit
            A result of :meth:`refit`.

        Examples
        --------
        >>> learned = LearnedKernel(n_features=1, n_tasks=2, box=[[0.0, 1.0]], seed=0,
        ...                         refit_every=5)
        >>> X = np.linspace(0, 1, 6)[:, None]
        >>> refit = learned.refit(X, np.c_[np.sin(3 * X), np.cos(3 * X)])
        >>> learned.accept(refit)
        >>> learned.due(6), learned.due(11)
        (False, True)
        """
        self.fit_, self.mean_, self.scale_ = refit.fit, refit.mean, refit.scale
        self.model_ = refit.model
        self.warping_ = refit.warping
        self._fitted_at = refit.n_observations

    def standardize(self, Y, refit: Refit | None = None):
        """(ψ(Y) − m)/s with the current warping ψ of the objectives and standardisation (or
        ``refit``'s); a value too far from the data it was fitted on for the float range gives
        ±inf, never an overflow warning.

        Parameters
        ----------
        Y : array of shape (t, n_tasks) or (n_tasks,)
            Outputs in the user's units.
        refit : Refit, optional
            A fit whose standardisation to use instead of the current one.

        Returns
        -------
        ndarray
            The standardised outputs, of the shape of Y.

        Examples
        --------
        >>> learned = LearnedKernel(n_features=1, n_tasks=2, box=[[0.0, 1.0]], seed=0,
        ...                         refit_every=5)
        >>> learned.mean_, learned.scale_ = np.array([2.0, 20.0]), np.array([1.0, 10.0])
        >>> learned.standardize([[3.0, 0.0]])
        array([[ 1., -2.]])
        """
        mean, scale = (self.mean_, self.scale_) if refit is None else (refit.mean, refit.scale)
        warping = self.warping_ if refit is None else refit.warping
        if warping is not None:
            Y = np.array(Y, dtype=float)
            n = self.n_objectives
            with np.errstate(over="ignore", invalid="ignore"):
                Y[..., :n] = warping(Y[..., :n])
        with np.errstate(over="ignore"):
            return np.asarray(Y, dtype=float) / scale - mean / scale  # no y − m: it may overflow

    def scalarization(self, scalarization):
        """A fixed scalarisation on standardised outputs ŷ = (ψ(y) − m)/s: z maps like an
        output, ẑ = (ψ(z) − m)/s, and r to r̂ = (ψ(z + r) − ψ(z))/s; without a warping ψ
        this is exactly (y − z)/r = (ŷ − ẑ)/r̂, with one it is the same on the warped scale.

        Parameters
        ----------
        scalarization : Scalarization
            s_λ on the user's outputs, with a fixed reference z and scale r, or neither.

        Returns
        -------
        Scalarization
            The same s_λ as a function of standardised outputs.

        Examples
        --------
        >>> from manytask.bo import Chebyshev
        >>> learned = LearnedKernel(n_features=1, n_tasks=2, box=[[0.0, 1.0]], seed=0,
        ...                         refit_every=5)
        >>> learned.mean_, learned.scale_ = np.array([2.0, 20.0]), np.array([1.0, 10.0])
        >>> raw = Chebyshev(reference=[0.0, 0.0], scale=[1.0, 10.0])
        >>> Y, weights = np.array([[1.0, 10.0], [3.0, 30.0]]), np.array([0.5, 0.5])
        >>> learned.scalarization(raw)(learned.standardize(Y), weights), raw(Y, weights)
        (array([0.5, 1.5]), array([0.5, 1.5]))
        """
        if scalarization.reference is None and scalarization.scale is None:
            return scalarization  # raw objectives: z = 0 in the posterior's units
        scale = 1.0 if scalarization.scale is None else scalarization.scale
        z = 0.0 if scalarization.reference is None else scalarization.reference
        n = self.n_objectives
        outputs = np.zeros((2, self.n_tasks))
        outputs[:, :n] = z
        outputs[1, :n] += scale
        low, high = self.standardize(outputs)[:, :n]
        return type(scalarization)(low, high - low)

    def constraint_thresholds(self):
        """Where c_j = 0 lands in standardised units: −m_j/s_j for every constraint task.

        Returns
        -------
        ndarray of shape (n_tasks − n_objectives,)
            τ_j of :func:`~manytask.bo.constraints.optimistic_violation`.

        Examples
        --------
        >>> learned = LearnedKernel(n_features=1, n_tasks=2, box=[[0.0, 1.0]], seed=0,
        ...                         refit_every=5, n_constraints=1)
        >>> learned.mean_, learned.scale_ = np.array([0.0, 2.0]), np.array([1.0, 4.0])
        >>> learned.constraint_thresholds()
        array([-0.5])
        """
        return self.standardize(np.zeros(self.n_tasks))[self.n_objectives :]


def _objectives_lml(fit, n_objectives) -> float:
    """log p of the objectives under a fit: the ICM's, or the sum of their blocks'."""
    if not isinstance(fit, BlockFit):
        return fit.log_marginal_likelihood
    return sum(
        block_fit.log_marginal_likelihood
        for tasks, block_fit in zip(fit.blocks, fit.fits)
        if tasks[0] < n_objectives
    )
