"""Helpers shared by the test modules (on sys.path through pytest's ``pythonpath``)."""

import json
import math
import subprocess
import sys

import numpy as np
from scipy.special import logsumexp


def random_psd(seed, n, rank=None):
    """A random n × n PSD matrix F Fᵀ of the given rank (full by default)."""
    factor = np.random.default_rng(seed).normal(size=(n, rank or n))
    return factor @ factor.T


def central_differences(function, params, step=1e-6):
    """Central-difference gradient of the scalar ``function`` at the 1-D array ``params``."""
    numerical = np.empty_like(params)
    for k in range(params.size):
        shift = np.zeros_like(params)
        shift[k] = step
        numerical[k] = (function(params + shift) - function(params - shift)) / (2 * step)
    return numerical


def assert_gradient_matches(objective, params, rtol, atol):
    """The analytic gradient of ``objective(params) -> (value, gradient)`` against
    :func:`central_differences` of its value."""
    _, gradient = objective(params)
    numerical = central_differences(lambda p: objective(p)[0], params)
    np.testing.assert_allclose(gradient, numerical, rtol=rtol, atol=atol)


def assert_close(actual, expected, rtol):
    """Entrywise agreement relative to the largest entry of ``expected``."""
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def two_separated_domains(n=200, seed=0):
    """Two boosting sources far apart in x0 (≈ −3 vs +3); domain 0 labels by x1 > 0, domain 1
    by x2 > 0; 5% label noise. Returns X (2n, 3), y in {0, 1}, domains (2n,)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    X[:n, 0] -= 3.0
    X[n:, 0] += 3.0
    y = np.concatenate([X[:n, 1] > 0, X[n:, 2] > 0]).astype(int)
    flip = rng.random(2 * n) < 0.05
    y[flip] = 1 - y[flip]
    return X, y, np.repeat([0, 1], n)


def tied_round(seed, m=60, d=3, n_domains=3):
    """A MULTIBOOST round's inputs for the steepest-coordinate search: X (m, d) with repeated
    values (one decimal), y in {−1, +1}, Q (m, p) rows on the simplex, a_i > 0, domains."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(m, d)), 1)
    y = np.where(rng.random(m) < 0.5, -1.0, 1.0)
    domain_index = rng.integers(0, n_domains, size=m)
    Q = rng.dirichlet(np.ones(n_domains), size=m)
    scaled = rng.random(m) / m
    return X, y, Q, scaled, domain_index


def assert_errors_within(rows, committed, key, atol=0.02):
    """Every fresh row's test errors within ``atol`` of the committed row of the same ``key``
    (rows: dicts of a fold's run; committed: {key value: csv row})."""
    assert sorted(committed) == sorted(row[key] for row in rows)
    for row in rows:
        reference = committed[row[key]]
        assert row["n_test"] == int(reference["n_test"])
        for column in ("error_1", "error_2", "error_3", "error_uniform", "error_agnostic"):
            assert abs(row[column] - float(reference[column])) <= atol, (row[key], column)


def coordinate_losses(step, scaled, u, domain_index, n_domains, with_slopes=False):
    """The plain F_l(α + ηe) = Σ_{i∈S_l} a_i e^{−ηu_i} (eq. 4) and optionally dF_l/dη."""
    terms = scaled * np.exp(-step * u)
    losses = np.bincount(domain_index, weights=terms, minlength=n_domains)
    if not with_slopes:
        return losses
    return losses, -np.bincount(domain_index, weights=terms * u, minlength=n_domains)


def loop_objective(step, margins, directions, domain_index, weights, n_domains, loss,
                    mixtures=None, mu=None, beta=0.0):  # fmt: skip
    """agg_v Σ_k λ_k Σ_{i∈S_k} c_i Σ_c Φ(−(M + ηU)) + βη, written out with loops."""
    losses = [0.0] * n_domains
    for i in range(margins.shape[0]):
        for c in range(margins.shape[1]):
            z = -(margins[i, c] + step * directions[i, c])
            value = math.exp(z) if loss == "exponential" else math.log2(1.0 + math.exp(z))
            losses[domain_index[i]] += weights[i] * value
    vertices = np.eye(n_domains) if mixtures is None else mixtures
    combined = vertices @ np.array(losses)
    aggregate = combined.max() if mu is None else logsumexp(mu * combined) / mu
    return float(aggregate) + beta * step


def run_in_fresh_interpreter(code):
    """Run ``code`` in a new Python process and return the JSON its last printed line holds
    (what a fresh import loads, without this test session's modules)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])
