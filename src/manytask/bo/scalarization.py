"""Scalarisations s_λ: Rⁿ → R and their ℓ2-Lipschitz constants L_λ (paper §2).

All act on normalised objectives ŷ_i = (y_i − z_i) / r_i, with a reference point z (below
the data, or at its best values with ``reference="ideal"``) and a range r > 0 per objective:

``Linear``: s_λ(y) = Σ_i λ_i ŷ_i, L_λ = ‖λ/r‖₂ (Cauchy–Schwarz, attained along λ/r).
``Chebyshev``: s_λ(y) = min_i λ_i ŷ_i = min_i (λ_i/r_i)(y_i − z_i), the paper's form with
weights λ_i/r_i; L_λ = max_i λ_i/r_i: |min_i a_i − min_i b_i| ≤ max_i |a_i − b_i| ≤
max_i (λ_i/r_i) ‖u − v‖_∞ ≤ max_i (λ_i/r_i) ‖u − v‖₂, attained along the basis vector of the
largest λ_i/r_i. Both are monotone in every coordinate, so their maximisers are weakly
Pareto optimal (Chebyshev's can tie with a point that is better in a non-binding objective).

``AugmentedChebyshev`` (ParEGO, Knowles 2006; BoTorch's ``get_chebyshev_scalarization``):
s_λ(y) = min_i λ_i ŷ_i + α Σ_i λ_i ŷ_i, α = 0.05, strictly increasing, so its maximisers are
Pareto optimal; L_λ = (α² ‖a‖₂² + (1 + 2α) max_i a_i²)^{1/2}, a = λ/r (the largest gradient
norm of its linear pieces, :meth:`AugmentedChebyshev.lipschitz`).

``Hypervolume`` (Golovin & Zhang 2020): s_λ(y) = min_i max(0, ŷ_i/λ_i)ⁿ with λ taken to
the unit sphere (λ/‖λ‖₂). For λ uniform on the positive unit sphere (``weights=
"unit-sphere"``) the expectation of its maximum over a set is the hypervolume that set
dominates above z, in normalised units: HV = c_n E_λ[max_y s_λ(y)], c_n = π^{n/2} /
(2ⁿ Γ(n/2 + 1)) (their Lemma 5), so maximising it at random λ targets the hypervolume.
L_λ: t(y) = min_i max(0, ŷ_i/λ_i) is max_i 1/(λ_i r_i)-Lipschitz in ‖·‖_∞ (as Chebyshev),
and u ↦ uⁿ is n Tⁿ⁻¹-Lipschitz on [0, T]; on the box z ≤ y ≤ z + r, where ŷ ≤ 1 and so
t ≤ T = min_i 1/λ_i, L_λ = n Tⁿ⁻¹ max_i 1/(λ_i r_i). With ``reference="observed"`` that
box is the observed range; outside it the bound does not hold (a larger y only raises s).

For F ~ N(m, Γ), :meth:`Scalarization.moments` gives E s_λ(F) and Var s_λ(F) (the
expected improvement of ``acquisition="moment-ei"``): exact for ``Linear``; for the minimum
of the Chebyshev forms Clark's (1961) formulas, exact for two objectives and applied one
objective at a time beyond; ``Hypervolume`` has none.

Where z and r come from:

- ``reference=None``: z = 0 and r = 1, the raw objectives (the paper's formula with z = 0).
  A Chebyshev term λ_i y_i with y_i < 0 then *falls* as λ_i grows, so the weights no longer
  say which objective matters, and R_C is dominated by a few exploration rounds.
- ``reference=z`` (and optionally ``scale=r``): fixed, given by the user, or for a known
  problem its range on the candidate set (z = min_x f(x), r = max_x f(x) − z).
- ``reference="observed"``: ParEGO's normalisation (Knowles 2006): z and r are the observed
  minimum and range of every objective, recomputed from the data by :meth:`fitted` before
  every proposal. The scalarisation then changes as data arrive.
- ``reference="ideal"``: r the observed range, z the observed maximum, so ŷ ∈ [−1, 0]: the
  Chebyshev scalarisation is then minus the weighted distance to the ideal point, ParEGO's
  form (with ``AugmentedChebyshev``, exactly BoTorch's ``get_chebyshev_scalarization`` of
  the observations). Its maximiser for λ lies on the ray from the ideal point along −1/λ,
  the observed-minimum form's on the ray from z along 1/λ. Not for ``Hypervolume``.
- ``reference="pareto"``, ``"pareto-ideal"``: as ``"observed"`` and ``"ideal"`` with z and
  r from the non-dominated observations only (:func:`pareto_range`).

R_C and R_B (:mod:`.metrics`) are computed with one fixed scalarisation for the whole run:
a fixed one as given, an ``"observed"`` one fitted to the problem's values on the candidate
set (its known range). So R_C is in units of each objective's range on the candidates, the
same for every algorithm, and for a Chebyshev scalarisation each regret term lies in [0, 1].
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from .._validation import as_finite_array

__all__ = [
    "Scalarization",
    "Linear",
    "Chebyshev",
    "AugmentedChebyshev",
    "Hypervolume",
    "SCALARIZATIONS",
    "make_scalarization",
    "value_range",
    "pareto_range",
]

#: The data-driven references: which observations give z and r, and where z sits.
ADAPTIVE = {
    "observed": ("all", "nadir"),
    "ideal": ("all", "ideal"),
    "pareto": ("pareto", "nadir"),
    "pareto-ideal": ("pareto", "ideal"),
}


def value_range(Y):
    """(z, r): per objective, the minimum and the range (max − min) of the finite values of
    Y (t, n); r = 1 where fewer than two distinct values exist, z = 0 where none does.

    Parameters
    ----------
    Y : array of shape (t, n)
        Observed objectives; NaN and ±inf are ignored.

    Returns
    -------
    reference : ndarray of shape (n,)
        z, the minimum of every objective.
    scale : ndarray of shape (n,)
        r, its range.

    Examples
    --------
    >>> value_range(np.array([[1.0, 5.0], [3.0, np.nan]]))
    (array([1., 5.]), array([2., 1.]))
    """
    Y = np.asarray(Y, dtype=float)
    finite = np.isfinite(Y)
    low = np.where(finite, Y, np.inf).min(axis=0, initial=np.inf)
    high = np.where(finite, Y, -np.inf).max(axis=0, initial=-np.inf)
    seen = np.isfinite(low)
    span = np.where(seen, high - low, 0.0)
    return np.where(seen, low, 0.0), np.where(span > 0, span, 1.0)


def pareto_range(Y):
    """(z, r) of :func:`value_range` over the non-dominated rows of Y (maximisation); an
    objective with a single value there takes its range over all the rows.

    Parameters
    ----------
    Y : array of shape (t, n)
        Observed objectives; rows with a NaN or ±inf take no part in the Pareto set.

    Returns
    -------
    reference : ndarray of shape (n,)
        z, the minimum of every objective over the Pareto set.
    scale : ndarray of shape (n,)
        r, its range there.

    Examples
    --------
    >>> pareto_range(np.array([[0.0, 4.0], [2.0, 2.0], [1.0, 1.0], [5.0, -7.0]]))
    (array([ 0., -7.]), array([ 5., 11.]))
    """
    from .metrics import pareto_mask  # metrics builds on this module

    Y = np.asarray(Y, dtype=float)
    low, span = value_range(Y)
    finite = Y[np.all(np.isfinite(Y), axis=1)]
    if len(finite) == 0:
        return low, span
    front = finite[pareto_mask(finite)]
    front_low, front_span = value_range(front)
    single = np.ptp(front, axis=0) == 0
    return np.where(single, low, front_low), np.where(single, span, front_span)


class Scalarization:
    """s_λ(y) for outputs Y (N, n) and weights λ (n,) → (N,), or weights (M, n) → (M, N).

    Parameters
    ----------
    reference : None, "observed", "ideal", "pareto", "pareto-ideal" or array of shape (n,)
        The reference point z (see the module docstring).
    scale : None or array of shape (n,)
        The range r > 0 of every objective (None: 1, or the observed range).

    Examples
    --------
    >>> s = Chebyshev(reference=[0.0, 1.0], scale=[1.0, 2.0])
    >>> s.normalize([[1.0, 3.0]]), s.lipschitz([0.5, 0.5])
    (array([[1., 1.]]), 0.5)
    """

    name = "scalarization"

    def __init__(self, reference=None, scale=None):
        if isinstance(reference, str):
            if reference not in ADAPTIVE:
                valid = ", ".join(repr(name) for name in ADAPTIVE)
                raise ValueError(f"reference must be None, {valid} or an array, got {reference!r}")
            if scale is not None:
                raise ValueError(f"scale must be None with reference={reference!r} (observed)")
        elif reference is not None:
            reference = as_finite_array(reference, "reference", 1)
        if scale is not None:
            scale = as_finite_array(scale, "scale", 1)
            if np.any(scale <= 0):
                raise ValueError(f"scale must be > 0 in every objective, got {scale.tolist()}")
        self.reference, self.scale = reference, scale

    @property
    def adaptive(self) -> bool:
        """True when z and r are taken from the data (a named ``reference``).

        Examples
        --------
        >>> Linear("observed").adaptive, Linear([0.0, 0.0]).adaptive
        (True, False)
        """
        return isinstance(self.reference, str)

    def fitted(self, Y) -> Scalarization:
        """This scalarisation with z and r fixed: from the values Y (t, n) when adaptive.

        Parameters
        ----------
        Y : array of shape (t, n)
            The observed objectives (:func:`value_range`).

        Returns
        -------
        Scalarization
            Of the same type with a fixed z and r, or this one if it is not adaptive.

        Examples
        --------
        >>> fixed = Chebyshev("observed").fitted([[1.0, 5.0], [3.0, 9.0]])
        >>> fixed.reference, fixed.scale
        (array([1., 5.]), array([2., 4.]))
        """
        if not self.adaptive:
            return self
        Y = np.asarray(Y, dtype=float)
        rows, corner = ADAPTIVE[self.reference]
        reference, scale = value_range(Y) if rows == "all" else pareto_range(Y)
        if corner == "ideal":  # the best observed value of every objective
            best = np.where(np.isfinite(Y), Y, -np.inf).max(axis=0, initial=-np.inf)
            reference = np.where(np.isfinite(best), best, reference + scale)
        return type(self)(reference, scale)

    def check_tasks(self, n_tasks: int):
        """Raise a ValueError if a fixed reference or scale does not have n_tasks entries.

        Parameters
        ----------
        n_tasks : int
            The number of objectives n.

        Examples
        --------
        >>> Linear([0.0, 0.0]).check_tasks(3)
        Traceback (most recent call last):
        ...
        ValueError: reference must have 3 entries, got 2
        """
        for name in ("reference", "scale"):
            value = getattr(self, name)
            if isinstance(value, np.ndarray) and value.shape[0] != n_tasks:
                raise ValueError(f"{name} must have {n_tasks} entries, got {value.shape[0]}")

    def normalize(self, Y) -> np.ndarray:
        """ŷ = (y − z) / r.

        Parameters
        ----------
        Y : array of shape (N, n)
            Objectives.

        Returns
        -------
        ndarray of shape (N, n)
            The normalised objectives.

        Examples
        --------
        >>> Linear(reference=[1.0, 0.0], scale=[2.0, 4.0]).normalize([[3.0, 2.0]])
        array([[1. , 0.5]])
        """
        if self.adaptive:
            raise ValueError("an observed reference must be fitted to data first: fitted(Y)")
        Y = np.asarray(Y, dtype=float)
        if self.reference is not None:
            Y = Y - self.reference
        return Y if self.scale is None else Y / self.scale

    def _effective_weights(self, weights):
        """λ_i / r_i: the weights of the raw objectives."""
        weights = np.asarray(weights, dtype=float)
        return weights if self.scale is None else weights / self.scale

    def __call__(self, Y, weights) -> np.ndarray:
        """s_λ(y) for every row of Y, for one λ or for each of M.

        Parameters
        ----------
        Y : array of shape (N, n)
            Objectives.
        weights : array of shape (n,) or (M, n)
            λ on the simplex.

        Returns
        -------
        ndarray of shape (N,) or (M, N)
            The scalarised values.

        Examples
        --------
        >>> Chebyshev()(np.array([[1.0, 3.0], [2.0, 2.0]]), np.array([[0.5, 0.5], [1.0, 0.0]]))
        array([[0.5, 1. ],
               [0. , 0. ]])
        """
        raise NotImplementedError

    def of_draws(self, mean, root, weights, base_samples) -> np.ndarray:
        """s_λ(μ_m + R_m z_k) for every point m and draw k.

        The draws of a Gaussian posterior F ~ N(μ, R Rᵀ) that
        :func:`~manytask.bo.policies.sampled_improvement` averages over.

        Parameters
        ----------
        mean : array of shape (M, n)
            μ_m.
        root : array of shape (M, n, n)
            R_m.
        weights : array of shape (n,)
            λ.
        base_samples : array of shape (K, n)
            z_k.

        Returns
        -------
        ndarray of shape (M, K)

        Examples
        --------
        >>> Chebyshev().of_draws(np.zeros((1, 2)), np.eye(2)[None], [0.5, 0.5], [[1.0, -2.0]])
        array([[-1.]])
        """
        mean_hat, root_hat = self._normalized_draws(mean, root)
        n = mean_hat.shape[1]
        # objective-major (n, M, K), handed over as an (M·K, n) view: s_λ then reduces over
        # n along contiguous rows, several times faster than over a trailing axis of length n
        draws = np.swapaxes(root_hat, 0, 1) @ np.asarray(base_samples, dtype=float).T
        draws += np.ascontiguousarray(mean_hat.T)[:, :, None]
        return type(self)()(draws.reshape(n, -1).T, weights).reshape(len(mean_hat), -1)

    def _normalized_draws(self, mean, root):
        """μ̂ = (μ − z)/r and R̂ = diag(1/r) R: the draws of ŷ are μ̂ + R̂ z."""
        mean, root = self.normalize(mean), np.asarray(root, dtype=float)
        return mean, root if self.scale is None else root / self.scale[:, None]

    def _weighted_draws(self, mean, root, weights, base_samples):
        """λ_i ŷ_i = a_mi + b_mi · z_k of every draw (a = λ∘μ̂, b_mi = λ_i R̂_m[i]), and the
        draws z_k as columns: (a (M, n), b (M, n, n), Zᵀ (n, K))."""
        mean_hat, root_hat = self._normalized_draws(mean, root)
        weights = np.asarray(weights, dtype=float)
        samples_t = np.ascontiguousarray(np.asarray(base_samples, dtype=float).T)
        return mean_hat * weights, root_hat * weights[:, None], samples_t

    @staticmethod
    def _sum_of_terms(offsets, slopes, samples_t):
        """Σ_i λ_i ŷ_i of every draw, (M, K), from :meth:`_weighted_draws`: one product."""
        total = slopes.sum(axis=1) @ samples_t
        total += offsets.sum(axis=1)[:, None]
        return total

    @staticmethod
    def _min_of_terms(offsets, slopes, samples_t):
        """min_i λ_i ŷ_i of every draw, (M, K), from :meth:`_weighted_draws`, built one
        objective at a time: (M, K) arrays, no (M, K, n) one."""
        values = None
        for i in range(offsets.shape[1]):
            term = slopes[:, i, :] @ samples_t
            term += offsets[:, i, None]
            values = term if values is None else np.minimum(values, term, out=values)
        return values

    # moments() is available (acquisition="moment-ei")
    has_moments = False

    def moments(self, mean, cov, weights):
        """The mean and variance of s_λ(F) for F ~ N(m, Γ) at every point.

        What ``acquisition="moment-ei"`` takes for the law of the scalarised objective
        (:meth:`~manytask.bo.policies.Policy.acquisition`): exact for :class:`Linear`,
        Clark's (1961) recursion for the minimum in the Chebyshev forms.

        Parameters
        ----------
        mean : array of shape (M, n)
            m at M points.
        cov : array of shape (M, n, n)
            Γ at M points.
        weights : array of shape (n,)
            λ.

        Returns
        -------
        mean, variance : ndarray of shape (M,)

        Examples
        --------
        >>> Linear().moments(np.zeros((1, 2)), np.eye(2)[None], [0.5, 0.5])
        (array([0.]), array([0.5]))
        """
        raise NotImplementedError(f"the {self.name} scalarisation has no closed-form moments")

    def _weighted_moments(self, mean, cov, weights):
        """The terms λ_i ŷ_i of F ~ N(m, Γ): means (M, n) and covariances (M, n, n)."""
        slopes = self._effective_weights(weights)
        cov = np.asarray(cov, dtype=float) * np.outer(slopes, slopes)
        return self.normalize(mean) * np.asarray(weights, dtype=float), cov

    @staticmethod
    def _sum_moments(means, covs):
        """E Σ_i T_i and Var Σ_i T_i = Σ_ij Cov(T_i, T_j), (M,) each, as products with ones
        (NumPy's reductions over short trailing axes are several times slower)."""
        n = means.shape[1]
        return means @ np.ones(n), covs.reshape(len(covs), n * n) @ np.ones(n * n)

    @staticmethod
    def _min_moments(means, covs):
        """Mean, variance and covariance with every term (M, n) of min_i T_i, T ~ N(means, covs).

        Clark (1961, "The greatest of a finite set of random variables"): for two jointly
        Gaussian T_1, T_2 with a² = Var(T_1 − T_2) and g = (E T_2 − E T_1)/a,
        E min = E T_1 Φ(g) + E T_2 Φ(−g) − a φ(g),
        E min² = (E² T_1 + Var T_1) Φ(g) + (E² T_2 + Var T_2) Φ(−g) − (E T_1 + E T_2) a φ(g),
        Cov(min, Y) = Cov(T_1, Y) Φ(g) + Cov(T_2, Y) Φ(−g). Exact moments for n = 2; for
        more terms the minimum so far is taken as Gaussian before the next (Clark's method).
        """
        low_mean, low_var = means[:, 0].copy(), covs[:, 0, 0].copy()
        low_cov = covs[:, 0, :].copy()
        for i in range(1, means.shape[1]):
            term_mean, term_var, term_cov = means[:, i], covs[:, i, i], covs[:, i, :]
            # a = 0 (T_i − min known) floored: g = ±∞ keeps the smaller mean, or g = 0 a tie
            with np.errstate(over="ignore", under="ignore"):
                spread = np.sqrt(np.maximum(low_var + term_var - 2 * low_cov[:, i], 1e-300))
                gap = (term_mean - low_mean) / spread
                density = spread * np.exp(-0.5 * gap * gap) / np.sqrt(2 * np.pi)  # a φ(g)
            keep = ndtr(gap)  # Φ(g) = P(T_i > the minimum so far)
            other = 1.0 - keep
            second = (low_mean * low_mean + low_var) * keep
            second += (term_mean * term_mean + term_var) * other
            second -= (low_mean + term_mean) * density
            low_mean = low_mean * keep + term_mean * other - density
            low_var = np.maximum(second - low_mean * low_mean, 0.0)
            low_cov = low_cov * keep[:, None] + term_cov * other[:, None]
        return low_mean, low_var, low_cov

    def lipschitz(self, weights) -> float:
        """L_λ with |s_λ(u) − s_λ(v)| ≤ L_λ ‖u − v‖₂ (see the module docstring).

        It scales the confidence radius of the scalarised objective (the paper's §3).

        Parameters
        ----------
        weights : array of shape (n,)
            λ.

        Returns
        -------
        float
            L_λ.

        Examples
        --------
        >>> Linear().lipschitz([0.6, 0.8]), Chebyshev().lipschitz([0.6, 0.8])
        (1.0, 0.8)
        """
        raise NotImplementedError

    def to_config(self) -> dict:
        """The name, reference and scale as plain JSON values (:func:`make_scalarization`
        reads them back).

        Returns
        -------
        dict
            ``{"name": ..., "reference": ..., "scale": ...}``.

        Examples
        --------
        >>> Chebyshev(reference=[0.0, 1.0]).to_config()
        {'name': 'chebyshev', 'reference': [0.0, 1.0], 'scale': None}
        """

        def plain(value):
            return value.tolist() if isinstance(value, np.ndarray) else value

        return {"name": self.name, "reference": plain(self.reference), "scale": plain(self.scale)}


class Linear(Scalarization):
    """s_λ(y) = Σ_i λ_i (y_i − z_i) / r_i.

    Parameters
    ----------
    reference : None, "observed", "ideal", "pareto", "pareto-ideal" or array of shape (n,)
        The reference point z.
    scale : None or array of shape (n,)
        The range r of every objective.

    Examples
    --------
    >>> Linear()(np.array([[1.0, 3.0]]), np.array([0.5, 0.5]))
    array([2.])
    """

    name = "linear"

    def __call__(self, Y, weights):
        """Σ_i λ_i ŷ_i for every row of Y.

        Parameters
        ----------
        Y : array of shape (N, n)
            Objectives.
        weights : array of shape (n,) or (M, n)
            λ on the simplex.

        Returns
        -------
        ndarray of shape (N,) or (M, N)
            The scalarised values.

        Examples
        --------
        >>> Linear()(np.array([[1.0, 3.0], [2.0, 0.0]]), np.array([0.25, 0.75]))
        array([2.5, 0.5])
        """
        return np.asarray(weights) @ self.normalize(Y).T

    def of_draws(self, mean, root, weights, base_samples):
        """Σ_i λ_i ŷ_i of every draw (see :meth:`Scalarization.of_draws`): one product.

        Parameters
        ----------
        mean : array of shape (M, n)
            μ_m.
        root : array of shape (M, n, n)
            R_m.
        weights : array of shape (n,)
            λ.
        base_samples : array of shape (K, n)
            z_k.

        Returns
        -------
        ndarray of shape (M, K)

        Examples
        --------
        >>> Linear().of_draws(np.zeros((1, 2)), np.eye(2)[None], [0.5, 0.5], [[1.0, -2.0]])
        array([[-0.5]])
        """
        return self._sum_of_terms(*self._weighted_draws(mean, root, weights, base_samples))

    has_moments = True

    def moments(self, mean, cov, weights):
        """Σ_i λ_i ŷ_i of a Gaussian is Gaussian: E = λᵀμ̂, Var = λᵀΓ̂λ (exact).

        Parameters
        ----------
        mean : array of shape (M, n)
            m at M points.
        cov : array of shape (M, n, n)
            Γ at M points.
        weights : array of shape (n,)
            λ.

        Returns
        -------
        mean, variance : ndarray of shape (M,)

        Examples
        --------
        >>> Linear().moments(np.ones((1, 2)), np.eye(2)[None], [0.5, 0.5])
        (array([1.]), array([0.5]))
        """
        return self._sum_moments(*self._weighted_moments(mean, cov, weights))

    def lipschitz(self, weights):
        """L_λ = ‖λ/r‖₂ (Cauchy–Schwarz).

        Parameters
        ----------
        weights : array of shape (n,)
            λ.

        Returns
        -------
        float
            L_λ.

        Examples
        --------
        >>> Linear(reference=[0.0, 0.0], scale=[1.0, 2.0]).lipschitz([0.6, 1.6])
        1.0
        """
        return float(np.linalg.norm(self._effective_weights(weights)))


class Chebyshev(Scalarization):
    """s_λ(y) = min_i λ_i (y_i − z_i) / r_i.

    Parameters
    ----------
    reference : None, "observed", "ideal", "pareto", "pareto-ideal" or array of shape (n,)
        The reference point z.
    scale : None or array of shape (n,)
        The range r of every objective.

    Examples
    --------
    >>> Chebyshev(reference=[0.0, 1.0])(np.array([[1.0, 3.0]]), np.array([0.5, 0.5]))
    array([0.5])
    """

    name = "chebyshev"

    def __call__(self, Y, weights):
        """min_i λ_i ŷ_i for every row of Y.

        Parameters
        ----------
        Y : array of shape (N, n)
            Objectives.
        weights : array of shape (n,) or (M, n)
            λ on the simplex.

        Returns
        -------
        ndarray of shape (N,) or (M, N)
            The scalarised values.

        Examples
        --------
        >>> Chebyshev()(np.array([[1.0, 3.0], [4.0, 2.0]]), np.array([0.5, 0.5]))
        array([0.5, 1. ])
        """
        shifted, weights = self.normalize(Y), np.asarray(weights)
        if weights.ndim == 2:
            return np.min(shifted[None, :, :] * weights[:, None, :], axis=-1)
        return np.min(shifted * weights, axis=-1)

    def of_draws(self, mean, root, weights, base_samples):
        """min_i λ_i ŷ_i of every draw (see :meth:`Scalarization.of_draws`).

        Parameters
        ----------
        mean : array of shape (M, n)
            μ_m.
        root : array of shape (M, n, n)
            R_m.
        weights : array of shape (n,)
            λ.
        base_samples : array of shape (K, n)
            z_k.

        Returns
        -------
        ndarray of shape (M, K)

        Examples
        --------
        >>> Chebyshev().of_draws(np.zeros((1, 2)), np.eye(2)[None], [0.5, 0.5], [[1.0, -2.0]])
        array([[-1.]])
        """
        return self._min_of_terms(*self._weighted_draws(mean, root, weights, base_samples))

    has_moments = True

    def moments(self, mean, cov, weights):
        """min_i λ_i ŷ_i: Clark's moments of the minimum (exact for n = 2; see
        :meth:`Scalarization.moments`).

        Parameters
        ----------
        mean : array of shape (M, n)
            m at M points.
        cov : array of shape (M, n, n)
            Γ at M points.
        weights : array of shape (n,)
            λ.

        Returns
        -------
        mean, variance : ndarray of shape (M,)

        Examples
        --------
        The smaller of two independent standard normals: mean −1/√π, variance 1 − 1/π.

        >>> mean, variance = Chebyshev().moments(np.zeros((1, 2)), np.eye(2)[None], [1, 1])
        >>> np.allclose([mean[0], variance[0]], [-1 / np.sqrt(np.pi), 1 - 1 / np.pi])
        True
        """
        low_mean, low_var, _ = self._min_moments(*self._weighted_moments(mean, cov, weights))
        return low_mean, low_var

    def lipschitz(self, weights):
        """L_λ = max_i λ_i/r_i.

        Parameters
        ----------
        weights : array of shape (n,)
            λ.

        Returns
        -------
        float
            L_λ.

        Examples
        --------
        >>> Chebyshev(reference=[0.0, 0.0], scale=[1.0, 4.0]).lipschitz([0.5, 0.5])
        0.5
        """
        return float(np.max(self._effective_weights(weights)))


class AugmentedChebyshev(Chebyshev):
    """s_λ(y) = min_i λ_i ŷ_i + α Σ_i λ_i ŷ_i, ŷ_i = (y_i − z_i) / r_i, α = 0.05.

    The augmented Chebyshev scalarisation of ParEGO (Knowles 2006) and BoTorch's
    ``get_chebyshev_scalarization`` (both α = 0.05): the small linear term makes every
    maximiser Pareto optimal, where plain Chebyshev is indifferent between points that tie
    on the smallest weighted term (weakly Pareto optimal ones).

    Parameters
    ----------
    reference : None, "observed", "ideal", "pareto", "pareto-ideal" or array of shape (n,)
        The reference point z.
    scale : None or array of shape (n,)
        The range r of every objective.

    Examples
    --------
    >>> AugmentedChebyshev()(np.array([[1.0, 3.0], [1.0, 1.0]]), np.array([0.5, 0.5]))
    array([0.6 , 0.55])
    """

    name = "augmented-chebyshev"
    augmentation = 0.05

    def __call__(self, Y, weights):
        """min_i λ_i ŷ_i + α Σ_i λ_i ŷ_i for every row of Y.

        Parameters
        ----------
        Y : array of shape (N, n)
            Objectives.
        weights : array of shape (n,) or (M, n)
            λ on the simplex.

        Returns
        -------
        ndarray of shape (N,) or (M, N)
            The scalarised values.

        Examples
        --------
        >>> AugmentedChebyshev()(np.array([[2.0, 0.0]]), np.array([[0.5, 0.5], [1.0, 0.0]]))
        array([[0.05],
               [0.1 ]])
        """
        linear = np.asarray(weights) @ self.normalize(Y).T
        return super().__call__(Y, weights) + self.augmentation * linear

    def of_draws(self, mean, root, weights, base_samples):
        """min_i λ_i ŷ_i + α Σ_i λ_i ŷ_i of every draw (see :meth:`Scalarization.of_draws`).

        Parameters
        ----------
        mean : array of shape (M, n)
            μ_m.
        root : array of shape (M, n, n)
            R_m.
        weights : array of shape (n,)
            λ.
        base_samples : array of shape (K, n)
            z_k.

        Returns
        -------
        ndarray of shape (M, K)

        Examples
        --------
        >>> AugmentedChebyshev().of_draws(
        ...     np.zeros((1, 2)), np.eye(2)[None], [0.5, 0.5], [[1.0, -2.0]]
        ... )
        array([[-1.025]])
        """
        terms = self._weighted_draws(mean, root, weights, base_samples)  # computed once
        values = self._min_of_terms(*terms)
        values += self.augmentation * self._sum_of_terms(*terms)
        return values

    def moments(self, mean, cov, weights):
        """min_i λ_i ŷ_i + α Σ_i λ_i ŷ_i: Clark's moments of the minimum M and its
        covariance with the sum L, Var = Var M + 2α Cov(M, L) + α² Var L.

        Parameters
        ----------
        mean : array of shape (M, n)
            m at M points.
        cov : array of shape (M, n, n)
            Γ at M points.
        weights : array of shape (n,)
            λ.

        Returns
        -------
        mean, variance : ndarray of shape (M,)

        Examples
        --------
        A known F: min_i λ_i F_i + α Σ_i λ_i F_i = 0.5 + 0.05 · 1, variance 0.

        >>> AugmentedChebyshev().moments(np.ones((1, 2)), np.zeros((1, 2, 2)), [0.5, 0.5])
        (array([0.55]), array([0.]))
        """
        means, covs = self._weighted_moments(mean, cov, weights)
        low_mean, low_var, low_cov = self._min_moments(means, covs)
        alpha = self.augmentation
        sum_mean, sum_var = self._sum_moments(means, covs)
        variance = low_var + 2 * alpha * (low_cov @ np.ones(len(weights))) + alpha**2 * sum_var
        return low_mean + alpha * sum_mean, np.maximum(variance, 0.0)

    def lipschitz(self, weights):
        """L_λ = (α² ‖a‖₂² + (1 + 2α) max_i a_i²)^{1/2}, a = λ/r.

        s_λ is the minimum of the linear maps y ↦ g_k·(y − z), g_k = a_k e_k + α a, each
        the smallest on an open cone, so its ℓ2-Lipschitz constant is max_k ‖g_k‖₂, with
        ‖g_k‖₂² = α² ‖a‖₂² + (1 + 2α) a_k².

        Parameters
        ----------
        weights : array of shape (n,)
            λ.

        Returns
        -------
        float
            L_λ.

        Examples
        --------
        >>> round(AugmentedChebyshev().lipschitz([0.0, 1.0]), 12)  # 1 + α along e_2
        1.05
        """
        a = self._effective_weights(weights)
        alpha = self.augmentation
        return float(np.sqrt(alpha**2 * np.sum(a**2) + (1 + 2 * alpha) * np.max(a) ** 2))


class Hypervolume(Scalarization):
    """s_λ(y) = min_i max(0, (y_i − z_i) / (r_i λ_i))ⁿ with ‖λ‖₂ = 1 (λ is rescaled).

    Parameters
    ----------
    reference : None, "observed", "ideal", "pareto", "pareto-ideal" or array of shape (n,)
        The reference point z.
    scale : None or array of shape (n,)
        The range r of every objective.

    Examples
    --------
    >>> Hypervolume(reference=[0.0, 0.0])(np.array([[3.0, 4.0]]), np.array([0.6, 0.8]))
    array([25.])
    """

    name = "hypervolume"

    def __init__(self, reference=None, scale=None):
        if isinstance(reference, str) and ADAPTIVE.get(reference, ("", ""))[1] == "ideal":
            raise ValueError(f"reference={reference!r} puts z above every point: s_λ = 0")
        super().__init__(reference, scale)

    @staticmethod
    def _directions(weights):
        weights = np.asarray(weights, dtype=float)
        return weights / np.linalg.norm(weights, axis=-1, keepdims=True)

    def __call__(self, Y, weights):
        """min_i max(0, ŷ_i/λ_i)ⁿ for every row of Y, λ taken to the unit sphere.

        Parameters
        ----------
        Y : array of shape (N, n)
            Objectives.
        weights : array of shape (n,) or (M, n)
            λ on the simplex.

        Returns
        -------
        ndarray of shape (N,) or (M, N)
            The scalarised values.

        Examples
        --------
        >>> Hypervolume()(np.array([[3.0, 4.0], [-1.0, 4.0]]), np.array([3.0, 4.0]))
        array([25.,  0.])
        """
        shifted, directions = self.normalize(Y), self._directions(weights)
        n = shifted.shape[-1]
        if directions.ndim == 2:
            shifted, directions = shifted[None, :, :], directions[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):  # λ_i = 0: that term is +∞
            ratio = np.where(directions > 0, np.maximum(shifted, 0.0) / directions, np.inf)
        return np.min(ratio, axis=-1) ** n

    def lipschitz(self, weights):
        """L_λ = n Tⁿ⁻¹ max_i 1/(λ_i r_i), T = min_i 1/λ_i, valid on the box z ≤ y ≤ z + r.

        Parameters
        ----------
        weights : array of shape (n,)
            λ.

        Returns
        -------
        float
            L_λ.

        Examples
        --------
        >>> round(Hypervolume(reference=[0.0, 0.0]).lipschitz([1.0, 1.0]), 12)  # 2 · √2 · √2
        4.0
        """
        directions = self._directions(weights)
        n = directions.shape[0]
        with np.errstate(divide="ignore"):
            inverse = np.where(directions > 0, 1.0 / directions, 0.0)
        reach = np.min(np.where(directions > 0, inverse, np.inf))  # T = min_i 1/λ_i
        return float(n * reach ** (n - 1) * np.max(self._effective_weights(inverse)))


# the paper's two, then Golovin & Zhang's (the order of the error message)
SCALARIZATIONS = {
    "chebyshev": Chebyshev,
    "linear": Linear,
    "hypervolume": Hypervolume,
    "augmented-chebyshev": AugmentedChebyshev,
}


def make_scalarization(spec, reference=None, scale=None) -> Scalarization:
    """A :class:`Scalarization` from a name (``"linear"``, ``"chebyshev"``,
    ``"hypervolume"``) with a reference and scale, a config dict or an instance.

    Parameters
    ----------
    spec : str, dict or Scalarization
        A key of ``SCALARIZATIONS``, a :meth:`Scalarization.to_config` dict, or an
        instance (returned as it is).
    reference : None, "observed", "ideal", "pareto", "pareto-ideal" or array of shape (n,)
        The reference point z, with a name.
    scale : None or array of shape (n,)
        The range r, with a name.

    Returns
    -------
    Scalarization
        The scalarisation.

    Examples
    --------
    >>> make_scalarization("linear", reference=[0.0, 0.0]).to_config()
    {'name': 'linear', 'reference': [0.0, 0.0], 'scale': None}
    """
    if isinstance(spec, Scalarization):
        return spec
    if isinstance(spec, dict):
        spec = dict(spec)
        name = spec.pop("name")
        return make_scalarization(name, **spec)
    if not isinstance(spec, str) or spec not in SCALARIZATIONS:
        valid = ", ".join(SCALARIZATIONS)
        raise ValueError(f"scalarization must be one of {valid}, got {spec!r}")
    return SCALARIZATIONS[spec](reference, scale)
