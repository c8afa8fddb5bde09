"""MultiTaskBO with black-box constraints c_j(x) ≤ 0 (issue 27, item 4): the optimistic
feasible acquisition against a brute-force loop over the candidates, a toy whose
unconstrained optimum is infeasible, the feasible Pareto front, checkpoints, bad input and
the C2-DTLZ2 problem against BoTorch's."""

import json

import numpy as np
import pytest

from manytask.bo import MultiTaskBO, metrics
from manytask.bo.problems import c2_dtlz2, dtlz2
from manytask.kernels import RBF, Separable, uniform_task_similarity

CANDIDATES = np.linspace(0, 1, 101)[:, None]
KERNEL3 = Separable(RBF(0.2), uniform_task_similarity(3, omega=0.4))
KERNEL2 = Separable(RBF(0.2), uniform_task_similarity(2, omega=0.4))


def observe(x, limit=0.4):
    """Both objectives grow with x (unconstrained optimum x = 1); c(x) = x − limit ≤ 0."""
    x = float(np.asarray(x).reshape(-1)[0])
    return np.array([np.sin(1.2 * x), x - 0.3 * x**2]), np.array([x - limit])


def drive(optimizer, rounds, limit=0.4):
    for _ in range(rounds):
        x = optimizer.ask()
        y, c = observe(x, limit)
        optimizer.tell(x, y, constraints=c)
    return optimizer


def brute_force_choice(optimizer, weights, beta):
    """The optimistic-feasible argmax by a loop over the candidates, from the posterior's mean
    and full covariance Γ_t(x, x): UCB s_λ(μ) + L_λ β ‖objective block of Γ_t‖^{1/2} (MOBO:
    s_λ(μ + β σ)) and
    LCB μ_c − β σ_c, σ_c² = Γ_t(x, x)_cc; with no LCB ≤ 0, the least total violation."""
    posterior, n = optimizer._policy.posterior, optimizer.n_tasks
    best, best_key = None, None
    for i, x in enumerate(optimizer.candidates):
        mean = posterior.mean(x[None, :])[0]
        cov = posterior.cov(x[None, :])[0]
        sd = np.sqrt(np.clip(np.diag(cov), 0, None))
        if optimizer.algorithm == "mobo":
            ucb = np.min(weights * (mean[:n] + beta * sd[:n]))
        else:
            norm = np.sqrt(max(np.linalg.eigvalsh(cov[:n, :n]).max(), 0.0))
            ucb = np.min(weights * mean[:n]) + np.max(weights) * beta * norm
        lcb = mean[n:] - beta * sd[n:]
        violation = np.sum(np.maximum(lcb, 0.0))
        key = (violation == 0, ucb if violation == 0 else -violation)
        if best_key is None or key > best_key:
            best, best_key = i, key
    return optimizer.candidates[best]


@pytest.mark.parametrize("algorithm", ["mt-kb", "it-kb", "mobo"])
@pytest.mark.parametrize("limit", [0.4, -5.0], ids=["feasible-set", "nothing-feasible"])
def test_ask_is_the_brute_force_optimistic_feasible_argmax(algorithm, limit):
    weights, beta = np.array([0.3, 0.7]), 0.5
    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=KERNEL3, algorithm=algorithm, n_constraints=1,
        weights=weights, beta=beta, reference=None, noise=0.01, seed=0,
    )  # fmt: skip
    for x in (0.05, 0.3, 0.6, 0.9):
        y, c = observe(x, limit)
        optimizer.tell([x], y, constraints=c)
    expected = brute_force_choice(optimizer, weights, beta)
    np.testing.assert_array_equal(optimizer.ask(), expected)
    if limit < 0:  # nothing is optimistically feasible: the proposal only minimises violation
        assert observe(expected, limit)[1][0] > 0


@pytest.mark.parametrize("kernel", [KERNEL3, "auto"], ids=["given", "auto"])
def test_constrained_toy_ends_feasible_where_the_unconstrained_run_does_not(kernel):
    free = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL2, beta=1.0, noise=0.01, seed=0)
    for _ in range(15):
        x = free.ask()
        free.tell(x, observe(x)[0])
    assert free.pareto_front()[0].max() > 0.6  # the unconstrained optimum is infeasible
    optimizer = drive(
        MultiTaskBO(
            candidates=CANDIDATES, kernel=kernel, n_constraints=1, beta=1.0, noise=0.01, seed=0
        ),
        25,
    )
    np.testing.assert_array_equal(optimizer.feasible_, optimizer.constraints_[:, 0] <= 0)
    # it ends at the boundary, within the optimism band of the constraint (σ ≈ √noise = 0.1
    # at one observation), where the unconstrained run climbs to the far end
    assert np.all(optimizer.X_[-10:] <= 0.45)
    best = optimizer.pareto_front()[0]
    assert np.all(best <= 0.4) and best.max() >= 0.3  # next to the constrained optimum 0.4


def test_pareto_front_keeps_feasible_observations_only():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL3, n_constraints=1, seed=0)
    rng = np.random.default_rng(0)
    for x in rng.choice(CANDIDATES[:, 0], 20, replace=False):
        optimizer.tell([x], rng.normal(size=2), constraints=[rng.normal()])
    feasible = optimizer.constraints_[:, 0] <= 0
    Y = optimizer.Y_[feasible]
    expected = {tuple(y) for y in Y if not any(np.all(o >= y) and np.any(o > y) for o in Y)}
    assert {tuple(y) for y in optimizer.pareto_front()[1]} == expected
    reference = np.full(2, -5.0)
    assert optimizer.hypervolume(reference) == pytest.approx(
        metrics.hypervolume(np.array(sorted(expected)), reference)
    )


@pytest.mark.parametrize("kernel", [KERNEL3, "auto"], ids=["given", "auto"])
def test_checkpoint_carries_the_constraints_and_resumes_exactly(kernel):
    optimizer = drive(MultiTaskBO(candidates=CANDIDATES, kernel=kernel, n_constraints=1, seed=2), 8)
    optimizer.ask(2)
    state = json.loads(json.dumps(optimizer.state_dict()))
    assert state["C"] == optimizer.constraints_.tolist() and len(state["C"]) == 8
    resumed = MultiTaskBO.from_state_dict(state)
    np.testing.assert_array_equal(resumed.constraints_, optimizer.constraints_)
    np.testing.assert_array_equal(resumed.ask(), optimizer.ask())


def test_checkpoint_without_constraint_rows_still_loads():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL3, n_tasks=3, seed=0)
    optimizer.tell([0.5], [1.0, 2.0, 3.0])
    state = optimizer.state_dict()
    del state["C"]  # a checkpoint written before constraints existed
    assert MultiTaskBO.from_state_dict(state).Y_.tolist() == [[1.0, 2.0, 3.0]]


@pytest.mark.parametrize(
    "entry, message",
    [([], r"state\['C'\]\[1\] must have 1 values"), ([np.nan], r"state\['C'\]\[1\]")],
)
def test_bad_checkpoint_constraint_row_is_refused_naming_it(entry, message):
    state = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL3, n_constraints=1, seed=0), 3
    ).state_dict()
    state["C"][1] = entry
    with pytest.raises(ValueError, match=message):
        MultiTaskBO.from_state_dict(state)


@pytest.mark.parametrize(
    "constraints, message",
    [
        (None, "constraints must hold the 1 constraint values"),
        ([0.1, 0.2], "constraints must have 1 values"),
        ([np.nan], "constraints must be finite"),
        ([np.inf], "constraints must be finite"),
        (["a"], "constraints must be numeric"),
        ([1e200], "constraints must lie within"),
    ],
)
def test_bad_constraints_are_refused_and_change_nothing(constraints, message):
    optimizer = drive(
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL3, n_constraints=1, seed=0), 3
    )
    optimizer.ask()
    before = optimizer.state_dict()
    with pytest.raises(ValueError, match=message):
        optimizer.tell([0.5], [0.0, 0.0], constraints=constraints)
    assert optimizer.state_dict() == before


def test_constraints_without_n_constraints_are_refused():
    optimizer = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL3, seed=0)
    with pytest.raises(ValueError, match="constraints must have 0 values"):
        optimizer.tell([0.5], [0.0, 0.0, 0.0], constraints=[1.0])
    assert len(optimizer.X_) == 0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(n_constraints=3), "n_constraints=3 leaves no objective"),
        (dict(n_constraints=-1), "n_constraints"),
        (dict(n_constraints=1.5), "n_constraints"),
        (dict(n_constraints=1, n_tasks=1), "n_tasks=1 objectives and n_constraints=1"),
    ],
)
def test_bad_number_of_constraints_is_refused_naming_it(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL3, **kwargs)


def test_dtlz2_front_is_the_unit_sphere_and_c2_carves_it():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 6))
    X[:, 2:] = 0.5  # g = 0: on the Pareto front
    F = dtlz2(X, 3)
    np.testing.assert_allclose(np.sum(F**2, axis=1), 1.0, rtol=1e-12)
    F2, c = c2_dtlz2(X[:, [0, 2, 3, 4, 5]], 2)
    # feasible on the front: within r of an axis end, or around the centre (BoTorch's form)
    near_end = np.min((F2 - 1) ** 2 + F2[:, ::-1] ** 2, axis=1) <= 0.2**2
    centre = np.sum((F2 - 1 / np.sqrt(2)) ** 2, axis=1) <= 2 * 0.2**2
    np.testing.assert_array_equal(c[:, 0] <= 0, near_end | centre)


def test_c2_dtlz2_matches_botorch():
    torch = pytest.importorskip("torch")
    multi_objective = pytest.importorskip("botorch.test_functions.multi_objective")
    X = np.random.default_rng(1).uniform(size=(300, 6))
    for n_objectives in (2, 3):
        problem = multi_objective.C2DTLZ2(dim=6, num_objectives=n_objectives)
        F, c = c2_dtlz2(X, n_objectives)
        with torch.no_grad():
            expected_F = problem.evaluate_true(torch.as_tensor(X)).numpy()
            expected_c = -problem.evaluate_slack_true(torch.as_tensor(X)).numpy()
        np.testing.assert_allclose(F, expected_F, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(c, expected_c, rtol=1e-12, atol=1e-12)
