"""DMSA's unlabelled fit of z (the DC programme of :mod:`manytask.boost.dmsa`) against brute
force and losses written out by hand (the estimator's tests: test_boost_baselines.py)."""

import numpy as np
import pytest

from manytask.boost.dmsa import fit_mixture_weights_dc, pseudo_label_losses


def _constructed_problem(p, seed, n_per_source=80):
    """Q(k|x) leaning towards the row's own source, p_k its mean, h_k(x) anywhere in (0, 1):
    the sources' pseudo-labelled losses pull z in different directions."""
    rng = np.random.default_rng(seed)
    index = np.repeat(np.arange(p), n_per_source)
    n = index.size
    Q = rng.dirichlet(np.ones(p), size=n)
    Q[np.arange(n), index] += 1.0
    Q /= Q.sum(axis=1, keepdims=True)
    h = rng.uniform(0.05, 0.95, size=(n, p))
    return Q, Q.mean(axis=0), h, index


def _pseudo_label_losses_by_hand(z, Q, marginals, h, index):
    """L_k(z) = mean over source k's rows of −[h_k log h_z + (1 − h_k) log(1 − h_z)], with
    h_z(x) = Σ_j z_j Q(j|x)/p_j h_j(x) / Σ_j z_j Q(j|x)/p_j, one row at a time."""
    p = Q.shape[1]
    totals, counts = np.zeros(p), np.zeros(p)
    for i in range(Q.shape[0]):
        weights = [z[j] * Q[i, j] / marginals[j] for j in range(p)]
        h_z = sum(w * h[i, j] for j, w in enumerate(weights)) / sum(weights)
        label = h[i, index[i]]
        totals[index[i]] += -(label * np.log(h_z) + (1 - label) * np.log(1 - h_z))
        counts[index[i]] += 1
    return totals / counts


def _simplex_grid(p, n):
    if p == 2:
        return np.array([(a / n, 1 - a / n) for a in range(n + 1)])
    return np.array(
        [(a / n, b / n, 1 - (a + b) / n) for a in range(n + 1) for b in range(n + 1 - a)]
    )


@pytest.mark.parametrize(("p", "grid_size"), [(2, 2000), (3, 100)])
def test_dc_solver_reaches_the_min_max_of_a_brute_force_simplex_grid(p, grid_size):
    Q, marginals, h, index = _constructed_problem(p, seed=p)
    z, losses, _ = fit_mixture_weights_dc(Q, marginals, h, index)
    np.testing.assert_allclose(losses, _pseudo_label_losses_by_hand(z, Q, marginals, h, index))
    grid = _simplex_grid(p, grid_size)
    # The grid's objective with the vectorised L_k (itself checked by hand just above).
    worst = np.array([np.max(np.subtract(*pseudo_label_losses(g, Q, marginals, h, index)[:2]))
                      for g in grid])  # fmt: skip
    best = grid[np.argmin(worst)]
    # The DC solution is at least as good as every grid point and sits next to the best one.
    assert losses.max() <= worst.min() + 1e-10
    assert np.max(np.abs(z - best)) <= 2.0 / grid_size
    # Interior optimum of a min-max: the sources' losses are equal there.
    assert np.all(z > 0.05)
    np.testing.assert_allclose(losses, losses.max(), rtol=1e-6)
    uniform = _pseudo_label_losses_by_hand(np.full(p, 1 / p), Q, marginals, h, index)
    assert losses.max() < uniform.max() - 1e-4


def test_dc_parts_are_the_loss_and_their_gradients_match_finite_differences():
    Q, marginals, h, index = _constructed_problem(3, seed=7, n_per_source=20)
    z = np.array([0.2, 0.5, 0.3])
    u, v, u_grad, v_grad = pseudo_label_losses(z, Q, marginals, h, index)
    np.testing.assert_allclose(u - v, _pseudo_label_losses_by_hand(z, Q, marginals, h, index))
    step = 1e-6
    for j in range(3):
        up, down = z.copy(), z.copy()
        up[j] += step
        down[j] -= step
        u_up, v_up, _, _ = pseudo_label_losses(up, Q, marginals, h, index)
        u_down, v_down, _, _ = pseudo_label_losses(down, Q, marginals, h, index)
        np.testing.assert_allclose(u_grad[:, j], (u_up - u_down) / (2 * step), rtol=1e-5)
        np.testing.assert_allclose(v_grad[:, j], (v_up - v_down) / (2 * step), rtol=1e-5)
