"""Multi-source boosting (``boosting-with-multiple-sources.txt``): pieces for MULTIBOOST.

- :mod:`~manytask.boost.stumps`: decision stumps and the exact (or histogram-binned)
  minimum-weighted-error stump search over presorted features.
- :mod:`~manytask.boost.domain`: the domain classifier Q(k|x) of §3, clipped away from zero.
- :mod:`~manytask.boost.multiboost`: MULTIBOOST (Figure 1, binary, Φ = exp; hard max or the
  soft-max with parameter μ) as :class:`MultiBoostClassifier`, and the textbook
  :class:`AdaBoost` baseline.
- :mod:`~manytask.boost.evaluation`: :func:`mixture_errors`, per-domain, uniform, agnostic
  and per-λ errors.

Still to come (issue 5): multi-class, logistic Φ, ℓ1, AdaBoost-k/all, DMSA.

>>> import numpy as np
>>> import manytask.boost as boost
>>> stump, error, _ = boost.best_stump(boost.presort([[0.0], [1.0]]), [-1, 1], np.ones(2))
>>> stump.predict([[2.0]])
array([1.])
"""

from .domain import DomainClassifier
from .evaluation import MixtureErrors, mixture_errors
from .multiboost import AdaBoost, MultiBoostClassifier
from .stumps import PresortedFeatures, Stump, StumpResult, best_stump, presort

__all__ = [
    "AdaBoost",
    "DomainClassifier",
    "MixtureErrors",
    "MultiBoostClassifier",
    "PresortedFeatures",
    "Stump",
    "StumpResult",
    "best_stump",
    "mixture_errors",
    "presort",
]
