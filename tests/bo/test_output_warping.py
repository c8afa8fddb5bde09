"""The output warpings of ``kernel="auto"`` (transforms.OutputWarping), checked against
independent computations: scikit-learn's Yeo-Johnson fit and a dense likelihood, the
empirical CDF for the rank transforms, the line of rank-affine's upper half, and the inverse
of every map."""

import numpy as np
import pytest
from scipy import stats
from sklearn.preprocessing import PowerTransformer

from manytask.bo import Chebyshev, MultiTaskBO
from manytask.bo.learned import LearnedKernel
from manytask.bo.transforms import (
    OUTPUT_WARPINGS,
    YEO_JOHNSON_LAMBDAS,
    OutputWarping,
    standardize_outputs,
)


def skewed_sample(seed=0, t=40):
    rng = np.random.default_rng(seed)
    # a long upper tail (log-normal), a long lower tail (its negation, 50× larger) and a
    # Gaussian column: the three shapes Yeo-Johnson is fitted to
    return np.c_[rng.lognormal(size=t), -50 * rng.lognormal(size=t), rng.normal(size=t)]


@pytest.mark.parametrize("kind", OUTPUT_WARPINGS)
def test_warping_is_strictly_increasing_and_inverted(kind):
    Y = skewed_sample()
    warping = OutputWarping(kind, Y)
    # new values far outside the data (told between two fits) too
    grid = np.linspace(
        Y.min(axis=0) - 3 * np.ptp(Y, axis=0), Y.max(axis=0) + 3 * np.ptp(Y, axis=0), 501
    )
    W = warping(grid)
    assert np.all(np.isfinite(W))
    assert np.all(np.diff(W, axis=0) > 0)
    np.testing.assert_allclose(warping.inverse(W), grid, rtol=1e-9, atol=1e-9 * np.ptp(Y))
    np.testing.assert_allclose(warping.inverse(warping(Y)), Y, rtol=1e-9, atol=1e-9 * np.ptp(Y))


def test_yeo_johnson_matches_scikit_learn():
    """λ is scikit-learn's maximum-likelihood λ (when inside YEO_JOHNSON_LAMBDAS) on the
    standardised column, and the map is its transform."""
    Y = skewed_sample(1)
    U = standardize_outputs(Y)[0]
    reference = PowerTransformer(method="yeo-johnson", standardize=False).fit(U)
    assert np.all(
        (reference.lambdas_ > YEO_JOHNSON_LAMBDAS[0])
        & (reference.lambdas_ < YEO_JOHNSON_LAMBDAS[1])
    )
    warping = OutputWarping("yeo-johnson", Y)
    # both maximise the same smooth likelihood; bounded Brent (xatol 1e-6) against
    # scikit-learn's Brent: agreement to 1e-4 in λ
    np.testing.assert_allclose(warping.lambdas_, reference.lambdas_, atol=1e-4)
    expected = np.c_[[stats.yeojohnson(u, lam) for u, lam in zip(U.T, warping.lambdas_)]].T
    np.testing.assert_allclose(warping(Y), expected, rtol=1e-10, atol=1e-12)


def test_yeo_johnson_lambda_maximises_dense_likelihood():
    """The fitted λ is the maximiser, over a dense grid, of the Gaussian log-likelihood of
    ψ_λ(u) with its log-Jacobian (λ − 1) Σ sign(u) log(1 + |u|), written out here."""
    u = standardize_outputs(skewed_sample(2)[:, :1])[0][:, 0]

    def log_likelihood(lam):
        w = stats.yeojohnson(u, lam)
        jacobian = (lam - 1) * np.sum(np.sign(u) * np.log1p(np.abs(u)))
        return -len(u) / 2 * np.log(np.var(w)) + jacobian

    grid = np.linspace(*YEO_JOHNSON_LAMBDAS, 4001)
    best = grid[np.argmax([log_likelihood(lam) for lam in grid])]
    fitted = OutputWarping("yeo-johnson", u[:, None]).lambdas_[0]
    assert abs(fitted - best) <= grid[1] - grid[0]


def test_rank_warping_is_the_gaussian_copula_at_the_data():
    """At the observations, Φ⁻¹ of the mid-rank empirical CDF (i − ½)/t, ties sharing one."""
    Y = skewed_sample(3)
    Y[5, 0] = Y[7, 0]  # a tie
    warping = OutputWarping("rank", Y)
    for j in range(Y.shape[1]):
        values = np.unique(Y[:, j])
        expected = stats.norm.ppf((np.searchsorted(values, Y[:, j]) + 0.5) / len(values))
        np.testing.assert_allclose(warping(Y)[:, j], expected, rtol=1e-12, atol=1e-12)


def test_rank_affine_warping_is_the_copula_below_the_median_and_affine_above():
    """Up to the median distinct value it is the rank transform; from there it is the line
    through the median's and the largest value's rank quantiles (written out here)."""
    Y = skewed_sample(4)
    rank, affine = OutputWarping("rank", Y), OutputWarping("rank-affine", Y)
    U = standardize_outputs(Y)[0]
    for j in range(Y.shape[1]):
        values = np.unique(U[:, j])
        median, top = values[(len(values) - 1) // 2], values[-1]
        q_median, q_top = stats.norm.ppf(
            (np.array([(len(values) - 1) // 2, len(values) - 1]) + 0.5) / len(values)
        )
        lower = U[:, j] <= median
        np.testing.assert_allclose(affine(Y)[lower, j], rank(Y)[lower, j], rtol=1e-12, atol=1e-12)
        line = q_median + (U[~lower, j] - median) * (q_top - q_median) / (top - median)
        np.testing.assert_allclose(affine(Y)[~lower, j], line, rtol=1e-12, atol=1e-12)


def test_rank_affine_keeps_near_ties_of_the_largest_values_near():
    """The case that made MultiTaskSampler re-propose the edge of Branin's box: the largest
    values a millionth apart. The rank map puts them a quantile gap apart (≈ 0.5 here); the
    rank-affine map puts them (their gap) × (its affine slope) apart."""
    y = np.r_[np.linspace(-300.0, -10.0, 12), -1.547 - np.array([3e-6, 2e-6, 1e-6, 0.0])]
    rank, affine = OutputWarping("rank", y[:, None]), OutputWarping("rank-affine", y[:, None])
    assert np.diff(rank(y[:, None])[-2:, 0])[0] > 0.1
    u = standardize_outputs(y[:, None])[0][:, 0]
    q = stats.norm.ppf((np.array([7, 15]) + 0.5) / 16)  # the median's and the top's quantiles
    slope = (q[1] - q[0]) / (u[15] - u[7])
    np.testing.assert_allclose(np.diff(affine(y[:, None])[-4:, 0]), slope * np.diff(u[-4:]))
    assert np.diff(affine(y[:, None])[-2:, 0])[0] < 1e-6


def test_warping_leaves_constant_columns_finite():
    Y = np.c_[np.full(5, 3.0), np.arange(5.0)]
    for kind in OUTPUT_WARPINGS:
        warping = OutputWarping(kind, Y)
        assert np.all(np.isfinite(warping(Y)))
        np.testing.assert_allclose(warping.inverse(warping(Y)), Y, atol=1e-12)


def test_bad_warping_name_is_refused():
    with pytest.raises(ValueError, match="output_warping must be one of .*got 'log'"):
        MultiTaskBO(candidates=np.zeros((3, 1)), output_warping="log")


@pytest.mark.parametrize("kind", OUTPUT_WARPINGS)
def test_model_outputs_do_not_depend_on_the_objectives_units(kind):
    """The warping acts on standardised objectives: a positive affine change of an
    objective's units leaves the outputs the kernel is fitted to unchanged."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 2))
    Y = np.c_[np.exp(3 * X[:, 0]) - X[:, 1], -((X[:, 0] - 0.3) ** 2)]
    outputs = []
    for a, b in ((1.0, 0.0), (250.0, -7.0)):
        learned = LearnedKernel(2, 2, [[0, 1], [0, 1]], seed=0, refit_every=1, warping=kind)
        Z = np.c_[a * Y[:, 0] + b, Y[:, 1]]
        outputs.append(learned.standardize(Z, learned.refit(X, Z)))
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", OUTPUT_WARPINGS)
def test_constraints_are_not_warped(kind):
    """Constraint tasks keep an affine map (so that c = 0 stays their threshold)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 2))
    Y = np.c_[np.exp(3 * X[:, 0]), -X[:, 1], np.exp(4 * X[:, 1]) - 5]
    learned = LearnedKernel(
        2, 3, [[0, 1], [0, 1]], seed=0, refit_every=1, n_constraints=1, warping=kind
    )
    refit = learned.refit(X, Y)
    c = learned.standardize(Y, refit)[:, 2]
    np.testing.assert_allclose(c * refit.scale[2] + refit.mean[2], Y[:, 2], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", OUTPUT_WARPINGS)
def test_fixed_reference_maps_through_the_warping(kind):
    """A fixed (z, r) becomes ẑ = (ψ(z) − m)/s and r̂ = (ψ(z + r) − ψ(z))/s."""
    rng = np.random.default_rng(1)
    X, Y = rng.uniform(size=(10, 1)), np.c_[rng.lognormal(size=10), rng.normal(size=10)]
    learned = LearnedKernel(1, 2, [[0, 1]], seed=0, refit_every=1, warping=kind)
    learned.accept(learned.refit(X, Y))
    z, r = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    mapped = learned.scalarization(Chebyshev(reference=z, scale=r))
    low, high = learned.standardize(np.array([z, z + r]))
    np.testing.assert_allclose(mapped.reference, low, rtol=1e-12)
    np.testing.assert_allclose(mapped.scale, high - low, rtol=1e-12)


@pytest.mark.parametrize("kind", ["yeo-johnson", "rank", "rank-affine"])
def test_optimizer_with_warping_resumes_from_a_checkpoint(kind):
    rng = np.random.default_rng(0)
    C = rng.uniform(size=(50, 2))
    opt = MultiTaskBO(candidates=C, seed=0, output_warping=kind)
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, [np.exp(3 * x[0]), -(x[1] ** 2)])
    resumed = MultiTaskBO.from_state_dict(opt.state_dict())
    assert resumed.output_warping == kind
    np.testing.assert_array_equal(resumed.ask(), opt.ask())
