"""∞-QR: every conditional quantile of y given x from one fit (``infinite-task-learning.txt``).

:class:`InfiniteQuantileRegressor` minimises, over the decomposable model of Prop. 3.1 on
standardised data (X and y centred and scaled to unit variance),

    Σ_j w_j (1/n) Σ_i ℓ^κ_θj(y_i − h(x_i)(θ_j))                       risk, eqs. (8)–(9)
    + λ/2 ‖f‖²_{H_K} + λ_b/2 ‖b‖²_{H_kb}                              ridge, eq. (11), §3 bias
    + λ_nc Σ_j w_j (1/n) Σ_i |−∂_θh(x_i)(θ_j)|^κ₊                    non-crossing, eq. (14)

with h = f + b, ℓ^κ the Huber-smoothed pinball loss and |·|^κ₊ the smoothed positive part of
:mod:`~manytask.itl.losses` (the infimal convolution of §5 "Note on optimization"; κ = 0 is
the exact objective). The non-crossing term averages over the n points (eq. (13) with
P = P_X; eq. (14) as printed sums, i.e. uses λ_nc·n), so λ_nc = 1 means the same at every n.
The bias b(θ) = Σ_j c_j k_b(θ, θ_j) uses a Gaussian k_b with the θ bandwidth and its own
weight λ_b (§3.3 "Models with bias"), small by default so that the intercept is nearly free,
as in JQR.

By default (``lambda_=None``) λ and the input bandwidth are chosen inside ``fit`` from the
data, cheaply: held-out thirds, one factorisation per bandwidth, a warm-started λ path
(:mod:`~manytask.itl.selection`), then the stacked average of the refits of the settings the
held-out fits weight (``aggregate``), each started from the thirds' fits and stopped at the
selection's tolerance; ``cv=K`` chooses them
by K-fold cross-validation, as the paper's experiments did (§5); a given ``lambda_`` fixes
them (the paper's model with fixed hyper-parameters).

Eq. (14) sees h only at the training inputs, so the paper's model h can still cross at other
inputs. By default :meth:`InfiniteQuantileRegressor.predict` returns the monotone
rearrangement of h(x)(·) (``rearrange=True``, ours, not the paper's): non-decreasing in the
level at every input, for any levels asked; ``rearrange=False`` is the paper's model h
itself. Two more remedies, ours and off by default, act in the fit: ``monotone_bias`` (the
penalty on b, which is h far from the data) and ``extra_crossing_points`` (the penalty also
on inputs drawn from a smoothed P_X).

The fit on the anchors, shared with the baselines JQR and IND-QR
(:mod:`~manytask.itl.baselines`), lives in :mod:`~manytask.itl.kernel_quantile`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import check_bool, check_int, check_positive, unchanged_on_error
from ..kernels import RBF
from ._choice import choose
from ._estimator import check_bandwidth, random_generator, ridge_penalty
from .conformal import ConformalIntervalsMixin
from .kernel_quantile import DEFAULT_QUANTILES, KernelQuantileBase, quantile_risk
from .losses import check_quantiles
from .model import DecomposableModel
from .selection import CV_TOL, HOLDOUT_FOLDS, held_out_risk, stacking_weights

__all__ = ["InfiniteQuantileRegressor", "iteration_budget"]

#: Grid points per tail on which :meth:`InfiniteQuantileRegressor.predict` takes its
#: running minimum (maximum) beyond the outer anchors.
TAIL_GRID = 33
#: Below this many training points ``lambda_=None`` averages the held-out risk over all
#: HOLDOUT_FOLDS folds (a third of a small set is too few points to rank settings by: on
#: BostonHousing, 354 training points, one third picks a setting of test pinball×100 51.3,
#: the three 45.8; ``benchmarks/RESULTS.md``, ``bench_itl_selection``).
SMALL_SET = 1000
#: L-BFGS-B iterations per fit of the path of ``lambda_=None`` (warm-started: early stopping).
SELECTION_MAX_ITER = 50
#: λ of ``lambda_=None`` on fewer than 2 × HOLDOUT_FOLDS points (our earlier fixed default).
FALLBACK_LAMBDA = 1e-3
#: Settings of stacking weight below this are dropped from the average of ``aggregate=True``
#: (and the others' weights rescaled to sum to 1): each member costs a refit.
MIN_MEMBER_WEIGHT = 0.01
#: Loosest L-BFGS-B ``ftol`` of the member refits of ``aggregate=True`` (each from its fold
#: fits' mean): the selection's :data:`~manytask.itl.selection.CV_TOL`.
MEMBER_TOL = CV_TOL
#: Attributes an earlier ``fit`` with ``cv`` or a ``calibrate`` left, dropped by ``fit``.
FIT_DEPENDENT = (
    "cv_risks_",
    "selected_lambda_",
    "selected_input_bandwidth_",
    "conformity_scores_",
    "calibration_models_",
    "calibration_folds_",
    "members_",
)
#: Midpoint grid on [θ_1, θ_m] on which ``rearrange=True`` sorts h(x)(·).
REARRANGEMENT_GRID = 256
#: ``n_components="auto"`` is the exact model up to this many training points (the size up to
#: which :func:`~manytask.itl.whitening.pivoted_cholesky` factorises a formed Gram matrix).
EXACT_MAX_ROWS = 5000
#: Nyström landmarks of ``n_components="auto"`` beyond :data:`EXACT_MAX_ROWS` points.
LARGE_N_COMPONENTS = 300
#: Anchors of ``n_anchors=None`` beyond :data:`EXACT_MAX_ROWS` points.
LARGE_N_ANCHORS = 20
#: Dtype of the input features Φ of ``n_components="auto"`` beyond :data:`EXACT_MAX_ROWS`
#: points (their n-row products in float32; the rest in float64).
LARGE_N_DTYPE = np.float32
#: Beyond this many training points the choice of λ and bandwidth (``lambda_=None`` or
#: ``cv``) runs on a random subset of this many, the first stage of the continuation.
SELECTION_ROWS = 5000
#: Growth of the continuation's stages: SELECTION_ROWS × CONTINUATION_FACTOR^k rows, up to
#: half the training points, then all of them.
CONTINUATION_FACTOR = 10
#: λ down to which a fit at a chosen λ runs ``max_iter`` L-BFGS-B iterations (the largest of
#: :data:`~manytask.itl.selection.LAMBDA_PATH`); below it, :func:`iteration_budget`.
BUDGET_LAMBDA = 1e-2


def iteration_budget(max_iter, lambda_):
    """L-BFGS-B iterations of a fit at a chosen λ: ⌈max_iter × max(1, √(BUDGET_LAMBDA/λ))⌉.

    Ours. In the whitened coordinates the ridge adds λ I to the Hessian of the data term, so
    the problem's condition number grows like 1/λ, and the iterations that L-BFGS-B (like
    conjugate gradients) needs to reach a fixed tolerance like its square root; measured
    in ``benchmarks/RESULTS.md`` ("∞-QR's refit budget at a small chosen λ").

    Parameters
    ----------
    max_iter : int
        Iterations at λ >= :data:`BUDGET_LAMBDA`.
    lambda_ : float
        The ridge weight λ > 0 of the fit.

    Returns
    -------
    int
        The budget, at least ``max_iter``.

    Examples
    --------
    >>> iteration_budget(2000, 1e-2), iteration_budget(2000, 1e-4)
    (2000, 20000)
    """
    return max(max_iter, math.ceil(max_iter * math.sqrt(BUDGET_LAMBDA / lambda_)))


def continuation_sizes(n_samples):
    """The warm stages' sizes of a fit on ``n_samples`` > :data:`SELECTION_ROWS` points."""
    sizes = [SELECTION_ROWS]
    while sizes[-1] * CONTINUATION_FACTOR <= n_samples / 2:
        sizes.append(sizes[-1] * CONTINUATION_FACTOR)
    return sizes


class InfiniteQuantileRegressor(ConformalIntervalsMixin, KernelQuantileBase):
    """∞-QR: the whole conditional quantile function θ ↦ q_θ(x) from one fit (eqs. 8–15).

    Parameters
    ----------
    lambda_ : float or None, default=None
        Ridge weight λ > 0 of eq. (11), on standardised data. None (our default): λ from
        :data:`~manytask.itl.selection.LAMBDA_PATH` and, unless ``input_kernel`` or
        ``input_bandwidth`` is given, the bandwidth from
        :data:`~manytask.itl.selection.BANDWIDTH_FACTORS` × the median heuristic, of least
        integrated pinball risk averaged over the 3 held-out thirds of the training set
        (shuffled with ``random_state``; the first third only from :data:`SMALL_SET` points
        on), then one refit on all of it, started from the thirds' fits at the chosen
        setting: a warm-started path of at most 4 λ per bandwidth on 2/3 of the data, each
        fit stopped after :data:`SELECTION_MAX_ITER` iterations, the path where its held-out
        risk rises (cost, and the criteria compared, in ``benchmarks/RESULTS.md``); with
        ``aggregate`` (the default) the refits of the settings of the stacked average
        instead of the one of least risk. Ours: the
        paper chose them by 5-fold CV (§5), which ``cv=5`` does, and our earlier default
        was a fixed λ = 1e-3, which over-smooths where the noise is largest; a choice from
        the data on the broad Table-1 suite is what brings the test pinball within the
        paper's. With fewer than 6 points,
        λ = :data:`FALLBACK_LAMBDA`. A float: that λ, fixed (and the bandwidth given or
        the median heuristic).
    lambda_nc : float, default=1.0
        Weight λ_nc >= 0 of the non-crossing penalty (14) (averaged over the points).
    lambda_b : float, default=1e-6
        Weight λ_b >= 0 of ‖b‖²_{H_kb}, the bias's own ridge (§3.3 "Models with bias").
    n_anchors : int or None, default=None
        Number m of anchors in (0, 1); None means min(⌈√n⌉, 100), and at least 20 for
        Gauss–Legendre; with ``n_components="auto"`` beyond :data:`EXACT_MAX_ROWS` points,
        :data:`LARGE_N_ANCHORS` (see the large-n Notes).
    quadrature : {"gauss-legendre", "sobol"}, default="gauss-legendre"
        Rule of the anchors and weights (:mod:`~manytask.itl.quadrature`). Gauss–Legendre's
        outer nodes approach 0 and 1 like 1.45/(m + ½)² (0.0034 for m = 20); the first m
        unscrambled Sobol points stop at 2^-⌈log₂(m + 1)⌉ (0.03 for m = 20).
    input_kernel : Kernel or None, default=None
        k_X on standardised inputs; None means a Gaussian (RBF) with ``input_bandwidth``.
    input_bandwidth : float or None, default=None
        Bandwidth of the default k_X; None means the median heuristic on standardised X.
    theta_bandwidth : float, default=0.2
        Bandwidth of the Gaussian k_Θ (and of the Gaussian bias kernel k_b).
    kappa : float, default=1e-2
        Huber smoothing κ >= 0 of the pinball loss and of the positive part (in units of the
        standardised y); 0 is the exact, non-smooth objective.
    bias : bool, default=True
        Add b(θ) = Σ_j c_j k_b(θ, θ_j) with a Gaussian k_b (§3.3, "Models with bias").
    max_iter : int, default=2000
        L-BFGS-B iterations of a fit at a given ``lambda_``. At a λ chosen in ``fit``
        (``lambda_=None`` or ``cv``) the fit on all the data runs up to
        ⌈max_iter × max(1, √(1e-2/λ))⌉ (:func:`iteration_budget`, ours: the iterations
        grow like 1/√λ; 31.6 × max_iter at the path's smallest λ = 1e-5).
    tol : float, default=1e-8
        L-BFGS-B ``ftol`` (``gtol`` is tol/100); beyond :data:`SELECTION_ROWS` points the
        fit also stops by the statistical rule of the large-n Notes.
    random_state : None, int or numpy Generator, default=None
        Used by the median heuristic when n > 1000 (random subset) and to draw the Nyström
        landmarks.
    n_components : "auto", int or None, default="auto"
        None: the exact model (k_X on all n training points). An integer r: the low-rank
        model on Nyström features Φ = K_{X,Z} K_{Z,Z}^{-1/2} of r landmarks Z drawn from the
        training points with ``random_state``: memory O(n r + r m), time per L-BFGS-B
        iteration O(n r q + n q m), q <= 2m the θ rank; r >= n is the exact model. "auto"
        (ours): None up to :data:`EXACT_MAX_ROWS` points, r = :data:`LARGE_N_COMPONENTS`
        beyond, where the exact features (memory n × rank K_X, a rank near n for a Gaussian
        kernel on several inputs) no longer fit (see the large-n Notes).
    monotone_bias : bool, default=False
        Our remedy, not the paper's: add λ_nc Σ_j w_j |−b'(θ_j)|^κ₊, the non-crossing
        penalty at an input far from every training point (where h = b). False is eq. (14).
    extra_crossing_points : int, default=0
        Our remedy, not the paper's: evaluate the non-crossing mean of eq. (14) also on this
        many inputs per training point, drawn (with ``random_state``) from P_X smoothed by a
        Gaussian of half the k_X lengthscale
        (:func:`~manytask.itl.kernel_quantile.smoothed_inputs`); they carry no y, and reach
        test inputs between the training points. Costs (1 + e) × the rows of the exact
        model. 0 is eq. (14).
    rearrange : bool, default=True
        Ours, not the paper's: :meth:`predict` returns the monotone rearrangement of
        h(x)(·) on [θ_1, θ_m] (Chernozhukov, Fernández-Val & Galichon 2010, Econometrica 78:
        the quantile function of h(x)(U), U uniform on [θ_1, θ_m]), sorted on a midpoint
        grid of :data:`REARRANGEMENT_GRID` levels and interpolated linearly between them: no
        crossing at any input for any levels, no farther (in any L^p over levels) from a
        non-decreasing true quantile function than h itself, and no larger a pinball loss
        summed over the grid (at every y: the rearrangement inequality). It changes
        :meth:`predict` only, not the fit. False: the paper's model h(x)(θ) as fitted (what
        the reproductions of Table 1 and Figure 1 report).
    cv : int or None, default=None
        None: the hold-out choice of ``lambda_=None``, or the given ``lambda_``. An integer
        K >= 2: choose λ from :data:`~manytask.itl.selection.LAMBDA_PATH` (``lambda_`` is
        then ignored) and, unless ``input_kernel`` or ``input_bandwidth`` is given, the
        bandwidth from :data:`~manytask.itl.selection.BANDWIDTH_FACTORS` × the median
        heuristic, by K-fold cross-validation of the integrated pinball risk, then refit on
        all the data (the paper chose them by 5-fold CV, §5;
        :func:`~manytask.itl.selection.cross_validate_quantiles`). Folds drawn with
        ``random_state``; the selection ignores ``extra_crossing_points``. With fewer than
        2K points the selection is skipped. Beyond :data:`SELECTION_ROWS` points it runs on
        a random subset of that many (see the large-n Notes).
    verbose : int, default=1
        0: silent. 1: a tqdm progress bar over the L-BFGS-B iterations of the final fit on
        stderr once that fit has run :data:`~manytask.itl._estimator.PROGRESS_DELAY`
        seconds (long fits only). 2 or more: the bar from the start.
    aggregate : bool, default=True
        With ``lambda_=None`` (and no ``cv``) up to :data:`SELECTION_ROWS` points, ours:
        the fitted model is the weighted average Σ_s w_s h_s of the refits h_s of the grid's
        settings, w the convex weights of least held-out integrated pinball risk of the
        average of the settings' held-out fits
        (:func:`~manytask.itl.selection.stacking_weights`, "stacking"; settings of weight
        below :data:`MIN_MEMBER_WEIGHT` dropped). Each h_s is refitted from its setting's
        thirds' fits with L-BFGS-B's ``ftol`` at max(``tol``, :data:`MEMBER_TOL`) (ours: on
        the 20 Table-1 sets as accurate as refitting them to ``tol``, at 2/3 of its CPU;
        from zero to ``tol`` with ``n_components`` or ``extra_crossing_points``). Averaging
        the settings near the least held-out risk lowers the variance of picking one of
        them on few points: on the 20 Table-1 sets it had the lowest mean test pinball of
        the six rules screened (``benchmarks/RESULTS.md``, ``bench_itl_aggregate`` and
        ``bench_itl_forest``). False: the single setting of least held-out risk, refitted
        (our earlier default).

    Attributes
    ----------
    anchors_, weights_ : arrays of shape (m,)
        Quadrature of the levels.
    model_ : DecomposableModel
        The fitted model, on its landmarks: the pivots of K_X (exact model, see Notes) or the
        r Nyström landmarks; ``params_`` its packed coefficients [vec A, vec B, c].
    objective_ : float
        The minimised objective (standardised units); ``n_iter_`` the L-BFGS-B iterations.
    converged_ : bool
        Whether L-BFGS-B met its tolerance within ``max_iter`` (else a ConvergenceWarning).
    n_components_ : int
        Rank r of the input features the fit used (numerical rank of K_X or K_{Z,Z}).
    selected_lambda_, selected_input_bandwidth_ : float
        With ``cv`` or ``lambda_=None``: the chosen λ and bandwidth (None when
        ``input_kernel`` is given).
    cv_risks_ : array of shape (bandwidths, λ)
        With ``cv`` or ``lambda_=None``: the mean held-out integrated pinball risk
        (standardised y); +∞ past the first rise along a bandwidth's λ path (not fitted).
    members_ : list of (weight, λ, input bandwidth, DecomposableModel, params)
        With ``aggregate``: the averaged refits, heaviest first; ``model_``, ``params_``,
        ``objective_``, ``n_iter_`` and ``converged_`` are the heaviest one's.
    conformity_scores_ : array of shape (200, n_cal)
        After :meth:`calibrate`: the conformity scores of every grid level
        (:mod:`~manytask.itl.conformal`), read by :meth:`predict_interval`; ``fit`` drops
        them.

    Notes
    -----
    Levels outside the anchors. Between the outer anchors θ_1 and θ_m the model h(x)(θ) is
    predicted as it is. Below θ_1, :meth:`predict` returns the running minimum
    min_{θ' ∈ [θ, θ_1]} h(x)(θ') (above θ_m, the running maximum over [θ_m, θ]), taken on a
    grid: non-decreasing in θ, so the extrapolated curves never cross each other or the
    fitted ones, and they stay at the outer anchor's value where h turns back (as a Gaussian
    k_Θ makes it do far from the anchors). With the default Gauss–Legendre anchors this
    concerns levels below 1.45/(m + ½)² only.

    The fit runs L-BFGS-B in whitened coordinates
    (:class:`~manytask.itl.whitening.WhitenedModel`), where the ridge penalty is ‖V‖²: the
    same problem as over (A, B, c), whose Hessian K_X ⊗ M is ill-conditioned. The exact
    K_X = Φ Φᵀ comes from a pivoted Cholesky factorisation to float precision
    (:func:`~manytask.itl.whitening.pivoted_cholesky`), so memory and time grow with n r,
    r the numerical rank of K_X.

    Large n (ours, not the paper's). With ``n_components="auto"`` (the default), beyond
    :data:`EXACT_MAX_ROWS` training points the fit uses :data:`LARGE_N_COMPONENTS` Nyström
    landmarks, features Φ stored in :data:`LARGE_N_DTYPE` (float32: half the memory, and
    the n-row products Φ V and Φᵀ G in single precision) and (unless ``n_anchors`` is
    given) :data:`LARGE_N_ANCHORS` anchors: the θ side of the model has rank about 22 at
    the default θ bandwidth, so more anchors add time, not directions. Beyond
    :data:`SELECTION_ROWS` points (any ``n_components``) the rows are taken in a random
    order (``random_state``); the choice of λ and bandwidth (``lambda_=None``, or ``cv``)
    runs on the first :data:`SELECTION_ROWS`, with the same features; then a continuation
    minimises the final problem on the first :data:`SELECTION_ROWS` ×
    :data:`CONTINUATION_FACTOR`^k rows (k = 0, 1, … up to half the rows), each stage from
    the previous one's solution, and finally on all of them. Each stage, and the final
    fit, also stops once the objective has fallen by less than ŝ/√n_stage over 10
    iterations, ŝ the standard deviation of the per-row risk
    (:func:`~manytask.itl.kernel_quantile.statistical_stop`): the standard error of the
    empirical risk, below which its decrease is not resolved by the data (``tol`` still
    applies). Beyond :data:`~manytask.itl.blockwise.BLOCK_ROWS` rows the objective and
    its gradient are summed over blocks of rows on as many threads as BLAS has
    (:func:`~manytask.itl.blockwise.blockwise_data_term`): memory O(n r) for the features
    plus O(block × m) per thread. Measured on n = 10⁶, d = 10 in ``benchmarks/RESULTS.md``
    (``bench_itl_large``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(20, 1)); y = X[:, 0] + 0.1 * rng.normal(size=20)
    >>> model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=5, random_state=0).fit(X, y)
    >>> model.predict(X[:3], quantiles=[0.05, 0.5, 0.95]).shape
    (3, 3)
    """

    def __init__(
        self,
        lambda_=None,
        lambda_nc=1.0,
        lambda_b=1e-6,
        n_anchors=None,
        quadrature="gauss-legendre",
        input_kernel=None,
        input_bandwidth=None,
        theta_bandwidth=0.2,
        kappa=1e-2,
        bias=True,
        max_iter=2000,
        tol=1e-8,
        random_state=None,
        n_components="auto",
        monotone_bias=False,
        extra_crossing_points=0,
        rearrange=True,
        cv=None,
        verbose=1,
        aggregate=True,
    ):
        self.lambda_ = lambda_
        self.lambda_nc = lambda_nc
        self.lambda_b = lambda_b
        self.n_anchors = n_anchors
        self.quadrature = quadrature
        self.input_kernel = input_kernel
        self.input_bandwidth = input_bandwidth
        self.theta_bandwidth = theta_bandwidth
        self.kappa = kappa
        self.bias = bias
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_components = n_components
        self.monotone_bias = monotone_bias
        self.extra_crossing_points = extra_crossing_points
        self.rearrange = rearrange
        self.cv = cv
        self.verbose = verbose
        self.aggregate = aggregate

    @unchanged_on_error
    def fit(self, X, y):
        """Fit every quantile at once on (X, y); returns ``self``.

        Minimises the ITL objective of eqs. (8)–(15) (pinball risk integrated over the
        anchors, non-crossing penalty, ridge), after choosing λ (and the input bandwidth)
        on held-out data when ``lambda_`` is None or ``cv`` is set.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Training inputs, n >= 2.
        y : array-like of shape (n,)
            Training targets.

        Returns
        -------
        self
            Fitted.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(20, 1)); y = X[:, 0] + 0.1 * rng.normal(size=20)
        >>> model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=5, random_state=0)
        >>> model.fit(X, y).anchors_.shape
        (5,)
        """
        self._check_common_params(allow_none_lambda=True)
        lambda_nc = check_positive(self.lambda_nc, "lambda_nc", strict=False)
        theta_bandwidth = check_bandwidth(self.theta_bandwidth, "theta_bandwidth")
        for name in ("bias", "monotone_bias", "rearrange", "aggregate"):
            check_bool(getattr(self, name), name)
        X, y = self._validate_training_data(X, y)
        auto = isinstance(self.n_components, str) and self.n_components == "auto"
        large = auto and len(y) > EXACT_MAX_ROWS
        n_anchors = LARGE_N_ANCHORS if self.n_anchors is None and large else self.n_anchors
        quadrature = self._default_anchors(len(y), n_anchors, rule=self.quadrature)
        theta_kernel = RBF(theta_bandwidth)
        bias_kernel = RBF(theta_bandwidth) if self.bias else None
        n_extra = check_int(self.extra_crossing_points, "extra_crossing_points", minimum=0)
        folds = check_int(self.cv, "cv", minimum=2, allow_none=True)
        check_int(self.verbose, "verbose", minimum=0)
        max_iter = check_int(self.max_iter, "max_iter")
        n_components = None if auto else self.n_components
        n_components = check_int(n_components, "n_components", allow_none=True)
        chosen = {"n_components": n_components}
        if large:
            chosen.update(n_components=LARGE_N_COMPONENTS, feature_dtype=LARGE_N_DTYPE)
        for name in FIT_DEPENDENT:
            self.__dict__.pop(name, None)  # none left from an earlier fit or calibration
        kernels = (theta_kernel, bias_kernel)
        X_select, y_select = X, y
        if len(y) > SELECTION_ROWS:  # random order: the first rows are a random subset
            order = random_generator(self.random_state).permutation(len(y))
            X, y = X[order], y[order]
            X_select, y_select = X[:SELECTION_ROWS], y[:SELECTION_ROWS]
            chosen["warm_sizes"] = continuation_sizes(len(y))
        selection = (X_select, y_select, quadrature, kernels, lambda_nc, chosen["n_components"])
        if folds is not None and len(y) >= 2 * folds:
            chosen.update(self._select(*selection, folds, math.inf, max_iter))
        elif folds is None and self.lambda_ is None and len(y) >= 2 * HOLDOUT_FOLDS:
            iterations = min(SELECTION_MAX_ITER, max_iter)
            aggregate = self.aggregate and X_select is X
            chosen.update(self._select(*selection, HOLDOUT_FOLDS, SMALL_SET, iterations, aggregate))
        elif self.lambda_ is None:
            chosen["lambda_"] = FALLBACK_LAMBDA
        # The selection's features are the refit's (same points, kernel and pivots): start
        # from the fold fits' mean at the chosen setting.
        warm = n_components is None and n_extra == 0 and X_select is X
        start, members = chosen.pop("start", None), chosen.pop("members", None)
        fit = functools.partial(
            self._fit_on_levels, X, y, quadrature, theta_kernel, bias_kernel, lambda_nc,
            self.monotone_bias, n_extra * len(y),
        )  # fmt: skip
        if members is None:
            if "lambda_" in chosen:  # a λ the user did not fix: a budget that grows as it shrinks
                chosen["max_iter"] = iteration_budget(max_iter, chosen["lambda_"])
            return fit(**chosen, start=start if warm else None)
        fitted = []
        for weight, lambda_, bandwidth, start in sorted(members, key=lambda m: m[0]):
            setting = {
                "lambda_": lambda_,
                "input_bandwidth": bandwidth,
                "max_iter": iteration_budget(max_iter, lambda_),
                "tol": max(self.tol, MEMBER_TOL) if warm else None,
            }
            fit(**{**chosen, **setting}, start=start if warm else None)
            fitted.append((weight, lambda_, bandwidth, self.model_, self.params_))
        self.members_ = fitted[::-1]  # the heaviest, fitted last, first
        return self

    def _select(
        self,
        X,
        y,
        quadrature,
        kernels,
        lambda_nc,
        n_components,
        folds,
        small_set,
        max_iter,
        aggregate=False,
    ):
        """λ, bandwidth and the refit's warm start by :func:`~manytask.itl._choice.choose`:
        ``folds`` folds (all of them below ``small_set`` points, else the first), path fits
        capped at ``max_iter`` iterations, on ``n_components`` (None: exact) features;
        with ``aggregate`` also the ``members`` (weight, λ, bandwidth, warm start) of the
        stacked average (weights on the held-out rows)."""
        X_standardised, y_standardised = self._standardise_X(X), self._standardise_y(y)
        anchors, weights = quadrature.anchors, quadrature.weights

        def make_whitened(kernel):
            model = DecomposableModel(kernel, *kernels)
            return self._precompute(model, X_standardised, anchors, n_components)

        def data_term(y_fold):
            return quantile_risk(
                y_fold, anchors, weights, lambda_nc, self.kappa, self.monotone_bias
            )

        def penalty(lambda_):
            return ridge_penalty(lambda_, self.lambda_b)

        def score(held_out, params, y_held_out):
            return held_out_risk(held_out, params, y_held_out, anchors, weights)

        lambda_, bandwidth, start, *fits = choose(
            self, X_standardised, y_standardised, make_whitened, data_term, penalty, score,
            max_iter, folds=folds, small_set=small_set, return_start=True,
            return_fits=aggregate,
        )  # fmt: skip
        chosen = {"lambda_": lambda_, "input_bandwidth": bandwidth, "start": start}
        if aggregate:
            settings = list(fits[0])
            values = [fits[0][setting][1] for setting in settings]
            rows = ~np.isnan(values[0][:, 0])  # the held-out rows
            stacked = stacking_weights(
                [value[rows] for value in values], y_standardised[rows], anchors, weights
            )
            kept = stacked >= MIN_MEMBER_WEIGHT
            chosen["members"] = [
                (float(w / stacked[kept].sum()), *setting, fits[0][setting][0])
                for w, setting, keep in zip(stacked, settings, kept)
                if keep
            ]
        return chosen

    def _model_quantiles(self, X_standardised, levels):
        """h(x)(levels) in the units of y; with ``members_`` the average Σ_s w_s h_s."""
        if not hasattr(self, "members_"):
            return super()._model_quantiles(X_standardised, levels)
        total = 0.0
        for weight, _, _, model, params in self.members_:
            alpha, beta, bias = model.unpack(params)
            total = total + weight * model.predict(
                alpha, beta, bias, X=X_standardised, theta=levels
            )
        return self.y_mean_ + self.y_scale_ * total

    def predict(self, X, quantiles=0.5):
        """Conditional quantiles at level(s) ``quantiles`` in (0, 1): the median by default.

        A scalar level gives shape (N,); a sequence of k levels gives (N, k), column l for
        ``quantiles[l]``. With ``rearrange=True`` (the default) the answer is non-decreasing
        in the level, row by row, for any levels; ``rearrange=False`` gives the paper's
        model h(x)(θ). Levels outside the outer anchors get the monotone extension of the
        Notes.

        Parameters
        ----------
        X : array-like of shape (N, d)
            Inputs.
        quantiles : float or sequence of float in (0, 1), default=0.5
            Level(s) θ.

        Returns
        -------
        ndarray of shape (N,) or (N, k)
            The conditional quantiles, in the units of y.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(size=(20, 1)); y = X[:, 0] + 0.1 * rng.normal(size=20)
        >>> model = InfiniteQuantileRegressor(lambda_=1e-3, n_anchors=5, random_state=0)
        >>> quantiles = model.fit(X, y).predict(X[:4], [0.1, 0.5, 0.9])
        >>> quantiles.shape, bool(np.all(np.diff(quantiles, axis=1) >= 0))
        ((4, 3), True)
        """
        levels = check_quantiles(quantiles)
        X = self._transform_X(self._validate_test_data(X))
        lowest, highest = float(self.anchors_.min()), float(self.anchors_.max())
        below, above = levels < lowest, levels > highest
        if self.rearrange and highest > lowest:  # every column is set below: no h(x)(levels)
            values, inside = np.empty((len(X), len(levels))), ~(below | above)
            values[:, inside], ends = self._rearranged(X, levels[inside], lowest, highest)
        else:
            values = self._model_quantiles(X, levels)
        if np.any(below):
            values[:, below] = self._tail(X, levels[below], lowest, np.minimum)
            if self.rearrange and highest > lowest:
                values[:, below] = np.minimum(values[:, below], ends[:, :1])
        if np.any(above):
            values[:, above] = self._tail(X, levels[above], highest, np.maximum)
            if self.rearrange and highest > lowest:
                values[:, above] = np.maximum(values[:, above], ends[:, 1:])
        return values[:, 0] if np.ndim(quantiles) == 0 else values

    def _score_predictions(self, X):
        """What :meth:`predict` returns at the levels of :meth:`score`, and those levels."""
        levels = np.asarray(DEFAULT_QUANTILES)
        return self.predict(X, levels), levels

    def _rearranged(self, X, levels, lowest, highest):
        """Sorted h(x)(·) on a midpoint grid of [lowest, highest], read at ``levels``.

        Returns the values at ``levels`` and the (N, 2) smallest and largest sorted values.
        """
        size = REARRANGEMENT_GRID
        grid = lowest + (np.arange(size) + 0.5) / size * (highest - lowest)
        ordered = np.sort(self._model_quantiles(X, grid), axis=1)
        position = (levels - lowest) / (highest - lowest) * size - 0.5
        below = np.clip(np.floor(position).astype(int), 0, size - 2)
        fraction = np.clip(position - below, 0.0, 1.0)[None, :]
        values = (1 - fraction) * ordered[:, below] + fraction * ordered[:, below + 1]
        return values, ordered[:, [0, -1]]

    def _tail(self, X, levels, anchor, envelope):
        """Running min (max) of h(x)(·) from ``anchor`` out to each of ``levels``."""
        far = levels.min() if envelope is np.minimum else levels.max()
        grid = np.union1d(np.linspace(far, anchor, TAIL_GRID), levels)  # sorted increasing
        values = self._model_quantiles(X, grid)
        if envelope is np.minimum:  # accumulate from the anchor (right end) leftwards
            values = np.minimum.accumulate(values[:, ::-1], axis=1)[:, ::-1]
        else:
            values = np.maximum.accumulate(values, axis=1)
        return values[:, np.searchsorted(grid, levels)]
