"""``MultiTaskBO``: the ask/tell optimiser a user drives (finite candidates or a box).

Each ``ask`` draws λ_t ~ P_λ and maximises the policy's acquisition (:mod:`.policies`):
by an argmax over a finite candidate set (the paper), or on a box by multi-start L-BFGS-B
from the best points of a scrambled Sobol sample (:mod:`.search`). ``ask(k)`` proposes k
points for k parallel workers, each for its own λ; earlier picks and every pending (asked,
not told) point are hallucinated at the posterior mean, which leaves the mean alone and
shrinks the variance there. The k points differ: a batch never repeats a candidate, and on
a box they lie ``min_distance`` apart; a k that cannot be met is refused before any work.
Hallucinations are undone exactly afterwards (:mod:`.batch`).

The state (configuration, history, pending points, random generator) is JSON-serialisable
(:mod:`.checkpoint`); a run resumed from ``state_dict()`` replays the history through the
checks of ``tell`` and the same incremental updates, and proposes exactly what the
uninterrupted run would have. Every bad input raises a ValueError naming it before anything
changes (:mod:`.observations`).

Constraints c_j(x) ≤ 0 (``n_constraints=m``, ``tell(x, y, constraints=c)``) are the last m
tasks of the kernel, and every proposal weighs the acquisition by the probability of
feasibility or maximises it over the optimistic feasible set (:mod:`.constraints`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._validation import (
    as_finite_array,
    as_points,
    check_bool,
    check_int,
    check_positive,
    check_probability,
    check_seed,
)
from ..kernels import OperatorKernel
from ..posterior.nystrom import DICTIONARY_UPDATES, check_oversampling
from ..simplex import weight_sampler
from . import batch, checkpoint, metrics, search
from .constraints import FEASIBILITY_RULES
from .kernel_learning import MEANS
from .learned import LEARNED_BETA, OBJECTIVE_MODELS, LearnedKernel
from .observations import OUTPUT_LIMIT, check_observation
from .policies import ACQUISITIONS, ALGORITHMS, RADIUS_DRAWS, Policy, check_beta
from .scalarization import make_scalarization, value_range
from .transforms import OUTPUT_WARPINGS, check_bounds

__all__ = ["MultiTaskBO", "OUTPUT_LIMIT"]


class MultiTaskBO:
    """Multi-task Bayesian optimisation with random scalarisations, driven by ask/tell.

    Parameters
    ----------
    candidates : array of shape (N, d), optional
        A finite domain (the paper's setting). Exactly one of ``candidates`` and ``bounds``.
    bounds : array of shape (d, 2), optional
        A box [low, high] per dimension; the acquisition is maximised by L-BFGS-B.
    kernel : OperatorKernel or "auto"
        The multi-task kernel Γ over the objectives, then the constraints. ``"auto"``
        learns an ICM kernel (ARD input kernel, task matrix B = WWᵀ + diag(v), noise) by
        MAP (``kernel_prior``) every ``refit_every`` observations, on standardised outputs
        (see :mod:`.learned`). The defaults with ``"auto"`` (the augmented Chebyshev on the
        observed range, β = 1, the priors, a constant mean, a fresh fit every 4 observations,
        told candidates avoided and the expected improvement) are ours, not the paper's:
        measured on the 18 problem × noise cells of benchmarks/bench_bo_botorch.py, its 6
        held-out cells and the 3 constrained problems of benchmarks/bench_bo_constraints.py
        (benchmarks/RESULTS.md).
    algorithm : {"mt-kb", "mt-bkb", "it-kb", "it-bkb", "mobo"}
    scalarization : str, Scalarization or None
        s_λ: "chebyshev", "linear", "hypervolume", "augmented-chebyshev" or an instance
        (:mod:`.scalarization`). None (default): ``"augmented-chebyshev"`` (ParEGO's
        and BoTorch's, Chebyshev plus 0.05 × the linear term) with ``kernel="auto"`` (ours:
        +0.011 ± 0.004 of mean HV fraction on plain Chebyshev over the 24 cells of
        benchmarks/bench_bo_botorch.py and 0.867 → 0.874 on the 3 constrained problems, 20
        seeds; it lost bench_optuna's two boxes, ZDT1 by 0.03; benchmarks/RESULTS.md), the
        paper's ``"chebyshev"`` with a given kernel and for MOBO.
    weights : {"paria", "uniform", "dirichlet"}, array of shape (n,) or callable
        P_λ: a named distribution, a fixed λ, or ``weights(rng, n) -> λ``.
    noise : float
        η, the ridge / GP noise variance of the posterior (ignored for ``kernel="auto"``).
    delta, rkhs_bound, noise_std, epsilon : float
        δ, b, σ and ε of the theoretical radii (Theorems 2 and 3).
    beta : None, float or callable
        The radius (the multiplier of the posterior standard deviation): a number or
        ``beta(t)``. None: the algorithm's theory radius for a given kernel (conservative),
        :data:`~manytask.bo.learned.LEARNED_BETA` = 1 with ``kernel="auto"``.
    seed : int or None
        Seed of every random choice (weights, Sobol points, Nyström dictionaries); None
        draws one (kept in ``seed`` and in checkpoints).
    reference : "observed", "ideal", "pareto", "pareto-ideal", None or array of shape (n,)
        The reference point z of the scalarisation, which acts on normalised objectives
        (y − z)/r (:mod:`.scalarization`). ``"observed"`` (default): z and r are the
        observed minimum and range of every objective, updated at every tell (ParEGO's
        normalisation); an array: a fixed z given by the user; None: z = 0, r = 1 (raw
        objectives); ``"ideal"``: z at the observed maximum (ParEGO's Chebyshev form),
        ``"pareto"``/``"pareto-ideal"``: z and r from the non-dominated observations.
        :meth:`from_problem` uses the problem's known range instead.
    scale : array of shape (n,), optional
        The range r of every objective with a fixed ``reference`` (default 1).
    q, horizon : float, int
        Nyström oversampling for MT-BKB/IT-BKB; None means Theorem 3's q for ``horizon`` T.
    dictionary : {"resample", "incremental"}
        MT-BKB/IT-BKB: redraw the dictionary every round (Algorithm 2) or carry it over with
        non-increasing inclusion probabilities, so that it does not swing (batched BKB).
    n_tasks : int, optional
        Number of objectives. A kernel knows it (its tasks less ``n_constraints``); with
        ``kernel="auto"`` and no ``n_tasks`` it is taken from the first ``tell`` (points
        asked before that draw their λ then).
    n_constraints : int
        Number m of black-box constraints c_j(x) ≤ 0, told with every observation
        (``tell(x, y, constraints=c)``) and modelled as the last m tasks of the kernel;
        proposals follow ``feasibility``, and the Pareto front holds feasible observations
        only.
    feasibility : {"probability", "optimistic"}
        How proposals treat the constraints (:mod:`.constraints`): ``"probability"`` weighs
        the acquisition's improvement on the best feasible observation by the probability of
        feasibility (the constrained EI of Gardner et al. 2014 and Gelbart et al. 2014; with
        the UCB, its optimistic improvement in EI's place); ``"optimistic"`` maximises the
        acquisition over the optimistic feasible set, which keeps Theorem 2's step (UCB).
        The default is ours, not the paper's (which has no constraints): on three
        constrained problems of BoTorch's suite, with the default expected improvement,
        mean feasible HV fraction 0.814 against 0.777 over 20 seeds (C2-DTLZ2 0.565 against
        0.447; DiscBrake 0.924 against 0.945; with the UCB it led on two of the three;
        benchmarks/RESULTS.md).
    n_sobol, n_restarts : int
        Box domains: Sobol sample size (≥ 1) and number of L-BFGS-B starts (≥ 0).
    refit_every : int
        ``kernel="auto"``: observations between two fits of the kernel. The default 4 is
        ours, chosen with ``kernel_mean`` and ``kernel_warm_start`` (below): a fresh fit
        costs about 3× a warm-started one, and every 4 observations it costs about the time
        per round of the warm-started fit every 2 that it replaced (a fresh fit every 2 gained
        +0.006 more over the 18 cells at about 3× the time).
        A single-objective :class:`~manytask.bo.optuna.MultiTaskSampler` keeps 2 (in
        ``bench_optuna.py``'s box searches a warm refit every 3 lost: Hartmann6 regret 0.51
        against 0.19).
    min_distance : float in (0, 1]
        Box domains: the points of one ``ask(k)`` and the pending points lie at least this
        fraction of the box's side apart in some coordinate (a finite set never repeats a
        point within one ``ask(k)``).
    avoid_told : bool or None
        Box domains: every proposal also lies ``min_distance`` away from the told points,
        while the Sobol sample has points that far from them. A noise-free objective
        teaches nothing at a told point, yet the UCB's argmax can stay on the best one for
        good (the stuck seeds of ``benchmarks/bench_optuna.py``); a noisy one learns about
        as much ``min_distance`` away as at the point. On a finite set: told candidates are
        not proposed again while others remain. None (default): True with ``kernel="auto"``
        and not MOBO (ours: the expected improvement re-proposed told candidates, 17–33 distinct
        proposals of 40 on BraninCurrin; avoiding them gained +0.038 ± 0.015 of mean HV
        fraction on the 3 problems of benchmarks/bench_bo_constraints.py, 20 seeds, and
        0.000 ± 0.006 on the 24 cells of bench_bo_botorch.py, where it is within 0.01 of
        qLogNParEGO or above on 18 rather than 16; benchmarks/RESULTS.md), False with a
        given kernel and for MOBO (the paper's argmax).
    kernel_prior : bool
        ``kernel="auto"``: fit the objectives' kernel by MAP under BoTorch's log-normal
        priors of the lengthscales and the noise (Hvarfner, Hellsten & Nardi 2024;
        :func:`~manytask.bo.kernel_learning.fit_icm_kernel`) instead of by maximum marginal
        likelihood. Constraints are always fitted with the priors. The default (True) is
        ours, chosen with ``acquisition``'s default on both suites (below).
    kernel_restarts : int
        ``kernel="auto"``: optimiser starts of every refit after the first (which has 3):
        the previous fit, then a fresh data-driven guess, then random ones (1, the default:
        the previous fit only; 2 gained nothing on that suite at 3–9× the time).
    output_warping : {"none", "yeo-johnson", "rank", "rank-affine"}
        ``kernel="auto"``: a strictly increasing map ψ of every objective, refitted with the
        kernel, before the standardisation (:class:`~manytask.bo.transforms.OutputWarping`:
        Yeo-Johnson, the Gaussian rank transform, or that transform below the median and
        affine above it). It leaves the Pareto front unchanged;
        the posterior and the scalarisation then act on ψ(y). Theorem 2 covers ψ∘f only for
        a fixed ψ with ψ∘f in the RKHS ball; a ψ refitted to the data, like the
        standardisation itself, is outside it. The default ("none") is ours: on the 18
        cells of benchmarks/bench_bo_botorch.py (10 seeds) ``"rank"`` lost 0.021 of mean
        HV fraction to it (better on 3 cells; mean rank 7.94 against 4.83), and
        Yeo-Johnson lost on 3 of the 4 problems where the default trails qLogNParEGO.
    radius_draw : {"fixed", "exponential"}
        ``"exponential"``: every proposal multiplies the radius by its own draw from the
        exponential distribution of mean 1 (from the seeded generator), a randomised UCB in
        the manner of RGP-UCB (Berk, Gupta, Rana & Venkatesh, IJCAI 2020): a small draw
        exploits the posterior mean, which a constant radius never does; Theorem 2's step
        holds only for draws ≥ 1. The default ("fixed") is ours: on the 18 cells of
        benchmarks/bench_bo_botorch.py the draws gained 0.12 of HV fraction on DTLZ2
        (2 obj.) at noise 0.05 (0.249 to 0.367; qLogNParEGO 0.493) and lost 0.004 on
        average, up to 0.044 on a cell (docs/results/bo-dtlz2/results.md).
    acquisition : {"moment-ei", "ei", "noisy-ei", "mc-ei", "ucb"} or None
        What each proposal maximises: the expected improvement of s_λ on the best posterior
        mean at the feasible observations, taking s_λ(f(x)) as Gaussian with its mean and
        variance under the posterior (``"moment-ei"``; exact for a linear s_λ, Clark's 1961
        moments of the minimum for the Chebyshev forms, :meth:`.Scalarization.moments`), or
        with mean s_λ(μ_t(x)) and the bound L_λ ‖Γ_t(x, x)‖^{1/2} as its spread (``"ei"``,
        ParEGO's linearisation; :func:`~manytask.bo.policies.expected_improvement`), the
        latter taken jointly with each feasible observation x_j and the smallest kept
        (``"noisy-ei"``, after Letham et al. 2019: the width is that of f(x) − f(x_j), so no
        told point gains anything by itself; MT-KB and IT-KB), the improvement averaged over
        128 quasi-random draws of f(x) from the multi-task posterior (``"mc-ei"``, as
        qLogNParEGO; :func:`~manytask.bo.policies.sampled_improvement`), or the scalarised
        UCB of Algorithms 1–2 (the paper's). No regret bound is claimed for the improvements;
        none is for MOBO. With constraints each is the u of the ``feasibility`` rule
        (:mod:`.constraints`). None (default): ``"moment-ei"`` with ``kernel="auto"`` (ours;
        ``"ei"`` for the hypervolume scalarisation, which has no closed-form moments), the
        paper's ``"ucb"`` with a given kernel and for MOBO. ``"moment-ei"`` against ``"ei"``
        over the 24 cells of benchmarks/bench_bo_botorch.py (20 seeds): +0.010 ± 0.011 of
        mean HV fraction, ahead on 16 cells (DTLZ2 up to +0.13, where the bound's width sent
        the EI to the cube's corners), behind on the multimodal GMM (−0.16 at noise 0.05) and ZDT3
        (−0.07); within 0.01 of qLogNParEGO or above on 20 cells rather than 19, of
        qLogNEHVI on 14 of the 21 run rather than 10; the 3 constrained problems +0.003;
        on seven problems held out from that choice +0.027 ± 0.011 (20 seeds), within 0.01
        of qLogNParEGO on 11 of their 14 cells (benchmarks/RESULTS.md). Where several
        separate regions hold the front (GMM), ``"ei"`` explores more. ``"mc-ei"``
        estimates the exact improvement at about 1.5× the time per round.
    objective_model : {"independent", "auto", "icm"}
        ``kernel="auto"``: one GP per objective with its own lengthscales, variance and noise,
        the objectives' ICM, or at every refit both, keeping the one whose objectives have
        the higher log marginal likelihood (``"auto"``, Bayesian model selection by the
        evidence); every constraint is a GP of its own either way
        (:func:`~manytask.bo.block_model.fit_block_kernels`). The default ("independent") is
        ours: over the 38 cells of benchmarks/bench_bo_botorch.py (19 problems, two noise
        levels, 20 seeds) it ties with ``"auto"`` (+0.000 ± 0.003 of mean HV fraction) and
        comes within 0.01 of qLogNParEGO or above on 36 cells (``"auto"`` 35, the ICM 31); on
        17 of pymoo's problems, fixed before any run (10 seeds), it led ``"auto"`` by +0.007 ±
        0.006, within 0.01 of qLogNParEGO on 12 (``"auto"`` 11, the ICM 10), which decided
        between the two; on the 3 constrained problems +0.012; and it fits one model per refit
        rather than two: 0.9–1.4× the ICM's time per round, ``"auto"`` 1.5–2.6×
        (benchmarks/RESULTS.md). ``"icm"`` (a multi-task kernel B ⊗ k, the paper's form) is
        the fastest and finds more of the front on DTLZ7 (+0.08) and convex DTLZ4 (+0.12).
    kernel_mean : {"zero", "constant"}
        ``kernel="auto"``: the GP's mean on the standardised outputs, zero or a constant per
        task fitted with the kernel (BoTorch's ``ConstantMean``;
        :func:`~manytask.bo.kernel_learning.fit_icm_kernel`). The default ("constant") is ours:
        a zero mean puts the corners of the cube, far from the data, at the data's average,
        where the fitted constant sits below it (docs/results/bo-dtlz2/results.md).
    kernel_warm_start : bool
        ``kernel="auto"``: start every refit from the previous fit, or (False, the default,
        as BoTorch refits its models) only from the fresh starts of ``kernel_restarts``: a
        warm-started chain stays in the mode of its first fits. With ``kernel_mean=
        "constant"`` and ``refit_every=4`` it raised the mean HV fraction over the 18 cells
        of bench_bo_botorch.py by +0.026 (DTLZ2 (2 obj.) 0.279 → 0.434 and 0.227 → 0.554 at
        noise 0.05 / 0.01; no cell lower by more than its seeds' spread), left its 6
        held-out cells level (−0.000) and raised bench_bo_constraints.py's mean by +0.015
        (C2-DTLZ2 +0.080, DiscBrake −0.020), against the previous defaults (zero mean, a
        warm-started fit every 2).

    Examples
    --------
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

    One constraint, x ≤ 0.5, as a third task of the kernel:

    >>> G3 = mt.kernels.Separable(mt.kernels.RBF(0.2), mt.kernels.uniform_task_similarity(3, 0.4))
    >>> opt = mt.bo.MultiTaskBO(candidates=X, kernel=G3, n_constraints=1, seed=0)
    >>> for _ in range(5):
    ...     x = opt.ask()
    ...     _ = opt.tell(x, [np.sin(3 * x[0]), np.cos(3 * x[0])], constraints=[x[0] - 0.5])
    >>> bool(np.all(opt.pareto_front()[0] <= 0.5))
    True
    """

    def __init__(
        self,
        candidates=None,
        bounds=None,
        kernel="auto",
        algorithm="mt-kb",
        scalarization=None,
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
        n_constraints=0,
        feasibility="probability",
        n_sobol=1024,
        n_restarts=5,
        refit_every=4,
        min_distance=1e-3,
        avoid_told=None,
        kernel_prior=True,
        kernel_restarts=1,
        output_warping="none",
        radius_draw="fixed",
        acquisition=None,
        objective_model="independent",
        kernel_mean="constant",
        kernel_warm_start=False,
    ):
        if (candidates is None) == (bounds is None):
            raise ValueError("give exactly one of candidates (a finite set) and bounds (a box)")
        if candidates is not None:
            candidates = as_points(candidates, "candidates").copy()
            if len(candidates) == 0:
                raise ValueError("candidates must hold at least one point, got an empty array")
            with np.errstate(over="ignore"):
                span = candidates.max(axis=0) - candidates.min(axis=0)
            if isinstance(kernel, str) and not np.all(np.isfinite(span)):
                raise ValueError(  # the learned kernel works in the unit cube of their range
                    "candidates must span a range max − min within the float range in every "
                    f"dimension with kernel='auto', got {span.tolist()}"
                )
            candidates.flags.writeable = False
            self.n_features = candidates.shape[1]
        else:
            bounds = check_bounds(bounds).copy()
            bounds.flags.writeable = False
            self.n_features = bounds.shape[0]
        if n_tasks is not None:
            n_tasks = check_int(n_tasks, "n_tasks", minimum=1)
        self.n_constraints = check_int(n_constraints, "n_constraints", minimum=0)
        if feasibility not in FEASIBILITY_RULES:
            valid = ", ".join(FEASIBILITY_RULES)
            raise ValueError(f"feasibility must be one of {valid}, got {feasibility!r}")
        self.feasibility = feasibility
        if isinstance(kernel, str):
            if kernel != "auto":
                raise ValueError(f"kernel must be an OperatorKernel or 'auto', got {kernel!r}")
        elif not isinstance(kernel, OperatorKernel):
            raise ValueError(f"kernel must be an OperatorKernel or 'auto', got {kernel!r}")
        elif kernel.n_tasks <= self.n_constraints:
            raise ValueError(
                f"n_constraints={self.n_constraints} leaves no objective among the kernel's "
                f"{kernel.n_tasks} tasks"
            )
        elif n_tasks is not None and n_tasks + self.n_constraints != kernel.n_tasks:
            raise ValueError(
                f"n_tasks={n_tasks} objectives and n_constraints={self.n_constraints} but the "
                f"kernel has {kernel.n_tasks} tasks"
            )
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
        weight_sampler(weights, n_tasks)  # a bad name or λ is refused now, not at a tell
        self.candidates, self.bounds, self.kernel = candidates, bounds, kernel
        if isinstance(kernel, OperatorKernel):
            n_tasks = kernel.n_tasks - self.n_constraints
        self.algorithm, self.weights = algorithm, weights
        # the defaults with a learned kernel (ours) differ from the paper's (a given kernel, MOBO)
        ours = isinstance(kernel, str) and algorithm != "mobo"
        if scalarization is None:  # ParEGO's augmented Chebyshev with a learned kernel
            scalarization = "augmented-chebyshev" if ours else "chebyshev"
        self.scalarization = make_scalarization(scalarization, reference, scale)
        self.n_tasks = None  # set by _set_n_tasks, here or at the first tell
        self.noise, self.delta = check_positive(noise, "noise"), check_positive(delta, "delta")
        if not 0 < self.delta <= 1:
            raise ValueError(f"delta must lie in (0, 1], got {delta!r}")
        self.rkhs_bound = check_positive(rkhs_bound, "rkhs_bound", strict=False)
        self.noise_std = check_positive(noise_std, "noise_std", strict=False)
        self.epsilon = check_probability(epsilon, "epsilon")
        if check_seed(seed) is None:  # draw one, so that a checkpoint can still resume exactly
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        self.beta, self.seed = check_beta(beta), int(seed)
        self.q = None if q is None else check_oversampling(q)
        self.horizon = check_int(horizon, "horizon", minimum=1)
        if dictionary not in DICTIONARY_UPDATES:
            valid = ", ".join(DICTIONARY_UPDATES)
            raise ValueError(f"dictionary must be one of {valid}, got {dictionary!r}")
        self.dictionary = dictionary
        self.n_sobol = check_int(n_sobol, "n_sobol", minimum=1)
        self.n_restarts = check_int(n_restarts, "n_restarts", minimum=0)
        self.refit_every = check_int(refit_every, "refit_every", minimum=1)
        self.kernel_prior = check_bool(kernel_prior, "kernel_prior")
        self.kernel_restarts = check_int(kernel_restarts, "kernel_restarts", minimum=1)
        if output_warping not in OUTPUT_WARPINGS:
            valid = ", ".join(OUTPUT_WARPINGS)
            raise ValueError(f"output_warping must be one of {valid}, got {output_warping!r}")
        self.output_warping = output_warping
        if radius_draw not in RADIUS_DRAWS:
            valid = ", ".join(RADIUS_DRAWS)
            raise ValueError(f"radius_draw must be one of {valid}, got {radius_draw!r}")
        self.radius_draw = radius_draw
        if acquisition is None:  # EI of s_λ's moments with a learned kernel, else the UCB
            moments = self.scalarization.has_moments
            acquisition = ("moment-ei" if moments else "ei") if ours else "ucb"
        if acquisition not in ACQUISITIONS:
            valid = ", ".join(ACQUISITIONS)
            raise ValueError(f"acquisition must be one of {valid} or None, got {acquisition!r}")
        if acquisition != "ucb" and algorithm == "mobo":
            raise ValueError(
                f"acquisition={acquisition!r} needs an algorithm other than 'mobo', "
                f"got {algorithm!r}"
            )
        if acquisition == "moment-ei" and not self.scalarization.has_moments:
            raise ValueError(
                f"acquisition='moment-ei' needs a scalarization with closed-form moments "
                f"(linear, chebyshev, augmented-chebyshev), got {self.scalarization.name!r}"
            )
        if acquisition == "noisy-ei" and algorithm.endswith("bkb"):  # no Nyström cross-cov
            raise ValueError(
                f"acquisition='noisy-ei' needs the exact posterior (mt-kb, it-kb), got "
                f"algorithm={algorithm!r}"
            )
        self.acquisition = acquisition
        if objective_model not in OBJECTIVE_MODELS:
            raise ValueError(
                f"objective_model must be one of {', '.join(OBJECTIVE_MODELS)}, got "
                f"{objective_model!r}"
            )
        self.objective_model = objective_model
        if kernel_mean not in MEANS:
            raise ValueError(f"kernel_mean must be one of zero, constant, got {kernel_mean!r}")
        self.kernel_mean = kernel_mean
        self.kernel_warm_start = check_bool(kernel_warm_start, "kernel_warm_start")
        self.min_distance = check_positive(min_distance, "min_distance")
        if not self.min_distance <= 1:
            raise ValueError(f"min_distance must lie in (0, 1], got {min_distance!r}")
        if avoid_told is None:  # told candidates avoided with a learned kernel
            avoid_told = ours
        if not isinstance(avoid_told, (bool, np.bool_)):
            raise ValueError(f"avoid_told must be True, False or None, got {avoid_told!r}")
        self.avoid_told = bool(avoid_told)
        self._rng = np.random.default_rng(self.seed)
        self._X, self._Y, self._told_weights, self._pending = [], [], [], []
        self._learned, self._policy = None, None
        if candidates is not None:  # the distinct rows: ask(k)'s limit, and the told look-up
            distinct, self._candidate_group = np.unique(
                candidates + 0.0, axis=0, return_inverse=True
            )  # + 0.0: −0.0 and 0.0 are one row
            self._candidate_group = self._candidate_group.reshape(-1)  # (N,) on every NumPy
            self._n_distinct = len(distinct)
            self._group_of_row = {row.tobytes(): i for i, row in enumerate(distinct)}
        if n_tasks is not None:
            self._set_n_tasks(n_tasks)

    def _set_n_tasks(self, n_tasks):
        """Fix the number of objectives (given, the kernel's, or the first tell's)."""
        sample_weights = weight_sampler(self.weights, n_tasks)
        self.scalarization.check_tasks(n_tasks)
        self._sample_weights, self.n_tasks = sample_weights, n_tasks
        if isinstance(self.kernel, str):
            box = self._domain_box()
            self._learned = LearnedKernel(
                self.n_features, n_tasks + self.n_constraints, box, self.seed,
                self.refit_every, self.n_constraints, self.kernel_prior, self.kernel_restarts,
                self.output_warping, self.objective_model, self.kernel_mean,
                self.kernel_warm_start,
            )  # fmt: skip
        else:
            self._policy = self._make_policy(self.kernel, self.noise, self.beta)
            with np.errstate(over="ignore"):
                radius = self._policy.radius()
            if not np.isfinite(radius):
                raise ValueError(
                    f"rkhs_bound={self.rkhs_bound}, noise_std={self.noise_std}, "
                    f"noise={self.noise} and epsilon={self.epsilon} give a confidence radius "
                    "beyond the float range; pass smaller values, or beta="
                )
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
            n_constraints=self.n_constraints,
        )
        return policy.start(self.n_features, self.candidates)

    @classmethod
    def from_problem(cls, problem, algorithm="mt-kb", **overrides):
        """An optimiser with the candidate set, kernel, noise and bounds the paper used, and
        the scalarisation on the problem's known range: z = min f, r = max f − min f on the
        candidates (the reference point sits below all the data).

        Parameters
        ----------
        problem : Problem
            A test problem of :mod:`manytask.bo.problems`.
        algorithm : str
            The algorithm, as in the constructor.
        **overrides
            Further constructor arguments, replacing the problem's.

        Returns
        -------
        MultiTaskBO
            The optimiser, with nothing told yet.

        Examples
        --------
        >>> import manytask as mt
        >>> problem = mt.bo.problems.perturbed_sine()
        >>> opt = mt.bo.MultiTaskBO.from_problem(problem, seed=0)
        >>> opt.candidates.shape, opt.n_tasks
        ((101, 1), 4)
        """
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
        """One point (d,), or ``k`` different points (k, d) for k parallel workers.

        Each point maximises the policy's acquisition for its own λ ~ P_λ (Algorithms 1
        and 2 of the paper). On a finite set the k points are distinct candidates (pending
        points are avoided while others remain); on a box they and the pending points lie
        ``min_distance`` apart. If that cannot be done a ValueError says why, and nothing
        changes.

        Parameters
        ----------
        k : int, optional
            The number of points; None asks for one point, returned as a vector.

        Returns
        -------
        ndarray of shape (d,) or (k, d)
            The proposed points, pending until told.

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> opt.ask().shape, opt.ask(3).shape
        ((1,), (3, 1))
        >>> len(opt.pending_)
        4
        """
        count = 1 if k is None else check_int(k, "k", minimum=1)
        search.check_batch_size(
            count, len(self._pending), self.candidates, getattr(self, "_n_distinct", None),
            self.n_sobol, self.min_distance, self.n_features,
        )  # fmt: skip
        rng_state = self._rng.bit_generator.state
        try:
            proposals = batch.propose(self, count)
        except BaseException:
            self._rng.bit_generator.state = rng_state  # a failed ask leaves the state as it was
            raise
        self._pending.extend(proposals)
        points = np.array([x for x, _ in proposals])
        return points[0] if k is None else points

    def tell(self, x, y, constraints=None):
        """Record the objectives y (n,) and the constraints c (m,) observed at x (d,), asked
        or not; ``constraints`` is required when ``n_constraints`` > 0 (c_j ≤ 0 is feasible).

        NaN in y marks an objective not measured at x (decoupled evaluations): the exact
        posteriors (MT-KB, IT-KB, MOBO with a given kernel) condition on the measured ones.
        Constraints must be finite. Bad input raises a ValueError naming it, and nothing
        changes.

        Parameters
        ----------
        x : array of shape (d,)
            The point evaluated.
        y : array of shape (n,)
            The objectives at x (to be maximised); NaN where not measured.
        constraints : array of shape (m,), optional
            The constraint values c_j(x).

        Returns
        -------
        MultiTaskBO
            The optimiser itself.

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> x = opt.ask()
        >>> opt.tell(x, [1.0, 2.0]).Y_
        array([[1., 2.]])
        """
        x, y, c = check_observation(self, x, y, constraints)
        if self.n_tasks is None:
            self._set_n_tasks(y.shape[0])
        asked = next((i for i, (p, _) in enumerate(self._pending) if np.array_equal(p, x)), None)
        weights = np.full(self.n_tasks, np.nan) if asked is None else self._pending[asked][1]
        self._observe(x, np.r_[y, c], weights)
        if asked is not None:
            del self._pending[asked]
        return self

    def _observe(self, x, y, weights):
        """Add a checked observation (objectives, then constraints); everything that can fail
        runs before anything changes."""
        if self._learned is None:
            self._policy.add(x, y)
        else:
            X, Y = np.array(self._X + [x]), np.array(self._Y + [y])
            standardized = None
            if self._policy is not None:
                standardized = self._learned.standardize(y[None, :])[0]
            # a y far outside the data of the last fit (its standardised value would overflow
            # the posterior, as with a given kernel) triggers a refit, which rescales
            far = standardized is not None and not np.all(np.abs(standardized) <= OUTPUT_LIMIT)
            if self._learned.due(len(X)) or far:  # a new kernel: rebuild the posterior
                refit = self._learned.refit(X, Y)
                beta = self.beta if self.beta is not None else LEARNED_BETA
                policy = self._make_policy(refit.kernel, refit.noise, beta)
                # one factorisation of all t points, equal to t incremental adds
                outputs = self._learned.standardize(Y, refit)
                policy.posterior.fit(X, outputs, candidates=self.candidates)
                self._learned.accept(refit)
                self._policy = policy
            elif self._policy is not None:
                self._policy.add(x, standardized)
        self._X.append(x)
        self._Y.append(y)
        self._told_weights.append(np.asarray(weights, dtype=float))

    def _scalarization(self):
        """The scalarisation of the next proposal, in the units of the posterior."""
        if self._learned is None:
            return self.scalarization.fitted(self.Y_)
        if self.scalarization.adaptive:
            outputs = self._learned.standardize(np.array(self._Y))
            return self.scalarization.fitted(outputs[:, : self.n_tasks])
        return self._learned.scalarization(self.scalarization)

    # ---- results -------------------------------------------------------------------------
    @property
    def X_(self):
        """Told points, shape (t, d).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> opt.X_
        array([[0.2],
               [0.7]])
        """
        return np.array(self._X).reshape(-1, self.n_features)

    @property
    def Y_(self):
        """Told objectives, shape (t, n); NaN where an objective was not measured.

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> opt.Y_.shape
        (2, 2)
        """
        return self._outputs()[:, : self.n_tasks or 0]

    @property
    def constraints_(self):
        """Told constraint values c_j(x), shape (t, m).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> opt.constraints_.shape
        (2, 0)
        """
        return self._outputs()[:, self.n_tasks or 0 :]

    def _outputs(self):
        width = (self.n_tasks or 0) + self.n_constraints
        return np.array(self._Y, dtype=float).reshape(len(self._Y), width)

    @property
    def feasible_(self):
        """True for every told point that satisfies every constraint, shape (t,).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> opt.feasible_
        array([ True,  True])
        """
        return np.all(self.constraints_ <= 0, axis=1)

    @property
    def weights_(self):
        """λ drawn for every told point (NaN for points told without being asked), (t, n).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> x = opt.ask()
        >>> _ = opt.tell(x, [1.0, 2.0]).tell([0.5], [0.0, 0.0])
        >>> bool(np.isclose(opt.weights_[0].sum(), 1.0)), bool(np.isnan(opt.weights_[1]).all())
        (True, True)
        """
        return np.array(self._told_weights, dtype=float).reshape(len(self._Y), self.n_tasks or 0)

    @property
    def pending_(self):
        """Points asked and not yet told, shape (k, d).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> x = opt.ask()
        >>> opt.pending_.shape, opt.tell(x, [1.0, 2.0]).pending_.shape
        ((1, 1), (0, 1))
        """
        return np.array([x for x, _ in self._pending]).reshape(-1, self.n_features)

    def pareto_front(self):
        """(X, Y) of the told points whose observations no other observation dominates
        (among the feasible points with every objective measured).

        Returns
        -------
        X : ndarray of shape (p, d)
            The Pareto-optimal points.
        Y : ndarray of shape (p, n)
            Their objectives.

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> _ = opt.tell([0.5], [0.1, 0.2])  # dominated by (0.2, 0.8)
        >>> opt.pareto_front()[0]
        array([[0.2],
               [0.7]])
        """
        complete = ~np.isnan(self.Y_).any(axis=1) & self.feasible_
        X, Y = self.X_[complete], self.Y_[complete]
        mask = metrics.pareto_mask(Y)
        return X[mask], Y[mask]

    def hypervolume(self, reference):
        """Hypervolume dominated by the observed Pareto front and bounded by ``reference``.

        Parameters
        ----------
        reference : array of shape (n,)
            The reference point, below the front in every objective.

        Returns
        -------
        float
            The hypervolume (:func:`manytask.bo.metrics.hypervolume`).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> round(opt.hypervolume([0.0, 0.0]), 6)  # 0.2·0.8 + 0.5·0.3
        0.31
        """
        reference = as_finite_array(reference, "reference", ndim=1)
        return metrics.hypervolume(self.pareto_front()[1], reference)

    # ---- checkpoints (the JSON form is in :mod:`.checkpoint`) ------------------------------
    def state_dict(self) -> dict:
        """Everything needed to resume, as plain JSON-serialisable values.

        Returns
        -------
        dict
            The configuration, the told and pending points and the random generator's state
            (:mod:`.checkpoint`).

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> state = opt.state_dict()
        >>> state["format"], len(state["X"])
        ('manytask.MultiTaskBO', 2)
        """
        return checkpoint.state_of(self)

    @classmethod
    def from_state_dict(cls, state: dict, **overrides) -> MultiTaskBO:
        """Resume from :meth:`state_dict`: same proposals as the uninterrupted run.

        Every told row (x, y, c) goes through the checks of :meth:`tell`, every λ and pending
        point through those of :meth:`ask`; a bad entry raises a ValueError naming it
        (``state['Y'][3]``).

        Parameters
        ----------
        state : dict
            A state from :meth:`state_dict`.
        **overrides
            Constructor arguments to give again (a callable ``weights`` or ``beta``) or
            to change.

        Returns
        -------
        MultiTaskBO
            The resumed optimiser.

        Examples
        --------
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> resumed = mt.bo.MultiTaskBO.from_state_dict(opt.state_dict())
        >>> bool(np.array_equal(resumed.ask(), opt.ask()))
        True
        """
        return checkpoint.restore(cls, state, overrides)

    def save(self, path) -> Path:
        """Write the state as JSON atomically (temporary file + rename).

        Parameters
        ----------
        path : str or Path
            The file to write; its directory must exist.

        Returns
        -------
        Path
            The file written.

        Examples
        --------
        >>> import tempfile
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     path = opt.save(f"{folder}/bo.json")
        ...     resumed = mt.bo.MultiTaskBO.load(path)
        >>> path.name, resumed.seed
        ('bo.json', 0)
        """
        return checkpoint.write_atomically(path, self.state_dict())

    @classmethod
    def load(cls, path, **overrides) -> MultiTaskBO:
        """Resume from a file written by :meth:`save`.

        Parameters
        ----------
        path : str or Path
            The JSON file.
        **overrides
            Constructor arguments, as in :meth:`from_state_dict`.

        Returns
        -------
        MultiTaskBO
            The resumed optimiser.

        Examples
        --------
        >>> import tempfile
        >>> import manytask as mt
        >>> B = mt.kernels.uniform_task_similarity(2, 0.4)
        >>> G = mt.kernels.Separable(mt.kernels.RBF(0.2), B)
        >>> opt = mt.bo.MultiTaskBO(candidates=np.linspace(0, 1, 11)[:, None], kernel=G, seed=0)
        >>> for x in (0.2, 0.7):
        ...     _ = opt.tell([x], [x, 1 - x])
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     resumed = mt.bo.MultiTaskBO.load(opt.save(f"{folder}/bo.json"))
        >>> resumed.X_.shape
        (2, 1)
        """
        return cls.from_state_dict(checkpoint.read_state(path), **overrides)
