"""Many one-task GPs fitted at once: the tasks of a block model that are each a block of their
own (every objective with ``objective_model="independent"``, every constraint).

Task i has the ARD RBF kernel b_i k_i(x, x') with b_i = w_i² + v_i (the one-task case of
:func:`~manytask.bo.kernel_learning.fit_icm_kernel`'s B = WWᵀ + diag(v)), noise η_i and, with
``mean="constant"``, a constant mean. Their log marginal likelihoods (and log priors) add up,
so the maximum of the sum over all parameters is every GP's own maximum: one L-BFGS-B run over
the stacked parameters, whose every evaluation factorises the n matrices b_i K_i + η_i I
(t × t) together, replaces n runs, each of which paid SciPy's cost per iteration.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from .._validation import check_int, check_random_state
from .kernel_learning import (
    _LOG_2PI,
    _check_data,
    _check_mean,
    _collapsed,
    _default_start,
    _fit_at,
    _icm_lml,
    _init_start,
    _Packing,
    _random_start,
    _spd_inverses,
)

__all__ = ["fit_one_task_gps", "one_task_log_marginal_likelihoods"]


def _squared_differences(X):
    """D[k, j, j'] = (x_jk − x_j'k)², the (d, t, t) stack shared by every evaluation. A square
    that overflows is kept at the largest float: the kernel is 0 at such a pair, so every
    product with D there is 0 rather than 0 · inf."""
    with np.errstate(over="ignore"):
        D = (X.T[:, :, None] - X.T[:, None, :]) ** 2
    return np.minimum(D, np.finfo(float).max, out=D)


def one_task_log_marginal_likelihoods(X, Y, theta, mean="zero"):
    """log p(y_i) of every column of Y under its own one-task GP, and the gradients.

    Parameters
    ----------
    X : array of shape (t, d)
        Inputs (normalised to the unit cube by the caller).
    Y : array of shape (t, n)
        One column per task (standardised by the caller).
    theta : array of shape (n, d + 3)
        Row i: (log l_i (d), w_i, log v_i, log η_i), the parameters of
        :func:`~manytask.bo.kernel_learning.fit_icm_kernel` for one task (B = w² + v).
    mean : {"zero", "constant"}
        With "constant", every task's GLS constant mean, profiled out.

    Returns
    -------
    lml : ndarray of shape (n,)
        log p(y_i) at the (profiled) means.
    gradient : ndarray of shape (n, d + 3)
        ∂ log p(y_i) / ∂θ_i.
    means : ndarray of shape (n,)
        The profiled constants (0 with ``mean="zero"``).

    Examples
    --------
    >>> from manytask.bo.kernel_learning import icm_log_marginal_likelihood
    >>> rng = np.random.default_rng(0)
    >>> X, Y = rng.uniform(size=(9, 2)), rng.normal(size=(9, 2))
    >>> theta = np.array([[-1.0, -0.5, 0.3, -1.0, -2.0], [0.0, -1.0, 0.8, -2.0, -3.0]])
    >>> lml, _, _ = one_task_log_marginal_likelihoods(X, Y, theta)
    >>> i = 1
    >>> one = icm_log_marginal_likelihood(X, Y[:, [i]], np.exp(theta[i, :2]),
    ...     theta[i, [2]][:, None], np.exp(theta[i, [3]]), np.exp(theta[i, 4]))
    >>> bool(np.isclose(lml[i], one))
    True
    """
    return _lmls(_squared_differences(X), Y, theta, mean)


def _lmls(D, Y, theta, mean):
    t, n = Y.shape
    d = D.shape[0]
    inverse_squares = np.exp(-2.0 * theta[:, :d])  # 1/l_ik²
    with np.errstate(over="ignore"):  # inf at pairs too far apart, where K is 0
        S = inverse_squares @ D.reshape(d, t * t)  # Σ_k D_k / l_ik², (n, t·t)
    K = np.exp(-0.5 * S).reshape(n, t, t)
    w, v, noise = theta[:, d], np.exp(theta[:, d + 1]), np.exp(theta[:, d + 2])
    b = w**2 + v
    M = b[:, None, None] * K
    M.reshape(n, t * t)[:, :: t + 1] += noise[:, None]
    result = _spd_inverses(M)
    if result is None:  # off PD by round-off: the caller falls back
        raise np.linalg.LinAlgError("a one-task covariance is not numerically PD")
    inverse, log_det = result  # M_i⁻¹ and log det M_i
    residual = Y.T
    means = np.zeros(n)
    if mean == "constant":  # c_i = 1ᵀM_i⁻¹y_i / 1ᵀM_i⁻¹1
        ones = inverse.sum(axis=2)  # M_i⁻¹1 (M_i⁻¹ is symmetric)
        means = np.einsum("ij,ij->i", ones, residual) / ones.sum(axis=1)
        residual = residual - means[:, None]
    alpha = np.matmul(inverse, residual[:, :, None])[:, :, 0]  # M_i⁻¹(y_i − c_i)
    lml = -0.5 * (np.einsum("ij,ij->i", residual, alpha) + log_det + t * _LOG_2PI)
    # ∂ log p/∂θ = tr(P ∂M/∂θ), P = ½(ααᵀ − M⁻¹); ∂M/∂log l_k = b K ∘ D_k / l_k²,
    # ∂M/∂b = K, ∂M/∂log η = ηI (the profiled mean's own derivative is 0)
    P = 0.5 * (alpha[:, :, None] * alpha[:, None, :] - inverse)
    PK = (P * K).reshape(n, t * t)
    gradient_b = PK.sum(axis=1)
    gradient = np.empty_like(theta)
    gradient[:, :d] = b[:, None] * (PK @ D.reshape(d, t * t).T) * inverse_squares
    gradient[:, d] = 2.0 * w * gradient_b
    gradient[:, d + 1] = v * gradient_b
    gradient[:, d + 2] = noise * np.trace(P, axis1=1, axis2=2)
    return lml, gradient, means


def _lmls_one_by_one(X, Y, theta, packing, mean):
    """The same values by :func:`~manytask.bo.kernel_learning._icm_lml`, task by task (its
    eigendecomposition fallback where a matrix is off PD by round-off)."""
    lml, gradient, means = np.empty(len(theta)), np.empty_like(theta), np.empty(len(theta))
    for i, row in enumerate(theta):
        value, grads, c = _icm_lml(X, Y[:, [i]], *packing.unpack(row), "rbf", True, mean)
        lml[i], gradient[i], means[i] = value, packing.pack_gradient(grads), c[0]
    return lml, gradient, means


def fit_one_task_gps(
    X, Y, n_restarts=3, random_state=None, init=None, prior=False, mean="zero"
):  # fmt: skip
    """Fit one GP to every column of Y by maximising the sum of their marginal likelihoods.

    Every task's fit is :func:`~manytask.bo.kernel_learning.fit_icm_kernel`'s one-task fit
    (the same parameters, bounds, priors and starts), computed together: one L-BFGS-B run per
    start over all tasks' parameters, and for every task the start that ends highest.

    Parameters
    ----------
    X : array-like of shape (t, d)
        Inputs, normalised to the unit cube.
    Y : array-like of shape (t, n)
        Observations, standardised per task.
    n_restarts : int
        Starts (≥ 1): every task's ``init`` if given, then the data-driven guess, then random
        ones (drawn task by task with ``random_state``). With ``init`` and one start, tasks
        whose fit ends with a lengthscale at its lower bound get the data-driven start too.
    random_state : None, int or numpy Generator
        Seeds the random starts.
    init : list of ICMFit, optional
        Every task's previous fit, to warm-start from.
    prior : bool
        MAP under BoTorch's priors (:func:`~manytask.bo.kernel_learning.fit_icm_kernel`).
    mean : {"zero", "constant"}
        Every task's mean.

    Returns
    -------
    list of ICMFit
        One per task (column of Y), with a 1 × 1 task matrix.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(30, 2))
    >>> Y = np.c_[np.sin(6 * X[:, 0]), np.cos(6 * X[:, 1])] + 0.05 * rng.normal(size=(30, 2))
    >>> fits = fit_one_task_gps(X, (Y - Y.mean(0)) / Y.std(0), random_state=0)
    >>> [bool(f.lengthscales[i] < f.lengthscales[1 - i]) for i, f in enumerate(fits)]
    [True, True]
    """
    X, Y = _check_data(X, Y)
    d, n = X.shape[1], Y.shape[1]
    mean = _check_mean(mean)
    check_int(n_restarts, "n_restarts")
    rng = check_random_state(random_state)
    packing = _Packing(d, 1, 1)
    D = _squared_differences(X)
    size = packing.size
    if init is not None and len(init) != n:
        raise ValueError(f"init must hold one fit per task ({n}), got {len(init)}")

    def lmls(theta):
        try:
            return _lmls(D, Y, theta, mean)
        except np.linalg.LinAlgError:
            return _lmls_one_by_one(X, Y, theta, packing, mean)

    def log_priors(theta):
        """(n,) log priors and their (n, size) gradients: BoTorch's, or flat."""
        if prior:
            return packing.log_prior(theta)
        return np.zeros(n), np.zeros_like(theta)

    def negative_log_posterior(flat):
        theta = flat.reshape(n, size)
        lml, gradient, _ = lmls(theta)
        log_prior, prior_gradient = log_priors(theta)
        return -float(np.sum(lml + log_prior)), -(gradient + prior_gradient).ravel()

    def task_starts(kind):
        if kind == "init":
            return [_init_start(previous, packing) for previous in init]
        if kind == "default":
            return [_default_start(Y[:, [i]], packing) for i in range(n)]
        return [_random_start(rng, packing) for _ in range(n)]

    kinds = ([] if init is None else ["init"]) + ["default"]
    kinds = (kinds + ["random"] * int(n_restarts))[: int(n_restarts)]
    bounds = packing.bounds() * n
    best = np.full(n, np.inf)
    best_theta = np.zeros((n, size))
    messages, values = [[] for _ in range(n)], [[] for _ in range(n)]

    def run(starts):
        theta0 = np.concatenate([packing.clip(start) for start in starts])
        result = minimize(negative_log_posterior, theta0, jac=True, method="L-BFGS-B",
                          bounds=bounds)  # fmt: skip
        theta = result.x.reshape(n, size)
        lml, _, _ = lmls(theta)
        per_task = -lml - log_priors(theta)[0]
        for i in range(n):
            messages[i].append(str(result.message))
            values[i].append(float(lml[i]))
            if np.isfinite(per_task[i]) and per_task[i] < best[i]:
                best[i], best_theta[i] = per_task[i], theta[i]

    for kind in kinds:
        run(task_starts(kind))
    if init is not None and n_restarts == 1 and np.isfinite(best).all():
        if any(_collapsed(theta, packing) for theta in best_theta):
            run(task_starts("default"))
    if not np.isfinite(best).all():
        raise RuntimeError(f"every start of a one-task fit failed: {messages}")
    return [
        _fit_at(X, Y[:, [i]], best_theta[i], packing, "rbf", mean, messages[i], values[i])
        for i in range(n)
    ]
