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

#: Checks that do not apply, with the reason (scikit-learn then expects them to fail).
FIXED_LEVELS = {
    "check_regressors_train": (
        "JQR and IND-QR predict one column per fitted level, shape (N, k), not (N,)"
    ),
}


def expected_failures(estimator):
    if isinstance(estimator, (JointQuantileRegressor, IndependentQuantileRegressor)):
        return FIXED_LEVELS
    return {}


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
    expected_failed_checks=expected_failures,
)
def test_scikit_learn_compatible(estimator, check):
    check(estimator)
