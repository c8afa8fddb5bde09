"""scikit-learn's estimator checks, run by scikit-learn (``parametrize_with_checks``)."""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from manytask.boost import MultiBoostClassifier


@parametrize_with_checks([MultiBoostClassifier(n_estimators=5)])
def test_sklearn_compatible_estimator(estimator, check):
    with warnings.catch_warnings():
        # Q(k|x) clipping notes on the checks' random data (one source: Q ≡ 1, no clipping)
        warnings.filterwarnings("ignore", message="Q\\(k\\|x\\) was below clip")
        check(estimator)
