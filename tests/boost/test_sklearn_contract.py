"""scikit-learn's estimator checks, run by scikit-learn (``parametrize_with_checks``)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from manytask.boost import (
    AdaBoost,
    AdaBoostPerDomain,
    DMSAClassifier,
    DomainClassifier,
    MultiBoostClassifier,
    PooledAdaBoost,
)

# Binary-only estimators say so in their tags (classifier_tags.multi_class = False); without
# ``domains`` every estimator sees one source.
ESTIMATORS = [
    MultiBoostClassifier(n_estimators=5),
    MultiBoostClassifier(n_estimators=5, max_depth=3),
    AdaBoost(n_estimators=5),
    AdaBoost(n_estimators=5, max_depth=3),
    PooledAdaBoost(n_estimators=5),
    AdaBoostPerDomain(n_estimators=5),
    DMSAClassifier(n_estimators=5),
    DomainClassifier(),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
