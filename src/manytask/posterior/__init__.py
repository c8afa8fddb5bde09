"""Multi-task posteriors: exact (:class:`ExactPosterior`) and Nyström (:class:`NystromPosterior`).

Both take an operator-valued kernel Γ and the noise η, and answer ``mean``, ``cov``,
``variance_norm`` and ``log_det``. Separable and diagonal kernels are solved as independent
scalar problems automatically (``multitask-bayesian-optimization.txt``, Appendix A).
"""

from .exact import ExactPosterior
from .nystrom import NystromPosterior

__all__ = ["ExactPosterior", "NystromPosterior"]
