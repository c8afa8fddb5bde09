"""MultiTaskBO: ask/tell, batches, checkpoints, bad input, and the run loop."""

import concurrent.futures
import json

import numpy as np
import pytest

from manytask.bo import MultiTaskBO, run
from manytask.bo.problems import perturbed_sine
from manytask.kernels import RBF, Separable, uniform_task_similarity

CANDIDATES = np.linspace(0, 1, 101)[:, None]
KERNEL = Separable(RBF(0.2), uniform_task_similarity(2, omega=0.4))
KERNEL3 = Separable(RBF(0.2), uniform_task_similarity(3, omega=0.4))  # 2 objectives + 1 constraint


def objective(x):
    x = float(np.asarray(x).reshape(-1)[0])
    return np.array([np.sin(6 * x), np.cos(5 * x)])


def drive(optimizer, rounds, rng):
    for _ in range(rounds):
        x = optimizer.ask()
        optimizer.tell(x, objective(x) + 0.05 * rng.normal(size=2))
    return optimizer


@pytest.mark.parametrize("algorithm", ["mt-kb", "mt-bkb", "it-kb", "it-bkb", "mobo"])
def test_every_algorithm_runs_and_records_its_weights(algorithm):
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, algorithm=algorithm, seed=1)
    drive(optimizer, 8, np.random.default_rng(0))
    assert optimizer.X_.shape == (8, 1) and optimizer.Y_.shape == (8, 2)
    np.testing.assert_allclose(optimizer.weights_.sum(axis=1), 1.0)
    assert all(any(np.array_equal(x, c) for c in CANDIDATES) for x in optimizer.X_)


def test_exponential_radius_draw_is_the_argmax_at_the_drawn_radius():
    # every proposal against an independent recomputation: the same generator draws λ, then
    # E ~ Exp(1); the argmax of u = s_λ(μ) + L_λ β E ‖Γ(x, x)‖^{1/2} over the candidates
    # (μ and Γ from a posterior refitted here, not the optimiser's incremental one)
    from manytask.posterior import ExactPosterior

    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=KERNEL, beta=2.0, radius_draw="exponential", seed=5
    )
    drive(optimizer, 4, np.random.default_rng(1))
    differs = []
    for _ in range(6):
        rng = np.random.default_rng()
        rng.bit_generator.state = optimizer._rng.bit_generator.state
        weights = optimizer._sample_weights(rng, 2)
        draw = rng.exponential()
        posterior = ExactPosterior(KERNEL, optimizer.noise).fit(optimizer.X_, optimizer.Y_)
        scalarization = optimizer.scalarization.fitted(optimizer.Y_)
        mean = scalarization(posterior.mean(CANDIDATES), weights)
        width = (
            scalarization.lipschitz(weights)
            * 2.0
            * np.sqrt(np.maximum(np.linalg.eigvalsh(posterior.cov(CANDIDATES))[:, -1], 0.0))
        )
        x = optimizer.ask()
        np.testing.assert_array_equal(x, CANDIDATES[np.argmax(mean + draw * width)])
        differs.append(np.argmax(mean + draw * width) != np.argmax(mean + width))
        optimizer.tell(x, objective(x))
    assert any(differs)  # the draws changed some proposal: not the check of a fixed radius


def _scalarised_posterior(optimizer, X, state):
    """s* = max over the observations of s_λ(μ(x_s)), m = s_λ(μ(X)) and w = L_λ‖Γ(X, X)‖^{1/2}
    from a posterior refitted here, with the weights drawn from the optimiser's random
    ``state`` taken before its ask."""
    from manytask.posterior import ExactPosterior

    rng = np.random.default_rng()
    rng.bit_generator.state = state
    weights = optimizer._sample_weights(rng, 2)
    posterior = ExactPosterior(KERNEL, optimizer.noise).fit(optimizer.X_, optimizer.Y_)
    scalarization = optimizer.scalarization.fitted(optimizer.Y_)
    best = scalarization(posterior.mean(optimizer.X_), weights).max()
    mean = scalarization(posterior.mean(X), weights)
    sd = scalarization.lipschitz(weights) * np.sqrt(
        np.maximum(np.linalg.eigvalsh(posterior.cov(X))[:, -1], 0.0)
    )
    return best, mean, sd


def test_expected_improvement_proposal_is_the_argmax_of_an_independent_recomputation():
    # EI by numerical integration of (s − s*)₊ against N(m, w²), not by the closed form the
    # optimiser uses
    from scipy import integrate, stats

    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, acquisition="ei", seed=5)
    drive(optimizer, 5, np.random.default_rng(1))
    for _ in range(3):
        best, mean, sd = _scalarised_posterior(
            optimizer, CANDIDATES, optimizer._rng.bit_generator.state
        )
        ei = [
            integrate.quad(
                lambda v, m=m, w=w, b=best: (v - b) * stats.norm.pdf(v, m, w),
                best,
                max(best, m + 12 * w),
            )[0]
            for m, w in zip(mean, sd)
        ]
        x = optimizer.ask()
        np.testing.assert_array_equal(x, CANDIDATES[np.argmax(ei)])
        optimizer.tell(x, objective(x))


def test_expected_improvement_on_a_box_is_maximised_against_a_dense_grid():
    # on a box the proposal comes from multi-start L-BFGS-B (incumbent among the starts): its
    # EI in closed form is at least a dense grid's best up to the optimiser's tolerance
    from scipy import stats

    optimizer = MultiTaskBO(bounds=[[0.0, 1.0]], kernel=KERNEL, acquisition="ei", seed=5)
    drive(optimizer, 5, np.random.default_rng(1))
    grid = np.linspace(0, 1, 4001)[:, None]
    for _ in range(3):
        state = optimizer._rng.bit_generator.state
        x = optimizer.ask()
        assert 0.0 <= x[0] <= 1.0
        best, mean, sd = _scalarised_posterior(optimizer, np.vstack([grid, x[None, :]]), state)
        z = (mean - best) / sd
        ei = (mean - best) * stats.norm.cdf(z) + sd * stats.norm.pdf(z)
        assert ei[-1] >= ei[:-1].max() * (1 - 1e-3)
        optimizer.tell(x, objective(x))


def test_same_seed_gives_the_same_run():
    first = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=3), 10, np.random.default_rng(0)
    )
    second = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=3), 10, np.random.default_rng(0)
    )
    np.testing.assert_array_equal(first.X_, second.X_)


def test_batch_points_differ_and_stay_pending():
    optimizer = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=0), 3, np.random.default_rng(0)
    )
    batch = optimizer.ask(4)
    assert batch.shape == (4, 1)
    assert len({float(x[0]) for x in batch}) == 4
    assert optimizer.pending_.shape == (4, 1)
    optimizer.tell(batch[2], objective(batch[2]))
    assert optimizer.pending_.shape == (3, 1)


def test_pending_points_shrink_the_variance_the_next_ask_sees():
    # with a fixed λ, asking twice without telling must not propose the same point twice
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, weights=[0.5, 0.5], seed=0)
    drive(optimizer, 3, np.random.default_rng(0))
    first, second = optimizer.ask(), optimizer.ask()
    assert not np.array_equal(first, second)


def test_tell_accepts_points_that_were_not_asked():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=0)
    optimizer.tell([0.123], [0.1, 0.2])  # not even a candidate
    assert np.isnan(optimizer.weights_[0]).all()
    assert optimizer.ask().shape == (1,)


@pytest.mark.parametrize("algorithm", ["mt-kb", "mt-bkb", "mobo"])
def test_resume_from_state_proposes_what_the_uninterrupted_run_would(algorithm):
    rng = np.random.default_rng(7)
    noise = 0.05 * rng.normal(size=(30, 2))

    def continue_run(optimizer, start, stop):
        for t in range(start, stop):
            x = optimizer.ask()
            optimizer.tell(x, objective(x) + noise[t])
        return optimizer

    settings = dict(candidates=CANDIDATES, kernel=KERNEL, algorithm=algorithm, seed=11)
    straight = continue_run(MultiTaskBO(**settings), 0, 20)
    half = continue_run(MultiTaskBO(**settings), 0, 9)
    half.ask(2)  # pending points travel in the checkpoint too
    state = json.loads(json.dumps(half.state_dict()))  # really JSON-serialisable
    resumed = MultiTaskBO.from_state_dict(state)
    np.testing.assert_array_equal(resumed.pending_, half.pending_)
    reference = continue_run(MultiTaskBO(**settings), 0, 9)
    reference.ask(2)
    continue_run(reference, 9, 20)
    continue_run(resumed, 9, 20)
    np.testing.assert_array_equal(resumed.X_, reference.X_)
    assert straight.X_.shape == resumed.X_.shape


def test_save_is_atomic_and_load_resumes(tmp_path):
    optimizer = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=2), 5, np.random.default_rng(0)
    )
    path = optimizer.save(tmp_path / "run.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # no temporary left
    resumed = MultiTaskBO.load(path)
    assert np.array_equal(resumed.ask(), optimizer.ask())


def test_truncated_checkpoint_raises_a_clear_error(tmp_path):
    optimizer = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=2), 3, np.random.default_rng(0)
    )
    path = optimizer.save(tmp_path / "run.json")
    path.write_text(path.read_text()[:-40])
    with pytest.raises(ValueError, match="truncated or not valid JSON"):
        MultiTaskBO.load(path)


def test_box_domain_with_a_known_kernel_stays_in_bounds():
    bounds = np.array([[0.0, 1.0], [-1.0, 2.0]])
    kernel = Separable(RBF(0.3), np.eye(2))
    optimizer = MultiTaskBO(bounds=bounds, kernel=kernel, seed=0, n_sobol=128, n_restarts=2)
    for _ in range(4):
        x = optimizer.ask()
        assert np.all(x >= bounds[:, 0]) and np.all(x <= bounds[:, 1])
        optimizer.tell(x, [np.sin(x.sum()), np.cos(x[0])])


@pytest.mark.parametrize(
    "fit",
    [
        {},
        dict(kernel_prior=True, kernel_restarts=2),
        dict(radius_draw="exponential"),
        dict(acquisition="ei", objective_model="independent"),
        dict(kernel_mean="constant"),
        dict(kernel_mean="constant", objective_model="independent"),
        dict(kernel_warm_start=False),
        dict(objective_model="auto"),
    ],
)
def test_auto_kernel_learns_and_resumes_identically(fit):
    bounds = np.array([[0.0, 1.0]])
    settings = dict(bounds=bounds, kernel="auto", n_tasks=2, seed=4, n_sobol=64, n_restarts=1)
    rng = np.random.default_rng(0)
    optimizer = MultiTaskBO(**settings, **fit)
    drive(optimizer, 9, rng)
    assert optimizer._learned.fit_ is not None  # fitted once it had enough data
    resumed = MultiTaskBO.from_state_dict(optimizer.state_dict())
    assert (
        resumed.kernel_prior, resumed.kernel_restarts, resumed.radius_draw, resumed.kernel_mean,
        resumed.kernel_warm_start,
    ) == (
        optimizer.kernel_prior, optimizer.kernel_restarts, optimizer.radius_draw,
        optimizer.kernel_mean, optimizer.kernel_warm_start,
    )  # fmt: skip
    np.testing.assert_allclose(resumed.ask(), optimizer.ask())


@pytest.mark.parametrize(
    "kernel, algorithm, n_constraints, expected",
    [("auto", "mt-kb", 0, ("moment-ei", "augmented-chebyshev")),
     ("auto", "it-bkb", 0, ("moment-ei", "augmented-chebyshev")),
     ("auto", "mt-kb", 1, ("moment-ei", "augmented-chebyshev")),
     ("auto", "mobo", 0, ("ucb", "chebyshev")),
     (KERNEL3, "mt-kb", 1, ("ucb", "chebyshev")),
     (KERNEL, "mt-kb", 0, ("ucb", "chebyshev"))],
)  # fmt: skip
def test_default_acquisition_and_scalarisation_are_ours_with_a_learned_kernel_only(
    kernel, algorithm, n_constraints, expected
):
    # a learned kernel: the expected improvement of the augmented Chebyshev's moments; a
    # given kernel and MOBO: the paper's UCB of the Chebyshev scalarisation
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=kernel, algorithm=algorithm, seed=0,
                            n_constraints=n_constraints)  # fmt: skip
    assert (optimizer.acquisition, optimizer.scalarization.name) == expected
    resumed = MultiTaskBO.from_state_dict(optimizer.state_dict())
    assert (resumed.acquisition, resumed.scalarization.name) == expected


@pytest.mark.parametrize(
    "kernel, algorithm, expected",
    [("auto", "mt-kb", True), ("auto", "it-bkb", True), ("auto", "mobo", False),
     (KERNEL, "mt-kb", False)],
)  # fmt: skip
def test_told_candidates_are_avoided_by_default_with_a_learned_kernel_only(
    kernel, algorithm, expected
):
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=kernel, algorithm=algorithm, seed=0)
    assert optimizer.avoid_told is expected
    assert MultiTaskBO.from_state_dict(optimizer.state_dict()).avoid_told is expected


def test_checkpoint_without_acquisition_or_prior_resumes_with_the_defaults_of_then():
    # written before kernel_prior, acquisition, kernel_mean and avoid_told were saved:
    # maximum likelihood, the UCB, a zero mean and told points proposed again
    settings = dict(bounds=[[0.0, 1.0]], n_tasks=2, seed=4, n_sobol=64, n_restarts=1)
    optimizer = MultiTaskBO(**settings, kernel_prior=False, acquisition="ucb", kernel_mean="zero",
                            avoid_told=False)  # fmt: skip
    drive(optimizer, 9, np.random.default_rng(0))
    state = json.loads(json.dumps(optimizer.state_dict()))
    for name in ("kernel_prior", "acquisition", "kernel_mean", "avoid_told"):
        del state["config"][name]
    resumed = MultiTaskBO.from_state_dict(state)
    assert (resumed.kernel_prior, resumed.acquisition, resumed.kernel_mean, resumed.avoid_told) == (
        False, "ucb", "zero", False
    )  # fmt: skip
    np.testing.assert_array_equal(resumed.ask(), optimizer.ask())


def test_auto_kernel_takes_n_tasks_from_the_first_tell():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel="auto", seed=0)
    assert optimizer.n_tasks is None
    first = optimizer.ask(2)  # asked before n is known: λ is drawn at the first tell
    resumed = MultiTaskBO.from_state_dict(optimizer.state_dict())
    np.testing.assert_array_equal(resumed.pending_, first)
    for optimizer_ in (optimizer, resumed):
        for x in first:
            optimizer_.tell(x, [np.sin(x[0]), np.cos(x[0]), x[0]])
        assert optimizer_.n_tasks == 3 and optimizer_.Y_.shape == (2, 3)
        np.testing.assert_allclose(optimizer_.weights_.sum(axis=1), 1.0)
    np.testing.assert_array_equal(resumed.weights_, optimizer.weights_)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = optimizer.ask()
        optimizer.tell(x, [np.sin(x[0]), np.cos(x[0]), x[0]] + 0.01 * rng.normal(size=3))
    fits = optimizer._learned.fit_.fits  # the default: one GP per objective
    assert [fit.B.shape for fit in fits] == [(1, 1)] * 3
    with pytest.raises(ValueError, match="3 values"):
        optimizer.tell([0.5], [1.0, 2.0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(candidates=np.zeros((0, 1)), kernel=KERNEL), "at least one point"),
        (dict(bounds=[[1.0, 0.0]], kernel=KERNEL), "lower < upper"),
        (dict(candidates=CANDIDATES, kernel=KERNEL, algorithm="ucb"), "mt-kb, mt-bkb"),
        (dict(candidates=CANDIDATES, kernel=KERNEL, scalarization="max"), "chebyshev, linear"),
        (dict(candidates=CANDIDATES, bounds=[[0, 1]], kernel=KERNEL), "exactly one"),
        (dict(candidates=CANDIDATES, kernel="auto", n_tasks=0), "n_tasks"),
        (dict(candidates=CANDIDATES, kernel=KERNEL, n_tasks=3), "kernel has 2 tasks"),
        (dict(candidates=CANDIDATES, kernel=KERNEL, noise=0.0), "noise must be > 0"),
    ],
)
def test_bad_configuration_raises_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiTaskBO(**kwargs)


def test_bad_observations_raise_and_lose_nothing():
    optimizer = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=0), 3, np.random.default_rng(0)
    )
    before = optimizer.state_dict()
    with pytest.raises(ValueError, match="2 values"):
        optimizer.tell([0.5], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="finite"):
        optimizer.tell([0.5], [np.inf, 1.0])
    with pytest.raises(ValueError, match="1 coordinates"):
        optimizer.tell([0.5, 0.5], [1.0, 1.0])
    assert optimizer.state_dict() == before


def test_pareto_front_of_the_observations():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, seed=0)
    for x, y in [(0.1, [1.0, 0.0]), (0.2, [0.0, 1.0]), (0.3, [0.5, 0.5]), (0.4, [0.2, 0.2])]:
        optimizer.tell([x], y)
    X_front, Y_front = optimizer.pareto_front()
    assert sorted(X_front[:, 0].tolist()) == [0.1, 0.2, 0.3]
    # union of [0,1]x[0,0] ... : rectangles from the reference (0, 0): 0.5·0.5 + 0.5·0 + ...
    assert optimizer.hypervolume([0.0, 0.0]) == pytest.approx(0.25)


def test_run_loop_returns_curves_and_works_with_an_executor():
    problem = perturbed_sine()
    optimizer = MultiTaskBO.from_problem(problem, algorithm="mt-kb", seed=0)
    result = run(problem, optimizer, budget=6, seed=0, progress=False)
    assert result.points.shape == (6, 1) and result.weights.shape == (6, 4)
    assert result.cumulative_regret.shape == (6,) and np.all(
        np.diff(result.cumulative_regret) >= -1e-12
    )
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as executor:
        parallel = MultiTaskBO.from_problem(problem, algorithm="mt-kb", seed=0)
        result = run(problem, parallel, budget=7, executor=executor, seed=0, progress=False)
    assert result.points.shape == (7, 1) and result.round_times.shape == (7,)


def test_resume_is_exact_without_an_explicit_seed():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, algorithm="mt-bkb")
    drive(optimizer, 6, np.random.default_rng(0))
    resumed = MultiTaskBO.from_state_dict(optimizer.state_dict())
    assert isinstance(optimizer.seed, int)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    np.testing.assert_array_equal(drive(resumed, 5, rng_a).X_, drive(optimizer, 5, rng_b).X_)


def test_partial_observations_condition_the_posterior_on_what_was_measured():
    from manytask.posterior import ExactPosterior

    rng = np.random.default_rng(5)
    for algorithm in ("mt-kb", "it-kb", "mobo"):
        optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL, algorithm=algorithm, seed=2)
        for round_ in range(8):
            x = optimizer.ask()
            y = objective(x) + 0.05 * rng.normal(size=2)
            y[round_ % 2] = np.nan if round_ > 1 else y[round_ % 2]  # decoupled evaluations
            optimizer.tell(x, y)
        model_kernel = optimizer._policy.posterior.kernel
        reference = ExactPosterior(model_kernel, optimizer.noise).fit(optimizer.X_, optimizer.Y_)
        posterior = optimizer._policy.posterior
        np.testing.assert_allclose(posterior.mean(), reference.mean(CANDIDATES), atol=1e-10)
        np.testing.assert_allclose(posterior.cov(), reference.cov(CANDIDATES), atol=1e-10)
        resumed = MultiTaskBO.from_state_dict(json.loads(json.dumps(optimizer.state_dict())))
        np.testing.assert_array_equal(np.isnan(resumed.Y_), np.isnan(optimizer.Y_))
        np.testing.assert_array_equal(resumed.ask(), optimizer.ask())
    X_front, Y_front = optimizer.pareto_front()
    assert not np.isnan(Y_front).any() and len(X_front) >= 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(kernel=KERNEL, algorithm="mt-bkb"), "algorithm mt-kb, it-kb or mobo"),
        (dict(kernel="auto"), "needs a given kernel"),
        (dict(kernel=KERNEL), "at least one measured"),
    ],
)
def test_partial_observations_that_cannot_be_used_are_rejected(kwargs, message):
    optimizer = MultiTaskBO(candidates=CANDIDATES, seed=0, **kwargs)
    optimizer.tell([0.5], [1.0, 2.0])
    y = [np.nan, np.nan] if message == "at least one measured" else [np.nan, 1.0]
    with pytest.raises(ValueError, match=message):
        optimizer.tell([0.3], y)
    assert optimizer.Y_.shape == (1, 2)


def test_incremental_dictionary_runs_and_resumes_identically():
    settings = dict(candidates=CANDIDATES, kernel=KERNEL, algorithm="mt-bkb", q=1.0, seed=3)
    optimizer = drive(
        MultiTaskBO(dictionary="incremental", **settings), 12, np.random.default_rng(0)
    )
    resumed = MultiTaskBO.from_state_dict(json.loads(json.dumps(optimizer.state_dict())))
    assert resumed.dictionary == "incremental"
    np.testing.assert_array_equal(resumed.ask(3), optimizer.ask(3))
    with pytest.raises(ValueError, match="resample, incremental"):
        MultiTaskBO(dictionary="batched", **settings)
