"""Multi-source boosting (``boosting-with-multiple-sources.txt``): MULTIBOOST and its baselines.

- :mod:`~manytask.boost.stumps`: decision stumps and the exact (or histogram-binned)
  minimum-weighted-error stump search over presorted features.
- :mod:`~manytask.boost.thresholds`: candidate thresholds from a column's values (exact,
  and the federated quantile sketch every transport uses); :mod:`~manytask.boost.search_views`:
  what one stump search reads (all points or a support).
- :mod:`~manytask.boost.trees`: histogram trees of depth d with ±1 leaves, the base classes
  of ``max_depth`` > 1, grown greedily by the same edge criterion.
- :mod:`~manytask.boost.domain`: the domain classifier Q(k|x) of §3, clipped away from zero
  (:mod:`~manytask.boost.clipping`).
- :mod:`~manytask.boost.multiboost`: MULTIBOOST (Figure 1) as :class:`MultiBoostClassifier`
  with the paper's options (Φ = exp or logistic, hard max or soft-max μ, restricted
  mixture set Λ, ℓ1 penalty β, the AdaBoost step of Lemma 1 or another step rule of
  :mod:`~manytask.boost.steps`, early stopping; two or more classes): validation, the fit
  loop and prediction.
- :mod:`~manytask.boost.rounds`: one boosting round of Figure 1 as a pure function (state
  in, a round record out), for every option; one short function per line 4–12;
  :mod:`~manytask.boost.directions`: line 10, the steepest base classifier of each row.
- :mod:`~manytask.boost.steepest`: the steepest coordinate of the max at a tie (the default
  round's fallback), exact and binned.
- :mod:`~manytask.boost.objective`: Φ, F_k, the max over Λ's vertices, the soft-max and the
  quantities of one round of Figure 1 (D_t, ε, the direction score).
- :mod:`~manytask.boost.steps`: every step rule (the AdaBoost step, Lemma 1's bound, the
  exact line search, C/√t, the separating step);
  :mod:`~manytask.boost.line_search`: the one 1-D convex solver they share.
- :mod:`~manytask.boost.multiclass`: the AdaBoost.MH-style multi-class Q-ensemble (codes,
  vector stumps, their exact search; derivation and the two-class reduction).
- :mod:`~manytask.boost.adaboost`: the textbook :class:`AdaBoost` (one-domain check).
- :mod:`~manytask.boost.baselines`: the baselines of Table 1, AdaBoost-k
  (:class:`AdaBoostPerDomain`), AdaBoost-all (:class:`PooledAdaBoost`) and DMSA
  (:class:`DMSAClassifier`).
- :mod:`~manytask.boost.evaluation`: :func:`mixture_errors`, per-domain, uniform, agnostic
  and per-λ errors.
- :mod:`~manytask.boost.validation`: the input checks shared by the estimators.

- :mod:`~manytask.boost.kernels`: the compiled (numba, extra ``fast``) twins of the hot
  loops, and the switch between them and NumPy.
- :mod:`~manytask.boost.federated`: FEDMULTIBOOST's protocol (pure client functions, the
  server, :func:`~manytask.boost.federated.simulate` in process) and its Flower and Dask
  transports (imported on first use: it imports boost, never the other way).

>>> import numpy as np
>>> import manytask.boost as boost
>>> stump, error, _ = boost.best_stump(boost.presort([[0.0], [1.0]]), [-1, 1], np.ones(2))
>>> stump.predict([[2.0]])
array([1.])
"""

from .adaboost import AdaBoost
from .baselines import AdaBoostPerDomain, DMSAClassifier, PooledAdaBoost
from .domain import DomainClassifier
from .evaluation import MixtureErrors, mixture_errors
from .multiboost import MultiBoostClassifier
from .multiclass import VectorStump
from .stumps import PresortedFeatures, Stump, StumpResult, best_stump, presort
from .trees import Tree, grow_tree


def __getattr__(name):
    """``manytask.boost.federated`` on first use: the federated package imports boost, never
    the other way (importing :mod:`manytask.boost` does not load it)."""
    if name == "federated":
        import importlib

        return importlib.import_module(".federated", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AdaBoost",
    "AdaBoostPerDomain",
    "DMSAClassifier",
    "DomainClassifier",
    "MixtureErrors",
    "MultiBoostClassifier",
    "PooledAdaBoost",
    "PresortedFeatures",
    "Stump",
    "StumpResult",
    "Tree",
    "VectorStump",
    "federated",
    "best_stump",
    "grow_tree",
    "mixture_errors",
    "presort",
]
