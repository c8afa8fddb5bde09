"""MultiTaskBO with black-box constraints c_j(x) ≤ 0 (issue 27, item 4): the optimistic
feasible acquisition against a brute-force loop over the candidates, a toy whose
unconstrained optimum is infeasible, the feasible Pareto front, checkpoints, bad input and
the C2-DTLZ2 problem against BoTorch's."""

import json

import numpy as np
import pytest
import scipy.stats

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
        feasibility="optimistic", weights=weights, beta=beta, reference=None, noise=0.01,
        seed=0,
    )  # fmt: skip
    for x in (0.05, 0.3, 0.6, 0.9):
        y, c = observe(x, limit)
        optimizer.tell([x], y, constraints=c)
    expected = brute_force_choice(optimizer, weights, beta)
    np.testing.assert_array_equal(optimizer.ask(), expected)
    if limit < 0:  # nothing is optimistically feasible: the proposal only minimises violation
        assert observe(expected, limit)[1][0] > 0


def brute_force_probability_merits(optimizer, weights, beta):
    """The probability-weighted merits by a loop over the candidates: the UCB u of
    ``brute_force_choice``, PoF = P(c ≤ 0) = Φ(−μ_c/σ_c) from scipy.stats, the incumbent s* =
    max s_λ(μ(x_s)) over the told points with c ≤ 0, and the merit PoF·(u − s*) where u > s*,
    u − s* elsewhere; PoF alone while no told point is feasible."""
    posterior, n = optimizer._policy.posterior, optimizer.n_tasks
    feasible = optimizer.constraints_[:, 0] <= 0
    incumbent = None
    if feasible.any():
        told = [posterior.mean(x[None, :])[0][:n] for x in optimizer.X_[feasible]]
        incumbent = max(np.min(weights * mean) for mean in told)
    merits = []
    for x in optimizer.candidates:
        mean = posterior.mean(x[None, :])[0]
        cov = posterior.cov(x[None, :])[0]
        sd = np.sqrt(np.clip(np.diag(cov), 0, None))
        if optimizer.algorithm == "mobo":
            ucb = np.min(weights * (mean[:n] + beta * sd[:n]))
        else:
            norm = np.sqrt(max(np.linalg.eigvalsh(cov[:n, :n]).max(), 0.0))
            ucb = np.min(weights * mean[:n]) + np.max(weights) * beta * norm
        pof = scipy.stats.norm.cdf(-mean[n] / sd[n])
        if incumbent is None:
            merits.append(pof)
        else:
            merits.append(pof * (ucb - incumbent) if ucb > incumbent else ucb - incumbent)
    return np.array(merits)


def assert_proposes_a_largest_merit(optimizer, merits):
    """ask()'s candidate has the largest brute-force merit, to rounding: neighbouring
    candidates may differ by less than another CPU's rounding, so the merit is compared,
    not the point."""
    chosen = np.flatnonzero(np.all(optimizer.candidates == optimizer.ask(), axis=1))
    assert chosen.size == 1
    assert merits[chosen[0]] == pytest.approx(merits.max(), rel=1e-9)


@pytest.mark.parametrize("algorithm", ["mt-kb", "it-kb", "mobo"])
@pytest.mark.parametrize("limit", [0.4, 0.02], ids=["feasible-told", "nothing-feasible-told"])
def test_ask_is_the_brute_force_probability_weighted_argmax(algorithm, limit):
    weights, beta = np.array([0.3, 0.7]), 0.5
    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=KERNEL3, algorithm=algorithm, n_constraints=1,
        feasibility="probability", weights=weights, beta=beta, reference=None, noise=0.01,
        seed=0,
    )  # fmt: skip
    for x in (0.05, 0.3, 0.6, 0.9):
        y, c = observe(x, limit)
        optimizer.tell([x], y, constraints=c)
    assert optimizer.feasible_.any() == (limit > 0.05)
    merits = brute_force_probability_merits(optimizer, weights, beta)
    assert merits.max() > 0
    assert_proposes_a_largest_merit(optimizer, merits)


def brute_force_ei_merits(optimizer, weights, beta, feasibility):
    """The constrained expected-improvement merits by a loop over the candidates: EI of
    S ~ N(m, w²) on s* from scipy.stats, m = s_λ(μ(x)), w = L_λ ‖objective block of
    Γ_t(x, x)‖^{1/2}, s* = max s_λ(μ(x_s)) over the told points with c ≤ 0; the merit PoF·EI
    (``"probability"``), or EI on the optimistic feasible set μ_c − β σ_c ≤ 0, of every
    candidate."""
    posterior, n = optimizer._policy.posterior, optimizer.n_tasks
    feasible = optimizer.constraints_[:, 0] <= 0
    told = posterior.mean(optimizer.X_[feasible])[:, :n]
    incumbent = np.max(np.min(weights * told, axis=1))
    merits = []
    for x in optimizer.candidates:
        mean = posterior.mean(x[None, :])[0]
        cov = posterior.cov(x[None, :])[0]
        m = np.min(weights * mean[:n])
        w = np.max(weights) * np.sqrt(max(np.linalg.eigvalsh(cov[:n, :n]).max(), 0.0))
        ei = (m - incumbent) * scipy.stats.norm.cdf((m - incumbent) / w)
        ei += w * scipy.stats.norm.pdf((m - incumbent) / w)
        sd = np.sqrt(max(cov[n, n], 0.0))
        if feasibility == "probability":
            merits.append(scipy.stats.norm.cdf(-mean[n] / sd) * ei)
        else:
            merits.append(ei if mean[n] - beta * sd <= 0 else -np.inf)
    return np.array(merits)


@pytest.mark.parametrize("algorithm", ["mt-kb", "it-kb"])
@pytest.mark.parametrize("feasibility", ["probability", "optimistic"])
def test_ask_is_the_brute_force_constrained_expected_improvement_argmax(algorithm, feasibility):
    weights, beta = np.array([0.3, 0.7]), 0.5
    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=KERNEL3, algorithm=algorithm, n_constraints=1,
        feasibility=feasibility, weights=weights, beta=beta, reference=None, noise=0.01,
        acquisition="ei", seed=0,
    )  # fmt: skip
    for x in (0.05, 0.3, 0.6, 0.9):
        y, c = observe(x)
        optimizer.tell([x], y, constraints=c)
    assert optimizer.feasible_.sum() == 2
    merits = brute_force_ei_merits(optimizer, weights, beta, feasibility)
    assert merits.max() > 0
    assert_proposes_a_largest_merit(optimizer, merits)


@pytest.mark.parametrize("kernel_prior", [False, True])
def test_independent_objectives_and_constraints_are_each_their_own_dense_gp(kernel_prior):
    """objective_model="independent" with constraints: every objective and every constraint
    is a block of its own, and its posterior (back in its units) is the dense GP of its own
    fit (variance b, lengthscales, noise η) on its standardised values — the rescaling to
    one η changes nothing — with every cross-covariance 0 (a zero mean: the fitted constant
    is checked in test_optimizer.py)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(16, 2))
    Y = np.c_[np.sin(5 * X[:, 0]), 30 * np.cos(4 * X[:, 1])]
    Y = Y + np.array([0.02, 3.0]) * rng.normal(size=(16, 2))
    C = np.c_[20 * np.cos(7 * X[:, 1]) + 3, X.sum(axis=1) - 1.0]
    C = C + np.array([1.0, 0.01]) * rng.normal(size=(16, 2))
    optimizer = MultiTaskBO(
        bounds=[[0, 1], [0, 1]], n_constraints=2, objective_model="independent",
        kernel_prior=kernel_prior, refit_every=1, kernel_mean="zero", seed=0,
    )  # fmt: skip
    for x, y, c in zip(X, Y, C):
        optimizer.tell(x, y, constraints=c)
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    fit = learned.fit_
    assert fit.blocks == [[0], [1], [2], [3]]
    assert posterior.uses_split  # one scalar problem per block (SumOfSeparable.decompose)
    X_new = rng.uniform(size=(7, 2))
    mean, cov = posterior.mean(X_new), posterior.cov(X_new)
    outputs = np.c_[Y, C]
    for i, single in enumerate(fit.fits):
        y = outputs[:, i]
        expected_mean, expected_sd = dense_gp(
            X, (y - y.mean()) / y.std(), RBF(single.lengthscales), single.B[0, 0],
            single.noise, X_new,
        )  # fmt: skip
        in_units = mean[:, i] * learned.scale_[i] + learned.mean_[i]
        expected = expected_mean * y.std() + y.mean()
        np.testing.assert_allclose(in_units, expected, rtol=1e-6, atol=1e-6)
        sd = np.sqrt(cov[:, i, i]) * learned.scale_[i]
        np.testing.assert_allclose(sd, expected_sd * y.std(), rtol=1e-6, atol=1e-8)
    off_diagonal = cov * (1 - np.eye(4))
    np.testing.assert_allclose(off_diagonal, 0.0, atol=1e-12)
    assert len({single.noise for single in fit.fits}) == 4  # the rescaling is used
    np.testing.assert_allclose(
        learned.constraint_thresholds(), -learned.mean_[2:] / learned.scale_[2:]
    )


@pytest.mark.parametrize("kernel", [KERNEL3, "auto"], ids=["given", "auto"])
def test_constrained_toy_ends_feasible_where_the_unconstrained_run_does_not(kernel):
    free = MultiTaskBO(candidates=CANDIDATES, kernel=KERNEL2, beta=1.0, noise=0.01, seed=0)
    for _ in range(15):
        x = free.ask()
        free.tell(x, observe(x)[0])
    assert free.pareto_front()[0].max() > 0.6  # the unconstrained optimum is infeasible
    optimizer = drive(
        MultiTaskBO(
            candidates=CANDIDATES,
            kernel=kernel,
            n_constraints=1,
            feasibility="optimistic",
            beta=1.0,
            noise=0.01,
            seed=0,
        ),  # fmt: skip
        25,
    )
    np.testing.assert_array_equal(optimizer.feasible_, optimizer.constraints_[:, 0] <= 0)
    # it ends at the boundary, within the optimism band of the constraint (σ ≈ √noise = 0.1
    # at one observation), where the unconstrained run climbs to the far end
    assert np.all(optimizer.X_[-10:] <= 0.45)
    best = optimizer.pareto_front()[0]
    assert np.all(best <= 0.4) and best.max() >= 0.3  # next to the constrained optimum 0.4


@pytest.mark.parametrize("kernel", [KERNEL3, "auto"], ids=["given", "auto"])
def test_probability_rule_settles_at_the_constrained_optimum(kernel):
    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=kernel, n_constraints=1, feasibility="probability",
        beta=1.0, noise=0.01, seed=0, avoid_told=False,  # settling = proposing x* again
    )  # fmt: skip
    drive(optimizer, 25)
    # the unconstrained optimum is x = 1 (previous test); the constrained one 0.4 = the limit
    best = optimizer.pareto_front()[0]
    assert np.all(best <= 0.4) and best.max() >= 0.38
    assert abs(np.median(optimizer.X_[-10:, 0]) - 0.4) <= 0.05


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


INDEPENDENT_EI = dict(objective_model="independent", kernel_prior=True, acquisition="ei")


@pytest.mark.parametrize("feasibility", ["optimistic", "probability"])
@pytest.mark.parametrize(
    "kernel, options",
    [(KERNEL3, {}), ("auto", {}), ("auto", INDEPENDENT_EI), ("auto", {"objective_model": "auto"})],
    ids=["given", "auto", "auto-independent-ei", "auto-model"],
)
def test_checkpoint_carries_the_constraints_and_resumes_exactly(kernel, options, feasibility):
    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=kernel, n_constraints=1, feasibility=feasibility, seed=2,
        **options,
    )  # fmt: skip
    optimizer = drive(optimizer, 8)
    optimizer.ask(2)
    state = json.loads(json.dumps(optimizer.state_dict()))
    assert MultiTaskBO.from_state_dict(state).feasibility == feasibility
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


def test_checkpoint_without_feasibility_resumes_with_the_optimistic_set():
    optimizer = MultiTaskBO(
        candidates=CANDIDATES, kernel=KERNEL3, n_constraints=1, feasibility="optimistic", seed=1
    )
    drive(optimizer, 5)
    state = json.loads(json.dumps(optimizer.state_dict()))
    del state["config"]["feasibility"]  # written before the rule was a parameter
    resumed = MultiTaskBO.from_state_dict(state)
    assert resumed.feasibility == "optimistic"
    np.testing.assert_array_equal(resumed.ask(), optimizer.ask())


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
        (dict(n_constraints=1, feasibility="pof"), "feasibility must be one of .*, got 'pof'"),
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


def dense_gp(X, y, kernel, variance, noise, X_new):
    """Posterior mean and latent sd of one GP, by a dense solve."""
    K = variance * kernel(X, X) + noise * np.eye(len(X))
    K_new = variance * kernel(X_new, X)
    mean = K_new @ np.linalg.solve(K, y)
    var = variance - np.sum(K_new * np.linalg.solve(K, K_new.T).T, axis=1)
    return mean, np.sqrt(np.maximum(var, 0.0))


def test_learned_constraint_posterior_is_its_own_dense_gp_in_user_units():
    """kernel="auto": the constraint's posterior (back in c's units) is the dense GP of its own
    fit (variance b, lengthscales, noise η_c) on the standardised c — the rescaling by
    √(η/η_c) changes nothing — and the objectives' is the dense ICM posterior of theirs."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(14, 2))
    Y = np.c_[np.sin(3 * X[:, 0]), np.cos(3 * X[:, 0])] + 0.05 * rng.normal(size=(14, 2))
    c = 20 * np.cos(7 * X[:, 1]) + 3 + rng.normal(size=14)  # its own axis, scale and noise
    optimizer = MultiTaskBO(
        bounds=[[0, 1], [0, 1]],
        n_constraints=1,
        refit_every=1,
        kernel_mean="zero",
        seed=0,
        objective_model="icm",
    )  # the dense GP below has a zero mean (the fitted constant: test_optimizer.py); one GP
    # per objective beside constraints: test_independent_objectives_and_constraints_…
    for x, y, cj in zip(X, Y, c):
        optimizer.tell(x, y, constraints=[cj])
    learned, posterior = optimizer._learned, optimizer._policy.posterior
    fit = learned.fit_
    X_new = rng.uniform(size=(7, 2))
    mean, cov = posterior.mean(X_new), posterior.cov(X_new)
    scale = learned.scale_
    c_hat = (c - c.mean()) / c.std()  # the standardisation before the rescaling
    fit_objectives, fit_c = fit.fits  # the blocks: the objectives' ICM, the constraint
    assert posterior.uses_split  # split by B's eigenvectors in each block, not one 3-task GP
    expected_mean, expected_sd = dense_gp(
        X, c_hat, RBF(fit_c.lengthscales), fit_c.B[0, 0], fit_c.noise, X_new
    )
    in_c_units = mean[:, 2] * scale[2] + learned.mean_[2]
    expected = expected_mean * c.std() + c.mean()
    np.testing.assert_allclose(in_c_units, expected, rtol=1e-6, atol=1e-6)
    sd = np.sqrt(cov[:, 2, 2]) * scale[2]
    np.testing.assert_allclose(sd, expected_sd * c.std(), rtol=1e-6, atol=1e-8)
    # the objectives: the dense ICM posterior, unaffected by the constraint
    Y_hat = (Y - Y.mean(axis=0)) / Y.std(axis=0)
    B, k = fit_objectives.B, RBF(fit_objectives.lengthscales)
    K = np.kron(k(X, X), B) + fit_objectives.noise * np.eye(28)
    K_new = np.kron(k(X_new, X), B)
    expected = (K_new @ np.linalg.solve(K, Y_hat.ravel())).reshape(7, 2)
    np.testing.assert_allclose(mean[:, :2], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(cov[:, :2, 2], 0.0, atol=1e-12)  # blocks independent
    # the constraint lives on its own axis: a shorter lengthscale there than the objectives'
    assert fit_c.lengthscales[1] < fit_objectives.lengthscales[1]
    # c = 0 in the posterior's units is τ = −m/s, with the rescaled s
    np.testing.assert_allclose(learned.constraint_thresholds(), -learned.mean_[2:] / scale[2:])


def test_map_fit_maximises_likelihood_plus_botorch_log_normal_priors():
    """prior=True: at the fit, the log marginal likelihood (recomputed independently) plus the
    log-normal log densities (scipy) of the lengthscales and η is not beaten by nearby
    parameters, and the reported value is the likelihood without the prior."""
    stats = pytest.importorskip("scipy.stats")
    from manytask.bo.kernel_learning import fit_icm_kernel, icm_log_marginal_likelihood

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 3))
    y = np.sin(4 * X[:, :1]) + 0.1 * rng.normal(size=(12, 1))
    y = (y - y.mean()) / y.std()
    fit = fit_icm_kernel(X, y, n_restarts=2, random_state=0, prior=True)
    d = 3

    def log_posterior(lengthscales, noise):
        lml = icm_log_marginal_likelihood(X, y, lengthscales, fit.W, fit.task_diagonal, noise)
        prior = stats.lognorm(s=np.sqrt(3), scale=np.exp(np.sqrt(2) + 0.5 * np.log(d)))
        return (
            lml
            + np.sum(prior.logpdf(lengthscales))
            + stats.lognorm(s=1.0, scale=np.exp(-4.0)).logpdf(noise)
        )

    best = log_posterior(fit.lengthscales, fit.noise)
    assert fit.log_marginal_likelihood == pytest.approx(
        icm_log_marginal_likelihood(X, y, fit.lengthscales, fit.W, fit.task_diagonal, fit.noise)
    )
    for k in range(d + 1):
        for step in (-1e-3, 1e-3):
            lengthscales, noise = fit.lengthscales.copy(), fit.noise
            if k < d:
                lengthscales[k] *= np.exp(step)
            else:
                noise *= np.exp(step)
            if not (0.01 <= lengthscales.min() and lengthscales.max() <= 10 and noise >= 1e-6):
                continue  # outside LENGTHSCALE_BOUNDS / NOISE_BOUNDS: not a candidate
            # a stationary point (or a bound): a 1e-3 step gains at most O(1e-6)
            assert log_posterior(lengthscales, noise) <= best + 1e-5
