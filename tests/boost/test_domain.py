"""Domain classifier Q(k|x): probabilities, column order, clipping, extra data, errors."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC

from manytask.boost import DomainClassifier
from manytask.boost.domain import clip_probabilities


def _three_sources(seed=0, spread=1.0, n=30):
    """Three Gaussian sources in 2-D with centres far apart relative to ``spread``."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 6.0], [-6.0, -3.0], [6.0, -3.0]])
    X = np.vstack([centre + spread * rng.normal(size=(n, 2)) for centre in centres])
    domains = np.repeat([2, 0, 1], n)  # labels deliberately not in sorted order of appearance
    return X, domains


class _ReversedClasses(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose classes_ (and probability columns) are in reverse order."""

    def __init__(self, fitted):
        self.fitted = fitted
        self.classes_ = fitted.classes_[::-1].copy()

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return self.fitted.predict_proba(X)[:, ::-1]


def _fit_quietly(classifier, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return classifier.fit(*args, **kwargs)


def test_probabilities_sum_to_one_and_respect_clip():
    X, domains = _three_sources(spread=3.0)
    Q = _fit_quietly(DomainClassifier(clip=1e-3), X, domains)
    probabilities = Q.predict_proba(X)
    assert probabilities.shape == (X.shape[0], 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert probabilities.min() >= 1e-3


def test_columns_follow_sorted_domain_labels():
    X, domains = _three_sources()
    Q = _fit_quietly(DomainClassifier(), X, domains)
    np.testing.assert_array_equal(Q.classes_, [0, 1, 2])
    probabilities = Q.predict_proba(X)
    np.testing.assert_array_equal(Q.classes_[probabilities.argmax(axis=1)], domains)


def test_string_domain_labels_are_sorted():
    X, domains = _three_sources()
    names = np.array(["north", "west", "east"])[[2, 0, 1]][domains]
    Q = _fit_quietly(DomainClassifier(), X, names)
    assert Q.classes_.tolist() == ["east", "north", "west"]
    np.testing.assert_array_equal(Q.predict(X), names)


def test_well_separated_domains_give_near_one_hot_q():
    X, domains = _three_sources(spread=0.3)
    Q = _fit_quietly(DomainClassifier(), X, domains)
    own = Q.predict_proba(X)[np.arange(X.shape[0]), np.searchsorted(Q.classes_, domains)]
    assert own.min() > 0.9


def test_overlapping_domains_give_spread_out_q():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    domains = rng.integers(0, 2, size=200)
    Q = DomainClassifier().fit(X, domains)
    probabilities = Q.predict_proba(X)
    assert np.abs(probabilities - 0.5).mean() < 0.1
    assert np.abs(probabilities - 0.5).max() < 0.3


def test_clipping_is_counted_without_a_warning():
    # Clipping Q(k|x) at ``clip`` is the estimator's design, not a problem: counted in
    # n_clipped_, no warning.
    X, domains = _three_sources(spread=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Q = DomainClassifier(clip=0.01).fit(X, domains)
    raw = Q.estimator_.predict_proba(X)
    assert Q.n_clipped_ == int(np.sum(raw < 0.01)) > 0
    assert Q.predict_proba(X).min() >= 0.01


def test_no_warning_when_nothing_is_clipped():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Q = DomainClassifier().fit(X, rng.integers(0, 2, size=100))
    assert Q.n_clipped_ == 0


def test_clip_probabilities_keeps_ratios_of_unclipped_entries():
    raw = np.array([[0.6, 0.3, 0.1 - 1e-9, 1e-9], [0.25, 0.25, 0.25, 0.25]])
    clipped, n_clipped = clip_probabilities(raw, clip=0.15)
    assert n_clipped == 2
    np.testing.assert_allclose(clipped.sum(axis=1), 1.0)
    assert clipped.min() >= 0.15
    assert clipped[0, 0] / clipped[0, 1] == pytest.approx(2.0)
    np.testing.assert_allclose(clipped[1], 0.25)


def test_clip_probabilities_reclips_entries_pushed_below_by_rescaling():
    clipped, n_clipped = clip_probabilities([[0.9, 0.1, 0.0]], clip=0.2)
    assert n_clipped == 2
    np.testing.assert_allclose(clipped, [[0.6, 0.2, 0.2]])


def test_unlabeled_data_change_the_fit():
    X, domains = _three_sources(spread=2.0, n=10)
    rng = np.random.default_rng(3)
    X_extra = rng.normal(size=(60, 2)) * 2.0 + [8.0, 8.0]
    domains_extra = np.full(60, 0)
    alone = _fit_quietly(DomainClassifier(), X, domains)
    with_extra = _fit_quietly(DomainClassifier(), X, domains, X_extra, domains_extra)
    assert with_extra.predict_proba(X).shape == alone.predict_proba(X).shape
    point = [[8.0, 8.0]]
    assert with_extra.predict_proba(point)[0, 0] > alone.predict_proba(point)[0, 0] + 0.1


def test_unlabeled_data_with_wrong_features_are_rejected():
    X, domains = _three_sources()
    with pytest.raises(ValueError, match="X_unlabeled has 3 features, expected 2"):
        DomainClassifier().fit(X, domains, np.zeros((5, 3)), np.zeros(5))


def test_unlabeled_domains_with_wrong_length_are_rejected():
    X, domains = _three_sources()
    with pytest.raises(ValueError, match=r"domains_unlabeled must have shape \(5,\)"):
        DomainClassifier().fit(X, domains, np.zeros((5, 2)), np.zeros(4))


def test_unlabeled_data_without_their_domains_are_rejected():
    X, domains = _three_sources()
    with pytest.raises(ValueError, match="must be given together"):
        DomainClassifier().fit(X, domains, X_unlabeled=np.zeros((5, 2)))


def test_unlabeled_domains_must_be_known_sources():
    X, domains = _three_sources()
    with pytest.raises(ValueError, match=r"absent from y: \[7\]"):
        DomainClassifier().fit(X, domains, np.zeros((2, 2)), [7, 0])


def test_prefitted_estimator_is_used_as_is():
    X, domains = _three_sources(spread=2.0)
    knn = KNeighborsClassifier(n_neighbors=15).fit(X, domains)
    Q = _fit_quietly(DomainClassifier(estimator=knn, clip=1e-9, prefit=True), X, domains)
    assert Q.estimator_ is knn
    X_new = np.random.default_rng(4).normal(size=(20, 2)) * 4
    own = knn.predict_proba(X_new)
    expected, _ = clip_probabilities(own, 1e-9)
    np.testing.assert_allclose(Q.predict_proba(X_new), expected)


def test_prefitted_estimator_columns_are_reordered_to_sorted_labels():
    X, domains = _three_sources()
    knn = KNeighborsClassifier(n_neighbors=5).fit(X, domains)
    Q = _fit_quietly(DomainClassifier(estimator=_ReversedClasses(knn), prefit=True), X, domains)
    np.testing.assert_array_equal(Q.predict(X), domains)


def test_unfitted_estimator_is_rejected_with_prefit():
    X, domains = _three_sources()
    with pytest.raises(ValueError, match="estimator must already be fitted"):
        DomainClassifier(estimator=KNeighborsClassifier(), prefit=True).fit(X, domains)
    with pytest.raises(ValueError, match="estimator must be a fitted classifier with prefit"):
        DomainClassifier(prefit=True).fit(X, domains)


def test_an_estimator_without_prefit_is_cloned_and_fitted_on_the_sources():
    X, domains = _three_sources(spread=2.0)
    knn = KNeighborsClassifier(n_neighbors=15)
    Q = _fit_quietly(DomainClassifier(estimator=knn, clip=1e-9), X, domains)
    assert Q.estimator_ is not knn and not hasattr(knn, "classes_")  # the given one untouched
    X_new = np.random.default_rng(4).normal(size=(20, 2)) * 4
    reference = KNeighborsClassifier(n_neighbors=15).fit(X, domains).predict_proba(X_new)
    np.testing.assert_allclose(Q.predict_proba(X_new), clip_probabilities(reference, 1e-9)[0])


def test_estimator_without_predict_proba_is_rejected():
    X, domains = _three_sources()
    svc = LinearSVC().fit(X, domains)
    with pytest.raises(ValueError, match="estimator must have a predict_proba method"):
        DomainClassifier(estimator=svc, prefit=True).fit(X, domains)


def test_estimator_with_other_classes_is_rejected():
    X, domains = _three_sources()
    knn = KNeighborsClassifier().fit(X, domains + 1)
    with pytest.raises(ValueError, match=r"estimator.classes_ must be the domain labels"):
        DomainClassifier(estimator=knn, prefit=True).fit(X, domains)


def test_single_domain_gives_q_identically_one():
    X = np.random.default_rng(5).normal(size=(7, 3))
    Q = DomainClassifier().fit(X, np.zeros(7))
    assert Q.estimator_ is None
    np.testing.assert_array_equal(Q.predict_proba(X[:4]), np.ones((4, 1)))


def test_domain_with_one_sample_is_rejected():
    X, domains = _three_sources()
    domains[0] = 5
    with pytest.raises(ValueError, match=r"source labels\): every source needs at least 2 .*\[5\]"):
        DomainClassifier().fit(X, domains)


@pytest.mark.parametrize("bad", [np.nan, None])
def test_missing_domain_labels_are_rejected(bad):
    X, domains = _three_sources()
    domains = domains.astype(object if bad is None else float)
    domains[3] = bad
    with pytest.raises(ValueError, match=r"y \(the source labels\) must not contain NaN or None"):
        DomainClassifier().fit(X, domains)


def test_nan_inputs_are_rejected():
    X, domains = _three_sources()
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        DomainClassifier().fit(X, domains)


def test_domains_with_wrong_length_are_rejected():
    X, domains = _three_sources()
    with pytest.raises(ValueError, match=r"y \(the source labels\) must have shape \(90,\)"):
        DomainClassifier().fit(X, domains[:-1])


def test_predict_proba_rejects_wrong_feature_count():
    X, domains = _three_sources()
    Q = _fit_quietly(DomainClassifier(), X, domains)
    with pytest.raises(ValueError, match="X has 3 features, but DomainClassifier is expecting 2"):
        Q.predict_proba(np.zeros((4, 3)))


@pytest.mark.parametrize("clip", [0.0, -1e-3, 0.5, "small"])
def test_bad_clip_is_rejected(clip):
    X, domains = _three_sources()
    with pytest.raises(ValueError, match="clip must be"):
        DomainClassifier(clip=clip).fit(X, domains)


def test_pickled_classifier_predicts_the_same():
    X, domains = _three_sources(spread=2.0)
    Q = _fit_quietly(DomainClassifier(), X, domains)
    restored = pickle.loads(pickle.dumps(Q))
    np.testing.assert_array_equal(restored.predict_proba(X), Q.predict_proba(X))


def test_clone_keeps_parameters_unfitted():
    Q = clone(DomainClassifier(clip=1e-4))
    assert Q.get_params()["clip"] == 1e-4 and not hasattr(Q, "classes_")


def test_from_fitted_equals_a_prefit_fit_without_seeing_inputs():
    X, domains = _three_sources(spread=0.3)
    fitted = LogisticRegression().fit(X, domains)
    direct = DomainClassifier.from_fitted(fitted, np.unique(domains), clip=0.01)
    prefit = DomainClassifier(estimator=fitted, clip=0.01, prefit=True).fit(X, domains)
    np.testing.assert_allclose(direct.predict_proba(X), prefit.predict_proba(X), rtol=0, atol=0)
    assert direct.n_features_in_ == prefit.n_features_in_


@pytest.mark.parametrize("C, message", [(0, "C must be > 0"), ("1", "C must be a real number")])
def test_federated_q_refuses_a_bad_c_before_any_request(C, message):
    from manytask.boost.federated.domain import fit_domain_classifier

    # transport None: any request before the check would fail with AttributeError instead
    with pytest.raises(ValueError, match=f"^{message}"):
        fit_domain_classifier(None, [[0], [1]], [0, 1], C=C)
