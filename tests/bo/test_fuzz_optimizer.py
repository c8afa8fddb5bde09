"""Property-based fuzzing of MultiTaskBO's construction, ask, tell and checkpoints (issue 23),
with and without black-box constraints (issue 27).

The contract under test, for every generated input: either a ValueError or TypeError whose
message names the parameter (or the checkpoint entry) at fault, with the optimiser's
``state_dict()`` exactly as before, or a finite, correct result. Examples are derandomised
(the same in CI every time). No deadline: a timing limit would fail on a loaded machine
(ask(7) on the constrained box took 23 s under load 25), and the suite asserts no timings.
"""

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from manytask.bo import MultiTaskBO
from manytask.bo.policies import ALGORITHMS
from manytask.kernels import RBF, Separable, uniform_task_similarity

C = np.linspace(0, 1, 20)[:, None]
G = Separable(RBF(0.2), uniform_task_similarity(2, 0.4))
G3 = Separable(RBF(0.2), uniform_task_similarity(3, 0.4))

FUZZ = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---- generated values ----------------------------------------------------------------------
any_float = st.floats(allow_nan=True, allow_infinity=True)
extreme_float = st.sampled_from([0.0, -0.0, 5e-324, 1e-300, 1e150, 1e300, 1.7e308, -1.7e308])
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10**6),
    any_float,
    extreme_float,
    st.text(max_size=3),
    st.lists(any_float, max_size=3),
)
float_vectors = st.one_of(
    st.lists(st.one_of(st.floats(-2.0, 2.0), extreme_float, any_float), min_size=0, max_size=3),
    anything,
)

PARAMETERS = {
    "algorithm": st.one_of(st.sampled_from(ALGORITHMS), anything),
    "scalarization": st.one_of(st.sampled_from(["chebyshev", "linear"]), anything),
    "weights": st.one_of(st.sampled_from(["paria", "uniform", "dirichlet"]), float_vectors),
    "noise": st.one_of(st.floats(1e-6, 10.0), anything),
    "delta": st.one_of(st.floats(1e-3, 1.0), anything),
    "rkhs_bound": st.one_of(st.floats(0.0, 10.0), anything),
    "noise_std": st.one_of(st.floats(0.0, 10.0), anything),
    "epsilon": st.one_of(st.floats(0.01, 0.99), anything),
    "beta": st.one_of(st.floats(0.0, 10.0), anything),
    "seed": st.one_of(st.integers(0, 2**64), anything),
    "reference": st.one_of(st.just("observed"), float_vectors),
    "scale": float_vectors,
    "q": st.one_of(st.floats(0.5, 100.0), anything),
    "horizon": st.one_of(st.integers(1, 10**6), anything),
    "dictionary": st.one_of(st.sampled_from(["resample", "incremental"]), anything),
    "n_tasks": st.one_of(st.just(2), anything),
    "n_constraints": st.one_of(st.integers(0, 2), anything),
    "n_sobol": st.one_of(st.integers(1, 64), anything),
    "n_restarts": st.one_of(st.integers(0, 3), anything),
    "refit_every": st.one_of(st.integers(1, 10), anything),
    "kernel_prior": st.one_of(st.booleans(), anything),
    "kernel_restarts": st.one_of(st.integers(1, 3), anything),
    "output_warping": st.one_of(st.sampled_from(["none", "yeo-johnson", "rank"]), anything),
    "min_distance": st.one_of(st.floats(1e-6, 1.0), anything),
}


def objective(x):
    x = float(np.asarray(x).reshape(-1)[0])
    return [np.sin(3 * x), np.cos(3 * x)]


def constraint(x, m=1):
    return [float(np.asarray(x).reshape(-1)[0]) - 0.5] * m


def warm(optimizer, rounds=6):
    """Tell ``rounds`` asked points: the objectives (as many as the optimiser has) and, when it
    has constraints, c(x) = x − 0.5 for each."""
    for _ in range(rounds):
        x = optimizer.ask()
        y = (objective(x) * 2)[: optimizer.n_tasks or 2]
        m = optimizer.n_constraints
        optimizer.tell(x, y, constraints=constraint(x, m) if m else None)
    return optimizer


SETUPS = {
    "mt-kb on candidates": dict(candidates=C, kernel=G, seed=0),
    "mt-bkb on candidates": dict(candidates=C, kernel=G, algorithm="mt-bkb", seed=0),
    "mobo on a box": dict(bounds=[[0, 1]], kernel=G, algorithm="mobo", n_sobol=16, n_restarts=1),
    "auto on candidates": dict(candidates=C, kernel="auto", seed=0),
}
CONSTRAINED = {
    "constrained mt-kb on candidates": dict(candidates=C, kernel=G3, n_constraints=1, seed=0),
    "constrained mobo on a box": dict(
        bounds=[[0, 1]], kernel=G3, algorithm="mobo", n_constraints=1, n_sobol=16, n_restarts=1
    ),
    "constrained auto on candidates": dict(candidates=C, kernel="auto", n_constraints=1, seed=0),
}
SETUPS = {**SETUPS, **CONSTRAINED}
STATES = {name: warm(MultiTaskBO(**setup)).state_dict() for name, setup in SETUPS.items()}


def fresh(name):
    return MultiTaskBO.from_state_dict(copy.deepcopy(STATES[name]))


def assert_names(error, names):
    message = str(error)
    assert any(name in message for name in names), f"{message!r} names none of {names}"


def assert_consistent(optimizer):
    """A usable optimiser: finite history of matching lengths, an exact checkpoint round trip,
    and a next proposal that is finite and inside the domain."""
    t = len(optimizer.X_)
    assert optimizer.Y_.shape[0] == optimizer.weights_.shape[0] == t
    assert np.all(np.isfinite(optimizer.X_))
    state = json.loads(json.dumps(optimizer.state_dict()))
    assert MultiTaskBO.from_state_dict(state).state_dict() == state
    x = optimizer.ask()
    assert_in_domain(optimizer, x[None, :])
    if optimizer._policy is not None:  # the model behind the next proposal is finite
        posterior = optimizer._policy.posterior
        assert np.all(np.isfinite(posterior.mean(x[None, :])))
        assert np.all(np.isfinite(posterior.variance_norm(x[None, :])))


def assert_in_domain(optimizer, points):
    assert np.all(np.isfinite(points))
    if optimizer.candidates is not None:
        assert all(np.any(np.all(optimizer.candidates == p, axis=1)) for p in points)
    else:
        assert np.all((points >= optimizer.bounds[:, 0]) & (points <= optimizer.bounds[:, 1]))


# ---- construction ----------------------------------------------------------------------------
@FUZZ
@given(data=st.data())
def test_construction_refuses_naming_the_parameter_or_builds_a_working_optimizer(data):
    names = data.draw(st.sets(st.sampled_from(sorted(PARAMETERS)), max_size=3), label="names")
    kwargs = {name: data.draw(PARAMETERS[name], label=name) for name in sorted(names)}
    try:
        optimizer = MultiTaskBO(candidates=C, kernel=G, **kwargs)
    except (ValueError, TypeError) as error:
        assert_names(error, names)
        return
    warm(optimizer, 2)
    assert_consistent(optimizer)


# ---- ask ---------------------------------------------------------------------------------------
@FUZZ
@given(
    name=st.sampled_from(sorted(SETUPS)),
    k=st.one_of(st.none(), st.integers(-3, 25), st.sampled_from([10**6, 2.0, True]), anything),
)
def test_ask_returns_k_distinct_points_or_refuses_naming_k(name, k):
    optimizer = fresh(name)
    before = optimizer.state_dict()
    try:
        points = optimizer.ask(k)
    except (ValueError, TypeError) as error:
        assert_names(error, ["k"])
        assert optimizer.state_dict() == before
        return
    points = np.atleast_2d(points)
    count = 1 if k is None else k
    assert points.shape == (count, 1)
    assert_in_domain(optimizer, points)
    assert len(np.unique(points, axis=0)) == count
    if optimizer.bounds is not None:  # brute force over all pairs, pending points included
        every = np.r_[np.array([x for x, _ in before["pending"]]).reshape(-1, 1), points]
        width = optimizer.bounds[:, 1] - optimizer.bounds[:, 0]
        gaps = np.max(np.abs(every[:, None, :] - every[None, :, :]) / width, axis=2)
        assert np.min(gaps + 2 * np.eye(len(every))) >= optimizer.min_distance
    assert len(optimizer.pending_) == len(before["pending"]) + count


# ---- tell --------------------------------------------------------------------------------------
@FUZZ
@given(
    name=st.sampled_from(sorted(set(SETUPS) - set(CONSTRAINED))), x=float_vectors, y=float_vectors
)
def test_tell_records_one_observation_or_refuses_naming_x_or_y(name, x, y):
    optimizer = fresh(name)
    before = optimizer.state_dict()
    try:
        optimizer.tell(x, y)
    except (ValueError, TypeError) as error:
        assert_names(error, ["x", "y"])
        assert optimizer.state_dict() == before
        return
    assert len(optimizer.X_) == len(before["X"]) + 1
    np.testing.assert_array_equal(optimizer.X_[-1], np.asarray(x, dtype=float).reshape(-1))
    np.testing.assert_array_equal(optimizer.Y_[-1], np.asarray(y, dtype=float).reshape(-1))
    assert_consistent(optimizer)


@FUZZ
@given(
    name=st.sampled_from(sorted(CONSTRAINED)),
    x=st.one_of(st.floats(0.0, 1.0).map(lambda v: [v]), float_vectors),
    y=st.one_of(st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=2), float_vectors),
    c=st.one_of(st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=1), float_vectors),
)
def test_constrained_tell_records_one_observation_or_refuses_naming_the_input(name, x, y, c):
    optimizer = fresh(name)
    before = optimizer.state_dict()
    try:
        optimizer.tell(x, y, constraints=c)
    except (ValueError, TypeError) as error:
        assert_names(error, ["x", "y", "constraints"])
        assert optimizer.state_dict() == before
        return
    assert len(optimizer.X_) == len(before["X"]) + 1
    np.testing.assert_array_equal(optimizer.Y_[-1], np.asarray(y, dtype=float).reshape(-1))
    np.testing.assert_array_equal(
        optimizer.constraints_[-1], np.asarray(c, dtype=float).reshape(-1)
    )
    feasible = np.all(optimizer.constraints_ <= 0, axis=1)
    assert np.array_equal(optimizer.feasible_, feasible)
    front = optimizer.pareto_front()[0]  # feasible observations only
    assert all(feasible[np.all(optimizer.X_ == p, axis=1)].any() for p in front)
    assert_consistent(optimizer)


# ---- checkpoints -------------------------------------------------------------------------------
def _paths(value, prefix=()):
    """Every position in a nested checkpoint: dict keys and list indices."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):
            yield from _paths(item, prefix + (index,))


def _replaced(state, path, value):
    state = copy.deepcopy(state)
    if not path:
        return value
    target = state
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return state


@FUZZ
@given(name=st.sampled_from(sorted(SETUPS)), data=st.data())
def test_checkpoint_loads_exactly_or_refuses_naming_the_entry(name, data):
    state = STATES[name]
    path = data.draw(st.sampled_from(list(_paths(state))), label="path")
    value = data.draw(st.one_of(anything, st.lists(anything, max_size=3)), label="value")
    corrupted = _replaced(state, path, value)
    kept = copy.deepcopy(corrupted)
    try:
        optimizer = MultiTaskBO.from_state_dict(corrupted)
    except (ValueError, TypeError) as error:
        # the entry's name: a config parameter, or "state" for the history and the rest
        assert_names(error, ["state"] + [str(key) for key in path if isinstance(key, str)])
        assert corrupted == kept or corrupted is value
        return
    assert corrupted == kept  # loading reads the checkpoint, never edits it
    assert_consistent(optimizer)


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_untouched_checkpoint_round_trips_exactly(name):
    state = json.loads(json.dumps(STATES[name]))
    assert MultiTaskBO.from_state_dict(state).state_dict() == state
