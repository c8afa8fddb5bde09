"""MultiTaskSampler beyond Optuna's suite: the encoding of the search space against a
brute-force count, what the model learns from (failed, pruned, NaN, infeasible trials),
running trials hallucinated, convergence, and bad input."""

import copy
import inspect
import math
import warnings

import numpy as np
import pytest

optuna = pytest.importorskip("optuna", reason="the Optuna sampler needs manytask[optuna]")

from optuna.distributions import (  # noqa: E402
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState  # noqa: E402

from manytask.bo import MultiTaskBO  # noqa: E402
from manytask.bo.metrics import hypervolume_2d  # noqa: E402
from manytask.bo.optuna import MultiTaskSampler, _Encoding  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAST = dict(n_sobol=128, n_restarts=2)


@pytest.mark.parametrize(
    "distribution",
    [
        IntDistribution(3, 9, step=2),
        IntDistribution(-10, 10),
        IntDistribution(1, 100, log=True),
        FloatDistribution(-10, 10, step=0.5),
    ],
)
def test_discrete_values_get_equal_shares_of_the_unit_interval(distribution):
    """Every grid value decodes from an equal share of [0, 1] (brute-force count on a fine
    grid of u; a log int's share is proportional to the log-width of its cell), and every
    grid value encodes to a point that decodes back to it."""
    encoding = _Encoding({"x": distribution})
    u = (np.arange(20_000) + 0.5) / 20_000
    decoded = np.array([encoding.decode(np.array([v]))["x"] for v in u])
    step = distribution.step or 1
    grid = distribution.low + step * np.arange(
        round((distribution.high - distribution.low) / step) + 1
    )
    assert np.all(np.isin(decoded, grid))
    shares = np.array([np.mean(np.isclose(decoded, g)) for g in grid])
    if distribution.log:  # cells [g − ½, g + ½] in log space
        width = np.log(grid + 0.5) - np.log(grid - 0.5)
        expected = width / (math.log(distribution.high + 0.5) - math.log(distribution.low - 0.5))
    else:
        expected = np.full(len(grid), 1 / len(grid))
    np.testing.assert_allclose(shares, expected, atol=2e-4)  # 2 samples per cell edge
    for g in grid:
        assert encoding.decode(encoding.encode({"x": g.item()}))["x"] == pytest.approx(g)


def test_categorical_is_one_hot_and_decodes_by_the_largest_coordinate():
    encoding = _Encoding(
        {"c": CategoricalDistribution(["a", 2, None]), "x": FloatDistribution(0, 1)}
    )
    np.testing.assert_array_equal(encoding.encode({"c": 2, "x": 0.25}), [0, 1, 0, 0.25])
    assert encoding.decode(np.array([0.2, 0.1, 0.7, 0.5])) == {"c": None, "x": 0.5}


def test_log_float_round_trip_and_clipping():
    encoding = _Encoding({"x": FloatDistribution(1e-7, 1.0, log=True)})
    for value in (1e-7, 3e-4, 1.0):
        assert encoding.decode(encoding.encode({"x": value}))["x"] == pytest.approx(value)
    assert encoding.encode({"x": 0.01})[0] == pytest.approx(math.log(0.01 / 1e-7) / math.log(1e7))


def quadratic(trial):
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    return (x - 0.3) ** 2 + (y - 0.6) ** 2


def test_finds_the_minimum_of_a_quadratic():
    """20 trials on a 2-D quadratic with its minimum 0 inside the box: the best value is
    below 1e-3 (random search needs ~1000 trials for that: P(r² < 1e-3) = π·1e-3)."""
    study = optuna.create_study(sampler=MultiTaskSampler(seed=0, **FAST))
    study.optimize(quadratic, n_trials=20)
    assert study.best_value < 1e-3


def test_failed_pruned_and_nan_trials_are_left_out():
    def objective(trial):
        value = quadratic(trial)
        if trial.number % 5 == 1:
            raise RuntimeError("a failed evaluation")
        if trial.number % 5 == 2:
            raise optuna.TrialPruned()
        if trial.number % 5 == 3:
            return float("nan")
        return value

    sampler = MultiTaskSampler(seed=0, **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=20, catch=(RuntimeError,))
    states = [t.state for t in study.trials]
    assert states.count(TrialState.FAIL) == 8 and states.count(TrialState.PRUNED) == 4
    complete = [t for t in study.trials[:-1] if t.state == TrialState.COMPLETE]
    # the last trial is told at the next sample: every earlier complete trial, and no other
    np.testing.assert_allclose(
        np.sort(-sampler.optimizer_.Y_[:, 0]), np.sort([t.value for t in complete])
    )


def told_against_brute_force(sampler, trials, feasible):
    """Every feasible trial told at its value, every infeasible one at the minimum of all
    values seen up to it (maximisation form), recomputed by a loop."""
    told = sampler.optimizer_.Y_[:, 0]
    raw = -np.array([t.value for t in trials[: len(told)]])
    expected = [raw[i] if feasible[i] else raw[: i + 1].min() for i in range(len(told))]
    np.testing.assert_allclose(told, expected)


def test_infeasible_trials_are_told_at_the_worst_value_seen():
    """Minimise x + y subject to x ≥ 0.5 (c = 0.5 − x ≤ 0, Trial.set_constraint): the model
    is told every infeasible trial at the worst value seen so far, and the best feasible
    trial approaches the constrained minimum 0.5."""

    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        trial.set_constraint("x", 0.5 - x)
        return x + y

    sampler = MultiTaskSampler(seed=0, **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=25)
    feasible = np.array([t.params["x"] >= 0.5 for t in study.trials])
    assert feasible.any() and (~feasible).any()
    told_against_brute_force(sampler, study.trials, feasible)
    assert min(t.value for t, ok in zip(study.trials, feasible) if ok) < 0.6
    assert study.best_trial.params["x"] >= 0.5  # Optuna's own feasibility filter agrees


def test_constraints_func_is_honoured_and_its_length_checked():
    def objective(trial):
        return trial.suggest_float("x", 0, 1)

    sampler = MultiTaskSampler(seed=0, constraints_func=lambda t: [0.5 - t.params["x"]], **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=12)
    feasible = np.array([t.params["x"] >= 0.5 for t in study.trials])
    assert feasible.any() and (~feasible).any()
    told_against_brute_force(sampler, study.trials, feasible)

    lengths = iter([1, 1, 2] + [2] * 10)
    sampler = MultiTaskSampler(seed=0, constraints_func=lambda t: [-1.0] * next(lengths))
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(ValueError, match="constraints_func returned 2 values"):
        study.optimize(objective, n_trials=6)


SPACE = {"x": FloatDistribution(0, 1), "y": FloatDistribution(0, 1)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_running_trial_is_hallucinated(seed):
    """Two copies of one sampler (same model, same random state) propose x0 and x1 for a new
    trial, the second with a running trial at x0: the hallucination at x0 (posterior mean,
    smaller variance there) moves the proposal away; without it x1 = x0 exactly."""
    sampler = MultiTaskSampler(seed=seed, **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=8)
    first, second = copy.deepcopy(sampler), copy.deepcopy(sampler)
    study.ask()
    x0 = first.sample_relative(study, study.get_trials(deepcopy=False)[-1], SPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.sampler = optuna.samplers.PartialFixedSampler(x0, optuna.samplers.RandomSampler())
    running = study.ask()
    assert [running.suggest_float(name, 0, 1) for name in SPACE] == list(x0.values())
    study.ask()
    x1 = second.sample_relative(study, study.get_trials(deepcopy=False)[-1], SPACE)
    assert math.dist(x0.values(), x1.values()) > 1e-4


def test_multi_objective_hypervolume_beats_random_search():
    """ZDT1 with d = 3 (two objectives), 25 trials: the hypervolume of the front found
    exceeds random search's over 25 trials, for each of 2 seeds."""

    def objective(trial):
        x = np.array([trial.suggest_float(f"x{i}", 0, 1) for i in range(3)])
        g = 1 + 9 * x[1:].mean()
        return x[0], g * (1 - np.sqrt(x[0] / g))

    def hv(study):
        Y = -np.array([t.values for t in study.best_trials])
        return hypervolume_2d(Y, np.array([-1.1, -11.0]))

    for seed in range(2):
        ours = optuna.create_study(
            directions=["minimize"] * 2, sampler=MultiTaskSampler(seed=seed, **FAST)
        )
        ours.optimize(objective, n_trials=25)
        rand = optuna.create_study(
            directions=["minimize"] * 2, sampler=optuna.samplers.RandomSampler(seed)
        )
        rand.optimize(objective, n_trials=25)
        assert hv(ours) > hv(rand)


class Unmodelled(BaseDistribution):
    def single(self):
        return False

    def _contains(self, param_value_in_internal_repr):
        return True

    def to_internal_repr(self, param_value_in_external_repr):
        return param_value_in_external_repr

    def to_external_repr(self, param_value_in_internal_repr):
        return param_value_in_internal_repr


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="bounds is set by MultiTaskSampler"):
        MultiTaskSampler(bounds=[[0, 1]])
    with pytest.raises(ValueError, match="not a MultiTaskBO argument"):
        MultiTaskSampler(n_sobl=16)
    with pytest.raises(ValueError, match="scalarization must be one of"):
        MultiTaskSampler(scalarization="tchebycheff")
    with pytest.raises(ValueError, match="constraints_func must be callable"):
        MultiTaskSampler(constraints_func=[0.0])
    sampler = MultiTaskSampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    trial = study.ask()
    with pytest.raises(ValueError, match="parameter 'z'.*Unmodelled"):
        sampler.sample_relative(
            study, study._storage.get_trial(trial._trial_id), {"z": Unmodelled()}
        )
    # a fixed reference point with 3 entries on a study with 2 directions
    sampler = MultiTaskSampler(seed=0, reference=[0.0, 0.0, 0.0])
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler)
    with pytest.raises(ValueError, match="reference must have 2 entries.*2 objectives"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.0), n_trials=3)


def test_single_objective_studies_get_their_options_unless_given():
    """SINGLE_OBJECTIVE_OPTIONS apply to one objective only, and a user's option wins."""
    from manytask.bo.optuna import SINGLE_OBJECTIVE_OPTIONS

    # multi-objective studies keep MultiTaskBO's own default prior
    default_prior = inspect.signature(MultiTaskBO).parameters["kernel_prior"].default

    def one(trial):
        return trial.suggest_float("x", 0, 1) ** 2

    def two(trial):
        x = trial.suggest_float("x", 0, 1)
        return x, 1 - x

    cases = [
        (["minimize"], one, {}, SINGLE_OBJECTIVE_OPTIONS),
        (["minimize"], one, {"output_warping": "none"}, {"output_warping": "none"}),
        (
            ["minimize"] * 2,
            two,
            {},
            # avoid_told: MultiTaskBO's default with kernel="auto" (True) holds here too
            {"output_warping": "none", "kernel_prior": default_prior, "avoid_told": True},
        ),
    ]
    for directions, objective, options, expected in cases:
        sampler = MultiTaskSampler(seed=0, **FAST, **options)
        study = optuna.create_study(directions=directions, sampler=sampler)
        study.optimize(objective, n_trials=3)
        for name, value in expected.items():
            assert getattr(sampler.optimizer_, name) == value, (directions, options, name)
