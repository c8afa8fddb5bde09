"""A MULTIBOOST fit depends on its data and options only, not on what the process ran before:
the same model in a fresh interpreter as in this test session (after other fits, numba's
kernels compiled, BLAS and numba thread pools used), and with numba's feature loops on one
thread or on all. The cross-process check fits Q(k|x) too (a logistic regression through
BLAS), with BLAS on one thread as the reproductions run it."""

import numpy as np
import pytest

from _helpers import run_in_fresh_interpreter
from manytask.boost import MultiBoostClassifier, kernels

# Sources of different shifts; features rounded to one decimal (many equal values, so stumps
# on different features that split the training points the same way tie exactly).
_PROBLEM = """
import numpy as np
rng = np.random.default_rng(5)
domains = np.repeat([0, 1, 2], 80)
X = np.round(rng.normal(size=(240, 5)) + 0.4 * domains[:, None], 1)
y = (X[:, 0] - 0.5 * X[:, 1] * (domains - 1) + 0.5 * rng.normal(size=240) > 0.4).astype(int)
"""

_FIT = """
from threadpoolctl import threadpool_limits
from manytask.boost import MultiBoostClassifier
with threadpool_limits(limits=1, user_api="blas"):
    model = MultiBoostClassifier(n_estimators=30, step="exact_line_search").fit(
        X, y, domains=domains)
"""

# The fit's function on the training points is a sum of ≤ 30 terms α_t Q(k_t|x) h_t(x), each
# α_t ≤ 1.6 here: two fits that make the same choices agree to the rounding of such sums
# (~1e-15), far below 1e-9; a different choice changes a term, not only its last bits.
_ATOL = 1e-9


def _namespace():
    namespace = {}
    exec(_PROBLEM, namespace)  # noqa: S102 the same problem text as the fresh interpreter's
    return namespace


def test_fit_in_a_fresh_interpreter_equals_the_fit_in_this_session():
    namespace = _namespace()
    X, y, domains = namespace["X"], namespace["y"], namespace["domains"]
    # this session first runs other fits (other arrays, numba threads, BLAS calls) ...
    for options in ({"mu": 10.0}, {"max_depth": 2}, {"n_bins": 8}):
        other = MultiBoostClassifier(n_estimators=10, **options)
        other.fit(X[::-1], y[::-1], domains=domains[::-1])
    exec(_FIT, namespace)  # noqa: S102
    here = namespace["model"]
    # ... the fresh interpreter runs nothing before the fit
    code = (
        "import json\n" + _PROBLEM + _FIT
        + "print(json.dumps({'decision': model.decision_function(X).tolist(),\n"
        "                    'objective': float(model.objective_),\n"
        "                    'rules': [r.get('direction_rule') for r in model.history_]}))\n"
    )  # fmt: skip
    fresh = run_in_fresh_interpreter(code)
    assert "steepest" in fresh["rules"]  # the fallback at ties of the hard max ran
    np.testing.assert_allclose(here.decision_function(X), fresh["decision"], rtol=0, atol=_ATOL)
    assert here.objective_ == pytest.approx(fresh["objective"], rel=1e-12)


@pytest.mark.skipif(not kernels.numba_available(), reason="numba is not installed")
def test_fit_does_not_depend_on_numba_thread_count(monkeypatch):
    """The compiled searches run features in parallel, each feature's sums on one thread and
    in one order: one thread or all give the same model."""
    import numba

    namespace = _namespace()
    monkeypatch.setattr(kernels, "PARALLEL_MIN_CELLS", 0)  # the parallel kernels, always
    decisions = {}
    previous = numba.get_num_threads()
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            with kernels.use_backend("numba"):
                exec(_FIT, namespace)  # noqa: S102
            decisions[threads] = namespace["model"].decision_function(namespace["X"])
    finally:
        numba.set_num_threads(previous)
    reference = decisions[1]
    for decision in decisions.values():
        np.testing.assert_allclose(decision, reference, rtol=0, atol=_ATOL)


@pytest.mark.parametrize("step", ["adaboost", "exact_line_search"])
def test_sources_of_equal_rate_go_to_the_first_source(step):
    """Source 1 is source 0's points in another order and Q(k|x) = ½: both sources' losses
    and best directions are equal in exact arithmetic, their computed rates only to rounding
    (sums in another order). The tie rule gives every round to source 0, whatever the order."""
    from sklearn.dummy import DummyClassifier

    rng = np.random.default_rng(3)
    X0 = rng.normal(size=(60, 3))
    y0 = (X0[:, 0] + 0.7 * rng.normal(size=60) > 0).astype(int)
    domains = np.repeat([0, 1], 60)
    decisions = []
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(60)
        X, y = np.vstack([X0, X0[order]]), np.concatenate([y0, y0[order]])
        uniform = DummyClassifier(strategy="prior").fit(X, domains)
        model = MultiBoostClassifier(n_estimators=15, step=step, domain_classifier=uniform)
        model.fit(X, y, domains=domains)
        assert [k for k, _ in model.estimators_] == [0] * len(model.estimators_)
        decisions.append(model.decision_function(X0))
    for decision in decisions[1:]:
        np.testing.assert_allclose(decision, decisions[0], rtol=0, atol=_ATOL)
