"""Property-based fuzzing of every public estimator with bad and extreme input (issue 23).

The contract, for every call: either a ``ValueError``/``TypeError`` whose message names the
parameter at fault, with the estimator exactly as it was (its pickled state compared before
and after; a refused refit keeps the earlier fit), or a finite result of the right shape.
Hypothesis draws data sets (NaN/inf, magnitudes from 1e-300 to 1e300, empty, wrong shapes,
one-class sources), parameter values and prediction levels; ``derandomize`` makes CI
deterministic; there is no ``deadline`` (the suite asserts no timings, and a loaded machine
slows an example past any fixed limit).
"""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from manytask.boost import (
    AdaBoost,
    AdaBoostPerDomain,
    DMSAClassifier,
    DomainClassifier,
    MultiBoostClassifier,
    PooledAdaBoost,
)
from manytask.itl import (
    IndependentQuantileRegressor,
    InfiniteCostSensitiveClassifier,
    InfiniteLevelSetEstimator,
    InfiniteQuantileRegressor,
    JointQuantileRegressor,
)

FUZZ = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

#: name -> (estimator, how it is fitted). Few rounds/anchors/iterations: the contract is about
#: input handling, not accuracy.
ESTIMATORS = {
    "MultiBoostClassifier": (MultiBoostClassifier(n_estimators=3), "sources"),
    "MultiBoostClassifier-mh": (MultiBoostClassifier(n_estimators=3, multi_class="mh"), "sources"),
    "MultiBoostClassifier-l1": (MultiBoostClassifier(n_estimators=3, beta=0.05), "sources"),
    "MultiBoostClassifier-mu": (MultiBoostClassifier(n_estimators=3, mu=5.0), "sources"),
    "AdaBoost": (AdaBoost(n_estimators=3), "binary"),
    "PooledAdaBoost": (PooledAdaBoost(n_estimators=3), "sources"),
    "AdaBoostPerDomain": (AdaBoostPerDomain(n_estimators=3, domain=0), "sources"),
    "DMSAClassifier": (DMSAClassifier(n_estimators=3, random_state=0), "sources"),
    "DomainClassifier": (DomainClassifier(), "domains"),
    "InfiniteQuantileRegressor": (
        InfiniteQuantileRegressor(n_anchors=5, max_iter=100, random_state=0),  # in-fit selection
        "real",
    ),
    "JointQuantileRegressor": (JointQuantileRegressor(max_iter=100), "real"),
    "IndependentQuantileRegressor": (IndependentQuantileRegressor(max_iter=100), "real"),
    "InfiniteCostSensitiveClassifier": (
        InfiniteCostSensitiveClassifier(n_anchors=5, max_iter=100, random_state=0),  # in-fit
        "binary",
    ),
    "InfiniteLevelSetEstimator": (
        InfiniteLevelSetEstimator(n_anchors=5, max_iter=100, random_state=0),  # in-fit selection
        "none",
    ),
}
NAMES = list(ESTIMATORS)

#: Words that name an input in an error message (the data arguments and their parts).
INPUT_NAMES = ("X", "y", "domains", "sample_weight", "source", "class", "quantiles", "theta")


def clean_data(kind, n=24, d=2, seed=0):
    """A well-posed data set of ``kind``: (X, fit arguments after X)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    domains = np.arange(n) % 2
    labels = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    labels[:4] = [0, 1, 0, 1]  # both classes in both sources
    if kind == "sources":
        return X, (labels, domains)
    if kind == "binary":
        return X, (labels,)
    if kind == "domains":
        return X, (domains,)
    if kind == "real":
        return X, (X[:, 0] + 0.3 * rng.normal(size=n),)
    return X, ()


def fit(estimator, X, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # iteration caps and clipping are not the point here
        return estimator.fit(X, *args)


def outputs(estimator, X):
    """Every prediction-like output of a fitted estimator on X, as float arrays."""
    results = []
    for method in ("decision_function", "predict_proba", "score_samples"):
        if hasattr(estimator, method):
            results.append(np.asarray(getattr(estimator, method)(X), dtype=float))
    prediction = estimator.predict(X)
    if prediction.dtype.kind in "fiub":
        results.append(np.asarray(prediction, dtype=float))
    return results


def state(estimator) -> bytes:
    return pickle.dumps(estimator.__dict__)


def assert_names(error, names):
    message = str(error)
    named = [name for name in names if re.search(rf"(?<![A-Za-z_]){re.escape(name)}", message)]
    assert named, f"{type(error).__name__} names none of {names}: {message}"


def check_contract(estimator, call, names, n_rows=None):
    """``call()`` either refuses (ValueError/TypeError naming one of ``names``, estimator
    unchanged) or returns finite outputs with ``n_rows`` rows."""
    before = state(estimator)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call()
    except (ValueError, TypeError) as error:
        assert_names(error, names)
        assert state(estimator) == before, f"state changed by a refused call: {error}"
        return None
    for values in result:
        assert np.all(np.isfinite(values)), f"non-finite output {values}"
        if n_rows is not None:
            assert values.shape[0] == n_rows
    return result


# --------------------------------------------------------------------------- strategies

SCALES = st.sampled_from([1.0, 1e-300, 1e-150, 1e150, 1e300, -1e300])
CORRUPTIONS = st.sampled_from(
    ["none", "nan", "inf", "-inf", "empty", "one_row", "one_dim", "three_dim", "no_feature",
     "short_target", "constant", "strings"]
)  # fmt: skip
TARGETS = st.sampled_from(["clean", "one_class", "three_classes", "nan", "column", "one_source",
                           "one_class_source", "nan_source", "float_source"])  # fmt: skip


def corrupt_X(X, corruption, scale):
    X = X * scale
    if corruption == "nan":
        X = X.copy()
        X[1, 0] = np.nan
    elif corruption in ("inf", "-inf"):
        X = X.copy()
        X[2, -1] = float(corruption)
    elif corruption == "empty":
        X = X[:0]
    elif corruption == "one_row":
        X = X[:1]
    elif corruption == "one_dim":
        X = X[:, 0]
    elif corruption == "three_dim":
        X = X[:, :, None]
    elif corruption == "no_feature":
        X = X[:, :0]
    elif corruption == "constant":
        X = np.full_like(X, scale)
    elif corruption == "strings":
        X = X.astype(str).astype(object)
        X[0, 0] = "a"
    return X


def corrupt_args(kind, args, target, n):
    """The fit arguments after X, corrupted by ``target`` and cut to ``n`` rows."""
    args = [np.asarray(arg)[:n] for arg in args]
    if not args:
        return args
    first = args[0]
    if target == "one_class":
        first = np.zeros_like(first)
    elif target == "three_classes" and first.size:
        first = np.arange(first.size) % 3
    elif target == "nan" and first.size:
        first = first.astype(float)
        first[0] = np.nan
    elif target == "column":
        first = first[:, None]
    args[0] = first
    if kind == "sources" and args[1].size:
        domains = args[1].astype(object if target == "nan_source" else float)
        if target == "one_source":
            domains = np.zeros_like(domains)
        elif target == "one_class_source":
            args[0] = np.where(domains == 1, args[0][0], args[0])
        elif target == "nan_source":
            domains[0] = None
        elif target == "float_source":
            domains = domains + 0.5
        args[1] = domains
    return args


# --------------------------------------------------------------------------- properties


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(
    corruption=CORRUPTIONS,
    scale=SCALES,
    target=TARGETS,
    short=st.booleans(),
    seed=st.integers(0, 3),
)
def test_refit_on_bad_or_extreme_data_refuses_or_is_finite(name, corruption, scale, target,
                                                           short, seed):  # fmt: skip
    template, kind = ESTIMATORS[name]
    X, args = clean_data(kind, seed=seed)
    estimator = fit(clone(template), X, args)  # refits must keep this fit when refused
    bad_X = corrupt_X(X, corruption, scale)
    n_target = len(X) - 1 if short or corruption == "short_target" else len(X)
    bad_args = corrupt_args(kind, args, target, n_target)
    result = check_contract(
        estimator,
        lambda: outputs(fit(estimator, bad_X, bad_args), bad_X),
        INPUT_NAMES,
        n_rows=len(bad_X),
    )
    if result is not None and scale == 1.0 and corruption == "none":
        # The refit on clean data predicts what a fresh fit predicts.
        fresh = fit(clone(template), bad_X, bad_args)
        for ours, theirs in zip(result, outputs(fresh, bad_X)):
            np.testing.assert_allclose(ours, theirs)


#: Values no parameter of these estimators accepts everywhere; each either is refused naming
#: the parameter or gives a finite fit.
BAD_VALUES = st.sampled_from(
    [-1, 0, 1, 2.5, -0.5, 1e308, float("nan"), float("inf"), "foo", None, True, [0.5, 2.0],
     np.zeros((2, 2)), object()]
)  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data(), value=BAD_VALUES)
def test_bad_parameter_value_refuses_or_is_finite(name, data, value):
    template, kind = ESTIMATORS[name]
    X, args = clean_data(kind)
    estimator = fit(clone(template), X, args)
    parameter = data.draw(st.sampled_from(sorted(template.get_params(deep=False))))
    estimator.set_params(**{parameter: value})
    check_contract(
        estimator, lambda: outputs(fit(estimator, X, args), X), [parameter], n_rows=len(X)
    )


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(corruption=CORRUPTIONS, scale=SCALES)
def test_predict_on_bad_or_extreme_inputs_refuses_or_is_finite(name, corruption, scale):
    template, kind = ESTIMATORS[name]
    X, args = clean_data(kind)
    estimator = fit(clone(template), X, args)
    bad_X = corrupt_X(X[:6], corruption, scale)
    check_contract(estimator, lambda: outputs(estimator, bad_X), ["X"], n_rows=len(bad_X))


LEVELS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.floats(-0.5, 1.5), min_size=0, max_size=3),
    st.sampled_from([0.0, 1.0, 0.5, [0.1, 0.9], [[0.2]], "median"]),
)
LEVEL_ARGUMENTS = {
    "InfiniteQuantileRegressor": ("predict", "quantiles"),
    "JointQuantileRegressor": ("predict", "quantiles"),
    "IndependentQuantileRegressor": ("predict", "quantiles"),
    "InfiniteCostSensitiveClassifier": ("decision_function", "theta"),
    "InfiniteLevelSetEstimator": ("decision_function", "theta"),
}


@pytest.mark.parametrize("name", list(LEVEL_ARGUMENTS))
@FUZZ
@given(levels=LEVELS)
def test_levels_outside_the_model_are_refused_naming_them(name, levels):
    template, kind = ESTIMATORS[name]
    X, args = clean_data(kind)
    estimator = fit(clone(template), X, args)
    method, argument = LEVEL_ARGUMENTS[name]
    result = check_contract(
        estimator,
        lambda: [np.asarray(getattr(estimator, method)(X[:5], **{argument: levels}), float)],
        [argument],
        n_rows=5,
    )
    if result is not None:
        expected = (5,) if np.ndim(levels) == 0 else (5, len(levels))
        assert result[0].shape == expected
