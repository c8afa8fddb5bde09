"""Helpers shared by the test modules (on sys.path through pytest's ``pythonpath``)."""

import numpy as np


def random_psd(seed, n, rank=None):
    """A random n × n PSD matrix F Fᵀ of the given rank (full by default)."""
    factor = np.random.default_rng(seed).normal(size=(n, rank or n))
    return factor @ factor.T


def assert_close(actual, expected, rtol):
    """Entrywise agreement relative to the largest entry of ``expected``."""
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)
