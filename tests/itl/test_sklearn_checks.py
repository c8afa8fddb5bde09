"""scikit-learn's estimator checks on every ITL estimator."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from manytask.itl import (
    IndependentQuantileRegressor,
    InfiniteCostSensitiveClassifier,
    InfiniteLevelSetEstimator,
    InfiniteQuantileRegressor,
    JointQuantileRegressor,
)


# Five anchors instead of the default ≥ 20 keep the ~50 fits per estimator fast; the checks
# are about the API, which does not depend on m.
@parametrize_with_checks(
    [
        InfiniteQuantileRegressor(n_anchors=5),
        JointQuantileRegressor(),
        IndependentQuantileRegressor(),
        InfiniteCostSensitiveClassifier(n_anchors=5),
        InfiniteLevelSetEstimator(n_anchors=5),
    ],
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)
