"""Infinite Task Learning (``infinite-task-learning.txt``): pieces for a continuum of tasks.

- :mod:`~manytask.itl.quadrature`: anchors θ_j and weights w_j on the hyperparameter interval.
- :mod:`~manytask.itl.losses`: the pinball (eq. 3), cost-sensitive hinge (eq. 4) and one-class
  losses with their gradients and Huber smoothing, and the paper's pinball and crossing metrics.
- :mod:`~manytask.itl.model`: the decomposable model of Prop. 3.1, h(x)(θ) = K_X A K_Θ +
  K_X B ∂₂K_Θ (+ bias), its RKHS norm and gradients, never as an (nm × nm) Kronecker matrix.
- :mod:`~manytask.itl.whitening`: the same model in whitened coordinates (the ridge penalty
  becomes ‖V‖²), exact or on Nyström landmarks (the estimators' ``n_components``); the fits
  run there.
- :mod:`~manytask.itl.blockwise`: the large-n path: data term, gradient and Nyström features
  by blocks of rows (bounded memory, both cores).

- :mod:`~manytask.itl.kernel_quantile`: the ∞-QR data term (eqs. 8–9, 14) and the fit on
  given anchors that ∞-QR, JQR and IND-QR share.
- :mod:`~manytask.itl.quantile`: ∞-QR, :class:`InfiniteQuantileRegressor` (eqs. 8–15).
- :mod:`~manytask.itl.selection`: ∞-QR's λ and bandwidth chosen inside ``fit`` (hold-out or
  K-fold).
- :mod:`~manytask.itl.conformal`: ∞-QR's calibrated intervals at every coverage from one fit
  (conformalised quantile regression, CV+).
- :mod:`~manytask.itl.baselines`: JQR and IND-QR on a fixed set of levels.
- :mod:`~manytask.itl.classification`: ∞-CSC, :class:`InfiniteCostSensitiveClassifier` (eq. 4).
- :mod:`~manytask.itl.level_sets`: ∞-DLSE, :class:`InfiniteLevelSetEstimator` (eqs. 12, 16).

>>> import manytask.itl as itl
>>> anchors, weights = itl.sobol_anchors(8)
>>> float(itl.pinball(1.0, 0.0, theta=0.9))
0.9
"""

from .baselines import IndependentQuantileRegressor, JointQuantileRegressor
from .classification import InfiniteCostSensitiveClassifier
from .level_sets import InfiniteLevelSetEstimator
from .losses import (
    cost_sensitive_hinge,
    cost_sensitive_hinge_gradient,
    crossing_loss,
    one_class,
    one_class_gradient,
    pinball,
    pinball_gradient,
    pinball_loss,
    smooth_abs,
    smooth_abs_gradient,
    smooth_positive_part,
    smooth_positive_part_gradient,
)
from .model import DecomposableModel
from .quadrature import (
    Quadrature,
    custom,
    gauss_legendre,
    gauss_lobatto,
    sobol_anchors,
    uniform_grid,
)
from .quantile import InfiniteQuantileRegressor

__all__ = [
    "InfiniteQuantileRegressor",
    "JointQuantileRegressor",
    "IndependentQuantileRegressor",
    "InfiniteCostSensitiveClassifier",
    "InfiniteLevelSetEstimator",
    "DecomposableModel",
    "Quadrature",
    "sobol_anchors",
    "gauss_legendre",
    "gauss_lobatto",
    "uniform_grid",
    "custom",
    "smooth_abs",
    "smooth_abs_gradient",
    "smooth_positive_part",
    "smooth_positive_part_gradient",
    "pinball",
    "pinball_gradient",
    "cost_sensitive_hinge",
    "cost_sensitive_hinge_gradient",
    "one_class",
    "one_class_gradient",
    "pinball_loss",
    "crossing_loss",
]
