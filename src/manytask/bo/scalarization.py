"""Scalarisations s_λ: Rⁿ → R and their ℓ2-Lipschitz constants L_λ (paper §2).

Both act on normalised objectives ŷ_i = (y_i − z_i) / r_i, with a reference point z below
the data and a range r > 0 per objective:

``Linear``: s_λ(y) = Σ_i λ_i ŷ_i, L_λ = ‖λ/r‖₂ (Cauchy–Schwarz, attained along λ/r).
``Chebyshev``: s_λ(y) = min_i λ_i ŷ_i = min_i (λ_i/r_i)(y_i − z_i), the paper's form with
weights λ_i/r_i; L_λ = max_i λ_i/r_i: |min_i a_i − min_i b_i| ≤ max_i |a_i − b_i| ≤
max_i (λ_i/r_i) ‖u − v‖_∞ ≤ max_i (λ_i/r_i) ‖u − v‖₂, attained along the basis vector of the
largest λ_i/r_i. Both are monotone in every coordinate, so their maximisers are Pareto
optimal.

``Hypervolume`` (Golovin & Zhang 2020): s_λ(y) = min_i max(0, ŷ_i/λ_i)ⁿ with λ taken to
the unit sphere (λ/‖λ‖₂). For λ uniform on the positive unit sphere (``weights=
"unit-sphere"``) the expectation of its maximum over a set is the hypervolume that set
dominates above z, in normalised units: HV = c_n E_λ[max_y s_λ(y)], c_n = π^{n/2} /
(2ⁿ Γ(n/2 + 1)) (their Lemma 5), so maximising it at random λ targets the hypervolume.
L_λ: t(y) = min_i max(0, ŷ_i/λ_i) is max_i 1/(λ_i r_i)-Lipschitz in ‖·‖_∞ (as Chebyshev),
and u ↦ uⁿ is n Tⁿ⁻¹-Lipschitz on [0, T]; on the box z ≤ y ≤ z + r, where ŷ ≤ 1 and so
t ≤ T = min_i 1/λ_i, L_λ = n Tⁿ⁻¹ max_i 1/(λ_i r_i). With ``reference="observed"`` that
box is the observed range; outside it the bound does not hold (a larger y only raises s).

Where z and r come from:

- ``reference=None``: z = 0 and r = 1, the raw objectives (the paper's formula with z = 0).
  A Chebyshev term λ_i y_i with y_i < 0 then *falls* as λ_i grows, so the weights no longer
  say which objective matters, and R_C is dominated by a few exploration rounds.
- ``reference=z`` (and optionally ``scale=r``): fixed, given by the user, or for a known
  problem its range on the candidate set (z = min_x f(x), r = max_x f(x) − z).
- ``reference="observed"``: ParEGO's normalisation (Knowles 2006): z and r are the observed
  minimum and range of every objective, recomputed from the data by :meth:`fitted` before
  every proposal. The scalarisation then changes as data arrive.

R_C and R_B (:mod:`.metrics`) are computed with one fixed scalarisation for the whole run:
a fixed one as given, an ``"observed"`` one fitted to the problem's values on the candidate
set (its known range). So R_C is in units of each objective's range on the candidates, the
same for every algorithm, and for a Chebyshev scalarisation each regret term lies in [0, 1].
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array

__all__ = [
    "Scalarization",
    "Linear",
    "Chebyshev",
    "Hypervolume",
    "SCALARIZATIONS",
    "make_scalarization",
    "value_range",
]

OBSERVED = "observed"


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


class Scalarization:
    """s_λ(y) for outputs Y (N, n) and weights λ (n,) → (N,), or weights (M, n) → (M, N).

    Parameters
    ----------
    reference : None, "observed" or array of shape (n,)
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
            if reference != OBSERVED:
                raise ValueError(
                    f"reference must be None, 'observed' or an array, got {reference!r}"
                )
            if scale is not None:
                raise ValueError("scale must be None with reference='observed' (it is observed)")
        elif reference is not None:
            reference = as_finite_array(reference, "reference", 1)
        if scale is not None:
            scale = as_finite_array(scale, "scale", 1)
            if np.any(scale <= 0):
                raise ValueError(f"scale must be > 0 in every objective, got {scale.tolist()}")
        self.reference, self.scale = reference, scale

    @property
    def adaptive(self) -> bool:
        """True when z and r are taken from the data (``reference="observed"``).

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
        reference, scale = value_range(Y)
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
    reference : None, "observed" or array of shape (n,)
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
    reference : None, "observed" or array of shape (n,)
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


class Hypervolume(Scalarization):
    """s_λ(y) = min_i max(0, (y_i − z_i) / (r_i λ_i))ⁿ with ‖λ‖₂ = 1 (λ is rescaled).

    Parameters
    ----------
    reference : None, "observed" or array of shape (n,)
        The reference point z.
    scale : None or array of shape (n,)
        The range r of every objective.

    Examples
    --------
    >>> Hypervolume(reference=[0.0, 0.0])(np.array([[3.0, 4.0]]), np.array([0.6, 0.8]))
    array([25.])
    """

    name = "hypervolume"

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
SCALARIZATIONS = {"chebyshev": Chebyshev, "linear": Linear, "hypervolume": Hypervolume}


def make_scalarization(spec, reference=None, scale=None) -> Scalarization:
    """A :class:`Scalarization` from a name (``"linear"``, ``"chebyshev"``,
    ``"hypervolume"``) with a reference and scale, a config dict or an instance.

    Parameters
    ----------
    spec : str, dict or Scalarization
        A key of ``SCALARIZATIONS``, a :meth:`Scalarization.to_config` dict, or an
        instance (returned as it is).
    reference : None, "observed" or array of shape (n,)
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
