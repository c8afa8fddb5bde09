"""MultiTaskBO, kernels and checkpoints under bad and extreme input (issue 23): one test per
finding. Bad input raises a ValueError naming the parameter and changes nothing; extreme but
valid input gives a finite, correct answer."""

import json

import numpy as np
import pytest

from manytask.bo import MultiTaskBO
from manytask.bo.optimizer import OUTPUT_LIMIT
from manytask.bo.transforms import standardize_outputs
from manytask.kernels import (
    RBF,
    Matern,
    Separable,
    kernel_from_config,
    kernel_to_config,
    uniform_task_similarity,
)
from manytask.posterior import ExactPosterior, NystromPosterior

C = np.linspace(0, 1, 100)[:, None]
G = Separable(RBF(0.2), uniform_task_similarity(2, 0.4))


def f(x):
    return [np.sin(3 * x[0]), np.cos(3 * x[0])]


def warm(optimizer, rounds=6, objective=f):
    for _ in range(rounds):
        x = optimizer.ask()
        optimizer.tell(x, objective(x))
    return optimizer


def assert_refused(call, optimizer, message):
    """``call`` raises a ValueError matching ``message`` and leaves the optimiser as it was."""
    before = optimizer.state_dict()
    with pytest.raises(ValueError, match=message):
        call()
    assert optimizer.state_dict() == before


# ---- ask(k): k distinct points, or a reason -----------------------------------------------
@pytest.mark.parametrize("kernel", [G, "auto"])
@pytest.mark.parametrize("k", [101, 10**6])
def test_ask_for_more_points_than_candidates_is_refused_before_any_work(kernel, k):
    optimizer = warm(MultiTaskBO(candidates=C, kernel=kernel, seed=0))
    assert_refused(lambda: optimizer.ask(k), optimizer, f"at most the number of distinct.*{k}")


def test_ask_for_every_candidate_returns_each_candidate_once():
    optimizer = warm(MultiTaskBO(candidates=C, kernel=G, seed=0))
    optimizer.ask(3)  # pending points are avoided while others remain, never repeated in a batch
    batch = optimizer.ask(100)
    np.testing.assert_array_equal(np.sort(batch[:, 0]), C[:, 0])


def test_duplicate_candidates_count_once_in_the_batch_limit():
    candidates = np.r_[C[:5], C[:5]]
    optimizer = MultiTaskBO(candidates=candidates, kernel=G, seed=0)
    assert len(np.unique(optimizer.ask(5), axis=0)) == 5
    assert_refused(lambda: optimizer.ask(6), optimizer, "distinct candidates, 5, got 6")


def test_box_batch_points_lie_min_distance_apart():
    optimizer = MultiTaskBO(bounds=[[0, 1]], kernel=G, seed=0, n_sobol=128, n_restarts=2)
    batch = warm(optimizer).ask(30)[:, 0]
    gaps = np.abs(batch[:, None] - batch[None, :]) + np.eye(30)  # brute force over all pairs
    assert gaps.min() >= optimizer.min_distance
    assert np.all((batch >= 0) & (batch <= 1))


def test_box_too_small_for_the_separation_is_refused():
    optimizer = MultiTaskBO(bounds=[[0, 1]], kernel=G, seed=0, n_sobol=64, min_distance=0.5)
    warm(optimizer, 2)
    # 0, 0.5 and 1 are the only three points pairwise 0.5 apart in [0, 1]
    assert_refused(lambda: optimizer.ask(4), optimizer, "at most 3 fit")
    optimizer.ask(2)
    assert_refused(lambda: optimizer.ask(2), optimizer, "2 pending")


def test_box_batch_larger_than_the_sobol_sample_is_refused():
    optimizer = MultiTaskBO(bounds=[[0, 1], [0, 1]], kernel=G, seed=0, n_sobol=16)
    assert_refused(lambda: optimizer.ask(17), optimizer, "n_sobol=16")


# ---- construction: every parameter checked before anything is built ----------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(algorithm="foo"), "algorithm must be one of .*'foo'"),
        (dict(n_sobol=0), "n_sobol must be an int >= 1, got 0"),
        (dict(n_sobol=-5), "n_sobol must be an int >= 1, got -5"),
        (dict(n_sobol=2.5), "n_sobol must be an int >= 1, got 2.5"),
        (dict(n_restarts=-1), "n_restarts must be an int >= 0, got -1"),
        (dict(algorithm="mt-bkb", horizon=0), "horizon must be an int >= 1, got 0"),
        (dict(algorithm="mt-bkb", horizon=-1), "horizon must be an int >= 1, got -1"),
        (dict(algorithm="mt-bkb", q=-1.0), "q must be a positive number"),
        (dict(refit_every=0), "refit_every must be an int >= 1, got 0"),
        (dict(kernel_prior="yes"), "kernel_prior must be True or False, got 'yes'"),
        (dict(kernel_mean="linear"), "kernel_mean must be one of zero, constant, got 'linear'"),
        (dict(kernel_warm_start=1), "kernel_warm_start must be True or False, got 1"),
        (dict(kernel_restarts=0), "kernel_restarts must be an int >= 1, got 0"),
        (dict(radius_draw="gamma"), "radius_draw must be one of fixed, exponential, got 'gamma'"),
        (
            dict(acquisition="pi"),
            "acquisition must be one of ucb, ei, moment-ei, noisy-ei, mc-ei or None, got 'pi'",
        ),
        (dict(acquisition="ei", algorithm="mobo"), "acquisition='ei' needs an algorithm"),
        (dict(objective_model="lmc"), "objective_model must be one of icm, independent, auto"),
        (dict(seed=-5), "seed must be an int >= 0, got -5"),
        (dict(seed=True), "seed must be an int >= 0, got True"),
        (dict(beta=np.inf), "beta must be None, a finite number"),
        (dict(weights="foo"), "weights must be one of"),
        (dict(weights=[0.7, 0.7]), "weights must be non-negative and sum to 1"),
        (dict(min_distance=0.0), "min_distance must be > 0"),
        (dict(min_distance=2.0), r"min_distance must lie in \(0, 1\], got 2.0"),
        (dict(avoid_told="yes"), "avoid_told must be True, False or None, got 'yes'"),
    ],
)
def test_bad_parameter_is_refused_at_construction(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiTaskBO(bounds=[[0, 1]], kernel=G, **kwargs)


def test_bad_algorithm_with_auto_kernel_is_refused_before_any_tell():
    with pytest.raises(ValueError, match="algorithm must be one of"):
        MultiTaskBO(candidates=C, algorithm="foo", seed=0)


def test_bad_k_is_refused_and_changes_nothing():
    optimizer = warm(MultiTaskBO(candidates=C, kernel=G, seed=0))
    for k in (0, -1, 2.5, True):
        assert_refused(lambda k=k: optimizer.ask(k), optimizer, "k must be")


# ---- outputs near the float limit -----------------------------------------------------------
def test_standardize_outputs_is_finite_and_exact_near_the_float_limit():
    Y = np.array([[1.7e308, 3.0], [-1.7e308, 3.0], [-1.7e308, -3.0]])
    Y_standard, mean, scale = standardize_outputs(Y)
    factor = np.array([2.0**-1000, 1.0])  # the same data, far from the limit: an exact rescaling
    small = Y * factor  # on which the textbook formula is safe
    np.testing.assert_allclose(Y_standard, (small - small.mean(0)) / small.std(0), rtol=1e-12)
    np.testing.assert_allclose(mean * factor, small.mean(0), rtol=1e-12)
    np.testing.assert_allclose(scale * factor, small.std(0), rtol=1e-12)


def test_auto_kernel_takes_observations_near_the_float_limit():
    optimizer = warm(MultiTaskBO(candidates=C, kernel="auto", seed=0))
    for _ in range(12):  # several refits and incremental updates at the limit
        x = optimizer.ask()
        optimizer.tell(x, [1.7e308, -1.7e308])
    assert len(optimizer.X_) == 18
    assert np.all(np.isfinite(optimizer._policy.posterior.mean()))
    x = optimizer.ask()
    optimizer.tell(x, f(x))  # and later ordinary tells still work
    assert len(optimizer.X_) == 19


def test_auto_kernel_proposals_do_not_depend_on_the_output_scale():
    def proposals(scale):
        optimizer = MultiTaskBO(candidates=C, kernel="auto", seed=0)
        warm(optimizer, 12, lambda x: [scale * v for v in f(x)])
        return optimizer.X_[:, 0]

    # a power of two scales exactly, so the standardised data and every proposal coincide
    unit, huge = proposals(1.0), proposals(2.0**530)  # 2**530 ≈ 3.5e159
    np.testing.assert_array_equal(huge, unit)
    assert not np.array_equal(proposals(-(2.0**530)), huge)  # maximising −f differs


def test_auto_kernel_refits_when_a_value_is_far_outside_the_fitted_range():
    optimizer = warm(MultiTaskBO(candidates=C, kernel="auto", seed=0, refit_every=5), 4)
    fitted_at = optimizer._learned._fitted_at
    x = optimizer.ask()
    assert len(optimizer.X_) + 1 - fitted_at < optimizer.refit_every  # no refit is due
    optimizer.tell(x, [1e300, 0.0])  # standardised by the last fit: ≈ 1e300, beyond the limit
    assert optimizer._learned._fitted_at == len(optimizer.X_)
    assert np.all(np.isfinite(optimizer._policy.posterior.mean()))


@pytest.mark.parametrize("domain", [dict(candidates=C), dict(bounds=[[0, 1]], n_sobol=64)])
def test_given_kernel_refuses_outputs_it_cannot_carry(domain):
    optimizer = warm(MultiTaskBO(kernel=G, seed=0, **domain))
    x = optimizer.ask()
    before = optimizer.state_dict()
    with pytest.raises(ValueError, match=r"y must lie within ±1e\+150.*overflow.*1.7e\+308"):
        optimizer.tell(x, [1.7e308, 1.0])
    assert optimizer.state_dict() == before
    optimizer.tell(x, [OUTPUT_LIMIT, -OUTPUT_LIMIT])  # the limit itself is carried
    assert np.all(np.isfinite(optimizer.ask()))
    assert np.all(np.isfinite(optimizer._policy.posterior.mean(optimizer.X_)))


def test_bad_first_tell_leaves_the_number_of_tasks_unknown():
    optimizer = MultiTaskBO(candidates=C, kernel="auto", seed=0)
    optimizer.ask(2)
    assert_refused(lambda: optimizer.tell([0.5], [np.nan, np.nan]), optimizer, "y must hold")
    assert_refused(lambda: optimizer.tell([0.5], []), optimizer, "y must have at least one")
    assert optimizer.n_tasks is None


# ---- checkpoints: loaded through tell's checks ---------------------------------------------
def _state():
    optimizer = warm(MultiTaskBO(candidates=C, kernel=G, seed=0))
    optimizer.ask()
    return json.loads(json.dumps(optimizer.state_dict()))


def _set(path, value):
    def change(state):
        *keys, last = path
        target = state
        for key in keys:
            target = target[key]
        target[last] = value

    return change


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s.update(Y=s["Y"][:2]), "as many X, Y and weights rows.*2 'Y'"),
        (_set(["Y", 1], [None, None]), r"state\['Y'\]\[1\] must hold at least one measured"),
        (_set(["Y", 1], [1.7e308, 0.0]), r"state\['Y'\]\[1\] must lie within"),
        (_set(["Y", 1], "ab"), r"state\['Y'\]\[1\] must be a list"),
        (_set(["weights", 1], [0.2, 0.3, 0.5]), r"state\['weights'\]\[1\] must have 2 entries"),
        (_set(["pending", 0, 0], [None]), r"state\['pending'\]\[0\]\[0\] must be finite"),
        (_set(["pending", 0, 0], [float("nan")]), r"state\['pending'\]\[0\]\[0\] must be finite"),
        (_set(["pending", 0, 1], None), r"state\['pending'\]\[0\]\[1\] must be"),
        (_set(["X", 0], ["a"]), r"state\['X'\]\[0\] must be numeric"),
        (_set(["X", 0], [0.1, 0.2]), r"state\['X'\]\[0\] must have 1 coordinates"),
        (_set(["rng"], {"bit_generator": "PCG64"}), r"state\['rng'\] must be a PCG64 state"),
    ],
)
def test_bad_checkpoint_entry_is_refused_naming_it(change, message):
    state = _state()
    change(state)
    with pytest.raises(ValueError, match=message):
        MultiTaskBO.from_state_dict(state)


def test_checkpoint_with_missing_objectives_cannot_be_loaded_with_a_learned_kernel():
    optimizer = warm(MultiTaskBO(candidates=C, kernel=G, seed=0), 3)
    optimizer.tell([0.5], [np.nan, 1.0])
    resumed = MultiTaskBO.from_state_dict(optimizer.state_dict())  # fine with the given kernel
    np.testing.assert_array_equal(resumed.Y_, optimizer.Y_)
    with pytest.raises(ValueError, match=r"state\['Y'\]\[3\] has NaN.*kernel=auto"):
        MultiTaskBO.from_state_dict(optimizer.state_dict(), kernel="auto")


def test_binary_file_as_checkpoint_gives_a_clear_error(tmp_path):
    path = tmp_path / "run.json"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(ValueError, match="truncated or not valid JSON"):
        MultiTaskBO.load(path)


# ---- kernels: validated matrices cannot change afterwards ---------------------------------
def test_task_matrix_is_read_only_after_validation():
    kernel = Separable(RBF(0.2), uniform_task_similarity(2, 0.4))
    with pytest.raises(ValueError, match="read-only"):
        kernel.B[0, 1] = 5.0
    with pytest.raises(AttributeError):
        kernel.B = np.array([[1.0, 5.0], [5.0, 1.0]])
    X = np.linspace(0, 1, 5)[:, None]
    Y = np.c_[np.sin(X[:, 0]), np.cos(X[:, 0])]
    for posterior in (ExactPosterior(kernel, 0.1), NystromPosterior(kernel, 0.1, q=np.inf)):
        posterior.fit(X, Y)
        assert np.linalg.eigvalsh(posterior.kernel.B)[0] >= 0


def test_given_task_matrix_is_copied_not_shared():
    B = uniform_task_similarity(2, 0.4)
    kernel = Separable(RBF(0.2), B)
    B[0, 1] = B[1, 0] = 5.0  # the caller's array stays theirs
    np.testing.assert_array_equal(kernel.B, uniform_task_similarity(2, 0.4))


def test_ard_lengthscales_are_read_only_after_validation():
    kernel = RBF([0.1, 0.2])
    with pytest.raises(ValueError, match="read-only"):
        kernel.lengthscale[0] = -1.0


def test_optimizer_domain_is_read_only():
    optimizer = MultiTaskBO(candidates=C, kernel=G, seed=0)
    with pytest.raises(ValueError, match="read-only"):
        optimizer.candidates[0, 0] = np.nan
    box = MultiTaskBO(bounds=[[0, 1]], kernel=G, seed=0)
    with pytest.raises(ValueError, match="read-only"):
        box.bounds[0, 0] = 2.0


@pytest.mark.parametrize("kernel", [RBF(5e-324), Matern(5e-324, nu=1.5), RBF([1e-320, 1.0])])
def test_tiny_lengthscale_gives_the_limit_kernel_not_nan(kernel):
    # x/l overflows; the kernel's limit as l → 0 is 1 at x = y and 0 elsewhere
    X = np.array([[0.0], [1e-300], [1.0], [1e300]])
    if np.ndim(kernel.lengthscale):
        X = np.c_[X, np.zeros(len(X))]
    np.testing.assert_array_equal(kernel(X, X), np.eye(len(X)))


def test_matern_far_apart_points_give_zero_not_nan():
    X = np.array([[-1e300], [1e300]])  # their scaled distance overflows to inf
    np.testing.assert_array_equal(Matern(0.1, nu=2.5)(X, X), np.eye(2))


def test_kernel_config_with_a_ragged_task_matrix_names_B():
    config = kernel_to_config(G)
    config["B"][0] = None
    with pytest.raises(ValueError, match="B must be numeric"):
        kernel_from_config(config)


# ---- found by the fuzz suite ------------------------------------------------------------------
def test_scalarization_that_is_not_a_name_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"scalarization must be one of .*got \[\]"):
        MultiTaskBO(candidates=C, kernel=G, scalarization=[])


def test_auto_kernel_refuses_candidates_whose_range_overflows():
    with pytest.raises(ValueError, match="candidates must span a range"):
        MultiTaskBO(candidates=[[-1.7e308], [1.7e308]], kernel="auto")
    with pytest.raises(ValueError, match="bounds must have a width"):
        MultiTaskBO(bounds=[[-1.7e308, 1.7e308]], kernel=G)


@pytest.mark.parametrize("value", [2.0**53, 1.7e308, -1.7e308])
def test_auto_kernel_runs_on_a_single_candidate_however_large(value):
    optimizer = MultiTaskBO(candidates=[[value]], kernel="auto", seed=0)
    warm(optimizer, objective=lambda x: [1.0, -2.0])
    assert np.all(optimizer.X_ == value)
    assert np.all(np.isfinite(optimizer._policy.posterior.mean()))


@pytest.mark.parametrize("entry", ["uinteger", "state"])
def test_checkpoint_with_a_negative_generator_state_names_rng(entry):
    state = _state()
    if entry == "state":
        state["rng"]["state"]["state"] = -1
    else:
        state["rng"]["uinteger"] = -1
    with pytest.raises(ValueError, match=r"state\['rng'\] must be a PCG64 state"):
        MultiTaskBO.from_state_dict(state)


@pytest.mark.parametrize("algorithm", ["mt-kb", "mt-bkb", "it-kb"])
def test_theory_parameters_whose_radius_overflows_are_refused(algorithm):
    with pytest.raises(ValueError, match="noise_std=1.7e.308.*beyond the float range"):
        MultiTaskBO(candidates=C, kernel=G, algorithm=algorithm, noise_std=1.7e308, noise=1e-6)
    optimizer = MultiTaskBO(candidates=C, kernel=G, noise_std=1.7e308, noise=1e-6, beta=2.0)
    assert np.isfinite(warm(optimizer).ask()).all()  # a given beta replaces the theory
