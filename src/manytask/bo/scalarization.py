"""Scalarisations s_λ: Rⁿ → R and their ℓ2-Lipschitz constants L_λ (paper §2).

``Linear``: s_λ(y) = Σ_i λ_i y_i, L_λ = ‖λ‖₂ (Cauchy–Schwarz, attained along λ).
``Chebyshev``: s_λ(y) = min_i λ_i (y_i − z_i), L_λ = max_i λ_i: |min_i a_i − min_i b_i| ≤
max_i |a_i − b_i| ≤ max_i λ_i ‖u − v‖_∞ ≤ max_i λ_i ‖u − v‖₂, attained along the basis
vector of the largest λ_i.
Both are monotone in every coordinate, so their maximisers are Pareto optimal.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_finite_array

__all__ = ["Scalarization", "Linear", "Chebyshev", "SCALARIZATIONS", "make_scalarization"]


class Scalarization:
    """s_λ(y) for outputs Y (N, n) and weights λ (n,) → (N,), or weights (M, n) → (M, N)."""

    name = "scalarization"

    def __call__(self, Y, weights) -> np.ndarray:
        raise NotImplementedError

    def lipschitz(self, weights) -> float:
        """L_λ with |s_λ(u) − s_λ(v)| ≤ L_λ ‖u − v‖₂."""
        raise NotImplementedError

    def to_config(self) -> dict:
        return {"name": self.name}


class Linear(Scalarization):
    """s_λ(y) = Σ_i λ_i y_i.

    Example
    -------
    >>> Linear()(np.array([[1.0, 3.0]]), np.array([0.5, 0.5]))
    array([2.])
    """

    name = "linear"

    def __call__(self, Y, weights):
        return np.asarray(weights) @ np.asarray(Y).T

    def lipschitz(self, weights):
        return float(np.linalg.norm(weights))


class Chebyshev(Scalarization):
    """s_λ(y) = min_i λ_i (y_i − z_i) with reference point z (default 0).

    Example
    -------
    >>> Chebyshev(reference=[0.0, 1.0])(np.array([[1.0, 3.0]]), np.array([0.5, 0.5]))
    array([0.5])
    """

    name = "chebyshev"

    def __init__(self, reference=None):
        self.reference = None if reference is None else as_finite_array(reference, "reference", 1)

    def __call__(self, Y, weights):
        Y, weights = np.asarray(Y), np.asarray(weights)
        shifted = Y if self.reference is None else Y - self.reference
        if weights.ndim == 2:
            return np.min(shifted[None, :, :] * weights[:, None, :], axis=-1)
        return np.min(shifted * weights, axis=-1)

    def lipschitz(self, weights):
        return float(np.max(weights))

    def to_config(self):
        reference = None if self.reference is None else self.reference.tolist()
        return {"name": self.name, "reference": reference}


SCALARIZATIONS = {"linear": Linear, "chebyshev": Chebyshev}


def make_scalarization(spec, reference=None) -> Scalarization:
    """A :class:`Scalarization` from a name (``"linear"``, ``"chebyshev"``), a config dict
    or an instance."""
    if isinstance(spec, Scalarization):
        return spec
    if isinstance(spec, dict):
        spec = dict(spec)
        name = spec.pop("name")
        return make_scalarization(name, **spec)
    if spec not in SCALARIZATIONS:
        valid = ", ".join(sorted(SCALARIZATIONS))
        raise ValueError(f"scalarization must be one of {valid}, got {spec!r}")
    return Chebyshev(reference) if spec == "chebyshev" else Linear()
