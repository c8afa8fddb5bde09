"""The large-n path of the whitened ITL fits: data terms and features by blocks of rows.

A fit on n rows with r input features and m anchors handles n × m arrays (the predictions
h(x_i)(θ_j), their θ-slopes, the loss gradients) and the n × r features Φ. Over a million
rows the former would take several GiB per temporary; :func:`blockwise_data_term` sums the
data term and its gradient in the whitened coordinates over blocks of :data:`BLOCK_ROWS`
rows instead (memory O(block × m) per thread, BLAS-sized matrix products, blocks spread over
threads), and :func:`nystrom_features` builds Φ = k_X(X, Z) P by blocks, without the
kernel's n × r temporaries. The sums are taken in block order, so the results do not depend
on the number of threads; they equal the unblocked ones to rounding.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

__all__ = [
    "BLOCK_ROWS",
    "FEATURE_BLOCK_ROWS",
    "blas_threads",
    "blockwise_data_term",
    "nystrom_features",
]

#: Above this many rows the whitened fits that allow it evaluate their data term by blocks of
#: this many rows; at or below, all at once (unchanged).
BLOCK_ROWS = 8192
#: Rows per block of the Nyström features k_X(X, Z) P.
FEATURE_BLOCK_ROWS = 8192


def blas_threads():
    """The number of threads BLAS has (at least 1): the workers of the blockwise loops, each
    running BLAS on one thread.

    Returns
    -------
    int
        The largest thread count of the loaded BLAS libraries (threadpoolctl), at least 1.

    Examples
    --------
    >>> blas_threads() >= 1
    True
    """
    blas = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    return max([1, *blas])


def _map_blocks(function, starts, workers):
    """[function(start) for start in starts], on ``workers`` threads with one BLAS thread each."""
    with threadpool_limits(limits=1, user_api="blas"):
        if workers > 1 and len(starts) > 1:
            with ThreadPoolExecutor(workers) as pool:
                return list(pool.map(function, starts))
        return [function(start) for start in starts]


def blockwise_data_term(model, data_term, alpha, bias, block_rows, workers=1):
    """Data term and its gradient in (V, v), summed over blocks of ``block_rows`` rows.

    Block k (rows [k b, (k + 1) b)) evaluates ``data_term(model.rows(rows), alpha, None,
    bias, rows=rows)`` and its backward pass; the sums are taken in block order, so the
    result does not depend on ``workers``. The data term adds anything that does not depend
    on the rows (e.g. ∞-QR's ``monotone_bias``) with the block that starts at row 0.

    Parameters
    ----------
    model : WhitenedModel
        Precomputed model with :meth:`~manytask.itl.whitening.WhitenedModel.rows`.
    data_term : callable
        ``(model, alpha, beta, bias, rows=slice) -> (value, grad_values, grad_slopes,
        grad_bias)``.
    alpha, bias : ndarray
        V and v (``bias`` None without bias).
    block_rows : int
        Rows per block, >= 1.
    workers : int, default=1
        Threads over the blocks.

    Returns
    -------
    value : float
    grad_alpha : ndarray of shape alpha.shape
    grad_bias : ndarray or None
        From the rows (Ψ_bᵀ G1 + Ψ_bsᵀ G'1).
    grad_bias_direct : ndarray or None
        The data term's own gradient in v.

    Examples
    --------
    >>> import numpy as np
    >>> from manytask.itl import DecomposableModel
    >>> from manytask.itl.whitening import WhitenedModel
    >>> from manytask.itl.kernel_quantile import quantile_risk
    >>> from manytask.kernels import RBF
    >>> X, anchors = np.linspace(0, 1, 7)[:, None], np.array([0.25, 0.75])
    >>> model = DecomposableModel(RBF(0.5), RBF(0.3), RBF(0.3)).precompute(X, anchors)
    >>> whitened = WhitenedModel(model)
    >>> V, _, v = whitened.unpack(np.full(whitened.n_params, 0.1))
    >>> term = quantile_risk(X[:, 0], anchors, [0.5, 0.5], 1.0, 1e-2)
    >>> value = blockwise_data_term(whitened, term, V, v, block_rows=3)[0]
    >>> bool(np.isclose(value, term(whitened, V, None, v)[0], rtol=1e-13))
    True
    """

    def block(start):
        rows = slice(start, min(start + block_rows, model.n_samples))
        restricted = model.rows(rows)
        value, grad_values, grad_slopes, direct = data_term(
            restricted, alpha, None, bias, rows=rows
        )
        grad_alpha, _, grad_bias = restricted.backward(grad_values, grad_slopes)
        return value, grad_alpha, grad_bias, direct

    parts = _map_blocks(block, range(0, model.n_samples, block_rows), workers)
    values, grad_alphas, grad_biases, directs = zip(*parts)
    return sum(values), _total(grad_alphas), _total(grad_biases), _total(directs)


def _total(arrays):
    """Σ of the arrays that are not None, in order (None if all are)."""
    present = [array for array in arrays if array is not None]
    return sum(present[1:], present[0].copy()) if present else None


def nystrom_features(
    kernel, X, landmarks, input_map, block_rows=FEATURE_BLOCK_ROWS, dtype=np.float64, workers=1
):
    """Φ = k_X(X, Z) P, computed ``block_rows`` rows at a time (memory O(n r), not k's n × r
    temporaries), the blocks on ``workers`` threads.

    Parameters
    ----------
    kernel : Kernel
        k_X.
    X : array of shape (n, d)
        The points.
    landmarks : array of shape (r, d)
        Z.
    input_map : array of shape (r, k)
        P, e.g. U S^{-1/2}.
    block_rows : int
        Rows per block.
    dtype : numpy dtype, default=float64
        Of the result (each block is computed in float64, then stored).
    workers : int, default=1
        Threads over the blocks (one BLAS thread each); the result does not depend on it.

    Returns
    -------
    ndarray of shape (n, k)

    Examples
    --------
    >>> from manytask.kernels import RBF
    >>> X, Z = np.linspace(0, 1, 7)[:, None], np.array([[0.0], [0.5]])
    >>> P = np.eye(2)
    >>> bool(np.allclose(nystrom_features(RBF(0.5), X, Z, P, block_rows=3), RBF(0.5)(X, Z)))
    True
    """
    features = np.empty((len(X), input_map.shape[1]), dtype=dtype)

    def block(start):
        rows = slice(start, start + block_rows)
        features[rows] = kernel(X[rows], landmarks) @ input_map

    _map_blocks(block, range(0, len(X), block_rows), workers)
    return features
