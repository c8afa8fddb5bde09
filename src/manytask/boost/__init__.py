"""Multi-source boosting (``boosting-with-multiple-sources.txt``): pieces for MULTIBOOST.

- :mod:`~manytask.boost.stumps`: decision stumps and the exact (or histogram-binned)
  minimum-weighted-error stump search over presorted features.
- :mod:`~manytask.boost.domain`: the domain classifier Q(k|x) of §3, clipped away from zero.

The boosters (MULTIBOOST, AdaBoost baselines, DMSA) are still to come (issue 5).

>>> import numpy as np
>>> import manytask.boost as boost
>>> stump, error, _ = boost.best_stump(boost.presort([[0.0], [1.0]]), [-1, 1], np.ones(2))
>>> stump.predict([[2.0]])
array([1.])
"""

from .domain import DomainClassifier
from .stumps import PresortedFeatures, Stump, StumpResult, best_stump, presort

__all__ = [
    "DomainClassifier",
    "PresortedFeatures",
    "Stump",
    "StumpResult",
    "best_stump",
    "presort",
]
