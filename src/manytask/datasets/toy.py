"""The sine toy data of Sangnier et al. (2016), used in Figure 1 of ``infinite-task-learning.txt``.

The paper (§5, "Quantile Regression (i)") describes it as "a sine curve at 1Hz modulated by a
sine envelope at 1/3Hz and mean 1, distorted with a Gaussian noise of mean 0 and a linearly
decreasing standard deviation from 1.2 at x = 0 to 0.2 at x = 1.5". We generate exactly that,
with the sign and phase of the authors' public generator (``SinePattern`` and
``toy_data_quantile`` of Sangnier and Brault):

    x ~ U[0, 1.5],
    f(x) = −sin(2πx) · (1 + sin(2πx/3)),                 the sine and its envelope
    σ(x) = 0.2 + (1.5 − x)/1.5,                          1.2 at x = 0, 0.2 at x = 1.5
    y = f(x) + σ(x) ε,  ε ~ N(0, 1),

so the conditional quantile of level τ is known in closed form:
q_τ(x) = f(x) + σ(x) Φ⁻¹(τ) (:func:`sine_toy_quantiles`).

What lives here: the generator and its true quantiles; nothing is read from disk.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from .._validation import check_int

__all__ = [
    "SINE_TOY_BOUNDS",
    "make_sine_toy",
    "sine_toy_mean",
    "sine_toy_std",
    "sine_toy_quantiles",
]

#: The input interval [0, 1.5] of the toy data.
SINE_TOY_BOUNDS = (0.0, 1.5)


def _inputs(x) -> np.ndarray:
    """x as a 1-D float array (a column (n, 1) is flattened); NaN is rejected."""
    values = np.asarray(x, dtype=float)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.ndim != 1:
        raise ValueError(f"x must be 1-D or of shape (n, 1), got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("x must be finite, got NaN or inf")
    return values


def sine_toy_mean(x) -> np.ndarray:
    """f(x) = −sin(2πx)(1 + sin(2πx/3)): the 1 Hz sine times its 1/3 Hz envelope of mean 1.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, 1)
        Inputs.

    Returns
    -------
    ndarray of shape (n,)
        f(x), the conditional median of the toy data.

    Examples
    --------
    >>> bool(np.isclose(sine_toy_mean([0.25])[0], -(1 + np.sin(np.pi / 6))))
    True
    """
    x = _inputs(x)
    return -np.sin(2 * np.pi * x) * (1.0 + np.sin(2 * np.pi * x / 3.0))


def sine_toy_std(x) -> np.ndarray:
    """σ(x) = 0.2 + (1.5 − x)/1.5: the noise standard deviation, 1.2 at 0 and 0.2 at 1.5.

    Parameters
    ----------
    x : array_like of shape (n,) or (n, 1)
        Inputs.

    Returns
    -------
    ndarray of shape (n,)
        σ(x).

    Examples
    --------
    >>> sine_toy_std([0.0, 1.5]).round(12).tolist()
    [1.2, 0.2]
    """
    x = _inputs(x)
    low, high = SINE_TOY_BOUNDS
    return 0.2 + (high - x) / (high - low)


def sine_toy_quantiles(x, quantiles) -> np.ndarray:
    """True conditional quantiles q_τ(x) = f(x) + σ(x) Φ⁻¹(τ), an (n, k) array.

    Parameters
    ----------
    x : array of shape (n,) or (n, 1)
        Inputs (any real value; the data live on [0, 1.5]).
    quantiles : float or array of shape (k,)
        Levels τ in (0, 1).

    Returns
    -------
    array of shape (n, k)
        Column l is the quantile of level ``quantiles[l]``.

    Examples
    --------
    >>> q = sine_toy_quantiles([0.0, 1.5], [0.5])
    >>> np.allclose(q[:, 0], 0.0)  # the median is f(x), and f(0) = f(1.5) = 0
    True
    """
    levels = np.atleast_1d(np.asarray(quantiles, dtype=float))
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(f"quantiles must be a scalar or a non-empty 1-D array, got {quantiles!r}")
    outside = ~((levels > 0) & (levels < 1))
    if np.any(outside):
        raise ValueError(f"quantiles must be in (0, 1), got {float(levels[outside][0])!r}")
    x = _inputs(x)
    return sine_toy_mean(x)[:, None] + sine_toy_std(x)[:, None] * norm.ppf(levels)[None, :]


def make_sine_toy(n_samples=40, random_state=None, sort=True):
    """Draw n samples of the sine toy data; returns X of shape (n, 1) and y of shape (n,).

    Parameters
    ----------
    n_samples : int, default=40
        Number of points (Figure 1 of the paper: 40), at least 1.
    random_state : None, int or numpy Generator
        Seed of the inputs and the noise.
    sort : bool, default=True
        Sort the points by x (the authors' generator does), which makes curves easy to plot.

    Returns
    -------
    X : ndarray of shape (n, 1)
        Inputs, uniform on [0, 1.5].
    y : ndarray of shape (n,)
        f(x) + σ(x) ε with ε standard normal.

    Examples
    --------
    >>> X, y = make_sine_toy(5, random_state=0)
    >>> X.shape, y.shape, bool(np.all(np.diff(X[:, 0]) >= 0))
    ((5, 1), (5,), True)
    """
    check_int(n_samples, "n_samples")
    rng = np.random.default_rng(random_state)
    low, high = SINE_TOY_BOUNDS
    x = rng.uniform(low, high, size=int(n_samples))
    if sort:
        x = np.sort(x)
    y = sine_toy_mean(x) + sine_toy_std(x) * rng.standard_normal(x.size)
    return x[:, None], y
